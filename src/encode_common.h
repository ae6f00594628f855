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

/* Copies rows + 1 int64 row pointers into m's host row_ptr (int32 or int64 as m->rp64 says). */
void macko_store_row_ptr(struct macko_mat_s *m, const int64_t *rp);

#endif
