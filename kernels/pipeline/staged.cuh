// Register staging: sync (S = 1: ld.global -> st.shared, nothing moves while the block computes)
// and regprefetch (S = 2: pre-Ampere double buffering, step k+1 held in registers during compute).
// Also the compute-only model probe, which loads one tile this way.
#pragma once

// The register that holds one copy unit: 16-byte vectors where the view's rows allow them,
// narrower units (down to one element) where its offset or row stride does not.
template <int B> struct UnitReg;
template <> struct UnitReg<16> { using T = uint4; };
template <> struct UnitReg<8> { using T = uint2; };
template <> struct UnitReg<4> { using T = unsigned int; };
template <> struct UnitReg<2> { using T = unsigned short; };

template <class W>
struct Staged {
    using T = typename UnitReg<COPY_BYTES>::T;
    T v[PerThread<W>::UNITS];
};

template <class W>
__device__ __forceinline__ void stage_load(const W& w, int k, int tid, Staged<W>& st) {
    if (!w.has(k)) return;
    using T = typename Staged<W>::T;
    for_my_units(w, k, tid, [&](int i, const CopyUnit& u, int) {
        if constexpr (W::ZERO_FILL)
            st.v[i] = u.bytes ? __ldg(reinterpret_cast<const T*>(u.src)) : T{};
        else
            st.v[i] = __ldg(reinterpret_cast<const T*>(u.src));
    });
}

// Stores step k into slot s: the issue of a register-staged pipeline.
template <class W>
__device__ __forceinline__ void stage_store(Mon& m, const W& w, int k, int s, int tid, const Staged<W>& st) {
    m.issue(k, s);
    unsigned char* const slot = slot_ptr<W>(s);
    for_my_units<false>(w, k, tid, [&](int i, const CopyUnit&, int dst) { *reinterpret_cast<typename Staged<W>::T*>(slot + dst) = st.v[i]; });
}

#if MECH == MECH_SYNC
// ld.global -> st.shared, barrier, compute, barrier.
template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    Mon m(c, n);
    for (int k = 0; k < n; ++k) {
        Staged<W> st;
        trace(c, k, EV_ISSUE, rec);
        stage_load(w, k, tid, st);
        perturb(c, k, EDGE_ACQUIRE);
        stage_store(m, w, k, 0, tid, st);
        m.sync();
        trace(c, k, EV_READY, rec);
        perturb(c, k, EDGE_READ);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        read_step(m, w, slot_ptr<W>(0), k, 0, tid, Nothing());
        trace(c, k, EV_COMPUTE_END, rec);
        perturb(c, k, EDGE_RELEASE);
        m.sync();
        trace(c, k, EV_RELEASE, rec);
    }
    m.drain(true, true);
}
#endif

#if MECH == MECH_REGPREFETCH
// The store of step k publishes it through the barrier, which also proves everyone finished step
// k-1, whose slot the next store reuses; step k+1 is loaded into registers during the compute.
template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    const int tid = threadIdx.x, n = w.steps();
    const bool rec = tid == 0;
    const Ctl& c = w.ctl();
    Mon m(c, n);
    RingState<2> ring;
    Staged<W> st;
    trace(c, 0, EV_ISSUE, rec);
    stage_load(w, 0, tid, st);
    for (int k = 0; k < n; ++k, ring.advance()) {
        perturb(c, k, EDGE_ACQUIRE);
        stage_store(m, w, k, ring.slot(), tid, st);
        m.sync();
        trace(c, k, EV_READY, rec);
        trace(c, k + 1, EV_ISSUE, rec);
        stage_load(w, k + 1, tid, st);
        perturb(c, k, EDGE_READ);
        trace(c, k, EV_COMPUTE_BEGIN, rec);
        read_step(m, w, slot_ptr<W>(ring.slot()), k, ring.slot(), tid, Nothing());
        trace(c, k, EV_COMPUTE_END, rec);
        perturb(c, k, EDGE_RELEASE);
        trace(c, k, EV_RELEASE, rec);
    }
    m.drain(true, true);
}
#endif

// The compute stage alone (ONLY 2): the block's first step is loaded once, then computed as every
// step. A model probe, never a validated result.
template <class W>
__device__ __forceinline__ void run_compute_only(W& w) {
    const int tid = threadIdx.x, n = w.steps();
    Mon m(w.ctl(), n);
    Staged<W> st;
    stage_load(w, 0, tid, st);
    stage_store(m, w, 0, 0, tid, st);
    m.sync();
    for (int k = 0; k < n; ++k) {
#if WG_TURNS
        if (k / w.turn_steps() % 2 != tid / 128) continue;  // the other warpgroup's turn
#endif
        w.consume(slot_ptr<W>(0), k, tid, Nothing());
    }
#if RELEASE_LAG
    if (n > 0) w.flush(tid);
#endif
}
