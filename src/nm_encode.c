/* Dense -> N:M on the host (lapack_style_docs/FORMAT_NM.md, "Encoding a dense matrix").
 *
 * One pass over the input (in its storage order) makes a bitmask of the nonzero columns of every row and every 32
 * columns: windows of M = 4, 8, 16 are aligned pieces of those words, so every pattern is judged from them. The
 * union of a group of V rows is the OR of its rows' masks; detection builds the unions of V = 2, 4, ... 32 each from
 * the previous level (two groups of V rows make one of 2V) and keeps, per (M, V), the largest count of a window. The
 * encoding then takes each group's window union, fills it up with the smallest free positions, and gathers the
 * values (row by row for row-major input, in blocks of 64 rows window by window for column-major input). */
#include "check.h"
#include "encode_common.h"
#include "nm_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Rows per block of the value gathering from column-major input: the block's column segments stay in cache. */
#define GATHER_ROWS 64

static const int kM[4] = {4, 8, 16, 32};
static const int kV[6] = {1, 2, 4, 8, 16, 32};

typedef struct {
    const unsigned char *a; /* the caller's matrix */
    int64_t rows, cols, ld;
    int colmajor;
    size_t es;
    int64_t wq;      /* 32-column mask words per row: ceil(cols / 32) */
    uint32_t *masks; /* wq * rows: masks[q * rows + r] holds bit b for a nonzero at (r, 32q + b) */
} nsrc;

static const unsigned char *elem(const nsrc *s, int64_t r, int64_t c)
{
    return s->a + (size_t)(s->colmajor ? c * s->ld + r : r * s->ld + c) * s->es;
}

/* +0 and -0 are zero; NaN, Inf and subnormals are not. */
static MACKO_ALWAYS_INLINE uint32_t nonzero(const unsigned char *p, size_t es)
{
    if (es == 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        return (h & 0x7FFFu) != 0;
    }
    if (es == 4) {
        uint32_t f;
        memcpy(&f, p, 4);
        return (f & 0x7FFFFFFFu) != 0;
    }
    {
        uint64_t d;
        memcpy(&d, p, 8);
        return (d & UINT64_C(0x7FFFFFFFFFFFFFFF)) != 0;
    }
}

/* Fills s->masks (zeroed) from the input, written once per element size. */
static MACKO_ALWAYS_INLINE void build_masks_es(const nsrc *s, size_t es)
{
    const int64_t rows = s->rows, cols = s->cols;
    int64_t r, c, q;
    if (!s->colmajor) {
        for (r = 0; r < rows; r++) {
            const unsigned char *row = s->a + (size_t)(r * s->ld) * es;
            for (q = 0; q < s->wq; q++) {
                const int64_t c0 = 32 * q, c1 = c0 + 32 < cols ? c0 + 32 : cols;
                uint32_t x = 0;
                for (c = c0; c < c1; c++)
                    x |= nonzero(row + (size_t)c * es, es) << (c - c0);
                s->masks[q * rows + r] = x;
            }
        }
        return;
    }
    for (c = 0; c < cols; c++) {
        const unsigned char *col = s->a + (size_t)(c * s->ld) * es;
        uint32_t *mw = s->masks + (c >> 5) * rows;
        const int b = (int)(c & 31);
        for (r = 0; r < rows; r++)
            mw[r] |= nonzero(col + (size_t)r * es, es) << b;
    }
}

static void build_masks(const nsrc *s)
{
    switch (s->es) {
    case 2: build_masks_es(s, 2); break;
    case 4: build_masks_es(s, 4); break;
    default: build_masks_es(s, 8); break;
    }
}

static int imax(int a, int b) { return a > b ? a : b; }

/* Raises need[0..3] (M = 4, 8, 16, 32) to the largest count of a window of that width inside the word x. */
static void word_maxima(uint32_t x, int need[4])
{
    const uint32_t t2 = x - ((x >> 1) & 0x55555555u);
    const uint32_t t4 = (t2 & 0x33333333u) + ((t2 >> 2) & 0x33333333u); /* nibble counts */
    const uint32_t t8 = (t4 + (t4 >> 4)) & 0x0F0F0F0Fu;                  /* byte counts */
    const uint32_t t16 = (t8 + (t8 >> 8)) & 0x00FF00FFu;                 /* half-word counts */
    const int c32 = (int)((t16 + (t16 >> 16)) & 0xFFu);
    int i, c;
    /* A window's count is at most its word's, and need[0] <= need[1] <= ... (windows nest): nothing can rise. */
    if (c32 <= need[0])
        return;
    need[3] = imax(need[3], c32);
    need[2] = imax(need[2], imax((int)(t16 & 0xFFu), (int)(t16 >> 16)));
    for (i = 0, c = 0; i < 4; i++)
        c = imax(c, (int)((t8 >> (8 * i)) & 0xFFu));
    need[1] = imax(need[1], c);
    for (i = 0, c = 0; i < 8; i++)
        c = imax(c, (int)((t4 >> (4 * i)) & 0xFu));
    need[0] = imax(need[0], c);
}

