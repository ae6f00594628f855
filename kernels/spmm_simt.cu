/* fp32 SpMM on the MACKO rows for many columns (the SIMT path, spmm_tc.h): C = alpha*M*B + beta*C with M, B and C all
 * fp32, in one of two forms of the same kernel (the plan's choice, macko_tc_args.simt_tc):
 *   - FMA: fp32 fused multiply-adds on the CUDA cores (what cublasSgemm with TF32 off computes);
 *   - TF32x3: the same tiles multiplied on the tensor cores (mma.m16n8k8 on TF32) with each operand split into a high
 *     TF32 part and the TF32 rounding of the rest (tf32.cuh): x*y ~ lo(x)hi(y) + hi(x)lo(y) + hi(x)hi(y), every
 *     product good to about 2^-20 of |x*y| (the FMA's: exact). The tensor cores' own fp32 sums truncate, so each
 *     K-stage of 64 is summed from zero and added to the running sums with fp32 adds (round to nearest). The warps
 *     are 2 x 4 over the block's 128 x BN tile, 64 x BN/4 each; the A stage's rows are padded to 136 floats. About
 *     1.35x the FMA form's speed on an H100, but its products' error is several times an FMA's rounding (the
 *     conformance suite's fp32 bounds failed on it; GpuSpmmSimt.Tf32x3ErrorOnGrowingSums), so the plan takes it
 *     only when forced (macko_plan_forced.simt_tc; bench/NOTES.md, session 52).
 *
 * For many columns an fp32 product is compute-bound, and a dense tile of A costs the same multiply-adds as a sparse
 * one unless whole groups of products vanish, which unstructured sparsity does not give. So, as the tensor-core paths
 * do for 16-bit matrices, the rows are loaded compressed and multiplied densely:
 *   - Block: 128 rows of M x BN columns of C (BN = 64 or 128), 256 threads of 8 rows x BN/16 columns each (rows
 *     8*ty.., columns tx + 16*j). K in steps of 64 columns, two shared-memory stages of each operand.
 *   - A: during step t, threads 0..127 decode the next step's 64 columns of their row (row = thread) into the other
 *     stage, stored [k][row]: they clear their row, then store each entry of the row segment the tile index gives
 *     (kt = 64) at its column. One thread per row and a row stride of 128 floats: every store is free of bank
 *     conflicts. The loads of a segment are the rows' own 8-entry groups (two 16-byte loads of values and one delta
 *     word), so the matrix is read once per column block of C, as compressed as it is stored.
 *   - B: the next step's 64 x BN piece by cp.async, stored [column][k] (row stride 68 floats).
 *   - Per 4 columns of K a thread loads 8 x 16 bytes of A and BN/16 x 16 bytes of B for 32 * BN/16 multiply-adds.
 * A zero of the dense tile meets every value of B in its column (0 * Inf = NaN): an element whose sum is NaN is
 * recomputed exactly over the row's stored nonzeros (in entry order), as on every other path.
 *
 * splits > 1 (few blocks for the GPU): blockIdx.z takes the K-steps [T*z/splits, T*(z+1)/splits), writes its sums to
 * the workspace, and a finishing launch adds the splits in split order. Fixed order everywhere, no atomics: bitwise
 * reproducible. No allocation: graph-capturable. */
#include "spmm_tc.h"

#include "macko_mma.cuh"
#include "tf32.cuh"

#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

