/* Test helpers of the QUANT kind (lapack_style_docs/FORMAT_QUANT.md): valid random arrays, and the reference decode
 * through src/quant.h (the normative arithmetic) into the dense matrix W + O. */
#pragma once

#include "macko.h"
#include "quant.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace qt {

/* The arrays of a QUANT encoding, as macko_mat_create_quant_host takes them. */
struct QArrays {
    int64_t rows = 0, cols = 0;
    std::vector<uint64_t> words;
    std::vector<int32_t> optr;
    std::vector<uint32_t> oent;
    int64_t bands() const { return (rows + 15) / 16; }
    int64_t tcols() const { return (cols + 15) / 16; }
    int64_t outliers() const { return (int64_t)oent.size(); }
    /* the word of tile row i of tile (b, t) */
    uint64_t &word(int64_t b, int64_t t, int i) { return words[(size_t)macko_quant_word_index(tcols(), b, t, i)]; }
};

inline double h2d(uint16_t h) { return macko_half_to_double(h); }
inline uint16_t d2h(double v) { return macko_half_from_double(v); }

/* The decoded weight at (r, c) (inside the matrix), as fp16 bits. */
inline uint16_t weight(const QArrays &a, int64_t r, int64_t c)
{
    const uint64_t *tile = &a.words[(size_t)macko_quant_word_index(a.tcols(), r / 16, c / 16, 0)];
    uint16_t s, m;
    macko_quant_row(macko_quant_stats(tile), tile[r % 16], &s, &m);
    return macko_quant_weight(macko_quant_q(tile[r % 16], (int)(c % 16)), s, m);
}

/* The outlier at (r, c), 0 when there is none (fp16 bits). */
inline uint16_t outlier(const QArrays &a, int64_t r, int64_t c)
{
    for (int32_t k = a.optr[(size_t)r]; k < a.optr[(size_t)r + 1]; k++)
        if ((int64_t)macko_quant_outlier_col(a.oent[(size_t)k]) == c)
            return macko_quant_outlier_value(a.oent[(size_t)k]);
    return 0;
}

/* W + O in double, row-major (exact: both are fp16). */
inline std::vector<double> decode(const QArrays &a)
{
    std::vector<double> d((size_t)(a.rows * a.cols));
    for (int64_t r = 0; r < a.rows; r++)
        for (int64_t c = 0; c < a.cols; c++)
            d[(size_t)(r * a.cols + c)] = h2d(weight(a, r, c));
    for (int64_t r = 0; r < a.rows; r++)
        for (int32_t k = a.optr[(size_t)r]; k < a.optr[(size_t)r + 1]; k++)
            d[(size_t)(r * a.cols + macko_quant_outlier_col(a.oent[(size_t)k]))] +=
                h2d(macko_quant_outlier_value(a.oent[(size_t)k]));
    return d;
}

/* The dense fp16 matrix the export must write: W + O rounded once. */
inline std::vector<uint16_t> decode_half(const QArrays &a)
{
    const std::vector<double> d = decode(a);
    std::vector<uint16_t> h(d.size());
    for (size_t i = 0; i < d.size(); i++)
        h[i] = d2h(d[i]);
    return h;
}

inline int64_t nnz(const QArrays &a)
{
    int64_t n = 0;
    for (double v : decode(a))
        n += v != 0;
    return n;
}

/* Tile statistics S from four fp16 numbers. */
inline uint64_t stats_of(uint16_t s_s, uint16_t z_s, uint16_t s_z, uint16_t z_z)
{
    return (uint64_t)s_s | (uint64_t)z_s << 16 | (uint64_t)s_z << 32 | (uint64_t)z_z << 48;
}

/* Writes tile (b, t) from its statistics and, for tile row i, codes q[i][16], sq[i], zq[i]. */
inline void put_tile(QArrays &a, int64_t b, int64_t t, uint64_t stats, const unsigned q[16][16], const unsigned sq[16],
                     const unsigned zq[16])
{
    for (int i = 0; i < 16; i++)
        a.word(b, t, i) = macko_quant_pack(q[i], sq[i], zq[i], macko_quant_stats_piece(stats, i));
}

/* Valid random arrays: modest statistics (every decode finite), random codes (0 in the padding), some all-zero
 * tiles, and outliers at about `density` of the positions, some of them cancelling their weight (w + o = 0) and
 * some at positions whose weight is zero. */
inline QArrays random_arrays(int64_t rows, int64_t cols, double density, uint64_t seed)
{
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    QArrays a;
    a.rows = rows;
    a.cols = cols;
    a.words.assign((size_t)(a.bands() * a.tcols() * 16), 0);
    for (int64_t b = 0; b < a.bands(); b++) {
        for (int64_t t = 0; t < a.tcols(); t++) {
            if (u(g) < 0.1)
                continue; /* all-zero words: statistics 0, every weight 0 */
            const uint64_t st = stats_of(d2h(0.001 + 0.05 * u(g)), d2h(-std::floor(4 * u(g))), d2h(0.1 + u(g)),
                                         d2h(-std::floor(4 * u(g))));
            unsigned q[16][16] = {}, sq[16] = {}, zq[16] = {};
            for (int i = 0; i < 16 && 16 * b + i < rows; i++) {
                sq[i] = (unsigned)(g() % 8);
                zq[i] = (unsigned)(g() % 8);
                for (int k = 0; k < 16 && 16 * t + k < cols; k++)
                    q[i][k] = (unsigned)(g() % 8);
            }
            put_tile(a, b, t, st, q, sq, zq);
        }
    }
    a.optr.assign((size_t)rows + 1, 0);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) {
            if (u(g) >= density)
                continue;
            const uint16_t w = weight(a, r, c);
            uint16_t v;
            const double x = u(g);
            if (x < 0.15 && (w & 0x7FFF) != 0)
                v = (uint16_t)(w ^ 0x8000); /* cancels the weight */
            else
                v = d2h((u(g) < 0.5 ? -1 : 1) * std::ldexp(1.0 + u(g), (int)(g() % 20) - 12));
            a.oent.push_back(macko_quant_outlier((unsigned)c, v));
        }
        a.optr[(size_t)r + 1] = (int32_t)a.oent.size();
    }
    return a;
}

inline macko_status_t create(const QArrays &a, macko_mat_t *A)
{
    return macko_mat_create_quant_host(A, a.rows, a.cols, 3, a.words.data(), a.outliers(), a.optr.data(),
                                       a.oent.data());
}

} // namespace qt
