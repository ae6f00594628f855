/* Host CSR encoder: index types and bases, explicit zeros, invalid input naming the first bad row. */
#include "common.h"
#include "encode_ref.h"

#include <cstring>
#include <string>

using namespace mt;

namespace
{

/* A CSR matrix in int64 with raw value bits; converted to what a call needs. */
struct CsrIn {
    int64_t rows = 0, cols = 0;
    macko_datatype_t type = MACKO_R_16F;
    std::vector<int64_t> rp{0}, ci;
    std::vector<uint64_t> v;
};

/* CSR of m: its nonzeros, plus every position where keep_zero says so (explicit zeros, with the zero's bits). */
CsrIn csr_of(const RawMat &m, const std::vector<uint8_t> *keep_zero = nullptr)
{
    CsrIn c;
    c.rows = m.rows;
    c.cols = m.cols;
    c.type = m.type;
    for (int64_t r = 0; r < m.rows; r++) {
        for (int64_t j = 0; j < m.cols; j++) {
            size_t i = (size_t)(r * m.cols + j);
            if (!m.is_zero(m.b[i]) || (keep_zero && (*keep_zero)[i])) {
                c.ci.push_back(j);
                c.v.push_back(m.b[i]);
            }
        }
        c.rp.push_back((int64_t)c.ci.size());
    }
    return c;
}

/* Calls macko_mat_create_csr_host with the arrays converted to index type `it`, base `base`. */
macko_status_t create_csr(const CsrIn &c, macko_indextype_t it, macko_index_base_t base, macko_mat_t *A,
                          int64_t nnz_override = -1)
{
    std::vector<int32_t> rp32, ci32;
    std::vector<int64_t> rp64, ci64;
    for (int64_t x : c.rp) {
        rp32.push_back((int32_t)(x + base));
        rp64.push_back(x + base);
    }
    for (int64_t x : c.ci) {
        ci32.push_back((int32_t)(x + base));
        ci64.push_back(x + base);
    }
    size_t es = type_bytes(c.type);
    std::vector<uint8_t> vals(c.v.size() * es + 1);
    for (size_t k = 0; k < c.v.size(); k++)
        std::memcpy(&vals[k * es], &c.v[k], es);
    int64_t nnz = nnz_override >= 0 ? nnz_override : (int64_t)c.ci.size();
    const void *rp = it == MACKO_INDEX_32I ? (const void *)rp32.data() : (const void *)rp64.data();
    const void *ci = it == MACKO_INDEX_32I ? (const void *)ci32.data() : (const void *)ci64.data();
    if (c.ci.empty())
        ci = it == MACKO_INDEX_32I ? (const void *)rp32.data() : (const void *)rp64.data(); /* any non-NULL */
    return macko_mat_create_csr_host(A, c.rows, c.cols, nnz, rp, ci, vals.data(), it, base, c.type);
}

const macko_indextype_t kTypes[] = {MACKO_INDEX_32I, MACKO_INDEX_64I};
const macko_index_base_t kBases[] = {MACKO_INDEX_BASE_ZERO, MACKO_INDEX_BASE_ONE};

std::string tag(macko_indextype_t it, macko_index_base_t b)
{
    return std::string(it == MACKO_INDEX_32I ? "int32" : "int64") + (b ? " base 1" : " base 0");
}

} // namespace

/* lapack_style_docs/FORMAT.md's example through CSR, all index types and bases, both value types. */
TEST(EncodeCsr, FormatMdExample)
{
    for (macko_datatype_t t : kAllTypes)
        for (macko_indextype_t it : kTypes)
            for (macko_index_base_t b : kBases) {
                SCOPED_TRACE(tag(it, b) + " type " + std::to_string(t));
                RawMat m = raw_zero(1, 47, t);
                m.at(0, 2) = one(t, 1);
                m.at(0, 36) = one(t, 2);
                m.at(0, 46) = one(t, 3);
                Mat A;
                ASSERT_EQ(create_csr(csr_of(m), it, b, &A.A), MACKO_STATUS_SUCCESS);
                Arrays a = get_arrays(A.A);
                EXPECT_EQ(a.row_ptr, (std::vector<int64_t>{0, 5}));
                EXPECT_EQ(a.deltas, (std::vector<uint8_t>{0xF2, 0x1F, 0x09, 0x00}));
                EXPECT_EQ(a.entries, 5);
                std::vector<uint64_t> wv = {one(t, 1), 0, 0, one(t, 2), one(t, 3), 0, 0, 0};
                for (int k = 0; k < 8; k++) {
                    uint64_t got = 0;
                    std::memcpy(&got, &a.values[(size_t)k * m.es()], m.es());
                    EXPECT_EQ(got, wv[(size_t)k]) << "value " << k;
                }
                check_matrix(A.A, m);
            }
}

/* Random matrices (with NaN/Inf/subnormals) through every index type and base decode back; arrays equal the
 * scalar encoder's. */
