// The attention compute body on Hopper's wgmma (sm_90a), a consumer warpgroup per 64 query rows:
// per key tile, S = Q K^T as wgmma m64nBNk16 with Q's fragments from registers and K's rows
// through a K-major descriptor of the slot's 128-byte-swizzled panels; the online softmax
// (attention/softmax.cuh); then O += P V as wgmma m64nDk16 with P from registers and V through an
// MN-major descriptor. wgmma.wait_group 0 before the softmax reads S, and again before the slot is
// released, so no MMA still reads a slot the producer refills (mma_commit/mma_wait: the monitor
// counts the groups in flight at each release). PINGPONG (two consumer warpgroups): the
// warpgroups take turns at S = Q K^T, a turn ending when the warpgroup's S has retired, so one's
// softmax runs while the other's S does (FlashAttention-3's ping-pong); the order of each
// warpgroup's own sums is unchanged. (An arrival between P V's issue and its wait makes ptxas
// serialise every wgmma of the kernel, C7514, as if it read the accumulators in flight.)
// RELEASE_LAG (FlashAttention-3's intra-warpgroup overlap): step k issues S = Q K_k^T, then the
// previous tile's O += P V, waits for S alone and runs tile k's softmax while P V runs, then
// waits for P V and rescales O; the ring releases the previous tile's slot after it (and the
// last tile's P V runs in flush()). O sees the same sums in the same order as without it.
// PERSISTENT (with RELEASE_LAG): a block walks query tiles while the producer runs on into the
// next tile's keys; the last tile's final S retired, the consumers load the next tile's rows of
// Q, and the first step of the new tile ends the last one (its final P V, O stored).
#pragma once

#include "attention/softmax.cuh"

static_assert(CONSUMERS % 128 == 0, "wgmma runs on whole warpgroups");
static_assert(MECH == MECH_TMA, "wgmma reads the slot through the async proxy, which TMA's writes are in");
static_assert(!PINGPONG || (WS && CONSUMERS == 256), "ping-pong takes turns between two consumer warpgroups");
static_assert(!PERSISTENT || (WS && RELEASE_LAG && !PINGPONG), "a persistent block is built on the warp-specialised ring with the softmax beside P V");

// The timeline's body events of a key tile, per consumer warpgroup (common/hooks.cuh): S = Q K^T
// issued and retired (the softmax begins), the softmax ended, P V issued and retired.
#define EV_S_ISSUED 0
#define EV_S_RETIRED 1
#define EV_SOFTMAX_END 2
#define EV_PV_ISSUED 3
#define EV_PV_RETIRED 4

struct Attention : AttnRows {
    u32 pa[SN / 2][4];  // P of the last tile's softmax, P V's A operand (read by the MMA until it retires)
    u32 sv;             // that tile's V in its slot

    __device__ __forceinline__ Attention(const AttnParams& params) : AttnRows(params) {}

#if PINGPONG
    // Warpgroup 0 takes the first turn: warpgroup 1 gives it before its own first wait.
    __device__ __forceinline__ void begin() {
        AttnRows::begin();
        if (threadIdx.x / 128 == 1) named_barrier_arrive(TURN_BAR, 256);
    }
#endif

