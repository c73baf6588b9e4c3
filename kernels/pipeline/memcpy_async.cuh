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
__device__ __forceinline__ void mca_copy(const W& w, int k, int s, Sync& sync) {
    const auto block = cooperative_groups::this_thread_block();
    if (!w.has(k)) return;
    const auto step = w.step(k);
    unsigned char* const slot = slot_ptr<W>(s);
    if constexpr (W::ZERO_FILL) {
        // per-thread units, as cp.async's: memcpy_async cannot zero-fill, so a unit past the
        // data's edge copies COPY_BYTES of the zero source instead
        // (dependent on W, so that a front end never evaluates it where the branch is discarded:
        // NVRTC 13.0 did, for row tiles of 4 rows of 3072)
        static_assert(MCA_FORM == 0 || !W::ZERO_FILL, "per-unit copies are spelled with aligned_size_t alone");
        for_my_units(w, k, threadIdx.x, [&](int, const char* src, int dst) {
            cuda::memcpy_async(slot + dst, src ? src : w.zero_src(), cuda::aligned_size_t<COPY_BYTES>(COPY_BYTES), sync);
        });
    } else {
        const int rows = step.rows();
        for (int r = 0; r < rows; ++r) {
            const elem_t* src = reinterpret_cast<const elem_t*>(step.row_src(r));
            elem_t* dst = reinterpret_cast<elem_t*>(slot + step.row_dst(r));
#if MCA_FORM == 0
            cuda::memcpy_async(block, dst, src, cuda::aligned_size_t<16>(step.row_bytes()), sync);
#elif MCA_FORM == 1
            cuda::memcpy_async(block, dst, src, (size_t)step.row_bytes(), sync);
#else
            cuda::memcpy_async(block, reinterpret_cast<NotTriviallyCopyable*>(dst),
                               reinterpret_cast<const NotTriviallyCopyable*>(src),
                               cuda::aligned_size_t<16>(step.row_bytes()), sync);
#endif
        }
    }
}

#if MECH == MECH_MCA_PIPELINE
// cuda::pipeline (block scope): producer_acquire / producer_commit, consumer_wait / consumer_release.
// Stages are acquired only for steps that exist, so no empty stage is committed while draining.
template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
    auto pipe = cuda::make_pipeline(cooperative_groups::this_thread_block(), &state);
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    RingState<STAGES> fill, read;
    for (int s = 0; s < STAGES - 1 && s < n; ++s, fill.advance()) {
        trace(c, s, EV_ISSUE, rec);
        pipe.producer_acquire();
        mca_copy(w, s, fill.slot(), pipe);
        pipe.producer_commit();
    }
    for (int k = 0; k < n; ++k, read.advance()) {
        if (k + STAGES - 1 < n) {
            perturb(c, k + STAGES - 1, ROLE_PRODUCER);
            trace(c, k + STAGES - 1, EV_ISSUE, rec);
            pipe.producer_acquire();
            mca_copy(w, k + STAGES - 1, fill.slot(), pipe);
            pipe.producer_commit();
            fill.advance();
        }
        pipe.consumer_wait();
        trace(c, k, EV_READY, rec);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        w.consume(slot_ptr<W>(read.slot()), k, tid, Nothing());
        trace(c, k, EV_COMPUTE_END, rec);
        pipe.consumer_release();
        trace(c, k, EV_RELEASE, rec);
    }
}
#endif

#if MECH == MECH_MCA_BARRIER
// cuda::barrier per slot: arrive_and_wait completes once every thread arrived and the copies landed;
// bar.sync before each refill proves every reader of the slot is done.
template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    __shared__ cuda::barrier<cuda::thread_scope_block> bar[STAGES];
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) init(&bar[s], THREADS);
    }
    __syncthreads();
    RingState<STAGES> fill, read;
    for (int s = 0; s < STAGES - 1; ++s, fill.advance()) {
        trace(c, s, EV_ISSUE, rec);
        mca_copy(w, s, fill.slot(), bar[fill.slot()]);
    }
    for (int k = 0; k < n; ++k, fill.advance(), read.advance()) {
        __syncthreads();
        perturb(c, k + STAGES - 1, ROLE_PRODUCER);
        trace(c, k + STAGES - 1, EV_ISSUE, rec);
        mca_copy(w, k + STAGES - 1, fill.slot(), bar[fill.slot()]);
        bar[read.slot()].arrive_and_wait();
        trace(c, k, EV_READY, rec);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        w.consume(slot_ptr<W>(read.slot()), k, tid, Nothing());
        trace(c, k, EV_COMPUTE_END, rec);
        trace(c, k, EV_RELEASE, rec);
    }
}
#endif