namespace {

constexpr int kBM = 128, kKB = 64, kThreads = 256;
constexpr int kLdB = kKB + 4; /* B stage: [column][k]; 17 16-byte units per column */
constexpr int kLdC = kBM + 4; /* C tile for the epilogue: [column][row] */

/* TC: the TF32x3 form, whose A stage rows are 136 floats apart (its fragment loads, rows g and columns t of a lane
 * (g = lane / 4, t = lane % 4), then fall in 32 distinct banks; the decode's stores, a row per thread, stay
 * conflict-free at either stride). */
template <int TN, bool TC> struct Smem {
    static constexpr int lda = TC ? kBM + 8 : kBM; /* A stage: [k][row] */
    static constexpr int bn = 16 * TN;
    static constexpr int a = kKB * lda; /* floats of one A stage */
    static constexpr int b = bn * kLdB;  /* floats of one B stage */
    static constexpr int main_floats = 2 * (a + b);
    static constexpr int c_floats = bn * kLdC;
    static constexpr size_t bytes = 4 * (size_t)(main_floats > c_floats ? main_floats : c_floats);
};

struct SP {
    int rows, cols, T; /* T = ceil(cols / 64) K-steps */
    const float *values;
    const uint32_t *dwords;
    const int32_t *row_ptr;
    const uint32_t *tidx; /* T + 1 words per row */
    const float *b;
    int64_t ldb;
    float *c;
    int64_t ldc;
    int n;
    int bvec; /* B 16-byte aligned and ldb a multiple of 4 */
    int splits;
    float *ws; /* splits > 1: splits * rows * n floats, split z's (r, j) at (z * n + j) * rows + r */
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
};

__device__ __forceinline__ void scalars(const SP &p, float &alpha, float &beta)
{
    alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
}

__device__ __forceinline__ void store_c(const SP &p, int r, int64_t j, float v, float alpha, float beta)
{
    if (isnan(v)) /* exactly over the row's stored nonzeros, in entry order */
        v = exact_row_dot(p.row_ptr, p.dwords, p.values, p.b + j * p.ldb, r);
    float *cp = p.c + j * p.ldc + r;
    float out = alpha * v;
    if (beta != 0.0f)
        out = fmaf(beta, *cp, out);
    *cp = out;
}

__host__ __device__ __forceinline__ int split_lo(int T, int splits, int z) { return (int)((int64_t)T * z / splits); }

template <int TN, bool TC> __global__ void __launch_bounds__(kThreads, TN == 8 ? 1 : 2) simt_kernel(const SP p)
{
    using Z = Smem<TN, TC>;
    constexpr int BN = Z::bn, kLdA = Z::lda;
    extern __shared__ __align__(16) float sm[];
    float *As = sm;             /* [2][Z::a] */
    float *Bs = sm + 2 * Z::a;  /* [2][Z::b] */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int tx = (warp & 1) * 8 + (lane & 7), ty = (warp >> 1) * 4 + (lane >> 3);
    const int row0 = blockIdx.x * kBM;
    const int64_t col0 = (int64_t)blockIdx.y * BN;
    float alpha, beta;
    scalars(p, alpha, beta);
    if (alpha == 0.0f) { /* C = beta * C; A and B not read (split: the finishing launch does it) */
        if (p.splits > 1)
            return;
        for (int e = tid; e < kBM * BN; e += kThreads) {
            const int r = row0 + e % kBM;
            const int64_t j = col0 + e / kBM;
            if (r < p.rows && j < p.n) {
                float *cp = p.c + j * p.ldc + r;
                *cp = beta != 0.0f ? beta * *cp : 0.0f;
            }
        }
        return;
    }
    const int t0 = split_lo(p.T, p.splits, blockIdx.z), t1 = split_lo(p.T, p.splits, blockIdx.z + 1);

    /* the decoding thread's row */
    const int drow = tid & (kBM - 1), dr = row0 + drow;
    const bool decoder = tid < kBM && dr < p.rows;
    const uint32_t *ix = p.tidx + (decoder ? (int64_t)dr * (p.T + 1) : 0);
    const int rp = decoder ? __ldg(p.row_ptr + dr) : 0;

    auto decode = [&](int buf, int t) {
        if (tid >= kBM)
            return;
        float *A = As + buf * Z::a + drow;
#pragma unroll 16
        for (int k = 0; k < kKB; k++)
            A[k * kLdA] = 0.0f;
        if (!decoder)
            return;
        const uint32_t w0 = __ldg(ix + t), w1 = __ldg(ix + t + 1);
        const int s = rp + (int)(w0 >> 4), e = rp + (int)(w1 >> 4);
        if (t + 2 <= p.T) { /* the segment after this one into L2, for the next step's decode */
            const int e2 = rp + (int)(__ldg(ix + t + 2) >> 4);
            if (e2 > e) {
                for (int q = e & ~31; q < e2; q += 32)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(p.values + q));
                asm volatile("prefetch.global.L2 [%0];" ::"l"(p.dwords + (e >> 3)));
            }
        }
        int cur = -(int)(w0 & 15u) - 1; /* the tile's column before the chain's base */
#pragma unroll 2
        for (int g = s & ~7; g < e; g += 8) {
            const uint32_t dw = __ldg(p.dwords + (g >> 3));
            const float4 v0 = __ldg(reinterpret_cast<const float4 *>(p.values + g));
            const float4 v1 = __ldg(reinterpret_cast<const float4 *>(p.values + g + 4));
            const float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
                if (g + i >= s && g + i < e) {
                    cur += (int)((dw >> (4 * i)) & 15u) + 1;
                    A[cur * kLdA] = v[i];
                }
        }
    };
    auto load_b = [&](int buf, int t) {
        float *B = Bs + buf * Z::b;
        const int k0 = t * kKB;
#pragma unroll
        for (int x = tid; x < BN * (kKB / 4); x += kThreads) {
            const int cl = x / (kKB / 4), u = x % (kKB / 4);
            const int64_t j = col0 + cl;
            const int k = k0 + 4 * u;
            float *d = B + cl * kLdB + 4 * u;
            if (p.bvec && j < p.n && k + 4 <= p.cols) {
                cp_async16(smem_addr(d), p.b + j * p.ldb + k, 16);
            } else { /* past n or cols, a partial unit, or B not 16-byte aligned: plain loads, zeros outside */
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (j < p.n) {
                    const float *src = p.b + j * p.ldb;
                    if (k < p.cols) v.x = src[k];
                    if (k + 1 < p.cols) v.y = src[k + 1];
                    if (k + 2 < p.cols) v.z = src[k + 2];
                    if (k + 3 < p.cols) v.w = src[k + 3];
                }
                *reinterpret_cast<float4 *>(d) = v;
            }
        }
    };

