/* The panel path's GEMM on Hopper's warpgroup tensor-core instructions (wgmma, sm_90a only): C = alpha * panel * B +
 * beta * C for one decoded panel (PanelParams, spmm_panel.cuh), fp16 or bf16 operands, fp32 accumulation.
 *
 * This file is compiled for the architecture-specific target sm_90a in place of sm_90 (CMakeLists.txt): the wgmma
 * instructions exist only there. For every other architecture the kernel body is empty and the plan
 * (macko_panel_gemm_of) never takes it.
 *
 * One block of 384 threads computes a 128 x 256 tile of C:
 *   - one thread of warpgroup 0 (the producer) loads K-slices of 64 of the panel (128 rows) and of B (256 columns)
 *     into a ring of 4 shared-memory stages with the tensor memory accelerator (cp.async.bulk.tensor, two tensor maps
 *     encoded on the host per call), in the 128-byte swizzled K-major layout that wgmma reads; the copies complete on
 *     the stage's "full" mbarrier (transaction bytes); elements past the panel's rows, past n or past cols are
 *     zero-filled by the copy itself, except that a last column block narrower than 256 brings only its columns of B,
 *     rounded up to 8, by a third map (a box mostly past n costs about the time of a full one, bench/NOTES.md
 *     session 17): the rest of its stage keeps stale values, which meet only accumulator columns past n, never
 *     stored;
 *   - warpgroups 1 and 2 (the consumers) each multiply 64 rows of the stage by its 256 columns with four
 *     wgmma.m64n256k16 (128 fp32 accumulators per thread), keep one group in flight, and arrive on the previous
 *     stage's "empty" mbarrier once its group has completed, which hands the stage back to the producer.
 * Split K (gridDim.z = splits > 1, launched as clusters of `splits` blocks along z: the blocks of one tile of C): block
 * z of a cluster multiplies K-slices z*sps .. z*sps + sps - 1 and keeps its fp32 tile in its shared memory; after a
 * cluster barrier the cluster's blocks each write a share of the tile's pieces of C, summing the blocks' tiles in the
 * order z = 0, 1, ... from zero through distributed shared memory (wgmma.cuh's cluster_sum8: no workspace, no atomics),
 * and wait at a second barrier until every block's tile has been read.
 * Results: each element's sum is taken in a fixed order (K ascending, the instruction's internal order); an element
 * whose sum is NaN (a dense zero of the panel times an Inf of B) is recomputed exactly over the row's stored nonzeros,
 * as in the mma.sync GEMM. No atomics, no allocation: bitwise reproducible and graph-capturable (the tensor maps are
 * kernel parameters). */
#include "spmm_panel.cuh"
#include "wgmma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4;
constexpr int kThreads = 384;
constexpr uint32_t kStageA = kBM * kBK * 2, kStageB = kBN * kBK * 2; /* bytes */
constexpr size_t kSmem = 1024 /* alignment slack */ + (size_t)kStages * (kStageA + kStageB) + 2 * kStages * 8;
constexpr int kCStride = kBM + 4; /* floats between columns of the epilogue's C tile in shared memory */
constexpr int kMaxSplits = 8;     /* the portable cluster size: the rule's splits and plan override's at most */
static_assert((size_t)kCStride * kBN * 4 <= (size_t)kStages * (kStageA + kStageB), "the C tile fits the ring");

