/* The QUANT kind on the GPU (lapack_style_docs/FORMAT_QUANT.md): macko_Hspmv / Hspmm / Hspmv_strided_batched /
 * spmv_ex / spmm_ex against a double host reference of the decoded matrix W + O (src/quant.h's decode, the
 * normative one), for random valid encodings: odd shapes, tiles of equal weights, rows of only outliers, no
 * outliers, n = 1..17 and beyond one launch, both outlier layouts and several block shapes, strided and unaligned B,
 * the BLAS alpha/beta rules with NaN poison, both pointer modes, determinism, graph capture, download, and the
 * refusals (op T, other types). */
#include "gpu_fixtures.h"
#include "plan.h"
#include "quant.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

using gt::DevMem;

/* A random valid QUANT encoding. structure bits: 1 = some tiles of equal weights (all codes equal, or s = 0),
 * 2 = a row of only outliers (every column), 4 = no outliers at all, 8 = all weights and outliers positive. */
struct QMat {
    int64_t rows = 0, cols = 0, bands = 0, tcols = 0;
    std::vector<uint64_t> words;
    std::vector<int32_t> rp;
    std::vector<uint32_t> oe;
};

uint16_t h_of(double v) { return macko_half_from_double(v); }

QMat random_quant(int64_t rows, int64_t cols, double outlier_density, uint64_t seed, unsigned structure)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> U(0.0, 1.0);
    QMat m;
    m.rows = rows;
    m.cols = cols;
    m.bands = (rows + 15) / 16;
    m.tcols = (cols + 15) / 16;
    m.words.assign((size_t)(m.bands * m.tcols * 16), 0);
    const bool positive = (structure & 8) != 0;
    for (int64_t b = 0; b < m.bands; b++)
        for (int64_t t = 0; t < m.tcols; t++) {
            /* s = (sq - z_s) * s_s > 0 for every code; positive: m = z * s <= 0 (z_z >= 7) */
            const bool flat = (structure & 1) && ((b + t) % 3 == 0);
            uint16_t s_s = h_of(0.002 + 0.01 * U(rng)), z_s = h_of(-1.0 - 2.0 * U(rng));
            uint16_t s_z = h_of(0.5 + U(rng)), z_z = h_of(positive ? 7.0 + U(rng) : -1.0 + 9.0 * U(rng));
            if (flat && (b & 1))
                s_s = 0; /* zero scales: every weight of the tile is -m = 0 */
            const uint64_t S = (uint64_t)s_s | (uint64_t)z_s << 16 | (uint64_t)s_z << 32 | (uint64_t)z_z << 48;
            for (int i = 0; i < 16; i++) {
                const int64_t r = b * 16 + i;
                unsigned q[16] = {0};
                unsigned sq = 0, zq = 0;
                if (r < rows) {
                    sq = (unsigned)(rng() % 8);
                    zq = (unsigned)(rng() % 8);
                    const unsigned same = (unsigned)(rng() % 8);
                    for (int k = 0; k < 16; k++)
                        if (t * 16 + k < cols)
                            q[k] = flat ? same : (unsigned)(rng() % 8);
                }
                m.words[(size_t)macko_quant_word_index(m.tcols, b, t, i)] =
                    macko_quant_pack(q, sq, zq, macko_quant_stats_piece(S, i));
            }
        }
    m.rp.assign((size_t)rows + 1, 0);
    for (int64_t r = 0; r < rows; r++) {
        const bool full = (structure & 2) && r == rows / 2;
        for (int64_t c = 0; c < cols; c++)
            if (!(structure & 4) && (full || U(rng) < outlier_density)) {
                double v = (0.05 + U(rng)) * (positive || (rng() & 1) ? 1.0 : -1.0);
                m.oe.push_back(macko_quant_outlier((unsigned)c, h_of(v)));
            }
        m.rp[(size_t)r + 1] = (int32_t)m.oe.size();
    }
    return m;
}

