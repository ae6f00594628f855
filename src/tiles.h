/* The tile layout of a MACKO matrix (lapack_style_docs/FORMAT.md, "Tile layout"): 16 x 16 tiles of four 8 x 8
 * subtiles, each a 64-bit bitmap of its nonzeros plus their values, for the tensor-core kernels. It is a device
 * layout (MACKO_LAYOUT_TILES): the host builds it from the MACKO rows to upload it, and turns it back into the
 * canonical MACKO rows after a download. fp16 and bf16 only. Not installed. */
#ifndef MACKO_TILES_H
#define MACKO_TILES_H

#include "macko_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A record's header: the low 32-bit words of the four bitmaps, their high words, then per subtile the number of values
 * before its low word and before its high word (bytes 32..35 and 36..39). */
#define MACKO_TILE_HEADER_BYTES 40
#define MACKO_TILE_WORD_BYTES 16   /* records start at multiples of this; offs counts in these */

/* A tile layout: bands = ceil(rows / 16), tcols = ceil(cols / 16), offs (bands * tcols + 1 entries) the start of each
 * record in 16-byte words, words = offs[bands * tcols] the stream's length in 16-byte words. On the host both arrays
 * come from macko_aligned_calloc; a caller that puts device arrays here frees them itself. */
typedef struct macko_tiles {
    int64_t bands, tcols;
    int64_t words;
    uint32_t *offs;
    void *stream;
} macko_tiles;

/* Builds the tile layout of a MACKO-kind matrix with host arrays (type fp16 or bf16); errors are recorded for routine
 * fn at position 0: NOT_SUPPORTED for another kind or type, or when the stream would need more than 2^32 - 1 words
 * (offs are uint32); NOT_INITIALIZED without host arrays; ALLOC_FAILED. *out is written on success only. */
macko_status_t macko_tiles_build_host(const char *fn, const struct macko_mat_s *m, macko_tiles *out);
/* Frees the host arrays (offs, stream) and zeroes the struct; safe on a zeroed struct. */
void macko_tiles_free(macko_tiles *t);
/* Bytes the layout takes: words * 16 + 4 * (bands * tcols + 1); 0 on overflow or negative arguments. */
int64_t macko_tiles_bytes(int64_t bands, int64_t tcols, int64_t words);
/* Rebuilds the MACKO host arrays of m (kind MACKO; rows, cols and type set, fp16 or bf16) from a host tile layout:
 * the canonical encoding of its nonzeros, byte-identical to macko_mat_create_csr_host of the same nonzeros. Sets
 * nnz, entries, entries_padded, rp64 and has_host; replaces m's host arrays only on success. A layout that does not
 * fit m (sizes, offsets, bits outside the matrix, a zero under a set bit, nonzero record padding) is
 * INTERNAL_ERROR: it can only come from corrupted device memory. Errors are recorded for fn at position 0. */
macko_status_t macko_tiles_to_macko_host(const char *fn, const macko_tiles *t, struct macko_mat_s *m);

#ifdef __cplusplus
}
#endif

#endif
