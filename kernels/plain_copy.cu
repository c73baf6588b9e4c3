// A plain device copy of our own, measured beside cuMemcpyDtoD for the copy ceiling: a grid-stride
// loop of 16-byte loads and stores, four in flight per thread, no shared memory, no pipeline. If
// it beats the driver's copy, the ceiling a run reports is this kernel's.

#include "common/ptx.cuh"

struct __align__(8) PlainCopyParams {
    const uint4* src;
    uint4* dst;
    unsigned long long vectors;  // 16-byte vectors to copy
};

#define UNROLL 4

extern "C" __global__ void __launch_bounds__(256) tilepipe_plain_copy(const __grid_constant__ PlainCopyParams p) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < p.vectors; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = __ldg(p.src + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) p.dst[i + u * stride] = v[u];
    }
    for (; i < p.vectors; i += stride) p.dst[i] = __ldg(p.src + i);
}
