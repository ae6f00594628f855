/* The SIMT SpMM path of fp32 matrices (kernels/spmm_simt.cu: the rows decoded a 64-column K-tile at a time into
 * shared memory, then fp32 FMAs on the CUDA cores or split-TF32 products on the tensor cores), through macko_Sspmm,
 * forced through the plan override in each form and taken automatically, against a double host reference over the
 * stored nonzeros and against cublasSgemm (TF32 off): odd
 * shapes, a single row / column, empty and dense rows, gaps longer than 16, all-positive values, Inf/NaN in B at
 * columns a row does not store and at columns it stores, the alpha/beta rules (beta = 0 never reads C, alpha = 0 reads
 * neither A nor B), odd ldb/ldc and B not 16-byte aligned, both pointer modes, split K, every output written and the
 * padding rows of C untouched, bitwise determinism, graph capture, op T, and the tile index counted in the storage. */
#include "gpu_fixtures.h"
#include "spmm_shapes.h"
#include "macko_internal.h"
#include "../kernels/spmm_tc.h"

#include <cublas_v2.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace {

using gt::DevMem;
using gt::Handle;
using gt::Mat;

struct F32 {
    static constexpr macko_datatype_t type = MACKO_R_32F;
    static constexpr bool ahalf = false;
};

using spmm_shapes::Way;
using spmm_shapes::force;
const Way kAuto = {"auto", MACKO_MM_PATH_AUTO, 0, 0, 0, 0, 0, 0};
const Way kSimt = {"simt", MACKO_MM_PATH_SIMT, 0, 0, 0, 0, 0, 0}, kSimt3 = {"simt split3", MACKO_MM_PATH_SIMT, 0, 0, 3, 0, 0, 0},
          kSimt16 = {"simt split16", MACKO_MM_PATH_SIMT, 0, 0, 16, 0, 0, 0};
/* A way and the SIMT form it forces (0: the plan's) */
struct FWay {
    Way w;
    int form;
    std::string name() const
    {
        return std::string(w.name) + (form == MACKO_SIMT_FMA ? " fma" : form == MACKO_SIMT_TF32X3 ? " tf32x3" : "");
    }
};
const int kFma = MACKO_SIMT_FMA, kTf = MACKO_SIMT_TF32X3;

struct Problem {
    const mt::Dense *m; /* the matrix as the product sees it (A, or A^T for op T) */
    int64_t n, ldb, ldc, boff; /* boff: B starts this many floats into its buffer (1: not 16-byte aligned) */
    std::vector<float> b, c0;
    float alpha, beta;
};

/* B uniform in [-1, 1] (all positive: |.| + 1/16), Inf / NaN at two columns of every B column when nonfinite; C
 * random, NaN when beta == 0; B all NaN when alpha == 0 (neither A nor B may be read). */
Problem make_problem(const mt::Dense &m, int64_t n, bool odd, float alpha, float beta, bool nonfinite, bool positive,
                     uint64_t seed)
{
    Problem p;
    p.m = &m;
    p.n = n;
    p.ldb = std::max<int64_t>(m.cols, 1) + (odd ? 3 : 0);
    p.ldc = std::max<int64_t>(m.rows, 1) + (odd ? 5 : 0);
    p.boff = odd ? 1 : 0;
    p.alpha = alpha;
    p.beta = beta;
    p.b = mt::random_vector(p.ldb * n, seed, false);
    p.c0 = mt::random_vector(p.ldc * n, seed + 1, false);
    if (positive)
        for (float &x : p.b)
            x = std::fabs(x) + 0.0625f;
    if (nonfinite && m.cols > 3)
        for (int64_t j = 0; j < n; j++) {
            p.b[(size_t)(j * p.ldb + m.cols / 2)] = INFINITY;
            p.b[(size_t)(j * p.ldb + m.cols - 1)] = NAN;
        }
    if (alpha == 0.0f)
        std::fill(p.b.begin(), p.b.end(), NAN);
    if (beta == 0.0f)
        std::fill(p.c0.begin(), p.c0.end(), NAN);
    return p;
}

/* macko_Sspmm on p, twice (the same bits both times); device_scalars: alpha and beta from device memory. */
std::vector<float> run(macko_handle_t h, macko_mat_t A, const Problem &p, bool device_scalars,
                       macko_operation_t op = MACKO_OPERATION_NON_TRANSPOSE)
{
    return gt::run_twice(h, p.b, (size_t)p.boff, p.c0, p.alpha, p.beta, device_scalars,
                         [&](const float *al, const float *be, const float *b, float *c) {
                             return macko_Sspmm(h, op, p.n, al, A, b, p.ldb, be, c, p.ldc);
                         });
}

