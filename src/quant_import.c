/* The QUANT kind's host side (lapack_style_docs/FORMAT_QUANT.md): the validator (shared with every producer of a QUANT
 * matrix, so it must be safe on hostile data), the host arrays and matrix object, macko_mat_create_quant_host,
 * macko_mat_get_quant_host and the dense export. */
#include "check.h"
#include "quant.h"
#include "quant_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS_SIZE_NAME "16*ceil(rows/16)*ceil(cols/16)"

int macko_quant_sizes(int64_t rows, int64_t cols, int64_t *bands, int64_t *tcols, int64_t *words_count)
{
    int64_t b, t, w;
    if (rows < 0 || cols < 0 || rows > MACKO_MAX_ELEMS || cols > MACKO_MAX_ELEMS)
        return 0;
    b = (rows + 15) / 16;
    t = (cols + 15) / 16;
    if (!macko_mul_i64(b, t, &w) || !macko_mul_i64(w, 16, &w) || w > MACKO_MAX_ELEMS)
        return 0;
    *bands = b;
    *tcols = t;
    *words_count = w;
    return 1;
}

/* The code bits of weights from..15 of a word. */
static uint64_t code_bits(int from)
{
    uint64_t m = 0;
    int k;
    for (k = from; k < 16; k++)
        m |= UINT64_C(7) << macko_quant_qpos(k);
    return m;
}

static int half_finite(uint16_t h) { return (h & 0x7C00u) != 0x7C00u; }

/* The decoded weight at (r, c) of a valid words array (FORMAT_QUANT.md "Decoding"). */
static uint16_t weight_at(const uint64_t *words, int64_t tcols, int64_t r, int64_t c)
{
    const uint64_t *tile = words + macko_quant_word_index(tcols, r / 16, c / 16, 0);
    const uint64_t w = tile[r % 16];
    uint16_t s, m;
    macko_quant_row(macko_quant_stats(tile), w, &s, &m);
    return macko_quant_weight(macko_quant_q(w, (int)(c % 16)), s, m);
}

/* Records the fault of word base + i (row r, tile column t) in msg and returns from the validator. */
#define WORD_FAIL(...)                                                                                                 \
    do {                                                                                                               \
        int n_ = snprintf(msg, msg_size, "words: word %" PRId64 " (row %" PRId64 ", tile column %" PRId64 "): ",       \
                          base + i, r, t);                                                                             \
        if (n_ > 0 && (size_t)n_ < msg_size)                                                                           \
            snprintf(msg + n_, msg_size - (size_t)n_, __VA_ARGS__);                                                    \
        return MACKO_QBAD_WORDS;                                                                                       \
    } while (0)

/* Checks the words tile by tile; adds the nonzero weights of the rows inside the matrix to *nz. */
static int validate_words(int64_t rows, int64_t cols, int64_t bands, int64_t tcols, const uint64_t *words,
                          int64_t *nz, char *msg, size_t msg_size)
{
    const uint64_t all_codes = code_bits(0);
    const uint64_t sq_zq = (UINT64_C(7) << MACKO_QUANT_SQ_SHIFT) | (UINT64_C(7) << MACKO_QUANT_ZQ_SHIFT);
    int64_t b, t;
    for (b = 0; b < bands; b++) {
        for (t = 0; t < tcols; t++) {
            const int64_t base = macko_quant_word_index(tcols, b, t, 0);
            const uint64_t *tile = words + base;
            const uint64_t stats = macko_quant_stats(tile);
            const int nc = cols - 16 * t >= 16 ? 16 : (int)(cols - 16 * t);
            const uint64_t pad_codes = nc < 16 ? code_bits(nc) : 0;
            int i, k;
            for (i = 0; i < 16; i++) {
                const int64_t r = 16 * b + i;
                const uint64_t w = tile[i];
                uint16_t s, m, w7;
                double sd, md;
                if (w & MACKO_QUANT_ZERO_BITS)
                    WORD_FAIL("bits 15, 31 and 60..63 must be zero (the word is 0x%016" PRIx64 ")", w);
                if (r >= rows && (w & (all_codes | sq_zq)) != 0)
                    WORD_FAIL("a padding row (rows = %" PRId64 ") must have weight, scale and zero codes 0", rows);
                if (r < rows && (w & pad_codes) != 0) {
                    for (k = nc; macko_quant_q(w, k) == 0; k++)
                        ;
                    WORD_FAIL("weight %d (column %" PRId64 ", past cols = %" PRId64 ") has code %u; padding codes "
                              "must be 0",
                              k, 16 * t + k, cols, macko_quant_q(w, k));
                }
                macko_quant_row(stats, w, &s, &m);
                sd = macko_half_to_double(s);
                md = macko_half_to_double(m);
                if (!half_finite(s))
                    WORD_FAIL("the scale s decodes to %g", sd);
                if (!half_finite(m))
                    WORD_FAIL("the offset m decodes to %g", md);
                if (r >= rows)
                    continue;
                /* w(q) is monotone in q, and w(0) = -m is finite: w(7) is the one left to check. */
                w7 = macko_quant_weight(7, s, m);
                if (!half_finite(w7))
                    WORD_FAIL("weight code 7 decodes to %g", macko_half_to_double(w7));
                /* q*s - m is a multiple of 2^-24 (s and m are fp16), so it rounds to zero only when it is zero. */
                for (k = 0; k < nc; k++)
                    *nz += (double)macko_quant_q(w, k) * sd != md;
            }
        }
    }
    return 0;
}