/* need[mi][vi]: the largest count of nonzero columns of a window of kM[mi] columns over a group of kV[vi] rows, for
 * the levels vi <= top. The unions of V = 2, 4, ... are built in buf (wq * ceil(rows / 2) words). */
static void detect_needs(const nsrc *s, int top, uint32_t *buf, int need[4][6])
{
    const int64_t rows = s->rows, stride = (rows + 1) / 2;
    int64_t groups = rows, q, g;
    int vi;
    memset(need, 0, sizeof(int) * 4 * 6);
    for (vi = 0; vi <= top; vi++) {
        const uint32_t *lvl = vi == 0 ? s->masks : buf;
        const int64_t ls = vi == 0 ? rows : stride;
        int nd[4] = {0, 0, 0, 0}, i;
        if (vi > 0) {
            /* group g of 2V rows = groups 2g and 2g + 1 of V rows; in place: g <= 2g is read before it is written */
            const int64_t ng = (groups + 1) / 2;
            for (q = 0; q < s->wq; q++) {
                const uint32_t *src = (vi == 1 ? s->masks + q * rows : buf + q * stride);
                uint32_t *dst = buf + q * stride;
                for (g = 0; g < ng; g++)
                    dst[g] = src[2 * g] | (2 * g + 1 < groups ? src[2 * g + 1] : 0u);
            }
            groups = ng;
        }
        for (q = 0; q < s->wq; q++)
            for (g = 0; g < groups; g++)
                word_maxima(lvl[q * ls + g], nd);
        for (i = 0; i < 4; i++)
            need[i][vi] = nd[i];
    }
}

/* The mask of window w (of M columns) of row r. */
static uint32_t window_mask(const nsrc *s, int M, int64_t r, int64_t w)
{
    const int64_t c0 = w * M;
    const uint32_t x = s->masks[(c0 >> 5) * s->rows + r] >> (c0 & 31);
    return M == 32 ? x : x & ((1u << M) - 1u);
}

/* The union of window w over rows [r0, r1). */
static uint32_t group_mask(const nsrc *s, int M, int64_t r0, int64_t r1, int64_t w)
{
    uint32_t u = 0;
    int64_t r;
    for (r = r0; r < r1; r++)
        u |= window_mask(s, M, r, w);
    return u;
}

static int popcount32(uint32_t x) { return macko_popcount64(x); }

/* The first window (groups in order, windows in order) whose group union exceeds n columns: 1 with the group's first
 * row g0, the row at which the running union first exceeds n and that union's count; 0 when every window fits. */
static int find_offence(const nsrc *s, int n, int M, int V, int64_t *g0, int64_t *row, int64_t *win, int *count)
{
    const int64_t windows = (s->cols + M - 1) / M;
    int64_t r0, w, r;
    for (r0 = 0; r0 < s->rows; r0 += V) {
        const int64_t r1 = r0 + V < s->rows ? r0 + V : s->rows;
        for (w = 0; w < windows; w++) {
            uint32_t u = 0;
            if (popcount32(group_mask(s, M, r0, r1, w)) <= n)
                continue;
            for (r = r0; popcount32(u |= window_mask(s, M, r, w)) <= n; r++)
                ;
            *g0 = r0;
            *row = r;
            *win = w;
            *count = popcount32(u);
            return 1;
        }
    }
    return 0;
}

/* The refusal of the pattern (n, M, V) at its first offending window; detected: no supported (m, v) holds the given
 * n, and (M, V) is the most permissive of them. */
