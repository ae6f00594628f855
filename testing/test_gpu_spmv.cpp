/* GPU conformance of macko_Hspmv / macko_Sspmv.
 *
 * Every result is checked element by element against the double host reference mt::ref_spmv (decoded from the
 * host MACKO arrays) and, where the shapes allow, against cuBLAS on the same matrix made dense (cublasGemmEx fp16
 * with CUBLAS_COMPUTE_32F for H, cublasSgemv for S).
 *
 * Tolerances (u = 2^-24, the fp32 unit roundoff; k = stored nonzeros the output element sums over;
 * S = |alpha| * sum |a_ij x_j| + |beta y_old|, all in double):
 *   fp16 output: |y - ref| <= 2^-10 |ref| + 2 (k + 4) u S + 2^-24   (fp32 accumulation, then one rounding to fp16
 *                and its subnormal spacing), and the relative L2 error over the vector < 1e-3;
 *   fp32 output: |y - ref| <= 2 (k + 4) u S + 1e-37,                  relative L2 error < 1e-5.
 *   macko vs cuBLAS: twice the bound (both sides round).
 * Non-finite references (only where x holds Inf/NaN at a stored column) must match in kind.
 *
 * Inputs are random and never zero; outputs are poisoned (NaN) before every run, and the gaps of strided vectors
 * hold a sentinel that must survive (y) or NaN that must never be read (x).
 */
#include "common.h"
#include "gpu_fixtures.h"

#include "macko_internal.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {


constexpr double kU = 1.0 / 16777216.0; /* 2^-24 */

/* ---- the two precisions */
struct HP {
    using E = uint16_t;
    static constexpr macko_datatype_t type = MACKO_R_16F;
    static constexpr bool half = true;
    static constexpr double rel_l2_max = 1e-3;
    static E from(float f) { return mt::float_to_half(f); }
    static double to(E e) { return (double)mt::half_to_float(e); }
    static E nan() { return 0x7E00; }
    static E inf() { return 0x7C00; }
    static E sentinel() { return 0x3C01; } /* 1.0009765625: a finite value nobody computes by accident */
    static macko_status_t spmv(macko_handle_t h, macko_operation_t op, const float *a, macko_mat_t A, const E *x,
                               int64_t incx, const float *b, E *y, int64_t incy)
    {
        return macko_Hspmv(h, op, a, A, x, incx, b, y, incy);
    }
    static double tol(double ref, double s, int64_t k)
    {
        return std::ldexp(std::fabs(ref), -10) + 2.0 * (double)(k + 4) * kU * s + kU;
    }
};

struct SP {
    using E = float;
    static constexpr macko_datatype_t type = MACKO_R_32F;
    static constexpr bool half = false;
    static constexpr double rel_l2_max = 1e-5;
    static E from(float f) { return f; }
    static double to(E e) { return (double)e; }
    static E nan() { return std::nanf(""); }
    static E inf() { return INFINITY; }
    static E sentinel() { return 1.0009765625f; }
    static macko_status_t spmv(macko_handle_t h, macko_operation_t op, const float *a, macko_mat_t A, const E *x,
                               int64_t incx, const float *b, E *y, int64_t incy)
    {
        return macko_Sspmv(h, op, a, A, x, incx, b, y, incy);
    }
    static double tol(double, double s, int64_t k) { return 2.0 * (double)(k + 4) * kU * s + 1e-37; }
};

using gt::Blas;
using gt::DevMem;
using gt::Handle;
using gt::make_matrix;
using gt::Mat;

/* A strided vector: len values at stride inc, the gaps filled with `gap`. */
template <class P> std::vector<typename P::E> strided(const std::vector<float> &v, int64_t inc, typename P::E gap)
{
    size_t n = v.empty() ? 0 : (size_t)((int64_t)(v.size() - 1) * inc + 1);
    std::vector<typename P::E> out(n, gap);
    for (size_t i = 0; i < v.size(); i++)
        out[i * (size_t)inc] = P::from(v[i]);
    return out;
}

/* One SpMV case and everything we check about it. */
struct Case {
    macko_operation_t op = MACKO_OPERATION_NON_TRANSPOSE;
    float alpha = 1.0f, beta = 0.0f;
    int64_t incx = 1, incy = 1;
    macko_pointer_mode_t mode = MACKO_POINTER_MODE_HOST;
    bool cublas = true;        /* also compare with cuBLAS (only where inc == 1 for H) */
    uint64_t seed = 1;
    const std::vector<float> *x = nullptr; /* override x (may hold Inf/NaN); else random */
};

