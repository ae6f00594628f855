/* Host dense encoder, raw-array import and the host decoders: exact arrays, round trips, effective density, speed. */
#include "common.h"
#include "encode_ref.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

using namespace mt;

/* lapack_style_docs/FORMAT.md's example: values [1,2,3] at columns [2,36,46] encode to values [1,0,0,2,3,0,0,0],
 * deltas [2,15,15,1,9] (bytes F2 1F 09 00), row_ptr {0,5}. */
TEST(EncodeDense, FormatMdExample)
{
    for (macko_datatype_t t : kAllTypes)
        for (int64_t cols : {47, 48, 64, 100})
            for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL})
                for (int64_t extra : {0, 5}) {
                    SCOPED_TRACE("type " + std::to_string(t) + " cols " + std::to_string(cols) + " order " +
                                 std::to_string(o) + " ld+" + std::to_string(extra));
                    RawMat m = raw_zero(1, cols, t);
                    m.at(0, 2) = one(t, 1);
                    m.at(0, 36) = one(t, 2);
                    m.at(0, 46) = one(t, 3);
                    Mat A;
                    int64_t ld = (o == MACKO_ORDER_ROW ? cols : 1) + extra;
                    ASSERT_EQ(encode_dense(m, o, ld, &A.A), MACKO_STATUS_SUCCESS);
                    Arrays a = get_arrays(A.A);
                    Arrays want;
                    want.entries = 5;
                    want.entries_padded = 8;
                    want.row_ptr = {0, 5};
                    want.deltas = {0xF2, 0x1F, 0x09, 0x00};
                    const uint64_t wv[8] = {one(t, 1), 0, 0, one(t, 2), one(t, 3), 0, 0, 0};
                    want.values.resize(8 * m.es());
                    for (int k = 0; k < 8; k++)
                        std::memcpy(&want.values[(size_t)k * m.es()], &wv[k], m.es());
                    expect_same_arrays(a, want, "FORMAT.md example");
                    int64_t nnz = 0, bytes = 0;
                    ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
                    EXPECT_EQ(nnz, 3);
                    ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
                    EXPECT_EQ(bytes, (int64_t)(8 * m.es() + 4 + 2 * 4));
                    check_matrix(A.A, m);
                }
}

/* The same row three times with an empty row between: rows start at odd entries, so nibble parity moves. */
TEST(EncodeDense, FormatMdExampleRowsBackToBack)
{
    RawMat m = raw_zero(4, 47, MACKO_R_16F);
    for (int64_t r : {0, 2, 3}) {
        m.at(r, 2) = 0x3C00;
        m.at(r, 36) = 0x4000;
        m.at(r, 46) = 0x4200;
    }
    Mat A;
    ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, 47, &A.A), MACKO_STATUS_SUCCESS);
    Arrays a = get_arrays(A.A);
    EXPECT_EQ(a.row_ptr, (std::vector<int64_t>{0, 5, 5, 10, 15}));
    EXPECT_EQ(a.entries, 15);
    EXPECT_EQ(a.entries_padded, 16);
    /* nibbles 2,15,15,1,9 | 2,15,15,1,9 | 2,15,15,1,9, 0 */
    EXPECT_EQ(a.deltas, (std::vector<uint8_t>{0xF2, 0x1F, 0x29, 0xFF, 0x91, 0xF2, 0x1F, 0x09}));
    check_matrix(A.A, m);
}

/* Gaps around the padding thresholds, hand-decoded: a nonzero after g zero columns is preceded by floor(g/16)
 * padding entries (0, 15) and stored with delta g mod 16. */
