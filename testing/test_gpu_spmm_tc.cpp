/* The tensor-core SpMM paths (kernels/spmm_tc.cu: TC, rows decoded a K-tile at a time; kernels/spmm_panel.cu:
 * PANEL, dense panels and a GEMM) for both 16-bit types, a typed suite: fp16 (GpuSpmmTc/H, through macko_Hspmm) and
 * bf16 (GpuSpmmTc/B, through macko_spmm_ex with bf16 B and C, fp32 compute). Forced through the plan override and
 * taken automatically, against a double host reference over the stored nonzeros and against cublasGemmEx: odd
 * shapes, empty and dense rows, gaps longer than 16, a single row / column, all-positive values, Inf/NaN in B at
 * columns a row does not store, the alpha/beta rules (beta = 0 never reads C, alpha = 0 reads neither A nor B), odd
 * ldb/ldc, both pointer modes, segments longer than one decode pass, split K, several panels, every output written,
 * bitwise determinism, graph capture, op T, and fp32 B and C (the mixed combinations, on the CUDA cores). */
#include "gpu_fixtures.h"
#include "macko_internal.h"
#include "../kernels/spmm_tc.h"
#include "spmm16.h"

#include <cublas_v2.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using gt::DevMem;
using gt::Handle;
using gt::Mat;
using namespace s16;

using spmm_shapes::Way;
using spmm_shapes::force;

const Way kWays[] = {
    {"auto", MACKO_MM_PATH_AUTO, 0, 0, 0, 0, 0, 0},
    {"tc", MACKO_MM_PATH_TC, 0, 0, 0, 0, 0, 0},
    /* 32-column K-tiles, 4 lanes of 16 entries: dense rows need several passes; three blocks along K */
    {"tc kt32 g4 split3", MACKO_MM_PATH_TC, 32, 4, 3, 0, 0, 0},
    {"tc kt48 g16 split1", MACKO_MM_PATH_TC, 48, 16, 1, 0, 0, 0},
    {"panel", MACKO_MM_PATH_PANEL, 0, 0, 0, 0, 0, 0},
    {"panel 128 rows", MACKO_MM_PATH_PANEL, 0, 0, 0, 128, 0, 0},
    {"panel mma", MACKO_MM_PATH_PANEL, 0, 0, 0, 0, 1, 0},
    {"panel mma 128 rows", MACKO_MM_PATH_PANEL, 0, 0, 0, 128, 1, 0},
    /* the wgmma GEMM (where the device runs it; mma.sync elsewhere) in clusters of 2, 3 and 8 blocks along K */
    {"panel split2", MACKO_MM_PATH_PANEL, 0, 0, 0, 0, 0, 2},
    {"panel 128 rows split3", MACKO_MM_PATH_PANEL, 0, 0, 0, 128, 0, 3},
    {"panel split8", MACKO_MM_PATH_PANEL, 0, 0, 0, 0, 0, 8},
};

} // namespace

template <class P> class GpuSpmmTc : public ::testing::Test {};
using Types16 = ::testing::Types<Fp16, Bf16>;
TYPED_TEST_SUITE(GpuSpmmTc, Types16, TypeName);

/* Every shape, every way, a spread of n and the alpha/beta/ld variants. */
TYPED_TEST(GpuSpmmTc, PathsAgainstTheDoubleReference)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    /* under compute-sanitizer racecheck (MACKO_TEST_REPEATS lowered by run_gpu.sh) a subset keeps the run short */
    const bool quick = mt::repeat_count(100) < 100;
    const std::vector<int64_t> ns = quick ? std::vector<int64_t>{9, 65}
                                          : std::vector<int64_t>{1, 2, 7, 8, 9, 16, 17, 31, 33, 64, 65, 130};
    int si = 0;
    for (const Shape &s : kShapes) {
        if (quick && si % 3 != 1) {
            si++;
            continue;
        }
        const mt::Dense m = matrix_of<P>(s.rows, s.cols, s.d, 900 + si, s.structure ? 77 + si : 0);
        Mat A;
        gt::make_matrix<P>(h.h, m, false, A);
        for (const Way &w : kWays) {
            if (quick && w.splits != 3 && w.panel_rows == 0 && w.psplits == 0)
                continue;
            force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, w);
            for (int64_t n : ns) {
                four_variants<P>(h.h, A.A, m, s, n,
                                 std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " + w.name);
                if (::testing::Test::HasFatalFailure())
                    return;
            }
        }
        si++;
    }
}

