/* The tile layout on the GPU (MACKO_LAYOUT_TILES, kernels/spmm_tiles.cu) for both 16-bit types, a typed suite: fp16
 * (GpuTiles/H, macko_Hspmm) and bf16 (GpuTiles/B, macko_spmm_ex with bf16 B and C). Against a double host reference
 * over the stored nonzeros and against cublasGemmEx: odd shapes, empty and dense rows, gaps longer than 16, a single
 * row / column, all-positive values, Inf/NaN in B at columns a row does not store, the alpha/beta rules (beta = 0
 * never reads C, alpha = 0 reads neither A nor B), odd ldb/ldc, both pointer modes, split K forced and automatic,
 * every output written, bitwise determinism, graph capture, the fused wgmma product's three C-tile widths; SpMV and
 * the strided batch (strided B); download back to the MACKO rows; the layout switch; the refusals (fp32 vectors) and
 * op T through macko_analysis; matrices of different group buffers side by side. */
#include "gpu_fixtures.h"
#include "macko_internal.h"
#include "plan.h"
#include "spmm16.h"
#include "../kernels/spmm_tc.h"
#include "../kernels/spmm_tiles.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using gt::DevMem;
using gt::Handle;
using gt::Mat;
using namespace s16;

/* Uploads A in the tile layout with `splits` blocks along K (0: automatic) and the path (0 automatic, 1 the tile
 * kernel, 2 dense panels + GEMM, 3 the fused wgmma product) forced; bn: the fused product's C-tile width (0
 * automatic, 64, 128, 256); stream: its stream-K (0 automatic, -1 off, > 0 that many blocks); cluster: its split K in
 * thread-block clusters (0 where they fit, else pairs; 2 pairs) or through the workspace (-1); kg: the tile kernel's
 * tiles per group at n <= 32 (0 automatic, 8, 16); cp_async: 1 the tile kernel stages its records by cp.async (0:
 * by bulk copies where the device and build have them). */
