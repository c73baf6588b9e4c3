// Row tiles of a strided activation view X [tokens x HIDDEN] (row stride and offset in elements),
// written to an output view Y of the same shape with its own row stride: the producer side and the
// output's stores, shared by every row workload. A persistent block walks tiles first, first + G,
// first + 2G, ... (G = gridDim.x); step k of a block is its k-th tile. Slots hold TILE_ROWS rows,
// so a tile can be copied per thread (COPY_BYTES units), per row (bulk, memcpy_async) or by tensor
// copies (TMA).
//
// Rows that start at any element (a sliced activation, a packed QKV split): with X_WINDOW the
// staged copies move the aligned 16-byte chunks that cover each row, its window (the bytes before
// and after the row in its first and last chunk are read, never written back; a unit that holds no
// byte of the row reads nothing and lands as zeros), one window a slot row, and the compute body
// reads the row at its offset inside the window (common/align.cuh); TMA describes X from an
// aligned base and lands each row's boxes from its aligned chunk on, one box more than the row's
// (a box must start 16-byte aligned, measured: a box at the row's offset is an illegal
// instruction), read at the row's offset like the copies' windows; direct loads the chunks in
// place. With Y_SPLIT the stores of a row that starts inside a chunk are split into the aligned
// pieces of the row alone.
//
// Set by tilepipe with -D: DTYPE, HIDDEN (elements per row, HIDDEN * size % 16 == 0), TILE_ROWS,
// X_WINDOW, Y_SPLIT, TMA_CHUNK (X_WINDOW TMA: elements per box, a divisor of HIDDEN).
#pragma once
#include "common/elem.cuh"
#include "common/hooks.cuh"
#include "common/align.cuh"
#include "pipeline/pipeline.cuh"

#ifndef X_WINDOW
#define X_WINDOW 0
#endif
#ifndef Y_SPLIT
#define Y_SPLIT 0
#endif
static_assert(!X_WINDOW || (MECH != MECH_SYNC && MECH != MECH_REGPREFETCH), "register staging narrows its copies instead");
// The copies land windows (a chunk more a slot row than the row has), read at the row's offset.
#define WINDOW_SLOT (X_WINDOW && MECH != MECH_TMA && MECH != MECH_DIRECT)
// TMA lands windows of whole boxes: one box more a slot row than the row has.
#define TMA_WINDOW (X_WINDOW && MECH == MECH_TMA)
// The compute body reads each row at its offset inside a pair of chunks.
#define X_SHIFT X_WINDOW
// The bytes into its chunk every row starts where that is one number for the build (row strides
// of whole chunks), else -1: each row's is read from its address at run time.
#ifndef X_SHIFT_BYTES
#define X_SHIFT_BYTES -1
#endif

#define ROW_BYTES (HIDDEN * ESIZE)
#if TMA_WINDOW
#ifndef TMA_CHUNK
#error "no part of a row of HIDDEN elements is a box of whole 128-byte units (run refuses TMA on such a view)"
#endif
#define WINDOW_PAD (TMA_CHUNK * ESIZE)
#else
#define WINDOW_PAD (WINDOW_SLOT ? 16 : 0)
#endif
#define SLOT_PITCH (ROW_BYTES + WINDOW_PAD)  // bytes between rows of a slot
#define NVEC_ROW (HIDDEN / VEC)  // 16-byte vectors per row
#define UNITS_ROW (SLOT_PITCH / COPY_BYTES)  // copy units per slot row
static_assert(HIDDEN % VEC == 0, "a row must be a whole number of 16-byte vectors");
static_assert(ROW_BYTES % COPY_BYTES == 0, "a row must be a whole number of copies");

// Kernel parameters of a row workload, passed by value as a __grid_constant__ so the tensor map
// lives in param space. The host mirrors this layout (workload::rows::RowParams); both sides
// assert its size.
struct __align__(64) RowParams {
    u64 tensor_map[16];      // CUtensorMap (TMA only)
    Ctl ctl;
    const elem_t* x;         // first element of the view (base + offset)
    elem_t* y;               // first element of the output view
    const elem_t* aux;       // a per-column vector of HIDDEN (RMSNorm's gamma), or null
    long long row_stride;    // elements between rows of x
    int tokens;
    int ntiles;
    long long y_row_stride;  // elements between rows of y
    u64 reserved[6];
};
static_assert(sizeof(RowParams) == 256, "host and device disagree on RowParams");

// Where a global pointer lies against 16-byte chunks (a generic address's low bits are its
// global address's); the chunk is reached by pointer arithmetic, so the compiler keeps knowing
// what the pointer points into.
__device__ __forceinline__ u32 offset_in_chunk(const void* p) { return (u32)reinterpret_cast<u64>(p) & 15U; }
__device__ __forceinline__ const char* chunk_of(const void* p) { return static_cast<const char*>(p) - offset_in_chunk(p); }