template <typename H>
__global__ void __launch_bounds__(kThreads, 1)
    panel_wg_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                    const __grid_constant__ CUtensorMap tm_bl, const PanelParams<H> p, const int sps, const int boxl)
{
#if MACKO_WG_DEVICE
    extern __shared__ __align__(16) unsigned char wg_smem[];
    const uint32_t raw = smem_addr(wg_smem);
    const uint32_t base = (raw + 1023u) & ~1023u;
    const uint32_t sA = base, sB = base + kStages * kStageA, bars = sB + kStages * kStageB;
    /* full[s] at bars + 8s, empty[s] at bars + 8 (kStages + s) */
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
    const int tid = threadIdx.x, wg = tid >> 7;
    const int splits = (int)gridDim.z, z = (int)blockIdx.z; /* z: the block's rank in its cluster */
    if (alpha == 0.0f) { /* C = beta * C, by the first block of each cluster (no block touches shared memory) */
        if (z == 0)
            panel_scale_c(p, beta, m0, n0, kBM, kBN);
        return;
    }
    if (tid == 0) {
        for (int s = 0; s < kStages; s++) {
            mbar_init(bars + 8 * s, 1);               /* the producer's arrival (+ the copies' bytes) */
            mbar_init(bars + 8 * (kStages + s), 256); /* the consumers' 256 threads */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    const int ktiles = (p.ldp + kBK - 1) / kBK;
    const int kt0 = z * sps, kt1 = kt0 + sps < ktiles ? kt0 + sps : ktiles, nk = kt1 - kt0; /* nk >= 1 (host) */

    if (wg == 0) { /* producer: one thread */
        if (tid == 0) {
            const bool narrow = boxl > 0 && (int)blockIdx.y == (int)gridDim.y - 1;
            const CUtensorMap *mb = narrow ? &tm_bl : &tm_b;
            const uint32_t bbytes = narrow ? (uint32_t)boxl * (kBK * 2) : kStageB;
            for (int i = 0; i < nk; i++) {
                const int s = i % kStages, kt = kt0 + i;
                if (i >= kStages)
                    mbar_wait(bars + 8 * (kStages + s), (uint32_t)((i / kStages - 1) & 1));
                mbar_arrive_tx(bars + 8 * s, kStageA + bbytes);
                tma_load_2d(sA + s * kStageA, &tm_a, kt * kBK, m0, bars + 8 * s);
                tma_load_2d(sB + s * kStageB, mb, kt * kBK, n0, bars + 8 * s);
            }
        }
        return;
    }

    /* consumers: rows cw*64 .. cw*64 + 63 of the tile */
    const int cw = wg - 1, t = tid & 127, warp = t >> 5, lane = t & 31;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; i++)
        d[i] = 0.0f;
    for (int i = 0; i < nk; i++) {
        const int s = i % kStages;
        mbar_wait(bars + 8 * s, (uint32_t)((i / kStages) & 1));
        wg_fence_acc(d);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        const uint32_t a0 = sA + s * kStageA + cw * 64 * 128, b0 = sB + s * kStageB;
#pragma unroll
        for (int kk = 0; kk < kBK / 16; kk++)
            wgmma_m64n256k16<H>(d, wg_desc(a0 + 32 * kk), wg_desc(b0 + 32 * kk));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        wg_fence_acc(d);
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        wg_fence_acc(d);
        if (i > 0)
            mbar_arrive(bars + 8 * (kStages + (i - 1) % kStages));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    wg_fence_acc(d);

    /* The epilogue goes through shared memory (the ring is free: every stage has been consumed; wgmma.cuh's two
     * halves): C is written in pieces of 8 rows of one column, 16-byte accesses where C allows them. */
    asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* both consumer warpgroups are done with the ring */
    float *ct = reinterpret_cast<float *>(wg_smem + (base - raw));
    wg_acc_to_smem<kCStride>(ct, d, cw * 64 + 16 * warp + (lane >> 2), lane);
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    const bool vec = (p.ldc & 7) == 0 && (reinterpret_cast<uintptr_t>(p.c) & 15) == 0 && (p.row0 & 7) == 0;
    const uint32_t cts = smem_addr(ct);
    auto exact = [&](int64_t r, int64_t j) { return panel_row_dot(p, (int)r, j); };
    if (splits == 1) {
        wg_store_tile<H, kBM, kBN>(
            tid - 128, 256, (int64_t)p.row0 + m0, n0, (int64_t)p.row0 + p.prow, p.n, p.c, 1, p.ldc, vec, alpha, beta,
            [&](int ch, int cl, float(&v)[8]) { wg_smem_load8<kCStride>(cts, ch, cl, v); }, exact);
        return;
    }
    /* split K: the cluster's tiles summed in rank order from zero; block z writes every splits-th run of 256 pieces */
    cluster_sync();
    wg_store_tile<H, kBM, kBN>(
        (tid - 128) + 256 * z, 256 * splits, (int64_t)p.row0 + m0, n0, (int64_t)p.row0 + p.prow, p.n, p.c, 1, p.ldc,
        vec, alpha, beta,
        [&](int ch, int cl, float(&v)[8]) {
            cluster_sum8<kMaxSplits>(cts + 4u * (uint32_t)(cl * kCStride + 8 * ch), splits, v);
        },
        exact);
    cluster_sync(); /* no block leaves while another may still read its tile */
#else
    (void)tm_a;
    (void)tm_b;
    (void)tm_bl;
    (void)p;
    (void)sps;
    (void)boxl;
    (void)kMaxSplits; /* the sm_90a body's */
#endif
}

} // namespace

template <typename H> int panel_wg_prepare()
{
    const cudaError_t e =
        cudaFuncSetAttribute(panel_wg_kernel<H>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmem);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    (void)encoder(); /* resolved here, at upload, not in a compute call */
    return (int)e;
}

int panel_wg_ready() { return encoder() != nullptr; }

template <typename H> int panel_wg_gemm(const PanelParams<H> &p, int splits, cudaStream_t st)
{
    CUtensorMap ta, tb, tbl;
    if (!encode_map<H>(&ta, p.panel, p.ldp, p.prow, p.ldp, kBM))
        return (int)cudaErrorInvalidValue;
    /* a last column block narrower than 256: a box of its columns rounded up to 8 (tbl, read only then) */
    const int boxl = encode_b_maps<H>(&tb, &tbl, p.b, p.cols, p.n, p.ldb, kBN, 1);
    if (boxl < 0)
        return (int)cudaErrorInvalidValue;
    const int ktiles = (p.ldp + kBK - 1) / kBK;
    if (splits > ktiles)
        splits = ktiles;
    const int sps = splits > 1 ? (ktiles + splits - 1) / splits : (ktiles > 0 ? ktiles : 1);
    splits = splits > 1 ? (ktiles + sps - 1) / sps : 1; /* every block has at least one slice */
    const dim3 grid((unsigned)((p.prow + kBM - 1) / kBM), (unsigned)((p.n + kBN - 1) / kBN), (unsigned)splits);
    if (splits == 1) {
        panel_wg_kernel<H><<<grid, kThreads, kSmem, st>>>(ta, tb, tbl, p, sps, boxl);
        return (int)cudaGetLastError();
    }
    return (int)launch_clusters(panel_wg_kernel<H>, grid, dim3(kThreads), kSmem, st, dim3(1, 1, (unsigned)splits), ta,
                                tb, tbl, p, sps, boxl);
}

template int panel_wg_prepare<__half>();
template int panel_wg_prepare<__nv_bfloat16>();
template int panel_wg_gemm<__half>(const PanelParams<__half> &, int, cudaStream_t);
template int panel_wg_gemm<__nv_bfloat16>(const PanelParams<__nv_bfloat16> &, int, cudaStream_t);
