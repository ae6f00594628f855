/* The N:M kind's importer (macko_mat_create_nm_host: round trip, every content fault with the first bad group / row
 * and window named) and the argument checks of the four N:M routines (the ba:: walker: every wrong value of every
 * argument in turn, status, position, message, outputs untouched). */
#include "bad_args.h"
#include "common.h"
#include "nm_ref.h"

#include <cstring>
#include <string>
#include <vector>

namespace
{

const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(uintptr_t(0xBAD0));
constexpr macko_status_t kInv = MACKO_STATUS_INVALID_VALUE;
constexpr macko_status_t kNS = MACKO_STATUS_NOT_SUPPORTED;

struct Owned {
    macko_mat_t A = nullptr;
    ~Owned() { macko_mat_destroy(A); }
};

/* The reference arrays of a random matrix following (n, m, v). */
struct Case {
    nmr::Dense d;
    nmr::Enc e;
    Case(int64_t rows, int64_t cols, macko_datatype_t t, int n, int m, int v, uint64_t seed)
        : d(nmr::follows(rows, cols, t, n, m, v, seed)), e(nmr::encode(d, n, m, v))
    {
    }
    macko_status_t import(macko_mat_t *A, const std::vector<uint8_t> &values, const std::vector<uint8_t> &pos) const
    {
        return macko_mat_create_nm_host(A, d.rows, d.cols, d.type, e.n, e.m, e.v, values.data(), pos.data());
    }
    int64_t kept() const { return (d.cols + e.m - 1) / e.m * e.n; }
};

/* The import fails with INVALID_VALUE at pos and a message containing `part`, A untouched. */
void expect_refused(const Case &c, const std::vector<uint8_t> &values, const std::vector<uint8_t> &pos, int at,
                    const std::string &part)
{
    macko_mat_t A = kPoison;
    EXPECT_EQ(c.import(&A, values, pos), kInv);
    EXPECT_EQ(macko_get_last_error_position(), at);
    const std::string msg = macko_get_last_error_message();
    EXPECT_EQ(msg.rfind("macko_mat_create_nm_host: argument " + std::to_string(at) + ": " + part, 0), 0u) << msg;
    EXPECT_EQ(A, kPoison);
}

} // namespace

