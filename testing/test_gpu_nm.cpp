/* The N:M kind on the GPU (lapack_style_docs/FORMAT_NM.md): macko_Hspmv / Hspmm / Hspmv_strided_batched (16F),
 * Sspmv / Sspmm / Sspmv_strided_batched (32F), the D routines (64F) and macko_spmv_ex / macko_spmm_ex (16BF) on
 * matrices made by macko_mat_create_nm_dense_host, through conformance.h's checker (a double reference over the
 * nonzeros of the dense matrix, cuBLAS and cuSPARSE where the shapes allow, NaN in C before a beta = 0 call, NaN in
 * B's gaps and sentinels in C's). Every path the plan override can force (GEN, SIMT, SP24) and the automatic one,
 * with NOT_SUPPORTED exactly where a path cannot take the pattern and type; patterns with V = 1 and V > 1, M = 4 to
 * 32; odd shapes (partial row groups and windows, windows split across the kernels' K tiles), empty rows, row groups
 * whose every window is full, all-positive data; n = 1..4097; odd ldb / ldc; the BLAS alpha / beta rules in both
 * pointer modes; Inf / NaN in B at columns kept only as zero padding (also past the last column); bitwise
 * determinism; CUDA graph capture; download after release_host; create_nm_dense_device byte for byte
 * create_nm_dense_host; the refusals (op T, mixed precisions, the tile layout). */
#include "conformance.h"

#include "macko_internal.h"
#include "plan.h"
#include "../kernels/nm.h"
#include "../kernels/spmm_tc.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

namespace {

using conf::BATCHED;
using conf::Case;
using conf::PrecId;
using conf::SPMM;
using conf::SPMV;

constexpr macko_operation_t N = MACKO_OPERATION_NON_TRANSPOSE, T = MACKO_OPERATION_TRANSPOSE;

struct Pattern {
    int n, m, v;
};
/* The issue's patterns: elementwise 2:4 and 1:4, 2:4 shared by 32 rows, 4:8, NM-SpMM's M = V = 32 ones, 8:16 v8 and
 * the sparsest elementwise one. */
const Pattern kPatterns[] = {{2, 4, 1},   {1, 4, 1},  {2, 4, 32}, {4, 8, 1}, {16, 32, 32},
                             {8, 32, 32}, {4, 32, 32}, {8, 16, 8}, {1, 32, 1}};
constexpr int kPatternCount = (int)(sizeof kPatterns / sizeof kPatterns[0]);

std::string pattern_name(Pattern p)
{
    return std::to_string(p.n) + "of" + std::to_string(p.m) + "v" + std::to_string(p.v);
}

/* The paths of macko_plan_forced.nm_path, and which (pattern, type, device) each can take. */
const int kPaths[] = {MACKO_NM_PATH_AUTO, MACKO_NM_PATH_GEN, MACKO_NM_PATH_SIMT, MACKO_NM_PATH_SP24,
                      MACKO_NM_PATH_SP24WG};
const char *path_name(int path)
{
    return path == MACKO_NM_PATH_GEN    ? "GEN"
           : path == MACKO_NM_PATH_SIMT ? "SIMT"
           : path == MACKO_NM_PATH_SP24 ? "SP24"
           : path == MACKO_NM_PATH_SP24WG ? "SP24WG"
                                          : "AUTO";
}
/* The device of h runs the wgmma.sp kernel (compute capability 9.0, a build with sm_90a). */
bool runs_wg(macko_handle_t h) { return macko_panel_gemm_of(&h->props) == MACKO_PANEL_GEMM_WG; }
bool path_takes(int path, Pattern p, macko_datatype_t t, macko_handle_t h)
{
    if (path == MACKO_NM_PATH_SIMT) /* and an instance for the pattern that fits the device's shared memory */
        return t == MACKO_R_32F && p.v >= 8 && macko_nm_simt_auto_cfg(p.n, p.m, h->props.smem_per_block_optin) >= 0;
    if (path == MACKO_NM_PATH_SP24 || path == MACKO_NM_PATH_SP24WG)
        return p.m == 4 && p.n <= 2 && (t == MACKO_R_16F || t == MACKO_R_16BF) &&
               (path == MACKO_NM_PATH_SP24 || runs_wg(h));
    return true;
}
/* The extra elements of ldb for a case with `extra` asked: on SP24WG ldb is rounded up to a multiple of 8 (the tensor
 * map's condition), so that the forced wgmma.sp kernel really runs rather than SP24. */
int64_t ldb_extra(int path, int64_t cols, int64_t extra)
{
    if (path != MACKO_NM_PATH_SP24WG)
        return extra;
    const int64_t ld = std::max<int64_t>(cols, 1) + extra;
    return extra + (8 - ld % 8) % 8;
}

/* Structure of a generated matrix. */
enum : unsigned {
    kEmptyRows = 1,  /* rows r % 11 == 5 all zero (a group of them: every window all padding) */
    kFullGroups = 2, /* row groups g % 3 == 1: every window holds n nonzeros in every row of the group */
    kPositive = 4,   /* all values positive (sums grow, no cancellation) */
    kGrid = 8        /* nonzeros only at grid columns (on_grid), and windows w % 5 == 4 all padding */
};
bool on_grid(int64_t c) { return c % 3 == 0 || c % 7 == 2; }

/* A random rows x cols matrix that pattern p holds, values exact in type t in +-[1/16, 1]: per row group and window a
 * set of at most n columns (most windows n, some fewer, so the canonical encoding pads them), each row of the group
 * nonzero at most of them (one nonzero anywhere in the group keeps the column). */
mt::Dense nm_matrix(int64_t rows, int64_t cols, Pattern p, uint64_t seed, unsigned structure, macko_datatype_t t)
{
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> U(0.0625f, 1.0f);
    mt::Dense d;
    d.rows = rows;
    d.cols = cols;
    d.v.assign((size_t)(rows * cols), 0.0f);
    for (int64_t g0 = 0, gi = 0; g0 < rows; g0 += p.v, gi++) {
        const bool full = (structure & kFullGroups) && gi % 3 == 1;
        for (int64_t w = 0; w * p.m < cols; w++) {
            std::vector<int64_t> cand;
            for (int64_t c = w * p.m; c < std::min<int64_t>(cols, (w + 1) * p.m); c++)
                if (!(structure & kGrid) || on_grid(c))
                    cand.push_back(c);
            int64_t k = std::min<int64_t>(p.n, (int64_t)cand.size());
            if ((structure & kGrid) && w % 5 == 4)
                k = 0;
            else if (!full && g() % 4 == 0)
                k = (int64_t)(g() % (uint64_t)(k + 1));
            for (int64_t i = 0; i < k; i++) /* the first k of a random permutation */
                std::swap(cand[(size_t)i], cand[(size_t)i + (size_t)(g() % (uint64_t)(cand.size() - (size_t)i))]);
            for (int64_t r = g0; r < std::min<int64_t>(rows, g0 + p.v); r++) {
                if ((structure & kEmptyRows) && r % 11 == 5)
                    continue;
                for (int64_t i = 0; i < k; i++) {
                    const float a = U(g), s = (structure & kPositive) || (g() & 1) ? 1.0f : -1.0f;
                    if (!full && p.v > 1 && g() % 8 == 0)
                        continue; /* zero in this row only */
                    d.at(r, cand[(size_t)i]) = mt::round_to(s * a, t);
                }
            }
        }
    }
    return d;
}

/* m encoded as the N:M kind with pattern p (type P::type) and uploaded: false after a reported failure. */
template <class P> bool make_nm(macko_handle_t h, const mt::Dense &m, Pattern p, gt::Mat &out)
{
    const int64_t ld = std::max<int64_t>(m.cols, 1);
    const std::vector<uint8_t> bytes = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, ld);
    macko_status_t st = macko_mat_create_nm_dense_host(&out.A, m.rows, m.cols, P::type, bytes.data(), ld,
                                                       MACKO_ORDER_ROW, p.n, p.m, p.v);
    EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    if (st != MACKO_STATUS_SUCCESS)
        return false;
    st = macko_mat_upload(h, out.A);
    EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    return st == MACKO_STATUS_SUCCESS;
}

/* Forces `path` for every n of A (op N). True when the path runs this matrix. A path that cannot take (p, type) is
 * refused with NOT_SUPPORTED, by the override itself or by the product that would run it (then the automatic plan
 * is put back); the caller goes on with the next path. */
template <class P> bool force(macko_handle_t h, macko_mat_t A, Pattern p, int path)
{
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.nm_path = path;
    const macko_status_t st = macko_plan_override(h, A, N, &f);
    if (path_takes(path, p, P::type, h)) {
        EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << path_name(path) << " on " << pattern_name(p) << ": "
                                            << macko_get_last_error_message();
        return st == MACKO_STATUS_SUCCESS;
    }
    if (st != MACKO_STATUS_NOT_SUPPORTED) {
        EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        int64_t rows = 0, cols = 0;
        EXPECT_EQ(macko_mat_get_info(A, &rows, &cols, nullptr, nullptr), MACKO_STATUS_SUCCESS);
        using E = typename P::E;
        gt::DevMem db((size_t)(2 * std::max<int64_t>(cols, 1)) * sizeof(E)),
            dc((size_t)(2 * std::max<int64_t>(rows, 1)) * sizeof(E));
        const typename P::Scalar one = 1, zero = 0;
        EXPECT_EQ(P::mm(h, N, 2, &one, A, db.as<E>(), std::max<int64_t>(cols, 1), &zero, dc.as<E>(),
                        std::max<int64_t>(rows, 1)),
                  MACKO_STATUS_NOT_SUPPORTED)
            << path_name(path) << " on " << pattern_name(p) << " type " << P::type << ": neither the override nor "
            << "the product refused it";
        f.nm_path = MACKO_NM_PATH_AUTO;
        EXPECT_EQ(macko_plan_override(h, A, N, &f), MACKO_STATUS_SUCCESS);
    }
    return false;
}

