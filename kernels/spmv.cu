/* SpMV on the MACKO format: y = alpha*M*x + beta*y (FORMAT.md; macko_kargs in macko_kernels.h, n = 1).
 *
 * One warp per row, persistent grid-stride over rows; the chunk decode (8 entries per lane per 256-entry warp step,
 * predicate masking of entries outside the row and of padding, packed in-word prefix + warp scan for the columns)
 * lives in macko_decode.cuh and the row walk in macko_walk.cuh, both shared with the SpMM kernels; this file adds the
 * per-chunk gather of x and the per-row warp sum.
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
#include "macko_walk.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

using namespace macko_walk;

constexpr int kBlockThreads = MACKO_SPMV_BLOCK_THREADS;
constexpr int kWarpsPerBlock = kBlockThreads / kWarp;
/* Resident threads per SM of the architecture being compiled: the blocks per SM asked of __launch_bounds__ must fit
 * (sm_75 holds 1024, sm_86/89 1536); the plan caps its grids with the device's own figure the same way. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kMaxThreadsPerSm = 1024;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kMaxThreadsPerSm = 1536;
#else
constexpr int kMaxThreadsPerSm = 2048;
#endif
constexpr int resident(int blocks, int threads)
{
    return blocks * threads <= kMaxThreadsPerSm ? blocks : kMaxThreadsPerSm / threads;
}
/* Blocks per SM the grid is sized for, per variant; __launch_bounds__ makes ptxas fit the registers to it. */
template <typename T, typename IDX, bool UNIT> constexpr int blocks_per_sm()
{
    return resident(sizeof(T) == 8                 ? MACKO_SPMV_BLOCKS_PER_SM_D
                    : !(sizeof(IDX) == 4 && UNIT) ? MACKO_SPMV_BLOCKS_PER_SM_OTHER
                    : sizeof(T) == 2            ? MACKO_SPMV_BLOCKS_PER_SM_H
                                                : MACKO_SPMV_BLOCKS_PER_SM_S,
                    kBlockThreads);
}
static_assert(kBlockThreads % kWarp == 0, "whole warps per block");

template <typename T, typename RP, typename X, typename Y, typename IDX>
__device__ __forceinline__ typename Ty<T>::Group load_group(const Params<T, RP, X, Y> &p, IDX k0, IDX e)
{
    return macko_decode::load_group<T, IDX>(p.values, p.dwords, k0, e);
}

/* One warp step on the chunk at cb of the row [b, e): mask the entries outside the row, decode the columns, gather
 * x, accumulate into acc (this lane's partial sum, in entry order). carry: delta sum of the row's entries before cb. */
template <typename T, typename RP, typename X, typename Y, typename IDX, bool UNIT, typename A>
__device__ __forceinline__ void chunk_fma(const Params<T, RP, X, Y> &p, typename Ty<T>::Group &cur, IDX cb, IDX b,
                                          IDX e, int lane, IDX &carry, A &acc)
{
    const ChunkCols<IDX> cc = decode_chunk<T, IDX>(cur, cb, b, e, lane, carry);
    const IDX base = cc.base;

    /* Gather x: all addresses first, then all loads (independent, predicated), then the products.
     * Unloaded x stays 0 and its value is +-0 (padding or masked), so the products need no predicate. */
    uint32_t off[kLaneEntries];
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++)
        off[i] = cc.off(i);
    typename Ty<X>::Bits xs[kLaneEntries];
    if (UNIT) {
        const uint64_t xl = reinterpret_cast<uint64_t>(p.b + base);
#pragma unroll
        for (int i = 0; i < kLaneEntries; i++)
            xs[i] = Ty<T>::nonzero(cur, i)
                        ? Ty<X>::x_bits(reinterpret_cast<const X *>(xl + (uint64_t)off[i] * sizeof(X)))
                        : 0u;
    } else {
#pragma unroll
        for (int i = 0; i < kLaneEntries; i++)
            xs[i] = Ty<T>::nonzero(cur, i) ? Ty<X>::x_bits(p.b + (int64_t)(base + (IDX)off[i]) * p.incb) : 0u;
    }
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++)
        acc = fma_acc((A)Ty<T>::value(cur, i), (A)Ty<X>::x_value(xs[i]), acc);
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
template <typename T, typename RP, typename X, typename Y, typename A>
__device__ __forceinline__ void finish_row(const Params<T, RP, X, Y> &p, int64_t row, A acc, A alpha, A beta, A yold,
                                           int lane)
{
#pragma unroll
    for (int o = kWarp / 2; o > 0; o >>= 1)
        acc += __shfl_down_sync(kFull, acc, o);
    if (lane == 0) {
        A r = alpha * acc;
        if (beta != (A)0)
            r = fma_acc(beta, yold, r);
        Ty<Y>::y_put(p.c + row * p.incc, r);
    }
}