// A row as the compute body reads it: vector v holds the row's elements v * VEC .. v * VEC + VEC - 1,
// `shift` bytes past chunk v of `base` (a shifted row reads chunk v + 1 too, no further than its
// last byte's chunk).
struct RowRead {
    const uint4* base;
    u32 shift;
    template <class Load>
    __device__ __forceinline__ uint4 at(int v, Load load) const {
        if (!X_SHIFT) return load(base + v);
        const uint4 lo = load(base + v);
        return shift ? window16<ESIZE>(lo, load(base + v + 1), shift) : lo;
    }
    __device__ __forceinline__ uint4 at(int v) const {
        return at(v, [](const uint4* a) { return *a; });
    }
};

// Vector `v` of an output row stored (16 bytes at any element where Y_SPLIT, else aligned).
__device__ __forceinline__ void store_vec(void* v, uint4 val) {
    if (Y_SPLIT) st_any<ESIZE>(v, val);
    else st_global_cs_v4(v, val);
}

struct RowTiles {
    static constexpr int SLOT_BYTES = ((TILE_ROWS * SLOT_PITCH) + 127) / 128 * 128;
    static constexpr int MAX_UNITS = TILE_ROWS * UNITS_ROW;
    // only a window's per-thread units may hold no byte of their row (bulk and memcpy_async copy
    // each window whole, sized to its row)
    static constexpr bool ZERO_FILL = WINDOW_SLOT && MECH == MECH_CPASYNC;
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
    // what a unit that reads nothing names: an aligned address no copy of X reads, the output's
    __device__ __forceinline__ const void* zero_src() const { return chunk_of(p.y); }

    // Row r of tile t as the compute body reads it from `slot`: a staged slot's row (a window,
    // read at the row's offset in X's chunks), or read in place (IN_PLACE, pipeline/pipeline.cuh:
    // direct), X's own row. CTL_WINDOW_SHIFT reads every shifted row one element late,
    // CTL_WINDOW_UNSHIFTED from its window's start.
    template <bool IN_PLACE_>
    __device__ __forceinline__ RowRead row_read(const unsigned char* slot, int t, int r) const {
        const unsigned char* row = slot + (IN_PLACE_ ? r * p.row_stride * ESIZE : (long long)r * SLOT_PITCH);
        u32 shift = 0;
        if (X_SHIFT && IN_PLACE_) {
            shift = X_SHIFT_BYTES >= 0 ? (u32)X_SHIFT_BYTES : offset_in_chunk(row);
            row -= shift;
        } else if (X_SHIFT) {
            shift = X_SHIFT_BYTES >= 0 ? (u32)X_SHIFT_BYTES : offset_in_chunk(tile_src(t) + r * p.row_stride);
        }
        if (CONTROL == CTL_WINDOW_SHIFT && shift) shift = (shift + ESIZE) & 15U;
        if (CONTROL == CTL_WINDOW_UNSHIFTED) shift = 0;
        return {reinterpret_cast<const uint4*>(row), shift};
    }

    // Row r of tile t of the output view.
    __device__ __forceinline__ elem_t* y_row(int t, int r) const {
        return p.y + (long long)(t * TILE_ROWS + r) * p.y_row_stride;
    }

    // The copies of one step, worked out once per step so that each copy costs an add and a
    // compare (recomputing the tile's address per copy made NVRTC branch around every cp.async).
    // Copy unit u: slot row u / UNITS_ROW, byte (u % UNITS_ROW) * COPY_BYTES of the row's window
    // (the row itself where rows are aligned); it lands u * COPY_BYTES into its slot. Row r's
    // window lands r * SLOT_PITCH into its slot.
    struct Step {
        const char* src;   // the tile's first row
        long long stride;  // bytes between rows of X
        int nrows;
        const char* zero;  // zero_src()
        __device__ __forceinline__ int units() const { return nrows * UNITS_ROW; }
        __device__ __forceinline__ CopyUnit unit(int u) const {
            const char* row = src + (u / UNITS_ROW) * stride;
            if (!WINDOW_SLOT) return {row + (u % UNITS_ROW) * COPY_BYTES, COPY_BYTES};
            const char* at = chunk_of(row) + (u % UNITS_ROW) * COPY_BYTES;
            const bool holds = at + COPY_BYTES > row && at < row + ROW_BYTES;
            return {holds ? at : zero, holds ? COPY_BYTES : 0U};
        }
        __device__ __forceinline__ int unit_dst(int u) const { return u * COPY_BYTES; }
        __device__ __forceinline__ int rows() const { return nrows; }
        __device__ __forceinline__ const char* row_src(int r) const {
            return WINDOW_SLOT ? chunk_of(src + r * stride) : src + r * stride;
        }
        __device__ __forceinline__ int row_dst(int r) const { return r * SLOT_PITCH; }
        // a window is the chunks that hold the row: one more than the row's where it starts inside one
        __device__ __forceinline__ int row_bytes(int r) const {
            return ROW_BYTES + (WINDOW_SLOT && offset_in_chunk(src + r * stride) ? 16 : 0);
        }
        __device__ __forceinline__ int bytes() const {
            if (!WINDOW_SLOT) return nrows * ROW_BYTES;
            int b = 0;
            for (int r = 0; r < nrows; ++r) b += row_bytes(r);
            return b;
        }
    };
    __device__ __forceinline__ Step step(int k) const {
        const int t = tile(k);
        const char* const zero = reinterpret_cast<const char*>(zero_src());
        return {reinterpret_cast<const char*>(tile_src(t)), p.row_stride * ESIZE, tile_rows(t), zero};
    }

