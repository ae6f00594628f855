/* Dense -> QUANT on the host (lapack_style_docs/FORMAT_QUANT.md, "Encoding a dense weight").
 *
 * The matrix is processed band by band (16 rows): a band's values are read once into doubles (every input value is
 * exact there), then each tile is quantized from them. All choices of a code are "nearest decoded value, ties: the
 * smaller code", made exactly: the decoded values of the 8 codes are nondecreasing fp16 numbers, so the nearest is
 * decided by comparing the value with the 7 midpoints of neighbouring decoded values, which are exact in double.
 *
 * Outliers: THRESHOLD decides band by band (quantize, mark, quantize the band again without the marked weights).
 * FRACTION needs the errors of the whole matrix first: pass 1 keeps one float per weight (its error rounded to fp32),
 * a radix select on the float bits finds the K-th largest, and pass 2 marks the weights above it plus, among those
 * equal to it, the earliest in row-major order. */
#include "check.h"
#include "quant.h"
#include "quant_host.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HALF 65504.0
/* Steps of the degenerate-tile fallback (FORMAT_QUANT.md): the tile's scales times 1 - j/SHRINK_STEPS. */
#define SHRINK_STEPS 64

typedef struct {
    const unsigned char *a; /* the caller's matrix */
    int64_t rows, cols, ld;
    int colmajor;
    macko_datatype_t type;
    size_t es;
} qsrc;

/* ---- input values */

/* macko_half_to_double's value, through the float bits (the encoder's hot paths convert every weight). */
static double half_value(uint16_t h)
{
    const unsigned e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    float f;
    if (e == 0) {
        f = (float)m * 5.9604644775390625e-08f; /* m * 2^-24: exact */
    } else {
        const uint32_t bits = ((uint32_t)(e == 0x1F ? 0xFF : e + 112) << 23) | ((uint32_t)m << 13);
        memcpy(&f, &bits, 4);
    }
    return (h & 0x8000u) ? -(double)f : (double)f;
}

