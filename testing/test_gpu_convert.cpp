/* GPU conversion (dense / CSR device data -> MACKO) of every value type, upload / download / release_host, and
 * macko_analysis. The oracle is the host encoder: every device result is downloaded and compared byte for byte. */
#include "common.h"
#include "gpu_fixtures.h"

#include "macko_internal.h"
#include "../kernels/convert.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

/* A device copy of host bytes, freed at scope exit. */
struct DevBuf {
    void *p = nullptr;
    DevBuf() = default;
    DevBuf(const void *src, size_t n)
    {
        EXPECT_EQ(cudaMalloc(&p, n > 0 ? n : 1), cudaSuccess);
        if (n > 0) {
            EXPECT_EQ(cudaMemcpy(p, src, n, cudaMemcpyHostToDevice), cudaSuccess);
        }
    }
    template <typename T> explicit DevBuf(const std::vector<T> &v) : DevBuf(v.data(), v.size() * sizeof(T)) {}
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;
    ~DevBuf() { cudaFree(p); }
};

using gt::Handle;
using gt::Mat;

const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(static_cast<uintptr_t>(0x5A5A5A50));

/* The text after "routine: argument N: " (or after "routine: ") of the last error message. */
std::string message_tail()
{
    std::string s = macko_get_last_error_message();
    size_t p = s.find(": argument ");
    if (p != std::string::npos) {
        p = s.find(": ", p + 2);
        return p == std::string::npos ? s : s.substr(p + 2);
    }
    p = s.find(": ");
    return p == std::string::npos ? s : s.substr(p + 2);
}

/* dev is device-only: download it and compare with host. */
void expect_same_encoding(macko_handle_t h, macko_mat_t dev, macko_mat_t host, const std::string &what)
{
    SCOPED_TRACE(what);
    ASSERT_EQ(dev->has_host, 0);
    ASSERT_EQ(dev->has_device, 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dev->dev.values) % 16, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dev->dev.deltas) % 16, 0u);
    ASSERT_EQ(macko_mat_download(h, dev), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    mt::expect_same_host(dev, host);
}

/* CSR of m's nonzeros plus explicit zeros (+0 and -0) at about `zeros` of the zero positions. */
mt::Csr csr_with_zeros(const mt::Dense &m, double zeros, uint64_t seed)
{
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    mt::Csr c;
    c.row_ptr.push_back(0);
    bool neg = false;
    for (int64_t r = 0; r < m.rows; r++) {
        for (int64_t j = 0; j < m.cols; j++) {
            float v = m.at(r, j);
            if (v != 0.0f || u(g) < zeros) {
                if (v == 0.0f) {
                    v = neg ? -0.0f : 0.0f;
                    neg = !neg;
                }
                c.col_ind.push_back(j);
                c.val.push_back(v);
            }
        }
        c.row_ptr.push_back((int64_t)c.col_ind.size());
    }
    return c;
}

/* Index array in the requested type with the base added. */
std::vector<uint8_t> index_bytes(const std::vector<int64_t> &v, macko_indextype_t it, int64_t base)
{
    std::vector<uint8_t> out(v.size() * (it == MACKO_INDEX_64I ? 8 : 4));
    for (size_t i = 0; i < v.size(); i++) {
        if (it == MACKO_INDEX_64I) {
            int64_t x = v[i] + base;
            std::memcpy(&out[i * 8], &x, 8);
        } else {
            int32_t x = (int32_t)(v[i] + base);
            std::memcpy(&out[i * 4], &x, 4);
        }
    }
    return out;
}

/* Encodes the same dense bytes on the host and on the device and compares. */
void check_dense(macko_handle_t h, const mt::Dense &m, macko_datatype_t type, macko_order_t order, int64_t ld,
                 const std::string &what)
{
    std::vector<uint8_t> bytes = mt::to_bytes(m, type, order, ld);
    Mat H, D;
    ASSERT_EQ(macko_mat_create_dense_host(&H.A, m.rows, m.cols, type, bytes.data(), ld, order), MACKO_STATUS_SUCCESS)
        << what << ": " << macko_get_last_error_message();
    DevBuf d(bytes);
    ASSERT_EQ(macko_mat_create_dense_device(h, &D.A, m.rows, m.cols, type, d.p, ld, order), MACKO_STATUS_SUCCESS)
        << what << ": " << macko_get_last_error_message();
    EXPECT_EQ(macko_get_last_error_position(), 0);
    expect_same_encoding(h, D.A, H.A, what);
}

