/* prompt_workspace: a prompt of n tokens through one pruned linear layer, as a prefill does: Y = W X with W a
 * rows x cols fp16 weight pruned to a density and X the cols x n activations (column-major). It runs macko_Hspmm with
 * the handle's own 64 MiB workspace, then with a larger workspace of the caller's (macko_set_workspace: the dense
 * panels of the large-n path may then be taller, which pays at n <= 512 on large matrices), and cublasGemmEx on the
 * dense W for comparison; all three results are checked against each other. Without a GPU it says so and exits 0.
 * usage: macko-example-prompt-workspace [rows cols density n workspace_mib]   (default 8192 8192 0.5 128 256) */
#include "macko.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 20

static void fail(const char *what, const char *why)
{
    fprintf(stderr, "%s: %s\n", what, why);
    exit(1);
}
#define MACKO_CHECK(c) do { if ((c) != MACKO_STATUS_SUCCESS) fail(#c, macko_get_last_error_message()); } while (0)
#define CUDA_CHECK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) fail(#c, cudaGetErrorString(e_)); } while (0)
#define CUBLAS_CHECK(c)                                                                                              \
    do { cublasStatus_t s_ = (c); if (s_ != CUBLAS_STATUS_SUCCESS) fail(#c, cublasGetStatusString(s_)); } while (0)

/* A random fp16 bit pattern of magnitude in [1/16, 2), either sign: never zero. */
static macko_half random_half(void)
{
    unsigned r = (unsigned)rand();
    return (macko_half)(((r & 1u) << 15) | ((11u + (r >> 1) % 5u) << 10) | ((r >> 4) & 0x3FFu));
}

static float half_to_float(macko_half h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? INFINITY : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Mean milliseconds of ITERS products queued back to back on the stream after 3 warm-ups: macko's (A) or cuBLAS's
 * on the dense d_w (A == NULL). */
static float time_products(cudaStream_t s, macko_handle_t h, macko_mat_t A, cublasHandle_t cb, int64_t rows,
                           int64_t cols, int64_t n, const macko_half *d_w, const macko_half *d_x, macko_half *d_y)
{
    const float one = 1.0f, zero = 0.0f;
    cudaEvent_t t0, t1;
    float ms = 0;
    CUDA_CHECK(cudaEventCreate(&t0));
    CUDA_CHECK(cudaEventCreate(&t1));
    for (int i = -3; i < ITERS; i++) {
        if (i == 0)
            CUDA_CHECK(cudaEventRecord(t0, s));
        if (A != NULL)
            MACKO_CHECK(macko_Hspmm(h, MACKO_OPERATION_NON_TRANSPOSE, n, &one, A, d_x, cols, &zero, d_y, rows));
        else /* the row-major rows x cols W is a column-major cols x rows matrix: OP_T */
            CUBLAS_CHECK(cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, (int)rows, (int)n, (int)cols, &one, d_w,
                                      CUDA_R_16F, (int)cols, d_x, CUDA_R_16F, (int)cols, &zero, d_y, CUDA_R_16F,
                                      (int)rows, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    CUDA_CHECK(cudaEventRecord(t1, s));
    CUDA_CHECK(cudaEventSynchronize(t1));
    CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return ms / ITERS;
}

/* Relative L2 distance of a from b (count halves). */
static double rel_l2(const macko_half *a, const macko_half *b, size_t count)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < count; i++) {
        const double x = half_to_float(a[i]), y = half_to_float(b[i]);
        num += (x - y) * (x - y);
        den += y * y;
    }
    return sqrt(num / (den > 0 ? den : 1));
}

int main(int argc, char **argv)
{
    const int64_t rows = argc > 1 ? atoll(argv[1]) : 8192, cols = argc > 2 ? atoll(argv[2]) : 8192;
    const double density = argc > 3 ? atof(argv[3]) : 0.5;
    const int64_t n = argc > 4 ? atoll(argv[4]) : 128, ws_mib = argc > 5 ? atoll(argv[5]) : 256;
    const size_t ws_bytes = (size_t)ws_mib << 20;
    macko_handle_t h = NULL;
    macko_mat_t A = NULL;
    cublasHandle_t cb = NULL;
    cudaStream_t s = NULL;
    macko_half *w, *x, *y_own, *y_ws, *y_blas, *d_w, *d_x, *d_y;
    void *d_ws = NULL;
    float t_own, t_ws, t_blas;
    macko_status_t st;
    if (rows < 1 || cols < 1 || n < 1 || !(density > 0 && density <= 1) || ws_bytes < MACKO_WORKSPACE_MIN_BYTES)
        fail("arguments", "rows, cols, n >= 1, 0 < density <= 1, workspace_mib >= 64");
    st = macko_create(&h);
    if (st == MACKO_STATUS_NOT_INITIALIZED) {
        printf("no CUDA device found: the example (a prompt of %lld tokens on the GPU) is skipped\n", (long long)n);
        return 0;
    }
    MACKO_CHECK(st);

    /* the weight, pruned at random to the density, and the prompt's activations */
    w = (macko_half *)calloc((size_t)(rows * cols), sizeof *w);
    x = (macko_half *)malloc((size_t)(cols * n) * sizeof *x);
    y_own = (macko_half *)malloc((size_t)(rows * n) * sizeof *y_own);
    y_ws = (macko_half *)malloc((size_t)(rows * n) * sizeof *y_ws);
    y_blas = (macko_half *)malloc((size_t)(rows * n) * sizeof *y_blas);
    if (w == NULL || x == NULL || y_own == NULL || y_ws == NULL || y_blas == NULL)
        fail("malloc", "out of host memory");
    for (int64_t i = 0; i < rows * cols; i++)
        if ((double)rand() / RAND_MAX < density)
            w[i] = random_half();
    for (int64_t i = 0; i < cols * n; i++)
        x[i] = random_half();
    MACKO_CHECK(macko_mat_create_dense_host(&A, rows, cols, MACKO_R_16F, w, cols, MACKO_ORDER_ROW));

    CUDA_CHECK(cudaStreamCreate(&s));
    MACKO_CHECK(macko_set_stream(h, s));
    MACKO_CHECK(macko_mat_upload(h, A));
    MACKO_CHECK(macko_mat_release_host(A));
    CUBLAS_CHECK(cublasCreate(&cb));
    CUBLAS_CHECK(cublasSetStream(cb, s));
    CUDA_CHECK(cudaMalloc((void **)&d_w, (size_t)(rows * cols) * sizeof *d_w));
    CUDA_CHECK(cudaMalloc((void **)&d_x, (size_t)(cols * n) * sizeof *d_x));
    CUDA_CHECK(cudaMalloc((void **)&d_y, (size_t)(rows * n) * sizeof *d_y));
    CUDA_CHECK(cudaMemcpy(d_w, w, (size_t)(rows * cols) * sizeof *w, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, x, (size_t)(cols * n) * sizeof *x, cudaMemcpyHostToDevice));

    /* 1. the handle's own workspace */
    t_own = time_products(s, h, A, cb, rows, cols, n, d_w, d_x, d_y);
    CUDA_CHECK(cudaMemcpy(y_own, d_y, (size_t)(rows * n) * sizeof *y_own, cudaMemcpyDeviceToHost));

    /* 2. a workspace of ours: device memory of the handle's device, kept until the handle no longer uses it */
    CUDA_CHECK(cudaMalloc(&d_ws, ws_bytes));
    MACKO_CHECK(macko_set_workspace(h, d_ws, ws_bytes));
    t_ws = time_products(s, h, A, cb, rows, cols, n, d_w, d_x, d_y);
    CUDA_CHECK(cudaMemcpy(y_ws, d_y, (size_t)(rows * n) * sizeof *y_ws, cudaMemcpyDeviceToHost));

    /* 3. cuBLAS on the dense weight */
    t_blas = time_products(s, h, NULL, cb, rows, cols, n, d_w, d_x, d_y);
    CUDA_CHECK(cudaMemcpy(y_blas, d_y, (size_t)(rows * n) * sizeof *y_blas, cudaMemcpyDeviceToHost));

    printf("%lld x %lld fp16, density %.2f, a prompt of %lld tokens (mean of %d, L2 warm):\n", (long long)rows,
           (long long)cols, density, (long long)n, ITERS);
    printf("  macko_Hspmm, the handle's 64 MiB workspace   %9.1f us\n", 1000.0 * t_own);
    printf("  macko_Hspmm, a %lld MiB workspace of ours     %9.1f us\n", (long long)ws_mib, 1000.0 * t_ws);
    printf("  cublasGemmEx on the dense weight            %9.1f us\n", 1000.0 * t_blas);
    {
        const double e_ws = rel_l2(y_ws, y_blas, (size_t)(rows * n)), e_own = rel_l2(y_own, y_blas, (size_t)(rows * n));
        printf("  relative L2 distance to cuBLAS: own workspace %.2e, ours %.2e\n", e_own, e_ws);
        /* back to the handle's own workspace before ours is freed (cudaFree waits for the queued work) */
        MACKO_CHECK(macko_set_workspace(h, NULL, 0));
        CUDA_CHECK(cudaFree(d_ws));
        cudaFree(d_w);
        cudaFree(d_x);
        cudaFree(d_y);
        cublasDestroy(cb);
        macko_mat_destroy(A);
        macko_destroy(h);
        cudaStreamDestroy(s);
        free(w);
        free(x);
        free(y_own);
        free(y_ws);
        free(y_blas);
        return e_ws < 1e-2 && e_own < 1e-2 ? 0 : 1;
    }
}
