/* The N:M kind on the host: macko_mat_create_nm_dense_host against the reference of nm_ref.h (every supported pattern,
 * every type, odd shapes, both orders, special values), the detection (against the reference and by hand, ties
 * included), the refusals (the first offending row and window), macko_mat_get_nm_host, the exports and the storage
 * numbers. The importer and the argument checks: test_nm_import.cpp; persistence: test_serialize_nm.cpp. */
#include "common.h"
#include "nm_ref.h"

#include <cstring>
#include <string>
#include <vector>

namespace
{

const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(uintptr_t(0xBAD0));

struct Owned {
    macko_mat_t A = nullptr;
    ~Owned() { macko_mat_destroy(A); }
};

std::string pattern_name(int n, int m, int v) { return std::to_string(n) + ":" + std::to_string(m) + " v" + std::to_string(v); }

/* The library's encoding of d in `order` (leading dimension: the inner size + 3). */
macko_status_t create(const nmr::Dense &d, macko_order_t order, int n, int m, int v, macko_mat_t *A)
{
    const int64_t ld = (order == MACKO_ORDER_ROW ? d.cols : d.rows) + 3;
    const std::vector<uint8_t> b = d.bytes(order, ld);
    return macko_mat_create_nm_dense_host(A, d.rows, d.cols, d.type, b.data(), ld, order, n, m, v);
}

/* A holds exactly the reference encoding e of d, and everything A reports follows from it. */
void expect_encoding(macko_mat_t A, const nmr::Enc &e, const nmr::Dense &d)
{
    ASSERT_TRUE(e.ok);
    int n = -1, m = -1, v = -1;
    const void *vals = nullptr;
    const uint8_t *pos = nullptr;
    ASSERT_EQ(macko_mat_get_nm_host(A, &n, &m, &v, &vals, &pos), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(pattern_name(n, m, v), pattern_name(e.n, e.m, e.v));
    ASSERT_NE(vals, nullptr);
    ASSERT_NE(pos, nullptr);
    EXPECT_EQ((uintptr_t)vals % 64, 0u);
    EXPECT_EQ((uintptr_t)pos % 64, 0u);
    if (!e.values.empty()) {
        EXPECT_EQ(std::memcmp(vals, e.values.data(), e.values.size()), 0) << "values differ";
        EXPECT_EQ(std::memcmp(pos, e.positions.data(), e.positions.size()), 0) << "positions differ";
    }

    macko_kind_t kind = MACKO_KIND_MACKO;
    ASSERT_EQ(macko_mat_get_kind(A, &kind), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(kind, MACKO_KIND_NM);
    int64_t rows = -1, cols = -1, nnz = -1;
    macko_datatype_t type = MACKO_R_32F;
    ASSERT_EQ(macko_mat_get_info(A, &rows, &cols, &nnz, &type), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rows, d.rows);
    EXPECT_EQ(cols, d.cols);
    EXPECT_EQ(nnz, d.nnz());
    EXPECT_EQ(type, d.type);

    const size_t es = nmr::es_of(d.type);
    const int64_t kept = (d.cols + e.m - 1) / e.m * e.n;
    int64_t bytes = -1, entries = -1, ep = -1;
    double effd = -1;
    ASSERT_EQ(macko_mat_get_storage(A, &bytes, &entries, &ep, &effd), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bytes, (int64_t)(e.values.size() + e.positions.size()));
    EXPECT_EQ(bytes, d.rows * kept * (int64_t)es + (d.rows + e.v - 1) / e.v * kept);
    EXPECT_EQ(entries, d.rows * kept);
    EXPECT_EQ(ep, d.rows * kept);
    if (d.rows * d.cols > 0) {
        EXPECT_DOUBLE_EQ(effd, (double)bytes / (double)(d.rows * d.cols * (int64_t)es));
    } else {
        EXPECT_EQ(effd, 0.0);
    }

    /* dense export, both orders, ld past the matrix: zeros (-0 included) come back as +0, junk stays */
    for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
        const bool rm = order == MACKO_ORDER_ROW;
        const int64_t inner = rm ? d.cols : d.rows, outer = rm ? d.rows : d.cols, ld = inner + 2;
        std::vector<uint8_t> out((size_t)(std::max<int64_t>(outer, 1) * ld) * es, 0xEE);
        ASSERT_EQ(macko_mat_export_dense_host(A, out.data(), ld, order), MACKO_STATUS_SUCCESS);
        int64_t bad = 0;
        for (int64_t i = 0; i < outer; i++)
            for (int64_t j = 0; j < ld; j++) {
                uint64_t got = 0, want = 0xEEEEEEEEEEEEEEEEull;
                std::memcpy(&got, &out[(size_t)(i * ld + j) * es], es);
                if (es < 8)
                    want &= (1ull << (8 * es)) - 1;
                if (j < inner) {
                    const int64_t r = rm ? i : j, c = rm ? j : i;
                    want = d.nonzero(r, c) ? d.at(r, c) : 0;
                }
                bad += got != want;
            }
        EXPECT_EQ(bad, 0) << (rm ? "row-major" : "column-major") << " export";
    }

    /* CSR export: the nonzeros row by row, columns ascending (int64, base 1; int32, base 0) */
    for (int i64 = 0; i64 < 2; i64++) {
        const int64_t base = i64;
        std::vector<int64_t> rp64((size_t)d.rows + 1, -7), ci64((size_t)std::max<int64_t>(nnz, 1), -7);
        std::vector<int32_t> rp32((size_t)d.rows + 1, -7), ci32((size_t)std::max<int64_t>(nnz, 1), -7);
        std::vector<uint8_t> cv((size_t)std::max<int64_t>(nnz, 1) * es, 0xEE);
        ASSERT_EQ(macko_mat_export_csr_host(A, i64 ? (void *)rp64.data() : (void *)rp32.data(),
                                            i64 ? (void *)ci64.data() : (void *)ci32.data(), cv.data(),
                                            i64 ? MACKO_INDEX_64I : MACKO_INDEX_32I, (macko_index_base_t)base),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        int64_t k = 0, bad = 0;
        for (int64_t r = 0; r < d.rows; r++) {
            bad += (i64 ? rp64[(size_t)r] : rp32[(size_t)r]) != k + base;
            for (int64_t c = 0; c < d.cols; c++)
                if (d.nonzero(r, c)) {
                    uint64_t got = 0;
                    std::memcpy(&got, &cv[(size_t)k * es], es);
                    bad += (i64 ? ci64[(size_t)k] : ci32[(size_t)k]) != c + base;
                    bad += got != d.at(r, c);
                    k++;
                }
        }
        bad += (i64 ? rp64[(size_t)d.rows] : rp32[(size_t)d.rows]) != nnz + base;
        EXPECT_EQ(bad, 0) << "CSR export, index base " << base;
    }
}

/* d encoded with (n, m, v) and in both orders: the reference encoding; with detect, also (0, 0, 0) against the
 * reference detection. */
void check(const nmr::Dense &d, int n, int m, int v, bool detect, const std::string &what)
{
    SCOPED_TRACE(what + ", " + std::to_string(d.rows) + " x " + std::to_string(d.cols) + " type " +
                 std::to_string((int)d.type));
    const nmr::Enc e = nmr::encode(d, n, m, v);
    ASSERT_TRUE(e.ok) << "the test matrix does not follow its pattern";
    for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
        Owned A;
        ASSERT_EQ(create(d, order, n, m, v, &A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        EXPECT_EQ(macko_get_last_error_position(), 0);
        expect_encoding(A.A, e, d);
    }
    if (detect) {
        int dn, dm, dv;
        nmr::detect(d, 0, 0, 0, &dn, &dm, &dv);
        Owned A;
        ASSERT_EQ(create(d, MACKO_ORDER_ROW, 0, 0, 0, &A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        expect_encoding(A.A, nmr::encode(d, dn, dm, dv), d);
    }
}

} // namespace

TEST(NmEncode, EveryPatternAndTypeMatchesTheReference)
{
    const int64_t shapes[][2] = {{1, 1}, {7, 33}, {33, 7}, {3, 4097}, {70, 40}, {33, 100}, {64, 64}, {5, 31}};
    uint64_t seed = 1;
    int i = 0;
    for (int m : nmr::kM)
        for (int n = 1; n <= m; n++) {
            for (int v : nmr::kV) {
                const auto &s = shapes[i % 8];
                const macko_datatype_t t = mt::kAllTypes[i % 4];
                i++;
                check(nmr::follows(s[0], s[1], t, n, m, v, seed++), n, m, v, i % 5 == 0, pattern_name(n, m, v));
            }
        }
}

TEST(NmEncode, OddShapesAllTypes)
{
    const int64_t shapes[][2] = {{1, 1}, {1, 7}, {7, 1}, {7, 33}, {37, 5}, {33, 4097}, {0, 5}, {5, 0}, {0, 0}};
    uint64_t seed = 100;
    for (const auto &s : shapes)
        for (macko_datatype_t t : mt::kAllTypes) {
            check(nmr::follows(s[0], s[1], t, 2, 4, 1, seed++), 2, 4, 1, s[1] < 4000 || t == MACKO_R_16F, "2:4 v1");
            check(nmr::follows(s[0], s[1], t, 3, 8, 4, seed++), 3, 8, 4, false, "3:8 v4");
            check(nmr::follows(s[0], s[1], t, 5, 32, 32, seed++), 5, 32, 32, false, "5:32 v32");
        }
}

/* NaN, Inf and subnormals are nonzeros stored bit for bit; -0 is a zero: it takes no position and is stored (and
 * exported) as +0. */
TEST(NmEncode, SpecialValues)
{
    for (macko_datatype_t t : mt::kAllTypes) {
        nmr::Dense d = nmr::follows(9, 21, t, 2, 4, 2, 7);
        const size_t es = nmr::es_of(t);
        const uint64_t sign = 1ull << (8 * es - 1);
        const uint64_t inf = t == MACKO_R_16F   ? 0x7C00u
                             : t == MACKO_R_16BF ? 0x7F80u
                             : t == MACKO_R_32F  ? 0x7F800000u
                                                 : 0x7FF0000000000000ull;
        int placed = 0;
        for (int64_t r = 0; r < d.rows; r++)
            for (int64_t c = 0; c < d.cols; c++) {
                if (d.nonzero(r, c)) {
                    /* special values only where the pattern already has a nonzero: it still holds */
                    const uint64_t special[] = {inf | 1 /* NaN */, inf, inf | sign, 1 /* subnormal */, sign | 1};
                    d.at(r, c) = special[placed++ % 5];
                } else if ((r + c) % 3 == 0) {
                    d.at(r, c) = sign; /* -0 everywhere else: no position taken */
                }
            }
        ASSERT_GT(placed, 10);
        check(d, 2, 4, 2, true, "special values");
    }
}

TEST(NmEncode, EmptyRowsAndAllZero)
{
    for (macko_datatype_t t : mt::kAllTypes) {
        const nmr::Dense z = nmr::zeros(9, 70, t);
        check(z, 1, 4, 1, false, "all zero 1:4 v1");
        check(z, 4, 16, 8, false, "all zero 4:16 v8");
        /* detection: N = 1 everywhere, and the fewest bytes: M = 32, V = 32 */
        Owned A;
        ASSERT_EQ(create(z, MACKO_ORDER_COL, 0, 0, 0, &A.A), MACKO_STATUS_SUCCESS);
        expect_encoding(A.A, nmr::encode(z, 1, 32, 32), z);
        nmr::Dense d = nmr::follows(40, 70, t, 3, 8, 2, 9);
        for (int64_t r : {0, 1, 17, 38, 39})
            for (int64_t c = 0; c < d.cols; c++)
                d.at(r, c) = 0;
        check(d, 3, 8, 2, true, "empty rows");
    }
}

/* Detection by hand (bytes = rows * ceil(cols/M) * N * size + ceil(rows/V) * ceil(cols/M) * N). */
TEST(NmDetect, HandComputedChoicesAndTies)
{
    struct Want {
        int n, m, v;  /* given (0: detect) */
        int wn, wm, wv; /* chosen */
    };
    /* 1 x 8 fp32, nonzeros at columns 0 and 5: every (M, V) costs 10 bytes (M = 4: two windows of N = 1; M >= 8: one
     * window of N = 2): the tie goes to M = 32, then V = 32. */
    nmr::Dense a = nmr::zeros(1, 8, MACKO_R_32F);
    a.at(0, 0) = 0x3F800000u;
    a.at(0, 5) = 0xC0000000u;
    /* 2 x 8 fp16, row 0 at columns 0, 1, row 1 at columns 2, 3: V = 1 needs N = 2 (M = 4: 24 bytes, M >= 8: 12), V >= 2
     * needs N = 4 (M = 4: 40, M >= 8: 20). */
    nmr::Dense b = nmr::zeros(2, 8, MACKO_R_16F);
    b.at(0, 0) = 0x3C00u;
    b.at(0, 1) = 0x4000u;
    b.at(1, 2) = 0x4200u;
    b.at(1, 3) = 0xBC00u;
    const struct {
        const nmr::Dense *d;
        Want w;
        std::vector<uint8_t> positions;
    } cases[] = {
        {&a, {0, 0, 0, 2, 32, 32}, {0, 5}},
        {&a, {0, 4, 0, 1, 4, 32}, {0, 1}},
        {&a, {2, 0, 0, 2, 32, 32}, {0, 5}},
        {&b, {0, 0, 0, 2, 32, 1}, {0, 1, 2, 3}},
        {&b, {0, 4, 0, 2, 4, 1}, {0, 1, 0, 1, 2, 3, 0, 1}},
        {&b, {0, 0, 2, 4, 32, 2}, {0, 1, 2, 3}},
        {&b, {2, 0, 0, 2, 32, 1}, {0, 1, 2, 3}},
        /* n = 3: only V = 1 holds; M = 4 costs 36, M >= 8 costs 18; the third slot takes the smallest free position */
        {&b, {3, 0, 0, 3, 32, 1}, {0, 1, 2, 0, 2, 3}},
        {&b, {3, 8, 0, 3, 8, 1}, {0, 1, 2, 0, 2, 3}},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE("given " + pattern_name(c.w.n, c.w.m, c.w.v));
        int dn, dm, dv;
        nmr::detect(*c.d, c.w.n, c.w.m, c.w.v, &dn, &dm, &dv);
        EXPECT_EQ(pattern_name(dn, dm, dv), pattern_name(c.w.wn, c.w.wm, c.w.wv)) << "the reference disagrees";
        const nmr::Enc e = nmr::encode(*c.d, c.w.wn, c.w.wm, c.w.wv);
        EXPECT_EQ(e.positions, c.positions);
        Owned A;
        ASSERT_EQ(create(*c.d, MACKO_ORDER_ROW, c.w.n, c.w.m, c.w.v, &A.A), MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        expect_encoding(A.A, e, *c.d);
    }
    /* a partial last window: 1 x 5 fp64, a nonzero at column 4 only; 2:4 keeps positions 0 and 1 of window 1, and
     * position 1 (column 5) lies past cols: its value is 0 */
    nmr::Dense p = nmr::zeros(1, 5, MACKO_R_64F);
    p.at(0, 4) = 0x4008000000000000ull;
    const nmr::Enc e = nmr::encode(p, 2, 4, 1);
    EXPECT_EQ(e.positions, (std::vector<uint8_t>{0, 1, 0, 1}));
    Owned A;
    ASSERT_EQ(create(p, MACKO_ORDER_COL, 2, 4, 1, &A.A), MACKO_STATUS_SUCCESS);
    expect_encoding(A.A, e, p);
}

/* A nonzero the pattern cannot keep: INVALID_VALUE at values (5), the first offending row and window named, *A
 * untouched. */
TEST(NmRefuse, FirstOffendingRowAndWindow)
{
    nmr::Dense b = nmr::zeros(2, 8, MACKO_R_16F);
    b.at(0, 0) = 0x3C00u;
    b.at(0, 1) = 0x4000u;
    b.at(1, 2) = 0x4200u;
    b.at(1, 3) = 0xBC00u;
    const struct {
        int n, m, v;
        const char *msg;
    } cases[] = {
        {2, 4, 2, "values: row 1, window 0 (columns 0..3): rows 0..1 hold nonzeros in 4 columns of the window; the "
                  "pattern 2:4 with v = 2 keeps 2"},
        {3, 8, 2, "values: row 1, window 0 (columns 0..7): rows 0..1 hold nonzeros in 4 columns"},
        {1, 4, 1, "values: row 0, window 0 (columns 0..3): rows 0..0 hold nonzeros in 2 columns"},
        /* n alone given and too small for every (m, v): named for the most permissive pattern, 1:4 with v = 1 */
        {1, 0, 0, "values: row 0, window 0 (columns 0..3): rows 0..0 hold nonzeros in 2 columns of the window; the "
                  "pattern 1:4 with v = 1 keeps 1 (the most permissive"},
        {3, 0, 2, "pattern 3:4 with v = 2 keeps 3 (the most permissive"},
        {1, 16, 0, "values: row 0, window 0 (columns 0..7): rows 0..0 hold nonzeros in 2 columns of the window; the "
                   "pattern 1:16 with v = 1"},
    };
    for (const auto &c : cases)
        for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
            macko_mat_t A = kPoison;
            EXPECT_EQ(create(b, order, c.n, c.m, c.v, &A), MACKO_STATUS_INVALID_VALUE) << pattern_name(c.n, c.m, c.v);
            EXPECT_EQ(macko_get_last_error_position(), 5);
            const std::string msg = macko_get_last_error_message();
            EXPECT_EQ(msg.rfind("macko_mat_create_nm_dense_host: argument 5: values: row ", 0), 0u) << msg;
            EXPECT_NE(msg.find(c.msg), std::string::npos) << msg;
            EXPECT_EQ(A, kPoison);
        }
    /* random matrices one position too many: the reference's first offending row and window */
    uint64_t seed = 500;
    for (int m : nmr::kM)
        for (int v : nmr::kV)
            for (macko_datatype_t t : mt::kAllTypes) {
                const int n = m / 4 + 1;
                nmr::Dense d = nmr::follows(37, 77, t, n, m, v, seed++);
                const nmr::Enc e = nmr::encode(d, n - 1, m, v);
                macko_mat_t A = kPoison;
                const macko_status_t st = create(d, MACKO_ORDER_COL, n - 1, m, v, &A);
                if (e.ok) {
                    EXPECT_EQ(st, MACKO_STATUS_SUCCESS);
                    macko_mat_destroy(A);
                    continue;
                }
                EXPECT_EQ(st, MACKO_STATUS_INVALID_VALUE);
                EXPECT_EQ(A, kPoison);
                const std::string msg = macko_get_last_error_message(),
                                  want = "values: row " + std::to_string(e.bad_row) + ", window " +
                                         std::to_string(e.bad_window) + " (";
                EXPECT_NE(msg.find(want), std::string::npos) << pattern_name(n - 1, m, v) << ": " << msg;
            }
}

TEST(NmHost, GetNmHostAndKindRefusals)
{
    const nmr::Dense d = nmr::follows(10, 20, MACKO_R_16BF, 2, 4, 2, 3);
    Owned A;
    ASSERT_EQ(create(d, MACKO_ORDER_ROW, 2, 4, 2, &A.A), MACKO_STATUS_SUCCESS);
    /* every output may be NULL */
    EXPECT_EQ(macko_mat_get_nm_host(A.A, nullptr, nullptr, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    int v = 0;
    EXPECT_EQ(macko_mat_get_nm_host(A.A, nullptr, nullptr, &v, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(v, 2);

    const void *p = &v;
    EXPECT_EQ(macko_mat_get_macko_host(A.A, &p, nullptr, nullptr, nullptr, nullptr, nullptr),
              MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_macko_host: argument 1: A is a MACKO_KIND_NM matrix; "
                                                 "this routine takes MACKO_KIND_MACKO matrices only");
    EXPECT_EQ(p, (const void *)&v);
    int bits = 7;
    EXPECT_EQ(macko_mat_get_quant_host(A.A, &bits, nullptr, nullptr, nullptr, nullptr, nullptr),
              MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_quant_host: argument 1: A is a MACKO_KIND_NM matrix; "
                                                 "this routine takes MACKO_KIND_QUANT matrices only");
    EXPECT_EQ(bits, 7);

    /* get_nm_host of another kind */
    Owned M;
    const std::vector<float> one = {1.0f};
    ASSERT_EQ(macko_mat_create_dense_host(&M.A, 1, 1, MACKO_R_32F, one.data(), 1, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    int n = -3;
    EXPECT_EQ(macko_mat_get_nm_host(M.A, &n, nullptr, nullptr, nullptr, nullptr), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_nm_host: argument 1: A is a MACKO_KIND_MACKO matrix; "
                                                 "this routine takes MACKO_KIND_NM matrices only");
    EXPECT_EQ(n, -3);
    EXPECT_EQ(macko_mat_get_nm_host(nullptr, &n, nullptr, nullptr, nullptr, nullptr), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);

    /* the tile layout is MACKO-only; rows stays allowed */
    EXPECT_EQ(macko_mat_set_layout(A.A, MACKO_LAYOUT_TILES), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("A is a MACKO_KIND_NM matrix"), std::string::npos);
    macko_layout_t lay = MACKO_LAYOUT_TILES;
    EXPECT_EQ(macko_mat_get_layout(A.A, &lay), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(lay, MACKO_LAYOUT_ROWS);
    EXPECT_EQ(macko_mat_set_layout(A.A, MACKO_LAYOUT_ROWS), MACKO_STATUS_SUCCESS);
    /* releasing the only copy is refused, as for every kind */
    EXPECT_EQ(macko_mat_release_host(A.A), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_mat_get_nm_host(A.A, &n, nullptr, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(n, 2);
}
