/* GPU concurrency (issue "Reliability"): several host threads, each with its own handle and stream, share one
 * read-only uploaded matrix and run SpMV (one thread SpMM) many times at once. Every result must be bitwise the
 * single-threaded result: the compute calls share no mutable state, allocate nothing and never synchronise. */
#include "common.h"
#include "macko_internal.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
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

template <bool HALF> void shared_matrix_threads(int64_t rows, int64_t cols, double density, uint64_t seed)
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
    /* all threads start together (mt::run_threads) */
    auto body = [&](int t) {
        Worker &k = w[(size_t)t];
        const bool mm = t == 0;
        const std::vector<uint8_t> &ref = mm ? ref_mm : ref_mv;
        std::vector<uint8_t> out(ref.size());
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
    mt::run_threads(kThreads, body);
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
    shared_matrix_threads<true>(3001, 2500, 0.3, 101);
    shared_matrix_threads<true>(14001, 700, 0.4, 102);
}

TEST(GpuThreads, SharedMatrixSingle)
{
    MACKO_REQUIRE_GPU();
    shared_matrix_threads<false>(3001, 2500, 0.3, 201);
    shared_matrix_threads<false>(14001, 700, 0.4, 202);
}

/* One matrix (op N and op T encodings, each with its launch plan) shared by handles created on their own threads,
 * every thread walking every kind of launch its plans hold at once: SpMV with incx 1 and 2 (the unit and strided
 * launches), SpMM with n = 1, 2, 5 and 16 (each row of the rule over n) and a strided batch, for op N and op T. Each
 * result must be bitwise the single-threaded one, and the plans must be unchanged afterwards (compute calls only
 * read them). */
