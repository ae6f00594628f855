/* The tile layout's fused tensor-core SpMM on Hopper (wgmma, sm_90a only): C = alpha * M * B + beta * C for a matrix
 * M held in the tile layout (lapack_style_docs/FORMAT.md, "Tile layout"), B and C of M's 16-bit type, fp32
 * accumulation. Unlike the panel path (spmm_panel.cu, spmm_panel_wg.cu) nothing dense is written to memory: the
 * records go from the stream into shared memory as they are, and each warp expands its band's records straight into
 * the A fragments of wgmma.
 *
 * This file is compiled for sm_90a in place of sm_90 (CMakeLists.txt); for every other architecture the kernel body
 * is empty and the plan never takes it (src/tiles_device.c: only where the panel GEMM is wgmma).
 *
 * One block computes a 128 x BN tile of C (BN = 64, 128 or 256: WgCfg below) over a range of K-slices of 64 columns:
 *   - warp 8 (the producer; for BN >= 128 warpgroup 2 gives its registers to the consumers with setmaxnreg) reads the
 *     record offsets of the slice's 8 bands x 4 tiles (cp.async, 7 slices ahead), writes where each record will lie
 *     in the stage, and has the bulk-copy engine bring the 8 bands' records (one contiguous run of the stream per
 *     band: a band's tiles are stored left to right) and, by a tensor map, the slice's 64 x BN piece of B (128-byte
 *     swizzle; a last column block narrower than BN: only its columns, rounded up to 8, by a second map) into one of
 *     4 stages; all of it completes on the stage's "full" mbarrier;
 *   - warpgroups 0 and 1 (the consumers): warp w of warpgroup g owns band 4g + w. Per slice it loads its 4 records'
 *     bitmaps and counts, gathers each lane's 8 values of a record with one popcount per value pair (the four
 *     subtiles of a record are the four registers of an A fragment, in order), and issues four
 *     wgmma.m64nBNk16 with A from registers and B from the stage; the next slice's bitmaps are loaded while the
 *     group runs, and the stage goes back to the producer ("empty") once the group has completed.
 * The stage's raw area holds the worst case (8 bands x 4 full records, 17920 bytes).
 *
 * Split K (grid.y = splits; macko_tiles_wg_splits): a block writes its fp32 tile from its accumulators to the
 * workspace; the last block of a tile to arrive (a counter, reset by it) sums the partial tiles in split order into its
 * accumulators (its own from its registers) and writes C as for a whole tile, so results do not depend on the order of
 * arrival (as stream-K's parts below); at width 64 with n <= 32 (the NARROW instance) only the float4s of the tile's
 * first 32 columns are written and summed. Widths 128 and 256 run a launch's splits as thread-block clusters instead
 * (w.cl = gridDim.y <= 8, cluster dims (1, splits, 1); where the device holds all of the launch's clusters at once,
 * macko_tiles_wg_cluster_caps at upload): each block keeps its fp32 tile in its shared memory, and after a cluster
 * barrier block z writes its share of the tile's columns, summing the splits' tiles in split order from zero through
 * distributed shared memory (the workspace's sum, the same bits; no workspace, no counter, and the sum spread over the
 * cluster's blocks instead of the last one: bench/NOTES.md, session 42). Where a tile's splits do not fit one cluster
 * (the 32 tiles of 4096 rows in 4 splits: the H100 holds 30 clusters of 4, 66 of 2) and they are even, they run as
 * pairs: clusters of 2 (w.cl = 2) whose blocks each sum their pair's columns as above into the workspace (slot tile x
 * pair), and the last pair to arrive at a column share (a counter per tile and rank) sums the pairs in order from zero
 * and writes C (other bits than the workspace's sequential sum; bitwise reproducible).
 * Stream-K (widths 128 and 256; macko_tiles_args.stream_blocks = G, macko_tiles_wg_stream; the template instance
 * SK = true): the grid is G blocks (one wave) and block b takes the K-slices [b I / G, (b + 1) I / G) of the
 * I = tiles x nk slices in tile order. A block computes the part of each tile its range holds (a "unit"); a tile it
 * holds whole it writes as above, a part of one goes from its accumulators to the workspace (slot 2b for the tile its
 * range starts in, 2b + 1 for the one it ends in; in the accumulators' order, not through shared memory), and the last
 * of the tile's blocks to arrive sums the parts in block order into its accumulators (its own part from its
 * registers; eight 16-byte loads in flight per thread) and writes C as for a whole tile. Between units the
 * producer waits (mbarrier "epi") until the consumers' epilogue has left the ring, which holds the C tile. Where one
 * block per tile and split would leave much of a wave idle (12288^2 at n = 128: 96 tiles on 132 SMs), the SMs finish
 * together. An element whose sum is NaN (a zero of the tile times an Inf of B) is recomputed exactly
 * over the row's stored nonzeros, as in the panel GEMMs. No allocation; bitwise reproducible and graph-capturable
 * (the tensor map is a kernel parameter). */
#include "spmm_panel.cuh"
#include "spmm_tiles.h"
#include "tiles_decode.cuh"
#include "wgmma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int kBM = 128, kBK = 64;
constexpr uint32_t kFullRec = 35 * 16;                  /* a record of 256 nonzeros: 40 + 512 bytes, 35 words */
constexpr uint32_t kRaw = 8 * 4 * kFullRec;             /* 17920 bytes: the records of 8 bands x 4 tiles at most */
constexpr uint32_t kTab = 32 * 4;                       /* each record's word offset in the raw area */
constexpr int kOffRing = 8;       /* slices of record offsets the producer has in flight */
constexpr int kCStride = kBM + 4; /* floats between columns of the epilogue's C tile in shared memory */
constexpr int kGroupM = 8;        /* block raster: 8 row blocks share each column block's turn (L2 reuse) */
/* Split K in clusters (widths 128 and 256): at most 8 blocks along K (the portable cluster size). Width 64 keeps the
 * workspace: its 96 registers a thread spilled with the clusters' sum in its epilogue, and the device holds fewer
 * clusters than the rule's splits need where it takes many (H100: 30 clusters of 8 for 32 tiles of 4096 rows). */
constexpr int kMaxCluster = 8;

/* The three widths of the C tile. Warpgroups 0 and 1 are the consumers, warp 8 the producer.
 * BN = 256 (n > 128) and 128: one block of 384 threads per SM, 4 stages; warpgroup 2 (the producer's) gives its
 * registers to the consumers (setmaxnreg 40 / 232). BN = 128 halves the MMA per slice for the same decode; two blocks
 * of it per SM would need at most 112 registers a thread, and it spills there.
 * BN = 64: a quarter of the MMA per slice, and two blocks of 288 threads (no warps besides the producer) per SM, so
 * that one block's decode runs beside the other's MMA (a consumer's decode sits in line with its own wgmma group, and
 * with one block per SM the warps mostly wait: ncu, 12288^2 n = 64, 2.2 warps per scheduler, 50 % of cycles without an
 * eligible warp). The 18 warps of two blocks put 5 on some SM sub-partition, whose 16384 registers then allow 96 a
 * thread (not 112), and the two blocks' 214 KiB of shared memory need the largest carveout. */
