// rmsnorm: Y = gelu(X * rsqrt(mean(X^2) + eps) * gamma) over row tiles of a strided activation view.
//
// A persistent block walks tiles first, first + G, first + 2G, ... (G = gridDim.x). Every movement
// mechanism feeds the same compute body (compute_tile), so timings compare movement alone.
//
// Set by tilepipe with -D:
//   DTYPE 0 f32 | 1 f16 | 2 bf16      HIDDEN (elements per row, HIDDEN * size % 16 == 0)
//   TILE_ROWS   CONSUMERS (threads that compute)   STAGES (slots)
//   MECH (below)   COPY_BYTES (4 | 8 | 16)   CP_CG (1: cp.async.cg, 0: .ca)
//   MCA_FORM (memcpy_async size/type form)   CONTROL (a deliberately broken protocol step, 0: none)
//   STRESS (bit 1: sleep in the producer, bit 2: in the consumer)   TRACE_TILES (0: no timeline)
//   WS (1: a dedicated producer warp for the mbarrier ring)   ONLY (stage probes, below)

#include "ptx.cuh"

#define MECH_SYNC 0
#define MECH_REGPREFETCH 1
#define MECH_CPASYNC 2
#define MECH_MCA_PIPELINE 3
#define MECH_MCA_BARRIER 4
#define MECH_BULK 5
#define MECH_TMA 6

// WS: one extra warp is the producer (warp specialisation), only for the mbarrier ring.
#ifndef WS
#define WS 0
#endif
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
#ifndef EPS
#define EPS 1e-6f
#endif

#define CTL_SKIP_WAIT 1          // consumer reads a slot without waiting for its copy
#define CTL_EARLY_RELEASE 2      // slot handed back before every reader finished
#define CTL_OVERFILL 3           // producer refills the slot being read (one tile more in flight than slots)
#define CTL_COMMIT_AFTER_WAIT 4  // cp.async: the wait runs before the group it should cover is committed
#define CTL_WRONG_PARITY 5       // mbarrier: consumer waits on the other phase parity
#define CTL_NO_EXPECT_TX 6       // mbarrier: producer arrives without announcing the transaction bytes
#define CTL_DRAIN_NO_COMMIT 7    // cp.async: no empty group past the last tile, so draining waits cover too few

#if DTYPE == 0
typedef float elem_t;
#elif DTYPE == 1
#include <cuda_fp16.h>
typedef __half elem_t;
#else
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem_t;
#endif

#define ESIZE ((int)sizeof(elem_t))
#define VEC (16 / ESIZE)                                  // elements per 16-byte vector
#define NVEC_ROW (HIDDEN / VEC)                           // 16-byte vectors per row
#define NV ((NVEC_ROW + CONSUMERS - 1) / CONSUMERS)       // vectors per consumer thread per row
#define NWARPS_C (CONSUMERS / 32)
#define THREADS (CONSUMERS + (WS ? 32 : 0))
#define ROW_BYTES (HIDDEN * ESIZE)
#define SLOT_BYTES (((TILE_ROWS * ROW_BYTES) + 127) / 128 * 128)
#define UNITS_ROW (ROW_BYTES / COPY_BYTES)                // copies of COPY_BYTES per row
#define UNITS_PER_THREAD ((TILE_ROWS * UNITS_ROW + CONSUMERS - 1) / CONSUMERS)

static_assert(HIDDEN % VEC == 0, "a row must be a whole number of 16-byte vectors");
static_assert(CONSUMERS % 32 == 0, "consumers come in whole warps");
static_assert(ROW_BYTES % COPY_BYTES == 0, "a row must be a whole number of copies");
static_assert(SLOT_BYTES % 128 == 0, "every slot starts 128-byte aligned (TMA boxes need it)");

