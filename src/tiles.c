/* The tile layout (tiles.h; lapack_style_docs/FORMAT.md, "Tile layout") from and to the MACKO rows, on the host.
 *
 * Building walks the MACKO rows twice, each row once per pass: the first pass counts the nonzeros of every subtile,
 * which fixes every record's place in the stream, the second writes each value straight to its place. That works
 * because a subtile's values are ordered by bit = 8 * row + column, which is the order in which the rows deliver
 * them. The reverse reads each row of a band out of the band's bitmaps and hands the columns to the encoder's gap
 * writer (macko_put_gap), as macko_mat_create_csr_host does. */
#include "tiles.h"
#include "encode_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* offs are uint32, so the stream holds at most this many 16-byte words. */
#define MAX_WORDS ((int64_t)UINT32_MAX)

/* 16-byte words of the record of a tile holding n values. */
static inline int64_t record_words(int64_t n)
{
    return (MACKO_TILE_HEADER_BYTES + 2 * n + MACKO_TILE_WORD_BYTES - 1) / MACKO_TILE_WORD_BYTES;
}

/* The subtile (0..3) of local row i and local column j of a tile, in the register order of the A fragment of
 * mma.m16n8k16: rows 0-7 / 8-15 of columns 0-7, then of columns 8-15. */
static inline int subtile_of(int64_t i, int64_t j) { return (int)((i >> 3) | ((j >> 3) << 1)); }

static inline uint16_t value16(const void *values, int64_t k)
{
    uint16_t h;
    memcpy(&h, (const unsigned char *)values + 2 * k, 2);
    return h;
}

/* The header's words are little-endian, the byte order of every host CUDA runs on (FORMAT.md), so memcpy. */
static inline uint32_t load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The bitmap of subtile s of a record: its low word at byte 4s, its high word at byte 16 + 4s. */
static inline uint64_t rec_bitmap(const unsigned char *rec, int s)
{
    return (uint64_t)load32(rec + 4 * s) | ((uint64_t)load32(rec + 16 + 4 * s) << 32);
}

/* Writes the header of a record from its four bitmaps. */
static void put_header(unsigned char *rec, const uint64_t bm[4])
{
    int s, before = 0;
    for (s = 0; s < 4; s++) {
        const uint32_t lo = (uint32_t)bm[s], hi = (uint32_t)(bm[s] >> 32);
        memcpy(rec + 4 * s, &lo, 4);
        memcpy(rec + 16 + 4 * s, &hi, 4);
        rec[32 + s] = (unsigned char)before;                               /* <= 192 */
        rec[36 + s] = (unsigned char)(before + macko_popcount64(lo));      /* <= 224 */
        before += macko_popcount64(bm[s]);
    }
}

static inline int is_16bit(macko_datatype_t t) { return t == MACKO_R_16F || t == MACKO_R_16BF; }

static macko_status_t fail_words(const char *fn, int64_t rows, int64_t cols)
{
    return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 0,
                      "the tile layout of this %" PRId64 " x %" PRId64
                      " matrix needs more than 2^32 - 1 16-byte words (its offsets are uint32); use MACKO_LAYOUT_ROWS",
                      rows, cols);
}

/* n elements of size bytes, or 0 when that does not fit size_t (the allocation then fails). */
static size_t array_bytes(int64_t n, size_t size)
{
    return (uint64_t)n > SIZE_MAX / size ? 0 : (size_t)n * size;
}

static void *alloc_array(int64_t n, size_t size)
{
    const size_t b = array_bytes(n, size);
    return b == 0 && n > 0 ? NULL : macko_aligned_calloc(b);
}

int64_t macko_tiles_bytes(int64_t bands, int64_t tcols, int64_t words)
{
    int64_t tiles, a, b;
    if (!macko_mul_i64(bands, tcols, &tiles) || !macko_add_i64(tiles, 1, &tiles) || !macko_mul_i64(tiles, 4, &a) ||
        !macko_mul_i64(words, MACKO_TILE_WORD_BYTES, &b) || !macko_add_i64(a, b, &a))
        return 0;
    return a;
}

void macko_tiles_free(macko_tiles *t)
{
    macko_aligned_free(t->offs);
    macko_aligned_free(t->stream);
    memset(t, 0, sizeof *t);
}

