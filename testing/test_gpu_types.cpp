/* The value types of issue 17 on the GPU against the double host reference mt::ref_spmv: every supported
 * (A, x/B, y/C, compute) combination through macko_spmv_ex / macko_spmm_ex, and the fp64 routines macko_Dspmv /
 * Dspmm / Dspmv_strided_batched; op N and T, odd sizes, empty / dense / gappy rows, alpha and beta including 0 (C
 * then NaN before the call: it must not be read), both pointer modes, and bitwise run-to-run determinism.
 * Tolerance per output element: 2 (k + 4) u S + (output rounding) with u the accumulation's unit roundoff (2^-24,
 * fp64: 2^-53) and S = |alpha| sum |a b| + |beta c_old|; the output rounding is 2^-8 |ref| for bf16, 2^-11 for fp16.
 * The cuBLAS / cuSPARSE comparisons, odd shapes, strides and NaN/Inf of these types run in the conformance suites
 * (conformance.h: test_gpu_products.cpp, test_gpu_paths.cpp). */
#include "common.h"
#include "gpu_fixtures.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Combo {
    macko_datatype_t a, x, y, c;
};
const Combo kCombos[] = {
    {MACKO_R_16F, MACKO_R_16F, MACKO_R_16F, MACKO_R_32F},    {MACKO_R_16BF, MACKO_R_16BF, MACKO_R_16BF, MACKO_R_32F},
    {MACKO_R_32F, MACKO_R_32F, MACKO_R_32F, MACKO_R_32F},    {MACKO_R_64F, MACKO_R_64F, MACKO_R_64F, MACKO_R_64F},
    {MACKO_R_16F, MACKO_R_32F, MACKO_R_32F, MACKO_R_32F},    {MACKO_R_16BF, MACKO_R_32F, MACKO_R_32F, MACKO_R_32F},
};

std::string tname(macko_datatype_t t)
{
    return t == MACKO_R_16F ? "16F" : t == MACKO_R_16BF ? "16BF" : t == MACKO_R_32F ? "32F" : "64F";
}

/* Output rounding of type t relative to the value. */
double out_ulp(macko_datatype_t t)
{
    return t == MACKO_R_16BF ? std::ldexp(1.0, -8) : t == MACKO_R_16F ? std::ldexp(1.0, -11) : 0.0;
}

/* One product C = alpha*op(A)*B + beta*C (n columns, ldb = k + 3, ldc = m + 2) through spmm_ex (n > 1), spmv_ex
 * (n == 1) or the D routines, checked element by element. */
