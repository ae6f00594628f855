/* Dense device data -> MACKO arrays (FORMAT.md "Per row"; see convert.cu for the pipeline).
 *
 * A warp owns a row and walks it 32 columns at a time, carrying across chunks the number of zero columns since the
 * last nonzero ("run"). Count: a ballot of the nonzero lanes gives everything: popc, the gap before the first set
 * bit (run + its lane) and, per set lane, the gap to the set lane below it (a gap of g zeros gives floor(g/16)
 * padding entries). Fill: each lane is at most one entry, either its nonzero or a padding entry, the latter exactly
 * when it is the 16th, 32nd, ... zero since the last nonzero; the entry's offset is a popc of the entry ballot below
 * the lane. Padding after the row's last nonzero would land at or beyond the row's end (known from the scanned
 * counts) and is simply not written. Row-major input is read by a warp along its row, 8 chunks in flight (16-byte
 * vector loads for the count when the rows are 16-byte aligned);
 * column-major input is transposed through shared memory in tiles of 32 rows x 64 columns, so every global read
 * runs down a column (coalesced) and every warp still scans rows. */
#include "convert_common.cuh"

#include <type_traits>

namespace {

/* ------------------------------------------------------------------ dense: per-chunk steps of one row */

struct CountState {
    int64_t run; /* zero columns since the last nonzero */
    int64_t ent;
    int64_t nz;
};

/* m: ballot of the nonzero lanes of a chunk (lanes past the row end are zero). */
__device__ __forceinline__ void count_step(unsigned m, int lane, unsigned lt, CountState &s)
{
    if (m == 0) {
        s.run += kWarp;
        return;
    }
    const unsigned lower = m & lt;
    const bool big = ((m >> lane) & 1u) && lower != 0 && lane - (31 - __clz(lower)) - 1 >= 16;
    const unsigned bm = __ballot_sync(kFull, big);
    s.ent += __popc(m) + __popc(bm) + ((s.run + (__ffs(m) - 1)) >> 4);
    s.nz += __popc(m);
    s.run = __clz(m); /* zeros above the highest nonzero */
}

struct FillState {
    int64_t run;
    int64_t out; /* next entry index */
    int64_t end; /* row end */
};

template <typename T>
__device__ __forceinline__ void fill_step(T v, bool valid, int lane, unsigned lt, FillState &s, T *vals,
                                          uint8_t *dt)
{
    const bool nzv = valid && !is_zero(v);
    const unsigned m = __ballot_sync(kFull, nzv);
    const unsigned lower = m & lt;
    /* zero columns since the last nonzero, before this lane */
    const int64_t gap = lower != 0 ? (int64_t)(lane - (31 - __clz(lower)) - 1) : s.run + lane;
    const bool pad = valid && !nzv && ((gap + 1) & 15) == 0;
    const unsigned em = __ballot_sync(kFull, nzv || pad);
    if (nzv || pad) {
        const int64_t pos = s.out + __popc(em & lt);
        if (pos < s.end) {
            vals[pos] = nzv ? v : (T)0;
            dt[pos] = nzv ? (uint8_t)(gap & 15) : (uint8_t)15;
        }
    }
    s.out += __popc(em);
    s.run = m != 0 ? (int64_t)__clz(m) : s.run + kWarp;
}

/* ------------------------------------------------------------------ dense row-major: one warp per row */

template <typename T, bool kFill>
__global__ void __launch_bounds__(kBlock) dense_row_kernel(const T *__restrict__ a, int64_t rows, int64_t cols,
                                                           int64_t ld, int64_t *__restrict__ counts,
                                                           macko_conv_stats *st, const int64_t *__restrict__ rp,
                                                           T *__restrict__ vals, uint8_t *__restrict__ dt)
{
    const int lane = threadIdx.x & (kWarp - 1);
    const unsigned lt = lanemask_lt();
    const int64_t nw = (int64_t)gridDim.x * kWarps;
    unsigned long long ent_w = 0, nz_w = 0;
    for (int64_t r = (int64_t)blockIdx.x * kWarps + threadIdx.x / kWarp; r < rows; r += nw) {
        const T *row = a + r * ld;
        CountState cs = {0, 0, 0};
        FillState fs = {0, 0, 0};
        if (kFill) {
            fs.out = rp[r];
            fs.end = rp[r + 1];
        }
        for (int64_t c0 = 0; c0 < cols; c0 += kUnroll * kWarp) {
            if (kFill && fs.out >= fs.end)
                break; /* only trailing zeros are left */
            T v[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; u++) {
                const int64_t c = c0 + u * kWarp + lane;
                v[u] = c < cols ? row[c] : (T)0;
            }
#pragma unroll
            for (int u = 0; u < kUnroll; u++) {
                if (kFill)
                    fill_step(v[u], c0 + u * kWarp + lane < cols, lane, lt, fs, vals, dt);
                else
                    count_step(__ballot_sync(kFull, !is_zero(v[u])), lane, lt, cs);
            }
        }
        if (!kFill) {
            if (lane == 0)
                counts[r] = cs.ent;
            ent_w += (unsigned long long)cs.ent; /* <= rows * cols <= 2^56 */
            nz_w += (unsigned long long)cs.nz;
        }
    }
    if (!kFill)
        flush_stats(ent_w, nz_w, MACKO_CONV_NONE, MACKO_CONV_NONE, st);
}

/* ------------------------------------------------------------------ dense row-major count, 16-byte aligned rows
 *
 * Lane L loads 16 bytes (V = 8 fp16 or 4 fp32 columns) at a time, so a warp step covers 32 * V columns. The last
 * nonzero column before each lane comes from an exclusive max-scan over the lanes (seeded with the last nonzero of
 * the earlier steps); then each lane walks its V columns: a nonzero at column c after the nonzero at p gives
 * 1 + (c - p - 1) / 16 entries, summed per lane and reduced once per row. (A fill in this layout was measured
 * slower than dense_row_kernel's: each lane's entries are contiguous, so its stores do not coalesce.) */

template <typename T> union Vec16 {
    uint4 q;
    T e[16 / sizeof(T)];
};

template <typename T>
__global__ void __launch_bounds__(kBlock) dense_rowvec_count_kernel(const T *__restrict__ a, int64_t rows,
                                                                    int64_t cols, int64_t ld,
                                                                    int64_t *__restrict__ counts, macko_conv_stats *st)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int64_t W = (int64_t)kWarp * V;
    const int lane = threadIdx.x & (kWarp - 1);
    const int64_t nw = (int64_t)gridDim.x * kWarps;
    unsigned long long ent_w = 0, nz_w = 0;
    for (int64_t r = (int64_t)blockIdx.x * kWarps + threadIdx.x / kWarp; r < rows; r += nw) {
        const T *row = a + r * ld;
        int64_t last = -1, ent = 0, nz = 0;
        for (int64_t c0 = 0; c0 < cols; c0 += W * kVecUnroll) {
            Vec16<T> v[kVecUnroll];
#pragma unroll
            for (int u = 0; u < kVecUnroll; u++) {
                const int64_t cb = c0 + u * W + (int64_t)lane * V;
                if (cb + V <= cols) {
                    v[u].q = *reinterpret_cast<const uint4 *>(row + cb);
                } else {
#pragma unroll
                    for (int j = 0; j < V; j++)
                        v[u].e[j] = cb + j < cols ? row[cb + j] : (T)0;
                }
            }
#pragma unroll
            for (int u = 0; u < kVecUnroll; u++) {
                const int64_t cb = c0 + u * W + (int64_t)lane * V;
                unsigned b = 0;
#pragma unroll
                for (int j = 0; j < V; j++)
                    b |= (unsigned)!is_zero(v[u].e[j]) << j;
                int64_t all;
                int64_t p = warp_excl_max(b != 0 ? cb + 31 - __clz(b) : -1, lane, last, &all);
                last = all;
#pragma unroll
                for (int j = 0; j < V; j++)
                    if ((b >> j) & 1u) {
                        ent += 1 + ((cb + j - p - 1) >> 4);
                        p = cb + j;
                    }
                nz += __popc(b);
            }
        }
        ent = warp_sum(ent);
        nz = warp_sum(nz);
        if (lane == 0)
            counts[r] = ent;
        ent_w += (unsigned long long)ent; /* <= rows * cols <= 2^56 */
        nz_w += (unsigned long long)nz;
    }
    flush_stats(ent_w, nz_w, MACKO_CONV_NONE, MACKO_CONV_NONE, st);
}

