/* Internal declarations shared by the host sources in src/. Not installed. */
#ifndef MACKO_INTERNAL_H
#define MACKO_INTERNAL_H

#include "macko.h"
#include "format.h"
#include "devprops.h"
#include "plan.h"

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest element count we allow for any array (keeps byte arithmetic far from int64 overflow). */
#define MACKO_MAX_ELEMS (INT64_C(1) << 56)
/* Host byte counts (at most MACKO_MAX_ELEMS x 8 = 2^59) are computed in size_t after the element counts are checked:
 * that needs a 64-bit size_t, as every host the CUDA toolkit supports has. */
#ifdef __cplusplus
static_assert(sizeof(size_t) >= 8, "macko needs a 64-bit host (size_t of 64 bits)");
#else
_Static_assert(sizeof(size_t) >= 8, "macko needs a 64-bit host (size_t of 64 bits)");
#endif
/* Entries per row_ptr switch: int32 row pointers when entries < 2^31 (lapack_style_docs/FORMAT.md). */
#define MACKO_RP32_LIMIT (INT64_C(1) << 31)

struct macko_handle_s {
    int device;                   /* CUDA device bound at creation (== props.device) */
    macko_stream_t stream;        /* NULL = legacy default stream */
    macko_pointer_mode_t pointer_mode;
    macko_devprops props;         /* read once at creation: grids and launch plans are sized from it */
    macko_workspace ws;           /* device workspace of the tensor-core SpMM paths (plan.h), made at creation */
};

/* Device arrays of an encoding besides FORMAT.md's three: NULL or cudaMalloc'ed on the encoding's device, freed
 * with its arrays (macko_device_arrays_free). One more is one more name here. */
enum {
    MACKO_EXTRA_ROW_PTR64 = 0, /* int64 copy of an int32 row_ptr, for a plan forced to I64_RP64 (tests) */
    MACKO_EXTRA_TILE_INDEX,    /* the tensor-core paths' tile index (plan.h, spmm_tc.h), built with the plan */
    MACKO_EXTRAS
};

/* The kernels use sm_80 instructions (mma.sync m16n8k16, ldmatrix, cp.async) and are built for compute capability
 * 8.0 and newer only (CMakeLists.txt refuses older targets). 1 when a device of compute capability major.minor can
 * run them, 0 otherwise; macko_create refuses the latter with ARCH_MISMATCH. (handle.c) */
int macko_arch_supported(int major, int minor);
/* The status for a CUDA runtime error code (a cudaError_t): SUCCESS for 0, ALLOC_FAILED for out-of-memory,
 * ARCH_MISMATCH when the library holds no kernel image for the device (it was built for other architectures),
 * EXECUTION_FAILED for anything else. Pure: clears nothing. (handle.c) */
macko_status_t macko_status_of_cuda_error(int err);
/* Records the failure of a kernel launch in routine fn (err: the cudaError_t) and returns its status. */
macko_status_t macko_launch_fail(const struct macko_handle_s *h, const char *fn, int err);

/* One MACKO encoding, laid out exactly as lapack_style_docs/FORMAT.md says (host and device alike). */
typedef struct macko_arrays {
    void *values;    /* entries_padded values of the matrix type */
    uint8_t *deltas; /* entries_padded / 2 bytes */
    void *row_ptr;   /* rows + 1, int32 if !rp64 else int64 */
} macko_arrays;

/* The arrays of a QUANT encoding (lapack_style_docs/FORMAT_QUANT.md, src/quant.h). On the host the outliers are
 * always CSR; on the device they are CSR or TCOL (tile-row-interleaved, padded), chosen at upload (q.layout). */
