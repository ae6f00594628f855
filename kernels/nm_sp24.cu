/* The SP24 path of the N:M kind (kernels/nm.h): C = alpha*M*B + beta*C on the sparse tensor cores, fp16 or bf16 M, B
 * and C, fp32 accumulation, mma.sp m16n8k32 (sm_80 and newer).
 *
 * Device layout (lapack_style_docs/FORMAT_NM.md, "SP24 device layout"): the matrix in units of 16 rows (a band) by 32
 * columns (a k-step), band-major. A unit is 512 bytes of values, lane L's 16 bytes being exactly its A fragment
 * (rows L/4 and L/4 + 8, windows L%4 and L%4 + 4, two values each), then, in a second array, 16 metadata words: word
 * 2*(L/4) + t (t = 0, 1) is the metadata register of lane 4*(L/4) + t with sparsity selector 0 (bits 4c..4c+3: the
 * two 2-bit positions of window c + 4t of row L/4; bits 16 + 4c..: the same for row L/4 + 8).
 *
 * Direct configurations (up to 8 columns, below): the fragments straight from global memory into registers, K split
 * over the warps of a block. Staged configurations (from 9 columns):
 * Block: 4 warps, each MT bands; NT columns of C; a range of k-steps (its split). Per stage of 64 columns every warp
 * copies its units and the block the 64 x NT piece of B into shared memory with cp.async, three stages deep; B
 * fragments come from ldmatrix. splits > 1: fp32 partials in the workspace, a finishing launch adds them in split
 * order. Zero values meet B in the MMA: a NaN sum is recomputed exactly from the row's nonzero values. */
#include "nm.h"

#include "macko_mma.cuh"
#include "nm_sp24.cuh"
#include "../src/plan.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

constexpr int kStages = 3;
constexpr int kUnitA = 512, kUnitM = 64, kUnit = kUnitA + kUnitM;

/* A block: WM x WN warps; warp (wm, wn) owns MT bands (16 rows each) and NW columns of C; KC columns of B per stage. */
__host__ __device__ constexpr int stage_bytes(int wm, int wn, int mt, int nw, int kc)
{
    return wm * mt * (kc / 32) * kUnit + wn * nw * (kc + 8) * 2;
}
__host__ __device__ constexpr int smem_bytes(int wm, int wn, int mt, int nw, int kc)
{
    return kStages * stage_bytes(wm, wn, mt, nw, kc);
}

