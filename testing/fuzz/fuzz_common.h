/* Shared by the libFuzzer targets of testing/fuzz and the seed generator: the byte layouts the CSR and raw-array
 * targets read their arguments from, and the checks every accepted matrix must pass.
 *
 * A target aborts (libFuzzer reports a crash) when the library breaks its contract: a status other than the
 * documented ones, an out-parameter written on failure, an error position outside the routine's arguments, or an
 * accepted matrix whose exports, serialization and reload disagree with each other. The sanitizers catch the rest
 * (out-of-bounds reads of the exactly-sized input arrays, leaks, undefined behaviour). */
#ifndef MACKO_FUZZ_COMMON_H
#define MACKO_FUZZ_COMMON_H

#include "macko.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- input layouts
 *
 * fuzz_csr:          [0] flags (bit 0: 64-bit indices, bit 1: index base one, bits 2-3: value type, fz_type)
 *                    [1] rows (0..255)   [2..3] cols (u16)   [4..5] nnz (u16 & 1023)
 *                    then row_ptr (rows + 1 indices), col_ind (nnz indices), values (nnz), little-endian, raw;
 *                    missing bytes read as zero.
 * fuzz_macko_import: [0] flags (bits 0-1: value type, fz_type)   [1] rows (0..255)   [2..9] cols (int64, any)
 *                    [10..11] entries (u16 & 4095)
 *                    then values (entries rounded up to 8), deltas (half as many bytes), row_ptr (rows + 1 int32);
 *                    missing bytes read as zero.
 * fuzz_deserialize:  the bytes are the serialized matrix (format version 1, MACKO, 2, QUANT, or 3, N:M).
 * fuzz_encode_dense: [0] flags (bits 0-1: value type, fz_type; bit 2: column-major; bits 3-4: the encoder, 0 and 3
 *                    MACKO, 1 N:M, 2 QUANT)   [1] rows (& 63)   [2] cols (& 127)   [3] ld - max(1, minor) (& 7)
 *                    [4..6] (& 63 each) N:M: n, m, v (0: detect); QUANT: the outlier rule (& 3), bits (& 7),
 *                    param x 32
 *                    then the values ((major - 1) * ld + minor of them, raw); missing bytes read as zero. */
enum { FZ_CSR_HDR = 6, FZ_IMPORT_HDR = 12, FZ_DENSE_HDR = 7 };

#define FZ_ABORT(...)                                                                                                  \
    do {                                                                                                               \
        fprintf(stderr, "fuzz check failed at %s:%d: ", __FILE__, __LINE__);                                           \
        fprintf(stderr, __VA_ARGS__);                                                                                  \
        fprintf(stderr, " (last error: %s)\n", macko_get_last_error_message());                                       \
        abort();                                                                                                       \
    } while (0)

/* A cursor over the fuzz input: takes n bytes into an exactly sized malloc'ed buffer (zero-filled past the end of
 * the input), so that any read beyond what the API may read is an ASan report. */
typedef struct {
    const uint8_t *p;
    size_t left;
} fz_cursor;

static inline void *fz_take(fz_cursor *c, size_t n)
{
    uint8_t *b = (uint8_t *)malloc(n > 0 ? n : 1);
    size_t k = n < c->left ? n : c->left;
    if (b == NULL)
        FZ_ABORT("harness out of memory");
    if (k > 0)
        memcpy(b, c->p, k);
    memset(b + k, 0, n - k);
    c->p += k;
    c->left -= k;
    return b;
}

static inline uint64_t fz_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The value type of two flag bits: 0 fp16, 1 fp32 (the one bit of the inputs before bf16 and fp64), 2 bf16,
 * 3 fp64. */
static inline macko_datatype_t fz_type(unsigned bits)
{
    static const macko_datatype_t t[4] = {MACKO_R_16F, MACKO_R_32F, MACKO_R_16BF, MACKO_R_64F};
    return t[bits & 3];
}

static inline size_t fz_type_size(macko_datatype_t t) { return t == MACKO_R_64F ? 8 : t == MACKO_R_32F ? 4 : 2; }

/* +0 or -0 in any of the four types (the sign is the top bit of each) */
static inline int fz_value_is_zero(macko_datatype_t t, const uint8_t *v, int64_t k)
{
    const int es = (int)fz_type_size(t);
    const uint64_t magnitude = es == 8 ? UINT64_C(0x7FFFFFFFFFFFFFFF) : (UINT64_C(1) << (8 * es - 1)) - 1;
    return (fz_le(v + (size_t)es * (size_t)k, es) & magnitude) == 0;
}

/* ---------------------------------------------------------------- checks of an accepted matrix */

/* Serializes A; the caller frees *out. */
static inline int64_t fz_serialize(macko_mat_t A, uint8_t **out)
{
    int64_t n = -1;
    if (macko_mat_serialized_size(A, &n) != MACKO_STATUS_SUCCESS || n < 96)
        FZ_ABORT("serialized_size failed");
    *out = (uint8_t *)malloc((size_t)n);
    if (*out == NULL)
        FZ_ABORT("harness out of memory");
    if (macko_mat_serialize(A, *out, n) != MACKO_STATUS_SUCCESS)
        FZ_ABORT("serialize failed");
    return n;
}

