/* Internal interface between the host sources (src/, plain C) and the SpMV/SpMM kernels (kernels/spmv.cu, spmm.cu).
 * Not installed. The conversion launchers live in kernels/convert.h. */
#ifndef MACKO_KERNELS_H
#define MACKO_KERNELS_H

#include "macko.h"

#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One SpMV launch: y = alpha*M*x + beta*y for one MACKO encoding M (A for op N, A->trans for op T). Everything has
 * been validated by the caller; the launcher only launches. */
typedef struct macko_spmv_args {
    int64_t rows, cols;           /* of M: y has rows elements, x has cols */
    const void *values;           /* device arrays of M, FORMAT.md layout, 16-byte aligned */
    const uint8_t *deltas;
    const void *row_ptr;          /* int32 or int64, as the launcher's variant says */
    const void *x;                /* element type of M */
    int64_t incx;                 /* >= 1 */
    void *y;
    int64_t incy;                 /* >= 1 */
    const float *alpha_dev;       /* device pointers in POINTER_MODE_DEVICE (read by the kernel) ... */
    const float *beta_dev;
    float alpha, beta;            /* ... else the host values (the pointers are then NULL) */
    int sm_count;
    macko_stream_t stream;
    int kernel;                   /* MACKO_SPMV_KERNEL_*: the geometry (the I32_UNIT variant only; others: WARP) */
} macko_spmv_args;

/* Kernel geometries of the I32_UNIT variant (src/spmv.c and the SpMM launchers for n == 1 choose one per matrix with
 * macko_spmv_choose_kernel, so that a matrix always takes the same path):
 *   WARP    one warp per row, persistent grid of 256-thread blocks, next chunk and next row bounds prefetched
 *   STAGED  WARP with x staged in dynamic shared memory as fp32 by each 512-thread block (cols <=
 *           MACKO_SPMV_STAGE_MAX_COLS and at least 2 blocks' x per SM on the device, else WARP runs); x is read
 *           unpredicated at clamped columns unless the block saw a non-finite x value.
 *           Same summation order as WARP: bitwise identical results.
 * (bench/NOTES.md: a SPLIT geometry with several warps per row lost everywhere and was removed.) */
enum { MACKO_SPMV_KERNEL_WARP = 0, MACKO_SPMV_KERNEL_STAGED = 1, MACKO_SPMV_KERNELS = 2 };
#define MACKO_SPMV_STAGE_MAX_COLS 28928 /* 113 KiB of fp32 x per block: 2 blocks per SM on sm_90 (228 KiB) */

/* The geometry for a matrix of rows x cols with `entries` stored entries (FORMAT.md, padding included) and elem-byte
 * values (2: fp16, 4: fp32): a function of the matrix alone, so that the same matrix always takes the same path (on
 * one device: the launcher runs WARP where the device cannot hold two STAGED blocks' x per SM). Both geometries sum in
 * the same order, so the choice never changes a result. Measured on an H100 (bench/NOTES.md): for fp16 STAGED is
 * 0-9 % faster at every quick shape (cols <= 12288) and 3-20 % faster on the wide shapes with 13824..28672 columns;
 * for fp32 it pays only for cols <= 4096 (wider: up to +6 %). Nearly dense matrices (at least
 * MACKO_SPMV_DENSE_FRACTION of the positions stored) take WARP: there a lane's 8 entries are 8 consecutive columns
 * and the staged gather of a warp lands on 4 of the 32 shared-memory banks (d = 1.0: WARP 9-43 % faster on 10
 * shapes; d = 0.95: STAGED 5-17 % faster; nothing measured in between).
 * The environment variable MACKO_SPMV_VARIANT=0|1 forces WARP|STAGED (tests and timing only; read once per process
 * by macko_spmv_forced_kernel(), so the compute calls do no environment lookups). */
#define MACKO_SPMV_DENSE_FRACTION 0.97
int macko_spmv_forced_kernel(void); /* -1: none forced (src/spmv.c) */
static inline int macko_spmv_choose_kernel(int64_t rows, int64_t cols, int64_t entries, size_t elem)
{
    const int forced = macko_spmv_forced_kernel();
    if (forced >= 0)
        return forced;
    if ((double)entries >= MACKO_SPMV_DENSE_FRACTION * (double)rows * (double)cols)
        return MACKO_SPMV_KERNEL_WARP;
    return cols <= (elem == 2 ? MACKO_SPMV_STAGE_MAX_COLS : 4096) ? MACKO_SPMV_KERNEL_STAGED : MACKO_SPMV_KERNEL_WARP;
}

/* Blocks of the STAGED geometry per SM for a matrix of cols columns and elem-byte values on the current device, or 0
 * when STAGED cannot hold x there (the launch then runs WARP). For tests. */
int macko_spmv_staged_blocks_per_sm(int64_t cols, int elem);

/* Returns the cudaError_t of the launch (0 = cudaSuccess). */
typedef int (*macko_spmv_launcher)(const macko_spmv_args *args);

