/* Tensor-core SpMM on the MACKO format (macko_tc_args in spmm_tc.h): C = alpha*M*B + beta*C, M, B, C all fp16 or all
 * bf16 (the kernels are templates over the 16-bit type H), fp32 accumulation with mma.sync.m16n8k16 (sm_80 and
 * newer).
 *
 * Block: 4 warps (8 for the 16- and 64-column tiles: MACKO_TC_WARPS_OF) of 16 consecutive rows of M each, one tile of
 * ntile columns of C, one range of K-tiles (its split). Each warp owns its 16 rows' dense 16-bit tile in shared memory
 * (16 x kt, rows padded), which it fills for one K-tile at a time by decoding the rows' MACKO segments of that tile
 * (the tile index gives where each segment starts) and then multiplies by the block's shared tile of B (staged with
 * cp.async, two buffers) on the tensor cores. So A is read from memory once per column tile of C, as compressed as it
 * is stored, and the products run as dense 16 x 8 x 16 MMAs.
 *
 * Decode of one pass: the warp's lanes form 32/G groups of G lanes; each group takes one row segment, each lane 16
 * consecutive entries (two 8-entry groups: 16-byte value loads, one 32-bit delta word each), starting from the
 * segment's first entry rounded down to 8. Columns come from the packed in-word prefix of macko_decode.cuh and a
 * G-lane scan. Every entry's value is stored to its column in the staged row without a bounds test:
 *   - the deltas of entries before the segment (same 8-group) are cleared, so those entries land 1..22 halves left
 *     of column 0, in the row's left pad (never read);
 *   - the values and deltas of entries at or past the segment's end (same 8-group) are cleared, so they store
 *     zeros at most 7 columns after the segment's last column: in the tile, where the row has no entry, or in the
 *     right pad;
 *   - 8-groups that start at or past the segment's end store nothing.
 * A segment longer than 16*G entries takes further passes (rare: the plan sizes G and kt from the density).
 *
 * The tile in shared memory is dense, so a zero of A meets every value of B in its column and 0 * Inf = NaN: an
 * element of C whose sum is NaN is recomputed exactly over the row's stored nonzeros (in entry order, fp32), so
 * that results depend only on B at the columns a row stores, as for every other path.
 *
 * splits > 1: each block writes its fp32 partial tile to the workspace; the last block of a (row block, column
 * tile) to arrive (an atomic counter, reset by that block) sums the partials in split order and writes C. Fixed
 * order everywhere, no floating-point atomics: bitwise reproducible. No allocation: graph-capturable.
 */
#include "spmm_tc.h"

#include "macko_decode.cuh"
#include "macko_mma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr int kLeftPad = 24;  /* halves left of column 0 of a staged A row (entries before a segment: <= 22) */
constexpr int kRightPad = 16; /* halves right of column kt - 1 (zeros past a segment's end: <= 7) */

/* Row strides in halves. (2*stride) / 16 is odd for every kt that is a multiple of 16, so the 8 rows an ldmatrix
 * reads fall into 8 different 16-byte bank groups. */
__host__ __device__ inline int a_stride(int kt) { return kt + kLeftPad + kRightPad; }
__host__ __device__ inline int b_stride(int kt) { return kt + 8; }

template <typename H> struct TcParams {
    int rows, cols;
    const H *values;
    const uint32_t *dwords;
    const int32_t *row_ptr;
    const uint32_t *tidx;
    int T;  /* K-tiles per row; the index has T + 1 words per row */
    int kt; /* K-tile width */
    int tiles_per_split, splits;
    const H *b;
    int64_t ldb;
    H *c;
    int64_t ldc;
    int n; /* columns of B and C in this launch */
    float *ws;
    int *counters;
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
};

/* ---- one lane's 16 entries of a pass */
struct Pass16 {
    uint4 v0, v1;    /* 16-bit values, entry 2j of a group in the low half of word j */
    uint32_t d0, d1; /* delta nibbles, entry i at bits 4i */
};

