/* The result checker of conformance.h. */
#include "conformance.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cusparse.h>

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

/* The stored entries of op(A) by output row, from the dense matrix rounded to A's type t: (input index, value),
 * inputs ascending. */
std::vector<std::vector<std::pair<int64_t, double>>> rows_of(const mt::Dense &m, bool opn, macko_datatype_t t)
{
    std::vector<std::vector<std::pair<int64_t, double>>> out((size_t)(opn ? m.rows : m.cols));
    for (int64_t r = 0; r < m.rows; r++)
        for (int64_t c = 0; c < m.cols; c++) {
            const double a = mt::round_to(m.at(r, c), t);
            if (a != 0.0)
                out[(size_t)(opn ? r : c)].push_back({opn ? c : r, a});
        }
    return out;
}

/* y = alpha * op(A) x + beta * y in double over rows (rows_of), entries in input order; beta == 0 does not read y. */
void ref_from_rows(const std::vector<std::vector<std::pair<int64_t, double>>> &rows, double alpha,
                   const std::vector<double> &x, double beta, std::vector<double> &y)
{
    for (size_t i = 0; i < rows.size(); i++) {
        double acc = 0.0;
        for (const auto &e : rows[i])
            acc += e.second * x[(size_t)e.first];
        y[i] = alpha * acc + (beta == 0.0 ? 0.0 : beta * y[i]);
    }
}

bool all_finite(const std::vector<double> &v)
{
    return std::all_of(v.begin(), v.end(), [](double d) { return std::isfinite(d); });
}

using Rows = std::vector<std::vector<std::pair<int64_t, double>>>;

/* One product as the vendor comparisons see it: the matrix, op(A)'s rows, B on the device, C's layout and the host
 * alpha, beta (of P's scalar type). */
struct Vendor {
    gt::Blas *blas;
    const mt::Dense &m;
    bool opn;
    const Rows &rows;
    int64_t n, incb, ldb, incc, ldc;
    const void *ab;
    const void *db;
    size_t cbytes;
};

cudaDataType cuda_type(macko_datatype_t t)
{
    return t == MACKO_R_16F ? CUDA_R_16F : t == MACKO_R_16BF ? CUDA_R_16BF : t == MACKO_R_32F ? CUDA_R_32F : CUDA_R_64F;
}

/* cuBLAS on the dense matrix (in the vector type: fp16 / bf16 values widen to fp32 exactly), C's buffer starting as
 * ch; the whole buffer after the call in out. Row-major m (rows x cols) is the column-major m^T with lda = cols. */
