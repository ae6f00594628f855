/* What the two SP24 kernels of the N:M kind share (kernels/nm_sp24.cu: mma.sp for every architecture;
 * kernels/nm_sp24_wg.cu: wgmma.sp for sm_90a): the launch parameters, the exact recomputation of a NaN sum over a
 * row's nonzero values, the store of one element of C and the finishing launch of split K. The SP24 device layout
 * itself is described in nm_sp24.cu and lapack_style_docs/FORMAT_NM.md. Included by those two files only (internal
 * linkage). */
#ifndef MACKO_NM_SP24_CUH
#define MACKO_NM_SP24_CUH

#include "macko_mma.cuh"
#include "nm.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

namespace {

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

/* The parameters both kernels take from the launch arguments as they are (n, b, c, kps and vec: per launch). */
template <typename H> P<H> sp24_params(const macko_nm_args *a)
{
    P<H> p;
    p.rows = a->k.rows;
    p.cols = a->k.cols;
    p.n = a->k.n;
    p.bands = (int)((a->k.rows + 15) / 16);
    p.ksteps = (int)((a->k.cols + 31) / 32);
    p.kps = p.ksteps;
    p.vec = 0;
    p.vals = (const uint4 *)a->values;
    p.meta = (const uint32_t *)a->meta;
    p.b = (const H *)a->k.b;
    p.incb = a->k.incb;
    p.ldb = a->k.ldb;
    p.c = (H *)a->k.c;
    p.incc = a->k.incc;
    p.ldc = a->k.ldc;
    p.alpha_dev = a->k.alpha_dev;
    p.beta_dev = a->k.beta_dev;
    p.alpha = a->k.alpha;
    p.beta = a->k.beta;
    p.ws = a->ws;
    return p;
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

/* sp24_finish's 4-row form: rows a multiple of 4 and the partials 16-byte aligned. */
template <typename H> __host__ __device__ __forceinline__ bool sp24_finish_vec(const P<H> &p)
{
    return (p.rows & 3) == 0 && (reinterpret_cast<uintptr_t>(p.ws) & 15u) == 0;
}

/* Split K: adds the splits' fp32 partials (ws[(z * n + j) * rows + r] for split z) in split order, from 0.0f, and
 * writes C. Where rows is a multiple of 4 (and ws 16-byte aligned) a thread takes 4 rows of a column with one 16-byte
 * load per split (the same sums; session 18: the scalar form was latency-bound, 6.9 us of 27 on 4096^2 at n = 128). */
template <typename H> __global__ void sp24_finish(const P<H> p, int splits)
{
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev ? *p.beta_dev : p.beta;
    if (alpha == 0.0f)
        return;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    if (sp24_finish_vec(p)) {
        const int64_t q = p.rows / 4, total = q * p.n; /* total: also the float4s of one split's partial */
        const float4 *ws = reinterpret_cast<const float4 *>(p.ws);
        for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
            const int64_t r = 4 * (idx % q), j = idx / q;
            float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int z = 0; z < splits; z++) {
                const float4 t = __ldcg(ws + z * total + idx);
                s.x += t.x, s.y += t.y, s.z += t.z, s.w += t.w;
            }
            put_c(p, r, j, s.x, alpha, beta);
            put_c(p, r + 1, j, s.y, alpha, beta);
            put_c(p, r + 2, j, s.z, alpha, beta);
            put_c(p, r + 3, j, s.w, alpha, beta);
        }
        return;
    }
    const int64_t total = p.rows * p.n;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        const int64_t r = idx % p.rows, j = idx / p.rows;
        float s = 0.0f;
        for (int z = 0; z < splits; z++)
            s += p.ws[((int64_t)z * p.n + j) * p.rows + r];
        put_c(p, r, j, s, alpha, beta);
    }
}

template <typename H> cudaError_t sp24_finish_launch(const P<H> &p, int splits, cudaStream_t st)
{
    const int64_t blocks = ((sp24_finish_vec(p) ? p.rows / 4 : p.rows) * p.n + 255) / 256;
    sp24_finish<H><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, st>>>(p, splits);
    return cudaGetLastError();
}

} // namespace

#endif
