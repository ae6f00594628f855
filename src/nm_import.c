/* The N:M kind's host side (lapack_style_docs/FORMAT_NM.md): sizes and the pattern check, the validator (shared with
 * every producer of an N:M matrix, so it must be safe on hostile data), the host arrays and matrix object,
 * macko_mat_create_nm_host, macko_mat_get_nm_host and the exports. */
#include "check.h"
#include "nm_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int macko_nm_sizes(int64_t rows, int64_t cols, int n, int m, int v, int64_t *windows, int64_t *groups, int64_t *kept,
                   int64_t *values, int64_t *positions)
{
    int64_t w, g, k, nv, np;
    if (rows < 0 || cols < 0 || rows > MACKO_MAX_ELEMS || cols > MACKO_MAX_ELEMS || n <= 0 || m <= 0 || v <= 0)
        return 0;
    w = cols / m + (cols % m != 0);
    g = rows / v + (rows % v != 0);
    if (!macko_mul_i64(w, n, &k) || !macko_mul_i64(rows, k, &nv) || nv > MACKO_MAX_ELEMS)
        return 0;
    np = g * k; /* <= nv */
    if (windows) *windows = w;
    if (groups) *groups = g;
    if (kept) *kept = k;
    if (values) *values = nv;
    if (positions) *positions = np;
    return 1;
}

static int m_supported(int m) { return m == 4 || m == 8 || m == 16 || m == 32; }
static int v_supported(int v) { return v == 1 || v == 2 || v == 4 || v == 8 || v == 16 || v == 32; }

macko_status_t macko_check_nm_pattern(const char *fn, int pos, int n, int m, int v, int allow_zero)
{
    const char *least = allow_zero ? "at least 0 (0: detected)" : "at least 1";
    const int lo = allow_zero ? 0 : 1;
    if (m < lo)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos + 1, "m is %d; it must be %s", m, least);
    if (m != 0 && !m_supported(m))
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos + 1, "m is %d; the supported m are 4, 8, 16 and 32", m);
    if (n < lo)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "n is %d; it must be %s", n, least);
    if (m != 0 && n > m)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "n is %d; it must be at most m = %d", n, m);
    if (m == 0 && n > 32)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos,
                          "n is %d; no supported m (4, 8, 16, 32) holds more than 32 positions", n);
    if (v < lo)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos + 2, "v is %d; it must be %s", v, least);
    if (v != 0 && !v_supported(v))
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos + 2, "v is %d; the supported v are 1, 2, 4, 8, 16 and 32",
                          v);
    return MACKO_STATUS_SUCCESS;
}

int macko_nm_validate(int64_t rows, int64_t cols, macko_datatype_t type, int n, int m, int v, const void *values,
                      const uint8_t *positions, int64_t *nnz_out, char *msg, size_t msg_size)
{
    int64_t windows, groups, kept, nv, g, w, k, nz = 0;
    char dummy[1];
    if (msg == NULL || msg_size == 0) {
        msg = dummy;
        msg_size = sizeof dummy;
    }
    msg[0] = '\0';
    if (!macko_type_valid((int)type) || !macko_nm_pattern_ok(n, m, v) ||
        !macko_nm_sizes(rows, cols, n, m, v, &windows, &groups, &kept, &nv, NULL)) {
        snprintf(msg, msg_size, "values cannot be checked: invalid rows, cols, type or pattern");
        return MACKO_NMBAD_VALUES;
    }
    if ((values == NULL || positions == NULL) && nv > 0) {
        snprintf(msg, msg_size, "%s is NULL", values == NULL ? "values" : "positions");
        return values == NULL ? MACKO_NMBAD_VALUES : MACKO_NMBAD_POSITIONS;
    }
    /* No windows (cols == 0): nothing to check however many row groups there are (a file may declare 2^62 rows of
     * zero columns; walking them found nothing and took minutes, as the fuzzer showed). */
    for (g = 0; windows > 0 && g < groups; g++) {
        const int64_t r0 = g * v, r1 = r0 + v < rows ? r0 + v : rows;
        for (w = 0; w < windows; w++) {
            const uint8_t *p = positions + g * kept + w * n;
            const int64_t valid = cols - w * m; /* columns of the window inside the matrix */
            int j;
            for (j = 0; j < n; j++) {
                if (p[j] >= m) {
                    snprintf(msg, msg_size,
                             "positions: group %" PRId64 " (rows %" PRId64 "..%" PRId64 "), window %" PRId64
                             ": slot %d holds position %u; it must be less than m = %d",
                             g, r0, r1 - 1, w, j, (unsigned)p[j], m);
                    return MACKO_NMBAD_POSITIONS;
                }
                if (j > 0 && p[j] <= p[j - 1]) {
                    snprintf(msg, msg_size,
                             "positions: group %" PRId64 " (rows %" PRId64 "..%" PRId64 "), window %" PRId64
                             ": slot %d holds position %u after %u; positions must be strictly ascending",
                             g, r0, r1 - 1, w, j, (unsigned)p[j], (unsigned)p[j - 1]);
                    return MACKO_NMBAD_POSITIONS;
                }
            }
            for (j = 0; j < n; j++) {
                int64_t r;
                if (p[j] < valid)
                    continue;
                for (r = r0; r < r1; r++)
                    if (!macko_value_is_zero(type, values, r * kept + w * n + j)) {
                        snprintf(msg, msg_size,
                                 "values: row %" PRId64 ", window %" PRId64 ": slot %d (position %u, column %" PRId64
                                 ", past cols = %" PRId64 ") holds a nonzero value; it must be zero",
                                 r, w, j, (unsigned)p[j], w * m + p[j], cols);
                        return MACKO_NMBAD_VALUES;
                    }
            }
        }
    }
    for (k = 0; k < nv; k++)
        nz += !macko_value_is_zero(type, values, k);
    if (nnz_out != NULL)
        *nnz_out = nz;
    return 0;
}

