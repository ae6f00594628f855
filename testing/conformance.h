/* The conformance harness of the GPU products (issues 14 and 17): the precision traits, the tolerances and the result
 * checker, defined once for macko_?spmv, macko_?spmm and macko_?spmv_strided_batched, the generic macko_spmv_ex /
 * macko_spmm_ex (bf16, and fp16 / bf16 matrices with fp32 vectors) and any later path of them (a test forces the
 * path with macko_plan_override, src/plan.h, and calls check_product).
 *
 * All routines compute C(:, j) = alpha*op(A)*B(:, j) + beta*C(:, j) for j < n, with B(i, j) at b[i*incb + j*ldb] and
 * C(i, j) at c[i*incc + j*ldc]: SpMV is n = 1 with (incb, incc) = (incx, incy), SpMM has incb = incc = 1, the strided
 * batch (incx, stridex) and (incy, stridey). check_product runs one such call and compares every element with the
 * double host reference mt::ref_spmv (decoded from the host MACKO arrays; for the N:M kind, which has none, summed
 * over the nonzeros of the dense matrix m, test_gpu_nm.cpp) and, where the shapes allow, with the
 * vendor libraries on the same matrix:
 *   cuBLAS on the matrix made dense: cublasGemmEx (fp16 or bf16 A/B/C, CUBLAS_COMPUTE_32F; SpMV too, as N = 1),
 *     cublasSgemv / Sgemm (fp32; also fp16 / bf16 matrices with fp32 vectors: their values widened to fp32 are
 *     exact), cublasDgemv / Dgemm (fp64), cublas{HSH,S,D}gemvStridedBatched for the strided batch;
 *   cuSPARSE on the CSR of op(A) (int32 indices, op N): cusparseSpMV (unit strides) / cusparseSpMM (column-major B
 *     and C), values and vectors of the vector type (fp16 / bf16 with CUDA_R_32F compute, fp32, fp64 with
 *     CUDA_R_64F); the mixed precisions again through the matrix widened to fp32.
 *
 * Tolerances (k = stored nonzeros the output element sums over; S = |alpha| * sum |a_ij b_j| + |beta c_old|, all
 * in double; u = the accumulation's unit roundoff: 2^-24 for fp32 compute, 2^-53 for fp64):
 *   fp16 output: |c - ref| <= 2^-10 |ref| + 2 (k + 4) u S + 2^-24   (fp32 accumulation, then one rounding to fp16
 *                and its subnormal spacing), and the relative L2 error per column < 1e-3;
 *   bf16 output: |c - ref| <= 2^-7 |ref| + 2 (k + 4) u S + 1e-37    (twice bf16's unit roundoff 2^-8, as for fp16),
 *                relative L2 error per column < 8e-3 (one bf16 rounding is about 2^-9 rms);
 *   fp32 output: |c - ref| <= 2 (k + 4) u S + 1e-37,                  relative L2 error per column < 1e-5;
 *   fp64 output: |c - ref| <= 2 (k + 4) 2^-53 S + 1e-300 (the double reference sums in its own order and is inside
 *                the same bound), relative L2 error per column < 1e-12.
 *   macko vs cuBLAS / cuSPARSE: twice the bound; for 16-bit outputs with N > 1 (SpMM) plus u_out / 2 * S (fp16
 *   2^-12 S, bf16 2^-9 S), since cuBLAS may round split-K partial sums to the output type (seen on the H100 for
 *   fp16: errors of ~1e-5 S, where macko matched the reference).
 * A non-finite reference (only where B holds Inf/NaN at a stored column) must be matched in kind: NaN by NaN, an
 * infinity by the same infinity.
 *
 * Inputs are random and never zero. Every element of B's buffer that is not an element of B holds NaN (it must never
 * be read); every element of C's buffer that is not an element of C holds a sentinel (it must survive); C itself is
 * NaN before a beta == 0 call (it must not be read, and every element must be written). */
#pragma once

#include "common.h"
#include "gpu_fixtures.h"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <string>
#include <vector>

