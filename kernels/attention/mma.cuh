// The attention compute body on mma.sync m16n8k16 (FlashAttention-2's): per key tile, S = Q K^T
// through ldmatrix of K's rows, the online softmax (attention/softmax.cuh), then O += P V with P
// repacked as A fragments and V through ldmatrix.trans. The summation order is the same for every
// mechanism: only movement differs.
#pragma once

#include "attention/softmax.cuh"

static_assert(!PERSISTENT, "persistent blocks are built on the wgmma body");

struct Attention : AttnRows {
    __device__ __forceinline__ Attention(const AttnParams& params) : AttnRows(params) {}

    template <class Between>
    __device__ __forceinline__ void consume(const unsigned char* slot, int k, int ctid, Between between) {
        between();
        perturb(p.ctl, k, EDGE_COMPUTE);
        const int lane = ctid & 31;
        const u32 sk = smem_addr(slot), sv = sk + KvTile::BYTES;
        float s[SN][4];
#pragma unroll
        for (int j = 0; j < SN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[j][e] = 0.0f;
        // S = Q K^T: two 8-key tiles per ldmatrix.x4, K's rows (keys) as B's columns
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
            for (int j = 0; j < SN / 2; ++j) {
                u32 r[4];
                ldmatrix_x4(r, sk + KvTile::offset(j * 16 + (lane & 7) + (lane >> 4) * 8, kk * 16 + (lane >> 3 & 1) * 8));
                const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
                mma_16816(s[2 * j], qf[kk], b0);
                mma_16816(s[2 * j + 1], qf[kk], b1);
            }
        softmax(s, k, lane);
        // O += P V, 16 keys a step
#pragma unroll
        for (int t = 0; t < SN / 2; ++t) {
            u32 pa[4];
            p_fragment(pa, s, t);
#pragma unroll
            for (int j = 0; j < ON / 2; ++j) {
                u32 r[4];
                ldmatrix_x4_trans(r, sv + KvTile::offset(t * 16 + (lane & 7) + (lane >> 3 & 1) * 8, j * 16 + (lane >> 4) * 8));
                const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
                mma_16816(o[2 * j], pa, b0);
                mma_16816(o[2 * j + 1], pa, b1);
            }
        }
    }
};
