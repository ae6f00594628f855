/* The GEN and SIMT paths of the N:M kind (kernels/nm.h) over the GEN device layout (the canonical arrays of
 * lapack_style_docs/FORMAT_NM.md): value j of window w of row r at values[r*kept + w*n + j], its position at
 * pos[(r/v)*kept + w*n + j]. */
#include "nm.h"

#include "../src/plan.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

/* Value type T, its accumulation type (fp32; fp64 for fp64) and zero test (+0/-0 are padding). */
template <typename T> struct Ty;
template <> struct Ty<__half> {
    using Acc = float;
    static __device__ __forceinline__ float get(const __half *p) { return __half2float(*p); }
    static __device__ __forceinline__ void put(__half *p, float v) { *p = __float2half_rn(v); }
};
template <> struct Ty<__nv_bfloat16> {
    using Acc = float;
    static __device__ __forceinline__ float get(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
    static __device__ __forceinline__ void put(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }
};
template <> struct Ty<float> {
    using Acc = float;
    static __device__ __forceinline__ float get(const float *p) { return *p; }
    static __device__ __forceinline__ void put(float *p, float v) { *p = v; }
};
template <> struct Ty<double> {
    using Acc = double;
    static __device__ __forceinline__ double get(const double *p) { return *p; }
    static __device__ __forceinline__ void put(double *p, double v) { *p = v; }
};

template <typename T> struct G {
    int64_t rows, cols, n, kept;
    int nn, mm, vv;
    const T *vals;
    const uint8_t *pos;
    const T *b;
    int64_t incb, ldb;
    T *c;
    int64_t incc, ldc;
    /* scalars in the accumulation type: fp32 combos use the float fields, fp64 the double ones */
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
    const double *alpha_dev_d, *beta_dev_d;
    double alpha_d, beta_d;
};

template <typename T> __device__ __forceinline__ void scalars(const G<T> &p, typename Ty<T>::Acc &alpha, typename Ty<T>::Acc &beta)
{
    if constexpr (std::is_same<T, double>::value) {
        alpha = p.alpha_dev_d ? *p.alpha_dev_d : p.alpha_d;
        beta = p.beta_dev_d ? *p.beta_dev_d : p.beta_d;
    } else {
        alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
        beta = p.beta_dev ? *p.beta_dev : p.beta;
    }
}

template <typename T> __device__ __forceinline__ void put_c(const G<T> &p, int64_t r, int64_t j, typename Ty<T>::Acc v,
                                                            typename Ty<T>::Acc alpha, typename Ty<T>::Acc beta)
{
    T *cp = p.c + r * p.incc + j * p.ldc;
    typename Ty<T>::Acc out = alpha * v;
    if (beta != 0)
        out = fma(beta, (typename Ty<T>::Acc)Ty<T>::get(cp), out);
    Ty<T>::put(cp, out);
}

constexpr int kGenWarps = 8;

/* One warp per row and tile of NT columns; lanes take the row's kept values 32 apart and skip zeros. The lane sums
 * are added by a fixed butterfly: deterministic. */
template <typename T, int NT> __global__ void __launch_bounds__(kGenWarps * 32, 4) gen_kernel(const G<T> p)
{
    using A = typename Ty<T>::Acc;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t r = (int64_t)blockIdx.x * kGenWarps + warp;
    const int64_t j0 = (int64_t)blockIdx.y * NT;
    if (r >= p.rows)
        return;
    A alpha, beta;
    scalars(p, alpha, beta);
    if (alpha == 0) {
        if (lane < NT && j0 + lane < p.n) {
            T *cp = p.c + r * p.incc + (j0 + lane) * p.ldc;
            Ty<T>::put(cp, beta != 0 ? beta * (A)Ty<T>::get(cp) : (A)0);
        }
        return;
    }
    A acc[NT];
#pragma unroll
    for (int c = 0; c < NT; c++)
        acc[c] = 0;
    const T *vr = p.vals + r * p.kept;
    const uint8_t *pr = p.pos + (r / p.vv) * p.kept;
    const unsigned short *vbits = reinterpret_cast<const unsigned short *>(vr);
    const int q32 = 32 / p.nn, r32 = 32 % p.nn;
    int64_t w = lane / p.nn;
    int s = lane % p.nn;
    for (int64_t j = lane; j < p.kept; j += 32) {
        bool nz;
        if constexpr (sizeof(T) == 2)
            nz = (__ldg(vbits + j) & 0x7FFFu) != 0;
        else
            nz = vr[j] != (T)0;
        if (nz) {
            const A v = (A)Ty<T>::get(vr + j);
            const int64_t col = w * p.mm + __ldg(pr + j);
            const T *bp = p.b + col * p.incb + j0 * p.ldb;
#pragma unroll
            for (int c = 0; c < NT; c++)
                if (j0 + c < p.n)
                    acc[c] = fma(v, (A)Ty<T>::get(bp + c * p.ldb), acc[c]);
        }
        s += r32;
        w += q32;
        if (s >= p.nn) {
            s -= p.nn;
            w++;
        }
    }
#pragma unroll
    for (int c = 0; c < NT; c++) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            acc[c] += __shfl_xor_sync(0xFFFFFFFFu, acc[c], o);
    }
#pragma unroll
    for (int c = 0; c < NT; c++)
        if (lane == c && j0 + c < p.n)
            put_c(p, r, j0 + c, acc[c], alpha, beta);
}

