/* Small-n SpMM on the MACKO format: C = alpha*M*B + beta*C for n columns of B and C (macko_kargs in
 * macko_kernels.h; one launch covers one tile of NT columns; the plan, src/plan.c, chooses path, tile and layout).
 * The SpMV kernel (kernels/spmv.cu) with every entry of M applied to a tile of NT columns.
 *
 * The walk over M is the SpMV one (macko_walk.cuh): one warp per row, a persistent grid striding over the rows,
 * 256 entries per warp step, 8 per lane, the next chunk loaded while the current one is decoded. Per entry the lane
 * needs the NT values B(col, j0..j0+NT-1), which in column-major B lie ldb apart. The ways to get them:
 *
 * - STAGED: every block first copies the tile of B into shared memory transposed, one row of NT values per column
 *   of M (fp16 NT = 8: 16 bytes), so an entry costs one vector load (two or four when a row is wider than 16
 *   bytes: the rows are split into 16-byte planes) instead of NT scattered loads. One 1024-thread block per SM,
 *   since the tile (cols x NT values) fills most of the 227 KB. A padding or masked entry reads a zero row, so Inf or
 *   NaN in B at a column the row does not store never meets its zero value. The layout may be swizzled so that the
 *   8 lanes of a quarter warp, whose columns lie about 8/density apart, fall into different bank groups.
 * - GLOBAL: NT predicated loads per entry through the read-only cache; any shape, any stride, 64-bit indices.
 *
 * At a row's end the NT per-lane partial sums are reduced by a butterfly that halves the vector at each of the
 * first log2(NT) levels (NT - 1 shuffles instead of 5*NT), after which lane L holds column L / (32/NT). Fixed order
 * everywhere, fp32 accumulation, no atomics: bitwise reproducible. Columns beyond n in the last tile are zeros in
 * shared memory or unloaded in the global path, and never written. No allocation: graph-capturable.
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

constexpr int kStagedThreads = MACKO_MM_STAGED_THREADS;
constexpr int kGlobalThreads = MACKO_MM_GLOBAL_THREADS;
/* Blocks per SM the global path's grid is sized for (64 registers with 32-bit indices, 128 with 64-bit ones). */
template <typename T, typename IDX> constexpr int global_blocks_per_sm()
{
    return sizeof(T) == 8    ? MACKO_MM_GLOBAL_BLOCKS_PER_SM_D
           : sizeof(IDX) == 4 ? MACKO_MM_GLOBAL_BLOCKS_PER_SM_I32
                              : MACKO_MM_GLOBAL_BLOCKS_PER_SM_I64;
}
/* Widest staged tile: rows of at most 32 bytes (two 16-byte planes) keep the staged kernel within 64 registers. */
template <typename T> constexpr int max_staged_tile() { return MACKO_MM_STAGED_ROW_BYTES / (int)sizeof(T); }
/* Widest global tile: NT values of B per entry held in registers (within 64 registers with 32-bit indices, 128
 * with 64-bit ones, without spilling). */
template <typename X, typename IDX> constexpr int max_global_tile()
{
    return sizeof(IDX) == 8 ? MACKO_MM_GLOBAL_TILE_I64 : MACKO_MM_GLOBAL_TILE_BYTES_I32 / (int)sizeof(X);
}
static_assert(kStagedThreads % kWarp == 0 && kGlobalThreads % kWarp == 0, "whole warps per block");

/* The SpMM kernels' parameters: the common block and the staged path's layout of B's tile in shared memory (the
 * plan's swizzle, slots and plane_stride; unused by the global path). One block for both paths, not a second kernel
 * argument: with it ptxas gives both kernels the code they had before the walk was shared. */
template <typename T, typename RP, typename X = T, typename Y = X> struct MmParams : Params<T, RP, X, Y> {
    int swz;               /* spacing shift s of the swizzled layout (0: plain) */
    uint32_t slots;        /* rows per plane before the zero row (cols rounded up to 8 << s) */
    uint32_t plane_stride; /* bytes */
};

template <typename T, typename RP, typename X = T, typename Y = X>
MmParams<T, RP, X, Y> make_mm_params(const macko_kargs *a, const macko_launch *L)
{
    MmParams<T, RP, X, Y> p;
    static_cast<Params<T, RP, X, Y> &>(p) = make_params<T, RP, X, Y>(a);
    p.swz = L->swizzle;
    p.slots = L->slots;
    p.plane_stride = L->plane_stride;
    return p;
}

