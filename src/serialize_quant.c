/* Format version 2 of the serialized matrix: the QUANT kind (lapack_style_docs/file_format.md, "Format version 2").
 * The container (magic, version, header size, checksums, exact length) is serialize.c's; this file holds the
 * version's own header fields and hands the arrays to the QUANT importer's validator, which is safe on any content. */
#include "quant.h"
#include "quant_host.h"
#include "serialize_format.h"

#include <string.h>

/* Byte offsets of the header fields of format version 2 (the rest are MACKO_SER_OFF_*). */
enum {
    OFF_KIND = 16,
    OFF_TYPE = 17,
    OFF_WEIGHT_BITS = 18,
    OFF_GROUP_SIZE = 19,
    OFF_FLAGS = 20,
    OFF_OUTLIERS = 48,
    OFF_WORDS_COUNT = 56,
    OFF_WORDS_BYTES = 64,
    OFF_OPTR_BYTES = 72,
    OFF_OENT_BYTES = 80
};
/* The payload arrays, in file order (macko_ser_header.bytes). */
enum { A_WORDS = 0, A_OPTR = 1, A_OENT = 2 };

int macko_serq_from_matrix(const struct macko_mat_s *m, macko_ser_header *h)
{
    h->version = 2;
    h->kind = MACKO_KIND_QUANT;
    h->type = MACKO_R_16F;
    h->weight_bits = (unsigned)m->q.bits;
    h->group_size = MACKO_QUANT_GROUP;
    h->rows = m->rows;
    h->cols = m->cols;
    h->nnz = m->nnz;
    h->outliers = m->q.outliers;
    h->words_count = m->q.words_count;
    return macko_mul_i64(m->q.words_count, 8, &h->bytes[A_WORDS]) &&
           macko_mul_i64(m->rows + 1, 4, &h->bytes[A_OPTR]) && macko_mul_i64(m->q.outliers, 4, &h->bytes[A_OENT]);
}

void macko_serq_pack(const macko_ser_header *h, uint8_t *b)
{
    b[OFF_KIND] = (uint8_t)h->kind;
    b[OFF_TYPE] = (uint8_t)h->type;
    b[OFF_WEIGHT_BITS] = (uint8_t)h->weight_bits;
    b[OFF_GROUP_SIZE] = (uint8_t)h->group_size;
    macko_ser_put_u32(b + OFF_FLAGS, h->flags);
    macko_ser_put_i64(b + MACKO_SER_OFF_ROWS, h->rows);
    macko_ser_put_i64(b + MACKO_SER_OFF_COLS, h->cols);
    macko_ser_put_i64(b + MACKO_SER_OFF_NNZ, h->nnz);
    macko_ser_put_i64(b + OFF_OUTLIERS, h->outliers);
    macko_ser_put_i64(b + OFF_WORDS_COUNT, h->words_count);
    macko_ser_put_i64(b + OFF_WORDS_BYTES, h->bytes[A_WORDS]);
    macko_ser_put_i64(b + OFF_OPTR_BYTES, h->bytes[A_OPTR]);
    macko_ser_put_i64(b + OFF_OENT_BYTES, h->bytes[A_OENT]);
}

