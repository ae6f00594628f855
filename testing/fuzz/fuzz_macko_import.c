/* libFuzzer target: macko_mat_create_macko_host on arbitrary raw MACKO arrays (layout in fuzz_common.h).
 *
 * values, deltas and row_ptr are exactly as large as lapack_style_docs/FORMAT.md says (entries_padded,
 * entries_padded / 2, rows + 1), so ASan reports any read beyond them; cols is any int64. A rejection must be
 * INVALID_VALUE with *A untouched, at the position of the first bad argument (3 for a negative or too large cols, else
 * 6..8). An acceptance must keep the arrays byte for byte and pass fz_check_matrix. */
#include "fuzz_common.h"

static macko_mat_t const kPoison = (macko_mat_t)(uintptr_t)0x5A5A0;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor c = {data, size};
    uint8_t *h = (uint8_t *)fz_take(&c, FZ_IMPORT_HDR);
    const macko_datatype_t type = fz_type(h[0]);
    const size_t es = fz_type_size(type);
    const int64_t rows = h[1], cols = (int64_t)fz_le(h + 2, 8), entries = (int64_t)(fz_le(h + 10, 2) & 4095);
    const int64_t ep = (entries + 7) / 8 * 8;
    uint8_t *v = (uint8_t *)fz_take(&c, (size_t)ep * es);
    uint8_t *d = (uint8_t *)fz_take(&c, (size_t)ep / 2);
    uint8_t *rp = (uint8_t *)fz_take(&c, (size_t)(rows + 1) * 4);
    macko_mat_t A = kPoison;
    macko_status_t st;
    free(h);
    st = macko_mat_create_macko_host(&A, rows, cols, type, entries, ep ? v : NULL, ep ? d : NULL, rp);
    if (st != MACKO_STATUS_SUCCESS) {
        int pos = macko_get_last_error_position();
        int want_cols = cols < 0 || cols > (INT64_C(1) << 56);
        if (st != MACKO_STATUS_INVALID_VALUE || A != kPoison || (want_cols ? pos != 3 : (pos < 6 || pos > 8)))
            FZ_ABORT("create_macko_host: status %s, position %d", macko_get_status_name(st), pos);
    } else {
        const void *hv, *hrp;
        const uint8_t *hd;
        macko_indextype_t rpt;
        int64_t e = -1, hep = -1;
        if (cols < 0 || cols > (INT64_C(1) << 56))
            FZ_ABORT("accepted cols = %lld", (long long)cols);
        if (macko_mat_get_macko_host(A, &hv, &hd, &hrp, &rpt, &e, &hep) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("get_macko_host failed");
        if (e != entries || hep != ep || rpt != MACKO_INDEX_32I || memcmp(hv, v, (size_t)ep * es) != 0 ||
            memcmp(hd, d, (size_t)ep / 2) != 0 || memcmp(hrp, rp, (size_t)(rows + 1) * 4) != 0)
            FZ_ABORT("the imported arrays differ from the input");
        fz_check_matrix(A);
        macko_mat_destroy(A);
    }
    free(v);
    free(d);
    free(rp);
    return 0;
}