#undef WORD_FAIL

int macko_quant_validate(int64_t rows, int64_t cols, const uint64_t *words, int64_t outliers, const int32_t *optr,
                         const uint32_t *oent, int64_t *nnz_out, char *msg, size_t msg_size)
{
    int64_t bands, tcols, wc, r, k, nz = 0;
    char dummy[1];
    int bad;
    if (msg == NULL || msg_size == 0) {
        msg = dummy;
        msg_size = sizeof dummy;
    }
    msg[0] = '\0';
    if (cols > MACKO_QUANT_MAX_COLS || outliers < 0 || outliers > INT32_MAX ||
        !macko_quant_sizes(rows, cols, &bands, &tcols, &wc)) {
        snprintf(msg, msg_size, "words cannot be checked: invalid rows, cols or outliers");
        return MACKO_QBAD_WORDS;
    }
    if ((words == NULL && wc > 0) || optr == NULL || (oent == NULL && outliers > 0)) {
        snprintf(msg, msg_size, "%s is NULL",
                 optr == NULL ? "outlier_row_ptr" : words == NULL ? "words" : "outlier_entries");
        return optr == NULL ? MACKO_QBAD_ROW_PTR : words == NULL ? MACKO_QBAD_WORDS : MACKO_QBAD_ENTRIES;
    }
    bad = validate_words(rows, cols, bands, tcols, words, &nz, msg, msg_size);
    if (bad != 0)
        return bad;

    if (optr[0] != 0) {
        snprintf(msg, msg_size, "outlier_row_ptr: row 0: outlier_row_ptr[0] is %" PRId32 "; it must be 0", optr[0]);
        return MACKO_QBAD_ROW_PTR;
    }
    for (r = 0; r < rows; r++) {
        if (optr[r + 1] < optr[r]) {
            snprintf(msg, msg_size,
                     "outlier_row_ptr: row %" PRId64 ": outlier_row_ptr decreases (outlier_row_ptr[%" PRId64
                     "] = %" PRId32 " < outlier_row_ptr[%" PRId64 "] = %" PRId32 ")",
                     r, r + 1, optr[r + 1], r, optr[r]);
            return MACKO_QBAD_ROW_PTR;
        }
        if (optr[r + 1] > outliers) {
            snprintf(msg, msg_size,
                     "outlier_row_ptr: row %" PRId64 ": outlier_row_ptr[%" PRId64 "] = %" PRId32
                     " exceeds outliers = %" PRId64,
                     r, r + 1, optr[r + 1], outliers);
            return MACKO_QBAD_ROW_PTR;
        }
    }
    if (optr[rows] != outliers) {
        snprintf(msg, msg_size,
                 "outlier_row_ptr: row %" PRId64 ": outlier_row_ptr[rows] is %" PRId32
                 "; it must be outliers = %" PRId64,
                 rows > 0 ? rows - 1 : 0, optr[rows], outliers);
        return MACKO_QBAD_ROW_PTR;
    }

    for (r = 0; r < rows; r++) {
        int64_t prev = -1;
        for (k = optr[r]; k < optr[r + 1]; k++) {
            const int64_t c = macko_quant_outlier_col(oent[k]);
            const uint16_t v = macko_quant_outlier_value(oent[k]);
            uint16_t w;
            if (c >= cols || c <= prev || !half_finite(v) || (v & 0x7FFFu) == 0) {
                int n = snprintf(msg, msg_size, "outlier_entries: row %" PRId64 ", outlier %" PRId64 ": ", r, k);
                if (n < 0 || (size_t)n >= msg_size)
                    return MACKO_QBAD_ENTRIES;
                if (c >= cols)
                    snprintf(msg + n, msg_size - (size_t)n, "column %" PRId64 " is outside [0, cols = %" PRId64 ")",
                             c, cols);
                else if (c <= prev)
                    snprintf(msg + n, msg_size - (size_t)n,
                             "column %" PRId64 " does not follow the row's previous column %" PRId64, c, prev);
                else
                    snprintf(msg + n, msg_size - (size_t)n, "value 0x%04x (column %" PRId64 ") is %s", (unsigned)v,
                             c, half_finite(v) ? "zero" : "not finite");
                return MACKO_QBAD_ENTRIES;
            }
            prev = c;
            w = weight_at(words, tcols, r, c);
            nz += (macko_half_to_double(w) + macko_half_to_double(v) != 0) - ((w & 0x7FFFu) != 0);
        }
    }
    if (nnz_out != NULL)
        *nnz_out = nz;
    return 0;
}

