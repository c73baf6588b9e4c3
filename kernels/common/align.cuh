// Rows that start at any element, moved in aligned 16-byte chunks: 16 bytes that start `shift`
// bytes into a pair of aligned chunks picked out in registers, and 16 bytes stored at any element
// as the naturally aligned pieces that cover them and nothing else. Every 16-byte access stays
// aligned (a vector load, LDGSTS.128, UBLKCP and STG.128 need it); the shift is the row's, the
// same for every thread, so its selects and predicates are uniform.
#pragma once
#include "common/ptx.cuh"

// Bytes shift .. shift + 15 of the 32 bytes lo:hi (shift < 16, a multiple of ES, the element's
// bytes). Whole words move by selects on the shift's bits (the registers keep static indices, so
// nothing spills to local memory), then a 2-byte element's half-word by one funnel shift a word.
template <int ES>
__device__ __forceinline__ uint4 window16(uint4 lo, uint4 hi, u32 shift) {
    const u32 w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    u32 a[6], b[5];
#pragma unroll
    for (int i = 0; i < 6; ++i) a[i] = (shift & 8U) ? w[i + 2] : w[i];
#pragma unroll
    for (int i = 0; i < 5; ++i) b[i] = (shift & 4U) ? a[i + 1] : a[i];
    if (ES == 4) return make_uint4(b[0], b[1], b[2], b[3]);
    const u32 bits = (shift & 2U) * 8U;
    return make_uint4(__funnelshift_r(b[0], b[1], bits), __funnelshift_r(b[1], b[2], bits),
                      __funnelshift_r(b[2], b[3], bits), __funnelshift_r(b[3], b[4], bits));
}

// Bytes [lo, hi) of the aligned 16-byte chunk at `chunk` (lo < hi, multiples of ES), taken from r
// where each byte already sits at its place in the chunk: the largest naturally aligned pieces
// inside the range (8, 4, then 2 bytes), no byte outside it written.
template <int ES>
__device__ __forceinline__ void st_chunk_part(char* chunk, uint4 r, u32 lo, u32 hi) {
    const u32 w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
        if (lo <= 8 * h && 8 * h + 8 <= hi) {
            st_global_cs_v2(chunk + 8 * h, w[2 * h], w[2 * h + 1]);
            continue;
        }
#pragma unroll
        for (u32 j = 2 * h; j < 2 * h + 2; ++j) {
            const u32 b = 4 * j;
            if (lo <= b && b + 4 <= hi) {
                st_global_cs_b32(chunk + b, w[j]);
            } else if (ES == 2) {
                if (lo <= b && b + 2 <= hi) st_global_cs_b16(chunk + b, w[j]);
                if (lo <= b + 2 && b + 4 <= hi) st_global_cs_b16(chunk + b + 2, w[j] >> 16);
            }
        }
    }
}

// The 16 bytes of v stored at dst, which starts at any element: one 16-byte store where dst is
// aligned, else v's bytes rotated to their places in the two chunks it straddles and the part of
// each that is v's stored in pieces (two to six stores; a neighbour's pieces fill the rest).
template <int ES>
__device__ __forceinline__ void st_any(void* dst, uint4 v) {
    const u32 q = (u32)gmem_addr(dst) & 15U;
    if (q == 0) {
        st_global_cs_v4(dst, v);
        return;
    }
    char* const chunk = static_cast<char*>(dst) - q;
    const uint4 r = window16<ES>(v, v, 16U - q);  // byte i of v at (q + i) % 16
    st_chunk_part<ES>(chunk, r, q, 16);
    st_chunk_part<ES>(chunk + 16, r, 0, q);
}
