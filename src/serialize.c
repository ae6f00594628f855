/* Persistence: the versioned, checksummed byte layout of lapack_style_docs/file_format.md.
 *
 * Everything that comes from outside (a buffer, a file) is untrusted: every header field is checked, and the sizes it
 * implies must add up to exactly the bytes we were given, before anything is allocated. Only then is the payload
 * decoded into a fresh matrix and validated as an encoding of its kind. MACKO matrices are format version 1 (this
 * file), QUANT matrices version 2 (serialize_quant.c), N:M matrices version 3 (serialize_nm.c); the container,
 * checksums and routines are shared. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* POSIX 2008 + XSI: fileno, fstat, lstat, fsync, realpath */
#endif
#include "serialize_format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#define HDR_SIZE MACKO_SER_HDR_SIZE

/* Byte offsets of the header fields of format version 1. */
enum {
    OFF_MAGIC = MACKO_SER_OFF_MAGIC,
    OFF_VERSION = MACKO_SER_OFF_VERSION,
    OFF_HDR_SIZE = MACKO_SER_OFF_HDR_SIZE,
    OFF_TYPE = 16,
    OFF_VALUE_BITS = 17,
    OFF_DELTA_BITS = 18,
    OFF_RP_BYTES = 19,
    OFF_FLAGS = 20,
    OFF_ROWS = MACKO_SER_OFF_ROWS,
    OFF_COLS = MACKO_SER_OFF_COLS,
    OFF_NNZ = MACKO_SER_OFF_NNZ,
    OFF_ENTRIES = 48,
    OFF_ENTRIES_PADDED = 56,
    OFF_VALUES_BYTES = 64,
    OFF_DELTAS_BYTES = 72,
    OFF_ROWPTR_BYTES = 80,
    OFF_PAYLOAD_CRC = MACKO_SER_OFF_PAYLOAD_CRC,
    OFF_HEADER_CRC = MACKO_SER_OFF_HEADER_CRC
};
/* The payload arrays of version 1, in file order (header_t.bytes). */
enum { A_VALUES = 0, A_DELTAS = 1, A_ROWPTR = 2 };

static const uint8_t k_magic[8] = {'M', 'A', 'C', 'K', 'O', 'M', 'A', 'T'};

