// Hopper mbarrier ring for bulk copies (MECH 5: one cp.async.bulk per row) and TMA (MECH 6: the
// tensor copies of a step, one box, or one per row part where rows start inside 16-byte chunks):
// full[s] completes when the copies' bytes land (expect_tx / complete_tx), empty[s] when every
// consumer warp has finished reading slot s. Producer and consumer each walk a
// RingState; the consumer waits full[s] on its phase, the producer waits empty[s] on the phase
// before its own (the consumers' release of the slot's previous step). In a cluster (CLUSTER > 1)
// every CTA's producer multicasts its part of a step into every CTA's slot, so a slot is refilled
// only once the consumers of every CTA released it: empty[s] counts their warps.
#pragma once

static_assert(CLUSTER == 1 || (WS && MECH == MECH_TMA), "a cluster shares the multicast copies of warp-specialised TMA rings");
static_assert(!WG_TURNS || CLUSTER == 1, "turns pass within one CTA");

// Named barriers TURN_BAR and TURN_BAR + 1: consumer warpgroup g waits on TURN_BAR + g for its
// turn, which the other's arrival gives (256 threads: one warpgroup waiting, the other arriving).
#define TURN_BAR 8


// Registers per thread after the hand-over (WS with a producer warpgroup; 0: no hand-over).
#ifndef REGS_PRODUCER
#define REGS_PRODUCER 0
#endif
#ifndef REGS_CONSUMER
#define REGS_CONSUMER 0
#endif

// The ring's operations on its barriers, each as the monitor sees it (barrier ids: full[s] is s,
// empty[s] is STAGES + s). A bounded wait: the consumer's on full[s] for step k's copies, the
// producer's on empty[s] for the release of step k - STAGES before it refills the slot.
__device__ __forceinline__ bool ring_wait(Mon& m, const Ctl& c, u64* bar, u32 parity, int s, int role, int k) {
    const bool ok = wait_phase(c, bar, parity, s, role, k);
    if (role == ROLE_PRODUCER) m.waited(STAGES + s, parity, k - STAGES, ok);
    else m.waited(s, parity, k, ok);
    return ok;
}
// Arms full[s] for step k: arrives, announcing the bytes its copies will complete.
__device__ __forceinline__ void ring_arm(Mon& m, u64* full, int s, int k, u32 bytes) {
    mbar_arrive_expect_tx(full, bytes);
    m.armed(s, k, (int)bytes);
}
// A consumer warp's release of slot s after step k: in a cluster, to every CTA's producer, since
// each multicasts into this CTA's slot too (`own`: this CTA's rank).
__device__ __forceinline__ void ring_release(Mon& m, u64* empty, int s, int k, int own) {
#if CLUSTER > 1
    const int ctas = CONTROL == CTL_RELEASE_LOCAL ? 1 : CLUSTER;
    for (int r = 0; r < ctas; ++r) mbar_arrive_cluster(empty, (u32)((own + r) % CLUSTER));
    m.released(s, k, ctas);
#else
    mbar_arrive(empty);
    m.released(s, k, 1);
#endif
}

// The bytes step k's tensor copies bring: a workload's tma_bytes(k) where they vary by step (row
// windows issue no box past the last row), else its one tma_bytes().
template <class W>
__device__ __forceinline__ auto tma_step_bytes(const W& w, int k, int) -> decltype(w.tma_bytes(k)) { return w.tma_bytes(k); }
template <class W>
__device__ __forceinline__ u32 tma_step_bytes(const W& w, int, long) { return w.tma_bytes(); }

// Issues step k into the producer's slot, unless its slot never came back. A whole warp calls it:
// every lane waits for the slot, so no lane spins on one barrier while its warp-mates spin on
// another; lane 0 arms full[s], and for bulk the lanes share the row copies.
template <class W>
__device__ __forceinline__ void produce(Mon& m, const W& w, u64* full, u64* empty, int k, RingState<STAGES> st) {
    if (!w.has(k)) return;
    const Ctl& c = w.ctl();
    const int s = st.slot(), lane = threadIdx.x & 31;
    const auto step = w.step(k);
    perturb(c, k, EDGE_ACQUIRE);
    if (k >= STAGES && !__all_sync(0xffffffffU, ring_wait(m, c, &empty[s], st.phase() ^ 1U, s, ROLE_PRODUCER, k)))
        return;
#if MONITOR || CLUSTER > 1
    // a failed launch arms nothing more: the consumers release a slot whose copies never landed
    // once a wait has timed out, and arming its full[s] again, in a phase still owed bytes, would
    // arrive past the barrier's count and fault the context (seen in GEMM's later waves); in a
    // cluster, a multicast into a CTA that has gone would
    if (__any_sync(0xffffffffU, aborted(c))) return;
#endif
    m.issue(k, s);
    trace(c, k, EV_ISSUE, lane == 0);
    if (lane == 0) {
#if CONTROL == CTL_NO_EXPECT_TX
        mbar_arrive(&full[s]);
        m.armed(s, k, 0);
#elif MECH == MECH_TMA
        // the whole boxes: elements past the tensor's edges arrive zero-filled and count
        ring_arm(m, &full[s], s, k, tma_step_bytes(w, k, 0) + (CONTROL == CTL_TX_LONG) * 16 - (CONTROL == CTL_TX_SHORT) * 16);
#else
        ring_arm(m, &full[s], s, k, step.bytes());
#endif
    }
#if MECH == MECH_TMA
    if (m.may_issue(s, k, (int)tma_step_bytes(w, k, 0)) && lane == 0) {
        w.tma_load(slot_ptr<W>(s), k, &full[s]);
        m.copied(s, k, (int)tma_step_bytes(w, k, 0));
    }
#endif
#if MECH == MECH_BULK
    __syncwarp();  // the bytes are announced before any row copy can complete them
    const bool issue = m.may_issue(s, k, step.bytes());
    for (int r = lane; issue && r < step.rows(); r += 32) {
        const int bytes = step.row_bytes(r);
        mon_source<true>(w, k, r, step.row_src(r), bytes, bytes);
        if (L2_EVICT_LAST)
            bulk_copy_g2s_hint(slot_ptr<W>(s) + step.row_dst(r), step.row_src(r), bytes, &full[s], l2_evict_last_policy());
        else
            bulk_copy_g2s(slot_ptr<W>(s) + step.row_dst(r), step.row_src(r), bytes, &full[s]);
        m.copied(s, k, bytes);
    }
#endif
    m.published(s, k);
}

