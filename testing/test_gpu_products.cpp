/* GPU conformance of the products macko_?spmv, macko_?spmm and macko_?spmv_strided_batched (H, S, D) and of
 * macko_spmv_ex / macko_spmm_ex (B: bf16; HS, BS: fp16 / bf16 matrices with fp32 vectors), through the checker of
 * conformance.h (tolerances and rules there; cuBLAS and cuSPARSE where the shapes allow):
 *   - parameter tables (INSTANTIATE_TEST_SUITE_P): shapes x densities (GpuShapes: 0-sized, 1, 7, 33, 257, 4097,
 *     12289, 28929, 70000 ...: not multiples of 16/32/64/256; empty, dense and gappy rows; all-positive data),
 *     alpha/beta x pointer modes x strides (GpuScalars: beta = 0 with NaN in C), alpha = 0 with NaN in B
 *     (GpuAlphaZero), the strided batch's layouts and a matrix too wide for the staged tile (GpuLayouts);
 *   - per routine (GpuProduct/{H,S,D,B,HS,BS}{spmv,spmm}): zero sizes, NaN/Inf in B where no entry is stored,
 *     bitwise determinism, CUDA graph capture.
 * The seeds are those of the tests these replace (test_gpu_spmv.cpp / test_gpu_spmm.cpp before issue 14), so each
 * row multiplies the same matrix by the same operands as before; the rows added here (all-positive data, empty
 * matrices, alpha = 0 for the strided batch) have seeds of their own. The precisions of issue 17 take the rows of H
 * and S with their seeds (HS and BS: a subset of the densities); the strided batch rows only where it exists (H, S,
 * D). */
#include "conformance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace {

using conf::BATCHED;
using conf::Case;
using conf::PrecId;
using conf::Routine;
using conf::SPMM;
using conf::SPMV;

constexpr macko_operation_t N = MACKO_OPERATION_NON_TRANSPOSE, T = MACKO_OPERATION_TRANSPOSE;
constexpr macko_pointer_mode_t kHost = MACKO_POINTER_MODE_HOST, kDevice = MACKO_POINTER_MODE_DEVICE;

std::string num(double v)
{
    std::string s = testing::PrintToString(v);
    std::replace(s.begin(), s.end(), '.', 'p');
    std::replace(s.begin(), s.end(), '-', 'm');
    return s;
}

/* ---------------------------------------------------------------- shapes x densities */

/* One matrix: random_dense(rows, cols, d, seed), with add_structure(seed) (empty, dense and gappy rows) for an even
 * seed and rows >= 7; positive: |values| and |operands|. SPMV runs op N and T; SPMM runs op N and T for every n of
 * kNs (a subset on the largest shapes), each with the next seed and odd leading dimensions for odd n. */
struct ShapeRow {
    Routine routine;
    PrecId prec;
    int64_t rows, cols;
    double d;
    uint64_t seed;
    bool positive;
};

const int64_t kNs[] = {1, 2, 3, 4, 7, 8, 16, 17, 33};

/* The (op, n) of one SPMM row, in order. */
std::vector<std::pair<macko_operation_t, int64_t>> spmm_runs(const ShapeRow &r)
{
    std::vector<std::pair<macko_operation_t, int64_t>> out;
    for (macko_operation_t op : {N, T})
        for (int64_t n : kNs)
            if (!(r.rows * r.cols > 1000000 && r.d != 0.5 && n != 3 && n != 8 && n != 17))
                out.push_back({op, n});
    return out;
}

/* Rows for every shape x density in order, seeds counting up from seed0 as the loops of the old tests did. */
std::vector<ShapeRow> table(Routine r, const std::vector<std::pair<int64_t, int64_t>> &shapes,
                            const std::vector<double> &dens, uint64_t seed0, bool positive)
{
    std::vector<ShapeRow> out;
    uint64_t seed = seed0;
    for (const auto &sh : shapes)
        for (double d : dens) {
            /* SpMV: the big shapes take a subset of densities to keep the run short */
            if (r == SPMV && sh.first * sh.second > 1000000 && !(d == 0.0 || d == 0.05 || d == 0.3 || d == 0.5 ||
                                                                 d == 1.0))
                continue;
            ShapeRow row{r, conf::kH, sh.first, sh.second, d, ++seed, positive};
            if (r == SPMM)
                seed += spmm_runs(row).size();
            /* the mixed precisions: the densities the big SpMV shapes take */
            const bool subset = d == 0.0 || d == 0.05 || d == 0.1 || d == 0.3 || d == 0.5 || d == 1.0;
            for (PrecId p : conf::kAllPrec) {
                if ((p == conf::kHS || p == conf::kBS) && !subset)
                    continue;
                row.prec = p;
                out.push_back(row);
            }
        }
    return out;
}