typedef struct macko_quant_arrays {
    uint64_t *words; /* words_count packed tile rows */
    int32_t *optr;   /* CSR: rows + 1 row pointers; TCOL: bands + 1 slot offsets (multiples of 16) */
    uint32_t *oent;  /* CSR: outliers entries; TCOL: slots entries (padding slots are 0) */
} macko_quant_arrays;
enum { MACKO_QOUT_CSR = 0, MACKO_QOUT_TCOL = 1 };
typedef struct macko_quant {
    int bits;            /* 3 */
    int64_t bands;       /* ceil(rows / 16) */
    int64_t tcols;       /* ceil(cols / 16) */
    int64_t words_count; /* bands * tcols * 16 */
    int64_t outliers;    /* outlier entries */
    macko_quant_arrays host; /* valid when has_host */
    macko_quant_arrays dev;  /* valid when has_device */
    int layout;          /* MACKO_QOUT_* of dev */
    int64_t slots;       /* entries of dev.oent (CSR: outliers; TCOL: padded slots) */
    int unit_tiles;      /* tiles per unit of the quantized part for n <= 4 (one band per unit), chosen at upload */
    int unit_tiles_g;    /* ... and for n > 4 (four bands per unit) */
    int ounits, ochunk;  /* outlier units per band and (TCOL) k-steps per outlier unit, chosen at upload */
} macko_quant;

/* The N:M kind (lapack_style_docs/FORMAT_NM.md). Host arrays, canonical: value j of window w of row r at
 * values[r * kept + w * n + j]; its position (0..m-1 inside the window) at positions[(r / v) * kept + w * n + j],
 * strictly ascending within a window; a kept position at a column >= cols holds a zero value. */
enum {
    MACKO_NMDEV_GEN = 0, /* device arrays = the host arrays (values, positions as bytes) */
    MACKO_NMDEV_SP24 = 1 /* m == 4, n <= 2, 16F/16BF: values in mma.sp fragment order + its metadata (nm_device.c) */
};
typedef struct macko_nm {
    int n, m, v;          /* the pattern: n kept of every m columns, shared by v consecutive rows */
    int64_t windows;      /* ceil(cols / m) */
    int64_t groups;       /* ceil(rows / v) */
    int64_t kept;         /* windows * n: values per row */
    void *hvalues;        /* has_host: rows * kept values of the matrix type (64-byte aligned, macko_aligned_calloc) */
    uint8_t *hpos;        /* has_host: groups * kept positions */
    /* has_device (nm_device.c): */
    int dev_layout;       /* MACKO_NMDEV_* */
    void *dvalues;        /* cudaMalloc'ed */
    void *dmeta;          /* GEN: the positions (uint8); SP24: the metadata words (uint32) */
    int64_t dvalues_bytes, dmeta_bytes;
    int path;             /* forced by a test (macko_plan_forced.nm_path); 0: automatic */
    int wg;               /* SP24 on a device that runs the wgmma.sp product (SP24WG): decided at upload */
    int cfg;              /* forced kernel configuration + 1 (macko_plan_forced.nm_cfg); 0: automatic */
    int simt_cfg;         /* SIMT's configuration on this device (macko_nm_simt_auto_cfg; -1: none fits): upload */
    int64_t simt_n;       /* fp32 products take SIMT from this n on where it applies (macko_nm_simt_from; INT64_MAX
                             where simt_cfg is -1): upload */
} macko_nm;

struct macko_mat_s {
    int kind;               /* macko_kind_t; the fields below up to `trans` describe a MACKO encoding, `q` a QUANT
                               one (rows, cols, nnz, type, has_host, has_device, device: every kind) */
    int layout;             /* macko_layout_t the next upload makes (macko_mat_set_layout), every kind: ROWS (0) by
                               default; TILES for MACKO fp16/bf16 only. Not the device copy's: it may differ */
    int64_t rows, cols;
    int64_t nnz;            /* stored values that are not +0/-0 */
    int64_t entries;        /* entries incl. padding */
    int64_t entries_padded; /* entries rounded up to a multiple of 8 */
    macko_datatype_t type;
    int rp64;               /* row_ptr is int64 (entries >= 2^31) */

    int has_host;           /* host arrays valid */
    macko_arrays host;      /* malloc'ed, 64-byte aligned */

    int has_device;         /* device arrays valid */
    int device;             /* CUDA device holding dev */
    macko_arrays dev;       /* cudaMalloc'ed */
    macko_plan plan;        /* how to launch on dev (plan.h): built with dev, then read-only */
    void *extra[MACKO_EXTRAS];

