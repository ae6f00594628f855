/* GPU conformance of macko_Hspmm / macko_Sspmm and macko_Hspmv_strided_batched / macko_Sspmv_strided_batched.
 *
 * Both routines compute C(:, j) = alpha*op(A)*B(:, j) + beta*C(:, j) for j < n, with B(i, j) at b[i*incb + j*ldb]
 * and C(i, j) at c[i*incc + j*ldc]: spmm has incb = incc = 1, the strided batch (incx, stridex) and (incy,
 * stridey). One checker serves both: every column is compared element by element with the double host reference
 * mt::ref_spmv (decoded from the host MACKO arrays) and with cuBLAS on the same matrix made dense
 * (cublasGemmEx fp16 / CUBLAS_COMPUTE_32F or cublasSgemm for spmm; cublasHSHgemvStridedBatched /
 * cublasSgemvStridedBatched for the strided batch).
 *
 * Tolerances as in test_gpu_spmv.cpp (u = 2^-24, k = stored nonzeros summed, S = |alpha| sum |a x| + |beta c_old|):
 *   fp16 output: |c - ref| <= 2^-10 |ref| + 2 (k + 4) u S + 2^-24, relative L2 error per column < 1e-3;
 *   fp32 output: |c - ref| <= 2 (k + 4) u S + 1e-37,                 relative L2 error per column < 1e-5;
 *   macko vs cuBLAS: twice the bound; for cublasGemmEx in fp16 with N > 1 plus 2^-12 S, since cuBLAS may round
 *   split-K partial sums to fp16 (seen on the H100: errors of ~1e-5 S, where macko matched the reference).
 * Inputs are random and never zero. Every element of B's buffer that is not an element of B holds NaN (it must never
 * be read); every element of C's buffer that is not an element of C holds a sentinel (it must survive); C itself is
 * NaN before a beta == 0 call (it must not be read).
 */
#include "common.h"
#include "gpu_fixtures.h"