/* Group 0 of lane li of a G-lane slot holds entries a + 8*li .. +7 and group 1 entries a + 8*(G + li) .. +7, so
 * that each load instruction of the slot reads one contiguous run (g0 = a + 8*li, g1 = g0 + 8*G). */
template <typename H> __device__ __forceinline__ Pass16 load_pass(const TcParams<H> &p, int g0, int g1, int e)
{
    Pass16 x;
    x.v0 = x.v1 = make_uint4(0u, 0u, 0u, 0u);
    x.d0 = x.d1 = 0u;
    if (g0 < e) {
        x.v0 = __ldg(reinterpret_cast<const uint4 *>(p.values + g0));
        x.d0 = __ldg(p.dwords + (g0 >> 3));
    }
    if (g1 < e) {
        x.v1 = __ldg(reinterpret_cast<const uint4 *>(p.values + g1));
        x.d1 = __ldg(p.dwords + (g1 >> 3));
    }
    return x;
}

/* Keeps the first m (1..7) entries of an 8-group: clears the values and deltas of the others. */
__device__ __forceinline__ void keep_first(uint4 &v, uint32_t &d, int m)
{
    d &= 0xFFFFFFFFu >> (32 - 4 * m);
    const int w = m >> 1;                        /* the value word holding entry m */
    const uint32_t part = (m & 1) ? 0x0000FFFFu : 0u; /* entry m is its high half when m is odd */
    v.x &= w > 0 ? 0xFFFFFFFFu : part;
    v.y &= w > 1 ? 0xFFFFFFFFu : w == 1 ? part : 0u;
    v.z &= w > 2 ? 0xFFFFFFFFu : w == 2 ? part : 0u;
    v.w &= w == 3 ? part : 0u;
}

/* Stores the 8 values of a group at columns R + offset(i) of the staged row rowA (column 0; R may be negative down
 * to -22). pre/hi: the packed prefix of the group's deltas (see decode_store). */
__device__ __forceinline__ void store_group(const uint4 &v, uint32_t pre, uint32_t hi, int R, char *rowA)
{
    /* byte j: entry 2j / 2j+1's offset from R (index + deltas up to it, <= 127), doubled into a byte offset */
    const uint32_t eo = (pre + 0x07050301u) << 1;
    const uint32_t ee = (pre - hi + 0x06040200u) << 1;
    char *base = rowA + 2 * R;
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        *reinterpret_cast<unsigned short *>(base + macko_decode::byte_of(ee, j)) = (unsigned short)(w[j] & 0xFFFFu);
        *reinterpret_cast<unsigned short *>(base + macko_decode::byte_of(eo, j)) = (unsigned short)(w[j] >> 16);
    }
}

/* Decodes one pass of a G-lane slot (lane li of it) over the segment [s, e) of the row staged at rowA (column 0 =
 * the tile's first column, k0) and stores its entries; g0 / g0 + 8*G: this lane's two groups. nib: the index word's
 * column offset (k0 - col(s) + delta(s)); carry: deltas of the segment's entries in earlier passes (updated). */