/* Serializes A, deserializes the bytes and serializes again, expecting the same bytes. */
static inline void fz_check_reserialize(macko_mat_t A)
{
    uint8_t *s1, *s2;
    int64_t n1, n2;
    macko_mat_t B = NULL;
    n1 = fz_serialize(A, &s1);
    if (macko_mat_deserialize(&B, s1, n1) != MACKO_STATUS_SUCCESS)
        FZ_ABORT("deserialize of a serialized matrix failed");
    n2 = fz_serialize(B, &s2);
    if (n1 != n2 || memcmp(s1, s2, (size_t)n1) != 0)
        FZ_ABORT("serialize -> deserialize -> serialize changed the bytes");
    macko_mat_destroy(B);
    free(s1);
    free(s2);
}

/* A QUANT matrix (lapack_style_docs/FORMAT_QUANT.md): fp16, at most 65536 columns, its arrays of the documented sizes
 * accepted by the importer again with the same nnz, the dense export (when small) holding nnz nonzeros. */
static inline void fz_check_quant(macko_mat_t A)
{
    int64_t rows = -1, cols = -1, nnz = -1, nnz2 = -1, wc = -1, no = -1, k;
    macko_datatype_t type;
    int bits = 0;
    const uint64_t *w = NULL;
    const int32_t *rp = NULL;
    const uint32_t *e = NULL;
    macko_mat_t B = NULL;
    if (macko_mat_get_info(A, &rows, &cols, &nnz, &type) != MACKO_STATUS_SUCCESS ||
        macko_mat_get_quant_host(A, &bits, &w, &wc, &no, &rp, &e) != MACKO_STATUS_SUCCESS)
        FZ_ABORT("QUANT queries failed");
    if (type != MACKO_R_16F || bits != 3 || rows < 0 || cols < 0 || cols > 65536 || nnz < 0 || no < 0 ||
        wc != 16 * ((rows + 15) / 16) * ((cols + 15) / 16) || rp[0] != 0 || rp[rows] != no)
        FZ_ABORT("QUANT matrix %lld x %lld: type %d, bits %d, nnz %lld, words %lld, outliers %lld", (long long)rows,
                 (long long)cols, (int)type, bits, (long long)nnz, (long long)wc, (long long)no);
    if (macko_mat_create_quant_host(&B, rows, cols, bits, w, no, rp, e) != MACKO_STATUS_SUCCESS ||
        macko_mat_get_info(B, NULL, NULL, &nnz2, NULL) != MACKO_STATUS_SUCCESS || nnz2 != nnz)
        FZ_ABORT("the importer refuses the arrays of an accepted QUANT matrix, or counts %lld nonzeros, not %lld",
                 (long long)nnz2, (long long)nnz);
    macko_mat_destroy(B);
    if (rows > 0 && cols > 0 && cols <= (INT64_C(1) << 16) / rows) {
        uint16_t *d = (uint16_t *)malloc((size_t)(rows * cols) * 2);
        int64_t dn = 0;
        if (d == NULL)
            FZ_ABORT("harness out of memory");
        if (macko_mat_export_dense_host(A, d, cols, MACKO_ORDER_ROW) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("QUANT dense export failed");
        for (k = 0; k < rows * cols; k++)
            dn += (d[k] & 0x7FFF) != 0;
        if (dn != nnz)
            FZ_ABORT("QUANT dense export holds %lld nonzeros, nnz %lld", (long long)dn, (long long)nnz);
        free(d);
    }
    fz_check_reserialize(A);
}

/* An N:M matrix (lapack_style_docs/FORMAT_NM.md): a supported pattern, its arrays accepted by the importer again
 * with the same nnz (the exports and the reserialization are fz_check_matrix's, as for MACKO). */
static inline void fz_check_nm(macko_mat_t A)
{
    int64_t rows = -1, cols = -1, nnz = -1, nnz2 = -1;
    macko_datatype_t type;
    int n = 0, m = 0, v = 0;
    const void *vals = NULL;
    const uint8_t *pos = NULL;
    macko_mat_t B = NULL;
    if (macko_mat_get_info(A, &rows, &cols, &nnz, &type) != MACKO_STATUS_SUCCESS ||
        macko_mat_get_nm_host(A, &n, &m, &v, &vals, &pos) != MACKO_STATUS_SUCCESS)
        FZ_ABORT("N:M queries failed");
    if ((m != 4 && m != 8 && m != 16 && m != 32) || n < 1 || n > m || v < 1 || v > 32 || (v & (v - 1)) != 0 ||
        vals == NULL || pos == NULL)
        FZ_ABORT("N:M matrix %lld x %lld with the pattern %d:%d, v = %d", (long long)rows, (long long)cols, n, m, v);
    if (macko_mat_create_nm_host(&B, rows, cols, type, n, m, v, vals, pos) != MACKO_STATUS_SUCCESS ||
        macko_mat_get_info(B, NULL, NULL, &nnz2, NULL) != MACKO_STATUS_SUCCESS || nnz2 != nnz)
        FZ_ABORT("the importer refuses the arrays of an accepted N:M matrix, or counts %lld nonzeros, not %lld",
                 (long long)nnz2, (long long)nnz);
    macko_mat_destroy(B);
}

/* Exports A as CSR (int64, base 0) and, when small, densely, and checks that they describe the same matrix with
 * nnz nonzeros; then serializes, deserializes and serializes again, expecting the same bytes. A QUANT matrix: the
 * checks of fz_check_quant; an N:M matrix: fz_check_nm's, then the same as a MACKO matrix. */
static inline void fz_check_matrix(macko_mat_t A)
{
    int64_t rows = -1, cols = -1, nnz = -1, r, k, total;
    macko_datatype_t type;
    size_t es;
    int64_t *rp, *ci;
    uint8_t *v;
    macko_kind_t kind;
    if (macko_mat_get_kind(A, &kind) != MACKO_STATUS_SUCCESS)
        FZ_ABORT("get_kind failed");
    if (kind == MACKO_KIND_QUANT) {
        fz_check_quant(A);
        return;
    }
    if (kind == MACKO_KIND_NM)
        fz_check_nm(A);
    else if (kind != MACKO_KIND_MACKO)
        FZ_ABORT("get_kind: %d", (int)kind);
    if (macko_mat_get_info(A, &rows, &cols, &nnz, &type) != MACKO_STATUS_SUCCESS)
        FZ_ABORT("get_info failed");
    if (rows < 0 || cols < 0 || nnz < 0 ||
        (type != MACKO_R_16F && type != MACKO_R_32F && type != MACKO_R_16BF && type != MACKO_R_64F))
        FZ_ABORT("get_info: %lld x %lld, nnz %lld, type %d", (long long)rows, (long long)cols, (long long)nnz,
                 (int)type);
    /* An N:M file of zero columns stores nothing per row, so it may declare up to 2^62 rows: no export buffer of
     * rows + 1 pointers can be allocated for it (a MACKO file carries its row pointers, so its rows are bounded by the
     * input's size), and the exports of a few million rows (0.2 s for 6.3 million, found in a 20-minute run) slowed
     * the fuzzer from 60,000 to a few hundred inputs a second once its corpus held such files. Above 2^16 rows such a
     * matrix gets the reserialization check only. */
    if (kind == MACKO_KIND_NM && cols == 0 && rows > (INT64_C(1) << 16)) {
        fz_check_reserialize(A);
        return;
    }
    es = fz_type_size(type);
    rp = (int64_t *)malloc(((size_t)rows + 1) * 8);
    ci = (int64_t *)malloc((size_t)nnz * 8 + 8);
    v = (uint8_t *)malloc((size_t)nnz * es + 8);
    if (rp == NULL || ci == NULL || v == NULL)
        FZ_ABORT("harness out of memory");
    if (macko_mat_export_csr_host(A, rp, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO) != MACKO_STATUS_SUCCESS)
        FZ_ABORT("export_csr failed");
    if (rp[0] != 0 || rp[rows] != nnz)
        FZ_ABORT("exported row_ptr ends %lld, %lld; nnz %lld", (long long)rp[0], (long long)rp[rows],
                 (long long)nnz);
    for (r = 0; r < rows; r++) {
        if (rp[r + 1] < rp[r])
            FZ_ABORT("exported row_ptr decreases at row %lld", (long long)r);
        for (k = rp[r]; k < rp[r + 1]; k++) {
            if (ci[k] < 0 || ci[k] >= cols || (k > rp[r] && ci[k] <= ci[k - 1]))
                FZ_ABORT("exported column %lld in row %lld", (long long)ci[k], (long long)r);
            if (fz_value_is_zero(type, v, k))
                FZ_ABORT("exported a zero value");
        }
    }
    /* dense export when the matrix is small (rows * cols checked without overflow) */
    if (rows > 0 && cols > 0 && cols <= (INT64_C(1) << 16) / rows) {
        total = rows * cols;
        uint8_t *d = (uint8_t *)malloc((size_t)total * es);
        int64_t dn = 0;
        if (d == NULL)
            FZ_ABORT("harness out of memory");
        if (macko_mat_export_dense_host(A, d, cols, MACKO_ORDER_ROW) != MACKO_STATUS_SUCCESS)
            FZ_ABORT("export_dense failed");
        for (k = 0; k < total; k++)
            dn += !fz_value_is_zero(type, d, k);
        if (dn != nnz)
            FZ_ABORT("dense export holds %lld nonzeros, nnz %lld", (long long)dn, (long long)nnz);
        for (r = 0; r < rows; r++)
            for (k = rp[r]; k < rp[r + 1]; k++)
                if (memcmp(d + (size_t)(r * cols + ci[k]) * es, v + (size_t)k * es, es) != 0)
                    FZ_ABORT("dense and CSR exports differ at (%lld, %lld)", (long long)r, (long long)ci[k]);
        free(d);
    }
    free(rp);
    free(ci);
    free(v);
    fz_check_reserialize(A);
}

#endif