macko_status_t macko_quant_host_alloc(int64_t rows, int64_t words_count, int64_t outliers, macko_quant_arrays *qa)
{
    memset(qa, 0, sizeof *qa);
    if ((uint64_t)words_count > SIZE_MAX / 8 || (uint64_t)rows >= SIZE_MAX / 4 || (uint64_t)outliers > SIZE_MAX / 4)
        return MACKO_STATUS_ALLOC_FAILED;
    qa->words = (uint64_t *)macko_aligned_calloc((size_t)words_count * 8);
    qa->optr = (int32_t *)macko_aligned_calloc(((size_t)rows + 1) * 4);
    qa->oent = (uint32_t *)macko_aligned_calloc((size_t)outliers * 4);
    if (qa->words == NULL || qa->optr == NULL || qa->oent == NULL) {
        macko_quant_host_free(qa);
        return MACKO_STATUS_ALLOC_FAILED;
    }
    return MACKO_STATUS_SUCCESS;
}

void macko_quant_host_free(macko_quant_arrays *qa)
{
    macko_aligned_free(qa->words);
    macko_aligned_free(qa->optr);
    macko_aligned_free(qa->oent);
    memset(qa, 0, sizeof *qa);
}

struct macko_mat_s *macko_quant_mat(int64_t rows, int64_t cols, int64_t nnz, int64_t outliers,
                                    macko_quant_arrays *qa)
{
    struct macko_mat_s *m = macko_mat_alloc();
    if (m == NULL) {
        macko_quant_host_free(qa);
        return NULL;
    }
    m->kind = MACKO_KIND_QUANT;
    m->rows = rows;
    m->cols = cols;
    m->nnz = nnz;
    m->entries = outliers;
    m->entries_padded = outliers;
    m->type = MACKO_R_16F;
    m->q.bits = MACKO_QUANT_BITS;
    (void)macko_quant_sizes(rows, cols, &m->q.bands, &m->q.tcols, &m->q.words_count);
    m->q.outliers = outliers;
    m->q.host = *qa;
    m->q.layout = MACKO_QOUT_CSR;
    m->q.slots = outliers;
    m->has_host = 1;
    memset(qa, 0, sizeof *qa);
    return m;
}

int64_t macko_quant_outlier_bytes(const struct macko_mat_s *m)
{
    return ((m->q.layout == MACKO_QOUT_CSR ? m->rows : m->q.bands) + 1 + m->q.slots) * 4;
}