template <int G>
__device__ __forceinline__ void decode_store(Pass16 &x, int s, int e, int nib, int g0, int li, int q, int &carry,
                                             char *rowA)
{
    const int g1 = g0 + 8 * G;
    if (q == 0 && li == 0)
        x.d0 &= 0xFFFFFFFFu << (4 * (s - g0)); /* entries before s: no column steps (s - g0 in 0..7) */
    /* the group holding the segment's end (one lane of the slot) keeps only the entries before e */
    if (e - g0 > 0 && e - g0 < 8)
        keep_first(x.v0, x.d0, e - g0);
    if (e - g1 > 0 && e - g1 < 8)
        keep_first(x.v1, x.d1, e - g1);

    const uint32_t lo0 = x.d0 & 0x0F0F0F0Fu, hi0 = (x.d0 >> 4) & 0x0F0F0F0Fu;
    const uint32_t lo1 = x.d1 & 0x0F0F0F0Fu, hi1 = (x.d1 >> 4) & 0x0F0F0F0Fu;
    const uint32_t pre0 = (lo0 + hi0) * 0x01010101u, pre1 = (lo1 + hi1) * 0x01010101u;
    /* both groups' delta totals in one word (each total over the slot <= 16 * 120): one scan for both */
    const uint32_t tot = (pre0 >> 24) | ((pre1 >> 24) << 16);
    uint32_t incl = tot;
#pragma unroll
    for (int o = 1; o < G; o <<= 1) {
        const uint32_t t = __shfl_up_sync(kFull, incl, o, G);
        if (li >= o)
            incl += t;
    }
    const uint32_t all = __shfl_sync(kFull, incl, G - 1, G);
    const uint32_t excl = incl - tot;
    /* column of entry k (k >= s) relative to k0:  -nib + (k - s) + sum of deltas s..k */
    const int base = carry - nib - s;
    carry += (int)(all & 0xFFFFu) + (int)(all >> 16);
    if (g0 < e)
        store_group(x.v0, pre0, hi0, base + g0 + (int)(excl & 0xFFFFu), rowA);
    if (g1 < e)
        store_group(x.v1, pre1, hi1, base + g1 + (int)(all & 0xFFFFu) + (int)(excl >> 16), rowA);
}

/* C = beta*C (0 when beta == 0) on this block's rows and columns: alpha == 0, A and B are not read. */
template <typename H, int kRows, int kThreads>
__device__ void scale_block(const TcParams<H> &p, int row0, int j0, int nh, float beta)
{
    for (int e = threadIdx.x; e < kRows * nh; e += kThreads) {
        const int r = row0 + e % kRows, j = e / kRows;
        if (r < p.rows) {
            H *cp = p.c + (int64_t)(j0 + j) * p.ldc + r;
            *cp = Tc16<H>::from_float(beta != 0.0f ? beta * Tc16<H>::to_float(*cp) : 0.0f);
        }
    }
}

/* The exact sum of row r times column j of B over the row's stored nonzeros, in entry order. */
template <typename H> __device__ float row_dot(const TcParams<H> &p, int r, int64_t j)
{
    return exact_row_dot(p.row_ptr, p.dwords, p.values, p.b + j * p.ldb, r);
}

template <typename H>
__device__ __forceinline__ void put_c(const TcParams<H> &p, int r, int64_t j, float v, float alpha, float beta)
{
    if (isnan(v))
        v = row_dot(p, r, j);
    H *cp = p.c + j * p.ldc + r;
    float out = alpha * v;
    if (beta != 0.0f)
        out = fmaf(beta, Tc16<H>::to_float(*cp), out);
    *cp = Tc16<H>::from_float(out);
}

/* Stages the kt x ntile tile of B starting at row k0, column j0 into sB (row j: kt values of column j0 + j),
 * zero-filled past cols and past nh. VEC: 16-byte cp.async (b 16-byte aligned, ldb % 8 == 0). */
