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
#include "../src/plan.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kKC = 64;          /* columns of B per stage */
constexpr int kKS = kKC / 32;    /* k-steps per stage */
constexpr int kBP = kKC + 8;     /* halves per staged column of B (144 bytes: ldmatrix rows hit distinct banks) */
constexpr int kStages = 3;
constexpr int kUnitA = 512, kUnitM = 64;

__host__ __device__ constexpr int stage_bytes(int mt, int nt) { return kWarps * mt * kKS * (kUnitA + kUnitM) + nt * kBP * 2; }
__host__ __device__ constexpr int smem_bytes(int mt, int nt) { return kStages * stage_bytes(mt, nt); }

template <typename H> struct P {
    int64_t rows, cols, n;
    int bands, ksteps, kps, vec;
    const uint4 *vals;
    const uint32_t *meta;
    const H *b;
    int64_t incb, ldb;
    H *c;
    int64_t incc, ldc;
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
    float *ws;
};

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

/* The exact sum of row r times column j of B over the row's nonzero values, in column order, fp32. */
template <typename H> __device__ __forceinline__ float row_dot(const P<H> &p, int64_t r, int64_t j)
{
    const int64_t band = r >> 4;
    const int rr = (int)(r & 15), g = rr & 7, hi = rr >> 3;
    const unsigned short *vb = reinterpret_cast<const unsigned short *>(p.vals);
    const H *bj = p.b + j * p.ldb;
    float acc = 0.0f;
    for (int ks = 0; ks < p.ksteps; ks++) {
        const int64_t unit = band * p.ksteps + ks;
        for (int c = 0; c < 8; c++) {
            const int lane = g * 4 + (c & 3), reg = (c >> 2) * 2 + hi;
            const uint32_t nib = (__ldg(p.meta + unit * 16 + g * 2 + (c >> 2)) >> ((hi ? 16 : 0) + 4 * (c & 3))) & 15u;
            for (int s = 0; s < 2; s++) {
                const unsigned short v = __ldg(vb + unit * 256 + lane * 8 + reg * 2 + s);
                if ((v & 0x7FFFu) != 0) {
                    const int64_t k = (int64_t)ks * 32 + c * 4 + ((nib >> (2 * s)) & 3u);
                    acc = fmaf(Tc16<H>::to_float(Tc16<H>::from_bits(v)), Tc16<H>::to_float(bj[k * p.incb]), acc);
                }
            }
        }
    }
    return acc;
}

template <typename H> __device__ __forceinline__ void put_c(const P<H> &p, int64_t r, int64_t j, float v, float alpha, float beta)
{
    if (isnan(v))
        v = row_dot(p, r, j);
    H *cp = p.c + r * p.incc + j * p.ldc;
    float out = alpha * v;
    if (beta != 0.0f)
        out = fmaf(beta, Tc16<H>::to_float(*cp), out);
    *cp = Tc16<H>::from_float(out);
}