/* The row walk of one warp (see the file comment) with one partial sum per lane (accumulation type A), summed over
 * the warp and written at each row's end. CHUNK(cur, cb, b, e, carry, acc): chunk_fma or chunk_fma_staged. START:
 * the first chunk's loads, already issued: its register buffer (DEPTH 1: walk_rows) or the primed load ring
 * (walk_rows_deep). */
template <int DEPTH, typename T, typename RP, typename X, typename Y, typename IDX, typename START, typename CHUNK,
          typename A>
__device__ __forceinline__ void walk_vector(const Params<T, RP, X, Y> &p, A alpha, A beta,
                                            Cursor<Params<T, RP, X, Y>, IDX> &c, START &start, IDX nwarps, int lane,
                                            CHUNK &&chunk)
{
    using G = typename Ty<T>::Group;
    A yold = 0;
    if (beta != (A)0 && lane == 0)
        yold = Ty<Y>::y_at(p.c + (int64_t)c.row * p.incc);
    A acc = 0;
    auto fma = [&](G &cur, IDX cb, IDX b, IDX e, IDX &carry) { chunk(cur, cb, b, e, carry, acc); };
    auto finish = [&](IDX row) { finish_row(p, (int64_t)row, acc, alpha, beta, yold, lane); };
    auto begin = [&]() {
        if (beta != (A)0 && lane == 0)
            yold = Ty<Y>::y_at(p.c + (int64_t)c.row * p.incc);
        acc = 0;
    };
    if constexpr (DEPTH == 1)
        walk_rows<T>(p, c, start, nwarps, lane, fma, finish, begin);
    else
        walk_rows_deep<DEPTH, T>(p, c, start, nwarps, lane, fma, finish, begin);
}

/* The first chunk's loads of a warp whose cursor is c: its register buffer (DEPTH 1) or the primed ring. */
template <int DEPTH, typename T, typename P, typename IDX> struct Start {
    using type = LoadRing<DEPTH, T, P, IDX>;
    static __device__ __forceinline__ void issue(type &s, const P &p, const Cursor<P, IDX> &c, IDX nwarps, int lane)
    {
        s.prime(p, c, nwarps, lane);
    }
};
template <typename T, typename P, typename IDX> struct Start<1, T, P, IDX> {
    using type = typename Ty<T>::Group;
    static __device__ __forceinline__ void issue(type &s, const P &p, const Cursor<P, IDX> &c, IDX, int lane)
    {
        s = load_group(p, c.cb + (IDX)(lane * kLaneEntries), c.e);
    }
};

/* RP: row_ptr element type in memory. IDX: index arithmetic (rows, entries and columns; int32 only when all stay far
 * below 2^31, which the plan checks). UNIT: incx == 1. */
template <typename T, typename RP, typename IDX, bool UNIT, typename X, typename Y, int DEPTH>
__global__ void __launch_bounds__(kBlockThreads, (DEPTH == 1 ? blocks_per_sm<T, IDX, UNIT>()
                                                              : resident(MACKO_SPMV_DEEP_BLOCKS_PER_SM, kBlockThreads)))
    spmv_kernel(const Params<T, RP, X, Y> p)
{
    using G = typename Ty<T>::Group;
    using A = typename Ty<T>::Acc;
    A alpha, beta;
    if (scaled_only<true>(p, alpha, beta))
        return;
    int lane;
    IDX first, nwarps;
    warp_rows<kWarpsPerBlock>(lane, first, nwarps);
    if (first >= (IDX)p.rows)
        return;
    Cursor<Params<T, RP, X, Y>, IDX> c;
    c.start(p, first, nwarps);
    using S = Start<DEPTH, T, Params<T, RP, X, Y>, IDX>;
    typename S::type s;
    S::issue(s, p, c, nwarps, lane);
    walk_vector<DEPTH>(p, alpha, beta, c, s, nwarps, lane, [&](G &cur, IDX cb, IDX b, IDX e, IDX &carry, A &acc) {
        chunk_fma<T, RP, X, Y, IDX, UNIT>(p, cur, cb, b, e, lane, carry, acc);
    });
}

