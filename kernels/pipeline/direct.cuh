// No staging (Triton's RMSNorm): the compute body loads step k's tile straight from global memory
// into registers. Nothing of the tile is stored to shared memory and the loop has no barrier of
// its own: the compute body's barrier orders its row reduction, whose partials are double-buffered
// by step parity, so nothing is shared from one step to the next.
#pragma once

// The compute body walks the tile's rows at X's row stride (IN_PLACE), so a tile of any height is
// read where it lies.
// The compute-only probe stages one tile in a slot, and direct has no slot.
static_assert(ONLY != 2, "direct has no compute-only probe");
// Every thread computes: a producer warp would call no compute body and leave its barriers short.
static_assert(!WS, "direct has no producer warp");

// The copy is the compute body's own loads, so a step is issued and ready at once.
template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    Mon m(c, n);  // nothing to check but the walk: every step read once
    for (int k = 0; k < n; ++k) {
        trace(c, k, EV_ISSUE, rec);
        trace(c, k, EV_READY, rec);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        read_step(m, w, w.direct_slot(k), k, 0, tid, Nothing());
        trace(c, k, EV_COMPUTE_END, rec);
        trace(c, k, EV_RELEASE, rec);
    }
    m.drain(false, true);
}