/* ---- SIMT: fp32, blocked */
constexpr int kBM = 128, kBN = 128, kKB = 32, kST = 256;
constexpr int kAP = kBM + 4; /* floats per staged slot row of A */
constexpr int kBPs = kBN + 4;
constexpr int kMaxGroups = kBM / 8;
constexpr int simt_smem() { return 2 * (kKB * kAP + kKB * kBPs) * 4 + 2 * kMaxGroups * kKB; }

/* The exact sum of row r times column j over the row's nonzero values in column order (replaces a NaN sum). */
__device__ __forceinline__ float gen_row_dot(const G<float> &p, int64_t r, int64_t j)
{
    const float *vr = p.vals + r * p.kept;
    const uint8_t *pr = p.pos + (r / p.vv) * p.kept;
    float acc = 0.0f;
    for (int64_t q = 0; q < p.kept; q++) {
        const float v = vr[q];
        if (v != 0.0f)
            acc = fmaf(v, p.b[((q / p.nn) * p.mm + pr[q]) * p.incb + j * p.ldb], acc);
    }
    return acc;
}

/* Block: 128 rows x 128 columns of C, 256 threads of 8 x 8 (rows 8*ty.., columns 4*tx.. and 64 + 4*tx..). Per step of
 * 32 columns of B (32/m windows, S = n*32/m kept values per row) the block stages S x 128 values of A (transposed),
 * the 32 x 128 piece of B and the groups' positions as offsets 0..31; a thread's 8 rows share one group (v >= 8), so
 * each kept value costs two 16-byte loads of A, two of B and one position byte per 64 multiply-adds. Global loads for
 * the next step go to registers while this step is multiplied. */
