/* Launch plans: everything a SpMV/SpMM launch needs, computed once per device encoding (a matrix's op-N encoding,
 * kept in it; the op-T one, kept in A->trans) when that encoding comes into existence on a device: macko_mat_upload,
 * macko_mat_create_dense_device / create_csr_device, macko_analysis(op T). Plans are immutable afterwards (only
 * macko_plan_override, a test hook, replaces one), so compute calls on many threads and handles read them freely.
 * A compute routine checks its arguments, looks its launch up in the plan (macko_plan_spmv / macko_plan_mm: the
 * choices that depend on the call's arguments, incx and the B/C spans, are table lookups) and launches it.
 * Plain C. Not installed; the tests and the bench may include it. */
#ifndef MACKO_PLAN_H
#define MACKO_PLAN_H

#include "macko.h"
#include "devprops.h"
#include "../kernels/macko_kernels.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct macko_mat_s;

/* Index variants (kernels/macko_kernels.h): 32-bit arithmetic with int32 row_ptr where rows, cols and
 * entries_padded stay below MACKO_SPMV_I32_LIMIT; else 64-bit arithmetic with the int32 (entries < 2^31) or int64
 * row_ptr of the encoding. */
enum { MACKO_IDX_I32 = 0, MACKO_IDX_I64_RP32 = 1, MACKO_IDX_I64_RP64 = 2 };

/* SpMV geometries of the incx == 1 launch on 32-bit indices (macko_kernels.h): WARP, or STAGED (x in shared
 * memory). Both sum in the same order: the choice moves time, never results. */
enum { MACKO_SPMV_WARP = 0, MACKO_SPMV_STAGED = 1 };
/* STAGED is chosen for cols <= MACKO_SPMV_STAGE_MAX_COLS (fp16) or <= 12288 (fp32; 4096 until session 5, when
 * STAGED measured 0-5 % faster than WARP up to 12288 fp32 columns on the H100 and 4-14 % on the H200) unless at least this fraction of
 * the positions is stored (then a lane's 8 entries are 8 consecutive columns and the staged gather of a warp lands
 * on 4 of the 32 banks: WARP 9-43 % faster at d = 1.0, STAGED 5-17 % faster at d = 0.95 on the H100), and runs
 * where the device holds at least 2 blocks' x per SM (else WARP). bench/NOTES.md has the measurements. */
#define MACKO_SPMV_DENSE_FRACTION 0.97
#define MACKO_SPMV_STAGE_MAX_COLS_S 12288
/* Stored entries per row (on average) from which the fp16 SpMV loads 3 chunks ahead where the deep grid holds every
 * row (plan.c's spmv_depth) */
#define MACKO_SPMV_DEEP_MIN_ROW 5632

/* SpMM paths: SPMV (n == 1: the SpMV launch, so that a one-column product is bitwise the SpMV result), STAGED (B's
 * tile in shared memory), GLOBAL (B gathered through the read-only cache), TC (fp16 and bf16: the rows decoded a
 * K-tile at a time into shared memory and multiplied on the tensor cores, kernels/spmm_tc.cu), PANEL (fp16 and bf16,
 * large n: a panel of rows decoded densely into the handle's workspace, then a dense tensor-core GEMM,
 * kernels/spmm_panel.cu), SIMT (fp32, many columns: the rows decoded a K-tile at a time into shared memory and
 * multiplied with fp32 FMAs, kernels/spmm_simt.cu), NONE (a forced path that cannot run this n). AUTO only in
 * macko_plan_forced. */
enum {
    MACKO_MM_PATH_NONE = -1,
    MACKO_MM_PATH_AUTO = 0,
    MACKO_MM_PATH_STAGED = 1,
    MACKO_MM_PATH_GLOBAL = 2,
    MACKO_MM_PATH_SPMV = 3,
    MACKO_MM_PATH_TC = 4,
    MACKO_MM_PATH_PANEL = 5,
    MACKO_MM_PATH_SIMT = 6
};

/* One row of the SpMM rule over n: the plan's rows are ordered by n_max, the last one INT64_MAX, and n takes the
 * first row with n <= n_max. A product of n columns runs ceil(n / tile) launches of one tile each. */
