/* Shared by the 16-bit SpMM suites (test_gpu_spmm_tc.cpp: the TC and PANEL paths of the MACKO rows;
 * test_gpu_tiles.cpp: the tile layout): the two value types, a problem (matrix, B, C, scalars), its double reference
 * check, and a run that must give the same bits twice. */
#pragma once

#include "gpu_fixtures.h"
#include "spmm_shapes.h"

#include <cublas_v2.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace s16 {

using gt::DevMem;


/* The two value types (BF: bf16, else fp16): their bits of Inf and NaN, the bound of the output rounding relative to
 * |C| (fp16 keeps 11 significant bits, bf16 8: 8x coarser), and the product with B and C of the matrix's type (fp16
 * through its BLAS-letter routine, bf16 through the generic one). */
template <bool BF> struct Type16 {
    static constexpr macko_datatype_t type = BF ? MACKO_R_16BF : MACKO_R_16F;
    static constexpr bool half = true;
    static constexpr bool ahalf = true; /* gpu_fixtures: 16-bit matrix values (as conformance.h's Prec) */
    static constexpr cudaDataType_t cuda = BF ? CUDA_R_16BF : CUDA_R_16F;
    static constexpr char letter = BF ? 'B' : 'H';
    static constexpr uint16_t inf = BF ? 0x7F80 : 0x7C00, nan = BF ? 0x7FC0 : 0x7E00;
    static constexpr double out_rel = BF ? 8 * 1.5e-3 : 1.5e-3;
    static uint16_t bits(float f) { return BF ? mt::float_to_bf16(f) : mt::float_to_half(f); }
    static double value(uint16_t b) { return BF ? mt::bf16_to_float(b) : mt::half_to_float(b); }
    static macko_status_t spmm(macko_handle_t h, macko_operation_t op, int64_t n, const float *alpha, macko_mat_t A,
                               const void *B, int64_t ldb, const float *beta, void *C, int64_t ldc)
    {
        if (BF)
            return macko_spmm_ex(h, op, n, alpha, A, B, MACKO_R_16BF, ldb, beta, C, MACKO_R_16BF, ldc, MACKO_R_32F);
        return macko_Hspmm(h, op, n, alpha, A, static_cast<const macko_half *>(B), ldb, beta,
                           static_cast<macko_half *>(C), ldc);
    }
};
using Fp16 = Type16<false>;
using Bf16 = Type16<true>;
struct TypeName {
    template <class P> static std::string GetName(int) { return std::string(1, P::letter); }
};


struct Problem {
    mt::Dense m;  /* the matrix (values exact in the type) */
    int64_t n, ldb, ldc;
    std::vector<uint16_t> b, c0; /* B (ldb x n) and C before the call (ldc x n), bits of the type */
    float alpha, beta;
};

template <class P> std::vector<uint16_t> type_bits(const std::vector<float> &v)
{
    std::vector<uint16_t> o(v.size());
    for (size_t i = 0; i < v.size(); i++)
        o[i] = P::bits(v[i]);
    return o;
}

/* random_dense (with add_structure when structure != 0) rounded to P's values: the matrix as it is stored. */
template <class P> mt::Dense matrix_of(int64_t rows, int64_t cols, double d, uint64_t seed, uint64_t structure = 0)
{
    return mt::rounded(gt::random_matrix<P>(rows, cols, d, seed, structure), P::type);
}

/* B uniform in [-1, 1] (all positive when positive), with +Inf and NaN in two columns of the matrix when
 * nonfinite; C random, or NaN when beta == 0 (it must not be read). */
