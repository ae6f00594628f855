/* GPU concurrency (issue "Reliability"): several host threads, each with its own handle and stream, share one
 * read-only uploaded matrix and run SpMV (one thread SpMM) many times at once. Every result must be bitwise the
 * single-threaded result: the compute calls share no mutable state, allocate nothing and never synchronise. */
#include "common.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 6;
constexpr int kIters = 60;
constexpr int64_t kSpmmN = 4;

/* Everything one worker needs: its handle, stream and device buffers; its first error as text. */
struct Worker {
    macko_handle_t h = nullptr;
    cudaStream_t s = nullptr;
    void *x = nullptr, *y = nullptr;
    std::string err;
};

template <bool HALF> struct Ops {
    static macko_status_t spmv(macko_handle_t h, const float *a, macko_mat_t A, const void *x, const float *b, void *y)
    {
        if (HALF)
            return macko_Hspmv(h, MACKO_OPERATION_NON_TRANSPOSE, a, A, static_cast<const macko_half *>(x), 1, b,
                               static_cast<macko_half *>(y), 1);
        return macko_Sspmv(h, MACKO_OPERATION_NON_TRANSPOSE, a, A, static_cast<const float *>(x), 1, b,
                           static_cast<float *>(y), 1);
    }
    static macko_status_t spmm(macko_handle_t h, int64_t n, const float *a, macko_mat_t A, const void *B,
                               int64_t ldb, const float *b, void *C, int64_t ldc)
    {
        if (HALF)
            return macko_Hspmm(h, MACKO_OPERATION_NON_TRANSPOSE, n, a, A, static_cast<const macko_half *>(B), ldb, b,
                               static_cast<macko_half *>(C), ldc);
        return macko_Sspmm(h, MACKO_OPERATION_NON_TRANSPOSE, n, a, A, static_cast<const float *>(B), ldb, b,
                           static_cast<float *>(C), ldc);
    }
};