template <typename H>
__device__ __forceinline__ void mma_sp(float (&d)[4], const uint4 &a, const uint32_t (&b)[4], uint32_t e)
{
    if constexpr (std::is_same<H, __nv_bfloat16>::value)
        asm("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
    else
        asm("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
}

template <typename H, int WM, int WN, int MT, int NW, int KC>
__global__ void __launch_bounds__(WM * WN * 32, (WM * WN == 4 ? 4 : 2) / (MT * NW >= 128 ? 2 : 1))
sp24_kernel(const P<H> p)
{
    constexpr int kT = WM * WN * 32, kKS = KC / 32, kBP = KC + 8, kRows = WM * MT * 16, kCols = WN * NW;
    constexpr int kSB = stage_bytes(WM, WN, MT, NW, KC);
    constexpr int kBOff = WM * MT * kKS * kUnit;
    extern __shared__ __align__(16) char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int wm = warp / WN, wn = warp % WN;
    const int64_t j0 = (int64_t)blockIdx.y * kCols;
    const int z = blockIdx.z;
    const int bandb = blockIdx.x * (WM * MT);
    const int band0 = bandb + wm * MT;
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev ? *p.beta_dev : p.beta;

    if (alpha == 0.0f) { /* C = beta * C: A and B are not read (split 0's blocks only) */
        if (z != 0)
            return;
        const int64_t r0 = (int64_t)bandb * 16;
        for (int e = threadIdx.x; e < kRows * kCols; e += kT) {
            const int64_t r = r0 + e % kRows, j = j0 + e / kRows;
            if (r < p.rows && j < p.n) {
                H *cp = p.c + r * p.incc + j * p.ldc;
                *cp = Tc16<H>::from_float(beta != 0.0f ? beta * Tc16<H>::to_float(*cp) : 0.0f);
            }
        }
        return;
    }

    const int ks0 = z * p.kps, ks1 = min(p.ksteps, ks0 + p.kps);
    const int nst = (ks1 - ks0 + kKS - 1) / kKS;
    const int64_t lim = min(p.cols, (int64_t)ks1 * 32);

    /* Each thread's 16-byte chunks are the same in every stage but for the k offset: their sources and places are
     * worked out once here, so a stage's copies cost a few instructions each. */
    constexpr int kCA = (WM * MT * kKS * 36 + kT - 1) / kT, kCB = (kCols * (KC / 8) + kT - 1) / kT;
    const char *srcA[kCA];
    uint32_t dstA[kCA];
    int ksA[kCA]; /* k-step offset inside the stage; -1: no chunk */
    int stA[kCA]; /* bytes from one stage's source to the next */
#pragma unroll
    for (int i = 0; i < kCA; i++) {
        const int q = threadIdx.x + i * kT;
        const int u = q / 36, c = q % 36, bi = u / kKS, kq = u % kKS;
        const int band = bandb + bi;
        ksA[i] = -1;
        stA[i] = c < 32 ? kKS * kUnitA : kKS * kUnitM;
        srcA[i] = reinterpret_cast<const char *>(p.vals);
        dstA[i] = 0;
        if (q < WM * MT * kKS * 36 && band < p.bands) {
            const int64_t unit = (int64_t)band * p.ksteps + ks0 + kq;
            ksA[i] = kq;
            srcA[i] = c < 32 ? reinterpret_cast<const char *>(p.vals + unit * 32 + c)
                             : reinterpret_cast<const char *>(p.meta + unit * 16 + (c - 32) * 4);
            dstA[i] = (uint32_t)(u * kUnit + (c < 32 ? c * 16 : kUnitA + (c - 32) * 16));
        }
    }
    const H *srcB[kCB];
    uint32_t dstB[kCB];
    int kqB[kCB]; /* column offset inside the stage; -1: no chunk (past n or past the block's share) */
#pragma unroll
    for (int i = 0; i < kCB; i++) {
        const int q = threadIdx.x + i * kT;
        const int jj = q / (KC / 8), kq = (q % (KC / 8)) * 8;
        const int64_t j = j0 + jj;
        kqB[i] = -1;
        srcB[i] = p.b;
        dstB[i] = (uint32_t)((jj * kBP + kq) * 2);
        if (q < kCols * (KC / 8) && j < p.n) {
            kqB[i] = kq;
            srcB[i] = p.b + j * p.ldb + (int64_t)ks0 * 32 + kq;
        }
    }
    const uint32_t sbase = smem_addr(smem);

    auto load = [&](int s) {
        const uint32_t base = sbase + (uint32_t)((s % kStages) * kSB);
        const int kst = ks0 + s * kKS;
        /* the block's units: 32 value chunks and 4 metadata chunks of 16 bytes each */
#pragma unroll
        for (int i = 0; i < kCA; i++)
            if (ksA[i] >= 0 && kst + ksA[i] < ks1)
                cp_async16(base + dstA[i], srcA[i] + (int64_t)s * stA[i], 16);
        const int koff = s * KC;
        if (p.vec) {
#pragma unroll
            for (int i = 0; i < kCB; i++) {
                if (threadIdx.x + i * kT >= kCols * (KC / 8))
                    continue;
                const int64_t k = (int64_t)kst * 32 + (kqB[i] < 0 ? 0 : kqB[i]);
                if (kqB[i] >= 0 && k + 8 <= lim) {
                    cp_async16(base + kBOff + dstB[i], srcB[i] + koff, 16);
                } else {
                    /* past n or cols, or the last partial chunk: plain loads of what exists, zeros after it (a
                     * short cp.async still counts as a 16-byte read for compute-sanitizer) */
                    uint32_t w[4] = {0u, 0u, 0u, 0u};
                    if (kqB[i] >= 0 && k < lim) {
                        const unsigned short *src = reinterpret_cast<const unsigned short *>(srcB[i] + koff);
                        for (int e = 0; e < 8 && k + e < lim; e++)
                            w[e >> 1] |= (uint32_t)src[e] << (16 * (e & 1));
                    }
                    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(base + kBOff + dstB[i]), "r"(w[0]),
                                 "r"(w[1]), "r"(w[2]), "r"(w[3])
                                 : "memory");
                }
            }
        } else {
            unsigned short *sb = reinterpret_cast<unsigned short *>(smem + (s % kStages) * kSB + kBOff);
            const unsigned short *gb = reinterpret_cast<const unsigned short *>(p.b);
            const int64_t kb = (int64_t)kst * 32;
            for (int q = threadIdx.x; q < kCols * KC; q += kT) {
                const int jj = q / KC, kq = q % KC;
                const int64_t k = kb + kq, j = j0 + jj;
                sb[jj * kBP + kq] = j < p.n && k < lim ? gb[k * p.incb + j * p.ldb] : (unsigned short)0;
            }
        }
    };

    float acc[MT][NW / 8][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NW / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;

#pragma unroll
    for (int s = 0; s < kStages - 1; s++) {
        if (s < nst)
            load(s);
        cp_async_commit();
    }
    for (int s = 0; s < nst; s++) {
        cp_async_wait<kStages - 2>();
        __syncthreads();
        if (s + kStages - 1 < nst)
            load(s + kStages - 1);
        cp_async_commit();
        const char *base = smem + (s % kStages) * kSB;
        const int kst = ks0 + s * kKS;
#pragma unroll
        for (int q = 0; q < kKS; q++) {
            if (kst + q >= ks1)
                continue;
            uint4 a[MT];
            uint32_t e[MT];
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const int u = (wm * MT + i) * kKS + q;
                a[i] = *reinterpret_cast<const uint4 *>(base + u * kUnit + lane * 16);
                /* a band past the matrix's end was not copied: any valid metadata (its sums are not stored), so the
                 * MMAs need no branch (a predicated mma.sync costs a warp synchronisation each) */
                e[i] = t < 2 && band0 + i < p.bands
                           ? *reinterpret_cast<const uint32_t *>(base + u * kUnit + kUnitA + (g * 2 + t) * 4)
                           : 0x44444444u;
            }
#pragma unroll
            for (int j = 0; j < NW / 8; j++) {
                uint32_t bf[4];
                ldsm_x4(bf, smem_addr(base + kBOff + ((wn * NW + j * 8 + (lane & 7)) * kBP + q * 32 + (lane >> 3) * 8) * 2));
#pragma unroll
                for (int i = 0; i < MT; i++)
                    mma_sp<H>(acc[i][j], a[i], bf, e[i]);
            }
        }
    }
    cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < MT; i++) {
        const int64_t rb = (int64_t)(band0 + i) * 16 + g;
#pragma unroll
        for (int j = 0; j < NW / 8; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int64_t r = rb + (e >> 1) * 8, col = j0 + wn * NW + j * 8 + 2 * t + (e & 1);
                if (r < p.rows && col < p.n) {
                    if (gridDim.z == 1)
                        put_c(p, r, col, acc[i][j][e], alpha, beta);
                    else
                        p.ws[((int64_t)z * p.n + col) * p.rows + r] = acc[i][j][e];
                }
            }
        }
    }
}