template <int BN> struct WgCfg;
template <> struct WgCfg<256> {
    static constexpr int stages = 4, blocks = 1, threads = 384, maxreg = 168, creg = 232, preg = 40;
};
template <> struct WgCfg<128> {
    static constexpr int stages = 4, blocks = 1, threads = 384, maxreg = 168, creg = 232, preg = 40;
};
template <> struct WgCfg<64> {
    static constexpr int stages = 4, blocks = 2, threads = 288, maxreg = 96, creg = 0, preg = 0;
};
template <int BN> struct WgShape {
    static constexpr int kStages = WgCfg<BN>::stages;
    static constexpr uint32_t kStageB = BN * kBK * 2;                               /* B's piece: 8-32 KiB */
    static constexpr uint32_t kStage = (kStageB + kRaw + kTab + 1023u) & ~1023u;    /* B stays 1024-aligned */
    static constexpr size_t kSmem = 1024 + (size_t)kStages * kStage + 2 * kStages * 8 + kOffRing * 256 + 16;
    static_assert((size_t)kCStride * BN * 4 <= (size_t)kStages * kStage, "the C tile fits the ring");
    static_assert(WgCfg<BN>::blocks * (kSmem + 1024) <= 228 * 1024, "the blocks fit one SM's shared memory");
};

template <typename H> struct WgParams {
    PanelParams<H> p;    /* rows, cols, tstream, toffs, tcols, b, ldb, c, ldc, n, scalars; row0 = 0, prow = rows */
    int bands, mbn, nbn; /* bands of 16 rows, blocks along rows and along n */
    int nk, sps;         /* K-slices of 64 columns, and slices per split */
    int group;           /* row blocks per group of the raster (kGroupM) */
    int sk;              /* 1: stream-K (gridDim.x blocks share the tiles x nk slices evenly, each at least one) */
    int tiles;           /* mbn * nbn */
    int tile0;           /* without stream-K: block x computes tile tile0 + x (a tail launch: the tiles past the last
                            full wave); its slots and counters count from tile0 */
    float *ws;           /* partial tiles of kBM x BN floats (each thread's accumulators, float4 q of thread i at
                            4 (256 q + i)); split K: slot = tile * gridDim.y + split; stream-K: 2 per
                            block (slot 2b for the tile its range starts in, 2b + 1 for the one it ends in) */
    int *counters;       /* partial tiles: one per tile, zero between calls */
    int boxl;            /* > 0: the columns of B the last column block's box holds (tm_bl): n's remainder rounded up
                            to 8, where it is less than BN */
    int cl;              /* without stream-K, gridDim.y > 1: 1 the splits meet in the workspace; > 1 the launch's
                            clusters (1, cl, 1), which sum through distributed shared memory: cl = gridDim.y (a tile's
                            splits), or 2 (pairs of them, whose sums meet in the workspace) */
};

/* Tile t of the grouped raster over (row block, column block): kGroupM row blocks share each column block's turn. */
template <typename H> __device__ __forceinline__ void wg_tile_rc(const WgParams<H> &w, int t, int &mb, int &nb)
{
    const int per = w.group * w.nbn, g = t / per, first = g * w.group;
    const int gsz = w.mbn - first < w.group ? w.mbn - first : w.group;
    mb = first + (t % per) % gsz;
    nb = (t % per) / gsz;
}

/* SK: the stream-K instance (w.sk set by the launch; widths 128 and 256); the other runs one block per tile and split
 * with the loops of a single tile (its code as before stream-K came: bench/NOTES.md, session 14). NARROW (width 64,
 * not stream-K; the launch's C has at most 32 columns): split K writes and sums only the tile's first 32 columns, the
 * float4s of the accumulators that hold columns of C (a separate instance, since a test of n in the other one cost
 * n = 40-64 1-2 % there: bench/NOTES.md, sessions 41-43). */