void run_plan_threads(int64_t rows, int64_t cols)
{
    const size_t es = 2;
    macko_handle_t h0 = nullptr;
    ASSERT_EQ(macko_create(&h0), MACKO_STATUS_SUCCESS);
    mt::Dense m = mt::random_dense(rows, cols, 0.35, 301, true);
    std::vector<uint8_t> bytes = mt::to_bytes(m, MACKO_R_16F, MACKO_ORDER_ROW, cols);
    macko_mat_t A = nullptr;
    ASSERT_EQ(macko_mat_create_dense_host(&A, rows, cols, MACKO_R_16F, bytes.data(), cols, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_upload(h0, A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    ASSERT_EQ(macko_analysis(h0, MACKO_OPERATION_TRANSPOSE, A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    std::vector<uint8_t> plan_n(sizeof(macko_plan)), plan_t(sizeof(macko_plan));
    std::memcpy(plan_n.data(), &A->plan, sizeof(macko_plan));
    std::memcpy(plan_t.data(), &A->trans->plan, sizeof(macko_plan));

    /* the calls: (op, kind, n); kind 0 spmv incx 1, 1 spmv incx 2, 2 spmm, 3 strided batch (incx 2, 3 vectors) */
    struct Call {
        macko_operation_t op;
        int kind;
        int64_t n;
    };
    std::vector<Call> calls;
    for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
        calls.push_back({op, 0, 1});
        calls.push_back({op, 1, 1});
        for (int64_t n : {1, 2, 5, 16})
            calls.push_back({op, 2, n});
        calls.push_back({op, 3, 3});
    }
    const int64_t kmax = std::max(rows, cols), nmax = 16;
    const size_t in_elems = (size_t)(2 * kmax * nmax), out_elems = (size_t)(2 * kmax * nmax);
    std::vector<uint16_t> xin(in_elems);
    const std::vector<float> v = mt::random_vector((int64_t)in_elems, 303, true);
    for (size_t i = 0; i < in_elems; i++)
        xin[i] = mt::float_to_half(v[i]);
    const float alpha = 0.75f, beta = 0.0f;
    /* One call into out (poisoned first); returns the status. */
    auto run = [&](macko_handle_t h, cudaStream_t s, const Call &c, const void *x, void *out) {
        const bool opn = c.op == MACKO_OPERATION_NON_TRANSPOSE;
        const int64_t mo = opn ? rows : cols, ki = opn ? cols : rows;
        if (cudaMemsetAsync(out, 0xFF, out_elems * es, s) != cudaSuccess)
            return MACKO_STATUS_EXECUTION_FAILED;
        const macko_half *xh = static_cast<const macko_half *>(x);
        macko_half *yh = static_cast<macko_half *>(out);
        switch (c.kind) {
        case 0: return macko_Hspmv(h, c.op, &alpha, A, xh, 1, &beta, yh, 1);
        case 1: return macko_Hspmv(h, c.op, &alpha, A, xh, 2, &beta, yh, 1);
        case 2: return macko_Hspmm(h, c.op, c.n, &alpha, A, xh, ki, &beta, yh, mo);
        default: return macko_Hspmv_strided_batched(h, c.op, &alpha, A, xh, 2, 2 * ki, &beta, yh, 1, mo, c.n);
        }
    };
    auto out_bytes = [&](const Call &c) {
        const int64_t mo = c.op == MACKO_OPERATION_NON_TRANSPOSE ? rows : cols;
        return (size_t)(mo * c.n) * es;
    };

    /* single-threaded references */
    void *dx = nullptr, *dy = nullptr;
    ASSERT_EQ(cudaMalloc(&dx, in_elems * es), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, out_elems * es), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dx, xin.data(), in_elems * es, cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<std::vector<uint8_t>> ref(calls.size());
    for (size_t i = 0; i < calls.size(); i++) {
        ASSERT_EQ(run(h0, nullptr, calls[i], dx, dy), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        ref[i].resize(out_bytes(calls[i]));
        ASSERT_EQ(cudaMemcpy(ref[i].data(), dy, ref[i].size(), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    cudaFree(dx);
    cudaFree(dy);

    /* every thread makes its own handle and stream and runs all calls, each thread starting at another call */
    std::vector<std::string> err(kThreads);
    std::atomic<int> ready{0};
    auto body = [&](int t) {
        std::string &e = err[(size_t)t];
        macko_handle_t h = nullptr;
        cudaStream_t s = nullptr;
        void *x = nullptr, *y = nullptr;
        if (macko_create(&h) != MACKO_STATUS_SUCCESS || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) ||
            macko_set_stream(h, (macko_stream_t)s) != MACKO_STATUS_SUCCESS || cudaMalloc(&x, in_elems * es) ||
            cudaMalloc(&y, out_elems * es) ||
            cudaMemcpy(x, xin.data(), in_elems * es, cudaMemcpyHostToDevice) != cudaSuccess)
            e = "setup failed";
        ready++;
        while (ready.load() < kThreads) {
        }
        std::vector<uint8_t> out;
        for (int it = 0; it < 4 * (int)calls.size() && e.empty(); it++) {
            const size_t i = (size_t)(it + t) % calls.size();
            const macko_status_t st = run(h, s, calls[i], x, y);
            out.resize(ref[i].size());
            if (st != MACKO_STATUS_SUCCESS)
                e = std::string("call ") + std::to_string(i) + ": " + macko_get_status_name(st);
            else if (cudaMemcpyAsync(out.data(), y, out.size(), cudaMemcpyDeviceToHost, s) != cudaSuccess ||
                     cudaStreamSynchronize(s) != cudaSuccess)
                e = "copy back failed";
            else if (std::memcmp(out.data(), ref[i].data(), out.size()) != 0)
                e = "call " + std::to_string(i) + " differs from the single-threaded run";
        }
        cudaFree(x);
        cudaFree(y);
        macko_destroy(h);
        if (s != nullptr)
            cudaStreamDestroy(s);
    };
    mt::run_threads(kThreads, body);
    for (int t = 0; t < kThreads; t++)
        EXPECT_TRUE(err[(size_t)t].empty()) << "thread " << t << ": " << err[(size_t)t];
    EXPECT_EQ(std::memcmp(plan_n.data(), &A->plan, sizeof(macko_plan)), 0) << "the op-N plan changed";
    EXPECT_EQ(std::memcmp(plan_t.data(), &A->trans->plan, sizeof(macko_plan)), 0) << "the op-T plan changed";
    macko_mat_destroy(A);
    macko_destroy(h0);
}

/* 3001 x 2500: STAGED SpMV, staged SpMM tiles; 300 x 30000 (op N: WARP SpMV, the global SpMM path at n = 16) */
TEST(GpuThreads, PlansSharedByHandlesAndThreads)
{
    MACKO_REQUIRE_GPU();
    run_plan_threads(3001, 2500);
    run_plan_threads(300, 30000);
}

} // namespace
