/* Writes the committed seed corpus of the fuzz targets: a few small, valid inputs per target (layouts in
 * fuzz_common.h), made with the library itself. Usage: macko_fuzz_seeds OUTDIR (creates OUTDIR/deserialize,
 * OUTDIR/csr, OUTDIR/macko_import, OUTDIR/encode_dense). Deterministic: the same bytes on every run. */
#include "fuzz_common.h"

#include <errno.h>
#include <sys/stat.h>

static const char *outdir;

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void write_seed(const char *target, const char *name, const uint8_t *b, size_t n)
{
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", outdir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        FZ_ABORT("cannot create %s", path);
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(b, 1, n, f) != n || fclose(f) != 0)
        FZ_ABORT("cannot write %s", path);
}

static uint16_t half_of(int v) /* small integers as fp16 bits */
{
    static const uint16_t t[] = {0x0000, 0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700};
    return v < 0 ? (uint16_t)(t[-v] | 0x8000) : t[v];
}

/* ---------------------------------------------------------------- deserialize: serialized matrices */

static void seed_serialized(const char *name, macko_mat_t A)
{
    uint8_t *b;
    int64_t n = fz_serialize(A, &b);
    write_seed("deserialize", name, b, (size_t)n);
    free(b);
}

/* ---------------------------------------------------------------- csr */

/* small integers as bits of value type t (all exact) */
static uint64_t bits_of(int v, macko_datatype_t t)
{
    const float f = (float)v;
    const double d = (double)v;
    uint32_t u;
    uint64_t w;
    memcpy(&u, &f, 4);
    memcpy(&w, &d, 8);
    return t == MACKO_R_16F ? half_of(v) : t == MACKO_R_32F ? u : t == MACKO_R_16BF ? (u >> 16) : w;
}

/* tflag: the value type's two flag bits (fz_type) */
static void seed_csr(const char *name, int i64, int base, int tflag, int rows, int cols, int nnz, const int64_t *rp,
                     const int64_t *ci, const int *vals)
{
    const macko_datatype_t t = fz_type((unsigned)tflag);
    const size_t isz = i64 ? 8 : 4, es = fz_type_size(t);
    size_t n = FZ_CSR_HDR + (size_t)(rows + 1) * isz + (size_t)nnz * (isz + es), off = FZ_CSR_HDR;
    uint8_t *b = (uint8_t *)calloc(n, 1);
    int k;
    b[0] = (uint8_t)(i64 | (base << 1) | (tflag << 2));
    b[1] = (uint8_t)rows;
    put(b + 2, (uint64_t)cols, 2);
    put(b + 4, (uint64_t)nnz, 2);
    for (k = 0; k <= rows; k++, off += isz)
        put(b + off, (uint64_t)(rp[k] + base), (int)isz);
    for (k = 0; k < nnz; k++, off += isz)
        put(b + off, (uint64_t)(ci[k] + base), (int)isz);
    for (k = 0; k < nnz; k++, off += es)
        put(b + off, bits_of(vals[k], t), (int)es);
    write_seed("csr", name, b, n);
    free(b);
}

/* ---------------------------------------------------------------- macko_import: the arrays of a matrix */

static void seed_import(const char *name, macko_mat_t A, int64_t cols_override)
{
    int64_t rows, cols, entries, ep;
    macko_datatype_t type;
    const void *v, *rp;
    const uint8_t *d;
    macko_indextype_t rpt;
    size_t es, n;
    uint8_t *b;
    if (macko_mat_get_info(A, &rows, &cols, NULL, &type) != MACKO_STATUS_SUCCESS ||
        macko_mat_get_macko_host(A, &v, &d, &rp, &rpt, &entries, &ep) != MACKO_STATUS_SUCCESS || rows > 255 ||
        entries > 4095 || rpt != MACKO_INDEX_32I)
        FZ_ABORT("seed_import: unsuitable matrix");
    es = fz_type_size(type);
    n = FZ_IMPORT_HDR + (size_t)ep * es + (size_t)ep / 2 + (size_t)(rows + 1) * 4;
    b = (uint8_t *)calloc(n, 1);
    b[0] = (uint8_t)(type == MACKO_R_16F ? 0 : type == MACKO_R_32F ? 1 : type == MACKO_R_16BF ? 2 : 3);
    b[1] = (uint8_t)rows;
    put(b + 2, (uint64_t)(cols_override >= 0 ? cols_override : cols), 8);
    put(b + 10, (uint64_t)entries, 2);
    /* the host arrays are little-endian on the machines this runs on; written as bytes */
    memcpy(b + FZ_IMPORT_HDR, v, (size_t)ep * es);
    memcpy(b + FZ_IMPORT_HDR + (size_t)ep * es, d, (size_t)ep / 2);
    memcpy(b + FZ_IMPORT_HDR + (size_t)ep * es + (size_t)ep / 2, rp, (size_t)(rows + 1) * 4);
    write_seed("macko_import", name, b, n);
    free(b);
}

