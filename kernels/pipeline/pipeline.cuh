// The pipeline a build selects, as a template over the workload. A workload type W provides:
//   W::SLOT_BYTES, W::MAX_UNITS        bytes of one slot (a multiple of 128); COPY_BYTES units in a full stage
//   ctl()                               the launch's control block (common/hooks.cuh)
//   steps(), has(k)                     this block's trip count; whether step k exists (false past the end)
//   step(k)                             step k's copies, worked out once per step, as an object with
//     units(), unit(u), unit_dst(u)     per-thread copies of COPY_BYTES: a CopyUnit (below), byte offset in the slot
//     rows(), row_src(r), row_dst(r), row_bytes(r), bytes()   row copies (bulk, memcpy_async); the step's bytes
//   ZERO_FILL, zero_src()               true if a unit may lie past the data's edge and land as zeros:
//                                       its CopyUnit then reads 0 bytes (its src is never read; a
//                                       mechanism that cannot zero-fill copies from zero_src())
//   tma_bytes(), tma_load(slot, k, bar)     the tensor copies of step k, completing on bar (tma_bytes(k)
//                                       where their bytes vary by step)
//   direct_slot(k)                      (direct) step k's tile in global memory, read by the compute
//                                       body in place of a slot, its rows IN_PLACE's pitch apart
//   consume(slot, k, ctid, between)     the compute body on step k's slot, by every consumer thread;
//                                       `between` runs where a refill would break it (early-release control)
//   begin()                             (mbarrier ring) before the first step, by every consumer thread
//                                       once its registers are its own (after setmaxnreg): where
//                                       accumulators start, so none is live in the producer
//   after_release(k, ctid)              (mbarrier ring) after a consumer thread's release of step k's
//                                       slot: work on registers alone (a persistent tile's epilogue)
//   flush(ctid)                         (RELEASE_LAG) after the last step (of a turn): ends its reads of the last slot
//   turn_steps(), end_turn(t, ctid)     (WG_TURNS) the steps of a turn; after turn t, its warpgroup's
//                                       work on registers alone (an epilogue) while the other's turn runs
//   cta_rank()                          this block's rank in its cluster (0 without one)
//   finish(ctid)                        after the last step, by every consumer thread (an epilogue; may be empty)
//   PLAN_CHECKED, plan_src(k, u, at), plan_row(k, r, at)   (monitor builds) whether copies are checked
//                                       against the copy plan; unit u / row r of step k as the plan
//                                       defines it, written plainly (nullptr past an edge), with where
//                                       it lies in `at`: the reference a copy is checked against
// One step fills one slot: an RMSNorm row tile, or a GEMM stage of A and B k-slices.
//
// Set by tilepipe with -D: MECH (below), STAGES (slots), CONSUMERS (threads that compute),
// WS (1: a dedicated producer, mbarrier ring only; PRODUCER_THREADS, REGS_PRODUCER and REGS_CONSUMER
// below), SMEM_ALIGN, COPY_BYTES (4 | 8 | 16), CP_CG (cp.async.cg),
// MCA_FORM (the memcpy_async spelling).
#pragma once
#include "common/hooks.cuh"

#define MECH_SYNC 0
#define MECH_REGPREFETCH 1
#define MECH_CPASYNC 2
#define MECH_MCA_PIPELINE 3
#define MECH_MCA_BARRIER 4
#define MECH_BULK 5
#define MECH_TMA 6
#define MECH_DIRECT 7
// The compute body reads its tile where it lies in X (strided rows), not from a dense slot.
#define IN_PLACE (MECH == MECH_DIRECT)

#ifndef WS
#define WS 0
#endif
// 1: a step's compute body still reads the previous step's slot, which the mbarrier ring releases
// a step late, and W::flush(ctid) ends the last step's reads (WS only: a producer that also
// consumed would wait on its own late release).
#ifndef RELEASE_LAG
#define RELEASE_LAG 0
#endif
static_assert(RELEASE_LAG == 0 || (RELEASE_LAG == 1 && WS && (MECH == MECH_TMA || MECH == MECH_BULK)), "a slot released a step late needs a dedicated producer's ring");
// The wgmma groups a body may leave in flight at a slot's late release: those committed after the
// released step's (wgmma.wait_group N retires all but the newest N), 0 where the body waits for
// every group before a release.
#ifndef MMA_LAG
#define MMA_LAG 0
#endif
static_assert(MMA_LAG <= RELEASE_LAG, "only a slot released late may have later groups in flight");
// Direct only: each thread does the work of FOLD of the compute body's threads, in a block of
// CONSUMERS = the run's consumers / FOLD (more loads in flight per thread), or a SPLIT-th of one's,
// in a block of the run's consumers x SPLIT (fewer registers, more threads per SM). The compute
// body keeps its summation order either way (rmsnorm.cu's RED_THREADS).
#ifndef FOLD
#define FOLD 1
#endif
#ifndef SPLIT
#define SPLIT 1
#endif
static_assert((FOLD == 1 && SPLIT == 1) || MECH == MECH_DIRECT, "only direct regroups threads: a staged pipeline's copies follow CONSUMERS");
static_assert(FOLD == 1 || SPLIT == 1, "a build folds or splits its threads, not both");
// The producer's threads when WS: one warp, or a warpgroup where registers are handed over
// (setmaxnreg works on whole warpgroups; its other three warps leave at once).
#ifndef PRODUCER_THREADS
#define PRODUCER_THREADS 32
#endif
// Alignment of slot 0: 128 bytes, or 1024 where a 128-byte-swizzled TMA box must start on a whole
// swizzle pattern (dynamic shared memory starts 128-byte aligned; the host gives such builds
// SMEM_ALIGN - 128 bytes of slack).
#ifndef SMEM_ALIGN
#define SMEM_ALIGN 128
#endif
#define THREADS (CONSUMERS + (WS ? PRODUCER_THREADS : 0))
#define NWARPS_C (CONSUMERS / 32)
static_assert(CONSUMERS % 32 == 0, "consumers come in whole warps");
// WG_TURNS 1 (the warp-specialised ring): the two consumer warpgroups take the block's steps in
// turns of W::turn_steps() steps, warpgroup 0 the even turns, 1 the odd; each step is read by the
// READERS threads of one warpgroup, and its slot released by their warps.
#ifndef WG_TURNS
#define WG_TURNS 0
#endif
static_assert(!WG_TURNS || (WS && CONSUMERS == 256), "turns pass between two consumer warpgroups beside a producer");
#define READERS (WG_TURNS ? 128 : CONSUMERS)
#define NWARPS_R (READERS / 32)