/* The decoded matrix W + O in double, row-major. */
std::vector<double> decode(const QMat &m)
{
    std::vector<double> a((size_t)(m.rows * m.cols), 0.0);
    for (int64_t b = 0; b < m.bands; b++)
        for (int64_t t = 0; t < m.tcols; t++) {
            const uint64_t *tile = &m.words[(size_t)macko_quant_word_index(m.tcols, b, t, 0)];
            const uint64_t S = macko_quant_stats(tile);
            for (int i = 0; i < 16 && b * 16 + i < m.rows; i++) {
                uint16_t s, mm;
                macko_quant_row(S, tile[i], &s, &mm);
                for (int k = 0; k < 16 && t * 16 + k < m.cols; k++)
                    a[(size_t)((b * 16 + i) * m.cols + t * 16 + k)] =
                        macko_half_to_double(macko_quant_weight(macko_quant_q(tile[i], k), s, mm));
            }
        }
    for (int64_t r = 0; r < m.rows; r++)
        for (int32_t k = m.rp[(size_t)r]; k < m.rp[(size_t)r + 1]; k++)
            a[(size_t)(r * m.cols + macko_quant_outlier_col(m.oe[(size_t)k]))] +=
                macko_half_to_double(macko_quant_outlier_value(m.oe[(size_t)k]));
    return a;
}

struct Rig {
    gt::Handle H;
    gt::Mat M;
    QMat q;
    std::vector<double> a;
    bool make(const QMat &m)
    {
        q = m;
        a = decode(m);
        macko_status_t st = macko_mat_create_quant_host(&M.A, m.rows, m.cols, 3, m.words.data(), (int64_t)m.oe.size(),
                                                        m.rp.data(), m.oe.data());
        EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        if (st != MACKO_STATUS_SUCCESS)
            return false;
        st = macko_mat_upload(H.h, M.A);
        EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        return st == MACKO_STATUS_SUCCESS;
    }
    bool force(int layout, int unit_tiles = 0, int max_ounits = 0)
    {
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        f.quant_outliers = layout;
        f.quant_unit_tiles = unit_tiles;
        f.quant_max_ounits = max_ounits;
        const macko_status_t st = macko_plan_override(H.h, M.A, MACKO_OPERATION_NON_TRANSPOSE, &f);
        EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        return st == MACKO_STATUS_SUCCESS;
    }
};

std::vector<uint16_t> random_halves(size_t n, uint64_t seed, bool positive)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> U(positive ? 0.1 : -1.0, 1.0);
    std::vector<uint16_t> v(n);
    for (auto &x : v)
        x = h_of(U(rng));
    return v;
}

/* Checks C (host copy, column j at c + j*ldc, element i at i*incc) against alpha * A * B + beta * C0. */
void expect_product(const Rig &R, int64_t n, const std::vector<uint16_t> &B, int64_t incb, int64_t ldb, float alpha,
                    float beta, const std::vector<uint16_t> &C0, const std::vector<uint16_t> &C, int64_t incc,
                    int64_t ldc, const char *what)
{
    int bad = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < R.q.rows; i++) {
            double sum = 0.0, mag = 0.0;
            if (alpha != 0.0f)
                for (int64_t k = 0; k < R.q.cols; k++) {
                    const double p = R.a[(size_t)(i * R.q.cols + k)] *
                                     macko_half_to_double(B[(size_t)(k * incb + j * ldb)]);
                    sum += p;
                    mag += std::fabs(p);
                }
            const size_t ci = (size_t)(i * incc + j * ldc);
            const double old = beta != 0.0f ? macko_half_to_double(C0[ci]) : 0.0;
            const double ref = (double)alpha * sum + (double)beta * old;
            const double got = macko_half_to_double(C[ci]);
            const double tol = 1e-3 * std::fabs(ref) + 1e-5 * (std::fabs((double)alpha) * mag + std::fabs(beta * old)) +
                               1e-7;
            if (!(std::fabs(got - ref) <= tol) && bad++ < 5)
                ADD_FAILURE() << what << ": C(" << i << ", " << j << ") = " << got << ", reference " << ref;
        }
    EXPECT_EQ(bad, 0) << what;
}

