/* The result checker of conformance.h. */
#include "conformance.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace conf {

namespace {

size_t span(int64_t len, int64_t inc, int64_t count, int64_t ld)
{
    return (len <= 0 || count <= 0) ? 0 : (size_t)((len - 1) * inc + (count - 1) * ld + 1);
}

std::vector<float> operand(int64_t count, uint64_t seed, bool half, bool positive)
{
    std::vector<float> v = mt::random_vector(count, seed, half);
    if (positive)
        for (float &f : v)
            f = std::fabs(f);
    return v;
}

/* The stored entries of op(A) by output row, from the dense matrix: (input index, value), inputs ascending. */
std::vector<std::vector<std::pair<int64_t, double>>> rows_of(const mt::Dense &m, bool opn)
{
    std::vector<std::vector<std::pair<int64_t, double>>> out((size_t)(opn ? m.rows : m.cols));
    for (int64_t r = 0; r < m.rows; r++)
        for (int64_t c = 0; c < m.cols; c++) {
            const double a = m.at(r, c);
            if (a != 0.0)
                out[(size_t)(opn ? r : c)].push_back({opn ? c : r, a});
        }
    return out;
}

bool all_finite(const std::vector<double> &v)
{
    return std::all_of(v.begin(), v.end(), [](double d) { return std::isfinite(d); });
}

} // namespace

