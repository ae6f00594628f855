/*
 * method.h -- the one record every timed routine fills (cuBLAS, cuSPARSE, macko), so that a row is one loop over
 * methods: check copy 0 against the reference, make and check the copies for --flush rotate, time (row.cpp).
 */
#ifndef MACKO_BENCH_METHOD_H
#define MACKO_BENCH_METHOD_H

#include "bench.h"

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

/* What a row runs on: the case's matrix forms and their copies (pool), the row's x (n = 1) or B (C x n, column-major,
 * ld = C) and their copies (rot), and the one output all methods write: y or C (R x n, column-major, ld = R). */
struct RowInputs {
    Ctx *cx = nullptr;
    Pool *pool = nullptr;
    Rotation *rot = nullptr;
    DevBuf *out = nullptr;
    int n = 1;
    int64_t R = 0, C = 0;
    const ValueType *vt = nullptr;
    float alpha = 1.0f, beta = 0.0f;
    double alpha_d = 1.0, beta_d = 0.0;
    cudaDataType cuda_type() const { return (cudaDataType)vt->type; } /* macko's numbers are cudaDataType's */
    cudaDataType compute() const { return vt->fp64_compute ? CUDA_R_64F : CUDA_R_32F; }
    /* alpha / beta as a scalar of the compute type */
    const void *alpha_c() const { return vt->fp64_compute ? (const void *)&alpha_d : (const void *)&alpha; }
    const void *beta_c() const { return vt->fp64_compute ? (const void *)&beta_d : (const void *)&beta; }
};

/* Which methods share a K (--flush rotate: one set of copies per family) and which role they play: the first Blas
 * method is the reference; Blas and Sparse are baselines (a wrong baseline stops the run: the driver is broken);
 * Macko is the method under test (a failure fails the row, the baselines still run). */
enum class Family { Blas, Sparse, Macko };

/* The column of the CSV that takes a method's time (besides the family's best, cublas_us / cusparse_us). */
enum class Slot { None, Gemm, Gemv, SpDefault, SpAlg2 };

struct Method {
    std::string name;  /* for messages: "cublasGemmEx", "cusparseSpMM CSR_ALG3", "macko_Hspmm" */
    std::string label; /* the CSV's cublas_variant / cusparse_alg / cusparse_algs name: "GemmEx", "CSR_ALG3" */
    Family family = Family::Blas;
    Slot slot = Slot::None;
    /* One of several algorithms for the same product (the cusparseSpMM CSR algorithms): one that refuses the problem
     * or gets it wrong is "n/a" instead of stopping the run, one over 10x slower than the fastest in its one run is
     * not timed, and all are listed in the CSV's cusparse_algs. */
    bool alternative = false;
    /* Makes what launches on copy k need beyond the shared copies (descriptors, preprocessed work buffers): k = 0
     * before the check, then 1, 2, ... under --flush rotate. *bytes: the device bytes it allocated. "" or why not. */
    std::function<std::string(int k, size_t *bytes)> prepare;
    /* One launch on copy k into the row's output. "" or the error. */
    std::function<std::string(int k)> launch;

    /* Filled by the row. */
    size_t copy_bytes = 0;               /* prepare(0)'s bytes: what each further copy will take */
    bool ok = false, timed = false;      /* passed its check; will be timed */
    double err = NAN, once = NAN, us = NAN; /* rel. error vs the reference; one launch (us); the median */
    int iters = 0;                       /* timed launches */
    std::string note;                    /* alternatives: "n/a (...)", "~us (one run; ...)" or the time */
};

/* n = 1: fp16 / bf16 cublasGemmEx (N = 1, the reference) and cublasHSHgemvStridedBatched /
 * cublasTSTgemvStridedBatched, fp32 cublasSgemv, fp64 cublasDgemv; n > 1: cublasGemmEx with N = n (fp16, bf16),
 * cublasSgemm (fp32) or cublasDgemm (fp64). */
std::vector<Method> cublas_methods(const RowInputs &in);
/* n = 1: cusparseSpMV ALG_DEFAULT and CSR_ALG2; n > 1: cusparseSpMM ALG_DEFAULT, CSR_ALG1..3 (alternatives). */
std::vector<Method> cusparse_methods(const RowInputs &in);
/* n = 1: macko_Hspmv / _Sspmv / _Dspmv, macko_spmv_ex for bf16; n > 1: macko_Hspmm / _Sspmm / _Dspmm, macko_spmm_ex
 * for bf16. */
Method macko_method(const RowInputs &in);

#endif
