/* The QUANT kind's fused product (lapack_style_docs/FORMAT_QUANT.md): C = alpha * (W + O) * B + beta * C, fp16 B and
 * C, fp32 accumulation, up to 16 columns of B per launch pair.
 *
 * quant_part: the quantized part. A band of 16 rows is cut into units of unit_tiles tiles along K, one warp per unit,
 * so that the grid is many short, equal pieces of work whatever the shape (one warp or block per band left the last
 * wave of blocks half empty). A warp takes two tiles at a time: lane l loads word l of the pair (coalesced, kAhead
 * pairs ahead), so that it holds one tile row, whose scale it decodes once; the pair's tile statistics are the OR of
 * its words' pieces (four warp OR-reductions). The lane decodes its row's 16 weights with the same fp16 operations as
 * the host (src/quant.h), negated (every operation is symmetric under negation, so -w is exact and saves an
 * instruction per row), into the warp's two 16 x 16 fp16 tiles in shared memory, from which ldmatrix gives the A
 * fragments of mma.sync m16n8k16 (fp32 accumulators) against the matching 16 x 8 blocks of B. The unit's 16 x n sums
 * go to the handle's workspace. (Decoding each lane's own MMA fragment straight from the words instead repeats the
 * scale decode four times and took twice the integer instructions: bench/NOTES.md.)
 * quant_finish: one block per band adds the band's unit sums in unit order, the outliers (CSR: a warp per row, lanes
 * along the row, a fixed-order warp sum; TCOL: lanes along the band's interleaved slots, lane i and i + 16 on row
 * i), and applies alpha and beta. No atomics: the same bits every run. Nothing is allocated; both launches are
 * graph-capturable. */
#include "quant.h"
#include "macko_mma.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kAhead = 4;       /* tile pairs whose words a warp loads before it decodes them */
constexpr int kPartWarps = 4;   /* warps (units) per block of quant_part */
constexpr uint32_t kMagic = 0x64006400u; /* two fp16 1024.0: OR-ing a 3-bit code into the mantissa gives 1024 + q */

struct Args {
    int64_t rows, cols, tcols;
    const uint64_t *words;
    const int32_t *optr;
    const uint32_t *oent;
    const __half *b;
    int64_t incb, ldb;
    __half *c;
    int64_t incc, ldc;
    int n;
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
    float *ws;          /* units * 16 * n unit sums */
    int unit_tiles;     /* tiles per unit */
    int units_per_band; /* ceil(tcols / unit_tiles) */
    int64_t units;      /* bands * units_per_band */
};

