/* Large-n SpMM on the MACKO format (macko_panel_args in spmm_tc.h): C = alpha*M*B + beta*C, M, B, C all fp16 or all
 * bf16 (templates over the 16-bit type H), fp32 accumulation on the tensor cores (this file's GEMM: mma.sync.m16n8k16,
 * sm_80 and newer; where the plan chose it, the wgmma GEMM of spmm_panel_wg.cu instead, sm_90a).
 *
 * For many columns of B the product is compute-bound, and decoding the compressed rows once per tile of C (as the
 * tile kernel of spmm_tc.cu does) would cost more than the multiplications. So the rows are decoded once per call,
 * a panel of rows at a time, into a dense 16-bit workspace (sized to stay in L2), and a dense GEMM multiplies the panel
 * by B:
 *   1. decode: a warp streams each row of the panel once (panel_decode.cu, macko_rows_decode_dense), scatters its
 *      nonzeros into a ring of columns in shared memory and writes the dense row out with 16-byte stores (the tile
 *      layout has its own decode, spmm_tiles.cu);
 *   2. GEMM: 128 x 128 tiles of C, K in steps of 32 through a 3-stage cp.async pipeline, 8 warps of 64 x 32, the
 *      operands read with ldmatrix from XOR-swizzled shared memory.
 * A dense zero of A meets every value of B in its column (0 * Inf = NaN): an element of C whose sum is NaN is
 * recomputed exactly over the row's stored nonzeros, so results depend only on B at the columns a row stores.
 * Fixed order everywhere, no atomics: bitwise reproducible. No allocation (the workspace is the handle's).
 */
#include "spmm_tc.h"

#include "spmm_panel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 32, kStages = 3;
constexpr int kThreads = 256; /* 8 warps: 2 along M x 4 along N, 64 x 32 each */

/* ---- 2. the GEMM: C[row0 + i, j] = alpha * sum_k panel[i, k] * B[k, j] + beta * C */

/* A tile: kBM rows of kBK halves (64 bytes = 4 chunks of 16 bytes); B tile: kBN columns of kBK halves. Chunk c of
 * row r sits at chunk c ^ ((r >> 1) & 3): the 8 rows an ldmatrix reads fall into 8 different bank groups. */
__device__ __forceinline__ int swz(int r, int c) { return r * 4 + (c ^ ((r >> 1) & 3)); } /* in 16-byte chunks */

template <typename H, bool VEC>
__device__ __forceinline__ void load_stage(const PanelParams<H> &p, uint4 *sa, uint4 *sb, int m0, int n0, int k0)
{
    const int tid = threadIdx.x;
    /* A: 128 x 4 chunks, 2 per thread */
#pragma unroll
    for (int it = 0; it < 2; it++) {
        const int x = tid + it * kThreads, r = x >> 2, c = x & 3, k = k0 + 8 * c;
        const H *src = p.panel;
        int bytes = 0;
        if (m0 + r < p.prow && k < p.ldp) {
            src = p.panel + (int64_t)(m0 + r) * p.ldp + k;
            bytes = 16;
        }
        cp_async16(smem_addr(sa + swz(r, c)), src, bytes);
    }
    /* B: 128 columns x 4 chunks */
#pragma unroll
    for (int it = 0; it < 2; it++) {
        const int x = tid + it * kThreads, j = x >> 2, c = x & 3, k = k0 + 8 * c;
        if (VEC && n0 + j < p.n && k + 8 <= p.cols) {
            cp_async16(smem_addr(sb + swz(j, c)), p.b + (int64_t)(n0 + j) * p.ldb + k, 16);
        } else { /* past n, straddling cols (a partial cp.async may read all 16 bytes), or B not 16-byte aligned */
            unsigned short h[8];
#pragma unroll
            for (int t = 0; t < 8; t++)
                h[t] = (n0 + j < p.n && k + t < p.cols)
                           ? __ldg(reinterpret_cast<const unsigned short *>(p.b) + (int64_t)(n0 + j) * p.ldb + k + t)
                           : (unsigned short)0;
            sb[swz(j, c)] = make_uint4(h[0] | (uint32_t)h[1] << 16, h[2] | (uint32_t)h[3] << 16,
                                       h[4] | (uint32_t)h[5] << 16, h[6] | (uint32_t)h[7] << 16);
        }
    }
}

