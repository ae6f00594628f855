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
 *     zero-filled by the copy itself;
 *   - warpgroups 1 and 2 (the consumers) each multiply 64 rows of the stage by its 256 columns with four
 *     wgmma.m64n256k16 (128 fp32 accumulators per thread), keep one group in flight, and arrive on the previous
 *     stage's "empty" mbarrier once its group has completed, which hands the stage back to the producer.
 * Results: each element's sum is taken in a fixed order (K ascending, the instruction's internal order); an element
 * whose sum is NaN (a dense zero of the panel times an Inf of B) is recomputed exactly over the row's stored nonzeros,
 * as in the mma.sync GEMM. No atomics, no allocation: bitwise reproducible and graph-capturable (the tensor maps are
 * kernel parameters). */
#include "spmm_panel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda.h> /* CUtensorMap and its enums only: the encoder is reached through the runtime */
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MACKO_WG_DEVICE 1
#else
#define MACKO_WG_DEVICE 0
#endif

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4;
constexpr int kThreads = 384;
constexpr uint32_t kStageA = kBM * kBK * 2, kStageB = kBN * kBK * 2; /* bytes */
constexpr size_t kSmem = 1024 /* alignment slack */ + (size_t)kStages * (kStageA + kStageB) + 2 * kStages * 8;
constexpr int kCStride = kBM + 4; /* floats between columns of the epilogue's C tile in shared memory */
static_assert((size_t)kCStride * kBN * 4 <= (size_t)kStages * (kStageA + kStageB), "the C tile fits the ring");

#if MACKO_WG_DEVICE
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* Arrives on bar and adds `bytes` to the transactions the current phase waits for. */
__device__ __forceinline__ void mbar_arrive_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/* The box of tensor map tm at element coordinates (c0: K, c1: row or column) into shared memory at dst; completes
 * its bytes on bar. */
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *tm, int c0, int c1, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

/* Shared-memory matrix descriptor of a 128-byte swizzled K-major operand: start address, stride between 8-row groups
 * 1024 bytes (the leading offset is unused by this layout and set to 1), swizzle mode 1 (128 bytes). */