/* One macko_Hspmm call (n columns, ldb/ldc as given, C pre-filled from C0) and its check. */
void run_mm(Rig &R, int64_t n, int64_t ldb, int64_t ldc, float alpha, float beta, bool device_scalars, uint64_t seed,
            const char *what, bool positive = false)
{
    const int64_t m = R.q.rows, k = R.q.cols;
    std::vector<uint16_t> B = random_halves((size_t)std::max<int64_t>(1, (n - 1) * ldb + k), seed, positive);
    std::vector<uint16_t> C0 = random_halves((size_t)std::max<int64_t>(1, (n - 1) * ldc + m), seed + 1, false);
    if (beta == 0.0f)
        for (auto &x : C0)
            x = 0x7E00; /* NaN: must not be read */
    if (alpha == 0.0f)
        for (auto &x : B)
            x = 0x7E00; /* neither must B */
    DevMem dB(B.size() * 2), dC(C0.size() * 2), dS(8);
    ASSERT_EQ(cudaMemcpy(dB.p, B.data(), B.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dC.p, C0.data(), C0.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    const float sc[2] = {alpha, beta};
    ASSERT_EQ(cudaMemcpy(dS.p, sc, 8, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(macko_set_pointer_mode(R.H.h, device_scalars ? MACKO_POINTER_MODE_DEVICE : MACKO_POINTER_MODE_HOST),
              MACKO_STATUS_SUCCESS);
    const float *pa = device_scalars ? dS.as<float>() : &sc[0];
    const float *pb = device_scalars ? dS.as<float>() + 1 : &sc[1];
    ASSERT_EQ(macko_Hspmm(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, n, pa, R.M.A, dB.as<macko_half>(), ldb, pb,
                          dC.as<macko_half>(), ldc),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    macko_set_pointer_mode(R.H.h, MACKO_POINTER_MODE_HOST);
    std::vector<uint16_t> C(C0.size());
    ASSERT_EQ(cudaMemcpy(C.data(), dC.p, C.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    expect_product(R, n, B, 1, ldb, alpha, beta, C0, C, 1, ldc, what);
    /* elements between the columns (ldc > m) are untouched */
    for (int64_t j = 0; j + 1 < n; j++)
        for (int64_t i = m; i < ldc; i++)
            ASSERT_EQ(C[(size_t)(j * ldc + i)], C0[(size_t)(j * ldc + i)]) << what << ": gap element written";
}

struct Shape {
    int64_t rows, cols;
    double od;
    unsigned structure;
};

const Shape kShapes[] = {{1, 1, 0.3, 0},   {7, 33, 0.05, 1},  {16, 16, 0.1, 2},    {17, 31, 0.02, 3},
                         {33, 100, 0.02, 0}, {64, 64, 0.0, 4}, {100, 257, 0.01, 9}, {257, 1000, 0.01, 1},
                         {40, 4097, 0.01, 2}, {513, 96, 0.03, 8}};

} // namespace

TEST(GpuQuant, ProductsMatchReference)
{
    MACKO_REQUIRE_GPU();
    uint64_t seed = 100;
    for (const Shape &s : kShapes) {
        Rig R;
        if (!R.make(random_quant(s.rows, s.cols, s.od, seed++, s.structure)))
            return;
        for (int layout = 0; layout < 2; layout++)
            for (int unit : {1, 3, 0}) {
                /* units of 1 and 3 tiles put unit edges everywhere; 0 is the automatic choice; with them, at most
                 * 1 and 3 outlier units per band (several rows or slot chunks each, as a big matrix gets) */
                if (!R.force(layout, unit, unit))
                    return;
                for (int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17}) {
                    char what[160];
                    std::snprintf(what, sizeof what, "%lldx%lld layout %d unit %d n %lld", (long long)s.rows,
                                  (long long)s.cols, layout, unit, (long long)n);
                    run_mm(R, n, s.cols + (n % 3), s.rows + (n % 2), 1.0f, 0.0f, false, seed++, what,
                           (s.structure & 8) != 0);
                }
            }
    }
}

TEST(GpuQuant, ScalarsAndPointerModes)
{
    MACKO_REQUIRE_GPU();
    Rig R;
    if (!R.make(random_quant(100, 300, 0.02, 7, 1)))
        return;
    const float cases[][2] = {{1.0f, 0.0f}, {0.5f, 0.25f}, {0.0f, 0.75f}, {0.0f, 0.0f}, {-2.0f, 1.0f}};
    for (int dev = 0; dev < 2; dev++)
        for (const auto &c : cases)
            for (int64_t n : {1, 5, 16}) {
                char what[120];
                std::snprintf(what, sizeof what, "alpha %g beta %g device %d n %lld", c[0], c[1], dev, (long long)n);
                run_mm(R, n, 300, 100, c[0], c[1], dev != 0, 11 + (uint64_t)n, what);
            }
}

TEST(GpuQuant, WideAndUnalignedB)
{
    MACKO_REQUIRE_GPU();
    Rig R;
    if (!R.make(random_quant(70, 131, 0.02, 8, 0)))
        return;
    /* odd ldb: B's pairs are not 4-byte aligned (the 16-bit load path); n beyond one launch of 16 */
    for (int64_t n : {1, 4, 16, 33, 64})
        for (int64_t ldb : {131, 132, 141}) {
            char what[80];
            std::snprintf(what, sizeof what, "n %lld ldb %lld", (long long)n, (long long)ldb);
            run_mm(R, n, ldb, 75, 1.5f, -0.5f, false, 40 + (uint64_t)(n + ldb), what);
        }
}

TEST(GpuQuant, SpmvStridedAndBatched)
{
    MACKO_REQUIRE_GPU();
    Rig R;
    if (!R.make(random_quant(90, 200, 0.02, 9, 3)))
        return;
    const int64_t m = 90, k = 200;
    for (int64_t inc : {1, 3}) {
        std::vector<uint16_t> x = random_halves((size_t)((k - 1) * inc + 1), 5 + (uint64_t)inc, false);
        std::vector<uint16_t> y0 = random_halves((size_t)((m - 1) * inc + 1), 6, false);
        DevMem dx(x.size() * 2), dy(y0.size() * 2);
        ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(dy.p, y0.data(), y0.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
        const float alpha = 1.25f, beta = 0.5f;
        ASSERT_EQ(macko_Hspmv(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, R.M.A, dx.as<macko_half>(), inc, &beta,
                              dy.as<macko_half>(), inc),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        std::vector<uint16_t> y(y0.size());
        ASSERT_EQ(cudaMemcpy(y.data(), dy.p, y.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        expect_product(R, 1, x, inc, 0, alpha, beta, y0, y, inc, 0, inc == 1 ? "spmv inc 1" : "spmv inc 3");
        /* spmv_ex with fp16 vectors is the same call */
        ASSERT_EQ(cudaMemcpy(dy.p, y0.data(), y0.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(macko_spmv_ex(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, R.M.A, dx.p, MACKO_R_16F, inc, &beta,
                                dy.p, MACKO_R_16F, inc, MACKO_R_32F),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        std::vector<uint16_t> y2(y0.size());
        ASSERT_EQ(cudaMemcpy(y2.data(), dy.p, y2.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(y, y2) << "spmv_ex differs from Hspmv";
    }
    /* strided batch: 5 vectors, incx 2, stridex 2k + 3, incy 1, stridey m + 4 */
    const int64_t batch = 5, incx = 2, sx = 2 * k + 3, sy = m + 4;
    std::vector<uint16_t> x = random_halves((size_t)((batch - 1) * sx + (k - 1) * incx + 1), 21, false);
    std::vector<uint16_t> y0 = random_halves((size_t)((batch - 1) * sy + m), 22, false);
    DevMem dx(x.size() * 2), dy(y0.size() * 2);
    ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dy.p, y0.data(), y0.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    const float alpha = -0.75f, beta = 2.0f;
    ASSERT_EQ(macko_Hspmv_strided_batched(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, &alpha, R.M.A, dx.as<macko_half>(),
                                          incx, sx, &beta, dy.as<macko_half>(), 1, sy, batch),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    std::vector<uint16_t> y(y0.size());
    ASSERT_EQ(cudaMemcpy(y.data(), dy.p, y.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    expect_product(R, batch, x, incx, sx, alpha, beta, y0, y, 1, sy, "strided batched");
}

TEST(GpuQuant, DeterministicAndGraphCapturable)
{
    MACKO_REQUIRE_GPU();
    Rig R;
    if (!R.make(random_quant(300, 700, 0.02, 12, 1)))
        return;
    const int64_t n = 9, m = 300, k = 700;
    std::vector<uint16_t> B = random_halves((size_t)(n * k), 3, true);
    DevMem dB(B.size() * 2), dC((size_t)(n * m) * 2), dC2((size_t)(n * m) * 2);
    ASSERT_EQ(cudaMemcpy(dB.p, B.data(), B.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    const float alpha = 1.0f, beta = 0.0f;
    std::vector<uint16_t> first((size_t)(n * m)), again((size_t)(n * m));
    for (int rep = 0; rep < mt::repeat_count(20); rep++) {
        ASSERT_EQ(macko_Hspmm(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, R.M.A, dB.as<macko_half>(), k, &beta,
                              dC.as<macko_half>(), m),
                  MACKO_STATUS_SUCCESS);
        ASSERT_EQ(cudaMemcpy(rep == 0 ? first.data() : again.data(), dC.p, first.size() * 2, cudaMemcpyDeviceToHost),
                  cudaSuccess);
        if (rep > 0) {
            ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * 2), 0) << "run " << rep << " differs";
        }
    }
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(macko_set_stream(R.H.h, (macko_stream_t)s), MACKO_STATUS_SUCCESS);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    ASSERT_EQ(macko_Hspmm(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, R.M.A, dB.as<macko_half>(), k, &beta,
                          dC2.as<macko_half>(), m),
              MACKO_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(dC2.p, 0xFF, dC2.bytes, s), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(ge, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(again.data(), dC2.p, again.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * 2), 0) << "graph replay differs";
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    macko_set_stream(R.H.h, nullptr);
    cudaStreamDestroy(s);
}

TEST(GpuQuant, LayoutsAgreeAndDownloadRoundTrips)
{
    MACKO_REQUIRE_GPU();
    Rig R;
    if (!R.make(random_quant(150, 400, 0.03, 13, 2)))
        return;
    const int64_t n = 4, m = 150, k = 400;
    std::vector<uint16_t> B = random_halves((size_t)(n * k), 4, false);
    DevMem dB(B.size() * 2), dC((size_t)(n * m) * 2);
    ASSERT_EQ(cudaMemcpy(dB.p, B.data(), B.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    const float alpha = 1.0f, beta = 0.0f;
    for (int layout = 0; layout < 2; layout++) {
        if (!R.force(layout))
            return;
        int64_t bytes = 0, entries = 0, padded = 0;
        ASSERT_EQ(macko_mat_get_storage(R.M.A, &bytes, &entries, &padded, nullptr), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(entries, (int64_t)R.q.oe.size());
        EXPECT_GE(padded, entries);
        /* download replaces the host copy with the device's, in CSR: the same arrays */
        ASSERT_EQ(macko_mat_download(R.H.h, R.M.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        const uint64_t *w = nullptr;
        const int32_t *rp = nullptr;
        const uint32_t *oe = nullptr;
        int64_t wc = 0, no = 0;
        int bits = 0;
        ASSERT_EQ(macko_mat_get_quant_host(R.M.A, &bits, &w, &wc, &no, &rp, &oe), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(wc, (int64_t)R.q.words.size());
        ASSERT_EQ(no, (int64_t)R.q.oe.size());
        EXPECT_EQ(std::memcmp(w, R.q.words.data(), (size_t)wc * 8), 0);
        EXPECT_EQ(std::memcmp(rp, R.q.rp.data(), (size_t)(m + 1) * 4), 0);
        EXPECT_EQ(std::memcmp(oe, R.q.oe.data(), (size_t)no * 4), 0);
        ASSERT_EQ(macko_Hspmm(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, R.M.A, dB.as<macko_half>(), k, &beta,
                              dC.as<macko_half>(), m),
                  MACKO_STATUS_SUCCESS);
        std::vector<uint16_t> C((size_t)(n * m)), C0(C.size(), 0);
        ASSERT_EQ(cudaMemcpy(C.data(), dC.p, C.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        expect_product(R, n, B, 1, k, alpha, beta, C0, C, 1, m, layout ? "TCOL" : "CSR");
    }
    /* release the host copy: serialize needs it back; download restores it byte for byte (the file too); compute
     * still works, the override (which uploads again) is refused */
    int64_t size0 = 0;
    ASSERT_EQ(macko_mat_serialized_size(R.M.A, &size0), MACKO_STATUS_SUCCESS);
    std::vector<uint8_t> ser0((size_t)size0), ser1((size_t)size0);
    ASSERT_EQ(macko_mat_serialize(R.M.A, ser0.data(), size0), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_release_host(R.M.A), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_serialize(R.M.A, ser1.data(), size0), MACKO_STATUS_NOT_INITIALIZED);
    ASSERT_EQ(macko_mat_download(R.H.h, R.M.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    ASSERT_EQ(macko_mat_serialize(R.M.A, ser1.data(), size0), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(ser0, ser1) << "the downloaded matrix serializes differently";
    ASSERT_EQ(macko_mat_release_host(R.M.A), MACKO_STATUS_SUCCESS);
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    EXPECT_EQ(macko_plan_override(R.H.h, R.M.A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_Hspmm(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, R.M.A, dB.as<macko_half>(), k, &beta,
                          dC.as<macko_half>(), m),
              MACKO_STATUS_SUCCESS);
}

TEST(GpuQuant, Refusals)
{
    MACKO_REQUIRE_GPU();
    Rig R;
    if (!R.make(random_quant(40, 48, 0.02, 14, 0)))
        return;
    DevMem dx(48 * 4), dy(48 * 4);
    const float one = 1.0f, zero = 0.0f;
    EXPECT_EQ(macko_Hspmv(R.H.h, MACKO_OPERATION_TRANSPOSE, &one, R.M.A, dx.as<macko_half>(), 1, &zero,
                          dy.as<macko_half>(), 1),
              MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    EXPECT_EQ(macko_analysis(R.H.h, MACKO_OPERATION_TRANSPOSE, R.M.A), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    EXPECT_EQ(macko_analysis(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, R.M.A), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_Sspmv(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, &one, R.M.A, dx.as<float>(), 1, &zero, dy.as<float>(),
                          1),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 4);
    EXPECT_EQ(macko_spmv_ex(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, &one, R.M.A, dx.p, MACKO_R_32F, 1, &zero, dy.p,
                            MACKO_R_32F, 1, MACKO_R_32F),
              MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 6);
    EXPECT_EQ(macko_spmm_ex(R.H.h, MACKO_OPERATION_NON_TRANSPOSE, 2, &one, R.M.A, dx.p, MACKO_R_32F, 48, &zero, dy.p,
                            MACKO_R_32F, 40, MACKO_R_32F),
              MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(macko_get_last_error_position(), 7);
    macko_kind_t kind = MACKO_KIND_MACKO;
    EXPECT_EQ(macko_mat_get_kind(R.M.A, &kind), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(kind, MACKO_KIND_QUANT);
}
