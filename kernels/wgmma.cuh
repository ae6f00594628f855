/* What the sm_90a kernels (spmm_panel_wg.cu, spmm_tiles_wg.cu, nm_sp24_wg.cu) share: tensor-memory-accelerator and
 * cluster wrappers (the mbarrier and bulk-copy ones are macko_mma.cuh's, which the tile kernel uses too), the
 * shared-memory matrix descriptor of the 128-byte swizzled K-major layout, the wgmma instruction, and the host side of
 * the tensor maps (the driver's encoder, reached once through the runtime). Included by those files only; everything
 * here has internal linkage. */
#ifndef MACKO_WGMMA_CUH
#define MACKO_WGMMA_CUH

#include "macko_mma.cuh"

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

#if MACKO_WG_DEVICE
/* The box of tensor map tm at element coordinates (c0: K, c1: row or column) into shared memory at dst; completes
 * its bytes on bar. */
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *tm, int c0, int c1, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

/* The same for a 3-D tensor map at element coordinates (c0, c1, c2). */
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *tm, int c0, int c1, int c2, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
                 "[%5];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}

/* Shared-memory matrix descriptor of a 128-byte swizzled K-major operand: start address, stride between 8-row groups
 * 1024 bytes (the leading offset is unused by this layout and set to 1), swizzle mode 1 (128 bytes). */
__device__ __forceinline__ uint64_t wg_desc(uint32_t saddr)
{
    return (uint64_t)((saddr & 0x3FFFFu) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

/* The fp32 accumulators of the 64 x N wgmma tiles: register lists (operands %0 .. %(N/2 - 1)) and their
 * constraints, each size extending the one before: 32 (64 x 64), 64 (64 x 128), 128 (64 x 256). */
#define MACKO_WG_ACC_LIST32 \
        "%0, %1, %2, %3, %4, %5, %6, %7," \
        "%8, %9, %10, %11, %12, %13, %14, %15," \
        "%16, %17, %18, %19, %20, %21, %22, %23," \
        "%24, %25, %26, %27, %28, %29, %30, %31"
#define MACKO_WG_ACC_LIST64 \
    MACKO_WG_ACC_LIST32 "," \
        "%32, %33, %34, %35, %36, %37, %38, %39," \
        "%40, %41, %42, %43, %44, %45, %46, %47," \
        "%48, %49, %50, %51, %52, %53, %54, %55," \
        "%56, %57, %58, %59, %60, %61, %62, %63"
#define MACKO_WG_ACC_LIST \
    MACKO_WG_ACC_LIST64 "," \
        "%64, %65, %66, %67, %68, %69, %70, %71," \
        "%72, %73, %74, %75, %76, %77, %78, %79," \
        "%80, %81, %82, %83, %84, %85, %86, %87," \
        "%88, %89, %90, %91, %92, %93, %94, %95," \
        "%96, %97, %98, %99, %100, %101, %102, %103," \
        "%104, %105, %106, %107, %108, %109, %110, %111," \
        "%112, %113, %114, %115, %116, %117, %118, %119," \
        "%120, %121, %122, %123, %124, %125, %126, %127"
#define MACKO_WG_ACC_OPS32(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define MACKO_WG_ACC_OPS64(d) \
    MACKO_WG_ACC_OPS32(d), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define MACKO_WG_ACC_OPS(d) \
    MACKO_WG_ACC_OPS64(d), \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

/* d += A * B for one 64 x 256 x 16 step, A and B from shared memory (descriptors); the operand type is the string T. */
#define MACKO_WGMMA_64x256x16(T, d, da, db) \
    asm volatile("{\nwgmma.mma_async.sync.aligned.m64n256k16.f32." T "." T " {\n" MACKO_WG_ACC_LIST \
                 "}, %128, %129, 1, 1, 1, 0, 0;\n}\n" \
                 : MACKO_WG_ACC_OPS(d) \
                 : "l"(da), "l"(db))

/* The same with A from registers: a[0..3] hold the warp's 16 x 16 piece of A as the A fragment of mma.m16n8k16
 * (rows lane/4 and lane/4 + 8, columns 2*(lane%4) + {0, 1} and + 8). The registers are read asynchronously: they must
 * stay untouched until the group completes (wg_fence_regs after the wait). */
#define MACKO_WGMMA_64x256x16_RS(T, d, a, db) \
    asm volatile("{\nwgmma.mma_async.sync.aligned.m64n256k16.f32." T "." T " {\n" MACKO_WG_ACC_LIST \
                 "}, {%128, %129, %130, %131}, %132, 1, 1, 1, 0;\n}\n" \
                 : MACKO_WG_ACC_OPS(d) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db))

template <typename H> __device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db)
{
    if constexpr (std::is_same<H, __nv_bfloat16>::value)
        MACKO_WGMMA_64x256x16("bf16", d, da, db);
    else
        MACKO_WGMMA_64x256x16("f16", d, da, db);
}

