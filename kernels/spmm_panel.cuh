/* What the two GEMMs of the panel path share (kernels/spmm_panel.cu: mma.sync, every listed architecture;
 * kernels/spmm_panel_wg.cu: wgmma, sm_90a only): the parameters of one GEMM launch over a decoded panel, and the exact
 * row product that replaces a NaN sum. Device code, included by those two files only. */
#ifndef MACKO_SPMM_PANEL_CUH
#define MACKO_SPMM_PANEL_CUH

#include "macko_mma.cuh"
#include "tiles_decode.cuh"

#include <cuda_runtime.h>

#include <stdint.h>

template <typename H> struct PanelParams {
    int rows, cols;        /* of M */
    const H *values;       /* MACKO arrays (decode, and the exact recomputation of NaN sums) */
    const uint32_t *dwords;
    const int32_t *row_ptr;
    const uint4 *tstream;  /* or a matrix in the tile layout (tstream != NULL) */
    const uint32_t *toffs;
    int tcols;
    H *panel;              /* dense rows: panel_rows x ldp */
    int ldp;               /* cols rounded up to 8 */
    int row0, prow;        /* first row of the panel and its row count */
    const H *b;
    int64_t ldb;
    H *c;
    int64_t ldc;
    int n;
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
};

/* Row r of M (absolute) times column j of B, exactly over the stored nonzeros. */
template <typename H> __device__ __forceinline__ float panel_row_dot(const PanelParams<H> &p, int r, int64_t j)
{
    if (p.tstream != nullptr)
        return tiles_row_dot<H>(p.tstream, p.toffs, p.tcols, p.b, 1, p.ldb, r, (int)j);
    return exact_row_dot(p.row_ptr, p.dwords, p.values, p.b + j * p.ldb, r);
}

/* Writes element (r, col) of C (r absolute): alpha * v + beta * C, v's NaN (a dense zero times an Inf of B) replaced
 * by the exact row product; beta == 0: C not read. */
template <typename H>
__device__ __forceinline__ void panel_store_c(const PanelParams<H> &p, int r, int col, float v, float alpha, float beta)
{
    if (isnan(v))
        v = panel_row_dot(p, r, col);
    H *cp = p.c + (int64_t)col * p.ldc + r;
    float out = alpha * v;
    if (beta != 0.0f)
        out = fmaf(beta, Tc16<H>::to_float(*cp), out);
    *cp = Tc16<H>::from_float(out);
}

/* C = beta*C on rows [m0, m0 + bm) x columns [n0, n0 + bn) of the panel's part of C (alpha = 0: A and B not read). */
template <typename H>
__device__ __forceinline__ void panel_scale_c(const PanelParams<H> &p, float beta, int m0, int n0, int bm, int bn)
{
    for (int x = threadIdx.x; x < bm * bn; x += blockDim.x) {
        const int pr = m0 + x % bm, col = n0 + x / bm;
        if (pr < p.prow && col < p.n) {
            H *cp = p.c + (int64_t)col * p.ldc + p.row0 + pr;
            *cp = Tc16<H>::from_float(beta != 0.0f ? beta * Tc16<H>::to_float(*cp) : 0.0f);
        }
    }
}

/* The wgmma GEMM (spmm_panel_wg.cu). panel_wg_prepare() sets its shared-memory size (a cudaError_t) and resolves the
 * driver's tensor-map encoder once; panel_wg_ready(): 1 when that encoder was found (a driver without it, which CUDA
 * 12.0 and later drivers all have, leaves the panel path on the mma.sync GEMM); panel_wg_gemm() launches it over one
 * panel (B 16-byte aligned, ldb a multiple of 8) with `splits` blocks along K (1..8: a cluster of that many blocks per
 * tile of C; fewer where the panel has fewer K-slices) and returns the cudaError_t of the launch. */
int panel_wg_ready();
template <typename H> int panel_wg_prepare();
template <typename H> int panel_wg_gemm(const PanelParams<H> &p, int splits, cudaStream_t st);

#endif
