/* Internal interface of the tensor-core SpMM (kernels/spmm_tc.cu): C = alpha*M*B + beta*C for a MACKO encoding M
 * and B and C (column-major) all fp16 or all bf16, fp32 accumulation on the tensor cores (mma.sync m16n8k16,
 * sm_80+). Not installed.
 *
 * "Load as sparse, compute as dense": each warp decodes the MACKO entries of 16 rows that fall into one K-tile of
 * kt columns into a dense 16-bit tile in shared memory, and multiplies it by the matching tile of B on the tensor
 * cores. A tile index, built once per encoding (macko_tc_build_index), gives for every row r and every K-tile t the
 * row's first entry with a column >= t*kt and the column offset that starts the delta chain there, so that any
 * K-tile can be decoded without walking the row from its start (which also lets the K dimension be split over
 * several blocks).
 *
 * Tile index word (uint32) for row r, tile t (t = 0..T, T = ceil(cols / kt); t = T is a sentinel):
 *   bits 4..31  s - row_ptr[r], where s is the row's first entry whose column is >= t*kt (the row's end if none)
 *   bits 0..3   t*kt - (col(s) - delta(s)): col(s) - delta(s) is one past the previous entry's column (0 for the
 *               row's first entry), which lies within 15 columns before t*kt; 0 when s is the row's end.
 * Rows must have fewer than 2^28 entries (cols < 2^28).
 */
#ifndef MACKO_SPMM_TC_H
#define MACKO_SPMM_TC_H

#include "macko.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Warps per block (16 rows each) of the kernel for a column tile of ntile columns: 8 for the 64-column tile, whose two
 * B tiles take the most shared memory (with 4 warps only 2 blocks, 8 warps, fit on an SM: twice the rows share them
 * now), and for the 16-column tile (shared memory holds 3 blocks of 8 warps where it held 5 of 4: 24 warps instead of
 * 20, and each B tile serves twice the rows); 4 for the 8- and 32-column tiles (with 8, the 32-column tile keeps its
 * 16 warps per SM and was slower at d = 0.3; bench/NOTES.md, session 30). */
#define MACKO_TC_WARPS_OF(ntile) ((ntile) == 16 || (ntile) == 64 ? 8 : 4)
#define MACKO_TC_ROWS_OF(ntile) (16 * MACKO_TC_WARPS_OF(ntile))
/* Blocks per SM the kernel's registers are capped for (its __launch_bounds__), per column tile; the plan counts
 * resident blocks with the same number (shared memory is sized to match). */
#define MACKO_TC_REG_BLOCKS_OF(ntile) ((ntile) == 8 ? 8 : (ntile) == 16 ? 3 : (ntile) == 32 ? 4 : 2)

typedef struct macko_tc_args {
    macko_datatype_t type;   /* MACKO_R_16F or MACKO_R_16BF: M's values, B and C (MACKO_R_32F: the SIMT path) */
    int64_t rows, cols;      /* of M; int32 arithmetic: rows, cols, entries_padded <= MACKO_SPMV_I32_LIMIT */
    const void *values;      /* entries_padded values, 16-byte aligned */
    const uint8_t *deltas;   /* entries_padded / 2 bytes, 16-byte aligned */
    const int32_t *row_ptr;  /* rows + 1 */
    const uint32_t *tidx;    /* rows * (ceil(cols / kt) + 1) index words */
    int kt;                  /* K-tile width: a multiple of 16, at least 32 */
    int group;               /* lanes decoding one row segment: 4, 8 or 16 (16 entries per lane per pass) */
    int simt_tc;             /* the SIMT path's form: MACKO_SIMT_FMA or MACKO_SIMT_TF32X3 */
    int ntile;               /* columns of C per block: 8, 16, 32 or 64 */
    int splits;              /* blocks along K (1: no workspace needed) */
    int64_t n;               /* columns of B and C, >= 1 */
    const void *b;           /* B(k, j) at b[k + j*ldb] */
    int64_t ldb;
    void *c;                 /* C(i, j) at c[i + j*ldc] */
    int64_t ldc;
    const float *alpha_dev;  /* device pointers in POINTER_MODE_DEVICE (read by the kernel) ... */
    const float *beta_dev;
    float alpha, beta;       /* ... else the host values (the pointers are then NULL) */
    float *ws;               /* splits > 1: splits * ceil(rows / R) * ceil(n / ntile) * R * ntile floats, R =
                              * MACKO_TC_ROWS_OF(ntile) */
    int *counters;           /* splits > 1: ceil(rows / R) * ceil(n / ntile) ints, zero between calls */
    macko_stream_t stream;
} macko_tc_args;

/* Bytes of dynamic shared memory one block of the tensor-core kernel needs. */
size_t macko_tc_smem_bytes(int kt, int ntile);
/* Floats of workspace and ints of counters a launch with these arguments needs (0 when splits == 1). */
int64_t macko_tc_ws_floats(int64_t rows, int64_t n, int ntile, int splits);
int64_t macko_tc_counters(int64_t rows, int64_t n, int ntile, int splits);

/* Sets the dynamic shared-memory limit of the tile kernels of this value type and decode group, and
 * of the panel GEMM of this type, on the current device (when a plan is built, never at a launch). Returns the
 * cudaError_t (0 = success; cudaErrorInvalidValue for a type other than fp16 and bf16). */
int macko_tc_prepare(macko_datatype_t type, int group, int max_smem_optin);

