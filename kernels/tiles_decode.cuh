/* Device helpers of the tile layout (lapack_style_docs/FORMAT.md, "Tile layout") shared by its kernels
 * (spmm_tiles.cu) and the panel GEMM (spmm_panel.cu). Internal. */
#ifndef MACKO_TILES_DECODE_CUH
#define MACKO_TILES_DECODE_CUH

#include "macko_mma.cuh"
#include "spmm_tiles.h"

#include <stdint.h>

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