/* ------------------------------------------------------------------ dense column-major: tiles through shared memory */

template <typename T, bool kFill>
__global__ void __launch_bounds__(kBlock) dense_col_kernel(const T *__restrict__ a, int64_t rows, int64_t cols,
                                                           int64_t ld, int64_t *__restrict__ counts,
                                                           macko_conv_stats *st, const int64_t *__restrict__ rp,
                                                           T *__restrict__ vals, uint8_t *__restrict__ dt)
{
    /* 16-bit values travel as 32-bit words (no sub-word bank traffic); fp64 needs its 8 bytes */
    using W = typename std::conditional<sizeof(T) == 8, T, uint32_t>::type;
    __shared__ W tile[kTileCols][kTileRows + 1]; /* [column][row]; +1: conflict-free both ways */
    const int lane = threadIdx.x & (kWarp - 1);
    const int w = threadIdx.x / kWarp;
    const unsigned lt = lanemask_lt();
    unsigned long long ent_w = 0, nz_w = 0;
    for (int64_t r0 = (int64_t)blockIdx.x * kTileRows; r0 < rows; r0 += (int64_t)gridDim.x * kTileRows) {
        CountState cs[kRowsPerWarp];
        FillState fs[kRowsPerWarp];
#pragma unroll
        for (int i = 0; i < kRowsPerWarp; i++) {
            const int64_t r = r0 + w + kWarps * i;
            cs[i] = CountState{0, 0, 0};
            fs[i] = FillState{0, 0, 0};
            if (kFill && r < rows) {
                fs[i].out = rp[r];
                fs[i].end = rp[r + 1];
            }
        }
        const int64_t lr = r0 + lane; /* the row this thread loads */
        for (int64_t c0 = 0; c0 < cols; c0 += kTileCols) {
#pragma unroll
            for (int j = 0; j < kTileCols / kWarps; j++) {
                const int cc = w + kWarps * j;
                const int64_t c = c0 + cc;
                tile[cc][lane] = (lr < rows && c < cols) ? (W)a[c * ld + lr] : (W)0;
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < kRowsPerWarp; i++) {
                const int rl = w + kWarps * i;
                if (r0 + rl >= rows || (kFill && fs[i].out >= fs[i].end))
                    continue; /* warp-uniform */
#pragma unroll
                for (int h = 0; h < kTileCols / kWarp; h++) {
                    const T v = (T)tile[h * kWarp + lane][rl];
                    if (kFill)
                        fill_step(v, c0 + h * kWarp + lane < cols, lane, lt, fs[i], vals, dt);
                    else
                        count_step(__ballot_sync(kFull, !is_zero(v)), lane, lt, cs[i]);
                }
            }
            __syncthreads();
        }
        if (!kFill) {
#pragma unroll
            for (int i = 0; i < kRowsPerWarp; i++) {
                const int64_t r = r0 + w + kWarps * i;
                if (r < rows) {
                    if (lane == 0)
                        counts[r] = cs[i].ent;
                    ent_w += (unsigned long long)cs[i].ent;
                    nz_w += (unsigned long long)cs[i].nz;
                }
            }
        }
    }
    if (!kFill)
        flush_stats(ent_w, nz_w, MACKO_CONV_NONE, MACKO_CONV_NONE, st);
}