    /* FMA: thread (tx, ty) holds rows ty*8 .. ty*8 + 7 x columns tx + 16j; TC: warp (wm, wn) = (warp / 4, warp % 4)
     * holds rows wm*64 .. +63 x columns wn*4*TN .. +4*TN - 1 as 4 x TN/2 mma tiles of 16 x 8 */
    constexpr int NT = TN / 2;
    float acc[8][TN];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0.0f;
    const int g = lane >> 2, tq = lane & 3, wm = warp >> 2, wn = warp & 3;

    if (t0 < t1) {
        load_b(0, t0);
        cp_async_commit();
        decode(0, t0);
        cp_async_wait<0>();
        __syncthreads();
    }
    for (int t = t0; t < t1; t++) {
        const int buf = (t - t0) & 1;
        if (t + 1 < t1) { /* the other stage was last read before the previous barrier */
            load_b(buf ^ 1, t + 1);
            cp_async_commit();
            decode(buf ^ 1, t + 1);
        }
        if constexpr (TC) {
            /* the stage's sums start from zero and are added to acc after it (fp32, round to nearest): the tensor
             * cores' own accumulation truncates, and over a whole row of K its bias grows with the count of
             * instructions in the chain (bench/NOTES.md, session 52) */
            float part[8][TN];
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    part[i][j] = 0.0f;
            const float *A = As + buf * Z::a + wm * 64 + g;
            const float *B = Bs + buf * Z::b + (wn * 4 * TN + g) * kLdB;
#pragma unroll 2
            for (int kb = 0; kb < kKB; kb += 8) {
                uint32_t bh[NT][2], bl[NT][2];
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    tf32_split(__float_as_uint(B[8 * j * kLdB + kb + tq]), bh[j][0], bl[j][0]);
                    tf32_split(__float_as_uint(B[8 * j * kLdB + kb + tq + 4]), bh[j][1], bl[j][1]);
                }
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const float *a0 = A + (kb + tq) * kLdA + 16 * i, *a1 = a0 + 4 * kLdA;
                    uint32_t ah[4], al[4];
                    tf32_split(__float_as_uint(a0[0]), ah[0], al[0]);
                    tf32_split(__float_as_uint(a0[8]), ah[1], al[1]);
                    tf32_split(__float_as_uint(a1[0]), ah[2], al[2]);
                    tf32_split(__float_as_uint(a1[8]), ah[3], al[3]);
#pragma unroll
                    for (int j = 0; j < NT; j++) {
                        /* tile (i, j)'s sums: acc's elements 4 (i NT + j) .. + 3, row-major (TN is a multiple of 4) */
                        const int f = 4 * (i * NT + j), r = f / TN, c = f % TN;
                        float d[4] = {part[r][c], part[r][c + 1], part[r][c + 2], part[r][c + 3]};
                        mma_1688_tf32(d, al, bh[j][0], bh[j][1]);
                        mma_1688_tf32(d, ah, bl[j][0], bl[j][1]);
                        mma_1688_tf32(d, ah, bh[j][0], bh[j][1]);
                        part[r][c] = d[0];
                        part[r][c + 1] = d[1];
                        part[r][c + 2] = d[2];
                        part[r][c + 3] = d[3];
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] += part[i][j];
        } else {
            const float *A = As + buf * Z::a + ty * 8;
            const float *B = Bs + buf * Z::b + tx * kLdB;
#pragma unroll 4
            for (int k = 0; k < kKB; k += 4) {
                float4 bq[TN]; /* B(k .. k + 3, column j) */
#pragma unroll
                for (int j = 0; j < TN; j++)
                    bq[j] = *reinterpret_cast<const float4 *>(B + j * 16 * kLdB + k);
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const float4 x0 = *reinterpret_cast<const float4 *>(A + (k + q) * kLdA);
                    const float4 x1 = *reinterpret_cast<const float4 *>(A + (k + q) * kLdA + 4);
                    const float a[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
                    for (int i = 0; i < 8; i++)
#pragma unroll
                        for (int j = 0; j < TN; j++) {
                            const float b = q == 0 ? bq[j].x : q == 1 ? bq[j].y : q == 2 ? bq[j].z : bq[j].w;
                            acc[i][j] = fmaf(a[i], b, acc[i][j]);
                        }
                }
            }
        }
        cp_async_wait<0>();
        __syncthreads();
    }

