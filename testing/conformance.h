/* The conformance harness of the GPU products (issue 14): the precision traits, the tolerances and the result checker,
 * defined once for macko_?spmv, macko_?spmm and macko_?spmv_strided_batched (and any later path of them: a test
 * forces the path with macko_plan_override, src/plan.h, and calls check_product).
 *
 * All three routines compute C(:, j) = alpha*op(A)*B(:, j) + beta*C(:, j) for j < n, with B(i, j) at
 * b[i*incb + j*ldb] and C(i, j) at c[i*incc + j*ldc]: SpMV is n = 1 with (incb, incc) = (incx, incy), SpMM has
 * incb = incc = 1, the strided batch (incx, stridex) and (incy, stridey). check_product runs one such call and compares
 * every element with the double host reference mt::ref_spmv (decoded from the host MACKO arrays) and, where the shapes
 * allow, with cuBLAS on the same matrix made dense (cublasGemmEx fp16 / CUBLAS_COMPUTE_32F or cublasSgemv / Sgemm;
 * cublasHSHgemvStridedBatched / cublasSgemvStridedBatched for the strided batch).
 *
 * Tolerances (u = 2^-24, the fp32 unit roundoff; k = stored nonzeros the output element sums over;
 * S = |alpha| * sum |a_ij b_j| + |beta c_old|, all in double):
 *   fp16 output: |c - ref| <= 2^-10 |ref| + 2 (k + 4) u S + 2^-24   (fp32 accumulation, then one rounding to fp16
 *                and its subnormal spacing), and the relative L2 error per column < 1e-3;
 *   fp32 output: |c - ref| <= 2 (k + 4) u S + 1e-37,                  relative L2 error per column < 1e-5.
 *   macko vs cuBLAS: twice the bound; for cublasGemmEx in fp16 with N > 1 (SpMM) plus 2^-12 S, since cuBLAS may
 *   round split-K partial sums to fp16 (seen on the H100: errors of ~1e-5 S, where macko matched the reference).
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

/* ---- the two precisions: Prec<uint16_t> (fp16 bits: macko_half) and Prec<float> */
template <class E> struct Api;
template <> struct Api<uint16_t> {
    static constexpr auto spmv = macko_Hspmv;
    static constexpr auto mm = macko_Hspmm;
    static constexpr auto sb = macko_Hspmv_strided_batched;
};
template <> struct Api<float> {
    static constexpr auto spmv = macko_Sspmv;
    static constexpr auto mm = macko_Sspmm;
    static constexpr auto sb = macko_Sspmv_strided_batched;
};
template <> struct Api<double> {
    static constexpr auto spmv = macko_Dspmv;
    static constexpr auto mm = macko_Dspmm;
    static constexpr auto sb = macko_Dspmv_strided_batched;
};

template <class E_> struct Prec : Api<E_> {
    using E = E_;
    static constexpr bool half = sizeof(E) == 2;
    static constexpr bool dbl = sizeof(E) == 8;
    using Scalar = typename std::conditional<dbl, double, float>::type; /* alpha, beta */
    static constexpr macko_datatype_t type = half ? MACKO_R_16F : dbl ? MACKO_R_64F : MACKO_R_32F;
    static constexpr char letter = half ? 'H' : dbl ? 'D' : 'S';
    static constexpr double rel_l2_max = half ? 1e-3 : dbl ? 1e-13 : 1e-5;
    static E from(float f)
    {
        if constexpr (half)
            return mt::float_to_half(f);
        else
            return (E)f;
    }
    static double to(E e)
    {
        if constexpr (half)
            return (double)mt::half_to_float(e);
        else
            return (double)e;
    }
    static E nan() { return from(std::nanf("")); } /* fp16 0x7E00 */
    /* 1.0009765625: a finite value nobody computes by accident */
    static E sentinel() { return from(1.0009765625f); }
    /* fp16: 2^-10 |ref| for the final rounding and 2^-24 for its subnormal spacing; both: the fp32 sum */
    static double tol(double ref, double s, int64_t k)
    {
        const double sum = 2.0 * (double)(k + 4) * kU * s;
        return half ? std::ldexp(std::fabs(ref), -10) + sum + kU : sum + 1e-37;
    }
};
using HP = Prec<uint16_t>;
using SP = Prec<float>;
using DP = Prec<double>; /* the bad-argument walks so far; the product checks of check_product are H and S */
using AllPrecisions = ::testing::Types<HP, SP, DP>;

/* gtest's names of the precisions in typed test suites: H and S. */
using Precisions = ::testing::Types<HP, SP>;
class PrecisionName {
  public:
    template <class P> static std::string GetName(int) { return std::string(1, P::letter); }
};

/* The public name of routine r in precision P ("macko_Hspmv", ...). */
template <class P> std::string routine_name(Routine r)
{
    static const char *const tail[] = {"spmv", "spmm", "spmv_strided_batched"};
    return std::string("macko_") + P::letter + tail[r];
}

/* One call of routine r on the product above: spmv ignores n (1), ldb and ldc; spmm ignores incb and incc (1). */
template <class P>
macko_status_t call(Routine r, macko_handle_t h, macko_operation_t op, int64_t n, const float *alpha, macko_mat_t A,
                    const typename P::E *B, int64_t incb, int64_t ldb, const float *beta, typename P::E *C,
                    int64_t incc, int64_t ldc)
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
    bool cublas = true;      /* also compare with cuBLAS (not for fp16 SpMV with inc != 1) */
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

/* Runs c on A (made from m) through handle h and checks it (above); blas NULL: no cuBLAS comparison. Failures are
 * reported through gtest; a fatal one (a failed call or copy) ends the check. */
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

/* Runs f with the precision named by letter ('H' or 'S'): f(HP{}) or f(SP{}). */
template <class F> void with_precision(char letter, F f)
{
    if (letter == 'H')
        f(HP{});
    else
        f(SP{});
}

} // namespace conf