#include "macko_internal.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
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
    static E sentinel() { return 0x3C01; }
    static macko_status_t mm(macko_handle_t h, macko_operation_t op, int64_t n, const float *a, macko_mat_t A,
                             const E *B, int64_t ldb, const float *b, E *C, int64_t ldc)
    {
        return macko_Hspmm(h, op, n, a, A, B, ldb, b, C, ldc);
    }
    static macko_status_t sb(macko_handle_t h, macko_operation_t op, const float *a, macko_mat_t A, const E *x,
                             int64_t incx, int64_t sx, const float *b, E *y, int64_t incy, int64_t sy, int64_t batch)
    {
        return macko_Hspmv_strided_batched(h, op, a, A, x, incx, sx, b, y, incy, sy, batch);
    }
    static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t opa, int M, int N, int K, const float *alpha,
                               const void *A, int lda, const void *B, int ldb, const float *beta, void *C, int ldc)
    {
        return cublasGemmEx(h, opa, CUBLAS_OP_N, M, N, K, alpha, A, CUDA_R_16F, lda, B, CUDA_R_16F, ldb, beta, C,
                            CUDA_R_16F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    static cublasStatus_t gemv_sb(cublasHandle_t h, cublasOperation_t t, int m, int n, const float *alpha,
                                  const void *A, int lda, const void *x, int incx, long long sx, const float *beta,
                                  void *y, int incy, long long sy, int batch)
    {
        return cublasHSHgemvStridedBatched(h, t, m, n, alpha, static_cast<const __half *>(A), lda, 0,
                                           static_cast<const __half *>(x), incx, sx, beta, static_cast<__half *>(y),
                                           incy, sy, batch);
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
    static E sentinel() { return 1.0009765625f; }
    static macko_status_t mm(macko_handle_t h, macko_operation_t op, int64_t n, const float *a, macko_mat_t A,
                             const E *B, int64_t ldb, const float *b, E *C, int64_t ldc)
    {
        return macko_Sspmm(h, op, n, a, A, B, ldb, b, C, ldc);
    }
    static macko_status_t sb(macko_handle_t h, macko_operation_t op, const float *a, macko_mat_t A, const E *x,
                             int64_t incx, int64_t sx, const float *b, E *y, int64_t incy, int64_t sy, int64_t batch)
    {
        return macko_Sspmv_strided_batched(h, op, a, A, x, incx, sx, b, y, incy, sy, batch);
    }
    static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t opa, int M, int N, int K, const float *alpha,
                               const void *A, int lda, const void *B, int ldb, const float *beta, void *C, int ldc)
    {
        return cublasSgemm(h, opa, CUBLAS_OP_N, M, N, K, alpha, static_cast<const float *>(A), lda,
                           static_cast<const float *>(B), ldb, beta, static_cast<float *>(C), ldc);
    }
    static cublasStatus_t gemv_sb(cublasHandle_t h, cublasOperation_t t, int m, int n, const float *alpha,
                                  const void *A, int lda, const void *x, int incx, long long sx, const float *beta,
                                  void *y, int incy, long long sy, int batch)
    {
        return cublasSgemvStridedBatched(h, t, m, n, alpha, static_cast<const float *>(A), lda, 0,
                                         static_cast<const float *>(x), incx, sx, beta, static_cast<float *>(y),
                                         incy, sy, batch);
    }
    static double tol(double, double s, int64_t k) { return 2.0 * (double)(k + 4) * kU * s + 1e-37; }
};

using gt::Blas;
using gt::DevMem;
using gt::Handle;
using gt::make_matrix;
using gt::Mat;

/* Where the n columns of B and C live: element (i, j) at i*inc + j*ld of the buffer. */
struct Layout {
    int64_t n = 1;
    int64_t incb = 1, ldb = 0; /* ldb 0 in spmm cases: k + ldb_extra */
    int64_t incc = 1, ldc = 0;
    int64_t ldb_extra = 0, ldc_extra = 0;
};

inline size_t span(int64_t len, int64_t inc, int64_t count, int64_t ld)
{
    return (len <= 0 || count <= 0) ? 0 : (size_t)((len - 1) * inc + (count - 1) * ld + 1);
}

/* One case and everything we check about it. */
struct Case {
    macko_operation_t op = MACKO_OPERATION_NON_TRANSPOSE;
    float alpha = 1.0f, beta = 0.0f;
    Layout L;
    bool batched = false; /* call the strided-batched routine (else spmm: incb = incc = 1) */
    macko_pointer_mode_t mode = MACKO_POINTER_MODE_HOST;
    bool cublas = true;
    uint64_t seed = 1;
    const std::vector<float> *bcol = nullptr; /* override: every column of B is this vector (may hold Inf/NaN) */
};

template <class P>
void run_case(macko_handle_t h, Blas *blas, const mt::Dense &m, macko_mat_t A, const Case &cs)
{
    using E = typename P::E;
    const bool opn = cs.op == MACKO_OPERATION_NON_TRANSPOSE;
    const int64_t mo = opn ? m.rows : m.cols, ki = opn ? m.cols : m.rows;
    Layout L = cs.L;
    const int64_t n = L.n;
    if (!cs.batched) {
        L.incb = L.incc = 1;
        L.ldb = std::max<int64_t>(ki, 1) + L.ldb_extra;
        L.ldc = std::max<int64_t>(mo, 1) + L.ldc_extra;
    }

    /* B's buffer: NaN everywhere but at B's elements. */
    std::vector<E> bh(span(ki, L.incb, n, L.ldb), P::nan());
    {
        std::vector<float> r = mt::random_vector(ki * n, cs.seed * 7 + 1, P::half);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < ki; i++)
                bh[(size_t)(i * L.incb + j * L.ldb)] =
                    P::from(cs.bcol ? (*cs.bcol)[(size_t)i] : r[(size_t)(j * ki + i)]);
    }
    /* C's buffer: the sentinel in the gaps, NaN (beta == 0) or random values at C's elements. */
    std::vector<E> ch(span(mo, L.incc, n, L.ldc), P::sentinel());
    std::vector<char> is_c(ch.size(), 0);
    {
        std::vector<float> r = mt::random_vector(mo * n, cs.seed * 7 + 2, P::half);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < mo; i++) {
                const size_t o = (size_t)(i * L.incc + j * L.ldc);
                ASSERT_EQ(is_c[o], 0) << "test layout error: C elements overlap";
                is_c[o] = 1;
                ch[o] = cs.beta == 0.0f ? P::nan() : P::from(r[(size_t)(j * mo + i)]);
            }
    }

    DevMem db(bh.size() * sizeof(E)), dc(ch.size() * sizeof(E)), dab(2 * sizeof(float));
    if (!bh.empty()) {
        CUDA_CHECK(cudaMemcpy(db.p, bh.data(), bh.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    if (!ch.empty()) {
        CUDA_CHECK(cudaMemcpy(dc.p, ch.data(), ch.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    float ab[2] = {cs.alpha, cs.beta};
    CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
    ASSERT_EQ(macko_set_pointer_mode(h, cs.mode), MACKO_STATUS_SUCCESS);
    const float *pa = cs.mode == MACKO_POINTER_MODE_DEVICE ? dab.as<float>() : &ab[0];
    const float *pb = cs.mode == MACKO_POINTER_MODE_DEVICE ? dab.as<float>() + 1 : &ab[1];
    const macko_status_t st = cs.batched ? P::sb(h, cs.op, pa, A, db.as<E>(), L.incb, L.ldb, pb, dc.as<E>(), L.incc,
                                                 L.ldc, n)
                                         : P::mm(h, cs.op, n, pa, A, db.as<E>(), L.ldb, pb, dc.as<E>(), L.ldc);
    ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    ASSERT_EQ(macko_set_pointer_mode(h, MACKO_POINTER_MODE_HOST), MACKO_STATUS_SUCCESS);
    std::vector<E> out(ch.size());
    if (!out.empty()) {
        CUDA_CHECK(cudaMemcpy(out.data(), dc.p, out.size() * sizeof(E), cudaMemcpyDeviceToHost));
    }

    /* The gaps of C's buffer are untouched. */
    int bad = 0;
    for (size_t o = 0; o < out.size(); o++)
        if (!is_c[o] && std::memcmp(&out[o], &ch[o], sizeof(E)) != 0 && bad++ < 5)
            ADD_FAILURE() << "C buffer element " << o << " (not an element of C) was overwritten";

    /* The stored entries of op(A) by output row, for the error scale. */
    std::vector<std::vector<std::pair<int64_t, double>>> rowsof((size_t)mo);
    for (int64_t r = 0; r < m.rows; r++)
        for (int64_t c = 0; c < m.cols; c++) {
            const double a = m.at(r, c);
            if (a != 0.0)
                rowsof[(size_t)(opn ? r : c)].push_back({opn ? c : r, a});
        }

    std::vector<std::vector<double>> got((size_t)n), ref((size_t)n), sc((size_t)n);
    for (int64_t j = 0; j < n && bad < 5; j++) {
        std::vector<double> x((size_t)ki), y((size_t)mo), s((size_t)mo, 0.0);
        for (int64_t i = 0; i < ki; i++)
            x[(size_t)i] = P::to(bh[(size_t)(i * L.incb + j * L.ldb)]);
        for (int64_t i = 0; i < mo; i++)
            y[(size_t)i] = P::to(ch[(size_t)(i * L.incc + j * L.ldc)]);
        const std::vector<double> yold = y;
        mt::ref_spmv(A, cs.op, cs.alpha, x, cs.beta, y);
        if (cs.alpha == 0.0f) /* A and B are not read: C = beta*C_old */
            for (int64_t i = 0; i < mo; i++)
                y[(size_t)i] = cs.beta == 0.0f ? 0.0 : (double)cs.beta * yold[(size_t)i];
        for (int64_t i = 0; i < mo; i++) {
            double t = 0.0;
            if (cs.alpha != 0.0f)
                for (const auto &e : rowsof[(size_t)i])
                    t += std::fabs(e.second * x[(size_t)e.first]);
            s[(size_t)i] = t * std::fabs((double)cs.alpha) +
                           (cs.beta != 0.0f ? std::fabs((double)cs.beta * yold[(size_t)i]) : 0.0);
        }
        std::vector<double> g((size_t)mo);
        for (int64_t i = 0; i < mo; i++) {
            const double gv = P::to(out[(size_t)(i * L.incc + j * L.ldc)]), r = y[(size_t)i];
            g[(size_t)i] = gv;
            const int64_t k = (int64_t)rowsof[(size_t)i].size();
            const bool ok = std::isfinite(r) ? std::fabs(gv - r) <= P::tol(r, s[(size_t)i], k)
                                             : (std::isnan(r) == std::isnan(gv) && (std::isnan(r) || gv == r));
            if (!ok && bad++ < 5)
                ADD_FAILURE() << "C(" << i << ", " << j << ") = " << gv << ", reference " << r << " (tolerance "
                              << P::tol(r, s[(size_t)i], k) << ", terms " << k << ")";
        }
        if (mo > 0 && std::all_of(y.begin(), y.end(), [](double v) { return std::isfinite(v); })) {
            EXPECT_LT(mt::rel_l2(g, y), P::rel_l2_max) << "column " << j;
        }
        got[(size_t)j] = g;
        ref[(size_t)j] = y;
        sc[(size_t)j] = s;
    }

    /* cuBLAS on the dense matrix, same alpha/beta/C_old and the same buffers. Row-major m (rows x cols) is the
     * column-major m^T with lda = cols. */
    if (!blas || !cs.cublas || mo == 0 || ki == 0 || n == 0 || bad)
        return;
    std::vector<uint8_t> dense = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, m.cols);
    DevMem dA(dense.size()), dc2(ch.size() * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dA.p, dense.data(), dense.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc2.p, ch.data(), ch.size() * sizeof(E), cudaMemcpyHostToDevice));
    if (cs.batched) {
        CUBLAS_CHECK(P::gemv_sb(blas->h, opn ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m.cols, (int)m.rows, &ab[0], dA.p,
                                (int)m.cols, db.p, (int)L.incb, (long long)L.ldb, &ab[1], dc2.p, (int)L.incc,
                                (long long)L.ldc, (int)n));
    } else {
        CUBLAS_CHECK(P::gemm(blas->h, opn ? CUBLAS_OP_T : CUBLAS_OP_N, (int)mo, (int)n, (int)ki, &ab[0], dA.p,
                             (int)m.cols, db.p, (int)L.ldb, &ab[1], dc2.p, (int)L.ldc));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<E> outc(ch.size());
    CUDA_CHECK(cudaMemcpy(outc.data(), dc2.p, outc.size() * sizeof(E), cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < mo; i++) {
            const double gc = P::to(outc[(size_t)(i * L.incc + j * L.ldc)]), r = ref[(size_t)j][(size_t)i];
            if (!std::isfinite(r))
                continue;
            const double t = 2.0 * P::tol(r, sc[(size_t)j][(size_t)i], (int64_t)rowsof[(size_t)i].size()) +
                             (P::half && !cs.batched ? std::ldexp(sc[(size_t)j][(size_t)i], -12) : 0.0);
            if (std::fabs(got[(size_t)j][(size_t)i] - gc) > t && bad++ < 5)
                ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got[(size_t)j][(size_t)i] << ", cuBLAS " << gc
                              << ", reference " << r;
        }
}

template <class P> class GpuSpmm : public ::testing::Test {};
using Precisions = ::testing::Types<HP, SP>;
class PrecName {
  public:
    template <typename T> static std::string GetName(int) { return std::is_same<T, HP>::value ? "H" : "S"; }
};
TYPED_TEST_SUITE(GpuSpmm, Precisions, PrecName);

const int64_t kNs[] = {1, 2, 3, 4, 7, 8, 16, 17, 33};

/* ---- shapes x densities x n, op N and op T, odd leading dimensions */
TYPED_TEST(GpuSpmm, ShapesDensitiesAndN)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    Blas blas;
    struct Shape {
        int64_t r, c;
    };
    const Shape shapes[] = {{1, 1}, {7, 33}, {33, 7}, {4097, 5}, {1000, 4097}, {257, 300}};
    const double dens[] = {0.0, 0.1, 0.5, 1.0};
    uint64_t seed = 200;
    for (const Shape &sh : shapes)
        for (double d : dens) {
            SCOPED_TRACE(testing::Message() << sh.r << "x" << sh.c << " d=" << d);
            mt::Dense m = mt::random_dense(sh.r, sh.c, d, ++seed, P::half);
            if (sh.r >= 7 && seed % 2 == 0)
                mt::add_structure(m, seed);
            Mat A;
            make_matrix<P>(h.h, m, true, A);
            if (::testing::Test::HasFatalFailure())
                return;
            for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE})
                for (int64_t n : kNs) {
                    /* the biggest shape takes a subset of n to keep the run short */
                    if (sh.r * sh.c > 1000000 && d != 0.5 && n != 3 && n != 8 && n != 17)
                        continue;
                    SCOPED_TRACE(testing::Message() << (op == MACKO_OPERATION_NON_TRANSPOSE ? "op N" : "op T")
                                                    << " n=" << n);
                    Case c;
                    c.op = op;
                    c.L.n = n;
                    c.L.ldb_extra = (n % 2) ? 3 : 0; /* odd ld for odd n */
                    c.L.ldc_extra = (n % 3) ? 1 : 0;
                    c.seed = ++seed;
                    run_case<P>(h.h, &blas, m, A.A, c);
                    if (::testing::Test::HasFatalFailure())
                        return;
                }
        }
}

/* ---- alpha/beta combinations x pointer modes x ops */
TYPED_TEST(GpuSpmm, AlphaBetaPointerModes)
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
    uint64_t seed = 3000;
    for (float alpha : vals)
        for (float beta : vals)
            for (macko_pointer_mode_t mode : {MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE})
                for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE})
                    for (int64_t n : {3, 8}) {
                        SCOPED_TRACE(testing::Message() << "alpha=" << alpha << " beta=" << beta << " mode=" << mode
                                                        << " op=" << op << " n=" << n);
                        Case c;
                        c.op = op;
                        c.alpha = alpha;
                        c.beta = beta;
                        c.mode = mode;
                        c.L.n = n;
                        c.L.ldc_extra = 2;
                        c.seed = ++seed;
                        run_case<P>(h.h, &blas, m, A.A, c);
                        if (::testing::Test::HasFatalFailure())
                            return;
                    }
}