/* A word, streamed past L1 (read once; L1 keeps B). */
__device__ __forceinline__ uint2 ld_word(const uint64_t *p)
{
    uint2 v;
    asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

__device__ __forceinline__ __half2 as_h2(uint32_t u) { return *reinterpret_cast<const __half2 *>(&u); }
__device__ __forceinline__ uint32_t as_u32(__half2 h) { return *reinterpret_cast<const uint32_t *>(&h); }

/* A row's (-s, -s) and (m, m) from its word and the tile statistics (ss2 = (s_s, s_z), zz2 = (z_s, z_z)):
 * FORMAT_QUANT.md's s = (sq - z_s) * s_s, z = (zq - z_z) * s_z, m = z * s, each rounded to fp16, computed as
 * (z_s - sq) * s_s = -s and (z_z - zq) * s_z = -z (round to nearest is symmetric: exactly the negations) and m =
 * (-z) * (-s). sq (bits 41..43) and zq (57..59) are 16 bits apart in the upper half of the word. */
__device__ __forceinline__ void row_scale(uint32_t hi, uint32_t ss2, uint32_t zz2, __half2 &ns2, __half2 &m2)
{
    const __half2 codes = __hsub2(as_h2(((hi >> 9) & 0x00070007u) | kMagic), as_h2(kMagic)); /* (sq, zq), exact */
    const uint32_t nsz = as_u32(__hmul2_rn(__hsub2_rn(as_h2(zz2), codes), as_h2(ss2)));      /* (-s, -z) */
    ns2 = as_h2(__byte_perm(nsz, nsz, 0x1010));
    m2 = __hmul2_rn(as_h2(__byte_perm(nsz, nsz, 0x3232)), ns2);
}

/* The negated weights of one code pair (bits 0..2 and 16..18 of x): q * (-s) + m = -(q * s - m), one rounding. */
__device__ __forceinline__ uint32_t pair_weights(uint32_t x, __half2 ns2, __half2 m2)
{
    const __half2 q = __hsub2(as_h2((x & 0x00070007u) | kMagic), as_h2(kMagic));
    return as_u32(__hfma2(q, ns2, m2));
}

__device__ __forceinline__ uint16_t ldb16(const __half *p) { return __ldg(reinterpret_cast<const unsigned short *>(p)); }

/* B's fragment for tile column t and column j: (B(k0, j), B(k0 + 1, j)) and (B(k0 + 8, j), B(k0 + 9, j)), k0 = 16t +
 * 2c; zero for j >= n and, with GUARD, for rows past cols. VEC: incb == 1 and 4-byte aligned pairs. */
template <bool VEC, bool GUARD>
__device__ __forceinline__ void b_fragment(const Args &p, const __half *col, bool live, int k0, uint32_t &b0,
                                           uint32_t &b1)
{
    b0 = b1 = 0;
    if (!live)
        return;
    if (VEC && !GUARD) {
        b0 = __ldg(reinterpret_cast<const unsigned int *>(col + k0));
        b1 = __ldg(reinterpret_cast<const unsigned int *>(col + k0 + 8));
        return;
    }
    uint32_t e[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int k = k0 + (i & 1) + (i >> 1) * 8;
        if (!GUARD || k < p.cols)
            e[i] = ldb16(col + (VEC ? (int64_t)k : (int64_t)k * p.incb));
    }
    b0 = e[0] | (e[1] << 16);
    b1 = e[2] | (e[3] << 16);
}

template <int NB, bool VEC>
__global__ void __launch_bounds__(kPartWarps * 32) quant_part(Args p)
{
    /* per warp, the two tiles it decodes at a time as fp16, rows padded to 48 bytes (ldmatrix without bank
     * conflicts) */
    __shared__ __align__(16) __half dec[kPartWarps][2][16][24];
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
    const int64_t u = (int64_t)blockIdx.x * kPartWarps + warp;
    if (u >= p.units)
        return;
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    if (alpha == 0.0f)
        return; /* quant_finish reads no unit sums then */
    const int g = lane >> 2, c = lane & 3; /* MMA roles */
    const int r = lane & 15, h = lane >> 4; /* decode roles: tile row r of the pair's tile h */
    const int64_t band = u / p.units_per_band;
    const int t0 = (int)(u % p.units_per_band) * p.unit_tiles;
    const int t1 = min(t0 + p.unit_tiles, (int)p.tcols);
    const int tfull = (int)(p.cols / 16); /* cols <= 65536: tile numbers fit an int */
    float acc[NB][4];
#pragma unroll
    for (int J = 0; J < NB; J++)
        acc[J][0] = acc[J][1] = acc[J][2] = acc[J][3] = 0.0f;
    const __half *col[NB];
    bool live[NB];
#pragma unroll
    for (int J = 0; J < NB; J++) {
        const int j = 8 * J + g;
        live[J] = j < p.n;
        col[J] = p.b + (live[J] ? (int64_t)j * p.ldb : 0);
    }
    /* ldmatrix.x4 rows: lanes 0-7 rows 0-7 / columns 0-7, 8-15 rows 8-15, 16-23 rows 0-7 / columns 8-15, 24-31 rows
     * 8-15: the A fragment's a0..a3 */
    const uint32_t ldsm0 = smem_addr(&dec[warp][0][(lane & 7) + ((lane >> 3) & 1) * 8][(lane >> 4) * 8]);
    const uint32_t ldsm1 = ldsm0 + 16 * 24 * 2;
    uint4 *mine = reinterpret_cast<uint4 *>(&dec[warp][h][r][0]);
    const uint64_t *bw = p.words + band * p.tcols * 16;
    /* a group of 2 * kAhead tiles from t; SAFE: the group may reach past the unit or into the last, partial tile
     * column (then every tile is checked), else it is all full tiles of the unit */
    auto group = [&](int t, auto safe_tag) {
        constexpr bool SAFE = decltype(safe_tag)::value;
        uint2 wv[kAhead];
        uint32_t bf[kAhead][2][NB][2];
#pragma unroll
        for (int v = 0; v < kAhead; v++) {
            const int tile = t + 2 * v + h;
            wv[v] = !SAFE || tile < t1 ? ld_word(bw + tile * 16 + r) : make_uint2(0u, 0u);
        }
#pragma unroll
        for (int v = 0; v < kAhead; v++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int tt = t + 2 * v + e;
#pragma unroll
                for (int J = 0; J < NB; J++) {
                    if (!SAFE || tt < tfull)
                        b_fragment<VEC, false>(p, col[J], live[J], tt * 16 + 2 * c, bf[v][e][J][0], bf[v][e][J][1]);
                    else if (tt < t1)
                        b_fragment<VEC, true>(p, col[J], live[J], tt * 16 + 2 * c, bf[v][e][J][0], bf[v][e][J][1]);
                    else
                        bf[v][e][J][0] = bf[v][e][J][1] = 0u;
                }
            }
#pragma unroll
        for (int v = 0; v < kAhead; v++) {
            if (SAFE && t + 2 * v >= t1)
                break;
            const uint2 w = wv[v];
            /* the pair's tile statistics: lanes 8q .. 8q + 7 hold the pieces of word q of the 4 halves (tile 0 rows
             * 0-7, 8-15, tile 1 rows 0-7, 8-15) */
            const uint32_t piece = ((w.y >> 12) & 15u) << (4 * (r & 7));
            const int q = lane >> 3;
            const uint32_t s0 = __reduce_or_sync(kFull, q == 0 ? piece : 0u);
            const uint32_t s1 = __reduce_or_sync(kFull, q == 1 ? piece : 0u);
            const uint32_t s2 = __reduce_or_sync(kFull, q == 2 ? piece : 0u);
            const uint32_t s3 = __reduce_or_sync(kFull, q == 3 ? piece : 0u);
            const uint32_t lo = h ? s2 : s0, hi = h ? s3 : s1;
            __half2 ns2, m2;
            row_scale(w.y, __byte_perm(lo, hi, 0x5410), __byte_perm(lo, hi, 0x7632), ns2, m2);
            uint4 d0, d1;
            d0.x = pair_weights(w.x, ns2, m2);
            d0.y = pair_weights(w.x >> 3, ns2, m2);
            d0.z = pair_weights(w.x >> 6, ns2, m2);
            d0.w = pair_weights(w.x >> 9, ns2, m2);
            d1.x = pair_weights(w.x >> 12, ns2, m2);
            d1.y = pair_weights(w.y, ns2, m2);
            d1.z = pair_weights(w.y >> 3, ns2, m2);
            d1.w = pair_weights(w.y >> 6, ns2, m2);
            __syncwarp(); /* the previous pair's ldmatrix reads are done */
            mine[0] = d0;
            mine[1] = d1;
            __syncwarp();
#pragma unroll
            for (int e = 0; e < 2; e++) {
                if (SAFE && t + 2 * v + e >= t1)
                    break;
                uint32_t a[4];
                ldsm_x4(a, e ? ldsm1 : ldsm0);
#pragma unroll
                for (int J = 0; J < NB; J++)
                    mma_16816<__half>(acc[J], a, bf[v][e][J][0], bf[v][e][J][1]);
            }
        }
    };
    int t = t0;
    for (; t + 2 * kAhead <= min(t1, tfull); t += 2 * kAhead)
        group(t, std::false_type());
    for (; t < t1; t += 2 * kAhead)
        group(t, std::true_type());
    /* the unit's sums, column by column: C(g, j) at out[16 j + g] (n columns, 64 bytes each) */
    float *out = p.ws + u * 16 * p.n;
#pragma unroll
    for (int J = 0; J < NB; J++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int j = 8 * J + 2 * c + e;
            if (j < p.n) {
                out[j * 16 + g] = -acc[J][e];
                out[j * 16 + g + 8] = -acc[J][2 + e];
            }
        }
}

template <int NB, bool TCOL>
__global__ void __launch_bounds__(MACKO_QUANT_MAX_WARPS * 32) quant_finish(Args p)
{
    constexpr int NJ = 8 * NB;
    __shared__ float opart[MACKO_QUANT_MAX_WARPS][16][NJ]; /* each warp's outlier sums */
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5), nw = (int)(blockDim.x >> 5);
    const int64_t band = blockIdx.x, r0 = band * 16;
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    const bool compute = alpha != 0.0f;

    if (compute) {
        for (int i = lane; i < 16 * NJ; i += 32)
            (&opart[warp][0][0])[i] = 0.0f;
        __syncwarp();
        /* the outliers: each product exact in fp32 (fp16 x fp16), summed in a fixed order */
        if (TCOL) {
            float oacc[NJ];
#pragma unroll
            for (int j = 0; j < NJ; j++)
                oacc[j] = 0.0f;
            const int64_t s1 = p.optr[band + 1];
            for (int64_t sb = p.optr[band] + (int64_t)warp * 32; sb < s1; sb += (int64_t)nw * 32) {
                const int64_t s = sb + lane;
                const uint32_t e = s < s1 ? __ldg(p.oent + s) : 0u;
                if (e != 0u) {
                    const float v = __half2float(__ushort_as_half((unsigned short)(e >> 16)));
                    const __half *bk = p.b + (int64_t)(e & 0xFFFFu) * p.incb;
#pragma unroll
                    for (int j = 0; j < NJ; j++)
                        if (j < p.n)
                            oacc[j] = fmaf(v, __half2float(__ushort_as_half(ldb16(bk + (int64_t)j * p.ldb))), oacc[j]);
                }
            }
#pragma unroll
            for (int j = 0; j < NJ; j++)
                oacc[j] += __shfl_down_sync(kFull, oacc[j], 16);
            if (lane < 16)
#pragma unroll
                for (int j = 0; j < NJ; j++)
                    opart[warp][lane][j] = oacc[j];
        } else {
            for (int i = warp; i < 16 && r0 + i < p.rows; i += nw) {
                float oacc[NJ];
#pragma unroll
                for (int j = 0; j < NJ; j++)
                    oacc[j] = 0.0f;
                const int64_t end = p.optr[r0 + i + 1];
                for (int64_t k = p.optr[r0 + i] + lane; k < end; k += 32) {
                    const uint32_t e = __ldg(p.oent + k);
                    const float v = __half2float(__ushort_as_half((unsigned short)(e >> 16)));
                    const __half *bk = p.b + (int64_t)(e & 0xFFFFu) * p.incb;
#pragma unroll
                    for (int j = 0; j < NJ; j++)
                        if (j < p.n)
                            oacc[j] = fmaf(v, __half2float(__ushort_as_half(ldb16(bk + (int64_t)j * p.ldb))), oacc[j]);
                }
#pragma unroll
                for (int j = 0; j < NJ; j++)
#pragma unroll
                    for (int o = 16; o > 0; o >>= 1)
                        oacc[j] += __shfl_xor_sync(kFull, oacc[j], o);
                if (lane == 0)
#pragma unroll
                    for (int j = 0; j < NJ; j++)
                        opart[warp][i][j] = oacc[j];
            }
        }
    }
    __syncthreads();

    for (int idx = (int)threadIdx.x; idx < 16 * p.n; idx += (int)blockDim.x) {
        const int i = idx & 15, j = idx >> 4;
        const int64_t r = r0 + i;
        if (r >= p.rows)
            continue;
        __half *cp = p.c + r * p.incc + (int64_t)j * p.ldc;
        float res = 0.0f;
        if (compute) {
            float sum = 0.0f;
            const float *us = p.ws + band * p.units_per_band * 16 * p.n + j * 16 + i;
            for (int s = 0; s < p.units_per_band; s++)
                sum += us[(int64_t)s * 16 * p.n];
            for (int w = 0; w < nw; w++)
                sum += opart[w][i][j];
            res = alpha * sum;
        }
        if (beta != 0.0f)
            res = fmaf(beta, __half2float(*cp), res);
        *cp = __float2half_rn(res);
    }
}

