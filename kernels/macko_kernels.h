/* Internal interface between the host sources (src/, plain C) and the SpMV/SpMM kernels (kernels/spmv.cu, spmm.cu).
 * Not installed. What runs is decided once per matrix encoding by its launch plan (src/plan.h); a launcher here
 * launches exactly what its macko_launch says and decides nothing. The conversion launchers live in
 * kernels/convert.h. */
#ifndef MACKO_KERNELS_H
#define MACKO_KERNELS_H

#include "macko.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- kernel shapes: the kernels' templates and __launch_bounds__ use them, the plan sizes grids and shared memory
 * with them (defaults measured in bench/NOTES.md; the first three are overridable for experiments) */
#ifndef MACKO_SPMV_BLOCK_THREADS
#define MACKO_SPMV_BLOCK_THREADS 256
#endif
#ifndef MACKO_SPMV_BLOCKS_PER_SM_H /* fp16 WARP fast path (incx == 1, 32-bit indices) */
#define MACKO_SPMV_BLOCKS_PER_SM_H 6
#endif
#ifndef MACKO_SPMV_BLOCKS_PER_SM_S /* fp32 WARP fast path */
#define MACKO_SPMV_BLOCKS_PER_SM_S 4
#endif
#define MACKO_SPMV_BLOCKS_PER_SM_OTHER 4  /* the strided and 64-bit-index SpMV variants */
#define MACKO_SPMV_BLOCKS_PER_SM_D 3      /* every fp64 SpMV variant (a lane's 8 values are 64 bytes) */
#define MACKO_SPMV_STAGED_THREADS 512     /* STAGED geometry: x staged in shared memory by each block */
#define MACKO_SPMV_STAGED_BLOCKS_PER_SM_H 3
#define MACKO_SPMV_STAGED_BLOCKS_PER_SM_S 2
#define MACKO_SPMV_DEEP_BLOCKS_PER_SM 4        /* WARP with loads 2..3 chunks ahead (depth > 1): 64 registers */
#define MACKO_SPMV_STAGED_DEEP_BLOCKS_PER_SM 2 /* STAGED likewise */
#define MACKO_SPMV_STAGE_MAX_COLS 28928   /* 113 KiB of fp32 x per block: 2 blocks per SM on sm_90 (228 KiB) */
#define MACKO_MM_STAGED_THREADS 1024      /* one block per SM: the staged tile fills the shared memory */
#define MACKO_MM_GLOBAL_THREADS 256
#define MACKO_MM_GLOBAL_BLOCKS_PER_SM_I32 4 /* 64 registers with 32-bit indices ... */
#define MACKO_MM_GLOBAL_BLOCKS_PER_SM_I64 2 /* ... 128 with 64-bit ones */
#define MACKO_MM_GLOBAL_BLOCKS_PER_SM_D 2   /* fp64, either index width: 128 registers */
#define MACKO_MM_STAGED_ROW_BYTES 32      /* widest staged row: tile <= 32 / element bytes (64 registers) */
#define MACKO_MM_GLOBAL_TILE_BYTES_I32 16 /* widest global tile, 32-bit indices: 16 / element bytes columns */
#define MACKO_MM_GLOBAL_TILE_I64 8        /* widest global tile, 64-bit indices */
/* The 32-bit-index kernels need rows, cols and entries_padded <= MACKO_SPMV_I32_LIMIT (room for a step past the
 * end). */
#define MACKO_SPMV_I32_LIMIT (INT64_C(2147483647) - 4096)

/* The kernels, per type combination (the letters of the launcher's name, macko_combo: h = fp16, s = fp32, b = bf16,
 * d = fp64, hs / bs = fp16 / bf16 A with fp32 x and y; MM_STAGED is not built for d, hs and bs, whose SpMM takes
 * MM_GLOBAL, nor STAGED SpMV for d, which would hold x as fp32):
 *   SPMV_WARP_*   one warp per row, persistent grid, next chunk and next row bounds prefetched:
 *                 I32_UNIT (int32 row_ptr, 32-bit index arithmetic, incx == 1), I32_STRIDED (any incx),
 *                 I64_RP32 (int32 row_ptr, 64-bit arithmetic), I64_RP64 (int64 row_ptr)
 *   SPMV_STAGED   WARP (I32_UNIT) with x staged as fp32 in dynamic shared memory by each block; x is read
 *                 unpredicated at clamped columns unless the block saw a non-finite x value. Same summation order
 *                 as WARP: bitwise identical results.
 *   MM_STAGED     SpMM, B's tile of `tile` columns staged transposed in shared memory (int32 indices)
 *   MM_GLOBAL_*   SpMM, B gathered through the read-only cache; index variants as for SpMV
 *   MM_TC         fp16 SpMM on the tensor cores, rows decoded a K-tile at a time in shared memory (spmm_tc.cu)
 *   MM_PANEL      fp16 SpMM for large n: dense panels of rows in the handle's workspace and a tensor-core GEMM
 *                 (spmm_panel.cu)
 *   MM_SIMT       fp32 SpMM for many columns: rows decoded a K-tile at a time in shared memory, fp32 FMAs on the
 *                 CUDA cores (spmm_simt.cu)
 * (MM_TC, MM_PANEL and MM_SIMT have their own launchers, spmm_tc.h: they need the tile index and the workspace.)
 * (bench/NOTES.md: a SPLIT SpMV geometry with several warps per row lost everywhere and was removed, and so was a
 * tensor-core variant of MM_STAGED.) */
