/*
 * macko.h -- the whole public C API of macko.
 *
 * macko stores sparse weight matrices of 30-90 % sparsity in the MACKO format (values + 4-bit column deltas with
 * strategic zero padding, see lapack_style_docs/FORMAT.md) and multiplies them by vectors on NVIDIA GPUs.
 *
 * Plain C99, no CUDA headers required.  Every routine returns a macko_status_t except the few getters of static
 * strings and error details, which cannot fail.  On any error the routine writes none of its outputs and records the
 * 1-based position of the first bad argument (thread-local; see macko_get_last_error_position()).
 */
#ifndef MACKO_H
#define MACKO_H

#include <stddef.h>
#include <stdint.h>

#define MACKO_VERSION_MAJOR 0
#define MACKO_VERSION_MINOR 1
#define MACKO_VERSION_PATCH 0
#define MACKO_VERSION_NUMBER (MACKO_VERSION_MAJOR * 10000 + MACKO_VERSION_MINOR * 100 + MACKO_VERSION_PATCH)

#if defined(_WIN32) && defined(MACKO_BUILDING_SHARED)
#define MACKO_API __declspec(dllexport)
#elif defined(_WIN32) && defined(MACKO_SHARED)
#define MACKO_API __declspec(dllimport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define MACKO_API __attribute__((visibility("default")))
#else
#define MACKO_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA stream type, declared so that callers need no CUDA header (same definition as the CUDA runtime's). */
struct CUstream_st;
typedef struct CUstream_st *macko_stream_t;

/* fp16 values cross the API as their IEEE binary16 bit pattern, bf16 values as theirs (the upper half of a float). */
typedef uint16_t macko_half;
typedef uint16_t macko_bfloat16;

/* Status codes: pinned numbers, never renumbered (they match cuSPARSE where the meaning overlaps). */
typedef enum {
    MACKO_STATUS_SUCCESS = 0,
    MACKO_STATUS_NOT_INITIALIZED = 1,
    MACKO_STATUS_ALLOC_FAILED = 2,
    MACKO_STATUS_INVALID_VALUE = 3,
    MACKO_STATUS_ARCH_MISMATCH = 4,
    MACKO_STATUS_EXECUTION_FAILED = 6,
    MACKO_STATUS_INTERNAL_ERROR = 7,
    MACKO_STATUS_NOT_SUPPORTED = 10,
    MACKO_STATUS_INSUFFICIENT_RESOURCES = 11,
    MACKO_STATUS_IO_ERROR = 12,
    MACKO_STATUS_FORMAT_ERROR = 100
} macko_status_t;

/* Value types: numbers of cudaDataType. */
typedef enum {
    MACKO_R_32F = 0,  /* float */
    MACKO_R_64F = 1,  /* double */
    MACKO_R_16F = 2,  /* IEEE half, as macko_half bit patterns on the host */
    MACKO_R_16BF = 14 /* bfloat16, as macko_bfloat16 bit patterns on the host */
} macko_datatype_t;

/* Index types of CSR input/output and of row pointers: numbers of cusparseIndexType_t. */
typedef enum {
    MACKO_INDEX_32I = 2,
    MACKO_INDEX_64I = 3
} macko_indextype_t;

typedef enum {
    MACKO_INDEX_BASE_ZERO = 0,
    MACKO_INDEX_BASE_ONE = 1
} macko_index_base_t;

/* Dense storage order: numbers of cusparseOrder_t. */
typedef enum {
    MACKO_ORDER_COL = 1,
    MACKO_ORDER_ROW = 2
} macko_order_t;

typedef enum {
    MACKO_OPERATION_NON_TRANSPOSE = 0,
    MACKO_OPERATION_TRANSPOSE = 1
} macko_operation_t;

typedef enum {
    MACKO_POINTER_MODE_HOST = 0,
    MACKO_POINTER_MODE_DEVICE = 1
} macko_pointer_mode_t;

typedef struct macko_handle_s *macko_handle_t;
typedef struct macko_mat_s *macko_mat_t;

/* ---------------------------------------------------------------- library, status and errors */