template <class P> void run_case(macko_handle_t h, Blas *blas, const mt::Dense &m, macko_mat_t A, const Case &c)
{
    using E = typename P::E;
    const bool opn = c.op == MACKO_OPERATION_NON_TRANSPOSE;
    const int64_t mo = opn ? m.rows : m.cols, ni = opn ? m.cols : m.rows;
    std::vector<float> xv = c.x ? *c.x : mt::random_vector(ni, c.seed * 7 + 1, P::half);
    ASSERT_EQ((int64_t)xv.size(), ni);
    std::vector<float> y0 = mt::random_vector(mo, c.seed * 7 + 2, P::half);
    if (c.beta == 0.0f)
        std::fill(y0.begin(), y0.end(), std::nanf("")); /* must never be read */
    std::vector<E> xh = strided<P>(xv, c.incx, P::nan());
    std::vector<E> yh = strided<P>(y0, c.incy, P::sentinel());

    DevMem dx(xh.size() * sizeof(E)), dy(yh.size() * sizeof(E)), dab(2 * sizeof(float));
    if (!xh.empty()) {
        CUDA_CHECK(cudaMemcpy(dx.p, xh.data(), xh.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    if (!yh.empty()) {
        CUDA_CHECK(cudaMemcpy(dy.p, yh.data(), yh.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    float ab[2] = {c.alpha, c.beta};
    CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
    ASSERT_EQ(macko_set_pointer_mode(h, c.mode), MACKO_STATUS_SUCCESS);
    const float *pa = c.mode == MACKO_POINTER_MODE_DEVICE ? dab.as<float>() : &ab[0];
    const float *pb = c.mode == MACKO_POINTER_MODE_DEVICE ? dab.as<float>() + 1 : &ab[1];

    ASSERT_EQ(P::spmv(h, c.op, pa, A, dx.as<E>(), c.incx, pb, dy.as<E>(), c.incy), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    ASSERT_EQ(macko_set_pointer_mode(h, MACKO_POINTER_MODE_HOST), MACKO_STATUS_SUCCESS);
    std::vector<E> out(yh.size());
    if (!out.empty()) {
        CUDA_CHECK(cudaMemcpy(out.data(), dy.p, out.size() * sizeof(E), cudaMemcpyDeviceToHost));
    }

    /* Reference in double, and the error scale per output element. */
    std::vector<double> xd(xv.size()), yref((size_t)mo), s((size_t)mo, 0.0);
    std::vector<int64_t> k((size_t)mo, 0);
    for (size_t i = 0; i < xv.size(); i++)
        xd[i] = P::to(P::from(xv[i]));
    for (int64_t i = 0; i < mo; i++)
        yref[(size_t)i] = P::to(P::from(y0[(size_t)i]));
    const std::vector<double> yold = yref;
    mt::ref_spmv(A, c.op, c.alpha, xd, c.beta, yref);
    if (c.alpha == 0.0f) /* A and x are not read: y = beta*y_old (ref_spmv would form 0*NaN for a NaN x) */
        for (int64_t i = 0; i < mo; i++)
            yref[(size_t)i] = c.beta == 0.0f ? 0.0 : (double)c.beta * yold[(size_t)i];
    for (int64_t r = 0; r < m.rows; r++)
        for (int64_t j = 0; j < m.cols; j++) {
            double a = m.at(r, j);
            if (a == 0.0)
                continue;
            size_t o = (size_t)(opn ? r : j), in = (size_t)(opn ? j : r);
            s[o] += std::fabs(a * xd[in]);
            k[o]++;
        }
    for (int64_t i = 0; i < mo; i++) {
        s[(size_t)i] = c.alpha == 0.0f ? 0.0 : s[(size_t)i] * std::fabs((double)c.alpha);
        if (c.beta != 0.0f)
            s[(size_t)i] += std::fabs((double)c.beta * yold[(size_t)i]);
    }

    /* Gaps untouched, every element written and within tolerance. */
    std::vector<double> got((size_t)mo);
    int bad = 0;
    for (size_t i = 0; i < out.size(); i++) {
        if ((int64_t)i % c.incy != 0) {
            if (std::memcmp(&out[i], &yh[i], sizeof(E)) != 0 && bad++ < 5)
                ADD_FAILURE() << "y gap element " << i << " was overwritten";
            continue;
        }
        size_t o = i / (size_t)c.incy;
        double g = P::to(out[i]), r = yref[o];
        got[o] = g;
        bool ok = std::isfinite(r) ? std::fabs(g - r) <= P::tol(r, s[o], k[o]) : (std::isnan(r) == std::isnan(g));
        if (!ok && bad++ < 5)
            ADD_FAILURE() << "y[" << o << "] = " << g << ", reference " << r << " (tolerance "
                          << P::tol(r, s[o], k[o]) << ", terms " << k[o] << ")";
    }
    if (mo > 0) {
        bool finite = std::all_of(yref.begin(), yref.end(), [](double v) { return std::isfinite(v); });
        if (finite) {
            EXPECT_LT(mt::rel_l2(got, yref), P::rel_l2_max);
        }
    }

    /* cuBLAS on the dense matrix, same alpha/beta/y_old. */
    if (!blas || !c.cublas || mo == 0 || ni == 0 || bad)
        return;
    if (P::half && (c.incx != 1 || c.incy != 1))
        return;
    std::vector<uint8_t> dense = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, m.cols);
    DevMem dA(dense.size()), dy2(yh.size() * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dA.p, dense.data(), dense.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy2.p, yh.data(), yh.size() * sizeof(E), cudaMemcpyHostToDevice));
    /* Row-major m (rows x cols) is column-major m^T with lda = cols. */
    if (P::half) {
        CUBLAS_CHECK(cublasGemmEx(blas->h, opn ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)mo, 1, (int)ni, &ab[0],
                                  dA.p, CUDA_R_16F, (int)m.cols, dx.p, CUDA_R_16F, (int)ni, &ab[1], dy2.p, CUDA_R_16F,
                                  (int)mo, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else {
        CUBLAS_CHECK(cublasSgemv(blas->h, opn ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m.cols, (int)m.rows, &ab[0],
                                 dA.as<float>(), (int)m.cols, dx.as<float>(), (int)c.incx, &ab[1], dy2.as<float>(),
                                 (int)c.incy));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<E> outc(yh.size());
    CUDA_CHECK(cudaMemcpy(outc.data(), dy2.p, outc.size() * sizeof(E), cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < mo; i++) {
        size_t o = (size_t)i;
        double gc = P::to(outc[o * (size_t)c.incy]), r = yref[o];
        if (!std::isfinite(r))
            continue;
        if (std::fabs(got[o] - gc) > 2.0 * P::tol(r, s[o], k[o]) && bad++ < 5)
            ADD_FAILURE() << "y[" << o << "] = " << got[o] << ", cuBLAS " << gc << ", reference " << r;
    }
}

template <class P> class GpuSpmv : public ::testing::Test {};
using Precisions = ::testing::Types<HP, SP>;
class PrecName {
  public:
    template <typename T> static std::string GetName(int) { return std::is_same<T, HP>::value ? "H" : "S"; }
};
TYPED_TEST_SUITE(GpuSpmv, Precisions, PrecName);

/* ---- shapes x densities, op N and op T, on random matrices (some with empty/full/gappy rows) */
TYPED_TEST(GpuSpmv, ShapesAndDensities)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    Blas blas;
    struct Shape {
        int64_t r, c;
    };
    const Shape shapes[] = {{1, 1}, {1, 7}, {7, 1}, {33, 33}, {4097, 5}, {5, 4097}, {1000, 4097}, {4097, 1000},
                            {20000, 257}, {3, 70000}, {64, 12289}, {100, 28928}, {100, 28929}};
    const double dens[] = {0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
    uint64_t seed = 100;
    for (const Shape &sh : shapes)
        for (double d : dens) {
            /* The big shapes take a subset of densities to keep the run short. */
            if (sh.r * sh.c > 1000000 && !(d == 0.0 || d == 0.05 || d == 0.3 || d == 0.5 || d == 1.0))
                continue;
            SCOPED_TRACE(testing::Message() << sh.r << "x" << sh.c << " d=" << d);
            mt::Dense m = mt::random_dense(sh.r, sh.c, d, ++seed, P::half);
            if (seed % 2 == 0 && sh.r >= 7)
                mt::add_structure(m, seed);
            Mat A;
            make_matrix<P>(h.h, m, true, A);
            if (::testing::Test::HasFatalFailure())
                return;
            for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
                SCOPED_TRACE(op == MACKO_OPERATION_NON_TRANSPOSE ? "op N" : "op T");
                Case c;
                c.op = op;
                c.seed = seed;
                run_case<P>(h.h, &blas, m, A.A, c);
                if (::testing::Test::HasFatalFailure())
                    return;
            }
        }
}

/* ---- alpha/beta combinations x pointer modes x strides */
TYPED_TEST(GpuSpmv, AlphaBetaStridesPointerModes)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    Blas blas;
    mt::Dense m = mt::random_dense(777, 1301, 0.35, 5, P::half);
    mt::add_structure(m, 6);
    Mat A;
    make_matrix<P>(h.h, m, true, A);
    if (::testing::Test::HasFatalFailure())
        return;
    const float vals[] = {0.0f, 1.0f, -0.5f, 2.0f};
    uint64_t seed = 1000;
    for (float alpha : vals)
        for (float beta : vals)
            for (int64_t inc : {1, 2, 3})
                for (macko_pointer_mode_t mode : {MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE})
                    for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
                        SCOPED_TRACE(testing::Message() << "alpha=" << alpha << " beta=" << beta << " inc=" << inc
                                                        << " mode=" << mode << " op=" << op);
                        Case c;
                        c.op = op;
                        c.alpha = alpha;
                        c.beta = beta;
                        c.incx = inc;
                        c.incy = inc == 1 ? 1 : 5 - inc; /* 1/1, 2/3, 3/2 */
                        c.mode = mode;
                        c.seed = ++seed;
                        run_case<P>(h.h, &blas, m, A.A, c);
                        if (::testing::Test::HasFatalFailure())
                            return;
                    }
}

/* ---- alpha == 0 reads neither A nor x (x may be NULL-free garbage: here NaN everywhere) */
TYPED_TEST(GpuSpmv, AlphaZeroReadsNoX)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    mt::Dense m = mt::random_dense(300, 200, 0.5, 9, P::half);
    Mat A;
    make_matrix<P>(h.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    std::vector<float> xn(200, std::nanf(""));
    for (float beta : {0.0f, -0.5f}) {
        Case c;
        c.alpha = 0.0f;
        c.beta = beta;
        c.x = &xn;
        run_case<P>(h.h, nullptr, m, A.A, c);
    }
}

/* ---- zero-sized problems: m == 0 launches nothing (y may be NULL); n == 0 gives y = beta*y (x may be NULL) */
TYPED_TEST(GpuSpmv, ZeroSizes)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h;
    float one = 1.0f, half = -0.5f, zero = 0.0f;
    {
        mt::Dense m = mt::random_dense(0, 9, 0.5, 1, P::half);
        Mat A;
        make_matrix<P>(h.h, m, true, A);
        if (::testing::Test::HasFatalFailure())
            return;
        DevMem dx(9 * sizeof(E));
        EXPECT_EQ(P::spmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A.A, dx.as<E>(), 1, &zero, nullptr, 1),
                  MACKO_STATUS_SUCCESS);
        /* op T: y has 9 elements, x none */
        Case c;
        c.op = MACKO_OPERATION_TRANSPOSE;
        c.beta = -0.5f;
        run_case<P>(h.h, nullptr, m, A.A, c);
    }
    {
        mt::Dense m = mt::random_dense(11, 0, 0.5, 1, P::half);
        Mat A;
        make_matrix<P>(h.h, m, false, A);
        if (::testing::Test::HasFatalFailure())
            return;
        for (float beta : {0.0f, -0.5f}) {
            Case c;
            c.beta = beta;
            run_case<P>(h.h, nullptr, m, A.A, c);
        }
        /* x == NULL is fine when n == 0 */
        std::vector<E> yh(11, P::from(2.0f));
        DevMem dy(11 * sizeof(E));
        CUDA_CHECK(cudaMemcpy(dy.p, yh.data(), 11 * sizeof(E), cudaMemcpyHostToDevice));
        EXPECT_EQ(P::spmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A.A, nullptr, 1, &half, dy.as<E>(), 1),
                  MACKO_STATUS_SUCCESS);
        CUDA_CHECK(cudaMemcpy(yh.data(), dy.p, 11 * sizeof(E), cudaMemcpyDeviceToHost));
        for (E v : yh)
            EXPECT_EQ(P::to(v), -1.0);
    }
}

/* ---- Inf/NaN in x at columns the row does not store (padding lands there) never reach the result */
TYPED_TEST(GpuSpmv, NonFiniteXAtUnstoredColumns)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    const int64_t rows = 513, cols = 2011;
    /* nonzeros only in columns c % 40 == 0 (padding in every gap, long padding runs in some rows); x non-finite
     * at every other column */
    const mt::Dense m = mt::padding_grid_matrix(rows, cols, P::half);
    Mat A;
    make_matrix<P>(h.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    std::vector<float> x = mt::nonfinite_off_grid_x(cols, P::half);
    for (float beta : {0.0f, 2.0f}) {
        Case c;
        c.beta = beta;
        c.x = &x;
        c.cublas = false; /* dense GEMV multiplies the zeros by Inf */
        run_case<P>(h.h, nullptr, m, A.A, c);
    }

    /* op T: nonzeros only in rows r % 40 == 0; x (length rows) is NaN/Inf on the other rows. */
    std::mt19937_64 g(43);
    mt::Dense mt2 = mt::random_dense(2011, 300, 0.0, 1, P::half);
    for (int64_t r = 0; r < mt2.rows; r += 40)
        for (int64_t c = 0; c < mt2.cols; c++)
            if (g() % 10 < 7)
                mt2.at(r, c) = mt::round_half(0.25f + (float)(g() % 100) / 128.0f);
    Mat B;
    make_matrix<P>(h.h, mt2, true, B);
    if (::testing::Test::HasFatalFailure())
        return;
    std::vector<float> xt = mt::random_vector(mt2.rows, 78, P::half);
    for (int64_t r = 0; r < mt2.rows; r++)
        if (r % 40 != 0)
            xt[(size_t)r] = (r % 2) ? std::nanf("") : INFINITY;
    Case c;
    c.op = MACKO_OPERATION_TRANSPOSE;
    c.x = &xt;
    c.cublas = false;
    run_case<P>(h.h, nullptr, mt2, B.A, c);
}

/* ---- NaN in x at a stored column does reach the result (the masking is not hiding real entries) */
TYPED_TEST(GpuSpmv, NonFiniteXAtStoredColumnPropagates)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    mt::Dense m = mt::random_dense(64, 300, 0.0, 1, P::half);
    for (int64_t r = 0; r < 64; r++)
        m.at(r, (r * 37) % 300) = 1.0f;
    m.at(10, 123) = 0.5f;
    Mat A;
    make_matrix<P>(h.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    std::vector<float> x = mt::random_vector(300, 5, P::half);
    x[123] = std::nanf("");
    Case c;
    c.x = &x;
    c.cublas = false;
    run_case<P>(h.h, nullptr, m, A.A, c); /* the reference has NaN exactly where column 123 is stored */
}

/* ---- x at any element alignment: the kernels that stage x in shared memory use 16-byte loads when x is 16-byte
 * aligned and element loads otherwise (and for the cols % 8 tail); every alignment gives the bitwise same y. Columns
 * c % 50 == 7 are empty and hold Inf/NaN in x, so the non-finite detection of both staging paths is exercised. */
TYPED_TEST(GpuSpmv, XAtAnyAlignmentGivesTheSameResult)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h;
    for (int64_t cols : {int64_t(1), int64_t(8), int64_t(37), int64_t(4103), int64_t(12288)}) {
        const int64_t rows = 300;
        mt::Dense m = mt::random_dense(rows, cols, 0.45, 7 + (uint64_t)cols, P::half);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 7; c < cols; c += 50)
                m.at(r, c) = 0.0f;
        Mat A;
        make_matrix<P>(h.h, m, false, A);
        if (::testing::Test::HasFatalFailure())
            return;
        for (bool nonfinite : {false, true}) {
            std::vector<float> xv = mt::random_vector(cols, 11, P::half);
            if (nonfinite)
                for (int64_t c = 7; c < cols; c += 50)
                    xv[(size_t)c] = (c / 50) % 2 ? INFINITY : std::nanf("");
            const std::vector<E> xh = strided<P>(xv, 1, P::nan());
            const int64_t pad = 16;
            DevMem dx((size_t)(cols + pad) * sizeof(E)), dy((size_t)rows * sizeof(E));
            std::vector<E> first((size_t)rows), out((size_t)rows);
            const float alpha = 1.0f, beta = 0.0f;
            for (int64_t off : {int64_t(0), int64_t(1), int64_t(3), int64_t(16 / sizeof(E)), int64_t(pad - 1)}) {
                CUDA_CHECK(cudaMemset(dx.p, 0x7F, dx.bytes)); /* poison around x (fp16 NaN / huge fp32): never read */
                CUDA_CHECK(cudaMemcpy(dx.as<E>() + off, xh.data(), xh.size() * sizeof(E), cudaMemcpyHostToDevice));
                CUDA_CHECK(cudaMemset(dy.p, 0xFF, dy.bytes));
                ASSERT_EQ(P::spmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, dx.as<E>() + off, 1, &beta,
                                  dy.as<E>(), 1),
                          MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                CUDA_CHECK(cudaMemcpy(off == 0 ? first.data() : out.data(), dy.p, dy.bytes, cudaMemcpyDeviceToHost));
                if (off != 0) {
                    ASSERT_EQ(std::memcmp(out.data(), first.data(), dy.bytes), 0)
                        << "cols " << cols << " x offset " << off << " nonfinite " << nonfinite;
                }
            }
            /* offset 0 against the double reference (x at the empty columns never meets a stored value) */
            std::vector<double> xd(xv.size()), yr((size_t)rows), got((size_t)rows);
            for (size_t i = 0; i < xv.size(); i++)
                xd[i] = (int64_t)i % 50 == 7 ? 0.0 : P::to(xh[i]);
            mt::ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.0, xd, 0.0, yr);
            for (size_t i = 0; i < got.size(); i++) {
                got[i] = P::to(first[i]);
                ASSERT_TRUE(std::isfinite(got[i])) << "y[" << i << "] cols " << cols;
            }
            EXPECT_LT(mt::rel_l2(got, yr), P::rel_l2_max) << "cols " << cols;
        }
    }
}