macko_status_t macko_tiles_build_host(const char *fn, const struct macko_mat_s *m, macko_tiles *out)
{
    const void *values = m->host.values;
    const uint8_t *deltas = m->host.deltas;
    int64_t bands, tcols, ntiles, words = 0, r, b, q;
    uint8_t *cnt;           /* nonzeros of each subtile, four per tile */
    uint32_t *offs;
    unsigned char *stream;
    uint64_t *bm;           /* the bitmaps of the band being written */
    int64_t *cur;           /* where the next value of each subtile of the band goes in the stream (bytes) */

    if (m->kind != MACKO_KIND_MACKO || !is_16bit(m->type))
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 0,
                          "the tile layout holds MACKO_KIND_MACKO matrices of type fp16 or bf16 only");
    if (!m->has_host)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "A has no host copy to build the tile layout from");
    bands = (m->rows + 15) >> 4;
    tcols = (m->cols + 15) >> 4;
    /* Every record takes at least its three header words. */
    if (!macko_mul_i64(bands, tcols, &ntiles) || ntiles > MAX_WORDS / 3)
        return fail_words(fn, m->rows, m->cols);

    cnt = (uint8_t *)alloc_array(ntiles, 4);
    offs = (uint32_t *)alloc_array(ntiles + 1, sizeof *offs);
    if (cnt == NULL || offs == NULL) {
        macko_aligned_free(cnt);
        macko_aligned_free(offs);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory for the tile layout (%" PRId64 " tiles)",
                          ntiles);
    }
    for (r = 0; r < m->rows; r++) {
        uint8_t *band = cnt + (r >> 4) * tcols * 4;
        const int64_t i = r & 15, e = macko_rp_get(m->host.row_ptr, m->rp64, r + 1);
        int64_t k, col = -1;
        for (k = macko_rp_get(m->host.row_ptr, m->rp64, r); k < e; k++) {
            col += (int64_t)macko_delta_get(deltas, k) + 1;
            if (value16(values, k) & MACKO_H_MAGNITUDE)
                band[((col >> 4) << 2) + subtile_of(i, col & 15)]++;
        }
    }
    for (q = 0; q < ntiles; q++) {
        const uint8_t *c = cnt + 4 * q;
        offs[q] = (uint32_t)words;
        words += record_words((int64_t)c[0] + c[1] + c[2] + c[3]);
        if (words > MAX_WORDS) {
            macko_aligned_free(cnt);
            macko_aligned_free(offs);
            return fail_words(fn, m->rows, m->cols);
        }
    }
    offs[ntiles] = (uint32_t)words;

    stream = (unsigned char *)alloc_array(words, MACKO_TILE_WORD_BYTES);
    bm = (uint64_t *)alloc_array(tcols, 4 * sizeof *bm);
    cur = (int64_t *)alloc_array(tcols, 4 * sizeof *cur);
    if (stream == NULL || bm == NULL || cur == NULL) {
        macko_aligned_free(cnt);
        macko_aligned_free(offs);
        macko_aligned_free(stream);
        macko_aligned_free(bm);
        macko_aligned_free(cur);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                          "out of host memory for the tile layout (%" PRId64 " bytes)", words * MACKO_TILE_WORD_BYTES);
    }
    for (b = 0; b < bands; b++) {
        const int64_t r1 = 16 * b + 16 < m->rows ? 16 * b + 16 : m->rows;
        int64_t t;
        for (t = 0; t < tcols; t++) {
            const uint8_t *c = cnt + 4 * (b * tcols + t);
            int64_t pos = (int64_t)offs[b * tcols + t] * MACKO_TILE_WORD_BYTES + MACKO_TILE_HEADER_BYTES;
            int s;
            for (s = 0; s < 4; s++) {
                cur[4 * t + s] = pos;
                pos += 2 * (int64_t)c[s];
            }
        }
        memset(bm, 0, (size_t)tcols * 4 * sizeof *bm);
        for (r = 16 * b; r < r1; r++) {
            const int64_t i = r & 15, e = macko_rp_get(m->host.row_ptr, m->rp64, r + 1);
            int64_t k, col = -1;
            for (k = macko_rp_get(m->host.row_ptr, m->rp64, r); k < e; k++) {
                col += (int64_t)macko_delta_get(deltas, k) + 1;
                if (value16(values, k) & MACKO_H_MAGNITUDE) {
                    const int64_t x = ((col >> 4) << 2) + subtile_of(i, col & 15);
                    bm[x] |= UINT64_C(1) << (((i & 7) << 3) | (col & 7));
                    memcpy(stream + cur[x], (const unsigned char *)values + 2 * k, 2);
                    cur[x] += 2;
                }
            }
        }
        for (t = 0; t < tcols; t++)
            put_header(stream + (int64_t)offs[b * tcols + t] * MACKO_TILE_WORD_BYTES, bm + 4 * t);
    }
    macko_aligned_free(cnt);
    macko_aligned_free(bm);
    macko_aligned_free(cur);
    out->bands = bands;
    out->tcols = tcols;
    out->words = words;
    out->offs = offs;
    out->stream = stream;
    return MACKO_STATUS_SUCCESS;
}

