/* The QUANT kind on the host: macko_mat_create_quant_host (round trip, every content fault, bad arguments),
 * macko_mat_get_quant_host, macko_mat_get_kind, the dense export against the reference decode of src/quant.h, the
 * storage numbers, and the MACKO-only routines' refusals. */
#include "bad_args.h"
#include "common.h"
#include "macko_internal.h"
#include "quant_ref.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using qt::QArrays;

namespace
{

const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(uintptr_t(0xBAD0));
constexpr macko_status_t kInv = MACKO_STATUS_INVALID_VALUE;
constexpr macko_status_t kNS = MACKO_STATUS_NOT_SUPPORTED;

struct Owned {
    macko_mat_t A = nullptr;
    ~Owned() { macko_mat_destroy(A); }
};

const int64_t kShapes[][2] = {{1, 1},  {7, 33},  {17, 16}, {16, 16},   {33, 4097}, {32, 48},
                              {40, 70}, {0, 0},   {0, 5},   {5, 0},     {1, 65536}, {100, 17}};

/* The import of a keeps its arrays byte for byte and describes them. */
void expect_round_trip(const QArrays &a, const std::string &what)
{
    SCOPED_TRACE(what);
    Owned m;
    ASSERT_EQ(qt::create(a, &m.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(macko_get_last_error_position(), 0);
    EXPECT_STREQ(macko_get_last_error_message(), "");
    /* poison values inside the enum's range: reading any other value is undefined behaviour (UBSan's enum check) */
    macko_kind_t kind = MACKO_KIND_MACKO;
    ASSERT_EQ(macko_mat_get_kind(m.A, &kind), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(kind, MACKO_KIND_QUANT);
    int bits = 0;
    const uint64_t *w = nullptr;
    const int32_t *rp = nullptr;
    const uint32_t *e = nullptr;
    int64_t wc = -1, out = -1;
    ASSERT_EQ(macko_mat_get_quant_host(m.A, &bits, &w, &wc, &out, &rp, &e), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bits, 3);
    ASSERT_EQ(wc, (int64_t)a.words.size());
    ASSERT_EQ(out, a.outliers());
    ASSERT_NE(w, nullptr); /* valid pointers also for empty arrays */
    ASSERT_NE(rp, nullptr);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ((uintptr_t)w % 64, 0u);
    EXPECT_NE((const void *)w, (const void *)a.words.data()); /* a copy */
    /* data() of an empty vector may be NULL, which memcmp must not get even for 0 bytes */
    if (!a.words.empty()) {
        EXPECT_EQ(std::memcmp(w, a.words.data(), a.words.size() * 8), 0);
    }
    EXPECT_EQ(std::memcmp(rp, a.optr.data(), a.optr.size() * 4), 0);
    if (!a.oent.empty()) {
        EXPECT_EQ(std::memcmp(e, a.oent.data(), a.oent.size() * 4), 0);
    }

    int64_t rows = -1, cols = -1, nnz = -1;
    macko_datatype_t type = MACKO_R_64F;
    ASSERT_EQ(macko_mat_get_info(m.A, &rows, &cols, &nnz, &type), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rows, a.rows);
    EXPECT_EQ(cols, a.cols);
    EXPECT_EQ(type, MACKO_R_16F);
    EXPECT_EQ(nnz, qt::nnz(a));

    int64_t bytes = -1, entries = -1, ep = -1;
    double effd = -1;
    ASSERT_EQ(macko_mat_get_storage(m.A, &bytes, &entries, &ep, &effd), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bytes, (int64_t)a.words.size() * 8 + (a.rows + 1) * 4 + a.outliers() * 4);
    EXPECT_EQ(entries, a.outliers());
    EXPECT_EQ(ep, a.outliers());
    if (a.rows * a.cols > 0)
        EXPECT_DOUBLE_EQ(effd, (double)bytes / (double)(a.rows * a.cols * 2));
    else
        EXPECT_EQ(effd, 0.0);

    /* The dense export, both orders, with leading dimensions past the matrix: junk there stays. */
    const std::vector<uint16_t> ref = qt::decode_half(a);
    for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
        const bool rm = order == MACKO_ORDER_ROW;
        const int64_t inner = rm ? a.cols : a.rows, outer = rm ? a.rows : a.cols;
        const int64_t ld = inner + 3;
        std::vector<uint16_t> d((size_t)(std::max<int64_t>(outer, 1) * ld), 0xBEEF);
        ASSERT_EQ(macko_mat_export_dense_host(m.A, d.data(), ld, order), MACKO_STATUS_SUCCESS);
        int64_t bad = 0;
        for (int64_t i = 0; i < outer; i++)
            for (int64_t j = 0; j < ld; j++) {
                const uint16_t got = d[(size_t)(i * ld + j)];
                const int64_t r = order == MACKO_ORDER_ROW ? i : j, c = order == MACKO_ORDER_ROW ? j : i;
                const uint16_t want = j < inner ? ref[(size_t)(r * a.cols + c)] : (uint16_t)0xBEEF;
                bad += got != want;
            }
        EXPECT_EQ(bad, 0) << (order == MACKO_ORDER_ROW ? "row-major" : "column-major");
    }
}

} // namespace

TEST(Quant, ImportRoundTripOddShapes)
{
    uint64_t seed = 1;
    for (const auto &s : kShapes)
        for (double density : {0.0, 0.03, 0.5})
            expect_round_trip(qt::random_arrays(s[0], s[1], density, seed++),
                              std::to_string(s[0]) + " x " + std::to_string(s[1]) + ", outlier density " +
                                  std::to_string(density));
}

/* Weights that are all zero, outliers that cancel their weight and outliers on zero weights: nnz counts the sum. */
TEST(Quant, NnzCountsWeightPlusOutlier)
{
    QArrays a;
    a.rows = 3;
    a.cols = 20;
    a.words.assign(2 * 16, 0); /* statistics 0: every weight decodes to 0 */
    a.optr = {0, 2, 3, 3};
    a.oent = {macko_quant_outlier(0, 0x3C00), macko_quant_outlier(19, 0xBC00), macko_quant_outlier(5, 0x0001)};
    Owned m;
    ASSERT_EQ(qt::create(a, &m.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    int64_t nnz = -1;
    ASSERT_EQ(macko_mat_get_info(m.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, 3);

    /* One tile whose weights are all 1 (s = 1, m = 0, code 1), one outlier cancelling one of them. */
    QArrays b;
    b.rows = 2;
    b.cols = 16;
    unsigned q[16][16] = {}, sq[16] = {}, zq[16] = {};
    for (int i = 0; i < 2; i++) {
        sq[i] = 1;
        for (int k = 0; k < 16; k++)
            q[i][k] = 1;
    }
    b.words.assign(16, 0);
    qt::put_tile(b, 0, 0, qt::stats_of(0x3C00, 0, 0x3C00, 0), q, sq, zq);
    b.optr = {0, 1, 1};
    b.oent = {macko_quant_outlier(7, 0xBC00)};
    ASSERT_EQ(qt::weight(b, 1, 3), 0x3C00);
    Owned mb;
    ASSERT_EQ(qt::create(b, &mb.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    ASSERT_EQ(macko_mat_get_info(mb.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, 31);
    EXPECT_EQ(qt::nnz(b), 31);
}

namespace
{

/* a, broken by `spoil`, must be refused with INVALID_VALUE at pos and a message that contains each of `parts`. */
void expect_refused(const QArrays &good, const std::function<void(QArrays &)> &spoil, int pos,
                    std::vector<std::string> parts, const std::string &what)
{
    SCOPED_TRACE(what);
    QArrays a = good;
    spoil(a);
    macko_mat_t A = kPoison;
    EXPECT_EQ(qt::create(a, &A), kInv);
    EXPECT_EQ(macko_get_last_error_position(), pos);
    const std::string msg = macko_get_last_error_message();
    const std::string head = "macko_mat_create_quant_host: argument " + std::to_string(pos) + ": ";
    EXPECT_EQ(msg.compare(0, head.size(), head), 0) << msg;
    for (const std::string &p : parts)
        EXPECT_NE(msg.find(p), std::string::npos) << "no \"" << p << "\" in: " << msg;
    EXPECT_EQ(A, kPoison);
}

/* 17 x 33 (2 bands, 3 tile columns: padding rows 17..31, padding columns 33..47) with outliers in rows 0, 1, 2. */
QArrays faults_base()
{
    QArrays a = qt::random_arrays(17, 33, 0.0, 99);
    a.optr = {0, 2, 3, 5};
    a.optr.resize(18, 5);
    a.oent = {macko_quant_outlier(3, 0x3C00), macko_quant_outlier(32, 0x4000), macko_quant_outlier(0, 0xB800),
              macko_quant_outlier(10, 0x0400), macko_quant_outlier(11, 0x7BFF)};
    return a;
}

/* Sets the whole tile (b, t) to statistics st with every row inside the matrix given codes sq, zq (weights 0..7). */
void set_tile(QArrays &a, int64_t b, int64_t t, uint64_t st, unsigned sq_in, unsigned zq_in, unsigned zq_pad = 0)
{
    unsigned q[16][16] = {}, sq[16] = {}, zq[16] = {};
    for (int i = 0; i < 16; i++) {
        const bool inside = 16 * b + i < a.rows;
        sq[i] = inside ? sq_in : 0;
        zq[i] = inside ? zq_in : zq_pad;
        for (int k = 0; k < 16 && inside && 16 * t + k < a.cols; k++)
            q[i][k] = (unsigned)(k % 8);
    }
    qt::put_tile(a, b, t, st, q, sq, zq);
}

} // namespace

TEST(Quant, ImportRefusesBadWords)
{
    const QArrays g = faults_base();
    {
        Owned m;
        ASSERT_EQ(qt::create(g, &m.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    }
    expect_refused(g, [](QArrays &a) { a.word(1, 2, 0) |= UINT64_C(1) << 15; }, 5,
                   {"words: word 80 (row 16, tile column 2): bits 15, 31 and 60..63 must be zero"}, "bit 15");
    expect_refused(g, [](QArrays &a) { a.word(0, 1, 4) |= UINT64_C(1) << 31; }, 5, {"(row 4, tile column 1)"},
                   "bit 31");
    /* Two faults: the first in storage order (band 0, tile column 2, before band 1) is named. */
    expect_refused(g,
                   [](QArrays &a) {
                       a.word(1, 0, 0) |= UINT64_C(1) << 31;
                       a.word(0, 2, 9) |= UINT64_C(1) << 63;
                   },
                   5, {"word 41 (row 9, tile column 2)", "bits 15, 31 and 60..63"}, "bit 63, and a later bit 31");
    expect_refused(g, [](QArrays &a) { a.word(1, 0, 5) |= UINT64_C(2) << macko_quant_qpos(11); }, 5,
                   {"(row 21, tile column 0): a padding row (rows = 17) must have weight, scale and zero codes 0"},
                   "a weight code of a padding row");
    expect_refused(g, [](QArrays &a) { a.word(1, 1, 15) |= UINT64_C(1) << MACKO_QUANT_SQ_SHIFT; }, 5,
                   {"(row 31, tile column 1): a padding row"}, "the scale code of a padding row");
    expect_refused(g, [](QArrays &a) { a.word(1, 2, 1) |= UINT64_C(4) << MACKO_QUANT_ZQ_SHIFT; }, 5,
                   {"(row 17, tile column 2): a padding row"}, "the zero code of a padding row");
    expect_refused(g, [](QArrays &a) { a.word(0, 2, 2) |= UINT64_C(5) << macko_quant_qpos(1); }, 5,
                   {"(row 2, tile column 2): weight 1 (column 33, past cols = 33) has code 5; padding codes must be 0"},
                   "a padding column's code");
    expect_refused(g, [](QArrays &a) { a.word(0, 2, 0) |= UINT64_C(1) << macko_quant_qpos(15); }, 5,
                   {"(row 0, tile column 2): weight 15 (column 47"}, "the last padding column");
    /* s = (sq - z_s) * s_s with s_s = Inf. */
    expect_refused(g, [](QArrays &a) { set_tile(a, 0, 1, qt::stats_of(0x7C00, 0, 0x3C00, 0), 1, 0); }, 5,
                   {"(row 0, tile column 1): the scale s decodes to inf"}, "an infinite scale");
    expect_refused(g, [](QArrays &a) { set_tile(a, 0, 1, qt::stats_of(0x7E00, 0, 0x3C00, 0), 1, 0); }, 5,
                   {"(row 0, tile column 1): the scale s decodes to"}, "a NaN scale");
    /* m = z * s with z = 2 * 65504. */
    expect_refused(g, [](QArrays &a) { set_tile(a, 0, 0, qt::stats_of(0x3C00, 0, 0x7BFF, 0), 1, 2); }, 5,
                   {"(row 0, tile column 0): the offset m decodes to inf"}, "an infinite offset");
    /* s = 16384, m = 0: w(7) = 114688. */
    expect_refused(g, [](QArrays &a) { set_tile(a, 0, 0, qt::stats_of(0x7400, 0, 0x3C00, 0), 1, 0); }, 5,
                   {"(row 0, tile column 0): weight code 7 decodes to inf"}, "an infinite weight");
    /* The padding rows of band 1 (codes 0) decode s = 1, z = -2 * 65504; row 16 (sq = 1, zq = 2) s = 2, z = 0. */
    expect_refused(g, [](QArrays &a) { set_tile(a, 1, 0, qt::stats_of(0x3C00, 0xBC00, 0x7BFF, 0x4000), 1, 2); }, 5,
                   {"(row 17, tile column 0): the offset m decodes to -inf"}, "an infinite offset in a padding row");
    /* Words are checked before the outliers. */
    expect_refused(g,
                   [](QArrays &a) {
                       a.word(1, 2, 15) |= UINT64_C(1) << 62;
                       a.optr[0] = 3;
                       a.oent[0] = 0;
                   },
                   5, {"(row 31, tile column 2)"}, "words and outliers bad");
}

TEST(Quant, ImportRefusesBadOutliers)
{
    const QArrays g = faults_base();
    expect_refused(g, [](QArrays &a) { a.optr[0] = 1; }, 7,
                   {"outlier_row_ptr: row 0: outlier_row_ptr[0] is 1; it must be 0"}, "row_ptr[0]");
    expect_refused(g, [](QArrays &a) { a.optr[2] = 1; }, 7,
                   {"outlier_row_ptr: row 1: outlier_row_ptr decreases (outlier_row_ptr[2] = 1 < "
                    "outlier_row_ptr[1] = 2)"},
                   "decreasing row_ptr (the first decrease named)");
    expect_refused(g, [](QArrays &a) { a.optr[5] = 6; }, 7,
                   {"outlier_row_ptr: row 4: outlier_row_ptr[5] = 6 exceeds outliers = 5"}, "row_ptr past outliers");
    expect_refused(g, [](QArrays &a) { a.optr[17] = 4; }, 7,
                   {"outlier_row_ptr: row 16: outlier_row_ptr decreases"}, "row_ptr ending low");
    expect_refused(g, [](QArrays &a) { a.oent.push_back(macko_quant_outlier(1, 0x3C00)); }, 7,
                   {"outlier_row_ptr: row 16: outlier_row_ptr[rows] is 5; it must be outliers = 6"},
                   "row_ptr[rows] != outliers");
    expect_refused(g, [](QArrays &a) { a.oent[1] = macko_quant_outlier(33, 0x4000); }, 8,
                   {"outlier_entries: row 0, outlier 1: column 33 is outside [0, cols = 33)"}, "column past cols");
    expect_refused(g, [](QArrays &a) { a.oent[4] = macko_quant_outlier(10, 0x3C00); }, 8,
                   {"outlier_entries: row 2, outlier 4: column 10 does not follow the row's previous column 10"},
                   "a repeated column");
    expect_refused(g, [](QArrays &a) { a.oent[4] = macko_quant_outlier(9, 0x3C00); }, 8,
                   {"row 2, outlier 4: column 9 does not follow"}, "a decreasing column");
    const std::pair<uint16_t, const char *> values[] = {
        {0x7C00, "value 0x7c00 (column 32) is not finite"}, {0xFC00, "value 0xfc00 (column 32) is not finite"},
        {0x7E01, "value 0x7e01 (column 32) is not finite"}, {0x0000, "value 0x0000 (column 32) is zero"},
        {0x8000, "value 0x8000 (column 32) is zero"}};
    for (const auto &v : values)
        expect_refused(g, [&](QArrays &a) { a.oent[1] = macko_quant_outlier(32, v.first); }, 8,
                       {std::string("outlier_entries: row 0, outlier 1: ") + v.second}, v.second);
    /* Row pointers are checked completely before any entry. */
    expect_refused(g,
                   [](QArrays &a) {
                       a.oent[0] = macko_quant_outlier(40, 0);
                       a.optr[17] = 9;
                   },
                   7, {"outlier_row_ptr"}, "entries and row_ptr bad");
}

TEST(Quant, ImportBadArguments)
{
    const QArrays g = faults_base();
    macko_mat_t out = kPoison;
    const ba::Rules r{"macko_mat_create_quant_host", [&out](const std::string &what) {
                          EXPECT_EQ(out, kPoison) << what << ": *A was written";
                      }};
    const ba::Arg<macko_mat_t *> A{"A", &out, {{nullptr, kInv, "NULL"}}};
    const ba::Arg<int64_t> cols{"cols",
                                g.cols,
                                {{-1, kInv, "-1"},
                                 {INT64_C(1) << 57, kInv, "2^57"},
                                 {65537, kNS, "65537"},
                                 {INT64_C(1) << 40, kNS, "2^40"}}};
    const ba::Arg<int> bits{"bits", 3, {{2, kNS, "2"}, {4, kNS, "4"}, {0, kNS, "0"}, {-3, kNS, "-3"}}};
    ba::walk(r, macko_mat_create_quant_host, A, ba::size("rows", g.rows, {-1, INT64_C(1) << 57}), cols, bits,
             ba::array("words", (const uint64_t *)g.words.data()),
             ba::size("outliers", g.outliers(), {-1, INT64_C(1) << 31, INT64_C(1) << 57}),
             ba::array("outlier_row_ptr", (const int32_t *)g.optr.data()),
             ba::array("outlier_entries", (const uint32_t *)g.oent.data()));

    const uint64_t *w = g.words.data();
    const int32_t *rp = g.optr.data();
    const uint32_t *e = g.oent.data();
    /* 2^56 rows of 65536 columns: 2^68 words. */
    ba::refused(r, macko_mat_create_quant_host(&out, INT64_C(1) << 56, 65536, 3, w, 5, rp, e), kInv, 3, "cols",
                "more than 2^56 words");
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_quant_host: argument 3: rows x cols "
                                                 "(72057594037927936 x 65536) needs more than 2^56 words");
    ba::refused(r, macko_mat_create_quant_host(&out, 17, 33, 4, nullptr, -1, nullptr, nullptr), kNS, 4, "bits",
                "bits and everything after");
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_quant_host: argument 4: bits is 4; only 3 is supported");
    ba::refused(r, macko_mat_create_quant_host(&out, 17, 70000, 3, nullptr, -1, nullptr, nullptr), kNS, 3, "cols",
                "cols and everything after");
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_quant_host: argument 3: cols is 70000; the QUANT kind holds at most 65536 columns");
    ba::refused(r, macko_mat_create_quant_host(&out, 17, 33, 3, nullptr, 5, rp, e), kInv, 5, "words", "words NULL");
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_quant_host: argument 5: words is NULL but 16*ceil(rows/16)*ceil(cols/16) = 96");
    ba::refused(r, macko_mat_create_quant_host(&out, 17, 33, 3, w, 5, nullptr, e), kInv, 7, "outlier_row_ptr",
                "outlier_row_ptr NULL");
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_quant_host: argument 7: outlier_row_ptr is NULL but rows + 1 = 18");

    /* Empty arrays may be NULL: rows = 0 or cols = 0 has no words, no outliers. */
    const int32_t zeros[6] = {0, 0, 0, 0, 0, 0};
    for (auto rc : {std::pair<int64_t, int64_t>{0, 0}, {0, 9}, {5, 0}}) {
        Owned m;
        ASSERT_EQ(macko_mat_create_quant_host(&m.A, rc.first, rc.second, 3, nullptr, 0, zeros, nullptr),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        int64_t nnz = -1, wc = -1;
        const uint64_t *wp = nullptr;
        EXPECT_EQ(macko_mat_get_info(m.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(nnz, 0);
        EXPECT_EQ(macko_mat_get_quant_host(m.A, nullptr, &wp, &wc, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(wc, 0);
        EXPECT_NE(wp, nullptr);
    }
}

/* get_quant_host, get_kind and the MACKO-only routines with matrices of each kind. */
TEST(Quant, KindQueriesAndRefusals)
{
    const QArrays g = faults_base();
    Owned q, k;
    ASSERT_EQ(qt::create(g, &q.A), MACKO_STATUS_SUCCESS);
    std::vector<uint16_t> ones(12, 0x3C00);
    ASSERT_EQ(macko_mat_create_dense_host(&k.A, 3, 4, MACKO_R_16F, ones.data(), 4, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    /* poison values inside the enum's range: reading any other value is undefined behaviour (UBSan's enum check) */
    macko_kind_t kind = MACKO_KIND_QUANT;
    EXPECT_EQ(macko_mat_get_kind(k.A, &kind), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(kind, MACKO_KIND_MACKO);
    kind = MACKO_KIND_QUANT;
    EXPECT_EQ(macko_mat_get_kind(nullptr, &kind), kInv);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_kind: argument 1: A is NULL");
    EXPECT_EQ(macko_mat_get_kind(q.A, nullptr), kInv);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_kind: argument 2: kind is NULL");
    EXPECT_EQ(kind, MACKO_KIND_QUANT);

    /* get_quant_host: NULL, a MACKO matrix, no host copy; the outputs untouched. */
    int bits = 77;
    const uint64_t *w = reinterpret_cast<const uint64_t *>(&bits);
    int64_t wc = 77, no = 77;
    const int32_t *rp = nullptr;
    const uint32_t *e = nullptr;
    const auto untouched = [&] {
        EXPECT_EQ(bits, 77);
        EXPECT_EQ((const void *)w, (const void *)&bits);
        EXPECT_EQ(wc, 77);
        EXPECT_EQ(no, 77);
        EXPECT_EQ(rp, nullptr);
        EXPECT_EQ(e, nullptr);
    };
    EXPECT_EQ(macko_mat_get_quant_host(nullptr, &bits, &w, &wc, &no, &rp, &e), kInv);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    untouched();
    EXPECT_EQ(macko_mat_get_quant_host(k.A, &bits, &w, &wc, &no, &rp, &e), kNS);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_quant_host: argument 1: A is a MACKO_KIND_MACKO "
                                                 "matrix; this routine takes MACKO_KIND_QUANT matrices only");
    untouched();
    EXPECT_EQ(macko_mat_get_quant_host(q.A, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
              MACKO_STATUS_SUCCESS);

    /* The MACKO-only routines refuse a QUANT matrix at A's position. */
    const void *v = &bits;
    EXPECT_EQ(macko_mat_get_macko_host(q.A, &v, nullptr, nullptr, nullptr, nullptr, nullptr), kNS);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_macko_host: argument 1: A is a MACKO_KIND_QUANT "
                                                 "matrix; this routine takes MACKO_KIND_MACKO matrices only");
    EXPECT_EQ(v, (const void *)&bits);
    std::vector<int32_t> orp(18, 5), oci(600, 5);
    std::vector<uint16_t> ov(600, 5);
    EXPECT_EQ(macko_mat_export_csr_host(q.A, orp.data(), oci.data(), ov.data(), MACKO_INDEX_32I,
                                        MACKO_INDEX_BASE_ZERO),
              kNS);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_export_csr_host: argument 1: A is a MACKO_KIND_QUANT "
                                                 "matrix; this routine takes MACKO_KIND_MACKO and MACKO_KIND_NM "
                                                 "matrices only");
    EXPECT_EQ(orp, std::vector<int32_t>(18, 5));
    /* The kind is judged before the other arguments. */
    EXPECT_EQ(macko_mat_export_csr_host(q.A, nullptr, nullptr, nullptr, (macko_indextype_t)0, MACKO_INDEX_BASE_ZERO),
              kNS);
    EXPECT_EQ(macko_get_last_error_position(), 1);

    /* Without the host copy (as after macko_mat_release_host): NOT_INITIALIZED; info and storage still answer. */
    macko_host_arrays_free(q.A);
    EXPECT_EQ(q.A->q.host.words, nullptr);
    EXPECT_EQ(macko_mat_get_quant_host(q.A, &bits, &w, &wc, &no, &rp, &e), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    untouched();
    std::vector<uint16_t> d(17 * 33, 0xAAAA);
    EXPECT_EQ(macko_mat_export_dense_host(q.A, d.data(), 33, MACKO_ORDER_ROW), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(d, std::vector<uint16_t>(17 * 33, 0xAAAA));
    int64_t rows = 0, bytes = 0;
    EXPECT_EQ(macko_mat_get_info(q.A, &rows, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rows, 17);
    EXPECT_EQ(macko_mat_get_storage(q.A, &bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bytes, 96 * 8 + 18 * 4 + 5 * 4);
}

/* get_storage follows the outlier layout held on the device (set at upload: here by hand). */
TEST(Quant, StorageOfTheTileColumnLayout)
{
    const QArrays g = qt::random_arrays(40, 70, 0.02, 5);
    Owned q;
    ASSERT_EQ(qt::create(g, &q.A), MACKO_STATUS_SUCCESS);
    q.A->q.layout = MACKO_QOUT_TCOL;
    q.A->q.slots = 96;
    int64_t bytes = -1, entries = -1, ep = -1;
    double effd = -1;
    ASSERT_EQ(macko_mat_get_storage(q.A, &bytes, &entries, &ep, &effd), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bytes, 3 * 5 * 16 * 8 + (3 + 1) * 4 + 96 * 4);
    EXPECT_EQ(entries, g.outliers());
    EXPECT_EQ(ep, 96);
    EXPECT_DOUBLE_EQ(effd, (double)bytes / (40.0 * 70 * 2));
}

/* Random arrays, mostly invalid, of exactly the documented sizes: SUCCESS or INVALID_VALUE, never a read outside
 * them (run under ASan to see that); what is accepted exports as the reference decodes it. */
TEST(Quant, ImportRandomArraysAreSafe)
{
    std::mt19937_64 g(77);
    int accepted = 0, rejected = 0;
    for (int it = 0; it < 1500; it++) {
        QArrays a = qt::random_arrays((int64_t)(g() % 40), (int64_t)(g() % 40), 0.05, g());
        switch (g() % 5) {
        case 0: /* random bits in a few words */
            for (int j = 0; j < 3 && !a.words.empty(); j++)
                a.words[g() % a.words.size()] ^= g() & g();
            break;
        case 1: /* a random row pointer */
            a.optr[g() % a.optr.size()] = (int32_t)(g() % 9) - 2;
            break;
        case 2: /* a random entry */
            if (!a.oent.empty())
                a.oent[g() % a.oent.size()] = (uint32_t)g();
            break;
        case 3: /* random statistics pieces */
            for (int j = 0; j < 4 && !a.words.empty(); j++)
                a.words[g() % a.words.size()] ^= (g() & 15) << MACKO_QUANT_PIECE_SHIFT;
            break;
        default:
            break;
        }
        Owned m;
        const macko_status_t st = qt::create(a, &m.A);
        ASSERT_TRUE(st == MACKO_STATUS_SUCCESS || st == kInv) << macko_get_status_name(st);
        if (st != MACKO_STATUS_SUCCESS) {
            rejected++;
            continue;
        }
        accepted++;
        std::vector<uint16_t> d((size_t)(a.rows * a.cols) + 1);
        ASSERT_EQ(macko_mat_export_dense_host(m.A, d.data(), std::max<int64_t>(a.cols, 1), MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        d.pop_back();
        ASSERT_EQ(d, qt::decode_half(a)) << it;
        int64_t nnz = -1;
        ASSERT_EQ(macko_mat_get_info(m.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(nnz, qt::nnz(a));
    }
    EXPECT_GT(accepted, 300);
    EXPECT_GT(rejected, 300);
}