/* The issue's n list on two shapes, every path, against the double reference and cublasGemmEx (compute 32F). */
TYPED_TEST(GpuSpmmTc, IssueNListAgainstCublas)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    if (mt::repeat_count(100) < 100)
        GTEST_SKIP() << "MACKO_TEST_REPEATS lowered (compute-sanitizer racecheck): the long n list is left out";
    Handle h;
    gt::Blas blas;
    const Shape shapes[] = {{300, 520, 0.5, true, false, false}, {1024, 1024, 0.3, false, false, false}};
    for (const Shape &s : shapes) {
        const mt::Dense m = matrix_of<P>(s.rows, s.cols, s.d, 4242, s.structure ? 7 : 0);
        Mat A;
        gt::make_matrix<P>(h.h, m, false, A);
        DevMem dA;
        gt::dense_on_device(m, P::type, dA);
        for (const Way &w : {kWays[0], kWays[1], kWays[4], kWays[6], kWays[8]}) {
            force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, w);
            issue_n_list<P>(h.h, blas.h, A.A, m, dA, false,
                            std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " + w.name);
            if (::testing::Test::HasFatalFailure())
                return;
        }
    }
}

/* The rows-to-panel decode of the panel path (kernels/panel_decode.cu), straight: every element of the panel rows
 * [r0, r0 + prow) written (the panel is poisoned first), the pad columns up to ldp zero, the rest bitwise the matrix's
 * values (+0 where it has no nonzero). The shapes take in empty and dense rows, gaps longer than 16, a first row past
 * 0, one row, and rows sparse enough that a 256-entry step spans more columns than a warp's ring holds (4096: stored
 * in rounds). alpha from the host and from the device; alpha == 0 writes nothing. */
TYPED_TEST(GpuSpmmTc, RowsDecodeDenseWritesTheMatrix)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    struct Case {
        int64_t rows, cols;
        double d;
        int64_t r0, prow;
        bool structure;
    };
    const Case cases[] = {{1, 1, 1.0, 0, 1, false},       {7, 33, 0.5, 0, 7, false},
                          {300, 520, 0.5, 13, 250, true}, {64, 4097, 0.1, 0, 64, false},
                          {3, 20000, 0.004, 0, 3, false}, {9, 9000, 1.0, 2, 7, false},
                          {40, 3000, 0.02, 5, 30, true},  {200, 1003, 0.7, 0, 200, true}};
    int ci = 0;
    for (const Case &k : cases) {
        const mt::Dense m = matrix_of<P>(k.rows, k.cols, k.d, 700 + ci, k.structure ? 31 + ci : 0);
        ci++;
        Mat A;
        gt::make_matrix<P>(h.h, m, false, A);
        ASSERT_EQ(A.A->rp64, 0);
        macko_tc_args a;
        std::memset(&a, 0, sizeof a);
        a.type = P::type;
        a.rows = k.rows;
        a.cols = k.cols;
        a.values = A.A->dev.values;
        a.deltas = A.A->dev.deltas;
        a.row_ptr = static_cast<const int32_t *>(A.A->dev.row_ptr);
        const int64_t ldp = (k.cols + 7) & ~INT64_C(7);
        const size_t count = (size_t)(k.prow * ldp);
        DevMem panel(count * 2);
        std::vector<uint16_t> got(count);
        DevMem alpha_dev(sizeof(float));
        for (int dev_alpha = 0; dev_alpha < 2; dev_alpha++) { /* alpha = 1 from the host, then from the device */
            const float one = 1.0f;
            ASSERT_EQ(cudaMemcpy(alpha_dev.p, &one, sizeof one, cudaMemcpyHostToDevice), cudaSuccess);
            a.alpha_dev = dev_alpha ? static_cast<const float *>(alpha_dev.p) : nullptr;
            a.alpha = dev_alpha ? 0.0f : 1.0f;
            const std::string what = std::to_string(k.rows) + "x" + std::to_string(k.cols) + " d " +
                                     std::to_string(k.d) + " rows " + std::to_string(k.r0) + " + " +
                                     std::to_string(k.prow) + (dev_alpha ? " alpha on the device" : "");
            ASSERT_EQ(cudaMemset(panel.p, 0xFF, count * 2), cudaSuccess);
            ASSERT_EQ(macko_rows_decode_dense(&a, panel.p, ldp, k.r0, k.prow), 0) << what;
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
            ASSERT_EQ(cudaMemcpy(got.data(), panel.p, count * 2, cudaMemcpyDeviceToHost), cudaSuccess);
            int64_t bad = 0;
            for (int64_t r = 0; r < k.prow; r++)
                for (int64_t c = 0; c < ldp; c++) {
                    const float v = c < k.cols ? m.at(k.r0 + r, c) : 0.0f;
                    const uint16_t want = v != 0.0f ? P::bits(v) : (uint16_t)0;
                    if (got[(size_t)(r * ldp + c)] != want && bad++ < 5)
                        ADD_FAILURE() << what << ": panel (" << r << ", " << c << ") = " << got[(size_t)(r * ldp + c)]
                                      << ", want " << want;
                }
            ASSERT_EQ(bad, 0) << what;
        }
        /* alpha == 0 (from the host, then from the device): the panel is not touched */
        const float zero = 0.0f;
        ASSERT_EQ(cudaMemcpy(alpha_dev.p, &zero, sizeof zero, cudaMemcpyHostToDevice), cudaSuccess);
        for (int dev_alpha = 0; dev_alpha < 2; dev_alpha++) {
            a.alpha_dev = dev_alpha ? static_cast<const float *>(alpha_dev.p) : nullptr;
            a.alpha = dev_alpha ? 1.0f : 0.0f; /* the device value wins in device mode */
            ASSERT_EQ(cudaMemset(panel.p, 0xFF, count * 2), cudaSuccess);
            ASSERT_EQ(macko_rows_decode_dense(&a, panel.p, ldp, k.r0, k.prow), 0);
            ASSERT_EQ(cudaMemcpy(got.data(), panel.p, count * 2, cudaMemcpyDeviceToHost), cudaSuccess);
            for (size_t i = 0; i < count; i++)
                ASSERT_EQ(got[i], 0xFFFF) << "alpha = 0 wrote element " << i << (dev_alpha ? " (device)" : "");
        }
    }
}