macko_status_t macko_check_quant_shape(const char *fn, const macko_mat_t *A, int64_t rows, int64_t cols)
{
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_size(fn, 2, "rows", rows));
    MACKO_CHECK(macko_check_size(fn, 3, "cols", cols));
    if (cols > MACKO_QUANT_MAX_COLS)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 3,
                          "cols is %" PRId64 "; the QUANT kind holds at most %d columns", cols, MACKO_QUANT_MAX_COLS);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_quant_bits(const char *fn, int pos, int bits)
{
    if (bits != MACKO_QUANT_BITS)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos, "bits is %d; only %d is supported", bits,
                          MACKO_QUANT_BITS);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_mat_create_quant_host(macko_mat_t *A, int64_t rows, int64_t cols, int bits,
                                           const uint64_t *words, int64_t outliers, const int32_t *outlier_row_ptr,
                                           const uint32_t *outlier_entries)
{
    static const char fn[] = "macko_mat_create_quant_host";
    char msg[320];
    int64_t bands, tcols, wc, nnz = 0;
    int bad;
    macko_quant_arrays qa;
    struct macko_mat_s *m;

    MACKO_CHECK(macko_check_quant_shape(fn, A, rows, cols));
    if (!macko_quant_sizes(rows, cols, &bands, &tcols, &wc))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3,
                          "rows x cols (%" PRId64 " x %" PRId64 ") needs more than 2^56 words", rows, cols);
    MACKO_CHECK(macko_check_quant_bits(fn, 4, bits));
    MACKO_CHECK(macko_check_array(fn, 5, "words", words, WORDS_SIZE_NAME, wc, NULL, 0, sizeof *words));
    MACKO_CHECK(macko_check_size(fn, 6, "outliers", outliers));
    if (outliers > INT32_MAX)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 6,
                          "outliers is %" PRId64 "; int32 row pointers hold at most 2^31 - 1", outliers);
    MACKO_CHECK(macko_check_array(fn, 7, "outlier_row_ptr", outlier_row_ptr, "rows + 1", rows + 1, NULL, 0,
                                  sizeof *outlier_row_ptr));
    MACKO_CHECK(macko_check_array(fn, 8, "outlier_entries", outlier_entries, "outliers", outliers, NULL, 0,
                                  sizeof *outlier_entries));

    bad = macko_quant_validate(rows, cols, words, outliers, outlier_row_ptr, outlier_entries, &nnz, msg, sizeof msg);
    if (bad != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn,
                          bad == MACKO_QBAD_WORDS ? 5 : bad == MACKO_QBAD_ROW_PTR ? 7 : 8, "%s", msg);

    if (macko_quant_host_alloc(rows, wc, outliers, &qa) != MACKO_STATUS_SUCCESS)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                          "cannot allocate the encoding (%" PRId64 " words, %" PRId64 " outliers)", wc, outliers);
    if (wc > 0)
        memcpy(qa.words, words, (size_t)wc * 8);
    memcpy(qa.optr, outlier_row_ptr, ((size_t)rows + 1) * 4);
    if (outliers > 0)
        memcpy(qa.oent, outlier_entries, (size_t)outliers * 4);
    m = macko_quant_mat(rows, cols, nnz, outliers, &qa);
    if (m == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    *A = m;
    return macko_ok();
}

macko_status_t macko_mat_get_quant_host(macko_mat_t A, int *bits, const uint64_t **words, int64_t *words_count,
                                        int64_t *outliers, const int32_t **outlier_row_ptr,
                                        const uint32_t **outlier_entries)
{
    static const char fn[] = "macko_mat_get_quant_host";
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_kind(fn, 1, A, MACKO_KIND_QUANT));
    MACKO_CHECK(macko_check_host_mat(fn, 1, A));
    if (bits) *bits = A->q.bits;
    if (words) *words = A->q.host.words;
    if (words_count) *words_count = A->q.words_count;
    if (outliers) *outliers = A->q.outliers;
    if (outlier_row_ptr) *outlier_row_ptr = A->q.host.optr;
    if (outlier_entries) *outlier_entries = A->q.host.oent;
    return macko_ok();
}

/* fp16 element store into the caller's array, which need not be aligned. */
static void put_half(void *out, int64_t i, uint16_t h) { memcpy((unsigned char *)out + i * 2, &h, 2); }
static uint16_t get_half(const void *out, int64_t i)
{
    uint16_t h;
    memcpy(&h, (const unsigned char *)out + i * 2, 2);
    return h;
}

void macko_quant_export_dense(const struct macko_mat_s *A, void *out, int64_t rs, int64_t cs)
{
    const macko_quant *q = &A->q;
    int64_t b, t, r, k;
    for (b = 0; b < q->bands; b++) {
        for (t = 0; t < q->tcols; t++) {
            const uint64_t *tile = q->host.words + macko_quant_word_index(q->tcols, b, t, 0);
            const uint64_t stats = macko_quant_stats(tile);
            const int nc = A->cols - 16 * t >= 16 ? 16 : (int)(A->cols - 16 * t);
            int i, j;
            for (i = 0; i < 16 && 16 * b + i < A->rows; i++) {
                uint16_t s, m, w[8];
                unsigned c;
                macko_quant_row(stats, tile[i], &s, &m);
                for (c = 0; c < 8; c++)
                    w[c] = macko_quant_weight(c, s, m);
                for (j = 0; j < nc; j++)
                    put_half(out, (16 * b + i) * rs + (16 * t + j) * cs, w[macko_quant_q(tile[i], j)]);
            }
        }
    }
    /* At most one outlier per position: the element holds the decoded weight when its outlier is added. */
    for (r = 0; r < A->rows; r++) {
        for (k = q->host.optr[r]; k < q->host.optr[r + 1]; k++) {
            const int64_t at = r * rs + (int64_t)macko_quant_outlier_col(q->host.oent[k]) * cs;
            const double o = macko_half_to_double(macko_quant_outlier_value(q->host.oent[k]));
            put_half(out, at, macko_half_from_double(macko_half_to_double(get_half(out, at)) + o));
        }
    }
}
