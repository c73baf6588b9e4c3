// What both attention compute bodies share, FlashAttention-2's per-row state: a consumer warp's
// 16 query rows of Q as A fragments for the whole walk, O unnormalised, each row's running maximum
// and sum, the online softmax of one key tile's scores and the final normalisation. Scores and O
// are held in the accumulator layout mma.sync m16n8 and wgmma m64nN share per warp (x[j][e]:
// columns 8j + 2 (lane % 4) + e % 2 of row lane / 4, + 8 for e >= 2), so the bodies differ only in
// the instructions that multiply.
#pragma once

#define SN (BN / 8)  // n8 tiles of scores per key tile
#define ON (D / 8)   // n8 tiles of O
#define NEG_INF __int_as_float(0xff800000U)

struct AttnRows : AttnTiles {
    u32 qf[D / 16][4];  // Q's A fragments, one per 16 columns of the head dimension
    float o[ON][4];     // O, unnormalised
    float mx[2], sum[2];  // rows lane / 4 and + 8: running maximum (raw score) and this thread's part of the sum
    int row0;             // the warp's first query row

    // A warp-specialised block starts its rows once the ring hands a consumer its registers
    // (begin(), after setmaxnreg), so that none of them is live in the producer; any other, here.
    __device__ __forceinline__ AttnRows(const AttnParams& params) : AttnTiles(params) {
#if !WS
        start();
#endif
    }
#if WS
    __device__ __forceinline__ void begin() { start(); }
#endif

    // A fragment e of 16 x 16 sits at row lane / 4 (+ 8 for e odd), columns 2 (lane % 4) (+ 8 for
    // e >= 2) and the next; rows past the last query are zeros.
    __device__ __forceinline__ void start() {
        load_q(head, q0);
        reset();
    }
    // Q's fragments of head h's query tile from row q (a persistent block loads the next tile's
    // while the last one's final softmax and P V run).
    __device__ __forceinline__ void load_q(int h, int q) {
        const int lane = threadIdx.x & 31, r0 = q + (int)(threadIdx.x / 32) * 16;
        const elem_t* src = p.q + (long long)h * p.seqlen * D;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int row = r0 + lane / 4 + (e & 1) * 8, col = kk * 16 + lane % 4 * 2 + (e >> 1) * 8;
                qf[kk][e] = row < p.seqlen ? *reinterpret_cast<const u32*>(src + (long long)row * D + col) : 0U;
            }
    }
    // The rows of the query tile at q0, none of them seen yet.
    __device__ __forceinline__ void reset() {
        row0 = q0 + (int)(threadIdx.x / 32) * 16;
#pragma unroll
        for (int j = 0; j < ON; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) o[j][e] = 0.0f;
        mx[0] = mx[1] = NEG_INF;
        sum[0] = sum[1] = 0.0f;
    }

    // Whether key `key` is hidden from query `row`: past the last key, or (causal) after the query.
    // CTL_MASK_SHIFTED shows each query one key more than the mask allows (a numerical control).
    static constexpr int MASK_SHIFT = CONTROL == CTL_MASK_SHIFTED ? 1 : 0;
    __device__ __forceinline__ bool hidden(int row, int key) const {
        return key >= p.seqlen || (p.causal && key > row + MASK_SHIFT);
    }
    // Whether key tile k may hide a key from one of the warp's 16 rows (the tile reaches past the
    // last key, or, causal, past the warp's first row): only such tiles pay for the mask, a
    // compare and select per score that would otherwise be four in ten of the softmax's
    // instructions. The same for every lane of the warp.
    __device__ __forceinline__ bool masks(int k) const {
        const int last = (k + 1) * BN - 1;
        return last >= p.seqlen || (p.causal && last > row0 + MASK_SHIFT);
    }

    // Key tile k's scores s become P in place: hidden keys masked, the rows' new maxima (the four
    // lanes of a row exchange theirs), exp2 of the scaled scores; the sums and O are rescaled by
    // how far each maximum moved.
    __device__ __forceinline__ void softmax(float (&s)[SN][4], int k, int lane) {
        float scale[2];
        scores(s, k, lane, scale);
        rescale(scale);
    }

    // The softmax but O's rescale, which `scale` holds for rescale() (where O is still being
    // written by the previous tile's P V, after it retires).
    __device__ __forceinline__ void scores(float (&s)[SN][4], int k, int lane, float (&scale)[2]) {
        if (masks(k)) {
            const int key0 = k * BN + lane % 4 * 2;
#pragma unroll
            for (int j = 0; j < SN; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (hidden(row0 + lane / 4 + e / 2 * 8, key0 + j * 8 + e % 2)) s[j][e] = NEG_INF;
        }
        // each row's maximum over two independent chains (odd and even 8-key tiles), not one
        float top[2][2] = {{mx[0], mx[0]}, {mx[1], mx[1]}};
#pragma unroll
        for (int j = 0; j < SN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) top[e / 2][j % 2] = fmaxf(top[e / 2][j % 2], s[j][e]);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float t = fmaxf(top[h][0], top[h][1]);
            t = fmaxf(t, __shfl_xor_sync(0xffffffffU, t, 1));
            t = fmaxf(t, __shfl_xor_sync(0xffffffffU, t, 2));
            // a row that has seen no key yet keeps -inf: exp2 of its scores is 0, not NaN
            const float base = t == NEG_INF ? 0.0f : t * p.scale_log2;
            scale[h] = ex2_approx(mx[h] * p.scale_log2 - base);
            mx[h] = t;
            sum[h] *= scale[h];
#pragma unroll
            for (int j = 0; j < SN; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    float& x = s[j][2 * h + e];
                    x = ex2_approx(x * p.scale_log2 - base);
                    sum[h] += x;
                }
        }
    }

    __device__ __forceinline__ void rescale(const float (&scale)[2]) {
#if CONTROL != CTL_NO_RESCALE
#pragma unroll
        for (int j = 0; j < ON; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) o[j][e] *= scale[e / 2];
#endif
    }

    // P's accumulators of 8-key tiles 2t and 2t + 1 as the A fragment of keys 16t..16t+15.
    __device__ __forceinline__ static void p_fragment(u32 (&pa)[4], const float (&s)[SN][4], int t) {
        pa[0] = pack2(s[2 * t][0], s[2 * t][1]);
        pa[1] = pack2(s[2 * t][2], s[2 * t][3]);
        pa[2] = pack2(s[2 * t + 1][0], s[2 * t + 1][1]);
        pa[3] = pack2(s[2 * t + 1][2], s[2 * t + 1][3]);
    }

    // O / the row's sum, in pairs of adjacent columns; rows past the last query are not stored.
    __device__ __forceinline__ void finish(int ctid) {
        const int lane = ctid & 31;
        elem_t* out = p.o + (long long)head * p.seqlen * D;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float total = sum[h];
            total += __shfl_xor_sync(0xffffffffU, total, 1);
            total += __shfl_xor_sync(0xffffffffU, total, 2);
            const int row = row0 + lane / 4 + h * 8;
            const float inv = total > 0.0f ? 1.0f / total : 0.0f;
            if (row >= p.seqlen) continue;
#pragma unroll
            for (int j = 0; j < ON; ++j)
                *reinterpret_cast<u32*>(out + (long long)row * D + j * 8 + lane % 4 * 2) = pack2(o[j][2 * h] * inv, o[j][2 * h + 1] * inv);
        }
    }
};