#include "common/monitor.cuh"
#include "common/body_ops.cuh"

extern __shared__ __align__(128) unsigned char dyn_smem[];

template <class W>
__device__ __forceinline__ unsigned char* slot_ptr(int s) {
    static_assert(W::SLOT_BYTES % SMEM_ALIGN == 0, "every slot starts aligned as slot 0 (TMA boxes need it)");
#if SMEM_ALIGN > 128
    return dyn_smem + (-smem_addr(dyn_smem) & (SMEM_ALIGN - 1)) + s * W::SLOT_BYTES;
#else
    return dyn_smem + s * W::SLOT_BYTES;
#endif
}

// A ring position: the slot, and the phase of the slot's barriers. Stepping past the last slot
// wraps to slot 0 and flips the phase, so no loop writes parity arithmetic by hand. It counts steps
// and derives both (as `k % S`, `(k / S) & 1`): NVRTC keeps slot addresses of a counted ring in
// uniform registers, where a wrapped {slot, phase} pair cost 3-10% more instructions per step.
template <int S>
struct RingState {
    u32 count = 0;
    __device__ __forceinline__ int slot() const { return (int)(count % S); }
    __device__ __forceinline__ u32 phase() const { return (count / S) & 1U; }
    __device__ __forceinline__ void advance() { ++count; }
};

// Per-thread copies a thread issues for one full stage.
template <class W>
struct PerThread {
    static constexpr int UNITS = (W::MAX_UNITS + CONSUMERS - 1) / CONSUMERS;
};

// Copy unit of a thread's i-th copy. Ownership is rotated by one warp, so a thread never reads back
// what it copied itself: only the completion protocol (wait, then barrier), never one thread's own
// program order, makes a tile visible to its readers, and a broken protocol shows. Each warp still
// copies 32 adjacent units, so coalescing is unchanged.
__device__ __forceinline__ int copy_unit(int tid, int i) { return (tid + 32) % CONSUMERS + i * CONSUMERS; }

// Calls f(i, unit, dst) for each of this thread's copy units of step k: its i-th, to byte dst of
// the slot. READS: f copies the unit (the monitor checks it against the copy plan; a copy that
// always moves COPY_BYTES reads them from zero_src() past an edge).
template <bool READS = true, class W, class F>
__device__ __forceinline__ void for_my_units(const W& w, int k, int tid, F f) {
    const auto step = w.step(k);
    const int units = step.units();
#pragma unroll
    for (int i = 0; i < PerThread<W>::UNITS; ++i) {
        const int u = copy_unit(tid, i);
        if (u < units) {
            const CopyUnit c = step.unit(u);
            if (READS) mon_source<false>(w, k, u, c.src, c.bytes, COPY_BYTES);
            f(i, c, step.unit_dst(u));
        }
    }
}

// The compute body on step k in `slot` (slot index s), its reads seen by the monitor.
template <class W, class Between>
__device__ __forceinline__ void read_step(Mon& m, W& w, const unsigned char* slot, int k, int s, int ctid, Between between) {
    m.read(k, s);
    w.consume(slot, k, ctid, between);
    m.read_done(k, s);
}

struct Nothing {
    __device__ void operator()() const {}
};

#include "pipeline/staged.cuh"
#if MECH == MECH_CPASYNC
#include "pipeline/cpasync.cuh"
#elif MECH == MECH_MCA_PIPELINE || MECH == MECH_MCA_BARRIER
#include "pipeline/memcpy_async.cuh"
#elif MECH == MECH_BULK || MECH == MECH_TMA
#include "pipeline/ring.cuh"
#elif MECH == MECH_DIRECT
#include "pipeline/direct.cuh"
#endif

// The block's whole walk: the selected pipeline, or for the compute-only probe its stand-in.
template <class W>
__device__ __forceinline__ void run(W& w) {
#if ONLY == 2
    run_compute_only(w);
#else
    run_pipeline(w);
#endif
    if (threadIdx.x < CONSUMERS) w.finish(threadIdx.x);
}