typedef struct macko_mm_rule {
    int64_t n_max;
    int path;            /* MACKO_MM_PATH_* */
    int want;            /* the tile asked for: n rounded up to 2, 4, 8 or 16, or the forced tile */
    macko_launch launch; /* STAGED, GLOBAL (with the plan's index variant) and TC; SPMV: the plan's spmv launches */
    /* GLOBAL on 32-bit indices: the launch with 64-bit offsets (I64_RP32, tile up to 8) for a call whose B or C span
     * does not fit 32-bit offsets. Kernel MACKO_K_NONE otherwise. */
    macko_launch wide;
} macko_mm_rule;
#define MACKO_MM_RULES 8 /* room for the rows a tensor-core path adds */
/* fp32 encodings with the tile index take the SIMT path from n = macko_plan_simt_from(m, form) on, form its
 * MACKO_SIMT_* (spmm_tc.h). TF32X3: 17 where stored entries fill at least 40 % of the positions; from 20 %,
 * 20 + 2 log2(rows / 4096); below, 28 + 7 log2(rows / 4096) (H100, bench/NOTES.md, session 52). FMA: 25; 26 + 3.3
 * log2(rows / 4096); 37 + 12 log2(rows / 4096) (H200, session 23). At most 64 (the CUDA-core tiles' time falls with
 * the density, SIMT's does not; the crossovers measured per quick shape at d = 0.5, 0.3 and 0.1). */
int macko_plan_simt_from(const struct macko_mat_s *m, int form);
/* Parts along K of a SIMT launch of a rows x cols matrix times n columns in tiles of `tile` columns, blocks_per_sm
 * blocks per SM on sm_count SMs, with ws_bytes of workspace for partial sums: the fewest parts of least modelled time
 * (partly filled waves against the finishing pass; src/plan.c). */
int macko_plan_simt_splits(int64_t rows, int64_t cols, int64_t n, int tile, int blocks_per_sm, int sm_count,
                           int64_t ws_bytes);

/* Blocks along K of a TC launch of `blocks` (row block, column tile) pairs over T K-tiles on `slots` resident blocks
 * (SMs x blocks per SM): the fewest splits that fill whole waves best, a little penalty per split, at most T and 64;
 * at least as many as one wave holds where the grid would otherwise stay inside one wave (src/plan.c). */
int macko_plan_tc_splits(int64_t blocks, int64_t T, double slots);

/* The tensor-core paths' part of a plan (kernels/spmm_tc.cu, spmm_panel.cu), for fp16 and bf16 encodings with 32-bit
 * indices. Both read the tile index (spmm_tc.h: for every row and every K-tile of kt columns, where the row's entries
 * of that tile start), built on the device with the plan and kept in the encoding (extra[MACKO_EXTRA_TILE_INDEX]).
 * kt and group come from the density of stored entries: a row's entries in a K-tile (about kt * entries / (rows *
 * cols), plus at most 7 before the first 8-aligned entry) are decoded by `group` lanes of 16 entries each in one
 * pass, with room for two standard deviations (bench/NOTES.md). fp32 encodings with 32-bit indices get the same index
 * with kt = MACKO_SIMT_KT for the SIMT path (kernels/spmm_simt.cu; group 0). */
struct macko_tc_plan {
    int kt;                /* K-tile width; 0: no tensor-core path for this encoding */
    int group;             /* lanes per row segment: 4, 8 or 16 */
    int splits;            /* forced blocks along K (tests); 0: chosen per call from the grid */
    int64_t panel_rows;    /* forced rows per panel (tests); 0: as many as the handle's workspace holds */
    int panel_gemm;        /* MACKO_PANEL_GEMM_* (spmm_tc.h) of the PANEL path: macko_panel_gemm_of, or forced */
    int panel_splits;      /* forced blocks along K of the wgmma panel GEMM (tests); 0: chosen per call */
    int simt_tc;           /* fp32: the SIMT path's form, MACKO_SIMT_FMA or MACKO_SIMT_TF32X3 (spmm_tc.h) */
    const uint32_t *tidx;  /* the tile index on the device (owned by the encoding's extras) */
    int64_t tidx_bytes;
};

typedef struct macko_plan {
    int index;           /* MACKO_IDX_* the kernels use */
    int forced;          /* built by macko_plan_override with forced choices */
    const void *row_ptr; /* the row pointers the kernels read: the encoding's, or its int64 copy (forced I64_RP64) */
    macko_launch spmv_unit;    /* SpMV (and SpMM n == 1) with incx == 1 */
    macko_launch spmv_strided; /* ... with incx > 1 */
    int mm_rules;              /* rows of mm in use */
    macko_mm_rule mm[MACKO_MM_RULES];
    struct macko_tc_plan tc;
} macko_plan;

