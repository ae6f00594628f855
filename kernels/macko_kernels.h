/* Internal interface between the host sources (src/, plain C) and the SpMV kernels (kernels/spmv.cu).
 * Not installed. The conversion launchers live in kernels/convert.h. */
#ifndef MACKO_KERNELS_H
#define MACKO_KERNELS_H

#include "macko.h"

#include <stdint.h>

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
} macko_spmv_args;

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

#ifdef __cplusplus
}
#endif

#endif
