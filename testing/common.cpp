#include "common.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include <unistd.h>

#include "macko_internal.h"

/* Reference BLAS dgemv through its Fortran symbol (present in every BLAS, no cblas.h needed; the trailing size_t is
 * gfortran's hidden length of the character argument). */
extern "C" void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
                       const int *lda, const double *x, const int *incx, const double *beta, double *y,
                       const int *incy, size_t trans_len);

namespace mt {

float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1F;
    uint32_t man = h & 0x3FF;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal */
            float f = std::ldexp((float)man, -24);
            return (h & 0x8000) ? -f : f;
        }
    } else if (exp == 31) {
        bits = sign | 0x7F800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_half(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax >= 0x7F800000u) /* Inf or NaN */
        return (uint16_t)(sign | 0x7C00 | (ax > 0x7F800000u ? 0x200 : 0));
    if (ax >= 0x477FF000u) /* rounds to >= 65520: overflow */
        return (uint16_t)(sign | 0x7C00);
    if (ax < 0x38800000u) { /* subnormal or zero in fp16 */
        float a;
        std::memcpy(&a, &ax, 4);
        float q = a * 16777216.0f; /* a / 2^-24 */
        uint32_t m = (uint32_t)std::nearbyint(q); /* ties to even under the default rounding mode */
        return (uint16_t)(sign | m);
    }
    uint32_t exp = (ax >> 23) - 112;
    uint32_t man = ax & 0x7FFFFF;
    uint32_t h = (exp << 10) | (man >> 13);
    uint32_t rest = man & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

float bf16_to_float(uint16_t b)
{
    const uint32_t bits = (uint32_t)b << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_bf16(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: keep it quiet (a payload in the low half would be lost) */
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7FFFu + ((x >> 16) & 1u); /* ties to even; overflow rounds to Inf as it should */
    return (uint16_t)(x >> 16);
}

float round_to(float f, macko_datatype_t t)
{
    return t == MACKO_R_16F ? round_half(f) : t == MACKO_R_16BF ? round_bf16(f) : f;
}

double value_at(const void *values, macko_datatype_t t, int64_t k)
{
    const unsigned char *p = (const unsigned char *)values + (size_t)k * value_bytes(t);
    if (t == MACKO_R_64F) {
        double d;
        std::memcpy(&d, p, 8);
        return d;
    }
    if (t == MACKO_R_32F) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return t == MACKO_R_16F ? half_to_float(h) : bf16_to_float(h);
}

Dense rounded(const Dense &m, macko_datatype_t t)
{
    Dense r = m;
    for (auto &f : r.v)
        f = round_to(f, t);
    return r;
}

/* Writes f as one value of type t at dst. */
static void put_value(uint8_t *dst, float f, macko_datatype_t t)
{
    if (t == MACKO_R_64F) {
        const double d = f;
        std::memcpy(dst, &d, 8);
    } else if (t == MACKO_R_32F) {
        std::memcpy(dst, &f, 4);
    } else {
        const uint16_t h = t == MACKO_R_16F ? float_to_half(f) : float_to_bf16(f);
        std::memcpy(dst, &h, 2);
    }
}

int64_t Dense::nnz() const
{
    int64_t n = 0;
    for (float f : v)
        n += (f != 0.0f);
    return n;
}

static float nonzero_value(std::mt19937_64 &g, bool half_exact)
{
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (;;) {
        float f = u(g);
        if (half_exact)
            f = round_half(f);
        if (f != 0.0f)
            return f;
    }
}

Dense random_dense(int64_t rows, int64_t cols, double density, uint64_t seed, bool half_exact)
{
    Dense m;
    m.rows = rows;
    m.cols = cols;
    m.v.assign((size_t)(rows * cols), 0.0f);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto &f : m.v)
        if (u(g) < density)
            f = nonzero_value(g, half_exact);
    return m;
}

Dense random_dense_exact(int64_t rows, int64_t cols, double density, uint64_t seed, bool half_exact)
{
    Dense m;
    m.rows = rows;
    m.cols = cols;
    int64_t total = rows * cols;
    int64_t k = (int64_t)std::llround(density * (double)total);
    m.v.assign((size_t)total, 0.0f);
    std::mt19937_64 g(seed);
    /* Partial Fisher-Yates over an index permutation for small totals; Floyd's sampling otherwise. */
    std::vector<int64_t> idx((size_t)total);
    for (int64_t i = 0; i < total; i++)
        idx[(size_t)i] = i;
    for (int64_t i = 0; i < k; i++) {
        std::uniform_int_distribution<int64_t> d(i, total - 1);
        std::swap(idx[(size_t)i], idx[(size_t)d(g)]);
        m.v[(size_t)idx[(size_t)i]] = nonzero_value(g, half_exact);
    }
    return m;
}

void add_structure(Dense &m, uint64_t seed)
{
    std::mt19937_64 g(seed);
    for (int64_t r = 0; r < m.rows; r++) {
        int kind = (int)(r % 7);
        if (kind == 1) { /* empty row */
            for (int64_t c = 0; c < m.cols; c++)
                m.at(r, c) = 0.0f;
        } else if (kind == 3) { /* fully dense row */
            for (int64_t c = 0; c < m.cols; c++)
                m.at(r, c) = nonzero_value(g, true);
        } else if (kind == 5) { /* a few nonzeros far apart: gaps > 16, padding */
            for (int64_t c = 0; c < m.cols; c++)
                m.at(r, c) = (c % 37 == (r % 37)) ? nonzero_value(g, true) : 0.0f;
        }
    }
}

Dense padding_grid_matrix(int64_t rows, int64_t cols, bool half_exact)
{
    Dense m = random_dense(rows, cols, 0.0, 1, half_exact);
    std::mt19937_64 g(42);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c += 40)
            if (g() % 10 < 8 || r % 5 == 0)
                m.at(r, c) = round_half(0.25f + (float)(g() % 100) / 128.0f) * ((g() & 1) ? 1.0f : -1.0f);
    for (int64_t r = 3; r < rows; r += 17) {
        for (int64_t c = 0; c < cols; c++)
            m.at(r, c) = 0.0f;
        m.at(r, 2000) = 0.5f;
    }
    return m;
}

