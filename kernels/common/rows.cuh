// Row tiles of a strided activation view X [tokens x HIDDEN] (row stride and offset in elements):
// the producer side shared by every row workload. A persistent block walks tiles first, first + G,
// first + 2G, ... (G = gridDim.x); step k of a block is its k-th tile. Slots hold TILE_ROWS rows
// densely, so a tile can be copied per thread (COPY_BYTES units), per row (bulk, memcpy_async) or
// as one box of a rank-3 tensor map {chunk, HIDDEN/chunk, tokens} (TMA).
//
// Set by tilepipe with -D: DTYPE, HIDDEN (elements per row, HIDDEN * size % 16 == 0), TILE_ROWS.
#pragma once
#include "common/elem.cuh"
#include "common/hooks.cuh"

#define ROW_BYTES (HIDDEN * ESIZE)
#define NVEC_ROW (HIDDEN / VEC)  // 16-byte vectors per row
#define UNITS_ROW (ROW_BYTES / COPY_BYTES)
static_assert(HIDDEN % VEC == 0, "a row must be a whole number of 16-byte vectors");
static_assert(ROW_BYTES % COPY_BYTES == 0, "a row must be a whole number of copies");

// Kernel parameters of a row workload, passed by value as a __grid_constant__ so the tensor map
// lives in param space. The host mirrors this layout (workload::rows::RowParams); both sides
// assert its size.
struct __align__(64) RowParams {
    u64 tensor_map[16];      // CUtensorMap (TMA only)
    Ctl ctl;
    const elem_t* x;         // first element of the view (base + offset)
    elem_t* y;               // dense [tokens x HIDDEN]
    const elem_t* aux;       // a per-column vector of HIDDEN (RMSNorm's gamma), or null
    long long row_stride;    // elements between rows of x
    int tokens;
    int ntiles;
    u64 reserved[7];
};
static_assert(sizeof(RowParams) == 256, "host and device disagree on RowParams");

struct RowTiles {
    static constexpr int SLOT_BYTES = ((TILE_ROWS * ROW_BYTES) + 127) / 128 * 128;
    static constexpr int MAX_UNITS = TILE_ROWS * UNITS_ROW;
    static constexpr bool ZERO_FILL = false;  // every unit lies inside the view
    static constexpr bool PLAN_CHECKED = true;

    const RowParams& p;

    __device__ __forceinline__ RowTiles(const RowParams& params) : p(params) {}

    // blockIdx.x and gridDim.x read where they are used, not kept in members: NVRTC keeps them
    // (and the tile and row addresses made of them) in uniform registers then
    __device__ __forceinline__ const Ctl& ctl() const { return p.ctl; }
    __device__ __forceinline__ int tile(int k) const { return blockIdx.x + k * gridDim.x; }
    __device__ __forceinline__ int steps() const { return (p.ntiles - blockIdx.x + gridDim.x - 1) / gridDim.x; }
    __device__ __forceinline__ bool has(int k) const { return tile(k) < p.ntiles; }

    // Rows in tile t: TILE_ROWS, fewer in the tail tile.
    __device__ __forceinline__ int tile_rows(int t) const {
        const int r = p.tokens - t * TILE_ROWS;
        return r < TILE_ROWS ? r : TILE_ROWS;
    }
    __device__ __forceinline__ const elem_t* tile_src(int t) const { return p.x + (long long)t * TILE_ROWS * p.row_stride; }

    // Bytes between rows of the slot a compute body reads: a staged slot holds its rows densely;
    // read in place (IN_PLACE, pipeline/pipeline.cuh: direct), they lie X's row stride apart.
    template <bool IN_PLACE_>
    __device__ __forceinline__ long long slot_pitch() const { return IN_PLACE_ ? p.row_stride * ESIZE : ROW_BYTES; }

