/* The N:M kind on the host (lapack_style_docs/FORMAT_NM.md): sizes, the pattern check, the validator, the host arrays
 * and the matrix object (nm_import.c), the dense encoder (nm_encode.c), shared with the exports, the queries and the
 * serialization of version 3. */
#ifndef MACKO_NM_HOST_H
#define MACKO_NM_HOST_H

#include "macko_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* windows = ceil(cols / m), groups = ceil(rows / v), kept = windows * n, values = rows * kept (the entries) and
 * positions = groups * kept. Returns 0 (outputs untouched) when rows or cols is negative, the pattern has a zero, or
 * values exceeds MACKO_MAX_ELEMS. Any output may be NULL. */
int macko_nm_sizes(int64_t rows, int64_t cols, int n, int m, int v, int64_t *windows, int64_t *groups, int64_t *kept,
                   int64_t *values, int64_t *positions);

/* The pattern arguments n, m, v at positions pos, pos + 1, pos + 2, judged m first (n's bound needs it), then n, then
 * v. Negative (or, without allow_zero, zero) is INVALID_VALUE; n > m (m given) is INVALID_VALUE; a positive m or v
 * outside the supported sets, or n > 32 with m = 0, is NOT_SUPPORTED. With allow_zero a 0 means "detect". */
macko_status_t macko_check_nm_pattern(const char *fn, int pos, int n, int m, int v, int allow_zero);

/* The argument of an N:M encoding at fault, as macko_nm_validate returns it. */
enum { MACKO_NMBAD_VALUES = 1, MACKO_NMBAD_POSITIONS = 2 };

/* Validates the host arrays of a rows x cols N:M encoding of a supported pattern (macko_nm_sizes must accept it;
 * values holds rows * kept values of type, positions groups * kept bytes). Scans group by group and, in a group,
 * window by window: the window's positions (each < m, strictly ascending), then the values of its slots at columns
 * >= cols in every row of the group (must be +0 or -0). Safe on any content. Returns 0 when valid, else MACKO_NMBAD_*
 * with msg (may be NULL) naming the array and the first bad group or row and window. *nnz_out (may be NULL), written
 * only on success: the stored values that are not +0/-0. */
int macko_nm_validate(int64_t rows, int64_t cols, macko_datatype_t type, int n, int m, int v, const void *values,
                      const uint8_t *positions, int64_t *nnz_out, char *msg, size_t msg_size);

/* Zeroed, 64-byte aligned host arrays of `values` values of type and `positions` bytes (never NULL, also for size 0).
 * ALLOC_FAILED leaves both NULL and nothing allocated. */
macko_status_t macko_nm_host_alloc(macko_datatype_t type, int64_t values, int64_t positions, void **hvalues,
                                   uint8_t **hpos);

/* The matrix of a valid encoding (macko_nm_validate or the encoder says so, and gave nnz) that takes over *hvalues
 * and *hpos (set to NULL): kind NM, the pattern and its sizes, host copy only. NULL on allocation failure, the arrays
 * then freed. */
struct macko_mat_s *macko_nm_mat(int64_t rows, int64_t cols, macko_datatype_t type, int n, int m, int v, int64_t nnz,
                                 void **hvalues, uint8_t **hpos);
/* Frees the host arrays of m's N:M encoding (NULL members are fine) and NULLs them. */
void macko_nm_host_free(struct macko_mat_s *m);
/* Bytes of the host arrays: rows * kept * sizeof(type) + groups * kept. */
int64_t macko_nm_host_bytes(const struct macko_mat_s *m);

/* Writes rows [r0, r1) of the host copy of N:M matrix A into out (element (r, c) at out[r*rs + c*cs]) after zeroing
 * their rows x cols region: zeros (padding included) are written as +0. */
void macko_nm_export_rows(const struct macko_mat_s *A, unsigned char *out, int64_t rs, int64_t cs, int64_t r0,
                          int64_t r1);
/* Writes the host copy of N:M matrix A as CSR (row_ptr rows + 1, col_ind and values nnz each; index type i64 or
 * int32, index base `base`), columns ascending, zero values (padding) left out. The arguments are checked. */
void macko_nm_export_csr(const struct macko_mat_s *A, void *row_ptr, void *col_ind, void *values, int i64,
                         int64_t base);

/* The dense encoder of macko_mat_create_nm_dense_host and _device (checked arguments; the dense host array at values
 * with leading dimension ld, column-major when colmajor): detects the pattern where n, m or v is 0, refuses what the
 * pattern cannot keep, and makes the canonical encoding (FORMAT_NM.md). pos is the position of argument A in fn's
 * signature (the others follow as in macko_mat_create_nm_dense_host). On success *out is a new host-only matrix; on
 * failure the error is recorded and *out untouched. */
macko_status_t macko_nm_encode_dense(const char *fn, int pos, struct macko_mat_s **out, int64_t rows, int64_t cols,
                                     macko_datatype_t type, const void *values, int64_t ld, int colmajor, int n,
                                     int m, int v);

#ifdef __cplusplus
}
#endif

#endif