typedef macko_ser_header header_t;

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
    uLong c = crc;
    while (n > 0) {
        uInt k = n > (size_t)1 << 30 ? (uInt)1 << 30 : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

/* ---------------------------------------------------------------- array payload in little-endian order */

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Reverses the bytes of each es-byte element (host order <-> little-endian on a big-endian host). In place is fine. */
static void swap_elements(uint8_t *dst, const uint8_t *src, size_t es, size_t bytes)
{
    uint8_t t[8];
    for (size_t i = 0; i + es <= bytes; i += es) {
        for (size_t j = 0; j < es; j++)
            t[j] = src[i + es - 1 - j];
        memcpy(dst + i, t, es);
    }
}

/* A consumer of payload bytes (checksum, file, memory). Returns 0 on failure. */
typedef int (*sink_fn)(void *ctx, const uint8_t *p, size_t n);

static int sink_crc(void *ctx, const uint8_t *p, size_t n)
{
    *(uint32_t *)ctx = crc_update(*(uint32_t *)ctx, p, n);
    return 1;
}

static int sink_file(void *ctx, const uint8_t *p, size_t n)
{
    return fwrite(p, 1, n, (FILE *)ctx) == n;
}

static int sink_memory(void *ctx, const uint8_t *p, size_t n)
{
    uint8_t **cur = (uint8_t **)ctx;
    memcpy(*cur, p, n);
    *cur += n;
    return 1;
}

/* Feeds one host array of es-byte elements to sink as little-endian bytes. */
static int emit_array(const void *src, size_t es, int64_t bytes, sink_fn sink, void *ctx)
{
    const uint8_t *s = (const uint8_t *)src;
    uint8_t tmp[4096]; /* a multiple of every element size */
    if (bytes == 0)
        return 1;
    if (es == 1 || host_is_little_endian())
        return sink(ctx, s, (size_t)bytes);
    while (bytes > 0) {
        size_t k = bytes > (int64_t)sizeof tmp ? sizeof tmp : (size_t)bytes;
        swap_elements(tmp, s, es, k);
        if (!sink(ctx, tmp, k))
            return 0;
        s += k;
        bytes -= (int64_t)k;
    }
    return 1;
}

/* The payload's three host arrays of m, in file order, sized by h. */
static void payload_arrays(const struct macko_mat_s *m, const header_t *h, macko_ser_array a[3])
{
    if (h->version == 2) {
        macko_serq_arrays(m, h, a);
        return;
    }
    if (h->version == 3) {
        macko_sern_arrays(m, h, a);
        return;
    }
    a[A_VALUES].p = m->host.values;
    a[A_VALUES].es = macko_type_size(m->type);
    a[A_DELTAS].p = m->host.deltas;
    a[A_DELTAS].es = 1;
    a[A_ROWPTR].p = m->host.row_ptr;
    a[A_ROWPTR].es = m->rp64 ? 8 : 4;
    for (int i = 0; i < 3; i++)
        a[i].bytes = h->bytes[i];
}

static int emit_payload(const struct macko_mat_s *m, const header_t *h, sink_fn sink, void *ctx)
{
    macko_ser_array a[3];
    payload_arrays(m, h, a);
    for (int i = 0; i < 3; i++)
        if (!emit_array(a[i].p, a[i].es, a[i].bytes, sink, ctx))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- header: build, pack, parse, check */

/* Fills h from a matrix (of any kind; the host copy is read only for the checksum), payload checksum included with
 * with_crc. MACKO matrices are format version 1, QUANT matrices version 2, N:M matrices version 3. Returns 0 if a
 * size overflows. */
static int header_from_matrix(const struct macko_mat_s *m, header_t *h, int with_crc)
{
    int64_t t;
    memset(h, 0, sizeof *h);
    h->header_size = HDR_SIZE;
    if (m->kind == MACKO_KIND_QUANT) {
        if (!macko_serq_from_matrix(m, h))
            return 0;
    } else if (m->kind == MACKO_KIND_NM) {
        if (!macko_sern_from_matrix(m, h))
            return 0;
    } else {
        h->version = 1;
        h->type = (unsigned)m->type;
        h->value_bits = (unsigned)(8 * macko_type_size(m->type));
        h->delta_bits = 4;
        h->rp_bytes = m->rp64 ? 8 : 4;
        h->rows = m->rows;
        h->cols = m->cols;
        h->nnz = m->nnz;
        h->entries = m->entries;
        h->entries_padded = m->entries_padded;
        h->bytes[A_VALUES] = macko_values_bytes(m->type, m->entries_padded);
        h->bytes[A_DELTAS] = m->entries_padded / 2;
        h->bytes[A_ROWPTR] = macko_rowptr_bytes(m->rows, m->rp64);
        if (h->value_bits == 0 || (h->bytes[A_VALUES] == 0 && m->entries_padded != 0) || h->bytes[A_ROWPTR] == 0)
            return 0;
    }
    if (!macko_add_i64(HDR_SIZE, h->bytes[0], &t) || !macko_add_i64(t, h->bytes[1], &t) ||
        !macko_add_i64(t, h->bytes[2], &t) || (uint64_t)t > (uint64_t)SIZE_MAX)
        return 0;
    h->total = t;
    if (with_crc) {
        uint32_t crc = 0;
        emit_payload(m, h, sink_crc, &crc);
        h->payload_crc = crc;
    }
    return 1;
}

static void header_pack(header_t *h, uint8_t *b)
{
    memcpy(b + OFF_MAGIC, k_magic, 8);
    macko_ser_put_u32(b + OFF_VERSION, h->version);
    macko_ser_put_u32(b + OFF_HDR_SIZE, h->header_size);
    if (h->version == 2) {
        macko_serq_pack(h, b);
    } else if (h->version == 3) {
        macko_sern_pack(h, b);
    } else {
        b[OFF_TYPE] = (uint8_t)h->type;
        b[OFF_VALUE_BITS] = (uint8_t)h->value_bits;
        b[OFF_DELTA_BITS] = (uint8_t)h->delta_bits;
        b[OFF_RP_BYTES] = (uint8_t)h->rp_bytes;
        macko_ser_put_u32(b + OFF_FLAGS, h->flags);
        macko_ser_put_i64(b + OFF_ROWS, h->rows);
        macko_ser_put_i64(b + OFF_COLS, h->cols);
        macko_ser_put_i64(b + OFF_NNZ, h->nnz);
        macko_ser_put_i64(b + OFF_ENTRIES, h->entries);
        macko_ser_put_i64(b + OFF_ENTRIES_PADDED, h->entries_padded);
        macko_ser_put_i64(b + OFF_VALUES_BYTES, h->bytes[A_VALUES]);
        macko_ser_put_i64(b + OFF_DELTAS_BYTES, h->bytes[A_DELTAS]);
        macko_ser_put_i64(b + OFF_ROWPTR_BYTES, h->bytes[A_ROWPTR]);
    }
    macko_ser_put_u32(b + OFF_PAYLOAD_CRC, h->payload_crc);
    h->header_crc = crc_update(0, b, OFF_HEADER_CRC);
    macko_ser_put_u32(b + OFF_HEADER_CRC, h->header_crc);
}

/* Records a FORMAT_ERROR at position 2, named after that argument: the bytes come from `buffer` (deserialize) or
 * from the file at `path` (load). */
macko_status_t macko_ser_bad_data(const char *fn, const char *fmt, ...)
{
    char detail[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return macko_fail(MACKO_STATUS_FORMAT_ERROR, fn, 2, "%s: %s", strcmp(fn, "macko_mat_load") == 0 ? "path" : "buffer",
                      detail);
}

macko_status_t macko_ser_bad_field(const char *fn, const char *field, int offset, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return macko_ser_bad_data(fn, "header field '%s' (byte %d) %s", field, offset, detail);
}

/* Parses and checks bytes 16..87 of a version-1 header; fills h->bytes. */
static macko_status_t header_check_v1(const char *fn, const uint8_t *b, header_t *h)
{
    int64_t t, want;
    h->type = b[OFF_TYPE];
    h->value_bits = b[OFF_VALUE_BITS];
    h->delta_bits = b[OFF_DELTA_BITS];
    h->rp_bytes = b[OFF_RP_BYTES];
    h->flags = macko_ser_get_u32(b + OFF_FLAGS);
    h->rows = macko_ser_get_i64(b + OFF_ROWS);
    h->cols = macko_ser_get_i64(b + OFF_COLS);
    h->nnz = macko_ser_get_i64(b + OFF_NNZ);
    h->entries = macko_ser_get_i64(b + OFF_ENTRIES);
    h->entries_padded = macko_ser_get_i64(b + OFF_ENTRIES_PADDED);
    h->bytes[A_VALUES] = macko_ser_get_i64(b + OFF_VALUES_BYTES);
    h->bytes[A_DELTAS] = macko_ser_get_i64(b + OFF_DELTAS_BYTES);
    h->bytes[A_ROWPTR] = macko_ser_get_i64(b + OFF_ROWPTR_BYTES);

    if (!macko_type_valid((int)h->type))
        return macko_ser_bad_field(fn, "value_type", OFF_TYPE, "is %u, not a known macko_datatype_t", h->type);
    if (h->value_bits != 8 * macko_type_size((macko_datatype_t)h->type))
        return macko_ser_bad_field(fn, "value_bits", OFF_VALUE_BITS, "is %u; value type %u has %u-bit values",
                                   h->value_bits, h->type,
                                   (unsigned)(8 * macko_type_size((macko_datatype_t)h->type)));
    if (h->delta_bits != 4)
        return macko_ser_bad_field(fn, "delta_bits", OFF_DELTA_BITS, "is %u; only 4-bit deltas exist", h->delta_bits);
    if (h->flags != 0)
        return macko_ser_bad_field(fn, "flags", OFF_FLAGS, "is 0x%x; no flags are defined in format version 1",
                                   (unsigned)h->flags);
    if (h->rows < 0 || h->rows > MACKO_MAX_ELEMS)
        return macko_ser_bad_field(fn, "rows", OFF_ROWS, "is %lld, outside [0, 2^56]", (long long)h->rows);
    if (h->cols < 0)
        return macko_ser_bad_field(fn, "cols", OFF_COLS, "is %lld, negative", (long long)h->cols);
    if (h->entries < 0 || h->entries > MACKO_MAX_ELEMS)
        return macko_ser_bad_field(fn, "entries", OFF_ENTRIES, "is %lld, outside [0, 2^56]", (long long)h->entries);
    if (h->nnz < 0 || h->nnz > h->entries)
        return macko_ser_bad_field(fn, "nnz", OFF_NNZ, "is %lld, outside [0, entries = %lld]", (long long)h->nnz,
                                   (long long)h->entries);
    if (h->entries_padded != macko_round8(h->entries))
        return macko_ser_bad_field(fn, "entries_padded", OFF_ENTRIES_PADDED,
                                   "is %lld; entries %lld rounded up to 8 is %lld", (long long)h->entries_padded,
                                   (long long)h->entries, (long long)macko_round8(h->entries));
    if (h->rp_bytes != (h->entries >= MACKO_RP32_LIMIT ? 8u : 4u))
        return macko_ser_bad_field(fn, "row_ptr_bytes", OFF_RP_BYTES, "is %u; %lld entries need %u-byte row pointers",
                                   h->rp_bytes, (long long)h->entries, h->entries >= MACKO_RP32_LIMIT ? 8u : 4u);
    if (!macko_mul_i64(h->entries_padded, (int64_t)macko_type_size((macko_datatype_t)h->type), &want) ||
        h->bytes[A_VALUES] != want)
        return macko_ser_bad_field(fn, "values_bytes", OFF_VALUES_BYTES,
                                   "is %lld; entries_padded and the type imply %lld", (long long)h->bytes[A_VALUES],
                                   (long long)want);
    want = h->entries_padded / 2;
    if (h->bytes[A_DELTAS] != want)
        return macko_ser_bad_field(fn, "deltas_bytes", OFF_DELTAS_BYTES, "is %lld; entries_padded implies %lld",
                                   (long long)h->bytes[A_DELTAS], (long long)want);
    if (!macko_add_i64(h->rows, 1, &t) || !macko_mul_i64(t, (int64_t)h->rp_bytes, &want) ||
        h->bytes[A_ROWPTR] != want)
        return macko_ser_bad_field(fn, "row_ptr_total_bytes", OFF_ROWPTR_BYTES,
                                   "is %lld; rows and row_ptr_bytes imply %lld", (long long)h->bytes[A_ROWPTR],
                                   (long long)want);
    return MACKO_STATUS_SUCCESS;
}

/* Parses and checks the header in b, of which `avail` bytes are readable (at most HDR_SIZE are read), for a
 * serialized matrix of exactly `total_size` bytes. Touches nothing but *h; allocates nothing. */
static macko_status_t header_check(const char *fn, const uint8_t *b, int64_t avail, int64_t total_size, header_t *h)
{
    int64_t t;
    macko_status_t st;
    memset(h, 0, sizeof *h);
    if (avail < 8)
        return macko_ser_bad_data(fn, "truncated: %lld bytes, shorter than the %d-byte header",
                                  (long long)total_size, HDR_SIZE);
    if (memcmp(b + OFF_MAGIC, k_magic, 8) != 0)
        return macko_ser_bad_field(fn, "magic", OFF_MAGIC, "is not \"MACKOMAT\": not a serialized macko matrix");
    if (avail < OFF_VERSION + 4)
        return macko_ser_bad_data(fn, "truncated: %lld bytes, shorter than the %d-byte header",
                                  (long long)total_size, HDR_SIZE);
    h->version = macko_ser_get_u32(b + OFF_VERSION);
    if (h->version < 1 || h->version > 3)
        return macko_ser_bad_field(fn, "version", OFF_VERSION,
                                   "is %u; this library reads format versions 1, 2 and 3", (unsigned)h->version);
    if (avail < HDR_SIZE)
        return macko_ser_bad_data(fn, "truncated: %lld bytes, shorter than the %d-byte header",
                                  (long long)total_size, HDR_SIZE);
    h->header_size = macko_ser_get_u32(b + OFF_HDR_SIZE);
    if (h->header_size != HDR_SIZE)
        return macko_ser_bad_field(fn, "header_size", OFF_HDR_SIZE, "is %u; format version %u has a %d-byte header",
                                   (unsigned)h->header_size, (unsigned)h->version, HDR_SIZE);
    h->header_crc = macko_ser_get_u32(b + OFF_HEADER_CRC);
    if (crc_update(0, b, OFF_HEADER_CRC) != h->header_crc)
        return macko_ser_bad_field(fn, "header_crc32", OFF_HEADER_CRC,
                                   "does not match bytes 0..%d: the header is corrupted", OFF_HEADER_CRC - 1);
    h->payload_crc = macko_ser_get_u32(b + OFF_PAYLOAD_CRC);

    st = h->version == 2   ? macko_serq_check(fn, b, h)
         : h->version == 3 ? macko_sern_check(fn, b, h)
                           : header_check_v1(fn, b, h);
    if (st != MACKO_STATUS_SUCCESS)
        return st;
    /* Each array size is bounded by its field check; their sum still may not be. */
    if (!macko_add_i64(HDR_SIZE, h->bytes[0], &t) || !macko_add_i64(t, h->bytes[1], &t) ||
        !macko_add_i64(t, h->bytes[2], &t))
        return macko_ser_bad_data(fn, "the array sizes in the header overflow int64");
    if (t > total_size)
        return macko_ser_bad_data(fn, "truncated: the header announces %lld bytes, only %lld are present",
                                  (long long)t, (long long)total_size);
    if (t < total_size)
        return macko_ser_bad_data(fn,
                                  "%lld unexpected bytes after the end of the payload (header announces %lld bytes)",
                                  (long long)(total_size - t), (long long)t);
    if ((uint64_t)t > (uint64_t)SIZE_MAX)
        return macko_ser_bad_data(fn, "%lld bytes do not fit this platform's size_t", (long long)t);
    h->total = t;
    return MACKO_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- building the loaded matrix */

/* A new matrix with zeroed host arrays for a checked header; NULL with *st set on failure. */
static struct macko_mat_s *matrix_for_header(const header_t *h, macko_status_t *st)
{
    struct macko_mat_s *m;
    if (h->version == 2)
        return macko_serq_matrix(h, st);
    if (h->version == 3)
        return macko_sern_matrix(h, st);
    m = macko_mat_alloc();
    if (m == NULL) {
        *st = MACKO_STATUS_ALLOC_FAILED;
        return NULL;
    }
    m->rows = h->rows;
    m->cols = h->cols;
    m->nnz = h->nnz;
    m->entries = h->entries;
    m->entries_padded = h->entries_padded;
    m->type = (macko_datatype_t)h->type;
    m->rp64 = h->rp_bytes == 8;
    *st = macko_host_arrays_alloc(m);
    if (*st != MACKO_STATUS_SUCCESS) {
        macko_mat_destroy(m);
        return NULL;
    }
    return m;
}

static macko_status_t fail_alloc(const char *fn, macko_status_t st, const header_t *h)
{
    if (st == MACKO_STATUS_ALLOC_FAILED)
        return macko_fail(st, fn, 0, "cannot allocate the host arrays (%lld bytes)", (long long)(h->total - HDR_SIZE));
    return macko_fail(MACKO_STATUS_INTERNAL_ERROR, fn, 0, "host array allocation refused checked sizes");
}

/* Converts the freshly filled arrays from little-endian to host order (nothing to do on little-endian hosts). */
static void arrays_to_host_order(const macko_ser_array a[3])
{
    if (host_is_little_endian())
        return;
    for (int i = 0; i < 3; i++)
        if (a[i].es > 1)
            swap_elements((uint8_t *)a[i].p, (const uint8_t *)a[i].p, a[i].es, (size_t)a[i].bytes);
}

/* Validates the decoded content; on failure destroys m and records the error. */
static macko_status_t finish_load(const char *fn, struct macko_mat_s *m, const header_t *h)
{
    char msg[256];
    int64_t nnz = -1;
    if (h->version == 2)
        return macko_serq_finish(fn, m, h);
    if (h->version == 3)
        return macko_sern_finish(fn, m, h);
    msg[0] = '\0';
    if (macko_validate_arrays(m->rows, m->cols, m->type, m->entries, m->rp64, m->host.values, m->host.deltas,
                              m->host.row_ptr, &nnz, msg, sizeof msg) != 0) {
        macko_mat_destroy(m); /* before macko_fail: destroy clears the error details */
        return macko_ser_bad_data(fn, "the payload is not a valid MACKO encoding: %s", msg);
    }
    if (nnz != h->nnz) {
        macko_mat_destroy(m);
        return macko_ser_bad_field(fn, "nnz", OFF_NNZ, "is %lld but the payload holds %lld nonzero values",
                                   (long long)h->nnz, (long long)nnz);
    }
    return MACKO_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- public routines */

macko_status_t macko_mat_serialized_size(macko_mat_t A, int64_t *bytes)
{
    static const char fn[] = "macko_mat_serialized_size";
    header_t h;
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_ptr(fn, 2, "bytes", bytes));
    if (!header_from_matrix(A, &h, 0))
        return macko_fail(MACKO_STATUS_INTERNAL_ERROR, fn, 1,
                          "A's serialized size overflows int64 (impossible for a valid matrix)");
    *bytes = h.total;
    return macko_ok();
}

macko_status_t macko_mat_serialize(macko_mat_t A, void *buffer, int64_t buffer_size)
{
    static const char fn[] = "macko_mat_serialize";
    header_t h;
    uint8_t *cur;
    MACKO_CHECK(macko_check_host_mat(fn, 1, A));
    if (buffer_size != 0) /* negative too: buffer comes first */
        MACKO_CHECK(macko_check_ptr(fn, 2, "buffer", buffer));
    MACKO_CHECK(macko_check_min(fn, 3, "buffer_size", buffer_size, 0));
    if (!header_from_matrix(A, &h, 0))
        return macko_fail(MACKO_STATUS_INTERNAL_ERROR, fn, 1,
                          "A's serialized size overflows int64 (impossible for a valid matrix)");
    if (buffer_size < h.total)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3,
                          "buffer_size is %lld; the serialized matrix needs %lld bytes (macko_mat_serialized_size)",
                          (long long)buffer_size, (long long)h.total);
    header_from_matrix(A, &h, 1);
    header_pack(&h, (uint8_t *)buffer);
    cur = (uint8_t *)buffer + HDR_SIZE;
    emit_payload(A, &h, sink_memory, &cur);
    return macko_ok();
}

macko_status_t macko_mat_deserialize(macko_mat_t *A, const void *buffer, int64_t buffer_size)
{
    static const char fn[] = "macko_mat_deserialize";
    const uint8_t *b = (const uint8_t *)buffer;
    header_t h;
    macko_status_t st;
    struct macko_mat_s *m;
    uint32_t crc;
    macko_ser_array a[3];
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    if (buffer_size != 0) /* negative too: buffer comes first */
        MACKO_CHECK(macko_check_ptr(fn, 2, "buffer", buffer));
    MACKO_CHECK(macko_check_min(fn, 3, "buffer_size", buffer_size, 0));
    st = header_check(fn, b, buffer_size, buffer_size, &h);
    if (st != MACKO_STATUS_SUCCESS)
        return st;
    crc = crc_update(0, b + HDR_SIZE, (size_t)(h.total - HDR_SIZE));
    if (crc != h.payload_crc)
        return macko_ser_bad_field(fn, "payload_crc32", OFF_PAYLOAD_CRC,
                                   "is 0x%08x but the payload's CRC-32 is 0x%08x", (unsigned)h.payload_crc,
                                   (unsigned)crc);
    m = matrix_for_header(&h, &st);
    if (m == NULL)
        return fail_alloc(fn, st, &h);
    payload_arrays(m, &h, a);
    b += HDR_SIZE;
    for (int i = 0; i < 3; i++) {
        if (a[i].bytes > 0)
            memcpy(a[i].p, b, (size_t)a[i].bytes);
        b += a[i].bytes;
    }
    arrays_to_host_order(a);
    st = finish_load(fn, m, &h);
    if (st != MACKO_STATUS_SUCCESS)
        return st;
    *A = m;
    return macko_ok();
}

/* Size of the regular file open as f; -1 if it is not one or cannot be queried. */
static int64_t regular_file_size(FILE *f)
{
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0)
        return -1;
    return (int64_t)sb.st_size;
}

/* Writes the header and the payload to f, then flushes (and with sync, fsyncs) and closes it. Returns 1 on success;
 * else 0 with *err = errno (0 when unknown). */
static int write_and_close(FILE *f, const uint8_t *hdr, const struct macko_mat_s *A, const header_t *h, int sync,
                           int *err)
{
    int ok;
    errno = 0;
    ok = fwrite(hdr, 1, HDR_SIZE, f) == HDR_SIZE && emit_payload(A, h, sink_file, f) && fflush(f) == 0 &&
         (!sync || fsync(fileno(f)) == 0);
    *err = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        *err = errno;
    }
    return ok;
}

/* Creates a new, empty file with a unique name next to dst (dst + ".tmp-<pid>-<n>"), with the permissions of an
 * existing dst (mode >= 0) or the default 0666 & ~umask. Returns the open stream and the name in *tmp (malloc'ed),
 * or NULL with errno set. */
static FILE *create_temp_next_to(const char *dst, int mode, char **tmp)
{
    const size_t n = strlen(dst) + 64;
    struct timespec ts;
    char *name = (char *)malloc(n);
    int attempt, fd = -1;
    FILE *f;
    *tmp = NULL;
    if (name == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    for (attempt = 0; attempt < 100 && fd < 0; attempt++) {
        /* pid + a per-call value: O_EXCL makes any collision a retry, never a shared file */
        unsigned long salt = (unsigned long)ts.tv_nsec ^ ((unsigned long)(uintptr_t)&ts >> 4) ^ (unsigned long)attempt;
        snprintf(name, n, "%s.tmp-%ld-%lx", dst, (long)getpid(), salt);
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        free(name);
        errno = e;
        return NULL;
    }
    if (mode >= 0)
        (void)fchmod(fd, (mode_t)mode); /* best effort: keep the replaced file's permissions */
    f = fdopen(fd, "wb");
    if (f == NULL) {
        int e = errno;
        close(fd);
        unlink(name);
        free(name);
        errno = e;
        return NULL;
    }
    *tmp = name;
    return f;
}

/* A regular file (new or replaced) is written to a temporary file in the same directory, which is renamed over the
 * target only once it is complete: a failed save leaves an earlier file of that name intact and no partial file
 * behind. A symbolic link is followed (the file it points to is replaced, the link stays). Anything else that exists
 * (a device, a FIFO) is written directly, and never removed. */
macko_status_t macko_mat_save(macko_mat_t A, const char *path)
{
    static const char fn[] = "macko_mat_save";
    header_t h;
    uint8_t hdr[HDR_SIZE];
    struct stat sb;
    FILE *f;
    char *resolved = NULL, *tmp = NULL;
    const char *dst;
    int ok, err, direct, mode = -1;
    MACKO_CHECK(macko_check_host_mat(fn, 1, A));
    MACKO_CHECK(macko_check_ptr(fn, 2, "path", path));
    if (!header_from_matrix(A, &h, 1))
        return macko_fail(MACKO_STATUS_INTERNAL_ERROR, fn, 1,
                          "A's serialized size overflows int64 (impossible for a valid matrix)");
    header_pack(&h, hdr);

    dst = path;
    direct = path[0] == '\0'; /* fopen reports the error */
    err = 0;
    if (!direct && lstat(path, &sb) != 0) {
        /* Nothing there (or no such directory, which fopen reports). After any other failure what is there is
         * unknown, and writing blind could replace a link with a file or drop the file's permissions. */
        if (errno != ENOENT && errno != ENOTDIR)
            err = errno;
    } else if (!direct) {
        if (S_ISLNK(sb.st_mode)) {
            resolved = realpath(path, NULL);
            if (resolved == NULL || stat(resolved, &sb) != 0) {
                if (errno == ENOENT)
                    direct = 1; /* a dangling link: fopen creates its target, as it would without a link */
                else
                    err = errno; /* the target may exist: writing it in place would not be atomic */
            } else {
                dst = resolved;
                direct = !S_ISREG(sb.st_mode);
            }
        } else {
            direct = !S_ISREG(sb.st_mode); /* a device, a FIFO, a directory (fopen reports the error) */
        }
        if (!direct)
            mode = (int)(sb.st_mode & 07777);
    }
    if (err != 0) {
        free(resolved);
        return macko_fail(err == ENOMEM ? MACKO_STATUS_ALLOC_FAILED : MACKO_STATUS_IO_ERROR, fn, err == ENOMEM ? 0 : 2,
                          "path '%s': cannot inspect it: %s", path, strerror(err));
    }
    if (direct) {
        /* not a regular file (or an empty name, or a dangling link): open it as it is */
        f = fopen(path, "wb");
        if (f == NULL) {
            err = errno;
            free(resolved);
            return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s': cannot open for writing: %s", path,
                              strerror(err));
        }
        ok = write_and_close(f, hdr, A, &h, 0, &err);
        free(resolved);
        if (!ok)
            return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s': writing failed: %s", path,
                              err ? strerror(err) : "short write");
        return macko_ok();
    }
    f = create_temp_next_to(dst, mode, &tmp);
    if (f == NULL) {
        err = errno;
        free(resolved);
        return macko_fail(err == ENOMEM ? MACKO_STATUS_ALLOC_FAILED : MACKO_STATUS_IO_ERROR, fn,
                          err == ENOMEM ? 0 : 2, "path '%s': cannot open for writing: %s", path, strerror(err));
    }
    ok = write_and_close(f, hdr, A, &h, 1, &err);
    if (ok && rename(tmp, dst) != 0) {
        err = errno;
        unlink(tmp);
        free(tmp);
        free(resolved);
        return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s': cannot replace it with the written file: %s", path,
                          strerror(err));
    }
    if (!ok)
        unlink(tmp);
    free(tmp);
    free(resolved);
    if (!ok)
        return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s': writing failed: %s", path,
                          err ? strerror(err) : "short write");
    return macko_ok();
}