    // The copies of one step, worked out once per step so that each copy costs an add and a
    // compare (recomputing the tile's address per copy made NVRTC branch around every cp.async).
    // Copy unit u: row u / UNITS_ROW, byte (u % UNITS_ROW) * COPY_BYTES; it lands u * COPY_BYTES
    // into its slot. Row r lands r * ROW_BYTES into its slot.
    struct Step {
        const char* src;   // the tile's first row
        long long stride;  // bytes between rows of X
        int nrows;
        __device__ __forceinline__ int units() const { return nrows * UNITS_ROW; }
        __device__ __forceinline__ CopyUnit unit(int u) const {
            return {src + (u / UNITS_ROW) * stride + (u % UNITS_ROW) * COPY_BYTES, COPY_BYTES};
        }
        __device__ __forceinline__ int unit_dst(int u) const { return u * COPY_BYTES; }
        __device__ __forceinline__ int rows() const { return nrows; }
        __device__ __forceinline__ const char* row_src(int r) const { return src + r * stride; }
        __device__ __forceinline__ int row_dst(int r) const { return r * ROW_BYTES; }
        __device__ __forceinline__ int row_bytes() const { return ROW_BYTES; }
    };
    __device__ __forceinline__ Step step(int k) const {
        const int t = tile(k);
        return {reinterpret_cast<const char*>(tile_src(t)), p.row_stride * ESIZE, tile_rows(t)};
    }

    // (monitor) Copy unit u and row r of step k as the plan above defines them, from the tile's
    // rows alone: the reference a copy's source is checked against.
    __device__ __forceinline__ const char* plan_row(int k, int r, MonPlace& at) const {
        const int row = tile(k) * TILE_ROWS + r;
        at = {0, row, 0, row >= p.tokens, p.tokens, HIDDEN};
        return at.past ? nullptr : reinterpret_cast<const char*>(p.x + (long long)row * p.row_stride);
    }
    __device__ __forceinline__ const char* plan_src(int k, int u, MonPlace& at) const {
        const char* row = plan_row(k, u / UNITS_ROW, at);
        at.col = u % UNITS_ROW * (COPY_BYTES / ESIZE);
        return row ? row + u % UNITS_ROW * COPY_BYTES : nullptr;
    }

    // Step k's tile in X itself, which direct's compute body reads in place of a slot.
    __device__ __forceinline__ const unsigned char* direct_slot(int k) const {
        return reinterpret_cast<const unsigned char*>(tile_src(tile(k)));
    }

    __device__ __forceinline__ u32 tma_bytes() const { return TILE_ROWS * ROW_BYTES; }
    __device__ __forceinline__ void tma_prefetch() const { tma_prefetch_descriptor(p.tensor_map); }
    __device__ __forceinline__ void tma_load(void* slot, int k, u64* bar) const {
        if (L2_EVICT_LAST) tma_load_3d_hint(slot, p.tensor_map, 0, 0, tile(k) * TILE_ROWS, bar, l2_evict_last_policy());
        else tma_load_3d(slot, p.tensor_map, 0, 0, tile(k) * TILE_ROWS, bar);
    }

    __device__ __forceinline__ void begin() {}
    __device__ __forceinline__ void after_release(int, int) {}
    __device__ __forceinline__ void finish(int) const {}
    __device__ __forceinline__ int cta_rank() const { return 0; }
};

// Launch bounds of a row workload's kernel. A variant's MIN_BLOCKS (0: none) is the residency
// ptxas is asked to leave registers for, capped at what the ring's shared memory allows (a slot
// per stage, 2 KB for static shared memory and the block's reserved kilobyte) and at the SM's
// threads. Left to itself ptxas may pick a register count whose main loop is slower: a bound is
// the one knob that steers it, and the variant that sets one says so in its build options.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 0
#endif
#if __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870
#define SM_SMEM 167936
#define SM_THREADS 2048
#elif __CUDA_ARCH__ >= 900
#define SM_SMEM 233472
#define SM_THREADS 2048
#else
#define SM_SMEM 102400
#define SM_THREADS 1536
#endif
#define MIN_OF(a, b) ((a) < (b) ? (a) : (b))
#define RING_BLOCKS MIN_OF(SM_SMEM / (STAGES * RowTiles::SLOT_BYTES + 2048), SM_THREADS / THREADS)
#if MIN_BLOCKS > 0
#define ROW_BOUNDS __launch_bounds__(THREADS, MIN_OF(MIN_BLOCKS, RING_BLOCKS) < 1 ? 1 : MIN_OF(MIN_BLOCKS, RING_BLOCKS))
#else
#define ROW_BOUNDS __launch_bounds__(THREADS)
#endif