/* out against the double reference over the stored nonzeros: fp32 rounding of the sums (relative to the sum of
 * |terms|), non-finite exactly where a stored nonzero meets Inf / NaN, and the rows of C past m untouched. */
int check(const Problem &p, const std::vector<float> &out, const std::string &what)
{
    const mt::Dense &m = *p.m;
    std::vector<std::vector<std::pair<int64_t, double>>> nz((size_t)m.rows);
    for (int64_t i = 0; i < m.rows; i++)
        for (int64_t k = 0; k < m.cols; k++)
            if (m.at(i, k) != 0.0f)
                nz[(size_t)i].push_back({k, (double)m.at(i, k)});
    int bad = 0;
    for (int64_t j = 0; j < p.n; j++)
        for (int64_t i = 0; i < p.ldc; i++) {
            const size_t at = (size_t)(j * p.ldc + i);
            if (i >= m.rows) {
                if (std::memcmp(&out[at], &p.c0[at], 4) != 0 && bad++ < 3)
                    ADD_FAILURE() << what << ": padding row " << i << " of column " << j << " was written";
                continue;
            }
            double acc = 0.0, mag = 0.0;
            bool nonf = false;
            if (p.alpha != 0.0f)
                for (const auto &e : nz[(size_t)i]) {
                    const double bv = p.b[(size_t)(j * p.ldb + e.first)];
                    nonf |= !std::isfinite(bv);
                    acc += e.second * bv;
                    mag += std::fabs(e.second * bv);
                }
            double want = (double)p.alpha * acc;
            if (p.beta != 0.0f)
                want += (double)p.beta * p.c0[at];
            const double got = out[at];
            if (nonf) {
                if (std::isfinite(got) && bad++ < 3)
                    ADD_FAILURE() << what << ": (" << i << ", " << j << ") is " << got << ", a stored nonzero met Inf/NaN";
                continue;
            }
            const double cmag = p.beta != 0.0f ? std::fabs((double)p.beta * p.c0[at]) : 0.0; /* C NaN when beta 0 */
            const double tol = 2e-6 * (double)(nz[(size_t)i].size() + 4) * (std::fabs((double)p.alpha) * mag + cmag) +
                               1e-30;
            if (!(std::fabs(got - want) <= tol) && bad++ < 3)
                ADD_FAILURE() << what << ": (" << i << ", " << j << ") got " << got << " want " << want << " (tol "
                              << tol << ")";
        }
    return bad;
}

using spmm_shapes::Shape;

/* the shared shapes, the 1 x 5000 row with all-positive values, and a short, dense-ish one with Inf / NaN in B */
const std::vector<Shape> kShapes = [] {
    std::vector<Shape> v(std::begin(spmm_shapes::kShapes), std::end(spmm_shapes::kShapes));
    for (Shape &s : v)
        if (s.rows == 1 && s.cols == 5000)
            s.positive = true;
    v.push_back({129, 65, 0.9, false, true, true});
    return v;
}();

} // namespace

/* Every shape, forced SIMT in each form (with and without split K) and automatic, a spread of n and the alpha/beta/ld
 * variants. */
TEST(GpuSpmmSimt, PathsAgainstTheDoubleReference)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer runs: a subset */
    const std::vector<int64_t> ns = quick ? std::vector<int64_t>{5, 65} : std::vector<int64_t>{1, 7, 33, 64, 65, 130, 257};
    int si = 0;
    for (const Shape &s : kShapes) {
        if (quick && si % 3 != 1) {
            si++;
            continue;
        }
        mt::Dense m = gt::random_matrix<F32>(s.rows, s.cols, s.d, 700 + si, s.structure ? 55 + si : 0);
        Mat A;
        if (!gt::uploaded<F32>(h.h, m, false, A))
            return;
        for (const FWay &fw : {FWay{kSimt, kFma}, FWay{kSimt, kTf}, FWay{kSimt3, kFma}, FWay{kSimt3, kTf},
                               FWay{kAuto, 0}}) {
            const Way &w = fw.w;
            if (quick && w.splits != 3)
                continue;
            force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, w, fw.form);
            for (int64_t n : ns)
                for (int v = 0; v < 4; v++) {
                    /* 0: beta 0 (NaN C), 1: beta != 0, odd ldb / ldc, B not 16-byte aligned, 2: alpha 0 (NaN B),
                     * 3: device scalars */
                    const float alpha = v == 2 ? 0.0f : 1.25f, beta = v == 0 ? 0.0f : -0.5f;
                    const Problem p = make_problem(m, n, v == 1, alpha, beta, s.nonfinite, s.positive, 17 * n + v);
                    const std::vector<float> out = run(h.h, A.A, p, v == 3);
                    const std::string what = std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " + fw.name() +
                                             " n=" + std::to_string(n) + " v=" + std::to_string(v);
                    ASSERT_EQ(check(p, out, what), 0) << what;
                }
        }
        si++;
    }
}

