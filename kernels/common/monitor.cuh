// The protocol monitor (MONITOR 1): a checking build of every pipeline template that follows the
// ring's rules at each protocol edge as it happens, from the operations themselves and never from
// the data. Each thread keeps its own view in a Mon (the block barriers it passed; per slot, the
// step it issued, saw complete, read and released); the block keeps what crosses threads in
// mon_shared (releases per slot, the step each slot holds, mbarrier inits, wgmma groups in
// flight). A broken rule is recorded, and acted on only where its next step would take the GPU
// down (copies an mbarrier was not told of are withheld: may_issue): the launch runs to its end
// and the host reads the log (src/monitor/, which mirrors every layout and code below). The first record of each rule
// is also written to the trail, page-locked host memory, so a launch whose broken protocol then
// faults the context (device memory is lost with it) still names what it broke. In any other build
// each hook is empty and each protocol operation is its PTX alone.
//
// Most rules are sequence rules, decided by what one thread did in its own program order (a read
// with no completed wait before it, a refill with no block barrier since its own release), so a
// broken protocol is caught on every run, whatever the timing. Two are cross-thread counts (a
// refill while other threads' reads of the slot's previous step are unfinished, a slot found
// refilled at the end of a read): those need the window the stress perturbation opens.
//
// Needs, from pipeline/pipeline.cuh: MECH, STAGES, THREADS, READERS, NWARPS_R.
#pragma once
#include "common/hooks.cuh"

static_assert(!MONITOR || (TRACE_TILES == 0 && ONLY == 0), "a monitor build checks the whole pipeline, neither sampled nor probed");

// The log: Ctl::status[0..MON_STATUS_WORDS) is the timeout report, the log follows it.
#define MON_STATUS_WORDS 8
#define MON_MAGIC 0x314E4F4DU  // "MON1"
#define MON_VERSION 1U
#define MON_RECORDS 64
#define MON_RULES 24  // per-rule counts in the header (codes 1..MON_RULES-1)

// Rules, with what a record's a..f hold (a thread's "slot" is its slot index, -1 where none applies).
#define MON_REFILL_EARLY 1       // slot refilled while readers of its previous step read on. a: readers of it that released, b: readers
#define MON_REFILL_UNACQUIRED 2  // refill without its protocol's acquire. Ring: a: the step whose release the producer last waited
                                 // for there; cuda::pipeline: a, b: acquires, commits; else a: the step this thread last
                                 // finished reading there, b, c: its block-barrier count then and now
#define MON_READ_UNWAITED 3      // step read with no wait for its completion. a: the step whose completion it saw last (-1: none)
#define MON_READ_INCOMPLETE 4    // cp.async: the step's group not covered. a: its group, b: groups committed at the last wait, c: that wait's count (-1: none)
#define MON_READ_UNPUBLISHED 5   // read with no block barrier since its completion. a: barrier count at completion, b: at the read
#define MON_SLOT_HOLDS_OTHER 6   // the slot holds another step. a: the step it holds, b: 0 at the read's start, 1 at its end
#define MON_WAIT_PARITY 7        // mbarrier waited on the wrong parity (phase: waited). a: the step's parity, b: 0 full, 1 empty
#define MON_TX_MISMATCH 8        // a step's expect_tx differs from its copies. a: bytes announced, b: bytes the copies bring
#define MON_INIT_MISSING 9       // mbarrier used before its init. a: 0 full / slot barrier, 1 empty
#define MON_INIT_UNSYNCED 10     // mbarrier used by another thread with no block barrier since its init. a: kind, b: the initialising thread
#define MON_INIT_COUNT 11        // mbarrier initialised for the wrong arrival count. a: kind, b: count, c: the protocol's
#define MON_FENCE_MISSING 12     // an async copy completes on an mbarrier whose init no fence.mbarrier_init covered
#define MON_RELEASE_UNREAD 13    // slot released for a step its releaser has not finished reading. a: the step it finished last
#define MON_WGMMA_INFLIGHT 14    // slot released with wgmma groups still reading it. a: groups in flight
#define MON_TAIL_READ 15         // a copy is not the copy plan's. a: tensor (0 X, 1 A, 2 B), b: row, c: column, d: MON_PLAN_*, e, f: the tensor's rows and columns
#define MON_ISSUE_PAST_END 16    // a step issued past the block's last one. a: the block's steps
#define MON_DRAIN 17             // a walk ended with a step count short or long. a: steps done, b: steps due (the block's, or its turns'), c: ROLE_*
#define MON_RELEASE_PARTIAL 18   // cluster: slot released to fewer CTAs than multicast into it. a: CTAs released to, b: the cluster's
#define MON_STORE_UNFENCED 19    // TMA store of a staged tile some of whose writers fenced no write. a: those writers, b: the group's threads
#define MON_TURN_UNWAITED 20     // a consumer warpgroup's turn read with no wait for it. a: the turn (step's k), b: the turn it last waited for (-1: none)
static_assert(MON_TURN_UNWAITED < MON_RULES, "every rule has its count");
// How a copy departs from the copy plan (TAIL_READ's d)
#define MON_PLAN_ELSEWHERE 0  // inside the data, it reads another address or byte count
#define MON_PLAN_PAST 1       // past an edge, it reads the tensor instead of zero-filling
#define MON_PLAN_SKIPPED 2    // inside the data, it zero-fills what the plan reads