/* ---- every kernel variant computes the bitwise same result (forced through the plan override, src/plan.h) */
TYPED_TEST(GpuSpmv, KernelVariantsAgreeBitwise)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h;
    /* 3001 x 2500: STAGED holds x in 10 KiB of shared memory; 301 x 20011: in 78 KiB, above the 48 KiB a block gets
     * without opting in (the plan opts in; on a device where 2 such blocks fit an SM, STAGED must really run) */
    const int64_t shapes[2][2] = {{3001, 2500}, {301, 20011}};
    const macko_devprops &dp = h.h->props;
    for (const auto &sh : shapes) {
        SCOPED_TRACE(testing::Message() << sh[0] << "x" << sh[1]);
        mt::Dense m = mt::random_dense(sh[0], sh[1], 0.3, 21, P::half);
        mt::add_structure(m, 22);
        Mat A;
        make_matrix<P>(h.h, m, false, A);
        if (::testing::Test::HasFatalFailure())
            return;
        const macko_plan automatic = A.A->plan;
        std::vector<float> xv = mt::random_vector(m.cols, 3, P::half);
        std::vector<E> xh = strided<P>(xv, 1, P::nan()), xh2 = strided<P>(xv, 2, P::nan());
        DevMem dx(xh.size() * sizeof(E)), dx2(xh2.size() * sizeof(E)), dy((size_t)m.rows * sizeof(E));
        CUDA_CHECK(cudaMemcpy(dx.p, xh.data(), dx.bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dx2.p, xh2.data(), dx2.bytes, cudaMemcpyHostToDevice));
        std::vector<double> xd(xv.begin(), xv.end()), yr((size_t)m.rows);
        for (size_t i = 0; i < xd.size(); i++)
            xd[i] = P::to(P::from(xv[i]));
        mt::ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.5, xd, 0.0, yr);

        /* Every variant with the WARP geometry (the strided one through incx = 2), then STAGED twice: it sums in
         * WARP's order, so it must be bitwise equal to it and to itself run to run. */
        struct Run {
            const char *name;
            int index, geometry, kernel;
            int64_t incx;
        };
        const Run runs[] = {{"warp i32 unit", MACKO_IDX_I32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I32_UNIT, 1},
                            {"warp i32 strided", MACKO_IDX_I32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I32_STRIDED, 2},
                            {"warp i64 rp32", MACKO_IDX_I64_RP32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I64_RP32, 1},
                            {"warp i64 rp64", MACKO_IDX_I64_RP64, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I64_RP64, 1},
                            {"staged", MACKO_IDX_I32, MACKO_SPMV_STAGED, MACKO_K_SPMV_STAGED, 1},
                            {"staged again", MACKO_IDX_I32, MACKO_SPMV_STAGED, MACKO_K_SPMV_STAGED, 1}};
        /* STAGED can run where two blocks' x fit an SM (1 KiB reserved per block) */
        const int64_t xbytes = (m.cols * 4 + 15) / 16 * 16;
        const bool staged_fits = xbytes <= 48 * 1024 || (xbytes <= dp.smem_per_block_optin &&
                                                         dp.smem_per_sm >= 2 * (xbytes + dp.smem_reserved_per_block));
        std::vector<E> first;
        for (const Run &r : runs) {
            SCOPED_TRACE(r.name);
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            f.index = r.index;
            f.spmv_geometry = r.geometry;
            const macko_status_t st = macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f);
            if (r.geometry == MACKO_SPMV_STAGED && !staged_fits) {
                EXPECT_EQ(st, MACKO_STATUS_NOT_SUPPORTED) << "STAGED cannot hold x here";
                EXPECT_EQ(macko_get_last_error_position(), 4);
                continue;
            }
            ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            const macko_launch *L = macko_plan_spmv(&A.A->plan, r.incx);
            EXPECT_EQ(L->kernel, r.kernel);
            if (r.kernel == MACKO_K_SPMV_STAGED) {
                EXPECT_GE(L->blocks_per_sm, 2);
            }
            const float alpha = 1.5f, beta = 0.0f;
            CUDA_CHECK(cudaMemset(dy.p, 0xFF, dy.bytes));
            const E *x = (r.incx == 1 ? dx : dx2).template as<E>();
            ASSERT_EQ(P::spmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, x, r.incx, &beta, dy.as<E>(), 1),
                      MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            std::vector<E> out((size_t)m.rows);
            CUDA_CHECK(cudaMemcpy(out.data(), dy.p, dy.bytes, cudaMemcpyDeviceToHost));
            if (first.empty()) {
                first = out;
                std::vector<double> got(out.size());
                for (size_t i = 0; i < out.size(); i++)
                    got[i] = P::to(out[i]);
                EXPECT_LT(mt::rel_l2(got, yr), P::rel_l2_max);
            } else {
                EXPECT_EQ(std::memcmp(out.data(), first.data(), dy.bytes), 0) << r.name << " differs from WARP";
            }
        }
        /* f == NULL restores the automatic plan (the int64 row-pointer copy goes with the forced one) */
        ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, nullptr), MACKO_STATUS_SUCCESS);
        const macko_plan &now = A.A->plan;
        EXPECT_EQ(now.forced, 0);
        EXPECT_EQ(now.index, automatic.index);
        EXPECT_EQ(now.row_ptr, A.A->dev.row_ptr);
        EXPECT_EQ(std::memcmp(&now.spmv_unit, &automatic.spmv_unit, sizeof now.spmv_unit), 0);
        EXPECT_EQ(std::memcmp(&now.spmv_strided, &automatic.spmv_strided, sizeof now.spmv_strided), 0);
        EXPECT_EQ(A.A->extra[MACKO_EXTRA_ROW_PTR64], nullptr);
    }
    /* wider than MACKO_SPMV_STAGE_MAX_COLS: STAGED cannot run on any device, and forcing it says so */
    mt::Dense wide = mt::random_dense(2, MACKO_SPMV_STAGE_MAX_COLS + 1, 0.3, 23, P::half);
    Mat W;
    make_matrix<P>(h.h, wide, false, W);
    if (::testing::Test::HasFatalFailure())
        return;
    EXPECT_EQ(W.A->plan.spmv_unit.kernel, MACKO_K_SPMV_WARP_I32_UNIT);
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.spmv_geometry = MACKO_SPMV_STAGED;
    EXPECT_EQ(macko_plan_override(h.h, W.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(W.A->plan.spmv_unit.kernel, MACKO_K_SPMV_WARP_I32_UNIT) << "a refused override changes nothing";
}

/* ---- bitwise reproducible over 100 runs, every element rewritten each time */
TYPED_TEST(GpuSpmv, BitwiseDeterministic100Runs)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    const int runs = mt::repeat_count(100); /* 100 unless MACKO_TEST_REPEATS says otherwise */
    Handle h;
    mt::Dense m = mt::random_dense(2500, 3000, 0.4, 31, P::half);
    mt::add_structure(m, 32);
    Mat A;
    make_matrix<P>(h.h, m, true, A);
    if (::testing::Test::HasFatalFailure())
        return;
    std::vector<float> xv = mt::random_vector(3000, 33, P::half), xt = mt::random_vector(2500, 34, P::half);
    std::vector<E> xh = strided<P>(xv, 1, P::nan()), xth = strided<P>(xt, 1, P::nan());
    DevMem dx(xh.size() * sizeof(E)), dxt(xth.size() * sizeof(E)), dy(3000 * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dx.p, xh.data(), dx.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dxt.p, xth.data(), dxt.bytes, cudaMemcpyHostToDevice));
    float alpha = 0.75f, beta = 0.0f;
    for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
        const size_t n = op == MACKO_OPERATION_NON_TRANSPOSE ? 2500 : 3000;
        const E *x = op == MACKO_OPERATION_NON_TRANSPOSE ? dx.as<E>() : dxt.as<E>();
        std::vector<E> first(n), out(n);
        for (int run = 0; run < runs; run++) {
            CUDA_CHECK(cudaMemset(dy.p, 0xFF, n * sizeof(E))); /* NaN poison */
            ASSERT_EQ(P::spmv(h.h, op, &alpha, A.A, x, 1, &beta, dy.as<E>(), 1), MACKO_STATUS_SUCCESS);
            CUDA_CHECK(cudaMemcpy(run == 0 ? first.data() : out.data(), dy.p, n * sizeof(E), cudaMemcpyDeviceToHost));
            if (run == 0) {
                for (size_t i = 0; i < n; i++)
                    ASSERT_TRUE(std::isfinite(P::to(first[i]))) << "y[" << i << "] not written";
            } else {
                ASSERT_EQ(std::memcmp(out.data(), first.data(), n * sizeof(E)), 0) << "run " << run << " op " << op;
            }
        }
    }
}

