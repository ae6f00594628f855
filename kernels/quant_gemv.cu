/* The QUANT kind's fused product (lapack_style_docs/FORMAT_QUANT.md): C = alpha * (W + O) * B + beta * C, fp16 B and
 * C, fp32 accumulation, up to 16 columns of B per launch pair.
 *
 * quant_part: the quantized part, in units of unit_tiles tiles along K of one band (n <= 4) or of four bands (n > 4:
 * each B fragment then serves four bands), one warp per unit, so that the grid is many short, equal pieces of work
 * whatever the shape (one warp or block per band left the last wave of blocks half empty). A warp takes two tiles
 * (of each band) at a time: lane l loads word l of the pair (coalesced, kAhead
 * pairs ahead), so that it holds one tile row, whose scale it decodes once; the pair's tile statistics are the OR of
 * its words' pieces (four warp OR-reductions). The lane decodes its row's 16 weights with the same fp16 operations as
 * the host (src/quant.h), negated (every operation is symmetric under negation, so -w is exact and saves an
 * instruction per row), into the warp's two 16 x 16 fp16 tiles in shared memory, from which ldmatrix gives the A
 * fragments of mma.sync m16n8k16 (fp32 accumulators) against the matching 16 x 8 blocks of B. The unit's 16 x n sums
 * go to the handle's workspace. (Decoding each lane's own MMA fragment straight from the words instead repeats the
 * scale decode four times and took twice the integer instructions: bench/NOTES.md.)
 * The outliers are units of the same grid, next to the band's tile units, so that their scattered reads of B overlap
 * the stream of words: TCOL: ochunk k-steps of the band's interleaved slots per unit (lane i and i + 16 on row i);
 * CSR: up to one unit per row of the band (lanes along a row, a fixed-order warp sum).
 * quant_finish: every output adds its band's unit sums in unit order and applies alpha and beta. No atomics: the same
 * bits every run. Nothing is allocated; both launches are graph-capturable. */
#include "quant.h"
#include "macko_mma.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

constexpr unsigned kFull = 0xffffffffu;
/* tile pairs whose words (of every band of the unit) a warp loads before decoding: 4 with one band, 2 with four */
template <int BG> __host__ __device__ constexpr int ahead() { return BG == 1 ? 4 : 2; }
/* Bands per tile unit (BG): each B fragment a unit loads then serves BG bands. 1 for n <= 4, where B costs little and
 * more, shorter units keep more loads in flight; 4 beyond (bench/NOTES.md). */
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
    int units_per_band; /* tile units: ceil(tcols / unit_tiles) */
    int ounits;         /* outlier units per band (after its tile units) */
    int ochunk;         /* TCOL: k-steps (16 slots each) per outlier unit */
    int slots_per_band; /* units_per_band + ounits unit sums per band */
    int64_t tile_units; /* ceil(bands / BG) * units_per_band: units 0 .. tile_units - 1 */
    int64_t units;      /* tile_units + bands * ounits (the outlier units follow) */
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

/* The negated weights of one code pair, the codes at bits S..S + 2 and 16 + S..18 + S of x (S = 0, 3 or 6, inside an
 * fp16 mantissa): q * (-s) + m = -(q * s - m), one rounding. OR-ing the field into an fp16 of exponent 25 - S gives
 * 2^(10 - S) + q exactly, so no shift is needed; subtracting 2^(10 - S) leaves q. */