/* ---- STAGED: x in shared memory as fp32 (fast path only: int32 indices, incx == 1, cols <= STAGE_MAX_COLS) */
constexpr int kStagedThreads = MACKO_SPMV_STAGED_THREADS;
constexpr int kStagedWarps = kStagedThreads / kWarp;
template <typename T> constexpr int staged_blocks_per_sm()
{
    return resident(sizeof(T) == 2 ? MACKO_SPMV_STAGED_BLOCKS_PER_SM_H : MACKO_SPMV_STAGED_BLOCKS_PER_SM_S,
                    kStagedThreads);
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
template <typename T, typename X, typename Y, int DEPTH>
__global__ void __launch_bounds__(kStagedThreads, (DEPTH == 1 ? staged_blocks_per_sm<T>()
                                                               : resident(MACKO_SPMV_STAGED_DEEP_BLOCKS_PER_SM,
                                                                          kStagedThreads)))
    spmv_staged(const Params<T, int32_t, X, Y> p)
{
    using G = typename Ty<T>::Group;
    using S = Start<DEPTH, T, Params<T, int32_t, X, Y>, int32_t>;
    extern __shared__ __align__(16) float sx[];
    float alpha, beta;
    if (scaled_only<true>(p, alpha, beta))
        return;
    int lane, first, nwarps;
    warp_rows<kStagedWarps>(lane, first, nwarps);
    /* Start the A stream first, so that DRAM is busy while x is staged. */
    Cursor<Params<T, int32_t, X, Y>, int32_t> c;
    typename S::type s;
    const bool active = first < (int)p.rows;
    if (active) {
        c.start(p, first, nwarps);
        S::issue(s, p, c, nwarps, lane);
    }
    const int nonfinite = __syncthreads_or(stage_x<X, kStagedThreads>(p.b, (int)p.cols, sx));
    if (!active)
        return;
    const uint32_t last_col = (uint32_t)(p.cols - 1);
    if (nonfinite)
        walk_vector<DEPTH>(p, alpha, beta, c, s, nwarps, lane,
                           [&](G &cur, int cb, int b, int e, int &carry, float &acc) {
                               chunk_fma_staged<T, int32_t, true>(sx, last_col, cur, cb, b, e, lane, carry, acc);
                           });
    else
        walk_vector<DEPTH>(p, alpha, beta, c, s, nwarps, lane,
                           [&](G &cur, int cb, int b, int e, int &carry, float &acc) {
                               chunk_fma_staged<T, int32_t, false>(sx, last_col, cur, cb, b, e, lane, carry, acc);
                           });
}

/* The deepest prefetch with instances (macko_walk.cuh's LoadRing): 3 chunks for 16-bit values, 2 for fp32, none
 * for fp64; deeper spills at the deep kernels' 64 registers (the plan's MACKO_SPMV_MAX_DEPTH_OF says the same). */
template <typename T> constexpr int max_depth() { return sizeof(T) == 2 ? 3 : sizeof(T) == 4 ? 2 : 1; }

template <typename T, typename RP, typename IDX, bool UNIT, typename X, typename Y, int DEPTH>
int launch_warp_at(const macko_kargs *a, const macko_launch *L)
{
    spmv_kernel<T, RP, IDX, UNIT, X, Y, DEPTH><<<L->grid, L->block, 0, reinterpret_cast<cudaStream_t>(a->stream)>>>(
        make_params<T, RP, X, Y>(a));
    return (int)cudaGetLastError();
}

/* The prefetch depth is the plan's (L->depth); only the fast variant (int32, incx == 1) has deep instances. */
template <typename T, typename RP, typename IDX, bool UNIT, typename X, typename Y>
int launch_warp(const macko_kargs *a, const macko_launch *L)
{
    if constexpr (sizeof(IDX) == 4 && UNIT && max_depth<T>() >= 2) {
        if (L->depth == 2)
            return launch_warp_at<T, RP, IDX, UNIT, X, Y, 2>(a, L);
        if constexpr (max_depth<T>() >= 3)
            if (L->depth == 3)
                return launch_warp_at<T, RP, IDX, UNIT, X, Y, 3>(a, L);
    }
    return launch_warp_at<T, RP, IDX, UNIT, X, Y, 1>(a, L);
}

template <typename T, typename X, typename Y, int DEPTH> int launch_staged_at(const macko_kargs *a, const macko_launch *L)
{
    spmv_staged<T, X, Y, DEPTH><<<L->grid, L->block, L->smem, reinterpret_cast<cudaStream_t>(a->stream)>>>(
        make_params<T, int32_t, X, Y>(a));
    return (int)cudaGetLastError();
}

template <typename T, typename X, typename Y> int launch_staged(const macko_kargs *a, const macko_launch *L)
{
    if constexpr (sizeof(T) == 8) {
        return (int)cudaErrorInvalidValue; /* no STAGED for fp64: the plan never asks for it */
    } else {
        if (L->depth == 2)
            return launch_staged_at<T, X, Y, 2>(a, L);
        if constexpr (max_depth<T>() >= 3)
            if (L->depth == 3)
                return launch_staged_at<T, X, Y, 3>(a, L);
        return launch_staged_at<T, X, Y, 1>(a, L);
    }
}

template <typename T, typename X, typename Y> cudaError_t staged_optin(int bytes)
{
    const cudaFuncAttribute attr = cudaFuncAttributeMaxDynamicSharedMemorySize;
    cudaError_t e = cudaFuncSetAttribute(spmv_staged<T, X, Y, 1>, attr, bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(spmv_staged<T, X, Y, 2>, attr, bytes);
    if constexpr (max_depth<T>() >= 3)
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(spmv_staged<T, X, Y, 3>, attr, bytes);
    return e;
}

} // namespace

extern "C" int macko_spmv_staged_optin(macko_datatype_t type, int bytes)
{
    cudaError_t e;
    switch (type) {
    case MACKO_R_16F:
        e = staged_optin<__half, __half, __half>(bytes);
        return (int)(e != cudaSuccess ? e : staged_optin<__half, float, float>(bytes));
    case MACKO_R_16BF:
        e = staged_optin<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16>(bytes);
        return (int)(e != cudaSuccess ? e : staged_optin<__nv_bfloat16, float, float>(bytes));
    case MACKO_R_32F: return (int)staged_optin<float, float, float>(bytes);
    default: return (int)cudaErrorInvalidValue;
    }
}

/* The thin C launchers: one list, stamped per type combination (macko_kernels.h). */
#define MACKO_SPMV_LAUNCHER(L, T, X, Y, NAME, RP, IDX, UNIT)                                                         \
    extern "C" int macko_##L##_spmv_warp_##NAME(const macko_kargs *a, const macko_launch *k)                         \
    {                                                                                                                \
        return launch_warp<T, RP, IDX, UNIT, X, Y>(a, k);                                                            \
    }
#define MACKO_SPMV_LAUNCHERS(L, T, X, Y)                                                                             \
    MACKO_SPMV_LAUNCHER(L, T, X, Y, i32_unit, int32_t, int32_t, true)                                                \
    MACKO_SPMV_LAUNCHER(L, T, X, Y, i32_strided, int32_t, int32_t, false)                                            \
    MACKO_SPMV_LAUNCHER(L, T, X, Y, i64_rp32, int32_t, int64_t, false)                                               \
    MACKO_SPMV_LAUNCHER(L, T, X, Y, i64_rp64, int64_t, int64_t, false)                                               \
    extern "C" int macko_##L##_spmv_staged(const macko_kargs *a, const macko_launch *k)                              \
    {                                                                                                                \
        return launch_staged<T, X, Y>(a, k);                                                                         \
    }

MACKO_SPMV_LAUNCHERS(h, __half, __half, __half)
MACKO_SPMV_LAUNCHERS(s, float, float, float)
MACKO_SPMV_LAUNCHERS(b, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16)
MACKO_SPMV_LAUNCHERS(d, double, double, double)
MACKO_SPMV_LAUNCHERS(hs, __half, float, float)
MACKO_SPMV_LAUNCHERS(bs, __nv_bfloat16, float, float)