/* ---- a non-default stream, and two handles on two streams at once sharing one matrix */
TYPED_TEST(GpuSpmv, StreamsAndTwoHandles)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h1, h2;
    cudaStream_t s1, s2;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    ASSERT_EQ(macko_set_stream(h1.h, s1), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_set_stream(h2.h, s2), MACKO_STATUS_SUCCESS);
    mt::Dense m = mt::random_dense(4000, 2048, 0.3, 41, P::half);
    Mat A;
    make_matrix<P>(h1.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    CUDA_CHECK(cudaStreamSynchronize(s1)); /* the upload is asynchronous on h1's stream */
    std::vector<float> x1 = mt::random_vector(2048, 42, P::half), x2 = mt::random_vector(2048, 43, P::half);
    std::vector<E> x1h = strided<P>(x1, 1, P::nan()), x2h = strided<P>(x2, 1, P::nan());
    DevMem dx1(2048 * sizeof(E)), dx2(2048 * sizeof(E)), dy1(4000 * sizeof(E)), dy2(4000 * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dx1.p, x1h.data(), dx1.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dx2.p, x2h.data(), dx2.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy1.p, 0xFF, dy1.bytes));
    CUDA_CHECK(cudaMemset(dy2.p, 0xFF, dy2.bytes));
    float one = 1.0f, zero = 0.0f;
    for (int rep = 0; rep < 10; rep++) {
        ASSERT_EQ(P::spmv(h1.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A.A, dx1.as<E>(), 1, &zero, dy1.as<E>(), 1),
                  MACKO_STATUS_SUCCESS);
        ASSERT_EQ(P::spmv(h2.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A.A, dx2.as<E>(), 1, &zero, dy2.as<E>(), 1),
                  MACKO_STATUS_SUCCESS);
    }
    CUDA_CHECK(cudaStreamSynchronize(s1));
    CUDA_CHECK(cudaStreamSynchronize(s2));
    for (int which = 0; which < 2; which++) {
        std::vector<E> out(4000);
        CUDA_CHECK(cudaMemcpy(out.data(), which ? dy2.p : dy1.p, 4000 * sizeof(E), cudaMemcpyDeviceToHost));
        const std::vector<float> &xv = which ? x2 : x1;
        std::vector<double> xd(xv.begin(), xv.end()), yr(4000), got(4000);
        mt::ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.0, xd, 0.0, yr);
        for (size_t i = 0; i < 4000; i++)
            got[i] = P::to(out[i]);
        EXPECT_LT(mt::rel_l2(got, yr), P::rel_l2_max) << "handle " << which + 1;
    }
    /* The ordinary checks on a non-default stream. */
    Case c;
    c.beta = -0.5f;
    run_case<P>(h1.h, nullptr, m, A.A, c);
    macko_set_stream(h1.h, nullptr);
    macko_set_stream(h2.h, nullptr);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
}