template <typename H>
__device__ __forceinline__ void wgmma_m64n256k16_rs(float (&d)[128], const uint32_t (&a)[4], uint64_t db)
{
    if constexpr (std::is_same<H, __nv_bfloat16>::value)
        MACKO_WGMMA_64x256x16_RS("bf16", d, a, db);
    else
        MACKO_WGMMA_64x256x16_RS("f16", d, a, db);
}

/* The narrower shapes of MACKO_WGMMA_64x256x16_RS: SHAPE "m64n128k16" with LIST / OPS the 64-accumulator lists and
 * AREGS "{%64, %65, %66, %67}, %68", or "m64n64k16" with the 32-accumulator lists and "{%32, %33, %34, %35}, %36". */
#define MACKO_WGMMA_RS_NARROW(SHAPE, T, LIST, OPS, AREGS, d, a, db) \
    asm volatile("{\nwgmma.mma_async.sync.aligned." SHAPE ".f32." T "." T " {\n" LIST "}, " AREGS ", 1, 1, 1, 0;\n}\n" \
                 : OPS(d) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db))

/* d += A * B for one 64 x N x 16 step (N = 64, 128 or 256; N / 2 accumulators), A from registers as above. */
template <typename H, int NA> __device__ __forceinline__ void wgmma_rs(float (&d)[NA], const uint32_t (&a)[4], uint64_t db)
{
    static_assert(NA == 32 || NA == 64 || NA == 128, "64 x 64, 64 x 128 or 64 x 256");
    constexpr bool bf = std::is_same<H, __nv_bfloat16>::value;
    if constexpr (NA == 128) {
        wgmma_m64n256k16_rs<H>(d, a, db);
    } else if constexpr (NA == 64) {
        if constexpr (bf)
            MACKO_WGMMA_RS_NARROW("m64n128k16", "bf16", MACKO_WG_ACC_LIST64, MACKO_WG_ACC_OPS64,
                                  "{%64, %65, %66, %67}, %68", d, a, db);
        else
            MACKO_WGMMA_RS_NARROW("m64n128k16", "f16", MACKO_WG_ACC_LIST64, MACKO_WG_ACC_OPS64,
                                  "{%64, %65, %66, %67}, %68", d, a, db);
    } else {
        if constexpr (bf)
            MACKO_WGMMA_RS_NARROW("m64n64k16", "bf16", MACKO_WG_ACC_LIST32, MACKO_WG_ACC_OPS32,
                                  "{%32, %33, %34, %35}, %36", d, a, db);
        else
            MACKO_WGMMA_RS_NARROW("m64n64k16", "f16", MACKO_WG_ACC_LIST32, MACKO_WG_ACC_OPS32,
                                  "{%32, %33, %34, %35}, %36", d, a, db);
    }
}

