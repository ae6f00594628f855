/* libFuzzer target: the three host encoders of a dense matrix on arbitrary values (layout in fuzz_common.h):
 * macko_mat_create_dense_host (MACKO), macko_mat_create_nm_dense_host (N:M, with given or detected n, m, v) and
 * macko_mat_create_quant_dense_host (QUANT, with any outlier rule and parameter).
 *
 * The values array is exactly as large as ld and order say ((major - 1) * ld + minor elements), so ASan reports any
 * read beyond it; any bit pattern is a value (NaN, Inf, subnormals, -0). A refusal must be INVALID_VALUE or
 * NOT_SUPPORTED with *A untouched, at a position among the routine's arguments. An acceptance must pass
 * fz_check_matrix and: MACKO and N:M keep every nonzero bit for bit and every zero as a zero (the dense export equals
 * the input up to the sign of zeros), N:M has the pattern asked for where one was given; QUANT accepts only finite
 * values of at most 65504 in magnitude. */
#include "fuzz_common.h"

#include <math.h>

static macko_mat_t const kPoison = (macko_mat_t)(uintptr_t)0x5A5A0;

/* The value of element k of an array of type t as a double (fp16 and bf16 decoded from their bits). */
static double value_of(macko_datatype_t t, const uint8_t *v, int64_t k)
{
    const size_t es = fz_type_size(t);
    const uint64_t b = fz_le(v + es * (size_t)k, (int)es);
    if (t == MACKO_R_64F) {
        double d;
        memcpy(&d, &b, 8);
        return d;
    }
    if (t == MACKO_R_32F || t == MACKO_R_16BF) {
        const uint32_t u = t == MACKO_R_32F ? (uint32_t)b : (uint32_t)b << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    {
        const int e = (int)(b >> 10) & 31, m = (int)b & 1023;
        const double s = (b & 0x8000u) ? -1.0 : 1.0;
        if (e == 31)
            return m != 0 ? NAN : s * INFINITY;
        return s * (e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor c = {data, size};
    uint8_t *h = (uint8_t *)fz_take(&c, FZ_DENSE_HDR);
    const macko_datatype_t type = fz_type(h[0]);
    const int colmajor = (h[0] >> 2) & 1, kind = (h[0] >> 3) & 3;
    const int64_t rows = h[1] & 63, cols = h[2] & 127;
    const int64_t major = colmajor ? cols : rows, minor = colmajor ? rows : cols;
    const int64_t ld = (minor > 0 ? minor : 1) + (h[3] & 7);
    const int64_t count = major > 0 && minor > 0 ? (major - 1) * ld + minor : 0;
    const size_t es = fz_type_size(type);
    const macko_order_t order = colmajor ? MACKO_ORDER_COL : MACKO_ORDER_ROW;
    const int p4 = h[4] & 63, p5 = h[5] & 63, p6 = h[6] & 63;
    uint8_t *v = (uint8_t *)fz_take(&c, (size_t)count * es);
    macko_mat_t A = kPoison;
    macko_status_t st;
    int nargs;
    double param = 0;
    free(h);
    if (kind == 1) {
        st = macko_mat_create_nm_dense_host(&A, rows, cols, type, v, ld, order, p4, p5, p6);
        nargs = 10;
    } else if (kind == 2) {
        /* p4: the rule (3 is not one), p5: the bits (3 is the one width), p6: the parameter in steps of 1/32 */
        param = p6 / 32.0;
        st = macko_mat_create_quant_dense_host(&A, rows, cols, type, v, ld, order, p5 & 7,
                                               (macko_outlier_rule_t)(p4 & 3), param);
        nargs = 10;
    } else {
        st = macko_mat_create_dense_host(&A, rows, cols, type, v, ld, order);
        nargs = 7;
    }
    if (st != MACKO_STATUS_SUCCESS) {
        const int pos = macko_get_last_error_position();
        if ((st != MACKO_STATUS_INVALID_VALUE && st != MACKO_STATUS_NOT_SUPPORTED) || A != kPoison || pos < 1 ||
            pos > nargs)
            FZ_ABORT("encoder %d: status %s, position %d", kind, macko_get_status_name(st), pos);
    } else {
        macko_kind_t got;
        int64_t i, j;
        if (macko_mat_get_kind(A, &got) != MACKO_STATUS_SUCCESS ||
            got != (kind == 1 ? MACKO_KIND_NM : kind == 2 ? MACKO_KIND_QUANT : MACKO_KIND_MACKO))
            FZ_ABORT("encoder %d made a matrix of kind %d", kind, (int)got);
        fz_check_matrix(A);
        if (kind == 2) {
            for (i = 0; i < rows; i++)
                for (j = 0; j < cols; j++) {
                    const double x = value_of(type, v, colmajor ? j * ld + i : i * ld + j);
                    if (!(fabs(x) <= 65504.0))
                        FZ_ABORT("QUANT accepted the value %g at (%lld, %lld)", x, (long long)i, (long long)j);
                }
        } else {
            uint8_t *d = (uint8_t *)malloc((size_t)(rows * cols) * es + 1);
            if (d == NULL)
                FZ_ABORT("harness out of memory");
            if (rows > 0 && cols > 0 && macko_mat_export_dense_host(A, d, cols, MACKO_ORDER_ROW) != MACKO_STATUS_SUCCESS)
                FZ_ABORT("export_dense failed");
            for (i = 0; i < rows; i++)
                for (j = 0; j < cols; j++) {
                    const int64_t k = colmajor ? j * ld + i : i * ld + j;
                    const int zin = fz_value_is_zero(type, v, k), zout = fz_value_is_zero(type, d, i * cols + j);
                    if (zin != zout || (!zin && memcmp(v + (size_t)k * es, d + (size_t)(i * cols + j) * es, es) != 0))
                        FZ_ABORT("encoder %d changed element (%lld, %lld)", kind, (long long)i, (long long)j);
                }
            free(d);
            if (kind == 1) {
                int n = 0, m = 0, vv = 0;
                if (macko_mat_get_nm_host(A, &n, &m, &vv, NULL, NULL) != MACKO_STATUS_SUCCESS ||
                    (p4 != 0 && n != p4) || (p5 != 0 && m != p5) || (p6 != 0 && vv != p6))
                    FZ_ABORT("N:M pattern %d:%d, v = %d made for %d:%d, v = %d", n, m, vv, p4, p5, p6);
            }
        }
        macko_mat_destroy(A);
    }
    free(v);
    return 0;
}
