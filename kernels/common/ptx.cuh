// PTX wrappers shared by every tilepipe kernel: cp.async, mbarrier, bulk and tensor copies (loads,
// multicast loads and stores), clusters, ldmatrix, mma and wgmma, register reallocation, fences,
// named barriers and the global timer.
// Each wrapper is one instruction (or one instruction plus its predicate), so the SASS census can
// be read against this file.
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

// Each copy names its destination by its shared-window address (smem_addr): a caller that issues
// several copies into one slot converts the slot's pointer once. Converting each copy's generic
// pointer made NVRTC 13.0 read SR_CgaCtaId again under every copy's predicate (one S2R per copy).

// .cg caches in L2 only and exists for 16-byte copies alone.
__device__ __forceinline__ void cp_async_cg16(u32 dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_addr(src)) : "memory");
}
__device__ __forceinline__ void cp_async_cg16(void* dst, const void* src) { cp_async_cg16(smem_addr(dst), src); }
// The same copy with its L2 line marked under `policy` (l2_evict_last_policy).
__device__ __forceinline__ void cp_async_cg16_hint(u32 dst, const void* src, u64 policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_addr(src)),
                 "l"(policy)
                 : "memory");
}

// .ca caches in L1 too and takes 4, 8 or 16 bytes.
template <int BYTES>
__device__ __forceinline__ void cp_async_ca(u32 dst, const void* src) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(gmem_addr(src)), "n"(BYTES) : "memory");
}
template <int BYTES>
__device__ __forceinline__ void cp_async_ca(void* dst, const void* src) {
    cp_async_ca<BYTES>(smem_addr(dst), src);
}

// Zero-fill forms: src_bytes (0 or the copy's size) bytes are read, the rest of the copy lands as
// zeros; a copy past a matrix edge reads nothing. Spelled with cp.async's ignore-src predicate,
// not its source size: ptxas folds a size into the address at five instructions a copy, where a
// predicate is the instruction's own.
#define CP_ASYNC_IGNORE(copy) "{\n\t.reg .pred ig;\n\tsetp.eq.u32 ig, %2, 0;\n\t" copy "\n}\n"
__device__ __forceinline__ void cp_async_cg16_zfill(u32 dst, const void* src, u32 src_bytes) {
    asm volatile(CP_ASYNC_IGNORE("cp.async.cg.shared.global [%0], [%1], 16, ig;")::"r"(dst), "l"(gmem_addr(src)),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_cg16_zfill(void* dst, const void* src, u32 src_bytes) {
    cp_async_cg16_zfill(smem_addr(dst), src, src_bytes);
}

// The zero-fill form with its L2 line marked under `policy`.
__device__ __forceinline__ void cp_async_cg16_zfill_hint(u32 dst, const void* src, u32 src_bytes, u64 policy) {
    asm volatile(CP_ASYNC_IGNORE("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, ig, %3;")::"r"(dst),
                 "l"(gmem_addr(src)), "r"(src_bytes), "l"(policy)
                 : "memory");
}

template <int BYTES>
__device__ __forceinline__ void cp_async_ca_zfill(u32 dst, const void* src, u32 src_bytes) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile(CP_ASYNC_IGNORE("cp.async.ca.shared.global [%0], [%1], %3, ig;")::"r"(dst), "l"(gmem_addr(src)),
                 "r"(src_bytes), "n"(BYTES)
                 : "memory");
}
template <int BYTES>
__device__ __forceinline__ void cp_async_ca_zfill(void* dst, const void* src, u32 src_bytes) {
    cp_async_ca_zfill<BYTES>(smem_addr(dst), src, src_bytes);
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
__device__ __forceinline__ void bulk_copy_g2s_hint(void* dst, const void* src, u32 bytes, u64* bar, u64 policy) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
            smem_addr(dst)),
        "l"(gmem_addr(src)), "r"(bytes), "r"(smem_addr(bar)), "l"(policy)
        : "memory");
}