MACKO_API macko_status_t macko_get_version(int *major, int *minor, int *patch);
/* "MACKO_STATUS_INVALID_VALUE"; "MACKO_STATUS_<unknown>" for numbers that are not a status. Never NULL. */
MACKO_API const char *macko_get_status_name(macko_status_t status);
/* A sentence describing the status. Never NULL. */
MACKO_API const char *macko_get_status_string(macko_status_t status);
/* Details of the calling thread's most recent failed call: 1-based position of the first bad argument (0 when the
 * failure was not caused by one argument, or the last call succeeded), and a message naming the routine and the
 * argument ("" after a success). The message stays valid until the thread's next macko call. */
MACKO_API int macko_get_last_error_position(void);
MACKO_API const char *macko_get_last_error_message(void);

/* ---------------------------------------------------------------- handle */

/* Binds the current CUDA device. Returns NOT_INITIALIZED when no CUDA device can be used, ARCH_MISMATCH when it is
 * older than compute capability 8.0 (Ampere). */
MACKO_API macko_status_t macko_create(macko_handle_t *handle);
MACKO_API macko_status_t macko_destroy(macko_handle_t handle); /* NULL is accepted */
MACKO_API macko_status_t macko_set_stream(macko_handle_t handle, macko_stream_t stream);
MACKO_API macko_status_t macko_get_stream(macko_handle_t handle, macko_stream_t *stream);
MACKO_API macko_status_t macko_set_pointer_mode(macko_handle_t handle, macko_pointer_mode_t mode);
MACKO_API macko_status_t macko_get_pointer_mode(macko_handle_t handle, macko_pointer_mode_t *mode);
/* The smallest workspace macko_set_workspace takes: the size of the handle's own (64 MiB). */
#define MACKO_WORKSPACE_MIN_BYTES ((size_t)64 << 20)
/* Gives the handle a device workspace of the caller's (as cublasSetWorkspace): device memory of the handle's device,
 * 256-byte aligned, at least MACKO_WORKSPACE_MIN_BYTES, kept valid by the caller while calls that may use it run.
 * Larger workspaces let the dense-panel paths take taller panels at small n (lapack_style_docs/
 * macko_set_workspace.md). workspace = NULL with workspace_bytes = 0: back to the handle's own. */
MACKO_API macko_status_t macko_set_workspace(macko_handle_t handle, void *workspace, size_t workspace_bytes);

/* ---------------------------------------------------------------- matrices on the host (no GPU needed) */

/* Encodes a dense rows x cols matrix (row- or column-major, leading dimension ld). Values that are +0 or -0 are
 * zeros; every other value, NaN and Inf included, is stored. */
MACKO_API macko_status_t macko_mat_create_dense_host(macko_mat_t *A, int64_t rows, int64_t cols,
                                                     macko_datatype_t type, const void *values, int64_t ld,
                                                     macko_order_t order);
/* Encodes a CSR matrix. row_ptr and col_ind have index_type; columns within a row must be strictly increasing and
 * inside [0, cols) after removing index_base; row_ptr must start at index_base, be non-decreasing and end at
 * nnz + index_base. Every stored entry is an entry, explicit zeros included (lapack_style_docs/FORMAT.md). */
MACKO_API macko_status_t macko_mat_create_csr_host(macko_mat_t *A, int64_t rows, int64_t cols, int64_t nnz,
                                                   const void *row_ptr, const void *col_ind, const void *values,
                                                   macko_indextype_t index_type, macko_index_base_t index_base,
                                                   macko_datatype_t type);
/* Imports the raw MACKO arrays exactly as lapack_style_docs/FORMAT.md lays them out: values (entries_padded of
 * type), deltas (entries_padded/2 bytes) and row_ptr (rows + 1, int32 when entries < 2^31, else int64), where
 * entries_padded is entries rounded up to a multiple of 8. Everything is validated; the arrays are copied. */
MACKO_API macko_status_t macko_mat_create_macko_host(macko_mat_t *A, int64_t rows, int64_t cols,
                                                     macko_datatype_t type, int64_t entries, const void *values,
                                                     const uint8_t *deltas, const void *row_ptr);
MACKO_API macko_status_t macko_mat_destroy(macko_mat_t A); /* NULL is accepted */