/* The bits of subtile s that lie inside a tile whose first rows_in rows and cols_in columns are in the matrix. */
static uint64_t inside_mask(int s, int64_t rows_in, int64_t cols_in)
{
    int64_t ri = rows_in - 8 * (s & 1), cj = cols_in - 8 * (s >> 1);
    uint64_t rm, cm;
    ri = ri < 0 ? 0 : ri > 8 ? 8 : ri;
    cj = cj < 0 ? 0 : cj > 8 ? 8 : cj;
    rm = ri == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * ri)) - 1;
    cm = ((UINT64_C(1) << cj) - 1) * UINT64_C(0x0101010101010101);
    return rm & cm;
}

/* Checks that t is a layout this library writes for a rows x cols matrix, so that the reverse reads only inside its
 * arrays and makes a valid encoding: 0 if so, else 1 with msg filled. */
static int check_layout(const macko_tiles *t, int64_t rows, int64_t cols, char *msg, size_t msg_size)
{
    const unsigned char *stream = (const unsigned char *)t->stream;
    int64_t ntiles, q;
    if (t->bands != (rows + 15) >> 4 || t->tcols != (cols + 15) >> 4 || !macko_mul_i64(t->bands, t->tcols, &ntiles) ||
        t->words < 0 || t->words > MAX_WORDS || t->offs == NULL || (t->words > 0 && stream == NULL)) {
        snprintf(msg, msg_size, "%" PRId64 " x %" PRId64 " tiles of %" PRId64 " words do not fit a %" PRId64
                 " x %" PRId64 " matrix", t->bands, t->tcols, t->words, rows, cols);
        return 1;
    }
    if (t->offs[0] != 0 || (int64_t)t->offs[ntiles] != t->words) {
        snprintf(msg, msg_size, "offs[0] = %" PRIu32 ", offs[%" PRId64 "] = %" PRIu32 " for %" PRId64 " words",
                 t->offs[0], ntiles, t->offs[ntiles], t->words);
        return 1;
    }
    for (q = 0; q < ntiles; q++) {
        const int64_t o = t->offs[q], n = t->offs[q + 1];
        const int64_t rows_in = rows - 16 * (q / t->tcols), cols_in = cols - 16 * (q % t->tcols);
        const unsigned char *rec = stream + o * MACKO_TILE_WORD_BYTES;
        int64_t count = 0, k, end;
        int s;
        if (n < o + 3 || n > t->words) {
            snprintf(msg, msg_size, "tile %" PRId64 ": record words %" PRId64 " .. %" PRId64, q, o, n);
            return 1;
        }
        for (s = 0; s < 4; s++) {
            const uint64_t bits = rec_bitmap(rec, s);
            if (bits & ~inside_mask(s, rows_in, cols_in)) {
                snprintf(msg, msg_size, "tile %" PRId64 ": subtile %d has bits outside the matrix", q, s);
                return 1;
            }
            if (rec[32 + s] != count || rec[36 + s] != count + macko_popcount64(bits & 0xFFFFFFFFu)) {
                snprintf(msg, msg_size, "tile %" PRId64 ": the start counts of subtile %d do not match its bitmap", q, s);
                return 1;
            }
            count += macko_popcount64(bits);
        }
        if (record_words(count) != n - o) {
            snprintf(msg, msg_size, "tile %" PRId64 ": %" PRId64 " values in %" PRId64 " words", q, count, n - o);
            return 1;
        }
        for (k = 0; k < count; k++) {
            if (!(value16(rec + MACKO_TILE_HEADER_BYTES, k) & MACKO_H_MAGNITUDE)) {
                snprintf(msg, msg_size, "tile %" PRId64 ": value %" PRId64 " is zero", q, k);
                return 1;
            }
        }
        end = (n - o) * MACKO_TILE_WORD_BYTES;
        for (k = MACKO_TILE_HEADER_BYTES + 2 * count; k < end; k++) {
            if (rec[k] != 0) {
                snprintf(msg, msg_size, "tile %" PRId64 ": padding byte %" PRId64 " is not zero", q, k);
                return 1;
            }
        }
    }
    return 0;
}

/* Row i (0..15) of a tile record: its nonzero columns as a 16-bit mask (bit j: local column j), and where in the
 * record its values start, for columns 0-7 (base[0]) and 8-15 (base[1]), in values from the end of the header. */