template <typename H, bool VEC>
__global__ void __launch_bounds__(kThreads, 2) panel_gemm_kernel(const PanelParams<H> p)
{
    extern __shared__ __align__(16) uint4 smem4[];
    uint4 *sa = smem4;                          /* kStages x (kBM * 4) chunks */
    uint4 *sb = smem4 + kStages * kBM * 4;      /* kStages x (kBN * 4) chunks */
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int wm = warp >> 2, wn = warp & 3; /* warp tile: rows wm*64.., columns wn*32.. */
    if (alpha == 0.0f) { /* C = beta*C on this tile; A and B are not read */
        panel_scale_c(p, beta, m0, n0, kBM, kBN);
        return;
    }

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

    const int ktiles = (p.ldp + kBK - 1) / kBK;
#pragma unroll
    for (int s = 0; s < kStages - 1; s++) {
        if (s < ktiles)
            load_stage<H, VEC>(p, sa + s * kBM * 4, sb + s * kBN * 4, m0, n0, s * kBK);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<kStages - 2>();
        __syncthreads(); /* stage kt has landed; every warp is done with stage kt - 1 */
        {
            const int nk = kt + kStages - 1;
            if (nk < ktiles)
                load_stage<H, VEC>(p, sa + (nk % kStages) * kBM * 4, sb + (nk % kStages) * kBN * 4, m0, n0, nk * kBK);
            cp_async_commit();
        }
        const uint4 *ta = sa + (kt % kStages) * kBM * 4;
        const uint4 *tb = sb + (kt % kStages) * kBN * 4;
#pragma unroll
        for (int kk = 0; kk < 2; kk++) { /* two k16 steps per stage */
            uint32_t a[4][4], bfr[2][4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                /* rows wm*64 + 16i + (lane & 15), chunk 2kk + (lane >> 4) */
                const int r = wm * 64 + 16 * i + (lane & 15), c = 2 * kk + (lane >> 4);
                ldsm_x4(a[i], smem_addr(ta + swz(r, c)));
            }
#pragma unroll
            for (int jp = 0; jp < 2; jp++) {
                /* columns wn*32 + 16jp + (lane >> 4)*8 + (lane & 7), chunk 2kk + ((lane >> 3) & 1) */
                const int j = wn * 32 + 16 * jp + (lane >> 4) * 8 + (lane & 7), c = 2 * kk + ((lane >> 3) & 1);
                ldsm_x4(bfr[jp], smem_addr(tb + swz(j, c)));
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int jp = 0; jp < 2; jp++) {
                    mma_16816<H>(acc[i][2 * jp], a[i], bfr[jp][0], bfr[jp][1]);
                    mma_16816<H>(acc[i][2 * jp + 1], a[i], bfr[jp][2], bfr[jp][3]);
                }
        }
    }
    cp_async_wait<0>();

    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const int pr = m0 + wm * 64 + 16 * i + g + 8 * h, col = n0 + wn * 32 + 8 * j + 2 * q + c;
                    if (pr < p.prow && col < p.n)
                        panel_store_c(p, p.row0 + pr, col, acc[i][j][2 * h + c], alpha, beta);
                }
}

constexpr size_t kSmem = (size_t)kStages * (kBM + kBN) * kBK * 2;

template <typename H> int panel_prepare()
{
    cudaError_t e = cudaFuncSetAttribute(panel_gemm_kernel<H, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)kSmem);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(panel_gemm_kernel<H, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)kSmem);
#ifdef MACKO_HAVE_SM90A
    if (e == cudaSuccess)
        e = (cudaError_t)panel_wg_prepare<H>();