void tiles(macko_handle_t h, macko_mat_t A, int splits, int path = 0, int gemm = 0, int bn = 0, int stream = 0,
           int cluster = 0, int kg = 0, int cp_async = 0)
{
    macko_layout_t cur = MACKO_LAYOUT_ROWS;
    ASSERT_EQ(macko_mat_get_layout(A, &cur), MACKO_STATUS_SUCCESS);
    if (cur != MACKO_LAYOUT_TILES || !A->has_device || A->dev_layout != MACKO_LAYOUT_TILES) {
        ASSERT_EQ(macko_mat_set_layout(A, MACKO_LAYOUT_TILES), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        ASSERT_EQ(macko_mat_upload(h, A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    }
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.tiles_splits = splits;
    f.tiles_path = path;
    f.panel_gemm = gemm; /* the dense panels' GEMM: 0 automatic (wgmma on sm_90a), 1 mma.sync */
    f.tiles_wg_bn = bn;
    f.tiles_wg_stream = stream;
    f.tiles_wg_cluster = cluster;
    f.tiles_kg = kg;
    f.tiles_cp_async = cp_async;
    ASSERT_EQ(macko_plan_override(h, A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
}

template <class P> void upload_tiles(macko_handle_t h, const mt::Dense &m, Mat &A, int splits = 0)
{
    std::vector<uint8_t> bytes = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, std::max<int64_t>(m.cols, 1));
    ASSERT_EQ(macko_mat_create_dense_host(&A.A, m.rows, m.cols, P::type, bytes.data(), std::max<int64_t>(m.cols, 1),
                                          MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    tiles(h, A.A, splits);
}

/* upload_tiles, and whether the fused product (wgmma) is there to test: where not, the caller skips (kNoWg). */
template <class P> bool upload_wg(macko_handle_t h, const mt::Dense &m, Mat &A)
{
    upload_tiles<P>(h, m, A);
    return !::testing::Test::HasFatalFailure() && A.A->td.panel_gemm == MACKO_PANEL_GEMM_WG;
}
constexpr const char *kNoWg = "no wgmma on this device or build";

} // namespace

template <class P> class GpuTiles : public ::testing::Test {};
using TilesTypes = ::testing::Types<Fp16, Bf16>;
TYPED_TEST_SUITE(GpuTiles, TilesTypes, TypeName);

/* Every shape, automatic and forced splits, a spread of n and the alpha/beta/ld variants. */
TYPED_TEST(GpuTiles, ProductsAgainstTheDoubleReference)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer: a subset */
    const std::vector<int64_t> ns = quick ? std::vector<int64_t>{1, 9, 65}
                                          : std::vector<int64_t>{1, 2, 7, 8, 9, 16, 17, 24, 31, 33, 64, 65, 130};
    int si = 0;
    for (const Shape &s : kShapes) {
        if (quick && si % 3 != 1) {
            si++;
            continue;
        }
        const mt::Dense m = matrix_of<P>(s.rows, s.cols, s.d, 900 + si, s.structure ? 77 + si : 0);
        Mat A;
        upload_tiles<P>(h.h, m, A);
        const bool wg = A.A->td.panel_gemm == MACKO_PANEL_GEMM_WG; /* compute capability 9.0, sm_90a build */
        int cc_major = 0;
        ASSERT_EQ(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
        if (cc_major == 9) { /* the wide groups exist there, and even a full matrix's fit one block */
            for (int i = 0; i < MACKO_TILES_WIDE_NT; i++)
                ASSERT_GT(A.A->td.occ_wide[i], 0) << s.rows << "x" << s.cols << " column tile index " << i;
        }
        /* automatic; the tile kernel with 1 and 3 blocks along K; dense panels + the automatic GEMM; + mma.sync;
         * the fused wgmma product with automatic and 3 blocks along K and the automatic C-tile width; the widths 64
         * (automatic splits, and 3; width 64 sums its splits through the workspace, the others in thread-block
         * clusters where they fit: way 6's 3 splits at widths 128 / 256), 128 and 256 for every n; stream-K over 4 blocks of width 128 and 7 of width
         * 256 (blocks whose slices start or end inside a tile, or cover whole tiles between; B's ldb a multiple of 8
         * there, so that the fused product runs for every shape, an odd ldc in v = 1); the tile kernel with groups of
         * 16 tiles at n <= 32 (where the device has them: Hopper; else groups of 8) with automatic and 3 blocks along
         * K (ways 13, 14); the tile kernel with its records staged by cp.async, as on devices before sm_90 (way 15) */
        for (int way = 0; way < 16; way++) {
            const bool fused = way >= 5 && way < 13;
            const int splits = way == 1 || way == 5 ? 1 : way == 2 || way == 6 || way == 8 || way == 14 ? 3 : 0;
            const int path = way == 1 || way == 2 || way >= 13 ? 1 : way == 3 || way == 4 ? 2 : fused ? 3 : 0;
            const int bn = way == 7 || way == 8 ? 64 : way == 9 || way == 11 ? 128 : way == 10 || way == 12 ? 256 : 0;
            const int stream = way == 11 ? 4 : way == 12 ? 7 : way >= 7 && fused ? -1 : 0;
            if ((quick && (way == 1 || way == 10 || way == 14)) || (fused && !wg))
                continue;
            tiles(h.h, A.A, splits, path, way == 4 ? 1 : 0, bn, stream, 0, way == 13 || way == 14 ? 16 : 0,
                  way == 15 ? 1 : 0);
            for (int64_t n : ns) {
                four_variants<P>(h.h, A.A, m, s, n,
                                 std::to_string(s.rows) + "x" + std::to_string(s.cols) + " way " + std::to_string(way),
                                 fused);
                if (::testing::Test::HasFatalFailure())
                    return;
            }
        }
        si++;
    }
}

/* The issue's n list on two shapes against the double reference and cublasGemmEx (compute 32F). */
TYPED_TEST(GpuTiles, IssueNListAgainstCublas)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    if (mt::repeat_count(100) < 100)
        GTEST_SKIP() << "MACKO_TEST_REPEATS lowered (compute-sanitizer): the long n list is left out";
    Handle h;
    gt::Blas blas;
    const Shape shapes[] = {{300, 520, 0.5, true, false, false}, {1024, 1024, 0.3, false, false, true}};
    for (const Shape &s : shapes) {
        const mt::Dense m = matrix_of<P>(s.rows, s.cols, s.d, 4242, s.structure ? 7 : 0);
        Mat A;
        upload_tiles<P>(h.h, m, A);
        DevMem dA;
        gt::dense_on_device(m, P::type, dA);
        issue_n_list<P>(h.h, blas.h, A.A, m, dA, s.positive, std::to_string(s.rows) + "x" + std::to_string(s.cols));
        if (::testing::Test::HasFatalFailure())
            return;
    }
}

/* The fused product's widths run as many blocks per SM as its split and width models assume (two of width 64: their
 * registers and shared memory must fit twice). */
TYPED_TEST(GpuTiles, FusedWidthsOccupancy)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense m = matrix_of<P>(64, 64, 0.5, 3);
    Mat A;
    if (!upload_wg<P>(h.h, m, A)) /* prepares the kernels on this device */
        GTEST_SKIP() << kNoWg;
    const int bf16 = P::type == MACKO_R_16BF;
    for (int bn : {64, 128, 256})
        EXPECT_EQ(macko_tiles_wg_occupancy(bf16, bn), macko_tiles_wg_blocks_per_sm(bn)) << bn;
}

/* Captured in a CUDA graph and replayed: the same bits as the direct call (split K; dense panels). */
TYPED_TEST(GpuTiles, GraphCaptureGivesTheSameBits)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    cudaStream_t st;
    ASSERT_EQ(cudaStreamCreate(&st), cudaSuccess);
    ASSERT_EQ(macko_set_stream(h.h, st), MACKO_STATUS_SUCCESS);
    const mt::Dense m = matrix_of<P>(700, 900, 0.4, 5);
    Mat A;
    upload_tiles<P>(h.h, m, A, 3);
    const bool wg = A.A->td.panel_gemm == MACKO_PANEL_GEMM_WG;
    /* 3: dense panels with the mma.sync GEMM; 4, 5, 6: the fused wgmma product of C-tile width 256, 64, 128 (its 3
     * splits in clusters); 7, 8: widths 256 and 128 in stream-K over 5 blocks; 9: width 128, the 3 splits through the
     * workspace */
    for (int path : {1, 2, 3, 4, 5, 6, 7, 8, 9}) {
        if (path >= 4 && !wg)
            continue;
        tiles(h.h, A.A, 3, path == 3 ? 2 : path >= 4 ? 3 : path, path == 3 ? 1 : 0,
              path == 4 || path == 7 ? 256 : path == 5 ? 64 : path == 6 || path >= 8 ? 128 : 0,
              path == 7 || path == 8 ? 5 : 0, path == 9 ? -1 : 0);
        const Problem p = make_problem<P>(m, 40, false, 1.0f, 0.5f, false, false, 3, path >= 4);
        expect_graph_replay_equal<P>(h.h, st, A.A, p, "path " + std::to_string(path));
    }
    ASSERT_EQ(macko_set_stream(h.h, nullptr), MACKO_STATUS_SUCCESS);
    cudaStreamDestroy(st);
}

/* The fused product's tail split (tiles_wg_tail): the tiles of the whole waves one block each, the rest split along
 * K in a second launch. Shapes with a wave and a few tiles more on this device (widths 128 and 256, a last row block
 * and a last column block both partial, K-splits of unequal length), forced, against the double reference in the
 * four alpha / beta variants (nonfinite values in B at columns no row stores, all-positive values), twice with the
 * same bits (run), and captured in a graph; the automatic rule where it takes the tail split (the same bits as its
 * count forced). */
TYPED_TEST(GpuTiles, FusedTailSplit)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer: width 128 only */
    const int sms = h.h->props.sm_count;
    cudaStream_t st;
    ASSERT_EQ(cudaStreamCreate(&st), cudaSuccess);
    ASSERT_EQ(macko_set_stream(h.h, st), MACKO_STATUS_SUCCESS);
    int si = 0;
    for (int bn : {128, 256}) {
        if (quick && bn == 256)
            continue;
        const int64_t wave = (int64_t)sms * macko_tiles_wg_blocks_per_sm(bn);
        /* n = 1230: 1280 / bn column blocks, the last 50 columns short, below MACKO_TILES_PANEL_N_WG (the automatic
         * rule takes the fused product); rows for a wave and a few tiles more, the last row block 88 rows */
        const int64_t n = 1230, cbl = 1280 / bn, rbl = (wave + 5 + cbl - 1) / cbl, rows = 128 * rbl - 40;
        static_assert(1230 < MACKO_TILES_PANEL_N_WG, "the automatic rule's fused product");
        const Shape shape = {rows, 2900, 0.15, false, si == 0, si == 1};
        const mt::Dense m = matrix_of<P>(shape.rows, shape.cols, shape.d, 611 + si, 0);
        Mat A;
        if (!upload_wg<P>(h.h, m, A)) {
            ASSERT_EQ(macko_set_stream(h.h, nullptr), MACKO_STATUS_SUCCESS);
            cudaStreamDestroy(st);
            GTEST_SKIP() << kNoWg;
        }
        const int64_t tiles = rbl * cbl;
        ASSERT_GT(tiles, wave);
        ASSERT_EQ(macko_tiles_wg_tail_tile0(rows, n, bn, sms), tiles - tiles % wave);
        for (int ts : {2, 3}) { /* 46 K-slices (2900 columns): splits of 23 + 23, 16 + 16 + 14 */
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            f.tiles_path = 3;
            f.tiles_wg_bn = bn;
            f.tiles_wg_tail = ts;
            f.tiles_wg_cluster = ts == 3 ? -1 : 0; /* the tail's splits in clusters, and through the workspace */
            ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            const std::string what = "width " + std::to_string(bn) + " tail " + std::to_string(ts);
            four_variants<P>(h.h, A.A, m, shape, n, what, true);
            if (::testing::Test::HasFatalFailure())
                break;
            const Problem p = make_problem<P>(m, n, false, 1.0f, 0.5f, false, false, 7, true);
            expect_graph_replay_equal<P>(h.h, st, A.A, p, what);
        }
        /* the automatic rule (the fused product of width 256 at this n): where it takes the tail split, the bits of
         * that count forced */
        const int auto_ts = macko_tiles_wg_tail(rows, A.A->td.tcols, n, 256, sms,
                                                h.h->ws.partial_bytes / (int64_t)sizeof(float), MACKO_WS_COUNTERS);
        if (bn == 256) { /* a few tiles past a wave, 46 K-slices: the model takes it on any GPU of 45 SMs or more */
            ASSERT_GT(auto_ts, 1) << "the rule does not take the tail split here";
            const Problem p = make_problem<P>(m, n, false, 1.0f, 0.0f, false, false, 9, true);
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
            const std::vector<uint16_t> automatic = run<P>(h.h, A.A, p, false);
            f.tiles_path = 3;
            f.tiles_wg_tail = auto_ts;
            ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
            const std::vector<uint16_t> forced = run<P>(h.h, A.A, p, false);
            EXPECT_TRUE(automatic == forced) << "the automatic rule's tail split differs from " << auto_ts << " forced";
        }
        si++;
    }
    ASSERT_EQ(macko_set_stream(h.h, nullptr), MACKO_STATUS_SUCCESS);
    cudaStreamDestroy(st);
}

/* The fused product's split K in thread-block clusters (a tile's splits sum through distributed shared memory) against
 * the same splits through the workspace: widths 128 and 256 (64 takes no clusters), clusters of 2, 3, 5 and 8 (46
 * K-slices: splits of unequal length), a last row block and a last column block both partial, column blocks whose
 * columns the cluster's blocks share unevenly (n = 140 at width 128: the last 12 columns, 1 or 2 a block in 8
 * splits; n = 300 at width 256: 44); the double reference in the four alpha /
 * beta variants for each, and the same bits as the workspace's (same values summed in the same order); at 4 and 8
 * splits the pairs too (clusters of 2 whose sums meet in the workspace), against the double reference, twice with
 * the same bits. The device must hold the launch's clusters at once (else the launch takes the workspace and the test
 * would prove nothing). */
TYPED_TEST(GpuTiles, FusedSplitKInClusters)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer: clusters of 3 and 8 */
    const Shape shape = {200, 2900, 0.2, false, false, true}; /* all-positive values */
    const mt::Dense m = matrix_of<P>(shape.rows, shape.cols, shape.d, 733, 0);
    Mat A;
    if (!upload_wg<P>(h.h, m, A))
        GTEST_SKIP() << kNoWg;
    for (int bn : {128, 256}) {
        const int64_t n = bn == 128 ? 140 : 300; /* 2 column blocks, the last partial */
        const int64_t ntiles = 2 * ((n + bn - 1) / bn);
        for (int z : {2, 3, 4, 5, 8}) {
            if (quick && z != 3 && z != 8)
                continue;
            const int cap = A.A->td.wg_ccap[macko_tiles_wg_width_index(bn)][z - 2];
            ASSERT_GE(cap, ntiles) << "the device holds " << cap << " clusters of " << z << " blocks at width " << bn;
            const std::string what = "width " + std::to_string(bn) + " clusters of " + std::to_string(z);
            tiles(h.h, A.A, z, 3, 0, bn, 0, 0);
            four_variants<P>(h.h, A.A, m, shape, n, what, true);
            if (::testing::Test::HasFatalFailure())
                return;
            const Problem p = make_problem<P>(m, n, false, 1.0f, -0.5f, false, true, 41 + z, true);
            const std::vector<uint16_t> in_clusters = run<P>(h.h, A.A, p, false);
            tiles(h.h, A.A, z, 3, 0, bn, 0, -1);
            const std::vector<uint16_t> in_workspace = run<P>(h.h, A.A, p, false);
            EXPECT_TRUE(in_clusters == in_workspace) << what << ": clusters and workspace differ";
            if (z % 2 == 0 && z >= 4) { /* pairs of splits in clusters of 2 that meet in the workspace */
                ASSERT_GE(A.A->td.wg_ccap[macko_tiles_wg_width_index(bn)][0], ntiles * (z / 2));
                tiles(h.h, A.A, z, 3, 0, bn, 0, 2);
                four_variants<P>(h.h, A.A, m, shape, n, what + " in pairs", true);
                if (::testing::Test::HasFatalFailure())
                    return;
            }
        }
    }
}