template <class P>
Problem make_problem(const mt::Dense &m, int64_t n, bool odd_ld, float alpha, float beta, bool nonfinite,
                     bool positive, uint64_t seed, bool ldb8 = false)
{
    Problem p;
    p.m = m;
    p.n = n;
    /* ldb8: ldb a multiple of 8 (cols rounded up; odd_ld adds 8), as a tensor map of B needs */
    p.ldb = ldb8 ? (std::max<int64_t>(m.cols, 1) + 7) / 8 * 8 + (odd_ld ? 8 : 0)
                 : std::max<int64_t>(m.cols, 1) + (odd_ld ? 3 : 0);
    p.ldc = std::max<int64_t>(m.rows, 1) + (odd_ld ? 5 : 0);
    p.alpha = alpha;
    p.beta = beta;
    std::vector<float> b = mt::random_vector(p.ldb * n, seed, true), c = mt::random_vector(p.ldc * n, seed + 1, true);
    if (positive)
        for (float &x : b)
            x = std::fabs(x) + 0.0625f;
    p.b = type_bits<P>(b);
    if (nonfinite && m.cols > 3)
        for (int64_t j = 0; j < n; j++) {
            p.b[(size_t)(j * p.ldb + m.cols / 2)] = P::inf;
            p.b[(size_t)(j * p.ldb + m.cols - 1)] = P::nan;
        }
    if (alpha == 0.0f) /* A and B are not read: NaN everywhere in B must not matter */
        std::fill(p.b.begin(), p.b.end(), P::nan);
    p.c0 = type_bits<P>(c);
    if (beta == 0.0f)
        std::fill(p.c0.begin(), p.c0.end(), P::nan);
    return p;
}

/* Checks out (ldc x n of P's type) against the double reference over m's nonzeros: within fp32-accumulation and
 * output rounding, non-finite exactly where a stored nonzero meets Inf/NaN, and the padding rows of C (rows .. ldc)
 * untouched. Returns the number of bad elements (reports the first few). */
template <class P>
int check_result(const Problem &p, const std::vector<uint16_t> &out, const std::string &what)
{
    const int64_t R = p.m.rows, K = p.m.cols;
    std::vector<std::vector<std::pair<int64_t, double>>> nz((size_t)R);
    for (int64_t i = 0; i < R; i++)
        for (int64_t k = 0; k < K; k++)
            if (p.m.at(i, k) != 0.0f)
                nz[(size_t)i].push_back({k, (double)p.m.at(i, k)});
    int bad = 0;
    for (int64_t j = 0; j < p.n; j++)
        for (int64_t i = 0; i < p.ldc; i++) {
            const size_t at = (size_t)(j * p.ldc + i);
            if (i >= R) {
                if (out[at] != p.c0[at] && bad++ < 3)
                    ADD_FAILURE() << what << ": padding row " << i << " of column " << j << " was written";
                continue;
            }
            double acc = 0.0, mag = 0.0;
            bool nonf = false;
            if (p.alpha != 0.0f)
                for (const auto &e : nz[(size_t)i]) {
                    const double bv = P::value(p.b[(size_t)(j * p.ldb + e.first)]);
                    nonf |= !std::isfinite(bv);
                    acc += e.second * bv;
                    mag += std::fabs(e.second * bv);
                }
            double want = (double)p.alpha * acc;
            if (p.beta != 0.0f)
                want += (double)p.beta * P::value(p.c0[at]);
            const double got = P::value(out[at]);
            if (nonf) {
                if (std::isfinite(got) && bad++ < 3)
                    ADD_FAILURE() << what << ": (" << i << ", " << j << ") is " << got << ", a stored nonzero met Inf/NaN";
                continue;
            }
            const double tol = 1e-3 * (std::fabs((double)p.alpha) * mag + std::fabs((double)p.beta) + 1.0) +
                               P::out_rel * std::fabs(want);
            if (!(std::fabs(got - want) <= tol) && bad++ < 3)
                ADD_FAILURE() << what << ": (" << i << ", " << j << ") got " << got << " want " << want << " (tol "
                              << tol << ")";
        }
    return bad;
}

/* Runs P's SpMM on p with A on the device (plan already forced), twice: the two results must be bitwise equal.
 * device_scalars: alpha/beta read from device memory. */
