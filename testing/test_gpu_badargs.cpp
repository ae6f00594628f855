/* Bad arguments of the compute routines (macko_?spmv, macko_?spmm, macko_?spmv_strided_batched), through the walker
 * of bad_args.h: every argument of a valid call broken in turn, then the cases a walk cannot make (op T without
 * macko_analysis; several bad arguments at once, where the first one wins; NULL arrays that nothing references).
 * Every refused call: its status, position, a message naming the routine and the argument, the output untouched.
 *
 * Two worlds run the same walks. GpuBadArgs: a real handle and matrices on the GPU, the output in device memory, and
 * finally valid calls that must succeed and clear the error. BadArgs (any machine): the handle is a struct made here
 * and the matrices only claim a device copy (the calls fail in their checks, before anything would touch a device),
 * the output in host memory. */
#include "bad_args.h"
#include "conformance.h"

#include "macko_internal.h"

#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr macko_operation_t N = MACKO_OPERATION_NON_TRANSPOSE, T = MACKO_OPERATION_TRANSPOSE;
constexpr macko_status_t INV = MACKO_STATUS_INVALID_VALUE, NI = MACKO_STATUS_NOT_INITIALIZED;

/* A 40 x 30 matrix of P's precision (op T not analysed) and ba::matrix's wrong ones: the same matrix in the other
 * precision, on "another device" (its device number moved by 7) and host-only; an input of kElems elements of 0.5
 * and an output of kElems elements holding P::sentinel(), which must survive every refused call. */
