/* SpMV on the MACKO format: y = alpha*M*x + beta*y (FORMAT.md; macko_kargs in macko_kernels.h, n = 1).
 *
 * One warp per row, persistent grid-stride over rows; the chunk decode (8 entries per lane per 256-entry warp step,
 * predicate masking of entries outside the row and of padding, packed in-word prefix + warp scan for the columns)
 * lives in macko_decode.cuh, shared with the SpMM kernels.
 *
 * Software pipelining: the loads of the next chunk (or of the next row's first chunk) are issued into a second
 * register buffer before the current chunk is decoded, and each row's bounds are loaded one row ahead. Registers are
 * capped so that 6 blocks of 256 threads (48 warps) stay resident per SM on the fp16 fast path (see bench/NOTES.md for
 * what was measured, including a cp.async shared-memory ring that lost). Accumulation is fp32 in a fixed order (per
 * lane in entry order, then a fixed shuffle tree), so results are bitwise reproducible. No atomics, no allocation.
 *
 * Two geometries of the fast path (macko_kernels.h; the plan, src/plan.c, chooses per matrix): WARP and STAGED
 * (512-thread blocks that first copy x into dynamic shared memory as fp32, after issuing their first A loads; 3 blocks
 * per SM, 2 when x takes more than a third of the SM's shared memory; the gather is then
 * one unpredicated LDS per entry at a clamped column, no fp16 conversion, unless the block found a non-finite x value,
 * in which case only stored nonzero entries read x, as in WARP). Both sum in the same order: bitwise equal results.
 */
#include "macko_kernels.h"
#include "macko_decode.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

using namespace macko_decode;

constexpr int kBlockThreads = MACKO_SPMV_BLOCK_THREADS;
constexpr int kWarpsPerBlock = kBlockThreads / kWarp;
/* Blocks per SM the grid is sized for, per variant; __launch_bounds__ makes ptxas fit the registers to it. */
template <typename T, typename IDX, bool UNIT> constexpr int blocks_per_sm()
{
    return !(sizeof(IDX) == 4 && UNIT) ? MACKO_SPMV_BLOCKS_PER_SM_OTHER
           : sizeof(T) == 2            ? MACKO_SPMV_BLOCKS_PER_SM_H
                                       : MACKO_SPMV_BLOCKS_PER_SM_S;
}
static_assert(kBlockThreads % kWarp == 0, "whole warps per block");

template <typename T, typename RP> struct Params {
    int64_t rows, cols;
    const T *values;
    const uint32_t *dwords; /* the delta nibbles, 8 per word */
    const RP *row_ptr;
    const T *x;
    int64_t incx;
    T *y;
    int64_t incy;
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
};

template <typename T, typename RP, typename IDX>
__device__ __forceinline__ typename Ty<T>::Group load_group(const Params<T, RP> &p, IDX k0, IDX e)
{
    return macko_decode::load_group<T, IDX>(p.values, p.dwords, k0, e);
}

/* y = beta*y (or 0) when A and x are not to be read: alpha == 0 or no columns. */
template <typename T, typename RP> __device__ void scale_only(const Params<T, RP> &p, float beta)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += stride) {
        T *yp = p.y + r * p.incy;
        Ty<T>::y_put(yp, beta != 0.0f ? beta * Ty<T>::y_at(yp) : 0.0f);
    }
}

/* One warp step on the chunk at cb of the row [b, e): mask the entries outside the row, decode the columns, gather
 * x, accumulate into acc (this lane's partial sum, in entry order). carry: delta sum of the row's entries before cb. */
template <typename T, typename RP, typename IDX, bool UNIT>
__device__ __forceinline__ void chunk_fma(const Params<T, RP> &p, typename Ty<T>::Group &cur, IDX cb, IDX b, IDX e,
                                          int lane, IDX &carry, float &acc)
{
    const ChunkCols<IDX> cc = decode_chunk<T, IDX>(cur, cb, b, e, lane, carry);
    const IDX base = cc.base;

    /* Gather x: all addresses first, then all loads (independent, predicated), then the products.
     * Unloaded x stays 0 and its value is +-0 (padding or masked), so the products need no predicate. */
    uint32_t off[kLaneEntries];
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++)
        off[i] = cc.off(i);
    uint32_t xs[kLaneEntries];
    if (UNIT) {
        const uint64_t xl = reinterpret_cast<uint64_t>(p.x + base);
#pragma unroll
        for (int i = 0; i < kLaneEntries; i++)
            xs[i] = Ty<T>::nonzero(cur, i)
                        ? Ty<T>::x_bits(reinterpret_cast<const T *>(xl + (uint64_t)off[i] * sizeof(T)))
                        : 0u;
    } else {
#pragma unroll
        for (int i = 0; i < kLaneEntries; i++)
            xs[i] = Ty<T>::nonzero(cur, i) ? Ty<T>::x_bits(p.x + (int64_t)(base + (IDX)off[i]) * p.incx) : 0u;
    }
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++)
        acc = fmaf(Ty<T>::value(cur, i), Ty<T>::x_value(xs[i]), acc);
}

