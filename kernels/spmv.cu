/* SpMV on the MACKO format: y = alpha*M*x + beta*y (FORMAT.md; macko_spmv_args in macko_kernels.h).
 *
 * One warp per row, persistent grid-stride over rows. A warp step covers 256 consecutive entries: lane L owns the
 * 8-entry group starting at chunk_base + 8L (one 16-byte value load for fp16, two for fp32, plus one 32-bit word of
 * 8 delta nibbles). The first chunk of a row starts at row_begin rounded down to 8, so lane 0 may see entries of the
 * previous row and the last chunk entries of the next one: those are masked by predicate (their values are zeroed
 * and zero values are skipped, never multiplied: 0*Inf = NaN). Padding entries (value +-0) are skipped the same way,
 * so x's Inf/NaN at a column the row does not store cannot reach the result.
 *
 * Column of entry k of a row starting at b:  col(k) = (k - b) + sum_{j=b..k} delta_j.  The delta sums are a packed
 * in-word prefix (nibbles -> bytes, pair sums, multiply by 0x01010101), one 5-step warp scan of the lane totals and
 * a carry across chunks, so the per-entry cost is one byte extract and one address computation.
 *
 * Software pipelining: the loads of the next chunk (or of the next row's first chunk) are issued into a second
 * register buffer before the current chunk is decoded, and each row's bounds are loaded one row ahead. Registers are
 * capped so that 6 blocks of 256 threads (48 warps) stay resident per SM on the fp16 fast path (see bench/NOTES.md for
 * what was measured, including a cp.async shared-memory ring that lost). Accumulation is fp32 in a fixed order (per
 * lane in entry order, then a fixed shuffle tree), so results are bitwise reproducible. No atomics, no shared memory,
 * no allocation.
 */
#include "macko_kernels.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

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

constexpr int kWarp = 32;
constexpr int kBlockThreads = MACKO_SPMV_BLOCK_THREADS;
constexpr int kWarpsPerBlock = kBlockThreads / kWarp;
constexpr int kLaneEntries = 8;
constexpr int kChunk = kWarp * kLaneEntries; /* entries per warp step */
/* Blocks per SM the grid is sized for, per variant; __launch_bounds__ makes ptxas fit the registers to it. */
template <typename T, typename IDX, bool UNIT> constexpr int blocks_per_sm()
{
    return !(sizeof(IDX) == 4 && UNIT) ? 4 : sizeof(T) == 2 ? MACKO_SPMV_BLOCKS_PER_SM_H : MACKO_SPMV_BLOCKS_PER_SM_S;
}
static_assert(kBlockThreads % kWarp == 0, "whole warps per block");
constexpr unsigned kFull = 0xFFFFFFFFu;

/* ---- per value type: one lane's 8-entry group and how to read it */
template <typename T> struct Ty;

template <> struct Ty<__half> {
    struct Group {
        uint4 v;    /* 8 fp16 values, two per word, entry 2j in the low half of word j */
        uint32_t d; /* 8 delta nibbles, entry i at bits 4i */
    };
    static __device__ __forceinline__ uint32_t word(const Group &g, int j)
    {
        return j == 0 ? g.v.x : j == 1 ? g.v.y : j == 2 ? g.v.z : g.v.w;
    }
    static __device__ __forceinline__ void set_word(Group &g, int j, uint32_t w)
    {
        if (j == 0) g.v.x = w; else if (j == 1) g.v.y = w; else if (j == 2) g.v.z = w; else g.v.w = w;
    }
    template <typename U> static __device__ __forceinline__ Group load(const __half *vals, const uint32_t *dwords, U k0)
    {
        Group g;
        g.v = __ldg(reinterpret_cast<const uint4 *>(vals + k0));
        g.d = __ldg(dwords + (k0 >> 3));
        return g;
    }
    static __device__ __forceinline__ Group zero()
    {
        Group g;
        g.v = make_uint4(0, 0, 0, 0);
        g.d = 0;
        return g;
    }
    /* Entry i (compile-time) is stored and nonzero. */
    static __device__ __forceinline__ bool nonzero(const Group &g, int i)
    {
        return (word(g, i >> 1) & ((i & 1) ? 0x7FFF0000u : 0x00007FFFu)) != 0;
    }
    static __device__ __forceinline__ float value(const Group &g, int i)
    {
        uint32_t w = word(g, i >> 1);
        __half2 h = *reinterpret_cast<const __half2 *>(&w);
        return (i & 1) ? __high2float(h) : __low2float(h);
    }
    /* Zero the entries whose bit in keep8 is clear. */
    static __device__ __forceinline__ void mask(Group &g, uint32_t keep8)
    {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t m = (((keep8 >> (2 * j)) & 1u) ? 0x0000FFFFu : 0u) |
                         (((keep8 >> (2 * j + 1)) & 1u) ? 0xFFFF0000u : 0u);
            set_word(g, j, word(g, j) & m);
        }
    }
    /* x as raw bits (0 when not loaded), so that only the load itself is predicated. */
    static __device__ __forceinline__ uint32_t x_bits(const __half *p)
    {
        return __ldg(reinterpret_cast<const unsigned short *>(p));
    }
    static __device__ __forceinline__ float x_value(uint32_t bits)
    {
        return __half2float(__ushort_as_half((unsigned short)bits));
    }
    static __device__ __forceinline__ float y_at(const __half *p) { return __half2float(*p); }
    static __device__ __forceinline__ void y_put(__half *p, float v) { *p = __float2half_rn(v); }
};