/* A vector of `count` values, every one NaN (B of an alpha = 0 call: it must not be read). */
std::vector<float> all_nan(int64_t count) { return std::vector<float>((size_t)count, std::nanf("")); }

/* B's column for the padding test: random (seed) at grid columns, NaN / +Inf / -Inf at every other one. */
std::vector<float> off_grid_nonfinite(int64_t cols, bool half, uint64_t seed)
{
    std::vector<float> x = mt::random_vector(cols, seed, half);
    for (int64_t c = 0; c < cols; c++)
        if (!on_grid(c))
            x[(size_t)c] = c % 3 == 1 ? std::nanf("") : (c % 2 ? INFINITY : -INFINITY);
    return x;
}

/* ---------------------------------------------------------------- the test matrices themselves (CPU) */

/* The generator keeps its promises, so that no GPU test below passes vacuously: every (row group, window) holds at
 * most n nonzero columns, full groups hold exactly min(n, valid) in every row, empty rows are empty, values are exact
 * in the type (and positive when asked); and the padding test's matrix has padding slots (canonical: the smallest
 * positions not kept) on columns where B is non-finite, and slots past the last column. */
TEST(GpuNmMatrices, HoldTheirPattern)
{
    for (Pattern p : kPatterns)
        for (unsigned st : {0u, (unsigned)(kEmptyRows | kFullGroups), (unsigned)kPositive,
                            (unsigned)(kGrid | kFullGroups)})
            for (macko_datatype_t t : mt::kAllTypes) {
                const int64_t rows = 90, cols = 301;
                const mt::Dense d = nm_matrix(rows, cols, p, 5, st, t);
                const std::vector<float> x = off_grid_nonfinite(cols, false, 3);
                int64_t padding_on_nonfinite = 0, past_end = 0, full_windows = 0;
                for (int64_t g0 = 0; g0 < rows; g0 += p.v)
                    for (int64_t w = 0; w * p.m < cols; w++) {
                        const int64_t valid = std::min<int64_t>(p.m, cols - w * p.m);
                        int64_t cand = 0; /* the columns a nonzero may take */
                        for (int64_t j = 0; j < valid; j++)
                            cand += !(st & kGrid) || on_grid(w * p.m + j);
                        std::vector<bool> kept((size_t)p.m, false);
                        int64_t count = 0;
                        for (int64_t r = g0; r < std::min<int64_t>(rows, g0 + p.v); r++) {
                            int64_t in_row = 0;
                            for (int64_t j = 0; j < valid; j++) {
                                const float a = d.at(r, w * p.m + j);
                                if (a == 0.0f)
                                    continue;
                                in_row++;
                                ASSERT_EQ(mt::round_to(a, t), a);
                                if (st & kPositive) {
                                    ASSERT_GT(a, 0.0f);
                                }
                                if (st & kGrid) {
                                    ASSERT_TRUE(on_grid(w * p.m + j));
                                }
                                if (!kept[(size_t)j])
                                    count++;
                                kept[(size_t)j] = true;
                            }
                            if ((st & kEmptyRows) && r % 11 == 5) {
                                ASSERT_EQ(in_row, 0) << "row " << r;
                            } else if ((st & kFullGroups) && (g0 / p.v) % 3 == 1 && !((st & kGrid) && w % 5 == 4)) {
                                ASSERT_EQ(in_row, std::min<int64_t>(p.n, cand)) << "row " << r << " window " << w;
                            }
                        }
                        ASSERT_LE(count, p.n) << pattern_name(p) << " group " << g0 / p.v << " window " << w;
                        full_windows += count == p.n;
                        /* the canonical padding: the smallest positions not kept, until n */
                        for (int64_t j = 0, pad = count; j < p.m && pad < p.n; j++)
                            if (!kept[(size_t)j]) {
                                pad++;
                                if (w * p.m + j >= cols)
                                    past_end++;
                                else
                                    padding_on_nonfinite += !std::isfinite(x[(size_t)(w * p.m + j)]);
                            }
                    }
                if (!(st & kGrid)) { /* (the grid may leave fewer than n columns in a window) */
                    EXPECT_GT(full_windows, 0) << pattern_name(p) << " structure " << st;
                } else {
                    EXPECT_GT(padding_on_nonfinite, 0) << pattern_name(p) << ": no padding slot meets Inf/NaN";
                    if (p.n > cols % p.m) { /* the last window has fewer valid columns than slots */
                        EXPECT_GT(past_end, 0) << pattern_name(p) << ": no slot past the last column";
                    }
                }
            }
}

/* ---------------------------------------------------------------- products: precision x pattern */

struct NmShape {
    int64_t rows, cols;
    unsigned structure;
};
/* 1x1; partial windows and row groups (7, 33, 100, 130, 257: no multiples of 16 or 32; 1000, 777, 4097, 257 columns:
 * no multiples of 32); K long enough that the windows cross the kernels' K tiles; empty rows, full groups, positive
 * data. */
const NmShape kShapes[] = {{1, 1, 0},
                           {7, 33, 0},
                           {33, 7, kEmptyRows},
                           {64, 96, kPositive},
                           {100, 1000, kEmptyRows | kFullGroups},
                           {48, 300, kPositive | kFullGroups},
                           {130, 777, kEmptyRows},
                           {257, 4097, kFullGroups},
                           {4097, 257, kEmptyRows}};

class GpuNmProducts : public conf::GpuSuite, public testing::WithParamInterface<std::tuple<PrecId, int>> {};

/* Each shape, each path, n in a spread (a subset on the big shapes), with four variants by turn: 0 beta = 0 (C NaN
 * before), 1 alpha 1.25 beta -0.5 with odd ldb / ldc, 2 alpha = 0 with B all NaN (neither A nor B read), 3 device
 * pointer mode. cuBLAS / cuSPARSE on variants 0 and 1. */
TEST_P(GpuNmProducts, MatchReference)
{
    const Pattern pat = kPatterns[std::get<1>(GetParam())];
    conf::with_precision(std::get<0>(GetParam()), [&](auto tag) {
        using P = decltype(tag);
        const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer: a subset */
        uint64_t seed = 1000 + 100 * (uint64_t)std::get<1>(GetParam());
        int si = 0;
        for (const NmShape &s : kShapes) {
            if (quick && si++ % 3 != 1)
                continue;
            const bool big = s.rows * s.cols > 500000;
            const mt::Dense m = nm_matrix(s.rows, s.cols, pat, ++seed, s.structure, P::type);
            gt::Mat A;
            if (!make_nm<P>(handle(), m, pat, A))
                return;
            for (int path : kPaths) {
                if (!force<P>(handle(), A.A, pat, path))
                    continue;
                /* SP24WG: also several row and column blocks of its 128 x 256 tiles */
                std::vector<int64_t> ns = big || quick ? std::vector<int64_t>{1, 8, 17, 64}
                                                       : std::vector<int64_t>{1, 2, 3, 7, 8, 9, 16, 17, 33, 65};
                if (path == MACKO_NM_PATH_SP24WG)
                    ns.insert(ns.end(), big || quick ? std::initializer_list<int64_t>{300}
                                                     : std::initializer_list<int64_t>{129, 300, 520});
                int variant = 0;
                for (int64_t n : ns) {
                    SCOPED_TRACE(testing::Message() << s.rows << "x" << s.cols << " path " << path_name(path)
                                                    << " n=" << n << " variant " << variant);
                    const std::vector<float> nanb = all_nan(s.cols);
                    Case c(SPMM, n);
                    c.from_seed(++seed);
                    c.positive = (s.structure & kPositive) != 0;
                    switch (variant) {
                    case 0: c.scalars(1.0f, 0.0f).extra_ld(ldb_extra(path, s.cols, 0), 0); break;
                    case 1: c.scalars(1.25f, -0.5f).extra_ld(ldb_extra(path, s.cols, 3), 5); break;
                    case 2:
                        c.scalars(0.0f, 0.75f).every_column(&nanb).no_cublas().extra_ld(ldb_extra(path, s.cols, 0), 0);
                        break;
                    default:
                        c.scalars(-0.5f, 0.25f).pointers(MACKO_POINTER_MODE_DEVICE)
                            .extra_ld(ldb_extra(path, s.cols, 1), 0).no_cublas();
                    }
                    variant = (variant + 1) % 4;
                    conf::check_product<P>(handle(), blas(), m, A.A, c);
                    if (HasFailure())
                        return;
                }
            }
        }
    });
}

std::string products_name(const testing::TestParamInfo<std::tuple<PrecId, int>> &i)
{
    return conf::prec_name(std::get<0>(i.param)) + "_" + pattern_name(kPatterns[std::get<1>(i.param)]);
}