void check_csr(macko_handle_t h, int64_t rows, int64_t cols, const mt::Csr &c, macko_datatype_t type,
               macko_indextype_t it, macko_index_base_t base, const std::string &what)
{
    std::vector<uint8_t> rp = index_bytes(c.row_ptr, it, base), ci = index_bytes(c.col_ind, it, base);
    std::vector<uint8_t> va = mt::values_bytes(c.val, type);
    const int64_t nnz = (int64_t)c.col_ind.size();
    Mat H, D;
    ASSERT_EQ(macko_mat_create_csr_host(&H.A, rows, cols, nnz, rp.data(), ci.data(), va.data(), it, base, type),
              MACKO_STATUS_SUCCESS)
        << what << ": " << macko_get_last_error_message();
    DevBuf drp(rp), dci(ci), dva(va);
    ASSERT_EQ(macko_mat_create_csr_device(h, &D.A, rows, cols, nnz, drp.p, dci.p, dva.p, it, base, type),
              MACKO_STATUS_SUCCESS)
        << what << ": " << macko_get_last_error_message();
    expect_same_encoding(h, D.A, H.A, what);
}

struct Shape {
    int64_t rows, cols;
};
const Shape kShapes[] = {{1, 1}, {1, 4097}, {4097, 1}, {7, 33}, {33, 7}, {1000, 1000}, {513, 2049}};
const double kDensities[] = {0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};

} // namespace

TEST(GpuConvert, DenseMatchesHostEncoder)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    uint64_t seed = 1;
    for (macko_datatype_t type : mt::kAllTypes)
        for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL})
            for (const Shape &s : kShapes)
                for (size_t i = 0; i < sizeof kDensities / sizeof kDensities[0]; i++) {
                    mt::Dense m = mt::random_dense(s.rows, s.cols, kDensities[i], seed++, type == MACKO_R_16F);
                    if (i % 2 == 1)
                        mt::add_structure(m, seed++);
                    const int64_t inner = order == MACKO_ORDER_ROW ? s.cols : s.rows;
                    /* ld: tight, 16-byte multiple (the vector path), or odd */
                    const int64_t ld = i % 3 == 0 ? inner : i % 3 == 1 ? ((inner + 7) / 8) * 8 + 8 : inner + 5;
                    check_dense(H.h, m, type, order, ld,
                                "type " + std::to_string(type) + " order " + std::to_string(order) + " " +
                                    std::to_string(s.rows) + "x" + std::to_string(s.cols) + " d=" +
                                    std::to_string(kDensities[i]) + " ld=" + std::to_string(ld));
                    if (HasFatalFailure())
                        return;
                }
}

TEST(GpuConvert, DenseSpecialValues)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    for (macko_datatype_t type : mt::kAllTypes)
        for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
            mt::Dense m = mt::random_dense(67, 301, 0.3, 77, type == MACKO_R_16F);
            mt::add_structure(m, 78);
            const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
            /* subnormal and nonzero in fp16, fp32 and bf16 (2^-133 there); in fp64 merely small */
            const float tiny = type == MACKO_R_16F ? std::ldexp(1.0f, -24) : 1e-40f;
            const float special[] = {-0.0f, nan, inf, -inf, tiny, -tiny, -0.0f, -0.0f};
            std::mt19937_64 g(5);
            for (int i = 0; i < 400; i++)
                m.at((int64_t)(g() % 67), (int64_t)(g() % 301)) = special[i % 8];
            for (int64_t c = 0; c < 301; c++) /* a row of -0.0 only: empty */
                m.at(2, c) = -0.0f;
            check_dense(H.h, m, type, order, (order == MACKO_ORDER_ROW ? 301 : 67) + 3,
                        "special values type " + std::to_string(type) + " order " + std::to_string(order));
        }
}

