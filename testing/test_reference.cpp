/* The host reference mt::ref_spmv (decodes the MACKO arrays, accumulates in double) against the CBLAS dense oracle:
 * every GPU test leans on it, so it is checked here first. */
#include "common.h"

#include <cmath>
#include <limits>
#include <string>

using namespace mt;

namespace
{

struct Owned {
    macko_mat_t A = nullptr;
    ~Owned() { macko_mat_destroy(A); }
};

void encode(const Dense &m, macko_datatype_t t, Owned &o)
{
    std::vector<uint8_t> b = to_bytes(m, t, MACKO_ORDER_ROW, std::max<int64_t>(m.cols, 1));
    ASSERT_EQ(
        macko_mat_create_dense_host(&o.A, m.rows, m.cols, t, b.data(), std::max<int64_t>(m.cols, 1), MACKO_ORDER_ROW),
        MACKO_STATUS_SUCCESS);
}

std::vector<double> to_double(const std::vector<float> &v) { return std::vector<double>(v.begin(), v.end()); }

} // namespace

TEST(Reference, RefSpmvMatchesCblas)
{
    const int64_t shapes[][2] = {{1, 1}, {1, 50}, {50, 1}, {7, 33}, {33, 7}, {128, 300}, {300, 128}};
    const double scal[][2] = {{1, 0}, {1, 1}, {-0.5, 2}, {0, 3}, {2.5, 0}, {0, 0}};
    uint64_t seed = 7;
    for (auto &s : shapes)
        for (double d : {0.0, 0.05, 0.5, 1.0})
            for (macko_datatype_t t : kAllTypes) {
                Dense m = random_dense(s[0], s[1], d, seed++, true);
                add_structure(m, seed++);
                m = rounded(m, t); /* the oracle sees the values A holds */
                Owned A;
                encode(m, t, A);
                for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
                    int64_t xn = op == MACKO_OPERATION_NON_TRANSPOSE ? s[1] : s[0];
                    int64_t yn = op == MACKO_OPERATION_NON_TRANSPOSE ? s[0] : s[1];
                    std::vector<double> x = to_double(random_vector(xn, seed++, true));
                    std::vector<double> y0 = to_double(random_vector(yn, seed++, true));
                    for (auto &ab : scal) {
                        SCOPED_TRACE(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " d " + std::to_string(d) +
                                     " op " + std::to_string(op) + " alpha " + std::to_string(ab[0]) + " beta " +
                                     std::to_string(ab[1]));
                        std::vector<double> y1 = y0, y2 = y0;
                        ref_spmv(A.A, op, ab[0], x, ab[1], y1);
                        cblas_gemv(m, op, ab[0], x, ab[1], y2);
                        ASSERT_EQ(y1.size(), y2.size());
                        for (size_t i = 0; i < y1.size(); i++)
                            ASSERT_NEAR(y1[i], y2[i], 1e-12 * (1 + std::fabs(y2[i]))) << "y[" << i << "]";
                    }
                }
            }
}

/* beta == 0: y is not read, so NaN in y gives a finite result. */
TEST(Reference, BetaZeroIgnoresNanInY)
{
    Dense m = random_dense(20, 30, 0.4, 3, true);
    Owned A;
    encode(m, MACKO_R_16F, A);
    std::vector<double> x = to_double(random_vector(30, 4, true));
    std::vector<double> y(20, std::numeric_limits<double>::quiet_NaN()), want(20, 0.0);
    ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.5, x, 0.0, y);
    cblas_gemv(m, MACKO_OPERATION_NON_TRANSPOSE, 1.5, x, 0.0, want);
    for (size_t i = 0; i < y.size(); i++) {
        ASSERT_TRUE(std::isfinite(y[i])) << i;
        EXPECT_NEAR(y[i], want[i], 1e-12 * (1 + std::fabs(want[i])));
    }
}

/* Inf/NaN in x at a column that holds only padding (or nothing) does not reach the result; at a stored nonzero it
 * does. Row 0 has nonzeros at columns 0 and 40, so padding entries sit at columns 16 and 32. */
TEST(Reference, InfAtUnstoredColumnStaysOut)
{
    Dense m;
    m.rows = 3;
    m.cols = 48;
    m.v.assign(3 * 48, 0.0f);
    m.at(0, 0) = 1.0f;
    m.at(0, 40) = 2.0f;
    m.at(2, 16) = 0.5f; /* row 2 does hold column 16 */
    for (macko_datatype_t t : kAllTypes) {
        Owned A;
        encode(m, t, A);
        std::vector<double> x(48, 1.0);
        x[16] = std::numeric_limits<double>::infinity();
        x[32] = std::numeric_limits<double>::quiet_NaN();
        x[45] = -std::numeric_limits<double>::infinity();
        std::vector<double> y(3, 0.0);
        ref_spmv(A.A, MACKO_OPERATION_NON_TRANSPOSE, 1.0, x, 0.0, y);
        EXPECT_EQ(y[0], 3.0);
        EXPECT_EQ(y[1], 0.0);
        EXPECT_TRUE(std::isinf(y[2])); /* the stored nonzero at column 16 does see the Inf */
        /* op T: x[1] (row 1 is empty) = Inf and x[0]... row 0's padding columns must stay finite in y. */
        std::vector<double> xt = {1.0, std::numeric_limits<double>::infinity(), 2.0};
        std::vector<double> yt(48, 0.0);
        ref_spmv(A.A, MACKO_OPERATION_TRANSPOSE, 1.0, xt, 0.0, yt);
        for (int64_t c = 0; c < 48; c++) {
            double want = c == 0 ? 1.0 : c == 40 ? 2.0 : c == 16 ? 1.0 : 0.0;
            EXPECT_EQ(yt[(size_t)c], want) << "column " << c;
        }
    }
}
