/* Test-side helpers for the host encoder tests: raw-bit matrices (so NaN payloads, -0 and subnormals survive), an
 * obviously-correct scalar MACKO encoder written straight from lapack_style_docs/FORMAT.md, and access to a matrix's
 * arrays. */
#pragma once

#include "common.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <random>
#include <vector>

namespace mt
{

/* Bytes per value and the sign bit of each value type. */
inline size_t type_bytes(macko_datatype_t t) { return value_bytes(t); }
inline uint64_t sign_bit(macko_datatype_t t) { return UINT64_C(1) << (8 * type_bytes(t) - 1); }

/* A dense matrix as raw value bits (the low 16, 32 or 64 bits as the type has), row-major. */
struct RawMat {
    int64_t rows = 0, cols = 0;
    macko_datatype_t type = MACKO_R_16F;
    std::vector<uint64_t> b;
    uint64_t &at(int64_t r, int64_t c) { return b[(size_t)(r * cols + c)]; }
    uint64_t at(int64_t r, int64_t c) const { return b[(size_t)(r * cols + c)]; }
    size_t es() const { return type_bytes(type); }
    /* +0 or -0: no bit below the sign bit is set */
    bool is_zero(uint64_t v) const { return (v & (sign_bit(type) - 1)) == 0; }
    int64_t nnz() const
    {
        int64_t n = 0;
        for (uint64_t v : b)
            n += !is_zero(v);
        return n;
    }
};

inline RawMat raw_zero(int64_t rows, int64_t cols, macko_datatype_t type)
{
    RawMat m;
    m.rows = rows;
    m.cols = cols;
    m.type = type;
    m.b.assign((size_t)(rows * cols), 0u);
    return m;
}

/* A random nonzero value's bits (never +0/-0), finite and non-subnormal. */
inline uint64_t raw_random_nonzero(std::mt19937_64 &g, macko_datatype_t type)
{
    if (type == MACKO_R_16F) {
        uint32_t exp = 1 + (uint32_t)(g() % 30), man = (uint32_t)(g() & 0x3FF), sign = (uint32_t)(g() & 1) << 15;
        return sign | (exp << 10) | man;
    }
    if (type == MACKO_R_16BF) {
        uint32_t exp = 1 + (uint32_t)(g() % 254), man = (uint32_t)(g() & 0x7F), sign = (uint32_t)(g() & 1) << 15;
        return sign | (exp << 7) | man;
    }
    if (type == MACKO_R_64F) {
        uint64_t exp = 1 + g() % 2046, man = g() & ((UINT64_C(1) << 52) - 1), sign = (g() & 1) << 63;
        return sign | (exp << 52) | man;
    }
    uint32_t exp = 1 + (uint32_t)(g() % 254), man = (uint32_t)(g() & 0x7FFFFF), sign = (uint32_t)(g() & 1) << 31;
    return sign | (exp << 23) | man;
}

/* Each position nonzero with probability density; with `zeros_signed` about half the zeros are -0. */
inline RawMat raw_random(int64_t rows, int64_t cols, macko_datatype_t type, double density, uint64_t seed,
                         bool zeros_signed = true)
{
    RawMat m = raw_zero(rows, cols, type);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const uint64_t negzero = sign_bit(type);
    for (auto &v : m.b) {
        if (u(g) < density)
            v = raw_random_nonzero(g, type);
        else if (zeros_signed && (g() & 1))
            v = negzero;
    }
    return m;
}

/* Sprinkles NaN (two payloads), +/-Inf and subnormals (+/-) over random positions. */
inline void raw_add_specials(RawMat &m, uint64_t seed, int count)
{
    std::mt19937_64 g(seed);
    /* quiet NaN, signalling NaN, +Inf, -Inf, +/- smallest subnormal, all ones (a NaN), per type */
    static const uint64_t sp[4][7] = {
        {0x7E00u, 0x7C01u, 0x7C00u, 0xFC00u, 0x0001u, 0x8001u, 0xFFFFu},
        {0x7FC00000u, 0x7F800001u, 0x7F800000u, 0xFF800000u, 0x00000001u, 0x80000001u, 0xFFFFFFFFu},
        {0x7FC0u, 0x7F81u, 0x7F80u, 0xFF80u, 0x0001u, 0x8001u, 0xFFFFu},
        {UINT64_C(0x7FF8000000000000), UINT64_C(0x7FF0000000000001), UINT64_C(0x7FF0000000000000),
         UINT64_C(0xFFF0000000000000), UINT64_C(1), UINT64_C(0x8000000000000001), ~UINT64_C(0)}};
    const uint64_t *specials =
        sp[m.type == MACKO_R_16F ? 0 : m.type == MACKO_R_32F ? 1 : m.type == MACKO_R_16BF ? 2 : 3];
    if (m.b.empty())
        return;
    for (int i = 0; i < count; i++)
        m.b[(size_t)(g() % m.b.size())] = specials[(size_t)i % 7];
}

/* The matrix laid out in `order` with leading dimension ld; everything outside the matrix is junk (0x5A bytes, a
 * nonzero value pattern, so reading it would show). */
inline std::vector<uint8_t> raw_bytes(const RawMat &m, macko_order_t order, int64_t ld)
{
    return lay_out(m.rows, m.cols, m.es(), order, ld, 0x5A, [&](int64_t r, int64_t c, uint8_t *dst) {
        const uint64_t v = m.at(r, c);
        std::memcpy(dst, &v, m.es()); /* little-endian: low bytes first */
    });
}

/* The same matrix with every +0/-0 replaced by +0 (what a decoder must give back). */
inline RawMat raw_canonical(const RawMat &m)
{
    RawMat c = m;
    for (auto &v : c.b)
        if (c.is_zero(v))
            v = 0;
    return c;
}

/* MACKO arrays as plain vectors. */
struct Arrays {
    std::vector<uint8_t> values; /* entries_padded * es bytes */
    std::vector<uint8_t> deltas; /* entries_padded / 2 bytes */
    std::vector<int64_t> row_ptr;
    int64_t entries = 0, entries_padded = 0;
    bool rp64 = false;
};

/* The scalar encoder of lapack_style_docs/FORMAT.md, step by step: the skipped counter, padding when skipped == 15,
 * trailing padding dropped, rows back to back, tail zero-filled to a multiple of 8. With `stored` (CSR input), position
 * i is an entry iff stored[i] != 0, whatever its value. */
inline Arrays ref_encode(const RawMat &m, const std::vector<uint8_t> *stored = nullptr)
{
    Arrays a;
    std::vector<uint64_t> vals;
    std::vector<unsigned> dl;
    a.row_ptr.push_back(0);
    for (int64_t r = 0; r < m.rows; r++) {
        size_t keep = vals.size();
        unsigned skipped = 0;
        for (int64_t c = 0; c < m.cols; c++) {
            uint64_t v = m.at(r, c);
            bool entry = stored ? (*stored)[(size_t)(r * m.cols + c)] != 0 : !m.is_zero(v);
            if (entry) {
                vals.push_back(v);
                dl.push_back(skipped);
                skipped = 0;
                keep = vals.size();
            } else if (skipped == 15) {
                vals.push_back(0);
                dl.push_back(15);
                skipped = 0;
            } else {
                skipped++;
            }
        }
        vals.resize(keep); /* drop the padding after the last nonzero */
        dl.resize(keep);
        a.row_ptr.push_back((int64_t)vals.size());
    }
    a.entries = (int64_t)vals.size();
    a.entries_padded = (a.entries + 7) / 8 * 8;
    a.rp64 = a.entries >= (INT64_C(1) << 31);
    vals.resize((size_t)a.entries_padded, 0);
    dl.resize((size_t)a.entries_padded, 0);
    a.values.resize((size_t)a.entries_padded * m.es());
    for (size_t k = 0; k < vals.size(); k++)
        std::memcpy(&a.values[k * m.es()], &vals[k], m.es());
    a.deltas.resize((size_t)a.entries_padded / 2);
    for (size_t k = 0; k < dl.size(); k += 2)
        a.deltas[k / 2] = (uint8_t)(dl[k] | (dl[k + 1] << 4));
    return a;
}

/* Copies A's host arrays. */
inline Arrays get_arrays(macko_mat_t A)
{
    Arrays a;
    const void *v = nullptr, *rp = nullptr;
    const uint8_t *d = nullptr;
    macko_indextype_t rpt = MACKO_INDEX_32I;
    int64_t rows = 0;
    macko_datatype_t type = MACKO_R_16F;
    EXPECT_EQ(macko_mat_get_info(A, &rows, nullptr, nullptr, &type), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_get_macko_host(A, &v, &d, &rp, &rpt, &a.entries, &a.entries_padded), MACKO_STATUS_SUCCESS);
    size_t es = type_bytes(type);
    a.values.assign((const uint8_t *)v, (const uint8_t *)v + a.entries_padded * (int64_t)es);
    a.deltas.assign(d, d + a.entries_padded / 2);
    a.rp64 = rpt == MACKO_INDEX_64I;
    for (int64_t r = 0; r <= rows; r++)
        a.row_ptr.push_back(a.rp64 ? ((const int64_t *)rp)[r] : (int64_t)((const int32_t *)rp)[r]);
    return a;
}

inline void expect_same_arrays(const Arrays &got, const Arrays &want, const std::string &what)
{
    EXPECT_EQ(got.entries, want.entries) << what;
    EXPECT_EQ(got.entries_padded, want.entries_padded) << what;
    EXPECT_EQ(got.rp64, want.rp64) << what;
    EXPECT_TRUE(got.row_ptr == want.row_ptr) << what << ": row_ptr differs";
    EXPECT_TRUE(got.values == want.values) << what << ": values differ";
    EXPECT_TRUE(got.deltas == want.deltas) << what << ": deltas differ";
}

/* row_ptr as the 32-bit array the import routine takes (entries < 2^31). */
inline std::vector<int32_t> rp32(const std::vector<int64_t> &rp) { return std::vector<int32_t>(rp.begin(), rp.end()); }

/* ---- checks shared by the encoder tests */

/* Owns a matrix for the length of a test. */
struct Mat {
    macko_mat_t A = nullptr;
    ~Mat() { macko_mat_destroy(A); }
};

inline macko_status_t encode_dense(const RawMat &m, macko_order_t order, int64_t ld, macko_mat_t *A)
{
    std::vector<uint8_t> in = raw_bytes(m, order, ld);
    return macko_mat_create_dense_host(A, m.rows, m.cols, m.type, in.data(), ld, order);
}

/* A random fp16 or fp32 host matrix (density 0.3) whose row 1 is empty and whose row 2 holds a value only every 40
 * columns (gaps of 39: padding); NULL after a failure (reported). */
inline macko_mat_t random_host_matrix(int64_t rows, int64_t cols, macko_datatype_t type, uint64_t seed)
{
    RawMat m = raw_random(rows, cols, type, 0.3, seed);
    for (int64_t c = 0; c < cols; c++) {
        if (rows > 1)
            m.at(1, c) = 0;
        if (rows > 2)
            m.at(2, c) = (c % 40 == 0) ? 0x3C00u : 0u;
    }
    macko_mat_t A = nullptr;
    EXPECT_EQ(encode_dense(m, MACKO_ORDER_ROW, cols, &A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    return A;
}

/* Exports A densely in `order` with leading dimension ld into a poisoned buffer and checks every byte: the matrix
 * region equals want (zeros as +0), the rest of the buffer is untouched. */
inline void check_export_dense(macko_mat_t A, const RawMat &want, macko_order_t order, int64_t ld)
{
    const uint8_t poison = 0xC3;
    int64_t outer = order == MACKO_ORDER_ROW ? want.rows : want.cols;
    std::vector<uint8_t> out((size_t)(std::max<int64_t>(outer, 1) * ld) * want.es(), poison);
    ASSERT_EQ(macko_mat_export_dense_host(A, out.data(), ld, order), MACKO_STATUS_SUCCESS);
    std::vector<uint8_t> exp = raw_bytes(raw_canonical(want), order, ld);
    size_t es = want.es(), bad = 0;
    for (int64_t o = 0; o < std::max<int64_t>(outer, 1); o++)
        for (int64_t i = 0; i < ld; i++) {
            size_t off = (size_t)(o * ld + i) * es;
            bool inside = o < outer && i < (order == MACKO_ORDER_ROW ? want.cols : want.rows);
            for (size_t b = 0; b < es; b++) {
                uint8_t w = inside ? exp[off + b] : poison;
                if (out[off + b] != w && bad++ < 5)
                    ADD_FAILURE() << "export_dense order " << order << " ld " << ld << ": byte at element (" << o
                                  << ", " << i << ") is " << (int)out[off + b] << ", want " << (int)w;
            }
        }
    EXPECT_EQ(bad, 0u);
}

/* Exports A as CSR with the given index type/base and compares with the nonzeros of want. */
inline void check_export_csr(macko_mat_t A, const RawMat &want, macko_indextype_t it, macko_index_base_t base)
{
    int64_t nnz = -1;
    ASSERT_EQ(macko_mat_get_info(A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(nnz, want.nnz());
    const size_t is = it == MACKO_INDEX_64I ? 8 : 4, es = want.es();
    std::vector<uint8_t> rp((size_t)(want.rows + 1) * is, 0xEE), ci((size_t)nnz * is + 8, 0xEE),
        vals((size_t)nnz * es + 8, 0xEE);
    ASSERT_EQ(macko_mat_export_csr_host(A, rp.data(), ci.data(), vals.data(), it, base), MACKO_STATUS_SUCCESS);
    auto idx = [&](const std::vector<uint8_t> &v, int64_t k) -> int64_t {
        if (is == 8) {
            int64_t x;
            std::memcpy(&x, &v[(size_t)k * 8], 8);
            return x;
        }
        int32_t x;
        std::memcpy(&x, &v[(size_t)k * 4], 4);
        return x;
    };
    int64_t k = 0;
    for (int64_t r = 0; r < want.rows; r++) {
        ASSERT_EQ(idx(rp, r), k + (int64_t)base) << "row_ptr[" << r << "]";
        for (int64_t c = 0; c < want.cols; c++) {
            uint64_t v = want.at(r, c);
            if (want.is_zero(v))
                continue;
            ASSERT_EQ(idx(ci, k), c + (int64_t)base) << "row " << r << " entry " << k;
            uint64_t got = 0;
            std::memcpy(&got, &vals[(size_t)k * es], es);
            ASSERT_EQ(got, v) << "row " << r << " col " << c;
            k++;
        }
    }
    EXPECT_EQ(idx(rp, want.rows), k + (int64_t)base);
    for (size_t b = (size_t)nnz * is; b < ci.size(); b++)
        ASSERT_EQ(ci[b], 0xEE) << "col_ind written past nnz";
    for (size_t b = (size_t)nnz * es; b < vals.size(); b++)
        ASSERT_EQ(vals[b], 0xEE) << "values written past nnz";
}

/* Everything we know about one encoding of m. */
inline void check_matrix(macko_mat_t A, const RawMat &m)
{
    int64_t rows = -1, cols = -1, nnz = -1;
    macko_datatype_t type = (macko_datatype_t)-1;
    ASSERT_EQ(macko_mat_get_info(A, &rows, &cols, &nnz, &type), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rows, m.rows);
    EXPECT_EQ(cols, m.cols);
    EXPECT_EQ(nnz, m.nnz());
    EXPECT_EQ(type, m.type);
    expect_same_arrays(get_arrays(A), ref_encode(m), "vs scalar encoder");
    for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
        int64_t inner = o == MACKO_ORDER_ROW ? m.cols : m.rows;
        check_export_dense(A, m, o, std::max<int64_t>(inner, 1));
        check_export_dense(A, m, o, inner + 3);
    }
    check_export_csr(A, m, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO);
    check_export_csr(A, m, MACKO_INDEX_64I, MACKO_INDEX_BASE_ONE);
}

inline uint64_t one(macko_datatype_t t, int v) /* small integers as bits */
{
    if (t == MACKO_R_16F)
        return float_to_half((float)v);
    if (t == MACKO_R_64F) {
        double d = (double)v;
        uint64_t b;
        std::memcpy(&b, &d, 8);
        return b;
    }
    float f = (float)v;
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return t == MACKO_R_16BF ? b >> 16 : b; /* small integers are exact in bf16: the float's upper half */
}

} // namespace mt
