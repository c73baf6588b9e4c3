// What every pipeline shares besides its PTX: the build switches, the control codes, the launch's
// control block (timeline buffer, status word, wait bound, stress seed), stress perturbation,
// timeline events and bounded mbarrier waits. Compiled out unless a build asks for them.
#pragma once
#include "common/ptx.cuh"

// Set by tilepipe with -D (defaults: a clean build):
//   STRESS (bit 1: sleep at the producer's edge, bit 2: at the consumer's)   TRACE_TILES (0: no timeline)
//   CONTROL (a deliberately broken protocol step, 0: none)   ONLY (stage probes, below)
//   MONITOR (1: the protocol monitor, common/monitor.cuh, logging after Ctl::status's timeout words)
//   CLUSTER (CTAs of a cluster, below)
//   L2_EVICT_LAST (1: a row build's staged copies, cp.async.cg, bulk and TMA, mark the lines they
//   bring into L2 evict-last, the policy the direct builds' loads carry)
#ifndef CONTROL
#define CONTROL 0
#endif
#ifndef STRESS
#define STRESS 0
#endif
#ifndef TRACE_TILES
#define TRACE_TILES 0
#endif
// ONLY 1: copy stage alone (the compute body returns at once); 2: compute stage alone (one tile
// loaded once, computed for every tile). Model probes for the stage times, never validated results.
#ifndef ONLY
#define ONLY 0
#endif
#ifndef L2_EVICT_LAST
#define L2_EVICT_LAST 0
#endif
#ifndef MONITOR
#define MONITOR 0
#endif
// CTAs of a thread-block cluster that share each step's copies through TMA multicast (1: none)
#ifndef CLUSTER
#define CLUSTER 1
#endif

#define CTL_SKIP_WAIT 1          // consumer reads a slot without waiting for its copy
#define CTL_EARLY_RELEASE 2      // slot handed back before every reader finished
#define CTL_OVERFILL 3           // producer refills the slot being read (one tile more in flight than slots)
#define CTL_COMMIT_AFTER_WAIT 4  // cp.async: the wait runs before the group it should cover is committed
#define CTL_WRONG_PARITY 5       // mbarrier: consumer waits on the other phase parity
#define CTL_NO_EXPECT_TX 6       // mbarrier: producer arrives without announcing the transaction bytes
#define CTL_DRAIN_NO_COMMIT 7    // cp.async: no empty group past the last tile, so draining waits cover too few
#define CTL_NO_BARRIER 8         // cp.async: no bar.sync between the wait and the refill of the slot just read
#define CTL_WAIT_SHORT 9         // cp.async: wait_group one higher than the protocol's, so the step read may be in flight
#define CTL_TX_SHORT 10          // mbarrier: expect_tx announces 16 bytes fewer than the copies bring
#define CTL_TX_LONG 11           // mbarrier: expect_tx announces 16 bytes more than the copies bring (never completes)
#define CTL_RELEASE_LOCAL 12     // cluster: a consumer releases its own CTA's slot, not the partner's whose multicasts fill it too
#define CTL_STORE_UNFENCED 13    // TMA store: the staged tile is stored with no fence.proxy.async after the threads' writes
#define CTL_NO_RESCALE 14        // attention: O is not rescaled when a row's maximum moves (a numerical control)
#define CTL_MASK_SHIFTED 15      // attention: the causal mask shows each query one key more (a numerical control)
#define CTL_WINDOW_SHIFT 16      // row windows: a row that starts inside a chunk is read one element late in its slot (numerical)
#define CTL_WINDOW_UNSHIFTED 17  // row windows: a row that starts inside a chunk read from its window's start (numerical)
#define CTL_TURN_SKIPPED 18      // turns: a consumer warpgroup reads its turn's steps without waiting for the other's turn to end

// The part of every workload's Params that the pipeline itself uses. The host mirrors it
// (engine::Ctl); both sides assert its size.
struct Ctl {
    u64* trace;          // timeline records (TRACE_TILES > 0)
    u32* status;         // [0] set on a timed-out wait; [1..5] block, stage, parity, role, step k; a monitor build's log from [8]
    u64 timeout_ns;      // bound on every mbarrier wait
    u32 seed;            // stress perturbation seed
    u32 trace_blocks;    // blocks that record a timeline
};
static_assert(sizeof(Ctl) == 32, "host and device disagree on Ctl");

#define ROLE_PRODUCER 1
#define ROLE_CONSUMER 2

// One per-thread copy as a workload's step describes it: `bytes` (COPY_BYTES, or 0 for a unit past
// the data's edge, which lands as zeros) read from src (past an edge never read, and memcpy_async,
// which cannot zero-fill, reads the workload's zero source instead). A pipeline copies what this
// says and nothing else, and the monitor checks it.
struct CopyUnit {
    const char* src;
    u32 bytes;
};