macko_status_t macko_serq_check(const char *fn, const uint8_t *b, macko_ser_header *h)
{
    int64_t cells, bands, tcols, want;
    int cells_known;
    h->kind = b[OFF_KIND];
    h->type = b[OFF_TYPE];
    h->weight_bits = b[OFF_WEIGHT_BITS];
    h->group_size = b[OFF_GROUP_SIZE];
    h->flags = macko_ser_get_u32(b + OFF_FLAGS);
    h->rows = macko_ser_get_i64(b + MACKO_SER_OFF_ROWS);
    h->cols = macko_ser_get_i64(b + MACKO_SER_OFF_COLS);
    h->nnz = macko_ser_get_i64(b + MACKO_SER_OFF_NNZ);
    h->outliers = macko_ser_get_i64(b + OFF_OUTLIERS);
    h->words_count = macko_ser_get_i64(b + OFF_WORDS_COUNT);
    h->bytes[A_WORDS] = macko_ser_get_i64(b + OFF_WORDS_BYTES);
    h->bytes[A_OPTR] = macko_ser_get_i64(b + OFF_OPTR_BYTES);
    h->bytes[A_OENT] = macko_ser_get_i64(b + OFF_OENT_BYTES);

    if (h->kind == MACKO_KIND_MACKO)
        return macko_ser_bad_field(fn, "kind", OFF_KIND,
                                   "is 0 (MACKO_KIND_MACKO); format version 2 holds MACKO_KIND_QUANT (1) only: a "
                                   "MACKO matrix is format version 1");
    if (h->kind == MACKO_KIND_NM)
        return macko_ser_bad_field(fn, "kind", OFF_KIND,
                                   "is 2 (MACKO_KIND_NM); format version 2 holds MACKO_KIND_QUANT (1) only: an N:M "
                                   "matrix is format version 3");
    if (h->kind != MACKO_KIND_QUANT)
        return macko_ser_bad_field(fn, "kind", OFF_KIND, "is %u, not a known macko_kind_t", h->kind);
    if (h->type != MACKO_R_16F)
        return macko_ser_bad_field(fn, "value_type", OFF_TYPE, "is %u; a QUANT matrix has value type MACKO_R_16F (%d)",
                                   h->type, (int)MACKO_R_16F);
    if (h->weight_bits != MACKO_QUANT_BITS)
        return macko_ser_bad_field(fn, "weight_bits", OFF_WEIGHT_BITS, "is %u; only %d-bit weights exist",
                                   h->weight_bits, MACKO_QUANT_BITS);
    if (h->group_size != MACKO_QUANT_GROUP)
        return macko_ser_bad_field(fn, "group_size", OFF_GROUP_SIZE, "is %u; only groups of %d exist", h->group_size,
                                   MACKO_QUANT_GROUP);
    if (h->flags != 0)
        return macko_ser_bad_field(fn, "flags", OFF_FLAGS, "is 0x%x; no flags are defined in format version 2",
                                   (unsigned)h->flags);
    if (h->rows < 0 || h->rows > MACKO_MAX_ELEMS)
        return macko_ser_bad_field(fn, "rows", MACKO_SER_OFF_ROWS, "is %lld, outside [0, 2^56]", (long long)h->rows);
    if (h->cols < 0 || h->cols > MACKO_QUANT_MAX_COLS)
        return macko_ser_bad_field(fn, "cols", MACKO_SER_OFF_COLS, "is %lld, outside [0, %d]", (long long)h->cols,
                                   MACKO_QUANT_MAX_COLS);
    /* rows x cols may exceed int64 (2^56 x 2^16): then it bounds nothing that fits in the field */
    cells_known = macko_mul_i64(h->rows, h->cols, &cells);
    if (h->nnz < 0)
        return macko_ser_bad_field(fn, "nnz", MACKO_SER_OFF_NNZ, "is %lld, negative", (long long)h->nnz);
    if (cells_known && h->nnz > cells)
        return macko_ser_bad_field(fn, "nnz", MACKO_SER_OFF_NNZ, "is %lld, more than rows x cols = %lld",
                                   (long long)h->nnz, (long long)cells);
    want = cells_known && cells < INT32_MAX ? cells : INT32_MAX;
    if (h->outliers < 0 || h->outliers > want)
        return macko_ser_bad_field(fn, "outliers", OFF_OUTLIERS,
                                   "is %lld, outside [0, min(rows x cols, 2^31 - 1) = %lld]", (long long)h->outliers,
                                   (long long)want);
    if (!macko_quant_sizes(h->rows, h->cols, &bands, &tcols, &want))
        return macko_ser_bad_field(fn, "words_count", OFF_WORDS_COUNT,
                                   "is %lld; rows x cols (%lld x %lld) would need more than 2^56 words",
                                   (long long)h->words_count, (long long)h->rows, (long long)h->cols);
    if (h->words_count != want)
        return macko_ser_bad_field(fn, "words_count", OFF_WORDS_COUNT,
                                   "is %lld; rows and cols imply 16*ceil(rows/16)*ceil(cols/16) = %lld",
                                   (long long)h->words_count, (long long)want);
    want = 8 * h->words_count; /* <= 2^59 */
    if (h->bytes[A_WORDS] != want)
        return macko_ser_bad_field(fn, "words_bytes", OFF_WORDS_BYTES, "is %lld; words_count implies %lld",
                                   (long long)h->bytes[A_WORDS], (long long)want);
    want = 4 * (h->rows + 1); /* <= 2^58 + 4 */
    if (h->bytes[A_OPTR] != want)
        return macko_ser_bad_field(fn, "outlier_row_ptr_bytes", OFF_OPTR_BYTES, "is %lld; rows implies %lld",
                                   (long long)h->bytes[A_OPTR], (long long)want);
    want = 4 * h->outliers;
    if (h->bytes[A_OENT] != want)
        return macko_ser_bad_field(fn, "outlier_entries_bytes", OFF_OENT_BYTES, "is %lld; outliers implies %lld",
                                   (long long)h->bytes[A_OENT], (long long)want);
    return MACKO_STATUS_SUCCESS;
}

void macko_serq_arrays(const struct macko_mat_s *m, const macko_ser_header *h, macko_ser_array a[3])
{
    a[A_WORDS].p = m->q.host.words;
    a[A_WORDS].es = 8;
    a[A_OPTR].p = m->q.host.optr;
    a[A_OPTR].es = 4;
    a[A_OENT].p = m->q.host.oent;
    a[A_OENT].es = 4;
    for (int i = 0; i < 3; i++)
        a[i].bytes = h->bytes[i];
}

struct macko_mat_s *macko_serq_matrix(const macko_ser_header *h, macko_status_t *st)
{
    macko_quant_arrays qa;
    struct macko_mat_s *m;
    *st = macko_quant_host_alloc(h->rows, h->words_count, h->outliers, &qa);
    if (*st != MACKO_STATUS_SUCCESS)
        return NULL;
    m = macko_quant_mat(h->rows, h->cols, h->nnz, h->outliers, &qa); /* frees qa on failure */
    if (m == NULL)
        *st = MACKO_STATUS_ALLOC_FAILED;
    return m;
}

macko_status_t macko_serq_finish(const char *fn, struct macko_mat_s *m, const macko_ser_header *h)
{
    char msg[320];
    int64_t nnz = -1;
    if (macko_quant_validate(m->rows, m->cols, m->q.host.words, m->q.outliers, m->q.host.optr, m->q.host.oent, &nnz,
                             msg, sizeof msg) != 0) {
        macko_mat_destroy(m); /* before the error is recorded: destroy clears the error details */
        return macko_ser_bad_data(fn, "the payload is not a valid QUANT encoding: %s", msg);
    }
    if (nnz != h->nnz) {
        macko_mat_destroy(m);
        return macko_ser_bad_field(fn, "nnz", MACKO_SER_OFF_NNZ, "is %lld but the payload holds %lld nonzero values",
                                   (long long)h->nnz, (long long)nnz);
    }
    return MACKO_STATUS_SUCCESS;
}