template <typename H, int NTILE, bool VEC, int kThreads>
__device__ __forceinline__ void stage_b(const TcParams<H> &p, char *sB, int k0, int j0, int nh)
{
    const int kt = p.kt, bs = b_stride(kt);
    if (VEC) {
        const int cpr = kt >> 3; /* 16-byte chunks per staged row */
        for (int c = threadIdx.x; c < NTILE * cpr; c += kThreads) {
            const int j = c / cpr, kc = c - j * cpr, k = k0 + 8 * kc;
            char *dst = sB + 2 * (j * bs + 8 * kc);
            if (j < nh && k + 8 <= p.cols) {
                cp_async16(smem_addr(dst), p.b + (int64_t)(j0 + j) * p.ldb + k, 16);
            } else {
                /* past n or straddling cols: element loads (a partial cp.async may read all 16 bytes) */
                unsigned short h[8];
#pragma unroll
                for (int t = 0; t < 8; t++)
                    h[t] = (j < nh && k + t < p.cols)
                               ? __ldg(reinterpret_cast<const unsigned short *>(p.b) + (int64_t)(j0 + j) * p.ldb + k + t)
                               : (unsigned short)0;
                *reinterpret_cast<uint4 *>(dst) = make_uint4(h[0] | (uint32_t)h[1] << 16, h[2] | (uint32_t)h[3] << 16,
                                                             h[4] | (uint32_t)h[5] << 16, h[6] | (uint32_t)h[7] << 16);
            }
        }
    } else {
        for (int c = threadIdx.x; c < NTILE * kt; c += kThreads) {
            const int j = c / kt, kk = c - j * kt, k = k0 + kk;
            H v = Tc16<H>::from_bits((unsigned short)0);
            if (j < nh && k < p.cols)
                v = p.b[(int64_t)(j0 + j) * p.ldb + k];
            reinterpret_cast<H *>(sB)[j * bs + kk] = v;
        }
    }
}

template <typename H, int NT8>
__device__ __forceinline__ void mma_tile(float (&acc)[NT8][4], uint32_t a_addr, uint32_t b_addr, int ksteps, int bs)
{
    for (int ks = 0; ks < ksteps; ks++) {
        uint32_t a[4];
        ldsm_x4(a, a_addr + 32 * ks);
        if constexpr (NT8 == 1) {
            uint32_t b[2];
            ldsm_x2(b, b_addr + 32 * ks);
            mma_16816<H>(acc[0], a, b[0], b[1]);
        } else {
#pragma unroll
            for (int jp = 0; jp < NT8; jp += 2) {
                uint32_t b[4];
                ldsm_x4(b, b_addr + 2 * (jp * 8 * bs) + 32 * ks);
                mma_16816<H>(acc[jp], a, b[0], b[1]);
                mma_16816<H>(acc[jp + 1], a, b[2], b[3]);
            }
        }
    }
}

__device__ __forceinline__ void zero_rows(char *sA, int bytes, int lane)
{
    uint4 *p = reinterpret_cast<uint4 *>(sA);
    for (int i = lane; i < bytes / 16; i += 32)
        p[i] = make_uint4(0u, 0u, 0u, 0u);
}

/* The decode walk of one warp over the K-tiles [t_begin, t_end) of its 16 rows wrow0.. (rows >= row_end do not
 * exist): each tile is decoded into the warp's staged rows sA (zeroed on entry), then tile_done(t) runs; it must
 * leave sA zeroed again (and may synchronise the block: every warp calls it once per tile). The index words of
 * tiles t, t+1, t+2 ride in lanes 0..15; the loads of the next pass (the next row set's, or the next tile's first)
 * go out before the current pass is decoded. */