TEST(EncodeCsr, RoundTripRandom)
{
    const int64_t shapes[][2] = {{0, 0}, {0, 9}, {4, 0}, {1, 1}, {1, 300}, {300, 1}, {33, 70}, {70, 33}, {9, 1000}};
    uint64_t seed = 500;
    for (auto &s : shapes)
        for (double d : {0.0, 0.01, 0.1, 0.5, 0.9, 1.0})
            for (macko_datatype_t t : kAllTypes) {
                RawMat m = raw_random(s[0], s[1], t, d, seed++, false);
                raw_add_specials(m, seed++, d > 0 && d < 1 ? 4 : 0);
                CsrIn c = csr_of(m);
                for (macko_indextype_t it : kTypes)
                    for (macko_index_base_t b : kBases) {
                        SCOPED_TRACE(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " d " + std::to_string(d) +
                                     " " + tag(it, b));
                        Mat A;
                        ASSERT_EQ(create_csr(c, it, b, &A.A), MACKO_STATUS_SUCCESS);
                        check_matrix(A.A, m);
                    }
            }
}

/* Explicit zeros (+0 and -0) are entries, also at the end of a row; nnz and the exports skip them. */
TEST(EncodeCsr, ExplicitZerosAreEntries)
{
    for (macko_datatype_t t : kAllTypes) {
        const uint64_t negzero = sign_bit(t);
        RawMat m = raw_random(40, 90, t, 0.2, 900, false);
        std::vector<uint8_t> keep(m.b.size(), 0);
        std::mt19937_64 g(901);
        for (size_t i = 0; i < m.b.size(); i++)
            if (m.is_zero(m.b[i]) && g() % 7 == 0) {
                keep[i] = 1;
                m.b[i] = (g() & 1) ? negzero : 0;
            }
        for (int64_t r = 0; r < m.rows; r++) { /* every row ends with a stored zero */
            m.at(r, m.cols - 1) = 0;
            keep[(size_t)(r * m.cols + m.cols - 1)] = 1;
        }
        /* The stored entries: nonzeros and the kept zeros; the arrays keep the stored zero's bits (-0 stays -0). */
        std::vector<uint8_t> stored(m.b.size());
        for (size_t i = 0; i < m.b.size(); i++)
            stored[i] = (uint8_t)(keep[i] || !m.is_zero(m.b[i]));
        for (macko_indextype_t it : kTypes)
            for (macko_index_base_t b : kBases) {
                SCOPED_TRACE(tag(it, b));
                Mat A;
                ASSERT_EQ(create_csr(csr_of(m, &keep), it, b, &A.A), MACKO_STATUS_SUCCESS);
                expect_same_arrays(get_arrays(A.A), ref_encode(m, &stored), "csr with explicit zeros");
                int64_t nnz = -1;
                ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
                EXPECT_EQ(nnz, m.nnz());
                check_export_dense(A.A, m, MACKO_ORDER_ROW, 90);
                check_export_dense(A.A, m, MACKO_ORDER_COL, 41);
                check_export_csr(A.A, m, it, b);
                Arrays a = get_arrays(A.A);
                /* Row 0's last entry is the stored zero at column 89. */
                int64_t last = a.row_ptr[1] - 1;
                uint64_t v = 1;
                std::memcpy(&v, &a.values[(size_t)last * m.es()], m.es());
                EXPECT_EQ(v, 0u);
            }
    }
}