struct MonRecord {
    u32 rule, block, thread;
    int slot, step;
    u32 phase;  // the step's phase parity (WAIT_PARITY: the parity waited)
    int a, b, c, d, e, f;
};
static_assert(sizeof(MonRecord) == 48, "host and device disagree on MonRecord");

struct MonLog {
    u32 magic, version, capacity;
    u32 stored;  // records claimed; those at or past capacity were counted, not written
    u32 blocks;  // blocks that reached the end of their walk
    u32 reads;   // (consumer thread, step) reads checked
    u32 mech, stages, consumers, threads;
    u64 trail;  // the MonTrail's device address (the host sets it before the launch; 0: none)
    u32 per_rule[MON_RULES];  // every violation, stored or not
    MonRecord rec[MON_RECORDS];
};
static_assert(sizeof(MonLog) == 144 + 48 * MON_RECORDS, "host and device disagree on MonLog");

// The trail, in host memory mapped for the device: the build, and the launch's first record of each
// rule (indexed by rule; its rule field, written last, is 0 until the record is whole). Plain
// stores and system-scope fences only, so what was written before a fault is in host memory.
struct MonTrail {
    u32 magic, mech, stages, consumers, threads, reserved[3];
    MonRecord first[MON_RULES];
};
static_assert(sizeof(MonTrail) == 32 + 48 * MON_RULES, "host and device disagree on MonTrail");

#if MONITOR
#define MON_BARS (2 * STAGES)  // ring: full[s] is s, empty[s] STAGES + s; memcpy_async barrier: bar[s] is s

struct MonBlock {
    u32 released[STAGES];         // reader threads that finished reading the slot, over all its steps
    u32 held[STAGES];             // the latest step issued into the slot, + 1 (0: none)
    u32 bar_count[MON_BARS];      // an mbarrier's init count + 1 (0: not initialised)
    u32 bar_owner[MON_BARS];      // the thread that initialised it
    u32 bar_epoch[MON_BARS];      // that thread's block-barrier count at the init
    u32 fenced, fence_owner, fence_epoch;  // the barriers a fence.mbarrier_init covered (a bit each), by whom, when
    u32 reported;                 // rules this block has a record of (one each)
    u32 wg_pending[THREADS];      // wgmma groups each thread committed and has not waited for
    u32 unfenced[(THREADS + 31) / 32];  // TMA-store staging: a bit per thread, set while its writes to it are unfenced
    u32 unfenced_at_sync[4];      // per store group: writers that reached its barrier unfenced
};
__shared__ MonBlock mon_shared;

__device__ __forceinline__ MonLog* mon_log(const Ctl& c) { return reinterpret_cast<MonLog*>(c.status + MON_STATUS_WORDS); }

// Counts a violation, and keeps the first record of each rule in each block while there is room.
// Records stop once a wait has timed out: the launch has failed and what follows is its consequence.
__device__ __forceinline__ void mon_report(const Ctl& c, u32 rule, int slot, int step, u32 phase, int a = 0, int b = 0,
                                        int cc = 0, int d = 0, int e = 0, int f = 0) {
    if (aborted(c)) return;
    MonLog* log = mon_log(c);
    const MonRecord r = {rule, blockIdx.x, threadIdx.x, slot, step, phase, a, b, cc, d, e, f};
    if (atomicAdd(&log->per_rule[rule], 1U) == 0U && log->trail != 0U) {
        MonRecord* t = reinterpret_cast<MonTrail*>(log->trail)->first + rule;
        *t = {0U, r.block, r.thread, r.slot, r.step, r.phase, a, b, cc, d, e, f};
        __threadfence_system();
        *reinterpret_cast<volatile u32*>(&t->rule) = rule;
        __threadfence_system();
    }
    if (atomicOr(&mon_shared.reported, 1U << rule) & (1U << rule)) return;
    const u32 i = atomicAdd(&log->stored, 1U);
    if (i < MON_RECORDS) log->rec[i] = r;
}
#endif