/* chunk_fma with x staged in shared memory as fp32 (sx, cols elements). GUARD: the block's x holds a non-finite
 * value, so only stored nonzero entries may read x (0*Inf = NaN); otherwise every entry reads x unpredicated, at its
 * column clamped into [0, cols) (masked and padding entries have value +-0 and a finite x: they add +-0). */
template <typename T, typename IDX, bool GUARD>
__device__ __forceinline__ void chunk_fma_staged(const float *sx, uint32_t last_col, typename Ty<T>::Group &cur,
                                                 IDX cb, IDX b, IDX e, int lane, IDX &carry, float &acc)
{
    const ChunkCols<IDX> cc = decode_chunk<T, IDX>(cur, cb, b, e, lane, carry);
    const uint32_t base = (uint32_t)cc.base;
    float xv[kLaneEntries];
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++) {
        const uint32_t col = base + cc.off(i);
        if (GUARD)
            xv[i] = Ty<T>::nonzero(cur, i) ? sx[col] : 0.0f;
        else
            xv[i] = sx[min(col, last_col)];
    }
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++)
        acc = fmaf(Ty<T>::value(cur, i), xv[i], acc);
}

/* Lane 0 writes y[row] = alpha * (warp sum of acc) + beta * y_old (y_old not read when beta == 0). */
template <typename T, typename RP>
__device__ __forceinline__ void finish_row(const Params<T, RP> &p, int64_t row, float acc, float alpha, float beta,
                                           float yold, int lane)
{
#pragma unroll
    for (int o = kWarp / 2; o > 0; o >>= 1)
        acc += __shfl_down_sync(kFull, acc, o);
    if (lane == 0) {
        float r = alpha * acc;
        if (beta != 0.0f)
            r = fmaf(beta, yold, r);
        Ty<T>::y_put(p.y + row * p.incy, r);
    }
}

/* The row walk of one warp (see the file comment). STAGE: x is in shared memory (sx, fp32), GUARD as in
 * chunk_fma_staged. WPB: warps per block. */
template <typename T, typename RP, typename IDX, bool UNIT, bool STAGE, bool GUARD, int WPB>
__device__ __forceinline__ void walk_rows(const Params<T, RP> &p, float alpha, float beta, const float *sx,
                                          typename Ty<T>::Group buf0, Cursor<Params<T, RP>, IDX> &c)
{
    using G = typename Ty<T>::Group;
    const int lane = (int)(threadIdx.x % kWarp);
    const IDX nwarps = (IDX)(gridDim.x * WPB);
    const IDX lane_off = (IDX)(lane * kLaneEntries);
    const uint32_t last_col = (uint32_t)(p.cols - 1);
    float yold = 0.0f;
    if (beta != 0.0f && lane == 0)
        yold = Ty<T>::y_at(p.y + (int64_t)c.row * p.incy);
    IDX carry = 0;
    float acc = 0.0f;

    /* One step: issue the loads of the chunk after c (in this row, or the next row's first) into nxt, then consume
     * cur. Two register buffers, alternating, so that no copies are needed. Returns false when no rows are left. */
    auto step = [&](G &cur, G &nxt) -> bool {
        const bool same_row = !c.last_of_row();
        const IDX ncb = same_row ? c.cb + kChunk : (c.nb & ~(IDX)7);
        const IDX nend = same_row ? c.e : (c.row + nwarps < (IDX)p.rows ? c.ne : (IDX)0);
        nxt = load_group(p, ncb + lane_off, nend);
        if (STAGE)
            chunk_fma_staged<T, IDX, GUARD>(sx, last_col, cur, c.cb, c.b, c.e, lane, carry, acc);
        else
            chunk_fma<T, RP, IDX, UNIT>(p, cur, c.cb, c.b, c.e, lane, carry, acc);
        const IDX row = c.row;
        if (c.advance(p, nwarps)) {
            finish_row(p, (int64_t)row, acc, alpha, beta, yold, lane);
            if (c.row >= (IDX)p.rows)
                return false;
            if (beta != 0.0f && lane == 0)
                yold = Ty<T>::y_at(p.y + (int64_t)c.row * p.incy);
            carry = 0;
            acc = 0.0f;
        }
        return true;
    };
    G buf1;
    while (step(buf0, buf1) && step(buf1, buf0)) {
    }
}