/* ---- shapes with too many columns for the staged tile take the global path through the public API */
TYPED_TEST(GpuSpmm, WideMatrixGlobalPath)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    Blas blas;
    mt::Dense m = mt::random_dense(37, 70000, 0.2, 9, P::half);
    mt::add_structure(m, 10);
    Mat A;
    make_matrix<P>(h.h, m, true, A);
    if (::testing::Test::HasFatalFailure())
        return;
    for (int64_t n : {2, 5, 8, 17})
        for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
            SCOPED_TRACE(testing::Message() << "n=" << n << " op=" << op);
            Case c;
            c.op = op;
            c.beta = -0.5f;
            c.L.n = n;
            c.L.ldb_extra = 1;
            c.seed = (uint64_t)n * 3 + op;
            run_case<P>(h.h, &blas, m, A.A, c);
            if (::testing::Test::HasFatalFailure())
                return;
        }
}

/* ---- the global path with B's offsets past int32 for a tile of 16 columns but not for 8: the plan narrows the
 * tile to 8 and takes 64-bit offsets. (Before the plan, fp32 launched its 4-column 32-bit kernel while stepping 8
 * columns: columns 4..7 of every 8 were never written.) x of the strided batch holds 9 vectors 2^31 / 12 elements
 * apart (5.7 GiB for fp32), so only what the kernels read is filled. */