namespace conf {

constexpr double kU = 1.0 / 16777216.0; /* 2^-24 */

/* The routines one precision has; SPMV is the n = 1 case of the others. */
enum Routine { SPMV = 0, SPMM = 1, BATCHED = 2 };

/* ---- the precisions: Prec<matrix type, vector type>. H, S and D run the BLAS-letter routines (macko_?spmv, ?spmm,
 * ?spmv_strided_batched); B (bf16 A, x, y), HS and BS (fp16 / bf16 A with fp32 x, y) run macko_spmv_ex /
 * macko_spmm_ex with fp32 compute and have no strided batch. */
template <macko_datatype_t V> struct Elem {
    using type = uint16_t; /* fp16 / bf16 bits */
};
template <> struct Elem<MACKO_R_32F> {
    using type = float;
};
template <> struct Elem<MACKO_R_64F> {
    using type = double;
};

template <macko_datatype_t A, macko_datatype_t V> struct Api { /* the generic routines, compute type 32F */
    using E = typename Elem<V>::type;
    static constexpr bool has_sb = false;
    static macko_status_t spmv(macko_handle_t h, macko_operation_t op, const float *alpha, macko_mat_t M, const E *x,
                               int64_t incx, const float *beta, E *y, int64_t incy)
    {
        return macko_spmv_ex(h, op, alpha, M, x, V, incx, beta, y, V, incy, MACKO_R_32F);
    }
    static macko_status_t mm(macko_handle_t h, macko_operation_t op, int64_t n, const float *alpha, macko_mat_t M,
                             const E *B, int64_t ldb, const float *beta, E *C, int64_t ldc)
    {
        return macko_spmm_ex(h, op, n, alpha, M, B, V, ldb, beta, C, V, ldc, MACKO_R_32F);
    }
    /* never called (has_sb): the generic routines have no strided batch */
    static macko_status_t sb(macko_handle_t, macko_operation_t, const float *, macko_mat_t, const E *, int64_t,
                             int64_t, const float *, E *, int64_t, int64_t, int64_t)
    {
        return MACKO_STATUS_NOT_SUPPORTED;
    }
};
template <> struct Api<MACKO_R_16F, MACKO_R_16F> {
    static constexpr bool has_sb = true;
    static constexpr auto spmv = macko_Hspmv;
    static constexpr auto mm = macko_Hspmm;
    static constexpr auto sb = macko_Hspmv_strided_batched;
};
template <> struct Api<MACKO_R_32F, MACKO_R_32F> {
    static constexpr bool has_sb = true;
    static constexpr auto spmv = macko_Sspmv;
    static constexpr auto mm = macko_Sspmm;
    static constexpr auto sb = macko_Sspmv_strided_batched;
};
template <> struct Api<MACKO_R_64F, MACKO_R_64F> {
    static constexpr bool has_sb = true;
    static constexpr auto spmv = macko_Dspmv;
    static constexpr auto mm = macko_Dspmm;
    static constexpr auto sb = macko_Dspmv_strided_batched;
};

/* The precisions as values, for parameter tables (with_precision below runs a test body with the type). */
enum PrecId { kH, kS, kD, kB, kHS, kBS };
constexpr PrecId kAllPrec[] = {kH, kS, kD, kB, kHS, kBS};

template <macko_datatype_t A_, macko_datatype_t V_> struct Prec : Api<A_, V_> {
    using E = typename Elem<V_>::type;
    static constexpr macko_datatype_t type = A_;  /* the matrix's */
    static constexpr macko_datatype_t vtype = V_; /* x, y, B, C */
    static constexpr bool half = V_ == MACKO_R_16F || V_ == MACKO_R_16BF; /* 16-bit vectors */
    static constexpr bool ahalf = A_ == MACKO_R_16F || A_ == MACKO_R_16BF; /* 16-bit matrix: fp16-exact values */
    static constexpr bool bf16 = V_ == MACKO_R_16BF;
    static constexpr bool dbl = V_ == MACKO_R_64F;
    static constexpr bool letter_routines = A_ == V_ && A_ != MACKO_R_16BF;
    using Scalar = typename std::conditional<dbl, double, float>::type; /* alpha, beta */
    static constexpr macko_datatype_t compute = dbl ? MACKO_R_64F : MACKO_R_32F;
    static constexpr PrecId id = A_ == MACKO_R_16F    ? (V_ == A_ ? kH : kHS)
                                 : A_ == MACKO_R_16BF ? (V_ == A_ ? kB : kBS)
                                 : A_ == MACKO_R_32F  ? kS
                                                      : kD;
    /* H, S, D (the routines' letters), B (bf16), HS / BS (fp16 / bf16 A, fp32 vectors) */
    static std::string name()
    {
        const std::string a = A_ == MACKO_R_16F ? "H" : A_ == MACKO_R_16BF ? "B" : A_ == MACKO_R_32F ? "S" : "D";
        return A_ == V_ ? a : a + "S";
    }
    /* the output's unit roundoff (fp16 2^-11, bf16 2^-8) and the accumulation's (2^-24, fp64 2^-53) */
    static constexpr double out_u = V_ == MACKO_R_16F ? 1.0 / 2048.0 : bf16 ? 1.0 / 256.0 : 0.0;
    static constexpr double acc_u = dbl ? kU / 536870912.0 : kU;
    /* per-column relative L2 error: a few output roundings (bf16: about 2^-9 rms), or of the fp32 / fp64 sum */
    static constexpr double rel_l2_max = V_ == MACKO_R_16F ? 1e-3 : bf16 ? 8e-3 : dbl ? 1e-12 : 1e-5;
    static E from(float f)
    {
        if constexpr (V_ == MACKO_R_16F)
            return mt::float_to_half(f);
        else if constexpr (bf16)
            return mt::float_to_bf16(f);
        else
            return (E)f;
    }
    static double to(E e)
    {
        if constexpr (V_ == MACKO_R_16F)
            return (double)mt::half_to_float(e);
        else if constexpr (bf16)
            return (double)mt::bf16_to_float(e);
        else
            return (double)e;
    }
    static E nan() { return from(std::nanf("")); } /* fp16 0x7E00, bf16 0x7FC0 */
    /* a finite value nobody computes by accident: 1 + 2^-10 (bf16: 1 + 2^-7, its nearest neighbour of 1) */
    static E sentinel() { return from(bf16 ? 1.0078125f : 1.0009765625f); }
    /* 16-bit outputs: twice the final rounding, and the subnormal spacing (fp16 2^-24); all: the sum in acc_u */
    static double tol(double ref, double s, int64_t k)
    {
        const double sum = 2.0 * (double)(k + 4) * acc_u * s;
        return half ? 2.0 * out_u * std::fabs(ref) + sum + (bf16 ? 1e-37 : kU) : sum + (dbl ? 1e-300 : 1e-37);
    }
};
using HP = Prec<MACKO_R_16F, MACKO_R_16F>;
using SP = Prec<MACKO_R_32F, MACKO_R_32F>;
using DP = Prec<MACKO_R_64F, MACKO_R_64F>;
using BP = Prec<MACKO_R_16BF, MACKO_R_16BF>;
using HSP = Prec<MACKO_R_16F, MACKO_R_32F>;
using BSP = Prec<MACKO_R_16BF, MACKO_R_32F>;
/* the precisions of the BLAS-letter routines (the bad-argument walks) */
using AllPrecisions = ::testing::Types<HP, SP, DP>;
/* the matrix types with their own kernels and plans (the path suites: vectors of the matrix's type) */
using Precisions = ::testing::Types<HP, SP, DP, BP>;

/* gtest's names of the precisions in typed test suites: P::name(). */
class PrecisionName {
  public:
    template <class P> static std::string GetName(int) { return P::name(); }
};

std::string prec_name(PrecId p);
/* the PrecIds with a strided batch (the BLAS-letter ones) */
inline bool has_strided_batch(PrecId p) { return p == kH || p == kS || p == kD; }

/* The public name of routine r in precision P ("macko_Hspmv", ..., "macko_spmm_ex"). */
template <class P> std::string routine_name(Routine r)
{
    static const char *const tail[] = {"spmv", "spmm", "spmv_strided_batched"};
    return P::letter_routines ? std::string("macko_") + P::name() + tail[r] : std::string("macko_") + tail[r] + "_ex";
}
/* A label of routine r in precision P for test names: "Hspmv", "BSspmm", ... */
template <class P> std::string routine_label(Routine r)
{
    static const char *const tail[] = {"spmv", "spmm", "spmv_strided_batched"};
    return P::name() + tail[r];
}

/* One call of routine r on the product above: spmv ignores n (1), ldb and ldc; spmm ignores incb and incc (1). */
template <class P>
macko_status_t call(Routine r, macko_handle_t h, macko_operation_t op, int64_t n, const typename P::Scalar *alpha,
                    macko_mat_t A, const typename P::E *B, int64_t incb, int64_t ldb, const typename P::Scalar *beta,
                    typename P::E *C, int64_t incc, int64_t ldc)
{
    if (r == SPMV)
        return P::spmv(h, op, alpha, A, B, incb, beta, C, incc);
    if (r == SPMM)
        return P::mm(h, op, n, alpha, A, B, ldb, beta, C, ldc);
    return P::sb(h, op, alpha, A, B, incb, ldb, beta, C, incc, ldc, n);
}

/* v in P's element type; a strided vector: v's values at stride inc, the gaps holding `gap`. */
template <class P> std::vector<typename P::E> encode(const std::vector<float> &v, int64_t inc = 1,
                                                     typename P::E gap = P::nan())
{
    const size_t len = v.empty() ? 0 : (size_t)((int64_t)(v.size() - 1) * inc + 1);
    std::vector<typename P::E> out(len, gap);
    for (size_t i = 0; i < v.size(); i++)
        out[i * (size_t)inc] = P::from(v[i]);
    return out;
}

/* Elements of a vector of P's type as doubles. */
template <class P> std::vector<double> decode(const typename P::E *e, size_t count, int64_t inc = 1)
{
    std::vector<double> out(count);
    for (size_t i = 0; i < count; i++)
        out[i] = P::to(e[i * (size_t)inc]);
    return out;
}

/* One product and everything check_product checks about it. The setters chain: Case().on(op).scalars(a, b)... */
struct Case {
    Routine routine = SPMV;
    macko_operation_t op = MACKO_OPERATION_NON_TRANSPOSE;
    float alpha = 1.0f, beta = 0.0f;
    int64_t n = 1;
    /* SPMV: (incb, incc) = (incx, incy). SPMM: ldb = max(k, 1) + ldb_extra, ldc = max(m, 1) + ldc_extra. BATCHED:
     * (incb, ldb) = (incx, stridex), (incc, ldc) = (incy, stridey). */
    int64_t incb = 1, ldb = 0, incc = 1, ldc = 0, ldb_extra = 0, ldc_extra = 0;
    macko_pointer_mode_t mode = MACKO_POINTER_MODE_HOST;
    bool cublas = true;      /* also compare with cuBLAS and cuSPARSE (where they take the strides) */
    bool positive = false;   /* B and C_old hold |random| (all-positive data: no cancellation) */
    uint64_t seed = 1;       /* B: random_vector(k*n, seed*7 + 1), C_old: random_vector(m*n, seed*7 + 2) */
    const std::vector<float> *bcol = nullptr; /* else every column of B is this vector (may hold Inf/NaN) */