__device__ __forceinline__ u32 mon_phase(int k) { return (u32)(k / STAGES) & 1U; }

// The arrivals each mbarrier's phase has in its protocol: the ring's full[s] one (the producer's
// expect_tx), empty[s] one per warp of the cluster that reads its steps; a memcpy_async slot barrier every thread.
__device__ __forceinline__ int mon_arrivals(int id) { return MECH == MECH_MCA_BARRIER ? THREADS : id < STAGES ? 1 : NWARPS_R * CLUSTER; }

// Which mechanisms hand a step over by a block barrier after its completion (each thread's own
// store or cp.async wait), and which issue each step from every thread.
#define MON_BARRIER_PUBLISHED (MECH == MECH_SYNC || MECH == MECH_REGPREFETCH || MECH == MECH_CPASYNC)
#define MON_THREAD_ISSUED (MON_BARRIER_PUBLISHED || MECH == MECH_MCA_PIPELINE || MECH == MECH_MCA_BARRIER)

// One thread's view of the protocol. Built first thing in run_pipeline, by every thread.
struct Mon {
#if MONITOR
    const Ctl& c;
    int n;                        // the block's steps
    u32 epoch = 0;                // block barriers passed
    int issued[STAGES], done[STAGES], ready[STAGES], emptied[STAGES];  // per slot: steps issued, read, seen complete, seen released (-1: none)
    u32 done_epoch[STAGES], ready_epoch[STAGES];
    u32 group[STAGES];            // cp.async: the commit group of the step issued into the slot
    u32 committed = 0, wait_committed = 0;
    int wait_n = -1;              // the count of the last wait_group (-1: none yet)
    u32 acquired = 0, stages_committed = 0, stages_waited = 0, stages_released = 0;  // cuda::pipeline
    u32 inits = 0;                // mbarriers this thread initialised (a bit each)
    int announced = 0, brought = 0;  // ring producer: the step's expect_tx, this lane's copy bytes
    bool withheld = false;           // ring producer: the step's copies were not issued (may_issue)
    int issues = 0, reads = 0;
    int turn = -1;                   // WG_TURNS: the turn this thread last waited for

    __device__ __forceinline__ Mon(const Ctl& ctl, int steps) : c(ctl), n(steps) {
        for (int s = 0; s < STAGES; ++s) issued[s] = done[s] = ready[s] = emptied[s] = -1;
        u32* words = reinterpret_cast<u32*>(&mon_shared);
        for (int i = threadIdx.x; i < (int)(sizeof(MonBlock) / 4); i += blockDim.x) words[i] = 0;
        if (threadIdx.x == 0) {
            MonLog* log = mon_log(c);
            log->magic = MON_MAGIC;
            log->version = MON_VERSION;
            log->capacity = MON_RECORDS;
            log->mech = MECH;
            log->stages = STAGES;
            log->consumers = READERS;
            log->threads = THREADS;
            if (log->trail != 0U) {  // every block: the first to fault may be any
                MonTrail* t = reinterpret_cast<MonTrail*>(log->trail);
                t->mech = MECH;
                t->stages = STAGES;
                t->consumers = READERS;
                t->threads = THREADS;
                __threadfence_system();
                *reinterpret_cast<volatile u32*>(&t->magic) = MON_MAGIC;
            }
        }
        __syncthreads();  // the monitor's own, before any of the pipeline's: it orders nothing of theirs
    }
    __device__ __forceinline__ void report(u32 rule, int s, int k, int a = 0, int b = 0, int cc = 0) const {
        mon_report(c, rule, s, k, k < 0 ? 0U : mon_phase(k), a, b, cc);
    }
    __device__ __forceinline__ static volatile u32& shared(u32& word) { return *const_cast<volatile u32*>(&word); }