template <class P> struct World {
    using E = typename P::E;
    static constexpr size_t kElems = 256;
    const bool fake;
    macko_handle_s fake_handle{};
    macko_handle_t h = nullptr;
    ba::Matrices mats;
    gt::DevMem din, dout;
    std::vector<E> hin, hout, pattern;
    typename P::Scalar one = 1, zero = 0;

    explicit World(bool fake_device) : fake(fake_device), pattern(kElems, P::sentinel())
    {
        const mt::Dense m = mt::random_dense(40, 30, 0.5, 61, P::half);
        const macko_datatype_t other = P::half ? MACKO_R_32F : MACKO_R_16F; /* fp64: fp16 */
        if (fake) {
            h = &fake_handle;
        } else {
            EXPECT_EQ(macko_create(&h), MACKO_STATUS_SUCCESS);
        }
        mats.good = make(m, P::type, true);
        mats.other_type = make(m, other, true);
        mats.elsewhere = make(m, P::type, true);
        mats.host_only = make(m, P::type, false);
        if (mats.elsewhere != nullptr)
            mats.elsewhere->device += 7;
        const std::vector<E> in(kElems, P::from(0.5f));
        if (fake) {
            hin = in;
            hout = pattern;
        } else {
            din.alloc(kElems * sizeof(E));
            dout.alloc(kElems * sizeof(E));
            EXPECT_EQ(cudaMemcpy(din.p, in.data(), din.bytes, cudaMemcpyHostToDevice), cudaSuccess);
            EXPECT_EQ(cudaMemcpy(dout.p, pattern.data(), dout.bytes, cudaMemcpyHostToDevice), cudaSuccess);
        }
    }
    ~World()
    {
        if (mats.elsewhere != nullptr)
            mats.elsewhere->device -= 7;
        for (macko_mat_t A : {mats.good, mats.other_type, mats.elsewhere, mats.host_only}) {
            if (fake && A != nullptr)
                A->has_device = 0; /* only claimed: nothing to free there */
            macko_mat_destroy(A);
        }
        if (!fake)
            macko_destroy(h);
    }
    World(const World &) = delete;
    World &operator=(const World &) = delete;

    /* m as a matrix of the given type, on the device (real or claimed) when asked. */
    macko_mat_t make(const mt::Dense &m, macko_datatype_t type, bool on_device)
    {
        const std::vector<uint8_t> bytes = mt::to_bytes(m, type, MACKO_ORDER_ROW, m.cols);
        macko_mat_t A = nullptr;
        EXPECT_EQ(macko_mat_create_dense_host(&A, m.rows, m.cols, type, bytes.data(), m.cols, MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        if (A != nullptr && on_device) {
            if (fake) {
                A->has_device = 1;
                A->device = 0;
            } else {
                EXPECT_EQ(macko_mat_upload(h, A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            }
        }
        return A;
    }
    const E *in() const { return fake ? hin.data() : din.as<E>(); }
    E *out() { return fake ? hout.data() : dout.as<E>(); }

    ba::Rules rules(conf::Routine r)
    {
        const std::string name = conf::routine_name<P>(r);
        return {name, [this, name](const std::string &what) {
                    std::vector<E> now = hout;
                    if (!fake) {
                        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
                        now.resize(kElems);
                        ASSERT_EQ(cudaMemcpy(now.data(), dout.p, dout.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
                    }
                    EXPECT_EQ(std::memcmp(now.data(), pattern.data(), kElems * sizeof(E)), 0)
                        << name << ", " << what << ": the output was written";
                }};
    }
    /* A valid call on the GPU world succeeds and clears the error position (fake: not run, it would launch). */
    void succeeds(macko_status_t got, const char *what)
    {
        EXPECT_EQ(got, MACKO_STATUS_SUCCESS) << what << ": " << macko_get_last_error_message();
        EXPECT_EQ(macko_get_last_error_position(), 0) << what;
        if (!fake) {
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            /* the good call wrote the output: put the pattern back for the walks that follow */
            ASSERT_EQ(cudaMemcpy(dout.p, pattern.data(), dout.bytes, cudaMemcpyHostToDevice), cudaSuccess);
        }
    }
};

template <class P> void spmv_bad_args(World<P> &w)
{
    using E = typename P::E;
    const ba::Rules r = w.rules(conf::SPMV);
    ba::walk(r, P::spmv, ba::handle(w.h), ba::op(N), ba::scalar("alpha", &w.one), ba::matrix(w.mats),
             ba::array("x", w.in()), ba::size("incx", 1, {0, -1, INT64_MAX / 2}), ba::scalar("beta", &w.zero),
             ba::array("y", w.out()), ba::size("incy", 1, {0, -3}));
    macko_handle_t h = w.h;
    macko_mat_t A = w.mats.good;
    const E *x = w.in();
    E *y = w.out();
    const typename P::Scalar *a = &w.one, *b = &w.zero;
    ba::refused(r, P::spmv(h, T, a, A, x, 1, b, y, 1), NI, 2, "op", "op T without macko_analysis");
    ba::refused(r, P::spmv(nullptr, T, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0), INV, 1, "handle",
                "everything bad");
    ba::refused(r, P::spmv(h, N, nullptr, A, nullptr, 0, nullptr, nullptr, 0), INV, 3, "alpha",
                "alpha, x, incx, beta, y, incy bad");
    ba::refused(r, P::spmv(h, (macko_operation_t)5, a, nullptr, x, 1, b, y, 1), INV, 2, "op", "op and A bad");
    ba::refused(r, P::spmv(h, N, a, A, x, 0, b, nullptr, 1), INV, 6, "incx", "incx and y bad");
    if (!w.fake)
        w.succeeds(P::spmv(h, N, a, A, x, 1, b, y, 1), "a good call");
}

template <class P> void spmm_bad_args(World<P> &w)
{
    using E = typename P::E;
    const ba::Rules r = w.rules(conf::SPMM);
    /* op N: k = 30, m = 40 */
    ba::walk(r, P::mm, ba::handle(w.h), ba::op(N), ba::size("n", 2, {-1}), ba::scalar("alpha", &w.one),
             ba::matrix(w.mats), ba::array("B", w.in()), ba::size("ldb", 30, {29, 0, INT64_MAX / 2}),
             ba::scalar("beta", &w.zero), ba::array("C", w.out()), ba::size("ldc", 40, {39, -5, INT64_MAX / 2}));
    macko_handle_t h = w.h;
    macko_mat_t A = w.mats.good;
    const E *B = w.in();
    E *C = w.out();
    const typename P::Scalar *a = &w.one, *b = &w.zero;
    ba::refused(r, P::mm(h, T, 2, a, A, B, 40, b, C, 30), NI, 2, "op", "op T without macko_analysis");
    ba::refused(r, P::mm(h, N, 3, a, A, B, INT64_MAX / 2, b, C, 40), INV, 7, "ldb", "ldb overflowing at n = 3");
    ba::refused(r, P::mm(h, N, 3, a, A, B, 30, b, C, INT64_MAX / 2), INV, 10, "ldc", "ldc overflowing at n = 3");
    ba::refused(r, P::mm(nullptr, T, -1, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0), INV, 1, "handle",
                "everything bad");
    ba::refused(r, P::mm(h, N, -1, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0), INV, 3, "n",
                "n and everything after");
    ba::refused(r, P::mm(h, N, 2, a, A, nullptr, 0, b, nullptr, 0), INV, 6, "B", "B, ldb, C, ldc bad");
    ba::refused(r, P::mm(h, N, 2, a, A, B, 30, b, nullptr, 0), INV, 9, "C", "C and ldc bad");
    /* n == 0: B and C may be NULL but ld is still checked */
    ba::refused(r, P::mm(h, N, 0, a, A, nullptr, 29, b, nullptr, 40), INV, 7, "ldb", "n 0 with ldb < k");
    if (!w.fake)
        w.succeeds(P::mm(h, N, 2, a, A, B, 30, b, C, 40), "a good call");
}

template <class P> void strided_batched_bad_args(World<P> &w)
{
    using E = typename P::E;
    const ba::Rules r = w.rules(conf::BATCHED);
    ba::walk(r, P::sb, ba::handle(w.h), ba::op(N), ba::scalar("alpha", &w.one), ba::matrix(w.mats),
             ba::array("x", w.in()), ba::size("incx", 1, {0, -1, INT64_MAX / 2}),
             ba::size("stridex", 30, {-1, INT64_MAX / 2}), ba::scalar("beta", &w.zero), ba::array("y", w.out()),
             ba::size("incy", 1, {0, -2, INT64_MAX / 4}), ba::size("stridey", 40, {-40, 0, INT64_MAX / 2}),
             ba::size("batch", 2, {-1}));
    macko_handle_t h = w.h;
    macko_mat_t A = w.mats.good;
    const E *x = w.in();
    E *y = w.out();
    const typename P::Scalar *a = &w.one, *b = &w.zero;
    ba::refused(r, P::sb(h, T, a, A, x, 1, 40, b, y, 1, 30, 2), NI, 2, "op", "op T without macko_analysis");
    ba::refused(r, P::sb(h, N, a, A, x, 1, INT64_MAX / 2, b, y, 1, 40, 3), INV, 7, "stridex",
                "stridex overflowing at batch 3");
    ba::refused(r, P::sb(h, N, a, A, x, 1, 30, b, y, 1, INT64_MAX / 2, 3), INV, 11, "stridey",
                "stridey overflowing at batch 3");
    ba::refused(r, P::sb(nullptr, T, nullptr, nullptr, nullptr, 0, -1, nullptr, nullptr, 0, -1, -1), INV, 1,
                "handle", "everything bad");
    /* the first bad argument wins; NULL vectors are allowed when nothing is referenced */
    ba::refused(r, P::sb(h, N, a, A, nullptr, 0, -1, b, nullptr, 0, -1, -1), INV, 6, "incx", "incx and after");
    ba::refused(r, P::sb(h, N, a, A, nullptr, 1, 0, b, nullptr, 1, 0, -1), INV, 12, "batch",
                "batch -1 with NULL vectors");
    w.succeeds(P::sb(h, N, a, A, nullptr, 1, 0, b, nullptr, 1, 0, 0), "batch 0 with NULL vectors");
    if (!w.fake) {
        w.succeeds(P::sb(h, N, a, A, x, 1, 0, b, y, 1, 0, 1), "batch 1: strides unused");
        w.succeeds(P::sb(h, N, a, A, x, 1, 30, b, y, 1, 40, 2), "a good call");
    }
}

/* The generic routines on an fp16 matrix with fp32 x / B and y / C (the world's buffers: W = World<SP>): the walk
 * with the type arguments broken too (not a type: INVALID_VALUE; a type no combination allows there: NOT_SUPPORTED),
 * a bf16-only matrix's own combination refused for fp16, and the type check before x's. */
void ex_bad_args(World<conf::SP> &w)
{
    const mt::Dense m = mt::random_dense(40, 30, 0.5, 62, true);
    macko_mat_t AH = w.make(m, MACKO_R_16F, true);
    ba::Matrices mats = w.mats;
    mats.good = AH;
    mats.other_type = nullptr;
    const float *a = &w.one, *b = &w.zero;
    const void *x = w.in();
    void *y = w.out();
    {
        ba::Rules r = w.rules(conf::SPMV);
        r.routine = "macko_spmv_ex";
        ba::walk(r, macko_spmv_ex, ba::handle(w.h), ba::op(N), ba::scalar<void>("alpha", a), ba::matrix(mats),
                 ba::array("x", x), ba::type_arg("xtype", MACKO_R_32F, {MACKO_R_64F, MACKO_R_16BF}),
                 ba::size("incx", 1, {0, -1}), ba::scalar<void>("beta", b), ba::array("y", y),
                 ba::type_arg("ytype", MACKO_R_32F, {MACKO_R_16F, MACKO_R_64F}), ba::size("incy", 1, {0}),
                 ba::type_arg("compute_type", MACKO_R_32F, {MACKO_R_64F, MACKO_R_16F}));
        /* fp16 A with bf16 x: the first type argument no row allows is xtype, whatever follows */
        ba::refused(r, macko_spmv_ex(w.h, N, a, AH, x, MACKO_R_16BF, 0, b, nullptr, (macko_datatype_t)3, 0,
                                     MACKO_R_64F),
                    MACKO_STATUS_NOT_SUPPORTED, 6, "xtype", "bf16 x with fp16 A, and everything after bad");
        ba::refused(r, macko_spmv_ex(w.h, N, a, AH, x, MACKO_R_16F, 1, b, y, MACKO_R_32F, 1, MACKO_R_32F),
                    MACKO_STATUS_NOT_SUPPORTED, 10, "ytype", "fp16 x with fp32 y");
        ba::refused(r, macko_spmv_ex(w.h, N, a, w.mats.good, x, MACKO_R_16F, 1, b, y, MACKO_R_16F, 1, MACKO_R_32F),
                    MACKO_STATUS_NOT_SUPPORTED, 6, "xtype", "fp32 A with fp16 x");
        if (!w.fake)
            w.succeeds(macko_spmv_ex(w.h, N, a, AH, x, MACKO_R_32F, 1, b, y, MACKO_R_32F, 1, MACKO_R_32F),
                       "a good call");
    }
    {
        ba::Rules r = w.rules(conf::SPMM);
        r.routine = "macko_spmm_ex";
        ba::walk(r, macko_spmm_ex, ba::handle(w.h), ba::op(N), ba::size("n", 2, {-1}), ba::scalar<void>("alpha", a),
                 ba::matrix(mats), ba::array("B", x), ba::type_arg("btype", MACKO_R_32F, {MACKO_R_64F}),
                 ba::size("ldb", 30, {29, 0}), ba::scalar<void>("beta", b), ba::array("C", y),
                 ba::type_arg("ctype", MACKO_R_32F, {MACKO_R_16BF}), ba::size("ldc", 40, {39}),
                 ba::type_arg("compute_type", MACKO_R_32F, {MACKO_R_64F}));
        ba::refused(r, macko_spmm_ex(w.h, T, 2, a, AH, x, MACKO_R_32F, 40, b, y, MACKO_R_32F, 30, MACKO_R_32F),
                    NI, 2, "op", "op T without macko_analysis");
        if (!w.fake)
            w.succeeds(macko_spmm_ex(w.h, N, 2, a, AH, x, MACKO_R_32F, 30, b, y, MACKO_R_32F, 40, MACKO_R_32F),
                       "a good call");
    }
    if (w.fake && AH != nullptr)
        AH->has_device = 0;
    macko_mat_destroy(AH);
}

TEST(GpuBadArgsEx, SpmvSpmmEx)
{
    MACKO_REQUIRE_GPU();
    World<conf::SP> w(false);
    if (::testing::Test::HasFailure())
        return;
    ex_bad_args(w);
}

TEST(BadArgsEx, SpmvSpmmExWithoutGpu)
{
    World<conf::SP> w(true);
    if (::testing::Test::HasFailure())
        return;
    ex_bad_args(w);
}

/* ---- on the GPU */
template <class P> class GpuBadArgs : public ::testing::Test {};
TYPED_TEST_SUITE(GpuBadArgs, conf::AllPrecisions, conf::PrecisionName);

#define MACKO_WORLD(fake_device)                                                                                     \
    World<TypeParam> w(fake_device);                                                                                 \
    if (::testing::Test::HasFailure())                                                                               \
    return

TYPED_TEST(GpuBadArgs, Spmv)
{
    MACKO_REQUIRE_GPU();
    MACKO_WORLD(false);
    spmv_bad_args(w);
}

TYPED_TEST(GpuBadArgs, Spmm)
{
    MACKO_REQUIRE_GPU();
    MACKO_WORLD(false);
    spmm_bad_args(w);
}

TYPED_TEST(GpuBadArgs, StridedBatched)
{
    MACKO_REQUIRE_GPU();
    MACKO_WORLD(false);
    strided_batched_bad_args(w);
}

/* ---- on any machine: the same walks on claimed device copies */
template <class P> class BadArgs : public ::testing::Test {};
TYPED_TEST_SUITE(BadArgs, conf::AllPrecisions, conf::PrecisionName);

TYPED_TEST(BadArgs, SpmvWithoutGpu)
{
    MACKO_WORLD(true);
    spmv_bad_args(w);
}

TYPED_TEST(BadArgs, SpmmWithoutGpu)
{
    MACKO_WORLD(true);
    spmm_bad_args(w);
}

TYPED_TEST(BadArgs, StridedBatchedWithoutGpu)
{
    MACKO_WORLD(true);
    strided_batched_bad_args(w);
}

} // namespace