// Kernel parameters, passed by value as a __grid_constant__ so the tensor map lives in param space.
// The host mirrors this layout (gpu::launch::KernelParams); both sides assert its size.
struct __align__(64) Params {
    u64 tensor_map[16];      // CUtensorMap (TMA only)
    const elem_t* x;         // first element of the view (base + offset)
    elem_t* y;               // dense [tokens x HIDDEN]
    const elem_t* gamma;     // [HIDDEN]
    u64* trace;              // timeline records (TRACE_TILES > 0)
    u32* status;             // [0] set on a timed-out wait; [1..5] block, stage, parity, role, tile k
    long long row_stride;    // elements between rows of x
    u64 timeout_ns;          // bound on every mbarrier wait
    int tokens;
    int ntiles;
    u32 seed;                // stress perturbation seed
    u32 trace_blocks;        // blocks that record a timeline
};
static_assert(sizeof(Params) == 256, "host and device disagree on Params");

extern __shared__ __align__(128) unsigned char dyn_smem[];

__device__ __forceinline__ elem_t* slot_ptr(int s) { return reinterpret_cast<elem_t*>(dyn_smem + s * SLOT_BYTES); }

__device__ __forceinline__ int tile_rows(const Params& p, int t) {
    const int r = p.tokens - t * TILE_ROWS;
    return r < TILE_ROWS ? r : TILE_ROWS;
}

__device__ __forceinline__ const elem_t* tile_src(const Params& p, int t) {
    return p.x + (long long)t * TILE_ROWS * p.row_stride;
}

// Copy unit u of tile t: row u / UNITS_ROW, byte offset (u % UNITS_ROW) * COPY_BYTES.
__device__ __forceinline__ const char* unit_src(const Params& p, int t, int u) {
    return reinterpret_cast<const char*>(tile_src(p, t) + (long long)(u / UNITS_ROW) * p.row_stride) +
           (u % UNITS_ROW) * COPY_BYTES;
}

// Slots hold rows densely, so copy unit u lands u * COPY_BYTES into its slot.
__device__ __forceinline__ char* unit_dst(int s, int u) {
    return reinterpret_cast<char*>(slot_ptr(s)) + u * COPY_BYTES;
}

// ---- 16-byte vectors <-> floats ----

union Vec16 {
    uint4 u;
    u32 w[4];
    float f[4];
};

__device__ __forceinline__ void unpack(uint4 raw, float (&f)[VEC]) {
    Vec16 v;
    v.u = raw;
#if DTYPE == 0
#pragma unroll
    for (int i = 0; i < 4; ++i) f[i] = v.f[i];
#else
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#if DTYPE == 1
        const float2 t = __half22float2(*reinterpret_cast<const __half2*>(&v.w[i]));
#else
        const float2 t = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v.w[i]));
#endif
        f[2 * i] = t.x;
        f[2 * i + 1] = t.y;
    }
#endif
}

__device__ __forceinline__ uint4 pack(const float (&f)[VEC]) {
    Vec16 v;
#if DTYPE == 0
#pragma unroll
    for (int i = 0; i < 4; ++i) v.f[i] = f[i];
#else
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#if DTYPE == 1
        const __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
#else
        const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
#endif
        v.w[i] = *reinterpret_cast<const u32*>(&h);
    }
#endif
    return v.u;
}

// ---- perturbation and timeline hooks (compiled out unless asked for) ----

#define ROLE_PRODUCER 1
#define ROLE_CONSUMER 2

__device__ __forceinline__ u32 mix(u32 h) {
    h ^= h >> 16;
    h *= 0x7feb352dU;
    h ^= h >> 15;
    h *= 0x846ca68bU;
    h ^= h >> 16;
    return h;
}

// Random-length sleeps widen race windows; each warp draws its own so warps drift apart.
__device__ __forceinline__ void perturb(const Params& p, int k, int role) {
#if STRESS
    if (STRESS & role) {
        const u32 h = mix(p.seed ^ mix(blockIdx.x * 0x9E3779B9U + k) ^ ((threadIdx.x >> 5) * 0x85EBCA6BU) ^ role);
        if ((h & 3U) == 0U) __nanosleep(64U + ((h >> 8) & 4095U));
    }
#endif
}