TEST(NmImport, RoundTripCopiesAndDescribes)
{
    uint64_t seed = 1;
    const int64_t shapes[][2] = {{1, 1}, {7, 33}, {33, 4097}, {70, 40}, {0, 9}, {9, 0}, {0, 0}};
    for (const auto &s : shapes)
        for (macko_datatype_t t : mt::kAllTypes)
            for (const int *p : {(const int[]){2, 4, 1}, (const int[]){5, 16, 8}, (const int[]){32, 32, 32}}) {
                const Case c(s[0], s[1], t, p[0], p[1], p[2], seed++);
                Owned A;
                ASSERT_EQ(c.import(&A.A, c.e.values, c.e.positions), MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                int n, m, v;
                const void *vals;
                const uint8_t *pos;
                ASSERT_EQ(macko_mat_get_nm_host(A.A, &n, &m, &v, &vals, &pos), MACKO_STATUS_SUCCESS);
                EXPECT_EQ(n, p[0]);
                EXPECT_EQ(m, p[1]);
                EXPECT_EQ(v, p[2]);
                ASSERT_NE(vals, nullptr);
                ASSERT_NE(pos, nullptr);
                if (!c.e.values.empty()) {
                    EXPECT_NE(vals, (const void *)c.e.values.data());
                    EXPECT_EQ(std::memcmp(vals, c.e.values.data(), c.e.values.size()), 0);
                    EXPECT_EQ(std::memcmp(pos, c.e.positions.data(), c.e.positions.size()), 0);
                }
                int64_t nnz = -1;
                ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
                EXPECT_EQ(nnz, c.d.nnz());
            }
}

/* Imported arrays need not be canonical: any ascending positions, zeros (+0 or -0) anywhere, -0 past cols. */
TEST(NmImport, NonCanonicalArraysAreAccepted)
{
    const Case c(3, 6, MACKO_R_32F, 2, 4, 1, 5);
    std::vector<uint8_t> pos = {2, 3, 1, 3, 0, 3, 0, 2, 1, 2, 0, 1};
    std::vector<uint8_t> vals(3 * 4 * 4, 0);
    const float one = 1.0f, mz = -0.0f;
    std::memcpy(&vals[4 * 4], &one, 4);    /* row 1, window 0, slot 0 (column 0) */
    std::memcpy(&vals[3 * 4], &mz, 4);     /* row 0, window 1, slot 1 (position 3: column 7, past cols) */
    std::memcpy(&vals[11 * 4], &one, 4);   /* row 2, window 1, slot 1 (position 1: column 5) */
    Owned A;
    ASSERT_EQ(c.import(&A.A, vals, pos), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    int64_t nnz = -1;
    ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, 2);
    std::vector<float> dense(18, 9.0f);
    ASSERT_EQ(macko_mat_export_dense_host(A.A, dense.data(), 6, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    std::vector<float> want(18, 0.0f);
    want[6] = 1.0f;
    want[17] = 1.0f;
    EXPECT_EQ(dense, want);
}

TEST(NmImport, EveryContentFaultNamesTheFirstBadGroupOrRow)
{
    for (macko_datatype_t t : mt::kAllTypes) {
        SCOPED_TRACE((int)t);
        /* 10 x 30 with 3:8, v = 4: groups 0..2 (the last of 2 rows), windows 0..3 (the last of 6 columns) */
        const Case c(10, 30, t, 3, 8, 4, 77);
        ASSERT_TRUE(c.e.ok);
        const size_t es = nmr::es_of(t);
        const int64_t K = c.kept();
        const auto P = [&](int64_t g, int64_t w, int j) { return (size_t)(g * K + w * 3 + j); };
        {
            std::vector<uint8_t> pos = c.e.positions;
            pos[P(1, 2, 1)] = 8;
            pos[P(2, 0, 0)] = 200; /* later: not reported */
            expect_refused(c, c.e.values, pos, 9,
                           "positions: group 1 (rows 4..7), window 2: slot 1 holds position 8; it must be less than "
                           "m = 8");
        }
        {
            std::vector<uint8_t> pos = c.e.positions;
            pos[P(2, 3, 0)] = pos[P(2, 3, 1)];
            expect_refused(c, c.e.values, pos, 9, "positions: group 2 (rows 8..9), window 3: slot 1 holds position");
        }
        {
            std::vector<uint8_t> pos = c.e.positions;
            std::swap(pos[P(0, 0, 1)], pos[P(0, 0, 2)]);
            expect_refused(c, c.e.values, pos, 9, "positions: group 0 (rows 0..3), window 0: slot 2 holds position");
        }
        {
            /* window 3 holds columns 24..29: position 7 is column 31, past cols; zeros there are fine (-0 too), a
             * nonzero is not */
            std::vector<uint8_t> pos = c.e.positions, vals = c.e.values;
            const auto V = [&](int64_t r, int j) { return &vals[(size_t)(r * K + 3 * 3 + j) * es]; };
            pos[P(2, 3, 0)] = 0;
            pos[P(2, 3, 1)] = 1;
            pos[P(2, 3, 2)] = 7;
            for (int64_t r : {8, 9})
                for (int j = 0; j < 3; j++)
                    std::memset(V(r, j), 0, es);
            V(8, 2)[es - 1] = 0x80; /* -0 */
            {
                Owned A;
                EXPECT_EQ(c.import(&A.A, vals, pos), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            }
            V(9, 2)[0] = 1; /* the smallest subnormal */
            expect_refused(c, vals, pos, 8,
                           "values: row 9, window 3: slot 2 (position 7, column 31, past cols = 30) holds a nonzero "
                           "value; it must be zero");
            /* scanned group by group: a bad position in a later group is not reported */
            pos[P(2, 3, 0)] = 1;
            pos[P(2, 3, 1)] = 0;
            V(9, 2)[0] = 0;
            V(1, 2)[0] = 1;
            expect_refused(c, vals, pos, 9, "positions: group 2 (rows 8..9), window 3: slot 1 holds position 0 after 1");
        }
        {
            /* group 0's last window: a nonzero past cols (row 2) comes before group 1's bad position */
            std::vector<uint8_t> pos = c.e.positions, vals = c.e.values;
            pos[P(0, 3, 0)] = 0;
            pos[P(0, 3, 1)] = 1;
            pos[P(0, 3, 2)] = 6;
            for (int64_t r = 0; r < 4; r++)
                std::memset(&vals[(size_t)(r * K + 9 + 2) * es], r == 2 ? 0x11 : 0, es);
            pos[P(1, 0, 0)] = 9;
            expect_refused(c, vals, pos, 8, "values: row 2, window 3: slot 2 (position 6, column 30, past cols = 30)");
        }
    }
}

TEST(NmImport, NullArraysAndSizes)
{
    const Case c(4, 8, MACKO_R_16F, 2, 4, 2, 3);
    macko_mat_t A = kPoison;
    EXPECT_EQ(macko_mat_create_nm_host(&A, 4, 8, MACKO_R_16F, 2, 4, 2, nullptr, c.e.positions.data()), kInv);
    EXPECT_EQ(macko_get_last_error_position(), 8);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_nm_host: argument 8: values is NULL but rows*ceil(cols/m)*n = 16");
    EXPECT_EQ(macko_mat_create_nm_host(&A, 4, 8, MACKO_R_16F, 2, 4, 2, c.e.values.data(), nullptr), kInv);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_nm_host: argument 9: positions is NULL but ceil(rows/v)*ceil(cols/m)*n = 8");
    EXPECT_EQ(A, kPoison);
    /* no values: NULL is fine */
    for (const int64_t *s : {(const int64_t[]){0, 8}, (const int64_t[]){4, 0}}) {
        Owned B;
        ASSERT_EQ(macko_mat_create_nm_host(&B.A, s[0], s[1], MACKO_R_64F, 1, 4, 1, nullptr, nullptr),
                  MACKO_STATUS_SUCCESS);
        int64_t bytes = -1;
        EXPECT_EQ(macko_mat_get_storage(B.A, &bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(bytes, 0);
    }
    /* 2^40 rows of zero columns store nothing and are checked at once (the validation walked every row group: the
     * fuzzer's timeout of session 9) */
    {
        Owned B;
        ASSERT_EQ(macko_mat_create_nm_host(&B.A, INT64_C(1) << 40, 0, MACKO_R_16F, 1, 4, 1, nullptr, nullptr),
                  MACKO_STATUS_SUCCESS);
        int64_t rows = 0;
        EXPECT_EQ(macko_mat_get_info(B.A, &rows, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(rows, INT64_C(1) << 40);
    }
    /* 2^40 x 2^20 with 32:32 is 2^60 values */
    EXPECT_EQ(macko_mat_create_nm_host(&A, INT64_C(1) << 40, INT64_C(1) << 20, MACKO_R_16F, 32, 32, 1, nullptr,
                                       nullptr),
              kInv);
    EXPECT_EQ(macko_get_last_error_position(), 3);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_nm_host: argument 3: rows x cols (1099511627776 x "
                                                 "1048576) with the pattern 32:32 needs more than 2^56 values");
    EXPECT_EQ(A, kPoison);
}

/* ---------------------------------------------------------------- argument walks */

namespace
{

/* The wrong values of the pattern arguments (valid: n:m = 2:4, v = 2; with `detect`, 0 is valid too). */
ba::Arg<int> n_arg(int valid, bool detect)
{
    ba::Arg<int> a{"n", valid, {{-1, kInv, "-1"}, {5, kInv, "5 > m"}, {INT32_MIN, kInv, "INT_MIN"}}};
    if (!detect)
        a.wrong.push_back({0, kInv, "0"});
    return a;
}
ba::Arg<int> m_arg(int valid, bool detect)
{
    ba::Arg<int> a{"m", valid, {{-4, kInv, "-4"}, {5, kNS, "5"}, {64, kNS, "64"}, {3, kNS, "3"}}};
    if (!detect)
        a.wrong.push_back({0, kInv, "0"});
    return a;
}
ba::Arg<int> v_arg(int valid, bool detect)
{
    ba::Arg<int> a{"v", valid, {{-1, kInv, "-1"}, {3, kNS, "3"}, {64, kNS, "64"}}};
    if (!detect)
        a.wrong.push_back({0, kInv, "0"});
    return a;
}
ba::Arg<macko_mat_t *> out_arg(macko_mat_t *A) { return {"A", A, {{nullptr, kInv, "NULL"}}}; }
ba::Arg<int64_t> rows_arg(int64_t v) { return ba::size("rows", v, {-1, (INT64_C(1) << 56) + 1}); }
ba::Arg<int> type_arg() { return {"type", (int)MACKO_R_16F, {{3, kInv, "3"}, {-1, kInv, "-1"}}}; }

} // namespace

TEST(NmBadArgs, CreateNmDenseHost)
{
    const nmr::Dense d = nmr::follows(4, 8, MACKO_R_16F, 2, 4, 2, 9);
    const std::vector<uint8_t> b = d.bytes(MACKO_ORDER_ROW, 8);
    macko_mat_t A = kPoison;
    const ba::Rules r{"macko_mat_create_nm_dense_host", [&](const std::string &w) { EXPECT_EQ(A, kPoison) << w; }};
    ba::walk(r, macko_mat_create_nm_dense_host, out_arg(&A), rows_arg(4),
             ba::size("cols", 8, {-1, INT64_C(1) << 57}), type_arg(),
             ba::Arg<const void *>{"values", b.data(), {{nullptr, kInv, "NULL"}}},
             ba::size("ld", 8, {7, 0, -1}),
             ba::Arg<int>{"order", (int)MACKO_ORDER_ROW, {{0, kInv, "0"}, {3, kInv, "3"}}}, n_arg(2, true),
             m_arg(4, true), v_arg(2, true));
    /* n > 32 with m detected; m is judged before n */
    EXPECT_EQ(macko_mat_create_nm_dense_host(&A, 4, 8, MACKO_R_16F, b.data(), 8, MACKO_ORDER_ROW, 33, 0, 0), kNS);
    EXPECT_EQ(macko_get_last_error_position(), 8);
    EXPECT_EQ(macko_mat_create_nm_dense_host(&A, 4, 8, MACKO_R_16F, b.data(), 8, MACKO_ORDER_ROW, -1, 5, 0), kNS);
    EXPECT_EQ(macko_get_last_error_position(), 9);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_nm_dense_host: argument 9: m is 5; the supported m are 4, 8, 16 and 32");
    EXPECT_EQ(macko_mat_create_nm_dense_host(&A, 4, 8, MACKO_R_16F, b.data(), 8, MACKO_ORDER_ROW, 8, 4, 0), kInv);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_nm_dense_host: argument 8: n is 8; it must be at most m = 4");
    EXPECT_EQ(A, kPoison);
}

TEST(NmBadArgs, CreateNmHost)
{
    const Case c(4, 8, MACKO_R_16F, 2, 4, 2, 9);
    macko_mat_t A = kPoison;
    const ba::Rules r{"macko_mat_create_nm_host", [&](const std::string &w) { EXPECT_EQ(A, kPoison) << w; }};
    ba::walk(r, macko_mat_create_nm_host, out_arg(&A), rows_arg(4), ba::size("cols", 8, {-1, INT64_C(1) << 57}),
             type_arg(), n_arg(2, false), m_arg(4, false), v_arg(2, false),
             ba::Arg<const void *>{"values", c.e.values.data(), {{nullptr, kInv, "NULL"}}},
             ba::Arg<const uint8_t *>{"positions", c.e.positions.data(), {{nullptr, kInv, "NULL"}}});
    EXPECT_EQ(macko_mat_create_nm_host(&A, 4, 8, MACKO_R_16F, 0, 4, 2, nullptr, nullptr), kInv);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_nm_host: argument 5: n is 0; it must be at least 1");
}

TEST(NmBadArgs, GetNmHost)
{
    const Case c(4, 8, MACKO_R_16F, 2, 4, 2, 9);
    Owned A;
    ASSERT_EQ(c.import(&A.A, c.e.values, c.e.positions), MACKO_STATUS_SUCCESS);
    int n = -1, m = -1, v = -1;
    const void *vals = &n;
    const uint8_t *pos = nullptr;
    const ba::Rules r{"macko_mat_get_nm_host", [&](const std::string &w) {
                          EXPECT_EQ(n + m + v, -3) << w;
                          EXPECT_EQ(vals, (const void *)&n) << w;
                          EXPECT_EQ(pos, nullptr) << w;
                      }};
    ba::walk(r, macko_mat_get_nm_host, ba::Arg<macko_mat_t>{"A", A.A, {{nullptr, kInv, "NULL"}}},
             ba::Arg<int *>{"n", &n, {}}, ba::Arg<int *>{"m", &m, {}}, ba::Arg<int *>{"v", &v, {}},
             ba::Arg<const void **>{"values", &vals, {}}, ba::Arg<const uint8_t **>{"positions", &pos, {}});
}
