// The f16/bf16 compute body: mma.sync m16n8k16 with f32 accumulators, operands loaded from the
// swizzled slot by ldmatrix (.trans for B [K x N], whose rows run along N). A warp computes a
// (BM / WARPS_M) x (BN / WARPS_N) tile as MI x NI tiles of 16 x 8.
#pragma once

#define WTM (BM / WARPS_M)
#define WTN (BN / WARPS_N)
#define MI (WTM / 16)
#define NI (WTN / 8)
static_assert(WTM % 16 == 0 && WTN % 16 == 0 && BK % 16 == 0, "warp tiles of whole 16 x 16 x 16 steps");

struct Gemm : GemmTiles {
    float acc[MI][NI][4];
    int wm, wn;

    __device__ __forceinline__ Gemm(const GemmParams& params) : GemmTiles(params) {
        const int warp = threadIdx.x / 32;
        wm = warp / WARPS_N * WTM;
        wn = warp % WARPS_N * WTN;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    }

    // Adds the slot's K slice to the accumulators, 16 k at a time in order. `between` runs before
    // the first read (early-release control).
    template <class Between>
    __device__ __forceinline__ void consume(const unsigned char* slot, int k, int ctid, Between between) {
        between();
        perturb(p.ctl, k, EDGE_COMPUTE);
        const u32 sa = smem_addr(slot), sb = sa + TileA::BYTES;
        const int lane = ctid & 31;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            u32 af[MI][4];
#pragma unroll
            for (int i = 0; i < MI; ++i)
                ldmatrix_x4(af[i], sa + TileA::offset(wm + i * 16 + (lane & 15), (kk + (lane >> 4) * 8) * ESIZE));
            // B two n-tiles at a time, used at once: fewer fragments live, so more blocks fit
#pragma unroll
            for (int j = 0; j < NI / 2; ++j) {
                u32 r[4];
#if B_NK
                ldmatrix_x4(r, sb + TileB::offset(wn + j * 16 + (lane & 7) + (lane >> 4) * 8,
                                                  (kk + (lane >> 3 & 1) * 8) * ESIZE));
#else
                ldmatrix_x4_trans(r, sb + TileB::offset(kk + (lane & 7) + (lane >> 3 & 1) * 8,
                                                        (wn + j * 16 + (lane >> 4) * 8) * ESIZE));
#endif
                const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
                for (int i = 0; i < MI; ++i) {
                    mma_16816(acc[i][2 * j], af[i], b0);
                    mma_16816(acc[i][2 * j + 1], af[i], b1);
                }
            }
        }
    }

    // Calls f(row, col, v) for each of this thread's accumulators v (by reference): accumulator e of a 16 x 8
    // tile sits at row lane / 4 (+ 8 for e >= 2), column 2 (lane % 4) + e % 2.
    template <class F>
    __device__ __forceinline__ void each_output(int ctid, F f) {
        const int lane = ctid & 31;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int row = m0 + wm + i * 16 + lane / 4 + e / 2 * 8, col = n0 + wn + j * 8 + lane % 4 * 2 + e % 2;
                    if (row < p.m && col < p.n) f(row, col, acc[i][j][e]);
                }
    }

    __device__ __forceinline__ void finish(int ctid) {
        if (stored_elsewhere(ctid, *this)) return;
        each_output(ctid, [&](int row, int col, float& v) { store(row, col, v); });
    }
};
