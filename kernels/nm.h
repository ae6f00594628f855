/* Internal interface of the N:M kind's kernels (kernels/nm_gen.cu, kernels/nm_sp24.cu): C = alpha*M*B + beta*C for a
 * matrix of kind NM on the device (lapack_style_docs/FORMAT_NM.md). Not installed.
 *
 * Paths (src/plan.h MACKO_NM_PATH_*):
 * - GEN: any pattern and type. One warp per row and column tile: the lanes walk the row's kept values, each finds its
 *   column from the group's position byte and skips zero values, so padding never meets B. fp32 accumulation (fp64
 *   for fp64).
 * - SIMT: fp32, v >= 8. Blocked like a SIMT SGEMM (128 x 128 block tile, 8 x 8 per thread): per step of 64 (or 32)
 *   columns of A the rows' kept values and B's dense piece are copied by cp.async two steps ahead and transposed in
 *   shared memory one step ahead; every kept value multiplies the B row its position selects (a byte offset per slot
 *   and group), so the multiply-adds are those of a GEMM with K' = K * n / m. Configuration 1 (override only): 128 x
 *   64 tiles, three blocks per SM.
 * - SP24: the SP24 device layout (m == 4, n <= 2, fp16/bf16): mma.sp m16n8k32 on the sparse tensor cores; the values
 *   are stored in the instruction's A-fragment order and the positions as its metadata, so the kernel decodes nothing.
 *   Staged configurations (from 9 columns): split K through the handle's workspace with a finishing launch that adds
 *   the partials in split order. Direct configurations (up to 8 columns): fragments straight into registers, K split
 *   over the warps of a block, one launch.
 * - SP24WG: the same layout on Hopper's sparse warpgroup instruction (wgmma.mma_async.sp, kernels/nm_sp24_wg.cu,
 *   sm_90a builds on compute capability 9.0 only): 128 x 256 tiles of C, the units and B's piece brought by tensor
 *   maps (B with unit element stride, 16-byte aligned, ldb a multiple of 8; a last column block narrower than 256
 *   brings only its columns); split K as SP24 where the tiles fill at most a quarter of a wave.
 * Zeros of A meet B in the SIMT, SP24 and SP24WG paths' dense multiply-adds (0 * Inf = NaN): an element whose sum is NaN is
 * recomputed exactly over the row's nonzero values in column order. */
#ifndef MACKO_NM_KERNELS_H
#define MACKO_NM_KERNELS_H

#include "macko_kernels.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct macko_nm_args {
    macko_kargs k;        /* rows, cols, b, incb, ldb, c, incc, ldc, n, scalars, stream (values/deltas/row_ptr unused) */
    int combo;            /* MACKO_COMBO_H, _B, _S or _D */
    int nn, mm, vv;       /* the pattern */
    int64_t kept;         /* values per row (GEN layout) */
    const void *values;   /* GEN: rows * kept values; SP24: the fragment-ordered units */
    const void *meta;     /* GEN: the position bytes; SP24: the metadata words */
    int path;             /* MACKO_NM_PATH_GEN, _SIMT, _SP24 or _SP24WG */
    int splits;           /* SP24, SP24WG and SIMT: blocks along K (>= 1; macko_nm_sp24_splits,
                             macko_nm_sp24_wg_splits, macko_nm_simt_splits); SP24's direct configurations: warps
                             per block */
    float *ws;            /* with splits > 1: splits * rows * n floats */
    int cfg;              /* SP24 tile configuration (-1: macko_nm_sp24_config), SP24WG configuration (-1: its
                             automatic one) or SIMT configuration (the matrix's or the forced one); benchmarks force
                             them (macko_plan_forced.nm_cfg) */
} macko_nm_args;

/* SP24's configuration for n columns: the staged tile kernels 0..10 (units and B copied into shared memory), then the
 * direct ones 11..14 (each lane loads its A fragment, metadata and B fragment straight from global memory into
 * registers; the warps of a block split K and add their sums in shared memory): direct up to 8 columns. auto_cfg: the
 * same for a matrix of rows x cols on sm_count SMs, with direct configuration 12 in place of 11 and 14 in place of 13
 * where 11 or 13 would run one warp per block. Pure. */
