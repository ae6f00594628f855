/* A matrix with more than 2^31 entries: int64 row pointers (lapack_style_docs/FORMAT.md), 64-bit indexing in the GPU
 * conversion and in the SpMV kernel. The matrix is made on the device (about 5 GB of fp16), converted with
 * macko_mat_create_dense_device, multiplied with macko_Hspmv, and checked against a double-accumulating reference
 * computed on the device from the dense matrix, and against cublasGemmEx on the same dense matrix.
 *
 * Tolerances: fp16 output of an fp32 sum, |y - ref| <= 2^-10 |ref| + 2 (k + 4) 2^-24 S + 2^-24 with S = sum |a x|
 * (as in conformance.h); relative L2 error < 1e-3 against both the reference and cuBLAS. */
#include "common.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <vector>

namespace {

__device__ __host__ inline uint32_t mix32(uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ull;
    v ^= v >> 33;
    return (uint32_t)v;
}

/* 10 % zeros (so there is padding to place too), the rest uniform in [-1, 1] and never zero. */
__global__ void fill_matrix(__half *a, int64_t n, uint64_t seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t h = mix32((uint64_t)i * 0x9E3779B97F4A7C15ull + seed);
        float v = 0.0f;
        if (h % 10u != 0u) {
            v = ((float)(h >> 8) / 16777216.0f) * 2.0f - 1.0f;
            if (__half2float(__float2half_rn(v)) == 0.0f)
                v = 0.5f;
        }
        a[i] = __float2half_rn(v);
    }
}

__global__ void fill_vector(__half *x, int64_t n, uint64_t seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t h = mix32((uint64_t)i + seed);
        x[i] = __float2half_rn(((float)(h >> 8) / 16777216.0f) * 2.0f - 1.0f);
    }
}

/* One block per row: ref = sum a*x in double, s = sum |a*x|, k = nonzeros. Fixed-order tree reduction. */
__global__ void reference_rows(const __half *a, const __half *x, int64_t cols, double *ref, double *s, int64_t *k)
{
    __shared__ double sr[256], ss[256];
    __shared__ int64_t sk[256];
    int64_t r = blockIdx.x;
    double acc = 0, abs_acc = 0;
    int64_t cnt = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        double av = (double)__half2float(a[r * cols + c]);
        double p = av * (double)__half2float(x[c]);
        acc += p;
        abs_acc += fabs(p);
        cnt += av != 0.0;
    }
    sr[threadIdx.x] = acc;
    ss[threadIdx.x] = abs_acc;
    sk[threadIdx.x] = cnt;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) {
            sr[threadIdx.x] += sr[threadIdx.x + w];
            ss[threadIdx.x] += ss[threadIdx.x + w];
            sk[threadIdx.x] += sk[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        ref[r] = sr[0];
        s[r] = ss[0];
        k[r] = sk[0];
    }
}

#define CUDA_CHECK(call) ASSERT_EQ((call), cudaSuccess) << #call

TEST(GpuLarge, MoreThan2To31EntriesUseInt64RowPointers)
{
    MACKO_REQUIRE_GPU();
    const int64_t rows = 32768, cols = 80000, n = rows * cols; /* 2.62e9 elements, ~2.36e9 entries */
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < (size_t)24 << 30)
        GTEST_SKIP() << "needs 24 GiB of free device memory, " << (free_b >> 30) << " GiB free";

    __half *a = nullptr, *x = nullptr, *y = nullptr, *yb = nullptr;
    double *ref = nullptr, *s = nullptr;
    int64_t *k = nullptr;
    CUDA_CHECK(cudaMalloc(&a, (size_t)n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&x, (size_t)cols * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&y, (size_t)rows * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&yb, (size_t)rows * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&ref, (size_t)rows * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&s, (size_t)rows * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&k, (size_t)rows * sizeof(int64_t)));
    fill_matrix<<<4096, 256>>>(a, n, 12345);
    fill_vector<<<64, 256>>>(x, cols, 777);
    reference_rows<<<(unsigned)rows, 256>>>(a, x, cols, ref, s, k);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemset(y, 0xFF, (size_t)rows * sizeof(__half))); /* poison: NaN */
    CUDA_CHECK(cudaDeviceSynchronize());

    macko_handle_t h = nullptr;
    macko_mat_t A = nullptr;
    ASSERT_EQ(macko_create(&h), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_create_dense_device(h, &A, rows, cols, MACKO_R_16F, a, cols, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    int64_t bytes = 0, entries = 0, ep = 0, nnz = 0;
    ASSERT_EQ(macko_mat_get_info(A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(A, &bytes, &entries, &ep, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_GT(entries, (int64_t)1 << 31);
    /* int64 row pointers: 8 bytes each */
    EXPECT_EQ(bytes, ep * 2 + ep / 2 + 8 * (rows + 1));

    const float one = 1.0f, zero = 0.0f;
    ASSERT_EQ(macko_Hspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, (const macko_half *)x, 1, &zero,
                          (macko_half *)y, 1),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();

    cublasHandle_t cb;
    ASSERT_EQ(cublasCreate(&cb), CUBLAS_STATUS_SUCCESS);
    /* Row-major A is column-major A^T (cols x rows, ld = cols): y = (A^T)^T x. */
    ASSERT_EQ(cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, (int)rows, 1, (int)cols, &one, a, CUDA_R_16F, (int)cols, x,
                           CUDA_R_16F, (int)cols, &zero, yb, CUDA_R_16F, (int)rows, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_SUCCESS);
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<uint16_t> hy((size_t)rows), hb((size_t)rows);
    std::vector<double> hr((size_t)rows), hs((size_t)rows);
    std::vector<int64_t> hk((size_t)rows);
    CUDA_CHECK(cudaMemcpy(hy.data(), y, (size_t)rows * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hb.data(), yb, (size_t)rows * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hr.data(), ref, (size_t)rows * 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hs.data(), s, (size_t)rows * 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hk.data(), k, (size_t)rows * 8, cudaMemcpyDeviceToHost));

    int64_t nnz_ref = 0, bad = 0;
    std::vector<double> got((size_t)rows), blas((size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        nnz_ref += hk[(size_t)r];
        got[(size_t)r] = mt::half_to_float(hy[(size_t)r]);
        blas[(size_t)r] = mt::half_to_float(hb[(size_t)r]);
        double tol = std::ldexp(std::fabs(hr[(size_t)r]), -10) +
                     2.0 * (double)(hk[(size_t)r] + 4) * std::ldexp(1.0, -24) * hs[(size_t)r] + std::ldexp(1.0, -24);
        if (!(std::fabs(got[(size_t)r] - hr[(size_t)r]) <= tol) && bad++ < 5)
            ADD_FAILURE() << "row " << r << ": macko " << got[(size_t)r] << ", reference " << hr[(size_t)r];
    }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(nnz, nnz_ref);
    EXPECT_LT(mt::rel_l2(got, hr), 1e-3);
    EXPECT_LT(mt::rel_l2(got, blas), 1e-3);
    std::printf("[ large ] %lld x %lld, nnz %lld, entries %lld, rel L2 vs double %.2e, vs cuBLAS %.2e\n",
                (long long)rows, (long long)cols, (long long)nnz, (long long)entries, mt::rel_l2(got, hr),
                mt::rel_l2(got, blas));

    cublasDestroy(cb);
    macko_mat_destroy(A);
    macko_destroy(h);
    cudaFree(a);
    cudaFree(x);
    cudaFree(y);
    cudaFree(yb);
    cudaFree(ref);
    cudaFree(s);
    cudaFree(k);
}

} // namespace