template <class P> void vendor_blas(const Vendor &v, const typename P::E *ch, typename P::E *out, Routine r)
{
    using E = typename P::E;
    using Sc = typename P::Scalar;
    const Sc *ab = static_cast<const Sc *>(v.ab);
    const mt::Dense &m = v.m;
    const int64_t mo = v.opn ? m.rows : m.cols, ki = v.opn ? m.cols : m.rows;
    const std::vector<uint8_t> dense = mt::to_bytes(mt::rounded(m, P::type), P::vtype, MACKO_ORDER_ROW, m.cols);
    gt::DevMem dA(dense.size()), dc(v.cbytes);
    CUDA_CHECK(cudaMemcpy(dA.p, dense.data(), dense.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc.p, ch, v.cbytes, cudaMemcpyHostToDevice));
    const cublasOperation_t t = v.opn ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int M = (int)m.cols, N = (int)m.rows; /* of the column-major m^T */
    const int incb = (int)v.incb, incc = (int)v.incc, n = (int)v.n;
    cublasHandle_t h = v.blas->h;
    const E *B = static_cast<const E *>(v.db);
    if (r == BATCHED) {
        if constexpr (P::vtype == MACKO_R_16F) {
            CUBLAS_CHECK(cublasHSHgemvStridedBatched(h, t, M, N, &ab[0], dA.as<__half>(), M, 0,
                                                     reinterpret_cast<const __half *>(B), incb, v.ldb, &ab[1],
                                                     dc.as<__half>(), incc, v.ldc, n));
        } else if constexpr (P::vtype == MACKO_R_32F) {
            CUBLAS_CHECK(cublasSgemvStridedBatched(h, t, M, N, &ab[0], dA.as<float>(), M, 0, B, incb, v.ldb, &ab[1],
                                                   dc.as<float>(), incc, v.ldc, n));
        } else if constexpr (P::dbl) {
            CUBLAS_CHECK(cublasDgemvStridedBatched(h, t, M, N, &ab[0], dA.as<double>(), M, 0, B, incb, v.ldb, &ab[1],
                                                   dc.as<double>(), incc, v.ldc, n));
        } else {
            FAIL() << "no strided batch in precision " << P::name();
        }
    } else if constexpr (P::half) { /* SpMV too: cublasGemmEx with N = 1 */
        const cudaDataType ct = cuda_type(P::vtype);
        CUBLAS_CHECK(cublasGemmEx(h, t, CUBLAS_OP_N, (int)mo, n, (int)ki, &ab[0], dA.p, ct, M, B, ct,
                                  (int)std::max(v.ldb, ki), &ab[1], dc.p, ct, (int)std::max(v.ldc, mo),
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if constexpr (P::dbl) {
        if (r == SPMM) {
            CUBLAS_CHECK(cublasDgemm(h, t, CUBLAS_OP_N, (int)mo, n, (int)ki, &ab[0], dA.as<double>(), M, B,
                                     (int)v.ldb, &ab[1], dc.as<double>(), (int)v.ldc));
        } else {
            CUBLAS_CHECK(cublasDgemv(h, t, M, N, &ab[0], dA.as<double>(), M, B, incb, &ab[1], dc.as<double>(), incc));
        }
    } else {
        if (r == SPMM) {
            CUBLAS_CHECK(cublasSgemm(h, t, CUBLAS_OP_N, (int)mo, n, (int)ki, &ab[0], dA.as<float>(), M, B,
                                     (int)v.ldb, &ab[1], dc.as<float>(), (int)v.ldc));
        } else {
            CUBLAS_CHECK(cublasSgemv(h, t, M, N, &ab[0], dA.as<float>(), M, B, incb, &ab[1], dc.as<float>(), incc));
        }
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out, dc.p, v.cbytes, cudaMemcpyDeviceToHost));
}

/* cuSPARSE on the CSR of op(A) (op N; values in the vector type, as for cuBLAS), ALG_DEFAULT: cusparseSpMV for a
 * vector (unit strides), else cusparseSpMM with column-major B and C. false (nothing run) when op(A) stores no
 * entry. */
template <class P> bool vendor_sparse(const Vendor &v, const typename P::E *ch, typename P::E *out, bool vec)
{
    const int64_t mo = (int64_t)v.rows.size(), ki = v.opn ? v.m.cols : v.m.rows;
    std::vector<int32_t> rp(1, 0), ci;
    std::vector<float> val;
    for (const auto &row : v.rows) {
        for (const auto &e : row) {
            ci.push_back((int32_t)e.first);
            val.push_back((float)e.second);
        }
        rp.push_back((int32_t)ci.size());
    }
    if (ci.empty())
        return false;
    const std::vector<uint8_t> vb = mt::values_bytes(val, P::vtype);
    gt::DevMem drp(rp.size() * 4), dci(ci.size() * 4), dv(vb.size()), dc(v.cbytes), buf;
    EXPECT_EQ(cudaMemcpy(drp.p, rp.data(), drp.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dci.p, ci.data(), dci.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dv.p, vb.data(), dv.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dc.p, ch, v.cbytes, cudaMemcpyHostToDevice), cudaSuccess);
    const cudaDataType vt = cuda_type(P::vtype), ct = cuda_type(P::compute);
    const cusparseOperation_t opn = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const char *ab = static_cast<const char *>(v.ab), *beta = ab + sizeof(typename P::Scalar);
    void *B = const_cast<void *>(v.db);
    cusparseHandle_t h = v.blas->sp;
    cusparseSpMatDescr_t sA = nullptr;
    cusparseStatus_t st = cusparseCreateCsr(&sA, mo, ki, (int64_t)ci.size(), drp.p, dci.p, dv.p, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt);
    EXPECT_EQ(st, CUSPARSE_STATUS_SUCCESS) << "cusparseCreateCsr: " << cusparseGetErrorString(st);
    size_t bytes = 0;
    if (vec) {
        cusparseDnVecDescr_t x = nullptr, y = nullptr;
        EXPECT_EQ(cusparseCreateDnVec(&x, ki, B, vt), CUSPARSE_STATUS_SUCCESS);
        EXPECT_EQ(cusparseCreateDnVec(&y, mo, dc.p, vt), CUSPARSE_STATUS_SUCCESS);
        st = cusparseSpMV_bufferSize(h, opn, ab, sA, x, beta, y, ct, CUSPARSE_SPMV_ALG_DEFAULT, &bytes);
        EXPECT_EQ(st, CUSPARSE_STATUS_SUCCESS) << "cusparseSpMV_bufferSize: " << cusparseGetErrorString(st);
        buf.alloc(bytes);
        if (st == CUSPARSE_STATUS_SUCCESS) {
            st = cusparseSpMV(h, opn, ab, sA, x, beta, y, ct, CUSPARSE_SPMV_ALG_DEFAULT, buf.p);
            EXPECT_EQ(st, CUSPARSE_STATUS_SUCCESS) << "cusparseSpMV: " << cusparseGetErrorString(st);
        }
        cusparseDestroyDnVec(x);
        cusparseDestroyDnVec(y);
    } else {
        cusparseDnMatDescr_t b = nullptr, c = nullptr;
        EXPECT_EQ(cusparseCreateDnMat(&b, ki, v.n, v.ldb, B, vt, CUSPARSE_ORDER_COL), CUSPARSE_STATUS_SUCCESS);
        EXPECT_EQ(cusparseCreateDnMat(&c, mo, v.n, v.ldc, dc.p, vt, CUSPARSE_ORDER_COL), CUSPARSE_STATUS_SUCCESS);
        st = cusparseSpMM_bufferSize(h, opn, opn, ab, sA, b, beta, c, ct, CUSPARSE_SPMM_ALG_DEFAULT, &bytes);
        EXPECT_EQ(st, CUSPARSE_STATUS_SUCCESS) << "cusparseSpMM_bufferSize: " << cusparseGetErrorString(st);
        buf.alloc(bytes);
        if (st == CUSPARSE_STATUS_SUCCESS) {
            st = cusparseSpMM(h, opn, opn, ab, sA, b, beta, c, ct, CUSPARSE_SPMM_ALG_DEFAULT, buf.p);
            EXPECT_EQ(st, CUSPARSE_STATUS_SUCCESS) << "cusparseSpMM: " << cusparseGetErrorString(st);
        }
        cusparseDestroyDnMat(b);
        cusparseDestroyDnMat(c);
    }
    cusparseDestroySpMat(sA);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(out, dc.p, v.cbytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return st == CUSPARSE_STATUS_SUCCESS && !::testing::Test::HasFailure();
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

    using Sc = typename P::Scalar;
    gt::DevMem db(bh.size() * sizeof(E)), dc(ch.size() * sizeof(E)), dab(2 * sizeof(Sc));
    if (!bh.empty()) {
        CUDA_CHECK(cudaMemcpy(db.p, bh.data(), bh.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    if (!ch.empty()) {
        CUDA_CHECK(cudaMemcpy(dc.p, ch.data(), ch.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    Sc ab[2] = {(Sc)cs.alpha, (Sc)cs.beta};
    CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
    ASSERT_EQ(macko_set_pointer_mode(h, cs.mode), MACKO_STATUS_SUCCESS);
    const bool dev = cs.mode == MACKO_POINTER_MODE_DEVICE;
    const macko_status_t st = call<P>(cs.routine, h, cs.op, n, dev ? dab.as<Sc>() : &ab[0], A, db.as<E>(), incb, ldb,
                                      dev ? dab.as<Sc>() + 1 : &ab[1], dc.as<E>(), incc, ldc);
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
    const auto rowsof = rows_of(m, opn, P::type);
    macko_kind_t kind = MACKO_KIND_MACKO;
    ASSERT_EQ(macko_mat_get_kind(A, &kind), MACKO_STATUS_SUCCESS);
    std::vector<std::vector<double>> got((size_t)n), ref((size_t)n), sc((size_t)n);
    for (int64_t j = 0; j < n && bad < 5; j++) {
        std::vector<double> x((size_t)ki), y((size_t)mo), s((size_t)mo, 0.0);
        for (int64_t i = 0; i < ki; i++)
            x[(size_t)i] = P::to(bh[(size_t)(i * incb + j * ldb)]);
        for (int64_t i = 0; i < mo; i++)
            y[(size_t)i] = P::to(ch[(size_t)(i * incc + j * ldc)]);
        const std::vector<double> yold = y;
        if (kind == MACKO_KIND_NM) /* no MACKO arrays: the stored nonzeros of m (the N:M suite checks the arrays) */
            ref_from_rows(rowsof, cs.alpha, x, cs.beta, y);
        else
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
        /* the column-wise relative error, where the column is well conditioned: with cancellation (|y| much smaller
         * than the sum of the magnitudes of its terms, e.g. alpha*A*B against beta*C in a 1-row matrix) the
         * element-wise tolerance above is the meaningful check */
        double ny = 0.0, ns = 0.0;
        for (int64_t i = 0; i < mo; i++) {
            ny += y[(size_t)i] * y[(size_t)i];
            ns += s[(size_t)i] * s[(size_t)i];
        }
        if (mo > 0 && all_finite(y) && ny >= 1e-4 * ns) {
            /* plus the output's subnormal spacing per element (P::tol(0, 0, 0)): a column of one 16-bit result near
             * or below the smallest normal cannot meet a relative bound (a 1 x 1 fp16 product at n = 300 was off by
             * 0.0019 of a result the element-wise check above puts below 6.7e-5; fp16 spacing there: 2^-24) */
            double ne = 0.0;
            for (int64_t i = 0; i < mo; i++)
                ne += (g[(size_t)i] - y[(size_t)i]) * (g[(size_t)i] - y[(size_t)i]);
            EXPECT_LT(std::sqrt(ne), P::rel_l2_max * std::sqrt(ny) + std::sqrt((double)mo) * P::tol(0.0, 0.0, 0))
                << "column " << j << ": relative L2 error " << mt::rel_l2(g, y);
        }
        got[(size_t)j] = std::move(g);
        ref[(size_t)j] = std::move(y);
        sc[(size_t)j] = std::move(s);
    }

    /* cuBLAS and cuSPARSE, same alpha/beta/C_old and the same buffers */
    if (!blas || !cs.cublas || mo == 0 || ki == 0 || n == 0 || bad)
        return;
    const Vendor v{blas, m, opn, rowsof, n, incb, ldb, incc, ldc, ab, db.p, ch.size() * sizeof(E)};
    std::vector<E> outc(ch.size()), cv = ch;
    if (cs.beta == 0.0f) /* the NaN poison of C is for macko; a vendor's beta == 0 rule is not under test */
        for (size_t o = 0; o < cv.size(); o++)
            if (is_c[o])
                cv[o] = P::from(0.0f);
    /* mm: the vendor ran a matrix product (GemmEx / SpMM), which may round partial sums to a 16-bit output */
    const auto compare = [&](const char *who, bool mm) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < mo; i++) {
                const double gc = P::to(outc[(size_t)(i * incc + j * ldc)]), r = ref[(size_t)j][(size_t)i];
                if (!std::isfinite(r))
                    continue;
                const double s = sc[(size_t)j][(size_t)i];
                const double t2 = 2.0 * P::tol(r, s, (int64_t)rowsof[(size_t)i].size()) +
                                  (P::half && mm ? P::out_u / 2.0 * s : 0.0);
                if (!(std::fabs(got[(size_t)j][(size_t)i] - gc) <= t2) && bad++ < 5)
                    ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got[(size_t)j][(size_t)i] << ", " << who
                                  << " " << gc << ", reference " << r;
            }
    };
    if (!(cs.routine == SPMV && P::half && (incb != 1 || incc != 1))) { /* GemmEx has no vector strides */
        vendor_blas<P>(v, cv.data(), outc.data(), cs.routine);
        if (::testing::Test::HasFatalFailure())
            return;
        compare("cuBLAS", cs.routine == SPMM);
    }
    /* cuSPARSE's dense operands: a vector of unit stride, or a column-major matrix. Not cusparseSpMM with 16-bit B
     * and C: on the H100 (cuSPARSE 12.6.3, ALG_DEFAULT) its fp16/bf16 results differed from the double reference by
     * far more than rounding (bf16: 0.00195 for a reference of 0.00333; fp16: -0.02588 for -0.02609) in 21 cases
     * where macko and cublasGemmEx both agreed with the reference; cusparseSpMV of every type is compared. */
    const bool vec = cs.routine == SPMV || n == 1;
    if (incb == 1 && incc == 1 && (vec || (ldb >= ki && ldc >= mo && !P::half))) {
        if (vendor_sparse<P>(v, cv.data(), outc.data(), vec)) {
            if (::testing::Test::HasFatalFailure())
                return;
            compare("cuSPARSE", !vec);
        }
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

#define CONF_INSTANTIATE(P)                                                                                          \
    template void check_product<P>(macko_handle_t, gt::Blas *, const mt::Dense &, macko_mat_t, const Case &);       \
    template double error_vs_reference<P>(macko_mat_t, macko_operation_t, double, const P::E *, int64_t, double,    \
                                          const P::E *, const P::E *, int64_t);
CONF_INSTANTIATE(HP)
CONF_INSTANTIATE(SP)
CONF_INSTANTIATE(DP)
CONF_INSTANTIATE(BP)
CONF_INSTANTIATE(HSP)
CONF_INSTANTIATE(BSP)
#undef CONF_INSTANTIATE

std::string prec_name(PrecId p)
{
    std::string out;
    with_precision(p, [&](auto tag) { out = decltype(tag)::name(); });
    return out;
}

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
