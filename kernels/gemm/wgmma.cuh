// The Hopper compute body: wgmma m64nNk16 with f32 accumulators, both operands read from the
// slot through shared-memory descriptors, in the 128-byte swizzle the TMA boxes landed in. Consumer
// warpgroup g computes rows [g, g + 1) x WG_M / WGS of the tile as MI blocks of 64 rows x WG_N:
// of C (WG_M = BM, WG_N = BN), or with SWAP_AB of C^T = B A^T (WG_M = BN, WG_N = BM), where the
// tile's rows of A are a decode step's few tokens, too few for wgmma's 64 rows but not for its N.
// PINGPONG: each warpgroup computes whole tiles (WGS 1), its turns' (pipeline/ring.cuh), and
// stores one while the other's MMAs run.
#pragma once

#if SWAP_AB
#define WG_M BN
#define WG_N BM
#else
#define WG_M BM
#define WG_N BN
#endif
#define WGS (PINGPONG ? 1 : CONSUMERS / 128)  // warpgroups sharing a tile
#define WG_PART(ctid) ((ctid) / 128 % WGS)      // which of them: its WG_M / WGS rows
#define MI (WG_M / WGS / 64)
static_assert(CONSUMERS % 128 == 0 && MI >= 1 && WG_M == WGS * MI * 64, "whole warpgroups of whole 64-row blocks");
static_assert(BK * ESIZE == 128 && TENSOR_CORES, "16-bit K slices of one 128-byte swizzle row");
static_assert(!SWAP_AB || (B_NK && !PERSISTENT && !TMA_STORE), "operands swap where both are K-major, one tile a block, C stored from registers");

struct Gemm : GemmTiles {
    float acc[MI][WG_N / 2];
    Cursor storing;  // the consumers': the step being computed

    __device__ __forceinline__ Gemm(const GemmParams& params) : GemmTiles(params), storing(first()) {}

    __device__ __forceinline__ void begin() {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int r = 0; r < WG_N / 2; ++r) acc[i][r] = 0.0f;
    }

    // Adds the slot's K slice to the accumulators, waits until the MMAs have retired their
    // shared-memory reads, then returns so the ring can release the slot; RELEASE_LAG: waits for
    // the previous step's alone, whose slot the ring then releases, and flush() for the last.
    // `between` runs before the first read (early-release control).
    template <class Between>
    __device__ __forceinline__ void consume(const unsigned char* slot, int k, int ctid, Between between) {
        between();
        perturb(p.ctl, k, EDGE_COMPUTE);
        // wgmma's A: the slot's rows along WG_M (A's, or B's when swapped), this warpgroup's part
        const u32 sa = smem_addr(slot) + (SWAP_AB ? TileA::BYTES : 0) + WG_PART(ctid) * (WG_M / WGS) * 128;
        const u32 sb = smem_addr(slot) + (SWAP_AB ? 0 : TileA::BYTES);
        fence_accumulators();
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
#if B_NK || SWAP_AB
            const u64 db = smem_desc_sw128(sb + kk * 32, 16);
#else
            const u64 db = smem_desc_sw128(sb + kk * 16 * 128, BK * 128);
#endif
#pragma unroll
            for (int i = 0; i < MI; ++i)
                wgmma_ss<WG_N, 1 - (B_NK || SWAP_AB)>(acc[i], smem_desc_sw128(sa + i * 64 * 128 + kk * 32, 16), db, 1);
        }
        mma_commit();
        mma_wait<RELEASE_LAG>();
        fence_accumulators();
    }

#if RELEASE_LAG
    __device__ __forceinline__ void flush(int) {
        mma_wait<0>();
        fence_accumulators();
    }
#endif

    __device__ __forceinline__ void fence_accumulators() {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int r = 0; r < WG_N / 2; ++r) fence_operand(acc[i][r]);
    }

#if PINGPONG
    // A turn is one tile's K slices: the block's tiles blockIdx.x + t x gridDim.x in turn t.
    __device__ __forceinline__ int turn_steps() const { return ksteps; }
    __device__ __forceinline__ void end_turn(int t, int ctid) {
        int m, n;
        corner((int)blockIdx.x + t * (int)gridDim.x, m, n);
        epilogue(ctid, m, n);
    }