static inline unsigned tile_row(const unsigned char *rec, int64_t i, int64_t base[2])
{
    const int sh = (int)(i & 7) << 3;
    const int lo = (int)(i >> 3), hi = 2 + lo;
    uint64_t bm[4];
    int64_t first[4];
    int s;
    for (s = 0; s < 4; s++)
        bm[s] = rec_bitmap(rec, s);
    first[0] = 0;
    for (s = 1; s < 4; s++)
        first[s] = first[s - 1] + macko_popcount64(bm[s - 1]);
    /* sh <= 56: the shifts stay below 64 */
    base[0] = first[lo] + macko_popcount64(bm[lo] & ((UINT64_C(1) << sh) - 1));
    base[1] = first[hi] + macko_popcount64(bm[hi] & ((UINT64_C(1) << sh) - 1));
    return (unsigned)((bm[lo] >> sh) & 0xFF) | (unsigned)(((bm[hi] >> sh) & 0xFF) << 8);
}

macko_status_t macko_tiles_to_macko_host(const char *fn, const macko_tiles *t, struct macko_mat_s *m)
{
    const unsigned char *stream = (const unsigned char *)t->stream;
    char msg[256];
    struct macko_mat_s tmp;
    int64_t *rp, r, entries = 0, nz = 0;
    size_t rp_bytes;
    macko_status_t st;

    if (m->kind != MACKO_KIND_MACKO || !is_16bit(m->type))
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 0,
                          "the tile layout holds MACKO_KIND_MACKO matrices of type fp16 or bf16 only");
    if (check_layout(t, m->rows, m->cols, msg, sizeof msg) != 0)
        return macko_fail(MACKO_STATUS_INTERNAL_ERROR, fn, 0, "the tile layout read back is corrupt: %s", msg);
    rp_bytes = array_bytes(m->rows + 1, sizeof *rp); /* 0 only on overflow: then no malloc(0) */
    rp = rp_bytes != 0 ? (int64_t *)malloc(rp_bytes) : NULL;
    if (rp == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    for (r = 0; r < m->rows; r++) {
        int64_t tc, prev = -1;
        rp[r] = entries;
        for (tc = 0; tc < t->tcols; tc++) {
            int64_t base[2];
            const int64_t q = (r >> 4) * t->tcols + tc;
            unsigned cols16 = tile_row(stream + (int64_t)t->offs[q] * MACKO_TILE_WORD_BYTES, r & 15, base);
            while (cols16 != 0) {
                const int64_t c = 16 * tc + macko_ctz64(cols16);
                entries += 1 + ((c - prev - 1) >> 4);
                prev = c;
                nz++;
                cols16 &= cols16 - 1;
            }
        }
    }
    rp[m->rows] = entries;

    memset(&tmp, 0, sizeof tmp);
    tmp.kind = MACKO_KIND_MACKO;
    tmp.rows = m->rows;
    tmp.cols = m->cols;
    tmp.type = m->type;
    tmp.entries = entries;
    tmp.entries_padded = macko_round8(entries);
    tmp.rp64 = entries >= MACKO_RP32_LIMIT;
    st = macko_host_arrays_alloc(&tmp);
    if (st != MACKO_STATUS_SUCCESS) {
        free(rp);
        return macko_fail(st, fn, 0, "cannot allocate the encoding (%" PRId64 " entries)", entries);
    }
    for (r = 0; r < m->rows; r++) {
        int64_t tc, prev = -1, out = rp[r];
        for (tc = 0; tc < t->tcols; tc++) {
            int64_t base[2];
            const int64_t q = (r >> 4) * t->tcols + tc;
            const unsigned char *rec = stream + (int64_t)t->offs[q] * MACKO_TILE_WORD_BYTES;
            const unsigned char *vals = rec + MACKO_TILE_HEADER_BYTES;
            unsigned cols16 = tile_row(rec, r & 15, base);
            while (cols16 != 0) {
                const int j = macko_ctz64(cols16);
                const int64_t c = 16 * tc + j;
                out = macko_put_gap(tmp.host.deltas, out, c - prev - 1);
                memcpy((unsigned char *)tmp.host.values + 2 * out, vals + 2 * base[j >> 3]++, 2);
                out++;
                prev = c;
                cols16 &= cols16 - 1;
            }
        }
    }
    macko_store_row_ptr(&tmp, rp);
    free(rp);
    macko_host_arrays_free(m);
    m->host = tmp.host;
    m->has_host = 1;
    m->nnz = nz;
    m->entries = entries;
    m->entries_padded = tmp.entries_padded;
    m->rp64 = tmp.rp64;
    return MACKO_STATUS_SUCCESS;
}