TEST(EncodeDense, GapsAroundSixteen)
{
    const int gaps[] = {0, 1, 14, 15, 16, 17, 30, 31, 32, 33, 47, 48, 49, 64, 100};
    for (macko_datatype_t t : kAllTypes) {
        for (int g : gaps) {
            /* Row 0: first nonzero after g zeros from column 0. Row 1: nonzeros at 3 and 3 + g + 1. */
            RawMat m = raw_zero(2, 3 + g + 1 + 5, t);
            m.at(0, g) = one(t, 7);
            m.at(1, 3) = one(t, 5);
            m.at(1, 3 + g + 1) = one(t, 9);
            for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
                SCOPED_TRACE("gap " + std::to_string(g) + " type " + std::to_string(t) + " order " + std::to_string(o));
                Mat A;
                ASSERT_EQ(encode_dense(m, o, o == MACKO_ORDER_ROW ? m.cols : 2, &A.A), MACKO_STATUS_SUCCESS);
                Arrays a = get_arrays(A.A);
                const int pads = g / 16;
                ASSERT_EQ(a.row_ptr[1], pads + 1);
                ASSERT_EQ(a.row_ptr[2], a.row_ptr[1] + 1 + pads + 1);
                auto nib = [&](int64_t k) { return (a.deltas[(size_t)(k / 2)] >> (4 * (k % 2))) & 0xF; };
                auto val = [&](int64_t k) {
                    uint64_t v = 0;
                    std::memcpy(&v, &a.values[(size_t)k * m.es()], m.es());
                    return v;
                };
                for (int p = 0; p < pads; p++) {
                    EXPECT_EQ(nib(p), 15) << "row 0 padding " << p;
                    EXPECT_EQ(val(p), 0u);
                }
                EXPECT_EQ(nib(pads), g % 16);
                EXPECT_EQ(val(pads), one(t, 7));
                int64_t k1 = a.row_ptr[1];
                EXPECT_EQ(nib(k1), 3);
                for (int p = 0; p < pads; p++)
                    EXPECT_EQ(nib(k1 + 1 + p), 15) << "row 1 padding " << p;
                EXPECT_EQ(nib(k1 + 1 + pads), g % 16);
                EXPECT_EQ(val(k1 + 1 + pads), one(t, 9));
                check_matrix(A.A, m);
            }
        }
    }
}

/* Trailing zeros, however many, produce nothing; leading zeros produce padding. */
TEST(EncodeDense, TrailingPaddingDropped)
{
    RawMat m = raw_zero(3, 200, MACKO_R_16F);
    m.at(0, 0) = 0x3C00;   /* then 199 zeros: 1 entry */
    m.at(1, 199) = 0x3C00; /* 199 zeros first: 12 paddings + 1 */
    Mat A;
    ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, 200, &A.A), MACKO_STATUS_SUCCESS);
    Arrays a = get_arrays(A.A);
    EXPECT_EQ(a.row_ptr, (std::vector<int64_t>{0, 1, 14, 14}));
    check_matrix(A.A, m);
}

struct Shape {
    int64_t rows, cols;
};

/* Random matrices over shapes x densities x types x input orders, with -0, NaN, Inf and subnormals: the arrays equal
 * the scalar encoder's and both decoders give the matrix back bit for bit (zeros as +0). */
TEST(EncodeDense, RoundTripRandom)
{
    const Shape shapes[] = {{0, 0},  {0, 5},  {5, 0},   {1, 1},    {1, 17},   {1, 100},   {17, 1},  {100, 1},
                            {7, 33}, {33, 7}, {64, 64}, {65, 129}, {4097, 5}, {17, 4097}, {3, 1000}};
    const double dens[] = {0, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1};
    uint64_t seed = 1;
    for (const Shape &s : shapes)
        for (double d : dens)
            for (macko_datatype_t t : kAllTypes) {
                RawMat m = raw_random(s.rows, s.cols, t, d, seed++);
                if (d > 0 && d < 1)
                    raw_add_specials(m, seed++, 9);
                for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
                    SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols) + " d " + std::to_string(d) +
                                 " type " + std::to_string(t) + " order " + std::to_string(o));
                    int64_t inner = o == MACKO_ORDER_ROW ? s.cols : s.rows;
                    Mat A;
                    ASSERT_EQ(encode_dense(m, o, std::max<int64_t>(inner, 1) + (seed % 3), &A.A), MACKO_STATUS_SUCCESS);
                    check_matrix(A.A, m);
                }
            }
}

/* Structure the format cares about: empty rows, fully dense rows, rows with long gaps, an all-zero and a fully dense
 * matrix, nonzeros only in the first or the last column. */