#elif PERSISTENT
    // After the slot of step k is released (the ring calls it): a tile's last slice stores the
    // tile, from registers, holding no slot, and starts the next.
    __device__ __forceinline__ void after_release(int, int ctid) {
        if (storing.slice == ksteps - 1) {
            epilogue(ctid, storing.m, storing.n);
            begin();
        }
        step_on(storing);
    }
#endif

    __device__ __forceinline__ void finish(int ctid) {
        if (stored_elsewhere(ctid, *this)) return;
#if !PERSISTENT
        epilogue(ctid, m0, n0);
#endif
#if TMA_STORE
        if (ctid % 128 == 0) bulk_wait_read<0>();  // the staging is read before the block's memory goes
#endif
    }

#if TMA_STORE
    // C through shared memory: each consumer warpgroup stages its rows 64 columns at a time in
    // one of its two 64 x 64 buffers (128-byte rows, 16-byte chunks XOR-swizzled by row as the
    // tensor map reads them, so the 8 rows a warp writes at once fall in 8 bank groups), and its
    // first thread stores the box with TMA while the next one is staged. Edges are the map's.
    static constexpr int STAGE_BYTES = 64 * 64 * ESIZE;
    static_assert(MI * (BN / 64) % 2 == 0, "each tile's boxes alternate the two buffers from the first");
    __device__ __forceinline__ void epilogue(int ctid, int m, int n) const {
        const int g = ctid / 128, t = ctid % 128, lane = t & 31;
        unsigned char* staging = slot_ptr<Gemm>(STAGES) + g * 2 * STAGE_BYTES;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int c = 0; c < BN / 64; ++c) {
                unsigned char* buf = staging + (i * (BN / 64) + c) % 2 * STAGE_BYTES;
                if (t == 0) bulk_wait_read<1>();  // this buffer's last store has read it
                named_barrier_sync(1 + g, 128);
#pragma unroll
                for (int j = 0; j < 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int row = t / 32 * 16 + lane / 4 + 8 * h, a = 4 * (c * 8 + j) + 2 * h;
                        elem_t pair[2] = {from_float(acc[i][a]), from_float(acc[i][a + 1])};
                        *reinterpret_cast<u32*>(buf + row * 128 + (j ^ (row & 7)) * 16 + lane % 4 * 4) =
                            *reinterpret_cast<const u32*>(pair);
                    }
                staged_written();
                staged_fence();
                staged_sync(g, 1 + g, 128);
                if (t == 0) staged_store(p.ctl, g, 128, p.map_c, n + 64 * c, m + WG_PART(ctid) * (BM / WGS) + i * 64, buf);
            }
    }
#else

    // Calls f(row, col, v) for each of this thread's accumulators v (by reference) inside C:
    // accumulator 4j + e of a 64-row block sits at its row 16 x warp + lane / 4 (+ 8 for e >= 2),
    // column 8j + 2 (lane % 4) + e % 2, a row and column of C^T when swapped.
    template <class F>
    __device__ __forceinline__ void each_output(int ctid, F f) {
        const int lane = ctid & 31, r0 = WG_PART(ctid) * (WG_M / WGS) + (ctid % 128 / 32) * 16 + lane / 4;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int a = 0; a < WG_N / 2; ++a) {
                const int r = r0 + i * 64 + a % 4 / 2 * 8, c = a / 4 * 8 + lane % 4 * 2 + a % 2;
                const int row = m0 + (SWAP_AB ? c : r), col = n0 + (SWAP_AB ? r : c);
                if (row < p.m && col < p.n) f(row, col, acc[i][a]);
            }
    }

#if SWAP_AB
    // Adjacent accumulators are adjacent rows of C: one element at a time (a decode step's C is small).
    __device__ __forceinline__ void epilogue(int ctid, int, int) {
        each_output(ctid, [&](int row, int col, float& v) { store(row, col, v); });
    }
#else
    // The accumulators as each_output places them: pairs of adjacent columns.
    __device__ __forceinline__ void epilogue(int ctid, int m, int n) const {
        const int lane = ctid & 31, row0 = m + WG_PART(ctid) * (BM / WGS) + (ctid % 128 / 32) * 16 + lane / 4;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    store2(row0 + i * 64 + h * 8, n + j * 8 + lane % 4 * 2, acc[i][4 * j + 2 * h], acc[i][4 * j + 2 * h + 1]);
    }
#endif
#endif
};