template <int S> __device__ __forceinline__ uint32_t pair_weights(uint32_t x, __half2 ns2, __half2 m2)
{
    constexpr uint32_t magic = (uint32_t)(25 - S) << 10;
    constexpr uint32_t magic2 = magic | (magic << 16);
    const __half2 q = __hsub2(as_h2((x & (0x00070007u << S)) | magic2), as_h2(magic2));
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

/* out[16 j + i] += v * B(col, j) for j < n: one outlier's products, exact in fp32 (fp16 x fp16). */
template <int NJ> __device__ __forceinline__ void outlier_fma(const Args &p, uint32_t e, float (&acc)[NJ])
{
    const float v = __half2float(__ushort_as_half((unsigned short)(e >> 16)));
    const __half *bk = p.b + (int64_t)(e & 0xFFFFu) * p.incb;
#pragma unroll
    for (int j = 0; j < NJ; j++)
        if (j < p.n)
            acc[j] = fmaf(v, __half2float(__ushort_as_half(ldb16(bk + (int64_t)j * p.ldb))), acc[j]);
}

/* TCOL outlier unit m of a band: its slots [16 ochunk m, 16 ochunk (m + 1)) past the band's first; slot 16 s + i is
 * row i's, so lane l always meets row l % 16. Four slots per lane in flight; padding slots are 0 and skipped. */
template <int NB> __device__ __forceinline__ void outlier_unit_tcol(const Args &p, int64_t band, int m, int lane, float *out)
{
    constexpr int NJ = 8 * NB;
    float acc[NJ];
#pragma unroll
    for (int j = 0; j < NJ; j++)
        acc[j] = 0.0f;
    const int64_t end = p.optr[band + 1];
    const int64_t beg = p.optr[band] + (int64_t)16 * p.ochunk * m;
    const int64_t stop = min(end, beg + (int64_t)16 * p.ochunk);
    for (int64_t s = beg + lane; s < stop; s += 4 * 32) {
        uint32_t e[4];
#pragma unroll
        for (int v = 0; v < 4; v++)
            e[v] = s + 32 * v < stop ? __ldg(p.oent + s + 32 * v) : 0u;
#pragma unroll
        for (int v = 0; v < 4; v++)
            if (e[v] != 0u)
                outlier_fma<NJ>(p, e[v], acc);
    }
#pragma unroll
    for (int j = 0; j < NJ; j++)
        acc[j] += __shfl_down_sync(kFull, acc[j], 16);
    if (lane < 16)
#pragma unroll
        for (int j = 0; j < NJ; j++)
            if (j < p.n)
                out[j * 16 + lane] = acc[j];
}

/* CSR outlier unit m of a band: rows m, m + ounits, ... of the band (lanes along a row, then a fixed-order warp sum;
 * lane i keeps row i's sums); the unit's other rows are 0. */
template <int NB> __device__ __forceinline__ void outlier_unit_csr(const Args &p, int64_t band, int m, int lane, float *out)
{
    constexpr int NJ = 8 * NB;
    float mine[NJ];
#pragma unroll
    for (int j = 0; j < NJ; j++)
        mine[j] = 0.0f;
    for (int i = m; i < 16 && band * 16 + i < p.rows; i += p.ounits) {
        const int64_t r = band * 16 + i;
        float acc[NJ];
#pragma unroll
        for (int j = 0; j < NJ; j++)
            acc[j] = 0.0f;
        const int64_t end = p.optr[r + 1];
        for (int64_t k = p.optr[r] + lane; k < end; k += 32)
            outlier_fma<NJ>(p, __ldg(p.oent + k), acc);
#pragma unroll
        for (int j = 0; j < NJ; j++) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                acc[j] += __shfl_xor_sync(kFull, acc[j], o);
            if (lane == i)
                mine[j] = acc[j];
        }
    }
    if (lane < 16)
#pragma unroll
        for (int j = 0; j < NJ; j++)
            if (j < p.n)
                out[j * 16 + lane] = mine[j];
}