INSTANTIATE_TEST_SUITE_P(Nm, GpuNmProducts,
                         testing::Combine(testing::Values(conf::kH, conf::kS, conf::kD, conf::kB),
                                          testing::Range(0, kPatternCount)),
                         products_name);

/* ---------------------------------------------------------------- per precision: H, S, D, B */

template <class P> class GpuNm : public conf::GpuSuite {};
TYPED_TEST_SUITE(GpuNm, conf::Precisions, conf::PrecisionName);

/* The issue's n list, 1..17 to 4097, on a modest matrix (72 x 200: partial row groups of 16 and 32, a partial last
 * window) for the patterns of each kernel, on every path, against the reference and cuBLAS. */
TYPED_TEST(GpuNm, IssueNListOnEveryPath)
{
    using P = TypeParam;
    if (mt::repeat_count(100) < 100)
        GTEST_SKIP() << "MACKO_TEST_REPEATS lowered (compute-sanitizer): the long n list is left out";
    const int64_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127,
                          128, 255, 256, 1000, 2048, 4097};
    uint64_t seed = 7000;
    for (Pattern pat : {Pattern{2, 4, 1}, Pattern{16, 32, 32}, Pattern{8, 16, 8}}) {
        const mt::Dense m = nm_matrix(72, 200, pat, ++seed, kEmptyRows | kFullGroups, P::type);
        gt::Mat A;
        if (!make_nm<P>(this->handle(), m, pat, A))
            return;
        for (int path : kPaths) {
            if (!force<P>(this->handle(), A.A, pat, path))
                continue;
            for (int64_t n : ns) {
                SCOPED_TRACE(testing::Message() << pattern_name(pat) << " path " << path_name(path) << " n=" << n);
                conf::check_product<P>(this->handle(), this->blas(), m, A.A,
                                       Case(SPMM, n).from_seed(++seed).extra_ld(ldb_extra(path, 200, n % 2),
                                                                                n % 3 == 0 ? 2 : 0));
                if (this->HasFailure())
                    return;
            }
        }
    }
}

/* SpMV (unit and odd strides) and the strided batch on every pattern and path, scalars by turn. */
TYPED_TEST(GpuNm, SpmvAndStridedBatch)
{
    using P = TypeParam;
    uint64_t seed = 8000;
    for (Pattern pat : kPatterns) {
        const int64_t rows = 70, cols = 131;
        const mt::Dense m = nm_matrix(rows, cols, pat, ++seed, kEmptyRows, P::type);
        gt::Mat A;
        if (!make_nm<P>(this->handle(), m, pat, A))
            return;
        for (int path : kPaths) {
            if (!force<P>(this->handle(), A.A, pat, path))
                continue;
            SCOPED_TRACE(testing::Message() << pattern_name(pat) << " path " << path_name(path));
            conf::check_product<P>(this->handle(), this->blas(), m, A.A, Case(SPMV).from_seed(++seed));
            conf::check_product<P>(this->handle(), this->blas(), m, A.A,
                                   Case(SPMV).strides(3, 0, 2, 0).scalars(0.75f, -1.5f).from_seed(++seed));
            conf::check_product<P>(this->handle(), this->blas(), m, A.A,
                                   Case(SPMV).scalars(1.0f, 0.5f).pointers(MACKO_POINTER_MODE_DEVICE)
                                       .from_seed(++seed));
            if constexpr (P::has_sb) {
                conf::check_product<P>(this->handle(), this->blas(), m, A.A,
                                       Case(BATCHED, 5).strides(2, 2 * cols + 3, 1, rows + 4).scalars(-0.75f, 2.0f)
                                           .from_seed(++seed));
                conf::check_product<P>(this->handle(), this->blas(), m, A.A,
                                       Case(BATCHED, 3).strides(1, cols, 3, 3 * rows + 1).from_seed(++seed));
            }
            if (this->HasFailure())
                return;
        }
    }
}

/* The BLAS rules for each routine in both pointer modes: beta = 0 never reads C (NaN before), alpha = 0 reads
 * neither A nor B (B all NaN): C = beta * C, and 0 everywhere when both are 0. */
TYPED_TEST(GpuNm, AlphaBetaRulesAndPointerModes)
{
    using P = TypeParam;
    const Pattern pat = P::type == MACKO_R_32F ? Pattern{8, 32, 32} : Pattern{2, 4, 1};
    const mt::Dense m = nm_matrix(90, 170, pat, 31, kEmptyRows, P::type);
    gt::Mat A;
    if (!make_nm<P>(this->handle(), m, pat, A))
        return;
    const std::vector<float> nanb = all_nan(170);
    const float cases[][2] = {{1.0f, 0.0f}, {0.5f, 0.25f}, {0.0f, 0.75f}, {0.0f, 0.0f}, {-2.0f, 1.0f}};
    uint64_t seed = 40;
    for (macko_pointer_mode_t mode : {MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE})
        for (const auto &ab : cases)
            for (conf::Routine r : {SPMV, SPMM, BATCHED}) {
                if (r == BATCHED && !P::has_sb)
                    continue;
                SCOPED_TRACE(testing::Message() << "alpha " << ab[0] << " beta " << ab[1] << " routine " << r
                                                << (mode == MACKO_POINTER_MODE_DEVICE ? " device" : " host"));
                Case c(r, r == SPMV ? 1 : 6);
                c.scalars(ab[0], ab[1]).pointers(mode).from_seed(++seed);
                if (r == BATCHED)
                    c.strides(1, 170, 1, 90);
                if (ab[0] == 0.0f)
                    c.every_column(&nanb).no_cublas();
                conf::check_product<P>(this->handle(), this->blas(), m, A.A, c);
            }
}

/* Inf / NaN in B at every column the matrix does not store (B's gaps are NaN too, and the slots past the last
 * column read nothing): the padding slots of the canonical encoding land on such columns (windows with fewer than
 * n grid columns, whole windows of padding, the partial last window of 301 columns), and no result may turn
 * non-finite. A stored column with Inf then gives Inf where it is stored. */
TYPED_TEST(GpuNm, NonFiniteBAtPaddingStaysFinite)
{
    using P = TypeParam;
    uint64_t seed = 9000;
    for (Pattern pat : kPatterns) {
        const mt::Dense m = nm_matrix(90, 301, pat, ++seed, kGrid | kFullGroups, P::type);
        gt::Mat A;
        if (!make_nm<P>(this->handle(), m, pat, A))
            return;
        std::vector<float> x = off_grid_nonfinite(301, P::half, ++seed);
        for (int path : kPaths) {
            if (!force<P>(this->handle(), A.A, pat, path))
                continue;
            SCOPED_TRACE(testing::Message() << pattern_name(pat) << " path " << path_name(path));
            for (int64_t n : {1, 8, 33, 130})
                for (float beta : {0.0f, 2.0f})
                    conf::check_product<P>(this->handle(), nullptr, m, A.A,
                                           Case(SPMM, n).scalars(1.0f, beta).every_column(&x).extra_ld(ldb_extra(path, 301, 3), 1)
                                               .no_cublas());
            conf::check_product<P>(this->handle(), nullptr, m, A.A, Case(SPMV).every_column(&x).no_cublas());
            if (this->HasFailure())
                return;
        }
        /* Inf at a stored grid column (the first row's first nonzero): the rows storing it give +-Inf */
        for (int64_t c = 0; c < m.cols; c++)
            if (m.at(0, c) != 0.0f) {
                std::vector<float> xi = x;
                xi[(size_t)c] = INFINITY;
                if (!force<P>(this->handle(), A.A, pat, MACKO_NM_PATH_AUTO))
                    return;
                conf::check_product<P>(this->handle(), nullptr, m, A.A, Case(SPMM, 9).every_column(&xi).no_cublas());
                break;
            }
    }
}

