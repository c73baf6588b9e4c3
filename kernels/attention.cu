// attention: O = softmax(Q K^T * scale [+ causal mask]) V per (batch, head), f16/bf16 in, f32
// accumulation, Q, K, V and O each [batch x heads, seqlen, head dim] contiguous. One block per
// BM query rows of one head; step k of a block is the k-th tile of BN keys, one slot holding that
// tile's rows of K and of V. Every movement mechanism (kernels/pipeline/) feeds the same compute
// body: FlashAttention-2's, on mma.sync m16n8k16 (attention/mma.cuh), or with WGMMA on Hopper's
// warpgroup MMA (attention/wgmma.cuh, TMA rings only); both share its softmax (attention/softmax.cuh).
//
// Set by tilepipe with -D: DTYPE (1 f16, 2 bf16), HEAD_DIM (64 | 128), BM (16 query rows per
// consumer warp), BN, CONSUMERS, WGMMA (0 | 1), PINGPONG (0 | 1), PERSISTENT (0 | 1), and the
// pipeline's MECH, STAGES, COPY_BYTES, ... (pipeline/pipeline.cuh).

#include "common/elem.cuh"
#include "common/hooks.cuh"

#ifndef PERSISTENT
#define PERSISTENT 0  // 1: the blocks resident at once walk the query tiles, the ring running on across them
#endif

#define D HEAD_DIM
#define PANELS (D / 64)  // a tile row is PANELS 128-byte panels of 64 elements
static_assert(DTYPE != 0 && ESIZE == 2, "attention is built on 16-bit tensor-core MMAs");
static_assert(D % 64 == 0 && BN % 16 == 0 && BM == 16 * (CONSUMERS / 32), "16 query rows a consumer warp, whole 16-key steps");
static_assert(COPY_BYTES == 16, "a tile row is whole 16-byte units");

// Kernel parameters, passed by value as a __grid_constant__. The host mirrors this layout
// (workload::attention::AttnParams); both sides assert its size.
struct __align__(64) AttnParams {
    Ctl ctl;
    const elem_t* q;
    const elem_t* k;
    const elem_t* v;
    elem_t* o;
    const elem_t* zeros;  // the zero source: copies past the last key name it and read 0 bytes
    int heads;            // batch x heads
    int seqlen;
    int q_tiles;          // tiles of BM query rows in one head
    int causal;           // 1: key j is seen by query i only where j <= i
    float scale_log2;     // the softmax scale x log2(e): scores go through exp2
    u32 reserved[9];      // up to offset 128, where the tensor maps start
    // CUtensorMaps (TMA only): K and V as {D, seqlen, heads}, boxes {64, BN, 1}. A map must start
    // 64-byte aligned in param space (CUtensorMap is alignas(128) from CUDA 13): a tensor copy or
    // prefetch naming a map at another offset faults the launch (CUDA_ERROR_MISALIGNED_ADDRESS).
    __align__(64) u64 map_k[16];
    __align__(64) u64 map_v[16];
};
static_assert(sizeof(AttnParams) == 384, "host and device disagree on AttnParams");

// A K or V tile in a slot: BN rows of PANELS 128-byte panels, a panel's rows 128 bytes apart and
// its 16-byte chunks XOR-swizzled by row (as a 128-byte-swizzled TMA box of 64 x BN lands), so
// the 8 rows an ldmatrix phase reads fall in 8 distinct bank groups.
struct KvTile {
    static constexpr int BYTES = BN * D * ESIZE;
    __device__ __forceinline__ static int offset(int row, int col) {
        const int chunk = col * ESIZE / 16;
        return chunk / 8 * BN * 128 + row * 128 + ((chunk ^ row) & 7) * 16 + col * ESIZE % 16;
    }
};

struct AttnTiles {
    static constexpr int UPR = D * ESIZE / 16;  // 16-byte units per row
    static constexpr int MAX_UNITS = 2 * BN * UPR;
    static constexpr int SLOT_BYTES = 2 * KvTile::BYTES;
    static constexpr bool ZERO_FILL = true;
    static constexpr bool PLAN_CHECKED = true;

    // A query tile of the walk and a key tile (step) of it. Heads walk their query tiles from the
    // last: under a causal mask the last tile sees every key, so the longest start first and the
    // short ones fill the tail. Persistent blocks take pairs of a head's tiles, b, b + grid, ...,
    // a pair the longest left with the shortest left: under the mask every pair walks the same
    // keys, so blocks with as many pairs end together.
    struct Work {
        int i, tile, head, q0, k, steps;  // i: the block's i-th query tile, tile t of the grid's
    };
    __device__ __forceinline__ Work work(int i) const {
#if PERSISTENT
        const int t = 2 * ((int)blockIdx.x + (int)gridDim.x * (i >> 1)) + (i & 1);
        const int at = t % p.q_tiles;
        const int q_tile = at & 1 ? at >> 1 : p.q_tiles - 1 - (at >> 1);
#else
        const int t = (int)blockIdx.x;
        const int q_tile = p.q_tiles - 1 - t % p.q_tiles;
#endif
        const int q0 = q_tile * BM;
        const int keys = p.causal ? min(p.seqlen, q0 + BM) : p.seqlen;
        return {i, t, t / p.q_tiles, q0, 0, (keys + BN - 1) / BN};
    }
    // The next key tile; after a query tile's last, the block's next query tile.
    __device__ __forceinline__ void step_on(Work& w) const {
        if (++w.k == w.steps) w = work(w.i + 1);
    }

