// Fills the shared memory of every SM with all-ones bytes (NaN in f32, f16 and bf16) before a
// validation launch. Shared memory keeps its contents between launches, so without this a slot
// read before its copy landed could hold the right tile left there by an earlier launch and pass.

#include "common/ptx.cuh"

extern "C" __global__ void tilepipe_smem_poison(u32 bytes) {
    extern __shared__ __align__(16) unsigned char smem[];
    const u32 base = smem_addr(smem);
    const uint4 ones = make_uint4(~0U, ~0U, ~0U, ~0U);
    for (u32 i = threadIdx.x * 16; i + 16 <= bytes; i += blockDim.x * 16) st_shared_v4(base + i, ones);
}