/* RP: row_ptr element type in memory. IDX: index arithmetic (rows, entries and columns; int32 only when all stay far
 * below 2^31, which the caller checks). UNIT: incx == 1. */
template <typename T, typename RP, typename IDX, bool UNIT>
__global__ void __launch_bounds__(kBlockThreads, (blocks_per_sm<T, IDX, UNIT>())) spmv_kernel(const Params<T, RP> p)
{
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    if (alpha == 0.0f || p.cols == 0) {
        scale_only(p, beta);
        return;
    }
    const int lane = (int)(threadIdx.x % kWarp);
    const IDX first = (IDX)(blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarp);
    const IDX nwarps = (IDX)(gridDim.x * kWarpsPerBlock);
    if (first >= (IDX)p.rows)
        return;
    Cursor<Params<T, RP>, IDX> c;
    c.start(p, first, nwarps);
    const typename Ty<T>::Group buf0 = load_group(p, c.cb + (IDX)(lane * kLaneEntries), c.e);
    walk_rows<T, RP, IDX, UNIT, false, false, kWarpsPerBlock>(p, alpha, beta, nullptr, buf0, c);
}

/* ---- STAGED: x in shared memory as fp32 (fast path only: int32 indices, incx == 1, cols <= STAGE_MAX_COLS) */
constexpr int kStagedThreads = MACKO_SPMV_STAGED_THREADS;
constexpr int kStagedWarps = kStagedThreads / kWarp;
template <typename T> constexpr int staged_blocks_per_sm()
{
    return sizeof(T) == 2 ? MACKO_SPMV_STAGED_BLOCKS_PER_SM_H : MACKO_SPMV_STAGED_BLOCKS_PER_SM_S;
}

/* Copies x[0, cols) into sx as fp32 (cols <= MACKO_SPMV_STAGE_MAX_COLS); returns nonzero when this thread saw a
 * non-finite value. With x 16-byte aligned, every thread issues kIt 16-byte loads at once before their first use, in
 * rounds of kIt * THREADS vectors (one round for up to 12288 fp16 columns), so that staging costs about one L2 round
 * trip per round instead of one per few elements; the cols % (16 / sizeof(T)) tail and unaligned x go element by
 * element. */
template <typename T, int THREADS> __device__ __forceinline__ int stage_x(const T *x, int cols, float *sx)
{
    constexpr int kV = 16 / (int)sizeof(T); /* elements per 16-byte load */
    constexpr int kIt = 3;                  /* 16-byte loads in flight per thread and round */
    int nonfinite = 0;
    int done = 0;
    if ((reinterpret_cast<uintptr_t>(x) & 15u) == 0) {
        const int nvec = cols / kV;
        const uint4 *xv = reinterpret_cast<const uint4 *>(x);
        for (int base = 0; base < nvec; base += kIt * THREADS) {
            uint4 r[kIt];
#pragma unroll
            for (int j = 0; j < kIt; j++) {
                const int v = base + (int)threadIdx.x + j * THREADS;
                r[j] = v < nvec ? __ldg(xv + v) : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int j = 0; j < kIt; j++) {
                const int v = base + (int)threadIdx.x + j * THREADS;
                if (v < nvec) {
                    const uint32_t w[4] = {r[j].x, r[j].y, r[j].z, r[j].w};
                    float f[kV];
#pragma unroll
                    for (int i = 0; i < kV; i++) {
                        f[i] = Ty<T>::packed_value(w, i);
                        nonfinite |= !isfinite(f[i]);
                    }
                    float4 *dst = reinterpret_cast<float4 *>(sx + (size_t)v * kV);
#pragma unroll
                    for (int i = 0; i < kV / 4; i++)
                        dst[i] = make_float4(f[4 * i], f[4 * i + 1], f[4 * i + 2], f[4 * i + 3]);
                }
            }
        }
        done = nvec * kV;
    }
    for (int i = done + (int)threadIdx.x; i < cols; i += THREADS) {
        const float v = Ty<T>::x_value(Ty<T>::x_bits(x + i));
        sx[i] = v;
        nonfinite |= !isfinite(v);
    }
    return nonfinite;
}