/* The issue's n list on two shapes, forced SIMT in each form and automatic, against the double reference and
 * cublasSgemm (fp32, no TF32): the same product to fp32-accumulation rounding. */
TEST(GpuSpmmSimt, IssueNListAgainstCublas)
{
    MACKO_REQUIRE_GPU();
    if (mt::repeat_count(100) < 100)
        GTEST_SKIP() << "MACKO_TEST_REPEATS lowered (compute-sanitizer): the long n list is left out";
    Handle h;
    gt::Blas blas;
    const Shape shapes[] = {{300, 520, 0.5, true, false, false}, {1024, 1024, 0.3, false, false, true}};
    for (const Shape &s : shapes) {
        mt::Dense m = gt::random_matrix<F32>(s.rows, s.cols, s.d, 4343, s.structure ? 9 : 0);
        Mat A;
        if (!gt::uploaded<F32>(h.h, m, false, A))
            return;
        DevMem dA;
        gt::dense_on_device(m, MACKO_R_32F, dA);
        for (const FWay &fw : {FWay{kSimt, kFma}, FWay{kSimt, kTf}, FWay{kAuto, 0}}) {
            force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, fw.w, fw.form);
            for (int64_t n : spmm_shapes::kIssueNs) {
                const Problem p = make_problem(m, n, false, 1.0f, 0.0f, false, s.positive, 3 * n);
                const std::vector<float> out = run(h.h, A.A, p, false);
                const std::string what = std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " + fw.name() +
                                         " n=" + std::to_string(n);
                ASSERT_EQ(check(p, out, what), 0) << what;
                EXPECT_LT(gt::rel_l2_to_cublas(blas.h, dA, CUDA_R_32F, s.rows, s.cols, n, p.b, p.ldb, out, p.ldc,
                                               [](float x) { return (double)x; }),
                          1e-5)
                    << what << " vs cublasSgemm";
            }
        }
    }
}

/* Split K up to 16 blocks on a long row (many K-steps), graph capture gives the same bits as a direct call, and the
 * automatic split of a small grid equals the unsplit sums to rounding. */
TEST(GpuSpmmSimt, SplitsAndGraphCapture)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    cudaStream_t st;
    ASSERT_EQ(cudaStreamCreate(&st), cudaSuccess);
    ASSERT_EQ(macko_set_stream(h.h, st), MACKO_STATUS_SUCCESS);
    mt::Dense m = gt::random_matrix<F32>(300, 9000, 0.4, 31, 12);
    Mat A;
    if (!gt::uploaded<F32>(h.h, m, false, A))
        return;
    for (const FWay &fw : {FWay{kSimt, kFma}, FWay{kSimt3, kTf}, FWay{kSimt16, kFma}, FWay{kSimt16, kTf},
                           FWay{kAuto, 0}}) {
        force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, fw.w, fw.form);
        for (int64_t n : {40, 200}) {
            const Problem p = make_problem(m, n, true, 0.75f, 0.25f, true, false, 91 * n);
            const std::string what = fw.name() + " n=" + std::to_string(n);
            ASSERT_EQ(check(p, run(h.h, A.A, p, false), what), 0) << what;
            gt::expect_graph_replay_equal(
                st, p.b, p.c0,
                [&](const float *b, float *c) {
                    return macko_Sspmm(h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &p.alpha, A.A, b, p.ldb, &p.beta, c,
                                       p.ldc);
                },
                what);
        }
    }
    ASSERT_EQ(macko_set_stream(h.h, nullptr), MACKO_STATUS_SUCCESS);
    cudaStreamDestroy(st);
}

/* op T (the analysed transposed encoding, which gets its own tile index) on the SIMT path in each form, and the strided-batched
 * SpMV with unit strides (n vectors, B and C of stride ldb / ldc) taking it too. */