template <int NB, int BG, bool VEC, bool TCOL>
__global__ void __launch_bounds__(kPartWarps * 32, NB == 1 ? (BG == 1 ? 7 : 5) : 4) quant_part(Args p)
{
    /* per warp, the two tiles it decodes at a time as fp16, rows padded to 48 bytes (ldmatrix without bank
     * conflicts) */
    __shared__ __align__(16) __half dec[kPartWarps][2][16][24];
    constexpr int kAhead = ahead<BG>();
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
    const int64_t u = (int64_t)blockIdx.x * kPartWarps + warp;
    if (u >= p.units)
        return;
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    if (alpha == 0.0f)
        return; /* quant_finish reads no unit sums then */
    const int g = lane >> 2, c = lane & 3; /* MMA roles */
    const int r = lane & 15, h = lane >> 4; /* decode roles: tile row r of the pair's tile h */
    const int64_t bands = (p.rows + 15) / 16;
    if (u >= p.tile_units) {
        const int64_t o = u - p.tile_units, band = o / p.ounits;
        const int m = (int)(o % p.ounits);
        /* the unit's sums, column by column: C(i, j) at out[16 j + i] */
        float *out = p.ws + (band * p.slots_per_band + p.units_per_band + m) * 16 * p.n;
        if (TCOL)
            outlier_unit_tcol<NB>(p, band, m, lane, out);
        else
            outlier_unit_csr<NB>(p, band, m, lane, out);
        return;
    }
    const int64_t band0 = (u / p.units_per_band) * BG;
    const int k = (int)(u % p.units_per_band);
    const int t0 = k * p.unit_tiles;
    const int t1 = min(t0 + p.unit_tiles, (int)p.tcols);
    const int tfull = (int)(p.cols / 16); /* cols <= 65536: tile numbers fit an int */
    float acc[BG][NB][4];
#pragma unroll
    for (int b = 0; b < BG; b++)
#pragma unroll
        for (int J = 0; J < NB; J++)
            acc[b][J][0] = acc[b][J][1] = acc[b][J][2] = acc[b][J][3] = 0.0f;
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
    const uint64_t *bw = p.words + band0 * p.tcols * 16;
    const int64_t bstride = p.tcols * 16; /* words from one band to the next */
    bool bvalid[BG];
#pragma unroll
    for (int b = 0; b < BG; b++)
        bvalid[b] = band0 + b < bands;
    /* a group of 2 * kAhead tiles from t, for every band of the unit; SAFE: the group may reach past the unit or into
     * the last, partial tile column (then every tile is checked), else it is all full tiles of the unit */
    auto group = [&](int t, auto safe_tag) {
        constexpr bool SAFE = decltype(safe_tag)::value;
        uint2 wv[kAhead][BG];
        uint32_t bf[kAhead][2][NB][2];
#pragma unroll
        for (int v = 0; v < kAhead; v++)
#pragma unroll
            for (int b = 0; b < BG; b++) {
                const int tile = t + 2 * v + h;
                wv[v][b] = bvalid[b] && (!SAFE || tile < t1) ? ld_word(bw + b * bstride + tile * 16 + r)
                                                            : make_uint2(0u, 0u);
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
#pragma unroll
            for (int b = 0; b < BG; b++) {
                if (!bvalid[b])
                    break;
                const uint2 w = wv[v][b];
                /* the pair's tile statistics: lanes 8q .. 8q + 7 hold the pieces of word q of the 4 halves (tile 0
                 * rows 0-7, 8-15, tile 1 rows 0-7, 8-15) */
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
                const uint32_t x9 = w.x >> 9; /* pairs 3 and 4 at bits 0 and 3 */
                d0.x = pair_weights<0>(w.x, ns2, m2);
                d0.y = pair_weights<3>(w.x, ns2, m2);
                d0.z = pair_weights<6>(w.x, ns2, m2);
                d0.w = pair_weights<0>(x9, ns2, m2);
                d1.x = pair_weights<3>(x9, ns2, m2);
                d1.y = pair_weights<0>(w.y, ns2, m2);
                d1.z = pair_weights<3>(w.y, ns2, m2);
                d1.w = pair_weights<6>(w.y, ns2, m2);
                __syncwarp(); /* the previous tiles' ldmatrix reads are done */
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
                        mma_16816<__half>(acc[b][J], a, bf[v][e][J][0], bf[v][e][J][1]);
                }
            }
        }
    };
    int t = t0;
    for (; t + 2 * kAhead <= min(t1, tfull); t += 2 * kAhead)
        group(t, std::false_type());
    for (; t < t1; t += 2 * kAhead)
        group(t, std::true_type());
