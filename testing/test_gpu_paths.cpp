/* GPU tests of what only one routine has, for each matrix type with vectors of its own type (H, S, D, B: fp64 has no
 * STAGED path, bf16 no strided batch), mostly the launch plan's choices (src/plan.h): every SpMV kernel variant
 * and geometry, and every SpMM path and tile, bitwise equal (forced through the plan override); x at any alignment;
 * the global SpMM path past 32-bit offsets; one column of SpMM / the strided batch bitwise the SpMV result; NaN in x
 * at a stored column; streams and two handles. The conformance of all three products (shapes, densities, n,
 * alpha/beta, strides, layouts, pointer modes, zero sizes, NaN/Inf, determinism, graph capture, bad arguments) runs
 * through one checker: conformance.h, test_gpu_products.cpp, test_gpu_badargs.cpp. */
#include "conformance.h"

#include "macko_internal.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using conf::Case;

template <class P> class GpuSpmv : public ::testing::Test {};
TYPED_TEST_SUITE(GpuSpmv, conf::Precisions, conf::PrecisionName);
template <class P> class GpuSpmm : public ::testing::Test {};
TYPED_TEST_SUITE(GpuSpmm, conf::Precisions, conf::PrecisionName);


/* ---- NaN in x at a stored column does reach the result (the masking is not hiding real entries) */
TYPED_TEST(GpuSpmv, NonFiniteXAtStoredColumnPropagates)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    mt::Dense m = mt::random_dense(64, 300, 0.0, 1, P::ahalf);
    for (int64_t i = 0; i < 64; i++)
        m.at(i, (i * 37) % 300) = 1.0f;
    m.at(10, 123) = 0.5f;
    gt::Rig<P> r(m, false);
    if (!r.ok())
        return;
    std::vector<float> x = mt::random_vector(300, 5, P::half);
    x[123] = std::nanf("");
    /* the reference has NaN exactly where column 123 is stored */
    conf::check_product<P>(r.h.h, nullptr, r.m, r.A.A, Case(conf::SPMV).every_column(&x).no_cublas());
}

/* ---- x at any element alignment: the kernels that stage x in shared memory use 16-byte loads when x is 16-byte
 * aligned and element loads otherwise (and for the cols % 8 tail); every alignment gives the bitwise same y. Columns
 * c % 50 == 7 are empty and hold Inf/NaN in x, so the non-finite detection of both staging paths is exercised. */