template <int G, typename H, typename DONE>
__device__ __forceinline__ void walk_tiles(const TcParams<H> &p, char *sA, int wrow0, int row_end, int t_begin,
                                           int t_end, int lane, DONE &&tile_done)
{
    constexpr int SLOTS = 32 / G;     /* row segments per pass */
    constexpr int RSETS = 16 / SLOTS; /* passes (at least) per warp and K-tile */
    const int as = a_stride(p.kt);
    const int li = lane & (G - 1), slot = lane / G;
    const int myrow = wrow0 + (lane & 15);
    const bool row_ok = lane < 16 && myrow < row_end;
    const int rbeg = row_ok ? __ldg(p.row_ptr + myrow) : 0;
    const uint32_t *ip = p.tidx + (int64_t)(row_ok ? myrow : 0) * (p.T + 1);
    uint32_t i0 = 0, i1 = 0, i2 = 0;
    if (row_ok) {
        i0 = __ldg(ip + t_begin);
        i1 = __ldg(ip + t_begin + 1);
        if (t_begin + 2 <= p.T)
            i2 = __ldg(ip + t_begin + 2);
    }
    /* The segment of row (rs * SLOTS + slot) in the tile whose index words lanes hold in (ia, ib). */
    auto segment = [&](int rs, uint32_t ia, uint32_t ib, int &s, int &e, int &nib) {
        const int src = rs * SLOTS + slot;
        const int rbv = __shfl_sync(kFull, rbeg, src);
        const uint32_t a = __shfl_sync(kFull, ia, src), b = __shfl_sync(kFull, ib, src);
        s = rbv + (int)(a >> 4);
        nib = (int)(a & 15u);
        e = rbv + (int)(b >> 4);
    };
    __syncwarp(); /* the zeroed tile before any decode store */
    int s, e, nib;
    segment(0, i0, i1, s, e, nib);
    Pass16 cur = load_pass(p, (s & ~7) + 8 * li, (s & ~7) + 8 * (G + li), e);
    for (int t = t_begin; t < t_end; t++) {
        for (int rs = 0; rs < RSETS; rs++) {
            int ns = 0, ne = 0, nnib = 0;
            if (rs + 1 < RSETS)
                segment(rs + 1, i0, i1, ns, ne, nnib);
            else if (t + 1 < t_end)
                segment(0, i1, i2, ns, ne, nnib);
            const Pass16 nxt = load_pass(p, (ns & ~7) + 8 * li, (ns & ~7) + 8 * (G + li), ne);
            char *row = sA + 2 * ((rs * SLOTS + slot) * as + kLeftPad);
            int carry = 0;
            decode_store<G>(cur, s, e, nib, (s & ~7) + 8 * li, li, 0, carry, row);
            /* segments longer than one pass (rare: the plan sizes G from the density) */
            for (int q = 1; __any_sync(kFull, (s & ~7) + 16 * G * q < e); q++) {
                const int g0 = (s & ~7) + 16 * G * q + 8 * li;
                Pass16 x = load_pass(p, g0, g0 + 8 * G, e);
                decode_store<G>(x, s, e, nib, g0, li, q, carry, row);
            }
            cur = nxt;
            s = ns;
            e = ne;
            nib = nnib;
        }
        __syncwarp();
        tile_done(t);
        i0 = i1;
        i1 = i2;
        i2 = (row_ok && t + 3 <= p.T) ? __ldg(ip + t + 3) : 0u;
    }
}