TEST(GpuConvert, DenseUnalignedBase)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    /* A row-major matrix whose rows are 16-byte multiples but whose base is not 16-byte aligned: the scalar path. */
    for (macko_datatype_t type : mt::kAllTypes) {
        mt::Dense m = mt::random_dense(45, 1000, 0.2, 90 + type, type == MACKO_R_16F);
        mt::add_structure(m, 91);
        const int64_t ld = 1024;
        std::vector<uint8_t> bytes = mt::to_bytes(m, type, MACKO_ORDER_ROW, ld);
        const size_t es = mt::value_bytes(type);
        std::vector<uint8_t> shifted(bytes.size() + 16, 0);
        std::memcpy(shifted.data() + es, bytes.data(), bytes.size());
        DevBuf d(shifted);
        Mat D, Ref;
        ASSERT_EQ(macko_mat_create_dense_host(&Ref.A, 45, 1000, type, bytes.data(), ld, MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_create_dense_device(H.h, &D.A, 45, 1000, type, static_cast<uint8_t *>(d.p) + es, ld,
                                                MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        expect_same_encoding(H.h, D.A, Ref.A, "unaligned base");
    }
}

TEST(GpuConvert, ZeroSizes)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    const Shape shapes[] = {{0, 0}, {0, 5}, {5, 0}};
    for (macko_datatype_t type : mt::kAllTypes)
        for (const Shape &s : shapes)
            for (macko_order_t order : {MACKO_ORDER_ROW, MACKO_ORDER_COL}) {
                const std::string what = "type " + std::to_string(type) + " " + std::to_string(s.rows) + "x" +
                                         std::to_string(s.cols);
                Mat A, B;
                const int64_t ld = std::max<int64_t>(1, order == MACKO_ORDER_ROW ? s.cols : s.rows);
                ASSERT_EQ(macko_mat_create_dense_device(H.h, &A.A, s.rows, s.cols, type, nullptr, ld, order),
                          MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                ASSERT_EQ(macko_mat_create_dense_host(&B.A, s.rows, s.cols, type, nullptr, ld, order),
                          MACKO_STATUS_SUCCESS);
                expect_same_encoding(H.h, A.A, B.A, "zero dense " + what);
                mt::Csr c;
                c.row_ptr.assign((size_t)s.rows + 1, 0);
                check_csr(H.h, s.rows, s.cols, c, type, MACKO_INDEX_32I, MACKO_INDEX_BASE_ONE, "zero csr " + what);
            }
}

TEST(GpuConvert, CsrMatchesHostEncoder)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    uint64_t seed = 1000;
    const double dens[] = {0.0, 0.05, 0.3, 0.7, 1.0};
    for (macko_datatype_t type : mt::kAllTypes)
        for (macko_indextype_t it : {MACKO_INDEX_32I, MACKO_INDEX_64I})
            for (macko_index_base_t base : {MACKO_INDEX_BASE_ZERO, MACKO_INDEX_BASE_ONE})
                for (const Shape &s : kShapes)
                    for (size_t i = 0; i < sizeof dens / sizeof dens[0]; i++) {
                        mt::Dense m = mt::random_dense(s.rows, s.cols, dens[i], seed++, type == MACKO_R_16F);
                        if (i % 2 == 1)
                            mt::add_structure(m, seed++);
                        mt::Csr c = csr_with_zeros(m, 0.02, seed++);
                        check_csr(H.h, s.rows, s.cols, c, type, it, base,
                                  "csr type " + std::to_string(type) + " it " + std::to_string(it) + " base " +
                                      std::to_string(base) + " " + std::to_string(s.rows) + "x" +
                                      std::to_string(s.cols) + " d=" + std::to_string(dens[i]));
                        if (HasFatalFailure())
                            return;
                    }
}

TEST(GpuConvert, CsrLongGapsAndExplicitZeroRows)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    /* Row 0: far-apart columns (hundreds of paddings, written by the whole warp); row 1: only explicit zeros;
     * row 2: empty; row 3: 40 consecutive columns starting at 1000 (crosses a 32-entry chunk). */
    const int64_t cols = 5000;
    mt::Csr c;
    c.row_ptr = {0};
    for (int64_t j : {0, 17, 33, 700, 4999}) {
        c.col_ind.push_back(j);
        c.val.push_back(0.5f);
    }
    c.row_ptr.push_back((int64_t)c.col_ind.size());
    for (int64_t j : {3, 40, 4000}) {
        c.col_ind.push_back(j);
        c.val.push_back(j == 40 ? -0.0f : 0.0f);
    }
    c.row_ptr.push_back((int64_t)c.col_ind.size());
    c.row_ptr.push_back((int64_t)c.col_ind.size());
    for (int64_t j = 1000; j < 1040; j++) {
        c.col_ind.push_back(j + (j >= 1020 ? 20 : 0));
        c.val.push_back((float)j);
    }
    c.row_ptr.push_back((int64_t)c.col_ind.size());
    for (macko_datatype_t type : mt::kAllTypes)
        check_csr(H.h, 4, cols, c, type, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO, "long gaps");
}

namespace {

struct CsrCase {
    const char *name;
    int pos; /* expected position (device numbering) */
    void (*mutate)(std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t cols);
};

} // namespace

