/* Tile-layout SpMM on the tensor cores (spmm_tiles.h): C = alpha*M*B + beta*C, M in the tile layout
 * (lapack_style_docs/FORMAT.md, "Tile layout"), M, B and C all fp16 or all bf16, fp32 accumulation, mma.sync
 * m16n8k16 (sm_80 and newer).
 *
 * Block: 8 warps, one band of 16 rows each, one tile of NT columns of C, one range of K-groups (its split). Per group
 * of KG tiles (8, or 16 for NT <= 16 where the upload chose it: macko_tiles_kg) every warp copies its band's KG records
 * (contiguous in the stream) into its shared buffer (sm_90: one bulk copy a warp, on the warp's mbarrier of the stage;
 * else cp.async, 16 bytes a lane) and the block copies the 16 KG x NT piece of B with cp.async, one group ahead of the
 * one being multiplied.
 *
 * A lane's A fragment of mma.m16n8k16 is two adjacent values in each of the tile's four 8 x 8 subtiles, at bit
 * p = 8*(lane/4) + 2*(lane%4) of the subtile's bitmap. The record's header holds the bitmaps' low 32-bit words, then
 * the high words, then per subtile the count of values before its low and its high word, so a lane reads the four
 * words it needs with one 16-byte load. One IMAD lifts the word by 30 - p: the lane's two bits land at 31 / 30 with
 * the bits below them under them, so popc of the product is `end`, the count of the subtile's values up to and
 * including the lane's, and its top two bits are the lane's bits; the lane reads the two values before `end` (never
 * past the record) and one prmt picks them (or zeros) by those bits. Tiles past the matrix's edge point at an
 * all-zero record, and B is staged with zeros past cols, so the loop has no tests.
 *
 * Zeros of A meet B's values in dense MMAs (0 * Inf = NaN): an element whose sum is NaN is recomputed exactly over
 * the row's stored nonzeros (column order, fp32), so results depend on B only where the row stores values.
 * splits > 1: each block writes its fp32 partial tile to the workspace; the last block of a (row block, column
 * tile) to arrive sums the partials in split order and writes C. No floating-point atomics: bitwise reproducible. */
#include "spmm_tiles.h"

#include "macko_mma.cuh"
#include "tiles_decode.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int kW = MACKO_TILES_WARPS;
constexpr int kThreads = kW * 32;
constexpr int kStages = 2;
/* halves per staged column of B in groups of kg tiles: 272 / 528 bytes for 8 / 16, an odd number of 16-byte units */
__host__ __device__ constexpr int bstride(int kg) { return kg * 16 + 8; }
constexpr int kZero = 48;         /* bytes of a warp's all-zero record */
/* Bytes after each staged group that no copy writes. The A reads stay inside their record (the two values before
 * `end`, or the header's last 4 bytes for a lane with no values at a record's start); until session 48 they could run
 * 4 bytes past it, and the slack kept them off the buffer being filled. It stays as a guard (256 bytes a block). */
constexpr int kSlack = 16;
constexpr unsigned kFull = 0xFFFFFFFFu;

template <typename H> struct TilesParams {
    int rows, cols, bands, tcols, groups, gps, splits, abuf, vec, bulk;
    const uint32_t *offs;
    const uint4 *stream;
    const H *b;
    int64_t incb, ldb;
    H *c;
    int64_t incc, ldc;
    int n;
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
    float *ws;
    int *counters;
};

__host__ __device__ constexpr int fixed_smem(int nt, int kg)
{
    return kStages * nt * bstride(kg) * 2 + kW * kStages * kg * 4 + kW * kZero;
}