int macko_nm_sp24_config(int64_t n);
int macko_nm_sp24_auto_cfg(int64_t rows, int64_t cols, int64_t n, int sm_count);
int macko_nm_sp24_configs(void); /* how many configurations there are */
/* 1 when configuration cfg is compiled into the library (the staged 0, 1 and 5-8 are retired: kernels/nm_sp24.cu). */
int macko_nm_sp24_config_built(int cfg);
/* The launch's macko_nm_args.splits for configuration cfg (-1: macko_nm_sp24_config(n)). Staged: its blocks along K
 * (about 4 blocks per SM up to 32 columns, 2 beyond, at least 8 k-steps each, within ws_floats). Direct: its warps
 * per block (1..16; the configuration's warps per SM over the blocks each SM takes, so that the grid is one wave; at
 * least U k-steps each; no
 * workspace). Pure. */
int macko_nm_sp24_splits(int64_t rows, int64_t cols, int64_t n, int cfg, int sm_count, int64_t ws_floats);
/* 1 when the SIMT path can run this pattern (fp32 checked by the caller). */
int macko_nm_simt_ok(int nn, int mm, int vv, int64_t kept);
/* SIMT's configurations (macko_nm_args.cfg; 0: 128 x 128 tiles of 256 threads, one block per SM, the faster on most
 * shapes; 1: 128 x 64 tiles of 128 threads, three per SM), how many there are, and the dynamic shared memory per
 * block of the instance that runs pattern nn of mm in configuration cfg (-1: none): configuration 0 takes 108-202
 * KiB, 1 42-105 KiB. Instances larger than a device's opt-in limit (sm_80: 163 KiB, sm_86 / sm_89: 99 KiB) are not
 * prepared there and never chosen (src/nm_device.c macko_nm_simt_auto_cfg). Pure. */
int macko_nm_simt_configs(void);
/* SIMT's blocks along K for n columns (1 above 128 columns, or where the blocks fill half the SMs). */
int macko_nm_simt_splits(int64_t rows, int64_t cols, int64_t n, int sm_count, int64_t ws_floats);
int macko_nm_simt_smem(int cfg, int nn, int mm);
/* Raises the SP24 kernels' dynamic shared-memory limit on the current device (once per upload). cudaError_t. */
int macko_nm_prepare(void);
/* Launches the product (and the finishing launch). Returns the cudaError_t (0 = success). */
int macko_nm_spmm(const macko_nm_args *a);
int macko_nm_sp24_spmm(const macko_nm_args *a);
int macko_nm_gen_spmm(const macko_nm_args *a);
/* SP24WG (kernels/nm_sp24_wg.cu): raises its kernels' shared-memory limit and resolves the driver's tensor-map
 * encoder (once per upload, where the plan may take it; a cudaError_t); ready: 1 when that encoder was found; spmm:
 * the product (B as the path needs it, checked by the caller), a cudaError_t. */
int macko_nm_sp24_wg_prepare(void);
int macko_nm_sp24_wg_ready(void);
int macko_nm_sp24_wg_configs(void); /* how many configurations there are (macko_nm_args.cfg) */
/* SP24WG's blocks along K: where its 128 x 256 tiles fill at most a quarter of the SMs, up to one wave of blocks (at
 * least 8 K-slices of 64 columns each, 4 to 16 splits, within ws_floats floats); 1 otherwise. Pure. */
int macko_nm_sp24_wg_splits(int64_t rows, int64_t cols, int64_t n, int sm_count, int64_t ws_floats);
/* SP24WG's automatic configuration for n columns of B (macko_nm_args.cfg): clusters of two row blocks sharing B's
 * pieces from n = 1024 on, one block per tile below. Pure. */
int macko_nm_sp24_wg_auto_cfg(int64_t n);
int macko_nm_sp24_wg_spmm(const macko_nm_args *a);

#ifdef __cplusplus
}
#endif

#endif
