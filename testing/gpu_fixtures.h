/* RAII helpers shared by the GPU test files: device memory, handles, matrices, cuBLAS / cuSPARSE, and a matrix made
 * on the host and uploaded. Everything lives in namespace gt. */
#pragma once

#include "common.h"

#include <cublas_v2.h>
#include <cusparse.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
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

/* The vendor libraries the products are compared with: cuBLAS and cuSPARSE (host pointer mode, default stream). */
struct Blas {
    cublasHandle_t h = nullptr;
    cusparseHandle_t sp = nullptr;
    Blas()
    {
        EXPECT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
        EXPECT_EQ(cusparseCreate(&sp), CUSPARSE_STATUS_SUCCESS);
    }
    ~Blas()
    {
        cusparseDestroy(sp);
        cublasDestroy(h);
    }
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

/* random_dense in P's precision, with add_structure(structure) (empty, dense and gappy rows) when structure != 0. */
template <class P>
mt::Dense random_matrix(int64_t rows, int64_t cols, double d, uint64_t seed, uint64_t structure = 0)
{
    mt::Dense m = mt::random_dense(rows, cols, d, seed, P::ahalf);
    if (structure != 0)
        mt::add_structure(m, structure);
    return m;
}

/* A test's handle and one matrix made on it by make_matrix (op T analysed when trans). */
template <class P> struct Rig {
    Handle h;
    const mt::Dense m;
    Mat A;
    Rig(mt::Dense dense, bool trans) : m(std::move(dense)) { make_matrix<P>(h.h, m, trans, A); }
    /* false after a failure (reported): the test returns */
    bool ok() const { return !::testing::Test::HasFatalFailure(); }
};

/* make_matrix for a test body: false after a fatal failure (reported), when the test should return. */
template <class P> bool uploaded(macko_handle_t h, const mt::Dense &m, bool trans, Mat &out)
{
    make_matrix<P>(h, m, trans, out);
    return !::testing::Test::HasFatalFailure();
}

} // namespace gt