    struct macko_mat_s *trans; /* device-resident encoding of A^T (op T), built by macko_analysis; NULL until then */

    /* The device copy's layout (has_device): ROWS (dev holds the MACKO arrays, plan the launches) or TILES (dev.values
     * holds the tile stream, dev.row_ptr the record offsets, dev.deltas NULL; src/tiles_device.c). */
    int dev_layout;
    struct macko_tiles_dev {
        int64_t bands, tcols, words;
        int abuf;   /* bytes of the largest group of MACKO_TILES_KG consecutive records of a band */
        int occ[5]; /* blocks per SM of the kernels per column tile (8, 16, 24, 32, 64: MACKO_TILES_NTILES), read
                       once at upload */
        int abuf_wide;   /* the same for groups of MACKO_TILES_KG_WIDE records */
        int occ_wide[4]; /* blocks per SM of the kernels with those groups (column tiles 8, 16, 24, 32:
                            MACKO_TILES_WIDE_NT); 0 where none fits, or where the device is not one the choice was
                            measured on (compute capability 9.x) */
        int kg;          /* tiles per group forced by a test (macko_plan_forced.tiles_kg): 0 automatic, 8, 16 */
        int cp_async;    /* 1: the tile kernel's records by cp.async, forced by a test (tiles_cp_async); 0 automatic */
        int splits; /* blocks along K forced by a test (macko_plan_forced.tiles_splits); 0: automatic */
        int path;   /* forced by a test (tiles_path): 0 automatic, 1 the tile kernel, 2 dense panels + GEMM, 3 the fused
                     * wgmma product */
        int panel_gemm; /* MACKO_PANEL_GEMM_* of the dense-panel path: macko_panel_gemm_of at upload, or forced */
        int panel_splits; /* forced blocks along K of its wgmma GEMM (macko_plan_forced.panel_splits); 0: automatic */
        int wg_bn;        /* forced C-tile width of the fused product (macko_plan_forced.tiles_wg_bn); 0: automatic */
        int wg_stream;    /* forced stream-K of the fused product (macko_plan_forced.tiles_wg_stream): -1 off, 0 the
                             rule, > 0 that many blocks */
        int wg_tail;      /* forced tail split of the fused product (macko_plan_forced.tiles_wg_tail): -1 off, 0 the
                             rule, > 1 its blocks along K */
        int wg_cluster;   /* forced by a test (macko_plan_forced.tiles_wg_cluster): -1 split K of the fused product
                             through the workspace only, 0 in clusters where they fit, 2 in pairs where they fit */
        int wg_ccap[3][7]; /* clusters of 2..8 blocks of the fused product the device holds at once, widths 64 (none) /
                              128 / 256 (macko_tiles_wg_cluster_caps), read once at upload; zeros without the fused
                              product */
    } td;

    macko_quant q;          /* kind QUANT: entries = q.outliers, entries_padded = q.slots (host: q.outliers) */
    macko_nm nm;            /* kind NM: entries = entries_padded = rows * nm.kept (kept values incl. zeros) */
};

/* ---- the N:M kind on the GPU (nm_device.c) */
/* 1 for a pattern/type the library supports (FORMAT_NM.md), 0 otherwise. */
int macko_nm_pattern_ok(int n, int m, int v);
/* The device layout an upload of this pattern and type makes (MACKO_NMDEV_*), and its bytes (values, metadata). */
int macko_nm_auto_layout(int n, int m, int v, macko_datatype_t type);
void macko_nm_device_bytes(int64_t rows, int64_t cols, int n, int m, int v, macko_datatype_t type, int layout,
                           int64_t *values_bytes, int64_t *meta_bytes);
/* Uploads A (kind NM, host copy present) to the handle's device in its automatic layout, replacing a previous device
 * copy only on success. */
