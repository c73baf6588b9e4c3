// The element type a build selects (DTYPE 0 f32 | 1 f16 | 2 bf16) and 16-byte vectors of it
// unpacked to and packed from floats.
#pragma once
#include "common/ptx.cuh"

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
#define VEC (16 / ESIZE)  // elements per 16-byte vector

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