TEST(GpuSpmmSimt, TransposeAndStridedBatched)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    mt::Dense m = gt::random_matrix<F32>(211, 389, 0.4, 5, 3);
    Mat A;
    if (!gt::uploaded<F32>(h.h, m, true, A))
        return;
    mt::Dense mt_;
    mt_.rows = m.cols;
    mt_.cols = m.rows;
    mt_.v.assign((size_t)(m.rows * m.cols), 0.0f);
    for (int64_t i = 0; i < m.rows; i++)
        for (int64_t k = 0; k < m.cols; k++)
            mt_.at(k, i) = m.at(i, k);
    for (const FWay &fw : {FWay{kSimt, kFma}, FWay{kSimt, kTf}}) {
        force(h.h, A.A, MACKO_OPERATION_TRANSPOSE, fw.w, fw.form);
        for (int64_t n : {3, 70}) {
            const Problem p = make_problem(mt_, n, true, 1.5f, 0.5f, false, false, 7 * n);
            const std::string what = "op T " + fw.name() + " n=" + std::to_string(n);
            ASSERT_EQ(check(p, run(h.h, A.A, p, false, MACKO_OPERATION_TRANSPOSE), what), 0) << what;
        }
    }
    force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, kAuto);
    const int64_t batch = 100;
    const Problem p = make_problem(m, batch, true, 1.0f, -1.0f, false, true, 1234);
    DevMem db(p.b.size() * 4), dc(p.c0.size() * 4);
    ASSERT_EQ(cudaMemcpy(db.p, p.b.data(), p.b.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dc.p, p.c0.data(), p.c0.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(macko_Sspmv_strided_batched(h.h, MACKO_OPERATION_NON_TRANSPOSE, &p.alpha, A.A, db.as<float>(), 1, p.ldb,
                                          &p.beta, dc.as<float>(), 1, p.ldc, batch),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    std::vector<float> out(p.c0.size());
    ASSERT_EQ(cudaMemcpy(out.data(), dc.p, out.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(check(p, out, "strided batched"), 0);
}

/* The TF32x3 form's error where sums grow: long rows (16384 columns, half stored) of positive values times positive B,
 * against the double reference: the relative L2 error at most 1e-6 (about 8 units in the last place of fp32; the FMA
 * form's, printed, is about 1e-7). Per-stage sums are what keep it there: a form that let the tensor cores'
 * truncating accumulation run over the whole row measured about 60 times the FMA form's error against cuBLAS
 * (bench/NOTES.md, session 52), and that 7.6e-7 here is several times the FMA form's is why the plan does not take
 * TF32x3 by itself. */
TEST(GpuSpmmSimt, Tf32x3ErrorOnGrowingSums)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    mt::Dense m = gt::random_matrix<F32>(256, 16384, 0.5, 77);
    for (float &x : m.v)
        x = std::fabs(x);
    Mat A;
    if (!gt::uploaded<F32>(h.h, m, false, A))
        return;
    const Problem p = make_problem(m, 64, false, 1.0f, 0.0f, false, true, 4242);
    std::vector<std::vector<double>> want((size_t)p.n, std::vector<double>((size_t)m.rows, 0.0));
    for (int64_t j = 0; j < p.n; j++)
        for (int64_t i = 0; i < m.rows; i++) {
            double acc = 0.0;
            for (int64_t k = 0; k < m.cols; k++)
                acc += (double)m.at(i, k) * (double)p.b[(size_t)(j * p.ldb + k)];
            want[(size_t)j][(size_t)i] = acc;
        }
    double err[3] = {0.0, 0.0, 0.0};
    for (int form : {kFma, kTf}) {
        force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, kSimt, form);
        const std::vector<float> out = run(h.h, A.A, p, false);
        double num = 0.0, den = 0.0;
        for (int64_t j = 0; j < p.n; j++)
            for (int64_t i = 0; i < m.rows; i++) {
                const double d = (double)out[(size_t)(j * p.ldc + i)] - want[(size_t)j][(size_t)i];
                num += d * d;
                den += want[(size_t)j][(size_t)i] * want[(size_t)j][(size_t)i];
            }
        err[form] = std::sqrt(num / den);
    }
    EXPECT_GT(err[kFma], 0.0); /* the FMA form rounds too */
    EXPECT_LE(err[kFma], 1e-6) << "FMA " << err[kFma];
    EXPECT_LE(err[kTf], 1e-6) << "TF32x3 " << err[kTf] << " against FMA " << err[kFma];
}

/* The tile index (kt = 64) is part of what an fp32 matrix holds on the device: macko_mat_get_storage counts it. */
TEST(GpuSpmmSimt, TileIndexIsCountedInTheStorage)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    mt::Dense m = mt::random_dense(1000, 3000, 0.5, 3, false);
    std::vector<uint8_t> bytes = mt::to_bytes(m, MACKO_R_32F, MACKO_ORDER_ROW, 3000);
    Mat A;
    ASSERT_EQ(macko_mat_create_dense_host(&A.A, 1000, 3000, MACKO_R_32F, bytes.data(), 3000, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    int64_t host_bytes = 0, dev_bytes = 0;
    ASSERT_EQ(macko_mat_get_storage(A.A, &host_bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_upload(h.h, A.A), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(A.A, &dev_bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(A.A->plan.tc.kt, MACKO_SIMT_KT);
    EXPECT_EQ(dev_bytes - host_bytes, 1000 * ((3000 + 63) / 64 + 1) * 4);
    EXPECT_LT((double)(dev_bytes - host_bytes) / (double)host_bytes, 0.035); /* d = 0.5: about 3 per cent */
}
