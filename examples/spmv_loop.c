/* spmv_loop: the pattern of a decoder loop. Dense fp16 weights (pruned to a density) are encoded once with
 * macko_mat_create_dense_host, uploaded, and multiplied by a vector over and over with macko_Hspmv on a CUDA stream
 * of our own; cuBLAS (cublasGemmEx, fp16, CUBLAS_COMPUTE_32F) does the same with the dense matrix for comparison.
 * Without a GPU it still encodes and prints the storage, then skips the GPU part.
 * usage: macko-example-spmv-loop [rows cols density]      (default 4096 4096 0.5) */
#include "macko.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 300

static void fail(const char *what, const char *why)
{
    fprintf(stderr, "%s: %s\n", what, why);
    exit(1);
}
#define MACKO_CHECK(c) do { if ((c) != MACKO_STATUS_SUCCESS) fail(#c, macko_get_last_error_message()); } while (0)
#define CUDA_CHECK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) fail(#c, cudaGetErrorString(e_)); } while (0)
#define CUBLAS_CHECK(c)                                                                                              \
    do { cublasStatus_t s_ = (c); if (s_ != CUBLAS_STATUS_SUCCESS) fail(#c, cublasGetStatusString(s_)); } while (0)

/* A random fp16 bit pattern with magnitude in [1/16, 2): never zero, never subnormal, no conversion needed. */
static macko_half random_half(void)
{
    unsigned r = (unsigned)rand();
    return (macko_half)(((r & 1u) << 15) | ((11u + (r >> 1) % 5u) << 10) | ((r >> 4) & 0x3FFu));
}

/* IEEE half bits -> float; NaN becomes Inf, which fails the comparison as NaN would. */
static float half_to_float(macko_half h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? INFINITY : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Mean time per launch of ITERS launches queued back to back on the stream (20 warm-ups first). */
static float time_loop(cudaStream_t stream, macko_handle_t h, macko_mat_t A, cublasHandle_t cb, int64_t rows,
                       int64_t cols, const macko_half *d_w, const macko_half *d_x, macko_half *d_y)
{
    const float one = 1.0f, zero = 0.0f;
    cudaEvent_t t0, t1;
    float ms = 0;
    CUDA_CHECK(cudaEventCreate(&t0));
    CUDA_CHECK(cudaEventCreate(&t1));
    for (int i = -20; i < ITERS; i++) {
        if (i == 0)
            CUDA_CHECK(cudaEventRecord(t0, stream));
        if (A != NULL) /* macko: y = W x, W sparse */
            MACKO_CHECK(macko_Hspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, d_x, 1, &zero, d_y, 1));
        else /* cuBLAS: the row-major rows x cols W is a column-major cols x rows matrix, hence OP_T */
            CUBLAS_CHECK(cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, (int)rows, 1, (int)cols, &one, d_w, CUDA_R_16F,
                                      (int)cols, d_x, CUDA_R_16F, (int)cols, &zero, d_y, CUDA_R_16F, (int)rows,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    CUDA_CHECK(cudaEventRecord(t1, stream));
    CUDA_CHECK(cudaEventSynchronize(t1));
    CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    cudaEventDestroy(t0), cudaEventDestroy(t1);
    return 1000.0f * ms / ITERS; /* microseconds */
}

/* Uploads W (sparse for macko, dense for cuBLAS), runs both loops, compares the results. 0 when they agree. */
static int gpu_part(macko_handle_t h, macko_mat_t A, const macko_half *w, const macko_half *x, int64_t rows,
                    int64_t cols)
{
    size_t wn = (size_t)(rows * cols);
    macko_half *d_w, *d_x, *d_y, *y = malloc(2 * (size_t)rows * sizeof *y); /* y: macko's, then cuBLAS's */
    cudaStream_t stream;
    cublasHandle_t cb;
    double err = 0, ref = 0;
    if (y == NULL)
        return 1;

    CUDA_CHECK(cudaStreamCreate(&stream)); /* one stream for everything: uploads, macko and cuBLAS in order */
    MACKO_CHECK(macko_set_stream(h, stream));
    CUBLAS_CHECK(cublasCreate(&cb));
    CUBLAS_CHECK(cublasSetStream(cb, stream));
    MACKO_CHECK(macko_mat_upload(h, A));    /* asynchronous on the stream */
    MACKO_CHECK(macko_mat_release_host(A)); /* the loop needs only the device copy */
    CUDA_CHECK(cudaMalloc((void **)&d_w, wn * sizeof *d_w));
    CUDA_CHECK(cudaMalloc((void **)&d_x, (size_t)cols * sizeof *d_x));
    CUDA_CHECK(cudaMalloc((void **)&d_y, 2 * (size_t)rows * sizeof *d_y));
    CUDA_CHECK(cudaMemcpyAsync(d_w, w, wn * sizeof *w, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(d_x, x, (size_t)cols * sizeof *x, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemsetAsync(d_y, 0xFF, (size_t)rows * sizeof *d_y, stream)); /* NaN: an unwritten y shows */

    float us_macko = time_loop(stream, h, A, cb, rows, cols, d_w, d_x, d_y);
    float us_cublas = time_loop(stream, h, NULL, cb, rows, cols, d_w, d_x, d_y + rows);
    CUDA_CHECK(cudaMemcpy(y, d_y, 2 * (size_t)rows * sizeof *y, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < rows; i++) {
        double a = half_to_float(y[i]), b = half_to_float(y[rows + i]);
        err += (a - b) * (a - b);
        ref += b * b;
    }
    err = sqrt(err / (ref > 0 ? ref : 1));
    printf("relative L2 difference macko vs cuBLAS: %.2e (must be < 1e-2)\n", err);
    printf("time per call, %d calls back to back on one stream with L2 warm (not the BENCH.md method, which "
           "flushes L2 before every call):\n  macko_Hspmv  %8.2f us\n  cublasGemmEx %8.2f us (dense)\n",
           ITERS, us_macko, us_cublas);

    cudaFree(d_w), cudaFree(d_x), cudaFree(d_y), free(y);
    cublasDestroy(cb), cudaStreamDestroy(stream);
    return err < 1e-2 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int64_t rows = argc > 3 ? atoll(argv[1]) : 4096, cols = argc > 3 ? atoll(argv[2]) : 4096, nnz, bytes;
    double density = argc > 3 ? atof(argv[3]) : 0.5, effd;
    macko_half *w = rows > 0 && cols > 0 ? calloc((size_t)(rows * cols), sizeof *w) : NULL;
    macko_half *x = rows > 0 && cols > 0 ? malloc((size_t)cols * sizeof *x) : NULL;
    macko_handle_t h = NULL;
    macko_mat_t A;
    int rc = 0;
    if (w == NULL || x == NULL)
        fail("usage", "macko-example-spmv-loop [rows cols density], rows and cols > 0");

    /* The weights: a dense row-major fp16 matrix in which about (1 - density) of the entries are zero. */
    srand(42);
    for (int64_t i = 0; i < rows * cols; i++)
        if (rand() < density * ((double)RAND_MAX + 1.0))
            w[i] = random_half();
    for (int64_t j = 0; j < cols; j++)
        x[j] = random_half();

    MACKO_CHECK(macko_mat_create_dense_host(&A, rows, cols, MACKO_R_16F, w, cols, MACKO_ORDER_ROW));
    MACKO_CHECK(macko_mat_get_info(A, NULL, NULL, &nnz, NULL));
    MACKO_CHECK(macko_mat_get_storage(A, &bytes, NULL, NULL, &effd));
    printf("W: %lld x %lld fp16, nnz %lld; storage: dense %lld bytes, MACKO %lld bytes (effective density %.3f)\n",
           (long long)rows, (long long)cols, (long long)nnz, (long long)(2 * rows * cols), (long long)bytes, effd);

    macko_status_t st = macko_create(&h);
    if (st == MACKO_STATUS_NOT_INITIALIZED) {
        printf("no usable CUDA device: the GPU part (macko_Hspmv vs cuBLAS) is skipped\n");
    } else {
        MACKO_CHECK(st);
        rc = gpu_part(h, A, w, x, rows, cols);
    }
    macko_mat_destroy(A);
    macko_destroy(h); /* NULL when there was no GPU: accepted */
    free(w), free(x);
    return rc;
}