#define EV_ISSUE 0
#define EV_READY 1
#define EV_COMPUTE_BEGIN 2
#define EV_COMPUTE_END 3
#define EV_RELEASE 4
#define EV_COUNT 5

// Records %globaltimer (ns, common to all SMs) and clock64 (cycles of this SM, fine-grained) for
// event ev of the k-th tile of a sampled block, by one thread per role.
__device__ __forceinline__ void trace(const Params& p, int k, int ev, bool recorder) {
#if TRACE_TILES
    if (recorder && blockIdx.x < p.trace_blocks && k < TRACE_TILES) {
        u64* slot = p.trace + (((u64)blockIdx.x * TRACE_TILES + k) * EV_COUNT + ev) * 2;
        slot[0] = global_timer_ns();
        slot[1] = clock64();
    }
#endif
}

// ---- the compute body: identical arithmetic for every mechanism ----

// tanh form: gelu(v) = v * sigmoid(2u) = v / (1 + 2^(-2u log2 e)), u = sqrt(2/pi) (v + 0.044715 v^3),
// folded to v / (1 + 2^(v (C1 + C2 v^2))): three FP32 operations, two special-function ones, one add.
#define GELU_C1 (-2.3022082f)   // -2 sqrt(2/pi) log2(e)
#define GELU_C2 (-0.10294324f)  // GELU_C1 * 0.044715
__device__ __forceinline__ float gelu(float v) {
    const float e = ex2_approx(v * fmaf(GELU_C2, v * v, GELU_C1));
    return v * rcp_approx(1.0f + e);
}

__device__ __forceinline__ void consumer_sync() { named_barrier_sync(1, CONSUMERS); }

// gamma stays packed in registers (16 bytes per vector) and is unpacked where it is used.
struct Gamma {
    uint4 v[NV];
};

__device__ __forceinline__ void load_gamma(const Params& p, int ctid, Gamma& g) {
#pragma unroll
    for (int i = 0; i < NV; ++i) {
        const int v = ctid + i * CONSUMERS;
        g.v[i] = v < NVEC_ROW ? __ldg(reinterpret_cast<const uint4*>(p.gamma) + v) : make_uint4(0, 0, 0, 0);
    }
}

struct Nothing {
    __device__ void operator()() const {}
};

// Two passes over the tile in slot: sum of squares per row, then normalise, scale, gelu, store.
// Every consumer thread must call it (it holds a consumer-wide barrier). `between` runs after the
// first pass; only the early-release control gives it work.
template <class Between = Nothing>
__device__ __forceinline__ void compute_tile(const Params& p, const elem_t* slot, int t, int k,
                                             const Gamma& g, int ctid, Between between = Between()) {
#if ONLY == 1
    return;
#endif
    __shared__ float red[2][TILE_ROWS][NWARPS_C];  // double-buffered by tile parity
    const int rows = tile_rows(p, t);
    const int warp = ctid >> 5, lane = ctid & 31;
#pragma unroll
    for (int r = 0; r < TILE_ROWS; ++r) {
        float acc = 0.0f;
        if (r < rows) {
#pragma unroll
            for (int i = 0; i < NV; ++i) {
                const int v = ctid + i * CONSUMERS;
                if (v < NVEC_ROW) {
                    float f[VEC];
                    unpack(reinterpret_cast<const uint4*>(slot + r * HIDDEN)[v], f);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) acc = fmaf(f[j], f[j], acc);
                }
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffU, acc, o);
        if (lane == 0) red[k & 1][r][warp] = acc;
    }
    consumer_sync();
    between();
    perturb(p, k, ROLE_CONSUMER);
#pragma unroll
    for (int r = 0; r < TILE_ROWS; ++r) {
        if (r < rows) {
            float ss = 0.0f;
#pragma unroll
            for (int w = 0; w < NWARPS_C; ++w) ss += red[k & 1][r][w];  // fixed order: bit-exact everywhere
            const float inv = rsqrtf(ss / (float)HIDDEN + EPS);
            elem_t* out = p.y + (long long)(t * TILE_ROWS + r) * HIDDEN;
#pragma unroll
            for (int i = 0; i < NV; ++i) {
                const int v = ctid + i * CONSUMERS;
                if (v < NVEC_ROW) {
                    float f[VEC], gf[VEC];
                    unpack(reinterpret_cast<const uint4*>(slot + r * HIDDEN)[v], f);
                    unpack(g.v[i], gf);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) f[j] = gelu(f[j] * inv * gf[j]);
                    st_global_cs_v4(reinterpret_cast<uint4*>(out) + v, pack(f));
                }
            }
        }
    }
}

