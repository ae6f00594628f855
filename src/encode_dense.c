/* Dense -> MACKO on the host (lapack_style_docs/FORMAT.md "Per row").
 *
 * A row is read 64 columns at a time as a bitmask of its nonzero columns, so the per-element work is a few branch-free
 * vector operations and the per-nonzero work is one ctz. Between consecutive stored columns (or from the row start)
 * a gap of g zero columns gives floor(g/16) padding entries and a delta of g mod 16 for the next entry: this is the
 * "skipped" scan of lapack_style_docs/FORMAT.md in closed form, and trailing zeros never produce anything (trailing
 * padding dropped).
 *
 * Pass 1 counts the entries of every row (exact sizes, one allocation); pass 2 fills the zeroed arrays. Column-major
 * input is read in tiles of 64 x 64: the masks are built along the contiguous columns (one 64-row mask per column),
 * then the 64 x 64 bit matrix is transposed into per-row masks, so both orders share the row scan and the reads stay
 * contiguous; the fill pass reads a tile's values while it is still in L1. Blocks of 256 rows keep each scan state
 * across the column tiles. */
#include "check.h"
#include "encode_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define TILE 64     /* a bit matrix of 64 rows x 64 columns */
#define BLOCK_R 256 /* column-major: rows per block, a multiple of TILE */

/* Nonzero mask of n <= 64 elements of size es (bit i: element i is not +0/-0). Portable; also the tail path. */
static inline uint64_t nz_mask_scalar(const unsigned char *p, int n, int es)
{
    uint64_t m = 0;
    int i;
    /* memcpy: the caller's fp32 data are floats, read here as their bits without breaking aliasing rules */
    if (es == 2) {
        for (i = 0; i < n; i++) {
            uint16_t q;
            memcpy(&q, p + 2 * i, 2);
            m |= (uint64_t)((q & MACKO_H_MAGNITUDE) != 0) << i;
        }
    } else if (es == 4) {
        for (i = 0; i < n; i++) {
            uint32_t q;
            memcpy(&q, p + 4 * i, 4);
            m |= (uint64_t)((q & MACKO_S_MAGNITUDE) != 0) << i;
        }
    } else {
        for (i = 0; i < n; i++) {
            uint64_t q;
            memcpy(&q, p + 8 * i, 8);
            m |= (uint64_t)((q & MACKO_D_MAGNITUDE) != 0) << i;
        }
    }
    return m;
}

/* The same for exactly 64 elements. */
static MACKO_ALWAYS_INLINE uint64_t nz_mask64(const unsigned char *p, int es)
{
#if defined(__SSE2__)
    uint64_t m = 0;
    int i;
    const __m128i zero = _mm_setzero_si128();
    if (es == 2) {
        const __m128i absmask = _mm_set1_epi16((short)MACKO_H_MAGNITUDE);
        for (i = 0; i < 64; i += 16) {
            __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i)), absmask);
            __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i + 16)), absmask);
            __m128i z = _mm_packs_epi16(_mm_cmpeq_epi16(a, zero), _mm_cmpeq_epi16(b, zero));
            m |= (uint64_t)(~(unsigned)_mm_movemask_epi8(z) & 0xFFFFu) << i;
        }
    } else if (es == 4) {
        const __m128i absmask = _mm_set1_epi32((int)MACKO_S_MAGNITUDE);
        for (i = 0; i < 64; i += 16) {
            const unsigned char *q = p + 4 * i;
            __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)q), absmask);
            __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(q + 16)), absmask);
            __m128i c = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(q + 32)), absmask);
            __m128i d = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(q + 48)), absmask);
            __m128i ab = _mm_packs_epi32(_mm_cmpeq_epi32(a, zero), _mm_cmpeq_epi32(b, zero));
            __m128i cd = _mm_packs_epi32(_mm_cmpeq_epi32(c, zero), _mm_cmpeq_epi32(d, zero));
            m |= (uint64_t)(~(unsigned)_mm_movemask_epi8(_mm_packs_epi16(ab, cd)) & 0xFFFFu) << i;
        }
    } else {
        /* fp64: a value is zero when both 32-bit halves of its magnitude are; the halves' compares are combined
         * by shuffling each 64-bit lane's two results together, then packed like the fp32 case. */
        const __m128i absmask = _mm_set_epi32(0x7FFFFFFF, -1, 0x7FFFFFFF, -1);
        for (i = 0; i < 64; i += 16) {
            const unsigned char *q = p + 8 * i;
            __m128i z[4];
            int j;
            for (j = 0; j < 4; j++) {
                __m128i a = _mm_cmpeq_epi32(
                    _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(q + 32 * j)), absmask), zero);
                __m128i b = _mm_cmpeq_epi32(
                    _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(q + 32 * j + 16)), absmask), zero);
                /* lane pairs (0,1) and (2,3) hold one double each: AND them, keep one copy per double */
                a = _mm_and_si128(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
                b = _mm_and_si128(b, _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 3, 0, 1)));
                z[j] = _mm_castps_si128(
                    _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
            }
            m |= (uint64_t)(~(unsigned)_mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(z[0], z[1]),
                                                                         _mm_packs_epi32(z[2], z[3]))) &
                            0xFFFFu)
                 << i;
        }
    }
    return m;
