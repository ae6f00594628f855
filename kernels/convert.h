/* Internal interface between the host sources (src/, plain C) and the conversion kernels (kernels/convert.cu):
 * dense / CSR device data -> MACKO arrays on the GPU. Not installed.
 *
 * A conversion runs in passes on one stream: count (entries and nonzeros per row; CSR input is validated here),
 * an exclusive scan of the counts into int64 row pointers, fill (values and one delta byte per entry into a
 * temporary), and finish (deltas packed two per byte, row pointers narrowed to int32). The host reads the
 * statistics back between count and scan to size the arrays. Every launcher returns the cudaError_t of its launches
 * (0 = cudaSuccess); everything has been validated by the caller. */
#ifndef MACKO_CONVERT_H
#define MACKO_CONVERT_H

#include "macko.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* No bad row: the initial value of the bad_* fields. */
#define MACKO_CONV_NONE 0xFFFFFFFFFFFFFFFFull
/* Kinds of row_ptr errors, in the order the host encoder checks them within one row (bad_rp = row * 4 + kind). */
enum {
    MACKO_CONV_RP_FIRST = 0, /* row_ptr[0] != index_base (row 0) */
    MACKO_CONV_RP_DECREASE = 1,
    MACKO_CONV_RP_EXCEED = 2, /* row_ptr[r + 1] - base > nnz */
    MACKO_CONV_RP_LAST = 3    /* row_ptr[rows] != nnz + base (row rows - 1, or 0 when rows == 0) */
};

/* Written by the count pass (device memory; the count launcher initialises it). */
typedef struct macko_conv_stats {
    unsigned long long entries; /* sum of the rows' entry counts, saturated at 2^62 */
    unsigned long long nnz;     /* values that are not +0/-0 */
    unsigned long long bad_rp;  /* min of row * 4 + kind over row_ptr errors, MACKO_CONV_NONE if none */
    unsigned long long bad_col; /* min row with a column out of range or not increasing, MACKO_CONV_NONE if none */
} macko_conv_stats;

/* Dense input: es = element size (2: fp16/bf16 bits, 4: fp32 bits, 8: fp64 bits), colmajor selects the order, ld
 * its leading dimension. counts gets rows + 1 elements (the last is 0, ready for the exclusive scan). */
int macko_conv_dense_count(int es, const void *a, int64_t rows, int64_t cols, int64_t ld, int colmajor,
                           int64_t *counts, macko_conv_stats *stats, int sm_count, macko_stream_t stream);
/* rp = the scanned counts (int64, rows + 1). Writes values [0, entries) and one delta per entry into dtmp. */
int macko_conv_dense_fill(int es, const void *a, int64_t rows, int64_t cols, int64_t ld, int colmajor,
                          const int64_t *rp, void *values, uint8_t *dtmp, int sm_count, macko_stream_t stream);

/* CSR input: idx64 selects int64 (else int32) row_ptr/col_ind, base is 0 or 1. The count pass validates. */
int macko_conv_csr_count(int es, int idx64, int64_t base, int64_t rows, int64_t cols, int64_t nnz,
                         const void *row_ptr, const void *col_ind, const void *values, int64_t *counts,
                         macko_conv_stats *stats, int sm_count, macko_stream_t stream);
/* Only after a count pass that found the input valid. */
int macko_conv_csr_fill(int es, int idx64, int64_t base, int64_t rows, const void *row_ptr, const void *col_ind,
                        const void *values, const int64_t *rp, void *out_values, uint8_t *dtmp, int sm_count,
                        macko_stream_t stream);

/* In-place exclusive sum of n int64: first ask for the temporary storage size (temp == NULL), then run. */
int macko_conv_scan(void *temp, size_t *temp_bytes, int64_t *data, int64_t n, macko_stream_t stream);

/* deltas[i] = dtmp[2i] | dtmp[2i+1] << 4 for i < entries_padded / 2 (entries beyond `entries` are 0); when rp32
 * is not NULL, rp32[r] = rp[r] for r <= rows. */
int macko_conv_finish(const int64_t *rp, int32_t *rp32, int64_t rows, const uint8_t *dtmp, uint8_t *deltas,
                      int64_t entries, int64_t entries_padded, int sm_count, macko_stream_t stream);

#ifdef __cplusplus
}
#endif

#endif
