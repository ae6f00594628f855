/* Private helpers of the host encoders, decoders and the validator (encode_*.c, import.c, export.c). */
#ifndef MACKO_ENCODE_COMMON_H
#define MACKO_ENCODE_COMMON_H

#include "macko_internal.h"

/* For bodies written once for every element size and stamped out per size by thin wrappers. */
#if defined(__GNUC__) || defined(__clang__)
#define MACKO_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MACKO_ALWAYS_INLINE inline
#endif

/* Scan state of one row: the last stored column (-1 before the first) and the entry count / next entry index. */
typedef struct {
    int64_t prev;
    int64_t k;
} macko_row_state;

#if defined(__GNUC__) || defined(__clang__)
static inline int macko_ctz64(uint64_t m) { return __builtin_ctzll(m); }
static inline int macko_clz64(uint64_t m) { return __builtin_clzll(m); }
#else
static inline int macko_ctz64(uint64_t m)
{
    int n = 0;
    while (!(m & 1)) {
        m >>= 1;
        n++;
    }
    return n;
}
static inline int macko_clz64(uint64_t m)
{
    int n = 0;
    while (!(m & (UINT64_C(1) << 63))) {
        m <<= 1;
        n++;
    }
    return n;
}
#endif
/* Without -mpopcnt the builtin becomes a libgcc call; this SWAR count is as fast inline. */
static inline int macko_popcount64(uint64_t m)
{
#if defined(__POPCNT__)
    return __builtin_popcountll(m);
#else
    m = m - ((m >> 1) & UINT64_C(0x5555555555555555));
    m = (m & UINT64_C(0x3333333333333333)) + ((m >> 2) & UINT64_C(0x3333333333333333));
    m = (m + (m >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
    return (int)((m * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

/* Writes the deltas for an entry preceded by g >= 0 zero columns, starting at entry k of zeroed arrays: floor(g/16)
 * padding entries (value 0 is already there, delta 15) and then the entry's delta g mod 16. Returns the entry's index
 * (the caller stores its value there). Equivalent to lapack_style_docs/FORMAT.md's skipped-counter scan. */
static inline int64_t macko_put_gap(uint8_t *deltas, int64_t k, int64_t g)
{
    while (g >= 16) {
        deltas[k >> 1] |= (uint8_t)(15u << ((k & 1) << 2));
        k++;
        g -= 16;
    }
    deltas[k >> 1] |= (uint8_t)((unsigned)g << ((k & 1) << 2));
    return k;
}

/* Index k of an int32 (!i64) or int64 array. */
static inline int64_t macko_idx_get(const void *p, int i64, int64_t k)
{
    return i64 ? ((const int64_t *)p)[k] : (int64_t)((const int32_t *)p)[k];
}

/* Copies rows + 1 int64 row pointers into m's host row_ptr (int32 or int64 as m->rp64 says). */
void macko_store_row_ptr(struct macko_mat_s *m, const int64_t *rp);

#endif