template <typename H, int NT8, int G, bool VEC>
__global__ void __launch_bounds__(MACKO_TC_WARPS_OF(NT8 * 8) * 32, MACKO_TC_REG_BLOCKS_OF(NT8 * 8))
    tc_kernel(const TcParams<H> p)
{
    constexpr int NTILE = NT8 * 8;
    constexpr int kWarps = MACKO_TC_WARPS_OF(NTILE), kThreads = kWarps * 32, kRows = 16 * kWarps;
    extern __shared__ __align__(16) char smem[];
    __shared__ int s_last;

    const int kt = p.kt, as = a_stride(kt), bs = b_stride(kt);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    char *sA = smem + warp * 16 * as * 2;
    char *sB = smem + kWarps * 16 * as * 2;
    const int bbytes = NTILE * bs * 2;

    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    const int rb = blockIdx.x, split = blockIdx.y;
    const int row0 = rb * kRows, j0 = blockIdx.z * NTILE;
    const int nh = min(NTILE, p.n - j0);
    if (alpha == 0.0f) {
        if (split == 0)
            scale_block<H, kRows, kThreads>(p, row0, j0, nh, beta);
        return;
    }
    const int t_begin = split * p.tiles_per_split;
    const int t_end = min(p.T, t_begin + p.tiles_per_split);

    if (t_begin < t_end)
        stage_b<H, NTILE, VEC, kThreads>(p, sB, t_begin * kt, j0, nh);
    cp_async_commit();
    zero_rows(sA, 16 * as * 2, lane);

    float acc[NT8][4];
#pragma unroll
    for (int jt = 0; jt < NT8; jt++)
        acc[jt][0] = acc[jt][1] = acc[jt][2] = acc[jt][3] = 0.0f;

    const int wrow0 = row0 + warp * 16;
    const uint32_t a_addr = smem_addr(sA) + 2 * ((lane & 15) * as + kLeftPad + (lane >> 4) * 8);
    const uint32_t b_lane = 2 * (((lane >> 4) * 8 + (lane & 7)) * bs + ((lane >> 3) & 1) * 8);
    int buf = 0;
    if (t_begin < t_end)
        walk_tiles<G>(p, sA, wrow0, p.rows, t_begin, t_end, lane, [&](int t) {
            cp_async_wait<0>();
            __syncthreads(); /* B tile t staged; every warp is done with the other buffer */
            if (t + 1 < t_end)
                stage_b<H, NTILE, VEC, kThreads>(p, sB + (buf ^ 1) * bbytes, (t + 1) * kt, j0, nh);
            cp_async_commit();
            const int ksteps = min(kt, p.cols - t * kt + 15) >> 4;
            mma_tile<H, NT8>(acc, a_addr, smem_addr(sB + buf * bbytes) + b_lane, ksteps, bs);
            __syncwarp();
            zero_rows(sA, 16 * as * 2, lane);
            __syncwarp();
            buf ^= 1;
        });

    /* ---- epilogue: acc[jt] holds rows g, g + 8 (g = lane / 4) and columns jt*8 + 2*(lane % 4) + {0, 1} */
    const int g = lane >> 2, qd = lane & 3;
    if (p.splits == 1) {
#pragma unroll
        for (int jt = 0; jt < NT8; jt++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const int r = wrow0 + g + 8 * h, j = jt * 8 + 2 * qd + c;
                    if (r < p.rows && j < nh)
                        put_c(p, r, (int64_t)(j0 + j), acc[jt][2 * h + c], alpha, beta);
                }
        return;
    }
    const int64_t slab = (int64_t)kRows * NTILE;
    const int64_t tile_id = (int64_t)blockIdx.z * gridDim.x + rb; /* (column tile, row block) */
    float *mine = p.ws + (tile_id * p.splits + split) * slab;
#pragma unroll
    for (int jt = 0; jt < NT8; jt++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            *reinterpret_cast<float2 *>(mine + (warp * 16 + g + 8 * h) * NTILE + jt * 8 + 2 * qd) =
                make_float2(acc[jt][2 * h], acc[jt][2 * h + 1]);
    __threadfence();
    __syncthreads();
    if (tid == 0)
        s_last = atomicAdd(p.counters + tile_id, 1) == p.splits - 1;
    __syncthreads();
    if (!s_last)
        return;
    __threadfence();
    const float *all = p.ws + tile_id * p.splits * slab;
    for (int x = tid; x < kRows * NTILE; x += kThreads) {
        const int r = row0 + x / NTILE, j = x % NTILE;
        if (r < p.rows && j < nh) {
            float v = 0.0f;
            for (int sp = 0; sp < p.splits; sp++)
                v += __ldcg(all + sp * slab + x);
            put_c(p, r, (int64_t)(j0 + j), v, alpha, beta);
        }
    }
    if (tid == 0)
        p.counters[tile_id] = 0;
}

/* ---- tile index: one warp per row */
__global__ void tc_index_kernel(int rows, int kt, int T, const uint32_t *dwords, const int32_t *row_ptr,
                                uint32_t *tidx)
{
    const int lane = threadIdx.x & 31;
    const int nwarps = (int)(gridDim.x * blockDim.x / 32);
    for (int r = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32); r < rows; r += nwarps) {
        const int b = __ldg(row_ptr + r), e = __ldg(row_ptr + r + 1);
        uint32_t *out = tidx + (int64_t)r * (T + 1);
        int carry = 0, lastcol = -1;
        for (int cb = b & ~7; cb < e; cb += 256) {
            const int k0 = cb + 8 * lane;
            uint32_t d = k0 < e ? __ldg(dwords + (k0 >> 3)) : 0u;
            if (k0 < b)
                d &= 0xFFFFFFFFu << (4 * (b - k0));
            if (k0 < e && e - k0 < 8)
                d &= 0xFFFFFFFFu >> (32 - 4 * (e - k0));
            int tot = 0;
#pragma unroll
            for (int i = 0; i < 8; i++)
                tot += (int)((d >> (4 * i)) & 15u);
            int incl = tot;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const int t = __shfl_up_sync(kFull, incl, o);
                if (lane >= o)
                    incl += t;
            }
            int run = carry + incl - tot; /* deltas of the row's entries before this lane's group */
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int k = k0 + i, dl = (int)((d >> (4 * i)) & 15u);
                run += dl;
                if (k >= b && k < e) {
                    const int col = (k - b) + run;
                    lastcol = col;
                    if (col % kt <= dl) { /* k is the first entry of tile col / kt */
                        const int t = col / kt;
                        out[t] = ((uint32_t)(k - b) << 4) | (uint32_t)(t * kt - (col - dl));
                    }
                }
            }
            carry += __shfl_sync(kFull, incl, 31);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            lastcol = max(lastcol, __shfl_xor_sync(kFull, lastcol, o));
        const int first_empty = lastcol < 0 ? 0 : lastcol / kt + 1;
        for (int t = first_empty + lane; t <= T; t += 32)
            out[t] = (uint32_t)(e - b) << 4;
    }
}

