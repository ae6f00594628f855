/* cg_solve: the scientific user's story. A sparse symmetric positive definite system A x = b in double precision,
 * solved by conjugate gradients on the GPU: A as an fp64 MACKO matrix (macko_Dspmv), the vector operations by cuBLAS.
 * The oracle is LAPACKE_dposv (Cholesky) on the dense matrix; the example fails when the two solutions differ.
 * Without a GPU it encodes, prints the storage, solves with LAPACKE and skips the GPU part.
 * usage: macko-example-cg [n density]    a shifted graph Laplacian, random weights (default 1000 0.15)
 *        macko-example-cg --laplacian N  the 5-point Laplacian of an N x N grid (n = N^2 <= 2000): a stencil matrix,
 *                                        the kind the format does NOT suit (compare the storage line with CSR's) */
#include "macko.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <lapacke.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, const char *why)
{
    fprintf(stderr, "%s: %s\n", what, why);
    exit(1);
}
#define MACKO_CHECK(c) do { if ((c) != MACKO_STATUS_SUCCESS) fail(#c, macko_get_last_error_message()); } while (0)
#define CUDA_CHECK(c) do { cudaError_t e_ = (c); if (e_ != cudaSuccess) fail(#c, cudaGetErrorString(e_)); } while (0)
#define CUBLAS_CHECK(c)                                                                                              \
    do { cublasStatus_t s_ = (c); if (s_ != CUBLAS_STATUS_SUCCESS) fail(#c, cublasGetStatusString(s_)); } while (0)

/* Couples i and j (i != j) with weight w in the dense symmetric matrix a (n x n): L = D - W, the graph Laplacian. */
static void couple(double *a, int n, int i, int j, double w)
{
    a[(size_t)i * n + j] -= w, a[(size_t)j * n + i] -= w;
    a[(size_t)i * n + i] += w, a[(size_t)j * n + j] += w;
}

/* CG from x = 0 until ||r|| <= tol ||b||; everything stays on the device, one stream for macko and cuBLAS. */
static int cg(macko_handle_t h, cublasHandle_t cb, macko_mat_t A, int n, const double *d_b, double *d_x, double tol)
{
    const double one = 1, zero = 0;
    double *d_r, *d_p, *d_q, rr, rr_new, pq, bb, step;
    int it;
    CUDA_CHECK(cudaMalloc((void **)&d_r, 3 * (size_t)n * sizeof(double)));
    d_p = d_r + n, d_q = d_p + n;
    CUDA_CHECK(cudaMemset(d_x, 0, (size_t)n * sizeof(double)));
    CUBLAS_CHECK(cublasDcopy(cb, n, d_b, 1, d_r, 1)); /* r = b - A*0 */
    CUBLAS_CHECK(cublasDcopy(cb, n, d_b, 1, d_p, 1));
    CUBLAS_CHECK(cublasDdot(cb, n, d_r, 1, d_r, 1, &rr));
    bb = rr;
    for (it = 0; it < 10 * n && rr > tol * tol * bb; it++) {
        MACKO_CHECK(macko_Dspmv(h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, d_p, 1, &zero, d_q, 1)); /* q = A p */
        CUBLAS_CHECK(cublasDdot(cb, n, d_p, 1, d_q, 1, &pq));
        step = rr / pq;
        CUBLAS_CHECK(cublasDaxpy(cb, n, &step, d_p, 1, d_x, 1)); /* x += step p */
        step = -step;
        CUBLAS_CHECK(cublasDaxpy(cb, n, &step, d_q, 1, d_r, 1)); /* r -= step q */
        CUBLAS_CHECK(cublasDdot(cb, n, d_r, 1, d_r, 1, &rr_new));
        step = rr_new / rr, rr = rr_new;
        CUBLAS_CHECK(cublasDscal(cb, n, &step, d_p, 1)); /* p = r + (rr_new / rr) p */
        CUBLAS_CHECK(cublasDaxpy(cb, n, &one, d_r, 1, d_p, 1));
    }
    printf("CG: %d iterations, ||r|| / ||b|| = %.2e (recursive residual)\n", it, sqrt(rr / bb));
    cudaFree(d_r);
    return it;
}

int main(int argc, char **argv)
{
    int grid = argc == 3 && strcmp(argv[1], "--laplacian") == 0 ? atoi(argv[2]) : 0;
    int n = grid > 0 ? (grid <= 44 ? grid * grid : 0) : argc == 3 ? atoi(argv[1]) : 1000;
    double density = grid == 0 && argc == 3 ? atof(argv[2]) : 0.15;
    if (n < 2 || n > 2000 || density <= 0 || density > 1)
        fail("usage", "macko-example-cg [n density] | --laplacian N, with 2 <= n (or N^2) <= 2000, 0 < density <= 1");
    double *a = calloc((size_t)n * n, sizeof *a), *lu = malloc((size_t)n * n * sizeof *lu);
    double *b = malloc((size_t)n * sizeof *b), *xref = malloc((size_t)n * sizeof *xref), *x = malloc(n * sizeof *x);
    if (a == NULL || lu == NULL || b == NULL || xref == NULL || x == NULL)
        fail("malloc", "out of memory");

    srand(7);
    if (grid > 0) /* -Laplace on the grid, Dirichlet boundary: 4 on the diagonal, -1 to each grid neighbour */
        for (int i = 0; i < n; i++) {
            a[(size_t)i * n + i] += 4 - (i % grid > 0) - (i % grid < grid - 1) - (i >= grid) - (i < n - grid);
            if (i % grid < grid - 1)
                couple(a, n, i, i + 1, 1);
            if (i + grid < n)
                couple(a, n, i, i + grid, 1);
        }
    else /* a random graph: each pair coupled with probability density, weight in [0.5, 1.5); shift 0.1 I */
        for (int i = 0; i < n; i++) {
            a[(size_t)i * n + i] += 0.1;
            for (int j = i + 1; j < n; j++)
                if (rand() < density * ((double)RAND_MAX + 1.0))
                    couple(a, n, i, j, 0.5 + rand() / ((double)RAND_MAX + 1.0));
        }
    for (int i = 0; i < n; i++)
        b[i] = xref[i] = 2.0 * rand() / RAND_MAX - 1.0;

    /* A is symmetric, so its row-major array is also its column-major one. */
    macko_mat_t A;
    int64_t nnz, bytes;
    MACKO_CHECK(macko_mat_create_dense_host(&A, n, n, MACKO_R_64F, a, n, MACKO_ORDER_ROW));
    MACKO_CHECK(macko_mat_get_info(A, NULL, NULL, &nnz, NULL));
    MACKO_CHECK(macko_mat_get_storage(A, &bytes, NULL, NULL, NULL));
    printf("A: %d x %d fp64 SPD, nnz %lld (density %.3f); bytes: MACKO %lld, CSR (int32) %lld, dense %lld\n", n, n,
           (long long)nnz, (double)nnz / ((double)n * n), (long long)bytes, (long long)(nnz * 12 + 4 * (n + 1)),
           (long long)n * n * 8);

    /* The oracle: Cholesky of the dense matrix. */
    memcpy(lu, a, (size_t)n * n * sizeof *a);
    lapack_int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, 1, lu, n, xref, n);
    if (info != 0)
        fail("LAPACKE_dposv", "A is not positive definite (or bad arguments)");

    macko_handle_t h = NULL;
    macko_status_t st = macko_create(&h);
    int rc = 0;
    if (st == MACKO_STATUS_NOT_INITIALIZED) {
        printf("no usable CUDA device: the GPU part (CG with macko_Dspmv) is skipped\n");
    } else {
        cudaStream_t stream;
        cublasHandle_t cb;
        double *d_b, *d_x, err = 0, ref = 0;
        MACKO_CHECK(st);
        CUDA_CHECK(cudaStreamCreate(&stream));
        MACKO_CHECK(macko_set_stream(h, stream));
        CUBLAS_CHECK(cublasCreate(&cb));
        CUBLAS_CHECK(cublasSetStream(cb, stream));
        MACKO_CHECK(macko_mat_upload(h, A));
        MACKO_CHECK(macko_mat_release_host(A));
        CUDA_CHECK(cudaMalloc((void **)&d_b, 2 * (size_t)n * sizeof(double)));
        d_x = d_b + n;
        CUDA_CHECK(cudaMemcpy(d_b, b, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
        int it = cg(h, cb, A, n, d_b, d_x, 1e-12);
        CUDA_CHECK(cudaMemcpy(x, d_x, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            err += (x[i] - xref[i]) * (x[i] - xref[i]), ref += xref[i] * xref[i];
        err = sqrt(err / ref);
        rc = it < 10 * n && err < 1e-8 ? 0 : 1;
        printf("||x_cg - x_dposv|| / ||x_dposv|| = %.2e (must be < 1e-8): %s\n", err, rc ? "FAILED" : "OK");
        cudaFree(d_b), cublasDestroy(cb), cudaStreamDestroy(stream);
    }
    macko_mat_destroy(A);
    macko_destroy(h);
    free(a), free(lu), free(b), free(xref), free(x);
    return rc;
}