#endif
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return (int)e;
}

template <typename H> int panel_spmm(const macko_panel_args *a)
{
    const macko_tc_args *m = &a->mm;
    PanelParams<H> p;
    p.rows = (int)m->rows;
    p.cols = (int)m->cols;
    p.values = static_cast<const H *>(m->values);
    p.dwords = reinterpret_cast<const uint32_t *>(m->deltas);
    p.row_ptr = m->row_ptr;
    p.tstream = static_cast<const uint4 *>(a->tiles_stream);
    p.toffs = a->tiles_offs;
    p.tcols = (int)a->tiles_tcols;
    p.panel = static_cast<H *>(a->ws);
    p.ldp = (int)((m->cols + 7) & ~(int64_t)7);
    p.ldb = m->ldb;
    p.ldc = m->ldc;
    p.alpha_dev = m->alpha_dev;
    p.beta_dev = m->beta_dev;
    p.alpha = m->alpha;
    p.beta = m->beta;
    const cudaStream_t st = reinterpret_cast<cudaStream_t>(m->stream);
    int64_t prow_max = macko_panel_rows(m->cols, a->ws_bytes);
    if (prow_max < kBM)
        return (int)cudaErrorInvalidValue;
    const bool vec = m->ldb % 8 == 0 && (reinterpret_cast<uintptr_t>(m->b) & 15u) == 0;
    const int64_t max_n = (int64_t)65535 * kBN;
    const bool wg = a->gemm == MACKO_PANEL_GEMM_WG && vec && panel_wg_ready();
    int splits = a->splits;
    if (wg)
        prow_max = macko_panel_rows_wg(m->rows, m->cols, m->n < max_n ? m->n : max_n, prow_max, a->fixed_rows,
                                       a->sm_count, &splits);
    for (int64_t r0 = 0; r0 < m->rows; r0 += prow_max) {
        p.row0 = (int)r0;
        p.prow = (int)(m->rows - r0 < prow_max ? m->rows - r0 : prow_max);
        cudaError_t e = a->tiles_stream != nullptr
                            ? (cudaError_t)macko_tiles_decode_dense(m->type == MACKO_R_16BF, a->tiles_stream,
                                                                    a->tiles_offs, a->tiles_tcols, r0, p.prow, a->ws,
                                                                    p.ldp, m->stream)
                            : (cudaError_t)macko_rows_decode_dense(m, a->ws, p.ldp, r0, p.prow);
        if (e != cudaSuccess)
            return (int)e;
        for (int64_t j = 0; j < m->n; j += max_n) {
            p.b = static_cast<const H *>(m->b) + j * m->ldb;
            p.c = static_cast<H *>(m->c) + j * m->ldc;
            p.n = (int)(m->n - j < max_n ? m->n - j : max_n);
            if (wg) {
                e = (cudaError_t)panel_wg_gemm<H>(p, splits, st);
                if (e != cudaSuccess)
                    return (int)e;
                continue;
            }
            const dim3 grid((unsigned)((p.prow + kBM - 1) / kBM), (unsigned)((p.n + kBN - 1) / kBN));
            if (vec)
                panel_gemm_kernel<H, true><<<grid, kThreads, kSmem, st>>>(p);
            else
                panel_gemm_kernel<H, false><<<grid, kThreads, kSmem, st>>>(p);
            e = cudaGetLastError();
            if (e != cudaSuccess)
                return (int)e;
        }
    }
    return 0;
}

} // namespace

extern "C" int64_t macko_panel_rows(int64_t cols, int64_t ws_bytes)
{
    const int64_t ldp = (cols + 7) & ~(int64_t)7;
    int64_t r = ws_bytes / (2 * (ldp > 0 ? ldp : 8));
    r = r / kBM * kBM;
    return r;
}

