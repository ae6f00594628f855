/* The SP24 layout's product on Hopper's sparse warpgroup tensor-core instruction (wgmma.mma_async.sp, sm_90a only):
 * C = alpha*M*B + beta*C for a 2:4 matrix in the SP24 device layout (nm_sp24.cu, lapack_style_docs/FORMAT_NM.md),
 * fp16 or bf16 M, B and C, fp32 accumulation. The plan takes it for large n (macko_nm_path, src/nm_device.c).
 *
 * Compiled for sm_90a in place of sm_90 (CMakeLists.txt, MACKO_WG_SOURCES); for every other architecture the kernel
 * body is empty and the plan never takes it.
 *
 * The SP24 layout needs no decoding here either: a unit (16 rows x 32 columns) holds lane L's 16 bytes of values and
 * the 16 metadata words exactly as a warp of wgmma.mma_async.sp.m64nNk32 takes them with A from registers (the
 * warp's 16 rows of the warpgroup's 64; lanes 4g and 4g + 1 hold the metadata, sparsity selector 0), which is the
 * register order of mma.sp.m16n8k32 for which the layout was made.
 *
 * One block of 384 threads computes a 128 x 256 tile of C:
 *   - one thread of warpgroup 2 (the producer; the warpgroup gives its registers to the others with setmaxnreg) loads
 *     K-slices of 64 columns into a ring of kStages shared-memory stages: the 8 bands' two units each (values and
 *     metadata: one bulk copy apiece, both contiguous in the layout) and the 64 x 256 piece of B through a tensor map
 *     (128-byte swizzle, zero fill past cols and n). The copies complete on the stage's "full" mbarrier;
 *   - warpgroups 0 and 1 (the consumers, 64 rows each; warp w owns band 4*cw + w) load their fragments and metadata
 *     from the stage, run two wgmma.mma_async.sp.m64n256k32 (A from registers, B by descriptor), wait for them and
 *     hand the stage back on its "empty" mbarrier.
 * Blocks run in groups of column blocks (WgP::group): the group's pieces of B stay in L2 while its row blocks pass.
 * A last column block narrower than 256 (n = 64, say) brings only its columns of B, rounded up to 8, by a second
 * tensor map: a box mostly past the end of B (zero fill) cost twice the time of a full one (bench/NOTES.md,
 * session 17); the stage's other rows keep stale values that meet only accumulator columns past n, never stored.
 * Clusters (configurations 9 and 10; the automatic one from n = 1024, macko_nm_sp24_wg_auto_cfg): two blocks of
 * neighbouring row blocks and the same column block form a cluster; each copies its half of B's piece (128 columns,
 * or half the narrow box) to both blocks' stages at once (multicast), so that a piece leaves L2 once per pair. A
 * stage is refilled only when both blocks' consumers have released it: each consumer warp's first lane arrives on
 * its own block's "empty" barrier and on the other block's (the latter only where a refill follows, so that no
 * arrival reaches a block that may have finished). With an odd number of row blocks the last pair's second block
 * has no rows: it takes part in the copies only.
 * Split K (grid.y; macko_nm_sp24_wg_splits, where the tiles fill at most a quarter of the SMs): each block takes a
 * range of K-slices and writes its fp32 tile to the handle's workspace, and SP24's finishing launch adds the
 * splits in split order and writes C (nm_sp24.cuh).
 * Bands past the matrix's end are not copied: their fragments are zero with valid metadata. Zero values meet B in
 * the multiply (0 * Inf = NaN): an element whose sum is NaN is recomputed exactly over the row's nonzero values
 * (wg_store_tile). Each element's sum is taken in a fixed order; no atomics, no allocation: bitwise reproducible and
 * graph-capturable (the tensor maps are kernel parameters). */
#include "nm.h"

#include "nm_sp24.cuh"
#include "wgmma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>

#include <type_traits>

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64, kThreads = 384;
constexpr int kBands = kBM / 16;
constexpr uint32_t kUnitA = 512, kUnitM = 64;              /* bytes of a unit's values and metadata */
constexpr uint32_t kStageB = kBN * kBK * 2;                /* 32 KiB: B's 64 x 256 piece */
constexpr uint32_t kStageA = kBands * 2 * kUnitA;          /* two units of values per band */
constexpr uint32_t kStageM = kBands * 2 * kUnitM;          /* and of metadata */
/* the ring of S stages and the dynamic shared memory of a kernel with S stages */
__host__ __device__ constexpr size_t ring_bytes(int S) { return (size_t)S * (kStageB + kStageA + kStageM); }
__host__ __device__ constexpr size_t smem_bytes(int S) { return 1024 /* alignment slack */ + ring_bytes(S) + 2 * S * 8; }
constexpr int kCStride = kBM + 4; /* floats between columns of the epilogue's C tile in shared memory */
static_assert((size_t)kCStride * kBN * 4 <= ring_bytes(4), "the C tile fits the ring");

