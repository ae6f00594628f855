/* The SP24 path of the N:M kind (kernels/nm.h): C = alpha*M*B + beta*C on the sparse tensor cores, fp16 or bf16 M, B
 * and C, fp32 accumulation, mma.sp m16n8k32 (sm_80 and newer).
 *
 * Device layout (lapack_style_docs/FORMAT_NM.md, "SP24 device layout"): the matrix in units of 16 rows (a band) by 32
 * columns (a k-step), band-major. A unit is 512 bytes of values, lane L's 16 bytes being exactly its A fragment
 * (rows L/4 and L/4 + 8, windows L%4 and L%4 + 4, two values each), then, in a second array, 16 metadata words: word
 * 2*(L/4) + t (t = 0, 1) is the metadata register of lane 4*(L/4) + t with sparsity selector 0 (bits 4c..4c+3: the
 * two 2-bit positions of window c + 4t of row L/4; bits 16 + 4c..: the same for row L/4 + 8).
 *
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

struct Cfg {
    int wm, wn, mt, nw, kc;
};
/* The tile configurations (macko_nm_sp24_config picks one per n; the benchmark sweeps them, bench/NOTES.md). */
#define MACKO_SP24_CFGS(X)                                                                                             \
    X(0, 4, 1, 1, 8, 64) X(1, 4, 1, 1, 16, 64) X(2, 4, 1, 1, 32, 64) X(3, 4, 1, 2, 64, 64) X(4, 4, 1, 4, 64, 64)          \
    X(5, 2, 2, 4, 64, 64) X(6, 2, 4, 4, 32, 64) X(7, 4, 2, 2, 64, 64) X(8, 2, 4, 4, 64, 64) X(9, 4, 1, 1, 8, 128)        \
    X(10, 4, 1, 1, 16, 128)
#define CFG_ROW(i, wm, wn, mt, nw, kc) {wm, wn, mt, nw, kc},
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
#define CFG_RAISE(i, wm, wn, mt, nw, kc)                                                                               \
    if (e == cudaSuccess)                                                                                              \
        e = cudaFuncSetAttribute(sp24_kernel<H, wm, wn, mt, nw, kc>, cudaFuncAttributeMaxDynamicSharedMemorySize,        \
                                 smem_bytes(wm, wn, mt, nw, kc));
    MACKO_SP24_CFGS(CFG_RAISE)
#undef CFG_RAISE
    return e;
}

template <typename H> cudaError_t launch_cfg(int cfg, const P<H> &p, int splits, cudaStream_t st)
{
    switch (cfg) {
#define CFG_CASE(i, wm, wn, mt, nw, kc)                                                                                \
    case i:                                                                                                            \
        return launch<H, wm, wn, mt, nw, kc>(p, splits, st);
        MACKO_SP24_CFGS(CFG_CASE)
#undef CFG_CASE
    default:
        return cudaErrorInvalidValue;
    }
}

template <typename H> cudaError_t run(const macko_nm_args *a)
{
    P<H> p = sp24_params<H>(a);
    const int cfg = a->cfg >= 0 && a->cfg < kCfgs ? a->cfg : macko_nm_sp24_config(a->k.n);
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

extern "C" int macko_nm_sp24_configs(void) { return kCfgs; }

extern "C" int macko_nm_sp24_config(int64_t n)
{
    /* measured on the H100 (bench/NOTES.md, session 8): 128-column stages up to 16 columns of C; 32 x 64 warp tiles
     * from 33 on, 64 x 64 beyond 64 (the 2-D warp grids were no faster) */
    return n <= 8 ? 9 : n <= 16 ? 10 : n <= 32 ? 2 : n <= 64 ? 3 : 4;
}

extern "C" int macko_nm_sp24_splits(int64_t rows, int64_t cols, int64_t n, int sm_count, int64_t ws_floats)
{
    const Cfg c = kCfg[macko_nm_sp24_config(n)];
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