std::vector<ShapeRow> spmv_shapes()
{
    return table(SPMV,
                 {{1, 1}, {1, 7}, {7, 1}, {33, 33}, {4097, 5}, {5, 4097}, {1000, 4097}, {4097, 1000}, {20000, 257},
                  {3, 70000}, {64, 12289}, {100, 28928}, {100, 28929}},
                 {0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}, 100, false);
}

std::vector<ShapeRow> spmm_shapes()
{
    return table(SPMM, {{1, 1}, {7, 33}, {33, 7}, {4097, 5}, {1000, 4097}, {257, 300}}, {0.0, 0.1, 0.5, 1.0}, 200,
                 false);
}

/* All-positive data (no cancellation: S = |reference| when beta = 0), and empty matrices. */
std::vector<ShapeRow> positive_and_empty()
{
    std::vector<ShapeRow> v = table(SPMV, {{33, 33}, {4097, 5}, {5, 4097}, {1000, 4097}}, {0.1, 0.5, 1.0}, 600, true);
    const std::vector<ShapeRow> mm = table(SPMM, {{33, 7}, {257, 300}, {1000, 4097}}, {0.1, 0.5, 1.0}, 700, true);
    v.insert(v.end(), mm.begin(), mm.end());
    for (Routine r : {SPMV, SPMM}) {
        const std::vector<ShapeRow> e = table(r, {{0, 0}, {0, 9}, {11, 0}}, {0.5}, 800, false);
        v.insert(v.end(), e.begin(), e.end());
    }
    return v;
}

void PrintTo(const ShapeRow &r, std::ostream *os) { *os << "seed " << r.seed << (r.positive ? ", positive" : ""); }

std::string shape_name(const testing::TestParamInfo<ShapeRow> &i)
{
    const ShapeRow &r = i.param;
    return conf::prec_name(r.prec) + (r.routine == SPMV ? "spmv_" : "spmm_") + std::to_string(r.rows) + "x" +
           std::to_string(r.cols) + "_d" + num(r.d);
}

class GpuShapes : public conf::GpuSuite, public testing::WithParamInterface<ShapeRow> {};

TEST_P(GpuShapes, MatchReference)
{
    const ShapeRow &p = GetParam();
    conf::with_precision(p.prec, [&](auto tag) {
        using P = decltype(tag);
        mt::Dense m = mt::random_dense(p.rows, p.cols, p.d, p.seed, P::ahalf);
        if (p.seed % 2 == 0 && p.rows >= 7)
            mt::add_structure(m, p.seed);
        if (p.positive)
            for (float &f : m.v)
                f = std::fabs(f);
        gt::Mat A;
        if (!gt::uploaded<P>(handle(), m, true, A))
            return;
        Case c(p.routine);
        c.seed = p.seed;
        c.positive = p.positive;
        std::vector<std::pair<macko_operation_t, int64_t>> runs = {{N, 1}, {T, 1}};
        if (p.routine == SPMM)
            runs = spmm_runs(p);
        for (const auto &run : runs) {
            SCOPED_TRACE(testing::Message() << (run.first == N ? "op N" : "op T") << " n=" << run.second);
            c.op = run.first;
            if (p.routine == SPMM) { /* the next seed, and odd leading dimensions for odd n */
                c.n = run.second;
                c.from_seed(c.seed + 1).extra_ld((c.n % 2) ? 3 : 0, (c.n % 3) ? 1 : 0);
            }
            conf::check_product<P>(handle(), blas(), m, A.A, c);
            if (HasFatalFailure())
                return;
        }
    });
}