/* Keeps the compiler from reusing registers an asynchronous wgmma may still read. */
template <int N> __device__ __forceinline__ void wg_fence_regs(uint32_t (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+r"(r[i])::"memory");
}

/* Keeps the compiler from moving accesses of the accumulators across the asynchronous instructions. */
template <int NA> __device__ __forceinline__ void wg_fence_acc(float (&d)[NA])
{
#pragma unroll
    for (int i = 0; i < NA; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

#endif

#if MACKO_WG_DEVICE
/* Thread-block clusters: this thread waits until every (non-exited) thread of the cluster has arrived; the shared-
 * memory writes before the barrier are visible to the cluster's reads after it. */
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

/* The address of shared-memory location `addr` of this block in the block of cluster rank `rank`. */
__device__ __forceinline__ uint32_t cluster_map(uint32_t addr, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

/* tma_load_2d for every block of the cluster in cta_mask (bit r: the block of rank r): the box lands at offset dst of
 * each such block's shared memory and completes its bytes on that block's mbarrier at offset bar. */
__device__ __forceinline__ void tma_load_2d_mc(uint32_t dst, const CUtensorMap *tm, int c0, int c1, uint32_t bar,
                                               uint16_t cta_mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
                 "[%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
                 : "memory");
}

/* Arrives on an mbarrier of another block of the cluster (an address from cluster_map). The default semantics
 * (release at CTA scope): a .release.cluster arrival fences each time, and with it the consumers of nm_sp24_wg.cu's
 * clusters stalled on that fence for half their cycles (ncu, H200, bench/NOTES.md session 18). */
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* 16 bytes of another block's shared memory (an address from cluster_map). */
__device__ __forceinline__ float4 ld_cluster_f4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* v[0 .. 3] += a and v[4 .. 7] += b: a piece of 8 rows of a C tile, added in that order. */
__device__ __forceinline__ void add8(float (&v)[8], const float4 &a, const float4 &b)
{
    v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
    v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
}

/* Split K's sum through distributed shared memory: v = the 8 floats at shared-memory offset off (a piece of 8 rows of
 * the blocks' fp32 C tiles, 16-byte aligned) summed over the cluster's blocks of rank 0 .. parts - 1 (parts <= KMAX)
 * in rank order from zero, every block's two loads in flight before the first add. From zero, as the fused product's
 * workspace sums its parts, so that both give the same bits. After a cluster barrier that follows the tiles' stores. */
template <int KMAX> __device__ __forceinline__ void cluster_sum8(uint32_t off, int parts, float (&v)[8])
{
    float4 lo[KMAX], hi[KMAX];
#pragma unroll
    for (int k = 0; k < KMAX; k++)
        if (k < parts) {
            const uint32_t ad = cluster_map(off, (uint32_t)k);
            lo[k] = ld_cluster_f4(ad);
            hi[k] = ld_cluster_f4(ad + 16u);
        }
#pragma unroll
    for (int i = 0; i < 8; i++)
        v[i] = 0.0f;
#pragma unroll
    for (int k = 0; k < KMAX; k++)
        if (k < parts)
            add8(v, lo[k], hi[k]);
}

/* Makes this thread's ordinary shared-memory stores visible to the asynchronous proxy (wgmma operands). */
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

/* The epilogue of the 128-row wgmma kernels, in two halves.
 *
 * First half: a consumer thread's NA accumulators of a 64 x 2*NA wgmma tile (128 for 64 x 256) into the block's fp32
 * tile ct in shared memory (column-major, S floats between columns; S = 132 makes the 32 lanes of a store hit 32
 * banks). Accumulator x of the thread is row `row` + 8*((x >> 1) & 1) of the tile, where row = the warpgroup's first
 * row + 16*(warp in the warpgroup) + lane/4, and column 8*(x >> 2) + 2*(lane & 3) + (x & 1). */
template <int S, int NA>
__device__ __forceinline__ void wg_acc_to_smem(float *ct, const float (&d)[NA], int row, int lane)
{
    const int c0 = 2 * (lane & 3);
#pragma unroll
    for (int x = 0; x < NA; x++)
        ct[(8 * (x >> 2) + c0 + (x & 1)) * S + row + 8 * ((x >> 1) & 1)] = d[x];
}

/* Second half: C = alpha * T + beta * C for the BM x BN tile T of sums whose first element is (m0, n0) of C (rows x n),
 * by threads t = 0 .. nt - 1, each step one piece of 8 rows of one column (the pieces of a column are consecutive
 * threads: coalesced). load8(chunk, column, v) gives the tile's 8 sums of rows 8*chunk .. 8*chunk + 7 of that tile
 * column; exact(r, j) the exact product of row r and column j over the stored nonzeros, which replaces a NaN sum (a
 * stored zero times an Inf of B). C's element (r, j) lies at c + r*incc + j*ldc; with vec (incc == 1, ldc % 8 == 0, c
 * 16-byte aligned, m0 % 8 == 0) a full piece is read (beta != 0) and written with one 16-byte access, otherwise an
 * element at a time. beta == 0: C is not read. */
template <typename H, int BM, int BN, typename Load8, typename Exact>
__device__ __forceinline__ void wg_store_tile(int t, int nt, int64_t m0, int64_t n0, int64_t rows, int64_t n, H *c,
                                              int64_t incc, int64_t ldc, bool vec, float alpha, float beta,
                                              Load8 load8, Exact exact)
{
    for (int x = t; x < (BM / 8) * BN; x += nt) {
        const int ch = x % (BM / 8), cl = x / (BM / 8);
        const int64_t r0 = m0 + 8 * ch, j = n0 + cl;
        if (r0 >= rows || j >= n)
            continue;
        float v[8];
        load8(ch, cl, v);
        H *cp = c + r0 * incc + j * ldc;
        if (vec && r0 + 8 <= rows) {
            uint32_t old[4] = {0u, 0u, 0u, 0u}, out[4];
            if (beta != 0.0f) {
                const uint4 o = *reinterpret_cast<const uint4 *>(cp);
                old[0] = o.x, old[1] = o.y, old[2] = o.z, old[3] = o.w;
            }
#pragma unroll
            for (int i = 0; i < 8; i++) {
                if (isnan(v[i]))
                    v[i] = exact(r0 + i, j);
                float y = alpha * v[i];
                if (beta != 0.0f)
                    y = fmaf(beta, Tc16<H>::to_float(Tc16<H>::from_bits((unsigned short)(old[i >> 1] >> (16 * (i & 1))))),
                             y);
                const H h = Tc16<H>::from_float(y);
                const uint32_t bits = *reinterpret_cast<const unsigned short *>(&h);
                out[i >> 1] = (i & 1) ? (out[i >> 1] | (bits << 16)) : bits;
            }
            *reinterpret_cast<uint4 *>(cp) = make_uint4(out[0], out[1], out[2], out[3]);
            continue;
        }
#pragma unroll
        for (int i = 0; i < 8; i++)
            if (r0 + i < rows) {
                const float s = isnan(v[i]) ? exact(r0 + i, j) : v[i];
                H *e = cp + i * incc;
                float y = alpha * s;
                if (beta != 0.0f)
                    y = fmaf(beta, Tc16<H>::to_float(*e), y);
                *e = Tc16<H>::from_float(y);
            }
    }
}

/* load8 of wg_store_tile for a tile in shared memory at cts (32-bit address; column-major, S floats between columns,
 * S % 4 == 0): two 16-byte loads. */
template <int S> __device__ __forceinline__ void wg_smem_load8(uint32_t cts, int ch, int cl, float (&v)[8])
{
    uint32_t u[2][4];
    lds128(u[0], cts + 4u * (uint32_t)(cl * S + 8 * ch));
    lds128(u[1], cts + 4u * (uint32_t)(cl * S + 8 * ch + 4));
#pragma unroll
    for (int i = 0; i < 8; i++)
        v[i] = __uint_as_float(u[i >> 2][i & 3]);
}
#endif

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
 * boxes of 64 x box_lines (64 elements: one 128-byte swizzle row), 128-byte swizzle, zero fill out of bounds. */
template <typename H>
bool encode_map(CUtensorMap *m, const H *ptr, int64_t inner, int64_t lines, int64_t ld, int box_lines)
{
    const EncodeTiled fn = encoder();
    if (fn == nullptr)
        return false;
    const cuuint64_t dims[2] = {(cuuint64_t)inner, (cuuint64_t)lines};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * 2};
    const cuuint32_t box[2] = {(cuuint32_t)64, (cuuint32_t)box_lines};
    const cuuint32_t estr[2] = {1, 1};
    const CUtensorMapDataType t =
        std::is_same<H, __nv_bfloat16>::value ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return fn(m, t, 2, const_cast<H *>(ptr), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* B's tensor maps for column blocks of bn columns, each block's piece copied in `parts` equal boxes (2 where the two
 * blocks of a cluster each copy half of it to both): tb with boxes of bn / parts columns, and tbl for a last column
 * block narrower than bn, with boxes of its columns rounded up to 8 * parts, split in parts (a box mostly past the end
 * of B was measured slow: bench/NOTES.md, session 17). Where no such block exists tbl = tb (the kernels read tbl only
 * for it). Returns the narrow block's columns of B (0: none), or -1 where an encoding failed. */
template <typename H>
int encode_b_maps(CUtensorMap *tb, CUtensorMap *tbl, const H *b, int64_t cols, int64_t n, int64_t ldb, int bn,
                  int parts)
{
    const int q = 8 * parts, rem = (int)(n % bn), boxl = (rem + q - 1) / q * q;
    const int narrow = rem > 0 && boxl < bn ? boxl : 0;
    if (!encode_map<H>(tb, b, cols, n, ldb, bn / parts))
        return -1;
    *tbl = *tb;
    if (narrow > 0 && !encode_map<H>(tbl, b, cols, n, ldb, narrow / parts))
        return -1;
    return narrow;
}

/* A launch configuration in clusters of the given shape (one attribute, held with it: not copyable, as lc points
 * into it), for cudaLaunchKernelEx and cudaOccupancyMaxActiveClusters alike. */
struct ClusterLaunch {
    cudaLaunchConfig_t lc;
    cudaLaunchAttribute attr[1];
    ClusterLaunch(dim3 grid, dim3 block, size_t smem, cudaStream_t st, dim3 cluster) : lc(), attr()
    {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster.x;
        attr[0].val.clusterDim.y = cluster.y;
        attr[0].val.clusterDim.z = cluster.z;
        lc.gridDim = grid;
        lc.blockDim = block;
        lc.dynamicSmemBytes = smem;
        lc.stream = st;
        lc.attrs = attr;
        lc.numAttrs = 1;
    }
    ClusterLaunch(const ClusterLaunch &) = delete;
    ClusterLaunch &operator=(const ClusterLaunch &) = delete;
};

/* Launches kernel(args...) on grid x block with smem bytes of dynamic shared memory in clusters of the given shape,
 * then takes the launch's error. */
template <typename... KArgs, typename... Args>
cudaError_t launch_clusters(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t st,
                            dim3 cluster, Args... args)
{
    ClusterLaunch cl(grid, block, smem, st, cluster);
    const cudaError_t e = cudaLaunchKernelEx(&cl.lc, kernel, args...);
    return e != cudaSuccess ? e : cudaGetLastError();
}

} // namespace

#endif
