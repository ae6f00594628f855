/* CSR device data -> MACKO arrays, with validation (FORMAT.md "Per row"; see convert.cu for the pipeline).
 *
 * One warp per row, 32 stored entries at a time; the previous column comes from the lane below (lane 0: the carry).
 * Count validates as it goes: row_ptr errors are keyed row * 4 + kind (the host encoder's order within a row),
 * column errors by row, and the minimum is kept, so the report does not depend on scheduling. Fill: an inclusive
 * warp scan of (1 + paddings) places the entries; long padding runs are written by the whole warp. */
#include "convert_common.cuh"

namespace {

/* ------------------------------------------------------------------ CSR: one warp per row */

template <typename I, typename T>
__global__ void __launch_bounds__(kBlock) csr_count_kernel(int64_t base, int64_t rows, int64_t cols, int64_t nnz,
                                                           const I *__restrict__ rp, const I *__restrict__ ci,
                                                           const T *__restrict__ val, int64_t *__restrict__ counts,
                                                           macko_conv_stats *st)
{
    const int lane = threadIdx.x & (kWarp - 1);
    const int64_t nw = (int64_t)gridDim.x * kWarps;
    unsigned long long ent_w = 0, nz_w = 0, bad_rp = MACKO_CONV_NONE, bad_col = MACKO_CONV_NONE;
    if (rows == 0 && blockIdx.x == 0 && threadIdx.x / kWarp == 0) {
        const int64_t p = (int64_t)rp[0];
        if (p != base)
            bad_rp = MACKO_CONV_RP_FIRST;
        else if (p != nnz + base)
            bad_rp = MACKO_CONV_RP_LAST;
    }
    for (int64_t r = (int64_t)blockIdx.x * kWarps + threadIdx.x / kWarp; r < rows; r += nw) {
        const int64_t pa = (int64_t)rp[r], pb = (int64_t)rp[r + 1];
        unsigned long long key = MACKO_CONV_NONE;
        if (r == 0 && pa != base)
            key = MACKO_CONV_RP_FIRST;
        else if (pb < pa)
            key = (unsigned long long)r * 4 + MACKO_CONV_RP_DECREASE;
        else if (pb - base > nnz)
            key = (unsigned long long)r * 4 + MACKO_CONV_RP_EXCEED;
        else if (r == rows - 1 && pb != nnz + base)
            key = (unsigned long long)r * 4 + MACKO_CONV_RP_LAST;
        const int64_t kb = pa - base, ke = pb - base;
        if (key != MACKO_CONV_NONE || kb < 0) { /* kb < 0 implies an error in an earlier row */
            bad_rp = min(bad_rp, key);
            if (lane == 0)
                counts[r] = 0;
            continue;
        }
        int64_t prev = -1, ent = 0, nz = 0;
        bool bad = false;
        for (int64_t k0 = kb; k0 < ke; k0 += kWarp) {
            const int64_t k = k0 + lane;
            const bool in = k < ke;
            const int64_t c = in ? (int64_t)ci[k] - base : 0;
            int64_t pc = __shfl_up_sync(kFull, c, 1);
            if (lane == 0)
                pc = prev;
            if (__ballot_sync(kFull, in && (c < 0 || c >= cols || c <= pc)) != 0) {
                bad = true;
                break;
            }
            ent += warp_sum(in ? 1 + ((c - pc - 1) >> 4) : 0);
            nz += __popc(__ballot_sync(kFull, in && !is_zero(val[k])));
            prev = __shfl_sync(kFull, c, last_lane(ke - k0));
        }
        if (bad) {
            bad_col = min(bad_col, (unsigned long long)r);
            if (lane == 0)
                counts[r] = 0;
            continue;
        }
        if (lane == 0)
            counts[r] = ent;
        ent_w = sat_add(ent_w, (unsigned long long)ent); /* ent <= cols <= 2^56 */
        nz_w += (unsigned long long)nz;
    }
    flush_stats(ent_w, nz_w, bad_rp, bad_col, st);
}

template <typename I, typename T>
__global__ void __launch_bounds__(kBlock) csr_fill_kernel(int64_t base, int64_t rows, const I *__restrict__ rpi,
                                                          const I *__restrict__ ci, const T *__restrict__ val,
                                                          const int64_t *__restrict__ rp, T *__restrict__ vals,
                                                          uint8_t *__restrict__ dt)
{
    const int lane = threadIdx.x & (kWarp - 1);
    const int64_t nw = (int64_t)gridDim.x * kWarps;
    for (int64_t r = (int64_t)blockIdx.x * kWarps + threadIdx.x / kWarp; r < rows; r += nw) {
        const int64_t kb = (int64_t)rpi[r] - base, ke = (int64_t)rpi[r + 1] - base;
        int64_t out = rp[r], prev = -1;
        for (int64_t k0 = kb; k0 < ke; k0 += kWarp) {
            const int64_t k = k0 + lane;
            const bool in = k < ke;
            const int64_t c = in ? (int64_t)ci[k] - base : 0;
            int64_t pc = __shfl_up_sync(kFull, c, 1);
            if (lane == 0)
                pc = prev;
            const int64_t gap = c - pc - 1;
            const int64_t pads = in ? gap >> 4 : 0;
            const int64_t w = in ? 1 + pads : 0;
            const int64_t incl = warp_incl_scan(w, lane);
            const int64_t start = out + incl - w; /* first padding entry of this lane, then its entry */
            if (in) {
                vals[start + pads] = val[k];
                dt[start + pads] = (uint8_t)(gap & 15);
                if (pads <= kBigPad)
                    for (int64_t i = 0; i < pads; i++) {
                        vals[start + i] = (T)0;
                        dt[start + i] = 15;
                    }
            }
            for (unsigned bm = __ballot_sync(kFull, in && pads > kBigPad); bm != 0; bm &= bm - 1) {
                const int src = __ffs(bm) - 1;
                const int64_t s0 = __shfl_sync(kFull, start, src), n = __shfl_sync(kFull, pads, src);
                for (int64_t i = lane; i < n; i += kWarp) {
                    vals[s0 + i] = (T)0;
                    dt[s0 + i] = 15;
                }
            }
            out += __shfl_sync(kFull, incl, kWarp - 1);
            prev = __shfl_sync(kFull, c, last_lane(ke - k0));
        }
    }
}

template <typename I, typename T>
int csr_count_launch(int64_t base, int64_t rows, int64_t cols, int64_t nnz, const void *rp, const void *ci,
                     const void *val, int64_t *counts, macko_conv_stats *st, int sm, cudaStream_t s)
{
    csr_count_kernel<I, T><<<grid_for(csr_count_kernel<I, T>, rows, kWarps, sm), kBlock, 0, s>>>(
        base, rows, cols, nnz, static_cast<const I *>(rp), static_cast<const I *>(ci), static_cast<const T *>(val),
        counts, st);
    return (int)cudaGetLastError();
}

template <typename I, typename T>
int csr_fill_launch(int64_t base, int64_t rows, const void *rpi, const void *ci, const void *val, const int64_t *rp,
                    void *out, uint8_t *dt, int sm, cudaStream_t s)
{
    csr_fill_kernel<I, T><<<grid_for(csr_fill_kernel<I, T>, rows, kWarps, sm), kBlock, 0, s>>>(
        base, rows, static_cast<const I *>(rpi), static_cast<const I *>(ci), static_cast<const T *>(val), rp,
        static_cast<T *>(out), dt);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int macko_conv_csr_count(int es, int idx64, int64_t base, int64_t rows, int64_t cols, int64_t nnz,
                                    const void *row_ptr, const void *col_ind, const void *values, int64_t *counts,
                                    macko_conv_stats *stats, int sm_count, macko_stream_t stream)
{
    typedef int (*fn_t)(int64_t, int64_t, int64_t, int64_t, const void *, const void *, const void *, int64_t *,
                        macko_conv_stats *, int, cudaStream_t);
    static const fn_t table[2][3] = {{csr_count_launch<int32_t, uint16_t>, csr_count_launch<int32_t, uint32_t>,
                                      csr_count_launch<int32_t, uint64_t>},
                                     {csr_count_launch<int64_t, uint16_t>, csr_count_launch<int64_t, uint32_t>,
                                      csr_count_launch<int64_t, uint64_t>}};
    cudaStream_t s = (cudaStream_t)stream;
    init_kernel<<<1, 1, 0, s>>>(stats, counts + rows);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    return table[idx64 ? 1 : 0][es == 2 ? 0 : es == 4 ? 1 : 2](base, rows, cols, nnz, row_ptr, col_ind, values,
                                                               counts, stats, sm_count, s);
}

extern "C" int macko_conv_csr_fill(int es, int idx64, int64_t base, int64_t rows, const void *row_ptr,
                                   const void *col_ind, const void *values, const int64_t *rp, void *out_values,
                                   uint8_t *dtmp, int sm_count, macko_stream_t stream)
{
    typedef int (*fn_t)(int64_t, int64_t, const void *, const void *, const void *, const int64_t *, void *,
                        uint8_t *, int, cudaStream_t);
    static const fn_t table[2][3] = {
        {csr_fill_launch<int32_t, uint16_t>, csr_fill_launch<int32_t, uint32_t>, csr_fill_launch<int32_t, uint64_t>},
        {csr_fill_launch<int64_t, uint16_t>, csr_fill_launch<int64_t, uint32_t>, csr_fill_launch<int64_t, uint64_t>}};
    if (rows == 0)
        return 0;
    return table[idx64 ? 1 : 0][es == 2 ? 0 : es == 4 ? 1 : 2](base, rows, row_ptr, col_ind, values, rp, out_values,
                                                               dtmp, sm_count, (cudaStream_t)stream);
}