INSTANTIATE_TEST_SUITE_P(Spmv, GpuShapes, testing::ValuesIn(spmv_shapes()), shape_name);
INSTANTIATE_TEST_SUITE_P(Spmm, GpuShapes, testing::ValuesIn(spmm_shapes()), shape_name);
INSTANTIATE_TEST_SUITE_P(PositiveAndEmpty, GpuShapes, testing::ValuesIn(positive_and_empty()), shape_name);

/* ---------------------------------------------------------------- alpha, beta, pointer modes, strides */

/* One (alpha, beta) on the 777 x 1301 matrix (seed 5, structure 6): SPMV with incx/incy 1/1, 2/3 and 3/2, SPMM with
 * n = 3 and 8 (ldc padded by 2), each in both pointer modes and for op N and T. Every run has its own seed, counting
 * from the row's seed0 in this order. */
struct ScalarRow {
    Routine routine;
    PrecId prec;
    float alpha, beta;
    uint64_t seed0;
};

std::vector<ScalarRow> scalar_rows()
{
    const float vals[] = {0.0f, 1.0f, -0.5f, 2.0f};
    std::vector<ScalarRow> out;
    for (Routine r : {SPMV, SPMM})
        for (PrecId prec : conf::kAllPrec) {
            uint64_t seed = r == SPMV ? 1000 : 3000;
            for (float a : vals)
                for (float b : vals) {
                    out.push_back({r, prec, a, b, seed});
                    seed += r == SPMV ? 12 : 8;
                }
        }
    return out;
}

class GpuScalars : public conf::GpuSuite, public testing::WithParamInterface<ScalarRow> {
  public:
    static void TearDownTestSuite()
    {
        for (gt::Mat *&m : cached) {
            delete m;
            m = nullptr;
        }
        GpuSuite::TearDownTestSuite();
    }

  protected:
    /* The matrix, made once per precision for the suite (op T analysed). */
    template <class P> static const mt::Dense &matrix(macko_mat_t *A)
    {
        static const mt::Dense m = [] {
            mt::Dense d = mt::random_dense(777, 1301, 0.35, 5, P::ahalf);
            mt::add_structure(d, 6);
            return d;
        }();
        gt::Mat *&c = cached[P::id];
        if (c == nullptr) {
            c = new gt::Mat;
            gt::make_matrix<P>(handle(), m, true, *c);
        }
        *A = c->A;
        return m;
    }
    static gt::Mat *cached[std::size(conf::kAllPrec)];
};
gt::Mat *GpuScalars::cached[std::size(conf::kAllPrec)] = {};

TEST_P(GpuScalars, MatchReference)
{
    const ScalarRow &p = GetParam();
    conf::with_precision(p.prec, [&](auto tag) {
        using P = decltype(tag);
        macko_mat_t A = nullptr;
        const mt::Dense &m = matrix<P>(&A);
        if (HasFatalFailure())
            return;
        std::vector<Case> cases;
        if (p.routine == SPMV) {
            for (int64_t inc : {1, 2, 3})
                for (macko_pointer_mode_t mode : {kHost, kDevice})
                    for (macko_operation_t op : {N, T})
                        cases.push_back(Case(SPMV).on(op).strides(inc, 0, inc == 1 ? 1 : 5 - inc, 0).pointers(mode));
        } else {
            for (macko_pointer_mode_t mode : {kHost, kDevice})
                for (macko_operation_t op : {N, T})
                    for (int64_t n : {3, 8})
                        cases.push_back(Case(SPMM, n).on(op).extra_ld(0, 2).pointers(mode));
        }
        uint64_t seed = p.seed0;
        for (Case &c : cases) {
            SCOPED_TRACE(testing::Message() << "mode=" << c.mode << " op=" << c.op << " n=" << c.n
                                            << " incx=" << c.incb << " incy=" << c.incc);
            conf::check_product<P>(handle(), blas(), m, A, c.scalars(p.alpha, p.beta).from_seed(++seed));
            if (HasFatalFailure())
                return;
        }
    });
}

void PrintTo(const ScalarRow &r, std::ostream *os) { *os << "seeds from " << r.seed0 + 1; }