/* Width 64 at n <= 32 runs the narrow instance (split K writes and sums only the tile's first 32 columns): against the
 * double reference in the four alpha / beta variants (3 row blocks, the last partial; 46 K-slices in 2, 3, 8 unequal
 * splits through the workspace), and the same bits as the first 32 columns of n = 33 (the full instance, the same
 * splits and order). */
TYPED_TEST(GpuTiles, FusedNarrowSplitK)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer: 3 and 8 splits */
    const Shape shape = {300, 2900, 0.3, false, false, true}; /* all-positive values */
    const mt::Dense m = matrix_of<P>(shape.rows, shape.cols, shape.d, 757, 0);
    Mat A;
    if (!upload_wg<P>(h.h, m, A))
        GTEST_SKIP() << kNoWg;
    for (int z : {2, 3, 8}) {
        if (quick && z == 2)
            continue;
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        f.tiles_splits = z;
        f.tiles_path = 3;
        f.tiles_wg_bn = 64;
        f.tiles_wg_tail = -1; /* one launch at either n */
        ASSERT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        const std::string what = "width 64, " + std::to_string(z) + " splits";
        for (int64_t n : {1, 17, 32}) {
            four_variants<P>(h.h, A.A, m, shape, n, what, true);
            if (::testing::Test::HasFatalFailure())
                return;
        }
        const Problem wide = make_problem<P>(m, 33, true, 1.25f, -0.5f, false, true, 59 + z, true);
        Problem narrow = wide;
        narrow.n = 32;
        narrow.b.resize((size_t)(wide.ldb * 32));
        narrow.c0.resize((size_t)(wide.ldc * 32));
        const std::vector<uint16_t> cw = run<P>(h.h, A.A, wide, false), cn = run<P>(h.h, A.A, narrow, false);
        ASSERT_EQ(check_result<P>(narrow, cn, what + " n=32"), 0);
        EXPECT_TRUE(std::equal(cn.begin(), cn.end(), cw.begin())) << what << ": n = 32 and n = 33's first 32 differ";
    }
}

