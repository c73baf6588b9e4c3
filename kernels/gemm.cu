// gemm: C[M x N] = A[M x K] * B with f32 accumulation, B either [K x N] row-major (B_NK 0, the CUDA
// samples' layout) or [N x K] row-major (B_NK 1, weights: C = A * B^T). One block per BM x BN tile
// of C; step k of a block is the k-th BK-wide slice of K, one slot holding A's and B's slices. Every
// movement mechanism (kernels/pipeline/) feeds the same compute body: FFMA on a register tile for
// f32 (DTYPE 0), mma.sync m16n8k16 fed by ldmatrix for f16 and bf16, or (WGMMA 1, sm_90a, with TMA)
// wgmma reading both operands from the slot.
//
// Set by tilepipe with -D: DTYPE, BM, BN, BK, WARPS_M, WARPS_N (CONSUMERS = 32 x WARPS_M x WARPS_N),
// B_NK, MIN_BLOCKS (blocks per SM the register budget must allow), WGMMA, PERSISTENT, PINGPONG, MMA_LAG, TMA_STORE, CLUSTER,
// SPLIT_K, SWAP_AB, and the pipeline's MECH,
// STAGES, COPY_BYTES, ... (pipeline/pipeline.cuh).

#include "common/elem.cuh"
#include "common/hooks.cuh"

#ifndef WGMMA
#define WGMMA 0
#endif
#ifndef PERSISTENT
#define PERSISTENT 0  // 1: a block per SM walks tiles (TMA + wgmma only)
#endif
#ifndef TMA_STORE
#define TMA_STORE 0  // 1: C leaves through shared memory and TMA stores (TMA + wgmma only)
#endif
#ifndef PINGPONG
#define PINGPONG 0  // 1: persistent, each consumer warpgroup on tiles of its own, the two in turns
#endif
#define WG_TURNS PINGPONG  // a turn: one tile's K slices (pipeline/ring.cuh)
// Ping-pong's warpgroup has the tensor cores to itself for its turn: a step's MMAs run on while it
// waits for the next slot, the previous step's retired and its slot released then (a step late).
// MMA_LAG (set by tilepipe, which reads it to check the SASS): the step's group left in flight.
#define RELEASE_LAG PINGPONG
#ifndef MMA_LAG
#define MMA_LAG 0
#endif
static_assert(MMA_LAG == PINGPONG, "the host says what ping-pong leaves in flight at a release");
#ifndef SPLIT_K
#define SPLIT_K 0  // 1: the grid's blocks beyond one per tile split K; partial sums reduced in order
#endif
#ifndef SWAP_AB
#define SWAP_AB 0  // 1: wgmma computes C^T = B A^T, its 64-row side along B's rows (a decode step's few rows of A)
#endif
#define TENSOR_CORES (DTYPE != 0)
#define CE (COPY_BYTES / ESIZE)  // elements per copy unit
static_assert(CONSUMERS == 32 * WARPS_M * WARPS_N, "one consumer warp per warp tile");
static_assert(!PERSISTENT || WGMMA, "persistent blocks are built on the Hopper ring");
static_assert((CLUSTER == 1 && !TMA_STORE) || WGMMA, "clusters and TMA stores are built on the Hopper ring");
static_assert(!SWAP_AB || WGMMA, "operands swap on the Hopper body");
static_assert(!PINGPONG || (PERSISTENT && CLUSTER == 1), "ping-pong turns pass within one persistent CTA");
static_assert(!SPLIT_K || (!PERSISTENT && CLUSTER == 1 && !TMA_STORE), "split-K gives each block one part of one tile, stored from registers");
static_assert(COPY_BYTES >= ESIZE && (BK * ESIZE) % COPY_BYTES == 0, "a slice row is whole copy units");