template <typename H, int MT, int NT> __global__ void __launch_bounds__(kThreads, MT == 1 ? 4 : MT == 2 ? 2 : 1) sp24_kernel(const P<H> p)
{
    extern __shared__ __align__(16) char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int64_t j0 = (int64_t)blockIdx.y * NT;
    const int z = blockIdx.z;
    const int band0 = blockIdx.x * (kWarps * MT) + warp * MT;
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev ? *p.beta_dev : p.beta;

    if (alpha == 0.0f) { /* C = beta * C: A and B are not read (split 0's blocks only) */
        if (z != 0)
            return;
        const int64_t r0 = (int64_t)blockIdx.x * kWarps * MT * 16;
        for (int e = threadIdx.x; e < kWarps * MT * 16 * NT; e += kThreads) {
            const int64_t r = r0 + e % (kWarps * MT * 16), j = j0 + e / (kWarps * MT * 16);
            if (r < p.rows && j < p.n) {
                H *cp = p.c + r * p.incc + j * p.ldc;
                *cp = Tc16<H>::from_float(beta != 0.0f ? beta * Tc16<H>::to_float(*cp) : 0.0f);
            }
        }
        return;
    }

    const int ks0 = z * p.kps, ks1 = min(p.ksteps, ks0 + p.kps);
    const int nst = (ks1 - ks0 + kKS - 1) / kKS;
    constexpr int kSB = stage_bytes(MT, NT);
    constexpr int kAOff = 0, kMOff = kWarps * MT * kKS * kUnitA, kBOff = kMOff + kWarps * MT * kKS * kUnitM;

    auto load = [&](int s) {
        char *base = smem + (s % kStages) * kSB;
        const int kst = ks0 + s * kKS;
#pragma unroll
        for (int i = 0; i < MT; i++) {
            const int band = band0 + i;
#pragma unroll
            for (int q = 0; q < kKS; q++) {
                const int ks = kst + q;
                if (band < p.bands && ks < ks1) {
                    const int64_t unit = (int64_t)band * p.ksteps + ks;
                    const int slot = (warp * MT + i) * kKS + q;
                    cp_async16(smem_addr(base + kAOff + slot * kUnitA + lane * 16), p.vals + unit * 32 + lane, 16);
                    if (lane < 4)
                        cp_async16(smem_addr(base + kMOff + slot * kUnitM + lane * 16), p.meta + unit * 16 + lane * 4, 16);
                }
            }
        }
        const int64_t kb = (int64_t)kst * 32;
        if (p.vec) {
            for (int q = threadIdx.x; q < NT * (kKC / 8); q += kThreads) {
                const int jj = q / (kKC / 8), kq = (q % (kKC / 8)) * 8;
                const int64_t k = kb + kq, j = j0 + jj;
                const int64_t lim = min(p.cols, (int64_t)ks1 * 32);
                int bytes = 0;
                const H *src = p.b;
                if (j < p.n && k < lim) {
                    bytes = (int)min((int64_t)16, (lim - k) * 2);
                    src = p.b + j * p.ldb + k;
                }
                cp_async16(smem_addr(base + kBOff + (jj * kBP + kq) * 2), src, bytes);
            }
        } else {
            unsigned short *sb = reinterpret_cast<unsigned short *>(base + kBOff);
            const unsigned short *gb = reinterpret_cast<const unsigned short *>(p.b);
            const int64_t lim = min(p.cols, (int64_t)ks1 * 32);
            for (int q = threadIdx.x; q < NT * kKC; q += kThreads) {
                const int jj = q / kKC, kq = q % kKC;
                const int64_t k = kb + kq, j = j0 + jj;
                sb[jj * kBP + kq] = j < p.n && k < lim ? gb[k * p.incb + j * p.ldb] : (unsigned short)0;
            }
        }
    };

    float acc[MT][NT / 8][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT / 8; j++)
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
                const int slot = (warp * MT + i) * kKS + q;
                a[i] = *reinterpret_cast<const uint4 *>(base + kAOff + slot * kUnitA + lane * 16);
                e[i] = t < 2 ? *reinterpret_cast<const uint32_t *>(base + kMOff + slot * kUnitM + (g * 2 + t) * 4) : 0u;
            }