TEST(EncodeDense, RoundTripStructured)
{
    for (macko_datatype_t t : kAllTypes) {
        RawMat m = raw_random(70, 300, t, 0.4, 77);
        std::mt19937_64 g(5);
        for (int64_t r = 0; r < m.rows; r++) {
            int kind = (int)(r % 6);
            for (int64_t c = 0; c < m.cols; c++) {
                uint64_t &v = m.at(r, c);
                if (kind == 1)
                    v = 0; /* empty row */
                else if (kind == 2)
                    v = raw_random_nonzero(g, t); /* dense row */
                else if (kind == 3)
                    v = (c % (17 + r) == r % 5) ? raw_random_nonzero(g, t) : 0; /* long gaps */
                else if (kind == 4)
                    v = (c == 0 || c == m.cols - 1) ? raw_random_nonzero(g, t) : 0;
                else if (kind == 5)
                    v = (c == m.cols - 1) ? raw_random_nonzero(g, t) : 0; /* one nonzero after 299 zeros */
            }
        }
        for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
            Mat A;
            ASSERT_EQ(encode_dense(m, o, o == MACKO_ORDER_ROW ? 301 : 71, &A.A), MACKO_STATUS_SUCCESS);
            check_matrix(A.A, m);
        }
        RawMat z = raw_random(40, 50, t, 0.0, 3); /* all zero, half of them -0 */
        RawMat f = raw_random(40, 50, t, 1.0, 4); /* fully dense */
        for (const RawMat *p : {&z, &f}) {
            Mat A;
            ASSERT_EQ(encode_dense(*p, MACKO_ORDER_COL, 40, &A.A), MACKO_STATUS_SUCCESS);
            check_matrix(A.A, *p);
            Arrays a = get_arrays(A.A);
            EXPECT_EQ(a.entries, p == &z ? 0 : 40 * 50);
            if (p == &f) {
                for (uint8_t b : a.deltas)
                    ASSERT_EQ(b, 0);
            }
        }
    }
}

/* Row- and column-major input of the same matrix give the same bytes (the column-major path transposes tiles). */
TEST(EncodeDense, OrdersAgree)
{
    for (double d : {0.05, 0.5, 0.95}) {
        RawMat m = raw_random(300, 700, MACKO_R_16F, d, 11);
        Mat R, C;
        ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, 700, &R.A), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(encode_dense(m, MACKO_ORDER_COL, 301, &C.A), MACKO_STATUS_SUCCESS);
        expect_same_arrays(get_arrays(C.A), get_arrays(R.A), "col vs row");
    }
}

/* Raw arrays from the scalar encoder import unchanged and decode back. */
TEST(ImportMacko, RoundTripFromScalarEncoder)
{
    for (macko_datatype_t t : kAllTypes)
        for (double d : {0.0, 0.05, 0.5, 1.0}) {
            RawMat m = raw_random(37, 91, t, d, 21);
            raw_add_specials(m, 22, d > 0 ? 5 : 0);
            Arrays a = ref_encode(m);
            std::vector<int32_t> rp = rp32(a.row_ptr);
            Mat A;
            ASSERT_EQ(macko_mat_create_macko_host(&A.A, m.rows, m.cols, t, a.entries, a.values.data(), a.deltas.data(),
                                                  rp.data()),
                      MACKO_STATUS_SUCCESS);
            check_matrix(A.A, m);
        }
}

/* The lapack_style_docs/FORMAT.md example as raw arrays. */
TEST(ImportMacko, FormatMdExample)
{
    const uint16_t vals[8] = {0x3C00, 0, 0, 0x4000, 0x4200, 0, 0, 0};
    const uint8_t deltas[4] = {0xF2, 0x1F, 0x09, 0x00};
    const int32_t rp[2] = {0, 5};
    Mat A;
    ASSERT_EQ(macko_mat_create_macko_host(&A.A, 1, 47, MACKO_R_16F, 5, vals, deltas, rp), MACKO_STATUS_SUCCESS);
    RawMat m = raw_zero(1, 47, MACKO_R_16F);
    m.at(0, 2) = 0x3C00;
    m.at(0, 36) = 0x4000;
    m.at(0, 46) = 0x4200;
    check_matrix(A.A, m);
}

/* What the reference encoder of the paper emits: padding after the last nonzero of a row (it does not drop it), and
 * zeros stored with small deltas (from CSR). Accepted, decodes to the same matrix, nnz counts only nonzeros. */
