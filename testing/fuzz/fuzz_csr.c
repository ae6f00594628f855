/* libFuzzer target: macko_mat_create_csr_host on arbitrary CSR arrays (layout in fuzz_common.h).
 *
 * The arrays are exactly as large as the documented sizes (rows + 1, nnz, nnz), so ASan reports any read beyond
 * them. A rejection must be INVALID_VALUE at a position of the row_ptr/col_ind arguments (5, 6) or 0, with *A
 * untouched. An acceptance must export back to exactly the input's nonzero entries. */
#include "fuzz_common.h"

static macko_mat_t const kPoison = (macko_mat_t)(uintptr_t)0x5A5A0;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor c = {data, size};
    uint8_t *h = (uint8_t *)fz_take(&c, FZ_CSR_HDR);
    const int i64 = h[0] & 1, base = (h[0] >> 1) & 1;
    const macko_datatype_t type = fz_type(h[0] >> 2);
    const size_t isz = i64 ? 8 : 4, es = fz_type_size(type);
    const int64_t rows = h[1], cols = (int64_t)fz_le(h + 2, 2), nnz = (int64_t)(fz_le(h + 4, 2) & 1023);
    uint8_t *rp = (uint8_t *)fz_take(&c, (size_t)(rows + 1) * isz);
    uint8_t *ci = (uint8_t *)fz_take(&c, (size_t)nnz * isz);
    uint8_t *v = (uint8_t *)fz_take(&c, (size_t)nnz * es);
    macko_mat_t A = kPoison;
    macko_status_t st;
    free(h);
    st = macko_mat_create_csr_host(&A, rows, cols, nnz, rp, nnz ? ci : NULL, nnz ? v : NULL,
                                   i64 ? MACKO_INDEX_64I : MACKO_INDEX_32I,
                                   base ? MACKO_INDEX_BASE_ONE : MACKO_INDEX_BASE_ZERO, type);
    if (st != MACKO_STATUS_SUCCESS) {
        int pos = macko_get_last_error_position();
        if (st != MACKO_STATUS_INVALID_VALUE || (pos != 5 && pos != 6) || A != kPoison)
            FZ_ABORT("create_csr_host: status %s, position %d", macko_get_status_name(st), pos);
    } else {
        /* The export holds exactly the input's entries with a nonzero value, in order. */
        int64_t n = -1, k, out = 0;
        uint8_t *erp, *eci, *ev;
        if (macko_mat_get_info(A, NULL, NULL, &n, NULL) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("get_info failed");
        erp = (uint8_t *)malloc((size_t)(rows + 1) * isz);
        eci = (uint8_t *)malloc((size_t)n * isz + 1);
        ev = (uint8_t *)malloc((size_t)n * es + 1);
        if (erp == NULL || eci == NULL || ev == NULL)
            FZ_ABORT("harness out of memory");
        if (macko_mat_export_csr_host(A, erp, eci, ev, i64 ? MACKO_INDEX_64I : MACKO_INDEX_32I,
                                      base ? MACKO_INDEX_BASE_ONE : MACKO_INDEX_BASE_ZERO) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("export_csr failed");
        for (k = 0; k < nnz; k++) {
            if (fz_value_is_zero(type, v, k))
                continue;
            if (out >= n || memcmp(eci + out * isz, ci + k * isz, isz) != 0 || memcmp(ev + out * es, v + k * es, es) != 0)
                FZ_ABORT("exported entry %lld differs from input entry %lld", (long long)out, (long long)k);
            out++;
        }
        if (out != n)
            FZ_ABORT("export has %lld entries, the input %lld nonzeros", (long long)n, (long long)out);
        free(erp);
        free(eci);
        free(ev);
        fz_check_matrix(A);
        macko_mat_destroy(A);
    }
    free(rp);
    free(ci);
    free(v);
    return 0;
}