template <> struct Ty<float> {
    struct Group {
        uint4 v0, v1; /* 8 fp32 values */
        uint32_t d;
    };
    static __device__ __forceinline__ uint32_t word(const Group &g, int j)
    {
        switch (j) {
        case 0: return g.v0.x;
        case 1: return g.v0.y;
        case 2: return g.v0.z;
        case 3: return g.v0.w;
        case 4: return g.v1.x;
        case 5: return g.v1.y;
        case 6: return g.v1.z;
        default: return g.v1.w;
        }
    }
    template <typename U> static __device__ __forceinline__ Group load(const float *vals, const uint32_t *dwords, U k0)
    {
        Group g;
        g.v0 = __ldg(reinterpret_cast<const uint4 *>(vals + k0));
        g.v1 = __ldg(reinterpret_cast<const uint4 *>(vals + k0) + 1);
        g.d = __ldg(dwords + (k0 >> 3));
        return g;
    }
    static __device__ __forceinline__ Group zero()
    {
        Group g;
        g.v0 = make_uint4(0, 0, 0, 0);
        g.v1 = make_uint4(0, 0, 0, 0);
        g.d = 0;
        return g;
    }
    static __device__ __forceinline__ bool nonzero(const Group &g, int i) { return (word(g, i) & 0x7FFFFFFFu) != 0; }
    static __device__ __forceinline__ float value(const Group &g, int i) { return __uint_as_float(word(g, i)); }
    static __device__ __forceinline__ void mask(Group &g, uint32_t keep8)
    {
        uint32_t m[8];
#pragma unroll
        for (int j = 0; j < 8; j++)
            m[j] = ((keep8 >> j) & 1u) ? kFull : 0u;
        g.v0.x &= m[0]; g.v0.y &= m[1]; g.v0.z &= m[2]; g.v0.w &= m[3];
        g.v1.x &= m[4]; g.v1.y &= m[5]; g.v1.z &= m[6]; g.v1.w &= m[7];
    }
    static __device__ __forceinline__ uint32_t x_bits(const float *p)
    {
        return __ldg(reinterpret_cast<const unsigned int *>(p));
    }
    static __device__ __forceinline__ float x_value(uint32_t bits) { return __uint_as_float(bits); }
    static __device__ __forceinline__ float y_at(const float *p) { return *p; }
    static __device__ __forceinline__ void y_put(float *p, float v) { *p = v; }
};

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

/* Byte j (compile-time) of w, zero-extended: one PRMT. */
__device__ __forceinline__ uint32_t byte_of(uint32_t w, int j) { return __byte_perm(w, 0u, 0x4440u | (uint32_t)j); }

/* The group at k0 when it holds entries of the row ending at e, else zeros (never reads past round8(e), which is
 * inside the arrays since entries_padded is a multiple of 8). */
