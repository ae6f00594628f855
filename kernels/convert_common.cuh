/* Shared pieces of the conversion kernels (convert_dense.cu, convert_csr.cu, convert.cu): constants, warp helpers,
 * the block-wide statistics flush. Included by .cu files only; everything has internal linkage. */
#ifndef MACKO_CONVERT_COMMON_CUH
#define MACKO_CONVERT_COMMON_CUH

#include "convert.h"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;
constexpr int kWarps = kBlock / kWarp;
constexpr int kUnroll = 8;     /* row-major: chunks of 32 columns loaded before they are scanned */
constexpr int kVecUnroll = 2;  /* aligned row-major count: 16-byte loads per lane in flight */
constexpr int kTileRows = 32;  /* column-major tile: rows x columns */
constexpr int kTileCols = 64;
constexpr int kRowsPerWarp = kTileRows / kWarps;
constexpr int kBigPad = 8;     /* CSR fill: longer padding runs are written by the whole warp */
constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr unsigned long long kCap = 1ull << 62;
static_assert(kTileRows == kWarp, "a tile column is one warp-wide load");
static_assert(kTileRows % kWarps == 0 && kTileCols % kWarp == 0 && kTileCols % kWarps == 0, "tile shape");

template <typename T> __device__ __forceinline__ bool is_zero(T v);
template <> __device__ __forceinline__ bool is_zero<uint16_t>(uint16_t v) { return (v & 0x7FFFu) == 0; }
template <> __device__ __forceinline__ bool is_zero<uint32_t>(uint32_t v) { return (v & 0x7FFFFFFFu) == 0; }
template <> __device__ __forceinline__ bool is_zero<uint64_t>(uint64_t v)
{
    return (v & 0x7FFFFFFFFFFFFFFFull) == 0;
}

__device__ __forceinline__ unsigned lanemask_lt()
{
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

/* a, b <= kCap: the sum cannot wrap. */
__device__ __forceinline__ unsigned long long sat_add(unsigned long long a, unsigned long long b)
{
    unsigned long long s = a + b;
    return s > kCap ? kCap : s;
}

/* The highest lane holding an entry when n > 0 entries remain from the chunk start. */
__device__ __forceinline__ int last_lane(int64_t n) { return n >= kWarp ? kWarp - 1 : (int)n - 1; }

__device__ __forceinline__ int64_t warp_sum(int64_t v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFull, v, o);
    return v;
}

__device__ __forceinline__ int64_t warp_incl_scan(int64_t v, int lane)
{
#pragma unroll
    for (int o = 1; o < kWarp; o <<= 1) {
        int64_t t = __shfl_up_sync(kFull, v, o);
        if (lane >= o)
            v += t;
    }
    return v;
}

/* Exclusive max-scan over the lanes seeded with `seed` (lane 0 gets seed); *all = max(seed, every lane's v). */
__device__ __forceinline__ int64_t warp_excl_max(int64_t v, int lane, int64_t seed, int64_t *all)
{
    int64_t inc = v;
#pragma unroll
    for (int o = 1; o < kWarp; o <<= 1) {
        const int64_t t = __shfl_up_sync(kFull, inc, o);
        if (lane >= o && t > inc)
            inc = t;
    }
    int64_t ex = __shfl_up_sync(kFull, inc, 1);
    const int64_t tot = __shfl_sync(kFull, inc, kWarp - 1);
    *all = tot > seed ? tot : seed;
    if (lane == 0 || ex < seed)
        ex = seed;
    return ex;
}

__device__ __forceinline__ void atomic_sat_add(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *(volatile unsigned long long *)p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, sat_add(assumed, v));
    } while (old != assumed);
}

/* Block-wide sum of the per-warp totals (held by lane 0), one atomic per block. Called by every thread. */
__device__ __forceinline__ void flush_stats(unsigned long long ent, unsigned long long nz, unsigned long long bad_rp,
                            unsigned long long bad_col, macko_conv_stats *st)
{
    __shared__ unsigned long long s[4][kWarps];
    const int w = threadIdx.x / kWarp;
    if ((threadIdx.x & (kWarp - 1)) == 0) {
        s[0][w] = ent;
        s[1][w] = nz;
        s[2][w] = bad_rp;
        s[3][w] = bad_col;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long e = 0, n = 0, br = MACKO_CONV_NONE, bc = MACKO_CONV_NONE;
        for (int i = 0; i < kWarps; i++) {
            e = sat_add(e, s[0][i]);
            n += s[1][i];
            br = min(br, s[2][i]);
            bc = min(bc, s[3][i]);
        }
        if (e != 0)
            atomic_sat_add(&st->entries, e);
        if (n != 0)
            atomicAdd(&st->nnz, n);
        if (br != MACKO_CONV_NONE)
            atomicMin(&st->bad_rp, br);
        if (bc != MACKO_CONV_NONE)
            atomicMin(&st->bad_col, bc);
    }
}

static __global__ void init_kernel(macko_conv_stats *st, int64_t *last_count)
{
    st->entries = 0;
    st->nnz = 0;
    st->bad_rp = MACKO_CONV_NONE;
    st->bad_col = MACKO_CONV_NONE;
    *last_count = 0;
}

/* Blocks for work_items items of per_block each, capped at what the device keeps resident at once (a grid-stride
 * loop over more blocks than fit would run a second, mostly idle wave). */
template <typename K> inline int grid_for(K kernel, int64_t work_items, int64_t per_block, int sm_count)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0) != cudaSuccess || per_sm < 1)
        per_sm = 1;
    int64_t g = (work_items + per_block - 1) / per_block;
    const int64_t cap = (int64_t)(sm_count > 0 ? sm_count : 1) * per_sm;
    if (g > cap)
        g = cap;
    return g < 1 ? 1 : (int)g;
}

} // namespace

#endif