// Copy unit of a thread's i-th copy. Ownership is rotated by one warp, so a thread never reads back
// what it copied itself: only the completion protocol (wait, then barrier), never one thread's own
// program order, makes a tile visible to its readers, and a broken protocol shows. Each warp still
// copies 32 adjacent units, so coalescing is unchanged.
__device__ __forceinline__ int copy_unit(int tid, int i) { return (tid + 32) % CONSUMERS + i * CONSUMERS; }

// ---- register staging: sync (S = 1) and regprefetch (S = 2) ----

struct Staged {
    uint4 v[UNITS_PER_THREAD];
};

__device__ __forceinline__ void stage_load(const Params& p, int t, int tid, Staged& st) {
    if (t >= p.ntiles) return;
    const int units = tile_rows(p, t) * UNITS_ROW;
#pragma unroll
    for (int i = 0; i < UNITS_PER_THREAD; ++i) {
        const int u = copy_unit(tid, i);
        if (u < units) st.v[i] = __ldg(reinterpret_cast<const uint4*>(unit_src(p, t, u)));
    }
}

__device__ __forceinline__ void stage_store(const Params& p, int t, int s, int tid, const Staged& st) {
    const int units = tile_rows(p, t) * UNITS_ROW;
#pragma unroll
    for (int i = 0; i < UNITS_PER_THREAD; ++i) {
        const int u = copy_unit(tid, i);
        if (u < units) *reinterpret_cast<uint4*>(unit_dst(s, u)) = st.v[i];
    }
}

#if MECH == MECH_SYNC
// ld.global -> st.shared, barrier, compute, barrier: nothing moves while the block computes.
__device__ __forceinline__ void run(const Params& p, int first, int G, int n, const Gamma& g) {
    const int tid = threadIdx.x;
    const bool rec = tid == 0;
    for (int k = 0; k < n; ++k) {
        const int t = first + k * G;
        Staged st;
        trace(p, k, EV_ISSUE, rec);
        stage_load(p, t, tid, st);
        stage_store(p, t, 0, tid, st);
        __syncthreads();
        trace(p, k, EV_READY, rec);
        trace(p, k, EV_COMPUTE_BEGIN, rec);
        compute_tile(p, slot_ptr(0), t, k, g, tid);
        trace(p, k, EV_COMPUTE_END, rec);
        __syncthreads();
        trace(p, k, EV_RELEASE, rec);
    }
}
#endif

#if MECH == MECH_REGPREFETCH
// Pre-Ampere double buffering: tile k+1 is loaded into registers while tile k is computed.
__device__ __forceinline__ void run(const Params& p, int first, int G, int n, const Gamma& g) {
    const int tid = threadIdx.x;
    const bool rec = tid == 0;
    Staged st;
    trace(p, 0, EV_ISSUE, rec);
    stage_load(p, first, tid, st);
    for (int k = 0; k < n; ++k) {
        const int t = first + k * G;
        stage_store(p, t, k & 1, tid, st);
        __syncthreads();  // publishes tile k; everyone finished tile k-1, whose slot the next store reuses
        trace(p, k, EV_READY, rec);
        trace(p, k + 1, EV_ISSUE, rec);
        stage_load(p, t + G, tid, st);
        trace(p, k, EV_COMPUTE_BEGIN, rec);
        compute_tile(p, slot_ptr(k & 1), t, k, g, tid);
        trace(p, k, EV_COMPUTE_END, rec);
        trace(p, k, EV_RELEASE, rec);
    }
}
#endif