template <typename H> using tc_kernel_fn = void (*)(TcParams<H>);

template <typename H, int NT8, int G> tc_kernel_fn<H> pick_vec(bool vec)
{
    return vec ? tc_kernel<H, NT8, G, true> : tc_kernel<H, NT8, G, false>;
}
template <typename H, int NT8> tc_kernel_fn<H> pick_group(int group, bool vec)
{
    switch (group) {
    case 4: return pick_vec<H, NT8, 4>(vec);
    case 8: return pick_vec<H, NT8, 8>(vec);
    case 16: return pick_vec<H, NT8, 16>(vec);
    default: return nullptr;
    }
}
template <typename H> tc_kernel_fn<H> pick(int ntile, int group, bool vec)
{
    switch (ntile) {
    case 8: return pick_group<H, 1>(group, vec);
    case 16: return pick_group<H, 2>(group, vec);
    case 32: return pick_group<H, 4>(group, vec);
    case 64: return pick_group<H, 8>(group, vec);
    default: return nullptr;
    }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename H> int tc_prepare(int group, int max_smem_optin)
{
    static const int ntiles[] = {8, 16, 32, 64};
    tc_kernel_fn<H> fns[8];
    int k = 0;
    for (int nt : ntiles)
        for (int v = 0; v < 2; v++)
            fns[k++] = pick<H>(nt, group, v != 0);
    for (int i = 0; i < k; i++) {
        /* the block's static shared memory counts against the same limit */
        cudaFuncAttributes fa;
        cudaError_t e = fns[i] == nullptr ? cudaErrorInvalidValue : cudaFuncGetAttributes(&fa, fns[i]);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(fns[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     max_smem_optin - (int)fa.sharedSizeBytes);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return (int)e;
        }
    }
    return 0;
}

/* The kernels' view of the encoding and the scalars (the rest of TcParams zero). */
template <typename H> TcParams<H> params_of(const macko_tc_args *a)
{
    TcParams<H> p;
    memset(&p, 0, sizeof p);
    p.rows = (int)a->rows;
    p.cols = (int)a->cols;
    p.values = static_cast<const H *>(a->values);
    p.dwords = reinterpret_cast<const uint32_t *>(a->deltas);
    p.row_ptr = a->row_ptr;
    p.tidx = a->tidx;
    p.kt = a->kt;
    p.T = (int)ceil_div(a->cols, a->kt);
    p.alpha_dev = a->alpha_dev;
    p.beta_dev = a->beta_dev;
    p.alpha = a->alpha;
    p.beta = a->beta;
    return p;
}

template <typename H> int tc_spmm(const macko_tc_args *a)
{
    const bool vec = a->ldb % 8 == 0 && (reinterpret_cast<uintptr_t>(a->b) & 15u) == 0;
    const tc_kernel_fn<H> k = pick<H>(a->ntile, a->group, vec);
    if (k == nullptr || a->kt < 32 || a->kt % 16 != 0 || a->splits < 1)
        return (int)cudaErrorInvalidValue;
    TcParams<H> p = params_of<H>(a);
    p.tiles_per_split = (int)ceil_div(p.T, a->splits);
    p.splits = p.T > 0 ? (int)ceil_div(p.T, p.tiles_per_split) : 1;
    p.ldb = a->ldb;
    p.ldc = a->ldc;
    p.ws = a->ws;
    p.counters = a->counters;
    const size_t smem = macko_tc_smem_bytes(a->kt, a->ntile);
    const cudaStream_t st = reinterpret_cast<cudaStream_t>(a->stream);
    /* Column tiles go to grid.z (at most 65535 per launch). */
    const int64_t max_cols = (int64_t)65535 * a->ntile;
    for (int64_t j = 0; j < a->n; j += max_cols) {
        const int64_t nn = a->n - j < max_cols ? a->n - j : max_cols;
        p.b = static_cast<const H *>(a->b) + j * a->ldb;
        p.c = static_cast<H *>(a->c) + j * a->ldc;
        p.n = (int)nn;
        const dim3 grid((unsigned)ceil_div(a->rows, MACKO_TC_ROWS_OF(a->ntile)), (unsigned)p.splits,
                        (unsigned)ceil_div(nn, a->ntile));
        k<<<grid, MACKO_TC_WARPS_OF(a->ntile) * 32, smem, st>>>(p);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return (int)e;
    }
    return 0;
}

} // namespace