/* ---- Direct configurations (kCfgs ..., bench/NOTES.md session 20): the same units, no shared-memory staging.
 * A unit's lane order is the mma.sp A fragment, so each lane loads its 16 bytes of values and its metadata word
 * straight from global memory into registers; B's fragment (B[32 k + 8 m + 2 t + {0, 1}][j0 + g], m = 0..3) comes
 * from global memory per lane (L1-cached; at n = 1 every lane group loads the one column and the eight columns of the
 * MMA are copies). A block takes MT bands and 8 columns of C; its W warps (W = a->splits, macko_nm_sp24_splits) take
 * the k-steps w, w + W, w + 2W, ... with U of them loaded ahead, and add their sums in warp order through shared
 * memory. No workspace, no second launch; the sums of every element are fixed by (MT, U, W). */
__device__ __forceinline__ uint4 ldg_stream16(const uint4 *q)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(q));
    return v;
}
__device__ __forceinline__ uint32_t ldg_stream4(const uint32_t *q)
{
    uint32_t v;
    asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];\n" : "=r"(v) : "l"(q));
    return v;
}

/* The B fragment of k-step k for a lane of quad position t: column bcol, rows 32 k + 8 m + 2 t, + 1 (m = 0..3); rows
 * at or past cols read as zero. VEC: unit element stride and bcol 4-byte aligned. */