// Kernel parameters, passed by value as a __grid_constant__. The host mirrors this layout
// (workload::gemm::GemmParams); both sides assert its size.
struct __align__(64) GemmParams {
    Ctl ctl;
    const elem_t* a;       // [M x K], row stride lda
    const elem_t* b;       // [K x N] or [N x K], row stride ldb
    elem_t* c;             // [M x N], row stride ldc
    const elem_t* zeros;   // the zero source: memcpy_async's copies past an edge read it (the others read nothing)
    long long lda, ldb, ldc;
    int m, n, k;
    int tiles_m, tiles_n;
    int group_m;           // tile rows per raster group (consecutive blocks share B's columns in L2)
    float* workspace;      // split-K: [splits][M][N] partial sums
    u32* counters;         // split-K: per tile, the splits that have written their part (0 between launches)
    u64 map_a[16];         // CUtensorMaps (TMA only): A as {K, M}, boxes {BK, BM}
    u64 map_b[16];         // B as {K, N}, boxes {BK, BN / CLUSTER} (B [N x K]), or {N, K}, boxes {64, BK} (B [K x N])
    u64 map_c[16];         // C as {N, M}, boxes {64, 64} (TMA_STORE only)
};
static_assert(sizeof(GemmParams) == 512, "host and device disagree on GemmParams");

// A shared-memory tile of ROWS rows of COLS elements. Tensor-core tiles XOR each 16-byte chunk with
// the row so that the 8 rows an ldmatrix phase reads fall in 8 distinct bank groups; f32 K-major
// tiles pad each row by 16 bytes instead, so 8 rows read at one column hit 8 distinct banks.
template <int ROWS, int COLS, bool KMAJOR>
struct SmemTile {
    static constexpr bool SWIZZLE = TENSOR_CORES;
    static constexpr int PAD = (!TENSOR_CORES && KMAJOR) ? 16 : 0;
    static constexpr int ROWB = COLS * ESIZE + PAD;
    static constexpr int BYTES = ROWS * ROWB;
    static constexpr int CHUNKS = COLS * ESIZE / 16;
    static constexpr int SPAN = CHUNKS >= 8 ? 1 : 8 / CHUNKS;  // rows sharing one 128-byte line
    static constexpr int MASK = CHUNKS >= 8 ? 7 : CHUNKS - 1;
    __device__ __forceinline__ static int offset(int row, int byte) {
        if (!SWIZZLE) return row * ROWB + byte;
        return row * ROWB + ((((byte >> 4) ^ (row / SPAN)) & MASK) | ((byte >> 4) & ~MASK)) * 16 + (byte & 15);
    }
};

using TileA = SmemTile<BM, BK, true>;
#if B_NK
using TileB = SmemTile<BN, BK, true>;
#else
using TileB = SmemTile<BK, BN, false>;
#endif

struct GemmTiles {
    static constexpr int A_UPR = BK * ESIZE / COPY_BYTES;  // copy units per A row
    static constexpr int A_UNITS = BM * A_UPR;
#if B_NK
    static constexpr int B_ROWS = BN, B_COLS = BK;
#else
    static constexpr int B_ROWS = BK, B_COLS = BN;
#endif
    static constexpr int B_UPR = B_COLS * ESIZE / COPY_BYTES;
    static constexpr int MAX_UNITS = A_UNITS + B_ROWS * B_UPR;
    static constexpr int SLOT_BYTES = (TileA::BYTES + TileB::BYTES + 127) / 128 * 128;
    static constexpr bool ZERO_FILL = true;
    static constexpr bool PLAN_CHECKED = true;

    const GemmParams& p;
    int rank;  // this CTA's rank in its cluster: which BM rows of the cluster's tile it computes
    int m0, n0, ksteps, nsteps;
    int tile, split, splits, kfirst;  // split-K: the tile, its part of K (slices kfirst..+ksteps) of splits