/* Where the rule would take the dense panels (n >= MACKO_TILES_PANEL_N_WG) but the workspace cannot hold a panel of
 * 128 rows (more than 262144 columns with the handle's own 64 MiB), the fused product runs: the same bits as the
 * fused product forced, and the double reference (B: every byte 0x3C, so every value the same positive number). */
TYPED_TEST(GpuTiles, PanelsWithoutRoomTakeTheFusedProduct)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    if (mt::repeat_count(100) < 100)
        GTEST_SKIP() << "MACKO_TEST_REPEATS lowered (compute-sanitizer): B of 0.7 GB is left out";
    Handle h;
    const int64_t rows = 40, cols = 270000, n = MACKO_TILES_PANEL_N_WG + 19;
    const mt::Dense m = matrix_of<P>(rows, cols, 0.02, 31);
    Mat A;
    if (!upload_wg<P>(h.h, m, A))
        GTEST_SKIP() << kNoWg;
    ASSERT_LT(macko_panel_rows(cols, h.h->ws.partial_bytes), 128) << "the panels must not fit the workspace";
    DevMem db((size_t)cols * n * 2), dc1((size_t)rows * n * 2), dc2((size_t)rows * n * 2);
    ASSERT_EQ(cudaMemset(db.p, 0x3C, db.bytes), cudaSuccess);
    ASSERT_EQ(cudaMemset(dc1.p, 0xFF, dc1.bytes), cudaSuccess); /* NaN: beta = 0 must not read C */
    ASSERT_EQ(cudaMemset(dc2.p, 0xFF, dc2.bytes), cudaSuccess);
    const float one = 1.0f, zero = 0.0f;
    for (int path : {0, 3}) {
        tiles(h.h, A.A, 0, path);
        ASSERT_EQ(P::spmm(h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &one, A.A, db.p, cols, &zero,
                          path == 0 ? dc1.p : dc2.p, rows),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint16_t> c1((size_t)rows * n), c2((size_t)rows * n);
    ASSERT_EQ(cudaMemcpy(c1.data(), dc1.p, dc1.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(c2.data(), dc2.p, dc2.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::memcmp(c1.data(), c2.data(), dc1.bytes), 0) << "automatic and forced fused products differ";
    const double bv = P::value(0x3C3C);
    int bad = 0;
    for (int64_t i = 0; i < rows; i++) {
        double sum = 0, mag = 0;
        for (int64_t k = 0; k < cols; k++) {
            sum += m.at(i, k) * bv;
            mag += std::fabs(m.at(i, k) * bv);
        }
        for (int64_t j = 0; j < n; j++) {
            const double got = P::value(c1[(size_t)(j * rows + i)]);
            if (!(std::fabs(got - sum) <= P::out_rel * std::fabs(sum) + 1e-4 * mag) && bad++ < 5)
                ADD_FAILURE() << "C(" << i << "," << j << ") = " << got << ", reference " << sum;
        }
    }
    EXPECT_EQ(bad, 0);
}

/* op T: macko_analysis builds the transposed MACKO rows from the host copy (refused without one); the op T product
 * runs on them. fp32 vectors are refused on the tile layout. */
TYPED_TEST(GpuTiles, TransposeAndRefusals)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense m = matrix_of<P>(333, 210, 0.45, 12);
    Mat A;
    upload_tiles<P>(h.h, m, A);
    const float one = 1.0f, zero = 0.0f;
    DevMem db(4 * 400 * 8), dc(4 * 400 * 8);
    EXPECT_EQ(P::spmm(h.h, MACKO_OPERATION_TRANSPOSE, 2, &one, A.A, db.p, 333, &zero, dc.p, 210),
              MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_spmm_ex(h.h, MACKO_OPERATION_NON_TRANSPOSE, 2, &one, A.A, db.p, MACKO_R_32F, 210, &zero, dc.p,
                            MACKO_R_32F, 333, MACKO_R_32F),
              MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 7);
    ASSERT_EQ(macko_analysis(h.h, MACKO_OPERATION_TRANSPOSE, A.A), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    mt::Dense t;
    t.rows = m.cols;
    t.cols = m.rows;
    t.v.resize(m.v.size());
    for (int64_t i = 0; i < m.rows; i++)
        for (int64_t k = 0; k < m.cols; k++)
            t.at(k, i) = m.at(i, k);
    for (int64_t n : {1, 9, 40}) {
        const Problem p = make_problem<P>(t, n, true, 0.75f, 0.25f, false, false, 17 * n);
        const std::vector<uint16_t> out = run<P>(h.h, A.A, p, false, MACKO_OPERATION_TRANSPOSE);
        ASSERT_EQ(check_result<P>(p, out, "op T n=" + std::to_string(n)), 0);
    }
    /* the path overrides: out of range; the fused wgmma product with the mma.sync GEMM forced, or where there is no
     * wgmma */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.tiles_path = 4;
    EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE);
    f.tiles_path = 0;
    for (int bn : {-1, 1, 32, 100, 512}) {
        f.tiles_wg_bn = bn;
        EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE) << bn;
        EXPECT_EQ(macko_get_last_error_position(), 4);
    }
    f.tiles_wg_bn = 0;
    for (int sk : {-2, (1 << 20) + 1}) {
        f.tiles_wg_stream = sk;
        EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE) << sk;
        EXPECT_EQ(macko_get_last_error_position(), 4);
    }
    f.tiles_wg_stream = 0;
    for (int ts : {-2, 1, 17}) {
        f.tiles_wg_tail = ts;
        EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE) << ts;
        EXPECT_EQ(macko_get_last_error_position(), 4);
    }
    f.tiles_wg_tail = 0;
    for (int cl : {-2, 1, 3, 8}) {
        f.tiles_wg_cluster = cl;
        EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE) << cl;
        EXPECT_EQ(macko_get_last_error_position(), 4);
    }
    f.tiles_wg_cluster = 0;
    for (int kg : {-1, 1, 4, 12, 32}) {
        f.tiles_kg = kg;
        EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE) << kg;
        EXPECT_EQ(macko_get_last_error_position(), 4);
    }
    f.tiles_kg = 0;
    for (int c : {-1, 2}) {
        f.tiles_cp_async = c;
        EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_INVALID_VALUE) << c;
        EXPECT_EQ(macko_get_last_error_position(), 4);
    }
    f.tiles_cp_async = 0;
    f.tiles_path = 3;
    f.panel_gemm = 1;
    EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 4);
    f.panel_gemm = 0;
    EXPECT_EQ(macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f),
              macko_panel_gemm_of(&h.h->props) == MACKO_PANEL_GEMM_WG ? MACKO_STATUS_SUCCESS
                                                                       : MACKO_STATUS_NOT_SUPPORTED);
    /* without the host copy the transposition has nothing to start from */
    Mat B;
    upload_tiles<P>(h.h, m, B);
    ASSERT_EQ(macko_mat_release_host(B.A), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_analysis(h.h, MACKO_OPERATION_TRANSPOSE, B.A), MACKO_STATUS_NOT_INITIALIZED);
}