macko_status_t macko_nm_host_alloc(macko_datatype_t type, int64_t values, int64_t positions, void **hvalues,
                                   uint8_t **hpos)
{
    const size_t es = macko_type_size(type);
    *hvalues = NULL;
    *hpos = NULL;
    if (values < 0 || positions < 0 || (uint64_t)values > SIZE_MAX / 8 || (uint64_t)positions > SIZE_MAX)
        return MACKO_STATUS_ALLOC_FAILED;
    *hvalues = macko_aligned_calloc((size_t)values * es);
    *hpos = (uint8_t *)macko_aligned_calloc((size_t)positions);
    if (*hvalues == NULL || *hpos == NULL) {
        macko_aligned_free(*hvalues);
        macko_aligned_free(*hpos);
        *hvalues = NULL;
        *hpos = NULL;
        return MACKO_STATUS_ALLOC_FAILED;
    }
    return MACKO_STATUS_SUCCESS;
}

struct macko_mat_s *macko_nm_mat(int64_t rows, int64_t cols, macko_datatype_t type, int n, int m, int v, int64_t nnz,
                                 void **hvalues, uint8_t **hpos)
{
    struct macko_mat_s *A = macko_mat_alloc();
    if (A == NULL) {
        macko_aligned_free(*hvalues);
        macko_aligned_free(*hpos);
        *hvalues = NULL;
        *hpos = NULL;
        return NULL;
    }
    A->kind = MACKO_KIND_NM;
    A->rows = rows;
    A->cols = cols;
    A->nnz = nnz;
    A->type = type;
    A->nm.n = n;
    A->nm.m = m;
    A->nm.v = v;
    (void)macko_nm_sizes(rows, cols, n, m, v, &A->nm.windows, &A->nm.groups, &A->nm.kept, &A->entries, NULL);
    A->entries_padded = A->entries;
    A->nm.hvalues = *hvalues;
    A->nm.hpos = *hpos;
    A->has_host = 1;
    *hvalues = NULL;
    *hpos = NULL;
    return A;
}

void macko_nm_host_free(struct macko_mat_s *m)
{
    macko_aligned_free(m->nm.hvalues);
    macko_aligned_free(m->nm.hpos);
    m->nm.hvalues = NULL;
    m->nm.hpos = NULL;
}

int64_t macko_nm_host_bytes(const struct macko_mat_s *m)
{
    /* both terms are below 2^59 (checked when the matrix was made) */
    return m->entries * (int64_t)macko_type_size(m->type) + m->nm.groups * m->nm.kept;
}