#if MECH == MECH_CPASYNC
__device__ __forceinline__ void cpasync_issue(const Params& p, int t, int s, int tid) {
    if (t >= p.ntiles) return;  // draining: never copy past the last tile
    const int units = tile_rows(p, t) * UNITS_ROW;
#pragma unroll
    for (int i = 0; i < UNITS_PER_THREAD; ++i) {
        const int u = copy_unit(tid, i);
        if (u < units) {
#if COPY_BYTES == 16 && CP_CG
            cp_async_cg16(unit_dst(s, u), unit_src(p, t, u));
#else
            cp_async_ca<COPY_BYTES>(unit_dst(s, u), unit_src(p, t, u));
#endif
        }
    }
}

// Commits the group of tile index t. Past the last tile the group is empty and still committed, so
// that wait_group keeps counting one group per tile while the pipeline drains.
__device__ __forceinline__ void commit_tile(const Params& p, int t) {
#if CONTROL == CTL_DRAIN_NO_COMMIT
    if (t >= p.ntiles) return;
#endif
    cp_async_commit();
}

// Protocol per tile k: wait_group(STAGES-2) + bar.sync publishes tile k and proves every thread is
// done with tile k-1; only then is tile k+STAGES-1 issued into k-1's slot.
#if CONTROL == CTL_OVERFILL || CONTROL == CTL_EARLY_RELEASE
#define LEAD STAGES  // one tile more in flight than there are slots
#else
#define LEAD (STAGES - 1)
#endif

__device__ __forceinline__ void run(const Params& p, int first, int G, int n, const Gamma& g) {
    const int tid = threadIdx.x;
    const bool rec = tid == 0;
    for (int s = 0; s < LEAD; ++s) {
        perturb(p, s, ROLE_PRODUCER);
        trace(p, s, EV_ISSUE, rec);
        cpasync_issue(p, first + s * G, s % STAGES, tid);
#if CONTROL != CTL_COMMIT_AFTER_WAIT
        commit_tile(p, first + s * G);
#endif
    }
    for (int k = 0; k < n; ++k) {
        const int t = first + k * G;
#if CONTROL != CTL_SKIP_WAIT
        cp_async_wait<LEAD - 1>();
#endif
#if CONTROL == CTL_COMMIT_AFTER_WAIT
        cp_async_commit();
#endif
        __syncthreads();
        trace(p, k, EV_READY, rec);
#if CONTROL == CTL_EARLY_RELEASE
        // the slot is refilled right after the first pass, while the second pass still reads it
        trace(p, k, EV_COMPUTE_BEGIN, rec);
        compute_tile(p, slot_ptr(k % STAGES), t, k, g, tid, [&] {
            trace(p, k + LEAD, EV_ISSUE, rec);
            cpasync_issue(p, t + LEAD * G, (k + LEAD) % STAGES, tid);
            cp_async_commit();
        });
#else
        perturb(p, k + LEAD, ROLE_PRODUCER);
        trace(p, k + LEAD, EV_ISSUE, rec);
        cpasync_issue(p, t + LEAD * G, (k + LEAD) % STAGES, tid);
#if CONTROL != CTL_COMMIT_AFTER_WAIT
        commit_tile(p, t + LEAD * G);
#endif
        trace(p, k, EV_COMPUTE_BEGIN, rec);
        compute_tile(p, slot_ptr(k % STAGES), t, k, g, tid);
#endif
        trace(p, k, EV_COMPUTE_END, rec);
        trace(p, k, EV_RELEASE, rec);
    }
    cp_async_wait<0>();
}
#endif

