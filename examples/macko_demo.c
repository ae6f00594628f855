/* macko-demo: encode a random 50 %-sparse 4096 x 4096 fp16 matrix, report its storage against dense and CSR, and,
 * when a GPU is present, run y = A*x on it and compare with a host computation. Uses only the public API. */
#include "macko.h"

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints which call failed and why; returns 1 (the exit status). */
static int fail(const char *call, const char *name, const char *why)
{
    fprintf(stderr, "%s failed: %s%s%s\n", call, name, why ? ": " : "", why ? why : "");
    return 1;
}
#define CHECK(call)                                                                                                  \
    do {                                                                                                             \
        macko_status_t st_ = (call);                                                                                 \
        if (st_ != MACKO_STATUS_SUCCESS)                                                                             \
            return fail(#call, macko_get_status_name(st_), macko_get_last_error_message());                          \
    } while (0)
#define CUDA_CHECK(call)                                                                                             \
    do {                                                                                                             \
        cudaError_t e_ = (call);                                                                                     \
        if (e_ != cudaSuccess)                                                                                       \
            return fail(#call, cudaGetErrorString(e_), NULL);                                                        \
    } while (0)

/* A small xorshift generator: the demo must give the same matrix on every machine. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double next_uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* A random fp16 bit pattern of magnitude in [1/16, 1) and random sign: never zero, no float conversion needed. */
static macko_half random_half(void)
{
    unsigned r = (unsigned)(next_uniform() * 4294967296.0);
    return (macko_half)(((r & 1u) << 15) | ((11u + (r >> 1) % 4u) << 10) | ((r >> 4) & 0x3FFu));
}

/* IEEE half bits -> float; NaN becomes Inf, which fails the check as NaN would. */
static float from_half(macko_half h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? INFINITY : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* y = A*x on the GPU, checked against a double-precision host product of the dense matrix. */
static int run_gpu_part(macko_mat_t A, const macko_half *dense, int64_t rows, int64_t cols)
{
    macko_handle_t h = NULL;
    macko_status_t st = macko_create(&h);
    macko_half *x = NULL, *y = NULL, *dx = NULL, *dy = NULL;
    const float one = 1.0f, zero = 0.0f;
    cudaEvent_t t0, t1;
    float ms = 0;
    double err = 0, ref_norm = 0;
    if (st == MACKO_STATUS_NOT_INITIALIZED) {
        printf("no CUDA device found: the GPU part of the demo (SpMV) is skipped\n");
        return 0;
    }
    CHECK(st);
    x = (macko_half *)malloc((size_t)cols * sizeof *x);
    y = (macko_half *)malloc((size_t)rows * sizeof *y);
    if (x == NULL || y == NULL)
        return 1;
    for (int64_t j = 0; j < cols; j++)
        x[j] = random_half();
    CHECK(macko_mat_upload(h, A));
    CUDA_CHECK(cudaMalloc((void **)&dx, (size_t)cols * sizeof *dx));
    CUDA_CHECK(cudaMalloc((void **)&dy, (size_t)rows * sizeof *dy));
    CUDA_CHECK(cudaMemcpy(dx, x, (size_t)cols * sizeof *x, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventCreate(&t0));
    CUDA_CHECK(cudaEventCreate(&t1));
    for (int i = 0; i < 10; i++)
        CHECK(macko_Hspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, dx, 1, &zero, dy, 1));
    CUDA_CHECK(cudaEventRecord(t0, NULL));
    for (int i = 0; i < 100; i++)
        CHECK(macko_Hspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, dx, 1, &zero, dy, 1));
    CUDA_CHECK(cudaEventRecord(t1, NULL));
    CUDA_CHECK(cudaEventSynchronize(t1));
    CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    CUDA_CHECK(cudaMemcpy(y, dy, (size_t)rows * sizeof *y, cudaMemcpyDeviceToHost));
    for (int64_t r = 0; r < rows; r++) {
        double acc = 0;
        for (int64_t c = 0; c < cols; c++)
            acc += (double)from_half(dense[r * cols + c]) * (double)from_half(x[c]);
        err += (from_half(y[r]) - acc) * (from_half(y[r]) - acc);
        ref_norm += acc * acc;
    }
    printf("GPU: macko_Hspmv %.1f us per call (100 back-to-back calls, L2 warm), relative L2 error vs host %.2e\n",
           1000.0 * ms / 100.0, sqrt(err / ref_norm));
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaFree(dx);
    cudaFree(dy);
    free(x);
    free(y);
    macko_destroy(h);
    return sqrt(err / ref_norm) < 1e-2 ? 0 : 1;
}

int main(void)
{
    const int64_t rows = 4096, cols = 4096;
    const double density = 0.5;
    macko_half *dense = (macko_half *)calloc((size_t)(rows * cols), sizeof(macko_half));
    macko_mat_t A = NULL;
    int64_t nnz = 0, bytes = 0, entries = 0;
    double effd = 0;
    int rc;
    if (dense == NULL)
        return 1;
    for (int64_t i = 0; i < rows * cols; i++)
        if (next_uniform() < density)
            dense[i] = random_half();

    CHECK(macko_mat_create_dense_host(&A, rows, cols, MACKO_R_16F, dense, cols, MACKO_ORDER_ROW));
    CHECK(macko_mat_get_info(A, NULL, NULL, &nnz, NULL));
    CHECK(macko_mat_get_storage(A, &bytes, &entries, NULL, &effd));

    double dense_b = (double)rows * (double)cols * 2.0;
    double csr32 = (double)nnz * (2 + 4) + 4.0 * (double)(rows + 1);
    double csr16 = (double)nnz * (2 + 2) + 4.0 * (double)(rows + 1);
    printf("macko demo: %lld x %lld fp16, density %.2f, nnz %lld, MACKO entries %lld (%.1f%% padding)\n",
           (long long)rows, (long long)cols, density, (long long)nnz, (long long)entries,
           100.0 * (double)(entries - nnz) / (double)(entries > 0 ? entries : 1));
    printf("  %-24s %12s %10s\n", "storage", "bytes", "vs dense");
    printf("  %-24s %12.0f %9.3fx\n", "dense fp16", dense_b, 1.0);
    printf("  %-24s %12.0f %9.3fx\n", "CSR (int32 cols)", csr32, csr32 / dense_b);
    printf("  %-24s %12.0f %9.3fx\n", "CSR (int16 cols)", csr16, csr16 / dense_b);
    printf("  %-24s %12lld %9.3fx\n", "MACKO", (long long)bytes, (double)bytes / dense_b);
    printf("  effective density %.4f (expected for uniform random: %.4f)\n", effd,
           density * (1.0 + pow(1.0 - density, 16) / (1.0 - pow(1.0 - density, 16))) * 1.25);

    rc = run_gpu_part(A, dense, rows, cols);
    macko_mat_destroy(A);
    free(dense);
    return rc;
}