    __device__ __forceinline__ GemmTiles(const GemmParams& params) : p(params) {
#if CLUSTER > 1
        rank = (int)cluster_rank();
#else
        rank = 0;
#endif
        tile = (int)blockIdx.x / CLUSTER;
        split = 0;
        splits = 1;
        kfirst = 0;
        ksteps = (p.k + BK - 1) / BK;
#if SPLIT_K
        // split-major: block b computes tile b % tiles() over the (b / tiles())-th part of K
        tile = (int)blockIdx.x % tiles();
        split = (int)blockIdx.x / tiles();
        splits = (int)gridDim.x / tiles();
        kfirst = split * ksteps / splits;
        ksteps = (split + 1) * ksteps / splits - kfirst;
#endif
        corner(tile, m0, n0);
#if WGMMA
        loading = first();
#endif
#if PERSISTENT
        // cluster tiles blockIdx.x / CLUSTER, + the grid's clusters, ...: the clusters resident
        // at once walk neighbouring tiles
        const int clusters = gridDim.x / CLUSTER;
        nsteps = (tiles() - (int)blockIdx.x / CLUSTER + clusters - 1) / clusters * ksteps;
#else
        nsteps = ksteps;
#endif
    }

    // Tiles of CLUSTER x BM rows by BN columns, each computed by one cluster.
    __device__ __forceinline__ int tiles() const { return (p.tiles_m + CLUSTER - 1) / CLUSTER * p.tiles_n; }

    // This CTA's first row and column of cluster tile t. Tiles are numbered down raster groups of
    // group_m cluster-tile rows, then right: consecutive tiles share B's columns while they are in
    // L2. A CTA past M (odd tile rows in a pair) computes zeros it never stores.
    __device__ __forceinline__ void corner(int t, int& m, int& n) const {
        const int per_group = p.group_m * p.tiles_n, cluster_rows = (p.tiles_m + CLUSTER - 1) / CLUSTER;
        const int first = t / per_group * p.group_m;
        const int rows = min(cluster_rows - first, p.group_m);
        m = ((first + t % per_group % rows) * CLUSTER + rank) * BM;
        n = t % per_group / rows * BN;
    }

    // A walk over the block's steps: the K slice, and the tile with its corner. The producer and
    // the consumers each keep one and step it on once per step, so no step divides by the trip
    // count (a persistent producer that did spent a fifth of the GEMM's time on it).
    struct Cursor {
        int slice, tile, m, n;
    };
    __device__ __forceinline__ Cursor first() const {
        Cursor c{0, tile, m0, n0};
        return c;
    }
    __device__ __forceinline__ void step_on(Cursor& c) const {
        if (++c.slice == ksteps) {
            c.slice = 0;
            c.tile += gridDim.x / CLUSTER;
            if (c.tile < tiles()) corner(c.tile, c.m, c.n);  // none past the last
        }
    }

    __device__ __forceinline__ const Ctl& ctl() const { return p.ctl; }
    __device__ __forceinline__ int cta_rank() const { return rank; }
    __device__ __forceinline__ void after_release(int, int) {}
    __device__ __forceinline__ int steps() const { return nsteps; }
    __device__ __forceinline__ bool has(int k) const { return k < nsteps; }