    // (monitor) Copy unit u and row r of step k as the plan above defines them, from the tile's
    // rows alone: the reference a copy's source is checked against (a window's unit that holds no
    // byte of its row reads nothing).
    __device__ __forceinline__ const char* plan_row(int k, int r, MonPlace& at) const {
        const int row = tile(k) * TILE_ROWS + r;
        at = {0, row, 0, row >= p.tokens, p.tokens, HIDDEN};
        if (at.past) return nullptr;
        const char* first = reinterpret_cast<const char*>(p.x + (long long)row * p.row_stride);
        return WINDOW_SLOT ? chunk_of(first) : first;
    }
    __device__ __forceinline__ const char* plan_src(int k, int u, MonPlace& at) const {
        const char* window = plan_row(k, u / UNITS_ROW, at);
        if (!window) return nullptr;
        const char* src = window + u % UNITS_ROW * COPY_BYTES;
        const char* first = reinterpret_cast<const char*>(p.x + (long long)at.row * p.row_stride);
        at.col = (int)(src - first) / ESIZE;
        at.past = src + COPY_BYTES <= first || src >= first + ROW_BYTES;
        return at.past ? nullptr : src;
    }

    // Step k's tile in X itself, which direct's compute body reads in place of a slot.
    __device__ __forceinline__ const unsigned char* direct_slot(int k) const {
        return reinterpret_cast<const unsigned char*>(tile_src(tile(k)));
    }

    __device__ __forceinline__ void tma_prefetch() const { tma_prefetch_descriptor(p.tensor_map); }
#if TMA_WINDOW
    // A rank-2 map {offset in the chunk + HIDDEN, tokens} from the chunk that holds X's first
    // element (a map's base and row stride must be 16-byte multiples, and so must a box's start):
    // boxes of TMA_CHUNK elements from each row's chunk on, one more than the row has (the last
    // one mostly past the map's edge, landing zeros), each row a window of SLOT_PITCH; no box past
    // the last row. A box lands whole, the part past the edge as zeros, and counts whole.
    static_assert(HIDDEN % TMA_CHUNK == 0, "a row is whole boxes");
    static_assert(ROW_BYTES % 128 == 0 && TMA_CHUNK * ESIZE % 128 == 0, "every box lands 128-byte aligned");
    __device__ __forceinline__ u32 tma_bytes(int k) const { return tile_rows(tile(k)) * SLOT_PITCH; }
    __device__ __forceinline__ void tma_load(void* slot, int k, u64* bar) const {
        const int t = tile(k), rows = tile_rows(t);
        const u64 policy = L2_EVICT_LAST ? l2_evict_last_policy() : 0;
#pragma unroll 1
        for (int r = 0; r < rows; ++r) {
#pragma unroll 4
            for (int j = 0; j <= HIDDEN / TMA_CHUNK; ++j) {
                void* dst = static_cast<char*>(slot) + r * SLOT_PITCH + j * TMA_CHUNK * ESIZE;
                if (L2_EVICT_LAST) tma_load_2d_hint(dst, p.tensor_map, j * TMA_CHUNK, t * TILE_ROWS + r, bar, policy);
                else tma_load_2d(dst, p.tensor_map, j * TMA_CHUNK, t * TILE_ROWS + r, bar);
            }
        }
    }
#else
    __device__ __forceinline__ u32 tma_bytes() const { return TILE_ROWS * ROW_BYTES; }
    __device__ __forceinline__ void tma_load(void* slot, int k, u64* bar) const {
        if (L2_EVICT_LAST) tma_load_3d_hint(slot, p.tensor_map, 0, 0, tile(k) * TILE_ROWS, bar, l2_evict_last_policy());
        else tma_load_3d(slot, p.tensor_map, 0, 0, tile(k) * TILE_ROWS, bar);
    }
#endif

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
