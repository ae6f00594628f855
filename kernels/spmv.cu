/* SpMV on the MACKO format: y = alpha*M*x + beta*y (FORMAT.md; macko_spmv_args in macko_kernels.h).
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
 * Two geometries of the fast path (macko_kernels.h, chosen per matrix shape): WARP (no shared memory) and STAGED
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

#include <algorithm>
#include <atomic>
#include <type_traits>

namespace {

using namespace macko_decode;

/* Tuning knobs (defaults measured in bench/NOTES.md); overridable only for experiments. */
#ifndef MACKO_SPMV_BLOCK_THREADS
#define MACKO_SPMV_BLOCK_THREADS 256
#endif
#ifndef MACKO_SPMV_BLOCKS_PER_SM_H /* fp16 fast path (incx == 1, 32-bit indices); other variants use 4 */
#define MACKO_SPMV_BLOCKS_PER_SM_H 6
#endif
#ifndef MACKO_SPMV_BLOCKS_PER_SM_S /* fp32 fast path */
#define MACKO_SPMV_BLOCKS_PER_SM_S 4
#endif

constexpr int kBlockThreads = MACKO_SPMV_BLOCK_THREADS;
constexpr int kWarpsPerBlock = kBlockThreads / kWarp;
/* Blocks per SM the grid is sized for, per variant; __launch_bounds__ makes ptxas fit the registers to it. */
template <typename T, typename IDX, bool UNIT> constexpr int blocks_per_sm()
{
    return !(sizeof(IDX) == 4 && UNIT) ? 4 : sizeof(T) == 2 ? MACKO_SPMV_BLOCKS_PER_SM_H : MACKO_SPMV_BLOCKS_PER_SM_S;
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
constexpr int kStagedThreads = 512;
constexpr int kStagedWarps = kStagedThreads / kWarp;
template <typename T> constexpr int staged_blocks_per_sm() { return sizeof(T) == 2 ? 3 : 2; }

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

/* x lives in dynamic shared memory: staged_smem_bytes(cols) bytes (see launch). */
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

/* Dynamic shared memory of one STAGED block: x as fp32, rounded up to 16 bytes. */
inline int64_t staged_smem_bytes(int64_t cols) { return (cols * 4 + 15) & ~(int64_t)15; }

/* The current device's shared-memory limits (per block with opt-in, per SM), cached per device; {48 KiB, 0} when
 * they cannot be read. */
constexpr int kMaxDevices = 64;
inline void smem_limits(int &per_block, int &per_sm, int &dev)
{
    static std::atomic<int> block_cache[kMaxDevices], sm_cache[kMaxDevices];
    per_block = 48 * 1024;
    per_sm = 0;
    dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)cudaGetLastError();
        dev = -1;
        return;
    }
    int b = block_cache[dev].load(std::memory_order_relaxed), m = sm_cache[dev].load(std::memory_order_relaxed);
    if (b == 0) {
        if (cudaDeviceGetAttribute(&b, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&m, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess) {
            (void)cudaGetLastError();
            return;
        }
        block_cache[dev].store(b, std::memory_order_relaxed);
        sm_cache[dev].store(m, std::memory_order_relaxed);
    }
    per_block = b;
    per_sm = m;
}