/* Invalid CSR: INVALID_VALUE, the right position, a message naming the first bad row, *A untouched. */
TEST(EncodeCsr, InvalidInputNamesTheRow)
{
    /* 4 x 10, rows: {1, 4}, {}, {0, 9}, {5} */
    CsrIn good;
    good.rows = 4;
    good.cols = 10;
    good.rp = {0, 2, 2, 4, 5};
    good.ci = {1, 4, 0, 9, 5};
    good.v = {0x3C00, 0x4000, 0x4200, 0x4400, 0x4500};
    struct Case {
        const char *what;
        CsrIn c;
        int pos;
        const char *needle; /* must occur in the message */
    };
    std::vector<Case> cases;
    auto add = [&](const char *what, int pos, const char *needle, auto edit) {
        CsrIn c = good;
        edit(c);
        cases.push_back({what, c, pos, needle});
    };
    add("unsorted", 6, "row 2: columns not strictly increasing", [](CsrIn &c) { c.ci = {1, 4, 9, 0, 5}; });
    add("duplicate", 6, "row 0: columns not strictly increasing", [](CsrIn &c) { c.ci = {4, 4, 0, 9, 5}; });
    add("negative column", 6, "row 3: col_ind[4]", [](CsrIn &c) { c.ci[4] = -1; });
    add("column == cols", 6, "row 2: col_ind[3]", [](CsrIn &c) { c.ci[3] = 10; });
    add("column >> cols", 6, "row 0: col_ind[0]", [](CsrIn &c) { c.ci[0] = 1000; });
    add("row_ptr[0] != base", 5, "row 0: row_ptr[0]", [](CsrIn &c) { c.rp = {1, 2, 2, 4, 5}; });
    add("row_ptr decreasing", 5, "row 1: row_ptr decreases", [](CsrIn &c) { c.rp = {0, 3, 2, 4, 5}; });
    add("row_ptr past nnz", 5, "row 0: row_ptr[1]", [](CsrIn &c) { c.rp = {0, 7, 2, 4, 5}; });
    add("row_ptr wrong end", 5, "row 3: row_ptr[rows]", [](CsrIn &c) { c.rp = {0, 2, 2, 4, 4}; });
    for (const Case &cs : cases)
        for (macko_indextype_t it : kTypes)
            for (macko_index_base_t b : kBases) {
                SCOPED_TRACE(std::string(cs.what) + " " + tag(it, b));
                macko_mat_t A = reinterpret_cast<macko_mat_t>(uintptr_t(0x5A5A));
                int64_t nnz = (int64_t)good.ci.size(); /* always 5 */
                EXPECT_EQ(create_csr(cs.c, it, b, &A, nnz), MACKO_STATUS_INVALID_VALUE);
                EXPECT_EQ(macko_get_last_error_position(), cs.pos);
                std::string msg = macko_get_last_error_message();
                EXPECT_NE(msg.find("macko_mat_create_csr_host: argument " + std::to_string(cs.pos) + ": "),
                          std::string::npos)
                    << msg;
                EXPECT_NE(msg.find(cs.needle), std::string::npos) << msg;
                EXPECT_EQ(A, reinterpret_cast<macko_mat_t>(uintptr_t(0x5A5A)));
            }
    /* The good matrix itself is accepted everywhere (so the cases above fail for their one defect). */
    for (macko_indextype_t it : kTypes)
        for (macko_index_base_t b : kBases) {
            Mat A;
            EXPECT_EQ(create_csr(good, it, b, &A.A), MACKO_STATUS_SUCCESS) << tag(it, b);
        }
}

/* A few messages exactly. */
TEST(EncodeCsr, InvalidInputMessages)
{
    const int32_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {3, 1, 0};
    const uint16_t v[3] = {0x3C00, 0x3C00, 0x3C00};
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_csr_host(&A, 2, 4, 3, rp, ci, v, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, MACKO_R_16F),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(
        macko_get_last_error_message(),
        "macko_mat_create_csr_host: argument 6: row 0: columns not strictly increasing (col_ind[1] = 1 after 3)");
    const int32_t ci2[3] = {1, 3, 4};
    EXPECT_EQ(macko_mat_create_csr_host(&A, 2, 4, 3, rp, ci2, v, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, MACKO_R_16F),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_csr_host: argument 6: row 1: col_ind[2] = 4 is outside [0, 4)");
    const int64_t rp64[3] = {1, 0, 3};
    const int64_t ci64[3] = {1, 2, 3};
    EXPECT_EQ(macko_mat_create_csr_host(&A, 2, 4, 3, rp64, ci64, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ONE, MACKO_R_16F),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_csr_host: argument 5: row 0: row_ptr decreases (row_ptr[1] = 0 < row_ptr[0] = 1)");
    EXPECT_EQ(A, nullptr);
}

/* nnz beyond 32-bit indices is refused before the arrays are read (position 4). */
TEST(EncodeCsr, NnzTooLargeFor32BitIndices)
{
    const int32_t rp[2] = {0, 0};
    const int32_t ci[1] = {0};
    const uint16_t v[1] = {0};
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_csr_host(&A, 1, 4, INT64_C(1) << 31, rp, ci, v, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO,
                                        MACKO_R_16F),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 4);
    EXPECT_EQ(A, nullptr);
}

/* Long gaps between stored columns (far beyond 16) become runs of padding; a first column far from 0 too. */
TEST(EncodeCsr, LongGaps)
{
    const int64_t cols = 5000;
    const int64_t rp[3] = {0, 3, 4};
    const int64_t ci[4] = {1000, 1016, 4999, 4999};
    const float v[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    Mat A;
    ASSERT_EQ(
        macko_mat_create_csr_host(&A.A, 2, cols, 4, rp, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO, MACKO_R_32F),
        MACKO_STATUS_SUCCESS);
    Arrays a = get_arrays(A.A);
    /* row 0: 1000 zeros -> 62 pads + delta 8; 15 zeros -> delta 15; 3982 zeros -> 248 pads + delta 14.
     * row 1: 4999 zeros -> 312 pads + delta 7. */
    EXPECT_EQ(a.row_ptr, (std::vector<int64_t>{0, 62 + 1 + 1 + 248 + 1, 62 + 1 + 1 + 248 + 1 + 312 + 1}));
    RawMat m = raw_zero(2, cols, MACKO_R_32F);
    m.at(0, 1000) = one(MACKO_R_32F, 1);
    m.at(0, 1016) = one(MACKO_R_32F, 2);
    m.at(0, 4999) = one(MACKO_R_32F, 3);
    m.at(1, 4999) = one(MACKO_R_32F, 4);
    check_matrix(A.A, m);
}