/* ---- a staged row: NT values of type T, split into 16-byte planes when wider */
template <int BYTES> struct VecOf;
template <> struct VecOf<4> {
    using type = uint32_t;
    static __device__ __forceinline__ void get(const type &v, uint32_t *w) { w[0] = v; }
    static __device__ __forceinline__ type make(const uint32_t *w) { return w[0]; }
};
template <> struct VecOf<8> {
    using type = uint2;
    static __device__ __forceinline__ void get(const type &v, uint32_t *w) { w[0] = v.x; w[1] = v.y; }
    static __device__ __forceinline__ type make(const uint32_t *w) { return make_uint2(w[0], w[1]); }
};
template <> struct VecOf<16> {
    using type = uint4;
    static __device__ __forceinline__ void get(const type &v, uint32_t *w)
    {
        w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
    }
    static __device__ __forceinline__ type make(const uint32_t *w) { return make_uint4(w[0], w[1], w[2], w[3]); }
};

template <typename T, int NT> struct Rows {
    static constexpr int kBytes = NT * (int)sizeof(T);
    static constexpr int kPlaneBytes = kBytes < 16 ? kBytes : 16;
    static constexpr int kPlanes = kBytes / kPlaneBytes;
    static constexpr int kPlaneWords = kPlaneBytes / 4;
    static constexpr int kWords = kBytes / 4;
    static_assert(kBytes >= 4 && kBytes % kPlaneBytes == 0, "a row is 4, 8 or 16 bytes, or whole 16-byte planes");
    using V = VecOf<kPlaneBytes>;
    static __device__ __forceinline__ void load(const char *smem, uint32_t stride, uint32_t q, uint32_t *w)
    {
#pragma unroll
        for (int p = 0; p < kPlanes; p++)
            V::get(reinterpret_cast<const typename V::type *>(smem + p * stride)[q], w + p * kPlaneWords);
    }
    static __device__ __forceinline__ void store(char *smem, uint32_t stride, uint32_t q, const uint32_t *w)
    {
#pragma unroll
        for (int p = 0; p < kPlanes; p++)
            reinterpret_cast<typename V::type *>(smem + p * stride)[q] = V::make(w + p * kPlaneWords);
    }
};

/* Swizzled layout with spacing shift s: column c = h*2^s + r (r < 2^s) sits in row r*P + h, P = slots >> s (a
 * multiple of 8), so its bank group (16-byte rows) is h & 7 = (c >> s) & 7: lanes whose columns are about 2^s apart
 * hit different groups. A bijection on [0, slots); s == 0 is not used (plain layout: row = column). Three
 * instructions per entry. */
__device__ __forceinline__ uint32_t swz_slot(uint32_t c, uint32_t lo, uint32_t P, int s)
{
    return (c & lo) * P + (c >> s);
}
/* The staging visits the rows in the order k = (h >> 3, r, h & 7): 8 consecutive threads write 8 consecutive rows
 * (r*P + h, no bank conflict) and a warp reads B at 8 groups of 4 consecutive columns (few sectors). Returns the
 * column; *q the row. */
__device__ __forceinline__ uint32_t swz_stage(uint32_t k, uint32_t lo, uint32_t P, int s, uint32_t *q)
{
    const uint32_t h = ((k >> (s + 3)) << 3) | (k & 7u), r = (k >> 3) & lo;
    *q = r * P + h;
    return (h << s) | r;
}

/* Butterfly levels of reduce_scatter from the one that halves M values down, one template instance per level so
 * that every index is a constant (see reduce_scatter). */
template <int NT, int M, typename A> __device__ __forceinline__ void halve(A (&acc)[NT], int lane)
{
    if constexpr (M > 1) {
        constexpr int o = kWarp / 2 / (NT / M);
        const bool upper = (lane & o) != 0;
#pragma unroll
        for (int k = 0; k < M / 2; k++) {
            const A send = upper ? acc[k] : acc[k + M / 2];
            const A keep = upper ? acc[k + M / 2] : acc[k];
            acc[k] = keep + __shfl_xor_sync(kFull, send, o);
        }
        halve<NT, M / 2>(acc, lane);
    }
}