extern "C" size_t macko_tc_smem_bytes(int kt, int ntile)
{
    return (size_t)2 * ((size_t)MACKO_TC_ROWS_OF(ntile) * (size_t)a_stride(kt) +
                        (size_t)2 * (size_t)ntile * (size_t)b_stride(kt));
}

extern "C" int64_t macko_tc_ws_floats(int64_t rows, int64_t n, int ntile, int splits)
{
    const int64_t r = MACKO_TC_ROWS_OF(ntile);
    return splits <= 1 ? 0 : ceil_div(rows, r) * ceil_div(n, ntile) * (int64_t)splits * r * ntile;
}

extern "C" int64_t macko_tc_counters(int64_t rows, int64_t n, int ntile, int splits)
{
    return splits <= 1 ? 0 : ceil_div(rows, MACKO_TC_ROWS_OF(ntile)) * ceil_div(n, ntile);
}

extern "C" int macko_tc_prepare(macko_datatype_t type, int group, int max_smem_optin)
{
    const int e = type == MACKO_R_16F    ? tc_prepare<__half>(group, max_smem_optin)
                  : type == MACKO_R_16BF ? tc_prepare<__nv_bfloat16>(group, max_smem_optin)
                                         : (int)cudaErrorInvalidValue;
    return e != 0 ? e : macko_panel_prepare(type);
}

extern "C" int macko_tc_spmm(const macko_tc_args *a)
{
    switch (a->type) {
    case MACKO_R_16F: return tc_spmm<__half>(a);
    case MACKO_R_16BF: return tc_spmm<__nv_bfloat16>(a);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int macko_tc_build_index(int64_t rows, int64_t cols, const uint8_t *deltas, const int32_t *row_ptr,
                                    int kt, uint32_t *tidx, macko_stream_t stream)
{
    if (rows <= 0)
        return 0;
    const int T = (int)ceil_div(cols, kt);
    const int64_t blocks = ceil_div(rows, 8); /* 8 warps of 32 per block */
    tc_index_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        (int)rows, kt, T, reinterpret_cast<const uint32_t *>(deltas), row_ptr, tidx);
    return (int)cudaGetLastError();
}