template <typename T, bool kFill>
void dense_launch_t(const T *a, int64_t rows, int64_t cols, int64_t ld, int colmajor, int64_t *counts,
                    macko_conv_stats *st, const int64_t *rp, T *vals, uint8_t *dt, int sm, cudaStream_t s)
{
    if (colmajor) {
        const int g = grid_for(dense_col_kernel<T, kFill>, rows, kTileRows, sm);
        dense_col_kernel<T, kFill><<<g, kBlock, 0, s>>>(a, rows, cols, ld, counts, st, rp, vals, dt);
    } else if (!kFill && reinterpret_cast<uintptr_t>(a) % 16 == 0 && (ld * (int64_t)sizeof(T)) % 16 == 0) {
        const int g = grid_for(dense_rowvec_count_kernel<T>, rows, kWarps, sm);
        dense_rowvec_count_kernel<T><<<g, kBlock, 0, s>>>(a, rows, cols, ld, counts, st);
    } else {
        const int g = grid_for(dense_row_kernel<T, kFill>, rows, kWarps, sm);
        dense_row_kernel<T, kFill><<<g, kBlock, 0, s>>>(a, rows, cols, ld, counts, st, rp, vals, dt);
    }
}

template <typename T>
int dense_launch(bool fill, const void *a, int64_t rows, int64_t cols, int64_t ld, int colmajor, int64_t *counts,
                 macko_conv_stats *st, const int64_t *rp, void *vals, uint8_t *dt, int sm, cudaStream_t s)
{
    const T *at = static_cast<const T *>(a);
    T *vt = static_cast<T *>(vals);
    if (fill)
        dense_launch_t<T, true>(at, rows, cols, ld, colmajor, counts, st, rp, vt, dt, sm, s);
    else
        dense_launch_t<T, false>(at, rows, cols, ld, colmajor, counts, st, rp, vt, dt, sm, s);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int macko_conv_dense_count(int es, const void *a, int64_t rows, int64_t cols, int64_t ld, int colmajor,
                                      int64_t *counts, macko_conv_stats *stats, int sm_count, macko_stream_t stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    init_kernel<<<1, 1, 0, s>>>(stats, counts + rows);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || rows == 0)
        return (int)e;
    if (cols == 0)
        return (int)cudaMemsetAsync(counts, 0, (size_t)rows * sizeof(int64_t), s);
    return (es == 2 ? dense_launch<uint16_t> : es == 4 ? dense_launch<uint32_t> : dense_launch<uint64_t>)(
        false, a, rows, cols, ld, colmajor, counts, stats, nullptr, nullptr, nullptr, sm_count, s);
}

extern "C" int macko_conv_dense_fill(int es, const void *a, int64_t rows, int64_t cols, int64_t ld, int colmajor,
                                     const int64_t *rp, void *values, uint8_t *dtmp, int sm_count,
                                     macko_stream_t stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (rows == 0 || cols == 0)
        return 0;
    return (es == 2 ? dense_launch<uint16_t> : es == 4 ? dense_launch<uint32_t> : dense_launch<uint64_t>)(
        true, a, rows, cols, ld, colmajor, nullptr, nullptr, rp, values, dtmp, sm_count, s);
}