/* Sum of acc over the warp for every column, scattered: afterwards lane L holds column L / (32/NT). The first
 * log2(NT) butterfly levels halve the vector (each lane keeps the half its lane bit selects and adds the partner's
 * copy of it), the remaining levels add whole values. */
template <int NT, typename A> __device__ __forceinline__ A reduce_scatter(A (&acc)[NT], int lane)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    /* Before sm_90 ptxas leaves the level loop below partly rolled for NT = 16 and puts acc in local memory (64
     * bytes of stack in the staged kernel): there the levels are unrolled by templates. Same operations in the same
     * order. (On sm_90 the loop is kept: its code is the measured one.) */
    constexpr bool kByTemplate = NT == 16;
#else
    constexpr bool kByTemplate = false;
#endif
    if constexpr (kByTemplate) {
        halve<NT, NT>(acc, lane);
    } else {
#pragma unroll
        for (int lvl = 0; (1 << lvl) < NT; lvl++) {
            const int m = NT >> lvl, o = kWarp / 2 >> lvl;
            const bool upper = (lane & o) != 0;
#pragma unroll
            for (int k = 0; k < m / 2; k++) {
                const A send = upper ? acc[k] : acc[k + m / 2];
                const A keep = upper ? acc[k + m / 2] : acc[k];
                acc[k] = keep + __shfl_xor_sync(kFull, send, o);
            }
        }
    }
    A v = acc[0];
#pragma unroll
    for (int o = kWarp / NT / 2; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFull, v, o);
    return v;
}

/* The lane that writes column j of a row, and which j. */
template <int NT> __device__ __forceinline__ bool writer_lane(int lane) { return (lane & (kWarp / NT - 1)) == 0; }
template <int NT> __device__ __forceinline__ int lane_column(int lane) { return lane / (kWarp / NT); }

/* CUDA-core accumulation: per lane NT partial sums (kept by the caller as a plain array, so that they stay in
 * registers), reduced by reduce_scatter at the row's end. */
template <int NT, typename A> __device__ __forceinline__ void zero_acc(A (&acc)[NT])
{
#pragma unroll
    for (int j = 0; j < NT; j++)
        acc[j] = (A)0;
}
template <typename T, typename RP, int NT, typename X = T, typename Y = X> struct LaneAcc {
    using A = typename Ty<T>::Acc;
    using P = Params<T, RP, X, Y>;
    A cold; /* C(row, lane_column) before the call, when beta != 0 */
    int jl;
    bool writes;
    __device__ __forceinline__ void init(const P &p, int lane, int64_t row, A beta)
    {
        jl = lane_column<NT>(lane);
        writes = writer_lane<NT>(lane) && jl < p.n;
        prefetch(p, row, beta);
    }
    __device__ __forceinline__ Y *at(const P &p, int64_t row) const
    {
        return p.c + row * p.incc + (int64_t)jl * p.ldc;
    }
    __device__ __forceinline__ void prefetch(const P &p, int64_t row, A beta)
    {
        cold = (beta != (A)0 && writes && row < p.rows) ? (A)Ty<Y>::y_at(at(p, row)) : (A)0;
    }
    __device__ __forceinline__ void finish(const P &p, int64_t row, A alpha, A beta, int lane, A (&acc)[NT])
    {
        const A sum = reduce_scatter<NT>(acc, lane);
        if (writes) {
            A r = alpha * sum;
            if (beta != (A)0)
                r = fma_acc(beta, cold, r);
            Ty<Y>::y_put(at(p, row), r);
        }
        zero_acc<NT>(acc);
    }
};

/* ---- STAGED: B's tile in shared memory (row q of every plane: B(col(q), j0..j0+NT-1), zeros past n and cols;
 * row `slots` all zeros) */
