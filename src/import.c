/* Raw MACKO arrays in: the validator (shared with deserialisation, so it must be safe on hostile data) and
 * macko_mat_create_macko_host. */
#include "check.h"
#include "encode_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Order of the checks: row_ptr completely (so that walking the entries afterwards stays inside the arrays), then the
 * value tail, then the delta tail and every decoded column.
 *
 * A row may end with zero-valued entries (padding or stored zeros). Our encoders drop trailing padding, but the
 * reference encoder of the MACKO paper does not (it emits (0, 15) after every 15 skipped zeros to the end of the
 * row), and such arrays are still a correct encoding of the same matrix; so they are accepted. Likewise any
 * zero-valued entry with any delta is accepted (CSR input stores explicit zeros). What is rejected is only what could
 * make a decoder read or write out of bounds or decode a different matrix than the arrays' own rows x cols. */
int macko_validate_arrays(int64_t rows, int64_t cols, macko_datatype_t type, int64_t entries, int rp64,
                          const void *values, const uint8_t *deltas, const void *row_ptr, int64_t *nnz_out, char *msg,
                          size_t msg_size)
{
    int64_t r, k, ep, nz = 0;
    char dummy[1];
    if (msg == NULL || msg_size == 0) {
        msg = dummy;
        msg_size = sizeof dummy;
    }
    msg[0] = '\0';
    if (rows < 0 || cols < 0 || entries < 0 || entries > MACKO_MAX_ELEMS || !macko_type_valid((int)type)) {
        snprintf(msg, msg_size, "row_ptr cannot be checked: invalid rows, cols, entries or type");
        return 3;
    }
    if ((rp64 != 0) != (entries >= MACKO_RP32_LIMIT)) {
        snprintf(msg, msg_size, "row_ptr is %s but entries = %" PRId64 " calls for %s", rp64 ? "int64" : "int32",
                 entries, entries >= MACKO_RP32_LIMIT ? "int64" : "int32");
        return 3;
    }
    ep = macko_round8(entries);
    if (row_ptr == NULL || (ep > 0 && (values == NULL || deltas == NULL))) {
        snprintf(msg, msg_size, "%s is NULL", row_ptr == NULL ? "row_ptr" : values == NULL ? "values" : "deltas");
        return row_ptr == NULL ? 3 : values == NULL ? 1 : 2;
    }
    if (macko_rp_get(row_ptr, rp64, 0) != 0) {
        snprintf(msg, msg_size, "row 0: row_ptr[0] is %" PRId64 "; it must be 0", macko_rp_get(row_ptr, rp64, 0));
        return 3;
    }
    for (r = 0; r < rows; r++) {
        int64_t a = macko_rp_get(row_ptr, rp64, r), b = macko_rp_get(row_ptr, rp64, r + 1);
        if (b < a) {
            snprintf(msg, msg_size,
                     "row %" PRId64 ": row_ptr decreases (row_ptr[%" PRId64 "] = %" PRId64 " < row_ptr[%" PRId64
                     "] = %" PRId64 ")",
                     r, r + 1, b, r, a);
            return 3;
        }
        if (b > entries) {
            snprintf(msg, msg_size, "row %" PRId64 ": row_ptr[%" PRId64 "] = %" PRId64 " exceeds entries = %" PRId64, r,
                     r + 1, b, entries);
            return 3;
        }
    }
    if (macko_rp_get(row_ptr, rp64, rows) != entries) {
        snprintf(msg, msg_size, "row %" PRId64 ": row_ptr[rows] is %" PRId64 "; it must be entries = %" PRId64,
                 rows > 0 ? rows - 1 : 0, macko_rp_get(row_ptr, rp64, rows), entries);
        return 3;
    }
    for (k = entries; k < ep; k++) {
        if (macko_value_bits(type, values, k) != 0) {
            snprintf(msg, msg_size, "values: tail value %" PRId64 " (past entries = %" PRId64 ") is not zero", k,
                     entries);
            return 1;
        }
    }
    for (k = entries; k < ep; k++) {
        if (macko_delta_get(deltas, k) != 0) {
            snprintf(msg, msg_size, "deltas: tail delta %" PRId64 " (past entries = %" PRId64 ") is not zero", k,
                     entries);
            return 2;
        }
    }
    for (r = 0; r < rows; r++) {
        int64_t e = macko_rp_get(row_ptr, rp64, r + 1), col = -1;
        for (k = macko_rp_get(row_ptr, rp64, r); k < e; k++) {
            col += (int64_t)macko_delta_get(deltas, k) + 1; /* col < cols <= ... checked each step: no overflow */
            if (col >= cols) {
                snprintf(msg, msg_size,
                         "deltas: row %" PRId64 ": entry %" PRId64 " decodes to column %" PRId64
                         ", outside [0, %" PRId64 ")",
                         r, k, col, cols);
                return 2;
            }
            nz += !macko_value_is_zero(type, values, k);
        }
    }
    if (nnz_out != NULL)
        *nnz_out = nz;
    return 0;
}

macko_status_t macko_mat_create_macko_host(macko_mat_t *A, int64_t rows, int64_t cols, macko_datatype_t type,
                                           int64_t entries, const void *values, const uint8_t *deltas,
                                           const void *row_ptr)
{
    static const char fn[] = "macko_mat_create_macko_host";
    char msg[256];
    int64_t ep, nz = 0;
    int bad;
    struct macko_mat_s *m;
    macko_status_t st;

    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_size(fn, 2, "rows", rows));
    MACKO_CHECK(macko_check_size(fn, 3, "cols", cols));
    MACKO_CHECK(macko_check_enum(fn, 4, MACKO_ARG_TYPE, (int)type));
    MACKO_CHECK(macko_check_size(fn, 5, "entries", entries));
    MACKO_CHECK(macko_check_array(fn, 6, "values", values, "entries", entries, NULL, 0, 0));
    MACKO_CHECK(macko_check_array(fn, 7, "deltas", deltas, "entries", entries, NULL, 0, 0));
    MACKO_CHECK(macko_check_row_ptr(fn, 8, row_ptr, 0));
    ep = macko_round8(entries);

    bad = macko_validate_arrays(rows, cols, type, entries, entries >= MACKO_RP32_LIMIT, values, deltas, row_ptr, &nz,
                                msg, sizeof msg);
    if (bad != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, bad == 1 ? 6 : bad == 2 ? 7 : 8, "%s", msg);

    m = macko_mat_alloc();
    if (m == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    m->rows = rows;
    m->cols = cols;
    m->type = type;
    m->nnz = nz;
    m->entries = entries;
    m->entries_padded = ep;
    m->rp64 = entries >= MACKO_RP32_LIMIT;
    st = macko_host_arrays_alloc(m);
    if (st != MACKO_STATUS_SUCCESS) {
        macko_mat_destroy(m);
        return macko_fail(st, fn, 0, "cannot allocate the encoding (%" PRId64 " entries)", entries);
    }
    if (ep > 0) {
        memcpy(m->host.values, values, (size_t)macko_values_bytes(type, ep));
        memcpy(m->host.deltas, deltas, (size_t)(ep / 2));
    }
    memcpy(m->host.row_ptr, row_ptr, (size_t)macko_rowptr_bytes(rows, m->rp64));
    *A = m;
    return macko_ok();
}