template <typename H, int BN, bool SK, bool NARROW = false>
__global__ void __launch_bounds__(WgCfg<BN>::threads) __maxnreg__(WgCfg<BN>::maxreg)
    tiles_wg_kernel(const __grid_constant__ CUtensorMap tm_b, const __grid_constant__ CUtensorMap tm_bl,
                    const WgParams<H> w)
{
#if MACKO_WG_DEVICE
    constexpr int kStages = WgShape<BN>::kStages;
    constexpr uint32_t kStageB = WgShape<BN>::kStageB, kStage = WgShape<BN>::kStage;
    extern __shared__ __align__(16) unsigned char wg_smem[];
    const PanelParams<H> &p = w.p;
    const uint32_t raw0 = smem_addr(wg_smem);
    const uint32_t base = (raw0 + 1023u) & ~1023u, bars = base + kStages * kStage;
    /* stage s at base + s*kStage: B (kStageB), the raw records (kRaw), the table (kTab) */
    auto stB = [&](int s) { return base + s * kStage; };
    auto stR = [&](int s) { return base + s * kStage + kStageB; };
    auto stT = [&](int s) { return base + s * kStage + kStageB + kRaw; };
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (kStages + s); };
    const uint32_t epi = bars + 2 * kStages * 8 + kOffRing * 256; /* stream-K: the consumers' epilogue is done */

    /* This block's slices: a range [it0, it1) of the tiles x nk slices taken tile by tile (a "unit" is the part of the
     * range in one tile). One block per tile and split (grid.y), or stream-K: block b takes
     * [b I / G, (b + 1) I / G). */
    const int nk = w.nk;
    constexpr bool sk = SK;
    static_assert(!SK || BN != 64, "stream-K for widths 128 and 256 (width 64 has no registers to spare: 96 a thread)");
    static_assert(!NARROW || (BN == 64 && !SK), "the narrow instance: width 64, one block per tile and split");
    const int64_t iters = (int64_t)w.tiles * nk, nblk = gridDim.x;
    int64_t it0, it1;
    if (sk) {
        it0 = blockIdx.x * iters / nblk;
        it1 = (blockIdx.x + 1) * iters / nblk;
    } else {
        const int64_t tb = (int64_t)(w.tile0 + (int)blockIdx.x) * nk;
        const int k0 = blockIdx.y * w.sps, k1 = k0 + w.sps < nk ? k0 + w.sps : nk;
        it0 = tb + k0;
        it1 = tb + k1;
    }
    auto tile_of = [&](int64_t it) { return sk ? (int)(it / nk) : w.tile0 + (int)blockIdx.x; };
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    if (alpha == 0.0f) { /* C = beta * C, once per element: by the block whose range holds the tile's first slice */
        const int tx = w.tile0 + (int)blockIdx.x;
        const int tf = sk ? (int)((it0 + nk - 1) / nk) : (blockIdx.y == 0 ? tx : 1);
        const int te = sk ? (int)((it1 + nk - 1) / nk) : (blockIdx.y == 0 ? tx + 1 : 0);
        for (int t = tf; t < te; t++) {
            int mb, nb;
            wg_tile_rc(w, t, mb, nb);
            panel_scale_c(p, beta, mb * kBM, nb * BN, kBM, BN);
        }
        return;
    }
    if (tid == 0) {
        for (int s = 0; s < kStages; s++) {
            mbar_init(full(s), 32); /* the producer warp's lanes (+ the copies' bytes) */
            mbar_init(empty(s), 256);
        }
        mbar_init(epi, 256);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (warp >= 8) { /* the producer warp 8 (BN = 256: its warpgroup's registers go to the consumers) */
        if constexpr (WgCfg<BN>::preg > 0)
            asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(WgCfg<BN>::preg) : "memory");
        if (warp != 8)
            return;
        /* The record offsets arrive through a ring of kOffRing slots in shared memory (cp.async, one group per slice,
         * issued kOffRing - 1 slices ahead): lane l holds the start and end of tile l & 3 of band l >> 2. */
        const int bl = lane >> 2, tl = lane & 3;
        const uint32_t ring = bars + 2 * kStages * 8;
        /* slice j's offsets (row block mb) into ring slot q: zeros where there is no tile */
        auto fetch = [&](int q, int mb, int j, bool in_range) {
            const int gband = mb * 8 + bl, tc = 4 * j + tl;
            const bool v = in_range && gband < w.bands && tc < p.tcols;
            const uint32_t *src = v ? p.toffs + ((int64_t)gband * p.tcols + tc) : p.toffs;
            const uint32_t dst = ring + q * 256 + 8 * lane;
            const int n = v ? 4 : 0;
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst + 4), "l"(src + 1), "r"(n)
                         : "memory");
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        };
        /* the i-th slice of the range (K-slice j, column block nb) into stage i % kStages, once the stage is empty */
        auto issue = [&](int i, int j, int nb) {
            const int s = i % kStages;
            asm volatile("cp.async.wait_group %0;\n" ::"n"(kOffRing - 1) : "memory");
            const uint32_t slot = ring + (i % kOffRing) * 256 + 8 * lane;
            const uint32_t st = lds32(slot), en = lds32(slot + 4);
            if (i >= kStages) /* every lane: each rewrites a table word the consumers read */
                mbar_wait(empty(s), (uint32_t)((i / kStages - 1) & 1));
            const uint32_t len = en - st;
            uint32_t inc = len;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                const uint32_t v = __shfl_up_sync(0xffffffffu, inc, d);
                if (lane >= d)
                    inc += v;
            }
            const uint32_t excl = inc - len, total = __shfl_sync(0xffffffffu, inc, 31);
            const uint32_t band_end = __shfl_sync(0xffffffffu, inc, 4 * bl + 3);
            asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(stT(s) + 4 * lane), "r"(excl) : "memory");
            /* B's piece: the last column block of a partial width brings only its columns (boxl) by its own map; the
             * rest of the stage keeps what it held and meets only accumulator columns past n, never stored (as in
             * nm_sp24_wg.cu: a box mostly past n costs about the time of a full one) */
            const bool narrow = w.boxl > 0 && nb == w.nbn - 1;
            /* every lane releases its table word through its own arrival; lane 0's also announces the bytes */
            if (lane == 0)
                mbar_arrive_tx(full(s), total * 16u + (narrow ? (uint32_t)w.boxl * (kBK * 2) : kStageB));
            else
                mbar_arrive(full(s));
            __syncwarp();
            if (tl == 0 && band_end > excl)
                bulk_load(stR(s) + excl * 16u, p.tstream + st, (band_end - excl) * 16u, full(s));
            if (lane == 0)
                tma_load_2d(stB(s), narrow ? &tm_bl : &tm_b, j * kBK, nb * BN, full(s));
        };
        if constexpr (!SK) { /* one tile: K-slices k0 .. k1 - 1 */
            int mb, nb;
            const int tx = w.tile0 + (int)blockIdx.x;
            wg_tile_rc(w, tx, mb, nb);
            const int k0 = (int)(it0 - (int64_t)tx * nk), k1 = (int)(it1 - (int64_t)tx * nk);
            for (int d = 0; d < kOffRing - 1; d++)
                fetch(d, mb, k0 + d, k0 + d < k1);
            for (int j = k0; j < k1; j++) {
                const int i = j - k0;
                fetch((i + kOffRing - 1) % kOffRing, mb, j + kOffRing - 1, j + kOffRing - 1 < k1);
                issue(i, j, nb);
            }
        } else {
            /* Two cursors over the range (tile, K-slice, row block, column block), stepped slice by slice (no
             * division per slice): the slice whose offsets are fetched, kOffRing - 1 ahead, and the slice issued. */
            struct Cur {
                int t, j, mb, nb;
            };
            const int tfirst = tile_of(it0);
            Cur cf = {tfirst, (int)(it0 - (int64_t)tfirst * nk), 0, 0};
            wg_tile_rc(w, cf.t, cf.mb, cf.nb);
            Cur cm = cf;
            auto step = [&](Cur &c) {
                if (++c.j == nk) {
                    c.j = 0;
                    if (++c.t < w.tiles)
                        wg_tile_rc(w, c.t, c.mb, c.nb);
                }
            };
            const int n_it = (int)(it1 - it0);
            int nf = 0; /* slices fetched */
            auto fetch_next = [&]() {
                fetch(nf % kOffRing, cf.mb, cf.j, nf < n_it);
                if (nf < n_it)
                    step(cf);
                nf++;
            };
            for (int d = 0; d < kOffRing - 1; d++)
                fetch_next();
            int units = 0;
            for (int i = 0; i < n_it; i++, step(cm)) {
                if (cm.j == 0 && i > 0) /* a new unit: the consumers' epilogue of the last one used the ring */
                    mbar_wait(epi, (uint32_t)(units++ & 1));
                fetch_next();
                issue(i, cm.j, cm.nb);
            }
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        return;
    }

    /* The consumers: warp cwarp of warpgroup cw owns band 4*cw + cwarp of the block (rows 16 of 128) and, per slice,
     * decodes its band's 4 records from the stage straight into the A fragments of wgmma (the subtiles of a record
     * are the fragment's four registers, in order; one popcount per value pair), then multiplies them by the
     * stage's B: four wgmma.m64nBNk16 with A from registers, completed before the fragments are redefined
     * (registers an outstanding wgmma reads may not be written: ptxas would serialize the instructions); the next
     * slice's record headers are loaded while the group runs. */
    if constexpr (WgCfg<BN>::creg > 0)
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(WgCfg<BN>::creg) : "memory");
    const int cw = tid >> 7, cwarp = warp & 3, gq = lane >> 2, tq = lane & 3, hs = gq >> 2;
    const int sh = (8 * gq + 2 * tq) & 31, bl = 4 * cw + cwarp;
    const uint32_t lift = 1u << (30 - sh);
    /* the slot of a partial tile: split K by (tile, split); stream-K by (block, the tile its range starts in or not) */
    auto slot_of = [&](int t, int64_t b) {
        if (!sk)
            return (int64_t)(t - w.tile0) * gridDim.y + b;
        return 2 * b + (t == (int)(b * iters / nblk / nk) ? 0 : 1);
    };
    auto owner = [&](int64_t it) { return ((it + 1) * nblk - 1) / iters; }; /* stream-K: the block of slice it */
    int64_t u = it0;
    do { /* the units of the range (one at least, so that a matrix without K-slices still scales C) */
        const int t = tile_of(u);
        const int64_t tb = (int64_t)t * nk, ue = it1 < tb + nk ? it1 : tb + nk;
        int mb, nb;
        wg_tile_rc(w, t, mb, nb);
        const int m0 = mb * kBM, n0 = nb * BN;
        const bool band_ok = mb * 8 + bl < w.bands;
        float d[BN / 2];
#pragma unroll
        for (int x = 0; x < BN / 2; x++)
            d[x] = 0.0f;
        /* A slice in two steps: head() waits for its stage and loads the 4 records' bitmaps and counts (issued while
         * the previous slice's group runs: none of these registers is a wgmma operand); the loop then gathers the
         * values into the fragments once that group has completed. */
        uint32_t rec[4], wd[4][4], cnt[4];
        auto head = [&](int i, int j) { /* ring index i, K-slice j of the tile */
            const int s = i % kStages;
            mbar_wait(full(s), (uint32_t)((i / kStages) & 1));
            const uint32_t r0 = stR(s), t0 = stT(s);
#pragma unroll
            for (int tl = 0; tl < 4; tl++) {
                const bool ok = band_ok && 4 * j + tl < p.tcols;
                rec[tl] = ok ? r0 + 16u * lds32(t0 + 4 * (4 * bl + tl)) : r0; /* r0: read, dropped (no bits) */
                wd[tl][0] = wd[tl][1] = wd[tl][2] = wd[tl][3] = cnt[tl] = 0u;
                if (ok) {
                    lds128(wd[tl], rec[tl] + 16 * hs);
                    cnt[tl] = lds32(rec[tl] + 32 + 4 * hs);
                }
            }
        };
        uint32_t a[4][4];
        const int i0 = (int)(u - it0), j0 = (int)(u - tb), ns = (int)(ue - u);
        if (ns > 0)
            head(i0, j0);
        for (int x = 0; x < ns; x++) {
            const int s = (i0 + x) % kStages;
#pragma unroll
            for (int tl = 0; tl < 4; tl++)
#pragma unroll
                for (int q = 0; q < 4; q++) /* tiles_decode.cuh */
                    a[tl][q] = tiles_a_reg<false>(rec[tl], wd[tl][q], lift, cnt[tl], q);
            wg_fence_acc(d);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
            const uint32_t b0 = stB(s);
#pragma unroll
            for (int tl = 0; tl < 4; tl++)
                wgmma_rs<H>(d, a[tl], wg_desc(b0 + 32 * tl));
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            wg_fence_acc(d);
            if (x + 1 < ns)
                head(i0 + x + 1, j0 + x + 1);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            wg_fence_acc(d);
#pragma unroll
            for (int tl = 0; tl < 4; tl++)
                wg_fence_regs(a[tl]); /* the group is complete: its fragments may go */
            mbar_arrive(empty(s));
        }

        /* Epilogue through shared memory (the ring is free: the producer waits for this unit's end before it loads
         * the next unit; wgmma.cuh's two halves): C is written in pieces of 8 rows of one column, 16-byte accesses
         * where C allows them. */
        float *ct = reinterpret_cast<float *>(wg_smem + (base - raw0));
        const bool vec = (p.ldc & 7) == 0 && (reinterpret_cast<uintptr_t>(p.c) & 15) == 0;
        auto exact = [&](int64_t r, int64_t j) { return panel_row_dot(p, (int)r, j); };
        const bool whole = sk ? (u == tb && ue == tb + nk) : gridDim.y == 1;
        const bool in_cluster = BN != 64 && !sk && !whole && w.cl > 1; /* width 64: the workspace (kMaxCluster) */
        /* C = alpha * d + beta * C through the C tile in shared memory. Split K in clusters (in_cluster; rank r =
         * blockIdx.y % C of C = w.cl blocks, group g = blockIdx.y / C of G): after a cluster barrier block r takes C's
         * columns [r c / C, (r + 1) c / C) of the tile's c columns, summing the C blocks' tiles in rank (split) order
         * from zero through distributed shared memory. One group (G = 1): it writes C with those sums (the
         * workspace's order and start below: the same bits), and a second barrier keeps every block until the others
         * have read its tile. Pairs (C = 2, G > 1): it writes the sums to the group's slot of the workspace; the last
         * group at each column share (a counter per tile and rank) sums the groups in order from zero and writes C.
         * One inlined store for every case (width 64 has 96 registers a thread). */
        __shared__ int last;
        auto store_from_regs = [&]() {
            asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* every consumer is past its last stage: the ring is free */
            wg_acc_to_smem<kCStride>(ct, d, cw * 64 + 16 * cwarp + gq, lane);
            if (in_cluster)
                cluster_sync();
            else
                asm volatile("bar.sync 1, 256;\n" ::: "memory");
            /* C blocks of a cluster (rank r) in G groups along K (g; G > 1: the groups meet in the workspace) */
            const int C = in_cluster ? w.cl : 1, r = in_cluster ? (int)blockIdx.y % C : 0;
            const int G = in_cluster ? (int)gridDim.y / C : 1, g = in_cluster ? (int)blockIdx.y / C : 0;
            const int nc = p.n - n0 < BN ? p.n - n0 : BN, c_lo = r * nc / C, c_hi = (r + 1) * nc / C;
            const uint32_t cts = smem_addr(ct);
            /* the cluster's C tiles summed in rank order from zero, 8 rows of column c_lo + cl */
            auto cluster_sum = [&](int ch, int cl, float(&v)[8]) {
                cluster_sum8<kMaxCluster>(cts + 4u * (uint32_t)((c_lo + cl) * kCStride + 8 * ch), C, v);
            };
            /* groups: slot (tile, group) of kBM x BN floats, column-major */
            float *gslot = w.ws + ((int64_t)(t - w.tile0) * G) * (kBM * BN);
            bool store = true;
            if (G > 1) {
                for (int x = tid; x < (kBM / 8) * (c_hi - c_lo); x += 256) {
                    const int ch = x % (kBM / 8), cl = x / (kBM / 8);
                    float v[8];
                    cluster_sum(ch, cl, v);
                    float4 *q = reinterpret_cast<float4 *>(gslot + (int64_t)g * (kBM * BN) + (c_lo + cl) * kBM + 8 * ch);
                    __stcg(q, make_float4(v[0], v[1], v[2], v[3]));
                    __stcg(q + 1, make_float4(v[4], v[5], v[6], v[7]));
                }
                cluster_sync(); /* the cluster's tiles are read: its blocks may go */
                __threadfence();
                asm volatile("bar.sync 1, 256;\n" ::: "memory");
                if (tid == 0)
                    last = atomicAdd(w.counters + (t - w.tile0) * C + r, 1) == G - 1;
                asm volatile("bar.sync 1, 256;\n" ::: "memory");
                store = last;
                if (store)
                    __threadfence();
            }
            if (store)
                wg_store_tile<H, kBM, BN>(
                    tid, 256, m0, n0 + c_lo, p.rows, n0 + c_hi, p.c, 1, p.ldc, vec, alpha, beta,
                    [&](int ch, int cl, float(&v)[8]) {
                        if (C == 1) {
                            wg_smem_load8<kCStride>(cts, ch, cl, v);
                        } else if (G == 1) {
                            cluster_sum(ch, cl, v);
                        } else { /* the groups' sums in group order from zero */
#pragma unroll
                            for (int i = 0; i < 8; i++)
                                v[i] = 0.0f;
                            for (int gg = 0; gg < G; gg++) {
                                const float4 *q = reinterpret_cast<const float4 *>(
                                    gslot + (int64_t)gg * (kBM * BN) + (c_lo + cl) * kBM + 8 * ch);
                                add8(v, __ldcg(q), __ldcg(q + 1));
                            }
                        }
                    },
                    exact);
            if (G > 1 && store && tid == 0)
                *(w.counters + (t - w.tile0) * C + r) = 0; /* for the next call on the stream */
            if (in_cluster && G == 1)
                cluster_sync(); /* no block leaves while another may still read its tile */
        };
        if (whole || in_cluster) {
            store_from_regs();
        } else {
            /* A part of a tile: split K's (the tile's splits, in split order) or stream-K's (the blocks whose ranges
             * meet the tile, in block order). This block's partial goes to the workspace straight from the
             * accumulators (float4 q of thread tid at 4 (256 q + tid): coalesced, no pass through shared memory).
             * The last part of the tile to arrive sums the parts in order from the first, its own from its registers
             * (the same values, not read back), kFly 16-byte loads in flight per thread and part, into its
             * accumulators, and writes C as for a whole tile: the same bits whichever part arrives last. */
            int64_t me = blockIdx.y, c0 = 0, nc = gridDim.y; /* parts c0 .. c0 + nc - 1; this block's is me */
            int *ctr = w.counters + (t - w.tile0);
            if (sk) {
                me = blockIdx.x, c0 = owner(tb), nc = owner(tb + nk - 1) - c0 + 1;
                ctr = w.counters + t;
            }
            constexpr int kFly = BN == 64 ? 4 : 8; /* width 64: 96 registers a thread */
            /* float4 q holds columns 8 q .. 8 q + 7 of the tile (wgmma's accumulator layout); NARROW: those below 32 */
            constexpr int kQ = NARROW ? 32 / 8 : BN / 8;
            static_assert(kQ % kFly == 0, "whole groups of kFly float4s");
            float4 *mine = reinterpret_cast<float4 *>(w.ws + slot_of(t, me) * (kBM * BN)) + tid;
#pragma unroll
            for (int q = 0; q < kQ; q++)
                __stcg(mine + 256 * q, make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]));
            __threadfence();
            asm volatile("bar.sync 1, 256;\n" ::: "memory");
            if (tid == 0)
                last = atomicAdd(ctr, 1) == (int)nc - 1;
            asm volatile("bar.sync 1, 256;\n" ::: "memory");
            if (last) {
                __threadfence();
#pragma unroll
                for (int q0 = 0; q0 < kQ; q0 += kFly) {
                    float4 acc[kFly];
#pragma unroll
                    for (int k = 0; k < kFly; k++)
                        acc[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 1
                    for (int64_t z = 0; z < nc; z++) {
                        float4 v4[kFly];
                        if (c0 + z == me) {
#pragma unroll
                            for (int k = 0; k < kFly; k++)
                                v4[k] = make_float4(d[4 * (q0 + k)], d[4 * (q0 + k) + 1], d[4 * (q0 + k) + 2],
                                                    d[4 * (q0 + k) + 3]);
                        } else {
                            const float4 *q =
                                reinterpret_cast<const float4 *>(w.ws + slot_of(t, c0 + z) * (kBM * BN)) + tid;
#pragma unroll
                            for (int k = 0; k < kFly; k++)
                                v4[k] = __ldcg(q + 256 * (q0 + k));
                        }
#pragma unroll
                        for (int k = 0; k < kFly; k++) {
                            acc[k].x += v4[k].x, acc[k].y += v4[k].y;
                            acc[k].z += v4[k].z, acc[k].w += v4[k].w;
                        }
                    }
#pragma unroll
                    for (int k = 0; k < kFly; k++) {
                        d[4 * (q0 + k)] = acc[k].x, d[4 * (q0 + k) + 1] = acc[k].y;
                        d[4 * (q0 + k) + 2] = acc[k].z, d[4 * (q0 + k) + 3] = acc[k].w;
                    }
                }
                store_from_regs();
                if (tid == 0)
                    *ctr = 0; /* for the next call on the stream */
            }
        }
        u = ue;
        if (sk && u < it1) { /* the ring back to the producer for the next unit (generic writes before async ones) */
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            mbar_arrive(epi);
        }
    } while (sk && u < it1); /* one unit without stream-K */