/* Exposes the host arrays (no copy; valid until A is destroyed or its host copy released). row_ptr_type tells
 * whether row_ptr holds int32 or int64. Any output pointer may be NULL when not wanted. */
MACKO_API macko_status_t macko_mat_get_macko_host(macko_mat_t A, const void **values, const uint8_t **deltas,
                                                  const void **row_ptr, macko_indextype_t *row_ptr_type,
                                                  int64_t *entries, int64_t *entries_padded);
/* Any output pointer may be NULL when not wanted. nnz counts the stored values that are not +0/-0. */
MACKO_API macko_status_t macko_mat_get_info(macko_mat_t A, int64_t *rows, int64_t *cols, int64_t *nnz,
                                            macko_datatype_t *type);
/* bytes = values + deltas + row_ptr (4 or 8 bytes per row pointer) as lapack_style_docs/FORMAT.md lays them out;
 * effective_density = bytes / (rows*cols*sizeof(type)). Any output pointer may be NULL when not wanted. */
MACKO_API macko_status_t macko_mat_get_storage(macko_mat_t A, int64_t *bytes, int64_t *entries,
                                               int64_t *entries_padded, double *effective_density);
/* Writes the matrix as CSR: row_ptr (rows + 1), col_ind and values (nnz each, nnz from macko_mat_get_info), columns
 * sorted; entries whose value is +0/-0 (padding, explicit zeros) are not written. */
MACKO_API macko_status_t macko_mat_export_csr_host(macko_mat_t A, void *row_ptr, void *col_ind, void *values,
                                                   macko_indextype_t index_type, macko_index_base_t index_base);
/* Writes the matrix densely (zeros included) with leading dimension ld in the given order. */
MACKO_API macko_status_t macko_mat_export_dense_host(macko_mat_t A, void *values, int64_t ld, macko_order_t order);

/* ---------------------------------------------------------------- persistence */

MACKO_API macko_status_t macko_mat_serialized_size(macko_mat_t A, int64_t *bytes);
/* Writes exactly macko_mat_serialized_size() bytes; buffer_size must be at least that. */
MACKO_API macko_status_t macko_mat_serialize(macko_mat_t A, void *buffer, int64_t buffer_size);
/* Validates every header field and the checksum before use: FORMAT_ERROR on anything wrong. */
MACKO_API macko_status_t macko_mat_deserialize(macko_mat_t *A, const void *buffer, int64_t buffer_size);
MACKO_API macko_status_t macko_mat_save(macko_mat_t A, const char *path);
MACKO_API macko_status_t macko_mat_load(macko_mat_t *A, const char *path);

/* ---------------------------------------------------------------- matrices on the GPU */

/* Copies the host encoding to the handle's device, asynchronously on the handle's stream (the host arrays may be
 * changed or released as soon as the call returns), in the layout of macko_mat_set_layout. Uploading again replaces
 * the device copy (an op T analysis is kept when the device stays the same and the new copy is in MACKO rows). */
MACKO_API macko_status_t macko_mat_upload(macko_handle_t handle, macko_mat_t A);
/* Device layouts of a MACKO matrix: the MACKO rows themselves, or 16 x 16 bitmap tiles read by tensor-core kernels
 * (lapack_style_docs/FORMAT.md, "Tile layout"). A matrix holds one of them on the device, never both. */
typedef enum {
    MACKO_LAYOUT_ROWS = 0,
    MACKO_LAYOUT_TILES = 1
} macko_layout_t;
/* The device layout the next macko_mat_upload of A makes: ROWS (the MACKO rows, the default) or TILES (bitmap tiles
 * for the tensor cores; MACKO kind, fp16 or bf16 only). A device copy already present keeps its layout until the
 * next upload. */
MACKO_API macko_status_t macko_mat_set_layout(macko_mat_t A, macko_layout_t layout);
MACKO_API macko_status_t macko_mat_get_layout(macko_mat_t A, macko_layout_t *layout);
/* Copies the device encoding back to the host (synchronous on the handle's stream); the host arrays then equal the
 * device arrays byte for byte (from the tile layout: the canonical MACKO encoding of its nonzeros). */