template <typename H, bool VEC>
__device__ __forceinline__ void direct_b(uint32_t (&bf)[4], const P<H> &p, const H *bcol, int k, int t)
{
    const int64_t k0 = (int64_t)k * 32 + 2 * t;
    const unsigned short *src = reinterpret_cast<const unsigned short *>(bcol);
    if (VEC && (int64_t)k * 32 + 32 <= p.cols) {
#pragma unroll
        for (int m = 0; m < 4; m++)
            bf[m] = __ldg(reinterpret_cast<const uint32_t *>(src + k0 + 8 * m));
        return;
    }
#pragma unroll
    for (int m = 0; m < 4; m++) {
        const int64_t r = k0 + 8 * m;
        const uint32_t lo = r < p.cols ? __ldg(src + r * p.incb) : 0u;
        const uint32_t hi = r + 1 < p.cols ? __ldg(src + (r + 1) * p.incb) : 0u;
        bf[m] = lo | hi << 16;
    }
}

template <typename H, int MT, int U, bool PIPE, bool VEC>
__global__ void __launch_bounds__(512) sp24_direct_kernel(const P<H> p)
{
    extern __shared__ __align__(16) char smem[];
    float *red = reinterpret_cast<float *>(smem); /* [W][MT][4][32] */
    const int nw = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int band0 = blockIdx.x * MT;
    const int64_t j0 = (int64_t)blockIdx.y * 8;
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev ? *p.beta_dev : p.beta;

    if (alpha == 0.0f) { /* C = beta * C: A and B are not read */
        for (int e = threadIdx.x; e < MT * 16 * 8; e += blockDim.x) {
            const int64_t r = (int64_t)band0 * 16 + e % (MT * 16), j = j0 + e / (MT * 16);
            if (r < p.rows && j < p.n) {
                H *cp = p.c + r * p.incc + j * p.ldc;
                *cp = Tc16<H>::from_float(beta != 0.0f ? beta * Tc16<H>::to_float(*cp) : 0.0f);
            }
        }
        return;
    }

    /* the column this lane's quad supplies: g, or the last column of the tile (copies; their sums are not stored) */
    const int64_t jg = j0 + g < p.n ? j0 + g : p.n - 1;
    const H *bcol = p.b + jg * p.ldb;
    const uint4 *va[MT];
    const uint32_t *ma[MT];
    bool live[MT];
#pragma unroll
    for (int i = 0; i < MT; i++) {
        live[i] = band0 + i < p.bands;
        const int64_t u0 = (int64_t)(live[i] ? band0 + i : 0) * p.ksteps;
        va[i] = p.vals + u0 * 32 + lane;
        ma[i] = p.meta + u0 * 16 + 2 * g + (t & 1);
    }
    float acc[MT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            acc[i][q] = 0.0f;

    /* a group: the U k-steps ks, ks + W, ..., ks + (U - 1) W of this warp */
    struct Group {
        uint4 a[U][MT];
        uint32_t e[U][MT], bf[U][4];
    };
    auto load = [&](Group &gr, int ks) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = ks + u * nw;
#pragma unroll
            for (int i = 0; i < MT; i++) {
                gr.a[u][i] = make_uint4(0u, 0u, 0u, 0u);
                gr.e[u][i] = 0x44444444u; /* a band past the matrix: zero values, any valid metadata */
            }
            if (k < p.ksteps) {
#pragma unroll
                for (int i = 0; i < MT; i++)
                    if (live[i]) {
                        gr.a[u][i] = ldg_stream16(va[i] + (int64_t)k * 32);
                        gr.e[u][i] = ldg_stream4(ma[i] + (int64_t)k * 16);
                    }
                direct_b<H, VEC>(gr.bf[u], p, bcol, k, t);
            }
        }
    };
    auto mul = [&](const Group &gr, int ks) {
#pragma unroll
        for (int u = 0; u < U; u++)
            if (ks + u * nw < p.ksteps)
#pragma unroll
                for (int i = 0; i < MT; i++)
                    mma_sp<H>(acc[i], gr.a[u][i], gr.bf[u], gr.e[u][i]);
    };
    const int step = U * nw;
    if (PIPE) { /* two groups in registers: the next group's loads are in flight while the MMAs take this one */
        Group g0, g1;
        load(g0, warp);
        for (int ks = warp; ks < p.ksteps; ks += 2 * step) {
            load(g1, ks + step);
            mul(g0, ks);
            load(g0, ks + 2 * step);
            mul(g1, ks + step);
        }
    } else {
        for (int ks = warp; ks < p.ksteps; ks += step) {
            Group g0;
            load(g0, ks);
            mul(g0, ks);
        }
    }