TYPED_TEST(GpuSpmm, GlobalPathWithOffsetsPastInt32)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    const int64_t rows = 64, cols = 8000, batch = 9, stridex = INT64_C(2147483647) / 12;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t xbytes = (size_t)((batch - 1) * stridex + cols) * sizeof(E);
    if (free_b < xbytes + ((size_t)1 << 30))
        GTEST_SKIP() << "needs " << (xbytes >> 20) << " MiB of free device memory, " << (free_b >> 20) << " MiB free";
    Handle h;
    mt::Dense m = mt::random_dense(rows, cols, 0.1, 41, P::half);
    Mat A;
    make_matrix<P>(h.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    /* the global path for every n (fp32 would take it anyway: no staged tile of 8 holds 8000 columns) */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_GLOBAL;
    ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
    const macko_launch *L = macko_plan_mm(&A.A->plan, batch, cols, 1, stridex, 1);
    ASSERT_NE(L, nullptr);
    EXPECT_EQ(L->tile, 8);
    EXPECT_EQ(L->kernel, P::half ? MACKO_K_MM_GLOBAL_I32 : MACKO_K_MM_GLOBAL_I64_RP32);
    DevMem dx(xbytes), dy((size_t)(rows * batch) * sizeof(E));
    std::vector<std::vector<float>> xs;
    for (int64_t j = 0; j < batch; j++) {
        xs.push_back(mt::random_vector(cols, 43 + (uint64_t)j, P::half));
        std::vector<E> xh(xs.back().size());
        for (size_t i = 0; i < xh.size(); i++)
            xh[i] = P::from(xs.back()[i]);
        CUDA_CHECK(cudaMemcpy(dx.as<E>() + j * stridex, xh.data(), xh.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemset(dy.p, 0xFF, dy.bytes));
    const float alpha = 1.0f, beta = 0.0f;
    ASSERT_EQ(P::sb(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, dx.as<E>(), 1, stridex, &beta, dy.as<E>(), 1, rows,
                    batch),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    std::vector<E> y((size_t)(rows * batch));
    CUDA_CHECK(cudaMemcpy(y.data(), dy.p, dy.bytes, cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < batch; j++) {
        std::vector<double> xd(xs[(size_t)j].begin(), xs[(size_t)j].end()), yr((size_t)rows), got((size_t)rows);
        for (double &v : xd)
            v = P::to(P::from((float)v));
        mt::ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.0, xd, 0.0, yr);
        for (int64_t i = 0; i < rows; i++)
            got[(size_t)i] = P::to(y[(size_t)(j * rows + i)]);
        EXPECT_LT(mt::rel_l2(got, yr), P::rel_l2_max) << "vector " << j;
    }
}

/* ---- alpha == 0 reads neither A nor B (B is NaN everywhere) */
TYPED_TEST(GpuSpmm, AlphaZeroReadsNoB)
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
    for (float beta : {0.0f, -0.5f})
        for (int64_t n : {2, 9}) {
            Case c;
            c.alpha = 0.0f;
            c.beta = beta;
            c.bcol = &xn;
            c.L.n = n;
            run_case<P>(h.h, nullptr, m, A.A, c);
        }
}

/* ---- zero sizes: m == 0 or n == 0 launch nothing (C may be NULL); k == 0 gives C = beta*C (B may be NULL) */
TYPED_TEST(GpuSpmm, ZeroSizes)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h;
    float one = 1.0f, half = -0.5f, zero = 0.0f;
    const auto N = MACKO_OPERATION_NON_TRANSPOSE;
    {
        mt::Dense m = mt::random_dense(0, 9, 0.5, 1, P::half);
        Mat A;
        make_matrix<P>(h.h, m, true, A);
        if (::testing::Test::HasFatalFailure())
            return;
        DevMem db(9 * 4 * sizeof(E));
        EXPECT_EQ(P::mm(h.h, N, 4, &one, A.A, db.as<E>(), 9, &zero, nullptr, 1), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(P::sb(h.h, N, &one, A.A, db.as<E>(), 1, 9, &zero, nullptr, 1, 1, 4), MACKO_STATUS_SUCCESS);
        /* op T: C has 9 rows, B none */
        Case c;
        c.op = MACKO_OPERATION_TRANSPOSE;
        c.beta = -0.5f;
        c.L.n = 3;
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
            c.L.n = 5;
            run_case<P>(h.h, nullptr, m, A.A, c);
        }
        /* B == NULL is fine when k == 0 */
        std::vector<E> ch(11 * 3, P::from(2.0f));
        DevMem dc(ch.size() * sizeof(E));
        CUDA_CHECK(cudaMemcpy(dc.p, ch.data(), dc.bytes, cudaMemcpyHostToDevice));
        EXPECT_EQ(P::mm(h.h, N, 3, &one, A.A, nullptr, 1, &half, dc.as<E>(), 11), MACKO_STATUS_SUCCESS);
        CUDA_CHECK(cudaMemcpy(ch.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
        for (E v : ch)
            EXPECT_EQ(P::to(v), -1.0);
    }
    {
        mt::Dense m = mt::random_dense(20, 30, 0.5, 1, P::half);
        Mat A;
        make_matrix<P>(h.h, m, false, A);
        if (::testing::Test::HasFatalFailure())
            return;
        /* n == 0 / batch == 0: B and C may be NULL, nothing is launched */
        EXPECT_EQ(P::mm(h.h, N, 0, &one, A.A, nullptr, 30, &zero, nullptr, 20), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(P::sb(h.h, N, &one, A.A, nullptr, 1, 30, &zero, nullptr, 1, 20, 0), MACKO_STATUS_SUCCESS);
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

/* ---- Inf/NaN in B at columns a row does not store (padding lands there) never reach the result, on every path */
TYPED_TEST(GpuSpmm, NonFiniteBAtUnstoredColumns)
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
    for (int64_t n : {2, 4, 8, 16})
        for (float beta : {0.0f, 2.0f}) {
            Case c;
            c.beta = beta;
            c.bcol = &x;
            c.L.n = n;
            c.cublas = false; /* dense GEMM multiplies the zeros by Inf */
            run_case<P>(h.h, nullptr, m, A.A, c);
        }
    /* Inf at a stored column gives +-Inf (not NaN: the tensor-core path recomputes such rows), NaN gives NaN */
    x[80] = INFINITY;
    for (int64_t n : {8, 16}) {
        Case c;
        c.bcol = &x;
        c.L.n = n;
        c.cublas = false;
        run_case<P>(h.h, nullptr, m, A.A, c);
    }
    x[40] = std::nanf("");
    Case c;
    c.bcol = &x;
    c.L.n = 8;
    c.cublas = false;
    run_case<P>(h.h, nullptr, m, A.A, c);
}

/* ---- strided batched: layouts (packed = spmm, padded, strided, interleaved, broadcast x), batch sizes, ops */
TYPED_TEST(GpuSpmm, StridedBatchedLayouts)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    Handle h;
    Blas blas;
    mt::Dense m = mt::random_dense(611, 389, 0.4, 71, P::half);
    mt::add_structure(m, 72);
    Mat A;
    make_matrix<P>(h.h, m, true, A);
    if (::testing::Test::HasFatalFailure())
        return;
    uint64_t seed = 5000;
    for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
        const bool opn = op == MACKO_OPERATION_NON_TRANSPOSE;
        const int64_t lx = opn ? m.cols : m.rows, ly = opn ? m.rows : m.cols;
        for (int64_t batch : {1, 2, 3, 8, 16, 17}) {
            struct Lay {
                const char *name;
                int64_t incx, sx, incy, sy;
                bool cublas;
            };
            const Lay lays[] = {
                {"packed", 1, lx, 1, ly, true},
                {"padded", 1, lx + 5, 1, ly + 2, true},
                {"strided", 2, 2 * lx + 1, 3, 3 * ly, true},
                {"interleaved", batch, 1, batch, 1, true},
                {"broadcast x", 1, 0, 1, ly + 1, true},
            };
            for (const Lay &l : lays) {
                SCOPED_TRACE(testing::Message() << (opn ? "op N" : "op T") << " batch=" << batch << " " << l.name);
                Case c;
                c.op = op;
                c.batched = true;
                c.beta = (batch % 2) ? 0.0f : 0.75f;
                c.alpha = (batch % 3) ? 1.0f : -2.0f;
                c.L.n = batch;
                c.L.incb = l.incx;
                c.L.ldb = l.sx;
                c.L.incc = l.incy;
                c.L.ldc = l.sy;
                c.cublas = l.cublas;
                c.seed = ++seed;
                run_case<P>(h.h, &blas, m, A.A, c);
                if (::testing::Test::HasFatalFailure())
                    return;
            }
        }
    }
}

/* ---- every path (staged plain, staged swizzled, global with 32- and 64-bit indices, int64 row pointers; forced
 * through the plan override, src/plan.h) computes the bitwise same result for a given tile, and the reference's */
TYPED_TEST(GpuSpmm, PathsAgreeBitwise)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h;
    mt::Dense m = mt::random_dense(3001, 2500, 0.3, 21, P::half);
    mt::add_structure(m, 22);
    Mat A;
    make_matrix<P>(h.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    const int64_t n = 16, ldb = m.cols + 1, ldc = m.rows + 3;
    std::vector<float> bv = mt::random_vector(ldb * n, 3, P::half);
    std::vector<E> bh(bv.size());
    for (size_t i = 0; i < bv.size(); i++)
        bh[i] = P::from(bv[i]);
    DevMem db(bh.size() * sizeof(E)), dc((size_t)(ldc * n) * sizeof(E));
    CUDA_CHECK(cudaMemcpy(db.p, bh.data(), db.bytes, cudaMemcpyHostToDevice));
    const float alpha = 1.5f, beta = 0.0f;

    struct Run {
        const char *name;
        int index, path, swizzle, kernel;
    };
    /* Bitwise equal to each other (the layout changes addresses only); the first result is checked against the
     * reference. */
    const Run runs[] = {{"staged plain", MACKO_IDX_I32, MACKO_MM_PATH_STAGED, 0, MACKO_K_MM_STAGED},
                        {"staged swizzle 3", MACKO_IDX_I32, MACKO_MM_PATH_STAGED, 3, MACKO_K_MM_STAGED},
                        {"staged swizzle 5", MACKO_IDX_I32, MACKO_MM_PATH_STAGED, 5, MACKO_K_MM_STAGED},
                        {"staged swizzle auto", MACKO_IDX_I32, MACKO_MM_PATH_STAGED, -1, MACKO_K_MM_STAGED},
                        {"global i32", MACKO_IDX_I32, MACKO_MM_PATH_GLOBAL, 0, MACKO_K_MM_GLOBAL_I32},
                        {"global i64 rp32", MACKO_IDX_I64_RP32, MACKO_MM_PATH_GLOBAL, 0, MACKO_K_MM_GLOBAL_I64_RP32},
                        {"global i64 rp64", MACKO_IDX_I64_RP64, MACKO_MM_PATH_GLOBAL, 0, MACKO_K_MM_GLOBAL_I64_RP64}};
    for (int tile : {2, 4, 8, 16}) {
        std::vector<E> first;
        std::string first_name;
        for (const Run &r : runs) {
            /* tiles a path does not have (the plan caps the global tile) are compared with the same cap */
            const int cap = r.path == MACKO_MM_PATH_GLOBAL ? (r.index == MACKO_IDX_I32 ? 16 / (int)sizeof(E) : 8)
                                                           : 32 / (int)sizeof(E);
            if (tile > cap)
                continue;
            SCOPED_TRACE(testing::Message() << "tile " << tile << ", " << r.name);
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            f.index = r.index;
            f.mm_path = r.path;
            f.mm_tile = tile;
            f.mm_swizzle = r.swizzle;
            ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            const macko_launch *L = macko_plan_mm(&A.A->plan, n, m.cols, 1, ldb, 1);
            ASSERT_NE(L, nullptr);
            EXPECT_EQ(L->kernel, r.kernel);
            /* the staged tile narrows where the device's shared memory cannot hold it */
            EXPECT_TRUE(r.path == MACKO_MM_PATH_STAGED ? L->tile <= tile : L->tile == tile) << L->tile;
            if (r.path == MACKO_MM_PATH_STAGED && r.swizzle >= 0) {
                EXPECT_EQ(L->swizzle, r.swizzle);
            }
            CUDA_CHECK(cudaMemset(dc.p, 0xFF, dc.bytes));
            ASSERT_EQ(P::mm(h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, A.A, db.as<E>(), ldb, &beta, dc.as<E>(),
                            ldc),
                      MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            std::vector<E> out((size_t)(ldc * n));
            CUDA_CHECK(cudaMemcpy(out.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
            if (first.empty()) {
                first = out;
                first_name = r.name;
                for (int64_t j = 0; j < n; j++) {
                    std::vector<double> xd((size_t)m.cols), yr((size_t)m.rows), got((size_t)m.rows);
                    for (int64_t i = 0; i < m.cols; i++)
                        xd[(size_t)i] = P::to(bh[(size_t)(j * ldb + i)]);
                    mt::ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.5, xd, 0.0, yr);
                    for (int64_t i = 0; i < m.rows; i++)
                        got[(size_t)i] = P::to(out[(size_t)(j * ldc + i)]);
                    EXPECT_LT(mt::rel_l2(got, yr), P::rel_l2_max) << "column " << j;
                }
            } else {
                for (int64_t j = 0; j < n; j++)
                    EXPECT_EQ(std::memcmp(out.data() + j * ldc, first.data() + j * ldc, (size_t)m.rows * sizeof(E)), 0)
                        << "column " << j << " differs from " << first_name;
            }
        }
    }
    /* A forced path that cannot run this problem says so: the override refuses the staged path on 64-bit indices;
     * a forced SPMV path leaves n > 1 without a launch, which the call reports and C stays as it was. */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.index = MACKO_IDX_I64_RP32;
    f.mm_path = MACKO_MM_PATH_STAGED;
    EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 4);
    f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_SPMV;
    ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
    std::vector<E> before((size_t)(ldc * n)), after((size_t)(ldc * n));
    CUDA_CHECK(cudaMemcpy(before.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(P::mm(h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, A.A, db.as<E>(), ldb, &beta, dc.as<E>(), ldc),
              MACKO_STATUS_NOT_SUPPORTED);
    CUDA_CHECK(cudaMemcpy(after.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(before.data(), after.data(), dc.bytes), 0);
    ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, nullptr), MACKO_STATUS_SUCCESS);
}

/* ---- bitwise reproducible over 100 runs, every element rewritten each time */
TYPED_TEST(GpuSpmm, BitwiseDeterministic100Runs)
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
    const int64_t n = 17;
    std::vector<float> bv = mt::random_vector(3000 * n, 33, P::half);
    std::vector<E> bh(bv.size());
    for (size_t i = 0; i < bv.size(); i++)
        bh[i] = P::from(bv[i]);
    DevMem db(bh.size() * sizeof(E)), dc((size_t)(3000 * n) * sizeof(E));
    CUDA_CHECK(cudaMemcpy(db.p, bh.data(), db.bytes, cudaMemcpyHostToDevice));
    float alpha = 0.75f, beta = 0.0f;
    for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE})
        for (int64_t nn : {(int64_t)8, n}) {
            const int64_t mo = op == MACKO_OPERATION_NON_TRANSPOSE ? 2500 : 3000;
            const int64_t ki = op == MACKO_OPERATION_NON_TRANSPOSE ? 3000 : 2500;
            const size_t cnt = (size_t)(mo * nn);
            std::vector<E> first(cnt), out(cnt);
            for (int run = 0; run < runs; run++) {
                CUDA_CHECK(cudaMemset(dc.p, 0xFF, cnt * sizeof(E))); /* NaN poison */
                ASSERT_EQ(P::mm(h.h, op, nn, &alpha, A.A, db.as<E>(), ki, &beta, dc.as<E>(), mo),
                          MACKO_STATUS_SUCCESS);
                CUDA_CHECK(cudaMemcpy(run == 0 ? first.data() : out.data(), dc.p, cnt * sizeof(E),
                                      cudaMemcpyDeviceToHost));
                if (run == 0) {
                    for (size_t i = 0; i < cnt; i++)
                        ASSERT_TRUE(std::isfinite(P::to(first[i]))) << "C[" << i << "] not written";
                } else {
                    ASSERT_EQ(std::memcmp(out.data(), first.data(), cnt * sizeof(E)), 0)
                        << "run " << run << " op " << op << " n " << nn;
                }
            }
        }
}

/* ---- n == 1 and batch == 1 are bitwise the SpMV result */
TYPED_TEST(GpuSpmm, OneColumnIsSpmv)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    Handle h;
    mt::Dense m = mt::random_dense(1500, 1024, 0.4, 41, P::half);
    Mat A;
    make_matrix<P>(h.h, m, false, A);
    if (::testing::Test::HasFatalFailure())
        return;
    std::vector<float> xv = mt::random_vector(1024 * 2, 42, P::half);
    std::vector<E> xh(xv.size());
    for (size_t i = 0; i < xv.size(); i++)
        xh[i] = P::from(xv[i]);
    DevMem dx(xh.size() * sizeof(E)), dy1(1500 * 2 * sizeof(E)), dy2(1500 * 2 * sizeof(E)), dy3(1500 * 2 * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dx.p, xh.data(), dx.bytes, cudaMemcpyHostToDevice));
    float alpha = 1.25f, beta = 0.0f;
    for (int64_t inc : {1, 2}) {
        CUDA_CHECK(cudaMemset(dy1.p, 0, dy1.bytes));
        CUDA_CHECK(cudaMemset(dy2.p, 0, dy2.bytes));
        CUDA_CHECK(cudaMemset(dy3.p, 0, dy3.bytes));
        const E *x = dx.as<E>();
        if (inc == 1) {
            ASSERT_EQ(P::mm(h.h, MACKO_OPERATION_NON_TRANSPOSE, 1, &alpha, A.A, x, 1024, &beta, dy1.as<E>(), 1500),
                      MACKO_STATUS_SUCCESS);
        } else {
            ASSERT_EQ(P::sb(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, x, 2, 0, &beta, dy1.as<E>(), 2, 0, 1),
                      MACKO_STATUS_SUCCESS);
        }
        ASSERT_EQ(P::sb(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, x, inc, 5, &beta, dy2.as<E>(), inc, 7, 1),
                  MACKO_STATUS_SUCCESS);
        if (P::half)
            ASSERT_EQ(macko_Hspmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A,
                                  reinterpret_cast<const macko_half *>(x), inc, &beta,
                                  reinterpret_cast<macko_half *>(dy3.p), inc),
                      MACKO_STATUS_SUCCESS);
        else
            ASSERT_EQ(macko_Sspmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, reinterpret_cast<const float *>(x),
                                  inc, &beta, reinterpret_cast<float *>(dy3.p), inc),
                      MACKO_STATUS_SUCCESS);
        std::vector<E> o1(1500 * 2), o2(1500 * 2), o3(1500 * 2);
        CUDA_CHECK(cudaMemcpy(o1.data(), dy1.p, dy1.bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(o2.data(), dy2.p, dy2.bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(o3.data(), dy3.p, dy3.bytes, cudaMemcpyDeviceToHost));
        EXPECT_EQ(std::memcmp(o1.data(), o3.data(), dy1.bytes), 0) << "inc " << inc;
        EXPECT_EQ(std::memcmp(o2.data(), o3.data(), dy1.bytes), 0) << "inc " << inc;
    }
}

