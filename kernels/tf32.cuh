/* The split-TF32 products of fp32 on the tensor cores (kernels/spmm_simt.cu's TF32x3 form): an fp32 operand x = hi +
 * lo, both TF32 values, and x * y taken as lo(x) hi(y) + hi(x) lo(y) + hi(x) hi(y) by three mma.m16n8k8 on TF32 (the
 * dropped lo(x) lo(y) is below 2^-22 of |x y|, the rounding of lo about as much). The tensor cores' own fp32 sums
 * truncate: a caller keeps their chains short and adds their results in fp32 (spmm_simt.cu: per K-stage of 64).
 * sm_80 and newer. Internal, device code. */
#ifndef MACKO_TF32_CUH
#define MACKO_TF32_CUH

#include <cuda_runtime.h>

#include <stdint.h>

/* x = hi + lo: hi keeps x's sign, exponent and 10 leading mantissa bits (a truncation: |hi| <= |x|, never Inf from a
 * finite x), lo is the rest (exact in fp32) rounded to TF32 (cvt.rna). An Inf gives hi = Inf, lo = NaN. */
static __device__ __forceinline__ void tf32_split(uint32_t x, uint32_t &hi, uint32_t &lo)
{
    hi = x & 0xFFFFE000u;
    const float rest = __uint_as_float(x) - __uint_as_float(hi);
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(lo) : "f"(rest));
}

/* d += a * b for one 16 x 8 x 8 tile of TF32 operands (the fragments' layout is that of mma_16816 with one 32-bit
 * element in place of each pair of 16-bit ones). */
static __device__ __forceinline__ void mma_1688_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#endif