template <typename T, typename RP, typename IDX>
__device__ __forceinline__ typename Ty<T>::Group load_group(const Params<T, RP> &p, IDX k0, IDX e)
{
    if (k0 < e)
        return Ty<T>::load(p.values, p.dwords, (typename std::make_unsigned<IDX>::type)k0); /* k0 >= 0 here */
    return Ty<T>::zero();
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

/* Inclusive prefix sum over the warp: the shuffle's own validity predicate guards the add (2 instructions a step). */
__device__ __forceinline__ int warp_inclusive_scan(int v)
{
#pragma unroll
    for (int o = 1; o < kWarp; o <<= 1)
        asm volatile("{\n\t.reg .s32 t;\n\t.reg .pred p;\n\t"
                     "shfl.sync.up.b32 t|p, %0, %1, 0, -1;\n\t"
                     "@p add.s32 %0, %0, t;\n\t}"
                     : "+r"(v)
                     : "r"(o));
    return v;
}

/* One warp step on the chunk at cb of the row [b, e): mask the entries outside the row, decode the columns, gather
 * x, accumulate into acc (this lane's partial sum, in entry order). carry: delta sum of the row's entries before cb. */
template <typename T, typename RP, typename IDX, bool UNIT>
__device__ __forceinline__ void chunk_fma(const Params<T, RP> &p, typename Ty<T>::Group &cur, IDX cb, IDX b, IDX e,
                                          int lane, IDX &carry, float &acc)
{
    const IDX k0 = cb + (IDX)(lane * kLaneEntries);
    if (k0 < b || k0 + kLaneEntries > e) {
        /* Row boundary inside this lane's group: keep entries [b, e) only. */
        const int s = k0 < b ? (int)(b - k0) : 0;                                  /* 0..7 */
        const int t = k0 + kLaneEntries <= e ? 8 : (k0 < e ? (int)(e - k0) : 0); /* 0..8 */
        const uint32_t keep = (0xFFu << s) & (0xFFu >> (8 - t));
        Ty<T>::mask(cur, keep);
        cur.d &= kFull << (4 * s); /* deltas of the previous row must not move the columns */
    }

    /* In-word prefix of the delta nibbles (+ entry index), packed in bytes. */
    const uint32_t w = cur.d;
    const uint32_t lo = w & 0x0F0F0F0Fu;          /* byte j: delta of entry 2j */
    const uint32_t hi = (w >> 4) & 0x0F0F0F0Fu;   /* byte j: delta of entry 2j+1 */
    const uint32_t pre = (lo + hi) * 0x01010101u; /* byte j: deltas of entries 0..2j+1 summed (<= 120) */
    const uint32_t e_odd = pre + 0x07050301u;     /* entry 2j+1: prefix + index */
    const uint32_t e_even = pre - hi + 0x06040200u; /* entry 2j:   prefix + index */
    const int tot = (int)(pre >> 24);

    const int incl = warp_inclusive_scan(tot);
    const IDX base = (k0 - b) + carry + (IDX)(incl - tot);
    carry += (IDX)__shfl_sync(kFull, incl, kWarp - 1);

    /* Gather x: all addresses first, then all loads (independent, predicated), then the products.
     * Unloaded x stays 0 and its value is +-0 (padding or masked), so the products need no predicate. */
    uint32_t off[kLaneEntries];
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++)
        off[i] = byte_of((i & 1) ? e_odd : e_even, i >> 1);
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

/* A warp's walk over its chunks: rows row, row + nwarps, ...; every row has at least one chunk (an empty row one
 * with nothing in it), so that every y element is written. The bounds of the next row are loaded one row ahead. */
template <typename T, typename RP, typename IDX> struct Cursor {
    IDX row, b, e, cb, nb, ne;
    __device__ __forceinline__ void start(const Params<T, RP> &p, IDX first, IDX nwarps)
    {
        row = first;
        b = (IDX)__ldg(p.row_ptr + row);
        e = (IDX)__ldg(p.row_ptr + row + 1);
        cb = b & ~(IDX)7;
        fetch_next(p, nwarps);
    }
    __device__ __forceinline__ void fetch_next(const Params<T, RP> &p, IDX nwarps)
    {
        const IDX nrow = row + nwarps;
        nb = ne = 0;
        if (nrow < (IDX)p.rows) {
            nb = (IDX)__ldg(p.row_ptr + nrow);
            ne = (IDX)__ldg(p.row_ptr + nrow + 1);
        }
    }
    __device__ __forceinline__ bool last_of_row() const { return cb + kChunk >= e; }
    /* Moves to the next chunk; returns true when that starts a new row (row >= rows: done). */
    __device__ __forceinline__ bool advance(const Params<T, RP> &p, IDX nwarps)
    {
        if (!last_of_row()) {
            cb += kChunk;
            return false;
        }
        row += nwarps;
        if (row < (IDX)p.rows) {
            b = nb;
            e = ne;
            cb = b & ~(IDX)7;
            fetch_next(p, nwarps);
        }
        return true;
    }
};

/* RP: row_ptr element type in memory. IDX: index arithmetic (rows, entries and columns; int32 only when all stay far
 * below 2^31, which the caller checks). UNIT: incx == 1. */
template <typename T, typename RP, typename IDX, bool UNIT>
__global__ void __launch_bounds__(kBlockThreads, (blocks_per_sm<T, IDX, UNIT>())) spmv_kernel(const Params<T, RP> p)
{
    using G = typename Ty<T>::Group;
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
    const IDX lane_off = (IDX)(lane * kLaneEntries);

    Cursor<T, RP, IDX> c; /* the chunk being computed */
    c.start(p, first, nwarps);
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
    G buf0 = load_group(p, c.cb + lane_off, c.e), buf1;
    while (step(buf0, buf1) && step(buf1, buf0)) {
    }
}

/* Enough warps to cover the rows in as few equal rounds as the resident warps allow. */
inline unsigned grid_blocks(int64_t rows, int sm_count, int blocks_per_sm)
{
    int64_t max_warps = (int64_t)(sm_count > 0 ? sm_count : 1) * blocks_per_sm * kWarpsPerBlock;
    int64_t per_warp = (rows + max_warps - 1) / max_warps;
    if (per_warp < 1)
        per_warp = 1;
    int64_t warps = (rows + per_warp - 1) / per_warp;
    int64_t blocks = (warps + kWarpsPerBlock - 1) / kWarpsPerBlock;
    return (unsigned)(blocks < 1 ? 1 : blocks);
}

template <typename T, typename RP, typename IDX, bool UNIT> int launch(const macko_spmv_args *a)
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
    const unsigned blocks = grid_blocks(a->rows, a->sm_count, blocks_per_sm<T, IDX, UNIT>());
    spmv_kernel<T, RP, IDX, UNIT><<<blocks, kBlockThreads, 0, reinterpret_cast<cudaStream_t>(a->stream)>>>(p);
    return (int)cudaGetLastError();
}

} // namespace

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