    // The copies of one K slice. A unit lies wholly inside the matrix or wholly outside (the host
    // checks that the row strides of A and B, hence K and B's row length, are multiples of CE);
    // outside, it reads 0 bytes and lands as zeros (zero-fill cp.async; zero registers when staged;
    // memcpy_async copies the zero source), so the tail slices add nothing, every mechanism sees the same bytes,
    // and no copy reads past an edge.
    struct Step {
        const elem_t *a, *b;
        int lda, ldb;  // a slice's offsets fit in 32 bits (the host bounds M, N and K by 2^20)
        int mrows, nrows, kcols;  // what is left of M, N and K from this slice's corner
        __device__ __forceinline__ int units() const { return MAX_UNITS; }
        __device__ __forceinline__ CopyUnit unit(int u) const {
            bool inside;
            const elem_t* src;
            if (u < A_UNITS) {
                const int r = u / A_UPR, c = u % A_UPR * CE;
                inside = r < mrows && c < kcols;
                src = a + (u32)(r * lda + c);
            } else {
                const int v = u - A_UNITS, r = v / B_UPR, c = v % B_UPR * CE;
#if B_NK
                inside = r < nrows && c < kcols;
#else
                inside = r < kcols && c < nrows;
#endif
                src = b + (u32)(r * ldb + c);
            }
            // past an edge src is never read (0 bytes): no select of the zero source, no branch (an
            // early return cost a branch a copy, and the selects two instructions)
            return {reinterpret_cast<const char*>(src), inside ? COPY_BYTES : 0U};
        }
        __device__ __forceinline__ int unit_dst(int u) const {
            if (u < A_UNITS) return TileA::offset(u / A_UPR, u % A_UPR * COPY_BYTES);
            const int v = u - A_UNITS;
            return TileA::BYTES + TileB::offset(v / B_UPR, v % B_UPR * COPY_BYTES);
        }
    };
    __device__ __forceinline__ Step step(int k) const {
        const int k0 = (kfirst + k) * BK;
#if B_NK
        const elem_t* b = p.b + (long long)n0 * p.ldb + k0;
#else
        const elem_t* b = p.b + (long long)k0 * p.ldb + n0;
#endif
        return {p.a + (long long)m0 * p.lda + k0, b, (int)p.lda, (int)p.ldb, p.m - m0, p.n - n0, p.k - k0};
    }
    __device__ __forceinline__ const void* zero_src() const { return p.zeros; }

    // (monitor) Copy unit u of step k as the plan above defines it, from the matrices' shapes alone:
    // the reference a copy's source is checked against (a unit past M, N or K reads nothing).
    __device__ __forceinline__ const char* plan_src(int k, int u, MonPlace& at) const {
        const bool is_a = u < A_UNITS;
        const int v = is_a ? u : u - A_UNITS, upr = is_a ? A_UPR : B_UPR;
        const int r = v / upr, c = v % upr * CE, k0 = (kfirst + k) * BK;
#if B_NK
        at = is_a ? MonPlace{1, m0 + r, k0 + c, 0, p.m, p.k} : MonPlace{2, n0 + r, k0 + c, 0, p.n, p.k};
#else
        at = is_a ? MonPlace{1, m0 + r, k0 + c, 0, p.m, p.k} : MonPlace{2, k0 + r, n0 + c, 0, p.k, p.n};
#endif
        at.past = at.row >= at.rows || at.col >= at.cols;
        const elem_t* m = is_a ? p.a + at.row * p.lda : p.b + at.row * p.ldb;
        return at.past ? nullptr : reinterpret_cast<const char*>(m + at.col);
    }

#if WGMMA
    // A step's slices as whole TMA boxes in 128-byte-swizzled rows, which wgmma reads as they land:
    // A's BM x BK, then B's BN x BK (B [N x K]) or BN / 64 boxes of BK x 64 side by side (B [K x N]).
    // Elements past an edge land as zeros and count toward the step's bytes. In a cluster the CTAs
    // share B's slice: each loads its CLUSTER-th part and multicasts it to all, so the bytes
    // landing in each CTA are still its A and the whole of B.
    static_assert(BK * ESIZE == 128, "a K slice row is one 128-byte swizzle row");
    __device__ __forceinline__ u32 tma_bytes() const { return (BM + BN) * BK * ESIZE; }
    __device__ __forceinline__ void tma_prefetch() const {
        tma_prefetch_descriptor(p.map_a);
        tma_prefetch_descriptor(p.map_b);
        if (TMA_STORE) tma_prefetch_descriptor(p.map_c);
    }
    // Called for steps 0, 1, 2, ... in order, by the one producing thread.
    __device__ __forceinline__ void tma_load(unsigned char* slot, int, u64* bar) const {
        const int k0 = (kfirst + loading.slice) * BK, m = loading.m, n = loading.n;
        tma_load_2d(slot, p.map_a, k0, m, bar);
#if CLUSTER > 1
        constexpr unsigned short ALL = (1U << CLUSTER) - 1U;
#if B_NK
        constexpr int PART = BN / CLUSTER;
        static_assert(BN % CLUSTER == 0 && PART % 8 == 0, "each part starts on a whole 1024-byte swizzle pattern");
        tma_load_2d_multicast(slot + TileA::BYTES + rank * PART * 128, p.map_b, k0, n + rank * PART, bar, ALL);
#else
        static_assert(BN / 64 % CLUSTER == 0, "B's boxes divide among the cluster");
#pragma unroll
        for (int i = 0; i < BN / 64 / CLUSTER; ++i) {
            const int j = i * CLUSTER + rank;
            tma_load_2d_multicast(slot + TileA::BYTES + j * BK * 128, p.map_b, n + 64 * j, k0, bar, ALL);
        }
#endif
#elif B_NK
        tma_load_2d(slot + TileA::BYTES, p.map_b, k0, n, bar);
#else
#pragma unroll
        for (int j = 0; j < BN / 64; ++j) tma_load_2d(slot + TileA::BYTES + j * BK * 128, p.map_b, n + 64 * j, k0, bar);
#endif
        step_on(loading);
    }
    mutable Cursor loading;  // the producer's: the next step to load
#endif