template <bool HALF> void run_threads(int64_t rows, int64_t cols, double density, uint64_t seed)
{
    const size_t es = HALF ? 2 : 4;
    const macko_datatype_t type = HALF ? MACKO_R_16F : MACKO_R_32F;
    macko_handle_t h0 = nullptr;
    ASSERT_EQ(macko_create(&h0), MACKO_STATUS_SUCCESS);
    mt::Dense m = mt::random_dense(rows, cols, density, seed, HALF);
    mt::add_structure(m, seed + 1);
    std::vector<uint8_t> bytes = mt::to_bytes(m, type, MACKO_ORDER_ROW, cols);
    macko_mat_t A = nullptr;
    ASSERT_EQ(macko_mat_create_dense_host(&A, rows, cols, type, bytes.data(), cols, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_upload(h0, A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();

    /* x (n columns for the SpMM, column 0 is the SpMV's x) with random nonzero values */
    std::vector<uint8_t> xh((size_t)(cols * kSpmmN) * es);
    for (int64_t j = 0; j < kSpmmN; j++) {
        const std::vector<float> v = mt::random_vector(cols, seed + 10 + (uint64_t)j, HALF);
        for (int64_t i = 0; i < cols; i++) {
            uint8_t *dst = &xh[(size_t)(j * cols + i) * es];
            if (HALF) {
                const uint16_t b = mt::float_to_half(v[(size_t)i]);
                std::memcpy(dst, &b, 2);
            } else {
                std::memcpy(dst, &v[(size_t)i], 4);
            }
        }
    }
    const float alpha = 1.25f, beta = 0.0f;
    const size_t xbytes = xh.size(), ybytes = (size_t)(rows * kSpmmN) * es;

    /* single-threaded reference on the default stream: SpMV, then the SpMM */
    void *dx = nullptr, *dy = nullptr;
    ASSERT_EQ(cudaMalloc(&dx, xbytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, ybytes), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dx, xh.data(), xbytes, cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<uint8_t> ref_mv((size_t)rows * es), ref_mm(ybytes);
    ASSERT_EQ(cudaMemset(dy, 0xFF, ybytes), cudaSuccess);
    ASSERT_EQ(Ops<HALF>::spmv(h0, &alpha, A, dx, &beta, dy), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(cudaMemcpy(ref_mv.data(), dy, ref_mv.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemset(dy, 0xFF, ybytes), cudaSuccess);
    ASSERT_EQ(Ops<HALF>::spmm(h0, kSpmmN, &alpha, A, dx, cols, &beta, dy, rows), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(cudaMemcpy(ref_mm.data(), dy, ybytes, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(dx);
    cudaFree(dy);
    /* the reference must be a real result: finite and not all zero */
    bool nonzero = false;
    for (uint8_t b : ref_mv)
        nonzero |= b != 0;
    ASSERT_TRUE(nonzero);

    std::vector<Worker> w(kThreads);
    for (Worker &k : w) {
        ASSERT_EQ(macko_create(&k.h), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(cudaStreamCreateWithFlags(&k.s, cudaStreamNonBlocking), cudaSuccess);
        ASSERT_EQ(macko_set_stream(k.h, (macko_stream_t)k.s), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(cudaMalloc(&k.x, xbytes), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&k.y, ybytes), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(k.x, xh.data(), xbytes, cudaMemcpyHostToDevice), cudaSuccess);
    }
    std::atomic<int> ready{0};
    auto body = [&](int t) {
        Worker &k = w[(size_t)t];
        const bool mm = t == 0;
        const std::vector<uint8_t> &ref = mm ? ref_mm : ref_mv;
        std::vector<uint8_t> out(ref.size());
        ready++;
        while (ready.load() < kThreads) {
        }
        for (int it = 0; it < kIters && k.err.empty(); it++) {
            if (cudaMemsetAsync(k.y, 0xFF, ref.size(), k.s) != cudaSuccess) {
                k.err = "memset failed";
                break;
            }
            const macko_status_t st = mm ? Ops<HALF>::spmm(k.h, kSpmmN, &alpha, A, k.x, cols, &beta, k.y, rows)
                                         : Ops<HALF>::spmv(k.h, &alpha, A, k.x, &beta, k.y);
            if (st != MACKO_STATUS_SUCCESS) {
                k.err = std::string("compute call: ") + macko_get_status_name(st);
                break;
            }
            /* check every few iterations; the others run back to back on the stream */
            if (it % 5 == 4 || it == kIters - 1) {
                if (cudaMemcpyAsync(out.data(), k.y, out.size(), cudaMemcpyDeviceToHost, k.s) != cudaSuccess ||
                    cudaStreamSynchronize(k.s) != cudaSuccess) {
                    k.err = "copy back failed";
                    break;
                }
                if (std::memcmp(out.data(), ref.data(), ref.size()) != 0)
                    k.err = "iteration " + std::to_string(it) + ": result differs from the single-threaded run";
            }
        }
    };
    std::vector<std::thread> th;
    for (int t = 0; t < kThreads; t++)
        th.emplace_back(body, t);
    for (std::thread &t : th)
        t.join();
    for (int t = 0; t < kThreads; t++)
        EXPECT_TRUE(w[(size_t)t].err.empty()) << (HALF ? "fp16" : "fp32") << " thread " << t << " ("
                                               << (t == 0 ? "spmm" : "spmv") << "): " << w[(size_t)t].err;
    for (Worker &k : w) {
        cudaFree(k.x);
        cudaFree(k.y);
        macko_destroy(k.h);
        cudaStreamDestroy(k.s);
    }
    macko_mat_destroy(A);
    macko_destroy(h0);
}

/* Two shapes, so that both a short-row geometry (few rows) and the one-warp-per-row one are exercised. */
TEST(GpuThreads, SharedMatrixHalf)
{
    MACKO_REQUIRE_GPU();
    run_threads<true>(3001, 2500, 0.3, 101);
    run_threads<true>(14001, 700, 0.4, 102);
}

TEST(GpuThreads, SharedMatrixSingle)
{
    MACKO_REQUIRE_GPU();
    run_threads<false>(3001, 2500, 0.3, 201);
    run_threads<false>(14001, 700, 0.4, 202);
}

} // namespace