    const AttnParams& p;
    int head, q0;       // the consumers' query tile (a persistent block's current one)
    int nsteps;         // the block's steps, over all its query tiles
    mutable Work loading;  // the producer's: the next key tile to load
    Work computing;        // the consumers': the key tile being computed

    __device__ __forceinline__ AttnTiles(const AttnParams& params) : p(params) {
        computing = loading = work(0);
        head = computing.head;
        q0 = computing.q0;
        nsteps = computing.steps;
#if PERSISTENT
        for (Work w = work(1); w.tile < p.heads * p.q_tiles; w = work(w.i + 1)) nsteps += w.steps;
#endif
    }

    __device__ __forceinline__ const Ctl& ctl() const { return p.ctl; }
    __device__ __forceinline__ int steps() const { return nsteps; }
    __device__ __forceinline__ bool has(int k) const { return k < nsteps; }
    __device__ __forceinline__ int cta_rank() const { return 0; }
    __device__ __forceinline__ void begin() {}
    __device__ __forceinline__ void after_release(int, int) {}

    // The copies of key tile k: unit u < BN x UPR is K's, the rest V's; a unit past the last key
    // reads 0 bytes of the zero source and lands as zeros.
    struct Step {
        const elem_t *k, *v;
        const char* zeros;
        int keys;  // keys left from this tile's first
        __device__ __forceinline__ int units() const { return MAX_UNITS; }
        __device__ __forceinline__ CopyUnit unit(int u) const {
            const bool is_v = u >= BN * UPR;
            const int w = is_v ? u - BN * UPR : u, r = w / UPR, c = w % UPR * (16 / ESIZE);
            if (r >= keys) return {zeros, 0U};
            return {reinterpret_cast<const char*>((is_v ? v : k) + (long long)r * D + c), 16U};
        }
        __device__ __forceinline__ int unit_dst(int u) const {
            const bool is_v = u >= BN * UPR;
            const int w = is_v ? u - BN * UPR : u;
            return is_v * KvTile::BYTES + KvTile::offset(w / UPR, w % UPR * (16 / ESIZE));
        }
    };
    __device__ __forceinline__ Step step(int k) const {
        const long long first = ((long long)head * p.seqlen + k * BN) * D;
        return {p.k + first, p.v + first, reinterpret_cast<const char*>(p.zeros), p.seqlen - k * BN};
    }
    __device__ __forceinline__ const void* zero_src() const { return p.zeros; }

    // (monitor) Copy unit u of step k as the plan defines it: tensor 3 is K, 4 is V.
    __device__ __forceinline__ const char* plan_src(int k, int u, MonPlace& at) const {
        const bool is_v = u >= BN * UPR;
        const int w = is_v ? u - BN * UPR : u, key = k * BN + w / UPR, c = w % UPR * (16 / ESIZE);
        at = MonPlace{is_v ? 4 : 3, head * p.seqlen + key, c, key >= p.seqlen, p.heads * p.seqlen, D};
        const elem_t* t = is_v ? p.v : p.k;
        return at.past ? nullptr : reinterpret_cast<const char*>(t + ((long long)head * p.seqlen + key) * D + c);
    }

    // One tensor copy a step per tensor panel: K's and V's BN rows of 64 elements each, keys past
    // the last landing as zeros (and counting toward the step's bytes).
    __device__ __forceinline__ u32 tma_bytes() const { return SLOT_BYTES; }
    __device__ __forceinline__ void tma_prefetch() const {
        tma_prefetch_descriptor(p.map_k);
        tma_prefetch_descriptor(p.map_v);
    }
    // Called for steps 0, 1, 2, ... in order, by the one producing thread: a persistent block's
    // producer keeps its own place in the walk.
    __device__ __forceinline__ void tma_load(unsigned char* slot, int k, u64* bar) const {
#if PERSISTENT
        const int key = loading.k * BN, h = loading.head;
        step_on(loading);
#else
        const int key = k * BN, h = head;
#endif
#pragma unroll
        for (int panel = 0; panel < PANELS; ++panel) {
            tma_load_3d(slot + panel * BN * 128, p.map_k, panel * 64, key, h, bar);
            tma_load_3d(slot + KvTile::BYTES + panel * BN * 128, p.map_v, panel * 64, key, h, bar);
        }
    }

    __device__ __forceinline__ static u32 pack2(float a, float b) {
#if DTYPE == 1
        const __half2 h = __floats2half2_rn(a, b);
#else
        const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
#endif
        return *reinterpret_cast<const u32*>(&h);
    }
};

#include "pipeline/pipeline.cuh"
#if WGMMA
#include "attention/wgmma.cuh"
#else
#include "attention/mma.cuh"
#endif

extern "C" __global__ void __launch_bounds__(THREADS) tilepipe_attention(const __grid_constant__ AttnParams p) {
    Attention w(p);
    run(w);
}