TEST(GpuConvert, CsrInvalidInputMatchesHostReport)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    mt::Dense m = mt::random_dense(50, 40, 0.4, 9, true);
    for (int64_t c = 0; c < 40; c++) /* rows 10..12 dense enough to mutate */
        for (int64_t r = 10; r < 13; r++)
            m.at(r, c) = 1.0f;
    const mt::Csr good = mt::to_csr(m);
    const CsrCase cases[] = {
        {"unsorted", 7, [](std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t) { std::swap(ci[rp[11] + 3], ci[rp[11] + 4]); }},
        {"duplicate", 7, [](std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t) { ci[rp[12] + 5] = ci[rp[12] + 4]; }},
        {"too large", 7, [](std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t cols) { ci[rp[12] - 1] = cols; }},
        {"negative", 7, [](std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t) { ci[rp[10]] = -1; }},
        {"two bad rows: min wins", 7,
         [](std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t cols) {
             ci[rp[40]] = cols + 3;
             std::swap(ci[rp[10] + 1], ci[rp[10] + 2]);
             ci[rp[45]] = -7;
         }},
        {"row_ptr[0] != base", 6, [](std::vector<int64_t> &rp, std::vector<int64_t> &, int64_t) { rp[0] = 1; }},
        {"row_ptr decreases", 6, [](std::vector<int64_t> &rp, std::vector<int64_t> &, int64_t) { rp[20] = rp[19] - 1; }},
        {"row_ptr exceeds nnz", 6, [](std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t) { rp[30] = (int64_t)ci.size() + 3; }},
        {"row_ptr[rows] != nnz", 6, [](std::vector<int64_t> &rp, std::vector<int64_t> &, int64_t) { rp[50] -= 1; }},
        {"row_ptr beats columns", 6,
         [](std::vector<int64_t> &rp, std::vector<int64_t> &ci, int64_t) {
             ci[rp[2]] = -1;
             rp[33] = rp[32] - 1;
         }},
    };
    for (const CsrCase &cs : cases)
        for (macko_indextype_t it : {MACKO_INDEX_32I, MACKO_INDEX_64I})
            for (macko_index_base_t base : {MACKO_INDEX_BASE_ZERO, MACKO_INDEX_BASE_ONE}) {
                SCOPED_TRACE(std::string(cs.name) + " it " + std::to_string(it) + " base " + std::to_string(base));
                std::vector<int64_t> rp = good.row_ptr, ci = good.col_ind;
                cs.mutate(rp, ci, 40);
                std::vector<uint8_t> brp = index_bytes(rp, it, base), bci = index_bytes(ci, it, base);
                std::vector<uint8_t> bva = mt::values_bytes(good.val, MACKO_R_16F);
                const int64_t nnz = (int64_t)ci.size();
                macko_mat_t hA = kPoison, dA = kPoison;
                macko_status_t hs = macko_mat_create_csr_host(&hA, 50, 40, nnz, brp.data(), bci.data(), bva.data(), it,
                                                              base, MACKO_R_16F);
                const int hpos = macko_get_last_error_position();
                const std::string hmsg = message_tail();
                DevBuf drp(brp), dci(bci), dva(bva);
                macko_status_t ds =
                    macko_mat_create_csr_device(H.h, &dA, 50, 40, nnz, drp.p, dci.p, dva.p, it, base, MACKO_R_16F);
                EXPECT_EQ(hs, MACKO_STATUS_INVALID_VALUE);
                EXPECT_EQ(ds, MACKO_STATUS_INVALID_VALUE);
                EXPECT_EQ(macko_get_last_error_position(), cs.pos);
                EXPECT_EQ(hpos + 1, cs.pos);
                EXPECT_EQ(message_tail(), hmsg);
                EXPECT_NE(hmsg.find("row "), std::string::npos);
                EXPECT_NE(hmsg.find(cs.pos == 7 ? "col_ind" : "row_ptr"), std::string::npos) << hmsg;
                EXPECT_EQ(hA, kPoison);
                EXPECT_EQ(dA, kPoison);
            }
    /* Afterwards the context is healthy: a valid conversion still works. */
    check_csr(H.h, 50, 40, good, MACKO_R_16F, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, "valid after invalid");
}

