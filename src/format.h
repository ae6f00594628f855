/* The MACKO format's primitives on the host (FORMAT.md): the zero test of a value, the 4-bit delta nibbles, and
 * index access to int32/int64 arrays (row_ptr, CSR col_ind). Everything on the host that reads or writes an encoding
 * or a CSR index array goes through these; the device has its own in kernels/. Included by macko_internal.h. */
#ifndef MACKO_FORMAT_H
#define MACKO_FORMAT_H

#include "macko.h"

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values. A value is a zero when it is +0 or -0: its bits without the sign bit are 0. Read as bits, also under
 * flush-to-zero, where a float compare would call subnormals zero. The test depends on the value's size only: fp16
 * and bf16 both keep the sign in bit 15 (a bf16 value is the upper half of a float), fp32 in bit 31, fp64 in bit 63;
 * NaN and Inf have a nonzero exponent and are values like any other. */
#define MACKO_H_MAGNITUDE 0x7FFFu     /* fp16 and bf16 bits without the sign */
#define MACKO_S_MAGNITUDE 0x7FFFFFFFu /* fp32 bits without the sign */
#define MACKO_D_MAGNITUDE UINT64_C(0x7FFFFFFFFFFFFFFF) /* fp64 bits without the sign */

/* Bytes per value of type t (2, 4 or 8; t must be a valid value type). */
static inline size_t macko_value_size(macko_datatype_t t)
{
    return t == MACKO_R_64F ? 8u : (t == MACKO_R_32F ? 4u : 2u);
}

/* The bits without the sign of a value of t. */
static inline uint64_t macko_value_magnitude(macko_datatype_t t)
{
    return t == MACKO_R_64F ? MACKO_D_MAGNITUDE : (t == MACKO_R_32F ? MACKO_S_MAGNITUDE : MACKO_H_MAGNITUDE);
}

/* The bits of value k of a host value array; memcpy because fp32/fp64 values are float/double objects (aliasing). */
static inline uint64_t macko_value_bits(macko_datatype_t t, const void *values, int64_t k)
{
    const size_t es = macko_value_size(t);
    const unsigned char *p = (const unsigned char *)values + (size_t)k * es;
    if (es == 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        return h;
    } else if (es == 4) {
        uint32_t f;
        memcpy(&f, p, 4);
        return f;
    } else {
        uint64_t d;
        memcpy(&d, p, 8);
        return d;
    }
}

/* Value k of a host value array is +0 or -0? */
static inline int macko_value_is_zero(macko_datatype_t t, const void *values, int64_t k)
{
    return (macko_value_bits(t, values, k) & macko_value_magnitude(t)) == 0;
}

/* ---- deltas: entry k's delta is in byte k/2, the low nibble when k is even. */
static inline unsigned macko_delta_get(const uint8_t *deltas, int64_t k)
{
    return (k & 1) ? (unsigned)(deltas[k >> 1] >> 4) : (unsigned)(deltas[k >> 1] & 0xF);
}

/* Writes d (< 16) into entry k's nibble, which must still be zero (the encoders fill zeroed arrays). */
static inline void macko_delta_put(uint8_t *deltas, int64_t k, unsigned d)
{
    deltas[k >> 1] |= (uint8_t)(d << ((k & 1) << 2));
}

/* Writes the deltas for an entry preceded by g >= 0 zero columns, starting at entry k of zeroed arrays: floor(g/16)
 * padding entries (value 0 is already there, delta 15) and then the entry's delta g mod 16. Returns the entry's index
 * (the caller stores its value there). Equivalent to FORMAT.md's skipped-counter scan. */
static inline int64_t macko_put_gap(uint8_t *deltas, int64_t k, int64_t g)
{
    while (g >= 16) {
        macko_delta_put(deltas, k, 15u);
        k++;
        g -= 16;
    }
    macko_delta_put(deltas, k, (unsigned)g);
    return k;
}

/* ---- index arrays: element k of an int32 (!i64) or int64 array (row_ptr, CSR row_ptr and col_ind). */
static inline int64_t macko_idx_get(const void *p, int i64, int64_t k)
{
    return i64 ? ((const int64_t *)p)[k] : (int64_t)((const int32_t *)p)[k];
}
static inline void macko_idx_set(void *p, int i64, int64_t k, int64_t v)
{
    if (i64)
        ((int64_t *)p)[k] = v;
    else
        ((int32_t *)p)[k] = (int32_t)v;
}
/* row_ptr[r] of an encoding (rp64: int64 row pointers). */
static inline int64_t macko_rp_get(const void *row_ptr, int rp64, int64_t r) { return macko_idx_get(row_ptr, rp64, r); }

#ifdef __cplusplus
}
#endif

#endif
