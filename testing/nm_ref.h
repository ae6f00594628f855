/* Test helpers of the N:M kind: the encoding and the detection written literally from lapack_style_docs/FORMAT_NM.md
 * (brute force over the elements, no bit tricks: an independent reference for src/nm_encode.c), dense matrices as
 * raw values of any type, and matrices that follow a given pattern. */
#pragma once

#include "macko.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace nmr {

constexpr int kM[] = {4, 8, 16, 32};
constexpr int kV[] = {1, 2, 4, 8, 16, 32};

inline size_t es_of(macko_datatype_t t) { return t == MACKO_R_64F ? 8 : t == MACKO_R_32F ? 4 : 2; }

/* A dense rows x cols matrix of type t, row-major, as the raw bits of each value. */
struct Dense {
    int64_t rows = 0, cols = 0;
    macko_datatype_t type = MACKO_R_32F;
    std::vector<uint64_t> bits;
    uint64_t &at(int64_t r, int64_t c) { return bits[(size_t)(r * cols + c)]; }
    uint64_t at(int64_t r, int64_t c) const { return bits[(size_t)(r * cols + c)]; }
    /* +0 and -0 are zero; everything else (NaN, Inf, subnormals) is a nonzero */
    bool nonzero(int64_t r, int64_t c) const
    {
        const uint64_t mag = es_of(type) == 2 ? 0x7FFFu : es_of(type) == 4 ? 0x7FFFFFFFu : 0x7FFFFFFFFFFFFFFFull;
        return (at(r, c) & mag) != 0;
    }
    int64_t nnz() const
    {
        int64_t n = 0;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++)
                n += nonzero(r, c);
        return n;
    }
    /* The bytes in `order` with leading dimension ld (junk between the lines). */
    std::vector<uint8_t> bytes(macko_order_t order, int64_t ld, uint8_t junk = 0xA5) const
    {
        const size_t es = es_of(type);
        const int64_t outer = order == MACKO_ORDER_ROW ? rows : cols;
        std::vector<uint8_t> out((size_t)(std::max<int64_t>(outer, 1) * ld) * es, junk);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++) {
                const uint64_t b = at(r, c);
                std::memcpy(&out[(size_t)(order == MACKO_ORDER_ROW ? r * ld + c : c * ld + r) * es], &b, es);
            }
        return out;
    }
};

inline Dense zeros(int64_t rows, int64_t cols, macko_datatype_t t)
{
    Dense d;
    d.rows = rows;
    d.cols = cols;
    d.type = t;
    d.bits.assign((size_t)(rows * cols), 0);
    return d;
}

/* A random nonzero value of type t: the bits of a number in +-[0.25, 2) (fp16, bf16, fp32 or fp64). */
inline uint64_t random_value(macko_datatype_t t, std::mt19937_64 &g)
{
    const uint64_t sign = g() & 1, frac = g();
    switch (t) {
    case MACKO_R_16F: return (sign << 15) | ((uint64_t)(13 + g() % 3) << 10) | (frac & 0x3FF);
    case MACKO_R_16BF: return (sign << 15) | ((uint64_t)(125 + g() % 3) << 7) | (frac & 0x7F);
    case MACKO_R_32F: return (sign << 31) | ((uint64_t)(125 + g() % 3) << 23) | (frac & 0x7FFFFF);
    default: return (sign << 63) | ((uint64_t)(1021 + g() % 3) << 52) | (frac & 0xFFFFFFFFFFFFFull);
    }
}

/* A matrix that follows (n, m, v): in each group of v rows and window of m columns, a random set of at most n
 * in-range columns (sometimes empty, sometimes full) holds the nonzeros, each row using each of them with probability
 * 3/4. */
inline Dense follows(int64_t rows, int64_t cols, macko_datatype_t t, int n, int m, int v, uint64_t seed)
{
    std::mt19937_64 g(seed);
    Dense d = zeros(rows, cols, t);
    for (int64_t r0 = 0; r0 < rows; r0 += v)
        for (int64_t c0 = 0; c0 < cols; c0 += m) {
            const int valid = (int)std::min<int64_t>(m, cols - c0);
            std::vector<int> cand(valid);
            for (int i = 0; i < valid; i++)
                cand[i] = i;
            std::shuffle(cand.begin(), cand.end(), g);
            const int limit = std::min(n, valid);
            const int k = g() % 5 == 0 ? limit : (int)(g() % (uint64_t)(limit + 1));
            for (int64_t r = r0; r < std::min<int64_t>(r0 + v, rows); r++)
                for (int i = 0; i < k; i++)
                    if (g() % 4 != 0)
                        d.at(r, c0 + cand[i]) = random_value(t, g);
        }
    return d;
}

