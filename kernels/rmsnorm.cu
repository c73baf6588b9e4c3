// rmsnorm: Y = gelu(X * rsqrt(mean(X^2) + eps) * gamma) over row tiles of a strided activation view.
// Every movement mechanism (kernels/pipeline/) feeds this one compute body, so timings compare
// movement alone.
//
// Set by tilepipe with -D: the row tiles' DTYPE, HIDDEN, TILE_ROWS (common/rows.cuh) and the
// pipeline's MECH, STAGES, CONSUMERS, ... (pipeline/pipeline.cuh).

#include "common/rows.cuh"
#include "pipeline/pipeline.cuh"

#ifndef EPS
#define EPS 1e-6f
#endif
// The threads the row reduction is laid out for: the run's consumers. A direct build may run FOLD
// times fewer threads (pipeline/pipeline.cuh), each doing the work of FOLD of them, or SPLIT times
// more, each holding a SPLIT-th of one's vectors; either way it sums in the same order, bit for bit.
#define RED_THREADS (CONSUMERS * FOLD / SPLIT)
#define NWARPS_R (RED_THREADS / 32)
#define NV ((NVEC_ROW + RED_THREADS - 1) / RED_THREADS)  // vectors per reduction thread per row
// vectors per thread per row (a split thread's share rounded up: vectors past the row are skipped)
#define NQ ((FOLD * NV + SPLIT - 1) / SPLIT)
// Where the slot is the tile in global memory (direct), the second pass reuses the vectors the
// first one loaded, held in registers where they fit in 32, instead of a second trip to L1/L2. A
// slot in shared memory is re-read: holding it would cost staged builds registers and occupancy.
#define KEEP_TILE (MECH == MECH_DIRECT && TILE_ROWS * NQ <= 8)

// tanh form: gelu(v) = v * sigmoid(2u) = v / (1 + 2^(-2u log2 e)), u = sqrt(2/pi) (v + 0.044715 v^3),
// folded to v / (1 + 2^(v (C1 + C2 v^2))): three FP32 operations, two special-function ones, one add.
#define GELU_C1 (-2.3022082f)   // -2 sqrt(2/pi) log2(e)
#define GELU_C2 (-0.10294324f)  // GELU_C1 * 0.044715
__device__ __forceinline__ float gelu(float v) {
    const float e = ex2_approx(v * fmaf(GELU_C2, v * v, GELU_C1));
    return v * rcp_approx(1.0f + e);
}

// Vector q (0 <= q < NQ) of consumer thread ctid in a row: folded, the i-th vector of reduction
// thread ctid + f * CONSUMERS, for q = f * NV + i; split, part ctid / RED_THREADS of reduction
// thread ctid % RED_THREADS holds its vectors part * NQ .. part * NQ + NQ - 1.
__device__ __forceinline__ int vec_of(int ctid, int q) {
    if (SPLIT > 1) return ctid % RED_THREADS + ((ctid / RED_THREADS) * NQ + q) * RED_THREADS;
    return ctid + (q / NV) * CONSUMERS + (q % NV) * RED_THREADS;
}

// Whether vector q of consumer thread ctid lies in the row: always, where the row's vectors divide
// evenly among the threads (known at compile time, so the build carries no guard at all). Two keep
// their guard, because ptxas without it allocates worse (measured on the H200): a split build
// hoists its later parts' loads and spills at the 32 registers it asks for (f32 rows of 8192:
// 1032 -> 1100 us), and sync takes 80 registers, one block per SM fewer (bf16 4096: +4 %).
#define ROW_EXACT (SPLIT == 1 && MECH != MECH_SYNC && NVEC_ROW == NV * RED_THREADS && NQ * SPLIT == FOLD * NV)
__device__ __forceinline__ bool in_row(int ctid, int q) { return ROW_EXACT || vec_of(ctid, q) < NVEC_ROW; }

// Vector v of an output row (it may start at any element where Y_SPLIT: store_vec splits it).
// Indexed unsigned, the address folds into one wide add per store and ptxas schedules the second
// pass better (tma-ws-s3-64k, bf16 rows of 4096: 1161 -> 1121 us; most staged builds 0-1 %
// faster). sync and split builds keep the signed index: unsigned, they were 2.5 % and 2.9 % slower
// in the same run (H200).
#define STORE_UNSIGNED (SPLIT == 1 && MECH != MECH_SYNC)
__device__ __forceinline__ uint4* out_vec(elem_t* row, int v) {
    if (STORE_UNSIGNED) return reinterpret_cast<uint4*>(row) + (unsigned)v;
    return reinterpret_cast<uint4*>(row) + v;
}

struct RmsNorm : RowTiles {
    // packed in registers (16 bytes per vector), unpacked where it is used; a build that holds its
    // tile instead rereads gamma from L1, so that the tile costs it no occupancy
    uint4 gamma[KEEP_TILE ? 1 : NQ];

    __device__ __forceinline__ RmsNorm(const RowParams& params) : RowTiles(params) {
        const int ctid = threadIdx.x < CONSUMERS ? threadIdx.x : 0;
#pragma unroll
        for (int q = 0; q < NQ; ++q)
            if (!KEEP_TILE) gamma[KEEP_TILE ? 0 : q] = gamma_at(vec_of(ctid, q));
    }

    __device__ __forceinline__ uint4 gamma_at(int v) const {
        return v < NVEC_ROW ? __ldg(reinterpret_cast<const uint4*>(p.aux) + v) : make_uint4(0, 0, 0, 0);
    }

