/* The QUANT kind on the host (lapack_style_docs/FORMAT_QUANT.md): sizes, the validator, the host arrays and the
 * matrix object, shared by the importer, the dense encoder, the exports and the queries (quant_import.c). The bit
 * fields and the decode arithmetic are src/quant.h's. */
#ifndef MACKO_QUANT_HOST_H
#define MACKO_QUANT_HOST_H

#include "macko_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bands = ceil(rows / 16), tcols = ceil(cols / 16), words_count = bands * tcols * 16. Returns 0 (outputs untouched)
 * when rows or cols is negative or words_count would exceed MACKO_MAX_ELEMS. */
int macko_quant_sizes(int64_t rows, int64_t cols, int64_t *bands, int64_t *tcols, int64_t *words_count);
/* The first arguments (A, rows, cols) of the QUANT creators, at positions 1..3: A not NULL, sizes in range, cols at
 * most MACKO_QUANT_MAX_COLS (NOT_SUPPORTED). */
macko_status_t macko_check_quant_shape(const char *fn, const macko_mat_t *A, int64_t rows, int64_t cols);
/* bits at position pos: MACKO_QUANT_BITS, else NOT_SUPPORTED. */
macko_status_t macko_check_quant_bits(const char *fn, int pos, int bits);

/* The argument of a QUANT encoding at fault, as macko_quant_validate returns it. */
enum { MACKO_QBAD_WORDS = 1, MACKO_QBAD_ROW_PTR = 2, MACKO_QBAD_ENTRIES = 3 };

/* Validates a complete host encoding of rows x cols (cols <= 65536, sizes as macko_quant_sizes; optr holds rows + 1
 * and oent `outliers` elements, words words_count): the words tile by tile in storage order (zero bits, padding codes,
 * every decoded s and m finite, and every decoded weight of a row inside the matrix), then the row pointers
 * completely, then the entries row by row (columns increasing and < cols, values finite and not +-0). Safe on any
 * content. Returns 0 when valid, else MACKO_QBAD_* with msg (may be NULL) naming the first bad tile row "(row R, tile
 * column T)" or outlier "row R, outlier K" after the array's name. *nnz_out (may be NULL), written only on success:
 * the positions inside the matrix where the decoded weight plus the outlier is not zero. */
int macko_quant_validate(int64_t rows, int64_t cols, const uint64_t *words, int64_t outliers, const int32_t *optr,
                         const uint32_t *oent, int64_t *nnz_out, char *msg, size_t msg_size);

/* Host arrays for words_count words, rows + 1 row pointers and `outliers` entries, zeroed and 64-byte aligned (never
 * NULL, also for size 0). ALLOC_FAILED leaves *qa all NULL and nothing allocated. */
macko_status_t macko_quant_host_alloc(int64_t rows, int64_t words_count, int64_t outliers, macko_quant_arrays *qa);
void macko_quant_host_free(macko_quant_arrays *qa); /* frees and NULLs the three; NULL members are fine */

/* The matrix of a valid encoding (macko_quant_validate said so and gave nnz) whose host arrays it takes over: kind
 * QUANT, type fp16, the sizes, outliers in CSR. NULL on allocation failure, the arrays then freed. */
struct macko_mat_s *macko_quant_mat(int64_t rows, int64_t cols, int64_t nnz, int64_t outliers,
                                    macko_quant_arrays *qa);

/* Bytes of m's outliers as the compute routines read them: CSR (rows + 1 + slots) * 4, TCOL (bands + 1 + slots) * 4. */
int64_t macko_quant_outlier_bytes(const struct macko_mat_s *m);

/* Writes the host copy of QUANT matrix A densely as fp16 (element (r, c) at out[r*rs + c*cs]): the decoded weight
 * plus the outlier, the exact sum rounded once. */
void macko_quant_export_dense(const struct macko_mat_s *A, void *out, int64_t rs, int64_t cs);

#ifdef __cplusplus
}
#endif

#endif