/* Kernel variants, per value type:
 *   I32_UNIT    int32 row_ptr, 32-bit index arithmetic, incx == 1 (the fast path)
 *   I32_STRIDED int32 row_ptr, 32-bit index arithmetic, any incx
 *   I64_RP32    int32 row_ptr, 64-bit index arithmetic (cols near or above 2^31), any incx
 *   I64_RP64    int64 row_ptr (entries >= 2^31), 64-bit index arithmetic, any incx
 * The 32-bit variants need rows, cols and entries_padded <= MACKO_SPMV_I32_LIMIT (room for a step past the end). */
#define MACKO_SPMV_I32_LIMIT (INT64_C(2147483647) - 4096)
enum {
    MACKO_SPMV_I32_UNIT = 0,
    MACKO_SPMV_I32_STRIDED = 1,
    MACKO_SPMV_I64_RP32 = 2,
    MACKO_SPMV_I64_RP64 = 3,
    MACKO_SPMV_VARIANTS = 4
};

int macko_spmv_h_i32_unit(const macko_spmv_args *args);
int macko_spmv_h_i32_strided(const macko_spmv_args *args);
int macko_spmv_h_i64_rp32(const macko_spmv_args *args);
int macko_spmv_h_i64_rp64(const macko_spmv_args *args);
int macko_spmv_s_i32_unit(const macko_spmv_args *args);
int macko_spmv_s_i32_strided(const macko_spmv_args *args);
int macko_spmv_s_i64_rp32(const macko_spmv_args *args);
int macko_spmv_s_i64_rp64(const macko_spmv_args *args);

/* One SpMM launch (several kernels for more than one column tile): C = alpha*M*B + beta*C for one MACKO encoding M,
 * with B(k, j) at b[k*incb + j*ldb] and C(i, j) at c[i*incc + j*ldc] (elements), j < n. macko_Hspmm/macko_Sspmm
 * pass incb = incc = 1; the strided-batched SpMV passes (incx, stridex) and (incy, stridey). Everything has been
 * validated by the caller (C's elements are distinct and do not overlap B); n == 1 runs the SpMV kernel. */
typedef struct macko_spmm_args {
    int64_t rows, cols;           /* of M: C has rows rows, B has cols rows */
    int64_t entries;              /* entries of M incl. padding (sizes the staging swizzle) */
    const void *values;           /* device arrays of M, FORMAT.md layout, 16-byte aligned */
    const uint8_t *deltas;
    const void *row_ptr;          /* int32 or int64, as the launcher's variant says */
    int64_t n;                    /* >= 1 */
    const void *b;
    int64_t incb, ldb;            /* >= 1, >= 0 */
    void *c;
    int64_t incc, ldc;            /* >= 1, >= 1 (when n > 1) */
    const float *alpha_dev;       /* device pointers in POINTER_MODE_DEVICE (read by the kernel) ... */
    const float *beta_dev;
    float alpha, beta;            /* ... else the host values (the pointers are then NULL) */
    int sm_count;
    macko_stream_t stream;
    /* Kernel choice; the library passes MACKO_SPMM_PATH_AUTO, 0 and -1. Tests and timing force the others. */
    int path;                     /* MACKO_SPMM_PATH_* */
    int tile;                     /* columns per pass: 0 = automatic, else 2, 4, 8 or 16 */
    int swizzle;                  /* staged layout: -1 = automatic, 0 = plain, s in 3..12 = spacing shift */
} macko_spmm_args;

/* Returns the cudaError_t of the launches (0 = cudaSuccess); cudaErrorInvalidValue (1) when a forced path cannot
 * run this problem. */
typedef int (*macko_spmm_launcher)(const macko_spmm_args *args);

/* Paths: STAGED copies the columns' tile of B into shared memory (transposed: one row of tile values per column of
 * M, read with one vector load per entry) and accumulates on the CUDA cores; GLOBAL gathers B through the
 * read-only cache; SPMV (n == 1) the SpMV kernel. AUTO chooses. */
enum { MACKO_SPMM_PATH_AUTO = 0, MACKO_SPMM_PATH_STAGED = 1, MACKO_SPMM_PATH_GLOBAL = 2, MACKO_SPMM_PATH_SPMV = 3 };

/* Variants, per value type (same index rules as SpMV):
 *   I32       int32 row_ptr, rows/cols/entries_padded <= MACKO_SPMV_I32_LIMIT: staged or global, 32-bit indices
 *   I64_RP32  int32 row_ptr, 64-bit indices (global only)
 *   I64_RP64  int64 row_ptr, 64-bit indices (global only) */
enum { MACKO_SPMM_I32 = 0, MACKO_SPMM_I64_RP32 = 1, MACKO_SPMM_I64_RP64 = 2, MACKO_SPMM_VARIANTS = 3 };

int macko_spmm_h_i32(const macko_spmm_args *args);
int macko_spmm_h_i64_rp32(const macko_spmm_args *args);
int macko_spmm_h_i64_rp64(const macko_spmm_args *args);
int macko_spmm_s_i32(const macko_spmm_args *args);
int macko_spmm_s_i64_rp32(const macko_spmm_args *args);
int macko_spmm_s_i64_rp64(const macko_spmm_args *args);

#ifdef __cplusplus
}
#endif

#endif