template <typename T, int NT, bool SWZ, typename RP>
__device__ __forceinline__ void stage_tile(const MmParams<T, RP> &p, char *smem, uint32_t lo, uint32_t blk, int s,
                                           int nthreads)
{
    using R = Rows<T, NT>;
    /* U rows per thread per round, all their loads issued before the first store: ~U times fewer dependent L2 round
     * trips before the first FMA (every block of the launch stages at the same moment). U * NT <= 16 registers (32
     * spilled under the 64-register cap; before sm_90 fp32 with NT = 4 spilled at 16: 8 there). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    constexpr int kRegs = sizeof(T) == 4 && NT == 4 ? 8 : 16;
#else
    constexpr int kRegs = 16;
#endif
    constexpr int U = NT >= 16 ? 1 : kRegs / NT;
    for (uint32_t k0 = threadIdx.x; k0 <= p.slots; k0 += (uint32_t)(U * nthreads)) {
        uint32_t bits[U][NT], qs[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t k = k0 + (uint32_t)(u * nthreads);
            uint32_t q = k;
            const uint32_t col = k >= p.slots ? 0xFFFFFFFFu : SWZ ? swz_stage(k, lo, blk, s, &q) : k;
            qs[u] = q;
#pragma unroll
            for (int j = 0; j < NT; j++)
                bits[u][j] = (j < p.n && (int64_t)col < p.cols)
                                 ? Ty<T>::x_bits(p.b + (int64_t)col * p.incb + (int64_t)j * p.ldb)
                                 : 0u;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (k0 + (uint32_t)(u * nthreads) > p.slots)
                break;
            uint32_t w[R::kWords];
#pragma unroll
            for (int k = 0; k < R::kWords; k++)
                w[k] = Ty<T>::kPerWord == 2 ? (bits[u][2 * k] | (bits[u][2 * k + 1] << 16)) : bits[u][k];
            R::store(smem, p.plane_stride, qs[u], w);
        }
    }
}

/* One chunk on the CUDA cores: per entry one row of NT values from shared memory, NT fused multiply-adds. */
template <typename T, int NT, bool SWZ>
__device__ __forceinline__ void staged_chunk_fma(typename Ty<T>::Group &cur, int cb, int b, int e, int lane,
                                                 int &carry, float (&acc)[NT], const char *smem, uint32_t stride,
                                                 uint32_t zero_row, uint32_t lo, uint32_t blk, int s)
{
    using R = Rows<T, NT>;
    const ChunkCols<int> cc = decode_chunk<T, int>(cur, cb, b, e, lane, carry);
    const uint32_t base = (uint32_t)cc.base;
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++) {
        const uint32_t col = base + cc.off(i);
        const uint32_t q = Ty<T>::nonzero(cur, i) ? (SWZ ? swz_slot(col, lo, blk, s) : col) : zero_row;
        uint32_t w[R::kWords];
        R::load(smem, stride, q, w);
        const float a = Ty<T>::value(cur, i);
#pragma unroll
        for (int j = 0; j < NT; j++)
            acc[j] = fmaf(a, Ty<T>::packed_value(w, j), acc[j]);
    }
}

/* Staged kernel: B's tile in shared memory, accumulation on the CUDA cores. */
template <typename T, int NT, bool SWZ, typename RP>
__global__ void __launch_bounds__(kStagedThreads, 1) mm_staged_kernel(const MmParams<T, RP> p)
{
    using G = typename Ty<T>::Group;
    extern __shared__ uint4 smem_u4[];
    char *smem = reinterpret_cast<char *>(smem_u4);
    float alpha, beta;
    if (scaled_only<false>(p, alpha, beta))
        return;
    const int s = SWZ ? p.swz : 0;
    const uint32_t lo = (1u << s) - 1u, blk = SWZ ? p.slots >> s : 0u; /* blk: P of swz_slot */
    int lane, first, nwarps;
    warp_rows<kStagedThreads / kWarp>(lane, first, nwarps);
    const bool active = first < (int)p.rows;

    /* The first chunk's loads go out before the staging, so that DRAM is busy meanwhile. */
    Cursor<MmParams<T, RP>, int> c;
    G buf0 = Ty<T>::zero();
    if (active) {
        c.start(p, first, nwarps);
        buf0 = load_group<T, int>(p.values, p.dwords, c.cb + lane * kLaneEntries, c.e);
    }
    stage_tile<T, NT, SWZ>(p, smem, lo, blk, s, kStagedThreads);
    __syncthreads();
    if (!active)
        return;

    const uint32_t zero_row = p.slots, stride = p.plane_stride;
    LaneAcc<T, RP, NT> la;
    la.init(p, lane, c.row, beta);
    float acc[NT];
    zero_acc<NT>(acc);
    walk_rows<T>(
        p, c, buf0, nwarps, lane,
        [&](G &cur, int cb, int b, int e, int &carry) {
            staged_chunk_fma<T, NT, SWZ>(cur, cb, b, e, lane, carry, acc, smem, stride, zero_row, lo, blk, s);
        },
        [&](int row) {
            la.finish(p, row, alpha, beta, lane, acc);
            la.prefetch(p, c.row, beta);
        },
        [] {});
}

