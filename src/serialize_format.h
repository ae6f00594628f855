/* The serialized matrix (lapack_style_docs/file_format.md), as shared by src/serialize.c (the container, format
 * version 1 for the MACKO kind, the public routines), src/serialize_quant.c (format version 2, the QUANT kind) and
 * src/serialize_nm.c (format version 3, the N:M kind). Every version has a 96-byte header with the same magic,
 * version, header_size, rows, cols, nnz and checksums at the same offsets; bytes 16..23 and 48..87 are the version's
 * own. The payload is three arrays back to back (version 3: two, the third is empty). */
#ifndef MACKO_SERIALIZE_FORMAT_H
#define MACKO_SERIALIZE_FORMAT_H

#include "check.h"

#include <stdint.h>
#include <stdio.h>

#define MACKO_SER_HDR_SIZE 96

/* Offsets of the fields every version has. */
enum {
    MACKO_SER_OFF_MAGIC = 0,
    MACKO_SER_OFF_VERSION = 8,
    MACKO_SER_OFF_HDR_SIZE = 12,
    MACKO_SER_OFF_ROWS = 24,
    MACKO_SER_OFF_COLS = 32,
    MACKO_SER_OFF_NNZ = 40,
    MACKO_SER_OFF_PAYLOAD_CRC = 88,
    MACKO_SER_OFF_HEADER_CRC = 92
};

/* A parsed header; fields a version does not have stay 0. */
typedef struct {
    uint32_t version, header_size, flags, payload_crc, header_crc;
    unsigned kind, type;                      /* macko_kind_t, macko_datatype_t */
    unsigned value_bits, delta_bits, rp_bytes; /* version 1 */
    unsigned weight_bits, group_size;          /* version 2 */
    unsigned nm_n, nm_m;                       /* version 3 */
    int64_t rows, cols, nnz;
    int64_t entries, entries_padded; /* version 1 */
    int64_t outliers, words_count;   /* version 2 */
    int64_t nm_v, kept;              /* version 3 (and entries) */
    int64_t bytes[3];                /* the payload's arrays in file order (v1: values, deltas, row_ptr;
                                        v2: words, outlier_row_ptr, outlier_entries; v3: values, positions, 0) */
    int64_t total;                   /* header + payload, derived */
} macko_ser_header;

/* One payload array in host memory: `bytes` bytes of es-byte elements (little-endian in the file). */
typedef struct {
    void *p;
    size_t es;
    int64_t bytes;
} macko_ser_array;

/* ---- little-endian fields, byte by byte (the same on any host) */
static inline void macko_ser_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void macko_ser_put_i64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(u >> (8 * i));
}
static inline uint32_t macko_ser_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static inline int64_t macko_ser_get_i64(const uint8_t *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)p[i] << (8 * i);
    /* two's complement without relying on implementation-defined unsigned -> signed conversion */
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* FORMAT_ERROR at position 2, "buffer: <detail>" (deserialize) or "path: <detail>" (load). (serialize.c) */
macko_status_t macko_ser_bad_data(const char *fn, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* FORMAT_ERROR naming a header field: "header field '<field>' (byte <offset>) <detail>". (serialize.c) */
macko_status_t macko_ser_bad_field(const char *fn, const char *field, int offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ---- format version 2, the QUANT kind (serialize_quant.c) */
/* Fills h (version 2, sizes, total; no checksums) from QUANT matrix m, which need not have a host copy. Returns 0 if
 * a size overflows. */
int macko_serq_from_matrix(const struct macko_mat_s *m, macko_ser_header *h);
/* Writes the version-2 fields of h in bytes 16..87 of the header b. */
void macko_serq_pack(const macko_ser_header *h, uint8_t *b);
/* Parses bytes 16..87 of the version-2 header b into h and checks them field by field, in offset order except where
 * a bound needs a later field; fills h->bytes. FORMAT_ERROR naming the first bad field. */
macko_status_t macko_serq_check(const char *fn, const uint8_t *b, macko_ser_header *h);
/* The three host arrays of QUANT matrix m (host copy present), sizes from h. */
void macko_serq_arrays(const struct macko_mat_s *m, const macko_ser_header *h, macko_ser_array a[3]);
/* A new QUANT matrix with zeroed host arrays for a checked header; NULL with *st = ALLOC_FAILED on failure. */
struct macko_mat_s *macko_serq_matrix(const macko_ser_header *h, macko_status_t *st);
/* Validates the filled arrays through the importer's validator and the header's nnz; on failure destroys m and
 * records the FORMAT_ERROR. */
macko_status_t macko_serq_finish(const char *fn, struct macko_mat_s *m, const macko_ser_header *h);

/* ---- format version 3, the N:M kind (serialize_nm.c): the same six steps as version 2's */
int macko_sern_from_matrix(const struct macko_mat_s *m, macko_ser_header *h);
void macko_sern_pack(const macko_ser_header *h, uint8_t *b);
macko_status_t macko_sern_check(const char *fn, const uint8_t *b, macko_ser_header *h);
void macko_sern_arrays(const struct macko_mat_s *m, const macko_ser_header *h, macko_ser_array a[3]);
struct macko_mat_s *macko_sern_matrix(const macko_ser_header *h, macko_status_t *st);
macko_status_t macko_sern_finish(const char *fn, struct macko_mat_s *m, const macko_ser_header *h);

#endif