TEST(GpuConvert, UploadDownloadReleaseHost)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    mt::Dense m = mt::random_dense(300, 517, 0.35, 21, true);
    mt::add_structure(m, 22);
    std::vector<uint8_t> bytes = mt::to_bytes(m, MACKO_R_16F, MACKO_ORDER_ROW, 517);
    Mat A, Ref;
    ASSERT_EQ(macko_mat_create_dense_host(&A.A, 300, 517, MACKO_R_16F, bytes.data(), 517, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_create_dense_host(&Ref.A, 300, 517, MACKO_R_16F, bytes.data(), 517, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    /* Host-only: release is refused and nothing changes. */
    EXPECT_EQ(macko_mat_release_host(A.A), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_EQ(A.A->has_host, 1);
    ASSERT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(A.A->has_device, 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(A.A->dev.values) % 16, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(A.A->dev.deltas) % 16, 0u);
    ASSERT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_SUCCESS); /* again: replaces the device copy */
    ASSERT_EQ(macko_mat_release_host(A.A), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_release_host(A.A), MACKO_STATUS_SUCCESS); /* twice is fine */
    const void *v = nullptr;
    EXPECT_EQ(macko_mat_get_macko_host(A.A, &v, nullptr, nullptr, nullptr, nullptr, nullptr),
              MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(v, nullptr);
    std::vector<int32_t> rp(301), ci((size_t)m.nnz() + 1);
    std::vector<uint16_t> va((size_t)m.nnz() + 1);
    EXPECT_EQ(macko_mat_export_csr_host(A.A, rp.data(), ci.data(), va.data(), MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO),
              MACKO_STATUS_NOT_INITIALIZED);
    int64_t nnz = -1, entries = -1;
    EXPECT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, m.nnz());
    EXPECT_EQ(macko_mat_get_storage(A.A, nullptr, &entries, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_GT(entries, nnz);
    /* Upload of a device-only matrix: nothing to upload. */
    EXPECT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    /* Download brings the identical bytes back; the matrix is usable on the host again. */
    ASSERT_EQ(macko_mat_download(H.h, A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(A.A->has_host, 1);
    mt::expect_same_host(A.A, Ref.A);
    EXPECT_EQ(macko_mat_export_csr_host(A.A, rp.data(), ci.data(), va.data(), MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO),
              MACKO_STATUS_SUCCESS);
    /* Download with a host copy present replaces it with equal bytes. */
    ASSERT_EQ(macko_mat_download(H.h, A.A), MACKO_STATUS_SUCCESS);
    mt::expect_same_host(A.A, Ref.A);
    /* A matrix created on the device can be released-from-host trivially (it has none). */
    Mat D;
    DevBuf d(bytes);
    ASSERT_EQ(macko_mat_create_dense_device(H.h, &D.A, 300, 517, MACKO_R_16F, d.p, 517, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_release_host(D.A), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_get_macko_host(D.A, &v, nullptr, nullptr, nullptr, nullptr, nullptr),
              MACKO_STATUS_NOT_INITIALIZED);
}

TEST(GpuConvert, UploadOnUserStream)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(macko_set_stream(H.h, (macko_stream_t)s), MACKO_STATUS_SUCCESS);
    mt::Dense m = mt::random_dense(129, 1000, 0.5, 31, false);
    Mat A;
    {
        std::vector<uint8_t> bytes = mt::to_bytes(m, MACKO_R_32F, MACKO_ORDER_COL, 140);
        ASSERT_EQ(macko_mat_create_dense_host(&A.A, 129, 1000, MACKO_R_32F, bytes.data(), 140, MACKO_ORDER_COL),
                  MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_release_host(A.A), MACKO_STATUS_SUCCESS); /* right after: the copy owns its source */
    }
    Mat Ref;
    std::vector<uint8_t> bytes = mt::to_bytes(m, MACKO_R_32F, MACKO_ORDER_ROW, 1000);
    ASSERT_EQ(macko_mat_create_dense_host(&Ref.A, 129, 1000, MACKO_R_32F, bytes.data(), 1000, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    expect_same_encoding(H.h, A.A, Ref.A, "user stream");
    Mat D;
    DevBuf d(bytes);
    ASSERT_EQ(macko_mat_create_dense_device(H.h, &D.A, 129, 1000, MACKO_R_32F, d.p, 1000, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    expect_same_encoding(H.h, D.A, Ref.A, "conversion on a user stream");
    macko_set_stream(H.h, nullptr);
    cudaStreamDestroy(s);
}

namespace {

mt::Dense transpose(const mt::Dense &m)
{
    mt::Dense t;
    t.rows = m.cols;
    t.cols = m.rows;
    t.v.assign(m.v.size(), 0.0f);
    for (int64_t r = 0; r < m.rows; r++)
        for (int64_t c = 0; c < m.cols; c++)
            t.at(c, r) = m.at(r, c);
    return t;
}

} // namespace

TEST(GpuConvert, AnalysisTransposeMatchesHostEncoding)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    const Shape shapes[] = {{1, 1}, {7, 33}, {33, 7}, {1, 4097}, {513, 2049}, {0, 4}, {4, 0}};
    uint64_t seed = 500;
    for (macko_datatype_t type : mt::kAllTypes)
        for (const Shape &s : shapes)
            for (double d : {0.0, 0.1, 0.6, 1.0}) {
                const std::string what = "analysis T type " + std::to_string(type) + " " + std::to_string(s.rows) +
                                         "x" + std::to_string(s.cols) + " d=" + std::to_string(d);
                mt::Dense m = mt::random_dense(s.rows, s.cols, d, seed++, type == MACKO_R_16F);
                if (s.rows > 7)
                    mt::add_structure(m, seed++);
                mt::Dense t = transpose(m);
                std::vector<uint8_t> tb = mt::to_bytes(t, type, MACKO_ORDER_ROW, std::max<int64_t>(t.cols, 1));
                Mat Ref, A;
                ASSERT_EQ(macko_mat_create_dense_host(&Ref.A, t.rows, t.cols, type, tb.data(),
                                                      std::max<int64_t>(t.cols, 1), MACKO_ORDER_ROW),
                          MACKO_STATUS_SUCCESS);
                /* A from CSR with explicit zeros on the device: they are not nonzeros of A^T. */
                mt::Csr c = csr_with_zeros(m, 0.05, seed++);
                std::vector<uint8_t> rp = index_bytes(c.row_ptr, MACKO_INDEX_64I, 0),
                                     ci = index_bytes(c.col_ind, MACKO_INDEX_64I, 0),
                                     va = mt::values_bytes(c.val, type);
                DevBuf drp(rp), dci(ci), dva(va);
                ASSERT_EQ(macko_mat_create_csr_device(H.h, &A.A, s.rows, s.cols, (int64_t)c.col_ind.size(), drp.p,
                                                      dci.p, dva.p, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO, type),
                          MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                ASSERT_EQ(macko_analysis(H.h, MACKO_OPERATION_NON_TRANSPOSE, A.A), MACKO_STATUS_SUCCESS);
                EXPECT_EQ(A.A->trans, nullptr);
                ASSERT_EQ(macko_analysis(H.h, MACKO_OPERATION_TRANSPOSE, A.A), MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                ASSERT_NE(A.A->trans, nullptr);
                struct macko_mat_s *first = A.A->trans;
                ASSERT_EQ(macko_analysis(H.h, MACKO_OPERATION_TRANSPOSE, A.A), MACKO_STATUS_SUCCESS); /* twice */
                EXPECT_EQ(A.A->trans, first);
                EXPECT_EQ(A.A->has_host, 0); /* the temporary host copy is gone */
                expect_same_encoding(H.h, A.A->trans, Ref.A, what);
                if (HasFatalFailure())
                    return;
            }
    /* From a host-encoded, uploaded matrix whose host copy is kept. */
    mt::Dense m = mt::random_dense(200, 333, 0.4, 3, true);
    std::vector<uint8_t> b = mt::to_bytes(m, MACKO_R_16F, MACKO_ORDER_COL, 200);
    mt::Dense t = transpose(m);
    std::vector<uint8_t> tb = mt::to_bytes(t, MACKO_R_16F, MACKO_ORDER_ROW, 200);
    Mat A, Ref;
    ASSERT_EQ(macko_mat_create_dense_host(&A.A, 200, 333, MACKO_R_16F, b.data(), 200, MACKO_ORDER_COL),
              MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_create_dense_host(&Ref.A, 333, 200, MACKO_R_16F, tb.data(), 200, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_analysis(H.h, MACKO_OPERATION_TRANSPOSE, A.A), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_get_last_error_position(), 3);
    EXPECT_EQ(A.A->trans, nullptr);
    ASSERT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_analysis(H.h, MACKO_OPERATION_TRANSPOSE, A.A), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(A.A->has_host, 1);
    expect_same_encoding(H.h, A.A->trans, Ref.A, "analysis T from an uploaded host matrix");
    ASSERT_EQ(macko_mat_upload(H.h, A.A), MACKO_STATUS_SUCCESS); /* re-upload on the same device keeps A^T */
    EXPECT_NE(A.A->trans, nullptr);
}

TEST(GpuConvert, BadArguments)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    macko_handle_t h = H.h;
    std::vector<uint16_t> host(64, 0x3C00);
    DevBuf dense(host);
    std::vector<int32_t> rp = {0, 2, 3}, ci = {0, 5, 1};
    DevBuf drp(rp), dci(ci), dva(host);
    macko_mat_t A = kPoison;
    auto expect_fail = [&](macko_status_t got, macko_status_t want, int pos, const char *what) {
        EXPECT_EQ(got, want) << what;
        EXPECT_EQ(macko_get_last_error_position(), pos) << what << ": " << macko_get_last_error_message();
        EXPECT_EQ(A, kPoison) << what;
    };
    const macko_datatype_t H16 = MACKO_R_16F;
    const macko_order_t ROW = MACKO_ORDER_ROW;
    /* macko_mat_create_dense_device(handle, A, rows, cols, type, values, ld, order) */
    const char *fd = "dense";
    expect_fail(macko_mat_create_dense_device(nullptr, &A, 8, 8, H16, dense.p, 8, ROW), MACKO_STATUS_INVALID_VALUE, 1, fd);
    expect_fail(macko_mat_create_dense_device(h, nullptr, 8, 8, H16, dense.p, 8, ROW), MACKO_STATUS_INVALID_VALUE, 2, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, -1, 8, H16, dense.p, 8, ROW), MACKO_STATUS_INVALID_VALUE, 3, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 8, -1, H16, dense.p, 8, ROW), MACKO_STATUS_INVALID_VALUE, 4, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, INT64_C(1) << 40, INT64_C(1) << 40, H16, dense.p, INT64_C(1) << 40,
                                              ROW),
                MACKO_STATUS_INVALID_VALUE, 4, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 8, 8, (macko_datatype_t)3, dense.p, 8, ROW),
                MACKO_STATUS_INVALID_VALUE, 5, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 8, 8, H16, nullptr, 8, ROW), MACKO_STATUS_INVALID_VALUE, 6, fd);
    int pageable = 0;
    cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0);
    if (!pageable)
        expect_fail(macko_mat_create_dense_device(h, &A, 8, 8, H16, host.data(), 8, ROW), MACKO_STATUS_INVALID_VALUE,
                    6, "dense host pointer");
    expect_fail(macko_mat_create_dense_device(h, &A, 8, 8, H16, dense.p, 7, ROW), MACKO_STATUS_INVALID_VALUE, 7, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 8, 9, H16, dense.p, 8, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE,
                7, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 9, 8, H16, dense.p, 8, MACKO_ORDER_COL), MACKO_STATUS_INVALID_VALUE,
                7, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 8, 8, H16, dense.p, INT64_C(1) << 55, ROW),
                MACKO_STATUS_INVALID_VALUE, 7, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 8, 8, H16, dense.p, 8, (macko_order_t)0),
                MACKO_STATUS_INVALID_VALUE, 8, fd);
    expect_fail(macko_mat_create_dense_device(h, &A, 8, 8, H16, dense.p, 0, (macko_order_t)3),
                MACKO_STATUS_INVALID_VALUE, 8, "bad order and bad ld: order wins");

    /* macko_mat_create_csr_device(handle, A, rows, cols, nnz, row_ptr, col_ind, values, index_type, base, type) */
    const char *fc = "csr";
    const macko_indextype_t I32 = MACKO_INDEX_32I;
    const macko_index_base_t B0 = MACKO_INDEX_BASE_ZERO;
    expect_fail(macko_mat_create_csr_device(nullptr, &A, 2, 8, 3, drp.p, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 1, fc);
    expect_fail(macko_mat_create_csr_device(h, nullptr, 2, 8, 3, drp.p, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 2, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, -2, 8, 3, drp.p, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 3, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, -8, 3, drp.p, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 4, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, -3, drp.p, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 5, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, nullptr, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 6, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, drp.p, nullptr, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 7, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, drp.p, dci.p, nullptr, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 8, fc);
    if (!pageable)
        expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, rp.data(), dci.p, dva.p, I32, B0, H16),
                    MACKO_STATUS_INVALID_VALUE, 6, "csr host row_ptr");
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, drp.p, dci.p, dva.p, (macko_indextype_t)1, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 9, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, drp.p, dci.p, dva.p, I32, (macko_index_base_t)2, H16),
                MACKO_STATUS_INVALID_VALUE, 10, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, drp.p, dci.p, dva.p, I32, B0, (macko_datatype_t)3),
                MACKO_STATUS_INVALID_VALUE, 11, fc);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, INT64_C(1) << 33, drp.p, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 5, "csr nnz too big for int32");
    /* nnz inconsistent with row_ptr: found on the GPU. */
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 4, drp.p, dci.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 6, "csr nnz != row_ptr[rows]");
    /* a column index out of range: the message names col_ind */
    std::vector<int32_t> ci_bad = {0, 5, 9};
    DevBuf dci_bad(ci_bad);
    expect_fail(macko_mat_create_csr_device(h, &A, 2, 8, 3, drp.p, dci_bad.p, dva.p, I32, B0, H16),
                MACKO_STATUS_INVALID_VALUE, 7, "csr column out of range");
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_csr_device: argument 7: row 1: col_ind[2] = 9 is outside [0, 8)");
    /* a valid call succeeds with the same buffers */
    ASSERT_EQ(macko_mat_create_csr_device(h, &A, 2, 8, 3, drp.p, dci.p, dva.p, I32, B0, H16), MACKO_STATUS_SUCCESS);
    Mat Aok;
    Aok.A = A;
    A = kPoison;

    /* upload / download / release_host / analysis */
    Mat Hm;
    ASSERT_EQ(macko_mat_create_dense_host(&Hm.A, 8, 8, H16, host.data(), 8, ROW), MACKO_STATUS_SUCCESS);
    expect_fail(macko_mat_upload(nullptr, Hm.A), MACKO_STATUS_INVALID_VALUE, 1, "upload");
    expect_fail(macko_mat_upload(h, nullptr), MACKO_STATUS_INVALID_VALUE, 2, "upload");
    expect_fail(macko_mat_upload(h, Aok.A), MACKO_STATUS_NOT_INITIALIZED, 2, "upload without a host copy");
    EXPECT_EQ(Aok.A->has_device, 1);
    expect_fail(macko_mat_download(nullptr, Aok.A), MACKO_STATUS_INVALID_VALUE, 1, "download");
    expect_fail(macko_mat_download(h, nullptr), MACKO_STATUS_INVALID_VALUE, 2, "download");
    expect_fail(macko_mat_download(h, Hm.A), MACKO_STATUS_NOT_INITIALIZED, 2, "download of a host-only matrix");
    EXPECT_EQ(Aok.A->has_host, 0);
    expect_fail(macko_mat_release_host(nullptr), MACKO_STATUS_INVALID_VALUE, 1, "release_host");
    expect_fail(macko_mat_release_host(Hm.A), MACKO_STATUS_NOT_INITIALIZED, 1, "release_host off the device");
    EXPECT_EQ(Hm.A->has_host, 1);
    expect_fail(macko_analysis(nullptr, MACKO_OPERATION_TRANSPOSE, Aok.A), MACKO_STATUS_INVALID_VALUE, 1, "analysis");
    expect_fail(macko_analysis(h, (macko_operation_t)2, Aok.A), MACKO_STATUS_INVALID_VALUE, 2, "analysis");
    expect_fail(macko_analysis(h, MACKO_OPERATION_TRANSPOSE, nullptr), MACKO_STATUS_INVALID_VALUE, 3, "analysis");
    expect_fail(macko_analysis(h, MACKO_OPERATION_TRANSPOSE, Hm.A), MACKO_STATUS_NOT_INITIALIZED, 3, "analysis");
    EXPECT_EQ(Hm.A->trans, nullptr);
    EXPECT_EQ(Aok.A->trans, nullptr);
}