#else
    return nz_mask_scalar(p, 64, es);
#endif
}

/* Does m have a run of >= 16 zero bits strictly between its lowest and highest set bit? (m != 0) */
static inline int has_inner_gap16(uint64_t m)
{
    int lo = macko_ctz64(m), hi = 63 - macko_clz64(m);
    uint64_t z, between;
    if (hi - lo <= 16)
        return 0;
    between = ((~UINT64_C(0)) >> (63 - hi + 1)) & ~((UINT64_C(2) << lo) - 1); /* bits lo+1 .. hi-1 */
    z = ~m & between;
    z &= z >> 1;
    z &= z >> 2;
    z &= z >> 4;
    z &= z >> 8; /* bit i set: bits i..i+15 of ~m all set inside (lo, hi) */
    return z != 0;
}

/* Count pass over one 64-column mask whose bit 0 is column c0. */
static MACKO_ALWAYS_INLINE void count_mask(macko_row_state *s, uint64_t m, int64_t c0)
{
    if (m == 0)
        return;
    if (!has_inner_gap16(m)) {
        /* Only the gap before the first nonzero can hold padding. */
        int64_t first = c0 + macko_ctz64(m);
        s->k += (int64_t)macko_popcount64(m) + ((first - s->prev - 1) >> 4);
        s->prev = c0 + 63 - macko_clz64(m);
        return;
    }
    while (m != 0) {
        int64_t c = c0 + macko_ctz64(m);
        m &= m - 1;
        s->k += 1 + ((c - s->prev - 1) >> 4);
        s->prev = c;
    }
}

/* Fill pass over one 64-column mask; src points at the element of column c0, column c0 + b at src + b*stride. */
static MACKO_ALWAYS_INLINE void fill_mask(macko_row_state *s, uint64_t m, int64_t c0, const unsigned char *src,
                                          int64_t stride, int es, void *vals, uint8_t *deltas)
{
    int64_t k = s->k, prev = s->prev;
    while (m != 0) {
        int b = macko_ctz64(m);
        int64_t c = c0 + b;
        m &= m - 1;
        k = macko_put_gap(deltas, k, c - prev - 1);
        memcpy((unsigned char *)vals + k * es, src + b * stride * es, (size_t)es);
        k++;
        prev = c;
    }
    s->k = k;
    s->prev = prev;
}

