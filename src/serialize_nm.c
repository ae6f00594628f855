/* Format version 3 of the serialized matrix: the N:M kind (lapack_style_docs/file_format.md, "Format version 3").
 * The container (magic, version, header size, checksums, exact length) is serialize.c's; this file holds the
 * version's own header fields and hands the arrays to the N:M importer's validator, which is safe on any content. */
#include "nm_host.h"
#include "serialize_format.h"

#include <string.h>

/* Byte offsets of the header fields of format version 3 (the rest are MACKO_SER_OFF_*). */
enum {
    OFF_KIND = 16,
    OFF_TYPE = 17,
    OFF_N = 18,
    OFF_M = 19,
    OFF_FLAGS = 20,
    OFF_V = 48,
    OFF_KEPT = 56,
    OFF_VALUES_BYTES = 64,
    OFF_POSITIONS_BYTES = 72,
    OFF_ENTRIES = 80
};
/* The payload arrays, in file order (macko_ser_header.bytes); the third is empty. */
enum { A_VALUES = 0, A_POSITIONS = 1, A_NONE = 2 };

int macko_sern_from_matrix(const struct macko_mat_s *m, macko_ser_header *h)
{
    h->version = 3;
    h->kind = MACKO_KIND_NM;
    h->type = (unsigned)m->type;
    h->nm_n = (unsigned)m->nm.n;
    h->nm_m = (unsigned)m->nm.m;
    h->nm_v = m->nm.v;
    h->rows = m->rows;
    h->cols = m->cols;
    h->nnz = m->nnz;
    h->kept = m->nm.kept;
    h->entries = m->entries;
    h->bytes[A_NONE] = 0;
    return macko_mul_i64(m->entries, (int64_t)macko_type_size(m->type), &h->bytes[A_VALUES]) &&
           macko_mul_i64(m->nm.groups, m->nm.kept, &h->bytes[A_POSITIONS]);
}

void macko_sern_pack(const macko_ser_header *h, uint8_t *b)
{
    b[OFF_KIND] = (uint8_t)h->kind;
    b[OFF_TYPE] = (uint8_t)h->type;
    b[OFF_N] = (uint8_t)h->nm_n;
    b[OFF_M] = (uint8_t)h->nm_m;
    macko_ser_put_u32(b + OFF_FLAGS, h->flags);
    macko_ser_put_i64(b + MACKO_SER_OFF_ROWS, h->rows);
    macko_ser_put_i64(b + MACKO_SER_OFF_COLS, h->cols);
    macko_ser_put_i64(b + MACKO_SER_OFF_NNZ, h->nnz);
    macko_ser_put_i64(b + OFF_V, h->nm_v);
    macko_ser_put_i64(b + OFF_KEPT, h->kept);
    macko_ser_put_i64(b + OFF_VALUES_BYTES, h->bytes[A_VALUES]);
    macko_ser_put_i64(b + OFF_POSITIONS_BYTES, h->bytes[A_POSITIONS]);
    macko_ser_put_i64(b + OFF_ENTRIES, h->entries);
}

static int m_ok(unsigned m) { return m == 4 || m == 8 || m == 16 || m == 32; }