template <bool VEC, bool VA> __global__ void __launch_bounds__(kST, 1) simt_kernel(const G<float> p)
{
    extern __shared__ __align__(16) float fsm[];
    float *As = fsm;                      /* [2][kKB][kAP] */
    float *Bs = fsm + 2 * kKB * kAP;      /* [2][kKB][kBPs] */
    uint8_t *Ps = reinterpret_cast<uint8_t *>(Bs + 2 * kKB * kBPs); /* [2][kMaxGroups][kKB] */
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int64_t row0 = (int64_t)blockIdx.x * kBM, col0 = (int64_t)blockIdx.y * kBN;
    float alpha, beta;
    scalars(p, alpha, beta);
    if (alpha == 0.0f) {
        for (int e = tid; e < kBM * kBN; e += kST) {
            const int64_t r = row0 + e % kBM, j = col0 + e / kBM;
            if (r < p.rows && j < p.n) {
                float *cp = p.c + r * p.incc + j * p.ldc;
                *cp = beta != 0.0f ? beta * *cp : 0.0f;
            }
        }
        return;
    }
    const int S = p.nn * 32 / p.mm;          /* kept values per row per step */
    const int S4 = (S + 3) & ~3;             /* ... padded with zero values to whole position words */
    const int64_t steps = (p.cols + 31) / 32;
    const int groups_blk = kBM / p.vv;       /* v >= 8: at most 16 */
    const int64_t g0 = row0 / p.vv;
    const int64_t G = (p.rows + p.vv - 1) / p.vv;
    const int a4 = VA ? S / 4 : S;           /* loads (float4, or floats) per row per step */

    float4 ra[4];
    float4 rb[4];
    uint8_t rp[2];
    auto gload = [&](int64_t st) {
        const int64_t k0 = st * 32;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int f = tid + i * kST;
            ra[i] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (VA && f < kBM * a4) {
                const int rr = f / a4, q = f % a4;
                if (row0 + rr < p.rows && st * S + q * 4 < p.kept)
                    ra[i] = *reinterpret_cast<const float4 *>(p.vals + (row0 + rr) * p.kept + st * S + q * 4);
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int f = tid + i * kST;
            const int cc = f % kBN, kq = (f / kBN) * 4;
            const int64_t j = col0 + cc, k = k0 + kq;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (j < p.n) {
                const float *bp = p.b + j * p.ldb;
                if (VEC && k + 3 < p.cols) {
                    v = *reinterpret_cast<const float4 *>(bp + k);
                } else {
                    if (k < p.cols) v.x = bp[k * p.incb];
                    if (k + 1 < p.cols) v.y = bp[(k + 1) * p.incb];
                    if (k + 2 < p.cols) v.z = bp[(k + 2) * p.incb];
                    if (k + 3 < p.cols) v.w = bp[(k + 3) * p.incb];
                }
            }
            rb[i] = v;
        }
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int f = tid + i * kST;
            rp[i] = 0;
            if (f < groups_blk * S4) {
                const int gi = f / S4, ss = f % S4;
                if (ss < S && g0 + gi < G && st * S + ss < p.kept)
                    rp[i] = (uint8_t)((ss / p.nn) * p.mm + p.pos[(g0 + gi) * p.kept + st * S + ss]);
            }
        }
    };
    auto sstore = [&](int buf, int64_t sstep) {
        float *as = As + buf * kKB * kAP;
        float *bs = Bs + buf * kKB * kBPs;
        uint8_t *ps = Ps + buf * kMaxGroups * kKB;
        if (!VA) /* rows not 16-byte aligned: plain loads, straight into shared memory */
            for (int f = tid; f < kBM * S4; f += kST) {
                const int rr = f / S4, ss = f % S4;
                const int64_t sl = sstep * S + ss;
                as[ss * kAP + rr] =
                    ss < S && row0 + rr < p.rows && sl < p.kept ? p.vals[(row0 + rr) * p.kept + sl] : 0.0f;
            }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int f = tid + i * kST;
            if (VA && f < kBM * a4) {
                const int rr = f / a4, q = f % a4;
                as[(q * 4 + 0) * kAP + rr] = ra[i].x;
                as[(q * 4 + 1) * kAP + rr] = ra[i].y;
                as[(q * 4 + 2) * kAP + rr] = ra[i].z;
                as[(q * 4 + 3) * kAP + rr] = ra[i].w;
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int f = tid + i * kST;
            const int cc = f % kBN, kq = (f / kBN) * 4;
            bs[(kq + 0) * kBPs + cc] = rb[i].x;
            bs[(kq + 1) * kBPs + cc] = rb[i].y;
            bs[(kq + 2) * kBPs + cc] = rb[i].z;
            bs[(kq + 3) * kBPs + cc] = rb[i].w;
        }
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int f = tid + i * kST;
            if (f < groups_blk * S4)
                ps[(f / S4) * kKB + f % S4] = rp[i];
        }
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0.0f;
    const int gi = ty * 8 / p.vv;

    gload(0);
    sstore(0, 0);
    __syncthreads();
    for (int64_t st = 0; st < steps; st++) {
        const int buf = (int)(st & 1);
        if (st + 1 < steps)
            gload(st + 1);
        const float *as = As + buf * kKB * kAP + ty * 8;
        const float *bs = Bs + buf * kKB * kBPs + tx * 4;
        const uint32_t *pw = reinterpret_cast<const uint32_t *>(Ps + buf * kMaxGroups * kKB + gi * kKB);
        /* four positions per shared load, so the B loads of a group of four kept values do not wait on one another */
        for (int w = 0; w < S4 / 4; w++) {
            const uint32_t word = pw[w];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int ss = w * 4 + e, kk = (int)((word >> (8 * e)) & 0xFFu);
                const float4 a0 = *reinterpret_cast<const float4 *>(as + ss * kAP);
                const float4 a1 = *reinterpret_cast<const float4 *>(as + ss * kAP + 4);
                const float4 b0 = *reinterpret_cast<const float4 *>(bs + kk * kBPs);
                const float4 b1 = *reinterpret_cast<const float4 *>(bs + kk * kBPs + 64);
                const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
                const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
        }
        if (st + 1 < steps) {
            sstore(buf ^ 1, st + 1);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int64_t r = row0 + ty * 8 + i;
        if (r >= p.rows)
            continue;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int64_t col = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (col < p.n) {
                float v = acc[i][j];
                if (isnan(v))
                    v = gen_row_dot(p, r, col);
                put_c(p, r, col, v, alpha, beta);
            }
        }
    }
}