macko_status_t macko_nm_upload(const char *fn, macko_handle_t handle, macko_mat_t A);
/* The same in device layout `layout` (MACKO_NMDEV_*; -1: automatic), for the test override. */
macko_status_t macko_nm_upload_as(const char *fn, macko_handle_t handle, macko_mat_t A, int layout);
/* The path (MACKO_NM_PATH_*) a product of n columns in combination combo takes on M's device copy. */
int macko_nm_path(const struct macko_mat_s *M, int combo, int64_t n);
/* The SIMT configuration an upload takes for pattern nn of mm on a device whose blocks may opt in to max_smem_optin
 * bytes of shared memory: 0 (the faster on most shapes) where its instance fits, else 1, else -1 (GEN only; on
 * sm_86 / sm_89, 99 KiB, configuration 0 never fits). Pure. */
int macko_nm_simt_auto_cfg(int nn, int mm, int max_smem_optin);
/* The n from which an fp32 product of a rows x cols matrix of pattern nn of mm takes SIMT (8..128; pure). */
int64_t macko_nm_simt_from(int64_t rows, int64_t cols, int nn, int mm, int sm_count);
/* Copies the device copy back and rebuilds the canonical host arrays (allocating them); synchronous. */
macko_status_t macko_nm_download(const char *fn, macko_handle_t handle, macko_mat_t A);
void macko_nm_device_free(struct macko_mat_s *m);
/* C = alpha * M * B + beta * C for a checked call on an NM device copy (combo MACKO_COMBO_H/B/S/D, the matrix
 * type's own): B(k, j) at b[k*incb + j*ldb], C(i, j) at c[i*incc + j*ldc]; scalars by the handle's pointer mode. */
macko_status_t macko_nm_compute(const char *fn, macko_handle_t handle, const struct macko_mat_s *M, int combo,
                                const void *alpha, const void *b, int64_t incb, int64_t ldb, const void *beta,
                                void *c, int64_t incc, int64_t ldc, int64_t n);

/* ---- the QUANT kind on the GPU (quant_device.c) */
/* TCOL outliers are uploaded when their slots are at most this many times the outliers (padding <= 50 %) */
#define MACKO_QUANT_TCOL_MAX_PAD 1.5
int macko_quant_auto_layout(int64_t outliers, int64_t tcol_slots);
/* Tiles per unit of the quantized part, units of `group` bands (1 or 4): about 64 (one band) or 16 (four bands)
 * warps' worth of units per SM,
 * 8 (one band) or 16 (four bands) to 32 tiles each, and few enough units (with ounits outlier units per band) that 16 columns of
 * unit sums fit the handle's workspace; 0 when even one unit per band does not fit. */
int macko_quant_auto_unit(int64_t rows, int64_t tcols, int ounits, int group, int sm_count);
/* Uploads A (kind QUANT, host copy present) to the handle's device with the outlier layout (MACKO_QOUT_*; -1:
 * automatic), tiles per unit (0: automatic) and at most max_ounits outlier units per band (0: 64, fewer while the
 * unit sums do not fit the workspace), replacing a previous device copy only on success. */
macko_status_t macko_quant_upload(const char *fn, macko_handle_t handle, macko_mat_t A, int layout, int unit_tiles,
                                  int max_ounits);
macko_status_t macko_quant_download(const char *fn, macko_handle_t handle, macko_mat_t A);
void macko_quant_device_free(struct macko_mat_s *m);
/* C = alpha * M * B + beta * C for a checked call: B(k, j) at b[k*incb + j*ldb], C(i, j) at c[i*incc + j*ldc], fp16,
 * fp32 scalars by the handle's pointer mode; launches of up to 16 columns each. */
macko_status_t macko_quant_compute(const char *fn, macko_handle_t handle, const struct macko_mat_s *M,
                                   const void *alpha, const void *b, int64_t incb, int64_t ldb, const void *beta,
                                   void *c, int64_t incc, int64_t ldc, int64_t n);

/* ---- the tile layout on the GPU (tiles_device.c) */
/* Builds A's tile layout from its host arrays and uploads it to the handle's device, replacing a previous device copy
 * (and A^T) only on success. */