// One box of a rank-2 tensor map, coordinates innermost first.
__device__ __forceinline__ void tma_load_2d(void* dst, const void* tensor_map, int c0, int c1, u64* bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];\n" ::"r"(smem_addr(dst)),
        "l"(reinterpret_cast<u64>(tensor_map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
        : "memory");
}

__device__ __forceinline__ void tma_load_2d_hint(void* dst, const void* tensor_map, int c0, int c1, u64* bar, u64 policy) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, "
        "{%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
        "l"(reinterpret_cast<u64>(tensor_map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "l"(policy)
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
__device__ __forceinline__ void tma_load_3d_hint(void* dst, const void* tensor_map, int c0, int c1, int c2, u64* bar,
                                                 u64 policy) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, "
        "{%2, %3, %4}], [%5], %6;\n" ::"r"(smem_addr(dst)),
        "l"(reinterpret_cast<u64>(tensor_map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar)), "l"(policy)
        : "memory");
}

// The same box multicast: it lands at this CTA's slot offset in every CTA of `cta_mask` (bits
// are cluster ranks) and completes bytes on the mbarrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const void* tensor_map, int c0, int c1, u64* bar,
                                                      unsigned short cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
        "[%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
        "l"(reinterpret_cast<u64>(tensor_map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask)
        : "memory");
}

// One box of shared memory stored to a rank-2 tensor (elements past its edges are not written),
// in this thread's bulk group.
__device__ __forceinline__ void tma_store_2d(const void* tensor_map, int c0, int c1, const void* src) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                     reinterpret_cast<u64>(tensor_map)),
                 "r"(c0), "r"(c1), "r"(smem_addr(src))
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Makes this thread's generic-proxy writes to shared memory visible to the async proxy (a TMA
// store that reads them).
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void tma_prefetch_descriptor(const void* tensor_map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(tensor_map)) : "memory");
}

// ---- thread-block clusters (sm_90) ----

__device__ __forceinline__ u32 cluster_rank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// Every thread of every CTA of the cluster arrives, then waits for all. Relaxed: it orders the
// mbarrier inits a fence.mbarrier_init.release.cluster published before it, nothing else (the
// default .release put a MEMBAR.ALL.GPU before it).
__device__ __forceinline__ void cluster_sync_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}

// Arrives on the mbarrier at `bar`'s offset in the shared memory of the cluster's CTA `rank`
// (this CTA's own included). Release at CTA scope, as a local arrive: what it publishes is that
// this warp's reads of a slot are over (retired into registers), which needs no cluster-wide
// fence (.release.cluster put a MEMBAR.ALL.GPU before every release).
__device__ __forceinline__ void mbar_arrive_cluster(u64* bar, u32 rank) {
    asm volatile(
        "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
        "r"(rank)
        : "memory");
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

// ---- warpgroup MMA (sm_90a): operands read from shared memory through descriptors ----

// A shared-memory matrix descriptor for a 128-byte-swizzled operand: start address, leading and
// stride byte offsets (each / 16), swizzle mode 1. K-major: 8-row groups 1024 bytes apart (the
// leading offset is unused). MN-major: 8-row K groups 1024 bytes apart, 64-wide MN chunks `chunk`
// bytes apart.
__device__ __forceinline__ u64 smem_desc_sw128(u32 addr, u32 chunk) {
    return (u64)((addr & 0x3FFFF) >> 4) | (u64)(chunk >> 4) << 16 | (u64)(1024 >> 4) << 32 | 1ULL << 62;
}

// Orders this thread's register and shared-memory accesses before the wgmma that follows.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

// Waits until at most N of the warpgroup's committed wgmma groups are in flight: only then are the
// shared-memory operands of the others read and their accumulators written.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving an accumulator's use across a wgmma wait (no instruction).
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void fence_operand(u32& r) { asm volatile("" : "+r"(r)::"memory"); }

// D (+)= A * B for a 64 x N x 16 step of the warpgroup, f32 accumulators in d (N / 2 per thread);
// scale_d 0 ignores d's old value. A is K-major; B is K-major, or MN-major with TRANS_B 1. The
// element type is the build's (DTYPE 1: f16, 2: bf16).
#if DTYPE == 1
#define WGMMA_TYPES "f16.f16"
#else
#define WGMMA_TYPES "bf16.bf16"
#endif
// The accumulators d[b..b+7] as asm operands.
#define WG_F8(b) "+f"(d[b]), "+f"(d[b + 1]), "+f"(d[b + 2]), "+f"(d[b + 3]), "+f"(d[b + 4]), "+f"(d[b + 5]), "+f"(d[b + 6]), "+f"(d[b + 7])
template <int TRANS_B>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], u64 desc_a, u64 desc_b, u32 scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
        : WG_F8(0), WG_F8(8), WG_F8(16), WG_F8(24), WG_F8(32), WG_F8(40), WG_F8(48), WG_F8(56)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
}