#pragma unroll
            for (int j = 0; j < NT / 8; j++) {
                uint32_t bf[4];
                ldsm_x4(bf, smem_addr(base + kBOff + ((j * 8 + (lane & 7)) * kBP + q * 32 + (lane >> 3) * 8) * 2));
#pragma unroll
                for (int i = 0; i < MT; i++)
                    if (band0 + i < p.bands)
                        mma_sp<H>(acc[i][j], a[i], bf, e[i]);
            }
        }
    }
    cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < MT; i++) {
        const int64_t rb = (int64_t)(band0 + i) * 16 + g;
#pragma unroll
        for (int j = 0; j < NT / 8; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int64_t r = rb + (e >> 1) * 8, col = j0 + j * 8 + 2 * t + (e & 1);
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

/* Adds the splits' partials in split order and writes C (splits > 1). */
template <typename H> __global__ void sp24_finish(const P<H> p, int splits)
{
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev ? *p.beta_dev : p.beta;
    if (alpha == 0.0f)
        return;
    const int64_t total = p.rows * p.n;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = idx % p.rows, j = idx / p.rows;
        float s = 0.0f;
        for (int z = 0; z < splits; z++)
            s += p.ws[((int64_t)z * p.n + j) * p.rows + r];
        put_c(p, r, j, s, alpha, beta);
    }
}

struct Cfg {
    int mt, nt;
};
constexpr Cfg kCfg[] = {{1, 8}, {1, 16}, {1, 32}, {2, 64}, {4, 64}};

template <typename H, int MT, int NT> cudaError_t launch(const P<H> &p, int splits, cudaStream_t st)
{
    const dim3 grid((unsigned)((p.bands + kWarps * MT - 1) / (kWarps * MT)), (unsigned)((p.n + NT - 1) / NT),
                    (unsigned)splits);
    sp24_kernel<H, MT, NT><<<grid, kThreads, smem_bytes(MT, NT), st>>>(p);
    return cudaGetLastError();
}

template <typename H, int MT, int NT> cudaError_t raise_limit()
{
    return cudaFuncSetAttribute(sp24_kernel<H, MT, NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes(MT, NT));
}

template <typename H> cudaError_t raise_all()
{
    cudaError_t e = raise_limit<H, 1, 8>();
    if (e == cudaSuccess) e = raise_limit<H, 1, 16>();
    if (e == cudaSuccess) e = raise_limit<H, 1, 32>();
    if (e == cudaSuccess) e = raise_limit<H, 2, 64>();
    if (e == cudaSuccess) e = raise_limit<H, 4, 64>();
    return e;
}

template <typename H> cudaError_t run(const macko_nm_args *a)
{
    P<H> p;
    const int cfg = macko_nm_sp24_config(a->k.n);
    const int nt = kCfg[cfg].nt;
    const cudaStream_t st = (cudaStream_t)a->k.stream;
    const int64_t max_n = (int64_t)65535 * nt;
    int64_t j0;
    cudaError_t e = cudaSuccess;
    p.rows = a->k.rows;
    p.cols = a->k.cols;
    p.bands = (int)((a->k.rows + 15) / 16);
    p.ksteps = (int)((a->k.cols + 31) / 32);
    p.vals = (const uint4 *)a->values;
    p.meta = (const uint32_t *)a->meta;
    p.incb = a->k.incb;
    p.ldb = a->k.ldb;
    p.incc = a->k.incc;
    p.ldc = a->k.ldc;
    p.alpha_dev = a->k.alpha_dev;
    p.beta_dev = a->k.beta_dev;
    p.alpha = a->k.alpha;
    p.beta = a->k.beta;
    p.ws = a->ws;
    for (j0 = 0; j0 < a->k.n && e == cudaSuccess; j0 += max_n) {
        int splits = a->splits < 1 ? 1 : a->splits;
        p.n = a->k.n - j0 < max_n ? a->k.n - j0 : max_n;
        p.b = (const H *)a->k.b + j0 * a->k.ldb;
        p.c = (H *)a->k.c + j0 * a->k.ldc;
        p.kps = (p.ksteps + splits - 1) / splits;
        p.kps = (p.kps + kKS - 1) / kKS * kKS;
        if (p.kps < kKS)
            p.kps = kKS;
        splits = (p.ksteps + p.kps - 1) / p.kps;
        if (splits < 1)
            splits = 1;
        p.vec = a->k.incb == 1 && a->k.ldb % 8 == 0 && ((uintptr_t)p.b & 15) == 0;
        switch (cfg) {
        case 0: e = launch<H, 1, 8>(p, splits, st); break;
        case 1: e = launch<H, 1, 16>(p, splits, st); break;
        case 2: e = launch<H, 1, 32>(p, splits, st); break;
        case 3: e = launch<H, 2, 64>(p, splits, st); break;
        default: e = launch<H, 4, 64>(p, splits, st); break;
        }
        if (e == cudaSuccess && splits > 1) {
            const int64_t total = p.rows * p.n;
            const int64_t blocks = (total + 255) / 256;
            sp24_finish<H><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, st>>>(p, splits);
            e = cudaGetLastError();
        }
    }
    return e;
}

} // namespace

extern "C" int macko_nm_sp24_config(int64_t n)
{
    return n <= 8 ? 0 : n <= 16 ? 1 : n <= 32 ? 2 : n <= 64 ? 3 : 4;
}

extern "C" int macko_nm_sp24_splits(int64_t rows, int64_t cols, int64_t n, int sm_count, int64_t ws_floats)
{
    const Cfg c = kCfg[macko_nm_sp24_config(n)];
    const int64_t bands = (rows + 15) / 16, ksteps = (cols + 31) / 32;
    const int64_t nn = n < (int64_t)65535 * c.nt ? n : (int64_t)65535 * c.nt;
    const int64_t blocks = (bands + kWarps * c.mt - 1) / (kWarps * c.mt) * ((nn + c.nt - 1) / c.nt);
    const int64_t target = (int64_t)sm_count * 8;
    int64_t s = blocks > 0 ? (target + blocks - 1) / blocks : 1;
    const int64_t most = ksteps / 16;
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