template <class P>
std::vector<uint16_t> run(macko_handle_t h, macko_mat_t A, const Problem &p, bool device_scalars,
                          macko_operation_t op = MACKO_OPERATION_NON_TRANSPOSE)
{
    return gt::run_twice(h, p.b, 0, p.c0, p.alpha, p.beta, device_scalars,
                         [&](const float *al, const float *be, const uint16_t *b, uint16_t *c) {
                             return P::spmm(h, op, p.n, al, A, b, p.ldb, be, c, p.ldc);
                         });
}

/* The shapes and n of the issue: odd sizes, 1, non-multiples of 16/32/64/256, empty/dense rows, gaps. */
using spmm_shapes::Shape;
using spmm_shapes::kShapes;

/* cublasGemmEx (compute 32F) on dA, the matrix dense column-major (rows x cols), for p: out must match it to
 * fp32-accumulation rounding (relative L2 error). */
template <class P>
void expect_like_cublas(cublasHandle_t blas, const DevMem &dA, int64_t rows, int64_t cols, const Problem &p,
                        const std::vector<uint16_t> &out, const std::string &what)
{
    EXPECT_LT(gt::rel_l2_to_cublas(blas, dA, P::cuda, rows, cols, p.n, p.b, p.ldb, out, p.ldc, P::value),
              2e-3 * (P::out_rel / Type16<false>::out_rel))
        << what << " vs cublasGemmEx";
}

/* P's SpMM of p on A through h (whose stream is st) called directly and captured in a CUDA graph and replayed:
 * the same bits. */
template <class P>
void expect_graph_replay_equal(macko_handle_t h, cudaStream_t st, macko_mat_t A, const Problem &p,
                               const std::string &what)
{
    gt::expect_graph_replay_equal(
        st, p.b, p.c0,
        [&](const uint16_t *b, uint16_t *c) {
            return P::spmm(h, MACKO_OPERATION_NON_TRANSPOSE, p.n, &p.alpha, A, b, p.ldb, &p.beta, c, p.ldc);
        },
        what);
}

/* The four alpha / beta variants of n columns of P's SpMM on A (plan already set) against the double reference:
 * 0: beta 0 (NaN C), 1: beta != 0 with odd ldb / ldc, 2: alpha 0 (NaN B), 3: alpha and beta in device memory. ldb8:
 * ldb a multiple of 8 (make_problem). */
template <class P>
void four_variants(macko_handle_t h, macko_mat_t A, const mt::Dense &m, const Shape &s, int64_t n,
                   const std::string &label, bool ldb8 = false)
{
    for (int v = 0; v < 4; v++) {
        const float alpha = v == 2 ? 0.0f : 1.25f, beta = v == 0 ? 0.0f : -0.5f;
        const Problem p = make_problem<P>(m, n, v == 1, alpha, beta, s.nonfinite, s.positive, 31 * n + v, ldb8);
        const std::vector<uint16_t> out = run<P>(h, A, p, v == 3);
        const std::string what = label + " n=" + std::to_string(n) + " v=" + std::to_string(v);
        ASSERT_EQ(check_result<P>(p, out, what), 0) << what;
    }
}

/* The issue's n list of P's SpMM on A (plan already set; dA: the same matrix dense for cuBLAS): against the double
 * reference and cublasGemmEx. */
template <class P>
void issue_n_list(macko_handle_t h, cublasHandle_t blas, macko_mat_t A, const mt::Dense &m, const DevMem &dA,
                  bool positive, const std::string &label)
{
    for (int64_t n : spmm_shapes::kIssueNs) {
        const Problem p = make_problem<P>(m, n, false, 1.0f, 0.0f, false, positive, 5 * n);
        const std::vector<uint16_t> out = run<P>(h, A, p, false);
        const std::string what = label + " n=" + std::to_string(n);
        ASSERT_EQ(check_result<P>(p, out, what), 0) << what;
        expect_like_cublas<P>(blas, dA, m.rows, m.cols, p, out, what);
    }
}

} // namespace s16