/* x lives in dynamic shared memory: cols fp32 values rounded up to 16 bytes (the plan's smem). */
template <typename T>
__global__ void __launch_bounds__(kStagedThreads, staged_blocks_per_sm<T>()) spmv_staged(const Params<T, int32_t> p)
{
    extern __shared__ __align__(16) float sx[];
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    if (alpha == 0.0f || p.cols == 0) {
        scale_only(p, beta);
        return;
    }
    const int lane = (int)(threadIdx.x % kWarp);
    const int first = (int)(blockIdx.x * kStagedWarps + threadIdx.x / kWarp);
    const int nwarps = (int)(gridDim.x * kStagedWarps);
    /* Start the A stream first, so that DRAM is busy while x is staged. */
    Cursor<Params<T, int32_t>, int32_t> c;
    typename Ty<T>::Group buf0 = Ty<T>::zero();
    const bool active = first < (int)p.rows;
    if (active) {
        c.start(p, first, nwarps);
        buf0 = load_group(p, c.cb + lane * kLaneEntries, c.e);
    }
    const int nonfinite = __syncthreads_or(stage_x<T, kStagedThreads>(p.x, (int)p.cols, sx));
    if (!active)
        return;
    if (nonfinite)
        walk_rows<T, int32_t, int32_t, true, true, true, kStagedWarps>(p, alpha, beta, sx, buf0, c);
    else
        walk_rows<T, int32_t, int32_t, true, true, false, kStagedWarps>(p, alpha, beta, sx, buf0, c);
}

template <typename T, typename RP> Params<T, RP> make_params(const macko_kargs *a)
{
    Params<T, RP> p;
    p.rows = a->rows;
    p.cols = a->cols;
    p.values = static_cast<const T *>(a->values);
    p.dwords = reinterpret_cast<const uint32_t *>(a->deltas);
    p.row_ptr = static_cast<const RP *>(a->row_ptr);
    p.x = static_cast<const T *>(a->b);
    p.incx = a->incb;
    p.y = static_cast<T *>(a->c);
    p.incy = a->incc;
    p.alpha_dev = a->alpha_dev;
    p.beta_dev = a->beta_dev;
    p.alpha = a->alpha;
    p.beta = a->beta;
    return p;
}

template <typename T, typename RP, typename IDX, bool UNIT> int launch_warp(const macko_kargs *a, const macko_launch *L)
{
    spmv_kernel<T, RP, IDX, UNIT><<<L->grid, L->block, 0, reinterpret_cast<cudaStream_t>(a->stream)>>>(
        make_params<T, RP>(a));
    return (int)cudaGetLastError();
}

template <typename T> int launch_staged(const macko_kargs *a, const macko_launch *L)
{
    spmv_staged<T><<<L->grid, L->block, L->smem, reinterpret_cast<cudaStream_t>(a->stream)>>>(
        make_params<T, int32_t>(a));
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int macko_spmv_staged_optin(int elem, int bytes)
{
    const cudaError_t e =
        elem == 2 ? cudaFuncSetAttribute(spmv_staged<__half>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
                  : cudaFuncSetAttribute(spmv_staged<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    return (int)e;
}

/* The thin C launchers: one list, stamped per value type. */
#define MACKO_SPMV_LAUNCHER(L, T, NAME, RP, IDX, UNIT)                                                               \
    extern "C" int macko_##L##_spmv_warp_##NAME(const macko_kargs *a, const macko_launch *k)                         \
    {                                                                                                                \
        return launch_warp<T, RP, IDX, UNIT>(a, k);                                                                  \
    }
#define MACKO_SPMV_LAUNCHERS(L, T)                                                                                   \
    MACKO_SPMV_LAUNCHER(L, T, i32_unit, int32_t, int32_t, true)                                                      \
    MACKO_SPMV_LAUNCHER(L, T, i32_strided, int32_t, int32_t, false)                                                  \
    MACKO_SPMV_LAUNCHER(L, T, i64_rp32, int32_t, int64_t, false)                                                     \
    MACKO_SPMV_LAUNCHER(L, T, i64_rp64, int64_t, int64_t, false)                                                     \
    extern "C" int macko_##L##_spmv_staged(const macko_kargs *a, const macko_launch *k)                              \
    {                                                                                                                \
        return launch_staged<T>(a, k);                                                                               \
    }

MACKO_SPMV_LAUNCHERS(h, __half)
MACKO_SPMV_LAUNCHERS(s, float)
