// The compute bodies' protocol operations, each its PTX and what the protocol monitor
// (common/monitor.cuh) records of it: wgmma's groups, whose count in flight at a slot's release
// the monitor checks, and a TMA-store epilogue's staging, whose fence it checks.
#pragma once
#include "common/monitor.cuh"

// wgmma's groups, per thread (they are warpgroup-wide): committed, then waited down to N.
__device__ __forceinline__ void mma_commit() {
    wgmma_commit();
#if MONITOR
    ++mon_shared.wg_pending[threadIdx.x];
#endif
}
template <int N>
__device__ __forceinline__ void mma_wait() {
    wgmma_wait<N>();
#if MONITOR
    u32& p = mon_shared.wg_pending[threadIdx.x];
    if (p > (u32)N) p = N;
#endif
}

// A TMA-store epilogue's staging, per store group (`threads` threads under named barrier `id`):
// every thread writes its part, fences it to the async proxy, passes the group's barrier, and one
// thread stores the staged tile. The monitor holds each thread to the fence (a sequence rule).
__device__ __forceinline__ void staged_written() {
#if MONITOR
    atomicOr(&mon_shared.unfenced[threadIdx.x / 32], 1U << (threadIdx.x % 32));
#endif
}
__device__ __forceinline__ void staged_fence() {
#if CONTROL != CTL_STORE_UNFENCED
    fence_proxy_async_smem();
#if MONITOR
    atomicAnd(&mon_shared.unfenced[threadIdx.x / 32], ~(1U << (threadIdx.x % 32)));
#endif
#endif
}
__device__ __forceinline__ void staged_sync(int group, u32 id, u32 threads) {
#if MONITOR
    if ((mon_shared.unfenced[threadIdx.x / 32] >> (threadIdx.x % 32)) & 1U) atomicAdd(&mon_shared.unfenced_at_sync[group], 1U);
#endif
    named_barrier_sync(id, threads);
}
// By the storing thread, after staged_sync: stores the box at (c0, c1) from `src`.
__device__ __forceinline__ void staged_store(const Ctl& c, int group, u32 threads, const void* map, int c0, int c1, const void* src) {
#if MONITOR
    u32& unfenced = mon_shared.unfenced_at_sync[group];
    if (unfenced) mon_report(c, MON_STORE_UNFENCED, -1, -1, 0U, (int)unfenced, (int)threads, c0, c1);
    unfenced = 0U;
#endif
    tma_store_2d(map, c0, c1, src);
    bulk_commit();
}
