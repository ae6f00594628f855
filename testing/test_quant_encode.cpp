/* macko_mat_create_quant_dense_host against a plain reference of FORMAT_QUANT.md "Encoding a dense weight" written
 * here (brute-force nearest codes, a full sort for FRACTION): identical arrays for every rule on odd shapes; the
 * output passes the importer; the quantization error on Gaussian data; tiles of equal weights; rows of only
 * outliers; the four input types and both orders alike; degenerate tiles near +-65504; bad arguments. */
#include "bad_args.h"
#include "common.h"
#include "macko_internal.h"
#include "quant_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using qt::d2h;
using qt::h2d;
using qt::QArrays;

namespace
{

/* A dense weight, row-major, every value exact in double. */
struct W {
    int64_t rows = 0, cols = 0;
    std::vector<double> v;
    double &at(int64_t r, int64_t c) { return v[(size_t)(r * cols + c)]; }
    double at(int64_t r, int64_t c) const { return v[(size_t)(r * cols + c)]; }
};

W gaussian(int64_t rows, int64_t cols, double sigma, uint64_t seed)
{
    std::mt19937_64 g(seed);
    std::normal_distribution<double> n(0.0, sigma);
    W w{rows, cols, std::vector<double>((size_t)(rows * cols))};
    for (double &x : w.v)
        x = h2d(d2h(n(g))); /* fp16 values */
    return w;
}

/* ---- the reference encoder */
namespace ref
{

/* argmin |x - value(c)| over c = 0..7, ties: the smaller c (long double: exact for the values used here). */
unsigned nearest(const uint16_t dec[8], double x)
{
    unsigned best = 0;
    long double bd = std::fabs((long double)x - (long double)h2d(dec[0]));
    for (unsigned c = 1; c < 8; c++) {
        const long double d = std::fabs((long double)x - (long double)h2d(dec[c]));
        if (d < bd) {
            bd = d;
            best = c;
        }
    }
    return best;
}

void stat_pair(const std::vector<double> &x, uint16_t &scale, uint16_t &zero)
{
    const double mn = *std::min_element(x.begin(), x.end()), mx = *std::max_element(x.begin(), x.end());
    if (mx > mn) {
        const double s = (mx - mn) / 7;
        scale = d2h(s);
        zero = d2h(-mn / s);
        if ((scale & 0x7FFF) != 0 && (zero & 0x7C00) != 0x7C00)
            return;
    }
    scale = d2h(1.0);
    zero = d2h(-mn);
}

void decoded_codes(uint16_t scale, uint16_t zero, uint16_t out[8])
{
    for (unsigned c = 0; c < 8; c++)
        out[c] = macko_h_mul(macko_h_sub(macko_half_of_code(c), zero), scale);
}

bool finite(uint16_t h) { return (h & 0x7C00) != 0x7C00; }

/* Quantizes every tile of w into a (words only), leaving the positions with mask set out of the ranges. */
void quantize(const W &w, const std::vector<char> &mask, QArrays &a)
{
    a.rows = w.rows;
    a.cols = w.cols;
    a.words.assign((size_t)(a.bands() * a.tcols() * 16), 0);
    for (int64_t b = 0; b < a.bands(); b++)
        for (int64_t t = 0; t < a.tcols(); t++) {
            const int nr = (int)std::min<int64_t>(16, w.rows - 16 * b);
            const int nc = (int)std::min<int64_t>(16, w.cols - 16 * t);
            std::vector<double> sc(nr), zp(nr);
            for (int i = 0; i < nr; i++) {
                double lo = 0, hi = 0;
                for (int k = 0; k < nc; k++) {
                    const size_t at = (size_t)((16 * b + i) * w.cols + 16 * t + k);
                    if (!mask.empty() && mask[at])
                        continue;
                    lo = std::min(lo, w.v[at]);
                    hi = std::max(hi, w.v[at]);
                }
                sc[i] = (hi - lo) / 7;
                zp[i] = std::min(7.0, sc[i] > 0 ? -lo / sc[i] : 0);
            }
            uint16_t s_z, z_z, zdec[8];
            stat_pair(zp, s_z, z_z);
            decoded_codes(s_z, z_z, zdec);
            unsigned sq[16] = {}, zq[16] = {}, q[16][16] = {};
            uint16_t s[16], m[16];
            uint64_t st = 0;
            for (int j = 0; j <= 64; j++) {
                std::vector<double> tsc(nr);
                for (int i = 0; i < nr; i++)
                    tsc[i] = sc[i] * (1.0 - j / 64.0);
                uint16_t s_s, z_s, sdec[8];
                stat_pair(tsc, s_s, z_s);
                decoded_codes(s_s, z_s, sdec);
                st = qt::stats_of(s_s, z_s, s_z, z_z);
                bool ok = true;
                for (int i = 0; i < 16; i++) {
                    sq[i] = i < nr ? nearest(sdec, tsc[i]) : 0;
                    zq[i] = i < nr ? nearest(zdec, zp[i]) : 0;
                    const unsigned none[16] = {};
                    macko_quant_row(st, macko_quant_pack(none, sq[i], zq[i], 0), &s[i], &m[i]);
                    ok = ok && finite(s[i]) && finite(m[i]) && (i >= nr || finite(macko_quant_weight(7, s[i], m[i])));
                }
                if (ok)
                    break;
            }
            for (int i = 0; i < nr; i++) {
                uint16_t wd[8];
                for (unsigned c = 0; c < 8; c++)
                    wd[c] = macko_quant_weight(c, s[i], m[i]);
                for (int k = 0; k < nc; k++)
                    q[i][k] = nearest(wd, w.v[(size_t)((16 * b + i) * w.cols + 16 * t + k)]);
            }
            qt::put_tile(a, b, t, st, q, sq, zq);
        }
}

/* The whole encoder for fp16-valued w (v - w exact in double). */
QArrays encode(const W &w, macko_outlier_rule_t rule, double param, int64_t *marked = nullptr)
{
    QArrays a;
    quantize(w, {}, a);
    const int64_t n = w.rows * w.cols;
    std::vector<char> mask((size_t)n, 0);
    std::vector<float> err((size_t)n);
    for (int64_t r = 0; r < w.rows; r++)
        for (int64_t c = 0; c < w.cols; c++)
            err[(size_t)(r * w.cols + c)] = (float)std::fabs(w.v[(size_t)(r * w.cols + c)] - h2d(qt::weight(a, r, c)));
    if (rule == MACKO_OUTLIERS_FRACTION) {
        const int64_t K = std::min<int64_t>(n, (int64_t)std::round(param * (double)n));
        std::vector<int64_t> order((size_t)n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t x, int64_t y) { return err[(size_t)x] > err[(size_t)y]; });
        for (int64_t i = 0; i < K; i++)
            mask[(size_t)order[(size_t)i]] = 1;
    } else if (rule == MACKO_OUTLIERS_THRESHOLD) {
        for (int64_t i = 0; i < n; i++)
            mask[(size_t)i] = (double)err[(size_t)i] > param;
    }
    if (marked)
        *marked = std::count(mask.begin(), mask.end(), 1);
    if (std::count(mask.begin(), mask.end(), 1) > 0)
        quantize(w, mask, a);
    a.optr.assign((size_t)w.rows + 1, 0);
    for (int64_t r = 0; r < w.rows; r++) {
        for (int64_t c = 0; c < w.cols; c++) {
            if (!mask[(size_t)(r * w.cols + c)])
                continue;
            uint16_t o = d2h(w.v[(size_t)(r * w.cols + c)] - h2d(qt::weight(a, r, c)));
            if (!finite(o))
                o = (uint16_t)((o & 0x8000) | 0x7BFF);
            if ((o & 0x7FFF) != 0)
                a.oent.push_back(macko_quant_outlier((unsigned)c, o));
        }
        a.optr[(size_t)r + 1] = (int32_t)a.oent.size();
    }
    return a;
}

} // namespace ref

