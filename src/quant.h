/* The QUANT kind's primitives on the host (lapack_style_docs/FORMAT_QUANT.md): the bit fields of a packed tile row,
 * the tile statistics spread over a tile's 16 words, fp16 arithmetic with round-to-nearest-even, and the decode of a
 * weight. Everything on the host that reads or writes a QUANT encoding goes through these; the device repeats the
 * same arithmetic with fp16 instructions (kernels/quant_gemv.cu), so host and device decode bit for bit alike.
 * Plain C, header-only; the tests include it. */
#ifndef MACKO_QUANT_H
#define MACKO_QUANT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MACKO_QUANT_GROUP 16               /* tile side: weights per tile row, tile rows per tile */
#define MACKO_QUANT_BITS 3                 /* the one supported weight width */
#define MACKO_QUANT_MAX_COLS 65536         /* an outlier entry holds its column in 16 bits */
#define MACKO_QUANT_SQ_SHIFT 41            /* 3-bit scale code */
#define MACKO_QUANT_ZQ_SHIFT 57            /* 3-bit zero code */
#define MACKO_QUANT_PIECE_SHIFT 44         /* 4-bit piece of the tile statistics */
/* Bits of a word that must be zero: 15, 31 and 60..63. */
#define MACKO_QUANT_ZERO_BITS ((UINT64_C(1) << 15) | (UINT64_C(1) << 31) | (UINT64_C(0xF) << 60))

/* Bit position of weight k (0..15, column 16*t + k of the tile row) in its word. Weights come in pairs (2p, 2p + 1)
 * 16 bits apart, so that one shift and one mask put a pair into the two halves of a 32-bit register (the device
 * turns that into an fp16 pair with one more instruction): pairs 0..4 in bits 0..30, pairs 5..7 in bits 32..56. */
static inline int macko_quant_qpos(int k)
{
    const int p = k >> 1;
    return (p < 5 ? 3 * p : 32 + 3 * (p - 5)) + 16 * (k & 1);
}
static inline unsigned macko_quant_q(uint64_t w, int k) { return (unsigned)(w >> macko_quant_qpos(k)) & 7u; }
static inline unsigned macko_quant_sq(uint64_t w) { return (unsigned)(w >> MACKO_QUANT_SQ_SHIFT) & 7u; }
static inline unsigned macko_quant_zq(uint64_t w) { return (unsigned)(w >> MACKO_QUANT_ZQ_SHIFT) & 7u; }
static inline unsigned macko_quant_piece(uint64_t w) { return (unsigned)(w >> MACKO_QUANT_PIECE_SHIFT) & 15u; }
/* The word with the given fields (q: 16 codes; piece: 4 bits). */
static inline uint64_t macko_quant_pack(const unsigned q[16], unsigned sq, unsigned zq, unsigned piece)
{
    uint64_t w = 0;
    int k;
    for (k = 0; k < 16; k++)
        w |= (uint64_t)(q[k] & 7u) << macko_quant_qpos(k);
    w |= (uint64_t)(sq & 7u) << MACKO_QUANT_SQ_SHIFT;
    w |= (uint64_t)(zq & 7u) << MACKO_QUANT_ZQ_SHIFT;
    w |= (uint64_t)(piece & 15u) << MACKO_QUANT_PIECE_SHIFT;
    return w;
}

/* The tile statistics S = s_s | z_s << 16 | s_z << 32 | z_z << 48 (fp16 bit patterns) from the 16 words of a tile
 * (word i carries bits 4i..4i+3 as its piece). */
static inline uint64_t macko_quant_stats(const uint64_t *tile)
{
    uint64_t s = 0;
    int i;
    for (i = 0; i < 16; i++)
        s |= (uint64_t)macko_quant_piece(tile[i]) << (4 * i);
    return s;
}
static inline unsigned macko_quant_stats_piece(uint64_t stats, int i) { return (unsigned)(stats >> (4 * i)) & 15u; }

