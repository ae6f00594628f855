/* The first half of the panel path for the MACKO rows (kernels/spmm_panel.cu): rows [prow0, prow0 + prow) of an fp16
 * or bf16 encoding decoded densely into the panel, the handle's workspace, which the panel GEMM then multiplies by B.
 *
 * One warp per row, which it streams as the SpMV does (macko_walk.cuh: 256 entries a step, kDepth = 2 steps of loads in
 * flight, the chunk decode of macko_decode.cuh), so that the compressed rows are read once, in order, with 16-byte
 * loads. Each warp owns a ring of kRingCols columns in shared memory, zero between rows:
 *   - every stored nonzero of a step goes to its column's place in the ring (one 2-byte store; zero-valued entries,
 *     the padding and the neighbouring rows' entries are not stored);
 *   - the columns before the step's end (no later entry of the row can fall there) are then written out to the
 *     panel row in 16-byte units, one unit per lane and store, and cleared in the ring;
 *   - a step whose columns run past the ring's room stores in rounds (each one a ring's worth of columns past what
 *     was written out); at the row's end the rest of the row, up to ldp, is written (zeros past the ring's room).
 * Unit u of the ring sits at u ^ ((u >> 3) & 7) (16-byte units, modulo the ring): at half density the lanes' 8-entry
 * groups start about 16 columns apart, so lanes 4 apart would store to the same bank; the permutation spreads them
 * over the 8 units of a 128-byte line, and a warp's 32 consecutive units stay conflict-free for the copy out.
 *
 * The panel is plain data: row r - prow0 holds row r of the matrix, its stored nonzeros at their columns and +0
 * everywhere else (columns the row does not store, stored zeros, and the pad columns up to ldp). alpha == 0: nothing
 * is read or written (the GEMM writes beta*C). No allocation, no atomics: graph-capturable and deterministic.
 */
#include "spmm_tc.h"

#include "macko_walk.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