template <class P> void check_product(macko_handle_t h, gt::Blas *blas, const mt::Dense &m, macko_mat_t A,
                                      const Case &cs)
{
    using E = typename P::E;
    const bool opn = cs.op == MACKO_OPERATION_NON_TRANSPOSE;
    const int64_t mo = opn ? m.rows : m.cols, ki = opn ? m.cols : m.rows;
    const int64_t n = cs.routine == SPMV ? 1 : cs.n;
    int64_t incb = cs.incb, ldb = cs.ldb, incc = cs.incc, ldc = cs.ldc;
    if (cs.routine == SPMM) {
        incb = incc = 1;
        ldb = std::max<int64_t>(ki, 1) + cs.ldb_extra;
        ldc = std::max<int64_t>(mo, 1) + cs.ldc_extra;
    } else if (cs.routine == SPMV) {
        ldb = ldc = 0;
    }
    if (cs.bcol != nullptr) {
        ASSERT_EQ((int64_t)cs.bcol->size(), ki);
    }

    /* B's buffer: NaN everywhere but at B's elements. */
    std::vector<E> bh(span(ki, incb, n, ldb), P::nan());
    {
        const std::vector<float> r = operand(ki * n, cs.seed * 7 + 1, P::half, cs.positive);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < ki; i++)
                bh[(size_t)(i * incb + j * ldb)] = P::from(cs.bcol ? (*cs.bcol)[(size_t)i] : r[(size_t)(j * ki + i)]);
    }
    /* C's buffer: the sentinel in the gaps, NaN (beta == 0) or random values at C's elements. */
    std::vector<E> ch(span(mo, incc, n, ldc), P::sentinel());
    std::vector<char> is_c(ch.size(), 0);
    {
        const std::vector<float> r = operand(mo * n, cs.seed * 7 + 2, P::half, cs.positive);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < mo; i++) {
                const size_t o = (size_t)(i * incc + j * ldc);
                ASSERT_EQ(is_c[o], 0) << "test layout error: C elements overlap";
                is_c[o] = 1;
                ch[o] = cs.beta == 0.0f ? P::nan() : P::from(r[(size_t)(j * mo + i)]);
            }
    }

    gt::DevMem db(bh.size() * sizeof(E)), dc(ch.size() * sizeof(E)), dab(2 * sizeof(float));
    if (!bh.empty()) {
        CUDA_CHECK(cudaMemcpy(db.p, bh.data(), bh.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    if (!ch.empty()) {
        CUDA_CHECK(cudaMemcpy(dc.p, ch.data(), ch.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    float ab[2] = {cs.alpha, cs.beta};
    CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
    ASSERT_EQ(macko_set_pointer_mode(h, cs.mode), MACKO_STATUS_SUCCESS);
    const bool dev = cs.mode == MACKO_POINTER_MODE_DEVICE;
    const macko_status_t st = call<P>(cs.routine, h, cs.op, n, dev ? dab.as<float>() : &ab[0], A, db.as<E>(), incb,
                                      ldb, dev ? dab.as<float>() + 1 : &ab[1], dc.as<E>(), incc, ldc);
    ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    ASSERT_EQ(macko_set_pointer_mode(h, MACKO_POINTER_MODE_HOST), MACKO_STATUS_SUCCESS);
    std::vector<E> out(ch.size());
    if (!out.empty()) {
        CUDA_CHECK(cudaMemcpy(out.data(), dc.p, out.size() * sizeof(E), cudaMemcpyDeviceToHost));
    }

    /* The gaps of C's buffer (the padding between ld and the rows, the elements between strides) are untouched. */
    int bad = 0;
    for (size_t o = 0; o < out.size(); o++)
        if (!is_c[o] && std::memcmp(&out[o], &ch[o], sizeof(E)) != 0 && bad++ < 5)
            ADD_FAILURE() << "C buffer element " << o << " (not an element of C) was overwritten";

    /* Every element of C written and within tolerance of the reference, column by column. */
    const auto rowsof = rows_of(m, opn);
    std::vector<std::vector<double>> got((size_t)n), ref((size_t)n), sc((size_t)n);
    for (int64_t j = 0; j < n && bad < 5; j++) {
        std::vector<double> x((size_t)ki), y((size_t)mo), s((size_t)mo, 0.0);
        for (int64_t i = 0; i < ki; i++)
            x[(size_t)i] = P::to(bh[(size_t)(i * incb + j * ldb)]);
        for (int64_t i = 0; i < mo; i++)
            y[(size_t)i] = P::to(ch[(size_t)(i * incc + j * ldc)]);
        const std::vector<double> yold = y;
        mt::ref_spmv(A, cs.op, cs.alpha, x, cs.beta, y);
        if (cs.alpha == 0.0f) /* A and B are not read: C = beta*C_old (ref_spmv would form 0*NaN for a NaN B) */
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
            const double gv = P::to(out[(size_t)(i * incc + j * ldc)]), r = y[(size_t)i];
            g[(size_t)i] = gv;
            const int64_t k = (int64_t)rowsof[(size_t)i].size();
            const bool ok = std::isfinite(r) ? std::fabs(gv - r) <= P::tol(r, s[(size_t)i], k)
                                             : (std::isnan(r) == std::isnan(gv) && (std::isnan(r) || gv == r));
            if (!ok && bad++ < 5)
                ADD_FAILURE() << "C(" << i << ", " << j << ") = " << gv << ", reference " << r << " (tolerance "
                              << P::tol(r, s[(size_t)i], k) << ", terms " << k << ")";
        }
        if (mo > 0 && all_finite(y)) {
            EXPECT_LT(mt::rel_l2(g, y), P::rel_l2_max) << "column " << j;
        }
        got[(size_t)j] = std::move(g);
        ref[(size_t)j] = std::move(y);
        sc[(size_t)j] = std::move(s);
    }

    /* cuBLAS on the dense matrix, same alpha/beta/C_old and the same buffers. Row-major m (rows x cols) is the
     * column-major m^T with lda = cols. */
    if (!blas || !cs.cublas || mo == 0 || ki == 0 || n == 0 || bad)
        return;
    if (cs.routine == SPMV && P::half && (incb != 1 || incc != 1))
        return;
    std::vector<uint8_t> dense = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, m.cols);
    gt::DevMem dA(dense.size()), dc2(ch.size() * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dA.p, dense.data(), dense.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc2.p, ch.data(), ch.size() * sizeof(E), cudaMemcpyHostToDevice));
    const cublasOperation_t t = opn ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int M = (int)m.cols, N = (int)m.rows; /* of the column-major m^T */
    if (cs.routine == BATCHED && P::half) {
        CUBLAS_CHECK(cublasHSHgemvStridedBatched(blas->h, t, M, N, &ab[0], dA.as<__half>(), M, 0, db.as<__half>(),
                                                 (int)incb, ldb, &ab[1], dc2.as<__half>(), (int)incc, ldc, (int)n));
    } else if (cs.routine == BATCHED) {
        CUBLAS_CHECK(cublasSgemvStridedBatched(blas->h, t, M, N, &ab[0], dA.as<float>(), M, 0, db.as<float>(),
                                               (int)incb, ldb, &ab[1], dc2.as<float>(), (int)incc, ldc, (int)n));
    } else if (P::half) { /* SpMV too: cublasGemmEx with N = 1 */
        CUBLAS_CHECK(cublasGemmEx(blas->h, t, CUBLAS_OP_N, (int)mo, (int)n, (int)ki, &ab[0], dA.p, CUDA_R_16F, M,
                                  db.p, CUDA_R_16F, (int)std::max(ldb, ki), &ab[1], dc2.p, CUDA_R_16F,
                                  (int)std::max(ldc, mo), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (cs.routine == SPMM) {
        CUBLAS_CHECK(cublasSgemm(blas->h, t, CUBLAS_OP_N, (int)mo, (int)n, (int)ki, &ab[0], dA.as<float>(), M,
                                 db.as<float>(), (int)ldb, &ab[1], dc2.as<float>(), (int)ldc));
    } else {
        CUBLAS_CHECK(cublasSgemv(blas->h, t, M, N, &ab[0], dA.as<float>(), M, db.as<float>(), (int)incb, &ab[1],
                                 dc2.as<float>(), (int)incc));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<E> outc(ch.size());
    CUDA_CHECK(cudaMemcpy(outc.data(), dc2.p, outc.size() * sizeof(E), cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < mo; i++) {
            const double gc = P::to(outc[(size_t)(i * incc + j * ldc)]), r = ref[(size_t)j][(size_t)i];
            if (!std::isfinite(r))
                continue;
            const double s = sc[(size_t)j][(size_t)i];
            const double t2 = 2.0 * P::tol(r, s, (int64_t)rowsof[(size_t)i].size()) +
                              (P::half && cs.routine == SPMM ? std::ldexp(s, -12) : 0.0);
            if (std::fabs(got[(size_t)j][(size_t)i] - gc) > t2 && bad++ < 5)
                ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got[(size_t)j][(size_t)i] << ", cuBLAS " << gc
                              << ", reference " << r;
        }
}

template <class P>
double error_vs_reference(macko_mat_t A, macko_operation_t op, double alpha, const typename P::E *x, int64_t incx,
                          double beta, const typename P::E *y0, const typename P::E *got, int64_t incy)
{
    int64_t rows = 0, cols = 0;
    EXPECT_EQ(macko_mat_get_info(A, &rows, &cols, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    const bool opn = op == MACKO_OPERATION_NON_TRANSPOSE;
    const size_t lx = (size_t)(opn ? cols : rows), ly = (size_t)(opn ? rows : cols);
    std::vector<double> xd = decode<P>(x, lx, incx), yr(ly, 0.0);
    if (y0 != nullptr)
        yr = decode<P>(y0, ly, incy);
    mt::ref_spmv(A, op, alpha, xd, beta, yr);
    return mt::rel_l2(decode<P>(got, ly, incy), yr);
}

template void check_product<HP>(macko_handle_t, gt::Blas *, const mt::Dense &, macko_mat_t, const Case &);
template void check_product<SP>(macko_handle_t, gt::Blas *, const mt::Dense &, macko_mat_t, const Case &);
template double error_vs_reference<HP>(macko_mat_t, macko_operation_t, double, const HP::E *, int64_t, double,
                                       const HP::E *, const HP::E *, int64_t);
template double error_vs_reference<SP>(macko_mat_t, macko_operation_t, double, const SP::E *, int64_t, double,
                                       const SP::E *, const SP::E *, int64_t);

/* ---- the shared handles of GpuSuite */
namespace {
macko_handle_t g_handle = nullptr;
gt::Blas *g_blas = nullptr;
} // namespace

void GpuSuite::SetUpTestSuite()
{
    if (!mt::gpu_available() || g_handle != nullptr)
        return;
    if (macko_create(&g_handle) != MACKO_STATUS_SUCCESS)
        g_handle = nullptr;
    g_blas = new gt::Blas;
}

void GpuSuite::TearDownTestSuite()
{
    delete g_blas;
    g_blas = nullptr;
    macko_destroy(g_handle);
    g_handle = nullptr;
}

macko_handle_t GpuSuite::handle() { return g_handle; }
gt::Blas *GpuSuite::blas() { return g_blas; }

void GpuSuite::SetUp()
{
    if (!mt::gpu_available())
        GTEST_SKIP() << "no CUDA device: GPU test skipped";
    ASSERT_NE(g_handle, nullptr) << "macko_create failed for the suite";
}

} // namespace conf