typedef enum {
    MACKO_K_NONE = 0,
    MACKO_K_SPMV_WARP_I32_UNIT,
    MACKO_K_SPMV_WARP_I32_STRIDED,
    MACKO_K_SPMV_WARP_I64_RP32,
    MACKO_K_SPMV_WARP_I64_RP64,
    MACKO_K_SPMV_STAGED,
    MACKO_K_MM_STAGED,
    MACKO_K_MM_GLOBAL_I32,
    MACKO_K_MM_GLOBAL_I64_RP32,
    MACKO_K_MM_GLOBAL_I64_RP64,
    MACKO_K_MM_TC,
    MACKO_K_MM_PANEL,
    MACKO_K_MM_SIMT,
    MACKO_KERNELS
} macko_kernel_id;

/* One launch as the plan computed it. */
typedef struct macko_launch {
    int kernel;            /* macko_kernel_id */
    int tile;              /* columns of B/C per launch (the kernel's NT); 1 for SpMV */
    int swizzle;           /* MM_STAGED: spacing shift s of the swizzled layout; 0: plain */
    int blocks_per_sm;     /* resident blocks per SM the grid is sized for */
    int depth;             /* SpMV WARP (I32_UNIT) and STAGED: chunks each warp keeps loading ahead (1..3) */
    unsigned grid, block;  /* blocks, threads per block */
    uint32_t smem;         /* dynamic shared memory bytes */
    uint32_t slots;        /* MM_STAGED: rows per plane before the zero row (cols rounded up to 8 << swizzle) */
    uint32_t plane_stride; /* MM_STAGED: bytes from one 16-byte plane of the staged rows to the next */
} macko_launch;

/* The problem of one launch: C = alpha*M*B + beta*C for one MACKO encoding M (A for op N, A->trans for op T), with
 * B(k, j) at b[k*incb + j*ldb] and C(i, j) at c[i*incc + j*ldc] (elements), j < n. SpMV is n = 1 (x = b, incx =
 * incb, y = c, incy = incc). Everything has been validated by the caller (C's elements are distinct and do not
 * overlap B). */
typedef struct macko_kargs {
    int64_t rows, cols;     /* of M: C has rows rows, B has cols rows */
    const void *values;     /* device arrays of M, FORMAT.md layout, 16-byte aligned */
    const uint8_t *deltas;
    const void *row_ptr;    /* int32 or int64, as the kernel's index variant says */
    const void *b;          /* element type of M */
    int64_t incb, ldb;      /* >= 1, >= 0 */
    void *c;
    int64_t incc, ldc;      /* >= 1, >= 1 (when n > 1) */
    int64_t n;              /* 1 .. the launch's tile */
    const float *alpha_dev; /* device pointers in POINTER_MODE_DEVICE (read by the kernel) ... */
    const float *beta_dev;
    float alpha, beta;      /* ... else the host values (the pointers are then NULL) */
    /* The same for the fp64 compute type (MACKO_COMBO_D); the float fields are then unused, and the other way round */
    const double *alpha_dev_d, *beta_dev_d;
    double alpha_d, beta_d;
    macko_stream_t stream;
} macko_kargs;

/* The type combinations the kernels are built for (matrix values A, x/B, y/C; accumulation fp32 except D): the
 * first index of the plan's launcher table (src/plan.c) and the letters of the launchers below. */
typedef enum {
    MACKO_COMBO_H = 0,  /* A, x, y fp16 */
    MACKO_COMBO_S = 1,  /* fp32 */
    MACKO_COMBO_B = 2,  /* bf16 */
    MACKO_COMBO_D = 3,  /* fp64, fp64 accumulation and scalars */
    MACKO_COMBO_HS = 4, /* fp16 A, fp32 x and y */
    MACKO_COMBO_BS = 5, /* bf16 A, fp32 x and y */
    MACKO_COMBOS
} macko_combo;

/* Returns the cudaError_t of the launch (0 = cudaSuccess). */
typedef int (*macko_launcher)(const macko_kargs *a, const macko_launch *L);

#define MACKO_LAUNCHERS_OF(L)                                                                                        \
    int macko_##L##_spmv_warp_i32_unit(const macko_kargs *a, const macko_launch *k);                                \
    int macko_##L##_spmv_warp_i32_strided(const macko_kargs *a, const macko_launch *k);                             \
    int macko_##L##_spmv_warp_i64_rp32(const macko_kargs *a, const macko_launch *k);                                \
    int macko_##L##_spmv_warp_i64_rp64(const macko_kargs *a, const macko_launch *k);                                \
    int macko_##L##_spmv_staged(const macko_kargs *a, const macko_launch *k);                                       \
    int macko_##L##_mm_staged(const macko_kargs *a, const macko_launch *k);                                         \
    int macko_##L##_mm_global_i32(const macko_kargs *a, const macko_launch *k);                                     \
    int macko_##L##_mm_global_i64_rp32(const macko_kargs *a, const macko_launch *k);                                \
    int macko_##L##_mm_global_i64_rp64(const macko_kargs *a, const macko_launch *k);
MACKO_LAUNCHERS_OF(h)
MACKO_LAUNCHERS_OF(s)
MACKO_LAUNCHERS_OF(b)
MACKO_LAUNCHERS_OF(d)
MACKO_LAUNCHERS_OF(hs)
MACKO_LAUNCHERS_OF(bs)
#undef MACKO_LAUNCHERS_OF

/* Let the kernels with dynamic shared memory of a matrix of value type `type` (every x/y type it is built for; for
 * MM_STAGED the tile and whether the layout is swizzled) use up to `bytes` of it on the current device:
 * cudaFuncSetAttribute, called when a plan is built, never at a launch. Return the cudaError_t. */
int macko_spmv_staged_optin(macko_datatype_t type, int bytes);
int macko_mm_staged_optin(macko_datatype_t type, int tile, int swizzled, int bytes);

#ifdef __cplusplus
}
#endif

#endif