static double value_at(const qsrc *s, const unsigned char *p)
{
    switch (s->type) {
    case MACKO_R_16F: {
        uint16_t h;
        memcpy(&h, p, 2);
        return half_value(h);
    }
    case MACKO_R_16BF: {
        uint16_t h;
        uint32_t bits;
        float f;
        memcpy(&h, p, 2);
        bits = (uint32_t)h << 16;
        memcpy(&f, &bits, 4);
        return f;
    }
    case MACKO_R_32F: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    default: {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    }
}

/* Finite and at most 65504 in magnitude (judged on the bits for the 16-bit types: no conversion needed). */
static int value_ok(const qsrc *s, const unsigned char *p)
{
    uint16_t h;
    if (s->type == MACKO_R_16F || s->type == MACKO_R_16BF) {
        memcpy(&h, p, 2);
        return s->type == MACKO_R_16F ? (h & 0x7C00u) != 0x7C00u : (h & 0x7FFFu) <= 0x477Fu; /* bf16 65280 */
    }
    return fabs(value_at(s, p)) <= MAX_HALF; /* false for NaN */
}

static const unsigned char *elem(const qsrc *s, int64_t r, int64_t c)
{
    return s->a + (size_t)(s->colmajor ? c * s->ld + r : r * s->ld + c) * s->es;
}

/* The first bad value in row-major order: 1 and (*br, *bc) if there is one. */
static int find_bad_value(const qsrc *s, int64_t *br, int64_t *bc)
{
    int64_t r, c, best_r = s->rows, best_c = 0;
    if (!s->colmajor) {
        for (r = 0; r < s->rows; r++)
            for (c = 0; c < s->cols; c++)
                if (!value_ok(s, elem(s, r, c))) {
                    *br = r;
                    *bc = c;
                    return 1;
                }
        return 0;
    }
    for (c = 0; c < s->cols; c++)
        for (r = 0; r < best_r; r++) /* a later column only wins with an earlier row */
            if (!value_ok(s, elem(s, r, c))) {
                best_r = r;
                best_c = c;
                break;
            }
    *br = best_r;
    *bc = best_c;
    return best_r < s->rows;
}

/* ---- quantization of one tile */

/* The code 0..7 whose value in tab (nondecreasing; mid: the 7 midpoints of neighbours) is nearest to v; ties: the
 * smaller code. */
static inline unsigned nearest(const double mid[7], const double tab[8], double v)
{
    unsigned q = (unsigned)(v > mid[0]) + (v > mid[1]) + (v > mid[2]) + (v > mid[3]) + (v > mid[4]) + (v > mid[5]) +
                 (v > mid[6]);
    while (q > 0 && tab[q - 1] == tab[q])
        q--;
    return q;
}

static void midpoints(const uint16_t h[8], double tab[8], double mid[7])
{
    int c;
    for (c = 0; c < 8; c++)
        tab[c] = half_value(h[c]);
    for (c = 0; c < 7; c++)
        mid[c] = (tab[c] + tab[c + 1]) / 2; /* exact: two fp16 numbers */
}

/* Statistics (scale, zero) quantizing the n values x (FORMAT_QUANT.md pass 1): scale = (max - min) / 7, zero = -min /
 * scale, or scale = 1, zero = -min when the values are equal or the two do not come out usable in fp16 (the scale
 * rounds to 0, or the zero overflows). */
static void stat_pair(const double *x, int n, uint16_t *scale, uint16_t *zero)
{
    double mn = x[0], mx = x[0];
    int i;
    for (i = 1; i < n; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    if (mx > mn) {
        const double sc = (mx - mn) / 7;
        *scale = macko_half_from_double(sc);
        *zero = macko_half_from_double(-mn / sc);
        if ((*scale & 0x7FFFu) != 0 && (*zero & 0x7C00u) != 0x7C00u)
            return;
    }
    *scale = macko_half_from_double(1.0);
    *zero = macko_half_from_double(-mn);
}

/* The decoded values of the 8 codes of statistics (scale, zero): (c - zero) * scale in fp16. */
static void code_values(uint16_t scale, uint16_t zero, uint16_t h[8])
{
    unsigned c;
    for (c = 0; c < 8; c++)
        h[c] = macko_h_mul(macko_h_sub(macko_half_of_code(c), zero), scale);
}

static int half_finite(uint16_t h) { return (h & 0x7C00u) != 0x7C00u; }

/* Quantizes the tile whose nr x nc values start at v (row i at v + i*stride); weights whose mask byte is set are left
 * out of the row ranges. Writes its 16 words and the decoded weights (same layout as v). */
static void quantize_tile(const double *v, const unsigned char *mask, int64_t stride, int nr, int nc, uint64_t *tw,
                          uint16_t *wout)
{
    double sc[16], zp[16], tsc[16], stab[8], smid[7], ztab[8], zmid[7], wtab[8], wmid[7];
    uint16_t s_s, z_s, s_z, z_z, sh[8], zh[8], s[16], m[16], wh[8];
    unsigned sq[16], zq[16], q[16];
    uint64_t stats = 0;
    int i, j, k;
    for (i = 0; i < nr; i++) {
        const double *x = v + i * stride;
        const unsigned char *mk = mask != NULL ? mask + i * stride : NULL;
        double lo = 0, hi = 0;
        for (k = 0; k < nc; k++) {
            if (mk != NULL && mk[k])
                continue;
            lo = x[k] < lo ? x[k] : lo;
            hi = x[k] > hi ? x[k] : hi;
        }
        sc[i] = (hi - lo) / 7;
        zp[i] = sc[i] > 0 ? -lo / sc[i] : 0;
        zp[i] = zp[i] > 7 ? 7 : zp[i]; /* -lo <= 7 sc but for the rounding of a subnormal sc */
    }
    stat_pair(zp, nr, &s_z, &z_z);
    code_values(s_z, z_z, zh);
    midpoints(zh, ztab, zmid);
    for (j = 0; j <= SHRINK_STEPS; j++) {
        const double f = 1.0 - (double)j / SHRINK_STEPS;
        int ok = 1;
        for (i = 0; i < nr; i++)
            tsc[i] = sc[i] * f;
        stat_pair(tsc, nr, &s_s, &z_s);
        code_values(s_s, z_s, sh);
        midpoints(sh, stab, smid);
        stats = (uint64_t)s_s | (uint64_t)z_s << 16 | (uint64_t)s_z << 32 | (uint64_t)z_z << 48;
        for (i = 0; i < 16; i++) {
            sq[i] = i < nr ? nearest(smid, stab, tsc[i]) : 0;
            zq[i] = i < nr ? nearest(zmid, ztab, zp[i]) : 0;
            memset(q, 0, sizeof q);
            macko_quant_row(stats, macko_quant_pack(q, sq[i], zq[i], 0), &s[i], &m[i]);
            ok &= half_finite(s[i]) && half_finite(m[i]) && (i >= nr || half_finite(macko_quant_weight(7, s[i], m[i])));
        }
        if (ok)
            break; /* at j = SHRINK_STEPS every scale is 0 and so is every s, m and w: always ok */
    }
    for (i = 0; i < 16; i++) {
        memset(q, 0, sizeof q);
        if (i < nr) {
            const double *x = v + i * stride;
            uint16_t *w = wout + i * stride;
            unsigned c;
            for (c = 0; c < 8; c++)
                wh[c] = macko_quant_weight(c, s[i], m[i]);
            midpoints(wh, wtab, wmid);
            for (k = 0; k < nc; k++) {
                q[k] = nearest(wmid, wtab, x[k]);
                w[k] = wh[q[k]];
            }
        }
        tw[i] = macko_quant_pack(q, sq[i], zq[i], macko_quant_stats_piece(stats, i));
    }
}

/* ---- the encoder's state and passes */

typedef struct {
    qsrc src;
    int64_t tcols;
    uint64_t *words;
    double *v;           /* 16 x cols: the band's values */
    uint16_t *w;         /* 16 x cols: its decoded weights */
    unsigned char *mask; /* 16 x cols: its outlier positions */
    float *err;          /* FRACTION: rows x cols pass-1 errors, row-major */
    uint32_t *ov;        /* the outlier entries so far (grown as needed) */
    int64_t ocount, ocap;
    int32_t *optr;
} qenc;

static void load_band(qenc *e, int64_t r0, int nr)
{
    const qsrc *s = &e->src;
    int64_t c;
    int i;
    if (!s->colmajor) {
        for (i = 0; i < nr; i++) {
            const unsigned char *p = elem(s, r0 + i, 0);
            for (c = 0; c < s->cols; c++)
                e->v[i * s->cols + c] = value_at(s, p + (size_t)c * s->es);
        }
        return;
    }
    for (c = 0; c < s->cols; c++) {
        const unsigned char *p = elem(s, r0, c);
        for (i = 0; i < nr; i++)
            e->v[i * s->cols + c] = value_at(s, p + (size_t)i * s->es);
    }
}

static void quantize_band(qenc *e, int64_t b, int nr, int masked)
{
    const int64_t cols = e->src.cols;
    int64_t t;
    for (t = 0; t < e->tcols; t++) {
        const int nc = cols - 16 * t >= 16 ? 16 : (int)(cols - 16 * t);
        quantize_tile(e->v + 16 * t, masked ? e->mask + 16 * t : NULL, cols, nr, nc,
                      e->words + macko_quant_word_index(e->tcols, b, t, 0), e->w + 16 * t);
    }
}

/* fp16 of the exact v - w (w fp16), saturated to +-65504. The double difference r is off by its rounding error d
 * (exact, from TwoSum); that matters only where r is a tie between two fp16 numbers: then d decides the side. */
static uint16_t residual(double v, double w)
{
    const double r = v - w, bw = r - v, d = (v - (r - bw)) + (-w - bw);
    uint16_t h = macko_half_from_double(r);
    if (d != 0 && half_finite(h)) {
        const double hv = half_value(h);
        if (r != hv) {
            const uint16_t n = macko_half_from_double(nextafter(r, r > hv ? INFINITY : -INFINITY));
            if (2 * r == hv + half_value(n)) /* r is the tie of hv and n */
                h = macko_half_from_double(nextafter(r, d > 0 ? INFINITY : -INFINITY));
        }
    }
    if (!half_finite(h))
        h = (uint16_t)((h & 0x8000u) | 0x7BFFu);
    return h;
}

/* Appends the band's outliers (the marked weights whose residual is not zero), row by row. */
static int emit_outliers(qenc *e, int64_t r0, int nr)
{
    const int64_t cols = e->src.cols;
    int64_t c;
    int i;
    for (i = 0; i < nr; i++) {
        for (c = 0; c < cols; c++) {
            uint16_t o;
            if (!e->mask[i * cols + c])
                continue;
            o = residual(e->v[i * cols + c], half_value(e->w[i * cols + c]));
            if ((o & 0x7FFFu) == 0)
                continue;
            if (e->ocount == e->ocap) {
                const int64_t cap = e->ocap < 1024 ? 1024 : 2 * e->ocap;
                uint32_t *p = (uint32_t *)realloc(e->ov, (size_t)cap * sizeof *p);
                if (p == NULL)
                    return 0;
                e->ov = p;
                e->ocap = cap;
            }
            e->ov[e->ocount++] = macko_quant_outlier((unsigned)c, o);
        }
        e->optr[r0 + i + 1] = (int32_t)(e->ocount < INT32_MAX ? e->ocount : INT32_MAX); /* checked by the caller */
    }
    return 1;
}

/* The error key of a weight: |v - w| rounded to fp32, as its bits (nonnegative floats order like their bits). */
static inline uint32_t err_key(double v, uint16_t w)
{
    const float f = (float)fabs(v - half_value(w));
    uint32_t k;
    memcpy(&k, &f, 4);
    return k;
}

/* The K-th largest key of err[0..n) (1 <= K <= n) by radix select on the bits, 11 + 11 + 10; *take: how many of the
 * weights equal to it are outliers. */
static uint32_t select_key(const float *err, int64_t n, int64_t K, int64_t *take)
{
    static const int shift[3] = {21, 10, 0}, width[3] = {11, 11, 10};
    int64_t hist[2048], need = K, i;
    uint32_t prefix = 0;
    int p, d;
    for (p = 0; p < 3; p++) {
        const int top = shift[p] + width[p];
        const uint32_t dmask = (1u << width[p]) - 1;
        memset(hist, 0, sizeof hist);
        for (i = 0; i < n; i++) {
            uint32_t k;
            memcpy(&k, &err[i], 4);
            if (top >= 32 || (k >> top) == (prefix >> top))
                hist[(k >> shift[p]) & dmask]++;
        }
        for (d = (int)dmask; d > 0 && need > hist[d]; d--)
            need -= hist[d];
        prefix |= (uint32_t)d << shift[p];
    }
    *take = need;
    return prefix;
}

/* Marks the band's outliers of the FRACTION rule; *taken counts the weights equal to the key marked so far. */
static int mark_fraction(qenc *e, int64_t r0, int nr, uint32_t key, int64_t take, int64_t *taken)
{
    const int64_t cols = e->src.cols;
    int64_t i, any = 0;
    for (i = 0; i < nr * cols; i++) {
        uint32_t k;
        memcpy(&k, &e->err[r0 * cols + i], 4);
        e->mask[i] = k > key || (k == key && *taken < take && ++*taken > 0);
        any |= e->mask[i];
    }
    return any != 0;
}

static void qenc_free(qenc *e)
{
    free(e->v);
    free(e->w);
    free(e->mask);
    free(e->err);
    free(e->ov);
    macko_aligned_free(e->words);
    macko_aligned_free(e->optr);
}

/* Everything but the arguments' checks: fills e->words, e->optr and e->ov. */
static macko_status_t encode(qenc *e, int64_t bands, macko_outlier_rule_t rule, double param, int64_t K)
{
    const qsrc *s = &e->src;
    const size_t band = 16 * (size_t)s->cols;
    int64_t b, take = 0, taken = 0;
    uint32_t key = 0;
    e->v = (double *)malloc(band * sizeof *e->v + 1);
    e->w = (uint16_t *)malloc(band * sizeof *e->w + 1);
    e->mask = (unsigned char *)calloc(band + 1, 1);
    if (e->v == NULL || e->w == NULL || e->mask == NULL)
        return MACKO_STATUS_ALLOC_FAILED;
    if (rule == MACKO_OUTLIERS_FRACTION && K > 0) {
        e->err = (float *)malloc((size_t)(s->rows * s->cols) * sizeof *e->err);
        if (e->err == NULL)
            return MACKO_STATUS_ALLOC_FAILED;
        for (b = 0; b < bands; b++) {
            const int nr = s->rows - 16 * b >= 16 ? 16 : (int)(s->rows - 16 * b);
            int64_t i;
            load_band(e, 16 * b, nr);
            quantize_band(e, b, nr, 0);
            for (i = 0; i < nr * s->cols; i++) {
                const uint32_t k = err_key(e->v[i], e->w[i]);
                memcpy(&e->err[16 * b * s->cols + i], &k, 4);
            }
        }
        key = select_key(e->err, s->rows * s->cols, K, &take);
    }
    for (b = 0; b < bands; b++) {
        const int nr = s->rows - 16 * b >= 16 ? 16 : (int)(s->rows - 16 * b);
        int64_t i;
        int any = 0;
        load_band(e, 16 * b, nr);
        if (rule == MACKO_OUTLIERS_FRACTION && K > 0) {
            any = mark_fraction(e, 16 * b, nr, key, take, &taken);
        } else {
            quantize_band(e, b, nr, 0);
            if (rule == MACKO_OUTLIERS_THRESHOLD)
                for (i = 0; i < nr * s->cols; i++) {
                    float f;
                    const uint32_t k = err_key(e->v[i], e->w[i]);
                    memcpy(&f, &k, 4);
                    e->mask[i] = (double)f > param;
                    any |= e->mask[i];
                }
        }
        if (any) {
            quantize_band(e, b, nr, 1);
            if (!emit_outliers(e, 16 * b, nr))
                return MACKO_STATUS_ALLOC_FAILED;
        } else {
            for (i = 0; i < nr; i++)
                e->optr[16 * b + i + 1] = (int32_t)(e->ocount < INT32_MAX ? e->ocount : INT32_MAX);
        }
    }
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_mat_create_quant_dense_host(macko_mat_t *A, int64_t rows, int64_t cols, macko_datatype_t type,
                                                 const void *values, int64_t ld, macko_order_t order, int bits,
                                                 macko_outlier_rule_t rule, double param)
{
    static const char fn[] = "macko_mat_create_quant_dense_host";
    char msg[320];
    int64_t bands, tcols, wc, n, K = 0, nnz = 0, br, bc;
    int bad;
    qenc e;
    macko_quant_arrays qa;
    macko_status_t st;
    struct macko_mat_s *m;

    MACKO_CHECK(macko_check_quant_shape(fn, A, rows, cols));
    MACKO_CHECK(macko_check_dense_input(fn, 1, A, rows, cols, type, values, ld, order, NULL));
    MACKO_CHECK(macko_check_quant_bits(fn, 8, bits));
    MACKO_CHECK(macko_check_enum(fn, 9, MACKO_ARG_OUTLIER_RULE, (int)rule));
    n = rows * cols; /* checked: at most 2^56 */
    if (rule == MACKO_OUTLIERS_NONE && param != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10, "param is %g; it must be 0 with MACKO_OUTLIERS_NONE",
                          param);
    if (rule == MACKO_OUTLIERS_FRACTION && !(param >= 0 && param <= 1))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10,
                          "param is %g; it must be in [0, 1] with MACKO_OUTLIERS_FRACTION", param);
    if (rule == MACKO_OUTLIERS_THRESHOLD && !(param >= 0 && isfinite(param)))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10,
                          "param is %g; it must be finite and at least 0 with MACKO_OUTLIERS_THRESHOLD", param);
    if (rule == MACKO_OUTLIERS_FRACTION) {
        const double k = round(param * (double)n);
        K = k >= (double)n ? n : (int64_t)k;
        if (K > INT32_MAX)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10,
                              "param is %g; it selects %" PRId64 " outliers, beyond the 2^31 - 1 of int32 row pointers",
                              param, K);
    }
    if (!macko_quant_sizes(rows, cols, &bands, &tcols, &wc))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3,
                          "rows x cols (%" PRId64 " x %" PRId64 ") needs more than 2^56 words", rows, cols);

    memset(&e, 0, sizeof e);
    e.src.a = (const unsigned char *)values;
    e.src.rows = rows;
    e.src.cols = cols;
    e.src.ld = ld;
    e.src.colmajor = order == MACKO_ORDER_COL;
    e.src.type = type;
    e.src.es = macko_type_size(type);
    if (find_bad_value(&e.src, &br, &bc))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 5,
                          "values: element (%" PRId64 ", %" PRId64 ") is %g; the QUANT kind needs finite values of "
                          "at most 65504 in magnitude",
                          br, bc, value_at(&e.src, elem(&e.src, br, bc)));

    e.tcols = tcols;
    e.words = (uint64_t *)macko_aligned_calloc((size_t)wc * 8);
    e.optr = (int32_t *)macko_aligned_calloc(((size_t)rows + 1) * 4);
    st = e.words != NULL && e.optr != NULL ? encode(&e, bands, rule, param, K) : MACKO_STATUS_ALLOC_FAILED;
    if (st == MACKO_STATUS_SUCCESS && e.ocount > INT32_MAX) {
        qenc_free(&e);
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10,
                          "param is %g; it selects more outliers than the 2^31 - 1 of int32 row pointers", param);
    }
    qa.words = e.words;
    qa.optr = e.optr;
    qa.oent = st == MACKO_STATUS_SUCCESS ? (uint32_t *)macko_aligned_calloc((size_t)e.ocount * 4) : NULL;
    if (qa.oent == NULL) {
        qenc_free(&e);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                          "cannot allocate the encoding or its workspace (%" PRId64 " x %" PRId64 ")", rows, cols);
    }
    if (e.ocount > 0)
        memcpy(qa.oent, e.ov, (size_t)e.ocount * 4);
    e.words = NULL;
    e.optr = NULL;
    qenc_free(&e);
    /* The importer's validation, as a check of the encoder (it never fails) and for nnz. */
    bad = macko_quant_validate(rows, cols, qa.words, e.ocount, qa.optr, qa.oent, &nnz, msg, sizeof msg);
    if (bad != 0) {
        macko_quant_host_free(&qa);
        return macko_fail(MACKO_STATUS_INTERNAL_ERROR, fn, 0, "the encoding is invalid: %s", msg);
    }
    m = macko_quant_mat(rows, cols, nnz, e.ocount, &qa);
    if (m == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    *A = m;
    return macko_ok();
}
