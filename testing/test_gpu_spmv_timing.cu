/* SpmvTiming.DISABLED_Kernels: the variant timer of bench/NOTES.md for the SpMV kernel geometries
 * (MACKO_SPMV_WARP / MACKO_SPMV_STAGED, forced in turn with macko_plan_override), not a test. Run it by name:
 *   macko_tests --gtest_also_run_disabled_tests --gtest_filter='SpmvTiming.DISABLED_Kernels'
 * MACKO_TIMING_SHAPES=RxC,... and MACKO_TIMING_DENSITIES=d,... choose the problems (default: the quick shapes of
 * BENCH.md at 0.7, 0.5, 0.3, 0.1), MACKO_TIMING_TYPES=H,S the value types (default both).
 *
 * Matrices are generated on the device (Bernoulli pattern of density d from a hash, values in [-1, 1] never 0,
 * fixed seed) and encoded with macko_mat_create_dense_device, so that large shapes cost seconds, not minutes.
 * Method as BENCH.md: L2 flushed (4 x L2 memset) before every launch, CUDA events around the launch only; the
 * kernels (and cuBLAS on the same dense matrix: cublasGemmEx N = 1 for fp16, cublasSgemv for fp32) are timed
 * interleaved in rounds, median of all launches. Every geometry's result is checked against the WARP kernel; a
 * geometry the plan cannot run on this shape and device is reported as n/a. */
#include "common.h"

#include "macko_internal.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

template <typename T> __device__ __forceinline__ T to_t(float v);
template <> __device__ __forceinline__ __half to_t<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ float to_t<float>(float v) { return v; }

/* a[i] = value in [-1, 1] (never 0) with probability d, else 0; d < 0: every element (a dense vector). */
template <typename T> __global__ void fill_random(T *a, int64_t n, double d, uint64_t seed)
{
    const uint64_t thr = d < 0 ? ~0ull : (uint64_t)(d * 16777216.0);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t h = mix64(seed ^ mix64((uint64_t)i));
        float v = 0.0f;
        if (d < 0 || (h >> 40) < thr) {
            v = (float)(h & 0xFFFFFF) / 8388608.0f - 1.0f;
            if (to_t<T>(v) == to_t<T>(0.0f))
                v = 0.5f;
        }
        a[i] = to_t<T>(v);
    }
}

struct Dev {
    void *p = nullptr;
    explicit Dev(size_t n) { EXPECT_EQ(cudaMalloc(&p, n), cudaSuccess); }
    ~Dev() { cudaFree(p); }
};

double median_us(const std::vector<float> &t)
{
    std::vector<float> s = t;
    std::sort(s.begin(), s.end());
    return s.empty() ? 0.0 : 1000.0 * s[s.size() / 2];
}