/* ---- capture one spmm call in a CUDA graph on a non-default stream and replay it (host mode: values frozen at
 * capture; device mode: read at every replay) */
TYPED_TEST(GpuSpmm, GraphCaptureAndReplay)
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
    const int64_t n = 8;
    std::vector<float> bv = mt::random_vector(1024 * n, 52, P::half), c0 = mt::random_vector(1500 * n, 53, P::half);
    std::vector<E> bh(bv.size()), ch(c0.size());
    for (size_t i = 0; i < bv.size(); i++)
        bh[i] = P::from(bv[i]);
    for (size_t i = 0; i < c0.size(); i++)
        ch[i] = P::from(c0[i]);
    DevMem db(bh.size() * sizeof(E)), dc(ch.size() * sizeof(E)), dab(2 * sizeof(float));
    CUDA_CHECK(cudaMemcpy(db.p, bh.data(), db.bytes, cudaMemcpyHostToDevice));
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
        macko_status_t st = P::mm(h.h, MACKO_OPERATION_NON_TRANSPOSE, n, pa, A.A, db.as<E>(), 1024, pb, dc.as<E>(),
                                  1500);
        CUDA_CHECK(cudaStreamEndCapture(s, &graph));
        ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        for (float alpha_now : {2.0f, -1.0f, 0.0f}) {
            ab[0] = alpha_now;
            CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpy(dc.p, ch.data(), dc.bytes, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaGraphLaunch(exec, s));
            CUDA_CHECK(cudaStreamSynchronize(s));
            std::vector<E> out(ch.size());
            CUDA_CHECK(cudaMemcpy(out.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
            const double expect_alpha = mode == MACKO_POINTER_MODE_DEVICE ? alpha_now : 2.0;
            for (int64_t j = 0; j < n; j++) {
                std::vector<double> xd(1024), yr(1500), got(1500);
                for (size_t i = 0; i < 1024; i++)
                    xd[i] = P::to(bh[(size_t)j * 1024 + i]);
                for (size_t i = 0; i < 1500; i++)
                    yr[i] = P::to(ch[(size_t)j * 1500 + i]);
                mt::ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, expect_alpha, xd, -0.5, yr);
                for (size_t i = 0; i < 1500; i++)
                    got[i] = P::to(out[(size_t)j * 1500 + i]);
                EXPECT_LT(mt::rel_l2(got, yr), P::rel_l2_max) << "alpha now " << alpha_now << " column " << j;
            }
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    macko_set_pointer_mode(h.h, MACKO_POINTER_MODE_HOST);
    macko_set_stream(h.h, nullptr);
    cudaStreamDestroy(s);
}

/* ---- bad arguments, one at a time, in signature order: status, position, and C untouched */
TYPED_TEST(GpuSpmm, SpmmBadArgumentsByPosition)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    gt::BadArgFixture<P, 256> f;
    f.out_name = "C";
    f.setup();
    if (::testing::Test::HasFatalFailure())
        return;
    const auto N = MACKO_OPERATION_NON_TRANSPOSE, T = MACKO_OPERATION_TRANSPOSE;
    const macko_status_t INV = MACKO_STATUS_INVALID_VALUE, NI = MACKO_STATUS_NOT_INITIALIZED;
    macko_handle_t h = f.h.h;
    macko_mat_t A = f.A.A; /* 40 x 30: op N has k = 30, m = 40 */
    const E *B = f.din.template as<E>();
    E *C = f.dout.template as<E>();
    const float *a = &f.one, *b = &f.zero;
    f.expect(P::mm(nullptr, N, 2, a, A, B, 30, b, C, 40), INV, 1, "handle NULL");
    f.expect(P::mm(h, (macko_operation_t)2, 2, a, A, B, 30, b, C, 40), INV, 2, "op 2");
    f.expect(P::mm(h, N, -1, a, A, B, 30, b, C, 40), INV, 3, "n -1");
    f.expect(P::mm(h, N, 2, nullptr, A, B, 30, b, C, 40), INV, 4, "alpha NULL");
    f.expect(P::mm(h, N, 2, a, nullptr, B, 30, b, C, 40), INV, 5, "A NULL");
    f.expect(P::mm(h, N, 2, a, f.Aother.A, B, 30, b, C, 40), INV, 5, "A of the other precision");
    f.expect(P::mm(h, N, 2, a, f.Ahost.A, B, 30, b, C, 40), NI, 5, "A not on the device");
    A->device += 7;
    f.expect(P::mm(h, N, 2, a, A, B, 30, b, C, 40), INV, 5, "A on another device");
    A->device -= 7;
    f.expect(P::mm(h, T, 2, a, A, B, 40, b, C, 30), NI, 2, "op T without macko_analysis");
    f.expect(P::mm(h, N, 2, a, A, nullptr, 30, b, C, 40), INV, 6, "B NULL");
    f.expect(P::mm(h, N, 2, a, A, (const E *)((const char *)B + 1), 30, b, C, 40), INV, 6, "B misaligned");
    f.expect(P::mm(h, N, 2, a, A, B, 29, b, C, 40), INV, 7, "ldb < k");
    f.expect(P::mm(h, N, 2, a, A, B, 0, b, C, 40), INV, 7, "ldb 0");
    f.expect(P::mm(h, N, 3, a, A, B, INT64_MAX / 2, b, C, 40), INV, 7, "ldb overflowing");
    f.expect(P::mm(h, N, 2, a, A, B, 30, nullptr, C, 40), INV, 8, "beta NULL");
    f.expect(P::mm(h, N, 2, a, A, B, 30, b, nullptr, 40), INV, 9, "C NULL");
    f.expect(P::mm(h, N, 2, a, A, B, 30, b, (E *)((char *)C + 1), 40), INV, 9, "C misaligned");
    f.expect(P::mm(h, N, 2, a, A, B, 30, b, C, 39), INV, 10, "ldc < m");
    f.expect(P::mm(h, N, 2, a, A, B, 30, b, C, -5), INV, 10, "ldc negative");
    f.expect(P::mm(h, N, 3, a, A, B, 30, b, C, INT64_MAX / 2), INV, 10, "ldc overflowing");
    /* the first bad argument wins */
    f.expect(P::mm(h, N, -1, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0), INV, 3, "n and everything after");
    f.expect(P::mm(h, N, 2, a, A, nullptr, 0, b, nullptr, 0), INV, 6, "B, ldb, C, ldc bad");
    f.expect(P::mm(h, N, 2, a, A, B, 30, b, nullptr, 0), INV, 9, "C and ldc bad");
    /* n == 0: B and C may be NULL but ld is still checked */
    f.expect(P::mm(h, N, 0, a, A, nullptr, 29, b, nullptr, 40), INV, 7, "n 0 with ldb < k");
    EXPECT_EQ(P::mm(h, N, 2, a, A, B, 30, b, C, 40), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_get_last_error_position(), 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TYPED_TEST(GpuSpmm, StridedBatchedBadArgumentsByPosition)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    gt::BadArgFixture<P, 256> f;
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
    f.expect(P::sb(nullptr, N, a, A, x, 1, 30, b, y, 1, 40, 2), INV, 1, "handle NULL");
    f.expect(P::sb(h, (macko_operation_t)7, a, A, x, 1, 30, b, y, 1, 40, 2), INV, 2, "op 7");
    f.expect(P::sb(h, N, nullptr, A, x, 1, 30, b, y, 1, 40, 2), INV, 3, "alpha NULL");
    f.expect(P::sb(h, N, a, nullptr, x, 1, 30, b, y, 1, 40, 2), INV, 4, "A NULL");
    f.expect(P::sb(h, N, a, f.Aother.A, x, 1, 30, b, y, 1, 40, 2), INV, 4, "A of the other precision");
    f.expect(P::sb(h, N, a, f.Ahost.A, x, 1, 30, b, y, 1, 40, 2), NI, 4, "A not on the device");
    f.expect(P::sb(h, T, a, A, x, 1, 40, b, y, 1, 30, 2), NI, 2, "op T without macko_analysis");
    f.expect(P::sb(h, N, a, A, nullptr, 1, 30, b, y, 1, 40, 2), INV, 5, "x NULL");
    f.expect(P::sb(h, N, a, A, (const E *)((const char *)x + 1), 1, 30, b, y, 1, 40, 2), INV, 5, "x misaligned");
    f.expect(P::sb(h, N, a, A, x, 0, 30, b, y, 1, 40, 2), INV, 6, "incx 0");
    f.expect(P::sb(h, N, a, A, x, INT64_MAX / 2, 30, b, y, 1, 40, 2), INV, 6, "incx overflowing");
    f.expect(P::sb(h, N, a, A, x, 1, -1, b, y, 1, 40, 2), INV, 7, "stridex -1");
    f.expect(P::sb(h, N, a, A, x, 1, INT64_MAX / 2, b, y, 1, 40, 3), INV, 7, "stridex overflowing");
    f.expect(P::sb(h, N, a, A, x, 1, 30, nullptr, y, 1, 40, 2), INV, 8, "beta NULL");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, nullptr, 1, 40, 2), INV, 9, "y NULL");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, (E *)((char *)y + 1), 1, 40, 2), INV, 9, "y misaligned");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, y, -2, 40, 2), INV, 10, "incy -2");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, y, INT64_MAX / 4, 40, 2), INV, 10, "incy overflowing");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, y, 1, -40, 2), INV, 11, "stridey negative");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, y, 1, 0, 2), INV, 11, "stridey 0 with batch 2");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, y, 1, INT64_MAX / 2, 3), INV, 11, "stridey overflowing");
    f.expect(P::sb(h, N, a, A, x, 1, 30, b, y, 1, 40, -1), INV, 12, "batch -1");
    /* the first bad argument wins; NULL vectors are allowed when nothing is referenced */
    f.expect(P::sb(h, N, a, A, nullptr, 0, -1, b, nullptr, 0, -1, -1), INV, 6, "incx and after");
    f.expect(P::sb(h, N, a, A, nullptr, 1, 0, b, nullptr, 1, 0, -1), INV, 12, "batch -1 with NULL vectors");
    EXPECT_EQ(P::sb(h, N, a, A, nullptr, 1, 0, b, nullptr, 1, 0, 0), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(P::sb(h, N, a, A, x, 1, 0, b, y, 1, 0, 1), MACKO_STATUS_SUCCESS); /* batch 1: strides unused */
    EXPECT_EQ(P::sb(h, N, a, A, x, 1, 30, b, y, 1, 40, 2), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_get_last_error_position(), 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

/* ---- bad arguments reachable without a GPU (run everywhere) */
TEST(SpmmArgs, NullHandleOnAnyMachine)
{
    uint16_t hb[4] = {0, 0, 0, 0}, hc[4] = {1, 2, 3, 4};
    float fb[4] = {0, 0, 0, 0}, fc[4] = {1, 2, 3, 4};
    float one = 1.0f, zero = 0.0f;
    EXPECT_EQ(macko_Hspmm(nullptr, MACKO_OPERATION_NON_TRANSPOSE, 2, &one, nullptr, hb, 2, &zero, hc, 2),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("macko_Hspmm"), std::string::npos);
    EXPECT_EQ(macko_Sspmm(nullptr, MACKO_OPERATION_TRANSPOSE, -1, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("macko_Sspmm"), std::string::npos);
    EXPECT_EQ(macko_Hspmv_strided_batched(nullptr, MACKO_OPERATION_NON_TRANSPOSE, &one, nullptr, hb, 1, 2, &zero, hc,
                                          1, 2, 2),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("macko_Hspmv_strided_batched"), std::string::npos);
    EXPECT_EQ(macko_Sspmv_strided_batched(nullptr, MACKO_OPERATION_NON_TRANSPOSE, &one, nullptr, fb, 1, 2, &zero, fc,
                                          1, 2, 2),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("macko_Sspmv_strided_batched"), std::string::npos);
    EXPECT_EQ(hc[0], 1);
    EXPECT_EQ(hc[3], 4);
    EXPECT_EQ(fc[0], 1.0f);
    EXPECT_EQ(fc[3], 4.0f);
}

/* ---- timing of the paths (not a test: run with --gtest_also_run_disabled_tests --gtest_filter=*SpmmTiming*).
 * Events around each launch, L2 flushed before each, median of 30; prints one line per (shape, n, path). */
double time_us(const std::function<void()> &launch, void *flush, size_t flush_bytes, int iters = 30)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> t;
    for (int i = 0; i < iters + 5; i++) {
        cudaMemsetAsync(flush, i & 0xFF, flush_bytes, nullptr);
        cudaEventRecord(e0, nullptr);
        launch();
        cudaEventRecord(e1, nullptr);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 5)
            t.push_back(1e3 * ms);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

TEST(SpmmTiming, DISABLED_Paths)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    cudaDeviceProp prop;
    ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    const size_t flush_bytes = (size_t)prop.l2CacheSize * 4;
    DevMem flush(flush_bytes);
    struct Shape {
        int64_t r, c;
    };
    for (const Shape sh : {Shape{12288, 12288}, Shape{28672, 8192}}) {
        const auto t0 = std::chrono::steady_clock::now();
        mt::Dense m = mt::random_dense(sh.r, sh.c, 0.5, 7, true);
        Mat A;
        make_matrix<HP>(h.h, m, false, A);
        if (::testing::Test::HasFatalFailure())
            return;
        m.v.clear();
        m.v.shrink_to_fit();
        const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const int64_t nmax = 16;
        DevMem db((size_t)(sh.c * nmax) * 2), dc((size_t)(sh.r * nmax) * 2);
        cudaMemset(db.p, 0x3C, db.bytes); /* 1.0009765625-ish halves: finite */
        for (int64_t n : {1, 2, 4, 8, 16}) {
            struct Run {
                const char *name;
                int path, tile, swizzle;
            };
            const Run runs[] = {{"auto", MACKO_MM_PATH_AUTO, 0, -1},
                                {"staged plain", MACKO_MM_PATH_STAGED, 0, 0},
                                {"staged swizzle", MACKO_MM_PATH_STAGED, 0, -1},
                                {"global", MACKO_MM_PATH_GLOBAL, 0, 0}};
            for (const Run &r : runs) {
                if (n == 1 && r.path != MACKO_MM_PATH_AUTO)
                    continue;
                if (r.path == MACKO_MM_PATH_GLOBAL && n != 8)
                    continue;
                macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
                f.mm_path = r.path;
                f.mm_tile = r.tile;
                f.mm_swizzle = r.swizzle;
                ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                const float one = 1.0f, zero = 0.0f;
                int err = 0;
                const double us = time_us(
                    [&] {
                        err |= macko_Hspmm(h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &one, A.A,
                                           static_cast<const macko_half *>(db.p), sh.c, &zero,
                                           static_cast<macko_half *>(dc.p), sh.r) != MACKO_STATUS_SUCCESS;
                    },
                    flush.p, flush_bytes);
                printf("[timing] %s %lldx%lld d=0.5 n=%lld %-22s %8.1f us%s\n", prop.name, (long long)sh.r,
                       (long long)sh.c, (long long)n, r.name, us, err ? " (launch error)" : "");
            }
        }
        printf("[timing] (matrix generation and encoding %.1f s)\n", gen_s);
        fflush(stdout);
    }
}

} // namespace