MACKO_API macko_status_t macko_mat_download(macko_handle_t handle, macko_mat_t A);
/* Frees the host arrays of a matrix that is on the device. Routines that read the host arrays (get_macko_host,
 * export_*, serialize, save) then return NOT_INITIALIZED until macko_mat_download; get_info, get_storage and
 * serialized_size keep working. */
MACKO_API macko_status_t macko_mat_release_host(macko_mat_t A);
/* Encodes on the GPU from device data. The result lives on the device only, and its arrays are byte-identical to
 * what macko_mat_create_dense_host / macko_mat_create_csr_host make of the same data. Synchronises the stream. */
MACKO_API macko_status_t macko_mat_create_dense_device(macko_handle_t handle, macko_mat_t *A, int64_t rows,
                                                       int64_t cols, macko_datatype_t type, const void *values,
                                                       int64_t ld, macko_order_t order);
MACKO_API macko_status_t macko_mat_create_csr_device(macko_handle_t handle, macko_mat_t *A, int64_t rows,
                                                     int64_t cols, int64_t nnz, const void *row_ptr,
                                                     const void *col_ind, const void *values,
                                                     macko_indextype_t index_type, macko_index_base_t index_base,
                                                     macko_datatype_t type);
/* One-time work for later compute calls with op on A: for op T it builds the transposed encoding on the device.
 * Compute calls never allocate; without the analysis they need they return NOT_INITIALIZED. */
MACKO_API macko_status_t macko_analysis(macko_handle_t handle, macko_operation_t op, macko_mat_t A);

/* ---------------------------------------------------------------- compute (device pointers, asynchronous) */

/* y = alpha*op(A)*x + beta*y with fp16 A, x and y, float alpha/beta, fp32 accumulation. alpha and beta are host
 * pointers in MACKO_POINTER_MODE_HOST and device pointers in MACKO_POINTER_MODE_DEVICE. */
MACKO_API macko_status_t macko_Hspmv(macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                                     const macko_half *x, int64_t incx, const float *beta, macko_half *y,
                                     int64_t incy);
/* The same with fp32 A, x and y. */
MACKO_API macko_status_t macko_Sspmv(macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                                     const float *x, int64_t incx, const float *beta, float *y, int64_t incy);

/* C = alpha*op(A)*B + beta*C for n columns: B (k x n, k = cols of op(A)) and C (m x n, m = rows of op(A)) are
 * column-major device matrices with leading dimensions ldb >= max(1, k) and ldc >= max(1, m). A batch of n
 * activation vectors stored one after another is exactly this. fp16 A, B and C, float alpha/beta (host or device
 * pointers as the pointer mode says), fp32 accumulation. C must not overlap B. Fast for n = 1..16, correct for any n. */
MACKO_API macko_status_t macko_Hspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha,
                                     macko_mat_t A, const macko_half *B, int64_t ldb, const float *beta,
                                     macko_half *C, int64_t ldc);
/* The same with fp32 A, B and C. */
MACKO_API macko_status_t macko_Sspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha,
                                     macko_mat_t A, const float *B, int64_t ldb, const float *beta, float *C,
                                     int64_t ldc);
/* y_i = alpha*op(A)*x_i + beta*y_i for i < batch, the same A for every vector: x_i starts at x + i*stridex, y_i at
 * y + i*stridey, elements incx / incy apart (cuBLAS gemvStridedBatched's shape). incx, incy >= 1; stridex >= 0
 * (0: one x for all); stridey >= 0, and >= 1 when batch > 1. The y_i must not share elements with each other or
 * with any x_i. */
MACKO_API macko_status_t macko_Hspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const float *alpha,
                                                     macko_mat_t A, const macko_half *x, int64_t incx,
                                                     int64_t stridex, const float *beta, macko_half *y,
                                                     int64_t incy, int64_t stridey, int64_t batch);
/* The same with fp32 A, x and y. */
MACKO_API macko_status_t macko_Sspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const float *alpha,
                                                     macko_mat_t A, const float *x, int64_t incx, int64_t stridex,
                                                     const float *beta, float *y, int64_t incy, int64_t stridey,
                                                     int64_t batch);