template <typename T> G<T> make(const macko_nm_args *a)
{
    G<T> p;
    p.rows = a->k.rows;
    p.cols = a->k.cols;
    p.n = a->k.n;
    p.kept = a->kept;
    p.nn = a->nn;
    p.mm = a->mm;
    p.vv = a->vv;
    p.vals = (const T *)a->values;
    p.pos = (const uint8_t *)a->meta;
    p.b = (const T *)a->k.b;
    p.incb = a->k.incb;
    p.ldb = a->k.ldb;
    p.c = (T *)a->k.c;
    p.incc = a->k.incc;
    p.ldc = a->k.ldc;
    p.alpha_dev = a->k.alpha_dev;
    p.beta_dev = a->k.beta_dev;
    p.alpha = a->k.alpha;
    p.beta = a->k.beta;
    p.alpha_dev_d = a->k.alpha_dev_d;
    p.beta_dev_d = a->k.beta_dev_d;
    p.alpha_d = a->k.alpha_d;
    p.beta_d = a->k.beta_d;
    return p;
}

template <typename T, int NT> cudaError_t gen_launch(G<T> p, cudaStream_t st)
{
    const int64_t chunk = (int64_t)65535 * NT;
    for (int64_t j0 = 0; j0 < p.n; j0 += chunk) {
        G<T> q = p;
        q.n = p.n - j0 < chunk ? p.n - j0 : chunk;
        q.b = p.b + j0 * p.ldb;
        q.c = p.c + j0 * p.ldc;
        const dim3 grid((unsigned)((p.rows + kGenWarps - 1) / kGenWarps), (unsigned)((q.n + NT - 1) / NT));
        gen_kernel<T, NT><<<grid, kGenWarps * 32, 0, st>>>(q);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

template <typename T> cudaError_t gen_run(const macko_nm_args *a)
{
    const G<T> p = make<T>(a);
    const cudaStream_t st = (cudaStream_t)a->k.stream;
    if (p.n <= 1)
        return gen_launch<T, 1>(p, st);
    if (p.n <= 2)
        return gen_launch<T, 2>(p, st);
    if (p.n <= 4)
        return gen_launch<T, 4>(p, st);
    return gen_launch<T, 8>(p, st);
}

cudaError_t simt_run(const macko_nm_args *a)
{
    const G<float> p = make<float>(a);
    const cudaStream_t st = (cudaStream_t)a->k.stream;
    const bool vec = p.incb == 1 && p.ldb % 4 == 0 && ((uintptr_t)p.b & 15) == 0;
    const int64_t chunk = (int64_t)65535 * kBN;
    for (int64_t j0 = 0; j0 < p.n; j0 += chunk) {
        G<float> q = p;
        q.n = p.n - j0 < chunk ? p.n - j0 : chunk;
        q.b = p.b + j0 * p.ldb;
        q.c = p.c + j0 * p.ldc;
        const dim3 grid((unsigned)((p.rows + kBM - 1) / kBM), (unsigned)((q.n + kBN - 1) / kBN));
        const bool va = p.kept % 4 == 0 && (p.nn * 32 / p.mm) % 4 == 0;
        if (vec && va)
            simt_kernel<true, true><<<grid, kST, simt_smem(), st>>>(q);
        else if (vec)
            simt_kernel<true, false><<<grid, kST, simt_smem(), st>>>(q);
        else if (va)
            simt_kernel<false, true><<<grid, kST, simt_smem(), st>>>(q);
        else
            simt_kernel<false, false><<<grid, kST, simt_smem(), st>>>(q);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

} // namespace

extern "C" int macko_nm_simt_ok(int nn, int mm, int vv, int64_t kept)
{
    (void)nn;
    (void)mm;
    (void)kept;
    return vv >= 8;
}

extern "C" int macko_nm_gen_prepare(void)
{
    cudaError_t e = cudaFuncSetAttribute(simt_kernel<true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, simt_smem());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(simt_kernel<true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, simt_smem());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(simt_kernel<false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, simt_smem());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(simt_kernel<false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, simt_smem());
    if (e != cudaSuccess)
        cudaGetLastError();
    return (int)e;
}

extern "C" int macko_nm_gen_spmm(const macko_nm_args *a)
{
    if (a->path == MACKO_NM_PATH_SIMT)
        return (int)simt_run(a);
    switch (a->combo) {
    case MACKO_COMBO_H: return (int)gen_run<__half>(a);
    case MACKO_COMBO_B: return (int)gen_run<__nv_bfloat16>(a);
    case MACKO_COMBO_S: return (int)gen_run<float>(a);
    case MACKO_COMBO_D: return (int)gen_run<double>(a);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int macko_nm_spmm(const macko_nm_args *a)
{
    return a->path == MACKO_NM_PATH_SP24     ? macko_nm_sp24_spmm(a)
           : a->path == MACKO_NM_PATH_SP24WG ? macko_nm_sp24_wg_spmm(a)
                                             : macko_nm_gen_spmm(a);
}
