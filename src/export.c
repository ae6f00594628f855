/* MACKO, N:M (and QUANT, dense only) -> CSR / dense on the host (round-trip tests, interop). Zero-valued entries
 * (padding, stored zeros) are not written as entries: a decoded matrix holds +0 wherever nothing nonzero is stored. */
#include "check.h"
#include "encode_common.h"
#include "nm_host.h"
#include "quant_host.h"

#include <inttypes.h>
#include <string.h>

/* Export block height for column-major output: the block's column segments stay in cache while rows scatter. */
#define EXPORT_ROWS 64

macko_status_t macko_mat_export_csr_host(macko_mat_t A, void *row_ptr, void *col_ind, void *values,
                                         macko_indextype_t index_type, macko_index_base_t index_base)
{
    static const char fn[] = "macko_mat_export_csr_host";
    int i64, es;
    int64_t base, r, out = 0;

    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_kind2(fn, 1, A, MACKO_KIND_MACKO, MACKO_KIND_NM));
    MACKO_CHECK(macko_check_host_mat(fn, 1, A));
    MACKO_CHECK(macko_check_row_ptr(fn, 2, row_ptr, 1));
    MACKO_CHECK(macko_check_array(fn, 3, "col_ind", col_ind, "nnz", A->nnz, NULL, 0, 0));
    MACKO_CHECK(macko_check_array(fn, 4, "values", values, "nnz", A->nnz, NULL, 0, 0));
    MACKO_CHECK(macko_check_enum(fn, 5, MACKO_ARG_INDEX_TYPE, (int)index_type));
    MACKO_CHECK(macko_check_enum(fn, 6, MACKO_ARG_INDEX_BASE, (int)index_base));
    i64 = index_type == MACKO_INDEX_64I;
    base = (int64_t)index_base;
    /* Judged on the sizes, not on the columns actually used, so that the answer does not depend on the data. */
    if (!i64 && (A->nnz + base > INT32_MAX || (A->cols > 0 && A->cols - 1 + base > INT32_MAX)))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 5,
                          "index_type MACKO_INDEX_32I cannot hold nnz = %" PRId64 " or cols = %" PRId64
                          " with index_base %" PRId64,
                          A->nnz, A->cols, base);

    if (A->kind == MACKO_KIND_NM) {
        macko_nm_export_csr(A, row_ptr, col_ind, values, i64, base);
        return macko_ok();
    }
    es = (int)macko_type_size(A->type);
    for (r = 0; r <= A->rows; r++) {
        /* row_ptr[r] is written before row r's entries, row_ptr[rows] after the last row. */
        macko_idx_set(row_ptr, i64, r, out + base);
        if (r == A->rows)
            break;
        {
            int64_t k, e = macko_rp_get(A->host.row_ptr, A->rp64, r + 1), col = -1;
            for (k = macko_rp_get(A->host.row_ptr, A->rp64, r); k < e; k++) {
                col += (int64_t)macko_delta_get(A->host.deltas, k) + 1;
                if (macko_value_is_zero(A->type, A->host.values, k))
                    continue;
                macko_idx_set(col_ind, i64, out, col + base);
                memcpy((unsigned char *)values + out * es, (const unsigned char *)A->host.values + k * es, (size_t)es);
                out++;
            }
        }
    }
    return macko_ok();
}

/* Writes rows [r0, r1) of A into out (element (r, c) at r*rs + c*cs), after zeroing their rows x cols region. */
static void export_rows(const struct macko_mat_s *A, unsigned char *out, int64_t rs, int64_t cs, int64_t r0, int64_t r1)
{
    const int64_t es = (int64_t)macko_type_size(A->type);
    int64_t r, c;
    if (A->kind == MACKO_KIND_NM) {
        macko_nm_export_rows(A, out, rs, cs, r0, r1);
        return;
    }
    if (cs == 1) {
        for (r = r0; r < r1; r++)
            memset(out + r * rs * es, 0, (size_t)(A->cols * es));
    } else {
        for (c = 0; c < A->cols; c++)
            memset(out + (r0 * rs + c * cs) * es, 0, (size_t)((r1 - r0) * es));
    }
    for (r = r0; r < r1; r++) {
        int64_t k, e = macko_rp_get(A->host.row_ptr, A->rp64, r + 1), col = -1;
        for (k = macko_rp_get(A->host.row_ptr, A->rp64, r); k < e; k++) {
            col += (int64_t)macko_delta_get(A->host.deltas, k) + 1;
            if (macko_value_is_zero(A->type, A->host.values, k))
                continue;
            memcpy(out + (r * rs + col * cs) * es, (const unsigned char *)A->host.values + k * es, (size_t)es);
        }
    }
}

macko_status_t macko_mat_export_dense_host(macko_mat_t A, void *values, int64_t ld, macko_order_t order)
{
    static const char fn[] = "macko_mat_export_dense_host";
    int64_t total, r0;

    MACKO_CHECK(macko_check_host_mat(fn, 1, A));
    /* An imported matrix may be too large to exist densely (rows*cols overflows): not exportable. */
    if (!macko_mul_i64(A->rows, A->cols, &total) || total > MACKO_MAX_ELEMS)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 1,
                          "A (%" PRId64 " x %" PRId64 ") is too large for a dense array", A->rows, A->cols);
    MACKO_CHECK(macko_check_dense_array(fn, 2, A->rows, A->cols, total, values, ld, order, NULL));
    if (total == 0)
        return macko_ok();

    if (A->kind == MACKO_KIND_QUANT) {
        macko_quant_export_dense(A, values, order == MACKO_ORDER_ROW ? ld : 1,
                                 order == MACKO_ORDER_ROW ? 1 : ld);
    } else if (order == MACKO_ORDER_ROW) {
        export_rows(A, (unsigned char *)values, ld, 1, 0, A->rows);
    } else {
        for (r0 = 0; r0 < A->rows; r0 += EXPORT_ROWS)
            export_rows(A, (unsigned char *)values, 1, ld, r0, A->rows - r0 < EXPORT_ROWS ? A->rows : r0 + EXPORT_ROWS);
    }
    return macko_ok();
}
