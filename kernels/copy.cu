// copy: Y = X over row tiles of a strided activation view, through the same pipelines as every
// workload. The compute stage is the identity (read the slot, write it out), so a variant's time is
// its movement alone, against the device-to-device copy ceiling.
//
// Set by tilepipe with -D: the row tiles' DTYPE, HIDDEN, TILE_ROWS (common/rows.cuh) and the
// pipeline's MECH, STAGES, CONSUMERS, ... (pipeline/pipeline.cuh).

#include "common/rows.cuh"
#include "pipeline/pipeline.cuh"

struct Copy : RowTiles {
    __device__ __forceinline__ Copy(const RowParams& params) : RowTiles(params) {}

    // Stores the tile in slot to its rows of Y. `between` runs before the first read, and the
    // consumer's stress sleep after it, so a refill that lands early is read back.
    template <class Between>
    __device__ __forceinline__ void consume(const unsigned char* slot, int k, int ctid, Between between) const {
#if ONLY == 1
        return;
#endif
        between();
        perturb(p.ctl, k, EDGE_COMPUTE);
        const int t = tile(k), rows = tile_rows(t);
#pragma unroll
        for (int r = 0; r < TILE_ROWS; ++r) {
            if (r >= rows) break;
            const RowRead in = row_read<IN_PLACE>(slot, t, r);
            uint4* const out = reinterpret_cast<uint4*>(y_row(t, r));
#pragma unroll
            for (int i = 0; i < (NVEC_ROW + CONSUMERS - 1) / CONSUMERS; ++i) {
                const int c = ctid + i * CONSUMERS;
                if (c < NVEC_ROW) store_vec(out + c, in.at(c));
            }
        }
    }
};

extern "C" __global__ void ROW_BOUNDS tilepipe_copy(const __grid_constant__ RowParams p) {
    if (blockIdx.x >= p.ntiles) return;  // a block that owns no tile leaves before any barrier
    Copy w(p);
    run(w);
}