#else
    (void)tm_b;
    (void)tm_bl;
    (void)w;
    (void)WgCfg<BN>::creg; /* the register split is sm_90a code only */
    (void)WgCfg<BN>::preg;
#endif
}

template <typename H, int BN, bool SK, bool NARROW = false> int wg_prepare_kernel()
{
    cudaError_t e = cudaFuncSetAttribute(tiles_wg_kernel<H, BN, SK, NARROW>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)WgShape<BN>::kSmem);
    if (e == cudaSuccess && WgCfg<BN>::blocks > 1)
        e = cudaFuncSetAttribute(tiles_wg_kernel<H, BN, SK, NARROW>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 (int)cudaSharedmemCarveoutMaxShared);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return (int)e;
}

template <typename H, int BN> int wg_prepare_one()
{
    int e = wg_prepare_kernel<H, BN, false>();
    if constexpr (BN != 64) {
        if (e == 0)
            e = wg_prepare_kernel<H, BN, true>();
    } else if (e == 0) {
        e = wg_prepare_kernel<H, BN, false, true>();
    }
    return e;
}

template <typename H> int wg_prepare()
{
    int e = wg_prepare_one<H, 256>();
    if (e == 0)
        e = wg_prepare_one<H, 128>();
    if (e == 0)
        e = wg_prepare_one<H, 64>();
    (void)encoder();
    return e;
}