std::string scalar_name(const testing::TestParamInfo<ScalarRow> &i)
{
    const ScalarRow &r = i.param;
    return conf::prec_name(r.prec) + (r.routine == SPMV ? "spmv" : "spmm") + "_alpha" + num(r.alpha) + "_beta" +
           num(r.beta);
}

INSTANTIATE_TEST_SUITE_P(AlphaBeta, GpuScalars, testing::ValuesIn(scalar_rows()), scalar_name);

/* ---------------------------------------------------------------- alpha = 0: neither A nor B is read */

/* B is NaN everywhere (300 x 200 matrix, seed 9): C = beta*C_old, for beta 0 and -0.5; SPMV, SPMM at n = 2 and 9,
 * and the strided batch of 3 packed vectors. */
struct AlphaZeroRow {
    Routine routine;
    PrecId prec;
    float beta;
};

class GpuAlphaZero : public conf::GpuSuite, public testing::WithParamInterface<AlphaZeroRow> {};

TEST_P(GpuAlphaZero, ReadsNeitherAnorB)
{
    const std::vector<float> nan(200, std::nanf(""));
    const AlphaZeroRow &p = GetParam();
    conf::with_precision(p.prec, [&](auto tag) {
        using P = decltype(tag);
        const mt::Dense m = mt::random_dense(300, 200, 0.5, 9, P::ahalf);
        gt::Mat A;
        if (!gt::uploaded<P>(handle(), m, false, A))
            return;
        std::vector<Case> cases = {Case(SPMV)};
        if (p.routine == SPMM)
            cases = {Case(SPMM, 2), Case(SPMM, 9)};
        if (p.routine == BATCHED)
            cases = {Case(BATCHED, 3).strides(1, 200, 1, 300)};
        for (Case &c : cases)
            conf::check_product<P>(handle(), nullptr, m, A.A, c.scalars(0.0f, p.beta).every_column(&nan));
    });
}

std::vector<AlphaZeroRow> alpha_zero_rows()
{
    std::vector<AlphaZeroRow> out;
    for (Routine r : {SPMV, SPMM, BATCHED})
        for (PrecId prec : conf::kAllPrec)
            for (float beta : {0.0f, -0.5f})
                if (r != BATCHED || conf::has_strided_batch(prec))
                    out.push_back({r, prec, beta});
    return out;
}

void PrintTo(const AlphaZeroRow &r, std::ostream *os) { *os << "beta " << r.beta; }

std::string alpha_zero_name(const testing::TestParamInfo<AlphaZeroRow> &i)
{
    static const char *const tail[] = {"spmv", "spmm", "spmv_strided_batched"};
    return conf::prec_name(i.param.prec) + tail[i.param.routine] + "_beta" + num(i.param.beta);
}

INSTANTIATE_TEST_SUITE_P(NaNInB, GpuAlphaZero, testing::ValuesIn(alpha_zero_rows()), alpha_zero_name);

/* ---------------------------------------------------------------- layouts of B and C */

/* The strided batch on 611 x 389 (seed 71, structure 72), op N or T, batch b: x and y packed (as spmm), padded,
 * strided, interleaved, and x broadcast (stridex 0); alpha -2 where b % 3 == 0, beta 0.75 for even b. SpMM on the
 * 37 x 70000 matrix (seed 9, structure 10), too wide for the staged tile (the global path through the public API):
 * n columns, ldb padded by 1, beta -0.5, op N and T. */
struct LayoutRow {
    Routine routine;
    PrecId prec;
    macko_operation_t op;
    int64_t n;
    uint64_t seed; /* BATCHED: the seeds of the five layouts count from here */
};

std::vector<LayoutRow> layout_rows()
{
    std::vector<LayoutRow> out;
    for (PrecId prec : conf::kAllPrec) {
        uint64_t seed = 5000;
        for (macko_operation_t op : {N, T})
            for (int64_t batch : {1, 2, 3, 8, 16, 17}) {
                if (conf::has_strided_batch(prec))
                    out.push_back({BATCHED, prec, op, batch, seed});
                seed += 5;
            }
        for (int64_t n : {2, 5, 8, 17})
            for (macko_operation_t op : {N, T})
                out.push_back({SPMM, prec, op, n, (uint64_t)n * 3 + op});
    }
    return out;
}