/* n columns of B (seed) and C (seed + 1) in P's type, column-major with ld = rows of the operand. */
template <class P> struct Operands {
    using E = typename P::E;
    int64_t rows, cols, n;
    std::vector<E> b, c0;
    gt::DevMem db, dc, dab;
    Operands(int64_t r, int64_t k, int64_t cols_n, uint64_t seed)
        : rows(r), cols(k), n(cols_n), b(conf::encode<P>(mt::random_vector(k * cols_n, seed, P::half))),
          c0(conf::encode<P>(mt::random_vector(r * cols_n, seed + 1, P::half))), db(b.size() * sizeof(E)),
          dc(c0.size() * sizeof(E)), dab(2 * sizeof(typename P::Scalar))
    {
        EXPECT_EQ(cudaMemcpy(db.p, b.data(), db.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    }
    /* C reset to c0 on stream s, P's SpMM (n == 1: SpMV), C back: false after a reported failure */
    std::vector<E> run(macko_handle_t h, macko_mat_t A, cudaStream_t s, typename P::Scalar alpha,
                       typename P::Scalar beta)
    {
        std::vector<E> out(c0.size());
        EXPECT_EQ(cudaMemcpyAsync(dc.p, c0.data(), dc.bytes, cudaMemcpyHostToDevice, s), cudaSuccess);
        EXPECT_EQ(conf::call<P>(n == 1 ? SPMV : SPMM, h, N, n, &alpha, A, db.as<E>(), 1, cols, &beta, dc.as<E>(), 1,
                                rows),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(out.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        return out;
    }
    /* The same SpMM (n > 1) captured in a CUDA graph on a non-blocking stream of its own, C reset to c0 first, and
     * replayed once: C after the replay (empty after a reported failure). */
    std::vector<E> replay(macko_handle_t h, macko_mat_t A, typename P::Scalar alpha, typename P::Scalar beta)
    {
        std::vector<E> out(c0.size());
        cudaStream_t s;
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
            ADD_FAILURE() << "cudaStreamCreateWithFlags";
            return {};
        }
        EXPECT_EQ(macko_set_stream(h, s), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(cudaMemcpyAsync(dc.p, c0.data(), dc.bytes, cudaMemcpyHostToDevice, s), cudaSuccess);
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        EXPECT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
        const macko_status_t st =
            conf::call<P>(SPMM, h, N, n, &alpha, A, db.as<E>(), 1, cols, &beta, dc.as<E>(), 1, rows);
        EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
        macko_set_stream(h, nullptr);
        EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        if (st == MACKO_STATUS_SUCCESS && graph != nullptr && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
            EXPECT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
            EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
            EXPECT_EQ(cudaMemcpy(out.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
            cudaGraphExecDestroy(exec);
        } else {
            ADD_FAILURE() << "the capture or its instantiation failed";
            out.clear();
        }
        if (graph != nullptr)
            cudaGraphDestroy(graph);
        cudaStreamDestroy(s);
        return out;
    }
};

/* Each path gives the same bits over repeated calls (MACKO_TEST_REPEATS), and a call captured in a CUDA graph on a
 * non-default stream replays to the direct call's bits: host pointer mode with the captured alpha, device pointer
 * mode with the alpha in device memory at replay time. n = 1, 40 and 300 (the large-n kernels). */
TYPED_TEST(GpuNm, DeterministicAndGraphCapturable)
{
    using P = TypeParam;
    using E = typename P::E;
    using Sc = typename P::Scalar;
    const int runs = mt::repeat_count(10);
    gt::Handle h; /* its own: the stream changes */
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (Pattern pat : {Pattern{2, 4, 1}, Pattern{16, 32, 32}, Pattern{8, 16, 8}}) {
        const mt::Dense m = nm_matrix(600, 520, pat, 61, kEmptyRows, P::type);
        gt::Mat A;
        if (!make_nm<P>(h.h, m, pat, A))
            break;
        for (int path : kPaths) {
            if (!force<P>(h.h, A.A, pat, path))
                continue;
            for (int64_t n : {1, 40, 300}) {
                SCOPED_TRACE(testing::Message() << pattern_name(pat) << " path " << path_name(path) << " n=" << n);
                ASSERT_EQ(macko_set_stream(h.h, nullptr), MACKO_STATUS_SUCCESS);
                Operands<P> o(600, 520, n, 62 + (uint64_t)n);
                const std::vector<E> first = o.run(h.h, A.A, nullptr, (Sc)1.5, (Sc)-0.5);
                for (int r = 1; r < runs; r++)
                    ASSERT_EQ(std::memcmp(o.run(h.h, A.A, nullptr, (Sc)1.5, (Sc)-0.5).data(), first.data(),
                                          first.size() * sizeof(E)),
                              0)
                        << "run " << r << " differs";
                const std::vector<E> other = o.run(h.h, A.A, nullptr, (Sc)-1.0, (Sc)-0.5);
                ASSERT_EQ(macko_set_stream(h.h, s), MACKO_STATUS_SUCCESS);
                for (macko_pointer_mode_t mode : {MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE}) {
                    ASSERT_EQ(macko_set_pointer_mode(h.h, mode), MACKO_STATUS_SUCCESS);
                    Sc ab[2] = {(Sc)1.5, (Sc)-0.5};
                    CUDA_CHECK(cudaMemcpy(o.dab.p, ab, sizeof ab, cudaMemcpyHostToDevice));
                    const bool dev = mode == MACKO_POINTER_MODE_DEVICE;
                    const Sc *pa = dev ? o.dab.template as<Sc>() : &ab[0];
                    const Sc *pb = dev ? o.dab.template as<Sc>() + 1 : &ab[1];
                    cudaGraph_t graph;
                    cudaGraphExec_t exec;
                    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
                    const macko_status_t st = conf::call<P>(n == 1 ? SPMV : SPMM, h.h, N, n, pa, A.A,
                                                            o.db.template as<E>(), 1, 520, pb,
                                                            o.dc.template as<E>(), 1, 600);
                    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
                    ASSERT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
                    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
                    for (Sc alpha_now : {(Sc)1.5, (Sc)-1.0}) {
                        ab[0] = alpha_now;
                        CUDA_CHECK(cudaMemcpyAsync(o.dab.p, ab, sizeof ab, cudaMemcpyHostToDevice, s));
                        CUDA_CHECK(cudaMemcpyAsync(o.dc.p, o.c0.data(), o.dc.bytes, cudaMemcpyHostToDevice, s));
                        CUDA_CHECK(cudaGraphLaunch(exec, s));
                        CUDA_CHECK(cudaStreamSynchronize(s));
                        std::vector<E> out(o.c0.size());
                        CUDA_CHECK(cudaMemcpy(out.data(), o.dc.p, o.dc.bytes, cudaMemcpyDeviceToHost));
                        const std::vector<E> &want = dev && alpha_now != (Sc)1.5 ? other : first;
                        EXPECT_EQ(std::memcmp(out.data(), want.data(), out.size() * sizeof(E)), 0)
                            << (dev ? "device" : "host") << " pointer mode, alpha now " << alpha_now;
                    }
                    cudaGraphExecDestroy(exec);
                    cudaGraphDestroy(graph);
                }
                ASSERT_EQ(macko_set_pointer_mode(h.h, MACKO_POINTER_MODE_HOST), MACKO_STATUS_SUCCESS);
                /* Back to the default stream before the next path's override or pattern's upload: they queue on the
                 * handle's stream, and the non-blocking stream s is not ordered with the default stream the next
                 * direct calls use (macko_set_stream does no synchronization). Left on s, an upload still in flight
                 * raced the next n = 1 call: the "run 1 differs" seen twice under concurrent load (RELIABILITY.md). */
                ASSERT_EQ(macko_set_stream(h.h, nullptr), MACKO_STATUS_SUCCESS);
                CUDA_CHECK(cudaStreamSynchronize(s));
            }
        }
    }
    cudaStreamDestroy(s);
}

/* The host arrays of A (pattern and values / positions as bytes). */
struct NmArrays {
    int n = 0, m = 0, v = 0;
    std::vector<uint8_t> values, positions;
    bool operator==(const NmArrays &o) const
    {
        return n == o.n && m == o.m && v == o.v && values == o.values && positions == o.positions;
    }
};
NmArrays arrays_of(macko_mat_t A)
{
    NmArrays a;
    int64_t rows = 0, cols = 0;
    macko_datatype_t t = MACKO_R_16F;
    EXPECT_EQ(macko_mat_get_info(A, &rows, &cols, nullptr, &t), MACKO_STATUS_SUCCESS);
    const void *vals = nullptr;
    const uint8_t *pos = nullptr;
    const macko_status_t st = macko_mat_get_nm_host(A, &a.n, &a.m, &a.v, &vals, &pos);
    EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    if (st != MACKO_STATUS_SUCCESS || a.m == 0 || a.v == 0)
        return a;
    const int64_t kept = (cols + a.m - 1) / a.m * a.n, groups = (rows + a.v - 1) / a.v;
    a.values.assign(static_cast<const uint8_t *>(vals),
                    static_cast<const uint8_t *>(vals) + (size_t)(rows * kept) * mt::value_bytes(t));
    a.positions.assign(pos, pos + (size_t)(groups * kept));
    return a;
}

/* Storage, and download after release_host on every path's device layout (SP24 included): the host arrays and the
 * serialized file byte for byte the original's, and the products right afterwards. */
TYPED_TEST(GpuNm, StorageAndDownloadRoundTrip)
{
    using P = TypeParam;
    const size_t es = mt::value_bytes(P::type);
    uint64_t seed = 300;
    for (Pattern pat : kPatterns) {
        const int64_t rows = 77, cols = 150;
        const mt::Dense m = nm_matrix(rows, cols, pat, ++seed, kEmptyRows | kFullGroups, P::type);
        gt::Mat A;
        if (!make_nm<P>(this->handle(), m, pat, A))
            return;
        const NmArrays orig = arrays_of(A.A);
        const int64_t kept = (cols + pat.m - 1) / pat.m * pat.n, groups = (rows + pat.v - 1) / pat.v;
        ASSERT_EQ(orig.values.size(), (size_t)(rows * kept) * es);
        ASSERT_EQ(orig.positions.size(), (size_t)(groups * kept));
        int64_t size0 = 0;
        ASSERT_EQ(macko_mat_serialized_size(A.A, &size0), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        std::vector<uint8_t> ser0((size_t)size0), ser1((size_t)size0);
        ASSERT_EQ(macko_mat_serialize(A.A, ser0.data(), size0), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        for (int path : kPaths) {
            SCOPED_TRACE(testing::Message() << pattern_name(pat) << " path " << path_name(path));
            if (!force<P>(this->handle(), A.A, pat, path))
                continue;
            int64_t bytes = 0, entries = 0, padded = 0;
            ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, &entries, &padded, nullptr), MACKO_STATUS_SUCCESS);
            EXPECT_EQ(entries, rows * kept);
            EXPECT_EQ(padded, rows * kept);
            /* what the device holds: the host arrays (GEN), or mma.sp's 16 x 32 units of 512 value and 64 metadata
             * bytes (SP24, for the SP24 and SP24WG paths: the automatic layout of 16-bit 2:4 and 1:4) */
            const bool sp24 = path == MACKO_NM_PATH_SP24 || path == MACKO_NM_PATH_SP24WG ||
                              (path == MACKO_NM_PATH_AUTO &&
                               path_takes(MACKO_NM_PATH_SP24, pat, P::type, this->handle()));
            const int64_t want = sp24 ? (rows + 15) / 16 * ((cols + 31) / 32) * (512 + 64)
                                      : rows * kept * (int64_t)es + groups * kept;
            EXPECT_EQ(bytes, want) << "get_storage";
            ASSERT_EQ(macko_mat_release_host(A.A), MACKO_STATUS_SUCCESS);
            EXPECT_EQ(macko_mat_get_nm_host(A.A, nullptr, nullptr, nullptr, nullptr, nullptr),
                      MACKO_STATUS_NOT_INITIALIZED);
            EXPECT_EQ(macko_mat_serialize(A.A, ser1.data(), size0), MACKO_STATUS_NOT_INITIALIZED);
            conf::check_product<P>(this->handle(), nullptr, m, A.A, Case(SPMM, 5).from_seed(++seed));
            ASSERT_EQ(macko_mat_download(this->handle(), A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            EXPECT_TRUE(arrays_of(A.A) == orig) << "the downloaded arrays differ from the original";
            ASSERT_EQ(macko_mat_serialize(A.A, ser1.data(), size0), MACKO_STATUS_SUCCESS);
            EXPECT_EQ(ser0, ser1) << "the downloaded matrix serializes differently";
            conf::check_product<P>(this->handle(), nullptr, m, A.A, Case(SPMV).from_seed(++seed));
            if (this->HasFailure())
                return;
        }
    }
}

/* create_nm_dense_device makes exactly what create_nm_dense_host makes of the same dense matrix (row- and
 * column-major with padded ld, given and detected patterns), and its device copy computes; a matrix that breaks the
 * pattern is refused by both with INVALID_VALUE at the values' position. */
TYPED_TEST(GpuNm, DenseDeviceEqualsDenseHost)
{
    using P = TypeParam;
    const size_t es = mt::value_bytes(P::type);
    uint64_t seed = 500;
    for (Pattern pat : kPatterns)
        for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL})
            for (bool detect : {false, true}) {
                SCOPED_TRACE(testing::Message() << pattern_name(pat) << (order == MACKO_ORDER_ROW ? " row" : " col")
                                                << "-major" << (detect ? ", detected" : ""));
                const int64_t rows = 45, cols = 101;
                const mt::Dense m = nm_matrix(rows, cols, pat, ++seed, kEmptyRows, P::type);
                const int64_t ld = (order == MACKO_ORDER_ROW ? cols : rows) + 3;
                const std::vector<uint8_t> bytes = mt::to_bytes(m, P::type, order, ld);
                gt::DevMem d(bytes.size());
                CUDA_CHECK(cudaMemcpy(d.p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
                const Pattern ask = detect ? Pattern{0, 0, 0} : pat;
                gt::Mat H, D;
                ASSERT_EQ(macko_mat_create_nm_dense_host(&H.A, rows, cols, P::type, bytes.data(), ld, order, ask.n,
                                                         ask.m, ask.v),
                          MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                ASSERT_EQ(macko_mat_create_nm_dense_device(this->handle(), &D.A, rows, cols, P::type, d.p, ld, order,
                                                           ask.n, ask.m, ask.v),
                          MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                int64_t r1 = 0, c1 = 0, z1 = 0, r2 = 0, c2 = 0, z2 = 0;
                ASSERT_EQ(macko_mat_get_info(H.A, &r1, &c1, &z1, nullptr), MACKO_STATUS_SUCCESS);
                ASSERT_EQ(macko_mat_get_info(D.A, &r2, &c2, &z2, nullptr), MACKO_STATUS_SUCCESS);
                EXPECT_EQ(r1, r2);
                EXPECT_EQ(c1, c2);
                EXPECT_EQ(z1, z2);
                EXPECT_EQ(z1, m.nnz());
                const NmArrays a = arrays_of(H.A), b = arrays_of(D.A);
                EXPECT_TRUE(a == b) << "device " << b.n << ":" << b.m << ":" << b.v << ", host " << a.n << ":" << a.m
                                    << ":" << a.v;
                if (!detect) {
                    EXPECT_EQ(a.n, pat.n);
                    EXPECT_EQ(a.m, pat.m);
                    EXPECT_EQ(a.v, pat.v);
                }
                EXPECT_EQ(a.values.size() % es, 0u);
                conf::check_product<P>(this->handle(), nullptr, m, D.A, Case(SPMM, 3).from_seed(++seed));
                if (this->HasFailure())
                    return;
            }
    /* one more nonzero than 2:4 keeps, in row 37, window 5 (columns 20..23) */
    mt::Dense bad = nm_matrix(40, 64, Pattern{2, 4, 1}, 77, 0, P::type);
    for (int64_t c = 20; c < 23; c++)
        bad.at(37, c) = mt::round_to(0.5f, P::type);
    const std::vector<uint8_t> bytes = mt::to_bytes(bad, P::type, MACKO_ORDER_ROW, 64);
    gt::DevMem d(bytes.size());
    CUDA_CHECK(cudaMemcpy(d.p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    gt::Mat H, D;
    EXPECT_EQ(macko_mat_create_nm_dense_host(&H.A, 40, 64, P::type, bytes.data(), 64, MACKO_ORDER_ROW, 2, 4, 1),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 5);
    const std::string host_msg = macko_get_last_error_message();
    EXPECT_NE(host_msg.find("37"), std::string::npos) << host_msg;
    EXPECT_EQ(macko_mat_create_nm_dense_device(this->handle(), &D.A, 40, 64, P::type, d.p, 64, MACKO_ORDER_ROW, 2, 4,
                                               1),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 6);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("37"), std::string::npos)
        << macko_get_last_error_message();
}

/* op T (every routine, and macko_analysis), vectors of another type, a BLAS-letter routine of another type, the
 * tile layout: refused with the documented status at the documented position; op N analysis is fine. */
TYPED_TEST(GpuNm, Refusals)
{
    using P = TypeParam;
    using E = typename P::E;
    using Sc = typename P::Scalar;
    for (Pattern pat : {Pattern{2, 4, 1}, Pattern{8, 32, 32}}) {
        const mt::Dense m = nm_matrix(40, 64, pat, 91, 0, P::type);
        gt::Mat A;
        if (!make_nm<P>(this->handle(), m, pat, A))
            return;
        macko_handle_t h = this->handle();
        gt::DevMem dx(64 * 8 * 4), dy(64 * 8 * 4);
        const Sc one = 1, zero = 0;
        EXPECT_EQ(P::spmv(h, T, &one, A.A, dx.as<E>(), 1, &zero, dy.as<E>(), 1), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(macko_get_last_error_position(), 2);
        EXPECT_EQ(P::mm(h, T, 4, &one, A.A, dx.as<E>(), 40, &zero, dy.as<E>(), 64), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(macko_get_last_error_position(), 2);
        if constexpr (P::has_sb) {
            EXPECT_EQ(P::sb(h, T, &one, A.A, dx.as<E>(), 1, 40, &zero, dy.as<E>(), 1, 64, 2),
                      MACKO_STATUS_NOT_SUPPORTED);
            EXPECT_EQ(macko_get_last_error_position(), 2);
        }
        EXPECT_EQ(macko_analysis(h, T, A.A), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(macko_get_last_error_position(), 2);
        EXPECT_EQ(macko_analysis(h, N, A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        /* the generic routines with vectors of another type than the matrix's (fp16 / bf16 A with fp32 x: NM has
         * only each type's own combination) */
        const float onef = 1.0f, zerof = 0.0f;
        if (P::half) {
            EXPECT_EQ(macko_spmv_ex(h, N, &onef, A.A, dx.p, MACKO_R_32F, 1, &zerof, dy.p, MACKO_R_32F, 1, MACKO_R_32F),
                      MACKO_STATUS_NOT_SUPPORTED);
            EXPECT_EQ(macko_get_last_error_position(), 6);
            EXPECT_EQ(macko_spmm_ex(h, N, 2, &onef, A.A, dx.p, MACKO_R_32F, 64, &zerof, dy.p, MACKO_R_32F, 40,
                                    MACKO_R_32F),
                      MACKO_STATUS_NOT_SUPPORTED);
            EXPECT_EQ(macko_get_last_error_position(), 7);
        }
        /* a BLAS-letter routine of another type: A's type is wrong (position 4) */
        if (P::type == MACKO_R_16F) {
            EXPECT_EQ(macko_Sspmv(h, N, &onef, A.A, dx.as<float>(), 1, &zerof, dy.as<float>(), 1),
                      MACKO_STATUS_INVALID_VALUE);
        } else {
            EXPECT_EQ(macko_Hspmv(h, N, &onef, A.A, dx.as<macko_half>(), 1, &zerof, dy.as<macko_half>(), 1),
                      MACKO_STATUS_INVALID_VALUE);
        }
        EXPECT_EQ(macko_get_last_error_position(), 4);
        EXPECT_EQ(macko_mat_set_layout(A.A, MACKO_LAYOUT_TILES), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(macko_get_last_error_position(), 2);
        macko_kind_t kind = MACKO_KIND_MACKO;
        EXPECT_EQ(macko_mat_get_kind(A.A, &kind), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(kind, MACKO_KIND_NM);
        /* after all the refusals the products still run (a refusal writes nothing, changes nothing) */
        conf::check_product<P>(h, nullptr, m, A.A, Case(SPMM, 4).from_seed(92));
    }
}

/* The SIMT kernel (fp32, v >= 8) for every slot count it is built for: S = n*32/m kept values per 32 columns, padded
 * to a multiple of 4 (eight instances), in both configurations (128 x 128 and 128 x 64 tiles). Patterns with S = 1, 3,
 * 5, 9, 10, 12, 16, 20, 24, 28, 31 and 32, so that values are copied 4 bytes at a time (kept or S not a multiple of
 * 4) and 16 at a time; v = 8, 16 and 32 (one, two and four thread rows per group); shapes with partial row blocks,
 * groups, windows and 32-column steps, one step only, and n past one and two column blocks. Each call against the
 * double reference and cuBLAS (B 16-byte aligned with ldb a multiple of 4, odd ldb and ldc, element stride 2, beta =
 * 0 with NaN in C), and the two configurations bitwise equal (every element sums the same products in the same
 * order). */
/* A product case of n columns by turn: 0 alpha 1, beta 0 (NaN in C); 1 alpha 1.25, beta -0.5 with odd ldb / ldc; 2
 * alpha -0.5, beta 0.25 with element stride 2 (against the double reference only). */
Case turn_case(int64_t n, int variant, uint64_t seed, int64_t rows, int64_t cols)
{
    Case c(SPMM, n);
    c.from_seed(seed);
    switch (variant % 3) {
    case 0: c.scalars(1.0f, 0.0f); break;
    case 1: c.scalars(1.25f, -0.5f).extra_ld(3, 5); break;
    default: c.scalars(-0.5f, 0.25f).strides(2, 2 * cols + 1, 1, rows + 2).no_cublas();
    }
    return c;
}

class GpuNmSimt : public conf::GpuSuite {};
TEST_F(GpuNmSimt, EverySlotCountAndConfiguration)
{
    using P = conf::SP;
    using E = P::E;
    const bool quick = mt::repeat_count(100) < 100; /* compute-sanitizer: fewer patterns */
    const Pattern pats[] = {{1, 32, 8},  {3, 32, 16}, {5, 32, 32}, {9, 32, 8},  {5, 16, 16}, {3, 8, 8},
                            {16, 32, 32}, {5, 8, 32}, {3, 4, 16}, {7, 8, 8}, {31, 32, 32}, {4, 4, 8}};
    struct Shape {
        int64_t rows, cols;
    };
    const Shape shapes[] = {{130, 777}, {257, 29}, {72, 1000}};
    EXPECT_EQ(macko_nm_simt_configs(), 2);
    uint64_t seed = 9100;
    int pi = 0;
    for (Pattern pat : pats) {
        if (quick && pi++ % 3 != 0)
            continue;
        EXPECT_EQ(32 % pat.m, 0);
        for (const Shape &sh : shapes) {
            const mt::Dense m = nm_matrix(sh.rows, sh.cols, pat, ++seed, kEmptyRows | kFullGroups, P::type);
            gt::Mat A;
            if (!make_nm<P>(handle(), m, pat, A))
                return;
            std::vector<std::vector<E>> outs;
            const uint64_t oseed = ++seed; /* the same operands for every configuration */
            for (int cfg = 1; cfg <= macko_nm_simt_configs(); cfg++) {
                macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
                f.nm_path = MACKO_NM_PATH_SIMT;
                f.nm_cfg = cfg;
                if (macko_nm_simt_smem(cfg - 1, pat.n, pat.m) > handle()->props.smem_per_block_optin) {
                    /* this configuration's instance does not fit the device (configuration 0 on sm_86 / sm_89) */
                    EXPECT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_NOT_SUPPORTED);
                    EXPECT_EQ(macko_get_last_error_position(), 4);
                    continue;
                }
                ASSERT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                int variant = 0;
                for (int64_t n : {32, 65, 200}) {
                    SCOPED_TRACE(testing::Message() << pattern_name(pat) << " " << sh.rows << "x" << sh.cols
                                                    << " configuration " << cfg - 1 << " n=" << n);
                    conf::check_product<P>(handle(), blas(), m, A.A, turn_case(n, variant++, ++seed, sh.rows, sh.cols));
                    if (HasFailure())
                        return;
                }
                Operands<P> o(sh.rows, sh.cols, 300, oseed);
                outs.push_back(o.run(handle(), A.A, nullptr, 1.0f, 0.5f));
            }
            for (size_t i = 1; i < outs.size(); i++)
                EXPECT_EQ(std::memcmp(outs[0].data(), outs[i].data(), outs[0].size() * sizeof(E)), 0)
                    << pattern_name(pat) << " " << sh.rows << "x" << sh.cols << ": the configurations differ";
        }
    }
    /* out of range */
    const mt::Dense m = nm_matrix(40, 64, Pattern{16, 32, 32}, 9, 0, P::type);
    gt::Mat A;
    if (!make_nm<P>(handle(), m, Pattern{16, 32, 32}, A))
        return;
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.nm_path = MACKO_NM_PATH_SIMT;
    f.nm_cfg = macko_nm_simt_configs() + 1;
    EXPECT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_INVALID_VALUE);
    f.nm_cfg = -1;
    EXPECT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_INVALID_VALUE);
}

/* The split-K checks of one n shared by SIMT, SP24WG and SP24 (the path already forced): alpha and beta (NaN in C for
 * beta = 0) in both pointer modes, with eb / ec extra elements of leading dimension, against the reference and cuBLAS;
 * alpha = 0 with NaN in B (neither A nor B read); Inf / NaN in B at every column the matrix does not store (x); Inf at
 * the first stored column of row 0 (the exact row sum where the total is NaN). */
template <class P>
void split_k_checks(macko_handle_t h, gt::Blas *blas, const mt::Dense &m, macko_mat_t A, int64_t n, uint64_t &seed,
                    const std::vector<float> &nanb, const std::vector<float> &x, int eb, int ec)
{
    const float ab[][2] = {{1.0f, 0.0f}, {1.25f, -0.5f}, {0.0f, 0.75f}};
    for (const auto &v : ab)
        for (macko_pointer_mode_t mode : {MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE}) {
            Case c(SPMM, n);
            c.scalars(v[0], v[1]).pointers(mode).from_seed(++seed).extra_ld(eb, ec);
            if (v[0] == 0.0f)
                c.every_column(&nanb).no_cublas();
            conf::check_product<P>(h, blas, m, A, c);
        }
    conf::check_product<P>(h, nullptr, m, A, Case(SPMM, n).scalars(1.0f, 0.0f).every_column(&x).no_cublas());
    for (int64_t c = 0; c < m.cols; c++)
        if (m.at(0, c) != 0.0f) {
            std::vector<float> xi = x;
            xi[(size_t)c] = INFINITY;
            conf::check_product<P>(h, nullptr, m, A, Case(SPMM, n).scalars(1.0f, 0.5f).every_column(&xi).no_cublas());
            break;
        }
}

/* Repeated calls, a CUDA graph replay on a non-default stream and a call after it give the same bits (n columns). */
template <class P> void split_k_bitwise(macko_handle_t h, macko_mat_t A, int64_t rows, int64_t cols, int64_t n, uint64_t seed)
{
    using E = typename P::E;
    Operands<P> o(rows, cols, n, seed);
    const std::vector<E> first = o.run(h, A, nullptr, 1.5f, -0.5f);
    EXPECT_EQ(std::memcmp(o.run(h, A, nullptr, 1.5f, -0.5f).data(), first.data(), first.size() * sizeof(E)), 0);
    const std::vector<E> replay = o.replay(h, A, 1.5f, -0.5f);
    ASSERT_EQ(replay.size(), first.size());
    EXPECT_EQ(std::memcmp(replay.data(), first.data(), first.size() * sizeof(E)), 0) << "the replay differs";
    EXPECT_EQ(std::memcmp(o.run(h, A, nullptr, 1.5f, -0.5f).data(), first.data(), first.size() * sizeof(E)), 0)
        << "a call after the replay differs";
}

/* SIMT's split K (macko_nm_simt_splits): few 128-row blocks and many 64-column K-slices give blocks along K whose
 * sums go through the handle's workspace and a finishing launch that adds them in split order. Checked against the
 * reference and cuBLAS where the rule splits (asserted, so that the test cannot pass on the unsplit kernel): alpha and
 * beta (NaN in C for beta = 0) in both pointer modes, alpha = 0 with NaN in B (neither A nor B read), Inf / NaN in B
 * at every column the matrix does not store, Inf at a stored column (the finishing launch's exact row sum where the
 * total is NaN), bitwise equal repeated calls, a CUDA graph replay and a call after it, and n = 129 unsplit. */
TEST_F(GpuNmSimt, SplitK)
{
    using P = conf::SP;
    struct Shape {
        int64_t rows, cols;
    };
    uint64_t seed = 9700;
    for (Pattern pat : {Pattern{16, 32, 32}, Pattern{5, 32, 8}})
        for (const Shape &sh : {Shape{300, 4000}, Shape{129, 2049}}) {
            SCOPED_TRACE(testing::Message() << pattern_name(pat) << " " << sh.rows << "x" << sh.cols);
            const mt::Dense m = nm_matrix(sh.rows, sh.cols, pat, ++seed, kEmptyRows | kFullGroups | kGrid, P::type);
            gt::Mat A;
            if (!make_nm<P>(handle(), m, pat, A) || !force<P>(handle(), A.A, pat, MACKO_NM_PATH_SIMT))
                return;
            const std::vector<float> nanb = all_nan(sh.cols), x = off_grid_nonfinite(sh.cols, false, ++seed);
            for (int64_t n : {8, 33, 128}) {
                SCOPED_TRACE(testing::Message() << "n=" << n);
                EXPECT_GT(macko_nm_simt_splits(sh.rows, sh.cols, n, handle()->props.sm_count, INT64_MAX), 1);
                split_k_checks<P>(handle(), blas(), m, A.A, n, seed, nanb, x, n % 2 ? 3 : 0, 1);
                if (HasFailure())
                    return;
            }
            EXPECT_EQ(macko_nm_simt_splits(sh.rows, sh.cols, 129, handle()->props.sm_count, INT64_MAX), 1);
            conf::check_product<P>(handle(), blas(), m, A.A, Case(SPMM, 129).scalars(1.0f, 0.5f).from_seed(++seed));
            split_k_bitwise<P>(handle(), A.A, sh.rows, sh.cols, 33, ++seed);
        }
}

/* The SP24 layout's two kernels: where the device runs wgmma.sp (compute capability 9.0, sm_90a build), a 2:4
 * fp16 / bf16 matrix takes SP24WG from n = 64 on and SP24 below; a B that cannot take a tensor map (element stride
 * not 1, ldb not a multiple of 8, B not 16-byte aligned) gives SP24 at every n, with the same results as the
 * reference. Elsewhere SP24 at every n, and forcing SP24WG is refused (NOT_SUPPORTED, position 4). The configuration
 * override: out of range refused, every SP24WG configuration gives the same bits. A matrix without columns: C = beta * C
 * (SP24: there is no B for a tensor map). */
class GpuNmWg : public conf::GpuSuite {};
TEST_F(GpuNmWg, PathChoiceAndFallbacks)
{
    using P = conf::HP;
    using E = P::E;
    const Pattern pat{2, 4, 1};
    const mt::Dense m = nm_matrix(300, 520, pat, 77, kEmptyRows, P::type);
    gt::Mat A;
    if (!make_nm<P>(handle(), m, pat, A))
        return;
    const bool wg = runs_wg(handle());
    EXPECT_EQ(macko_nm_path(A.A, MACKO_COMBO_H, 1), MACKO_NM_PATH_SP24);
    EXPECT_EQ(macko_nm_path(A.A, MACKO_COMBO_H, 63), MACKO_NM_PATH_SP24);
    EXPECT_EQ(macko_nm_path(A.A, MACKO_COMBO_H, 64), wg ? MACKO_NM_PATH_SP24WG : MACKO_NM_PATH_SP24);
    EXPECT_EQ(macko_nm_path(A.A, MACKO_COMBO_H, 128), wg ? MACKO_NM_PATH_SP24WG : MACKO_NM_PATH_SP24);
    EXPECT_EQ(macko_nm_path(A.A, MACKO_COMBO_B, 4096), wg ? MACKO_NM_PATH_SP24WG : MACKO_NM_PATH_SP24);
    /* the automatic configuration: the clusters' from n = 1024, another below, both in range */
    EXPECT_NE(macko_nm_sp24_wg_auto_cfg(1023), macko_nm_sp24_wg_auto_cfg(1024));
    EXPECT_EQ(macko_nm_sp24_wg_auto_cfg(1024), macko_nm_sp24_wg_auto_cfg(8192));
    EXPECT_LT(macko_nm_sp24_wg_auto_cfg(8192), macko_nm_sp24_wg_configs());
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.nm_path = MACKO_NM_PATH_SP24WG;
    EXPECT_EQ(macko_plan_override(handle(), A.A, N, &f), wg ? MACKO_STATUS_SUCCESS : MACKO_STATUS_NOT_SUPPORTED);
    if (!wg) {
        EXPECT_NE(std::string(macko_get_last_error_message()).find("wgmma.sp"), std::string::npos)
            << macko_get_last_error_message();
        return;
    }
    EXPECT_EQ(macko_nm_path(A.A, MACKO_COMBO_H, 1), MACKO_NM_PATH_SP24WG);
    f.nm_cfg = macko_nm_sp24_wg_configs() + 1; /* one past the last */
    EXPECT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_INVALID_VALUE);
    f.nm_cfg = 0;
    /* automatic at n = 300 with each B the tensor map cannot take: SP24 instead, results as the reference */
    f.nm_path = MACKO_NM_PATH_AUTO;
    ASSERT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_SUCCESS);
    uint64_t seed = 500;
    conf::check_product<P>(handle(), blas(), m, A.A, Case(SPMM, 300).from_seed(++seed).extra_ld(1, 3));
    conf::check_product<P>(handle(), blas(), m, A.A, Case(SPMM, 300).from_seed(++seed).extra_ld(8, 0));
    conf::check_product<P>(handle(), blas(), m, A.A, Case(SPMM, 300).from_seed(++seed).strides(2, 1100, 1, 300));
    /* every SP24WG configuration: the reference to rounding, the same bits twice, and the same bits as the others */
    std::vector<std::vector<E>> outs;
    for (int cfg = 1; cfg <= macko_nm_sp24_wg_configs(); cfg++) {
        f.nm_path = MACKO_NM_PATH_SP24WG;
        f.nm_cfg = cfg;
        ASSERT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_SUCCESS);
        conf::check_product<P>(handle(), blas(), m, A.A, Case(SPMM, 700).from_seed(900).scalars(0.5f, 0.0f));
        Operands<P> o(300, 520, 700, 901);
        outs.push_back(o.run(handle(), A.A, nullptr, (P::Scalar)1.0f, (P::Scalar)0.5f));
        EXPECT_EQ(std::memcmp(o.run(handle(), A.A, nullptr, (P::Scalar)1.0f, (P::Scalar)0.5f).data(),
                              outs.back().data(), outs.back().size() * sizeof(E)),
                  0)
            << "configuration " << cfg - 1 << " differs between two calls";
    }
    for (size_t i = 1; i < outs.size(); i++)
        EXPECT_EQ(std::memcmp(outs[0].data(), outs[i].data(), outs[0].size() * sizeof(E)), 0)
            << "configuration " << i << " differs from configuration 0 (the same instructions in the same order)";
    f = MACKO_PLAN_FORCED_NONE;
    ASSERT_EQ(macko_plan_override(handle(), A.A, N, &f), MACKO_STATUS_SUCCESS);
    /* a 2:4 matrix without columns (no tensor map of B exists): SP24 at n = 300, C = beta * C */
    const mt::Dense empty = nm_matrix(300, 0, pat, 78, 0, P::type);
    gt::Mat Z;
    if (!make_nm<P>(handle(), empty, pat, Z))
        return;
    EXPECT_EQ(macko_nm_path(Z.A, MACKO_COMBO_H, 300), MACKO_NM_PATH_SP24WG);
    const std::vector<E> c0 = conf::encode<P>(std::vector<float>(300 * 300, 2.0f));
    gt::DevMem dc(c0.size() * sizeof(E)), db(16);
    ASSERT_EQ(cudaMemcpy(dc.p, c0.data(), dc.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    const P::Scalar one = 1.0f, half = 0.5f;
    ASSERT_EQ(P::mm(handle(), N, 300, &one, Z.A, db.as<E>(), 1, &half, dc.as<E>(), 300), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    std::vector<E> out(c0.size());
    ASSERT_EQ(cudaMemcpy(out.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    int64_t wrong = 0;
    for (E e : out)
        wrong += P::to(e) != 1.0;
    EXPECT_EQ(wrong, 0) << "C = 0.5 * C with a 300 x 0 matrix";
}

/* SP24WG's split K (macko_nm_sp24_wg_splits): few 128-row blocks and many 64-column K-slices give blocks along K whose
 * fp32 partials go through the handle's workspace and SP24's finishing launch (split order). Checked for fp16 and
 * bf16 against the reference and cuBLAS where the rule splits (asserted, so that the test cannot pass on the unsplit
 * kernel), at n = 128 (the automatic path) and with SP24WG forced at n = 1, 33 and 300 (two column blocks): alpha
 * and beta (NaN in C for beta = 0) in both pointer modes, odd ldc, alpha = 0 with NaN in B (neither A nor B read),
 * Inf / NaN in B at every column the matrix does not store, Inf at a stored column (the exact row sum where the
 * total is NaN), bitwise equal repeated calls and a CUDA graph replay; one split where the tiles fill a wave. The
 * forced runs at n = 33 and 300 repeat with the clusters' configuration (the automatic one from n = 1024: pairs of
 * row blocks sharing B, an odd row-block count's empty partner included). */
template <class P> void sp24wg_split_k(macko_handle_t h, gt::Blas *blas)
{
    const Pattern pat{2, 4, 1};
    uint64_t seed = 9800;
    struct Shape {
        int64_t rows, cols;
    };
    const int combo = P::type == MACKO_R_16BF ? MACKO_COMBO_B : MACKO_COMBO_H;
    /* columns a multiple of 8 (B takes a tensor map with ldb = cols); 2056 ends inside a K-slice */
    for (const Shape &sh : {Shape{300, 4000}, Shape{129, 2056}}) {
        SCOPED_TRACE(testing::Message() << sh.rows << "x" << sh.cols);
        const mt::Dense m = nm_matrix(sh.rows, sh.cols, pat, ++seed, kEmptyRows | kFullGroups, P::type);
        gt::Mat A;
        if (!make_nm<P>(h, m, pat, A))
            return;
        EXPECT_EQ(macko_nm_path(A.A, combo, 128), MACKO_NM_PATH_SP24WG);
        const std::vector<float> nanb = all_nan(sh.cols), x = off_grid_nonfinite(sh.cols, false, ++seed);
        /* n, and the configuration forced with SP24WG (0: automatic; the clusters' configuration twice) */
        const int mc = 1 + macko_nm_sp24_wg_auto_cfg(4096);
        const std::pair<int64_t, int> runs[] = {{128, 0}, {1, 0}, {33, 0}, {300, 0}, {33, mc}, {300, mc}};
        for (const auto &run : runs) {
            const int64_t n = run.first;
            SCOPED_TRACE(testing::Message() << "n=" << n << " configuration " << run.second - 1);
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            f.nm_path = n == 128 ? MACKO_NM_PATH_AUTO : MACKO_NM_PATH_SP24WG;
            f.nm_cfg = run.second;
            ASSERT_EQ(macko_plan_override(h, A.A, N, &f), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            EXPECT_GT(macko_nm_sp24_wg_splits(sh.rows, sh.cols, n, h->props.sm_count, INT64_MAX), 1);
            split_k_checks<P>(h, blas, m, A.A, n, seed, nanb, x, 8, n % 2 ? 3 : 1);
            if (testing::Test::HasFailure())
                return;
        }
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        ASSERT_EQ(macko_plan_override(h, A.A, N, &f), MACKO_STATUS_SUCCESS);
        split_k_bitwise<P>(h, A.A, sh.rows, sh.cols, 130, ++seed);
    }
    /* tiles that fill more than half the wave: one split */
    EXPECT_EQ(macko_nm_sp24_wg_splits(128 * (int64_t)h->props.sm_count, 4096, 128, h->props.sm_count, INT64_MAX), 1);
}

/* SP24's split K at small n (macko_nm_sp24_splits: about four blocks per SM and at most about 40 k-steps per split up
 * to 32 columns): the blocks of a tile write their fp32 partials to the handle's workspace and the finishing launch
 * adds them in split order and writes C. Checked for fp16 and bf16, SP24 forced, where the rule splits (asserted):
 * n = 1, 8, 33 and 100 (two column tiles of 64) against the reference and cuBLAS, alpha and beta (NaN in C for
 * beta = 0) in both pointer modes, odd ldb / ldc, alpha = 0 with NaN in B, Inf / NaN in B at every column the matrix
 * does not store, Inf at a stored column (the exact row sum where the total is NaN); then repeated calls, a CUDA graph
 * replay and a call after it give the same bits. */
template <class P> void sp24_split_k(macko_handle_t h, gt::Blas *blas)
{
    const Pattern pat{2, 4, 1};
    uint64_t seed = 9900;
    struct Shape {
        int64_t rows, cols;
    };
    for (const Shape &sh : {Shape{300, 4000}, Shape{129, 2056}}) {
        SCOPED_TRACE(testing::Message() << sh.rows << "x" << sh.cols);
        const mt::Dense m = nm_matrix(sh.rows, sh.cols, pat, ++seed, kEmptyRows | kFullGroups, P::type);
        gt::Mat A;
        if (!make_nm<P>(h, m, pat, A))
            return;
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        f.nm_path = MACKO_NM_PATH_SP24;
        const std::vector<float> nanb = all_nan(sh.cols), x = off_grid_nonfinite(sh.cols, false, ++seed);
        for (int64_t n : {1, 8, 33, 100}) {
            /* up to 8 columns the automatic configuration is a direct one (no split K): the staged configuration 9 */
            const int cfg = n <= 8 ? 9 : -1;
            SCOPED_TRACE(testing::Message() << "n=" << n << " configuration " << cfg);
            f.nm_cfg = cfg + 1;
            ASSERT_EQ(macko_plan_override(h, A.A, N, &f), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            EXPECT_GT(macko_nm_sp24_splits(sh.rows, sh.cols, n, cfg, h->props.sm_count, INT64_MAX), 1);
            split_k_checks<P>(h, blas, m, A.A, n, seed, nanb, x, n % 2 ? 3 : 1, 1);
            if (testing::Test::HasFailure())
                return;
        }
        f.nm_cfg = 10;
        ASSERT_EQ(macko_plan_override(h, A.A, N, &f), MACKO_STATUS_SUCCESS);
        split_k_bitwise<P>(h, A.A, sh.rows, sh.cols, 8, ++seed);
        f = MACKO_PLAN_FORCED_NONE;
        ASSERT_EQ(macko_plan_override(h, A.A, N, &f), MACKO_STATUS_SUCCESS);
    }
}

class GpuNmSp24 : public conf::GpuSuite {};
TEST_F(GpuNmSp24, SplitK)
{
    sp24_split_k<conf::HP>(handle(), blas());
    if (HasFailure())
        return;
    sp24_split_k<conf::BP>(handle(), blas());
}

/* SP24's direct configurations (macko_nm_sp24_config from 11; automatic up to 8 columns): fragments straight from
 * global memory into registers, K over the warps of a block (macko_nm_sp24_splits gives the warps; asserted above 1
 * where the shape has k-steps for them). Each configuration forced, fp16 and bf16, on shapes with one row, a partial
 * band, a partial last k-step, one k-step, many bands and long rows, n = 1..9 and 17 (partial and several column
 * tiles of 8): against the reference and cuBLAS with alpha / beta in both pointer modes (NaN in C for beta = 0), odd
 * ldb (B's fragments loaded 2 bytes at a time) and element stride 2, alpha = 0 with NaN in B, Inf / NaN in B at the
 * unstored columns, Inf at a stored column; repeated calls, a graph replay and a call after it give the same bits. */
template <class P> void sp24_direct(macko_handle_t h, gt::Blas *blas)
{
    const Pattern pat{2, 4, 1};
    uint64_t seed = 9950;
    struct Shape {
        int64_t rows, cols;
        bool many_warps;
    };
    const int first = 11, count = macko_nm_sp24_configs() - first;
    ASSERT_GE(count, 1);
    EXPECT_EQ(macko_nm_sp24_config(1), first);
    EXPECT_GE(macko_nm_sp24_config(8), first);
    EXPECT_LT(macko_nm_sp24_config(9), first);
    for (const Shape &sh : {Shape{1, 33, false}, Shape{7, 4097, true}, Shape{300, 4000, true}, Shape{129, 20, false},
                            Shape{4097, 257, false}}) {
        const mt::Dense m = nm_matrix(sh.rows, sh.cols, pat, ++seed, kEmptyRows | kFullGroups, P::type);
        gt::Mat A;
        if (!make_nm<P>(h, m, pat, A))
            return;
        const std::vector<float> nanb = all_nan(sh.cols), x = off_grid_nonfinite(sh.cols, false, ++seed);
        for (int cfg = first; cfg < first + count; cfg++) {
            SCOPED_TRACE(testing::Message() << sh.rows << "x" << sh.cols << " configuration " << cfg);
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            f.nm_path = MACKO_NM_PATH_SP24;
            f.nm_cfg = cfg + 1;
            ASSERT_EQ(macko_plan_override(h, A.A, N, &f), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            if (sh.many_warps) {
                EXPECT_GT(macko_nm_sp24_splits(sh.rows, sh.cols, 1, cfg, h->props.sm_count, INT64_MAX), 1);
            }
            int variant = 0;
            for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}) {
                SCOPED_TRACE(testing::Message() << "n=" << n);
                conf::check_product<P>(h, blas, m, A.A, turn_case(n, variant++, ++seed, sh.rows, sh.cols));
                if (testing::Test::HasFailure())
                    return;
            }
            for (int64_t n : {1, 8})
                split_k_checks<P>(h, blas, m, A.A, n, seed, nanb, x, n == 1 ? 1 : 0, 1);
            split_k_bitwise<P>(h, A.A, sh.rows, sh.cols, 1, ++seed);
            split_k_bitwise<P>(h, A.A, sh.rows, sh.cols, 9, ++seed);
            if (testing::Test::HasFailure())
                return;
        }
    }
}

TEST_F(GpuNmSp24, DirectConfigurations)
{
    sp24_direct<conf::HP>(handle(), blas());
    if (HasFailure())
        return;
    sp24_direct<conf::BP>(handle(), blas());
}

TEST_F(GpuNmWg, SplitK)
{
    if (!runs_wg(handle()))
        GTEST_SKIP() << "no wgmma.sp on this device or build";
    sp24wg_split_k<conf::HP>(handle(), blas());
    if (HasFailure())
        return;
    sp24wg_split_k<conf::BP>(handle(), blas());
}

} // namespace