macko_status_t macko_tiles_upload(const char *fn, macko_handle_t handle, macko_mat_t A);
/* Copies the tile layout back and rebuilds the host arrays as the canonical MACKO encoding of its nonzeros. */
macko_status_t macko_tiles_download(const char *fn, macko_handle_t handle, macko_mat_t A);
/* The automatic rule's path for n columns (1 the tile kernel, 2 dense panels + GEMM, 3 the fused wgmma product; the
 * values of macko_plan_forced.tiles_path): wg, the panel GEMM is wgmma (compute capability 9.0 and sm_90a code, the
 * only case with the fused product); panel_fits, B and C have unit element strides and the workspace holds a panel
 * of at least 128 rows; rows, cols: the matrix's (n = 17..24 on a matrix of MACKO_TILES_N24_ELEMS elements or more
 * takes the tile kernel where wg). The fused product still needs a B that a tensor map describes, else the tile
 * kernel runs. Pure arithmetic (the host tests call it). */
int macko_tiles_auto_path(int64_t n, int64_t rows, int64_t cols, int wg, int panel_fits);
/* C = alpha * M * B + beta * C for a checked call on a TILES device copy (combo MACKO_COMBO_H or _B): B(k, j) at
 * b[k*incb + j*ldb], C(i, j) at c[i*incc + j*ldc]; one launch. */
macko_status_t macko_tiles_compute(const char *fn, macko_handle_t handle, const struct macko_mat_s *M, int combo,
                                   const void *alpha, const void *b, int64_t incb, int64_t ldb, const void *beta,
                                   void *c, int64_t incc, int64_t ldc, int64_t n);
/* Blocks along K of a launch for n columns: of 1 .. min(64, groups / 4) the count of the smallest modelled time (SMs
 * taking their share of blocks in rounds of occ; tiles_device.c), among those whose partial sums and counters fit
 * the workspace. Pure arithmetic (the host tests call it). */
int macko_tiles_auto_splits(int64_t rows, int64_t tcols, int64_t kg, int64_t n, int occ, int sm_count,
                            int64_t ws_floats, int64_t ws_counters);
/* Tiles per group of the tile kernel for n columns of a matrix of rows x (16 tcols): MACKO_TILES_KG_WIDE where n <= 16
 * and the wide kernel holds at least MACKO_TILES_WIDE_MIN_OCC blocks per SM (occ_wide, from the upload), or where it
 * holds 2 (n <= 32) and its launch's modelled time is no more than that of the groups of MACKO_TILES_KG (occ), each
 * with macko_tiles_auto_splits' splits (sm_count SMs, the workspace's ws_floats / ws_counters), else MACKO_TILES_KG;
 * forced (a test's tiles_kg) 8 or 16 wins where the wide kernel fits at all (n <= 32). Pure arithmetic (the host
 * tests call it). */
int macko_tiles_kg(int64_t n, int64_t rows, int64_t tcols, const int occ[5], const int occ_wide[4], int forced,
                   int sm_count, int64_t ws_floats, int64_t ws_counters);

/* ---- thread-local error details (status.c) */
/* Records a failure of routine `fn` caused by argument number `pos` (1-based; 0: not one argument) and returns st.
 * fmt/... is a printf-style description. */
