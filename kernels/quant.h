/* Internal interface between the host sources and the QUANT kind's fused kernel (kernels/quant_gemv.cu): C =
 * alpha * (W + O) * B + beta * C for fp16 B and C, fp32 accumulation (lapack_style_docs/FORMAT_QUANT.md). Not
 * installed. The host decides everything (src/quant_device.c); the launcher launches what it is told. */
#ifndef MACKO_KERNELS_QUANT_H
#define MACKO_KERNELS_QUANT_H

#include "macko.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MACKO_QUANT_TILE_N 16    /* columns of B per launch: two 8-column MMAs */

/* One launch: B(k, j) at b[k*incb + j*ldb], C(i, j) at c[i*incc + j*ldc], j < n <= 16. Validated by the caller. */
typedef struct macko_quant_kargs {
    int64_t rows, cols, tcols;
    const uint64_t *words; /* bands * tcols * 16 */
    const int32_t *optr;   /* CSR row pointers (rows + 1) or TCOL band slot offsets (bands + 1) */
    const uint32_t *oent;
    int tcol_outliers;     /* 1: optr/oent are TCOL */
    int unit_tiles;        /* tiles per warp of the quantized part for n <= 4 (one band per unit) ... */
    int unit_tiles_g;      /* ... and for n > 4 (four bands per unit); a band is ceil(tcols / unit) units */
    int ounits;            /* outlier units per band (TCOL: ochunk k-steps each; CSR: 16, one per row; 0: none) */
    int ochunk;
    float *ws;             /* the handle's workspace: units * 16 * n floats (macko_quant_ws_floats) */
    const uint16_t *b;
    int64_t incb, ldb;
    uint16_t *c;
    int64_t incc, ldc;
    int64_t n;             /* 1..16 */
    const float *alpha_dev, *beta_dev; /* device pointers (POINTER_MODE_DEVICE), else NULL and ... */
    float alpha, beta;                 /* ... the host values */
    macko_stream_t stream;
} macko_quant_kargs;

/* Floats of workspace a launch of n columns needs (the unit sums). */
static inline int64_t macko_quant_ws_floats(int64_t rows, int64_t tcols, int unit_tiles, int ounits, int64_t n)
{
    return (rows + 15) / 16 * ((tcols + unit_tiles - 1) / unit_tiles + ounits) * 16 * n;
}
/* The cudaError_t of the launches. */
int macko_quant_launch(const macko_quant_kargs *a);

#ifdef __cplusplus
}
#endif

#endif
