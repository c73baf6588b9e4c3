// A plain device copy of our own, measured beside cuMemcpyDtoD for the copy ceiling: each block
// copies one contiguous 16 KB chunk (256 threads x 4 vectors of 16 bytes, all four loads in flight
// before the first store), one block per chunk; no shared memory, no pipeline. Its loads and stores
// carry the direct RMSNorm builds' cache hints (L2 evict-last in, evict-first out): with them it
// passed cuMemcpyDtoD on the H200 (4141 -> 4273 GB/s), where without them a workload using them
// sat above a ceiling no copy of ours reached. If it beats the driver's copy, the ceiling a run
// reports is this kernel's.

#include "common/ptx.cuh"

struct __align__(8) PlainCopyParams {
    const uint4* src;
    uint4* dst;
    unsigned long long vectors;  // 16-byte vectors to copy
};

#define UNROLL 4

extern "C" __global__ void __launch_bounds__(256) tilepipe_plain_copy(const __grid_constant__ PlainCopyParams p) {
    const unsigned long long first = (unsigned long long)blockIdx.x * (UNROLL * 256) + threadIdx.x;
    const u64 policy = l2_evict_last_policy();
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (first + u * 256 < p.vectors) v[u] = ld_global_el_v4(p.src + first + u * 256, policy);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (first + u * 256 < p.vectors) st_global_cs_v4(p.dst + first + u * 256, v[u]);
}