/* Scans n contiguous elements of one row starting at column c0. fill == 0: counts entries into s->k; else writes. */
static MACKO_ALWAYS_INLINE void scan_segment(macko_row_state *s, const unsigned char *p, int64_t n, int64_t c0, int es,
                                             int fill, void *vals, uint8_t *deltas, int64_t *nnz)
{
    int64_t j;
    for (j = 0; j < n; j += 64) {
        int w = n - j >= 64 ? 64 : (int)(n - j);
        const unsigned char *q = p + j * es;
        uint64_t m = w == 64 ? nz_mask64(q, es) : nz_mask_scalar(q, w, es);
        if (fill) {
            fill_mask(s, m, c0 + j, q, 1, es, vals, deltas);
        } else {
            *nnz += macko_popcount64(m);
            count_mask(s, m, c0 + j);
        }
    }
}

/* In-place transpose of a 64 x 64 bit matrix: bit j of a[i] <-> bit i of a[j]. */
static void transpose64(uint64_t a[64])
{
    uint64_t m = UINT64_C(0x00000000FFFFFFFF);
    int j, k;
    for (j = 32; j != 0; j >>= 1, m ^= m << j) {
        for (k = 0; k < 64; k = ((k | j) + 1) & ~j) {
            uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
            a[k | j] ^= t;
            a[k] ^= t << j;
        }
    }
}

typedef struct {
    const unsigned char *a; /* the caller's matrix */
    int64_t rows, cols, ld;
    int es, colmajor;
} dense_src;

/* One pass over the whole matrix. fill == 0: rp[r + 1] = entries of row r, *nnz = nonzeros. fill == 1: writes row r
 * from entry rp[r] on. */
static MACKO_ALWAYS_INLINE void dense_pass(const dense_src *d, int fill, const int64_t *rp_in, int64_t *rp_out,
                                           void *vals, uint8_t *deltas, int64_t *nnz)
{
    const int es = d->es;
    macko_row_state st[BLOCK_R];
    uint64_t mk[TILE];
    int64_t r0;
    if (!d->colmajor) {
        for (r0 = 0; r0 < d->rows; r0++) {
            macko_row_state s = {-1, fill ? rp_in[r0] : 0};
            scan_segment(&s, d->a + r0 * d->ld * es, d->cols, 0, es, fill, vals, deltas, nnz);
            if (!fill)
                rp_out[r0 + 1] = s.k;
        }
        return;
    }
    for (r0 = 0; r0 < d->rows; r0 += BLOCK_R) {
        int nb = d->rows - r0 >= BLOCK_R ? BLOCK_R : (int)(d->rows - r0);
        int64_t c0;
        int i, j, s0;
        for (i = 0; i < nb; i++) {
            st[i].prev = -1;
            st[i].k = fill ? rp_in[r0 + i] : 0;
        }
        for (c0 = 0; c0 < d->cols; c0 += TILE) {
            int nc = d->cols - c0 >= TILE ? TILE : (int)(d->cols - c0);
            const unsigned char *t0 = d->a + (c0 * d->ld + r0) * es; /* element (r0, c0) */
#if defined(__GNUC__)
            /* The column segments lie ld apart (usually a page or more), which the hardware prefetcher does not
             * follow: ask for the next tile's segments while this one is scanned. */
            if (c0 + TILE < d->cols) {
                int nn = d->cols - c0 - TILE >= TILE ? TILE : (int)(d->cols - c0 - TILE);
                for (j = 0; j < nn; j++) {
                    const unsigned char *col = t0 + (TILE + j) * d->ld * es;
                    int off;
                    for (off = 0; off < nb * es; off += 64)
                        __builtin_prefetch(col + off);
                }
            }
#endif
            /* 64-row sub-blocks one after another: each column's page is touched BLOCK_R / 64 times in a row. */
            for (s0 = 0; s0 < nb; s0 += TILE) {
                int nr = nb - s0 >= TILE ? TILE : nb - s0;
                const unsigned char *t = t0 + (int64_t)s0 * es; /* element (r0 + s0, c0) */
                for (j = 0; j < nc; j++) {
                    const unsigned char *col = t + j * d->ld * es;
                    mk[j] = nr == TILE ? nz_mask64(col, es) : nz_mask_scalar(col, nr, es);
                }
                for (; j < TILE; j++)
                    mk[j] = 0;
                transpose64(mk); /* mk[i]: row r0 + s0 + i, bit j = column c0 + j */
                for (i = 0; i < nr; i++) {
                    if (fill) {
                        fill_mask(&st[s0 + i], mk[i], c0, t + i * es, d->ld, es, vals, deltas);
                    } else {
                        *nnz += macko_popcount64(mk[i]);
                        count_mask(&st[s0 + i], mk[i], c0);
                    }
                }
            }
        }
        if (!fill)
            for (i = 0; i < nb; i++)
                rp_out[r0 + i + 1] = st[i].k;
    }
}