    /* the tile through shared memory (free after the last barrier), then written a column at a time */
    float *Cs = sm;
    if constexpr (TC) {
        /* tile (i, j)'s four sums (acc's elements 4 (i NT + j) .. + 3): rows g, g, g + 8, g + 8 x columns 2tq,
         * 2tq + 1 of the tile */
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int f = 4 * (i * NT + j) + e;
                    const int row = wm * 64 + 16 * i + g + 8 * (e >> 1), col = wn * 4 * TN + 8 * j + 2 * tq + (e & 1);
                    Cs[col * kLdC + row] = acc[f / TN][f % TN];
                }
    } else {
#pragma unroll
        for (int j = 0; j < TN; j++) {
            float *cc = Cs + (tx + 16 * j) * kLdC + ty * 8;
            *reinterpret_cast<float4 *>(cc) = make_float4(acc[0][j], acc[1][j], acc[2][j], acc[3][j]);
            *reinterpret_cast<float4 *>(cc + 4) = make_float4(acc[4][j], acc[5][j], acc[6][j], acc[7][j]);
        }
    }
    __syncthreads();
    for (int cl = warp; cl < BN; cl += kThreads / 32) {
        const int64_t j = col0 + cl;
        if (j >= p.n)
            break;
#pragma unroll
        for (int h = 0; h < kBM / 32; h++) {
            const int r = row0 + h * 32 + lane;
            if (r >= p.rows)
                continue;
            const float v = Cs[cl * kLdC + h * 32 + lane];
            if (p.splits > 1)
                p.ws[((int64_t)blockIdx.z * p.n + j) * p.rows + r] = v;
            else
                store_c(p, r, j, v, alpha, beta);
        }
    }
}

/* splits > 1: C = alpha * (the splits' sums in split order) + beta * C, the exact row sum where that is NaN;
 * alpha == 0: C = beta * C (the workspace and A not read). */
__global__ void __launch_bounds__(256) simt_finish(const SP p)
{
    float alpha, beta;
    scalars(p, alpha, beta);
    const int64_t plane = (int64_t)p.rows * p.n;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < plane; i += (int64_t)gridDim.x * 256) {
        const int64_t j = i / p.rows;
        const int r = (int)(i - j * p.rows);
        if (alpha == 0.0f) {
            float *cp = p.c + j * p.ldc + r;
            *cp = beta != 0.0f ? beta * *cp : 0.0f;
            continue;
        }
        float v = p.ws[i];
        for (int z = 1; z < p.splits; z++)
            v += p.ws[z * plane + i];
        store_c(p, r, j, v, alpha, beta);
    }
}