/* The panel GEMM the plan takes: wgmma exactly where the device has compute capability 9.0 and the library was built
 * for sm_90a (so the automatic "panel" ways above test it there, and the "panel mma" ways the portable GEMM); forcing
 * wgmma elsewhere is NOT_SUPPORTED and leaves the plan as it was. The two GEMMs agree to fp32-accumulation rounding
 * on the same panel (both against the double reference, and with each other within twice its bound). */
TYPED_TEST(GpuSpmmTc, PanelGemmChoice)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    int dev = 0, major = 0, minor = 0;
    ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), cudaSuccess);
#ifdef MACKO_HAVE_SM90A
    const bool wg = major == 9 && minor == 0;
#else
    const bool wg = false;
#endif
    const mt::Dense m = matrix_of<P>(390, 333, 0.5, 8);
    Mat A;
    gt::make_matrix<P>(h.h, m, false, A);
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_PANEL;
    f.panel_gemm = 2;
    ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f),
              wg ? MACKO_STATUS_SUCCESS : MACKO_STATUS_NOT_SUPPORTED)
        << macko_get_last_error_message();
    if (!wg)
        return;
    EXPECT_EQ(A.A->plan.tc.panel_gemm, MACKO_PANEL_GEMM_WG);
    f.panel_gemm = 0;
    ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(A.A->plan.tc.panel_gemm, MACKO_PANEL_GEMM_WG);
    f.panel_gemm = 1;
    ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(A.A->plan.tc.panel_gemm, MACKO_PANEL_GEMM_MMA);
    f.panel_gemm = 3;
    EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE);
}

/* The wgmma panel GEMM split along K in clusters (where the device runs it): every split count (clusters of 1 to 8
 * blocks, 3 and 5 included; more splits than the panel has K-slices are cut to one per slice) against the double
 * reference, over several panels and a partial column block, beta != 0 and NaN C with beta = 0; each count repeats
 * bit for bit; an out-of-range count is INVALID_VALUE. */