    Case() = default;
    explicit Case(Routine r, int64_t cols = 1) : routine(r), n(cols) {}
    Case &on(macko_operation_t o) { op = o; return *this; }
    Case &scalars(float a, float b) { alpha = a; beta = b; return *this; }
    Case &strides(int64_t ib, int64_t lb, int64_t ic, int64_t lc)
    {
        incb = ib, ldb = lb, incc = ic, ldc = lc;
        return *this;
    }
    Case &extra_ld(int64_t eb, int64_t ec) { ldb_extra = eb, ldc_extra = ec; return *this; }
    Case &pointers(macko_pointer_mode_t m) { mode = m; return *this; }
    Case &from_seed(uint64_t s) { seed = s; return *this; }
    Case &every_column(const std::vector<float> *v) { bcol = v; return *this; }
    Case &no_cublas() { cublas = false; return *this; }
    Case &all_positive() { positive = true; return *this; }
};

/* Runs c on A (made from m) through handle h and checks it (above); blas NULL: no cuBLAS / cuSPARSE comparison.
 * Failures are reported through gtest; a fatal one (a failed call or copy) ends the check. */
template <class P> void check_product(macko_handle_t h, gt::Blas *blas, const mt::Dense &m, macko_mat_t A,
                                      const Case &c);

/* The relative L2 error of got against the double reference alpha*op(A)*x + beta*y0 (y0 NULL: beta unused, must be
 * 0), all vectors of P's type with len(x) and len(y) from A and op. */
template <class P>
double error_vs_reference(macko_mat_t A, macko_operation_t op, double alpha, const typename P::E *x, int64_t incx,
                          double beta, const typename P::E *y0, const typename P::E *got, int64_t incy);

/* A fixture whose tests share one handle and one cuBLAS handle, made for the suite when a GPU is there. */
class GpuSuite : public ::testing::Test {
  public:
    static void SetUpTestSuite();
    static void TearDownTestSuite();

  protected:
    static macko_handle_t handle();
    static gt::Blas *blas();
    void SetUp() override;
};

/* Runs f with precision p: f(HP{}), f(SP{}), ... */
template <class F> void with_precision(PrecId p, F f)
{
    switch (p) {
    case kH: f(HP{}); break;
    case kS: f(SP{}); break;
    case kD: f(DP{}); break;
    case kB: f(BP{}); break;
    case kHS: f(HSP{}); break;
    case kBS: f(BSP{}); break;
    }
}

} // namespace conf
