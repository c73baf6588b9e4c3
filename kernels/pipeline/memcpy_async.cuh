// libcu++'s cuda::memcpy_async, one call per row by the whole block (or, for a workload whose copies
// can fall past its data's edge, one per thread per unit), completing through a cuda::pipeline
// (MECH 3) or a cuda::barrier per slot (MECH 4). Which instruction it lowers to depends on the
// spelling (MCA_FORM) and is for the SASS to say.
#pragma once
#include "common/elem.cuh"
// libcu++'s shared state and barriers are initialised by make_pipeline / init, not by a constructor.
#pragma nv_diag_suppress static_var_with_dynamic_init
#include <cooperative_groups.h>
#if MECH == MECH_MCA_PIPELINE
#include <cuda/pipeline>
#else
#include <cuda/barrier>
#endif

// MCA_FORM 0: aligned_size_t<16> on elem_t*; 1: plain size_t on elem_t* (alignment of elem_t only);
// 2: aligned_size_t<16> on a type that is not trivially copyable.
struct NotTriviallyCopyable {
    u32 w[4];
    __device__ NotTriviallyCopyable& operator=(const NotTriviallyCopyable& o) {
#pragma unroll
        for (int i = 0; i < 4; ++i) w[i] = o.w[i];
        return *this;
    }
};

template <class W, class Sync>
__device__ __forceinline__ void mca_copy(Mon& m, const W& w, int k, int s, Sync& sync) {
    const auto block = cooperative_groups::this_thread_block();
    if (!w.has(k)) return;
    m.issue(k, s);
    const auto step = w.step(k);
    unsigned char* const slot = slot_ptr<W>(s);
    if constexpr (W::ZERO_FILL) {
        // per-thread units, as cp.async's: memcpy_async cannot zero-fill, so a unit past the
        // data's edge copies COPY_BYTES of the zero source instead
        // (dependent on W, so that a front end never evaluates it where the branch is discarded:
        // NVRTC 13.0 did, for row tiles of 4 rows of 3072)
        static_assert(MCA_FORM == 0 || !W::ZERO_FILL, "per-unit copies are spelled with aligned_size_t alone");
        const char* zeros = reinterpret_cast<const char*>(w.zero_src());
        for_my_units(w, k, threadIdx.x, [&](int, const CopyUnit& u, int dst) {
            cuda::memcpy_async(slot + dst, u.bytes ? u.src : zeros, cuda::aligned_size_t<COPY_BYTES>(COPY_BYTES), sync);
        });
    } else {
        const int rows = step.rows();
        for (int r = 0; r < rows; ++r) {
            const int bytes = step.row_bytes(r);
            mon_source<true>(w, k, r, step.row_src(r), bytes, bytes);
            const elem_t* src = reinterpret_cast<const elem_t*>(step.row_src(r));
            elem_t* dst = reinterpret_cast<elem_t*>(slot + step.row_dst(r));
#if MCA_FORM == 0
            cuda::memcpy_async(block, dst, src, cuda::aligned_size_t<16>(bytes), sync);
#elif MCA_FORM == 1
            cuda::memcpy_async(block, dst, src, (size_t)bytes, sync);
#else
            cuda::memcpy_async(block, reinterpret_cast<NotTriviallyCopyable*>(dst),
                               reinterpret_cast<const NotTriviallyCopyable*>(src),
                               cuda::aligned_size_t<16>(bytes), sync);
#endif
        }
    }
}

#if MECH == MECH_MCA_PIPELINE
// cuda::pipeline's operations, each as the monitor sees it.
template <class P>
__device__ __forceinline__ void pipe_acquire(Mon& m, P& pipe) {
    pipe.producer_acquire();
    m.pipeline_acquired();
}
template <class P>
__device__ __forceinline__ void pipe_commit(Mon& m, P& pipe) {
    pipe.producer_commit();
    m.pipeline_committed();
}
template <class P>
__device__ __forceinline__ void pipe_wait(Mon& m, P& pipe) {
    pipe.consumer_wait();
    m.pipeline_waited();
}
template <class P>
__device__ __forceinline__ void pipe_release(Mon& m, P& pipe) {
    pipe.consumer_release();
    m.pipeline_released();
}