// Where a copy unit lies in its tensor, as a workload's copy plan says (plan_src, for the monitor):
// tensor (0: X, 1: A, 2: B), row and column (elements), whether it lies past an edge (then it reads
// nothing and lands as zeros), and the tensor's rows and columns.
struct MonPlace {
    int tensor, row, col, past, rows, cols;
};

__device__ __forceinline__ u32 mix(u32 h) {
    h ^= h >> 16;
    h *= 0x7feb352dU;
    h ^= h >> 15;
    h *= 0x846ca68bU;
    h ^= h >> 16;
    return h;
}

// The protocol edges a stress build sleeps at. A launch sleeps at some of them, chosen by its seed
// (one plan per launch, so runs with different seeds open different windows), in a pattern of
// warps the seed also picks: a quarter of the (warp, step)s at random, one warp of each block at
// every step (it falls behind the others), every warp but that one (it runs ahead), or every warp;
// with sleeps up to 0.5, 4 or 32 us.
#define EDGE_ACQUIRE 0        // producer: before it acquires a slot and issues a step into it
#define EDGE_READ 1           // consumer: between the wait for a step and its first read
#define EDGE_COMPUTE 2        // consumer: inside the compute body, between its passes over the slot
#define EDGE_RELEASE 3        // consumer: between its last read of a step and the slot's release
#define EDGE_AFTER_RELEASE 4  // consumer: after the release, before its next wait
#define EDGES 5

__device__ __forceinline__ void perturb(const Ctl& c, int k, int edge) {
#if STRESS
    if (!(STRESS & (edge == EDGE_ACQUIRE ? ROLE_PRODUCER : ROLE_CONSUMER))) return;
    const u32 plan = mix(c.seed ^ 0x2545F491U);
    const u32 edges = plan & ((1U << EDGES) - 1U);
    if (!(((edges ? edges : (1U << EDGES) - 1U) >> edge) & 1U)) return;
    const u32 warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    const u32 h = mix(c.seed ^ mix(blockIdx.x * 0x9E3779B9U + k) ^ (warp * 0x85EBCA6BU) ^ edge);
    const u32 slow = mix(c.seed ^ (blockIdx.x * 0x27D4EB2FU)) % warps;
    const u32 who = (plan >> EDGES) & 3U;
    const bool sleep = who == 0 ? (h & 3U) == 0U : who == 1 ? warp == slow : who == 2 ? warp != slow : true;
    const u32 span = 511U << (3U * ((plan >> (EDGES + 2)) % 3U));  // 0.5, 4 or 32 us at most
    if (sleep) __nanosleep(64U + ((h >> 8) & span));
#endif
}

#define EV_ISSUE 0
#define EV_READY 1
#define EV_COMPUTE_BEGIN 2
#define EV_COMPUTE_END 3
#define EV_RELEASE 4
// Then the compute body's own events, BODY_EVENTS per consumer warpgroup g < 2 from EV_BODY + g x
// BODY_EVENTS (attention's wgmma body: its MMAs issued and retired around the softmax).
#define EV_BODY 5
#define BODY_EVENTS 5
#define EV_COUNT (EV_BODY + 2 * BODY_EVENTS)

// Records %globaltimer (ns, common to all SMs) and clock64 (cycles of this SM, fine-grained) for
// event ev of the k-th step of a sampled block, by one thread per role.
__device__ __forceinline__ void trace(const Ctl& c, int k, int ev, bool recorder) {
#if TRACE_TILES
    if (recorder && blockIdx.x < c.trace_blocks && k < TRACE_TILES) {
        u64* slot = c.trace + (((u64)blockIdx.x * TRACE_TILES + k) * EV_COUNT + ev) * 2;
        slot[0] = global_timer_ns();
        slot[1] = clock64();
    }
#endif
}

__device__ __forceinline__ void report_timeout(const Ctl& c, int stage, u32 parity, int role, int k) {
    if (atomicCAS(&c.status[0], 0U, 1U) == 0U) {
        c.status[1] = blockIdx.x;
        c.status[2] = stage;
        c.status[3] = parity;
        c.status[4] = role;
        c.status[5] = k;
        __threadfence();
    }
}

__device__ __forceinline__ bool aborted(const Ctl& c) { return *reinterpret_cast<volatile u32*>(c.status) != 0U; }

// Bounded wait. A lost completion sets the launch's abort flag (with where it happened); from then
// on every wait in every block returns at once, so all threads run to the end of their loops and
// no barrier is left waiting on a thread that quit. Such a launch is reported as a timeout.
// k: the block's step the wait is for, reported with a timeout.
__device__ __forceinline__ bool wait_phase(const Ctl& c, u64* bar, u32 parity, int stage, int role, int k) {
    if (mbar_try_wait(bar, parity)) return true;
    const u64 start = global_timer_ns();
    while (!mbar_try_wait(bar, parity)) {
        if (aborted(c)) return false;
        if (global_timer_ns() - start > c.timeout_ns) {
            report_timeout(c, stage, parity, role, k);
            return false;
        }
    }
    return true;
}