TEST(ImportMacko, AcceptsTrailingPaddingAndStoredZeros)
{
    /* Row 0: 1.0 at column 0, then 40 zeros emitted reference-style as (0,15) at columns 16 and 32. Row 1: a stored
     * zero at column 3, 2.0 at column 5. cols = 41. */
    const uint16_t vals[8] = {0x3C00, 0, 0, 0, 0x4000, 0, 0, 0};
    const uint8_t deltas[4] = {(uint8_t)(0x0 | (15 << 4)), (uint8_t)(15 | (3 << 4)), 0x01, 0x00};
    const int32_t rp[3] = {0, 3, 5};
    Mat A;
    ASSERT_EQ(macko_mat_create_macko_host(&A.A, 2, 41, MACKO_R_16F, 5, vals, deltas, rp), MACKO_STATUS_SUCCESS);
    RawMat m = raw_zero(2, 41, MACKO_R_16F);
    m.at(0, 0) = 0x3C00;
    m.at(1, 5) = 0x4000;
    int64_t nnz = 0;
    ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, 2);
    check_export_dense(A.A, m, MACKO_ORDER_ROW, 41);
    check_export_dense(A.A, m, MACKO_ORDER_COL, 2);
    check_export_csr(A.A, m, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO);
}

/* Dense, CSR and raw-array import of the same matrix give byte-identical encodings. */
TEST(EncodeDense, DenseCsrAndImportAgree)
{
    for (macko_datatype_t t : kAllTypes)
        for (double d : {0.02, 0.3, 0.8}) {
            RawMat m = raw_random(50, 333, t, d, 31, false);
            raw_add_specials(m, 32, 4);
            std::vector<int64_t> rp{0}, ci;
            std::vector<uint8_t> vals;
            for (int64_t r = 0; r < m.rows; r++) {
                for (int64_t c = 0; c < m.cols; c++)
                    if (!m.is_zero(m.at(r, c))) {
                        ci.push_back(c);
                        uint64_t v = m.at(r, c);
                        vals.insert(vals.end(), (uint8_t *)&v, (uint8_t *)&v + m.es());
                    }
                rp.push_back((int64_t)ci.size());
            }
            Mat D, C, I;
            ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, 333, &D.A), MACKO_STATUS_SUCCESS);
            ASSERT_EQ(macko_mat_create_csr_host(&C.A, m.rows, m.cols, (int64_t)ci.size(), rp.data(), ci.data(),
                                                vals.data(), MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO, t),
                      MACKO_STATUS_SUCCESS);
            Arrays a = get_arrays(D.A);
            std::vector<int32_t> r32 = rp32(a.row_ptr);
            ASSERT_EQ(macko_mat_create_macko_host(&I.A, m.rows, m.cols, t, a.entries, a.values.data(), a.deltas.data(),
                                                  r32.data()),
                      MACKO_STATUS_SUCCESS);
            expect_same_arrays(get_arrays(C.A), a, "csr vs dense");
            expect_same_arrays(get_arrays(I.A), a, "import vs dense");
            int64_t n1 = 0, n2 = 0, n3 = 0;
            macko_mat_get_info(D.A, nullptr, nullptr, &n1, nullptr);
            macko_mat_get_info(C.A, nullptr, nullptr, &n2, nullptr);
            macko_mat_get_info(I.A, nullptr, nullptr, &n3, nullptr);
            EXPECT_EQ(n1, m.nnz());
            EXPECT_EQ(n2, m.nnz());
            EXPECT_EQ(n3, m.nnz());
        }
}

/* lapack_style_docs/FORMAT.md: for uniform random fp16 patterns effd = d(1 + z/(1-z))1.25 with z = (1-d)^16. The
 * formula counts value and delta bytes only; the row_ptr bytes (4 (rows + 1)) are added to it here, which is exact
 * bookkeeping, not a fudge (at d = 0.1 on 2048 x 2048 they are 0.6 % of the total). Row-boundary effects (the first gap
 * of a row is cut at column 0) are below 0.2 % and left in the tolerance. */