/* ---------------------------------------------------------------- fp64 (BLAS's D routines: fp64 A, vectors,
 * alpha/beta and accumulation) */
MACKO_API macko_status_t macko_Dspmv(macko_handle_t handle, macko_operation_t op, const double *alpha, macko_mat_t A,
                                     const double *x, int64_t incx, const double *beta, double *y, int64_t incy);
MACKO_API macko_status_t macko_Dspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const double *alpha,
                                     macko_mat_t A, const double *B, int64_t ldb, const double *beta, double *C,
                                     int64_t ldc);
MACKO_API macko_status_t macko_Dspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const double *alpha,
                                                     macko_mat_t A, const double *x, int64_t incx, int64_t stridex,
                                                     const double *beta, double *y, int64_t incy, int64_t stridey,
                                                     int64_t batch);

/* ---------------------------------------------------------------- generic entry points (cusparseSpMV /
 * cublasGemmEx style): A's value type is the matrix's own; x (B) and y (C) have the types given; alpha and beta
 * point to scalars of compute_type (host or device pointers as the pointer mode says). Supported (A, x, y, compute):
 *   16F  16F  16F  32F      16BF 16BF 16BF 32F      32F 32F 32F 32F      64F 64F 64F 64F
 *   16F  32F  32F  32F      16BF 32F  32F  32F
 * Any other combination returns MACKO_STATUS_NOT_SUPPORTED with the position of the first type argument that no
 * supported combination allows (given A's type and the type arguments before it). */
MACKO_API macko_status_t macko_spmv_ex(macko_handle_t handle, macko_operation_t op, const void *alpha, macko_mat_t A,
                                       const void *x, macko_datatype_t xtype, int64_t incx, const void *beta, void *y,
                                       macko_datatype_t ytype, int64_t incy, macko_datatype_t compute_type);
MACKO_API macko_status_t macko_spmm_ex(macko_handle_t handle, macko_operation_t op, int64_t n, const void *alpha,
                                       macko_mat_t A, const void *B, macko_datatype_t btype, int64_t ldb,
                                       const void *beta, void *C, macko_datatype_t ctype, int64_t ldc,
                                       macko_datatype_t compute_type);

/* ---------------------------------------------------------------- matrix kinds
 * A macko_mat_t holds one of these encodings; every routine that takes a matrix accepts every kind unless its page
 * says otherwise (then it returns MACKO_STATUS_NOT_SUPPORTED at A's position). */
typedef enum {
    MACKO_KIND_MACKO = 0, /* values + 4-bit column deltas (lapack_style_docs/FORMAT.md) */
    MACKO_KIND_QUANT = 1, /* 3-bit weights in 16 x 16 tiles with bi-level scales and zeros, plus fp16 outliers in
                             CSR (lapack_style_docs/FORMAT_QUANT.md); value type MACKO_R_16F */
    MACKO_KIND_NM = 2     /* vector-wise N:M sparsity: in every window of M consecutive columns N positions are
                             kept, the same positions for V consecutive rows (lapack_style_docs/FORMAT_NM.md) */
} macko_kind_t;
MACKO_API macko_status_t macko_mat_get_kind(macko_mat_t A, macko_kind_t *kind);

/* How macko_mat_create_quant_dense_host picks the outliers (weights kept exactly, in fp16, beside the 3-bit part). */
typedef enum {
    MACKO_OUTLIERS_NONE = 0,     /* none; param must be 0 */
    MACKO_OUTLIERS_FRACTION = 1, /* the round(param * rows * cols) weights of largest quantization error,
                                    0 <= param <= 1 */
    MACKO_OUTLIERS_THRESHOLD = 2 /* every weight whose quantization error |w - dequantized(w)| exceeds param >= 0 */
} macko_outlier_rule_t;

/* Quantizes a dense rows x cols weight (type: any value type; finite values of at most 65504 in magnitude) to the
 * QUANT kind with `bits` bits per weight (3 is the one supported width), round to nearest with bi-level groups of 16
 * (lapack_style_docs/FORMAT_QUANT.md says exactly how), and the outliers the rule picks. cols <= 65536. */