std::vector<float> nonfinite_off_grid_x(int64_t cols, bool half_exact)
{
    std::vector<float> x = random_vector(cols, 77, half_exact);
    for (int64_t c = 0; c < cols; c++)
        if (c % 40 != 0)
            x[(size_t)c] = (c % 3 == 0) ? std::nanf("") : (c % 3 == 1 ? INFINITY : -INFINITY);
    return x;
}

std::vector<uint8_t> values_bytes(const std::vector<float> &v, macko_datatype_t type)
{
    const size_t es = value_bytes(type);
    std::vector<uint8_t> out(v.size() * es);
    for (size_t i = 0; i < v.size(); i++)
        put_value(&out[i * es], v[i], type);
    return out;
}

std::vector<uint8_t> to_bytes(const Dense &m, macko_datatype_t type, macko_order_t order, int64_t ld)
{
    return lay_out(m.rows, m.cols, value_bytes(type), order, ld, 0xA5,
                   [&](int64_t r, int64_t c, uint8_t *dst) { put_value(dst, m.at(r, c), type); });
}

Csr to_csr(const Dense &m)
{
    Csr c;
    c.row_ptr.push_back(0);
    for (int64_t r = 0; r < m.rows; r++) {
        for (int64_t j = 0; j < m.cols; j++)
            if (m.at(r, j) != 0.0f) {
                c.col_ind.push_back(j);
                c.val.push_back(m.at(r, j));
            }
        c.row_ptr.push_back((int64_t)c.col_ind.size());
    }
    return c;
}

std::vector<float> random_vector(int64_t n, uint64_t seed, bool half_exact)
{
    std::vector<float> v((size_t)n);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto &f : v) {
        f = u(g);
        if (half_exact)
            f = round_half(f);
    }
    return v;
}

void ref_spmv(macko_mat_t A, macko_operation_t op, double alpha, const std::vector<double> &x, double beta,
              std::vector<double> &y)
{
    const void *vals = nullptr, *rp = nullptr;
    const uint8_t *dl = nullptr;
    macko_indextype_t rpt;
    int64_t rows, cols, entries, ep;
    macko_datatype_t type;
    ASSERT_EQ(macko_mat_get_info(A, &rows, &cols, nullptr, &type), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_macko_host(A, &vals, &dl, &rp, &rpt, &entries, &ep), MACKO_STATUS_SUCCESS);
    int64_t ylen = op == MACKO_OPERATION_NON_TRANSPOSE ? rows : cols;
    std::vector<double> acc((size_t)ylen, 0.0);
    for (int64_t r = 0; r < rows; r++) {
        int64_t b = macko_rp_get(rp, rpt == MACKO_INDEX_64I, r), e = macko_rp_get(rp, rpt == MACKO_INDEX_64I, r + 1);
        int64_t col = -1;
        for (int64_t k = b; k < e; k++) {
            col += (int64_t)macko_delta_get(dl, k) + 1;
            double v = value_at(vals, type, k);
            if (v == 0.0)
                continue;
            if (op == MACKO_OPERATION_NON_TRANSPOSE)
                acc[(size_t)r] += v * x[(size_t)col];
            else
                acc[(size_t)col] += v * x[(size_t)r];
        }
    }
    for (int64_t i = 0; i < ylen; i++)
        y[(size_t)i] = alpha * acc[(size_t)i] + (beta == 0.0 ? 0.0 : beta * y[(size_t)i]);
}