/* ---- capture one call in a CUDA graph and replay it (host mode: values frozen at capture; device mode: read at
 * every replay) */
TYPED_TEST(GpuSpmv, GraphCaptureAndReplay)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h;
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ASSERT_EQ(macko_set_stream(h.h, s), MACKO_STATUS_SUCCESS);
    mt::Dense m = mt::random_dense(1500, 1024, 0.4, 51, P::half);
    Mat A;
    make_matrix<P>(h.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> xv = mt::random_vector(1024, 52, P::half);
    std::vector<E> xh = strided<P>(xv, 1, P::nan());
    std::vector<float> y0 = mt::random_vector(1500, 53, P::half);
    std::vector<E> yh = strided<P>(y0, 1, P::nan());
    DevMem dx(1024 * sizeof(E)), dy(1500 * sizeof(E)), dab(2 * sizeof(float));
    CUDA_CHECK(cudaMemcpy(dx.p, xh.data(), dx.bytes, cudaMemcpyHostToDevice));
    std::vector<double> xd(1024);
    for (size_t i = 0; i < xd.size(); i++)
        xd[i] = P::to(xh[i]);

    for (macko_pointer_mode_t mode : {MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE}) {
        SCOPED_TRACE(mode == MACKO_POINTER_MODE_HOST ? "host pointer mode" : "device pointer mode");
        ASSERT_EQ(macko_set_pointer_mode(h.h, mode), MACKO_STATUS_SUCCESS);
        float ab[2] = {2.0f, -0.5f};
        CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
        const float *pa = mode == MACKO_POINTER_MODE_DEVICE ? dab.as<float>() : &ab[0];
        const float *pb = mode == MACKO_POINTER_MODE_DEVICE ? dab.as<float>() + 1 : &ab[1];
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        macko_status_t st = P::spmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, pa, A.A, dx.as<E>(), 1, pb, dy.as<E>(), 1);
        CUDA_CHECK(cudaStreamEndCapture(s, &graph));
        ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        const float alphas[] = {2.0f, -1.0f, 0.0f};
        for (float alpha_now : alphas) {
            /* Change alpha between replays: device mode sees it, host mode keeps the captured 2.0. */
            ab[0] = alpha_now;
            CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpy(dy.p, yh.data(), dy.bytes, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaGraphLaunch(exec, s));
            CUDA_CHECK(cudaStreamSynchronize(s));
            std::vector<E> out(1500);
            CUDA_CHECK(cudaMemcpy(out.data(), dy.p, dy.bytes, cudaMemcpyDeviceToHost));
            const double expect_alpha = mode == MACKO_POINTER_MODE_DEVICE ? alpha_now : 2.0;
            std::vector<double> yr(1500), got(1500);
            for (size_t i = 0; i < 1500; i++)
                yr[i] = P::to(yh[i]);
            mt::ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, expect_alpha, xd, -0.5, yr);
            for (size_t i = 0; i < 1500; i++)
                got[i] = P::to(out[i]);
            EXPECT_LT(mt::rel_l2(got, yr), P::rel_l2_max) << "alpha now " << alpha_now;
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    macko_set_pointer_mode(h.h, MACKO_POINTER_MODE_HOST);
    macko_set_stream(h.h, nullptr);
    cudaStreamDestroy(s);
}

