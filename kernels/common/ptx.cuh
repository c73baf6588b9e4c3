// PTX wrappers shared by every tilepipe kernel: cp.async, mbarrier, bulk and tensor copies,
// ldmatrix and mma, fences, named barriers and the global timer. Each wrapper is one instruction (or one
// instruction plus its predicate), so the SASS census can be read against this file.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u32 smem_addr(const void* p) {
    return static_cast<u32>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ u64 gmem_addr(const void* p) {
    return static_cast<u64>(__cvta_generic_to_global(p));
}

// ---- cp.async (sm_80): per-thread copies tracked by commit groups ----

// .cg caches in L2 only and exists for 16-byte copies alone.
__device__ __forceinline__ void cp_async_cg16(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(gmem_addr(src))
                 : "memory");
}

// .ca caches in L1 too and takes 4, 8 or 16 bytes.
template <int BYTES>
__device__ __forceinline__ void cp_async_ca(void* dst, const void* src) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_addr(dst)), "l"(gmem_addr(src)),
                 "n"(BYTES)
                 : "memory");
}

// Zero-fill forms: src_bytes (0 or the copy's size) bytes are read, the rest of the copy lands as
// zeros; a copy past a matrix edge reads nothing.
__device__ __forceinline__ void cp_async_cg16_zfill(void* dst, const void* src, u32 src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(gmem_addr(src)),
                 "r"(src_bytes)
                 : "memory");
}

template <int BYTES>
__device__ __forceinline__ void cp_async_ca_zfill(void* dst, const void* src, u32 src_bytes) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(dst)), "l"(gmem_addr(src)),
                 "n"(BYTES), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- mbarrier (sm_80; transaction counts sm_90) ----

__device__ __forceinline__ void mbar_init(u64* bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// Makes mbarrier.init visible to the async proxy (TMA / bulk copies complete on the barrier).
__device__ __forceinline__ void fence_mbar_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive(u64* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

// Arrives and announces the bytes the copies of this phase will complete.
__device__ __forceinline__ void mbar_arrive_expect_tx(u64* bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}

// True once the phase with the given parity has completed.
__device__ __forceinline__ bool mbar_try_wait(u64* bar, u32 parity) {
    u32 done;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
    return done != 0;
}

// ---- Hopper bulk copies (sm_90), completing on an mbarrier ----

__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, u32 bytes, u64* bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
            smem_addr(dst)),
        "l"(gmem_addr(src)), "r"(bytes), "r"(smem_addr(bar))
        : "memory");
}

// One box of a rank-3 tensor map, coordinates innermost first.
__device__ __forceinline__ void tma_load_3d(void* dst, const void* tensor_map, int c0, int c1, int c2, u64* bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
        "%4}], [%5];\n" ::"r"(smem_addr(dst)),
        "l"(reinterpret_cast<u64>(tensor_map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
        : "memory");
}

__device__ __forceinline__ void tma_prefetch_descriptor(const void* tensor_map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(tensor_map)) : "memory");
}

// ---- tensor cores (sm_80): fragments from shared memory, one warp-wide MMA ----

// Four 8x8 matrices of 16-bit elements: lane l gives the address of row l % 8 of matrix l / 8, and
// receives one 32-bit pair of each matrix in r[0..3] (.trans: of each matrix transposed).
__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(u32 (&r)[4], u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// D = A * B + D for one 16x8x16 tile: A row-major, B column-major, f32 accumulators; the element
// type is the build's (DTYPE 1: f16, 2: bf16).
__device__ __forceinline__ void mma_16816(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
#if DTYPE == 1
#define MMA_TYPES "f16.f16"
#else
#define MMA_TYPES "bf16.bf16"
#endif
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPES
                 ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#undef MMA_TYPES
}

// ---- arithmetic and stores used by the compute body ----

// 2^x and 1/x on the special-function unit (relative error about 2^-22).
__device__ __forceinline__ float ex2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float rcp_approx(float x) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// Streaming 16-byte store: the output is written once and never reread here.
__device__ __forceinline__ void st_global_cs_v4(void* p, uint4 v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(gmem_addr(p)), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

// A shared-memory store the compiler must keep even though this kernel never reads it back.
__device__ __forceinline__ void st_shared_v4(u32 addr, uint4 v) {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

// ---- barriers, timers, sleeps ----

// bar.sync on a named barrier with an explicit thread count (a subset of the block).
__device__ __forceinline__ void named_barrier_sync(u32 id, u32 threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ u64 global_timer_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}