    // An mbarrier is used: it must be initialised, by this thread or before a block barrier it passed.
    __device__ __forceinline__ void bar_used(int id, int k) const {
        const int s = id % STAGES, kind = id / STAGES;
        if (shared(mon_shared.bar_count[id]) == 0U) report(MON_INIT_MISSING, s, k, kind);
        else if (shared(mon_shared.bar_owner[id]) != threadIdx.x && shared(mon_shared.bar_epoch[id]) >= epoch)
            report(MON_INIT_UNSYNCED, s, k, kind, (int)shared(mon_shared.bar_owner[id]));
    }
#else
    __device__ __forceinline__ Mon(const Ctl&, int) {}
#endif

    // A block barrier (bar.sync): the one operation that orders every thread's past before every
    // thread's future.
    __device__ __forceinline__ void sync() {
        __syncthreads();
#if MONITOR
        ++epoch;
#endif
    }

    // This thread starts step k's copies into slot s. A refill (k >= STAGES) needs its protocol's
    // acquire: the mbarrier ring's wait on empty[s] for step k - STAGES, cuda::pipeline's
    // producer_acquire, elsewhere this thread's own read of step k - STAGES followed by a block
    // barrier; and every reader of step k - STAGES must have released it.
    __device__ __forceinline__ void issue(int k, int s) {
#if MONITOR
        ++issues;
        if (k >= n) report(MON_ISSUE_PAST_END, s, k, n);
        if (MECH == MECH_MCA_BARRIER) bar_used(s, k);  // the copies complete on the slot's barrier
#if MECH == MECH_MCA_PIPELINE
        if (acquired <= stages_committed) report(MON_REFILL_UNACQUIRED, s, k, (int)acquired, (int)stages_committed);
#endif
        if (k >= STAGES) {
#if MECH == MECH_BULK || MECH == MECH_TMA
            if (emptied[s] != k - STAGES) report(MON_REFILL_UNACQUIRED, s, k, emptied[s]);
#elif MECH != MECH_MCA_PIPELINE
            if (done[s] != k - STAGES || done_epoch[s] == epoch)
                report(MON_REFILL_UNACQUIRED, s, k, done[s], (int)done_epoch[s], (int)epoch);
#endif
            const u32 before = READERS * (u32)(k / STAGES - 1), rel = shared(mon_shared.released[s]);
            if (rel < before + READERS) report(MON_REFILL_EARLY, s, k, rel > before ? (int)(rel - before) : 0, READERS);
        }
        issued[s] = k;
#if MECH == MECH_SYNC || MECH == MECH_REGPREFETCH
        ready[s] = k;  // the store is its own completion; the next block barrier publishes it
        ready_epoch[s] = epoch;
#elif MECH == MECH_CPASYNC
        group[s] = committed;
#endif
        atomicMax(&mon_shared.held[s], (u32)k + 1U);
#endif
    }

    // cp.async.commit_group and wait_group N: the groups below committed - N are complete, and
    // with them the step each slot holds if its group is among them.
    __device__ __forceinline__ void committed_group() {
#if MONITOR
        ++committed;
#endif
    }
    __device__ __forceinline__ void waited_groups(int N) {
#if MONITOR
        wait_committed = committed;
        wait_n = N;
        for (int s = 0; s < STAGES; ++s)
            if (issued[s] >= 0 && ready[s] != issued[s] && (int)group[s] < (int)committed - N) {
                ready[s] = issued[s];
                ready_epoch[s] = epoch;
            }
#endif
    }

    // cuda::pipeline's four operations (stage j holds step j: only existing steps take a stage).
    __device__ __forceinline__ void pipeline_acquired() {
#if MONITOR
        ++acquired;
#endif
    }
    __device__ __forceinline__ void pipeline_committed() {
#if MONITOR
        ++stages_committed;
#endif
    }
    __device__ __forceinline__ void pipeline_waited() {
#if MONITOR
        const int j = (int)stages_waited++;
        ready[j % STAGES] = j;
#endif
    }
    __device__ __forceinline__ void pipeline_released() {
#if MONITOR
        const int j = (int)stages_released++, s = j % STAGES;
        if (done[s] != j) report(MON_RELEASE_UNREAD, s, j, done[s]);
#endif
    }

