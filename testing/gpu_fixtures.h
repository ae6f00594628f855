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
#include <string>
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

/* m dense, column-major (rows x cols, leading dimension rows), as type, in device memory (for cuBLAS). */
inline void dense_on_device(const mt::Dense &m, macko_datatype_t type, DevMem &out)
{
    const std::vector<uint8_t> dense = mt::to_bytes(m, type, MACKO_ORDER_COL, m.rows);
    out.alloc(dense.size());
    ASSERT_EQ(cudaMemcpy(out.p, dense.data(), dense.size(), cudaMemcpyHostToDevice), cudaSuccess);
}

/* The relative L2 distance of out (C = A B, from the host, leading dimension ldc) to cuBLAS's product of the same A
 * (dA: dense, column-major, rows x cols, of CUDA type t) and B (cols x n, leading dimension ldb): fp32 by cublasSgemm
 * (no TF32: the handle's default math mode), the 16-bit types by cublasGemmEx with compute 32F. value: an element of
 * type T as a double. */
template <typename T, typename Value>
double rel_l2_to_cublas(cublasHandle_t blas, const DevMem &dA, cudaDataType t, int64_t rows, int64_t cols, int64_t n,
                        const std::vector<T> &b, int64_t ldb, const std::vector<T> &out, int64_t ldc, Value value)
{
    DevMem db(b.size() * sizeof(T)), dc(out.size() * sizeof(T));
    EXPECT_EQ(cudaMemcpy(db.p, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st;
    if (t == CUDA_R_32F)
        st = cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)rows, (int)n, (int)cols, &one, dA.as<float>(), (int)rows,
                         db.as<float>(), (int)ldb, &zero, dc.as<float>(), (int)ldc);
    else
        st = cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)rows, (int)n, (int)cols, &one, dA.p, t, (int)rows, db.p,
                          t, (int)ldb, &zero, dc.p, t, (int)ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    EXPECT_EQ(st, CUBLAS_STATUS_SUCCESS) << "cuBLAS";
    std::vector<T> ref(out.size());
    EXPECT_EQ(cudaMemcpy(ref.data(), dc.p, ref.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<double> a(ref.size()), r(ref.size());
    for (size_t i = 0; i < ref.size(); i++) {
        a[i] = value(out[i]);
        r[i] = value(ref[i]);
    }
    return mt::rel_l2(a, r);
}

/* A product run twice from the same C: launch(alpha, beta, b, c) with alpha and beta in host memory, or in device
 * memory when device_scalars (the pointer mode set around the call), B at element boff of its buffer. Returns C as it
 * came back; the two runs must give the same bits. */
template <typename T, typename Launch>
std::vector<T> run_twice(macko_handle_t h, const std::vector<T> &b, size_t boff, const std::vector<T> &c0, float alpha,
                         float beta, bool device_scalars, Launch launch)
{
    DevMem db((b.size() + boff) * sizeof(T) + 16), dc(c0.size() * sizeof(T) + 16), ds(8);
    T *bp = db.as<T>() + boff;
    EXPECT_EQ(cudaMemcpy(bp, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    const float sc[2] = {alpha, beta};
    EXPECT_EQ(cudaMemcpy(ds.p, sc, 8, cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<T> out[2];
    for (int rep = 0; rep < 2; rep++) {
        EXPECT_EQ(cudaMemcpy(dc.p, c0.data(), c0.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
        EXPECT_EQ(macko_set_pointer_mode(h, device_scalars ? MACKO_POINTER_MODE_DEVICE : MACKO_POINTER_MODE_HOST),
                  MACKO_STATUS_SUCCESS);
        const float *al = device_scalars ? ds.as<float>() : &alpha, *be = device_scalars ? ds.as<float>() + 1 : &beta;
        EXPECT_EQ(launch(al, be, static_cast<const T *>(bp), dc.as<T>()), MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        EXPECT_EQ(macko_set_pointer_mode(h, MACKO_POINTER_MODE_HOST), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        out[rep].resize(c0.size());
        EXPECT_EQ(cudaMemcpy(out[rep].data(), dc.p, out[rep].size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    EXPECT_EQ(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(T)), 0) << "two runs differ";
    return out[0];
}

/* launch(b, c) on st (the handle's stream) called directly and captured in a CUDA graph and replayed, each from the
 * same C: the same bits. */
template <typename T, typename Launch>
void expect_graph_replay_equal(cudaStream_t st, const std::vector<T> &b, const std::vector<T> &c0, Launch launch,
                               const std::string &what)
{
    DevMem db(b.size() * sizeof(T)), dc(c0.size() * sizeof(T));
    ASSERT_EQ(cudaMemcpy(db.p, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<T> direct(c0.size()), graphed(c0.size());
    ASSERT_EQ(cudaMemcpy(dc.p, c0.data(), c0.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(launch(db.as<const T>(), dc.as<T>()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(direct.data(), dc.p, direct.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dc.p, c0.data(), c0.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    ASSERT_EQ(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal), cudaSuccess);
    ASSERT_EQ(launch(db.as<const T>(), dc.as<T>()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    ASSERT_EQ(cudaStreamEndCapture(st, &g), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(ge, st), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(graphed.data(), dc.p, graphed.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::memcmp(direct.data(), graphed.data(), direct.size() * sizeof(T)), 0) << what << ": graph replay";
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
}

} // namespace gt