/* ---------------------------------------------------------------- encode_dense: a header and raw values */

/* flags: fuzz_common.h's byte 0; p4..p6: the encoder's parameters; vals: rows x cols small integers (-7..7, what
 * half_of holds) in the given order with ld = minor + slack (the slack elements hold 7, which the encoders must not
 * read as part of the matrix) */
static void seed_dense(const char *name, int flags, int rows, int cols, int slack, int p4, int p5, int p6,
                       const int *vals)
{
    const macko_datatype_t t = fz_type((unsigned)flags);
    const int colmajor = (flags >> 2) & 1, es = (int)fz_type_size(t);
    const int major = colmajor ? cols : rows, minor = colmajor ? rows : cols;
    const int ld = (minor > 0 ? minor : 1) + slack;
    const int count = major > 0 && minor > 0 ? (major - 1) * ld + minor : 0;
    const size_t n = FZ_DENSE_HDR + (size_t)count * es;
    uint8_t *b = (uint8_t *)calloc(n, 1);
    if (b == NULL)
        FZ_ABORT("seed_dense: out of memory");
    b[0] = (uint8_t)flags;
    b[1] = (uint8_t)rows;
    b[2] = (uint8_t)cols;
    b[3] = (uint8_t)slack;
    b[4] = (uint8_t)p4;
    b[5] = (uint8_t)p5;
    b[6] = (uint8_t)p6;
    for (int k = 0; k < count; k++) {
        const int a = k / ld, i = k % ld; /* a: major index, i: minor index (slack past minor) */
        const int v = i >= minor ? 7 : colmajor ? vals[i * cols + a] : vals[a * cols + i];
        put(b + FZ_DENSE_HDR + (size_t)k * es, bits_of(v, t), es);
    }
    write_seed("encode_dense", name, b, n);
    free(b);
}

static macko_mat_t dense_of(int rows, int cols, const int *vals, macko_datatype_t t)
{
    const size_t es = fz_type_size(t);
    uint8_t *h = (uint8_t *)calloc((size_t)rows * cols + 1, es);
    macko_mat_t A = NULL;
    for (int i = 0; i < rows * cols; i++)
        put(h + (size_t)i * es, bits_of(vals[i], t), (int)es);
    if (macko_mat_create_dense_host(&A, rows, cols, t, h, cols > 0 ? cols : 1, MACKO_ORDER_ROW) !=
        MACKO_STATUS_SUCCESS)
        FZ_ABORT("dense_of");
    free(h);
    return A;
}

static macko_mat_t dense_half(int rows, int cols, const int *vals) { return dense_of(rows, cols, vals, MACKO_R_16F); }