/* The configurations (macko_nm_args.cfg; bench/NOTES.md, session 11): two fragment sets or one, the units by tensor
 * maps or by bulk copies, the stages of the ring, the column blocks per group of the raster. */
struct WgCfg {
    bool pipe, tma;
    int stages, group;
    bool mc; /* clusters of two row blocks that share B's piece (multicast) */
};
constexpr WgCfg kCfg[] = {{false, false, 4, 4, false}, {true, false, 4, 4, false}, {true, true, 4, 4, false},
                          {true, true, 5, 4, false},   {true, true, 4, 8, false},  {true, true, 5, 8, false},
                          {true, true, 4, 2, false},   {true, true, 5, 2, false},  {true, true, 4, 1, false},
                          {true, true, 4, 2, true},    {true, true, 5, 2, true}};
/* the automatic configurations (macko_nm_sp24_wg_auto_cfg): below kMcN columns, and from kMcN on */
constexpr int kCfgs = (int)(sizeof kCfg / sizeof kCfg[0]), kCfgAuto = 6, kCfgAutoMc = 9, kMcN = 1024;

template <typename H> struct WgP {
    P<H> p;
    int mbn, nbn; /* blocks along rows and along n */
    int nk;       /* K-slices of 64 columns */
    int sps;      /* K-slices per split (grid.y = the splits; each has at least one) */
    int boxl;     /* > 0: B columns the last column block's box holds (tm_bl: all of them, or half of them in each
                     block of a cluster), n's remainder rounded up to 8 (16 with clusters) */
    int group;    /* column blocks per group of the raster */
};

#if MACKO_WG_DEVICE
/* d += A * B for one 64 x 256 x 32 step of the sparse instruction: a[0..3] the warp's values (a unit's lane order),
 * e the metadata word (sparsity selector 0), B from shared memory (descriptor). */
#define MACKO_WGMMA_SP_64x256x32_RS(T, d, a, e, db) \
    asm volatile("{\nwgmma.mma_async.sp.sync.aligned.m64n256k32.f32." T "." T " {\n" MACKO_WG_ACC_LIST \
                 "}, {%128, %129, %130, %131}, %132, %133, 0, 1, 1, 1, 0;\n}\n" \
                 : MACKO_WG_ACC_OPS(d) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(e))

template <typename H>
__device__ __forceinline__ void wgmma_sp(float (&d)[128], const uint32_t (&a)[4], uint32_t e, uint64_t db)
{
    if constexpr (std::is_same<H, __nv_bfloat16>::value)
        MACKO_WGMMA_SP_64x256x32_RS("bf16", d, a, e, db);
    else
        MACKO_WGMMA_SP_64x256x32_RS("f16", d, a, e, db);
}
#endif