TEST(EncodeDense, EffectiveDensityMatchesFormat)
{
    const int64_t n = 2048;
    for (int i = 1; i <= 9; i++) {
        double d = 0.1 * i;
        RawMat m = raw_random(n, n, MACKO_R_16F, d, 1000 + (uint64_t)i, false);
        Mat A;
        ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, n, &A.A), MACKO_STATUS_SUCCESS);
        double effd = 0;
        ASSERT_EQ(macko_mat_get_storage(A.A, nullptr, nullptr, nullptr, &effd), MACKO_STATUS_SUCCESS);
        double z = std::pow(1 - d, 16);
        double formula = d * (1 + z / (1 - z)) * 1.25;
        double rowptr = 4.0 * (double)(n + 1) / ((double)n * (double)n * 2);
        EXPECT_NEAR(effd / (formula + rowptr), 1.0, 0.01)
            << "d = " << d << ": effd " << effd << ", formula " << formula << " + row_ptr " << rowptr;
        /* Worst case bound of lapack_style_docs/FORMAT.md holds for any pattern. */
        EXPECT_LE(effd, 1.25 * (d + (1 - d) / 16) * 1.01 + rowptr);
    }
    /* The worst case is reached by a nonzero after every 16 zeros: one padding per nonzero. */
    RawMat w = raw_zero(64, 2048, MACKO_R_16F);
    int64_t nz = 0;
    for (int64_t r = 0; r < w.rows; r++)
        for (int64_t c = 16; c < w.cols; c += 17, nz++)
            w.at(r, c) = 0x3C00;
    Mat A;
    ASSERT_EQ(encode_dense(w, MACKO_ORDER_ROW, 2048, &A.A), MACKO_STATUS_SUCCESS);
    int64_t entries = 0, bytes = 0;
    double effd = 0;
    ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, &entries, nullptr, &effd), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(entries, 2 * nz);
    double d = (double)nz / (64.0 * 2048);
    double rowptr = 4.0 * 65 / (64.0 * 2048 * 2);
    EXPECT_NEAR(effd, 1.25 * (d + (1 - d) / 16) + rowptr, 0.002);
}

/* 12288 x 12288 fp16 at d = 0.5 (row-major): prints the encode time; the result is checked on a few rows. */
TEST(EncodeDense, Timing12288)
{
    const int64_t n = 12288;
    std::vector<uint16_t> v((size_t)(n * n));
    uint64_t s = 0x9E3779B97F4A7C15ull;
    int64_t nz = 0;
    for (auto &h : v) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        bool on = (s >> 63) != 0;
        h = on ? (uint16_t)(0x3800 | ((s >> 20) & 0x3FF)) : (uint16_t)((s & 2) ? 0x8000 : 0);
        nz += on;
    }
    Mat A;
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(macko_mat_create_dense_host(&A.A, n, n, MACKO_R_16F, v.data(), n, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ timing ] macko_mat_create_dense_host 12288 x 12288 fp16 d=0.5 row-major: %.3f s\n", sec);
    int64_t nnz = 0;
    ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, nz);
    /* The first 3 rows and the last row against the scalar encoder. */
    Arrays a = get_arrays(A.A);
    for (int64_t r : {INT64_C(0), INT64_C(1), INT64_C(2), n - 1}) {
        RawMat row = raw_zero(1, n, MACKO_R_16F);
        for (int64_t c = 0; c < n; c++)
            row.b[(size_t)c] = v[(size_t)(r * n + c)];
        Arrays w = ref_encode(row);
        int64_t k0 = a.row_ptr[(size_t)r];
        ASSERT_EQ(a.row_ptr[(size_t)r + 1] - k0, w.entries) << "row " << r;
        for (int64_t k = 0; k < w.entries; k++) {
            ASSERT_EQ(std::memcmp(&a.values[(size_t)(k0 + k) * 2], &w.values[(size_t)k * 2], 2), 0) << r << " " << k;
            unsigned got = (a.deltas[(size_t)(k0 + k) / 2] >> (4 * ((k0 + k) % 2))) & 0xF;
            unsigned want = (w.deltas[(size_t)k / 2] >> (4 * (k % 2))) & 0xF;
            ASSERT_EQ(got, want) << "row " << r << " entry " << k;
        }
    }
}

/* What is a zero, per value type (format.h): exactly the values whose bits below the sign bit are all zero. For fp64
 * that takes both 32-bit halves (a value with only low-word bits is a subnormal, not a zero); for bf16 the sign is
 * bit 15 as in fp16. Each probe sits in a 64-column row (the vector mask path) and in a 5-column row (the scalar
 * tail), in both orders. */