int main(int argc, char **argv)
{
    int g[3 * 20] = {0}, s[9 * 41] = {0}, i;
    macko_mat_t A, B, C, E, W, BF, D;
    uint32_t x = 12345;
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST)
        FZ_ABORT("cannot create %s", outdir);

    /* the golden 3 x 20 matrix of the format tests: a gap of 17 (one padding entry) in rows 0 and 2 */
    g[0] = 1;
    g[18] = 2;
    g[2 * 20 + 19] = -3;
    A = dense_half(3, 20, g);
    /* 9 x 41 with a pseudo-random pattern, an empty row and a row with a gap > 16 */
    for (i = 0; i < 9 * 41; i++) {
        x = x * 1103515245u + 12345u;
        s[i] = ((x >> 16) % 3 == 0) ? (int)((x >> 20) % 7) - 3 : 0;
    }
    for (i = 0; i < 41; i++)
        s[4 * 41 + i] = 0;
    for (i = 0; i < 41; i++)
        s[6 * 41 + i] = (i == 1 || i == 40) ? 5 : 0;
    B = dense_half(9, 41, s);
    E = dense_half(0, 0, g);
    BF = dense_of(9, 41, s, MACKO_R_16BF);
    D = dense_of(3, 20, g, MACKO_R_64F);
    W = dense_half(4, 0, g);
    {
        const int64_t rp[4] = {0, 2, 2, 3};
        const int64_t ci[3] = {0, 18, 19};
        const float v[3] = {1.0f, 2.0f, -3.0f};
        if (macko_mat_create_csr_host(&C, 3, 20, 3, rp, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO, MACKO_R_32F) !=
            MACKO_STATUS_SUCCESS)
            FZ_ABORT("csr seed matrix");
    }

    seed_serialized("golden_half_3x20", A);
    seed_serialized("float_from_csr_3x20", C);
    seed_serialized("structured_9x41", B);
    seed_serialized("empty_0x0", E);
    seed_serialized("empty_4x0", W);
    seed_serialized("bf16_structured_9x41", BF);
    seed_serialized("double_3x20", D);
    {
        /* QUANT (format version 2): the golden 2 x 5 matrix of testing/test_serialize_quant.cpp, an encoded 9 x 41
         * with outliers, and 17 x 20 (two bands, two tile columns) without */
        const uint64_t words[16] = {UINT64_C(0x0A00040000190110), UINT64_C(0x6000000008F), UINT64_C(0x400000000000),
                                    UINT64_C(0x300000000000), 0, 0, 0, UINT64_C(0xC00000000000), 0, 0,
                                    UINT64_C(0x800000000000), UINT64_C(0x300000000000), 0, 0, 0, 0};
        const int32_t optr[3] = {0, 1, 2};
        const uint32_t oent[2] = {0x38000004u, 0xC2000001u};
        float f[9 * 41]; /* also holds 17 x 20 */
        macko_mat_t Q = NULL;
        if (macko_mat_create_quant_host(&Q, 2, 5, 3, words, 2, optr, oent) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("quant seed matrix");
        seed_serialized("quant_golden_2x5", Q);
        macko_mat_destroy(Q);
        for (i = 0; i < 9 * 41; i++)
            f[i] = (float)s[i] * 0.375f + (float)(i % 5) * 0.0625f;
        if (macko_mat_create_quant_dense_host(&Q, 9, 41, MACKO_R_32F, f, 41, MACKO_ORDER_ROW, 3,
                                              MACKO_OUTLIERS_FRACTION, 0.05) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("quant seed matrix");
        seed_serialized("quant_encoded_9x41", Q);
        macko_mat_destroy(Q);
        for (i = 0; i < 17 * 20; i++) {
            x = x * 1103515245u + 12345u;
            f[i] = (float)((int)((x >> 16) % 33) - 16) * 0.125f;
        }
        if (macko_mat_create_quant_dense_host(&Q, 17, 20, MACKO_R_32F, f, 20, MACKO_ORDER_ROW, 3, MACKO_OUTLIERS_NONE,
                                              0.0) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("quant seed matrix");
        seed_serialized("quant_17x20", Q);
        macko_mat_destroy(Q);
    }

    {
        /* N:M (format version 3): the golden 3 x 6 matrix of testing/test_serialize_nm.cpp (2:4, v = 2), an fp32
         * 17 x 20 in 2:4 by rows, a bf16 9 x 41 with the pattern detected, and an empty fp64 one */
        const uint16_t gold[18] = {0x3C00, 0, 0, 0, 0, 0x4000, 0, 0, 0xC200, 0, 0, 0, 0, 0, 0, 0x3800, 0x4400, 0};
        float f[17 * 20];
        uint16_t bf[9 * 41];
        macko_mat_t N = NULL;
        if (macko_mat_create_nm_dense_host(&N, 3, 6, MACKO_R_16F, gold, 6, MACKO_ORDER_ROW, 2, 4, 2) !=
            MACKO_STATUS_SUCCESS)
            FZ_ABORT("nm seed matrix");
        seed_serialized("nm_golden_3x6", N);
        macko_mat_destroy(N);
        for (i = 0; i < 17 * 20; i++) {
            x = x * 1103515245u + 12345u;
            f[i] = i % 4 == (int)(i / 20) % 3 || i % 4 == 3 ? (float)((int)((x >> 16) % 33) - 16) * 0.125f : 0.0f;
        }
        if (macko_mat_create_nm_dense_host(&N, 17, 20, MACKO_R_32F, f, 20, MACKO_ORDER_ROW, 2, 4, 1) !=
            MACKO_STATUS_SUCCESS)
            FZ_ABORT("nm seed matrix");
        seed_serialized("nm_2of4_17x20", N);
        macko_mat_destroy(N);
        for (i = 0; i < 9 * 41; i++)
            bf[i] = s[i] != 0 ? (uint16_t)(bits_of(s[i], MACKO_R_16BF)) : 0;
        if (macko_mat_create_nm_dense_host(&N, 9, 41, MACKO_R_16BF, bf, 41, MACKO_ORDER_ROW, 0, 0, 0) !=
            MACKO_STATUS_SUCCESS)
            FZ_ABORT("nm seed matrix");
        seed_serialized("nm_detected_bf16_9x41", N);
        macko_mat_destroy(N);
        if (macko_mat_create_nm_dense_host(&N, 0, 7, MACKO_R_64F, NULL, 7, MACKO_ORDER_ROW, 3, 8, 4) !=
            MACKO_STATUS_SUCCESS)
            FZ_ABORT("nm seed matrix");
        seed_serialized("nm_empty_0x7", N);
        macko_mat_destroy(N);
    }

    {
        const int64_t rp[5] = {0, 2, 2, 4, 5};
        const int64_t ci[5] = {1, 4, 0, 9, 5};
        const int v[5] = {1, 2, 3, 4, 5};
        seed_csr("i32_base0_half_4x10", 0, 0, 0, 4, 10, 5, rp, ci, v);
        seed_csr("i64_base1_float_4x10", 1, 1, 1, 4, 10, 5, rp, ci, v);
        seed_csr("i32_base1_bf16_4x10", 0, 1, 2, 4, 10, 5, rp, ci, v);
        seed_csr("i64_base0_double_4x10", 1, 0, 3, 4, 10, 5, rp, ci, v);
    }
    {
        const int64_t rp[3] = {0, 3, 4};
        const int64_t ci[4] = {1000, 1016, 4999, 4999};
        const int v[4] = {1, 2, 3, 4};
        seed_csr("long_gaps_2x5000", 1, 0, 1, 2, 5000, 4, rp, ci, v);
    }
    {
        const int64_t rp[4] = {0, 3, 3, 5};
        const int64_t ci[5] = {0, 17, 40, 2, 3};
        const int v[5] = {0, 7, 0, -1, 0}; /* explicit zeros are entries */
        seed_csr("explicit_zeros_3x41", 0, 1, 0, 3, 41, 5, rp, ci, v);
    }
    {
        const int64_t rp[4] = {0, 0, 0, 0};
        seed_csr("empty_rows_3x7", 0, 0, 0, 3, 7, 0, rp, NULL, NULL);
    }

    /* encode_dense: MACKO of the golden 3 x 20 (row-major fp16) and of the 9 x 41 (column-major bf16, slack 2);
     * N:M 2:4, v = 1 of a 17 x 20 (fp32, slack 1) and with the pattern detected of the 9 x 41 (fp64); QUANT of the
     * 9 x 41 with the FRACTION rule at 2/32 (6.25 % outliers; fp32, slack 3) and of the 3 x 20 column-major with
     * the THRESHOLD rule at 16/32 (fp16) */
    {
        int nm[17 * 20];
        for (i = 0; i < 17 * 20; i++) {
            x = x * 1103515245u + 12345u;
            nm[i] = i % 4 == (i / 20) % 3 || i % 4 == 3 ? (int)((x >> 16) % 7) - 3 : 0;
        }
        seed_dense("macko_golden_half_3x20", 0, 3, 20, 0, 0, 0, 0, g);
        seed_dense("macko_bf16_col_9x41", 2 | 4, 9, 41, 2, 0, 0, 0, s);
        seed_dense("nm_2of4_float_17x20", 1 | 8, 17, 20, 1, 2, 4, 1, nm);
        seed_dense("nm_detect_double_9x41", 3 | 8, 9, 41, 0, 0, 0, 0, s);
        seed_dense("quant_fraction_float_9x41", 1 | 16, 9, 41, 3, MACKO_OUTLIERS_FRACTION, 3, 2, s);
        seed_dense("quant_threshold_half_col_3x20", 0 | 4 | 16, 3, 20, 0, MACKO_OUTLIERS_THRESHOLD, 3, 16, g);
    }

    seed_import("golden_half_3x20", A, -1);
    seed_import("structured_9x41", B, -1);
    seed_import("float_3x20", C, -1);
    seed_import("empty_4x0", W, -1);
    seed_import("golden_wide_cols_2p56", A, INT64_C(1) << 56); /* 64-bit cols */
    seed_import("bf16_structured_9x41", BF, -1);
    seed_import("double_3x20", D, -1);

    macko_mat_destroy(A);
    macko_mat_destroy(B);
    macko_mat_destroy(C);
    macko_mat_destroy(E);
    macko_mat_destroy(W);
    macko_mat_destroy(BF);
    macko_mat_destroy(D);
    return 0;
}