/* Download turns the tiles back into the canonical MACKO rows: the same nonzeros, and a ROWS upload of the result
 * computes the same product. The storage of a TILES device copy is the tile layout's. */
TYPED_TEST(GpuTiles, DownloadAndLayoutSwitch)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense m = matrix_of<P>(150, 301, 0.3, 31, 9);
    Mat A;
    upload_tiles<P>(h.h, m, A);
    int64_t bytes = 0;
    ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bytes, A.A->td.words * 16 + (A.A->td.bands * A.A->td.tcols + 1) * 4);
    ASSERT_EQ(macko_mat_release_host(A.A), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_download(h.h, A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    std::vector<uint8_t> dense((size_t)(m.rows * m.cols * 2));
    ASSERT_EQ(macko_mat_export_dense_host(A.A, dense.data(), m.cols, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(dense, mt::to_bytes(m, P::type, MACKO_ORDER_ROW, m.cols));
    const Problem p = make_problem<P>(m, 20, true, 1.5f, -1.0f, true, false, 99);
    const std::vector<uint16_t> t_out = run<P>(h.h, A.A, p, false);
    ASSERT_EQ(check_result<P>(p, t_out, "tiles"), 0);
    ASSERT_EQ(macko_mat_set_layout(A.A, MACKO_LAYOUT_ROWS), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_upload(h.h, A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(A.A->dev_layout, MACKO_LAYOUT_ROWS);
    const std::vector<uint16_t> r_out = run<P>(h.h, A.A, p, false);
    ASSERT_EQ(check_result<P>(p, r_out, "rows after tiles"), 0);
}

/* The kernels' shared-memory limit belongs to the kernel on the device, not to a matrix: a sparse matrix uploaded
 * after a dense one (a smaller group buffer) must leave the dense one's launches working, at every column tile,
 * and the dense one uploaded again must leave the sparse one's. Both are used only after both uploads. */
TYPED_TEST(GpuTiles, MatricesOfDifferentDensitiesSideBySide)
{
    using P = TypeParam;
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense dm = matrix_of<P>(256, 1024, 0.95, 61), sm = matrix_of<P>(256, 1024, 0.05, 62);
    Mat D, S;
    upload_tiles<P>(h.h, dm, D);
    upload_tiles<P>(h.h, sm, S);
    ASSERT_GT(macko_tiles_smem(8, MACKO_TILES_KG, D.A->td.abuf), (size_t)48 * 1024)
        << "the dense matrix must need opted-in memory";
    ASSERT_LT(S.A->td.abuf, D.A->td.abuf);
    for (int round = 0; round < 2; round++) {
        if (round == 1) { /* the dense one again, after the sparse one was used */
            ASSERT_EQ(macko_mat_upload(h.h, D.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        }
        for (int64_t n : {1, 16, 32, 64, 100})
            for (int which = 0; which < 2; which++) {
                const mt::Dense &m = which == 0 ? dm : sm;
                const Problem p = make_problem<P>(m, n, false, 1.0f, 0.0f, false, false, 7 * n + which);
                const std::vector<uint16_t> out = run<P>(h.h, (which == 0 ? D : S).A, p, false);
                const std::string what = std::string(which == 0 ? "dense" : "sparse") + " n=" + std::to_string(n) +
                                         " round " + std::to_string(round);
                ASSERT_EQ(check_result<P>(p, out, what), 0) << what;
            }
    }
}

/* SpMV with unit and strided x / y and the strided batch (fp16: the routines with a letter) on the tile layout. */
TEST(GpuTilesH, SpmvAndStridedBatch)
{
    MACKO_REQUIRE_GPU();
    Handle h;
    const mt::Dense m = matrix_of<Fp16>(190, 333, 0.4, 8, 3);
    Mat A;
    upload_tiles<Fp16>(h.h, m, A);
    const int64_t batch = 7;
    for (int64_t inc : {1, 3}) {
        const int64_t sx = inc * m.cols + 5, sy = inc * m.rows + 2;
        std::vector<float> xs = mt::random_vector(sx * batch, 8 + inc, true), ys = mt::random_vector(sy * batch, 9, true);
        const std::vector<uint16_t> xb = type_bits<Fp16>(xs), yb = type_bits<Fp16>(ys);
        DevMem dx(xb.size() * 2), dy(yb.size() * 2);
        ASSERT_EQ(cudaMemcpy(dx.p, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
        for (int sb = 0; sb < 2; sb++) {
            ASSERT_EQ(cudaMemcpy(dy.p, yb.data(), yb.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
            const float alpha = 1.25f, beta = 0.5f;
            const int64_t nb = sb ? batch : 1;
            if (sb)
                ASSERT_EQ(macko_Hspmv_strided_batched(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A,
                                                      dx.as<macko_half>(), inc, sx, &beta, dy.as<macko_half>(), inc,
                                                      sy, batch),
                          MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
            else
                ASSERT_EQ(macko_Hspmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, dx.as<macko_half>(), inc, &beta,
                                      dy.as<macko_half>(), inc),
                          MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
            std::vector<uint16_t> y(yb.size());
            ASSERT_EQ(cudaMemcpy(y.data(), dy.p, y.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
            for (int64_t j = 0; j < batch; j++)
                for (int64_t i = 0; i < sy; i++) {
                    const size_t at = (size_t)(j * sy + i);
                    if (j >= nb || i % inc != 0 || i / inc >= m.rows) {
                        ASSERT_EQ(y[at], yb[at]) << "element " << at << " outside y was written";
                        continue;
                    }
                    double want = 0.0, mag = 0.0;
                    for (int64_t k = 0; k < m.cols; k++) {
                        const double t = (double)m.at(i / inc, k) * mt::half_to_float(xb[(size_t)(j * sx + k * inc)]);
                        want += t;
                        mag += std::fabs(t);
                    }
                    want = alpha * want + beta * mt::half_to_float(yb[at]);
                    ASSERT_NEAR(mt::half_to_float(y[at]), want, 1.5e-3 * std::fabs(want) + 1e-3 * (mag + 1.0))
                        << "inc " << inc << " batch " << j << " row " << i / inc;
                }
        }
    }
}