template <int NB, bool VEC, bool TCOL>
cudaError_t launch(const Args &p, int warps, cudaStream_t s)
{
    if (p.units > 0 && p.tcols > 0) {
        quant_part<NB, VEC><<<(unsigned)((p.units + kPartWarps - 1) / kPartWarps), kPartWarps * 32, 0, s>>>(p);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    quant_finish<NB, TCOL><<<(unsigned)((p.rows + 15) / 16), (unsigned)warps * 32u, 0, s>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" int macko_quant_launch(const macko_quant_kargs *a)
{
    Args p;
    p.rows = a->rows;
    p.cols = a->cols;
    p.tcols = a->tcols;
    p.words = a->words;
    p.optr = a->optr;
    p.oent = a->oent;
    p.b = reinterpret_cast<const __half *>(a->b);
    p.incb = a->incb;
    p.ldb = a->ldb;
    p.c = reinterpret_cast<__half *>(a->c);
    p.incc = a->incc;
    p.ldc = a->ldc;
    p.n = (int)a->n;
    p.alpha_dev = a->alpha_dev;
    p.beta_dev = a->beta_dev;
    p.alpha = a->alpha;
    p.beta = a->beta;
    p.ws = a->ws;
    p.unit_tiles = a->unit_tiles;
    p.units_per_band = (int)((a->tcols + a->unit_tiles - 1) / a->unit_tiles);
    p.units = (a->rows + 15) / 16 * p.units_per_band;
    cudaStream_t s = (cudaStream_t)a->stream;
    /* 4-byte pairs of B: unit stride, even leading dimension (or one column) and an aligned start */
    const bool vec = a->incb == 1 && (a->n == 1 || (a->ldb & 1) == 0) && ((uintptr_t)a->b & 3u) == 0;
    const bool two = a->n > 8;
    const bool tc = a->tcol_outliers != 0;
    const int w = a->warps;
    if (two)
        return vec ? (tc ? launch<2, true, true>(p, w, s) : launch<2, true, false>(p, w, s))
                   : (tc ? launch<2, false, true>(p, w, s) : launch<2, false, false>(p, w, s));
    return vec ? (tc ? launch<1, true, true>(p, w, s) : launch<1, true, false>(p, w, s))
               : (tc ? launch<1, false, true>(p, w, s) : launch<1, false, false>(p, w, s));
}