/* Not asserted: the conversion's cost against one cuBLAS GEMV over the same dense fp16 matrix. */
TEST(GpuConvertTiming, Dense12288Half)
{
    MACKO_REQUIRE_GPU();
    Handle H;
    const int64_t n = 12288;
    std::vector<uint16_t> a((size_t)(n * n));
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (auto &v : a) { /* d = 0.5, values in [0.5, 1) with random sign */
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v = (s & 1) ? (uint16_t)(0x3800 | ((s >> 8) & 0x3FF) | ((s >> 20) & 0x8000)) : 0;
    }
    DevBuf d(a);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float conv_ms[2] = {1e30f, 1e30f};
    int64_t entries = 0;
    for (int order = 0; order < 2; order++)
        for (int rep = 0; rep < 4; rep++) {
            macko_mat_t A = nullptr;
            cudaEventRecord(e0, nullptr);
            ASSERT_EQ(macko_mat_create_dense_device(H.h, &A, n, n, MACKO_R_16F, d.p, n,
                                                    order == 0 ? MACKO_ORDER_ROW : MACKO_ORDER_COL),
                      MACKO_STATUS_SUCCESS);
            cudaEventRecord(e1, nullptr);
            cudaEventSynchronize(e1);
            float ms = 0;
            cudaEventElapsedTime(&ms, e0, e1);
            if (rep > 0 && ms < conv_ms[order])
                conv_ms[order] = ms;
            macko_mat_get_storage(A, nullptr, &entries, nullptr, nullptr);
            macko_mat_destroy(A);
        }
    /* The count pass alone (one full read of the matrix), through the internal launcher. */
    float count_ms[2] = {0, 0};
    {
        int64_t *counts = nullptr;
        macko_conv_stats *st = nullptr;
        ASSERT_EQ(cudaMalloc((void **)&counts, (size_t)(n + 1) * 8), cudaSuccess);
        ASSERT_EQ(cudaMalloc((void **)&st, sizeof *st), cudaSuccess);
        for (int order = 0; order < 2; order++) {
            macko_conv_dense_count(2, d.p, n, n, n, order, counts, st, H.h->props.sm_count, nullptr);
            cudaEventRecord(e0, nullptr);
            for (int rep = 0; rep < 5; rep++)
                macko_conv_dense_count(2, d.p, n, n, n, order, counts, st, H.h->props.sm_count, nullptr);
            cudaEventRecord(e1, nullptr);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&count_ms[order], e0, e1);
            count_ms[order] /= 5;
        }
        cudaFree(counts);
        cudaFree(st);
    }
    cublasHandle_t cb;
    ASSERT_EQ(cublasCreate(&cb), CUBLAS_STATUS_SUCCESS);
    std::vector<uint16_t> xh((size_t)n, 0x3C00);
    DevBuf x(xh), y(xh);
    const float alpha = 1.0f, beta = 0.0f;
    auto gemv = [&] {
        /* row-major A (n x n) is column-major A^T: y = (A^T)^T x */
        return cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, 1, (int)n, &alpha, d.p, CUDA_R_16F, (int)n, x.p,
                            CUDA_R_16F, (int)n, &beta, y.p, CUDA_R_16F, (int)n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT);
    };
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(gemv(), CUBLAS_STATUS_SUCCESS);
    const int reps = 50;
    cudaEventRecord(e0, nullptr);
    for (int i = 0; i < reps; i++)
        gemv();
    cudaEventRecord(e1, nullptr);
    cudaEventSynchronize(e1);
    float gemv_ms = 0;
    cudaEventElapsedTime(&gemv_ms, e0, e1);
    gemv_ms /= reps;
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    std::printf("[timing] %s: %lldx%lld fp16 d=0.5 (%lld entries): conversion row-major %.3f ms, column-major "
                "%.3f ms (best of 3, incl. allocation and sync); count pass alone %.3f / %.3f ms; cublasGemmEx GEMV "
                "%.4f ms; ratio %.1fx\n",
                p.name, (long long)n, (long long)n, (long long)entries, conv_ms[0], conv_ms[1], count_ms[0],
                count_ms[1], gemv_ms, conv_ms[0] / gemv_ms);
    cublasDestroy(cb);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}