#if MECH == MECH_MCA_PIPELINE || MECH == MECH_MCA_BARRIER
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

template <class Sync>
__device__ __forceinline__ void mca_copy_tile(const Params& p, int t, int s, Sync& sync) {
    const auto block = cooperative_groups::this_thread_block();
    if (t >= p.ntiles) return;
    const int rows = tile_rows(p, t);
    for (int r = 0; r < rows; ++r) {
        const elem_t* src = tile_src(p, t) + (long long)r * p.row_stride;
        elem_t* dst = slot_ptr(s) + r * HIDDEN;
#if MCA_FORM == 0
        cuda::memcpy_async(block, dst, src, cuda::aligned_size_t<16>(ROW_BYTES), sync);
#elif MCA_FORM == 1
        cuda::memcpy_async(block, dst, src, (size_t)ROW_BYTES, sync);
#else
        cuda::memcpy_async(block, reinterpret_cast<NotTriviallyCopyable*>(dst),
                           reinterpret_cast<const NotTriviallyCopyable*>(src), cuda::aligned_size_t<16>(ROW_BYTES),
                           sync);
#endif
    }
}
#endif

#if MECH == MECH_MCA_PIPELINE
// cuda::pipeline (block scope): producer_acquire / producer_commit, consumer_wait / consumer_release.
// Stages are acquired only for tiles that exist, so no empty stage is committed while draining.
__device__ __forceinline__ void run(const Params& p, int first, int G, int n, const Gamma& g) {
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
    auto pipe = cuda::make_pipeline(cooperative_groups::this_thread_block(), &state);
    const int tid = threadIdx.x;
    const bool rec = tid == 0;
    for (int s = 0; s < STAGES - 1 && s < n; ++s) {
        trace(p, s, EV_ISSUE, rec);
        pipe.producer_acquire();
        mca_copy_tile(p, first + s * G, s, pipe);
        pipe.producer_commit();
    }
    for (int k = 0; k < n; ++k) {
        const int t = first + k * G;
        if (k + STAGES - 1 < n) {
            perturb(p, k + STAGES - 1, ROLE_PRODUCER);
            trace(p, k + STAGES - 1, EV_ISSUE, rec);
            pipe.producer_acquire();
            mca_copy_tile(p, t + (STAGES - 1) * G, (k + STAGES - 1) % STAGES, pipe);
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        trace(p, k, EV_READY, rec);
        trace(p, k, EV_COMPUTE_BEGIN, rec);
        compute_tile(p, slot_ptr(k % STAGES), t, k, g, tid);
        trace(p, k, EV_COMPUTE_END, rec);
        pipe.consumer_release();
        trace(p, k, EV_RELEASE, rec);
    }
}
#endif

#if MECH == MECH_MCA_BARRIER
// cuda::barrier per slot: arrive_and_wait completes once every thread arrived and the copies landed;
// bar.sync before each refill proves every reader of the slot is done.
__device__ __forceinline__ void run(const Params& p, int first, int G, int n, const Gamma& g) {
    __shared__ cuda::barrier<cuda::thread_scope_block> bar[STAGES];
    const int tid = threadIdx.x;
    const bool rec = tid == 0;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) init(&bar[s], THREADS);
    }
    __syncthreads();
    for (int s = 0; s < STAGES - 1; ++s) {
        trace(p, s, EV_ISSUE, rec);
        mca_copy_tile(p, first + s * G, s, bar[s]);
    }
    for (int k = 0; k < n; ++k) {
        const int t = first + k * G;
        __syncthreads();
        perturb(p, k + STAGES - 1, ROLE_PRODUCER);
        trace(p, k + STAGES - 1, EV_ISSUE, rec);
        mca_copy_tile(p, t + (STAGES - 1) * G, (k + STAGES - 1) % STAGES, bar[(k + STAGES - 1) % STAGES]);
        bar[k % STAGES].arrive_and_wait();
        trace(p, k, EV_READY, rec);
        trace(p, k, EV_COMPUTE_BEGIN, rec);
        compute_tile(p, slot_ptr(k % STAGES), t, k, g, tid);
        trace(p, k, EV_COMPUTE_END, rec);
        trace(p, k, EV_RELEASE, rec);
    }
}
#endif