MACKO_API macko_status_t macko_mat_create_quant_dense_host(macko_mat_t *A, int64_t rows, int64_t cols,
                                                           macko_datatype_t type, const void *values, int64_t ld,
                                                           macko_order_t order, int bits, macko_outlier_rule_t rule,
                                                           double param);
/* Imports the QUANT arrays exactly as lapack_style_docs/FORMAT_QUANT.md lays them out: words (ceil(rows/16) *
 * ceil(cols/16) * 16 packed tile rows), and the outliers in CSR: outlier_row_ptr (rows + 1 int32, from 0 to
 * outliers) and outlier_entries (outliers words: column in bits 0..15, the fp16 value in bits 16..31). Everything
 * is validated (the first offending tile row or outlier is named); the arrays are copied. */
MACKO_API macko_status_t macko_mat_create_quant_host(macko_mat_t *A, int64_t rows, int64_t cols, int bits,
                                                     const uint64_t *words, int64_t outliers,
                                                     const int32_t *outlier_row_ptr,
                                                     const uint32_t *outlier_entries);
/* Exposes the host arrays of a QUANT matrix (no copy; valid until A is destroyed or its host copy released). Any
 * output pointer may be NULL when not wanted. NOT_SUPPORTED for another kind. */
MACKO_API macko_status_t macko_mat_get_quant_host(macko_mat_t A, int *bits, const uint64_t **words,
                                                  int64_t *words_count, int64_t *outliers,
                                                  const int32_t **outlier_row_ptr,
                                                  const uint32_t **outlier_entries);

/* ---------------------------------------------------------------- the N:M kind (lapack_style_docs/FORMAT_NM.md)
 * Supported patterns: M in {4, 8, 16, 32}, 1 <= N <= M, V in {1, 2, 4, 8, 16, 32}; value types 16F, 16BF, 32F, 64F.
 * rows and cols need not be multiples of V and M (the last row group and window may be partial). */

/* Encodes a dense rows x cols matrix (ld, order as macko_mat_create_dense_host) as the N:M kind with the pattern
 * (n, m, v). Any of n, m, v may be 0: it is then detected, choosing the supported value that makes the encoding
 * smallest (ties: the larger M, then the larger V); n = 0 alone detects the smallest N that holds every window. A
 * nonzero that the pattern cannot keep is refused (INVALID_VALUE at the values' position; the message names the first
 * offending row and window). */
MACKO_API macko_status_t macko_mat_create_nm_dense_host(macko_mat_t *A, int64_t rows, int64_t cols,
                                                        macko_datatype_t type, const void *values, int64_t ld,
                                                        macko_order_t order, int n, int m, int v);
/* The same from device data (values is a device pointer on the handle's device): the dense matrix is copied to the
 * host on the handle's stream and encoded there; the result holds the host copy and a device copy. Synchronises the
 * stream. */
MACKO_API macko_status_t macko_mat_create_nm_dense_device(macko_handle_t handle, macko_mat_t *A, int64_t rows,
                                                         int64_t cols, macko_datatype_t type, const void *values,
                                                         int64_t ld, macko_order_t order, int n, int m, int v);
/* Imports the N:M arrays as lapack_style_docs/FORMAT_NM.md lays them out: values (rows * ceil(cols/m) * n values of
 * `type`, row-major, window by window) and positions (ceil(rows/v) * ceil(cols/m) * n bytes: the kept positions of
 * each row group's windows, 0..m-1, strictly ascending within a window). A kept position at a column >= cols must
 * hold a zero value. Validated completely (the first offending row group / row and window is named); copied. */
MACKO_API macko_status_t macko_mat_create_nm_host(macko_mat_t *A, int64_t rows, int64_t cols, macko_datatype_t type,
                                                  int n, int m, int v, const void *values, const uint8_t *positions);
/* Exposes the host arrays of an N:M matrix (no copy; valid until A is destroyed or its host copy released). Any
 * output pointer may be NULL when not wanted. NOT_SUPPORTED for another kind. */
MACKO_API macko_status_t macko_mat_get_nm_host(macko_mat_t A, int *n, int *m, int *v, const void **values,
                                               const uint8_t **positions);

#ifdef __cplusplus
}
#endif

#endif /* MACKO_H */