TEST(EncodeDense, ZeroTestPerType)
{
    struct Probe {
        macko_datatype_t t;
        uint64_t bits;
        bool zero;
    };
    const Probe probes[] = {
        {MACKO_R_64F, UINT64_C(0x8000000000000000), true},  {MACKO_R_64F, UINT64_C(0x0000000000000001), false},
        {MACKO_R_64F, UINT64_C(0x0000000100000000), false}, {MACKO_R_64F, UINT64_C(0x8000000080000000), false},
        {MACKO_R_64F, UINT64_C(0x3FF0000000000000), false}, {MACKO_R_64F, UINT64_C(0xFFF8000000000000), false},
        {MACKO_R_64F, UINT64_C(0x7FF0000000000000), false}, {MACKO_R_16BF, 0x8000u, true},
        {MACKO_R_16BF, 0x0001u, false},                     {MACKO_R_16BF, 0x7FC0u, false},
        {MACKO_R_16BF, 0xFF80u, false},                     {MACKO_R_16BF, 0x3F80u, false},
    };
    for (const Probe &p : probes)
        for (int64_t cols : {5, 64, 130})
            for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
                SCOPED_TRACE(::testing::Message() << "type " << p.t << " bits 0x" << std::hex << p.bits << std::dec
                                                  << " cols " << cols << " order " << o);
                RawMat m = raw_zero(2, cols, p.t);
                m.at(0, cols - 2) = p.bits;
                m.at(1, 0) = one(p.t, 1);
                m.at(1, cols - 1) = p.bits;
                Mat A;
                ASSERT_EQ(encode_dense(m, o, o == MACKO_ORDER_ROW ? cols : 2, &A.A), MACKO_STATUS_SUCCESS);
                int64_t nnz = -1;
                ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
                EXPECT_EQ(nnz, p.zero ? 1 : 3);
                check_matrix(A.A, m);
            }
}

/* The raw-array import checks the tail of every value type bitwise: a -0 (or any bits) past `entries` is refused at
 * position 6, naming the value; values bytes are read at the type's width (an 8-byte fp64 value whose low word alone
 * is nonzero is still a nonzero tail). */
TEST(ImportMacko, TailValuesPerType)
{
    for (macko_datatype_t t : kAllTypes) {
        const size_t es = value_bytes(t);
        for (uint64_t bad : {sign_bit(t), UINT64_C(1)}) {
            SCOPED_TRACE(::testing::Message() << "type " << t << " tail bits 0x" << std::hex << bad);
            std::vector<uint8_t> vals(8 * es, 0);
            const uint64_t v1 = one(t, 1);
            std::memcpy(&vals[0], &v1, es);
            std::memcpy(&vals[5 * es], &bad, es);
            const uint8_t deltas[4] = {0, 0, 0, 0};
            const int32_t rp[2] = {0, 1};
            macko_mat_t A = reinterpret_cast<macko_mat_t>(static_cast<uintptr_t>(0x1234));
            EXPECT_EQ(macko_mat_create_macko_host(&A, 1, 4, t, 1, vals.data(), deltas, rp), MACKO_STATUS_INVALID_VALUE);
            EXPECT_EQ(macko_get_last_error_position(), 6);
            EXPECT_NE(std::string(macko_get_last_error_message()).find("tail value 5"), std::string::npos)
                << macko_get_last_error_message();
            EXPECT_EQ(A, reinterpret_cast<macko_mat_t>(static_cast<uintptr_t>(0x1234)));
            std::memset(&vals[5 * es], 0, es);
            Mat B;
            ASSERT_EQ(macko_mat_create_macko_host(&B.A, 1, 4, t, 1, vals.data(), deltas, rp), MACKO_STATUS_SUCCESS);
            int64_t bytes = 0;
            double eff = 0;
            ASSERT_EQ(macko_mat_get_storage(B.A, &bytes, nullptr, nullptr, &eff), MACKO_STATUS_SUCCESS);
            EXPECT_EQ(bytes, (int64_t)(8 * es + 4 + 8));
            EXPECT_DOUBLE_EQ(eff, (double)bytes / (4.0 * (double)es));
        }
    }
}