static macko_status_t refuse(const char *fn, int pos_values, const nsrc *s, int n, int M, int V, int detected)
{
    int64_t g0 = 0, row = 0, w = 0, c1;
    int count = 0;
    if (!find_offence(s, n, M, V, &g0, &row, &w, &count))
        return macko_fail(MACKO_STATUS_INTERNAL_ERROR, fn, 0, "the pattern %d:%d (v = %d) was refused without cause",
                          n, M, V);
    c1 = w * M + M - 1 < s->cols ? w * M + M - 1 : s->cols - 1;
    return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos_values,
                      "values: row %" PRId64 ", window %" PRId64 " (columns %" PRId64 "..%" PRId64
                      "): rows %" PRId64 "..%" PRId64 " hold nonzeros in %d columns of the window; the pattern %d:%d "
                      "with v = %d keeps %d%s",
                      row, w, w * M, c1, g0, row, count, n, M, V, n,
                      detected ? " (the most permissive supported pattern with this n; none holds the matrix)" : "");
}

/* Chooses the pattern: the given values, the others detected (FORMAT_NM.md, "Detection"). Returns SUCCESS with
 * (*pn, *pm, *pv); the refusal when the given n is too small for every allowed (m, v); INVALID_VALUE (cols) when no
 * allowed pattern's arrays fit 2^56 values. */
static macko_status_t choose(const char *fn, int pos, const nsrc *s, int n, int m, int v, int *pn, int *pm, int *pv)
{
    const int64_t es = (int64_t)s->es;
    int need[4][6];
    int top = 5, mi, vi, found = 0, fits_count = 0, loose_m = 0;
    int64_t best = 0;
    uint32_t *buf;
    if (n != 0 && m != 0 && v != 0) {
        int64_t g0, row, w;
        int count;
        *pn = n;
        *pm = m;
        *pv = v;
        return find_offence(s, n, m, v, &g0, &row, &w, &count) ? refuse(fn, pos + 4, s, n, m, v, 0)
                                                                : MACKO_STATUS_SUCCESS;
    }
    if (v != 0)
        for (top = 0; kV[top] != v; top++)
            ;
    buf = top > 0 ? (uint32_t *)macko_aligned_calloc((size_t)(s->wq * ((s->rows + 1) / 2)) * 4) : NULL;
    if (top > 0 && buf == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                          "cannot allocate the detection's workspace (%" PRId64 " x %" PRId64 ")", s->rows, s->cols);
    detect_needs(s, top, buf, need);
    macko_aligned_free(buf);
    /* the larger M first, then the larger V: a tie keeps the first found */
    for (mi = 3; mi >= 0; mi--) {
        if ((m != 0 && kM[mi] != m) || n > kM[mi])
            continue;
        for (vi = 5; vi >= 0; vi--) {
            const int N = n != 0 ? n : imax(1, need[mi][vi]);
            int64_t nv, np, bytes;
            if ((v != 0 && kV[vi] != v) || need[mi][vi] > N)
                continue;
            fits_count = 1;
            if (!macko_nm_sizes(s->rows, s->cols, N, kM[mi], kV[vi], NULL, NULL, NULL, &nv, &np))
                continue;
            bytes = nv * es + np;
            if (!found || bytes < best) {
                found = 1;
                best = bytes;
                *pn = N;
                *pm = kM[mi];
                *pv = kV[vi];
            }
        }
    }
    if (found)
        return MACKO_STATUS_SUCCESS;
    if (fits_count)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos + 2,
                          "rows x cols (%" PRId64 " x %" PRId64 ") needs more than 2^56 values with every pattern "
                          "that holds it",
                          s->rows, s->cols);
    for (loose_m = m; loose_m == 0 || loose_m < n; loose_m = loose_m == 0 ? 4 : 2 * loose_m)
        ;
    return refuse(fn, pos + 4, s, n, loose_m, v != 0 ? v : 1, 1);
}

/* Positions of every group and window: the union's columns and the smallest free positions up to n, ascending. */
static void fill_positions(const nsrc *s, int n, int M, int V, int64_t kept, uint8_t *hpos)
{
    const int64_t windows = (s->cols + M - 1) / M;
    const uint32_t full = M == 32 ? 0xFFFFFFFFu : (1u << M) - 1u;
    int64_t r0, w;
    for (r0 = 0; r0 < s->rows; r0 += V) {
        const int64_t r1 = r0 + V < s->rows ? r0 + V : s->rows;
        uint8_t *p = hpos + (r0 / V) * kept;
        for (w = 0; w < windows; w++) {
            uint32_t sel = group_mask(s, M, r0, r1, w), free = ~sel & full;
            int k = popcount32(sel), j = 0;
            for (; k < n; k++) {
                const uint32_t low = free & (0u - free);
                sel |= low;
                free ^= low;
            }
            while (sel != 0) {
                p[w * n + j++] = (uint8_t)macko_ctz64(sel);
                sel &= sel - 1;
            }
        }
    }
}