    template <int NT, class T>
    __device__ __forceinline__ static void fence_registers(T (&x)[NT][4]) {
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) fence_operand(x[j][e]);
    }

    // Body event ev of key tile k, by each warpgroup's first thread.
    __device__ __forceinline__ void mark(int k, int ev) const {
        trace(p.ctl, k, EV_BODY + (int)threadIdx.x / 128 * BODY_EVENTS + ev, threadIdx.x % 128 == 0);
    }

    template <class Between>
    __device__ __forceinline__ void consume(const unsigned char* slot, int k, int ctid, Between between) {
        between();
        perturb(p.ctl, k, EDGE_COMPUTE);
#if PERSISTENT
        if (computing.k == 0 && k > 0) next_rows(k, ctid);
        const int kt = computing.k;  // the key tile within the query tile
#else
        const int kt = k;
#endif
        const u32 sk = smem_addr(slot);
        float s[SN][4];
#pragma unroll
        for (int j = 0; j < SN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[j][e] = 0.0f;  // the first slice's scale_d 0 ignores them; defined all the same
        // S = Q K^T: head-dimension slice kk is 32 bytes into panel kk / 4 of K's rows
#if PINGPONG
        const int g = ctid / 128;
        named_barrier_sync(TURN_BAR + g, 256);
#endif
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
            wgmma_rs<0>(s, qf[kk], smem_desc_sw128(sk + kk / 4 * BN * 128 + kk % 4 * 32, 16), kk > 0);
        mma_commit();
        mark(k, EV_S_ISSUED);
#if RELEASE_LAG
        if (kt > 0) pv(k - 1);
#endif
#if RELEASE_LAG
        if (kt > 0) mma_wait<1>();  // S; the previous tile's P V runs on beside the softmax
        else mma_wait<0>();
#else
        mma_wait<0>();
#endif
        fence_registers(s);
#if PERSISTENT
        // S has read Q for the last time in this query tile: the next tile's rows load into its
        // registers while this softmax and the last P V run, not when the next tile starts
        if (kt == computing.steps - 1) {
            const Work next = work(computing.i + 1);
            if (next.tile < p.heads * p.q_tiles) load_q(next.head, next.q0);
        }
#endif
#if PINGPONG
        // the other's turn; warpgroup 1's last is not taken (each wait pairs with one arrival)
        named_barrier_arrive_if(g == 0 || k + 1 < steps(), TURN_BAR + 1 - g, 256);
#endif
        mark(k, EV_S_RETIRED);
        float scale[2];
        scores(s, kt, ctid & 31, scale);
        mark(k, EV_SOFTMAX_END);
#if RELEASE_LAG
        mma_wait<0>();
        if (kt > 0) mark(k - 1, EV_PV_RETIRED);
        fence_registers(o);
        fence_registers(pa);  // read by the P V just retired: rewritten only after it
#endif
        rescale(scale);
        // P as A fragments for P V over this tile's V
#pragma unroll
        for (int t = 0; t < SN / 2; ++t) p_fragment(pa[t], s, t);
        sv = sk + KvTile::BYTES;
#if !RELEASE_LAG
        last_pv(k);
#endif
#if PERSISTENT
        step_on(computing);
#endif
    }

    // O += P V of key tile k: keys 16t..16t+15 are V's rows 16t.., its panels of 64 columns BN x
    // 128 bytes apart
    __device__ __forceinline__ void pv(int k) {
        fence_registers(o);
        wgmma_fence();
#pragma unroll
        for (int t = 0; t < SN / 2; ++t) wgmma_rs<1>(o, pa[t], smem_desc_sw128(sv + t * 16 * 128, BN * 128), 1);
        mma_commit();
        mark(k, EV_PV_ISSUED);
        fence_registers(pa);
    }

    // Step k's P V, retired.
    __device__ __forceinline__ void last_pv(int k) {
        pv(k);
        mma_wait<0>();
        mark(k, EV_PV_RETIRED);
        fence_registers(o);
    }

#if RELEASE_LAG
    // The last tile's P V, after its softmax.
    __device__ __forceinline__ void flush(int) { last_pv(steps() - 1); }
#endif

#if PERSISTENT
    // Step k starts the block's next query tile: the last one's final P V (step k - 1's, whose
    // slot the ring releases after this step), its O stored, then the new tile's rows (its Q
    // already loaded, at the last one's final S).
    __device__ __forceinline__ void next_rows(int k, int ctid) {
        last_pv(k - 1);
        finish(ctid);
        head = computing.head;
        q0 = computing.q0;
        reset();
    }
#endif
};