    // Two passes over the tile in slot: sum of squares per row, then normalise, scale, gelu, store.
    // Every consumer thread calls it (it holds a consumer-wide barrier). `between` runs after the
    // first pass.
    template <class Between>
    __device__ __forceinline__ void consume(const unsigned char* slot_bytes, int k, int ctid, Between between) const {
#if ONLY == 1
        return;
#endif
        __shared__ float red[2][TILE_ROWS][NWARPS_R];  // double-buffered by step parity
        const int t = tile(k), rows = tile_rows(t);
        const int lane = ctid & 31;
        const u64 policy = l2_evict_last_policy();  // used by a held tile's loads alone
        const auto load = [&](int r, int v) {
            return row_read<IN_PLACE>(slot_bytes, t, r).at(v, [&](const uint4* a) {
                return KEEP_TILE ? ld_global_el_v4(a, policy) : *a;  // a held tile is read once
            });
        };
        // held: every load of the tile issued before the first row's reduction waits on any
        uint4 kept[KEEP_TILE ? TILE_ROWS : 1][KEEP_TILE ? NQ : 1];
#pragma unroll
        for (int r = 0; r < (KEEP_TILE ? TILE_ROWS : 0); ++r)
#pragma unroll
            for (int q = 0; q < NQ; ++q)
                if (r < rows && in_row(ctid, q)) kept[KEEP_TILE ? r : 0][KEEP_TILE ? q : 0] = load(r, vec_of(ctid, q));
        const auto vec = [&](int r, int q) { return KEEP_TILE ? kept[KEEP_TILE ? r : 0][KEEP_TILE ? q : 0] : load(r, vec_of(ctid, q)); };
        // a split reduction thread's sum runs through its parts in order, each continuing the
        // chain of FMAs of the one before (handed over in shared memory): the same sum as one thread's
        __shared__ float chain[SPLIT > 1 ? TILE_ROWS : 1][SPLIT > 1 ? RED_THREADS : 1];
        const int part = SPLIT > 1 ? ctid / RED_THREADS : 0;
#pragma unroll
        for (int turn = 0; turn < SPLIT; ++turn) {
            if (turn > 0) named_barrier_sync(1, CONSUMERS);
            if (part != turn) continue;
#pragma unroll
            for (int r = 0; r < TILE_ROWS; ++r) {
#pragma unroll
                for (int f = 0; f < FOLD; ++f) {
                    float acc = part > 0 ? chain[SPLIT > 1 ? r : 0][SPLIT > 1 ? ctid % RED_THREADS : 0] : 0.0f;
                    if (r < rows) {
#pragma unroll
                        for (int i = 0; i < NQ / FOLD; ++i) {
                            const int q = f * (NQ / FOLD) + i;
                            if (in_row(ctid, q)) {
                                float x[VEC];
                                unpack(vec(r, q), x);
#pragma unroll
                                for (int j = 0; j < VEC; ++j) acc = fmaf(x[j], x[j], acc);
                            }
                        }
                    }
                    if (part < SPLIT - 1) {
                        chain[SPLIT > 1 ? r : 0][SPLIT > 1 ? ctid % RED_THREADS : 0] = acc;
                        continue;
                    }
#pragma unroll
                    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffU, acc, o);
                    if (lane == 0) red[k & 1][r][((SPLIT > 1 ? ctid % RED_THREADS : ctid) >> 5) + f * NWARPS_C] = acc;
                }
            }
        }
        named_barrier_sync(1, CONSUMERS);
        between();
        perturb(p.ctl, k, EDGE_COMPUTE);
#pragma unroll
        for (int r = 0; r < TILE_ROWS; ++r) {
            if (r < rows) {
                float ss = 0.0f;
#pragma unroll
                for (int w = 0; w < NWARPS_R; ++w) ss += red[k & 1][r][w];  // fixed order: bit-exact everywhere
                const float inv = rsqrtf(ss / (float)HIDDEN + EPS);
                elem_t* out = y_row(t, r);
#pragma unroll
                for (int q = 0; q < NQ; ++q) {
                    const int v = vec_of(ctid, q);
                    if (in_row(ctid, q)) {
                        float x[VEC], g[VEC];
                        unpack(vec(r, q), x);
                        unpack(KEEP_TILE ? gamma_at(v) : gamma[KEEP_TILE ? 0 : q], g);
#pragma unroll
                        for (int j = 0; j < VEC; ++j) x[j] = gelu(x[j] * inv * g[j]);
                        store_vec(out_vec(out, v), pack(x));
                    }
                }
            }
        }
    }
};

// A split build is there for residency: it asks for a full SM of threads (32 registers at 512 per
// block) where its held vectors leave room for it (four at most; more spill). Every other build
// takes the variant's bound (common/rows.cuh; a minimum of one block is not the same as none).
#if SPLIT > 1
#define BOUNDS __launch_bounds__(THREADS, TILE_ROWS * NQ <= 4 ? SM_THREADS / THREADS : 1)
#else
#define BOUNDS ROW_BOUNDS
#endif

extern "C" __global__ void BOUNDS tilepipe_rmsnorm(const __grid_constant__ RowParams p) {
    if (blockIdx.x >= p.ntiles) return;  // a block that owns no tile leaves before any barrier
    RmsNorm w(p);
    run(w);
}