#if MECH == MECH_BULK || MECH == MECH_TMA
// mbarrier ring: full[s] completes when the copy's bytes land (expect_tx / complete_tx), empty[s]
// when every consumer warp has finished reading slot s. Tile k uses slot k % STAGES in phase
// k / STAGES of both barriers.

__device__ __forceinline__ void report_timeout(const Params& p, int stage, u32 parity, int role, int k) {
    if (atomicCAS(&p.status[0], 0U, 1U) == 0U) {
        p.status[1] = blockIdx.x;
        p.status[2] = stage;
        p.status[3] = parity;
        p.status[4] = role;
        p.status[5] = k;
        __threadfence();
    }
}

__device__ __forceinline__ bool aborted(const Params& p) { return *reinterpret_cast<volatile u32*>(p.status) != 0U; }

// Bounded wait. A lost completion sets the launch's abort flag (with where it happened); from then
// on every wait in every block returns at once, so all threads run to the end of their loops and
// no barrier is left waiting on a thread that quit. Such a launch is reported as a timeout.
// k: the block's tile the wait is for, reported with a timeout.
__device__ __forceinline__ bool wait_phase(const Params& p, u64* bar, u32 parity, int stage, int role, int k) {
    if (mbar_try_wait(bar, parity)) return true;
    const u64 start = global_timer_ns();
    while (!mbar_try_wait(bar, parity)) {
        if (aborted(p)) return false;
        if (global_timer_ns() - start > p.timeout_ns) {
            report_timeout(p, stage, parity, role, k);
            return false;
        }
    }
    return true;
}

// Issues tile k (tile index t) into slot k % STAGES, unless its slot never came back. A whole warp
// calls it: every lane waits for the slot, so no lane spins on one barrier while its warp-mates
// spin on another; lane 0 arms full[s], and for bulk the lanes share the row copies.
__device__ __forceinline__ void produce(const Params& p, u64* full, u64* empty, int t, int k) {
    if (t >= p.ntiles) return;
    const int s = k % STAGES, lane = threadIdx.x & 31;
    if (k >= STAGES && !__all_sync(0xffffffffU, wait_phase(p, &empty[s], ((k / STAGES) + 1) & 1, s, ROLE_PRODUCER, k)))
        return;
    perturb(p, k, ROLE_PRODUCER);
    trace(p, k, EV_ISSUE, lane == 0);
    if (lane == 0) {
#if CONTROL == CTL_NO_EXPECT_TX
        mbar_arrive(&full[s]);
#elif MECH == MECH_TMA
        mbar_arrive_expect_tx(&full[s], TILE_ROWS * ROW_BYTES);  // the whole box: rows past the tensor arrive zero-filled
#else
        mbar_arrive_expect_tx(&full[s], tile_rows(p, t) * ROW_BYTES);
#endif
#if MECH == MECH_TMA
        tma_load_3d(slot_ptr(s), p.tensor_map, 0, 0, t * TILE_ROWS, &full[s]);
#endif
    }
#if MECH == MECH_BULK
    __syncwarp();  // the bytes are announced before any row copy can complete them
    for (int r = lane; r < tile_rows(p, t); r += 32)
        bulk_copy_g2s(slot_ptr(s) + r * HIDDEN, tile_src(p, t) + (long long)r * p.row_stride, ROW_BYTES, &full[s]);
#endif
}