// cuda::pipeline (block scope): producer_acquire / producer_commit, consumer_wait / consumer_release.
// Stages are acquired only for steps that exist, so no empty stage is committed while draining.
template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
    auto pipe = cuda::make_pipeline(cooperative_groups::this_thread_block(), &state);
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    Mon m(c, n);
    RingState<STAGES> fill, read;
    for (int s = 0; s < STAGES - 1 && s < n; ++s, fill.advance()) {
        trace(c, s, EV_ISSUE, rec);
        pipe_acquire(m, pipe);
        mca_copy(m, w, s, fill.slot(), pipe);
        pipe_commit(m, pipe);
    }
    for (int k = 0; k < n; ++k, read.advance()) {
        if (k + STAGES - 1 < n) {
            perturb(c, k + STAGES - 1, EDGE_ACQUIRE);
            trace(c, k + STAGES - 1, EV_ISSUE, rec);
            pipe_acquire(m, pipe);
            mca_copy(m, w, k + STAGES - 1, fill.slot(), pipe);
            pipe_commit(m, pipe);
            fill.advance();
        }
        pipe_wait(m, pipe);
        trace(c, k, EV_READY, rec);
        perturb(c, k, EDGE_READ);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        read_step(m, w, slot_ptr<W>(read.slot()), k, read.slot(), tid, Nothing());
        trace(c, k, EV_COMPUTE_END, rec);
        perturb(c, k, EDGE_RELEASE);
        pipe_release(m, pipe);
        trace(c, k, EV_RELEASE, rec);
        perturb(c, k, EDGE_AFTER_RELEASE);
    }
    m.drain(true, true);
}
#endif

#if MECH == MECH_MCA_BARRIER
typedef cuda::barrier<cuda::thread_scope_block> SlotBarrier;

// The slot barriers' operations, each as the monitor sees it.
__device__ __forceinline__ void slot_barrier_init(Mon& m, SlotBarrier* bar, int s) {
    init(&bar[s], THREADS);
    m.inited(s, THREADS);
}
__device__ __forceinline__ void slot_arrive_and_wait(Mon& m, SlotBarrier* bar, int s, int k) {
    bar[s].arrive_and_wait();
    m.arrived(s, k);
}

// cuda::barrier per slot: arrive_and_wait completes once every thread arrived and the copies landed;
// bar.sync before each refill proves every reader of the slot is done.
template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    __shared__ SlotBarrier bar[STAGES];
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    Mon m(c, n);
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) slot_barrier_init(m, bar, s);
    }
    m.sync();
    RingState<STAGES> fill, read;
    for (int s = 0; s < STAGES - 1; ++s, fill.advance()) {
        trace(c, s, EV_ISSUE, rec);
        mca_copy(m, w, s, fill.slot(), bar[fill.slot()]);
    }
    for (int k = 0; k < n; ++k, fill.advance(), read.advance()) {
        m.sync();
        perturb(c, k + STAGES - 1, EDGE_ACQUIRE);
        trace(c, k + STAGES - 1, EV_ISSUE, rec);
        mca_copy(m, w, k + STAGES - 1, fill.slot(), bar[fill.slot()]);
        slot_arrive_and_wait(m, bar, read.slot(), k);
        trace(c, k, EV_READY, rec);
        perturb(c, k, EDGE_READ);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        read_step(m, w, slot_ptr<W>(read.slot()), k, read.slot(), tid, Nothing());
        trace(c, k, EV_COMPUTE_END, rec);
        perturb(c, k, EDGE_RELEASE);
        trace(c, k, EV_RELEASE, rec);
    }
    m.drain(true, true);
}
#endif