/* ---- GLOBAL: B gathered through the read-only cache. IDX arithmetic covers B's offsets too (the plan checks that
 * they fit). */

/* One chunk: per entry NT predicated loads of B, then NT fused multiply-adds. U: IDX unsigned (entries outside the
 * row give unused, wrapping offsets); incb, ldb: B's strides as U. */
template <typename T, int NT, typename RP, typename X, typename Y, typename IDX, typename A,
          typename U = typename std::make_unsigned<IDX>::type>
__device__ __forceinline__ void global_chunk_fma(const Params<T, RP, X, Y> &p, U incb, U ldb,
                                                 typename Ty<T>::Group &cur, IDX cb, IDX b, IDX e, int lane,
                                                 IDX &carry, A (&acc)[NT])
{
    const ChunkCols<IDX> cc = decode_chunk<T, IDX>(cur, cb, b, e, lane, carry);
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++) {
        /* All NT loads of an entry first, then the products; unloaded values stay 0 (the entry is +-0). */
        const X *bi = p.b + ((U)cc.base + (U)cc.off(i)) * incb;
        const bool nz = Ty<T>::nonzero(cur, i);
        typename Ty<X>::Bits xs[NT];
#pragma unroll
        for (int j = 0; j < NT; j++)
            xs[j] = (nz && j < p.n) ? Ty<X>::x_bits(bi + (U)j * ldb) : 0u;
        const A a = (A)Ty<T>::value(cur, i);
#pragma unroll
        for (int j = 0; j < NT; j++)
            acc[j] = fma_acc(a, (A)Ty<X>::x_value(xs[j]), acc[j]);
    }
}

template <typename T, int NT, typename RP, typename IDX, typename X, typename Y>
__global__ void __launch_bounds__(kGlobalThreads, (global_blocks_per_sm<T, IDX>()))
    mm_global_kernel(const MmParams<T, RP, X, Y> p)
{
    using G = typename Ty<T>::Group;
    using A = typename Ty<T>::Acc;
    A alpha, beta;
    if (scaled_only<false>(p, alpha, beta))
        return;
    int lane;
    IDX first, nwarps;
    warp_rows<kGlobalThreads / kWarp>(lane, first, nwarps);
    if (first >= (IDX)p.rows)
        return;
    Cursor<MmParams<T, RP, X, Y>, IDX> c;
    c.start(p, first, nwarps);
    G buf0 = load_group<T, IDX>(p.values, p.dwords, c.cb + (IDX)(lane * kLaneEntries), c.e);
    using U = typename std::make_unsigned<IDX>::type;
    const U incb = (U)p.incb, ldb = (U)p.ldb;
    LaneAcc<T, RP, NT, X, Y> la;
    la.init(p, lane, (int64_t)c.row, beta);
    A acc[NT];
    zero_acc<NT>(acc);
    walk_rows<T>(
        p, c, buf0, nwarps, lane,
        [&](G &cur, IDX cb, IDX b, IDX e, IDX &carry) {
            global_chunk_fma<T, NT, RP, X, Y, IDX>(p, incb, ldb, cur, cb, b, e, lane, carry, acc);
        },
        [&](IDX row) {
            la.finish(p, (int64_t)row, alpha, beta, lane, acc);
            la.prefetch(p, (int64_t)c.row, beta);
        },
        [] {});
}

/* ---- launchers: one launch per tile of NT = L->tile columns, as the plan says */

/* f(the staged kernel of this tile, plain or swizzled); cudaErrorInvalidValue for a tile without a kernel (the plan
 * never asks for one). */
template <typename T, typename F> int with_staged_kernel(int tile, bool swz, F &&f)
{
    switch (tile) {
    case 2: return swz ? f(mm_staged_kernel<T, 2, true, int32_t>) : f(mm_staged_kernel<T, 2, false, int32_t>);
    case 4: return swz ? f(mm_staged_kernel<T, 4, true, int32_t>) : f(mm_staged_kernel<T, 4, false, int32_t>);
    case 8: return swz ? f(mm_staged_kernel<T, 8, true, int32_t>) : f(mm_staged_kernel<T, 8, false, int32_t>);
    case 16:
        if constexpr (max_staged_tile<T>() >= 16)
            return swz ? f(mm_staged_kernel<T, 16, true, int32_t>) : f(mm_staged_kernel<T, 16, false, int32_t>);
        break;
    default: break;
    }
    return (int)cudaErrorInvalidValue;
}