TYPED_TEST(GpuSpmmTc, PanelSplitsInClusters)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense m = matrix_of<P>(700, 2000, 0.4, 61, 3);
    Mat A;
    gt::make_matrix<P>(h.h, m, false, A);
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_PANEL;
    f.panel_splits = 9;
    EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE);
    const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer: a subset */
    for (int splits = 1; splits <= 8; splits++)
        for (int64_t rows : {0, 256}) {
            if (quick && (rows == 0 || (splits != 1 && splits != 3 && splits != 8)))
                continue;
            f.panel_splits = splits;
            f.panel_rows = rows;
            ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            for (int v = 0; v < 2; v++) {
                const Problem p = make_problem<P>(m, 300, v == 1, 1.25f, v == 0 ? 0.0f : -0.5f, false, v == 1, 7 + v);
                const std::vector<uint16_t> out = run<P>(h.h, A.A, p, false);
                const std::string what = "splits " + std::to_string(splits) + " panel rows " + std::to_string(rows) +
                                         " v=" + std::to_string(v);
                ASSERT_EQ(check_result<P>(p, out, what), 0) << what;
                EXPECT_EQ(run<P>(h.h, A.A, p, false), out) << what << ": not repeatable";
            }
        }
    /* a matrix of fewer K-slices than splits: 130 columns are 3 slices */
    const mt::Dense t = matrix_of<P>(300, 130, 0.5, 62);
    Mat B;
    gt::make_matrix<P>(h.h, t, false, B);
    f.panel_splits = 8;
    f.panel_rows = 0;
    ASSERT_EQ(macko_plan_override(h.h, B.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
    const Problem p = make_problem<P>(t, 64, false, 1.0f, 0.25f, false, false, 9);
    ASSERT_EQ(check_result<P>(p, run<P>(h.h, B.A, p, false), "300x130 splits 8"), 0);
}

/* Captured in a CUDA graph and replayed: the same bits as the direct call (TC with split K, and PANEL). */
TYPED_TEST(GpuSpmmTc, GraphCaptureGivesTheSameBits)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    cudaStream_t st;
    ASSERT_EQ(cudaStreamCreate(&st), cudaSuccess);
    ASSERT_EQ(macko_set_stream(h.h, st), MACKO_STATUS_SUCCESS);
    const mt::Dense m = matrix_of<P>(700, 900, 0.4, 5);
    Mat A;
    gt::make_matrix<P>(h.h, m, false, A);
    for (const Way &w : {kWays[2], kWays[5], kWays[7], kWays[9]}) {
        force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, w);
        const Problem p = make_problem<P>(m, 40, false, 1.0f, 0.5f, false, false, 3);
        expect_graph_replay_equal<P>(h.h, st, A.A, p, w.name);
    }
    ASSERT_EQ(macko_set_stream(h.h, nullptr), MACKO_STATUS_SUCCESS);
    cudaStreamDestroy(st);
}

/* op T (the transposed encoding gets its own plan and tile index) and, for fp16 (bf16 has no strided-batched
 * routine), the strided-batched SpMV, which the TC paths leave to the CUDA cores. */