template <int TN, bool TC>
cudaError_t simt_launch(SP p, int64_t n, const float *b, float *c, int sm_count, cudaStream_t st)
{
    constexpr int BN = 16 * TN;
    const int64_t chunk = (int64_t)65535 * BN;
    for (int64_t j0 = 0; j0 < n; j0 += chunk) {
        p.n = (int)(n - j0 < chunk ? n - j0 : chunk);
        p.b = b + j0 * p.ldb;
        p.c = c + j0 * p.ldc;
        const dim3 grid((unsigned)((p.rows + kBM - 1) / kBM), (unsigned)((p.n + BN - 1) / BN), (unsigned)p.splits);
        simt_kernel<TN, TC><<<grid, kThreads, Smem<TN, TC>::bytes, st>>>(p);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess && p.splits > 1) {
            const int64_t want = ((int64_t)p.rows * p.n + 255) / 256, cap = (int64_t)(sm_count > 0 ? sm_count : 1) * 8;
            simt_finish<<<(unsigned)(want < cap ? want : cap), 256, 0, st>>>(p);
            e = cudaGetLastError();
        }
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

} // namespace

extern "C" size_t macko_simt_smem_bytes(int ntile, int form)
{
    if (form == MACKO_SIMT_TF32X3)
        return ntile == 64 ? Smem<4, true>::bytes : Smem<8, true>::bytes;
    return ntile == 64 ? Smem<4, false>::bytes : Smem<8, false>::bytes;
}

namespace {
template <int TN, bool TC> cudaError_t simt_optin(int max_smem_optin)
{
    if ((int)Smem<TN, TC>::bytes > max_smem_optin) /* the plan does not take this kernel here */
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(simt_kernel<TN, TC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)Smem<TN, TC>::bytes);
    if (e == cudaSuccess && TN == 4)
        e = cudaFuncSetAttribute(simt_kernel<TN, TC>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutMaxShared);
    return e;
}
} // namespace

extern "C" int macko_simt_prepare(int max_smem_optin)
{
    /* the wider and the TF32x3 kernels only where their blocks fit (the plan takes the FMA form's 64 columns
     * elsewhere, e.g. 99 KiB on sm_86) */
    if ((int)Smem<4, false>::bytes > max_smem_optin)
        return (int)cudaErrorInvalidValue;
    cudaError_t e = simt_optin<4, false>(max_smem_optin);
    if (e == cudaSuccess)
        e = simt_optin<8, false>(max_smem_optin);
    if (e == cudaSuccess)
        e = simt_optin<4, true>(max_smem_optin);
    if (e == cudaSuccess)
        e = simt_optin<8, true>(max_smem_optin);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return (int)e;
}

extern "C" int macko_simt_spmm(const macko_tc_args *a, int sm_count)
{
    if (a->type != MACKO_R_32F || a->kt != kKB || (a->ntile != 64 && a->ntile != 128) || a->splits < 1 ||
        a->n < 1 || a->rows < 1 || (a->simt_tc != MACKO_SIMT_FMA && a->simt_tc != MACKO_SIMT_TF32X3))
        return (int)cudaErrorInvalidValue;
    SP p;
    memset(&p, 0, sizeof p);
    p.rows = (int)a->rows;
    p.cols = (int)a->cols;
    p.T = (int)((a->cols + kKB - 1) / kKB);
    p.values = static_cast<const float *>(a->values);
    p.dwords = reinterpret_cast<const uint32_t *>(a->deltas);
    p.row_ptr = a->row_ptr;
    p.tidx = a->tidx;
    p.ldb = a->ldb;
    p.ldc = a->ldc;
    p.bvec = a->ldb % 4 == 0 && (reinterpret_cast<uintptr_t>(a->b) & 15u) == 0;
    p.splits = a->splits < p.T ? a->splits : (p.T > 0 ? p.T : 1);
    p.ws = a->ws;
    p.alpha_dev = a->alpha_dev;
    p.beta_dev = a->beta_dev;
    p.alpha = a->alpha;
    p.beta = a->beta;
    const cudaStream_t st = reinterpret_cast<cudaStream_t>(a->stream);
    const float *b = static_cast<const float *>(a->b);
    float *c = static_cast<float *>(a->c);
    if (a->simt_tc == MACKO_SIMT_TF32X3)
        return (int)(a->ntile == 64 ? simt_launch<4, true>(p, a->n, b, c, sm_count, st)
                                    : simt_launch<8, true>(p, a->n, b, c, sm_count, st));
    return (int)(a->ntile == 64 ? simt_launch<4, false>(p, a->n, b, c, sm_count, st)
                                : simt_launch<8, false>(p, a->n, b, c, sm_count, st));
}