/* sm_90 builds: a warp's records of a group come in one bulk copy, issued by one lane, that completes on the warp's
 * mbarrier of that stage (p.bulk; bench/NOTES.md, session 46: 0.93-0.96x the time of 16 bytes a lane and step with
 * cp.async, with 8 % fewer instructions executed). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MACKO_TILES_BULK 1
#else
#define MACKO_TILES_BULK 0
#endif

template <typename H>
__device__ __forceinline__ void put_c(const TilesParams<H> &p, int r, int j, float v, float alpha, float beta)
{
    if (isnan(v))
        v = tiles_row_dot<H>(p.stream, p.offs, p.tcols, p.b, p.incb, p.ldb, r, j);
    H *cp = p.c + (int64_t)r * p.incc + (int64_t)j * p.ldc;
    float out = alpha * v;
    if (beta != 0.0f)
        out = fmaf(beta, Tc16<H>::to_float(*cp), out);
    *cp = Tc16<H>::from_float(out);
}

template <typename H, int NT, int KG>
__global__ void __launch_bounds__(kThreads, NT <= 32 ? 4 : 2) tiles_kernel(const TilesParams<H> p)
{
    constexpr int kKG = KG, kBS = bstride(KG);
    extern __shared__ __align__(16) char smem[];
#if MACKO_TILES_BULK
    __shared__ __align__(8) uint64_t bars[kW * kStages]; /* per warp and stage: its records have landed */
#endif
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int j0 = blockIdx.x * NT;
    const int band = blockIdx.y * kW + warp;
    const int split = blockIdx.z;
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev ? *p.beta_dev : p.beta;
    const int row_block = blockIdx.y * kW * 16;

    if (alpha == 0.0f) { /* C = beta * C: A and B are not read (split 0's blocks only) */
        if (split != 0)
            return;
        for (int e = threadIdx.x; e < kW * 16 * NT; e += kThreads) {
            const int r = row_block + e % (kW * 16), j = j0 + e / (kW * 16);
            if (r < p.rows && j < p.n) {
                H *cp = p.c + (int64_t)r * p.incc + (int64_t)j * p.ldc;
                *cp = Tc16<H>::from_float(beta != 0.0f ? beta * Tc16<H>::to_float(*cp) : 0.0f);
            }
        }
        return;
    }

    const int g0 = split * p.gps, g1 = min(p.groups, g0 + p.gps);
    char *sB = smem;
    uint32_t *sR = reinterpret_cast<uint32_t *>(smem + kStages * NT * kBS * 2) + warp * kStages * kKG;
    char *zrec = smem + kStages * NT * kBS * 2 + kW * kStages * kKG * 4 + warp * kZero;
    char *sA = smem + fixed_smem(NT, kKG) + warp * kStages * (p.abuf + kSlack);
    const bool band_ok = band < p.bands;
    if (lane < kZero / 4)
        reinterpret_cast<uint32_t *>(zrec)[lane] = 0u;
    const uint32_t zaddr = smem_addr(zrec);

    constexpr int NT8 = NT / 8;
    float acc[NT8][4];