    // mbarrier operations: init (by one thread) and the fence that shows inits to the async proxy;
    // a wait that returned on phase `parity` of barrier id for step j; a memcpy_async slot
    // barrier's arrive_and_wait, which completes the step this thread issued on it.
    __device__ __forceinline__ void inited(int id, int count) {
#if MONITOR
        mon_shared.bar_owner[id] = threadIdx.x;
        mon_shared.bar_epoch[id] = epoch;
        shared(mon_shared.bar_count[id]) = (u32)count + 1U;
        inits |= 1U << id;
        if (count != mon_arrivals(id)) report(MON_INIT_COUNT, id % STAGES, -1, id / STAGES, count, mon_arrivals(id));
#endif
    }
    __device__ __forceinline__ void fenced() {
#if MONITOR
        mon_shared.fence_owner = threadIdx.x;
        mon_shared.fence_epoch = epoch;
        shared(mon_shared.fenced) = inits;
#endif
    }
    __device__ __forceinline__ void waited(int id, u32 parity, int j, bool ok) {
#if MONITOR
        bar_used(id, j);
        if (!ok) return;  // timed out: reported as such
        const int s = id % STAGES;
        if (parity != mon_phase(j)) mon_report(c, MON_WAIT_PARITY, s, j, parity, (int)mon_phase(j), id / STAGES);
        if (id < STAGES) ready[s] = j;
        else emptied[s] = j;
#endif
    }
    __device__ __forceinline__ void arrived(int s, int k) {
#if MONITOR
        bar_used(s, k);
        ready[s] = issued[s];
#endif
    }

    // The ring's producer: full[s] armed for step k with `bytes` announced (0: a plain arrive), a
    // copy of `bytes` completing on it, and (by the whole warp, after its copies) the check that
    // the copies bring what was announced.
    __device__ __forceinline__ void armed(int s, int k, int bytes) {
#if MONITOR
        bar_used(s, k);
        announced = bytes;
#endif
    }
    // By the whole warp, once full[s] is armed and before step k's copies, which will bring
    // `bytes`: whether to issue them. The one rule acted on: copies full[s] was not told of
    // would drive its transaction count past zero, and that can wedge the copy engine or fault
    // the context, so a monitored build records the mismatch and withholds them; the waits on
    // full[s] then time out (or its phase completes empty), and the launch ends.
    __device__ __forceinline__ bool may_issue(int s, int k, int bytes) {
#if MONITOR
        const int said = __shfl_sync(0xffffffffU, announced, 0);
        withheld = said != bytes;
        if ((threadIdx.x & 31) == 0 && withheld) report(MON_TX_MISMATCH, s, k, said, bytes);
        return !withheld;
#else
        return true;
#endif
    }
    __device__ __forceinline__ void copied(int s, int k, int bytes) {
#if MONITOR
        bar_used(s, k);
        const u32 fenced = shared(mon_shared.fenced);
        if (!((fenced >> s) & 1U) || (shared(mon_shared.fence_owner) != threadIdx.x && shared(mon_shared.fence_epoch) >= epoch))
            report(MON_FENCE_MISSING, s, k);
        brought += bytes;
#endif
    }
    __device__ __forceinline__ void published(int s, int k) {
#if MONITOR
        int total = brought;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffU, total, o);
        const int said = __shfl_sync(0xffffffffU, announced, 0);
        if ((threadIdx.x & 31) == 0 && total != said && !withheld) report(MON_TX_MISMATCH, s, k, said, total);
        brought = 0;
        withheld = false;
#endif
    }

    // The ring's consumer warp releases slot s after step k (its lane 0 arrives on empty[s] of
    // `ctas` CTAs of its cluster).
    __device__ __forceinline__ void released(int s, int k, int ctas) {
#if MONITOR
        bar_used(STAGES + s, k);
        if (done[s] != k) report(MON_RELEASE_UNREAD, s, k, done[s]);
        if (ctas != CLUSTER) report(MON_RELEASE_PARTIAL, s, k, ctas, CLUSTER);
#endif
    }

    // A consumer thread starts and ends reading step k from slot s (direct: its tile in place).
    __device__ __forceinline__ void read(int k, int s) {
#if MONITOR && MECH != MECH_DIRECT
        if (MON_THREAD_ISSUED && issued[s] != k) {
            report(MON_SLOT_HOLDS_OTHER, s, k, issued[s], 0);
            return;
        }
        if (ready[s] != k) {
            if (MECH == MECH_CPASYNC) report(MON_READ_INCOMPLETE, s, k, (int)group[s], (int)wait_committed, wait_n);
            else report(MON_READ_UNWAITED, s, k, ready[s]);
        } else if (MON_BARRIER_PUBLISHED && ready_epoch[s] >= epoch) {
            report(MON_READ_UNPUBLISHED, s, k, (int)ready_epoch[s], (int)epoch);
        }
#endif
    }
    // `later`: the wgmma groups committed after step k's that may still run (MMA_LAG at a late release).
    __device__ __forceinline__ void read_done(int k, int s, u32 later = 0) {
#if MONITOR
        ++reads;
#if MECH != MECH_DIRECT
        done[s] = k;
        done_epoch[s] = epoch;
        atomicAdd(&mon_shared.released[s], 1U);
        __threadfence_block();  // before the release that shows it to the producer
        const u32 held = shared(mon_shared.held[s]);
        if (held > (u32)k + 1U) report(MON_SLOT_HOLDS_OTHER, s, k, (int)held - 1, 1);
        const u32 pending = mon_shared.wg_pending[threadIdx.x];
        if (pending > later) report(MON_WGMMA_INFLIGHT, s, k, (int)pending);
#endif
#endif
    }

    // WG_TURNS: this thread waited for turn t, or begins reading turn t at step k; a turn read
    // with no wait for it is a sequence rule (a warpgroup whose MMAs do not wait for the other's
    // turn to end computes the same sums, so only the monitor sees the turns run together).
    __device__ __forceinline__ void turn_waited(int t) {
#if MONITOR
        turn = t;
#endif
    }
    __device__ __forceinline__ void turn_began(int t, int k) const {
#if MONITOR
        if (turn != t) report(MON_TURN_UNWAITED, -1, k, t, turn);
#endif
    }

    // The end of this thread's walk: a producer issued every step, once, and a consumer read
    // `due` steps (every step, or those of its warpgroup's turns), once.
    __device__ __forceinline__ void drain(bool producer, bool consumer, int due = -1) {
#if MONITOR
        if (due < 0) due = n;
        if (producer && issues != n) report(MON_DRAIN, -1, n, issues, n, ROLE_PRODUCER);
        if (consumer && reads != due) report(MON_DRAIN, -1, n, reads, due, ROLE_CONSUMER);
        MonLog* log = mon_log(c);
        atomicAdd(&log->reads, (u32)reads);
        if (threadIdx.x == 0) atomicAdd(&log->blocks, 1U);
#endif
    }
};