class GpuLayouts : public conf::GpuSuite, public testing::WithParamInterface<LayoutRow> {};

TEST_P(GpuLayouts, MatchReference)
{
    const LayoutRow &p = GetParam();
    conf::with_precision(p.prec, [&](auto tag) {
        using P = decltype(tag);
        const bool batched = p.routine == BATCHED;
        const mt::Dense m = batched ? gt::random_matrix<P>(611, 389, 0.4, 71, 72)
                                    : gt::random_matrix<P>(37, 70000, 0.2, 9, 10);
        gt::Mat A;
        if (!gt::uploaded<P>(handle(), m, true, A))
            return;
        if (!batched) {
            conf::check_product<P>(handle(), blas(), m, A.A,
                                   Case(SPMM, p.n).on(p.op).scalars(1.0f, -0.5f).extra_ld(1, 0).from_seed(p.seed));
            return;
        }
        const int64_t b = p.n, lx = p.op == N ? m.cols : m.rows, ly = p.op == N ? m.rows : m.cols;
        const struct {
            const char *name;
            int64_t incx, sx, incy, sy;
        } lays[] = {{"packed", 1, lx, 1, ly},
                    {"padded", 1, lx + 5, 1, ly + 2},
                    {"strided", 2, 2 * lx + 1, 3, 3 * ly},
                    {"interleaved", b, 1, b, 1},
                    {"broadcast x", 1, 0, 1, ly + 1}};
        uint64_t seed = p.seed;
        for (const auto &l : lays) {
            SCOPED_TRACE(l.name);
            Case c = Case(BATCHED, b).on(p.op).strides(l.incx, l.sx, l.incy, l.sy).from_seed(++seed);
            conf::check_product<P>(handle(), blas(), m, A.A,
                                   c.scalars((b % 3) ? 1.0f : -2.0f, (b % 2) ? 0.0f : 0.75f));
            if (HasFatalFailure())
                return;
        }
    });
}

void PrintTo(const LayoutRow &r, std::ostream *os) { *os << "seed " << r.seed + (r.routine == BATCHED); }

std::string layout_name(const testing::TestParamInfo<LayoutRow> &i)
{
    const LayoutRow &r = i.param;
    return conf::prec_name(r.prec) + (r.routine == BATCHED ? "spmv_strided_batched_" : "spmm_wide_") +
           (r.op == N ? "N" : "T") + "_n" + std::to_string(r.n);
}

INSTANTIATE_TEST_SUITE_P(StridedAndWide, GpuLayouts, testing::ValuesIn(layout_rows()), layout_name);

/* ---------------------------------------------------------------- per routine */

template <class P_, Routine R_> struct Kind {
    using P = P_;
    static constexpr Routine R = R_;
};
using Kinds = testing::Types<Kind<conf::HP, SPMV>, Kind<conf::SP, SPMV>, Kind<conf::HP, SPMM>, Kind<conf::SP, SPMM>,
                             Kind<conf::DP, SPMV>, Kind<conf::DP, SPMM>, Kind<conf::BP, SPMV>, Kind<conf::BP, SPMM>,
                             Kind<conf::HSP, SPMV>, Kind<conf::HSP, SPMM>, Kind<conf::BSP, SPMV>,
                             Kind<conf::BSP, SPMM>>;
class KindName {
  public:
    template <class K> static std::string GetName(int) { return conf::routine_label<typename K::P>(K::R); }
};
template <class K> class GpuProduct : public testing::Test {};
TYPED_TEST_SUITE(GpuProduct, Kinds, KindName);

/* m == 0 launches nothing (C may be NULL); k == 0 gives C = beta*C (B may be NULL); n == 0 / batch == 0 launch
 * nothing (B and C may be NULL). */