macko_status_t macko_sern_check(const char *fn, const uint8_t *b, macko_ser_header *h)
{
    int64_t windows, groups, want;
    h->kind = b[OFF_KIND];
    h->type = b[OFF_TYPE];
    h->nm_n = b[OFF_N];
    h->nm_m = b[OFF_M];
    h->flags = macko_ser_get_u32(b + OFF_FLAGS);
    h->rows = macko_ser_get_i64(b + MACKO_SER_OFF_ROWS);
    h->cols = macko_ser_get_i64(b + MACKO_SER_OFF_COLS);
    h->nnz = macko_ser_get_i64(b + MACKO_SER_OFF_NNZ);
    h->nm_v = macko_ser_get_i64(b + OFF_V);
    h->kept = macko_ser_get_i64(b + OFF_KEPT);
    h->bytes[A_VALUES] = macko_ser_get_i64(b + OFF_VALUES_BYTES);
    h->bytes[A_POSITIONS] = macko_ser_get_i64(b + OFF_POSITIONS_BYTES);
    h->entries = macko_ser_get_i64(b + OFF_ENTRIES);
    h->bytes[A_NONE] = 0;

    if (h->kind == MACKO_KIND_MACKO || h->kind == MACKO_KIND_QUANT)
        return macko_ser_bad_field(fn, "kind", OFF_KIND,
                                   "is %u (%s); format version 3 holds MACKO_KIND_NM (2) only: a %s matrix is format "
                                   "version %d",
                                   h->kind, h->kind == MACKO_KIND_MACKO ? "MACKO_KIND_MACKO" : "MACKO_KIND_QUANT",
                                   h->kind == MACKO_KIND_MACKO ? "MACKO" : "QUANT",
                                   h->kind == MACKO_KIND_MACKO ? 1 : 2);
    if (h->kind != MACKO_KIND_NM)
        return macko_ser_bad_field(fn, "kind", OFF_KIND, "is %u, not a known macko_kind_t", h->kind);
    if (!macko_type_valid((int)h->type))
        return macko_ser_bad_field(fn, "value_type", OFF_TYPE, "is %u, not a known macko_datatype_t", h->type);
    /* m before n, whose bound it is */
    if (!m_ok(h->nm_m))
        return macko_ser_bad_field(fn, "m", OFF_M, "is %u; the supported m are 4, 8, 16 and 32", h->nm_m);
    if (h->nm_n < 1 || h->nm_n > h->nm_m)
        return macko_ser_bad_field(fn, "n", OFF_N, "is %u, outside [1, m = %u]", h->nm_n, h->nm_m);
    if (h->flags != 0)
        return macko_ser_bad_field(fn, "flags", OFF_FLAGS, "is 0x%x; no flags are defined in format version 3",
                                   (unsigned)h->flags);
    if (h->rows < 0 || h->rows > MACKO_MAX_ELEMS)
        return macko_ser_bad_field(fn, "rows", MACKO_SER_OFF_ROWS, "is %lld, outside [0, 2^56]", (long long)h->rows);
    if (h->cols < 0 || h->cols > MACKO_MAX_ELEMS)
        return macko_ser_bad_field(fn, "cols", MACKO_SER_OFF_COLS, "is %lld, outside [0, 2^56]", (long long)h->cols);
    if (!macko_nm_pattern_ok((int)h->nm_n, (int)h->nm_m, h->nm_v >= 1 && h->nm_v <= 32 ? (int)h->nm_v : 0))
        return macko_ser_bad_field(fn, "v", OFF_V, "is %lld; the supported v are 1, 2, 4, 8, 16 and 32",
                                   (long long)h->nm_v);
    windows = h->cols / h->nm_m + (h->cols % h->nm_m != 0);
    want = windows * h->nm_n; /* < 2^57 */
    if (h->kept != want)
        return macko_ser_bad_field(fn, "kept", OFF_KEPT, "is %lld; cols, m and n imply ceil(cols/m)*n = %lld",
                                   (long long)h->kept, (long long)want);
    if (!macko_mul_i64(h->rows, h->kept, &want) || want > MACKO_MAX_ELEMS)
        return macko_ser_bad_field(fn, "entries", OFF_ENTRIES,
                                   "is %lld; rows x kept (%lld x %lld) exceeds the 2^56 value limit",
                                   (long long)h->entries, (long long)h->rows, (long long)h->kept);
    if (h->entries != want)
        return macko_ser_bad_field(fn, "entries", OFF_ENTRIES, "is %lld; rows x kept is %lld", (long long)h->entries,
                                   (long long)want);
    if (h->nnz < 0 || h->nnz > h->entries)
        return macko_ser_bad_field(fn, "nnz", MACKO_SER_OFF_NNZ, "is %lld, outside [0, entries = %lld]",
                                   (long long)h->nnz, (long long)h->entries);
    want = h->entries * (int64_t)macko_type_size((macko_datatype_t)h->type); /* <= 2^59 */
    if (h->bytes[A_VALUES] != want)
        return macko_ser_bad_field(fn, "values_bytes", OFF_VALUES_BYTES, "is %lld; entries and the type imply %lld",
                                   (long long)h->bytes[A_VALUES], (long long)want);
    groups = h->rows / h->nm_v + (h->rows % h->nm_v != 0);
    want = groups * h->kept; /* <= entries */
    if (h->bytes[A_POSITIONS] != want)
        return macko_ser_bad_field(fn, "positions_bytes", OFF_POSITIONS_BYTES,
                                   "is %lld; rows, v and kept imply ceil(rows/v)*kept = %lld",
                                   (long long)h->bytes[A_POSITIONS], (long long)want);
    return MACKO_STATUS_SUCCESS;
}

void macko_sern_arrays(const struct macko_mat_s *m, const macko_ser_header *h, macko_ser_array a[3])
{
    a[A_VALUES].p = m->nm.hvalues;
    a[A_VALUES].es = macko_type_size(m->type);
    a[A_POSITIONS].p = m->nm.hpos;
    a[A_POSITIONS].es = 1;
    a[A_NONE].p = NULL;
    a[A_NONE].es = 1;
    for (int i = 0; i < 3; i++)
        a[i].bytes = h->bytes[i];
}

struct macko_mat_s *macko_sern_matrix(const macko_ser_header *h, macko_status_t *st)
{
    void *hv;
    uint8_t *hp;
    struct macko_mat_s *m;
    *st = macko_nm_host_alloc((macko_datatype_t)h->type, h->entries, h->bytes[A_POSITIONS], &hv, &hp);
    if (*st != MACKO_STATUS_SUCCESS)
        return NULL;
    m = macko_nm_mat(h->rows, h->cols, (macko_datatype_t)h->type, (int)h->nm_n, (int)h->nm_m, (int)h->nm_v, h->nnz,
                     &hv, &hp); /* frees the arrays on failure */
    if (m == NULL)
        *st = MACKO_STATUS_ALLOC_FAILED;
    return m;
}

macko_status_t macko_sern_finish(const char *fn, struct macko_mat_s *m, const macko_ser_header *h)
{
    char msg[320];
    int64_t nnz = -1;
    if (macko_nm_validate(m->rows, m->cols, m->type, m->nm.n, m->nm.m, m->nm.v, m->nm.hvalues, m->nm.hpos, &nnz, msg,
                          sizeof msg) != 0) {
        macko_mat_destroy(m); /* before the error is recorded: destroy clears the error details */
        return macko_ser_bad_data(fn, "the payload is not a valid N:M encoding: %s", msg);
    }
    if (nnz != h->nnz) {
        macko_mat_destroy(m);
        return macko_ser_bad_field(fn, "nnz", MACKO_SER_OFF_NNZ, "is %lld but the payload holds %lld nonzero values",
                                   (long long)h->nnz, (long long)nnz);
    }
    return MACKO_STATUS_SUCCESS;
}