template <typename H, bool kPipe, bool kTmaA, int kStages, bool kMc> __global__ void __launch_bounds__(kThreads, 1)
    sp24_wg_kernel(const __grid_constant__ CUtensorMap tm_b, const __grid_constant__ CUtensorMap tm_bl,
                   const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_m, const WgP<H> w)
{
#if MACKO_WG_DEVICE
    extern __shared__ __align__(16) unsigned char wg_smem[];
    const P<H> &p = w.p;
    const uint32_t raw0 = smem_addr(wg_smem);
    const uint32_t base = (raw0 + 1023u) & ~1023u, abase = base + kStages * kStageB;
    const uint32_t bars = abase + kStages * (kStageA + kStageM);
    auto stB = [&](int s) { return base + s * kStageB; };
    auto stA = [&](int s) { return abase + s * (kStageA + kStageM); }; /* values, then metadata at + kStageA */
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (kStages + s); };

    /* grouped raster: the group's column blocks of one row block (with clusters: of one pair of row blocks, the
     * cluster's rank 0 and 1; a pair past an odd mbn's end has no rows and only takes part in the copies) run one
     * after the other */
    const int rank = kMc ? (int)(blockIdx.x & 1u) : 0, lin = kMc ? (int)(blockIdx.x >> 1) : (int)blockIdx.x;
    const int mrows = kMc ? (w.mbn + 1) / 2 : w.mbn;
    const int per = w.group * mrows, grp = lin / per, first = grp * w.group;
    const int gsz = w.nbn - first < w.group ? w.nbn - first : w.group;
    const int nb = first + (lin % per) % gsz, mb = kMc ? 2 * ((lin % per) / gsz) + rank : (lin % per) / gsz;
    const int band0 = mb * kBands;
    const int64_t m0 = (int64_t)mb * kBM, n0 = (int64_t)nb * kBN;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    /* split K: this block's K-slices j0 .. j0 + nk - 1 (ring index i = j - j0) */
    const int j0 = (int)blockIdx.y * w.sps, nk = w.nk - j0 < w.sps ? w.nk - j0 : w.sps;
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    if (alpha == 0.0f) { /* C = beta * C (the first split's blocks): A and B are not read */
        if (blockIdx.y != 0)
            return;
        for (int x = tid; x < kBM * kBN; x += kThreads) {
            const int64_t r = m0 + x % kBM, j = n0 + x / kBM;
            if (r < p.rows && j < p.n) {
                H *cp = p.c + r * p.incc + j * p.ldc;
                *cp = Tc16<H>::from_float(beta != 0.0f ? beta * Tc16<H>::to_float(*cp) : 0.0f);
            }
        }
        return;
    }
    if (tid == 0) {
        for (int s = 0; s < kStages; s++) {
            mbar_init(full(s), 1);                  /* the producer's arrival (+ the copies' bytes) */
            mbar_init(empty(s), kMc ? 16 : 256); /* the consumers' threads (clusters: both blocks' consumer warps) */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if (kMc)
        cluster_sync(); /* the other block's barriers are ready before any copy or arrival reaches them */
    else
        __syncthreads();

    if (warp >= 8) { /* the producer warpgroup: its registers go to the consumers; one thread produces */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid != 256)
            return;
        const int nbands = p.bands - band0 < kBands ? p.bands - band0 : kBands;
        const char *vals = reinterpret_cast<const char *>(p.vals);
        const char *meta = reinterpret_cast<const char *>(p.meta);
        /* B's piece: the last column block of a partial width brings only its columns (boxl, rounded up to 8) by its
         * own map; the rest of the stage keeps what it held and meets only accumulator columns past n, never stored
         * (a box mostly past n was measured slow: 12288^2 at n = 64 / 128 / 256 took 205 / 171 / 97 us) */
        const bool narrow = w.boxl > 0 && nb == w.nbn - 1;
        const CUtensorMap *mb_ = narrow ? &tm_bl : &tm_b;
        const uint32_t bbytes = narrow ? (uint32_t)(w.boxl * kBK * 2) : kStageB;
        /* clusters: this block copies half of the piece (its rank's) to both blocks */
        const int half = narrow ? w.boxl / 2 : kBN / 2;
        auto load_b = [&](int s, int j) {
            if (kMc)
                tma_load_2d_mc(stB(s) + (uint32_t)(rank * half * 128), mb_, j * kBK, (int)n0 + rank * half, full(s),
                               (uint16_t)3);
            else
                tma_load_2d(stB(s), mb_, j * kBK, (int)n0, full(s));
        };
        for (int i = 0; i < nk; i++) {
            const int s = i % kStages, j = j0 + i;
            if (i >= kStages)
                mbar_wait(empty(s), (uint32_t)((i / kStages - 1) & 1));
            if (kTmaA) { /* three boxes; the units past the matrix are zero-filled (their bytes count) */
                mbar_arrive_tx(full(s), bbytes + kStageA + kStageM);
                load_b(s, j);
                tma_load_3d(stA(s), &tm_v, 0, 2 * j, band0, full(s));
                tma_load_3d(stA(s) + kStageA, &tm_m, 0, 2 * j, band0, full(s));
                continue;
            }
            const uint32_t units = p.ksteps - 2 * j < 2 ? 1u : 2u;
            mbar_arrive_tx(full(s), bbytes + (uint32_t)(nbands > 0 ? nbands : 0) * units * (kUnitA + kUnitM));
            load_b(s, j);
            for (int b = 0; b < nbands; b++) {
                const int64_t unit = (int64_t)(band0 + b) * p.ksteps + 2 * j;
                bulk_load(stA(s) + b * 2 * kUnitA, vals + unit * kUnitA, units * kUnitA, full(s));
                bulk_load(stA(s) + kStageA + b * 2 * kUnitM, meta + unit * kUnitM, units * kUnitM, full(s));
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int cw = tid >> 7, cwarp = warp & 3, g = lane >> 2, t = lane & 3, bl = 4 * cw + cwarp;
    const bool band_ok = band0 + bl < p.bands;
    float d[128];
#pragma unroll
    for (int x = 0; x < 128; x++)
        d[x] = 0.0f;
    /* A slice's fragments: two units (k-steps) of values and metadata. A missing band (past the end) or k-step (past
     * the last one) gets zero values with valid metadata (positions 0 and 1). */
    struct Frag {
        uint32_t a0[4], a1[4], e0, e1;
    };
    auto fetch = [&](int i, Frag &f) { /* ring index i: K-slice j0 + i */
        const int s = i % kStages, j = j0 + i;
        mbar_wait(full(s), (uint32_t)((i / kStages) & 1));
#pragma unroll
        for (int i = 0; i < 4; i++)
            f.a0[i] = f.a1[i] = 0u;
        f.e0 = f.e1 = 0x44444444u;
        if (band_ok) {
            const uint32_t av = stA(s) + bl * 2 * kUnitA + lane * 16;
            const uint32_t am = stA(s) + kStageA + bl * 2 * kUnitM + (2 * g + (t & 1)) * 4;
            lds128(f.a0, av);
            f.e0 = lds32(am);
            if (2 * j + 1 < p.ksteps) {
                lds128(f.a1, av + kUnitA);
                f.e1 = lds32(am + kUnitM);
            }
        }
    };
    auto issue = [&](int i, Frag &f) {
        const uint32_t b0 = stB(i % kStages);
        wg_fence_acc(d);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        wgmma_sp<H>(d, f.a0, f.e0, wg_desc(b0));
        wgmma_sp<H>(d, f.a1, f.e1, wg_desc(b0 + 64)); /* columns 32..63 of the slice: 64 bytes into the row */
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        wg_fence_acc(d);
    };
    /* ring index i's stage is read: it may be refilled. Clusters: the warp's first lane arrives on both blocks'
     * barriers, the other block's only where its producer will wait (a refill follows), so that no arrival reaches a
     * block that may have finished */
    auto done = [&](int i) {
        const int s = i % kStages;
        if (!kMc) {
            mbar_arrive(empty(s));
            return;
        }
        __syncwarp();
        if (lane == 0) {
            mbar_arrive(empty(s));
            if (i + kStages < nk)
                mbar_arrive_cluster(cluster_map(empty(s), (uint32_t)(rank ^ 1)));
        }
    };
    auto release = [&](Frag &f) { /* f's group is complete: its registers may go */
        wg_fence_regs(f.a0);
        wg_fence_regs(f.a1);
        asm volatile("" : "+r"(f.e0), "+r"(f.e1)::"memory");
    };
    if (kPipe) {
        /* two fragment sets: slice j's group is issued before slice j - 1's is waited for */
        Frag x, y;
        for (int i = 0; i < nk; i++) {
            if ((i & 1) == 0) {
                fetch(i, x);
                issue(i, x);
            } else {
                fetch(i, y);
                issue(i, y);
            }
            if (i > 0) {
                asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                wg_fence_acc(d);
                if ((i & 1) == 0)
                    release(y);
                else
                    release(x);
                done(i - 1);
            }
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        wg_fence_acc(d);
        release(x);
        release(y);
        if (nk > 0)
            done(nk - 1);
    } else {
        Frag x;
        for (int i = 0; i < nk; i++) {
            fetch(i, x);
            issue(i, x);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            wg_fence_acc(d);
            release(x);
            done(i);
        }
    }

    /* Epilogue through shared memory (every stage has been consumed; wgmma.cuh's two halves): C is written in pieces
     * of 8 rows of one column, 16-byte accesses where C allows them. */
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    float *ct = reinterpret_cast<float *>(wg_smem + (base - raw0));
    wg_acc_to_smem<kCStride>(ct, d, cw * 64 + 16 * cwarp + g, lane);
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    if (gridDim.y > 1) { /* split K: the fp32 tile to split z's slot of the workspace, C by the finishing launch */
        float *ws = p.ws + (int64_t)blockIdx.y * p.n * p.rows;
        for (int x = tid; x < kBM * kBN; x += 256) {
            const int r = x % kBM, cl = x / kBM;
            if (m0 + r < p.rows && n0 + cl < p.n)
                ws[(n0 + cl) * p.rows + m0 + r] = ct[cl * kCStride + r];
        }
        return;
    }
    const bool vec = p.incc == 1 && (p.ldc & 7) == 0 && (reinterpret_cast<uintptr_t>(p.c) & 15) == 0;
    const uint32_t cts = smem_addr(ct);
    wg_store_tile<H, kBM, kBN>(
        tid, 256, m0, n0, p.rows, p.n, p.c, p.incc, p.ldc, vec, alpha, beta,
        [&](int ch, int cl, float(&v)[8]) { wg_smem_load8<kCStride>(cts, ch, cl, v); },
        [&](int64_t r, int64_t j) { return row_dot(p, r, j); });
#else
    (void)tm_b;
    (void)tm_bl;
    (void)tm_v;
    (void)tm_m;
    (void)w;
#endif
}

/* The kernel of configuration cfg (0 one fragment set, units by bulk copies; 1 two sets; 2 two sets, units by tensor
 * maps). */
/* The kernel of configuration c (kCfg). */
template <typename H> auto kernel_of(const WgCfg &c)
{
    return !c.pipe                 ? sp24_wg_kernel<H, false, false, 4, false>
           : !c.tma                ? sp24_wg_kernel<H, true, false, 4, false>
           : c.mc && c.stages == 5 ? sp24_wg_kernel<H, true, true, 5, true>
           : c.mc                  ? sp24_wg_kernel<H, true, true, 4, true>
           : c.stages == 5         ? sp24_wg_kernel<H, true, true, 5, false>
                                   : sp24_wg_kernel<H, true, true, 4, false>;
}

template <typename H> cudaError_t wg_prepare()
{
    cudaError_t e = cudaSuccess;
    for (int c = 0; c < kCfgs && e == cudaSuccess; c++)
        e = cudaFuncSetAttribute(kernel_of<H>(kCfg[c]), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem_bytes(kCfg[c].stages));
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return e;
}

/* A tensor map of the SP24 units: `inner` elements of type t per unit (a 512-byte unit of values, a 64-byte unit of
 * metadata), ksteps units per band, bands bands; boxes of one whole unit x 2 k-steps x kBands bands, no swizzle,
 * zero fill past the matrix. */
bool encode_units(CUtensorMap *m, const void *ptr, CUtensorMapDataType t, int inner, int ksteps, int bands)
{
    const EncodeTiled fn = encoder();
    if (fn == nullptr)
        return false;
    const cuuint64_t es = t == CU_TENSOR_MAP_DATA_TYPE_UINT16 ? 2 : 4;
    const cuuint64_t dims[3] = {(cuuint64_t)inner, (cuuint64_t)ksteps, (cuuint64_t)bands};
    const cuuint64_t strides[2] = {(cuuint64_t)inner * es, (cuuint64_t)inner * es * (cuuint64_t)ksteps};
    const cuuint32_t box[3] = {(cuuint32_t)inner, 2, (cuuint32_t)kBands};
    const cuuint32_t estr[3] = {1, 1, 1};
    return fn(m, t, 3, const_cast<void *>(ptr), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <typename H> cudaError_t wg_run(const macko_nm_args *a)
{
    WgP<H> w;
    P<H> &p = w.p;
    const cudaStream_t st = (cudaStream_t)a->k.stream;
    cudaError_t e = cudaSuccess;
    p = sp24_params<H>(a);
    w.mbn = (p.bands + kBands - 1) / kBands;
    w.nk = (p.ksteps + 1) / 2;
    /* split K: at least one K-slice per split (a matrix without columns: one split of none) */
    int splits = a->splits < 1 ? 1 : a->splits;
    w.sps = (w.nk + splits - 1) / splits;
    if (w.sps < 1)
        w.sps = 1;
    splits = (w.nk + w.sps - 1) / w.sps;
    if (splits < 1)
        splits = 1;
    const WgCfg &cfg = kCfg[a->cfg >= 0 && a->cfg < kCfgs ? a->cfg : kCfgAuto];
    w.group = cfg.group;
    /* the units as tensors: 16-bit values [band][k-step][256] and 32-bit metadata words [band][k-step][16] */
    CUtensorMap tv, tm;
    if (!encode_units(&tv, p.vals, CU_TENSOR_MAP_DATA_TYPE_UINT16, 256, p.ksteps, p.bands) ||
        !encode_units(&tm, p.meta, CU_TENSOR_MAP_DATA_TYPE_UINT32, 16, p.ksteps, p.bands))
        return cudaErrorInvalidValue;
    /* column blocks per launch: the grid's one dimension holds mbn * nbn blocks (with clusters mbn rounded up to
     * even) */
    const int64_t mrows = cfg.mc ? (w.mbn + 1) / 2 * 2 : w.mbn;
    int64_t most = (int64_t)INT_MAX / (mrows > 0 ? mrows : 1);
    if (most > 65535)
        most = 65535;
    for (int64_t j0 = 0; j0 < a->k.n && e == cudaSuccess; j0 += most * kBN) {
        p.n = a->k.n - j0 < most * kBN ? a->k.n - j0 : most * kBN;
        p.b = (const H *)a->k.b + j0 * a->k.ldb;
        p.c = (H *)a->k.c + j0 * a->k.ldc;
        w.nbn = (int)((p.n + kBN - 1) / kBN);
        /* with clusters each block of a pair copies half of the piece (boxes of half the columns) */
        CUtensorMap tb, tbl;
        w.boxl = encode_b_maps<H>(&tb, &tbl, p.b, p.cols, p.n, p.ldb, kBN, cfg.mc ? 2 : 1);
        if (w.boxl < 0)
            return cudaErrorInvalidValue;
        const dim3 grid((unsigned)(mrows * w.nbn), (unsigned)splits);
        if (!cfg.mc) {
            kernel_of<H>(cfg)<<<grid, kThreads, smem_bytes(cfg.stages), st>>>(tb, tbl, tv, tm, w);
            e = cudaGetLastError();
        } else {
            e = launch_clusters(kernel_of<H>(cfg), grid, dim3(kThreads), smem_bytes(cfg.stages), st, dim3(2, 1, 1), tb,
                                tbl, tv, tm, w);
        }
        if (e == cudaSuccess && splits > 1)
            e = sp24_finish_launch(p, splits, st);
    }
    return e;
}

} // namespace

extern "C" int macko_nm_sp24_wg_prepare(void)
{
    cudaError_t e = wg_prepare<__half>();
    if (e == cudaSuccess)
        e = wg_prepare<__nv_bfloat16>();
    (void)encoder(); /* resolved here, at upload, not in a compute call */
    return (int)e;
}

extern "C" int macko_nm_sp24_wg_ready(void) { return encoder() != nullptr; }

extern "C" int macko_nm_sp24_wg_configs(void) { return kCfgs; }

extern "C" int macko_nm_sp24_wg_splits(int64_t rows, int64_t cols, int64_t n, int sm_count, int64_t ws_floats)
{
    /* Where the 128 x 256 tiles fill at most a quarter of one wave (one block per SM), their 64-column K-slices are
     * shared out over blocks along K up to the wave: at least 8 slices each, at most 16 splits, within the workspace
     * (each split's fp32 partial: rows x n floats); fewer than 4 splits: none. Measured (H200, 2:4 fp16, bench/NOTES.md
     * session 17): 4 splits took 8-42 % off every case where the rule gives them (4096 x 4096 and 4096 x 11008, n = 64
     * to 256); 2 splits were 25 % slower on 4096 x 4096 at n = 512 (the partials' traffic and the finishing launch
     * against a short K) and 12 % faster on 4096 x 11008. */
    const int64_t nn = n < (int64_t)65535 * kBN ? n : (int64_t)65535 * kBN;
    const int64_t tiles = (rows + kBM - 1) / kBM * ((nn + kBN - 1) / kBN), nk = (cols + kBK - 1) / kBK;
    if (tiles < 1 || 4 * tiles > sm_count)
        return 1;
    int64_t s = sm_count / tiles;
    if (s > nk / 8)
        s = nk / 8;
    if (s > 16)
        s = 16;
    while (s >= 4 && s * rows * nn > ws_floats)
        s--;
    return s >= 4 ? (int)s : 1;
}

extern "C" int macko_nm_sp24_wg_auto_cfg(int64_t n)
{
    /* Measured (H200, 2:4 fp16, SP24WG forced, configurations 6 and 9 in one run; bench/NOTES.md session 18): at
     * n = 2048 clusters took 4.6-5.2 % off 12288^2, 36864 x 12288 and 28672 x 8192, left 4096^2 and 11008 x 4096
     * level and 4096 x 11008 3 % slower; at n = 128 and 512 they were level or mixed (within about 8 % either way). */
    return n >= kMcN ? kCfgAutoMc : kCfgAuto;
}

extern "C" int macko_nm_sp24_wg_spmm(const macko_nm_args *a)
{
    return a->combo == MACKO_COMBO_B ? (int)wg_run<__nv_bfloat16>(a) : (int)wg_run<__half>(a);
}