/* The encoding of FORMAT_NM.md: the arrays, or the refusal's first offending (row, window). */
struct Enc {
    bool ok = false;
    int n = 0, m = 0, v = 0;
    std::vector<uint8_t> values; /* rows * kept values of the type, little-endian bytes */
    std::vector<uint8_t> positions;
    int64_t bad_row = -1, bad_window = -1;
};

/* The columns of window w holding a nonzero in any of rows [r0, r1). */
inline std::set<int> window_set(const Dense &d, int m, int64_t r0, int64_t r1, int64_t w)
{
    std::set<int> s;
    for (int64_t r = r0; r < r1; r++)
        for (int p = 0; p < m; p++)
            if (w * m + p < d.cols && d.nonzero(r, w * m + p))
                s.insert(p);
    return s;
}

/* FORMAT_NM.md, "Encoding a dense matrix", literally. */
inline Enc encode(const Dense &d, int n, int m, int v)
{
    Enc e;
    const size_t es = es_of(d.type);
    const int64_t W = (d.cols + m - 1) / m, G = (d.rows + v - 1) / v, K = W * n;
    e.n = n;
    e.m = m;
    e.v = v;
    e.values.assign((size_t)(d.rows * K) * es, 0);
    e.positions.assign((size_t)(G * K), 0);
    for (int64_t g = 0; g < G; g++) {
        const int64_t r0 = g * v, r1 = std::min<int64_t>(r0 + v, d.rows);
        for (int64_t w = 0; w < W; w++) {
            const std::set<int> S = window_set(d, m, r0, r1, w);
            if ((int)S.size() > n) {
                for (int64_t r = r0; r < r1; r++)
                    if ((int)window_set(d, m, r0, r + 1, w).size() > n) {
                        e.bad_row = r;
                        e.bad_window = w;
                        return e;
                    }
            }
            std::vector<int> P(S.begin(), S.end());
            for (int p = 0; p < m && (int)P.size() < n; p++)
                if (!S.count(p))
                    P.push_back(p);
            std::sort(P.begin(), P.end());
            for (int j = 0; j < n; j++) {
                e.positions[(size_t)(g * K + w * n + j)] = (uint8_t)P[(size_t)j];
                const int64_t c = w * m + P[(size_t)j];
                for (int64_t r = r0; r < r1; r++) {
                    const uint64_t b = c < d.cols && d.nonzero(r, c) ? d.at(r, c) : 0;
                    std::memcpy(&e.values[(size_t)(r * K + w * n + j) * es], &b, es);
                }
            }
        }
    }
    e.ok = true;
    return e;
}

/* The largest count of nonzero columns of a window of (m, v), by brute force. */
inline int need(const Dense &d, int m, int v)
{
    int best = 0;
    for (int64_t r0 = 0; r0 < d.rows; r0 += v)
        for (int64_t w = 0; w * m < d.cols; w++)
            best = std::max(best, (int)window_set(d, m, r0, std::min<int64_t>(r0 + v, d.rows), w).size());
    return best;
}

/* FORMAT_NM.md, "Detection": the pattern for the given n, m, v (0: detect); n = 0 when none holds the matrix. */
inline void detect(const Dense &d, int n, int m, int v, int *on, int *om, int *ov)
{
    int64_t best = -1;
    *on = *om = *ov = 0;
    for (int M : kM)
        for (int V : kV) {
            if ((m && M != m) || (v && V != v) || n > M)
                continue;
            const int nd = need(d, M, V), N = n ? n : std::max(1, nd);
            if (nd > N)
                continue;
            const int64_t W = (d.cols + M - 1) / M, G = (d.rows + V - 1) / V;
            const int64_t bytes = d.rows * W * N * (int64_t)es_of(d.type) + G * W * N;
            /* ties: the larger M, then the larger V (the loops go up) */
            if (best < 0 || bytes <= best) {
                best = bytes;
                *on = N;
                *om = M;
                *ov = V;
            }
        }
}

} // namespace nmr