static int read_array(FILE *f, void *dst, int64_t bytes, uint32_t *crc)
{
    if (bytes == 0)
        return 1;
    if (fread(dst, 1, (size_t)bytes, f) != (size_t)bytes)
        return 0;
    *crc = crc_update(*crc, (const uint8_t *)dst, (size_t)bytes);
    return 1;
}

macko_status_t macko_mat_load(macko_mat_t *A, const char *path)
{
    static const char fn[] = "macko_mat_load";
    uint8_t hdr[HDR_SIZE];
    header_t h;
    macko_status_t st;
    struct macko_mat_s *m;
    int64_t size, avail;
    uint32_t crc = 0;
    macko_ser_array a[3];
    FILE *f;
    int err;
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_ptr(fn, 2, "path", path));
    f = fopen(path, "rb");
    if (f == NULL) {
        err = errno;
        return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s': cannot open for reading: %s", path, strerror(err));
    }
    /* The file's real size bounds everything the header may ask for, so it is known before any allocation. */
    size = regular_file_size(f);
    if (size < 0) {
        fclose(f);
        return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s' is not a readable regular file", path);
    }
    avail = size < HDR_SIZE ? size : HDR_SIZE;
    if (fread(hdr, 1, (size_t)avail, f) != (size_t)avail) {
        fclose(f);
        return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s': reading the header failed", path);
    }
    st = header_check(fn, hdr, avail, size, &h);
    if (st != MACKO_STATUS_SUCCESS) {
        fclose(f);
        return st;
    }
    m = matrix_for_header(&h, &st);
    if (m == NULL) {
        fclose(f);
        return fail_alloc(fn, st, &h);
    }
    payload_arrays(m, &h, a);
    if (!read_array(f, a[0].p, a[0].bytes, &crc) || !read_array(f, a[1].p, a[1].bytes, &crc) ||
        !read_array(f, a[2].p, a[2].bytes, &crc)) {
        fclose(f);
        macko_mat_destroy(m);
        return macko_fail(MACKO_STATUS_IO_ERROR, fn, 2, "path '%s': reading the payload failed (file changed?)", path);
    }
    fclose(f);
    if (crc != h.payload_crc) {
        macko_mat_destroy(m);
        return macko_ser_bad_field(fn, "payload_crc32", OFF_PAYLOAD_CRC,
                                   "is 0x%08x but the payload's CRC-32 is 0x%08x", (unsigned)h.payload_crc,
                                   (unsigned)crc);
    }
    arrays_to_host_order(a);
    st = finish_load(fn, m, &h);
    if (st != MACKO_STATUS_SUCCESS)
        return st;
    *A = m;
    return macko_ok();
}
