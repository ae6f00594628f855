/* CSR -> MACKO on the host. Every stored CSR entry is an entry (explicit zeros included,
 * lapack_style_docs/FORMAT.md); padding is inserted where consecutive stored columns are more than 16 apart. The input
 * is validated completely (and the exact entry count found) before anything is allocated. */
#include "check.h"
#include "encode_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void macko_store_row_ptr(struct macko_mat_s *m, const int64_t *rp)
{
    int64_t r;
    if (m->rp64) {
        memcpy(m->host.row_ptr, rp, (size_t)(m->rows + 1) * sizeof(int64_t));
    } else {
        int32_t *o = (int32_t *)m->host.row_ptr;
        for (r = 0; r <= m->rows; r++)
            o[r] = (int32_t)rp[r];
    }
}

macko_status_t macko_mat_create_csr_host(macko_mat_t *A, int64_t rows, int64_t cols, int64_t nnz, const void *row_ptr,
                                         const void *col_ind, const void *values, macko_indextype_t index_type,
                                         macko_index_base_t index_base, macko_datatype_t type)
{
    static const char fn[] = "macko_mat_create_csr_host";
    int i64, es;
    int64_t base, r, entries = 0, nz = 0;
    int64_t *rp;
    struct macko_mat_s *m;
    macko_status_t st;

    MACKO_CHECK(macko_check_csr_input(fn, 1, A, rows, cols, nnz, row_ptr, col_ind, values, index_type, index_base,
                                      type, NULL));
    i64 = index_type == MACKO_INDEX_64I;
    base = (int64_t)index_base;
    es = (int)macko_type_size(type);

    /* The contents: row_ptr completely first, so walking col_ind afterwards stays inside its nnz elements. */
    if (macko_idx_get(row_ptr, i64, 0) != base)
        return macko_fail_csr_row_ptr(fn, 5, MACKO_CSR_RP_FIRST, 0, macko_idx_get(row_ptr, i64, 0), 0, nnz, base);
    for (r = 0; r < rows; r++) {
        int64_t a = macko_idx_get(row_ptr, i64, r), b = macko_idx_get(row_ptr, i64, r + 1);
        if (b < a)
            return macko_fail_csr_row_ptr(fn, 5, MACKO_CSR_RP_DECREASE, r, b, a, nnz, base);
        if (b - base > nnz)
            return macko_fail_csr_row_ptr(fn, 5, MACKO_CSR_RP_EXCEED, r, b, a, nnz, base);
    }
    if (macko_idx_get(row_ptr, i64, rows) != nnz + base)
        return macko_fail_csr_row_ptr(fn, 5, MACKO_CSR_RP_LAST, rows > 0 ? rows - 1 : 0,
                                      macko_idx_get(row_ptr, i64, rows), 0, nnz, base);
    for (r = 0; r < rows; r++) {
        int64_t k, e = macko_idx_get(row_ptr, i64, r + 1) - base, prev = -1, row_entries = 0;
        for (k = macko_idx_get(row_ptr, i64, r) - base; k < e; k++) {
            int64_t c = macko_idx_get(col_ind, i64, k);
            if (!macko_csr_col_ok(c, prev, base, cols))
                return macko_fail_csr_col(fn, 6, r, k, c, prev, base, cols);
            c -= base;
            row_entries += 1 + ((c - prev - 1) >> 4);
            prev = c;
            nz += !macko_value_is_zero(type, values, k);
        }
        /* row_entries <= cols <= 2^56 and entries <= 2^56 before the sum: no overflow. */
        entries += row_entries;
        if (entries > MACKO_MAX_ELEMS)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 0,
                              "the encoding would exceed 2^56 entries (row %" PRId64 ")", r);
    }

    m = macko_mat_alloc();
    rp = (int64_t *)malloc(((size_t)rows + 1) * sizeof *rp);
    if (m == NULL || rp == NULL) {
        free(rp);
        free(m);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    }
    m->rows = rows;
    m->cols = cols;
    m->type = type;
    m->nnz = nz;
    m->entries = entries;
    m->entries_padded = macko_round8(entries);
    m->rp64 = entries >= MACKO_RP32_LIMIT;
    st = macko_host_arrays_alloc(m);
    if (st != MACKO_STATUS_SUCCESS) {
        free(rp);
        macko_mat_destroy(m);
        return macko_fail(st, fn, 0, "cannot allocate the encoding (%" PRId64 " entries)", entries);
    }
    rp[0] = 0;
    for (r = 0; r < rows; r++) {
        int64_t k, e = macko_idx_get(row_ptr, i64, r + 1) - base, prev = -1, out = rp[r];
        for (k = macko_idx_get(row_ptr, i64, r) - base; k < e; k++) {
            int64_t c = macko_idx_get(col_ind, i64, k) - base;
            out = macko_put_gap(m->host.deltas, out, c - prev - 1);
            memcpy((unsigned char *)m->host.values + out * es, (const unsigned char *)values + k * es, (size_t)es);
            out++;
            prev = c;
        }
        rp[r + 1] = out;
    }
    macko_store_row_ptr(m, rp);
    free(rp);
    *A = m;
    return macko_ok();
}