/* w as bytes of `type`, laid out in `order` with leading dimension ld (junk elsewhere). */
std::vector<uint8_t> bytes_of(const W &w, macko_datatype_t type, macko_order_t order, int64_t ld)
{
    const size_t es = mt::value_bytes(type);
    return mt::lay_out(w.rows, w.cols, es, order, ld, 0x5A, [&](int64_t r, int64_t c, uint8_t *dst) {
        const double x = w.v[(size_t)(r * w.cols + c)];
        if (type == MACKO_R_16F) {
            const uint16_t h = d2h(x);
            std::memcpy(dst, &h, 2);
        } else if (type == MACKO_R_16BF) {
            const uint16_t h = mt::float_to_bf16((float)x);
            std::memcpy(dst, &h, 2);
        } else if (type == MACKO_R_32F) {
            const float f = (float)x;
            std::memcpy(dst, &f, 4);
        } else {
            std::memcpy(dst, &x, 8);
        }
    });
}

struct Owned {
    macko_mat_t A = nullptr;
    ~Owned() { macko_mat_destroy(A); }
};

/* The arrays of a QUANT matrix. */
QArrays arrays_of(macko_mat_t A)
{
    QArrays a;
    int bits = 0;
    const uint64_t *w = nullptr;
    const int32_t *rp = nullptr;
    const uint32_t *e = nullptr;
    int64_t wc = 0, no = 0;
    EXPECT_EQ(macko_mat_get_info(A, &a.rows, &a.cols, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_get_quant_host(A, &bits, &w, &wc, &no, &rp, &e), MACKO_STATUS_SUCCESS);
    a.words.assign(w, w + wc);
    a.optr.assign(rp, rp + a.rows + 1);
    a.oent.assign(e, e + no);
    return a;
}

/* Encodes w (fp16, row-major) and checks it against the reference and the importer; returns the arrays. */
QArrays encode_checked(const W &w, macko_outlier_rule_t rule, double param, const std::string &what)
{
    SCOPED_TRACE(what);
    const std::vector<uint8_t> in = bytes_of(w, MACKO_R_16F, MACKO_ORDER_ROW, std::max<int64_t>(w.cols, 1));
    Owned m;
    EXPECT_EQ(macko_mat_create_quant_dense_host(&m.A, w.rows, w.cols, MACKO_R_16F, in.data(),
                                                std::max<int64_t>(w.cols, 1), MACKO_ORDER_ROW, 3, rule, param),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    if (m.A == nullptr)
        return QArrays();
    macko_kind_t kind;
    EXPECT_EQ(macko_mat_get_kind(m.A, &kind), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(kind, MACKO_KIND_QUANT);
    const QArrays got = arrays_of(m.A);
    const QArrays want = ref::encode(w, rule, param);
    EXPECT_TRUE(got.words == want.words) << "words differ from the reference";
    EXPECT_TRUE(got.optr == want.optr) << "outlier_row_ptr differs from the reference";
    EXPECT_TRUE(got.oent == want.oent) << "outlier_entries differ from the reference";
    /* The importer takes it as it is, with the same nnz. */
    Owned back;
    EXPECT_EQ(qt::create(got, &back.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    int64_t n1 = -1, n2 = -2;
    EXPECT_EQ(macko_mat_get_info(m.A, nullptr, nullptr, &n1, nullptr), MACKO_STATUS_SUCCESS);
    if (back.A != nullptr) {
        EXPECT_EQ(macko_mat_get_info(back.A, nullptr, nullptr, &n2, nullptr), MACKO_STATUS_SUCCESS);
    }
    EXPECT_EQ(n1, n2);
    EXPECT_EQ(n1, qt::nnz(got));
    return got;
}

double rel_frobenius(const W &w, const QArrays &a)
{
    const std::vector<double> d = qt::decode(a);
    double num = 0, den = 0;
    for (size_t i = 0; i < d.size(); i++) {
        num += (d[i] - w.v[i]) * (d[i] - w.v[i]);
        den += w.v[i] * w.v[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

const int64_t kShapes[][2] = {{1, 1}, {7, 33}, {17, 16}, {16, 16}, {33, 40}, {100, 17}, {3, 129}, {0, 4}, {4, 0}};

} // namespace

TEST(QuantEncode, MatchesTheReferenceOnOddShapes)
{
    uint64_t seed = 10;
    for (const auto &s : kShapes) {
        const W w = gaussian(s[0], s[1], 0.02, seed++);
        const std::string shape = std::to_string(s[0]) + " x " + std::to_string(s[1]);
        encode_checked(w, MACKO_OUTLIERS_NONE, 0, shape + ", NONE");
        encode_checked(w, MACKO_OUTLIERS_FRACTION, 0.01, shape + ", FRACTION 0.01");
        encode_checked(w, MACKO_OUTLIERS_FRACTION, 0.3, shape + ", FRACTION 0.3");
        encode_checked(w, MACKO_OUTLIERS_FRACTION, 1.0, shape + ", FRACTION 1");
        encode_checked(w, MACKO_OUTLIERS_THRESHOLD, 0.002, shape + ", THRESHOLD 0.002");
        encode_checked(w, MACKO_OUTLIERS_THRESHOLD, 0.0, shape + ", THRESHOLD 0");
    }
}

/* The relative Frobenius error of W + O against the input, on Gaussian weights. */
TEST(QuantEncode, GaussianError)
{
    const W w = gaussian(256, 512, 0.02, 3);
    const double none = rel_frobenius(w, encode_checked(w, MACKO_OUTLIERS_NONE, 0, "NONE"));
    const double frac = rel_frobenius(w, encode_checked(w, MACKO_OUTLIERS_FRACTION, 0.01, "FRACTION 0.01"));
    const QArrays t = encode_checked(w, MACKO_OUTLIERS_THRESHOLD, 0.004, "THRESHOLD 0.004");
    const double thr = rel_frobenius(w, t);
    std::printf("relative Frobenius error of W + O, 256 x 512 Gaussian: no outliers %.4f, 1 %% outliers %.4f, "
                "threshold 0.2 sigma %.4f (%.1f %% outliers)\n",
                none, frac, thr, 100.0 * (double)t.outliers() / (256 * 512));
    /* 3 bits over min..max of 16 Gaussian samples: a step of about 0.5 sigma, so about 0.5 / sqrt(12) = 0.14. */
    EXPECT_GT(none, 0.10);
    EXPECT_LT(none, 0.18);
    EXPECT_LT(frac, none);
    EXPECT_LT(thr, frac);
}

/* FRACTION marks exactly round(param * rows * cols) weights, ties in the error broken by row-major position: values
 * on a coarse grid make many errors equal, so the count falls inside a group of equal errors. */
TEST(QuantEncode, FractionCountIsExactAndTiesGoByPosition)
{
    W w{40, 50, std::vector<double>(2000)};
    std::mt19937_64 g(8);
    for (double &x : w.v)
        x = (double)((int)(g() % 15) - 7) * 0.125;
    for (double p : {0.0004, 0.01, 0.1, 0.25, 0.5}) {
        int64_t marked = -1;
        (void)ref::encode(w, MACKO_OUTLIERS_FRACTION, p, &marked);
        EXPECT_EQ(marked, (int64_t)std::round(p * 2000));
        const QArrays a = encode_checked(w, MACKO_OUTLIERS_FRACTION, p, "grid, FRACTION " + std::to_string(p));
        EXPECT_LE(a.outliers(), marked);
    }
    /* Gaussian data: no residual rounds to zero, so the outliers are exactly the marked weights. */
    const W gw = gaussian(33, 70, 1.0, 4);
    const QArrays a = encode_checked(gw, MACKO_OUTLIERS_FRACTION, 0.05, "Gaussian, FRACTION 0.05");
    EXPECT_EQ(a.outliers(), (int64_t)std::round(0.05 * 33 * 70));
}

/* THRESHOLD: exactly the weights whose pass-1 error (the NONE encoding's) exceeds param carry an outlier, unless the
 * requantized weight equals the value (a zero residual is dropped). */
TEST(QuantEncode, ThresholdSemantics)
{
    const W w = gaussian(45, 61, 1.0, 5);
    const QArrays a0 = encode_checked(w, MACKO_OUTLIERS_NONE, 0, "NONE");
    for (double p : {0.0, 0.05, 0.1, 0.2, 1e9}) {
        const QArrays a = encode_checked(w, MACKO_OUTLIERS_THRESHOLD, p, "THRESHOLD " + std::to_string(p));
        int64_t above = 0;
        for (int64_t r = 0; r < w.rows; r++)
            for (int64_t c = 0; c < w.cols; c++) {
                const double v = w.at(r, c);
                const bool over = (double)(float)std::fabs(v - h2d(qt::weight(a0, r, c))) > p;
                const bool has = qt::outlier(a, r, c) != 0;
                above += over;
                EXPECT_TRUE(!has || over) << "an outlier at (" << r << ", " << c << ") under the threshold " << p;
                EXPECT_TRUE(has || !over || h2d(qt::weight(a, r, c)) == v) << "(" << r << ", " << c << ")";
            }
        if (p == 0.0) {
            EXPECT_GT(above, w.rows * w.cols / 2);
        }
        if (p == 1e9) {
            EXPECT_EQ(a.outliers(), 0);
        }
    }
}

/* Tiles of equal weights decode to the constant when the format holds it (c / 7 an fp16 number: the decoded scale is
 * then exact), all-zero tiles to zeros, and rows of different constants whose scales lie on the 8 levels of the
 * tile's statistics exactly too. */
TEST(QuantEncode, TilesOfEqualWeights)
{
    const double consts[] = {0.0, 0.875, -0.875, 7.0, -3.5, 7 * 0.0009765625, 7 * 1024.0, -7 * 8192.0};
    W w{48, 41, std::vector<double>(48 * 41)};
    for (int64_t r = 0; r < w.rows; r++)
        for (int64_t c = 0; c < w.cols; c++) {
            const int64_t tile = (r / 16) * 3 + c / 16;
            if (tile < 8)
                w.at(r, c) = consts[tile]; /* constant tiles (the last column tile is 9 wide) */
            else
                w.at(r, c) = 7.0 * (double)(r % 8) / 64; /* constant rows: scales k/64, s_s = 1/64 */
        }
    const QArrays a = encode_checked(w, MACKO_OUTLIERS_NONE, 0, "equal weights");
    const std::vector<double> d = qt::decode(a);
    for (int64_t r = 0; r < w.rows; r++)
        for (int64_t c = 0; c < w.cols; c++)
            ASSERT_EQ(d[(size_t)(r * w.cols + c)], w.at(r, c)) << "(" << r << ", " << c << ")";
    int64_t nnz = 0;
    for (double x : w.v)
        nnz += x != 0;
    EXPECT_EQ(qt::nnz(a), nnz);
}

/* A row of only outliers: row 0 far larger than the rest (zeros). The FRACTION of one row's weights marks all of row 0
 * (an error of row 0 equal to the zeros' goes to the earlier position); its weights then decode to 0 and the outliers
 * hold it exactly. (With other rows nonzero, a min-max quantizer gets some weights of the large row exact, and those
 * are no outliers.) */
TEST(QuantEncode, RowOfOnlyOutliers)
{
    std::mt19937_64 g(6);
    W w{20, 40, std::vector<double>(800, 0.0)};
    for (int64_t c = 0; c < w.cols; c++)
        w.at(0, c) = h2d(d2h((c % 2 ? 1 : -1) * (10.0 + (double)(g() % 100))));
    const QArrays a = encode_checked(w, MACKO_OUTLIERS_FRACTION, 40.0 / 800, "row 0 of outliers");
    EXPECT_EQ(a.optr[1], 40);
    EXPECT_EQ(a.outliers(), 40);
    for (int64_t c = 0; c < w.cols; c++) {
        EXPECT_EQ(qt::weight(a, 0, c), 0) << c;
        EXPECT_EQ(h2d(qt::outlier(a, 0, c)), w.at(0, c)) << c;
    }
}

TEST(QuantEncode, NoOutliers)
{
    const W w = gaussian(30, 50, 0.5, 7);
    const QArrays none = encode_checked(w, MACKO_OUTLIERS_NONE, 0, "NONE");
    EXPECT_EQ(none.outliers(), 0);
    EXPECT_EQ(none.optr, std::vector<int32_t>(31, 0));
    const QArrays f0 = encode_checked(w, MACKO_OUTLIERS_FRACTION, 0, "FRACTION 0");
    const QArrays t = encode_checked(w, MACKO_OUTLIERS_THRESHOLD, 100, "THRESHOLD 100");
    EXPECT_TRUE(f0.words == none.words && f0.optr == none.optr && f0.oent.empty());
    EXPECT_TRUE(t.words == none.words && t.optr == none.optr && t.oent.empty());
}

/* The same values (exact in fp16 and in bf16) give the same arrays from every value type, order and ld. */
TEST(QuantEncode, InputTypesAndOrdersAgree)
{
    W w{37, 45, std::vector<double>(37 * 45)};
    std::mt19937_64 g(9);
    for (double &x : w.v)
        x = (double)((int)(g() % 511) - 255) / 128.0;
    const QArrays want = encode_checked(w, MACKO_OUTLIERS_FRACTION, 0.02, "fp16 row-major");
    for (macko_datatype_t t : mt::kAllTypes)
        for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
            const int64_t ld = (o == MACKO_ORDER_ROW ? w.cols : w.rows) + 5;
            const std::vector<uint8_t> in = bytes_of(w, t, o, ld);
            Owned m;
            ASSERT_EQ(macko_mat_create_quant_dense_host(&m.A, w.rows, w.cols, t, in.data(), ld, o, 3,
                                                        MACKO_OUTLIERS_FRACTION, 0.02),
                      MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            const QArrays got = arrays_of(m.A);
            EXPECT_TRUE(got.words == want.words && got.optr == want.optr && got.oent == want.oent)
                << "type " << (int)t << ", order " << (int)o;
        }
}

/* Weights near +-65504, and tiles whose scales differ by less than fp16 resolves: the fallbacks of FORMAT_QUANT.md
 * keep every decoded number finite, and the reference (which has them too) agrees. The shrunk scales of the tile of
 * rows 0..3 cost up to about a quarter of 65504 there (row 2's zero point 3.5 decodes to 3: 4 s must stay finite). */
TEST(QuantEncode, DegenerateTiles)
{
    W w{32, 48, std::vector<double>(32 * 48, 0.0)};
    for (int64_t c = 0; c < 16; c++) {
        w.at(0, c) = 65504;                     /* sc = 9357.7: s rounds up to 9360, 7 s overflows */
        w.at(1, c) = -65504;                    /* zp = 7, m = 7 s */
        w.at(2, c) = c % 2 ? 65504 : -65504;    /* sc = 18715 */
        w.at(3, c) = c % 3 ? 65504 : 0;
        w.at(16, 16 + c) = 1.0 + (c % 2) * 0.0009765625;    /* scales 1/7 and 1.0009765625/7 */
        w.at(17, 16 + c) = 1.0 + (c % 2) * 2 * 0.0009765625; /* ... and 1.001953125/7 */
        w.at(18, 32 + c) = c % 2 ? 60000 : -65504;
        w.at(19, 32 + c) = c % 2 ? -60000 : 65504;
    }
    double err[3];
    for (auto rule : {MACKO_OUTLIERS_NONE, MACKO_OUTLIERS_FRACTION, MACKO_OUTLIERS_THRESHOLD}) {
        const double p = rule == MACKO_OUTLIERS_FRACTION ? 0.05 : rule == MACKO_OUTLIERS_THRESHOLD ? 1000 : 0;
        const QArrays a = encode_checked(w, rule, p, "degenerate, rule " + std::to_string((int)rule));
        const std::vector<double> d = qt::decode(a);
        for (size_t i = 0; i < d.size(); i++) {
            ASSERT_TRUE(std::isfinite(d[i])) << i;
            EXPECT_LE(std::fabs(d[i] - w.v[i]), 0.3 * 65504) << i;
        }
        err[rule] = rel_frobenius(w, a);
    }
    EXPECT_LT(err[MACKO_OUTLIERS_FRACTION], err[MACKO_OUTLIERS_NONE]);
    EXPECT_LT(err[MACKO_OUTLIERS_THRESHOLD], 0.02);
}

TEST(QuantEncode, BadArguments)
{
    const W w = gaussian(17, 33, 0.02, 11);
    const std::vector<uint8_t> in = bytes_of(w, MACKO_R_16F, MACKO_ORDER_ROW, 33);
    macko_mat_t out = reinterpret_cast<macko_mat_t>(uintptr_t(0xBAD0));
    const macko_mat_t poison = out;
    const ba::Rules r{"macko_mat_create_quant_dense_host", [&](const std::string &what) {
                          EXPECT_EQ(out, poison) << what << ": *A was written";
                      }};
    constexpr macko_status_t kInv = MACKO_STATUS_INVALID_VALUE, kNS = MACKO_STATUS_NOT_SUPPORTED;
    const ba::Arg<macko_mat_t *> A{"A", &out, {{nullptr, kInv, "NULL"}}};
    const ba::Arg<int64_t> cols{
        "cols", 33, {{-1, kInv, "-1"}, {65537, kNS, "65537"}, {INT64_C(1) << 57, kInv, "2^57"}}};
    const ba::Arg<int> type{"type", MACKO_R_16F, {{3, kInv, "3"}, {-1, kInv, "-1"}}};
    const ba::Arg<const void *> values{"values", in.data(), {{nullptr, kInv, "NULL"}}};
    const ba::Arg<int> order{"order", MACKO_ORDER_ROW, {{0, kInv, "0"}, {3, kInv, "3"}}};
    const ba::Arg<int> bits{"bits", 3, {{2, kNS, "2"}, {4, kNS, "4"}, {8, kNS, "8"}}};
    const ba::Arg<int> rule{"rule", MACKO_OUTLIERS_FRACTION, {{3, kInv, "3"}, {-1, kInv, "-1"}}};
    const ba::Arg<double> param{"param", 0.01, {{-0.01, kInv, "-0.01"}, {1.5, kInv, "1.5"}, {NAN, kInv, "NaN"}}};
    ba::walk(r, macko_mat_create_quant_dense_host, A, ba::size("rows", 17, {-1, INT64_C(1) << 57}), cols, type, values,
             ba::size("ld", 33, {32, 0, INT64_C(1) << 62}), order, bits, rule, param);

    const void *x = in.data();
    ba::refused(r, macko_mat_create_quant_dense_host(&out, 17, 33, MACKO_R_16F, x, 33, MACKO_ORDER_ROW, 3,
                                                     MACKO_OUTLIERS_NONE, 0.5),
                kInv, 10, "param", "NONE with param 0.5");
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_quant_dense_host: argument 10: param is 0.5; it "
                                                 "must be 0 with MACKO_OUTLIERS_NONE");
    ba::refused(r, macko_mat_create_quant_dense_host(&out, 17, 33, MACKO_R_16F, x, 33, MACKO_ORDER_ROW, 3,
                                                     MACKO_OUTLIERS_THRESHOLD, INFINITY),
                kInv, 10, "param", "THRESHOLD Inf");
    ba::refused(r, macko_mat_create_quant_dense_host(&out, 17, 33, MACKO_R_16F, x, 33, MACKO_ORDER_ROW, 3,
                                                     MACKO_OUTLIERS_THRESHOLD, -1),
                kInv, 10, "param", "THRESHOLD -1");
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_quant_dense_host: argument 10: param is -1; it "
                                                 "must be finite and at least 0 with MACKO_OUTLIERS_THRESHOLD");
    ba::refused(r, macko_mat_create_quant_dense_host(&out, 17, 33, MACKO_R_16F, x, 33, MACKO_ORDER_ROW, 3,
                                                     (macko_outlier_rule_t)7, 0),
                kInv, 9, "rule", "rule 7");
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_quant_dense_host: argument 9: rule is 7; it must be MACKO_OUTLIERS_NONE (0), "
                 "MACKO_OUTLIERS_FRACTION (1) or MACKO_OUTLIERS_THRESHOLD (2)");
    ba::refused(r, macko_mat_create_quant_dense_host(&out, 17, 70000, (macko_datatype_t)3, nullptr, 0, MACKO_ORDER_ROW,
                                                     2, MACKO_OUTLIERS_NONE, 1),
                kNS, 3, "cols", "cols too wide, and everything after bad");
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_quant_dense_host: argument 3: cols is 70000; the "
                                                 "QUANT kind holds at most 65536 columns");
    ba::refused(r, macko_mat_create_quant_dense_host(&out, 17, 33, MACKO_R_16F, x, 33, MACKO_ORDER_ROW, 3,
                                                     MACKO_OUTLIERS_FRACTION, 2),
                kInv, 10, "param", "FRACTION 2");
    /* Empty matrices need no values. */
    for (auto rc : {std::pair<int64_t, int64_t>{0, 0}, {0, 7}, {7, 0}}) {
        Owned m;
        ASSERT_EQ(macko_mat_create_quant_dense_host(&m.A, rc.first, rc.second, MACKO_R_32F, nullptr,
                                                    std::max<int64_t>(rc.second, 1), MACKO_ORDER_ROW, 3,
                                                    MACKO_OUTLIERS_FRACTION, 0.5),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        const QArrays a = arrays_of(m.A);
        EXPECT_TRUE(a.words.empty() && a.oent.empty());
        EXPECT_EQ(a.optr, std::vector<int32_t>((size_t)rc.first + 1, 0));
    }
}

/* Values that are not finite or beyond 65504: INVALID_VALUE at values, the first in row-major order named, in either
 * order. */
TEST(QuantEncode, ValuesOutOfRange)
{
    struct Bad {
        macko_datatype_t type;
        double v;
        const char *text;
    };
    const Bad bads[] = {{MACKO_R_16F, INFINITY, "inf"},       {MACKO_R_16F, NAN, "nan"},
                        {MACKO_R_16BF, 65536, "65536"},      {MACKO_R_16BF, -INFINITY, "-inf"},
                        {MACKO_R_32F, 65504.0078125, "65504"}, {MACKO_R_32F, NAN, "nan"},
                        {MACKO_R_64F, -65504.000001, "-65504"}, {MACKO_R_64F, INFINITY, "inf"}};
    for (const Bad &b : bads)
        for (macko_order_t o : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
            W w = gaussian(20, 30, 0.1, 12);
            w.at(7, 25) = b.v;
            w.at(9, 3) = b.v;  /* a later row, an earlier column */
            w.at(7, 28) = b.v; /* the same row, a later column */
            const int64_t ld = o == MACKO_ORDER_ROW ? 30 : 20;
            const std::vector<uint8_t> in = bytes_of(w, b.type, o, ld);
            macko_mat_t A = reinterpret_cast<macko_mat_t>(uintptr_t(0xBAD0));
            EXPECT_EQ(macko_mat_create_quant_dense_host(&A, 20, 30, b.type, in.data(), ld, o, 3,
                                                        MACKO_OUTLIERS_NONE, 0),
                      MACKO_STATUS_INVALID_VALUE);
            EXPECT_EQ(macko_get_last_error_position(), 5);
            const std::string msg = macko_get_last_error_message();
            const std::string want = std::string("macko_mat_create_quant_dense_host: argument 5: values: element (7, "
                                                 "25) is ") + b.text;
            EXPECT_EQ(msg.compare(0, want.size(), want), 0) << msg;
            EXPECT_NE(msg.find("finite values of at most 65504 in magnitude"), std::string::npos) << msg;
            EXPECT_EQ(A, reinterpret_cast<macko_mat_t>(uintptr_t(0xBAD0)));
        }
    /* 65504 itself is fine in every type. */
    W w = gaussian(3, 4, 0.1, 13);
    w.at(1, 1) = 65504;
    w.at(2, 3) = -65504;
    for (macko_datatype_t t : {MACKO_R_16F, MACKO_R_32F, MACKO_R_64F}) {
        const std::vector<uint8_t> in = bytes_of(w, t, MACKO_ORDER_ROW, 4);
        Owned m;
        EXPECT_EQ(macko_mat_create_quant_dense_host(&m.A, 3, 4, t, in.data(), 4, MACKO_ORDER_ROW, 3,
                                                    MACKO_OUTLIERS_NONE, 0),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
    }
}