extern "C" int64_t macko_panel_rows_wg(int64_t rows, int64_t cols, int64_t n, int64_t prow_max, int fixed_rows,
                                       int sm_count, int *splits)
{
    /* The wgmma GEMM runs one block per SM, a tile of 128 x 256 per block; with s splits a tile's K-slices of 64
     * columns are shared by a cluster of s blocks, which then sum their partial tiles through distributed shared
     * memory. A panel of q row blocks runs q * nb * s blocks in ceil(q * nb * s / slots) waves; a wave takes
     * ceil(slices / s) slices plus its end (epilogue, the cluster's sum, the next wave's pipeline fill), and every
     * panel adds a fixed cost (its decode's launch and tail). The constants were fitted to 24 timings of forced
     * splits 1, 2, 4, 8 (4096^2 and 12288^2 at d = 0.5, n = 128, 512, 1024; H100, bench/NOTES.md, session 12): a slice
     * 0.45 us when the wave holds few blocks, 0.76 us when it fills the GPU; a wave's end 6, 8, 12, 20 us for 1, 2,
     * 4, 8 splits; a panel 8 us; clusters are placed within GPCs of 16-18 SMs: 16 * floor(sm_count / 16) slots for
     * clusters of 2 and 8, 14 * floor(sm_count / 16) for clusters of 4 (as measured). The least modelled time wins
     * (the taller panel, then the fewer splits, on ties). */
    const int64_t rb = (rows + kBM - 1) / kBM, qmax = prow_max / kBM, nb = (n + 255) / 256;
    const int64_t kt = (cols + 63) / 64;
    const int forced = *splits > 0 ? (int)(*splits < kt ? *splits : (kt > 0 ? kt : 1)) : 0;
    int bs = forced > 0 ? forced : 1;
    if (qmax < 1 || rb < 1 || nb < 1 || kt < 1) {
        *splits = bs;
        return prow_max;
    }
    const int64_t qtop = fixed_rows || qmax < rb ? qmax : rb, qlow = fixed_rows ? qmax : 1;
    double best = -1.0;
    int64_t bq = qtop;
    for (int64_t q = qtop; q >= qlow; q--)
        for (int s = 1; s <= 8; s *= 2) {
            const int sc = forced > 0 ? forced : s;
            if (forced > 0 && s > 1)
                break;
            if (forced == 0 && s > 1 && kt / s < 4)
                break;
            const int64_t sps = (kt + sc - 1) / sc, se = (kt + sps - 1) / sps;
            const int64_t slots = se == 1 ? sm_count : (sm_count / 16) * (se == 4 ? 14 : 16);
            if (slots < se)
                continue;
            const double end_us = se == 1 ? 6.0 : se == 2 ? 8.0 : se <= 4 ? 12.0 : 20.0;
            const int64_t panels = (rb + q - 1) / q, last = rb - (panels - 1) * q;
            double t = 8.0 * (double)panels;
            for (int k = 0; k < 2; k++) { /* the panels of q row blocks, then the last one */
                const int64_t blocks = (k == 0 ? q : last) * nb * se, count = k == 0 ? panels - 1 : 1;
                const int64_t waves = (blocks + slots - 1) / slots;
                const double fill = blocks < slots ? (double)blocks / (double)slots : 1.0;
                t += (double)count * (double)waves * ((0.45 + 0.31 * fill) * (double)sps + end_us);
            }
            if (best < 0.0 || t < best) {
                best = t;
                bq = q;
                bs = (int)se;
            }
        }
    *splits = bs;
    return bq * kBM;
}

extern "C" int macko_panel_prepare(macko_datatype_t type)
{
    switch (type) {
    case MACKO_R_16F: return panel_prepare<__half>();
    case MACKO_R_16BF: return panel_prepare<__nv_bfloat16>();
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int macko_panel_spmm(const macko_panel_args *a)
{
    switch (a->mm.type) {
    case MACKO_R_16F: return panel_spmm<__half>(a);
    case MACKO_R_16BF: return panel_spmm<__nv_bfloat16>(a);
    default: return (int)cudaErrorInvalidValue;
    }
}