/* Launches the tensor-core SpMM. Returns the cudaError_t of the launch (0 = cudaSuccess); cudaErrorInvalidValue (1)
 * for a type or a combination of kt / group / ntile the kernels are not built for. */
int macko_tc_spmm(const macko_tc_args *a);

/* Decodes rows [prow0, prow0 + prow) of the encoding in a (its type, values, deltas, row_ptr, alpha and stream are
 * used) densely into panel (prow x ldp values of a->type, ldp >= cols and a multiple of 8, 16-byte aligned), a warp
 * streaming each row (kernels/panel_decode.cu): the first half of the panel path. Nothing happens when alpha == 0.
 * Returns the cudaError_t of the launch. */
int macko_rows_decode_dense(const macko_tc_args *a, void *panel, int64_t ldp, int64_t prow0, int64_t prow);

/* Builds the tile index of a MACKO encoding (any value type: only the deltas are read) on the device (one warp per
 * row), asynchronously on stream: tidx gets rows * (ceil(cols / kt) + 1) words. Returns the cudaError_t of the
 * launch. */
int macko_tc_build_index(int64_t rows, int64_t cols, const uint8_t *deltas, const int32_t *row_ptr, int kt,
                         uint32_t *tidx, macko_stream_t stream);

/* fp32 matrices, many columns (kernels/spmm_simt.cu): the rows decoded a K-tile of 64 columns at a time into shared
 * memory (the tile index with kt = 64) and multiplied by B's tile, 128 rows x ntile (64 or 128) columns of C per block,
 * in the form a->simt_tc: MACKO_SIMT_FMA, fp32 FMAs on the CUDA cores, or MACKO_SIMT_TF32X3, split-TF32 products on
 * the tensor cores (kernels/tf32.cuh; its blocks take more shared memory: macko_simt_smem_bytes). a->type must be
 * MACKO_R_32F, a->kt 64; a->group and a->counters are not used;
 * a->splits blocks along K (splits > 1: a->ws holds splits * rows * min(n, 65535 * ntile) floats, and a finishing
 * launch adds the splits in order). B and C with unit element strides. Returns the cudaError_t of the launches
 * (cudaErrorInvalidValue for arguments the kernels are not built for). */
#define MACKO_SIMT_KT 64
enum { MACKO_SIMT_FMA = 1, MACKO_SIMT_TF32X3 = 2 };
size_t macko_simt_smem_bytes(int ntile, int form);
/* Sets the kernels' dynamic shared-memory limits on the current device (when a plan is built): the FMA form's 64-column
 * kernel always (cudaErrorInvalidValue when its block exceeds max_smem_optin); its 128-column one and the TF32x3
 * form's two where their blocks fit. */
int macko_simt_prepare(int max_smem_optin);
int macko_simt_spmm(const macko_tc_args *a, int sm_count);

/* Large n: the rows are decoded a panel at a time into a dense 16-bit workspace, and a dense tensor-core GEMM
 * multiplies each panel by B (kernels/spmm_panel.cu). */
typedef struct macko_panel_args {
    macko_tc_args mm;        /* the encoding (with its tile index, kt and decode group), B, C, the scalars and the
                              * stream, as for the tile kernel; its ntile, splits, ws and counters are not used */
    int sm_count;
    void *ws;                /* 16-byte aligned workspace for the dense panel */
    int64_t ws_bytes;        /* at least macko_panel_min_ws(cols) */
    /* A matrix in the tile layout instead (tiles_stream != NULL): mm's values / deltas / row_ptr / tidx are unused,
     * the panels are decoded from the tiles (kernels/spmm_tiles.h) */
    const void *tiles_stream;
    const uint32_t *tiles_offs;
    int64_t tiles_tcols;
    int gemm;                /* MACKO_PANEL_GEMM_*: the GEMM the plan chose (WG only where macko_panel_wg_built()) */
    int fixed_rows;          /* 1: every panel but the last fills ws_bytes (a forced panel_rows); 0: the wgmma GEMM's
                              * panels are evened out over the GPU's waves (macko_panel_rows_wg) */
    int splits;              /* the wgmma GEMM's blocks along K (a cluster per tile): 0 chosen with the panel height
                              * (macko_panel_rows_wg), or forced (1..8) */
} macko_panel_args;
/* The GEMM of the panel path: mma.sync (every listed architecture), or wgmma (spmm_panel_wg.cu: compute capability
 * 9.0, a library built with the sm_90a target; B 16-byte aligned with ldb a multiple of 8, else mma.sync). */
enum { MACKO_PANEL_GEMM_MMA = 0, MACKO_PANEL_GEMM_WG = 1 };

/* Rows of one panel that fit ws_bytes (a multiple of 128; 0 when not even 128 rows fit). */
int64_t macko_panel_rows(int64_t cols, int64_t ws_bytes);
/* The panel height and the blocks along K the wgmma GEMM takes for an n-column product on sm_count SMs: a multiple
 * of 128 of at most prow_max (macko_panel_rows; fixed_rows: exactly prow_max) and, unless *splits > 0 on entry,
 * 1..8 splits in *splits, chosen so that the panels fill the GPU's waves of blocks (a model; spmm_panel.cu). */
int64_t macko_panel_rows_wg(int64_t rows, int64_t cols, int64_t n, int64_t prow_max, int fixed_rows, int sm_count,
                            int *splits);
int macko_panel_prepare(macko_datatype_t type);
int macko_panel_spmm(const macko_panel_args *a);

#ifdef __cplusplus
}
#endif

#endif
