/* Device code shared by the tensor-core paths (kernels/spmm_tc.cu, kernels/spmm_panel.cu, ...; the cp.async wrappers
 * also by the fp32 N:M SIMT kernel, kernels/nm_gen.cu): PTX wrappers of
 * ldmatrix, mma.sync m16n8k16 (fp16 or bf16 operands, fp32 accumulators) and cp.async, the conversions of the
 * 16-bit value type H (__half or __nv_bfloat16), and the exact row product that replaces a NaN sum (also for fp32
 * values: the SIMT path, kernels/spmm_simt.cu). Both 16-bit types are
 * 16 bits with the sign in bit 15, so everything but the conversions and the MMA instruction moves raw bits and is
 * the same for both. Header-only, sm_80 and newer (the mbarrier and bulk-copy wrappers: sm_90 and newer). */
#ifndef MACKO_MMA_CUH
#define MACKO_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

/* The conversions of a 16-bit value type: to_float, from_float (round to nearest even), from_bits. */
template <typename H> struct Tc16;
template <> struct Tc16<__half> {
    static __device__ __forceinline__ float to_float(__half h) { return __half2float(h); }
    static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
    static __device__ __forceinline__ __half from_bits(unsigned short v) { return __ushort_as_half(v); }
};
template <> struct Tc16<__nv_bfloat16> {
    static __device__ __forceinline__ float to_float(__nv_bfloat16 h) { return __bfloat162float(h); }
    static __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
    static __device__ __forceinline__ __nv_bfloat16 from_bits(unsigned short v) { return __ushort_as_bfloat16(v); }
};

static __device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Shared-memory loads at 32-bit shared addresses (records and units staged by the tile and N:M kernels). */
static __device__ __forceinline__ void lds128(uint32_t (&r)[4], uint32_t a)
{
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
static __device__ __forceinline__ uint32_t lds32(uint32_t a)
{
    uint32_t r;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(r) : "r"(a));
    return r;
}
static __device__ __forceinline__ uint32_t ldsu16(uint32_t a)
{
    unsigned short r;
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(r) : "r"(a));
    return r;
}

/* d = the bytes of {b, a} that selector s picks (PTX prmt.b32, default mode) */
static __device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t s)
{
    uint32_t r;
    asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(a), "r"(b), "r"(s));
    return r;
}
/* a * b mod 2^32 as an IMAD (the FMA pipe), also where b is a power of two that the compiler would make a shift (the
 * ALU pipe) */
static __device__ __forceinline__ uint32_t mul_lo(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm("mul.lo.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

static __device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

static __device__ __forceinline__ void ldsm_x2(uint32_t (&r)[2], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr)
                 : "memory");
}

/* d += a * b for one 16 x 8 x 16 tile of H operands (row-major A fragment, column-major B fragment; the fragments'
 * layout is the same for fp16 and bf16). */
template <typename H>
static __device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    if constexpr (std::is_same<H, __nv_bfloat16>::value)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* 16 bytes global -> shared; bytes < 16 are read, the rest zero-filled (0: nothing read). */
static __device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

/* 4 bytes global -> shared (through L1: the fp32 N:M values where a row is not 16-byte aligned). */
static __device__ __forceinline__ void cp_async4(uint32_t dst, const void *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}

static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/* Waits until at most N of this thread's committed groups are still in flight. */
template <int N> static __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* mbarriers and the bulk-copy engine (sm_90 and newer; the sm_90a kernels through wgmma.cuh, the tile kernel). */
static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* Arrives on bar and adds `bytes` to the transactions the current phase waits for. */
static __device__ __forceinline__ void mbar_arrive_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/* Ends bar's life as an mbarrier, so that its bytes may hold anything else (PTX asks for it before the location is
 * put to another use, and a block's shared memory is the next block's on the SM). */
static __device__ __forceinline__ void mbar_inval(uint32_t bar)
{
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/* Waits until the phase of bar with this parity has completed. */
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

/* `bytes` (a multiple of 16) from global src to shared dst (both 16-byte aligned) with the bulk-copy engine; completes
 * its bytes on bar. */
static __device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
#endif

/* A stored value of a MACKO encoding as fp32, and whether it is a nonzero (value bits other than the sign set: +-0 is
 * padding in every type): the 16-bit types through their raw bits, fp32 itself (the SIMT path, spmm_simt.cu). */
template <typename H> static __device__ __forceinline__ bool stored_value(const H *values, int k, float &v)
{
    const unsigned short bits = __ldg(reinterpret_cast<const unsigned short *>(values) + k);
    v = Tc16<H>::to_float(Tc16<H>::from_bits(bits));
    return (bits & 0x7FFFu) != 0;
}
static __device__ __forceinline__ bool stored_value(const float *values, int k, float &v)
{
    v = __ldg(values + k);
    return (__float_as_uint(v) & 0x7FFFFFFFu) != 0u;
}
template <typename H> static __device__ __forceinline__ float value_as_float(H x) { return Tc16<H>::to_float(x); }
static __device__ __forceinline__ float value_as_float(float x) { return x; }

/* The exact sum of row r of a MACKO encoding (16-bit or fp32 values) times bj (a column of B of the same type) over
 * the row's stored nonzeros, in entry order, fp32: what replaces an element whose tile product is NaN (a zero of the
 * dense tile times an Inf of B). */
template <typename H>
static __device__ __forceinline__ float exact_row_dot(const int32_t *row_ptr, const uint32_t *dwords, const H *values,
                                                      const H *bj, int r)
{
    const int b = __ldg(row_ptr + r), e = __ldg(row_ptr + r + 1);
    float acc = 0.0f;
    int col = -1;
    for (int k = b; k < e; k++) {
        col += (int)((__ldg(dwords + (k >> 3)) >> (4 * (k & 7))) & 15u) + 1;
        float v;
        if (stored_value(values, k, v))
            acc = fmaf(v, value_as_float(bj[col]), acc);
    }
    return acc;
}

#endif
