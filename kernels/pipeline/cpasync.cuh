// Ampere cp.async: per-thread copies of COPY_BYTES (.cg for 16-byte L2-only copies, else .ca),
// one commit group per step. Protocol per step k: wait_group(STAGES-2) + bar.sync publishes step k
// and proves every thread is done with step k-1; only then is step k+STAGES-1 issued into k-1's slot.
#pragma once

template <class W>
__device__ __forceinline__ void cpasync_issue(Mon& m, const W& w, int k, int s, int tid) {
    static_assert(!L2_EVICT_LAST || (COPY_BYTES == 16 && CP_CG), "the L2 hint is built for 16-byte .cg copies");
    if (!w.has(k)) return;  // draining: never copy past the last step
    m.issue(k, s);
    const u32 slot = smem_addr(slot_ptr<W>(s));  // converted once per step, not per copy
    for_my_units(w, k, tid, [&](int, const CopyUnit& u, int dst) {
        if constexpr (W::ZERO_FILL) {
#if COPY_BYTES == 16 && CP_CG
            if (L2_EVICT_LAST) cp_async_cg16_zfill_hint(slot + dst, u.src, u.bytes, l2_evict_last_policy());
            else cp_async_cg16_zfill(slot + dst, u.src, u.bytes);
#else
            cp_async_ca_zfill<COPY_BYTES>(slot + dst, u.src, u.bytes);
#endif
        } else {
#if COPY_BYTES == 16 && CP_CG
            if (L2_EVICT_LAST) cp_async_cg16_hint(slot + dst, u.src, l2_evict_last_policy());
            else cp_async_cg16(slot + dst, u.src);
#else
            cp_async_ca<COPY_BYTES>(slot + dst, u.src);
#endif
        }
    });
}

// Commits the group of step k. Past the last step the group is empty and still committed, so that
// wait_group keeps counting one group per step while the pipeline drains.
template <class W>
__device__ __forceinline__ void commit_step(Mon& m, const W& w, int k) {
#if CONTROL == CTL_DRAIN_NO_COMMIT
    if (!w.has(k)) return;
#endif
    group_commit(m);
}

#if CONTROL == CTL_OVERFILL || CONTROL == CTL_EARLY_RELEASE
#define LEAD STAGES  // one step more in flight than there are slots
#else
#define LEAD (STAGES - 1)
#endif

template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    Mon m(c, n);
    RingState<STAGES> fill, read;  // the slot the next issue fills; the slot step k reads
    for (int s = 0; s < LEAD; ++s, fill.advance()) {
        perturb(c, s, EDGE_ACQUIRE);
        trace(c, s, EV_ISSUE, rec);
        cpasync_issue(m, w, s, fill.slot(), tid);
#if CONTROL != CTL_COMMIT_AFTER_WAIT
        commit_step(m, w, s);
#endif
    }
    for (int k = 0; k < n; ++k, fill.advance(), read.advance()) {
#if CONTROL == CTL_WAIT_SHORT
        group_wait<LEAD>(m);
#elif CONTROL != CTL_SKIP_WAIT
        group_wait<LEAD - 1>(m);
#endif
#if CONTROL == CTL_COMMIT_AFTER_WAIT
        group_commit(m);
#endif
#if CONTROL != CTL_NO_BARRIER
        m.sync();
#endif
        trace(c, k, EV_READY, rec);
#if CONTROL == CTL_EARLY_RELEASE
        // the slot is refilled inside the compute body, while it is still being read
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        read_step(m, w, slot_ptr<W>(read.slot()), k, read.slot(), tid, [&] {
            trace(c, k + LEAD, EV_ISSUE, rec);
            cpasync_issue(m, w, k + LEAD, fill.slot(), tid);
            group_commit(m);
        });
#else
        perturb(c, k + LEAD, EDGE_ACQUIRE);
        trace(c, k + LEAD, EV_ISSUE, rec);
        cpasync_issue(m, w, k + LEAD, fill.slot(), tid);
#if CONTROL != CTL_COMMIT_AFTER_WAIT
        commit_step(m, w, k + LEAD);
#endif
        perturb(c, k, EDGE_READ);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        read_step(m, w, slot_ptr<W>(read.slot()), k, read.slot(), tid, Nothing());
#endif
        trace(c, k, EV_COMPUTE_END, rec);
        perturb(c, k, EDGE_RELEASE);
        trace(c, k, EV_RELEASE, rec);
    }
    group_wait<0>(m);
    m.drain(true, true);
}