TYPED_TEST(GpuSpmv, XAtAnyAlignmentGivesTheSameResult)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    gt::Handle h;
    for (int64_t cols : {int64_t(1), int64_t(8), int64_t(37), int64_t(4103), int64_t(12288)}) {
        const int64_t rows = 300;
        mt::Dense m = mt::random_dense(rows, cols, 0.45, 7 + (uint64_t)cols, P::ahalf);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 7; c < cols; c += 50)
                m.at(r, c) = 0.0f;
        gt::Mat A;
        if (!gt::uploaded<P>(h.h, m, false, A))
            return;
        for (bool nonfinite : {false, true}) {
            std::vector<float> xv = mt::random_vector(cols, 11, P::half);
            if (nonfinite)
                for (int64_t c = 7; c < cols; c += 50)
                    xv[(size_t)c] = (c / 50) % 2 ? INFINITY : std::nanf("");
            const std::vector<E> xh = conf::encode<P>(xv);
            const int64_t pad = 16;
            gt::DevMem dx((size_t)(cols + pad) * sizeof(E)), dy((size_t)rows * sizeof(E));
            std::vector<E> first((size_t)rows), out((size_t)rows);
            const typename P::Scalar alpha = 1, beta = 0;
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
    gt::Handle h;
    /* 3001 x 2500: STAGED holds x in 10 KiB of shared memory; 301 x 20011: in 78 KiB, above the 48 KiB a block gets
     * without opting in (the plan opts in; on a device where 2 such blocks fit an SM, STAGED must really run) */
    const int64_t shapes[2][2] = {{3001, 2500}, {301, 20011}};
    const macko_devprops &dp = h.h->props;
    for (const auto &sh : shapes) {
        SCOPED_TRACE(testing::Message() << sh[0] << "x" << sh[1]);
        mt::Dense m = mt::random_dense(sh[0], sh[1], 0.3, 21, P::ahalf);
        mt::add_structure(m, 22);
        gt::Mat A;
        if (!gt::uploaded<P>(h.h, m, false, A))
            return;
        const macko_plan automatic = A.A->plan;
        std::vector<float> xv = mt::random_vector(m.cols, 3, P::half);
        std::vector<E> xh = conf::encode<P>(xv), xh2 = conf::encode<P>(xv, 2);
        gt::DevMem dx(xh.size() * sizeof(E)), dx2(xh2.size() * sizeof(E)), dy((size_t)m.rows * sizeof(E));
        CUDA_CHECK(cudaMemcpy(dx.p, xh.data(), dx.bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dx2.p, xh2.data(), dx2.bytes, cudaMemcpyHostToDevice));

        /* Every variant with the WARP geometry (the strided one through incx = 2), then STAGED twice: it sums in
         * WARP's order, so it must be bitwise equal to it and to itself run to run. */
        struct Run {
            const char *name;
            int index, geometry, kernel;
            int64_t incx;
            int depth; /* chunks loaded ahead (macko_walk.cuh's walk_rows_deep above 1): same sums, same bits */
        };
        const Run runs[] = {
            {"warp i32 unit", MACKO_IDX_I32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I32_UNIT, 1, 1},
            {"warp i32 strided", MACKO_IDX_I32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I32_STRIDED, 2, 1},
            {"warp i64 rp32", MACKO_IDX_I64_RP32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I64_RP32, 1, 1},
            {"warp i64 rp64", MACKO_IDX_I64_RP64, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I64_RP64, 1, 1},
            {"staged", MACKO_IDX_I32, MACKO_SPMV_STAGED, MACKO_K_SPMV_STAGED, 1, 1},
            {"staged again", MACKO_IDX_I32, MACKO_SPMV_STAGED, MACKO_K_SPMV_STAGED, 1, 1},
            {"warp depth 2", MACKO_IDX_I32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I32_UNIT, 1, 2},
            {"warp depth 3", MACKO_IDX_I32, MACKO_SPMV_WARP, MACKO_K_SPMV_WARP_I32_UNIT, 1, 3},
            {"staged depth 2", MACKO_IDX_I32, MACKO_SPMV_STAGED, MACKO_K_SPMV_STAGED, 1, 2},
            {"staged depth 3", MACKO_IDX_I32, MACKO_SPMV_STAGED, MACKO_K_SPMV_STAGED, 1, 3}};
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
            f.spmv_depth = r.depth;
            const macko_status_t st = macko_plan_override(h.h, A.A, MACKO_OPERATION_NON_TRANSPOSE, &f);
            if (r.depth > MACKO_SPMV_MAX_DEPTH_OF((int)sizeof(E))) {
                EXPECT_EQ(st, MACKO_STATUS_NOT_SUPPORTED) << "no such depth for this value type";
                continue;
            }
            if (r.geometry == MACKO_SPMV_STAGED && (!staged_fits || P::dbl)) {
                EXPECT_EQ(st, MACKO_STATUS_NOT_SUPPORTED) << "STAGED cannot hold x here (fp64: it holds x as fp32)";
                EXPECT_EQ(macko_get_last_error_position(), 4);
                continue;
            }
            ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            const macko_launch *L = macko_plan_spmv(&A.A->plan, r.incx);
            EXPECT_EQ(L->kernel, r.kernel);
            EXPECT_EQ(L->depth, r.depth);
            if (r.kernel == MACKO_K_SPMV_STAGED) {
                EXPECT_GE(L->blocks_per_sm, 2);
            }
            const typename P::Scalar alpha = 1.5, beta = 0;
            CUDA_CHECK(cudaMemset(dy.p, 0xFF, dy.bytes));
            const E *x = (r.incx == 1 ? dx : dx2).template as<E>();
            ASSERT_EQ(P::spmv(h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, A.A, x, r.incx, &beta, dy.as<E>(), 1),
                      MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            std::vector<E> out((size_t)m.rows);
            CUDA_CHECK(cudaMemcpy(out.data(), dy.p, dy.bytes, cudaMemcpyDeviceToHost));
            if (first.empty()) {
                first = out;
                EXPECT_LT(conf::error_vs_reference<P>(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.5, xh.data(), 1, 0.0,
                                                      nullptr, out.data(), 1),
                          P::rel_l2_max);
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
    mt::Dense wide = mt::random_dense(2, MACKO_SPMV_STAGE_MAX_COLS + 1, 0.3, 23, P::ahalf);
    gt::Mat W;
    if (!gt::uploaded<P>(h.h, wide, false, W))
        return;
    EXPECT_EQ(W.A->plan.spmv_unit.kernel, MACKO_K_SPMV_WARP_I32_UNIT);
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.spmv_geometry = MACKO_SPMV_STAGED;
    EXPECT_EQ(macko_plan_override(h.h, W.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(W.A->plan.spmv_unit.kernel, MACKO_K_SPMV_WARP_I32_UNIT) << "a refused override changes nothing";
}

/* ---- a non-default stream, and two handles on two streams at once sharing one matrix */
TYPED_TEST(GpuSpmv, StreamsAndTwoHandles)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    gt::Handle h1, h2;
    cudaStream_t s1, s2;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    ASSERT_EQ(macko_set_stream(h1.h, s1), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_set_stream(h2.h, s2), MACKO_STATUS_SUCCESS);
    mt::Dense m = mt::random_dense(4000, 2048, 0.3, 41, P::ahalf);
    gt::Mat A;
    if (!gt::uploaded<P>(h1.h, m, false, A))
        return;
    CUDA_CHECK(cudaStreamSynchronize(s1)); /* the upload is asynchronous on h1's stream */
    std::vector<float> x1 = mt::random_vector(2048, 42, P::half), x2 = mt::random_vector(2048, 43, P::half);
    std::vector<E> x1h = conf::encode<P>(x1), x2h = conf::encode<P>(x2);
    gt::DevMem dx1(2048 * sizeof(E)), dx2(2048 * sizeof(E)), dy1(4000 * sizeof(E)), dy2(4000 * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dx1.p, x1h.data(), dx1.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dx2.p, x2h.data(), dx2.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy1.p, 0xFF, dy1.bytes));
    CUDA_CHECK(cudaMemset(dy2.p, 0xFF, dy2.bytes));
    const typename P::Scalar one = 1, zero = 0;
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
        EXPECT_LT(conf::error_vs_reference<P>(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.0, (which ? x2h : x1h).data(), 1,
                                              0.0, nullptr, out.data(), 1),
                  P::rel_l2_max)
            << "handle " << which + 1;
    }
    /* The ordinary checks on a non-default stream. */
    conf::check_product<P>(h1.h, nullptr, m, A.A, Case(conf::SPMV).scalars(1.0f, -0.5f));
    macko_set_stream(h1.h, nullptr);
    macko_set_stream(h2.h, nullptr);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
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
    gt::Rig<P> r(gt::random_matrix<P>(rows, cols, 0.1, 41), false);
    if (!r.ok())
        return;
    /* the global path for every n (fp32 would take it anyway: no staged tile of 8 holds 8000 columns) */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_GLOBAL;
    ASSERT_EQ(macko_plan_override(r.h.h, r.A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
    const macko_launch *L = macko_plan_mm(&r.A.A->plan, batch, cols, 1, stridex, 1);
    ASSERT_NE(L, nullptr);
    EXPECT_EQ(L->tile, 8);
    EXPECT_EQ(L->kernel, P::ahalf ? MACKO_K_MM_GLOBAL_I32 : MACKO_K_MM_GLOBAL_I64_RP32);
    gt::DevMem dx(xbytes), dy((size_t)(rows * batch) * sizeof(E));
    std::vector<std::vector<E>> xs;
    for (int64_t j = 0; j < batch; j++) {
        xs.push_back(conf::encode<P>(mt::random_vector(cols, 43 + (uint64_t)j, P::half)));
        CUDA_CHECK(cudaMemcpy(dx.as<E>() + j * stridex, xs.back().data(), cols * sizeof(E), cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemset(dy.p, 0xFF, dy.bytes));
    const typename P::Scalar alpha = 1, beta = 0;
    /* without a strided batch (bf16): SpMM with ldb = stridex, the same B */
    ASSERT_EQ(conf::call<P>(P::has_sb ? conf::BATCHED : conf::SPMM, r.h.h, MACKO_OPERATION_NON_TRANSPOSE, batch, &alpha,
                            r.A.A, dx.as<E>(), 1, stridex, &beta, dy.as<E>(), 1, rows),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    std::vector<E> y((size_t)(rows * batch));
    CUDA_CHECK(cudaMemcpy(y.data(), dy.p, dy.bytes, cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < batch; j++)
        EXPECT_LT(conf::error_vs_reference<P>(r.A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.0, xs[(size_t)j].data(), 1, 0.0,
                                              nullptr, &y[(size_t)(j * rows)], 1),
                  P::rel_l2_max)
            << "vector " << j;
}

/* ---- every path (staged plain, staged swizzled, global with 32- and 64-bit indices, int64 row pointers; forced
 * through the plan override, src/plan.h) computes the bitwise same result for a given tile, and the reference's */
TYPED_TEST(GpuSpmm, PathsAgreeBitwise)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    gt::Rig<P> rg(gt::random_matrix<P>(3001, 2500, 0.3, 21, 22), false);
    if (!rg.ok())
        return;
    const int64_t n = 16, ldb = rg.m.cols + 1, ldc = rg.m.rows + 3;
    const std::vector<E> bh = conf::encode<P>(mt::random_vector(ldb * n, 3, P::half));
    gt::DevMem db(bh.size() * sizeof(E)), dc((size_t)(ldc * n) * sizeof(E));
    CUDA_CHECK(cudaMemcpy(db.p, bh.data(), db.bytes, cudaMemcpyHostToDevice));
    const typename P::Scalar alpha = 1.5, beta = 0;

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
            if (P::dbl && r.path == MACKO_MM_PATH_STAGED) { /* not built for fp64: the override says so */
                EXPECT_EQ(macko_plan_override(rg.h.h, rg.A.A, MACKO_OPERATION_NON_TRANSPOSE, &f),
                          MACKO_STATUS_NOT_SUPPORTED);
                EXPECT_EQ(macko_get_last_error_position(), 4);
                continue;
            }
            ASSERT_EQ(macko_plan_override(rg.h.h, rg.A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            const macko_launch *L = macko_plan_mm(&rg.A.A->plan, n, rg.m.cols, 1, ldb, 1);
            ASSERT_NE(L, nullptr);
            EXPECT_EQ(L->kernel, r.kernel);
            /* the staged tile narrows where the device's shared memory cannot hold it */
            EXPECT_TRUE(r.path == MACKO_MM_PATH_STAGED ? L->tile <= tile : L->tile == tile) << L->tile;
            if (r.path == MACKO_MM_PATH_STAGED && r.swizzle >= 0) {
                EXPECT_EQ(L->swizzle, r.swizzle);
            }
            CUDA_CHECK(cudaMemset(dc.p, 0xFF, dc.bytes));
            ASSERT_EQ(P::mm(rg.h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, rg.A.A, db.as<E>(), ldb, &beta,
                            dc.as<E>(), ldc),
                      MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            std::vector<E> out((size_t)(ldc * n));
            CUDA_CHECK(cudaMemcpy(out.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
            if (first.empty()) {
                first = out;
                first_name = r.name;
                for (int64_t j = 0; j < n; j++)
                    EXPECT_LT(conf::error_vs_reference<P>(rg.A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.5,
                                                          &bh[(size_t)(j * ldb)], 1, 0.0, nullptr,
                                                          &out[(size_t)(j * ldc)], 1),
                              P::rel_l2_max)
                        << "column " << j;
            } else {
                for (int64_t j = 0; j < n; j++)
                    EXPECT_EQ(
                        std::memcmp(out.data() + j * ldc, first.data() + j * ldc, (size_t)rg.m.rows * sizeof(E)), 0)
                        << "column " << j << " differs from " << first_name;
            }
        }
    }
    /* A forced path that cannot run this problem says so: the override refuses the staged path on 64-bit indices;
     * a forced SPMV path leaves n > 1 without a launch, which the call reports and C stays as it was. */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.index = MACKO_IDX_I64_RP32;
    f.mm_path = MACKO_MM_PATH_STAGED;
    EXPECT_EQ(macko_plan_override(rg.h.h, rg.A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 4);
    f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_SPMV;
    ASSERT_EQ(macko_plan_override(rg.h.h, rg.A.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS);
    std::vector<E> before((size_t)(ldc * n)), after((size_t)(ldc * n));
    CUDA_CHECK(cudaMemcpy(before.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(P::mm(rg.h.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, rg.A.A, db.as<E>(), ldb, &beta, dc.as<E>(), ldc),
              MACKO_STATUS_NOT_SUPPORTED);
    CUDA_CHECK(cudaMemcpy(after.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(before.data(), after.data(), dc.bytes), 0);
    ASSERT_EQ(macko_plan_override(rg.h.h, rg.A.A, MACKO_OPERATION_NON_TRANSPOSE, nullptr), MACKO_STATUS_SUCCESS);
}

/* ---- n == 1 and batch == 1 are bitwise the SpMV result */
TYPED_TEST(GpuSpmm, OneColumnIsSpmv)
{
    MACKO_REQUIRE_GPU();
    using P = TypeParam;
    using E = typename P::E;
    gt::Rig<P> r(gt::random_matrix<P>(1500, 1024, 0.4, 41), false);
    if (!r.ok())
        return;
    const std::vector<E> xh = conf::encode<P>(mt::random_vector(1024 * 2, 42, P::half));
    const size_t ybytes = 1500 * 2 * sizeof(E);
    gt::DevMem dx(xh.size() * sizeof(E)), dy1(ybytes), dy2(ybytes), dy3(ybytes);
    CUDA_CHECK(cudaMemcpy(dx.p, xh.data(), dx.bytes, cudaMemcpyHostToDevice));
    const typename P::Scalar alpha = 1.25, beta = 0;
    /* without a strided batch (bf16): SpMM against SpMV, inc 1 */
    for (int64_t inc : P::has_sb ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1}) {
        CUDA_CHECK(cudaMemset(dy1.p, 0, dy1.bytes));
        CUDA_CHECK(cudaMemset(dy2.p, 0, dy2.bytes));
        CUDA_CHECK(cudaMemset(dy3.p, 0, dy3.bytes));
        const E *x = dx.as<E>();
        if (inc == 1) {
            ASSERT_EQ(P::mm(r.h.h, MACKO_OPERATION_NON_TRANSPOSE, 1, &alpha, r.A.A, x, 1024, &beta, dy1.as<E>(), 1500),
                      MACKO_STATUS_SUCCESS);
        } else {
            ASSERT_EQ(conf::call<P>(conf::BATCHED, r.h.h, MACKO_OPERATION_NON_TRANSPOSE, 1, &alpha, r.A.A, x, 2, 0,
                                    &beta, dy1.as<E>(), 2, 0),
                      MACKO_STATUS_SUCCESS);
        }
        if (P::has_sb) {
            ASSERT_EQ(conf::call<P>(conf::BATCHED, r.h.h, MACKO_OPERATION_NON_TRANSPOSE, 1, &alpha, r.A.A, x, inc, 5,
                                    &beta, dy2.as<E>(), inc, 7),
                      MACKO_STATUS_SUCCESS);
        }
        ASSERT_EQ(P::spmv(r.h.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, r.A.A, x, inc, &beta, dy3.as<E>(), inc),
                  MACKO_STATUS_SUCCESS);
        std::vector<E> o1(1500 * 2), o2(1500 * 2), o3(1500 * 2);
        CUDA_CHECK(cudaMemcpy(o1.data(), dy1.p, dy1.bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(o2.data(), dy2.p, dy2.bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(o3.data(), dy3.p, dy3.bytes, cudaMemcpyDeviceToHost));
        EXPECT_EQ(std::memcmp(o1.data(), o3.data(), dy1.bytes), 0) << "inc " << inc;
        if (P::has_sb) {
            EXPECT_EQ(std::memcmp(o2.data(), o3.data(), dy1.bytes), 0) << "inc " << inc;
        }
    }
}

} // namespace