/* ---- fp16 (IEEE binary16 bit patterns), round to nearest even, subnormals kept, overflow to Inf. */
static inline double macko_half_to_double(uint16_t h)
{
    const int e = (h >> 10) & 0x1F;
    const int m = h & 0x3FF;
    double v;
    if (e == 0x1F)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, -24);
    else
        v = ldexp((double)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}
static inline uint16_t macko_half_from_double(double v)
{
    uint16_t sign = signbit(v) ? 0x8000u : 0u;
    double a = fabs(v);
    int e;
    if (isnan(v))
        return (uint16_t)(sign | 0x7E00u);
    if (a >= 65520.0) /* 65504 + half an ulp rounds to even, which is 2^16: Inf */
        return (uint16_t)(sign | 0x7C00u);
    if (a < 6.103515625e-05) /* below 2^-14: subnormal, in units of 2^-24 (1024 units carry into the exponent) */
        return (uint16_t)(sign | (uint16_t)rint(a * 16777216.0));
    (void)frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): exponent field e + 14, mantissa in units of 2^(e - 11) */
    return (uint16_t)(sign | (uint16_t)(((unsigned)(e + 14) << 10) + (unsigned)rint(ldexp(a, 11 - e)) - 1024u));
}
/* One fp16 operation, exactly as the GPU's: the double result of two fp16 operands is exact, then rounded once. */
static inline uint16_t macko_h_sub(uint16_t a, uint16_t b)
{
    return macko_half_from_double(macko_half_to_double(a) - macko_half_to_double(b));
}
static inline uint16_t macko_h_mul(uint16_t a, uint16_t b)
{
    return macko_half_from_double(macko_half_to_double(a) * macko_half_to_double(b));
}
/* The fp16 value of a small integer 0..7 (exact). */
static inline uint16_t macko_half_of_code(unsigned c) { return macko_half_from_double((double)c); }

/* ---- decode (FORMAT_QUANT.md, "Decoding"). A tile row's scale s and offset m from its codes and the tile's
 * statistics: s = (sq - z_s) * s_s, z = (zq - z_z) * s_z, m = z * s, each operation in fp16. */
static inline void macko_quant_row(uint64_t stats, uint64_t word, uint16_t *s, uint16_t *m)
{
    const uint16_t s_s = (uint16_t)stats, z_s = (uint16_t)(stats >> 16);
    const uint16_t s_z = (uint16_t)(stats >> 32), z_z = (uint16_t)(stats >> 48);
    const uint16_t sc = macko_h_mul(macko_h_sub(macko_half_of_code(macko_quant_sq(word)), z_s), s_s);
    const uint16_t z = macko_h_mul(macko_h_sub(macko_half_of_code(macko_quant_zq(word)), z_z), s_z);
    *s = sc;
    *m = macko_h_mul(z, sc);
}
/* The weight of code q: q * s - m rounded once to fp16 (a fused multiply-add; exact in double before the rounding:
 * q * s has at most 14 significant bits and both terms lie in fp16's range, 40 binades). */
static inline uint16_t macko_quant_weight(unsigned q, uint16_t s, uint16_t m)
{
    return macko_half_from_double((double)q * macko_half_to_double(s) - macko_half_to_double(m));
}

/* Outlier entries: column in bits 0..15, the fp16 value in bits 16..31. */
static inline uint32_t macko_quant_outlier(unsigned col, uint16_t value) { return (col & 0xFFFFu) | ((uint32_t)value << 16); }
static inline unsigned macko_quant_outlier_col(uint32_t e) { return e & 0xFFFFu; }
static inline uint16_t macko_quant_outlier_value(uint32_t e) { return (uint16_t)(e >> 16); }

/* Word index of tile row i (0..15) of the tile at band b, tile column t: tiles are stored band by band, each tile's
 * 16 words together (128 bytes). */
static inline int64_t macko_quant_word_index(int64_t tcols, int64_t b, int64_t t, int i)
{
    return (b * tcols + t) * 16 + i;
}

#ifdef __cplusplus
}
#endif

#endif