TYPED_TEST(GpuSpmmTc, TransposeAndStridedBatched)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense m = matrix_of<P>(333, 210, 0.45, 12);
    Mat A;
    gt::make_matrix<P>(h.h, m, true, A);
    mt::Dense t;
    t.rows = m.cols;
    t.cols = m.rows;
    t.v.resize(m.v.size());
    for (int64_t i = 0; i < m.rows; i++)
        for (int64_t k = 0; k < m.cols; k++)
            t.at(k, i) = m.at(i, k);
    for (const Way &w : {kWays[0], kWays[1], kWays[4], kWays[6]}) {
        force(h.h, A.A, MACKO_OPERATION_TRANSPOSE, w);
        for (int64_t n : {9, 40, 200}) {
            const Problem p = make_problem<P>(t, n, true, 0.75f, 0.25f, false, false, 17 * n);
            const std::vector<uint16_t> out = run<P>(h.h, A.A, p, false, MACKO_OPERATION_TRANSPOSE);
            ASSERT_EQ(check_result<P>(p, out, std::string("op T ") + w.name + " n=" + std::to_string(n)), 0);
        }
    }
    if (P::type != MACKO_R_16F)
        return;
    /* strided batch of 40 vectors with incx = 2 on an automatic plan: the CUDA-core launch */
    force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, kWays[0]);
    const int64_t batch = 40, incx = 2, stridex = 2 * m.cols + 1, stridey = m.rows;
    std::vector<float> xs = mt::random_vector(stridex * batch, 8, true);
    DevMem dx(xs.size() * 2), dy(stridey * batch * 2);
    const std::vector<uint16_t> xb = type_bits<P>(xs);
    ASSERT_EQ(cudaMemcpy(dx.p, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    const float one = 1.0f, zero = 0.0f;
    ASSERT_EQ(macko_Hspmv_strided_batched(h.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A.A, dx.as<macko_half>(), incx,
                                          stridex, &zero, dy.as<macko_half>(), 1, stridey, batch),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    std::vector<uint16_t> y((size_t)(stridey * batch));
    ASSERT_EQ(cudaMemcpy(y.data(), dy.p, y.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int64_t j = 0; j < batch; j++)
        for (int64_t i = 0; i < m.rows; i++) {
            double want = 0.0;
            for (int64_t k = 0; k < m.cols; k++)
                want += (double)m.at(i, k) * mt::half_to_float(xb[(size_t)(j * stridex + k * incx)]);
            ASSERT_NEAR(mt::half_to_float(y[(size_t)(j * stridey + i)]), want, 2e-3 * (std::fabs(want) + 8.0))
                << "batch " << j << " row " << i;
        }
}

/* The tile index is counted in the storage of a device matrix. */
TYPED_TEST(GpuSpmmTc, TileIndexIsCountedInTheStorage)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    mt::Dense m = mt::random_dense(1000, 3000, 0.5, 3, true);
    std::vector<uint8_t> bytes = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, 3000);
    Mat A;
    ASSERT_EQ(macko_mat_create_dense_host(&A.A, 1000, 3000, P::type, bytes.data(), 3000, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    int64_t host_bytes = 0, dev_bytes = 0;
    ASSERT_EQ(macko_mat_get_storage(A.A, &host_bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_upload(h.h, A.A), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(A.A, &dev_bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    const int kt = A.A->plan.tc.kt;
    ASSERT_GT(kt, 0);
    EXPECT_EQ(dev_bytes - host_bytes, 1000 * ((3000 + kt - 1) / kt + 1) * 4);
    EXPECT_LT((double)(dev_bytes - host_bytes) / (double)host_bytes, 0.03); /* d = 0.5: a few per cent */
}

/* fp32 B and C with a 16-bit matrix (the mixed combinations of macko_spmm_ex) take the CUDA cores under every plan,
 * a forced TC or PANEL one included: against the double reference, the gap rows of C untouched. */
TYPED_TEST(GpuSpmmTc, Fp32BAndCTakeTheCudaCores)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense m = matrix_of<P>(300, 520, 0.5, 21, 5);
    Mat A;
    gt::make_matrix<P>(h.h, m, false, A);
    const float alpha = 1.25f, beta = -0.5f;
    for (const Way &w : {kWays[0], kWays[1], kWays[4], kWays[6]}) {
        force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, w);
        for (int64_t n : {9, 40, 200}) {
            const int64_t ldb = m.cols + 1, ldc = m.rows + 2;
            const std::vector<float> b = mt::random_vector(ldb * n, 40 + n, false);
            const std::vector<float> c0 = mt::random_vector(ldc * n, 50 + n, false);
            DevMem db(b.size() * 4), dc(c0.size() * 4);
            ASSERT_EQ(cudaMemcpy(db.p, b.data(), b.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
            ASSERT_EQ(cudaMemcpy(dc.p, c0.data(), c0.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
            ASSERT_EQ(macko_spmm_ex(h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, A.A, db.p, MACKO_R_32F, ldb, &beta,
                                    dc.p, MACKO_R_32F, ldc, MACKO_R_32F),
                      MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            std::vector<float> out(c0.size());
            ASSERT_EQ(cudaMemcpy(out.data(), dc.p, out.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
            int bad = 0;
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < ldc; i++) {
                    const size_t at = (size_t)(j * ldc + i);
                    double want = c0[at], tol = 0.0;
                    if (i < m.rows) {
                        double acc = 0.0, mag = 0.0;
                        for (int64_t k = 0; k < m.cols; k++) {
                            acc += (double)m.at(i, k) * b[(size_t)(j * ldb + k)];
                            mag += std::fabs((double)m.at(i, k) * b[(size_t)(j * ldb + k)]);
                        }
                        want = (double)alpha * acc + (double)beta * c0[at];
                        tol = 1e-5 * (std::fabs((double)alpha) * mag + std::fabs((double)beta * c0[at]) + 1e-3);
                    }
                    if (!(std::fabs(out[at] - want) <= tol) && bad++ < 3)
                        ADD_FAILURE() << w.name << " n=" << n << ": (" << i << ", " << j << ") got " << out[at]
                                      << " want " << want;
                }
            ASSERT_EQ(bad, 0) << w.name << " n=" << n;
        }
    }
}

/* A workspace of the caller's (macko_set_workspace): the dense panels at n <= MACKO_PANEL_TALL_N_MAX may fill all of
 * it (taller panels than the handle's own 64 MiB holds), every other path and n sees the first 64 MiB of it only.
 * A 4096 x 9000 matrix: 3712 rows fill 64 MiB, all 4096 fit 128 MiB. Against the double reference at n = 128 and
 * 512 (PANEL, forced: the automatic rule may start it only at n = 129); bitwise the own workspace's result at n = 64
 * (TC, split K through the caller's workspace) and n = 513 (PANEL, 64 MiB panels again); the bytes of the caller's
 * workspace past 64 MiB written where the panel height the call takes needs them. */
TYPED_TEST(GpuSpmmTc, CallersWorkspaceTakesTallerPanelsAtSmallN)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    if (mt::repeat_count(100) < 100)
        GTEST_SKIP() << "MACKO_TEST_REPEATS lowered (compute-sanitizer): the 37M-position matrix is left out";
    Handle h;
    const int64_t rows = 4096, cols = 9000, row_bytes = 2 * cols;
    const size_t ws_bytes = (size_t)128 << 20;
    const mt::Dense m = matrix_of<P>(rows, cols, 0.05, 71);
    Mat A;
    gt::make_matrix<P>(h.h, m, false, A);
    DevMem ws(ws_bytes);
    ASSERT_NE(ws.p, nullptr);
    /* not vacuous: the own workspace needs two panels, the caller's holds every row */
    const int64_t own_rows = macko_panel_rows(cols, h.h->ws.partial_bytes);
    ASSERT_LT(own_rows, rows);
    ASSERT_GE(macko_panel_rows(cols, (int64_t)ws_bytes), rows);
    std::map<int64_t, std::vector<uint16_t>> own;
    const int64_t ns[] = {64, 128, 512, 513};
    for (int64_t n : ns) {
        force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, n == 64 ? kWays[0] : kWays[4]);
        own[n] = run<P>(h.h, A.A, make_problem<P>(m, n, false, 1.0f, 0.5f, false, false, 3 * n), false);
    }
    ASSERT_EQ(macko_set_workspace(h.h, ws.p, ws_bytes), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(h.h->ws.panel_bytes, (int64_t)ws_bytes);
    int tall = 0;
    for (int64_t n : ns) {
        force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, n == 64 ? kWays[0] : kWays[4]);
        ASSERT_EQ(cudaMemset(ws.p, 0xFF, ws_bytes), cudaSuccess);
        const Problem p = make_problem<P>(m, n, false, 1.0f, 0.5f, false, false, 3 * n);
        const std::vector<uint16_t> out = run<P>(h.h, A.A, p, false);
        const std::string what = "caller's workspace n=" + std::to_string(n);
        /* the panel height of this call: all of the caller's workspace up to n = 512, else the own 64 MiB */
        int64_t prow = macko_panel_rows(cols, n <= MACKO_PANEL_TALL_N_MAX ? (int64_t)ws_bytes : h.h->ws.partial_bytes);
        if (A.A->plan.tc.panel_gemm == MACKO_PANEL_GEMM_WG) {
            int splits = 0;
            prow = macko_panel_rows_wg(rows, cols, n, prow, 0, h.h->props.sm_count, &splits);
        }
        prow = std::min(prow, rows);
        if (n == 64 || n > MACKO_PANEL_TALL_N_MAX) {
            EXPECT_EQ(out, own[n]) << what << ": not the own workspace's bits";
            if (n != 64) { /* n = 64 takes no panel */
                EXPECT_LE(prow, own_rows) << what;
            }
        } else {
            ASSERT_EQ(check_result<P>(p, out, what), 0) << what;
        }
        if (n != 64 && prow * row_bytes > h.h->ws.partial_bytes) {
            /* a panel past 64 MiB: its last rows' bytes there were written (0xFFFF is a NaN no panel holds) */
            tall++;
            std::vector<uint16_t> tail(4096);
            const size_t at = (size_t)(prow * row_bytes) - tail.size() * 2;
            ASSERT_EQ(cudaMemcpy(tail.data(), (const char *)ws.p + at, tail.size() * 2, cudaMemcpyDeviceToHost),
                      cudaSuccess);
            int untouched = 0;
            for (uint16_t v : tail)
                untouched += v == 0xFFFF;
            EXPECT_EQ(untouched, 0) << what << ": the panel's end past 64 MiB was not written";
        }
    }
    EXPECT_GE(tall, 1) << "no call took a panel past 64 MiB: the test needs another shape";
    /* back to the own workspace: the own bits again */
    ASSERT_EQ(macko_set_workspace(h.h, nullptr, 0), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(h.h->ws.panel_bytes, h.h->ws.partial_bytes);
    force(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, kWays[4]);
    EXPECT_EQ(run<P>(h.h, A.A, make_problem<P>(m, 128, false, 1.0f, 0.5f, false, false, 3 * 128), false), own[128]);
}

/* macko_set_workspace's checks, in argument order, on a real handle: a refused call changes nothing (the next
 * product still uses the workspace in place). Managed memory is taken. */
TEST(GpuWorkspace, BadArgumentsChangeNothing)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    const size_t min = MACKO_WORKSPACE_MIN_BYTES;
    DevMem ws(min + 256);
    ASSERT_NE(ws.p, nullptr);
    const macko_workspace before = h.h->ws;
    const auto same = [&](const macko_workspace &w, const std::string &what) {
        EXPECT_EQ(h.h->ws.partial, w.partial) << what;
        EXPECT_EQ(h.h->ws.panel_bytes, w.panel_bytes) << what;
        EXPECT_EQ(h.h->ws.partial_bytes, w.partial_bytes) << what;
        EXPECT_EQ(h.h->ws.counters, w.counters) << what;
    };
    const auto refused = [&](macko_status_t st, int pos, const char *msg, const std::string &what) {
        EXPECT_EQ(st, MACKO_STATUS_INVALID_VALUE) << what;
        EXPECT_EQ(macko_get_last_error_position(), pos) << what;
        EXPECT_NE(std::string(macko_get_last_error_message()).find(msg), std::string::npos)
            << what << ": " << macko_get_last_error_message();
    };
    refused(macko_set_workspace(nullptr, ws.p, min), 1, "macko_set_workspace: argument 1", "NULL handle");
    refused(macko_set_workspace(h.h, nullptr, min), 2, "workspace is NULL", "NULL with bytes");
    same(before, "NULL with bytes");
    refused(macko_set_workspace(h.h, (char *)ws.p + 128, min), 2, "not 256-byte aligned", "misaligned");
    same(before, "misaligned");
    void *host = std::aligned_alloc(256, 4096);
    ASSERT_NE(host, nullptr);
    refused(macko_set_workspace(h.h, host, min), 2, "not device memory", "host memory");
    same(before, "host memory");
    std::free(host);
    refused(macko_set_workspace(h.h, ws.p, min - 1), 3, "at least MACKO_WORKSPACE_MIN_BYTES", "too small");
    refused(macko_set_workspace(h.h, ws.p, 0), 3, "at least MACKO_WORKSPACE_MIN_BYTES", "zero bytes");
    same(before, "too small");
    /* the first bad argument wins: misaligned and too small is position 2 */
    refused(macko_set_workspace(h.h, (char *)ws.p + 16, 1), 2, "not 256-byte aligned", "two bad");
    ASSERT_EQ(macko_set_workspace(h.h, ws.p, min + 256), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(macko_get_last_error_position(), 0);
    const macko_workspace set = h.h->ws;
    EXPECT_EQ(set.partial, (float *)ws.p);
    EXPECT_EQ(set.panel_bytes, (int64_t)(min + 256));
    EXPECT_EQ(set.partial_bytes, before.partial_bytes);
    EXPECT_EQ(set.counters, before.counters);
    refused(macko_set_workspace(h.h, ws.p, 12345), 3, "at least", "too small after a set");
    same(set, "too small after a set");
    void *managed = nullptr;
    ASSERT_EQ(cudaMallocManaged(&managed, min), cudaSuccess);
    EXPECT_EQ(macko_set_workspace(h.h, managed, min), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(macko_set_workspace(h.h, nullptr, 0), MACKO_STATUS_SUCCESS);
    same(before, "back to the own");
    cudaFree(managed);
}
