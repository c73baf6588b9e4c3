// The f32 compute body: FFMA on registers. A warp computes its BM / WARPS_M x BN / WARPS_N tile as
// 4 x 8 lanes of TM x TN outputs (8 x 8 on 32 x 64 warp tiles; 16 x 8 on 64 x 64, a larger
// register tile that reads fewer shared-memory bytes per FFMA); a lane's rows are 4 apart (so the 4
// rows a warp reads at once sit in 4 bank groups of the padded A tile) and its columns are 4-wide
// vectors 32 apart (B [K x N]) or single columns 8 apart (B [N x K], padded like A). K-major
// operands are read two k at a time (8-byte loads).
#pragma once

#define TM (BM / WARPS_M / 4)
#define TN (BN / WARPS_N / 8)
static_assert(BM == 4 * TM * WARPS_M && BN == 8 * TN * WARPS_N && TN % 4 == 0, "f32 warp tiles are 4 x 8 lanes, TN whole 4-wide vectors");
static_assert(BK % 2 == 0, "the f32 body reads k in pairs");
static_assert(!SPLIT_K, "split-K is built for the tensor-core bodies");

struct Gemm : GemmTiles {
    float acc[TM][TN];
    int wm, wn, lm, ln;  // the warp's tile corner in the block tile; the lane's row and column

    __device__ __forceinline__ Gemm(const GemmParams& params) : GemmTiles(params) {
        const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
        wm = warp / WARPS_N * (4 * TM);
        wn = warp % WARPS_N * (8 * TN);
        lm = lane / 8;
        ln = lane % 8;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    }

    // Adds the slot's K slice to the accumulators, k in order, so that every mechanism sums the same
    // products in the same order. `between` runs before the first read (early-release control).
    template <class Between>
    __device__ __forceinline__ void consume(const unsigned char* slot, int k, int, Between between) {
        between();
        perturb(p.ctl, k, EDGE_COMPUTE);
        // the lane's own row of A and column of B added once: the f32 tiles are unswizzled, so
        // offsets add, and each load is its base plus a constant (ptxas kept a register per k
        // and an add per load where the lane's part was inside the offset)
        static_assert(!TileA::SWIZZLE && !TileB::SWIZZLE, "f32 tile offsets are linear");
        const unsigned char* sa = slot + TileA::offset(wm + lm, 0);
#if B_NK
        const unsigned char* sb = slot + TileA::BYTES + TileB::offset(wn + ln, 0);
#else
        const unsigned char* sb = slot + TileA::BYTES + (wn + ln * 4) * 4;
#endif
#pragma unroll
        for (int kk = 0; kk < BK; kk += 2) {
            float2 a[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = *reinterpret_cast<const float2*>(sa + TileA::offset(i * 4, kk * 4));
#if B_NK
            float2 b[TN];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = *reinterpret_cast<const float2*>(sb + TileB::offset(j * 8, kk * 4));
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i].y, b[j].y, fmaf(a[i].x, b[j].x, acc[i][j]));
#else
            float b[2][TN];
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int j = 0; j < TN / 4; ++j)
                    *reinterpret_cast<float4*>(&b[h][j * 4]) =
                        *reinterpret_cast<const float4*>(sb + TileB::offset(kk + h, j * 32 * 4));
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i].y, b[1][j], fmaf(a[i].x, b[0][j], acc[i][j]));
#endif
        }
    }

    __device__ __forceinline__ void finish(int) const {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
#if B_NK
                const int col = wn + ln + j * 8;
#else
                const int col = wn + ln * 4 + j / 4 * 32 + j % 4;
#endif
                store(m0 + wm + lm + i * 4, n0 + col, acc[i][j]);
            }
    }
};