template <typename H, int BN> int wg_launch(const macko_tiles_args *a)
{
    WgParams<H> w;
    PanelParams<H> &p = w.p;
    p.rows = (int)a->k.rows;
    p.cols = (int)a->k.cols;
    p.values = nullptr;
    p.dwords = nullptr;
    p.row_ptr = nullptr;
    p.tstream = static_cast<const uint4 *>(a->stream);
    p.toffs = a->offs;
    p.tcols = (int)a->tcols;
    p.panel = nullptr;
    p.ldp = 0;
    p.row0 = 0;
    p.prow = p.rows;
    p.ldb = a->k.ldb;
    p.ldc = a->k.ldc;
    p.alpha_dev = a->k.alpha_dev;
    p.beta_dev = a->k.beta_dev;
    p.alpha = a->k.alpha;
    p.beta = a->k.beta;
    w.bands = (int)a->bands;
    w.mbn = (int)((a->k.rows + kBM - 1) / kBM);
    w.nk = (int)((a->tcols + 3) / 4);
    w.group = kGroupM;
    const int splits = a->splits < 1 ? 1 : a->splits;
    w.sps = (w.nk + splits - 1) / splits;
    const int zs = w.sps > 0 ? (w.nk + w.sps - 1) / w.sps : 1;
    w.ws = a->ws;
    w.counters = a->counters;
    const cudaStream_t st = reinterpret_cast<cudaStream_t>(a->k.stream);
    /* one launch (the stream-K instance where wp.sk: widths 128 and 256); its launch error, 0 without */
    auto launch = [&](dim3 grid, const WgParams<H> &wp, const CUtensorMap &tb, const CUtensorMap &tbl) {
        if constexpr (BN != 64)
            if (wp.sk) {
                tiles_wg_kernel<H, BN, true><<<grid, WgCfg<BN>::threads, WgShape<BN>::kSmem, st>>>(tb, tbl, wp);
                return (int)cudaGetLastError();
            }
        if constexpr (BN == 64)
            if (wp.p.n <= 32) {
                tiles_wg_kernel<H, 64, false, true><<<grid, WgCfg<64>::threads, WgShape<64>::kSmem, st>>>(tb, tbl, wp);
                return (int)cudaGetLastError();
            }
        if (wp.cl > 1)
            return (int)launch_clusters(tiles_wg_kernel<H, BN, false>, grid, dim3(WgCfg<BN>::threads),
                                        WgShape<BN>::kSmem, st, dim3(1u, (unsigned)wp.cl, 1u), tb, tbl, wp);
        tiles_wg_kernel<H, BN, false><<<grid, WgCfg<BN>::threads, WgShape<BN>::kSmem, st>>>(tb, tbl, wp);
        return (int)cudaGetLastError();
    };
    /* split K in clusters for `tiles` tiles of z splits: where z is a cluster size and the device holds the
     * clusters at once (the upload's count, a->wg_ccap; else the splits meet in the workspace) */
    auto cluster_of = [&](int64_t tiles, int z) {
        if (BN == 64 || a->wg_ccap == nullptr || z < 2)
            return 1;
        if (!a->wg_pairs && z <= kMaxCluster && tiles <= a->wg_ccap[z - 2])
            return z; /* a tile's splits in one cluster */
        /* pairs of splits in clusters of 2, the pairs of a tile meeting in the workspace */
        return z % 2 == 0 && z >= 4 && tiles * (z / 2) <= a->wg_ccap[0] ? 2 : 1;
    };
    const int64_t max_n = (int64_t)(0x7FFFFFFF / w.mbn) * BN; /* grid.x < 2^31 */
    for (int64_t j = 0; j < a->k.n; j += max_n) {
        p.b = static_cast<const H *>(a->k.b) + j * a->k.ldb;
        p.c = static_cast<H *>(a->k.c) + j * a->k.ldc;
        p.n = (int)(a->k.n - j < max_n ? a->k.n - j : max_n);
        w.nbn = (p.n + BN - 1) / BN;
        w.tiles = w.mbn * w.nbn;
        /* stream-K (widths 128 and 256) over at most one block per slice (every block takes one at least) */
        const int64_t iters = (int64_t)w.tiles * w.nk;
        const int64_t sk = a->stream_blocks < iters ? a->stream_blocks : iters;
        w.sk = BN != 64 && sk > 0;
        CUtensorMap tb, tbl; /* tbl: the narrower last column block's, read only for it */
        w.boxl = encode_b_maps<H>(&tb, &tbl, p.b, p.cols, p.n, p.ldb, BN, 1);
        if (w.boxl < 0)
            return (int)cudaErrorInvalidValue;
        w.tile0 = 0;
        const dim3 grid(w.sk ? (unsigned)sk : (unsigned)w.tiles, w.sk ? 1u : (unsigned)(zs < 1 ? 1 : zs));
        w.cl = w.sk ? 1 : cluster_of(w.tiles, (int)grid.y);
        /* the tail split: whole tiles up to tail_tile0 in one launch (one block each), the rest split K in a second
         * (one chunk of n only: the split point is the plan's for the whole n) */
        if (!w.sk && a->tail_splits > 1 && p.n == a->k.n && a->tail_tile0 >= 0 && a->tail_tile0 < w.tiles) {
            const int full = (int)a->tail_tile0;
            if (full > 0) {
                WgParams<H> w1 = w;
                w1.sps = w.nk;
                w1.cl = 1;
                if (const int e = launch(dim3((unsigned)full, 1u), w1, tb, tbl))
                    return e;
            }
            WgParams<H> w2 = w;
            w2.tile0 = full;
            w2.sps = (w.nk + a->tail_splits - 1) / a->tail_splits;
            const int z2 = w2.sps > 0 ? (w.nk + w2.sps - 1) / w2.sps : 1;
            w2.cl = cluster_of(w.tiles - full, z2);
            if (const int e = launch(dim3((unsigned)(w.tiles - full), (unsigned)(z2 < 1 ? 1 : z2)), w2, tb, tbl))
                return e;
            continue;
        }
        if (const int e = launch(grid, w, tb, tbl))
            return e;
    }
    return 0;
}