// What follows a consumer thread's release of step k's slot.
template <class W>
__device__ __forceinline__ void released_step(W& w, int k, int ctid, bool rec) {
    trace(w.ctl(), k, EV_RELEASE, rec);
    perturb(w.ctl(), k, EDGE_AFTER_RELEASE);
    w.after_release(k, ctid);
}

// A consumer thread's release of step k's slot s, once the compute body has finished reading it.
template <class W>
__device__ __forceinline__ void release_step(Mon& m, W& w, u64* empty, int k, int s, int ctid, bool rec) {
    __syncwarp();
    if ((ctid & 31) == 0) ring_release(m, &empty[s], s, k, w.cta_rank());
    released_step(w, k, ctid, rec);
}

// Consumes step k: wait full, compute, release. After an abort it computes on whatever the slot
// holds, keeping every barrier's participants together. RELEASE_LAG 1: the body of step k still
// reads step k-1's slot (attention's P V of the previous key tile, issued beside this tile's
// scores; a GEMM turn's MMAs of the previous slice), so that slot is released after step k's
// body, and the last after flush_steps(); `first`: the first step of this thread's run of steps
// (its turn's), whose step before it is none of its own.
template <class W>
__device__ __forceinline__ void consume(Mon& m, W& w, u64* full, u64* empty, int k, RingState<STAGES> st, int ctid, bool rec, int first = 0) {
    const Ctl& c = w.ctl();
    const int s = st.slot();
#if CONTROL == CTL_WRONG_PARITY
    ring_wait(m, c, &full[s], st.phase() ^ 1U, s, ROLE_CONSUMER, k);
#elif CONTROL != CTL_SKIP_WAIT
    ring_wait(m, c, &full[s], st.phase(), s, ROLE_CONSUMER, k);
#endif
    trace(c, k, EV_READY, rec);
    perturb(c, k, EDGE_READ);
#if CONTROL == CTL_EARLY_RELEASE && !RELEASE_LAG
    __syncwarp();
    if ((ctid & 31) == 0) ring_release(m, &empty[s], s, k, w.cta_rank());
#endif
    trace(c, k, EV_COMPUTE_BEGIN, rec);
    m.read(k, s);
    w.consume(slot_ptr<W>(s), k, ctid, Nothing());
    const RingState<STAGES> done{st.count - RELEASE_LAG};  // the step whose slot the body has finished
    if (k - RELEASE_LAG >= first) m.read_done(k - RELEASE_LAG, done.slot(), MMA_LAG);
    trace(c, k, EV_COMPUTE_END, rec);
    perturb(c, k, EDGE_RELEASE);
#if CONTROL == CTL_EARLY_RELEASE && RELEASE_LAG
    release_step(m, w, empty, k, s, ctid, rec);  // a step early: the next body still reads it
#elif CONTROL == CTL_EARLY_RELEASE
    released_step(w, k, ctid, rec);  // released before the body read it
#else
    if (k - RELEASE_LAG >= first) release_step(m, w, empty, k - RELEASE_LAG, done.slot(), ctid, rec);
#endif
}

// RELEASE_LAG: after the last step (n - 1), the body finishes reading its slot (W::flush), which is released.
template <class W>
__device__ __forceinline__ void flush_steps(Mon& m, W& w, u64* empty, int n, int ctid, bool rec) {
#if RELEASE_LAG
    if (n == 0) return;
    const RingState<STAGES> last{(u32)n - 1U};
    w.flush(ctid);
    m.read_done(n - 1, last.slot());
#if CONTROL != CTL_EARLY_RELEASE
    release_step(m, w, empty, n - 1, last.slot(), ctid, rec);
#endif
#endif
}