__device__ __forceinline__ uint64_t wg_desc(uint32_t saddr)
{
    return (uint64_t)((saddr & 0x3FFFFu) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

/* d += A * B for one 64 x 256 x 16 step, A and B from shared memory (descriptors); the operand type is the string T. */
#define MACKO_WGMMA_64x256x16(T, d, da, db) \
    asm volatile("{\nwgmma.mma_async.sync.aligned.m64n256k16.f32." T "." T " {\n" \
        "%0, %1, %2, %3, %4, %5, %6, %7," \
        "%8, %9, %10, %11, %12, %13, %14, %15," \
        "%16, %17, %18, %19, %20, %21, %22, %23," \
        "%24, %25, %26, %27, %28, %29, %30, %31," \
        "%32, %33, %34, %35, %36, %37, %38, %39," \
        "%40, %41, %42, %43, %44, %45, %46, %47," \
        "%48, %49, %50, %51, %52, %53, %54, %55," \
        "%56, %57, %58, %59, %60, %61, %62, %63," \
        "%64, %65, %66, %67, %68, %69, %70, %71," \
        "%72, %73, %74, %75, %76, %77, %78, %79," \
        "%80, %81, %82, %83, %84, %85, %86, %87," \
        "%88, %89, %90, %91, %92, %93, %94, %95," \
        "%96, %97, %98, %99, %100, %101, %102, %103," \
        "%104, %105, %106, %107, %108, %109, %110, %111," \
        "%112, %113, %114, %115, %116, %117, %118, %119," \
        "%120, %121, %122, %123, %124, %125, %126, %127" \
                 "}, %128, %129, 1, 1, 1, 0, 0;\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
                 : "l"(da), "l"(db))

template <typename H> __device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db)
{
    if constexpr (std::is_same<H, __nv_bfloat16>::value)
        MACKO_WGMMA_64x256x16("bf16", d, da, db);
    else
        MACKO_WGMMA_64x256x16("f16", d, da, db);
}

/* Keeps the compiler from moving accesses of the accumulators across the asynchronous instructions. */
__device__ __forceinline__ void wg_fence_acc(float (&d)[128])
{
#pragma unroll
    for (int i = 0; i < 128; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

#endif

template <typename H>
__global__ void __launch_bounds__(kThreads, 1)
    panel_wg_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                    const PanelParams<H> p)
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
    if (alpha == 0.0f) {
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

    if (wg == 0) { /* producer: one thread */
        if (tid == 0)
            for (int kt = 0; kt < ktiles; kt++) {
                const int s = kt % kStages;
                if (kt >= kStages)
                    mbar_wait(bars + 8 * (kStages + s), (uint32_t)((kt / kStages - 1) & 1));
                mbar_arrive_tx(bars + 8 * s, kStageA + kStageB);
                tma_load_2d(sA + s * kStageA, &tm_a, kt * kBK, m0, bars + 8 * s);
                tma_load_2d(sB + s * kStageB, &tm_b, kt * kBK, n0, bars + 8 * s);
            }
        return;
    }

    /* consumers: rows cw*64 .. cw*64 + 63 of the tile */
    const int cw = wg - 1, t = tid & 127, warp = t >> 5, lane = t & 31;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; i++)
        d[i] = 0.0f;
    for (int kt = 0; kt < ktiles; kt++) {
        const int s = kt % kStages;
        mbar_wait(bars + 8 * s, (uint32_t)((kt / kStages) & 1));
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
        if (kt > 0)
            mbar_arrive(bars + 8 * (kStages + (kt - 1) % kStages));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    wg_fence_acc(d);

    /* The epilogue goes through shared memory (the ring is free: every stage has been consumed), so that C is read
     * and written a column at a time, coalesced. Accumulator i of a thread is row 16*warp + lane/4 + 8*((i >> 1) & 1)
     * of its warpgroup's 64, column 8*(i >> 2) + 2*(lane & 3) + (i & 1); the tile is stored column-major with a
     * column stride of kCStride floats (132: the 32 lanes of a store hit 32 different banks). */
    asm volatile("bar.sync 1, 256;\n" ::: "memory"); /* both consumer warpgroups are done with the ring */
    float *ct = reinterpret_cast<float *>(wg_smem + (base - raw));
    {
        const int r0 = cw * 64 + 16 * warp + (lane >> 2), c0 = 2 * (lane & 3);
#pragma unroll
        for (int i = 0; i < 128; i++)
            ct[(8 * (i >> 2) + c0 + (i & 1)) * kCStride + r0 + 8 * ((i >> 1) & 1)] = d[i];
    }
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    for (int x = tid - 128; x < kBM * kBN; x += 256) {
        const int row = x % kBM, cl = x / kBM, pr = m0 + row, col = n0 + cl;
        if (pr < p.prow && col < p.n)
            panel_store_c(p, p.row0 + pr, col, ct[cl * kCStride + row], alpha, beta);
    }
#else
    (void)tm_a;
    (void)tm_b;
    (void)p;
#endif
}

/* cuTensorMapEncodeTiled, reached once through the runtime (no link against libcuda). */
typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encoder()
{
    static EncodeTiled fn = []() -> EncodeTiled {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) !=
                cudaSuccess ||
            q != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            return nullptr;
        }
        return reinterpret_cast<EncodeTiled>(f);
    }();
    return fn;
}

/* A 2-D tensor map of 16-bit elements: `inner` contiguous elements (K) per line, `lines` lines `ld` elements apart,
 * boxes of 64 x box_lines, 128-byte swizzle, zero fill out of bounds. */
template <typename H>
bool encode_map(CUtensorMap *m, const H *ptr, int64_t inner, int64_t lines, int64_t ld, int box_lines)
{
    const EncodeTiled fn = encoder();
    if (fn == nullptr)
        return false;
    const cuuint64_t dims[2] = {(cuuint64_t)inner, (cuuint64_t)lines};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * 2};
    const cuuint32_t box[2] = {(cuuint32_t)kBK, (cuuint32_t)box_lines};
    const cuuint32_t estr[2] = {1, 1};
    const CUtensorMapDataType t =
        std::is_same<H, __nv_bfloat16>::value ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return fn(m, t, 2, const_cast<H *>(ptr), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
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

template <typename H> int panel_wg_gemm(const PanelParams<H> &p, cudaStream_t st)
{
    CUtensorMap ta, tb;
    if (!encode_map<H>(&ta, p.panel, p.ldp, p.prow, p.ldp, kBM) || !encode_map<H>(&tb, p.b, p.cols, p.n, p.ldb, kBN))
        return (int)cudaErrorInvalidValue;
    const dim3 grid((unsigned)((p.prow + kBM - 1) / kBM), (unsigned)((p.n + kBN - 1) / kBN));
    panel_wg_kernel<H><<<grid, kThreads, kSmem, st>>>(ta, tb, p);
    return (int)cudaGetLastError();
}

template int panel_wg_prepare<__half>();
template int panel_wg_prepare<__nv_bfloat16>();
template int panel_wg_gemm<__half>(const PanelParams<__half> &, cudaStream_t);
template int panel_wg_gemm<__nv_bfloat16>(const PanelParams<__nv_bfloat16> &, cudaStream_t);