void check(macko_handle_t h, const mt::Dense &m, macko_mat_t A, const Combo &cb, macko_operation_t op, int64_t n,
           double alpha, double beta, macko_pointer_mode_t mode, bool use_d, const std::string &what)
{
    SCOPED_TRACE(what);
    const int64_t rows = op == MACKO_OPERATION_NON_TRANSPOSE ? m.rows : m.cols;
    const int64_t k = op == MACKO_OPERATION_NON_TRANSPOSE ? m.cols : m.rows;
    const int64_t ldb = k + 3, ldc = rows + 2;
    const size_t ye = mt::value_bytes(cb.y);
    std::vector<float> bv = mt::random_vector(ldb * n, 7 + (uint64_t)n, cb.x == MACKO_R_16F);
    std::vector<float> cv = mt::random_vector(ldc * n, 9 + (uint64_t)n, cb.y == MACKO_R_16F);
    for (auto &f : bv)
        f = mt::round_to(f, cb.x);
    for (auto &f : cv)
        f = beta == 0.0 ? std::nanf("") : mt::round_to(f, cb.y);
    std::vector<uint8_t> bb = mt::values_bytes(bv, cb.x), cb0 = mt::values_bytes(cv, cb.y);
    gt::DevMem dB(bb.size()), dC(cb0.size()), dS(16);
    ASSERT_EQ(cudaMemcpy(dB.p, bb.data(), bb.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(macko_set_pointer_mode(h, mode), MACKO_STATUS_SUCCESS);
    const float fs[2] = {(float)alpha, (float)beta};
    const double ds[2] = {alpha, beta};
    const void *hs = cb.c == MACKO_R_64F ? (const void *)ds : (const void *)fs;
    ASSERT_EQ(cudaMemcpy(dS.p, hs, 16, cudaMemcpyHostToDevice), cudaSuccess);
    const size_t ss = cb.c == MACKO_R_64F ? 8 : 4;
    const char *sp = mode == MACKO_POINTER_MODE_DEVICE ? (const char *)dS.p : (const char *)hs;
    std::vector<uint8_t> got[2];
    for (int run = 0; run < 2; run++) {
        ASSERT_EQ(cudaMemcpy(dC.p, cb0.data(), cb0.size(), cudaMemcpyHostToDevice), cudaSuccess);
        macko_status_t st;
        if (use_d && n == 1)
            st = macko_Dspmv(h, op, (const double *)sp, A, dB.as<double>(), 1, (const double *)(sp + 8),
                             dC.as<double>(), 1);
        else if (use_d)
            st = macko_Dspmm(h, op, n, (const double *)sp, A, dB.as<double>(), ldb, (const double *)(sp + 8),
                             dC.as<double>(), ldc);
        else if (n == 1)
            st = macko_spmv_ex(h, op, sp, A, dB.p, cb.x, 1, sp + ss, dC.p, cb.y, 1, cb.c);
        else
            st = macko_spmm_ex(h, op, n, sp, A, dB.p, cb.x, ldb, sp + ss, dC.p, cb.y, ldc, cb.c);
        ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        got[run].resize(cb0.size());
        ASSERT_EQ(cudaMemcpy(got[run].data(), dC.p, cb0.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    EXPECT_EQ(got[0], got[1]) << "not bitwise reproducible";
    ASSERT_EQ(macko_set_pointer_mode(h, MACKO_POINTER_MODE_HOST), MACKO_STATUS_SUCCESS);
    const double u = cb.c == MACKO_R_64F ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
    int bad = 0;
    for (int64_t j = 0; j < n; j++) {
        std::vector<double> x((size_t)k), y((size_t)rows), s((size_t)rows), ax((size_t)k);
        for (int64_t i = 0; i < k; i++) {
            x[(size_t)i] = mt::value_at(bb.data(), cb.x, j * ldb + i);
            ax[(size_t)i] = std::fabs(x[(size_t)i]);
        }
        for (int64_t i = 0; i < rows; i++) {
            y[(size_t)i] = beta == 0.0 ? 0.0 : mt::value_at(cb0.data(), cb.y, j * ldc + i);
            s[(size_t)i] = std::fabs(beta * y[(size_t)i]);
        }
        mt::ref_spmv(A, op, alpha, x, beta, y);
        mt::Dense am = m;
        for (auto &f : am.v)
            f = std::fabs(f);
        std::vector<double> sabs((size_t)rows, 0.0);
        mt::cblas_gemv(am, op, std::fabs(alpha), ax, 0.0, sabs);
        for (int64_t i = 0; i < rows; i++) {
            const double g = mt::value_at(got[0].data(), cb.y, j * ldc + i);
            const double tol = 2.0 * (double)(k + 4) * u * (sabs[(size_t)i] + s[(size_t)i]) +
                               out_ulp(cb.y) * std::fabs(y[(size_t)i]) + 1e-300;
            if (!(std::fabs(g - y[(size_t)i]) <= tol) && bad++ < 5)
                ADD_FAILURE() << "C(" << i << ", " << j << ") = " << g << ", reference " << y[(size_t)i] << ", tol "
                              << tol;
        }
        for (int64_t i = rows; i < ldc && j < n; i++) /* the gap between columns is never written */
            EXPECT_EQ(std::memcmp(&got[0][(size_t)(j * ldc + i) * ye], &cb0[(size_t)(j * ldc + i) * ye], ye), 0);
    }
}

TEST(GpuTypes, EveryCombinationAgainstTheReference)
{
    MACKO_REQUIRE_GPU();
    gt::Handle H;
    const int64_t shapes[][2] = {{1, 1}, {7, 33}, {33, 7}, {257, 4097}, {100, 511}};
    uint64_t seed = 300;
    for (auto &sh : shapes)
        for (const Combo &cb : kCombos) {
            mt::Dense m = mt::random_dense(sh[0], sh[1], 0.3, seed++, true);
            mt::add_structure(m, seed++);
            m = mt::rounded(m, cb.a);
            gt::Mat A;
            std::vector<uint8_t> bytes = mt::to_bytes(m, cb.a, MACKO_ORDER_ROW, m.cols);
            ASSERT_EQ(macko_mat_create_dense_host(&A.A, m.rows, m.cols, cb.a, bytes.data(), m.cols, MACKO_ORDER_ROW),
                      MACKO_STATUS_SUCCESS);
            ASSERT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            ASSERT_EQ(macko_analysis(H.h, MACKO_OPERATION_TRANSPOSE, A.A), MACKO_STATUS_SUCCESS);
            for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE})
                for (int64_t n : {1, 3, 8, 17})
                    for (auto ab : {std::pair<double, double>{1.0, 0.0}, {-0.75, 1.5}, {0.0, 2.0}})
                        for (macko_pointer_mode_t mode : {MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE})
                            for (bool use_d : {false, true}) {
                                if (use_d && cb.a != MACKO_R_64F)
                                    continue;
                                check(H.h, m, A.A, cb, op, n, ab.first, ab.second, mode, use_d,
                                      std::to_string(sh[0]) + "x" + std::to_string(sh[1]) + " A " + tname(cb.a) +
                                          " x " + tname(cb.x) + " op " + std::to_string(op) + " n " +
                                          std::to_string(n) + " alpha " + std::to_string(ab.first) + " beta " +
                                          std::to_string(ab.second) + " mode " + std::to_string(mode) +
                                          (use_d ? " D routine" : " ex"));
                                if (::testing::Test::HasFatalFailure())
                                    return;
                            }
        }
}

/* Hspmv on a bf16 matrix (and every letter routine on a matrix of another type) is refused at A. */
TEST(GpuTypes, LetterRoutinesRefuseOtherTypes)
{
    MACKO_REQUIRE_GPU();
    gt::Handle H;
    mt::Dense m = mt::random_dense(8, 9, 0.5, 5, true);
    for (macko_datatype_t t : {MACKO_R_16BF, MACKO_R_64F}) {
        gt::Mat A;
        std::vector<uint8_t> bytes = mt::to_bytes(m, t, MACKO_ORDER_ROW, 9);
        ASSERT_EQ(macko_mat_create_dense_host(&A.A, 8, 9, t, bytes.data(), 9, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_SUCCESS);
        gt::DevMem x(128), y(128);
        const float one = 1.0f;
        const double d1 = 1.0;
        EXPECT_EQ(macko_Hspmv(H.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A.A, x.as<macko_half>(), 1, &one,
                              y.as<macko_half>(), 1),
                  MACKO_STATUS_INVALID_VALUE);
        EXPECT_EQ(macko_get_last_error_position(), 4);
        if (t != MACKO_R_64F) {
            EXPECT_EQ(macko_Dspmv(H.h, MACKO_OPERATION_NON_TRANSPOSE, &d1, A.A, x.as<double>(), 1, &d1,
                                  y.as<double>(), 1),
                      MACKO_STATUS_INVALID_VALUE);
            EXPECT_EQ(macko_get_last_error_position(), 4);
        }
    }
}

} // namespace