macko_status_t macko_fail(macko_status_t st, const char *fn, int pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Clears the error details; returns MACKO_STATUS_SUCCESS. */
macko_status_t macko_ok(void);
/* Writes a debug line to stderr when MACKO_LOG is set in the environment; silent otherwise. */
void macko_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- sizes (sizes.c) */
size_t macko_type_size(macko_datatype_t t); /* 0 for an unknown type */
int macko_type_valid(int t);
/* a * b with overflow check; returns 0 and leaves *out untouched on overflow or negative operands. */
int macko_mul_i64(int64_t a, int64_t b, int64_t *out);
int macko_add_i64(int64_t a, int64_t b, int64_t *out);
/* Bytes of the three arrays for a matrix with these fields (lapack_style_docs/FORMAT.md); 0 on overflow. */
int64_t macko_values_bytes(macko_datatype_t t, int64_t entries_padded);
int64_t macko_rowptr_bytes(int64_t rows, int rp64);
static inline int64_t macko_round8(int64_t n) { return (n + 7) & ~INT64_C(7); }

/* ---- matrix objects (matrix.c) */
/* Allocates an empty matrix struct (no arrays). NULL on allocation failure. */
struct macko_mat_s *macko_mat_alloc(void);
/* Allocates zeroed host arrays for m's rows/entries_padded/type/rp64. Returns ALLOC_FAILED on failure. */
macko_status_t macko_host_arrays_alloc(struct macko_mat_s *m);
void macko_host_arrays_free(struct macko_mat_s *m);
void *macko_aligned_calloc(size_t bytes); /* 64-byte aligned, zeroed; NULL on failure (also for bytes == 0: 64) */
void macko_aligned_free(void *p);
/* Frees device arrays, extras (and trans); safe on a matrix without them. */
void macko_device_arrays_free(struct macko_mat_s *m);

/* ---- encoding (encode_dense.c, encode_csr.c, import.c, export.c) */
/* Validates a complete host encoding (lapack_style_docs/FORMAT.md): row_ptr monotone from 0 to entries, every
 * decoded column < cols, tail values and deltas zero, nnz consistent. Returns 0 if valid, else a non-zero code and
 * fills msg. Codes: 1 = values bad (nonzero tail value, or NULL), 2 = deltas bad (nonzero tail nibble, a decoded column
 * >= cols, or NULL), 3 = row_ptr bad (row_ptr[0] != 0, decreasing, past entries, row_ptr[rows] != entries, NULL, or
 * rp64 not matching entries >= 2^31). row_ptr is checked completely first, so no entry is read out of bounds whatever
 * the arrays hold, provided they have rows + 1 / entries_padded / entries_padded / 2 elements. msg names the first bad
 * row (msg may be NULL). *nnz_out (may be NULL) is written only on success. Rows may end with zero-valued entries
 * (the reference encoder keeps trailing padding); they are accepted. */
int macko_validate_arrays(int64_t rows, int64_t cols, macko_datatype_t type, int64_t entries, int rp64,
                          const void *values, const uint8_t *deltas, const void *row_ptr, int64_t *nnz_out,
                          char *msg, size_t msg_size);

/* ---- compute calls: alpha/beta by pointer mode. HOST: the values are read now and passed by value (the device
 * pointers are NULL); DEVICE: the kernel reads them through the device pointers (the values are unused). */
static inline void macko_resolve_scalars(const struct macko_handle_s *h, const float *alpha, const float *beta,
                                         float *alpha_val, float *beta_val, const float **alpha_dev,
                                         const float **beta_dev)
{
    if (h->pointer_mode == MACKO_POINTER_MODE_DEVICE) {
        *alpha_dev = alpha;
        *beta_dev = beta;
        *alpha_val = 0.0f;
        *beta_val = 0.0f;
    } else {
        *alpha_dev = NULL;
        *beta_dev = NULL;
        *alpha_val = *alpha;
        *beta_val = *beta;
    }
}

/* The scalars of a launch of combination `combo` (fp64 for MACKO_COMBO_D, else fp32) into a's fields by the
 * pointer mode, as macko_resolve_scalars; alpha and beta point to the compute type. */
static inline void macko_kargs_scalars(const struct macko_handle_s *h, int combo, const void *alpha, const void *beta,
                                       macko_kargs *a)
{
    a->alpha_dev = a->beta_dev = NULL;
    a->alpha_dev_d = a->beta_dev_d = NULL;
    a->alpha = a->beta = 0.0f;
    a->alpha_d = a->beta_d = 0.0;
    if (combo != MACKO_COMBO_D) {
        macko_resolve_scalars(h, (const float *)alpha, (const float *)beta, &a->alpha, &a->beta, &a->alpha_dev,
                              &a->beta_dev);
    } else if (h->pointer_mode == MACKO_POINTER_MODE_DEVICE) {
        a->alpha_dev_d = (const double *)alpha;
        a->beta_dev_d = (const double *)beta;
    } else {
        a->alpha_d = *(const double *)alpha;
        a->beta_d = *(const double *)beta;
    }
}

#ifdef __cplusplus
}
#endif

#endif
