// A plain device copy of our own, measured beside cuMemcpyDtoD for the copy ceiling: each block
// copies one contiguous 16 KB chunk (256 threads x 4 vectors of 16 bytes, all four loads in flight
// before the first store), one block per chunk; no shared memory, no pipeline. If it beats the
// driver's copy, the ceiling a run reports is this kernel's.

#include "common/ptx.cuh"

struct __align__(8) PlainCopyParams {
    const uint4* src;
    uint4* dst;
    unsigned long long vectors;  // 16-byte vectors to copy
};

#define UNROLL 4

extern "C" __global__ void __launch_bounds__(256) tilepipe_plain_copy(const __grid_constant__ PlainCopyParams p) {
    const unsigned long long first = (unsigned long long)blockIdx.x * (UNROLL * 256) + threadIdx.x;
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (first + u * 256 < p.vectors) v[u] = __ldg(p.src + first + u * 256);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (first + u * 256 < p.vectors) p.dst[first + u * 256] = v[u];
}