/* The values at the kept positions, nonzeros bit for bit (the arrays are zeroed: every zero is +0). */
static void gather_values(const nsrc *s, int n, int M, int V, int64_t kept, const uint8_t *hpos, unsigned char *hv)
{
    const int64_t windows = (s->cols + M - 1) / M, block = s->colmajor ? GATHER_ROWS : 1;
    const size_t es = s->es;
    int64_t r0, r, w;
    for (r0 = 0; r0 < s->rows; r0 += block) {
        const int64_t r1 = r0 + block < s->rows ? r0 + block : s->rows;
        for (w = 0; w < windows; w++) {
            for (r = r0; r < r1; r++) {
                const uint8_t *p = hpos + (r / V) * kept + w * n;
                unsigned char *out = hv + (size_t)(r * kept + w * n) * es;
                int j;
                for (j = 0; j < n; j++) {
                    const int64_t c = w * M + p[j];
                    const unsigned char *src;
                    if (c >= s->cols)
                        break; /* ascending: the rest are past cols too */
                    src = elem(s, r, c);
                    if (nonzero(src, es))
                        memcpy(out + (size_t)j * es, src, es);
                }
            }
        }
    }
}

macko_status_t macko_nm_encode_dense(const char *fn, int pos, struct macko_mat_s **out, int64_t rows, int64_t cols,
                                     macko_datatype_t type, const void *values, int64_t ld, int colmajor, int n,
                                     int m, int v)
{
    nsrc s;
    int64_t nv, np, kept, nnz = 0, i;
    void *hv = NULL;
    uint8_t *hp = NULL;
    struct macko_mat_s *A;
    macko_status_t st;

    memset(&s, 0, sizeof s);
    s.a = (const unsigned char *)values;
    s.rows = rows;
    s.cols = cols;
    s.ld = ld;
    s.colmajor = colmajor;
    s.es = macko_type_size(type);
    s.wq = (cols + 31) / 32;
    /* rows * wq <= rows * cols / 32 + rows <= 2^57: no overflow */
    if ((uint64_t)(rows * s.wq) > SIZE_MAX / 4)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "cannot allocate the column masks");
    s.masks = (uint32_t *)macko_aligned_calloc((size_t)(rows * s.wq) * 4);
    if (s.masks == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                          "cannot allocate the column masks (%" PRId64 " x %" PRId64 ")", rows, cols);
    build_masks(&s);
    st = choose(fn, pos, &s, n, m, v, &n, &m, &v);
    if (st != MACKO_STATUS_SUCCESS) {
        macko_aligned_free(s.masks);
        return st;
    }
    if (!macko_nm_sizes(rows, cols, n, m, v, NULL, NULL, &kept, &nv, &np)) {
        macko_aligned_free(s.masks);
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos + 2,
                          "rows x cols (%" PRId64 " x %" PRId64 ") with the pattern %d:%d needs more than 2^56 values",
                          rows, cols, n, m);
    }
    if (macko_nm_host_alloc(type, nv, np, &hv, &hp) != MACKO_STATUS_SUCCESS) {
        macko_aligned_free(s.masks);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                          "cannot allocate the encoding (%" PRId64 " values, %" PRId64 " positions)", nv, np);
    }
    fill_positions(&s, n, m, v, kept, hp);
    gather_values(&s, n, m, v, kept, hp, (unsigned char *)hv);
    for (i = 0; i < rows * s.wq; i++)
        nnz += popcount32(s.masks[i]);
    macko_aligned_free(s.masks);
    A = macko_nm_mat(rows, cols, type, n, m, v, nnz, &hv, &hp);
    if (A == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    *out = A;
    return macko_ok();
}

macko_status_t macko_mat_create_nm_dense_host(macko_mat_t *A, int64_t rows, int64_t cols, macko_datatype_t type,
                                              const void *values, int64_t ld, macko_order_t order, int n, int m,
                                              int v)
{
    static const char fn[] = "macko_mat_create_nm_dense_host";
    MACKO_CHECK(macko_check_dense_input(fn, 1, A, rows, cols, type, values, ld, order, NULL));
    MACKO_CHECK(macko_check_nm_pattern(fn, 8, n, m, v, 1));
    return macko_nm_encode_dense(fn, 1, A, rows, cols, type, values, ld, order == MACKO_ORDER_COL, n, m, v);
}