std::vector<std::string> env_list(const char *name, const char *def)
{
    const char *e = getenv(name);
    std::string s = e != nullptr ? e : def, cur;
    std::vector<std::string> out;
    for (char c : s + ",") {
        if (c == ',') {
            if (!cur.empty())
                out.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    return out;
}

template <typename T> void time_one(int64_t R, int64_t C, double d, const cudaDeviceProp &prop, void *flush,
                                    size_t flush_bytes, cublasHandle_t blas, macko_handle_t h)
{
    const bool half = sizeof(T) == 2;
    Dev dense((size_t)(R * C) * sizeof(T)), dx((size_t)C * sizeof(T)), dy((size_t)R * sizeof(T));
    fill_random<T><<<4096, 256>>>(static_cast<T *>(dense.p), R * C, d, 0x5eed0000ull + (uint64_t)(d * 1000) + R);
    fill_random<T><<<64, 256>>>(static_cast<T *>(dx.p), C, -1.0, 77);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    macko_mat_t A = nullptr;
    ASSERT_EQ(macko_mat_create_dense_device(h, &A, R, C, half ? MACKO_R_16F : MACKO_R_32F, dense.p, C,
                                            MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    int64_t bytes = 0, entries = 0, entries_padded = 0;
    double effd = 0;
    macko_mat_get_storage(A, &bytes, &entries, &entries_padded, &effd);

    constexpr int kGeometries = 2; /* MACKO_SPMV_WARP, MACKO_SPMV_STAGED */
    const int chosen = A->plan.spmv_unit.kernel == MACKO_K_SPMV_STAGED ? MACKO_SPMV_STAGED : MACKO_SPMV_WARP;
    const float one = 1.0f, zero = 0.0f;
    bool runs[kGeometries];
    /* geometry k forced into A's plan (cuBLAS: nothing); false where the plan cannot run it */
    auto force = [&](int k) {
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        f.spmv_geometry = k;
        return k >= kGeometries || macko_plan_override(h, A, MACKO_OPERATION_NON_TRANSPOSE, &f) == MACKO_STATUS_SUCCESS;
    };
    /* one macko launch of geometry k */
    auto spmv = [&](int k) {
        if (!force(k))
            return false;
        if (half)
            return macko_Hspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, static_cast<const macko_half *>(dx.p), 1,
                               &zero, static_cast<macko_half *>(dy.p), 1) == MACKO_STATUS_SUCCESS;
        return macko_Sspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, static_cast<const float *>(dx.p), 1, &zero,
                           static_cast<float *>(dy.p), 1) == MACKO_STATUS_SUCCESS;
    };

    /* correctness of every geometry against WARP */
    std::vector<T> ref((size_t)R), got((size_t)R);
    std::vector<double> relerr(kGeometries, 0.0);
    for (int k = 0; k < kGeometries; k++) {
        cudaMemset(dy.p, 0xFF, (size_t)R * sizeof(T));
        runs[k] = spmv(k);
        ASSERT_TRUE(runs[k] || k != MACKO_SPMV_WARP) << macko_get_last_error_message();
        if (!runs[k])
            continue;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        cudaMemcpy(k == 0 ? ref.data() : got.data(), dy.p, (size_t)R * sizeof(T), cudaMemcpyDeviceToHost);
        if (k > 0) {
            double num = 0, den = 0;
            for (int64_t i = 0; i < R; i++) {
                const double r = half ? (double)__half2float(*(const __half *)&ref[(size_t)i]) : (double)*(const float *)&ref[(size_t)i];
                const double g = half ? (double)__half2float(*(const __half *)&got[(size_t)i]) : (double)*(const float *)&got[(size_t)i];
                num += (g - r) * (g - r);
                den += r * r;
            }
            relerr[(size_t)k] = std::isfinite(num) ? std::sqrt(num / (den > 0 ? den : 1)) : INFINITY;
            EXPECT_LT(relerr[(size_t)k], half ? 2e-3 : 1e-5) << R << "x" << C << " d=" << d << " kernel " << k;
        }
    }

    const int M = kGeometries + 1; /* + cuBLAS */
    std::vector<std::vector<float>> t((size_t)M);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    /* the plan override (a host-side rebuild) stays outside the timed region: once per group of launches */
    auto launch = [&](int k) {
        if (k < kGeometries) {
            if (half)
                macko_Hspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, static_cast<const macko_half *>(dx.p), 1,
                            &zero, static_cast<macko_half *>(dy.p), 1);
            else
                macko_Sspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, static_cast<const float *>(dx.p), 1, &zero,
                            static_cast<float *>(dy.p), 1);
        } else if (half) {
            cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)R, 1, (int)C, &one, dense.p, CUDA_R_16F, (int)C, dx.p,
                         CUDA_R_16F, (int)C, &zero, dy.p, CUDA_R_16F, (int)R, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        } else {
            cublasSgemv(blas, CUBLAS_OP_T, (int)C, (int)R, &one, static_cast<const float *>(dense.p), (int)C,
                        static_cast<const float *>(dx.p), 1, &zero, static_cast<float *>(dy.p), 1);
        }
    };
    for (int k = 0; k < M; k++) {
        if (k < kGeometries && !(runs[k] && force(k)))
            continue;
        for (int i = 0; i < 10; i++)
            launch(k);
    }
    for (int round = 0; round < 6; round++) {
        for (int k = 0; k < M; k++) {
            if (k < kGeometries && !(runs[k] && force(k)))
                continue;
            for (int i = 0; i < 15; i++) {
                cudaMemsetAsync(flush, i & 0xFF, flush_bytes);
                cudaEventRecord(e0);
                launch(k);
                cudaEventRecord(e1);
                cudaEventSynchronize(e1);
                float ms = 0;
                cudaEventElapsedTime(&ms, e0, e1);
                t[(size_t)k].push_back(ms);
            }
        }
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const double blas_us = median_us(t[(size_t)M - 1]);
    printf("[timing] %s %c %lldx%lld d=%.2f cuBLAS %7.1f us |", prop.name, half ? 'H' : 'S', (long long)R,
           (long long)C, d, blas_us);
    const char *names[kGeometries] = {"warp", "staged"};
    for (int k = 0; k < kGeometries; k++) {
        if (!runs[k]) {
            printf(" %s n/a", names[k]);
            continue;
        }
        const double us = median_us(t[(size_t)k]);
        printf(" %s%s %.1f (%.2fx, %.0f GB/s)", k == chosen ? "*" : "", names[k], us, blas_us / us,
               (double)(bytes + (R + C) * (int64_t)sizeof(T)) / (us * 1e3));
    }
    printf(" | maxrelerr %.1e\n", *std::max_element(relerr.begin(), relerr.end()));
    fflush(stdout);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    macko_mat_destroy(A);
}

TEST(SpmvTiming, DISABLED_Kernels)
{
    MACKO_REQUIRE_GPU();
    macko_handle_t h = nullptr;
    ASSERT_EQ(macko_create(&h), MACKO_STATUS_SUCCESS);
    cublasHandle_t blas = nullptr;
    ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
    cudaDeviceProp prop;
    ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    const size_t flush_bytes = (size_t)prop.l2CacheSize * 4;
    Dev flush(flush_bytes);
    const auto shapes = env_list("MACKO_TIMING_SHAPES",
                                 "4096x4096,4096x11008,11008x4096,12288x12288,36864x12288,28672x8192");
    const auto dens = env_list("MACKO_TIMING_DENSITIES", "0.7,0.5,0.3,0.1");
    const auto types = env_list("MACKO_TIMING_TYPES", "H,S");
    for (const std::string &ty : types)
        for (const std::string &sh : shapes)
            for (const std::string &ds : dens) {
                long long R = 0, C = 0;
                ASSERT_EQ(sscanf(sh.c_str(), "%lldx%lld", &R, &C), 2);
                const double d = atof(ds.c_str());
                if (ty == "H")
                    time_one<__half>(R, C, d, prop, flush.p, flush_bytes, blas, h);
                else
                    time_one<float>(R, C, d, prop, flush.p, flush_bytes, blas, h);
                if (::testing::Test::HasFatalFailure())
                    break;
            }
    cublasDestroy(blas);
    macko_destroy(h);
}

} // namespace
