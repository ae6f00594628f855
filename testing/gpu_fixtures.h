/* RAII helpers shared by the GPU test files: device memory, handles, matrices, cuBLAS, and a matrix made on the
 * host and uploaded. Everything lives in namespace gt. */
#pragma once

#include "common.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#define CUDA_CHECK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())
#define CUBLAS_CHECK(call) ASSERT_EQ((call), CUBLAS_STATUS_SUCCESS) << #call

namespace gt {

struct DevMem {
    void *p = nullptr;
    size_t bytes = 0;
    explicit DevMem(size_t n = 0) { alloc(n); }
    ~DevMem() { cudaFree(p); }
    DevMem(const DevMem &) = delete;
    DevMem &operator=(const DevMem &) = delete;
    void alloc(size_t n)
    {
        cudaFree(p);
        p = nullptr;
        bytes = n;
        if (n > 0) {
            EXPECT_EQ(cudaMalloc(&p, n), cudaSuccess);
        }
    }
    template <typename T> T *as() const { return static_cast<T *>(p); }
};

struct Handle {
    macko_handle_t h = nullptr;
    Handle() { EXPECT_EQ(macko_create(&h), MACKO_STATUS_SUCCESS); }
    ~Handle() { macko_destroy(h); }
};

struct Mat {
    macko_mat_t A = nullptr;
    ~Mat() { macko_mat_destroy(A); }
};

struct Blas {
    cublasHandle_t h = nullptr;
    Blas() { EXPECT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS); }
    ~Blas() { cublasDestroy(h); }
};

/* Encode m on the host as P::type, upload it, and build A^T when asked. */
template <class P> void make_matrix(macko_handle_t h, const mt::Dense &m, bool trans, Mat &out)
{
    std::vector<uint8_t> bytes = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, std::max<int64_t>(m.cols, 1));
    ASSERT_EQ(macko_mat_create_dense_host(&out.A, m.rows, m.cols, P::type, bytes.data(), std::max<int64_t>(m.cols, 1),
                                          MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    ASSERT_EQ(macko_mat_upload(h, out.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    if (trans) {
        ASSERT_EQ(macko_analysis(h, MACKO_OPERATION_TRANSPOSE, out.A), MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
    }
}

/* Bad-argument tests (spmv, spmm, strided-batched spmv): one 40 x 30 matrix A of P's precision on the device (op T
 * analysed: no), the same matrix in the other precision (Aother, on the device) and host-only (Ahost), an input
 * vector/block din of N elements of 0.5 and an output dout of N elements filled with P::sentinel(). expect() checks
 * one call's status and error position and that dout still holds the pattern (out_name: what the message calls it). */
template <class P, size_t N> struct BadArgFixture {
    using E = typename P::E;
    Handle h;
    Mat A, Aother, Ahost;
    DevMem din, dout;
    float one = 1.0f, zero = 0.0f;
    std::vector<E> pattern;
    const char *out_name = "the output";
    void setup()
    {
        mt::Dense m = mt::random_dense(40, 30, 0.5, 61, P::half);
        make_matrix<P>(h.h, m, false, A);
        std::vector<uint8_t> ob = mt::to_bytes(m, P::half ? MACKO_R_32F : MACKO_R_16F, MACKO_ORDER_ROW, 30);
        ASSERT_EQ(macko_mat_create_dense_host(&Aother.A, 40, 30, P::half ? MACKO_R_32F : MACKO_R_16F, ob.data(), 30,
                                              MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_upload(h.h, Aother.A), MACKO_STATUS_SUCCESS);
        std::vector<uint8_t> hb = mt::to_bytes(m, P::type, MACKO_ORDER_ROW, 30);
        ASSERT_EQ(macko_mat_create_dense_host(&Ahost.A, 40, 30, P::type, hb.data(), 30, MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        din.alloc(N * sizeof(E));
        dout.alloc(N * sizeof(E));
        pattern.assign(N, P::sentinel());
        ASSERT_EQ(cudaMemcpy(dout.p, pattern.data(), dout.bytes, cudaMemcpyHostToDevice), cudaSuccess);
        std::vector<E> xs(N, P::from(0.5f));
        ASSERT_EQ(cudaMemcpy(din.p, xs.data(), din.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    }
    void expect(macko_status_t got, macko_status_t st, int pos, const char *what)
    {
        EXPECT_EQ(got, st) << what << ": " << macko_get_last_error_message();
        EXPECT_EQ(macko_get_last_error_position(), pos) << what;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<E> now(N);
        ASSERT_EQ(cudaMemcpy(now.data(), dout.p, dout.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(std::memcmp(now.data(), pattern.data(), dout.bytes), 0) << what << ": " << out_name << " was written";
    }
};

} // namespace gt