/* spmv_staged<T> may use up to per_block bytes of dynamic shared memory on device dev (set once per device). */
template <typename T> inline bool staged_allow_smem(int dev, int per_block)
{
    static std::atomic<bool> done[kMaxDevices];
    if (done[dev].load(std::memory_order_acquire))
        return true;
    if (cudaFuncSetAttribute(spmv_staged<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, per_block) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    done[dev].store(true, std::memory_order_release);
    return true;
}

/* Blocks of STAGED per SM for cols columns (3 as the registers allow, fewer when x does not fit 3 times), or 0 when
 * fewer than 2 fit or the device cannot give a block the bytes: then WARP runs. Up to 48 KiB no query is needed. */
template <typename T> inline int staged_fit(int64_t cols)
{
    const int64_t bytes = staged_smem_bytes(cols);
    if (cols > MACKO_SPMV_STAGE_MAX_COLS)
        return 0;
    if (bytes <= 48 * 1024)
        return staged_blocks_per_sm<T>();
    int per_block = 0, per_sm = 0, dev = -1;
    smem_limits(per_block, per_sm, dev);
    const int64_t fit = per_sm / (bytes + 1024); /* 1 KiB per block is reserved by the system */
    if (dev < 0 || bytes > per_block || fit < 2 || !staged_allow_smem<T>(dev, per_block))
        return 0;
    return (int)std::min<int64_t>(fit, staged_blocks_per_sm<T>());
}

/* Enough warps to cover the rows in as few equal rounds as the resident warps allow. */
inline unsigned grid_blocks(int64_t rows, int sm_count, int blocks_per_sm, int warps_per_block = kWarpsPerBlock)
{
    int64_t max_warps = (int64_t)(sm_count > 0 ? sm_count : 1) * blocks_per_sm * warps_per_block;
    int64_t per_warp = (rows + max_warps - 1) / max_warps;
    if (per_warp < 1)
        per_warp = 1;
    int64_t warps = (rows + per_warp - 1) / per_warp;
    int64_t blocks = (warps + warps_per_block - 1) / warps_per_block;
    return (unsigned)(blocks < 1 ? 1 : blocks);
}

template <typename T, typename RP> Params<T, RP> make_params(const macko_spmv_args *a)
{
    Params<T, RP> p;
    p.rows = a->rows;
    p.cols = a->cols;
    p.values = static_cast<const T *>(a->values);
    p.dwords = reinterpret_cast<const uint32_t *>(a->deltas);
    p.row_ptr = static_cast<const RP *>(a->row_ptr);
    p.x = static_cast<const T *>(a->x);
    p.incx = a->incx;
    p.y = static_cast<T *>(a->y);
    p.incy = a->incy;
    p.alpha_dev = a->alpha_dev;
    p.beta_dev = a->beta_dev;
    p.alpha = a->alpha;
    p.beta = a->beta;
    return p;
}

template <typename T, typename RP, typename IDX, bool UNIT> int launch(const macko_spmv_args *a)
{
    cudaStream_t st = reinterpret_cast<cudaStream_t>(a->stream);
    if (std::is_same<IDX, int32_t>::value && std::is_same<RP, int32_t>::value && UNIT) {
        switch (a->kernel) {
        case MACKO_SPMV_KERNEL_STAGED:
            if (const int per_sm = staged_fit<T>(a->cols)) {
                const Params<T, int32_t> p = make_params<T, int32_t>(a);
                const unsigned blocks = grid_blocks(a->rows, a->sm_count, per_sm, kStagedWarps);
                spmv_staged<T><<<blocks, kStagedThreads, (size_t)staged_smem_bytes(a->cols), st>>>(p);
                return (int)cudaGetLastError();
            }
            break;
        default: break;
        }
    }
    const Params<T, RP> p = make_params<T, RP>(a);
    const unsigned blocks = grid_blocks(a->rows, a->sm_count, blocks_per_sm<T, IDX, UNIT>());
    spmv_kernel<T, RP, IDX, UNIT><<<blocks, kBlockThreads, 0, st>>>(p);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int macko_spmv_staged_blocks_per_sm(int64_t cols, int elem)
{
    return elem == 2 ? staged_fit<__half>(cols) : staged_fit<float>(cols);
}

/* The thin C launchers: one list, stamped per value type. */
#define MACKO_SPMV_LAUNCHER(L, T, NAME, RP, IDX, UNIT)                                                               \
    extern "C" int macko_spmv_##L##_##NAME(const macko_spmv_args *a) { return launch<T, RP, IDX, UNIT>(a); }
#define MACKO_SPMV_LAUNCHERS(L, T)                                                                                   \
    MACKO_SPMV_LAUNCHER(L, T, i32_unit, int32_t, int32_t, true)                                                      \
    MACKO_SPMV_LAUNCHER(L, T, i32_strided, int32_t, int32_t, false)                                                  \
    MACKO_SPMV_LAUNCHER(L, T, i64_rp32, int32_t, int64_t, false)                                                     \
    MACKO_SPMV_LAUNCHER(L, T, i64_rp64, int64_t, int64_t, false)

MACKO_SPMV_LAUNCHERS(h, __half)
MACKO_SPMV_LAUNCHERS(s, float)