    __device__ __forceinline__ void store(int row, int col, float v) const {
        if (row < p.m && col < p.n) p.c[(long long)row * p.ldc + col] = from_float(v);
    }
    // Two adjacent outputs from an even column: one 4-byte store where both lie inside C and the
    // row starts 4-byte aligned (ldc even), else one at a time.
    __device__ __forceinline__ void store2(int row, int col, float v0, float v1) const {
#if DTYPE != 0
        if (row < p.m && col + 1 < p.n && p.ldc % 2 == 0) {
            elem_t pair[2] = {from_float(v0), from_float(v1)};
            *reinterpret_cast<u32*>(p.c + (long long)row * p.ldc + col) = *reinterpret_cast<const u32*>(pair);
            return;
        }
#endif
        store(row, col, v0);
        store(row, col + 1, v1);
    }
    // With more than one part of K, true where another block of the tile stores C; false where
    // the body stores it: a tile of one part, or the last part to finish, its accumulators now
    // holding the sum of every part (below).
    template <class Body>
    __device__ __forceinline__ bool stored_elsewhere(int ctid, Body& body) const {
#if SPLIT_K
        if (splits > 1) return !reduced_here(ctid, body);
#endif
        return false;
    }

#if SPLIT_K
    // Split-K: every split writes its partial sums to its plane of the workspace; the last of
    // the tile's splits to arrive (the counter, counted in by one thread between two barriers
    // with its fences, as CUTLASS's split-K semaphore does, rather than a sequentially
    // consistent fence by every thread) rearms the counter and adds the planes into its
    // accumulators in split order, the same order on every run whichever arrives last.
    // A plane holds the tile's accumulators in the threads' own order, four at a time, thread
    // after thread: the last block's threads hold the same accumulators, so each reads back
    // what its peers wrote, a warp's 512 contiguous bytes a load, at offsets fixed at compile
    // time. Stored at C's places, a thread's loads each needed their own address and bounds
    // test, and with 128 accumulators a thread (the warp-specialised 128 x 256 tile) the
    // registers left held one load at a time: a round trip to L2 per accumulator and part.
    // PLANES planes at a time, so that a tile of few accumulators a thread has a load of each
    // of several parts in flight at once; a tile of many, a few float4s of a plane at a time.
    template <class Body>
    __device__ __forceinline__ bool reduced_here(int ctid, Body& body) const {
        __shared__ u32 last;
        constexpr int ACCS = sizeof(body.acc) / sizeof(float), QUADS = ACCS / 4;
        static_assert(ACCS % 4 == 0, "a thread's accumulators in whole float4s");
        // the loads in flight live in registers beside the accumulators: BATCH float4s of each
        // of PLANES planes, 64 registers at most, fewer the more accumulators (16 beside 128:
        // the warp-specialised tile's consumers have 168 in all)
        constexpr int PLANES = ACCS >= 64 ? 1 : 64 / ACCS < 4 ? 64 / ACCS : 4;
        constexpr int BATCH = QUADS < 512 / ACCS ? QUADS : 512 / ACCS;
        static_assert(QUADS % BATCH == 0, "whole batches");
        float* acc = reinterpret_cast<float*>(&body.acc);
        // int offsets: the host caps the workspace at 2^26 floats
        const int plane = tiles() * QUADS * CONSUMERS;  // float4s
        const float4* base = reinterpret_cast<const float4*>(p.workspace) + tile * QUADS * CONSUMERS + ctid;
        float4* mine = reinterpret_cast<float4*>(p.workspace) + split * plane + tile * QUADS * CONSUMERS + ctid;
#pragma unroll
        for (int q = 0; q < QUADS; ++q) __stcg(mine + q * CONSUMERS, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
        named_barrier_sync(1, CONSUMERS);
        if (ctid == 0) last = count_in_gpu(p.counters + tile) == (u32)(splits - 1);
        named_barrier_sync(1, CONSUMERS);
        if (!last) return false;
        if (ctid == 0) p.counters[tile] = 0U;
#pragma unroll
        for (int a = 0; a < ACCS; ++a) acc[a] = 0.0f;
        for (int s = 0; s < splits; s += PLANES) {
#pragma unroll
            for (int c = 0; c < QUADS; c += BATCH) {
                float4 x[PLANES][BATCH];
#pragma unroll
                for (int g = 0; g < PLANES; ++g) {
                    // a plane past the last part reads the last again and adds nothing (a
                    // select, not a branch, between the planes, which would hold each plane's
                    // loads back)
                    const float4* part = base + (PLANES == 1 ? s : min(s + g, splits - 1)) * plane;
#pragma unroll
                    for (int q = 0; q < BATCH; ++q) x[g][q] = __ldcg(part + (c + q) * CONSUMERS);
                }
#pragma unroll
                for (int g = 0; g < PLANES; ++g) {
                    const bool part_of_it = PLANES == 1 || s + g < splits;
#pragma unroll
                    for (int q = 0; q < BATCH; ++q) {
                        float* a = acc + 4 * (c + q);
                        a[0] = part_of_it ? a[0] + x[g][q].x : a[0];
                        a[1] = part_of_it ? a[1] + x[g][q].y : a[1];
                        a[2] = part_of_it ? a[2] + x[g][q].z : a[2];
                        a[3] = part_of_it ? a[3] + x[g][q].w : a[3];
                    }
                }
                // ptxas hoists loads past their batch, into registers it then spills from the
                // rest of the kernel; a warp's memory ordering point holds them to it
                __syncwarp();
            }
        }
        return true;
    }
#endif

    __device__ __forceinline__ static elem_t from_float(float v) {
#if DTYPE == 0
        return v;
#elif DTYPE == 1
        return __float2half_rn(v);
#else
        return __float2bfloat16_rn(v);
#endif
    }
};

#include "pipeline/pipeline.cuh"

#if WGMMA
#include "gemm/wgmma.cuh"
#elif TENSOR_CORES
#include "gemm/mma.cuh"
#else
#include "gemm/simt.cuh"
#endif

#if CLUSTER > 1
#define CLUSTER_DIMS __cluster_dims__(CLUSTER, 1, 1)
#else
#define CLUSTER_DIMS
#endif
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) CLUSTER_DIMS tilepipe_gemm(const __grid_constant__ GemmParams p) {
    Gemm w(p);
    run(w);
}