template <int TRANS_B>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], u64 desc_a, u64 desc_b, u32 scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." WGMMA_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
        : WG_F8(0), WG_F8(8), WG_F8(16), WG_F8(24), WG_F8(32), WG_F8(40), WG_F8(48), WG_F8(56),
          WG_F8(64), WG_F8(72), WG_F8(80), WG_F8(88), WG_F8(96), WG_F8(104), WG_F8(112), WG_F8(120)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
}

// The narrow forms, for tiles whose N is a few rows of A (decode, operands swapped), and the
// one entry point over every N.
template <int TRANS_B>
__device__ __forceinline__ void wgmma_m64n16k16(float (&d)[8], u64 desc_a, u64 desc_b, u32 scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32." WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, %11;\n}\n"
                 : WG_F8(0)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_m64n32k16(float (&d)[16], u64 desc_a, u64 desc_b, u32 scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32." WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, %19;\n}\n"
                 : WG_F8(0), WG_F8(8)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], u64 desc_a, u64 desc_b, u32 scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, %35;\n}\n"
                 : WG_F8(0), WG_F8(8), WG_F8(16), WG_F8(24)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
}
template <int N, int TRANS_B>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], u64 desc_a, u64 desc_b, u32 scale_d) {
    static_assert(N == 16 || N == 32 || N == 64 || N == 128 || N == 256, "wgmma with both operands in shared memory is wrapped for N = 16, 32, 64, 128, 256");
    if constexpr (N == 16) wgmma_m64n16k16<TRANS_B>(d, desc_a, desc_b, scale_d);
    else if constexpr (N == 32) wgmma_m64n32k16<TRANS_B>(d, desc_a, desc_b, scale_d);
    else if constexpr (N == 64) wgmma_m64n64k16<TRANS_B>(d, desc_a, desc_b, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k16<TRANS_B>(d, desc_a, desc_b, scale_d);
    else wgmma_m64n256k16<TRANS_B>(d, desc_a, desc_b, scale_d);
}


// D (+)= A * B for a 64 x N x 16 step of the warpgroup with A from registers (each warp's 16
// rows as mma.sync m16n8k16's A fragment) and B through its descriptor, K-major or, with TRANS_B
// 1, MN-major; scale_d 0 ignores d's old value. d[j][e] is the accumulator layout of N / 8
// mma.sync m16n8 tiles (d[j]: columns 8j..8j+7), so per-warp code reads wgmma's results as
// it reads mma.sync's. wgmma_rs picks the wrapper of N = 8 x NT (64 or 128).
#define WG_D4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
#define WG_D32 WG_D4(0), WG_D4(1), WG_D4(2), WG_D4(3), WG_D4(4), WG_D4(5), WG_D4(6), WG_D4(7)
template <int TRANS_B>
__device__ __forceinline__ void wgmma_rs_m64n64k16(float (&d)[8][4], const u32 (&a)[4], u64 desc_b, u32 scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
        : WG_D32
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_rs_m64n128k16(float (&d)[16][4], const u32 (&a)[4], u64 desc_b, u32 scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : WG_D32, WG_D4(8), WG_D4(9), WG_D4(10), WG_D4(11), WG_D4(12), WG_D4(13), WG_D4(14), WG_D4(15)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
}
#undef WG_D32
#undef WG_D4
template <int TRANS_B, int NT>
__device__ __forceinline__ void wgmma_rs(float (&d)[NT][4], const u32 (&a)[4], u64 desc_b, u32 scale_d) {
    static_assert(NT == 8 || NT == 16, "wgmma with A from registers is wrapped for N = 64 and 128");
    if constexpr (NT == 8) wgmma_rs_m64n64k16<TRANS_B>(d, a, desc_b, scale_d);
    else wgmma_rs_m64n128k16<TRANS_B>(d, a, desc_b, scale_d);
}

// Hands registers between warpgroups: a producer warpgroup lowers its budget so that the consumer
// warpgroups can raise theirs (every thread of a warpgroup executes it).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
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

// An L2 policy that evicts the lines it marks last (fraction 1.0: every line it covers). A
// thread creates it once; the compiler keeps it in a uniform register beside the load's descriptor.
__device__ __forceinline__ u64 l2_evict_last_policy() {
    u64 policy;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

// A 16-byte load of data read once and held in registers, its L1 and L2 lines marked evict-last
// under `policy`. Against the same load without the L2 hint (L1::no_allocate, or a plain
// ld.global), direct's f32 rows of 8192 ran 3 % faster on the H200 (1030 -> 995 us, past
// cuMemcpyDtoD's rate), with the output stored evict-first beside it (st_global_cs_v4).
__device__ __forceinline__ uint4 ld_global_el_v4(const void* p, u64 policy) {
    uint4 v;
    asm("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(gmem_addr(p)), "l"(policy));
    return v;
}

// Streaming 16-byte store: the output is written once and never reread here.
__device__ __forceinline__ void st_global_cs_v4(void* p, uint4 v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(gmem_addr(p)), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

// Narrower streaming stores, for the naturally aligned pieces of 16 bytes that start at any
// element (common/align.cuh).
__device__ __forceinline__ void st_global_cs_v2(void* p, u32 a, u32 b) {
    asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};\n" ::"l"(gmem_addr(p)), "r"(a), "r"(b) : "memory");
}
__device__ __forceinline__ void st_global_cs_b32(void* p, u32 a) {
    asm volatile("st.global.cs.u32 [%0], %1;\n" ::"l"(gmem_addr(p)), "r"(a) : "memory");
}
__device__ __forceinline__ void st_global_cs_b16(void* p, u32 a) {
    asm volatile("st.global.cs.u16 [%0], %1;\n" ::"l"(gmem_addr(p)), "h"((unsigned short)a) : "memory");
}

// A shared-memory store the compiler must keep even though this kernel never reads it back.
__device__ __forceinline__ void st_shared_v4(u32 addr, uint4 v) {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

// ---- barriers, timers, sleeps ----

// Ends this thread now (PTX exit), without returning through its caller.
__device__ __forceinline__ void exit_thread() { asm volatile("exit;\n" ::: "memory"); }

// bar.sync on a named barrier with an explicit thread count (a subset of the block).
__device__ __forceinline__ void named_barrier_sync(u32 id, u32 threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// bar.arrive: counts toward a named barrier's `threads` without waiting for it to complete.
__device__ __forceinline__ void named_barrier_arrive(u32 id, u32 threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// The same where `give` holds, predicated rather than branched around; it orders turns, not data,
// so it does not fence memory.
__device__ __forceinline__ void named_barrier_arrive_if(bool give, u32 id, u32 threads) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p bar.arrive %1, %2;\n}\n" ::"r"((u32)give), "r"(id), "r"(threads));
}

// A GPU-scope count by one thread for its block, after a barrier the block's threads passed
// (their writes before it are released with it) and before one they pass next (what the blocks
// counted before wrote is acquired): fenced acq_rel by that thread alone, not every thread.
__device__ __forceinline__ u32 count_in_gpu(u32* counter) {
    u32 old;
    asm volatile("fence.acq_rel.gpu;\n atom.relaxed.gpu.global.add.u32 %0, [%1], 1;\n fence.acq_rel.gpu;\n" : "=r"(old) : "l"(counter) : "memory");
    return old;
}

__device__ __forceinline__ u64 global_timer_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}