#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            red[((warp * MT + i) * 4 + q) * 32 + lane] = acc[i][q];
    __syncthreads();
    for (int x = threadIdx.x; x < MT * 128; x += blockDim.x) {
        const int i = x >> 7, q = (x >> 5) & 3, l = x & 31;
        const int64_t r = ((int64_t)band0 + i) * 16 + (l >> 2) + (q >> 1) * 8, j = j0 + 2 * (l & 3) + (q & 1);
        if (r >= p.rows || j >= p.n)
            continue;
        float s = 0.0f;
        for (int w = 0; w < nw; w++)
            s += red[((w * MT + i) * 4 + q) * 32 + l];
        put_c(p, r, j, s, alpha, beta);
    }
}

struct Direct {
    int mt, u, t, pipe; /* bands per block, k-steps per group, warps per SM the rule aims at, two groups in flight */
};
/* Measured on the H200 (bench/NOTES.md, sessions 20 and 25; ten configurations tried): 0 up to 4 columns, 1 where 0
 * would have one warp per block (many bands: 36864 rows), 2 from 5 to 8 columns (the B fragments serve two bands), 3
 * where 2 would have one warp per block (four bands a block: 36864 x 12288 at n = 8 156 -> 126 us). The warps per
 * SM aimed at: what the registers allow on sm_90 (64, 100 and 96 registers a thread; a sub-partition's 16384 hold 8,
 * 4 and 5 warps: 32, 16 and 20; 2 with two warps a block on 36864 x 12288, 18 an SM, ran two waves: 197 us) for 0,
 * 2 and 3; 48 for 1 as measured
 * in session 20 (40-50 registers: 36 resident; more than 18 blocks an SM would take a second wave). */
