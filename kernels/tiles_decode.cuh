/* Device helpers of the tile layout (lapack_style_docs/FORMAT.md, "Tile layout") shared by its kernels: the tile
 * kernel (spmm_tiles.cu), the fused wgmma product (spmm_tiles_wg.cu) and the panel GEMM (spmm_panel.cu). Internal. */
#ifndef MACKO_TILES_DECODE_CUH
#define MACKO_TILES_DECODE_CUH

#include "macko_mma.cuh"
#include "spmm_tiles.h"

#include <stdint.h>

/* One register of a lane's A fragment (mma.m16n8k16's, and wgmma's from registers, which is laid out alike): the
 * lane's two values of subtile q (0..3) of a record staged in shared memory at `rec`, packed low / high, zeros where
 * the subtile's bitmap has no value. word: the bitmap's 32-bit half that holds the lane's two bits, at bits sh + 1 and
 * sh (sh = (8 * (lane / 4) + 2 * (lane % 4)) mod 32); lift = 2^(30 - sh); counts: the header's word of the four
 * subtiles' counts of the record's values before that half (byte q is this one's). One IMAD lifts the word so that the lane's two bits land at 31 / 30 with the
 * bits below them under them (on the FMA pipe, where the ALU pipe is the busier one): popc of it is `end`, the count
 * of the subtile's values up to and including the lane's, so they are the last ones before `end`; the two 16-bit
 * values before it are read (where the lane has none at a record's start: the header's last bytes, read, then
 * dropped; never past the record) and one prmt picks them by the two bits: 00 zeros, 01 (v, 0), 10 (0, v), 11 (u, v)
 * (bytes 2, 3 / 6, 7 of the selector's sources are zeros: 16-bit loads). kPrmt: the count's byte taken by one prmt
 * (the tile kernel) or by a shift and a mask (the fused product): the same byte; each kernel keeps the form it was
 * measured with, so that both compile to the same instructions as before this helper (checked on their cubins for
 * sm_80 / sm_90 / sm_90a, bench/NOTES.md session 50). */
template <bool kPrmt>
static __device__ __forceinline__ uint32_t tiles_a_reg(uint32_t rec, uint32_t word, uint32_t lift, uint32_t counts,
                                                       int q)
{
    const uint32_t y = mul_lo(word, lift);
    const uint32_t end = (kPrmt ? prmt(counts, 0u, 0x4440u + (uint32_t)q) : (counts >> (8 * q)) & 0xFFu) + __popc(y);
    const uint32_t va = rec + MACKO_TILES_HEADER + 2u * end;
    const uint32_t u = ldsu16(va - 4u), v = ldsu16(va - 2u);
    return prmt(u, v, prmt(0x77547777u, 0x54105477u, (y >> 30) * 0x22u + 0x10u));
}

/* The exact sum of row r times column j of B over the row's stored values, in column order, fp32. */
template <typename H>
__device__ __noinline__ float tiles_row_dot(const uint4 *stream, const uint32_t *offs, int tcols, const H *b, int64_t incb,
                                     int64_t ldb, int r, int j)
{
    const int band = r >> 4, i = r & 15, half = i >> 3, li = i & 7;
    const unsigned short *bits16 = reinterpret_cast<const unsigned short *>(stream);
    float acc = 0.0f;
    for (int t = 0; t < tcols; t++) {
        const int64_t q = (int64_t)band * tcols + t;
        const uint32_t *rec = reinterpret_cast<const uint32_t *>(stream + __ldg(offs + q));
        const uint32_t st = __ldg(rec + 8), sth = __ldg(rec + 9);
        for (int sc = 0; sc < 2; sc++) {
            const int s = half + 2 * sc;
            const uint32_t lo = __ldg(rec + s), hi = __ldg(rec + 4 + s);
            uint32_t row, start;
            if (li < 4) {
                row = (lo >> (8 * li)) & 0xFFu;
                start = ((st >> (8 * s)) & 0xFFu) + __popc(lo & ((1u << (8 * li)) - 1u));
            } else {
                row = (hi >> (8 * (li - 4))) & 0xFFu;
                start = ((sth >> (8 * s)) & 0xFFu) + __popc(hi & ((1u << (8 * (li - 4))) - 1u));
            }
            const int64_t vbase = (int64_t)__ldg(offs + q) * 8 + MACKO_TILES_HEADER / 2 + start;
            for (int k = 0; row != 0u; row &= row - 1u, k++) {
                const int col = 16 * t + 8 * sc + __ffs(row) - 1;
                const H v = Tc16<H>::from_bits(__ldg(bits16 + vbase + k));
                acc = fmaf(Tc16<H>::to_float(v), Tc16<H>::to_float(b[(int64_t)col * incb + (int64_t)j * ldb]), acc);
            }
        }
    }
    return acc;
}

#endif