/* ---- bad arguments, one at a time, in signature order: status, position, and y untouched */
TYPED_TEST(GpuSpmv, BadArgumentsByPosition)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    gt::BadArgFixture<P, 64> f;
    f.out_name = "y";
    f.setup();
    if (::testing::Test::HasFatalFailure())
        return;
    const auto N = MACKO_OPERATION_NON_TRANSPOSE, T = MACKO_OPERATION_TRANSPOSE;
    const macko_status_t INV = MACKO_STATUS_INVALID_VALUE, NI = MACKO_STATUS_NOT_INITIALIZED;
    macko_handle_t h = f.h.h;
    macko_mat_t A = f.A.A;
    const E *x = f.din.template as<E>();
    E *y = f.dout.template as<E>();
    const float *a = &f.one, *b = &f.zero;
    f.expect(P::spmv(nullptr, N, a, A, x, 1, b, y, 1), INV, 1, "handle NULL");
    f.expect(P::spmv(h, (macko_operation_t)2, a, A, x, 1, b, y, 1), INV, 2, "op 2");
    f.expect(P::spmv(h, (macko_operation_t)-1, a, A, x, 1, b, y, 1), INV, 2, "op -1");
    f.expect(P::spmv(h, N, nullptr, A, x, 1, b, y, 1), INV, 3, "alpha NULL");
    f.expect(P::spmv(h, N, a, nullptr, x, 1, b, y, 1), INV, 4, "A NULL");
    f.expect(P::spmv(h, N, a, f.Aother.A, x, 1, b, y, 1), INV, 4, "A of the other precision");
    f.expect(P::spmv(h, N, a, f.Ahost.A, x, 1, b, y, 1), NI, 4, "A not on the device");
    A->device += 7; /* pretend it lives on another device */
    f.expect(P::spmv(h, N, a, A, x, 1, b, y, 1), INV, 4, "A on another device");
    A->device -= 7;
    f.expect(P::spmv(h, T, a, A, x, 1, b, y, 1), NI, 2, "op T without macko_analysis");
    f.expect(P::spmv(h, N, a, A, nullptr, 1, b, y, 1), INV, 5, "x NULL");
    f.expect(P::spmv(h, N, a, A, (const E *)((const char *)x + 1), 1, b, y, 1), INV, 5, "x misaligned");
    f.expect(P::spmv(h, N, a, A, x, 0, b, y, 1), INV, 6, "incx 0");
    f.expect(P::spmv(h, N, a, A, x, -1, b, y, 1), INV, 6, "incx -1");
    f.expect(P::spmv(h, N, a, A, x, INT64_MAX / 2, b, y, 1), INV, 6, "incx overflowing");
    f.expect(P::spmv(h, N, a, A, x, 1, nullptr, y, 1), INV, 7, "beta NULL");
    f.expect(P::spmv(h, N, a, A, x, 1, b, nullptr, 1), INV, 8, "y NULL");
    f.expect(P::spmv(h, N, a, A, x, 1, b, (E *)((char *)y + 1), 1), INV, 8, "y misaligned");
    f.expect(P::spmv(h, N, a, A, x, 1, b, y, 0), INV, 9, "incy 0");
    f.expect(P::spmv(h, N, a, A, x, 1, b, y, -3), INV, 9, "incy -3");
    /* the first bad argument wins */
    f.expect(P::spmv(h, N, nullptr, A, nullptr, 0, nullptr, nullptr, 0), INV, 3, "alpha, x, incx, beta, y, incy bad");
    f.expect(P::spmv(h, (macko_operation_t)5, a, nullptr, x, 1, b, y, 1), INV, 2, "op and A bad");
    f.expect(P::spmv(h, N, a, A, x, 0, b, nullptr, 1), INV, 6, "incx and y bad");
    /* and a good call afterwards succeeds and clears the error */
    EXPECT_EQ(P::spmv(h, N, a, A, x, 1, b, y, 1), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_get_last_error_position(), 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

/* ---- bad arguments reachable without a GPU (run everywhere) */
TEST(SpmvArgs, NullHandleOnAnyMachine)
{
    uint16_t hx[4] = {0, 0, 0, 0}, hy[4] = {1, 2, 3, 4};
    float fx[4] = {0, 0, 0, 0}, fy[4] = {1, 2, 3, 4};
    float one = 1.0f, zero = 0.0f;
    EXPECT_EQ(macko_Hspmv(nullptr, MACKO_OPERATION_NON_TRANSPOSE, &one, nullptr, hx, 1, &zero, hy, 1),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("macko_Hspmv"), std::string::npos);
    EXPECT_EQ(macko_Sspmv(nullptr, MACKO_OPERATION_TRANSPOSE, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("macko_Sspmv"), std::string::npos);
    EXPECT_EQ(hy[0], 1);
    EXPECT_EQ(hy[3], 4);
    EXPECT_EQ(fy[0], 1.0f);
    EXPECT_EQ(fy[3], 4.0f);
    (void)fx;
}

} // namespace