// A copy of `bytes` from src against the workload's copy plan (plan_src for unit i of step k,
// plan_row for row i). Inside the data it reads all `full` bytes of the plan's address; past an
// edge it reads nothing of the tensor: 0 bytes, or the zero source. The pointers are compared only
// where the plan reads: past an edge NVRTC 13.0 may hand on a source that differs from what the
// step computed (seen: a null pointer plus the unit's offset) when the copy reads nothing from it.
template <bool ROW, class W>
__device__ __forceinline__ void mon_source(const W& w, int k, int i, const char* src, u32 bytes, u32 full) {
#if MONITOR
    if constexpr (W::PLAN_CHECKED) {
        MonPlace at;
        const char* plan;
        if constexpr (ROW) plan = w.plan_row(k, i, at);
        else plan = w.plan_src(k, i, at);
        const char* zeros = nullptr;
        if constexpr (W::ZERO_FILL) zeros = reinterpret_cast<const char*>(w.zero_src());
        const bool reads = bytes != 0U && (zeros == nullptr || src != zeros);
        const int how = at.past ? (reads ? MON_PLAN_PAST : -1) : !reads ? MON_PLAN_SKIPPED : bytes != full || src != plan ? MON_PLAN_ELSEWHERE : -1;
        if (how >= 0) mon_report(w.ctl(), MON_TAIL_READ, -1, k, mon_phase(k), at.tensor, at.row, at.col, how, at.rows, at.cols);
    }
#endif
}

// ---- the protocol operations: each its PTX, and what the monitor records of it ----

__device__ __forceinline__ void group_commit(Mon& m) {
    cp_async_commit();
    m.committed_group();
}
template <int N>
__device__ __forceinline__ void group_wait(Mon& m) {
    cp_async_wait<N>();
    m.waited_groups(N);
}

__device__ __forceinline__ void bar_init(Mon& m, u64* bar, int id, u32 count) {
    mbar_init(bar, count);
    m.inited(id, (int)count);
}
__device__ __forceinline__ void bar_fence(Mon& m) {
    fence_mbar_init();
    m.fenced();
}