// WG_TURNS: warpgroup g takes the turns g, g + 2, ... of W::turn_steps() steps each. It waits for
// its turn (the other's pass at the end of the turn before), reads the turn's steps, passes the
// turn on once their MMAs are issued, and ends the turn (W::end_turn: its epilogue) while the
// other warpgroup's turn runs: one warpgroup issuing MMAs at a time, beside the other's stores.
// The pass comes before its last MMAs retire (CUTLASS's order), so that the other's first may queue
// behind them; on the H100 it timed the same as a pass after they retired.
template <class W>
__device__ __forceinline__ void consume_turns(Mon& m, W& w, u64* full, u64* empty, int n, int ctid) {
    // the warpgroup, as a value ptxas sees is the same in every lane (a loop it thought could
    // diverge, with a step's MMAs in flight across it, serialised every wgmma: C7518)
    const int g = __shfl_sync(0xffffffffU, ctid / 128, 0), per = w.turn_steps(), turns = n / per;
    const bool rec = ctid % 128 == 0;
    int due = 0;
    named_barrier_arrive_if(g == 1, TURN_BAR, 256);  // warpgroup 0 takes the first turn
    for (int t = g; t < turns; t += 2, due += per) {
        w.begin();
#if CONTROL != CTL_TURN_SKIPPED
        named_barrier_sync(TURN_BAR + g, 256);
        m.turn_waited(t);
#endif
        m.turn_began(t, t * per);
        RingState<STAGES> read{(u32)(t * per)};
        for (int k = t * per; k < (t + 1) * per; ++k, read.advance()) consume(m, w, full, empty, k, read, ctid, rec, t * per);
        // the last turn is passed to no one (each wait pairs with one arrival)
        named_barrier_arrive_if(t + 1 < turns, TURN_BAR + 1 - g, 256);
        flush_steps(m, w, empty, (t + 1) * per, ctid, rec);
        w.end_turn(t, ctid);
    }
    m.drain(false, true, due);
}

template <class W>
__device__ __forceinline__ void run_pipeline(W& w) {
    __shared__ __align__(8) u64 full[STAGES];
    __shared__ __align__(8) u64 empty[STAGES];
    const int tid = threadIdx.x, n = w.steps();
    Mon m(w.ctl(), n);
    if (tid == 0) {
#if MECH == MECH_TMA
        w.tma_prefetch();
#endif
        for (int s = 0; s < STAGES; ++s) {
            bar_init(m, &full[s], s, 1);
            bar_init(m, &empty[s], STAGES + s, NWARPS_R * CLUSTER);
        }
        bar_fence(m);
    }
    m.sync();
#if CLUSTER > 1
    cluster_sync_relaxed();  // every CTA's barriers are initialised before any multicast or remote arrive
#endif
    RingState<STAGES> fill, read;
#if WS
    if (tid >= CONSUMERS) {  // the producer's first warp runs ahead by up to STAGES steps
#if REGS_PRODUCER
        setmaxnreg_dec<REGS_PRODUCER>();
#endif
        if (tid < CONSUMERS + 32) {
            for (int k = 0; k < n; ++k, fill.advance()) produce(m, w, full, empty, k, fill);
#if CLUSTER > 1
            // the other CTAs' consumers arrive on this CTA's empty barriers up to their last
            // release: the block waits for those arrivals, so none reaches it after it exits
            for (int k = n; k < n + STAGES; ++k, fill.advance())
                if (k >= STAGES) ring_wait(m, w.ctl(), &empty[fill.slot()], fill.phase() ^ 1U, fill.slot(), ROLE_PRODUCER, k);
#endif
            m.drain(true, false);
        }
        // leaves the kernel here: a path that rejoined the consumers' would keep their
        // accumulators live through the producer's code (spilled at its register budget)
        exit_thread();
    }
#if REGS_CONSUMER
    setmaxnreg_inc<REGS_CONSUMER>();
#endif
#if WG_TURNS
    consume_turns(m, w, full, empty, n, tid);
#else
    w.begin();
    for (int k = 0; k < n; ++k, read.advance()) consume(m, w, full, empty, k, read, tid, tid == 0);
    flush_steps(m, w, empty, n, tid, tid == 0);
    m.drain(false, true);
#endif
#else
    const bool producer = tid < 32;  // warp 0 produces, then consumes with the others
    w.begin();
    for (int k = 0; k < STAGES - 1; ++k, fill.advance())
        if (producer) produce(m, w, full, empty, k, fill);
    for (int k = 0; k < n; ++k, fill.advance(), read.advance()) {
        // warp 0 refills the slot of step k-1 once all warps released it
        if (producer) produce(m, w, full, empty, k + STAGES - 1, fill);
        consume(m, w, full, empty, k, read, tid, tid == 0);
    }
    m.drain(producer, true);
#endif
    // A broken completion protocol can leave copies in flight at exit, and a bulk copy landing in
    // the shared memory of a block that has gone faults the whole context: controls linger first,
    // and in a cluster every failed launch (the other CTA's copies and releases still reach this one).
    if (CONTROL || (CLUSTER > 1 && aborted(w.ctl())))
        for (int i = 0; i < 20; ++i) __nanosleep(10000);
}