/* Stamped out per element size so the inner loops see a constant. */
static void dense_pass_h(const dense_src *d, int fill, const int64_t *rp_in, int64_t *rp_out, void *vals,
                         uint8_t *deltas, int64_t *nnz)
{
    dense_src c = *d;
    c.es = 2;
    dense_pass(&c, fill, rp_in, rp_out, vals, deltas, nnz);
}
static void dense_pass_s(const dense_src *d, int fill, const int64_t *rp_in, int64_t *rp_out, void *vals,
                         uint8_t *deltas, int64_t *nnz)
{
    dense_src c = *d;
    c.es = 4;
    dense_pass(&c, fill, rp_in, rp_out, vals, deltas, nnz);
}
static void dense_pass_d(const dense_src *d, int fill, const int64_t *rp_in, int64_t *rp_out, void *vals,
                         uint8_t *deltas, int64_t *nnz)
{
    dense_src c = *d;
    c.es = 8;
    dense_pass(&c, fill, rp_in, rp_out, vals, deltas, nnz);
}
typedef void (*dense_pass_fn)(const dense_src *, int, const int64_t *, int64_t *, void *, uint8_t *, int64_t *);

macko_status_t macko_mat_create_dense_host(macko_mat_t *A, int64_t rows, int64_t cols, macko_datatype_t type,
                                           const void *values, int64_t ld, macko_order_t order)
{
    static const char fn[] = "macko_mat_create_dense_host";
    int64_t total, nnz = 0, i;
    int64_t *rp = NULL;
    struct macko_mat_s *m;
    dense_src src;
    dense_pass_fn pass;
    macko_status_t st;

    MACKO_CHECK(macko_check_dense_input(fn, 1, A, rows, cols, type, values, ld, order, NULL));
    total = rows * cols;

    m = macko_mat_alloc();
    if (m == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    m->rows = rows;
    m->cols = cols;
    m->type = type;
    rp = (int64_t *)calloc((size_t)rows + 1, sizeof *rp);
    src.a = (const unsigned char *)values;
    src.rows = rows;
    src.cols = cols;
    src.ld = ld;
    src.es = (int)macko_type_size(type);
    src.colmajor = order == MACKO_ORDER_COL;
    pass = src.es == 2 ? dense_pass_h : src.es == 4 ? dense_pass_s : dense_pass_d; /* bf16 is fp16's size and zero */
    if (rp == NULL) {
        macko_mat_destroy(m);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory (%" PRId64 " rows)", rows);
    }
    if (total > 0) {
        pass(&src, 0, NULL, rp, NULL, NULL, &nnz);
        for (i = 0; i < rows; i++)
            rp[i + 1] += rp[i];
    }
    m->nnz = nnz;
    m->entries = rp[rows];
    m->entries_padded = macko_round8(m->entries);
    m->rp64 = m->entries >= MACKO_RP32_LIMIT;
    st = macko_host_arrays_alloc(m);
    if (st != MACKO_STATUS_SUCCESS) {
        int64_t entries = m->entries;
        free(rp);
        macko_mat_destroy(m); /* before macko_fail: destroy clears the error details */
        return macko_fail(st, fn, 0, "cannot allocate the encoding (%" PRId64 " rows, %" PRId64 " entries)", rows,
                          entries);
    }
    macko_store_row_ptr(m, rp);
    if (total > 0)
        pass(&src, 1, rp, NULL, m->host.values, m->host.deltas, &nnz);
    free(rp);
    *A = m;
    return macko_ok();
}