namespace {

using namespace macko_walk;

constexpr int kWarpsPB = 6;               /* warps per block */
constexpr int kDepth = 2;                 /* steps of loads in flight per warp (1 and 4 measured no faster) */
constexpr int kRingCols = 4096;           /* columns a warp's ring holds: 8 KiB, 48 KiB of static shared memory */
constexpr int kRingUnits = kRingCols / 8; /* 16-byte units */

/* Byte offset of column c's place in a ring. */
__device__ __forceinline__ uint32_t ring_byte(uint32_t c)
{
    return ((c ^ ((c >> 3) & 0x38u)) & (uint32_t)(kRingCols - 1)) * 2u;
}
/* Byte offset of unit u (columns 8u .. 8u + 7). */
__device__ __forceinline__ uint32_t ring_unit_byte(uint32_t u)
{
    return ((u ^ ((u >> 3) & 7u)) & (uint32_t)(kRingUnits - 1)) * 16u;
}

template <typename H> using DP = Params<H, int32_t>; /* only values, dwords, row_ptr, rows and alpha are read */

template <typename H>
__global__ void __launch_bounds__(kWarpsPB * kWarp) rows_dense_kernel(const DP<H> p, H *panel, int ldp, int prow0)
{
    using G = typename Ty<H>::Group;
    __shared__ __align__(16) uint4 rings[kWarpsPB * kRingUnits];
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    if (alpha == 0.0f)
        return;
    const int lane = (int)(threadIdx.x % kWarp);
    const int row = prow0 + (int)(blockIdx.x * kWarpsPB + threadIdx.x / kWarp); /* a warp per row */
    if (row >= (int)p.rows)
        return;
    char *ring = reinterpret_cast<char *>(rings + (threadIdx.x / kWarp) * kRingUnits);
    for (int u = lane; u < kRingUnits; u += kWarp)
        reinterpret_cast<uint4 *>(ring)[u] = make_uint4(0u, 0u, 0u, 0u);
    const int b = __ldg(p.row_ptr + row), e = __ldg(p.row_ptr + row + 1);
    const int cb0 = b & ~7;
    /* the row's first kDepth steps of loads */
    G buf[kDepth];
#pragma unroll
    for (int d = 0; d < kDepth; d++)
        buf[d] = load_group<H, int>(p.values, p.dwords, cb0 + d * kChunk + lane * kLaneEntries, e);
    __syncwarp();

    int flushed = 0; /* columns of the row written out so far: a multiple of 8 */
    int carry = 0;   /* delta sum of the row's entries before the step */
    H *out = panel + (int64_t)(row - prow0) * ldp;
    /* Writes out the columns [flushed, to) (to: a multiple of 8) and clears their places in the ring; the places of
     * columns past flushed + kRingCols were never written (zeros). The caller synchronises the warp around it. */
    auto flush = [&](int to) {
        const int u0 = flushed >> 3, ulim = u0 + kRingUnits;
        for (int u = u0 + lane; u < (to >> 3); u += kWarp) {
            uint4 v = make_uint4(0u, 0u, 0u, 0u);
            if (u < ulim) {
                uint4 *s = reinterpret_cast<uint4 *>(ring + ring_unit_byte((uint32_t)u));
                v = *s;
                *s = make_uint4(0u, 0u, 0u, 0u);
            }
            *reinterpret_cast<uint4 *>(out + 8 * (int64_t)u) = v;
        }
        flushed = to;
    };
    for (int cb = cb0; cb < e; cb += kDepth * kChunk) {
#pragma unroll
        for (int d = 0; d < kDepth; d++) {
            const int cbd = cb + d * kChunk;
            if (cbd >= e)
                break;
            G cur = buf[d];
            buf[d] = load_group<H, int>(p.values, p.dwords, cbd + kDepth * kChunk + lane * kLaneEntries, e);
            const ChunkCols<int> cc = decode_chunk<H, int>(cur, cbd, b, e, lane, carry);
            /* every later entry of the row has a column >= hi */
            const int hi = min((cbd + kChunk - b) + carry, ldp);
            uint32_t pend = 0;
#pragma unroll
            for (int i = 0; i < kLaneEntries; i++)
                pend |= Ty<H>::nonzero(cur, i) ? 1u << i : 0u;
            for (;;) {
                const int lim = flushed + kRingCols;
#pragma unroll
                for (int i = 0; i < kLaneEntries; i++) {
                    const int col = cc.base + (int)cc.off(i);
                    if (((pend >> i) & 1u) && col < lim) {
                        const uint32_t w = Ty<H>::word(cur, i >> 1);
                        *reinterpret_cast<unsigned short *>(ring + ring_byte((uint32_t)col)) =
                            (unsigned short)((i & 1) ? w >> 16 : w & 0xFFFFu);
                        pend &= ~(1u << i);
                    }
                }
                __syncwarp();
                flush(min(hi, lim) & ~7);
                __syncwarp();
                if (!__any_sync(kFull, pend != 0u))
                    break;
            }
        }
    }
    flush(ldp); /* the rest of the row */
}

template <typename H> int launch(const macko_tc_args *a, void *panel, int64_t ldp, int64_t prow0, int64_t prow)
{
    DP<H> p;
    memset(&p, 0, sizeof p);
    p.rows = prow0 + prow;
    p.cols = a->cols;
    p.values = static_cast<const H *>(a->values);
    p.dwords = reinterpret_cast<const uint32_t *>(a->deltas);
    p.row_ptr = a->row_ptr;
    p.alpha_dev = a->alpha_dev;
    p.alpha = a->alpha;
    const unsigned blocks = (unsigned)((prow + kWarpsPB - 1) / kWarpsPB); /* a warp per row */
    rows_dense_kernel<H><<<blocks, kWarpsPB * kWarp, 0, reinterpret_cast<cudaStream_t>(a->stream)>>>(
        p, static_cast<H *>(panel), (int)ldp, (int)prow0);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int macko_rows_decode_dense(const macko_tc_args *a, void *panel, int64_t ldp, int64_t prow0, int64_t prow)
{
    if (prow <= 0)
        return 0;
    switch (a->type) {
    case MACKO_R_16F: return launch<__half>(a, panel, ldp, prow0, prow);
    case MACKO_R_16BF: return launch<__nv_bfloat16>(a, panel, ldp, prow0, prow);
    default: return (int)cudaErrorInvalidValue;
    }
}