#pragma unroll
    for (int j = 0; j < NT8; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

    const int gq = lane >> 2, tg = lane & 3;
    const uint32_t sh = (uint32_t)((8 * gq + 2 * tg) & 31);
    const uint32_t lift = 1u << (30u - sh); /* w * lift: bits sh + 1, sh of w at 31, 30 (see the tile loop) */
    const uint32_t hoff = gq >= 4 ? 16u : 0u, soff = gq >= 4 ? 36u : 32u;

    auto load_offs = [&](int g) -> uint32_t {
        const int tc = min(kKG, p.tcols - g * kKG);
        return (band_ok && g < g1 && lane <= tc) ? __ldg(p.offs + (int64_t)band * p.tcols + g * kKG + lane) : 0u;
    };
    auto stage = [&](int g, uint32_t o) {
        const int st = (g - g0) % kStages;
        const int tc = min(kKG, p.tcols - g * kKG);
        const uint32_t w0 = __shfl_sync(kFull, o, 0), w1 = __shfl_sync(kFull, o, tc);
        char *dst = sA + st * (p.abuf + kSlack);
        if (lane < kKG)
            sR[st * kKG + lane] = (band_ok && lane < tc) ? smem_addr(dst) + 16u * (o - w0) : zaddr;
        const int words = band_ok ? (int)(w1 - w0) : 0;
#if MACKO_TILES_BULK
        if (p.bulk) {
            if (lane == 0) {
                const uint32_t bar = smem_addr(&bars[warp * kStages + st]);
                mbar_arrive_tx(bar, 16u * (uint32_t)words);
                if (words > 0)
                    bulk_load(smem_addr(dst), p.stream + w0, 16u * (uint32_t)words, bar);
            }
        } else
#endif
            for (int i = lane; i < words; i += 32)
                cp_async16(smem_addr(dst + 16 * i), p.stream + w0 + i, 16);
        char *bdst = sB + st * NT * kBS * 2;
        const int kb = g * kKG * 16;
        for (int c = threadIdx.x; c < NT * kKG * 2; c += kThreads) {
            const int j = c / (kKG * 2), kc = c % (kKG * 2), k = kb + 8 * kc;
            char *d = bdst + 2 * (j * kBS + 8 * kc);
            if (p.vec && j0 + j < p.n && k + 8 <= p.cols) {
                cp_async16(smem_addr(d), p.b + (int64_t)(j0 + j) * p.ldb + k, 16);
            } else {
                /* past n or cols, or B not 16-byte aligned / strided: element loads, zeros outside B */
                unsigned short h[8];
#pragma unroll
                for (int t = 0; t < 8; t++)
                    h[t] = (j0 + j < p.n && k + t < p.cols)
                               ? *reinterpret_cast<const unsigned short *>(&p.b[(int64_t)(k + t) * p.incb +
                                                                                 (int64_t)(j0 + j) * p.ldb])
                               : (unsigned short)0;
                *reinterpret_cast<uint4 *>(d) = make_uint4(h[0] | (uint32_t)h[1] << 16, h[2] | (uint32_t)h[3] << 16,
                                                           h[4] | (uint32_t)h[5] << 16, h[6] | (uint32_t)h[7] << 16);
            }
        }
    };

#if MACKO_TILES_BULK
    if (p.bulk && lane == 0) {
#pragma unroll
        for (int s = 0; s < kStages; s++)
            mbar_init(smem_addr(&bars[warp * kStages + s]), 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    /* every warp's mbarriers initialised before any thread of the block writes its first stage */
    __syncthreads();
#else
    __syncwarp();
#endif
#pragma unroll
    for (int i = 0; i < kStages - 1; i++) {
        if (g0 + i < g1)
            stage(g0 + i, load_offs(g0 + i));
        cp_async_commit();
    }
    uint32_t o_next = load_offs(g0 + kStages - 1);
    for (int g = g0; g < g1; g++) {
        const int st = (g - g0) % kStages;
        if (g + kStages - 1 < g1)
            stage(g + kStages - 1, o_next);
        cp_async_commit();
        o_next = load_offs(g + kStages);
        cp_async_wait<kStages - 1>();
        __syncthreads();
#if MACKO_TILES_BULK
        if (p.bulk) /* the k-th use of a stage's mbarrier completes its phase k */
            mbar_wait(smem_addr(&bars[warp * kStages + st]), (uint32_t)((g - g0) / kStages) & 1u);
#endif
        const uint32_t bbase = smem_addr(sB + st * NT * kBS * 2);
#pragma unroll
        for (int tt = 0; tt < kKG; tt++) {
            const uint32_t rec = sR[st * kKG + tt];
            uint32_t w[4];
            lds128(w, rec + hoff);
            const uint32_t st4 = lds32(rec + soff);
            uint32_t a[4];
#pragma unroll
            for (int s = 0; s < 4; s++) /* tiles_decode.cuh */
                a[s] = tiles_a_reg<true>(rec, w[s], lift, st4, s);
#pragma unroll
            for (int jp = 0; jp + 1 < NT8; jp += 2) {
                uint32_t bf[4];
                ldsm_x4(bf, bbase + 2 * ((jp * 8 + (lane & 7) + ((lane >> 4) << 3)) * kBS + tt * 16 +
                                         ((lane >> 3) & 1) * 8));
                mma_16816<H>(acc[jp], a, bf[0], bf[1]);
                mma_16816<H>(acc[jp + 1], a, bf[2], bf[3]);
            }
            if constexpr (NT8 % 2 == 1) { /* the last 8 columns of an odd count (NT = 8, 24) */
                uint32_t bf[2];
                const int l = lane & 15;
                ldsm_x2(bf, bbase + 2 * (((NT8 - 1) * 8 + (l & 7)) * kBS + tt * 16 + ((l >> 3) & 1) * 8));
                mma_16816<H>(acc[NT8 - 1], a, bf[0], bf[1]);
            }
        }
        __syncthreads();
    }
    cp_async_wait<0>();
#if MACKO_TILES_BULK
    /* every lane of the warp has passed its last wait on them (the block barrier above) */
    if (p.bulk && lane == 0) {
#pragma unroll
        for (int s = 0; s < kStages; s++)
            mbar_inval(smem_addr(&bars[warp * kStages + s]));
    }
#endif

    const int r0 = band * 16 + gq;
    if (p.splits == 1) {
        if (!band_ok)
            return;
#pragma unroll
        for (int j8 = 0; j8 < NT8; j8++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = r0 + (e >> 1) * 8, j = j0 + j8 * 8 + 2 * tg + (e & 1);
                if (r < p.rows && j < p.n)
                    put_c(p, r, j, acc[j8][e], alpha, beta);
            }
        return;
    }
    const int tile_id = blockIdx.y * gridDim.x + blockIdx.x;
    float *wt = p.ws + (int64_t)tile_id * p.splits * (kW * 16 * NT);
    {
        float *mine = wt + (int64_t)split * (kW * 16 * NT);
#pragma unroll
        for (int j8 = 0; j8 < NT8; j8++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                mine[(warp * 16 + gq + (e >> 1) * 8) * NT + j8 * 8 + 2 * tg + (e & 1)] = acc[j8][e];
    }
    __threadfence();
    __syncthreads();
    __shared__ int last;
    if (threadIdx.x == 0) {
        const int prev = atomicAdd(p.counters + tile_id, 1);
        last = prev == p.splits - 1;
        if (last)
            p.counters[tile_id] = 0; /* zero again for the next call */
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    for (int e = threadIdx.x; e < kW * 16 * NT; e += kThreads) {
        const int r = row_block + e / NT, j = j0 + e % NT;
        if (r >= p.rows || j >= p.n)
            continue;
        float s = 0.0f;
        for (int q = 0; q < p.splits; q++)
            s += __ldcg(wt + (int64_t)q * (kW * 16 * NT) + e);
        put_c(p, r, j, s, alpha, beta);
    }
}

/* Rows [row0, row0 + prow) of the matrix (row0 a multiple of 16) written densely to panel (ld ldp, a multiple of 8):
 * one warp per tile, each lane its A fragment (as the product kernel finds it, read straight from global memory), four
 * 32-bit stores per lane. Columns past cols up to ldp get zeros; nothing is written past ldp. */
template <typename H>
__global__ void __launch_bounds__(256) tiles_dense_kernel(const uint4 *stream, const uint32_t *offs, int tcols,
                                                          int band0, int bands, int prow, H *panel, int ldp)
{
    const int lane = threadIdx.x & 31;
    const int64_t w = (int64_t)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (w >= (int64_t)bands * tcols)
        return;
    const int bl = (int)(w / tcols), t = (int)(w % tcols);
    const uint32_t *rec = reinterpret_cast<const uint32_t *>(stream + __ldg(offs + (int64_t)(band0 + bl) * tcols + t));
    const unsigned short *vals = reinterpret_cast<const unsigned short *>(rec + MACKO_TILES_HEADER / 4);
    const int gq = lane >> 2, tg = lane & 3;
    const int sh = (8 * gq + 2 * tg) & 31, hw = gq >= 4 ? 4 : 0;
    const uint32_t st4 = __ldg(rec + 8 + (gq >= 4 ? 1 : 0));
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const uint32_t word = __ldg(rec + hw + s);
        const uint32_t idx = ((st4 >> (8 * s)) & 0xFFu) + __popc(word & ((1u << sh) - 1u));
        const uint32_t two = (word >> sh) & 3u;
        const uint32_t lo = (two & 1u) ? __ldg(vals + idx) : 0u;
        const uint32_t hv = (two & 2u) ? __ldg(vals + idx + (two & 1u)) : 0u;
        const int r = 16 * bl + gq + 8 * (s & 1), c = 16 * t + 2 * tg + 8 * (s >> 1);
        if (r < prow && c < ldp)
            *reinterpret_cast<uint32_t *>(panel + (int64_t)r * ldp + c) = lo | (hv << 16);
    }
}

template <typename H, int NT> int launch_nt(const macko_tiles_args *a, const TilesParams<H> &p)
{
    const dim3 grid((unsigned)((a->k.n + NT - 1) / NT), (unsigned)((a->bands + kW - 1) / kW), (unsigned)p.splits);
    const size_t smem = macko_tiles_smem(NT, a->kg, a->abuf);
    if constexpr (NT <= 32) {
        if (a->kg == MACKO_TILES_KG_WIDE) {
            tiles_kernel<H, NT, MACKO_TILES_KG_WIDE><<<grid, kThreads, smem, (cudaStream_t)a->k.stream>>>(p);
            return (int)cudaGetLastError();
        }
    }
    tiles_kernel<H, NT, MACKO_TILES_KG><<<grid, kThreads, smem, (cudaStream_t)a->k.stream>>>(p);
    return (int)cudaGetLastError();
}

template <typename H> int launch(const macko_tiles_args *a)
{
    TilesParams<H> p;
    p.rows = (int)a->k.rows;
    p.cols = (int)a->k.cols;
    p.bands = (int)a->bands;
    p.tcols = (int)a->tcols;
    p.groups = (p.tcols + a->kg - 1) / a->kg; /* a->kg: macko_tiles_kg's, wide for n <= 32 at most */
    p.gps = (p.groups + a->splits - 1) / a->splits;
    p.splits = p.gps > 0 ? (p.groups + p.gps - 1) / p.gps : 1;
    if (p.splits < 1)
        p.splits = 1;
    p.abuf = a->abuf;
    p.bulk = a->bulk;
    p.offs = a->offs;
    p.stream = static_cast<const uint4 *>(a->stream);
    p.b = static_cast<const H *>(a->k.b);
    p.incb = a->k.incb;
    p.ldb = a->k.ldb;
    p.c = static_cast<H *>(a->k.c);
    p.incc = a->k.incc;
    p.ldc = a->k.ldc;
    p.n = (int)a->k.n;
    p.vec = a->k.incb == 1 && a->k.ldb % 8 == 0 && (reinterpret_cast<uintptr_t>(a->k.b) & 15u) == 0;
    p.alpha_dev = a->k.alpha_dev;
    p.beta_dev = a->k.beta_dev;
    p.alpha = a->k.alpha;
    p.beta = a->k.beta;
    p.ws = a->ws;
    p.counters = a->counters;
    switch (macko_tiles_ntile(a->k.n)) {
    case 8: return launch_nt<H, 8>(a, p);
    case 16: return launch_nt<H, 16>(a, p);
    case 24: return launch_nt<H, 24>(a, p);
    case 32: return launch_nt<H, 32>(a, p);
    default: return launch_nt<H, 64>(a, p);
    }
}

/* The shared-memory limit is the kernel's on the device, shared by every matrix there: it is set to all the device
 * allows (less the block's static shared memory, which counts against it too), never to this matrix's need, which
 * would lower it under the launches of a matrix uploaded before with a larger need. Whether this matrix fits is
 * decided here from the device's limit, so that a failed call is reported as one, not taken for "too large". */
template <typename H, int NT, int KG> int prepare_nt(int abuf, int max_smem_optin, int *occ)
{
    const int smem = (int)macko_tiles_smem(NT, KG, abuf);
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, tiles_kernel<H, NT, KG>);
    *occ = 0;
    if (e == cudaSuccess && smem > max_smem_optin - (int)fa.sharedSizeBytes)
        return 0; /* too large for this device: occ 0, the caller refuses the layout */
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(tiles_kernel<H, NT, KG>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 max_smem_optin - (int)fa.sharedSizeBytes);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(occ, tiles_kernel<H, NT, KG>, kThreads, smem);
    if (e != cudaSuccess) {
        *occ = 0;
        (void)cudaGetLastError();
    }
    return (int)e;
}

template <typename H> int prepare(int abuf, int max_smem_optin, int *occ)
{
    int e;
    if ((e = prepare_nt<H, 8, MACKO_TILES_KG>(abuf, max_smem_optin, occ + 0)) != 0) return e;
    if ((e = prepare_nt<H, 16, MACKO_TILES_KG>(abuf, max_smem_optin, occ + 1)) != 0) return e;
    if ((e = prepare_nt<H, 24, MACKO_TILES_KG>(abuf, max_smem_optin, occ + 2)) != 0) return e;
    if ((e = prepare_nt<H, 32, MACKO_TILES_KG>(abuf, max_smem_optin, occ + 3)) != 0) return e;
    return prepare_nt<H, 64, MACKO_TILES_KG>(abuf, max_smem_optin, occ + 4);
}

template <typename H> int prepare_wide(int abuf, int max_smem_optin, int *occ)
{
    int e;
    if ((e = prepare_nt<H, 8, MACKO_TILES_KG_WIDE>(abuf, max_smem_optin, occ + 0)) != 0) return e;
    if ((e = prepare_nt<H, 16, MACKO_TILES_KG_WIDE>(abuf, max_smem_optin, occ + 1)) != 0) return e;
    if ((e = prepare_nt<H, 24, MACKO_TILES_KG_WIDE>(abuf, max_smem_optin, occ + 2)) != 0) return e;
    return prepare_nt<H, 32, MACKO_TILES_KG_WIDE>(abuf, max_smem_optin, occ + 3);
}

} // namespace

extern "C" int macko_tiles_ntile(int64_t n) { return n <= 8 ? 8 : n <= 16 ? 16 : n <= 24 ? 24 : n <= 32 ? 32 : 64; }
extern "C" int macko_tiles_ntile_index(int64_t n) { return n <= 8 ? 0 : n <= 16 ? 1 : n <= 24 ? 2 : n <= 32 ? 3 : 4; }

extern "C" size_t macko_tiles_smem(int nt, int kg, int abuf)
{
    return (size_t)fixed_smem(nt, kg) + (size_t)kW * kStages * ((size_t)abuf + kSlack);
}

extern "C" int64_t macko_tiles_ws_floats(int64_t rows, int64_t n, int splits)
{
    if (splits <= 1)
        return 0;
    const int64_t nt = macko_tiles_ntile(n);
    return ((rows + MACKO_TILES_ROWS - 1) / MACKO_TILES_ROWS) * ((n + nt - 1) / nt) * splits * MACKO_TILES_ROWS * nt;
}

extern "C" int64_t macko_tiles_counters(int64_t rows, int64_t n, int splits)
{
    if (splits <= 1)
        return 0;
    const int64_t nt = macko_tiles_ntile(n);
    return ((rows + MACKO_TILES_ROWS - 1) / MACKO_TILES_ROWS) * ((n + nt - 1) / nt);
}

extern "C" int macko_tiles_prepare(int bf16, int abuf, int max_smem_optin, int occ[MACKO_TILES_NTILES])
{
    return bf16 ? prepare<__nv_bfloat16>(abuf, max_smem_optin, occ) : prepare<__half>(abuf, max_smem_optin, occ);
}

extern "C" int macko_tiles_prepare_wide(int bf16, int abuf, int max_smem_optin, int occ[MACKO_TILES_WIDE_NT])
{
    return bf16 ? prepare_wide<__nv_bfloat16>(abuf, max_smem_optin, occ)
                : prepare_wide<__half>(abuf, max_smem_optin, occ);
}

extern "C" int macko_tiles_decode_dense(int bf16, const void *stream, const uint32_t *offs, int64_t tcols, int64_t row0,
                                        int64_t prow, void *panel, int64_t ldp, macko_stream_t st)
{
    const int64_t bands = (prow + 15) / 16, warps = bands * tcols;
    if (warps == 0)
        return 0;
    const unsigned blocks = (unsigned)((warps + 7) / 8);
    const uint4 *s4 = static_cast<const uint4 *>(stream);
    if (bf16)
        tiles_dense_kernel<__nv_bfloat16><<<blocks, 256, 0, (cudaStream_t)st>>>(
            s4, offs, (int)tcols, (int)(row0 / 16), (int)bands, (int)prow, static_cast<__nv_bfloat16 *>(panel), (int)ldp);
    else
        tiles_dense_kernel<__half><<<blocks, 256, 0, (cudaStream_t)st>>>(s4, offs, (int)tcols, (int)(row0 / 16), (int)bands,
                                                                         (int)prow, static_cast<__half *>(panel), (int)ldp);
    return (int)cudaGetLastError();
}

extern "C" int macko_tiles_spmm(const macko_tiles_args *a)
{
    return a->bf16 ? launch<__nv_bfloat16>(a) : launch<__half>(a);
}