void cblas_gemv(const Dense &m, macko_operation_t op, double alpha, const std::vector<double> &x, double beta,
                std::vector<double> &y)
{
    std::vector<double> a(m.v.begin(), m.v.end());
    int64_t ylen = op == MACKO_OPERATION_NON_TRANSPOSE ? m.rows : m.cols;
    if (ylen == 0)
        return;
    if (m.rows == 0 || m.cols == 0) {
        for (auto &f : y)
            f = beta == 0.0 ? 0.0 : beta * f;
        return;
    }
    if (beta == 0.0)
        std::fill(y.begin(), y.end(), 0.0);
    /* Row-major A (rows x cols) is column-major A^T with lda = cols: op N is 'T' on it, op T is 'N'. */
    const char tr = op == MACKO_OPERATION_NON_TRANSPOSE ? 'T' : 'N';
    const int mm = (int)m.cols, nn = (int)m.rows, one = 1;
    dgemv_(&tr, &mm, &nn, &alpha, a.data(), &mm, x.data(), &one, &beta, y.data(), &one, 1);
}

double rel_l2(const std::vector<double> &a, const std::vector<double> &b)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); i++) {
        double d = a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    if (den == 0)
        return num == 0 ? 0 : INFINITY;
    return std::sqrt(num / den);
}

Bytes read_file(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_file(const std::string &path, const Bytes &b)
{
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char *>(b.data()), (std::streamsize)b.size());
    EXPECT_TRUE(f.good()) << "cannot write " << path;
}

Bytes serialized(macko_mat_t A)
{
    int64_t n = -1;
    if (macko_mat_serialized_size(A, &n) != MACKO_STATUS_SUCCESS || n < 0) {
        ADD_FAILURE() << "macko_mat_serialized_size: " << macko_get_last_error_message();
        return {};
    }
    Bytes b((size_t)n);
    if (macko_mat_serialize(A, b.data(), n) != MACKO_STATUS_SUCCESS) {
        ADD_FAILURE() << "macko_mat_serialize: " << macko_get_last_error_message();
        return {};
    }
    return b;
}

void expect_same_host(macko_mat_t A, macko_mat_t B)
{
    int64_t r1, c1, n1, r2, c2, n2, s1, s2, e1, e2, p1, p2;
    macko_datatype_t t1, t2;
    ASSERT_EQ(macko_mat_get_info(A, &r1, &c1, &n1, &t1), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_info(B, &r2, &c2, &n2, &t2), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(r1, r2);
    EXPECT_EQ(c1, c2);
    EXPECT_EQ(n1, n2);
    EXPECT_EQ(t1, t2);
    ASSERT_EQ(macko_mat_get_storage(A, &s1, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(B, &s2, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    /* A matrix with a device copy may also hold the tensor-core paths' tile index, which get_storage counts;
     * the encoding itself must have the same size either way. */
    const auto tile_index = [](macko_mat_t M) -> int64_t {
        return M->has_device && M->extra[MACKO_EXTRA_TILE_INDEX] != nullptr ? M->plan.tc.tidx_bytes : 0;
    };
    EXPECT_EQ(s1 - tile_index(A), s2 - tile_index(B));
    const void *v1, *v2, *rp1, *rp2;
    const uint8_t *d1, *d2;
    macko_indextype_t it1, it2;
    ASSERT_EQ(macko_mat_get_macko_host(A, &v1, &d1, &rp1, &it1, &e1, &p1), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_macko_host(B, &v2, &d2, &rp2, &it2, &e2, &p2), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(e1, e2);
    ASSERT_EQ(p1, p2);
    ASSERT_EQ(it1, it2);
    ASSERT_EQ(r1, r2);
    const size_t ts = value_bytes(t2), rs = it2 == MACKO_INDEX_64I ? 8 : 4;
    EXPECT_EQ(std::memcmp(v1, v2, (size_t)p2 * ts), 0) << "values differ";
    EXPECT_EQ(std::memcmp(d1, d2, (size_t)p2 / 2), 0) << "deltas differ";
    EXPECT_EQ(std::memcmp(rp1, rp2, (size_t)(r2 + 1) * rs), 0) << "row_ptr differs";
}

TempDir::TempDir()
{
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("macko_test_" + std::to_string(getpid()) + "_" + std::to_string(rd()) + "_" + std::to_string(rd()));
    std::filesystem::create_directories(path);
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
}

std::vector<std::string> TempDir::entries() const
{
    std::vector<std::string> v;
    for (const auto &e : std::filesystem::directory_iterator(path))
        v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
}

int repeat_count(int def)
{
    const char *e = std::getenv("MACKO_TEST_REPEATS");
    if (e == nullptr || *e == '\0')
        return def;
    char *end = nullptr;
    const long v = std::strtol(e, &end, 10);
    return (*end == '\0' && v >= 1 && v <= 1000000) ? (int)v : def;
}

bool gpu_available()
{
    static int cached = -1;
    if (cached < 0) {
        int n = 0;
        cached = (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) ? 1 : 0;
        cudaGetLastError();
    }
    return cached == 1;
}

} // namespace mt