TYPED_TEST(GpuProduct, ZeroSizes)
{
    MACKO_REQUIRE_GPU();
    using P = typename TypeParam::P;
    using E = typename P::E;
    constexpr Routine R = TypeParam::R;
    /* the n of each part: SpMV 1; SpMM as the SpMM test had them */
    const int64_t n_none = R == SPMV ? 1 : 4, n_t = R == SPMV ? 1 : 3, n_k0 = R == SPMV ? 1 : 5;
    const int64_t n_null = R == SPMV ? 1 : 3;
    gt::Handle h;
    using Sc = typename P::Scalar;
    Sc one = 1, half = -0.5, zero = 0;
    {
        const mt::Dense m = mt::random_dense(0, 9, 0.5, 1, P::ahalf);
        gt::Mat A;
        if (!gt::uploaded<P>(h.h, m, true, A))
            return;
        gt::DevMem db((size_t)(9 * n_none) * sizeof(E));
        EXPECT_EQ(conf::call<P>(R, h.h, N, n_none, &one, A.A, db.as<E>(), 1, 9, &zero, nullptr, 1, 1),
                  MACKO_STATUS_SUCCESS);
        if constexpr (R == SPMM && P::has_sb) {
            EXPECT_EQ(P::sb(h.h, N, &one, A.A, db.as<E>(), 1, 9, &zero, nullptr, 1, 1, 4), MACKO_STATUS_SUCCESS);
        }
        /* op T: C has 9 rows, B none */
        conf::check_product<P>(h.h, nullptr, m, A.A, Case(R, n_t).on(T).scalars(1.0f, -0.5f));
    }
    {
        const mt::Dense m = mt::random_dense(11, 0, 0.5, 1, P::ahalf);
        gt::Mat A;
        if (!gt::uploaded<P>(h.h, m, false, A))
            return;
        for (float beta : {0.0f, -0.5f})
            conf::check_product<P>(h.h, nullptr, m, A.A, Case(R, n_k0).scalars(1.0f, beta));
        /* B == NULL is fine when k == 0 */
        std::vector<E> ch((size_t)(11 * n_null), P::from(2.0f));
        gt::DevMem dc(ch.size() * sizeof(E));
        CUDA_CHECK(cudaMemcpy(dc.p, ch.data(), dc.bytes, cudaMemcpyHostToDevice));
        EXPECT_EQ(conf::call<P>(R, h.h, N, n_null, &one, A.A, nullptr, 1, 1, &half, dc.as<E>(), 1, 11),
                  MACKO_STATUS_SUCCESS);
        CUDA_CHECK(cudaMemcpy(ch.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
        for (E v : ch)
            EXPECT_EQ(P::to(v), -1.0);
    }
    if (R == SPMM) {
        const mt::Dense m = mt::random_dense(20, 30, 0.5, 1, P::ahalf);
        gt::Mat A;
        if (!gt::uploaded<P>(h.h, m, false, A))
            return;
        EXPECT_EQ(P::mm(h.h, N, 0, &one, A.A, nullptr, 30, &zero, nullptr, 20), MACKO_STATUS_SUCCESS);
        if constexpr (P::has_sb) {
            EXPECT_EQ(P::sb(h.h, N, &one, A.A, nullptr, 1, 30, &zero, nullptr, 1, 20, 0), MACKO_STATUS_SUCCESS);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

/* Inf/NaN in B at columns a row does not store (padding lands there) never reach the result: nonzeros only in
 * columns c % 40 == 0 (padding in every gap, long padding runs in some rows), B non-finite at every other column;
 * for op T a matrix with nonzeros only in rows r % 40 == 0. Inf at a stored column gives +-Inf (not NaN), NaN gives
 * NaN. cuBLAS is left out: a dense product multiplies the zeros by Inf. */
TYPED_TEST(GpuProduct, NonFiniteBAtUnstoredColumns)
{
    MACKO_REQUIRE_GPU();
    using P = typename TypeParam::P;
    constexpr Routine R = TypeParam::R;
    const std::vector<int64_t> ns = R == SPMV ? std::vector<int64_t>{1} : std::vector<int64_t>{2, 4, 8, 16};
    gt::Handle h;
    const mt::Dense m = mt::padding_grid_matrix(513, 2011, P::ahalf);
    gt::Mat A;
    if (!gt::uploaded<P>(h.h, m, false, A))
        return;
    std::vector<float> x = mt::nonfinite_off_grid_x(2011, P::half);
    for (int64_t n : ns)
        for (float beta : {0.0f, 2.0f})
            conf::check_product<P>(h.h, nullptr, m, A.A, Case(R, n).scalars(1.0f, beta).every_column(&x).no_cublas());
    const int64_t n8 = R == SPMV ? 1 : 8;
    x[80] = INFINITY;
    for (int64_t n : R == SPMV ? std::vector<int64_t>{1} : std::vector<int64_t>{8, 16})
        conf::check_product<P>(h.h, nullptr, m, A.A, Case(R, n).every_column(&x).no_cublas());
    x[40] = std::nanf("");
    conf::check_product<P>(h.h, nullptr, m, A.A, Case(R, n8).every_column(&x).no_cublas());

    std::mt19937_64 g(43);
    mt::Dense mt2 = mt::random_dense(2011, 300, 0.0, 1, P::ahalf);
    for (int64_t r = 0; r < mt2.rows; r += 40)
        for (int64_t c = 0; c < mt2.cols; c++)
            if (g() % 10 < 7)
                mt2.at(r, c) = mt::round_half(0.25f + (float)(g() % 100) / 128.0f);
    gt::Mat B;
    if (!gt::uploaded<P>(h.h, mt2, true, B))
        return;
    std::vector<float> xt = mt::random_vector(mt2.rows, 78, P::half);
    for (int64_t r = 0; r < mt2.rows; r++)
        if (r % 40 != 0)
            xt[(size_t)r] = (r % 2) ? std::nanf("") : INFINITY;
    conf::check_product<P>(h.h, nullptr, mt2, B.A, Case(R, n8).on(T).every_column(&xt).no_cublas());
}

/* Bitwise reproducible over 100 runs (MACKO_TEST_REPEATS), every element rewritten each time: the output is NaN
 * before every run. 2500 x 3000 (seed 31, structure 32), alpha 0.75, beta 0, op N and T; SpMV x from seeds 33
 * (op N) and 34 (op T), SpMM n = 8 and 17 of one B (seed 33). */
TYPED_TEST(GpuProduct, BitwiseDeterministic100Runs)
{
    MACKO_REQUIRE_GPU();
    using P = typename TypeParam::P;
    using E = typename P::E;
    constexpr Routine R = TypeParam::R;
    const int runs = mt::repeat_count(100);
    gt::Rig<P> r(gt::random_matrix<P>(2500, 3000, 0.4, 31, 32), true);
    if (!r.ok())
        return;
    const std::vector<int64_t> ns = R == SPMV ? std::vector<int64_t>{1} : std::vector<int64_t>{8, 17};
    const std::vector<E> bn = conf::encode<P>(mt::random_vector(R == SPMV ? 3000 : 3000 * 17, 33, P::half));
    const std::vector<E> bt = R == SPMV ? conf::encode<P>(mt::random_vector(2500, 34, P::half)) : bn;
    gt::DevMem dbn(bn.size() * sizeof(E)), dbt(bt.size() * sizeof(E)), dc((size_t)(3000 * ns.back()) * sizeof(E));
    CUDA_CHECK(cudaMemcpy(dbn.p, bn.data(), dbn.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbt.p, bt.data(), dbt.bytes, cudaMemcpyHostToDevice));
    const typename P::Scalar alpha = 0.75, beta = 0;
    for (macko_operation_t op : {N, T})
        for (int64_t n : ns) {
            const int64_t mo = op == N ? 2500 : 3000, ki = op == N ? 3000 : 2500;
            const size_t cnt = (size_t)(mo * n);
            const E *b = (op == N ? dbn : dbt).template as<E>();
            std::vector<E> first(cnt), out(cnt);
            for (int run = 0; run < runs; run++) {
                CUDA_CHECK(cudaMemset(dc.p, 0xFF, cnt * sizeof(E))); /* NaN poison */
                ASSERT_EQ(conf::call<P>(R, r.h.h, op, n, &alpha, r.A.A, b, 1, ki, &beta, dc.as<E>(), 1, mo),
                          MACKO_STATUS_SUCCESS);
                CUDA_CHECK(cudaMemcpy(run == 0 ? first.data() : out.data(), dc.p, cnt * sizeof(E),
                                      cudaMemcpyDeviceToHost));
                if (run == 0) {
                    for (size_t i = 0; i < cnt; i++)
                        ASSERT_TRUE(std::isfinite(P::to(first[i]))) << "C[" << i << "] not written";
                } else {
                    ASSERT_EQ(std::memcmp(out.data(), first.data(), cnt * sizeof(E)), 0)
                        << "run " << run << " op " << op << " n " << n;
                }
            }
        }
}

/* One call captured in a CUDA graph on a non-default stream and replayed with alpha changed in between: host
 * pointer mode keeps the value captured (2), device mode reads the new one. 1500 x 1024 (seed 51); SpMV one column,
 * SpMM n = 8 (B seed 52, C_old seed 53). */
TYPED_TEST(GpuProduct, GraphCaptureAndReplay)
{
    MACKO_REQUIRE_GPU();
    using P = typename TypeParam::P;
    using E = typename P::E;
    using Sc = typename P::Scalar;
    constexpr Routine R = TypeParam::R;
    const int64_t n = R == SPMV ? 1 : 8;
    gt::Handle h;
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ASSERT_EQ(macko_set_stream(h.h, s), MACKO_STATUS_SUCCESS);
    const mt::Dense m = mt::random_dense(1500, 1024, 0.4, 51, P::ahalf);
    gt::Mat A;
    if (!gt::uploaded<P>(h.h, m, false, A))
        return;
    CUDA_CHECK(cudaStreamSynchronize(s)); /* the upload is asynchronous on the handle's stream */
    const std::vector<E> bh = conf::encode<P>(mt::random_vector(1024 * n, 52, P::half));
    const std::vector<E> ch = conf::encode<P>(mt::random_vector(1500 * n, 53, P::half));
    gt::DevMem db(bh.size() * sizeof(E)), dc(ch.size() * sizeof(E)), dab(2 * sizeof(Sc));
    CUDA_CHECK(cudaMemcpy(db.p, bh.data(), db.bytes, cudaMemcpyHostToDevice));
    for (macko_pointer_mode_t mode : {kHost, kDevice}) {
        SCOPED_TRACE(mode == kHost ? "host pointer mode" : "device pointer mode");
        ASSERT_EQ(macko_set_pointer_mode(h.h, mode), MACKO_STATUS_SUCCESS);
        Sc ab[2] = {2, -0.5};
        CUDA_CHECK(cudaMemcpy(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
        const Sc *pa = mode == kDevice ? dab.as<Sc>() : &ab[0];
        const Sc *pb = mode == kDevice ? dab.as<Sc>() + 1 : &ab[1];
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        const macko_status_t st = conf::call<P>(R, h.h, N, n, pa, A.A, db.as<E>(), 1, 1024, pb, dc.as<E>(), 1, 1500);
        CUDA_CHECK(cudaStreamEndCapture(s, &graph));
        ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        for (float alpha_now : {2.0f, -1.0f, 0.0f}) {
            ab[0] = alpha_now;
            /* on s, not the legacy stream: a pageable cudaMemcpy may return before its DMA lands, and s does not
             * wait for the legacy stream (under 10 test processes at once the replay read a half-reset C) */
            CUDA_CHECK(cudaMemcpyAsync(dab.p, ab, sizeof ab, cudaMemcpyHostToDevice, s));
            CUDA_CHECK(cudaMemcpyAsync(dc.p, ch.data(), dc.bytes, cudaMemcpyHostToDevice, s));
            CUDA_CHECK(cudaGraphLaunch(exec, s));
            CUDA_CHECK(cudaStreamSynchronize(s));
            std::vector<E> out(ch.size());
            CUDA_CHECK(cudaMemcpy(out.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
            const double expect_alpha = mode == kDevice ? alpha_now : 2.0;
            for (int64_t j = 0; j < n; j++)
                EXPECT_LT(conf::error_vs_reference<P>(A.A, N, expect_alpha, &bh[(size_t)(j * 1024)], 1, -0.5,
                                                      &ch[(size_t)(j * 1500)], &out[(size_t)(j * 1500)], 1),
                          P::rel_l2_max)
                    << "alpha now " << alpha_now << " column " << j;
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    macko_set_pointer_mode(h.h, kHost);
    macko_set_stream(h.h, nullptr);
    cudaStreamDestroy(s);
}

} // namespace