/* Test-only choices for macko_plan_override (each field: automatic or one value for every call). */
typedef struct macko_plan_forced {
    int index;         /* -1, or MACKO_IDX_*: I32 only where the automatic variant is I32, I64_RP32 only with an
                          int32 row_ptr; I64_RP64 on an int32 row_ptr gives the encoding an int64 copy of it */
    int spmv_geometry; /* -1, or MACKO_SPMV_WARP / MACKO_SPMV_STAGED (the incx == 1 launch; STAGED on I32 only) */
    int mm_path;       /* MACKO_MM_PATH_AUTO, or STAGED (I32 only), GLOBAL or SPMV (n == 1 only), TC or PANEL (fp16, bf16)
                          or SIMT (fp32) for every n */
    int mm_tile;       /* 0 (n rounded up to 2, 4, 8, 16), or 2, 4, 8, 16 for every n */
    int mm_swizzle;    /* -1 (automatic), 0 (plain) or the spacing shift 3..12 of the staged layout */
    int tc_kt;         /* 0 (automatic), or the TC / PANEL K-tile width: a multiple of 16 in 32..512 */
    int tc_group;      /* 0 (automatic), or 4, 8, 16 lanes per row segment */
    int tc_splits;     /* 0 (automatic), or the TC path's blocks along K for every call (1..64) */
    int64_t panel_rows; /* 0 (automatic), or the PANEL path's rows per panel (a multiple of 128) */
    int spmv_depth;     /* 0 (automatic), or 1..MACKO_SPMV_MAX_DEPTH chunks loaded ahead by the incx == 1 SpMV */
    /* QUANT matrices (the other fields do not apply; the override uploads A again from its host copy): */
    int quant_outliers;   /* -1 (automatic), or MACKO_QOUT_CSR (0) / MACKO_QOUT_TCOL (1) */
    int quant_unit_tiles; /* 0 (automatic), or the tiles per unit of the quantized part */
    int quant_max_ounits; /* 0 (automatic), or at most this many outlier units per band */
    /* A TILES device copy (the other fields do not apply): */
    int tiles_splits; /* 0 (automatic), or the blocks along K of every call (1..64; 1 when the workspace is short) */
    int tiles_path;   /* 0 (automatic), 1 the tile kernel for every n, 2 dense panels + GEMM for every n (where B and
                         C have unit element strides and 128 rows fit the workspace; else the tile kernel), 3 the
                         fused wgmma product for every n (NOT_SUPPORTED where the panel GEMM is not wgmma; where B
                         cannot take a tensor map or C's element stride is not 1, the rules of 0) */
    /* An NM device copy (the other fields do not apply): */
    int nm_path;      /* 0 (automatic), or MACKO_NM_PATH_* for every n (a path this matrix cannot take: NOT_SUPPORTED;
                         SP24WG where B cannot take a tensor map: SP24) */
    /* The GEMM of the dense-panel path, ROWS (PANEL) and TILES alike: */
    int panel_gemm;   /* 0 (automatic), 1 mma.sync, 2 wgmma (NOT_SUPPORTED where macko_panel_gemm_of gives mma.sync) */
    /* An NM device copy again: */
    int nm_cfg;       /* 0 (automatic), or 1 + the kernel configuration of SP24 (0..macko_nm_sp24_configs() - 1),
                         SP24WG (0..macko_nm_sp24_wg_configs() - 1) or SIMT (0..macko_nm_simt_configs() - 1) for
                         every n (benchmarks) */
    /* The wgmma GEMM of the dense-panel path, ROWS (PANEL) and TILES alike: */
    int panel_splits; /* 0 (automatic), or its blocks along K, one thread-block cluster per tile (1..8; at most one
                         per K-slice of 64 columns) */
    /* A TILES device copy again: */
    int tiles_wg_bn;  /* 0 (automatic), or the fused wgmma product's C-tile width 64, 128 or 256 for every n */
    int tiles_wg_stream; /* 0 (automatic), -1 no stream-K, or stream-K over this many blocks (at most 2^20; fewer where
                            the product has fewer K-slices; none where the workspace cannot take them) */
    int tiles_wg_tail;   /* 0 (automatic), -1 no tail split, or 2..16: the fused product's tiles past its last whole
                            wave (all of them where there is none) in a second launch of that many blocks along K
                            (none where the workspace cannot take them; stream-K off) */
    int tiles_wg_cluster; /* 0 (automatic: the fused product's split K as thread-block clusters where a launch's
                             clusters fit the device at once, else pairs of splits in clusters of 2 where the splits
                             are even and the pairs fit), -1: its splits always meet in the workspace, or 2: pairs
                             wherever the splits are even and the pairs fit */
    int tiles_kg;     /* 0 (automatic), or the tile kernel's tiles per group for n <= 32: 8, or 16 where that kernel
                         fits the device (else 8) */
    int tiles_cp_async; /* 0 (automatic: the tile kernel stages its records by bulk copies on compute capability 9.0
                           and newer where the library holds sm_90 code), or 1: by cp.async on every device */
    /* An fp32 encoding's SIMT path: */
    int simt_tc;      /* 0 (automatic: FMA), or MACKO_SIMT_FMA (1) / MACKO_SIMT_TF32X3 (2) for every n (TF32X3 where
                         its block does not fit the device: NOT_SUPPORTED) */
} macko_plan_forced;
#define MACKO_PLAN_FORCED_NONE                                                                                     \
    {-1, -1, MACKO_MM_PATH_AUTO, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
/* The panel GEMM (MACKO_PANEL_GEMM_*) a device of properties dp takes: wgmma on compute capability 9.0 when the
 * library holds sm_90a code (MACKO_HAVE_SM90A, CMakeLists.txt), mma.sync otherwise. */
int macko_panel_gemm_of(const macko_devprops *dp);
/* The panel GEMM of forced value f (0 automatic, 1 mma.sync, 2 wgmma) on dp; -1 when dp cannot run it. */
int macko_panel_gemm_forced(const macko_devprops *dp, int f);
/* The N:M kind's kernels (kernels/nm.h): GEN any pattern and type, one thread-row walk per row; SIMT the blocked
 * fp32 kernel for v >= 8 (large n); SP24 the 2:4 sparse tensor-core kernel (SP24 device layout, mma.sp); SP24WG the
 * same layout on wgmma.mma_async.sp (sm_90a, large n). */
enum {
    MACKO_NM_PATH_AUTO = 0,
    MACKO_NM_PATH_GEN = 1,
    MACKO_NM_PATH_SIMT = 2,
    MACKO_NM_PATH_SP24 = 3,
    MACKO_NM_PATH_SP24WG = 4
};
/* Deepest prefetch of the incx == 1 SpMV per value type (macko_walk.cuh's LoadRing; deeper spills at 64 registers;
 * fp64 has no deep instances) */
#define MACKO_SPMV_MAX_DEPTH 3
#define MACKO_SPMV_MAX_DEPTH_OF(elem) ((elem) == 2 ? 3 : (elem) == 4 ? 2 : 1)

/* The plan of the encoding m (its rows, cols, entries, entries_padded, type and rp64; row_ptr: its device row
 * pointers) on a device with properties dp, with the forced choices f (NULL: automatic). No CUDA call: the host
 * test of the rule calls it with properties filled by hand. Returns SUCCESS, or NOT_SUPPORTED / INVALID_VALUE for
 * forced choices this encoding or device cannot take, with the reason in msg. */
macko_status_t macko_plan_compute(const struct macko_mat_s *m, const void *row_ptr, const macko_devprops *dp,
                                  const macko_plan_forced *f, macko_plan *out, char *msg, size_t msg_size);

/* macko_plan_compute, the shared-memory opt-ins of the plan's kernels (once per plan, never at a launch) and, for a
 * plan with tensor-core paths, the tile index: allocated and built on the current device (which must be dp->device)
 * asynchronously on stream from the encoding's device deltas and row_ptr. f: NULL (every routine that makes an
 * encoding) or the override's. On success *tile_index is the new index allocation (NULL when the plan has none): the
 * caller keeps it in the encoding's extra[MACKO_EXTRA_TILE_INDEX] (freeing the old one). On failure records the
 * error for routine fn (position 0, or 4 for a forced choice), frees what it allocated and leaves *out untouched. */
macko_status_t macko_plan_build(const char *fn, const struct macko_mat_s *m, const void *row_ptr,
                                const uint8_t *deltas, macko_stream_t stream, const macko_devprops *dp,
                                const macko_plan_forced *f, macko_plan *out, void **tile_index);

/* TEST ONLY (tests and the bench; not in macko.h): rebuilds the plan of A's op encoding (op T: after
 * macko_analysis) with the forced choices f, or the automatic plan when f is NULL. On error (a bad argument, a
 * forced choice this matrix or device cannot take: NOT_SUPPORTED, a CUDA failure) the plan stays as it was. Not
 * for use while another thread computes with A. A later macko_mat_upload of A builds the automatic plan again. */
macko_status_t macko_plan_override(macko_handle_t handle, macko_mat_t A, macko_operation_t op,
                                   const macko_plan_forced *f);

/* ---- call time */
/* The SpMV launch for this incx (SpMM n == 1 with incb). */
static inline const macko_launch *macko_plan_spmv(const macko_plan *p, int64_t incx)
{
    return incx == 1 ? &p->spmv_unit : &p->spmv_strided;
}
/* The launch for n columns of B with the given cols of the encoding, B's (incb, ldb) and C's element stride incc;
 * NULL when the plan was forced to a path that cannot run n (or these strides). */
const macko_launch *macko_plan_mm(const macko_plan *p, int64_t n, int64_t cols, int64_t incb, int64_t ldb,
                                  int64_t incc);
/* The launch for a call whose B/C elements (xelem bytes) are wider than the matrix's values (fp16/bf16 A with fp32
 * B and C): the plan's launch where it reads B as its own type (SpMV, or none), else a GLOBAL launch with the tile
 * of the plan's rule for n capped to what the wider elements allow, built in *scratch. Pure arithmetic. */
const macko_launch *macko_plan_mm_wide_b(const macko_plan *p, const struct macko_mat_s *m, int64_t n, int64_t incb,
                                         int64_t ldb, int64_t incc, int xelem, const macko_devprops *dp,
                                         macko_launch *scratch);
/* Runs one launch of a kernel of the type combination `combo` (macko_combo): the cudaError_t of the launch. */
int macko_plan_launch(int combo, const macko_kargs *a, const macko_launch *L);

/* The handle's device workspace (split-K partial tiles of the TC path, its tile counters, the PANEL path's dense
 * panel): allocated by macko_create; the counters are zero between calls. A workspace of the caller's
 * (macko_set_workspace, at least MACKO_WS_BYTES) takes the place of `partial`; every path but the dense panels at
 * n <= MACKO_PANEL_TALL_N_MAX still sees partial_bytes of it, so that their choices and results do not change. */
typedef struct macko_workspace {
    void *base;           /* the handle's own: MACKO_WS_BYTES, 256-byte aligned */
    int *counters;        /* MACKO_WS_COUNTERS ints at the start of base (always the handle's own) */
    float *partial;       /* the rest of base, or the caller's workspace */
    int64_t partial_bytes; /* MACKO_WS_BYTES - the counters, whichever workspace is in use */
    int64_t panel_bytes;   /* what the dense panels may fill at n <= MACKO_PANEL_TALL_N_MAX: partial_bytes, or all of
                              the caller's workspace */
} macko_workspace;
#define MACKO_WS_BYTES (INT64_C(64) << 20)
/* The dense-panel paths (ROWS PANEL, TILES panels) fill more than MACKO_WS_BYTES of a larger workspace of the
 * caller's only up to this n: there a taller panel saves decode launches and GEMM wave tails (-15..-34 % at
 * n = 128-512 with 256 MiB on the H200); beyond, the panel height model (GEMM waves, blind to L2) then picks panels
 * too tall and loses 1-9 % (bench/NOTES.md, session 27). */
#define MACKO_PANEL_TALL_N_MAX 512
/* The bytes of ws a dense panel may fill for a product of n columns. */
static inline int64_t macko_ws_panel_bytes(const macko_workspace *ws, int64_t n)
{
    return n <= MACKO_PANEL_TALL_N_MAX ? ws->panel_bytes : ws->partial_bytes;
}
#define MACKO_WS_COUNTERS 65536
struct macko_tc_args;
/* The tensor-core kernels' arguments (kernels/spmm_tc.h) of the call in a for combo MACKO_COMBO_H or _B: type, sizes,
 * the MACKO arrays, B, C (unit element strides), scalars and stream; everything else zero. */
void macko_tc_args_from(int combo, const macko_kargs *a, struct macko_tc_args *t);
/* Runs the TC or PANEL launch L (a rule row of plan p) for n columns of the type combination `combo`
 * (MACKO_COMBO_H or MACKO_COMBO_B; cudaErrorInvalidValue for any other): the cudaError_t of the launches. */
int macko_plan_launch_tc(int combo, const macko_plan *p, const macko_kargs *a, const macko_launch *L,
                         const macko_workspace *ws, const macko_devprops *dp);

#ifdef __cplusplus
}
#endif

#endif