// Consumes tile k: wait full, compute, release. After an abort it computes on whatever the slot
// holds, keeping every barrier's participants together.
__device__ __forceinline__ void consume(const Params& p, u64* full, u64* empty, int t, int k,
                                        const Gamma& g, int ctid, bool rec) {
    const int s = k % STAGES;
#if CONTROL == CTL_WRONG_PARITY
    wait_phase(p, &full[s], ((k / STAGES) + 1) & 1, s, ROLE_CONSUMER, k);
#elif CONTROL != CTL_SKIP_WAIT
    wait_phase(p, &full[s], (k / STAGES) & 1, s, ROLE_CONSUMER, k);
#endif
    trace(p, k, EV_READY, rec);
#if CONTROL == CTL_EARLY_RELEASE
    __syncwarp();
    if ((ctid & 31) == 0) mbar_arrive(&empty[s]);
#endif
    trace(p, k, EV_COMPUTE_BEGIN, rec);
    compute_tile(p, slot_ptr(s), t, k, g, ctid);
    trace(p, k, EV_COMPUTE_END, rec);
#if CONTROL != CTL_EARLY_RELEASE
    __syncwarp();
    if ((ctid & 31) == 0) mbar_arrive(&empty[s]);
#endif
    trace(p, k, EV_RELEASE, rec);
}

__device__ __forceinline__ void run(const Params& p, int first, int G, int n, const Gamma& g) {
    __shared__ __align__(8) u64 full[STAGES];
    __shared__ __align__(8) u64 empty[STAGES];
    const int tid = threadIdx.x;
    if (tid == 0) {
#if MECH == MECH_TMA
        tma_prefetch_descriptor(p.tensor_map);
#endif
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], NWARPS_C);
        }
        fence_mbar_init();
    }
    __syncthreads();
#if WS
    if (tid >= CONSUMERS) {  // producer warp: runs ahead by up to STAGES tiles
        for (int k = 0; k < n; ++k) produce(p, full, empty, first + k * G, k);
        return;
    }
    for (int k = 0; k < n; ++k) consume(p, full, empty, first + k * G, k, g, tid, tid == 0);
#else
    const bool producer = tid < 32;  // warp 0 produces, then consumes with the others
    for (int k = 0; k < STAGES - 1 && producer; ++k) produce(p, full, empty, first + k * G, k);
    for (int k = 0; k < n; ++k) {
        // warp 0 refills the slot of tile k-1 once all warps released it
        if (producer) produce(p, full, empty, first + (k + STAGES - 1) * G, k + STAGES - 1);
        consume(p, full, empty, first + k * G, k, g, tid, tid == 0);
    }
#endif
#if CONTROL
    // A broken completion protocol can leave copies in flight at exit, and a bulk copy landing in
    // the shared memory of a block that has gone faults the whole context: controls linger first.
    for (int i = 0; i < 20; ++i) __nanosleep(10000);
#endif
}
#endif

#if ONLY == 2
// The compute stage alone: the block's first tile is loaded once, then computed as every tile.
__device__ __forceinline__ void run_compute_only(const Params& p, int first, int G, int n, const Gamma& g) {
    const int tid = threadIdx.x;
    Staged st;
    stage_load(p, first, tid, st);
    stage_store(p, first, 0, tid, st);
    __syncthreads();
    for (int k = 0; k < n; ++k) compute_tile(p, slot_ptr(0), first + k * G, k, g, tid);
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS) tilepipe_rmsnorm(const __grid_constant__ Params p) {
    const int first = blockIdx.x, G = gridDim.x;
    if (first >= p.ntiles) return;  // a block that owns no tile leaves before any barrier
    const int n = (p.ntiles - first + G - 1) / G;
    Gamma g;
    load_gamma(p, threadIdx.x < CONSUMERS ? threadIdx.x : 0, g);
#if ONLY == 2
    run_compute_only(p, first, G, n, g);
#else
    run(p, first, G, n, g);
#endif
}