macko_status_t macko_mat_create_nm_host(macko_mat_t *A, int64_t rows, int64_t cols, macko_datatype_t type, int n,
                                        int m, int v, const void *values, const uint8_t *positions)
{
    static const char fn[] = "macko_mat_create_nm_host";
    char msg[320];
    int64_t nv, np, nnz = 0;
    int bad;
    void *hv;
    uint8_t *hp;
    struct macko_mat_s *mat;

    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_size(fn, 2, "rows", rows));
    MACKO_CHECK(macko_check_size(fn, 3, "cols", cols));
    MACKO_CHECK(macko_check_enum(fn, 4, MACKO_ARG_TYPE, (int)type));
    MACKO_CHECK(macko_check_nm_pattern(fn, 5, n, m, v, 0));
    if (!macko_nm_sizes(rows, cols, n, m, v, NULL, NULL, NULL, &nv, &np))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3,
                          "rows x cols (%" PRId64 " x %" PRId64 ") with the pattern %d:%d needs more than 2^56 values",
                          rows, cols, n, m);
    MACKO_CHECK(macko_check_array(fn, 8, "values", values, "rows*ceil(cols/m)*n", nv, NULL, 0, 0));
    MACKO_CHECK(macko_check_array(fn, 9, "positions", positions, "ceil(rows/v)*ceil(cols/m)*n", np, NULL, 0, 0));

    bad = macko_nm_validate(rows, cols, type, n, m, v, values, positions, &nnz, msg, sizeof msg);
    if (bad != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, bad == MACKO_NMBAD_VALUES ? 8 : 9, "%s", msg);

    if (macko_nm_host_alloc(type, nv, np, &hv, &hp) != MACKO_STATUS_SUCCESS)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                          "cannot allocate the encoding (%" PRId64 " values, %" PRId64 " positions)", nv, np);
    if (nv > 0) {
        memcpy(hv, values, (size_t)nv * macko_type_size(type));
        memcpy(hp, positions, (size_t)np);
    }
    mat = macko_nm_mat(rows, cols, type, n, m, v, nnz, &hv, &hp);
    if (mat == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    *A = mat;
    return macko_ok();
}

macko_status_t macko_mat_get_nm_host(macko_mat_t A, int *n, int *m, int *v, const void **values,
                                     const uint8_t **positions)
{
    static const char fn[] = "macko_mat_get_nm_host";
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_kind(fn, 1, A, MACKO_KIND_NM));
    MACKO_CHECK(macko_check_host_mat(fn, 1, A));
    if (n) *n = A->nm.n;
    if (m) *m = A->nm.m;
    if (v) *v = A->nm.v;
    if (values) *values = A->nm.hvalues;
    if (positions) *positions = A->nm.hpos;
    return macko_ok();
}

void macko_nm_export_rows(const struct macko_mat_s *A, unsigned char *out, int64_t rs, int64_t cs, int64_t r0,
                          int64_t r1)
{
    const macko_nm *nm = &A->nm;
    const int64_t es = (int64_t)macko_type_size(A->type);
    const unsigned char *vals = (const unsigned char *)nm->hvalues;
    int64_t r, c, w;
    if (cs == 1) {
        for (r = r0; r < r1; r++)
            memset(out + r * rs * es, 0, (size_t)(A->cols * es));
    } else {
        for (c = 0; c < A->cols; c++)
            memset(out + (r0 * rs + c * cs) * es, 0, (size_t)((r1 - r0) * es));
    }
    for (r = r0; r < r1; r++) {
        const uint8_t *p = nm->hpos + (r / nm->v) * nm->kept;
        for (w = 0; w < nm->windows; w++) {
            int j;
            for (j = 0; j < nm->n; j++) {
                const int64_t k = r * nm->kept + w * nm->n + j, col = w * nm->m + p[w * nm->n + j];
                if (col >= A->cols || macko_value_is_zero(A->type, vals, k))
                    continue;
                memcpy(out + (r * rs + col * cs) * es, vals + k * es, (size_t)es);
            }
        }
    }
}

void macko_nm_export_csr(const struct macko_mat_s *A, void *row_ptr, void *col_ind, void *values, int i64,
                         int64_t base)
{
    const macko_nm *nm = &A->nm;
    const int64_t es = (int64_t)macko_type_size(A->type);
    const unsigned char *vals = (const unsigned char *)nm->hvalues;
    int64_t r, w, out = 0;
    for (r = 0; r < A->rows; r++) {
        const uint8_t *p = nm->hpos + (r / nm->v) * nm->kept;
        macko_idx_set(row_ptr, i64, r, out + base);
        for (w = 0; w < nm->windows; w++) {
            int j;
            for (j = 0; j < nm->n; j++) {
                const int64_t k = r * nm->kept + w * nm->n + j, col = w * nm->m + p[w * nm->n + j];
                if (col >= A->cols || macko_value_is_zero(A->type, vals, k))
                    continue;
                macko_idx_set(col_ind, i64, out, col + base);
                memcpy((unsigned char *)values + out * es, vals + k * es, (size_t)es);
                out++;
            }
        }
    }
    macko_idx_set(row_ptr, i64, A->rows, out + base);
}