#define MACKO_SP24_DIRECT(X) X(0, 1, 4, 32, 0) X(1, 1, 2, 48, 0) X(2, 2, 2, 16, 1) X(3, 4, 2, 20, 0)
#define DIRECT_ROW(i, mt, u, t, pipe) {mt, u, t, pipe},
constexpr Direct kDirect[] = {MACKO_SP24_DIRECT(DIRECT_ROW)};
constexpr int kDirects = (int)(sizeof kDirect / sizeof kDirect[0]);

template <typename H, int MT, int U, bool PIPE> cudaError_t launch_direct(const P<H> &p, int warps, cudaStream_t st)
{
    const dim3 grid((unsigned)((p.bands + MT - 1) / MT), (unsigned)((p.n + 7) / 8));
    const size_t smem = (size_t)warps * MT * 128 * sizeof(float);
    if (p.vec)
        sp24_direct_kernel<H, MT, U, PIPE, true><<<grid, warps * 32, smem, st>>>(p);
    else
        sp24_direct_kernel<H, MT, U, PIPE, false><<<grid, warps * 32, smem, st>>>(p);
    return cudaGetLastError();
}

template <typename H> cudaError_t launch_direct_cfg(int d, const P<H> &p, int warps, cudaStream_t st)
{
    switch (d) {
#define DIRECT_CASE(i, mt, u, t, pipe)                                                                                 \
    case i:                                                                                                            \
        return launch_direct<H, mt, u, pipe != 0>(p, warps, st);
        MACKO_SP24_DIRECT(DIRECT_CASE)
#undef DIRECT_CASE
    default:
        return cudaErrorInvalidValue;
    }
}

struct Cfg {
    int wm, wn, mt, nw, kc, built;
};
/* The tile configurations (macko_nm_sp24_config picks one per n; the benchmark sweeps them, bench/NOTES.md). The last
 * field says whether the configuration is compiled: 0, 1 and 5-8 never won a measurement on the H100 or the H200
 * (bench/NOTES.md, sessions 8-20) and cost about 60 % of this file's compile time (CI has 90 minutes on 2 cores), so
 * they are retired: their numbers stay (the recorded results name configurations by number), a forced retired
 * configuration is refused by macko_plan_override, and one line here brings any of them back. */
#define MACKO_SP24_CFGS(X)                                                                                             \
    X(0, 4, 1, 1, 8, 64, 0) X(1, 4, 1, 1, 16, 64, 0) X(2, 4, 1, 1, 32, 64, 1) X(3, 4, 1, 2, 64, 64, 1)                  \
    X(4, 4, 1, 4, 64, 64, 1) X(5, 2, 2, 4, 64, 64, 0) X(6, 2, 4, 4, 32, 64, 0) X(7, 4, 2, 2, 64, 64, 0)                 \
    X(8, 2, 4, 4, 64, 64, 0) X(9, 4, 1, 1, 8, 128, 1) X(10, 4, 1, 1, 16, 128, 1)
#define CFG_ROW(i, wm, wn, mt, nw, kc, built) {wm, wn, mt, nw, kc, built},
constexpr Cfg kCfg[] = {MACKO_SP24_CFGS(CFG_ROW)};
constexpr int kCfgs = (int)(sizeof kCfg / sizeof kCfg[0]);

template <typename H, int WM, int WN, int MT, int NW, int KC> cudaError_t launch(const P<H> &p, int splits, cudaStream_t st)
{
    const dim3 grid((unsigned)((p.bands + WM * MT - 1) / (WM * MT)), (unsigned)((p.n + WN * NW - 1) / (WN * NW)),
                    (unsigned)splits);
    sp24_kernel<H, WM, WN, MT, NW, KC><<<grid, WM * WN * 32, smem_bytes(WM, WN, MT, NW, KC), st>>>(p);
    return cudaGetLastError();
}