template <typename H> int wg_launch_bn(const macko_tiles_args *a)
{
    switch (a->wg_bn) {
    case 64:
        return wg_launch<H, 64>(a);
    case 128:
        return wg_launch<H, 128>(a);
    default:
        return wg_launch<H, 256>(a);
    }
}

int bn_of(int bn) { return bn == 64 || bn == 128 ? bn : 256; }

/* the C tiles of kBM rows x bn columns, and the blocks of a wave at width bn (bn as bn_of gives it) */
int64_t wg_tiles(int64_t rows, int64_t n, int bn) { return ((rows + kBM - 1) / kBM) * ((n + bn - 1) / bn); }
int64_t wg_wave(int sm_count, int bn) { return (int64_t)sm_count * macko_tiles_wg_blocks_per_sm(bn); }

} // namespace

extern "C" int macko_tiles_wg_prepare(int bf16) { return bf16 ? wg_prepare<__nv_bfloat16>() : wg_prepare<__half>(); }

extern "C" int macko_tiles_wg_ready(void) { return encoder() != nullptr; }

extern "C" int macko_tiles_wg_spmm(const macko_tiles_args *a)
{
    return a->bf16 ? wg_launch_bn<__nv_bfloat16>(a) : wg_launch_bn<__half>(a);
}