template <typename T> int launch_staged(const macko_kargs *a, const macko_launch *L)
{
    const MmParams<T, int32_t> p = make_mm_params<T, int32_t>(a, L);
    return with_staged_kernel<T>(L->tile, L->swizzle != 0, [&](void (*k)(MmParams<T, int32_t>)) {
        k<<<L->grid, L->block, L->smem, reinterpret_cast<cudaStream_t>(a->stream)>>>(p);
        return (int)cudaGetLastError();
    });
}

template <typename T, typename RP, typename IDX, int NT, typename X, typename Y>
int launch_global_tile(const macko_kargs *a, const macko_launch *L)
{
    mm_global_kernel<T, NT, RP, IDX, X, Y><<<L->grid, L->block, 0, reinterpret_cast<cudaStream_t>(a->stream)>>>(
        make_mm_params<T, RP, X, Y>(a, L));
    return (int)cudaGetLastError();
}

template <typename T, typename RP, typename IDX, typename X = T, typename Y = X>
int launch_global(const macko_kargs *a, const macko_launch *L)
{
    switch (L->tile) {
    case 2: return launch_global_tile<T, RP, IDX, 2, X, Y>(a, L);
    case 4:
        if constexpr (max_global_tile<X, IDX>() >= 4)
            return launch_global_tile<T, RP, IDX, 4, X, Y>(a, L);
        break;
    case 8:
        if constexpr (max_global_tile<X, IDX>() >= 8)
            return launch_global_tile<T, RP, IDX, 8, X, Y>(a, L);
        break;
    default: break;
    }
    return (int)cudaErrorInvalidValue; /* no such kernel: the plan never asks for one */
}

} // namespace

extern "C" int macko_mm_staged_optin(macko_datatype_t type, int tile, int swizzled, int bytes)
{
    auto optin = [bytes](auto k) {
        return (int)cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    };
    switch (type) {
    case MACKO_R_16F: return with_staged_kernel<__half>(tile, swizzled != 0, optin);
    case MACKO_R_16BF: return with_staged_kernel<__nv_bfloat16>(tile, swizzled != 0, optin);
    case MACKO_R_32F: return with_staged_kernel<float>(tile, swizzled != 0, optin);
    default: return (int)cudaErrorInvalidValue;
    }
}

/* The thin C launchers: one list, stamped per type combination (macko_kernels.h); the staged path for the
 * combinations whose B rows it can stage (16-bit and fp32 values, B of the matrix's type). */
#define MACKO_MM_GLOBAL_LAUNCHERS(L, T, X, Y)                                                                        \
    extern "C" int macko_##L##_mm_global_i32(const macko_kargs *a, const macko_launch *k)                            \
    {                                                                                                                \
        return launch_global<T, int32_t, int32_t, X, Y>(a, k);                                                       \
    }                                                                                                                \
    extern "C" int macko_##L##_mm_global_i64_rp32(const macko_kargs *a, const macko_launch *k)                       \
    {                                                                                                                \
        return launch_global<T, int32_t, int64_t, X, Y>(a, k);                                                       \
    }                                                                                                                \
    extern "C" int macko_##L##_mm_global_i64_rp64(const macko_kargs *a, const macko_launch *k)                       \
    {                                                                                                                \
        return launch_global<T, int64_t, int64_t, X, Y>(a, k);                                                       \
    }
#define MACKO_MM_LAUNCHERS(L, T)                                                                                     \
    extern "C" int macko_##L##_mm_staged(const macko_kargs *a, const macko_launch *k)                                \
    {                                                                                                                \
        return launch_staged<T>(a, k);                                                                               \
    }                                                                                                                \
    MACKO_MM_GLOBAL_LAUNCHERS(L, T, T, T)

MACKO_MM_LAUNCHERS(h, __half)
MACKO_MM_LAUNCHERS(s, float)
MACKO_MM_LAUNCHERS(b, __nv_bfloat16)
MACKO_MM_GLOBAL_LAUNCHERS(d, double, double, double)
MACKO_MM_GLOBAL_LAUNCHERS(hs, __half, float, float)
MACKO_MM_GLOBAL_LAUNCHERS(bs, __nv_bfloat16, float, float)