#pragma unroll
    for (int b = 0; b < BG; b++) {
        if (!bvalid[b])
            break;
        float *out = p.ws + ((band0 + b) * p.slots_per_band + k) * 16 * p.n;
#pragma unroll
        for (int J = 0; J < NB; J++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int j = 8 * J + 2 * c + e;
                if (j < p.n) {
                    out[j * 16 + g] = -acc[b][J][e];
                    out[j * 16 + g + 8] = -acc[b][J][2 + e];
                }
            }
    }
}

__global__ void __launch_bounds__(256) quant_finish(Args p)
{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= p.rows * p.n)
        return;
    const int64_t r = idx % p.rows, j = idx / p.rows;
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    __half *cp = p.c + r * p.incc + j * p.ldc;
    float res = 0.0f;
    if (alpha != 0.0f) {
        const int64_t band = r / 16;
        const float *us = p.ws + band * p.slots_per_band * 16 * p.n + j * 16 + (r & 15);
        float sum = 0.0f;
        for (int s = 0; s < p.slots_per_band; s++)
            sum += us[(int64_t)s * 16 * p.n];
        res = alpha * sum;
    }
    if (beta != 0.0f)
        res = fmaf(beta, __half2float(*cp), res);
    *cp = __float2half_rn(res);
}

template <int NB, int BG, bool VEC, bool TCOL> cudaError_t launch(Args p, int unit_tiles, cudaStream_t s)
{
    p.unit_tiles = unit_tiles;
    p.units_per_band = (int)((p.tcols + unit_tiles - 1) / unit_tiles);
    p.slots_per_band = p.units_per_band + p.ounits;
    p.tile_units = ((p.rows + 15) / 16 + BG - 1) / BG * p.units_per_band;
    p.units = p.tile_units + (p.rows + 15) / 16 * p.ounits;
    if (p.units > 0) {
        quant_part<NB, BG, VEC, TCOL><<<(unsigned)((p.units + kPartWarps - 1) / kPartWarps), kPartWarps * 32, 0, s>>>(p);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    quant_finish<<<(unsigned)((p.rows * p.n + 255) / 256), 256, 0, s>>>(p);
    return cudaGetLastError();
}

template <int NB, bool VEC, bool TCOL> cudaError_t launch_n(const Args &p, const macko_quant_kargs *a, cudaStream_t s)
{
    return a->n > 4 ? launch<NB, 4, VEC, TCOL>(p, a->unit_tiles_g, s) : launch<NB, 1, VEC, TCOL>(p, a->unit_tiles, s);
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
    p.ounits = a->ounits;
    p.ochunk = a->ochunk;
    cudaStream_t s = (cudaStream_t)a->stream;
    /* 4-byte pairs of B: unit stride, even leading dimension (or one column) and an aligned start */
    const bool vec = a->incb == 1 && (a->n == 1 || (a->ldb & 1) == 0) && ((uintptr_t)a->b & 3u) == 0;
    const bool two = a->n > 8;
    const bool tc = a->tcol_outliers != 0;
    if (two)
        return vec ? (tc ? launch_n<2, true, true>(p, a, s) : launch_n<2, true, false>(p, a, s))
                   : (tc ? launch_n<2, false, true>(p, a, s) : launch_n<2, false, false>(p, a, s));
    return vec ? (tc ? launch_n<1, true, true>(p, a, s) : launch_n<1, true, false>(p, a, s))
               : (tc ? launch_n<1, false, true>(p, a, s) : launch_n<1, false, false>(p, a, s));
}