extern "C" int macko_tiles_wg_blocks_per_sm(int bn)
{
    switch (bn_of(bn)) {
    case 64:
        return WgCfg<64>::blocks;
    case 128:
        return WgCfg<128>::blocks;
    default:
        return WgCfg<256>::blocks;
    }
}

template <typename H, int BN> int wg_occupancy()
{
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tiles_wg_kernel<H, BN, false>, WgCfg<BN>::threads,
                                                      WgShape<BN>::kSmem) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return blocks;
}

extern "C" int macko_tiles_wg_occupancy(int bf16, int bn)
{
    switch (bn_of(bn)) {
    case 64:
        return bf16 ? wg_occupancy<__nv_bfloat16, 64>() : wg_occupancy<__half, 64>();
    case 128:
        return bf16 ? wg_occupancy<__nv_bfloat16, 128>() : wg_occupancy<__half, 128>();
    default:
        return bf16 ? wg_occupancy<__nv_bfloat16, 256>() : wg_occupancy<__half, 256>();
    }
}

template <typename H, int BN> void wg_cluster_caps(int *caps)
{
    for (int z = 2; z <= kMaxCluster; z++) {
        const ClusterLaunch cl(dim3(1u, (unsigned)z, 1u), dim3(WgCfg<BN>::threads), WgShape<BN>::kSmem, 0,
                               dim3(1u, (unsigned)z, 1u));
        int c = 0;
        if (cudaOccupancyMaxActiveClusters(&c, tiles_wg_kernel<H, BN, false>, &cl.lc) != cudaSuccess) {
            (void)cudaGetLastError();
            c = 0;
        }
        caps[z - 2] = c;
    }
}

extern "C" void macko_tiles_wg_cluster_caps(int bf16, int caps[3][MACKO_TILES_WG_CLUSTERS])
{
    static_assert(MACKO_TILES_WG_CLUSTERS == kMaxCluster - 1, "cluster sizes 2 .. kMaxCluster");
    for (int z = 0; z < MACKO_TILES_WG_CLUSTERS; z++)
        caps[macko_tiles_wg_width_index(64)][z] = 0; /* width 64 takes no clusters (kMaxCluster) */
    if (bf16) {
        wg_cluster_caps<__nv_bfloat16, 128>(caps[macko_tiles_wg_width_index(128)]);
        wg_cluster_caps<__nv_bfloat16, 256>(caps[macko_tiles_wg_width_index(256)]);
    } else {
        wg_cluster_caps<__half, 128>(caps[macko_tiles_wg_width_index(128)]);
        wg_cluster_caps<__half, 256>(caps[macko_tiles_wg_width_index(256)]);
    }
}

extern "C" int64_t macko_tiles_wg_ws_floats(int64_t rows, int64_t n, int splits, int bn)
{
    bn = bn_of(bn);
    if (splits <= 1)
        return 0;
    return wg_tiles(rows, n, bn) * splits * (int64_t)(kBM * bn);
}

extern "C" int64_t macko_tiles_wg_counters(int64_t rows, int64_t n, int splits, int bn)
{
    bn = bn_of(bn);
    if (splits <= 1)
        return 0;
    return wg_tiles(rows, n, bn);
}

extern "C" int64_t macko_tiles_wg_stream_ws_floats(int blocks, int bn)
{
    return blocks > 0 ? 2 * (int64_t)blocks * kBM * bn_of(bn) : 0;
}

extern "C" int macko_tiles_wg_splits(int64_t rows, int64_t tcols, int64_t n, int bn, int sm_count, int64_t ws_floats,
                                     int64_t counters)
{
    /* Blocks along K while they fit one wave (the blocks one SM holds at this width, times the SMs), each split at
     * least 8 K-slices, within the workspace. Splitting a grid of width 256 into more than a wave did not pay (12288 x
     * 12288, H100: 96 tiles in 4 splits 231 us against 206 us unsplit at n = 128, 192 tiles in 2 splits 535 against 509
     * us at n = 512: the partial tiles' traffic and the pipeline fills outweigh the fuller wave). Width 64 where that
     * leaves more than 5 % of the wave empty, or its blocks run up to a quarter of a wave past it: 4 splits (at least 8
     * slices each, within the workspace). Measured on the three quick shapes where this applies (session 13, n = 32 /
     * 64): 12288^2 113 / 114 us against 140 / 144 with the wave's 2 splits, 28672 x 8192 168 / 173 against 175 / 181
     * unsplit, 36864 x 12288 302 / 308 against 378 / 427 unsplit; 3, 6 and 8 splits were slower than 4 on all three. */
    bn = bn_of(bn);
    const int64_t wave = wg_wave(sm_count, bn);
    const int64_t tiles = wg_tiles(rows, n, bn), nk = (tcols + 3) / 4;
    auto fits = [&](int s) {
        return nk / s >= 8 && macko_tiles_wg_ws_floats(rows, n, s, bn) <= ws_floats &&
               macko_tiles_wg_counters(rows, n, s, bn) <= counters;
    };
    int best = 1;
    for (int s = 2; s <= 16; s++) {
        if (tiles * s > wave || !fits(s))
            break;
        best = s;
    }
    const int64_t blocks = tiles * best;
    if (bn == 64 && best < 4 && (20 * blocks < 19 * wave || (blocks > wave && 4 * blocks <= 5 * wave)) && fits(4))
        best = 4;
    /* Width 64 where the wave's splits put two blocks on an SM with fewer than 16 slices each, and 4 splits give each
     * block an SM of its own: 4 (a block's fixed start and end weigh more than the two blocks' overlap gains there).
     * 4096^2 (32 tiles, 64 slices; H100, session 43, the same binary, twice): 4 splits against the wave's 8 at n =
     * 40 / 48 / 64 0.939 / 0.939 / 0.934-0.945x the time, n = 17-32 0.99-1.00x; 5 and 6 splits 1.08-1.22x (some
     * SMs then hold two blocks of 11-13 slices). 4096 x 11008 (172 slices: 8 splits of 22) keeps 8 (4: 1.01-1.06x). */
    if (bn == 64 && best > 4 && tiles * best > sm_count && nk < 16 * best && tiles * 4 <= sm_count && fits(4))
        best = 4;
    return best;
}