template <typename H> cudaError_t raise_all()
{
    cudaError_t e = cudaSuccess;
#define CFG_RAISE(i, wm, wn, mt, nw, kc, built)                                                                        \
    if constexpr (built != 0) {                                                                                        \
        if (e == cudaSuccess)                                                                                          \
            e = cudaFuncSetAttribute(sp24_kernel<H, wm, wn, mt, nw, kc>, cudaFuncAttributeMaxDynamicSharedMemorySize,    \
                                     smem_bytes(wm, wn, mt, nw, kc));                                                  \
    }
    MACKO_SP24_CFGS(CFG_RAISE)
#undef CFG_RAISE
    return e;
}

template <typename H> cudaError_t launch_cfg(int cfg, const P<H> &p, int splits, cudaStream_t st)
{
    switch (cfg) {
#define CFG_CASE(i, wm, wn, mt, nw, kc, built)                                                                         \
    case i:                                                                                                            \
        if constexpr (built != 0)                                                                                      \
            return launch<H, wm, wn, mt, nw, kc>(p, splits, st);                                                       \
        else                                                                                                           \
            return cudaErrorInvalidValue;
        MACKO_SP24_CFGS(CFG_CASE)
#undef CFG_CASE
    default:
        return cudaErrorInvalidValue;
    }
}

template <typename H> cudaError_t run_direct(const macko_nm_args *a, int d)
{
    P<H> p = sp24_params<H>(a);
    const int warps = a->splits < 1 ? 1 : a->splits > 16 ? 16 : a->splits;
    const int64_t max_n = (int64_t)65535 * 8;
    cudaError_t e = cudaSuccess;
    for (int64_t j0 = 0; j0 < a->k.n && e == cudaSuccess; j0 += max_n) {
        p.n = a->k.n - j0 < max_n ? a->k.n - j0 : max_n;
        p.b = (const H *)a->k.b + j0 * a->k.ldb;
        p.c = (H *)a->k.c + j0 * a->k.ldc;
        p.vec = a->k.incb == 1 && ((uintptr_t)p.b & 3) == 0 && (p.n == 1 || a->k.ldb % 2 == 0);
        e = launch_direct_cfg<H>(d, p, warps, (cudaStream_t)a->k.stream);
    }
    return e;
}

template <typename H> cudaError_t run(const macko_nm_args *a)
{
    P<H> p = sp24_params<H>(a);
    const int cfg = a->cfg >= 0 && a->cfg < kCfgs + kDirects ? a->cfg : macko_nm_sp24_config(a->k.n);
    if (cfg >= kCfgs) /* a direct configuration */
        return run_direct<H>(a, cfg - kCfgs);
    const int nt = kCfg[cfg].wn * kCfg[cfg].nw, kks = kCfg[cfg].kc / 32;
    const cudaStream_t st = (cudaStream_t)a->k.stream;
    const int64_t max_n = (int64_t)65535 * nt;
    int64_t j0;
    cudaError_t e = cudaSuccess;
    for (j0 = 0; j0 < a->k.n && e == cudaSuccess; j0 += max_n) {
        int splits = a->splits < 1 ? 1 : a->splits;
        p.n = a->k.n - j0 < max_n ? a->k.n - j0 : max_n;
        p.b = (const H *)a->k.b + j0 * a->k.ldb;
        p.c = (H *)a->k.c + j0 * a->k.ldc;
        p.kps = (p.ksteps + splits - 1) / splits;
        p.kps = (p.kps + kks - 1) / kks * kks;
        if (p.kps < kks)
            p.kps = kks;
        splits = (p.ksteps + p.kps - 1) / p.kps;
        if (splits < 1)
            splits = 1;
        p.vec = a->k.incb == 1 && a->k.ldb % 8 == 0 && ((uintptr_t)p.b & 15) == 0;
        e = launch_cfg<H>(cfg, p, splits, st);
        if (e == cudaSuccess && splits > 1)
            e = sp24_finish_launch(p, splits, st);
    }
    return e;
}

} // namespace

extern "C" int macko_nm_sp24_configs(void) { return kCfgs + kDirects; }