extern "C" int macko_tiles_wg_stream(int64_t rows, int64_t tcols, int64_t n, int bn, int sm_count, int64_t ws_floats,
                                     int64_t counters)
{
    /* Stream-K (widths 128 and 256) where one block per tile and split leaves a wave part empty: a wave of blocks
     * shares the tiles x nk K-slices evenly. A model in slices per block: split K (the rule above) takes ceil(blocks /
     * wave) waves of ceil(nk / splits) slices; stream-K ceil(tiles nk / wave) slices plus kSkFix for the partial tiles'
     * traffic and the second pipeline start. Taken where the model gives at most kSkGain of split K's time, every block
     * has at least 8 slices, and the workspace holds two partial tiles per block and one counter per tile. */
    constexpr int64_t kSkFix = 8, kSkGain = 90; /* percent */
    bn = bn_of(bn);
    const int64_t wave = wg_wave(sm_count < 1 ? 1 : sm_count, bn);
    const int64_t tiles = wg_tiles(rows, n, bn), nk = (tcols + 3) / 4;
    if (bn == 64 || nk < 1 || tiles * nk < 8 * wave || tiles > counters || wave > 0x7FFFFFFF ||
        macko_tiles_wg_stream_ws_floats((int)wave, bn) > ws_floats)
        return 0;
    const int s = macko_tiles_wg_splits(rows, tcols, n, bn, sm_count, ws_floats, counters);
    const int64_t t_split = (tiles * s + wave - 1) / wave * ((nk + s - 1) / s);
    const int64_t t_sk = (tiles * nk + wave - 1) / wave + kSkFix;
    return 100 * t_sk <= kSkGain * t_split ? (int)wave : 0;
}

extern "C" int64_t macko_tiles_wg_tail_tile0(int64_t rows, int64_t n, int bn, int sm_count)
{
    bn = bn_of(bn);
    const int64_t wave = wg_wave(sm_count < 1 ? 1 : sm_count, bn);
    const int64_t tiles = wg_tiles(rows, n, bn);
    return tiles - tiles % wave;
}

extern "C" int64_t macko_tiles_wg_tail_ws_floats(int64_t rows, int64_t n, int bn, int sm_count, int splits)
{
    bn = bn_of(bn);
    if (splits <= 1)
        return 0;
    const int64_t tiles = wg_tiles(rows, n, bn);
    return (tiles - macko_tiles_wg_tail_tile0(rows, n, bn, sm_count)) * splits * (int64_t)(kBM * bn);
}

extern "C" int macko_tiles_wg_tail(int64_t rows, int64_t tcols, int64_t n, int bn, int sm_count, int64_t ws_floats,
                                   int64_t counters)
{
    /* The tail split (widths 128 and 256): where the tiles fill w >= 1 whole waves and part of one more, the whole
     * waves run one block per tile and the rest (r tiles) in a second launch of r x s blocks along K, s the most that
     * fit one wave (each at least 8 K-slices, within the workspace). Unlike stream-K the whole waves keep their blocks
     * in step along K (the blocks of a row block read its records together), and only the r tiles pay partial sums.
     * A model in K-slices per block, as stream-K's: w nk + ceil(nk / s) + kTailFix (the partial tiles and the second
     * launch), against split K's and stream-K's; stream-K's fixed cost here is kSkCost, not the 8 of its own rule
     * (session 39's H100 figures: at n = 1280 on the 4096-row and -column shapes stream-K took 24-49 slices' time
     * beyond its even share). Measured (bench/NOTES.md, session 40, H100, d = 0.5, the quick shapes; time against
     * the rule before, which took stream-K or one block per tile there): n = 1280 0.88-0.97 where it applies (4096^2
     * 0.94, 4096 x 11008 0.88), geomean of the 6 shapes 0.947; n = 1152 0.957; n = 512 0.988, its one loss 12288^2
     * (1.031: 60 tiles past a wave in 2 splits, where stream-K stays ahead; 28672 x 8192 at 0.971 has the same model
     * margin, so no constant here separates the two). Returns s, or 0 where the tail split does not apply or the
     * model prefers another. */
    constexpr int64_t kTailFix = 4, kSkCost = 24;
    bn = bn_of(bn);
    if (bn == 64 || sm_count < 1)
        return 0;
    const int64_t wave = wg_wave(sm_count, bn);
    const int64_t tiles = wg_tiles(rows, n, bn), nk = (tcols + 3) / 4;
    const int64_t w = tiles / wave, r = tiles % wave;
    if (w < 1 || r == 0 || r > counters || nk < 16)
        return 0;
    int s = 0;
    for (int c = 2; c <= 16 && r * c <= wave && nk / c >= 8; c++)
        if (r * c * (int64_t)(kBM * bn) <= ws_floats)
            s = c;
    if (s == 0)
        return 0;
    const int64_t t_tail = w * nk + (nk + s - 1) / s + kTailFix;
    const int sp = macko_tiles_wg_splits(rows, tcols, n, bn, sm_count, ws_floats, counters);
    const int64_t t_split = (tiles * sp + wave - 1) / wave * ((nk + sp - 1) / sp);
    const int64_t t_sk = (tiles * nk + wave - 1) / wave + kSkCost;
    return t_tail < t_split && t_tail <= t_sk ? s : 0;
}

extern "C" int macko_tiles_wg_bn(int64_t n) { return n <= 64 ? 64 : n <= 128 ? 128 : 256; }