extern "C" int macko_nm_sp24_config_built(int cfg)
{
    return cfg >= kCfgs ? cfg < kCfgs + kDirects : cfg >= 0 && kCfg[cfg].built != 0;
}

extern "C" int macko_nm_sp24_config(int64_t n)
{
    /* measured on the H100 (bench/NOTES.md, session 8): 128-column stages up to 16 columns of C; 32 x 64 warp tiles
     * from 33 on, 64 x 64 beyond 64 (the 2-D warp grids were no faster) */
    return n <= 4 ? kCfgs : n <= 8 ? kCfgs + 2 : n <= 16 ? 10 : n <= 32 ? 2 : n <= 64 ? 3 : 4;
}

extern "C" int macko_nm_sp24_auto_cfg(int64_t rows, int64_t cols, int64_t n, int sm_count)
{
    const int c = macko_nm_sp24_config(n);
    if ((c == kCfgs || c == kCfgs + 2) && macko_nm_sp24_splits(rows, cols, n, c, sm_count, 0) < 2)
        return c + 1; /* the direct configuration with more work a warp: 12 for 11, 14 for 13 */
    return c;
}

extern "C" int macko_nm_sp24_splits(int64_t rows, int64_t cols, int64_t n, int cfg, int sm_count, int64_t ws_floats)
{
    if (cfg < 0 || cfg >= kCfgs + kDirects)
        cfg = macko_nm_sp24_config(n);
    if (cfg >= kCfgs) { /* a direct configuration: its warps per block */
        const Direct d = kDirect[cfg - kCfgs];
        const int64_t nn = n < (int64_t)65535 * 8 ? n : (int64_t)65535 * 8;
        const int64_t blocks = ((rows + 15) / 16 + d.mt - 1) / d.mt * ((nn + 7) / 8), ksteps = (cols + 31) / 32;
        /* every block resident at once: d.t warps per SM (MACKO_SP24_DIRECT; measured: 19 for configuration 13
         * cost 30 % at n = 8, bench/NOTES.md session 20) over the blocks each SM takes */
        const int64_t per_sm = sm_count > 0 ? (blocks + sm_count - 1) / sm_count : blocks;
        int64_t w = per_sm > 0 ? d.t / per_sm : 1;
        if (w > ksteps / d.u)
            w = ksteps / d.u;
        return w < 1 ? 1 : w > 16 ? 16 : (int)w;
    }
    const Cfg c = kCfg[cfg];
    const int64_t bands = (rows + 15) / 16, ksteps = (cols + 31) / 32, nt = c.wn * c.nw, br = c.wm * c.mt;
    const int64_t nn = n < (int64_t)65535 * nt ? n : (int64_t)65535 * nt;
    const int64_t blocks = (bands + br - 1) / br * ((nn + nt - 1) / nt);
    /* up to 32 columns (bound by memory): enough blocks for about four per SM and at most about 40 k-steps per
     * split (more bytes in flight); beyond, about two blocks per SM (the partial sums cost more than they hide) */
    const int64_t target = (int64_t)sm_count * (n <= 32 ? 4 : 2);
    int64_t s = blocks > 0 ? (target + blocks - 1) / blocks : 1;
    if (n <= 32 && s < ksteps / 40)
        s = ksteps / 40;
    const int64_t most = ksteps / 8;
    if (s > most)
        s = most;
    if (s > 64)
        s = 64;
    while (s > 1 && s * rows * nn > ws_floats)
        s--;
    return s < 1 ? 1 : (int)s;
}

extern "C" int macko_nm_prepare(void)
{
    cudaError_t e = raise_all<__half>();
    if (e == cudaSuccess)
        e = raise_all<__nv_bfloat16>();
    if (e != cudaSuccess)
        cudaGetLastError();
    return (int)e;
}

extern "C" int macko_nm_sp24_spmm(const macko_nm_args *a)
{
    return a->combo == MACKO_COMBO_B ? (int)run<__nv_bfloat16>(a) : (int)run<__half>(a);
}
