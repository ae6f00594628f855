/*
 * methods_cublas.cpp -- the dense baselines (the value type's: BENCH.md's fp16 ones, their bf16 twins, fp32 and fp64
 * BLAS). The weight is row-major (as an LLM's), so cuBLAS sees a column-major
 * C x R matrix and is called with CUBLAS_OP_T; copy k is pool.dense[k] with x / B rot.x[k].
 */
#include "method.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

static std::string blas_status(const char *fn, cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS ? std::string() : strf("%s: %s", fn, cublasGetStatusString(s));
}

static std::string no_state(int, size_t *bytes)
{
    *bytes = 0;
    return "";
}

static Method blas_method(const char *name, const char *label, Slot slot, std::function<std::string(int)> launch)
{
    Method m;
    m.name = name;
    m.label = label;
    m.family = Family::Blas;
    m.slot = slot;
    m.prepare = no_state;
    m.launch = std::move(launch);
    return m;
}

std::vector<Method> cublas_methods(const RowInputs &in)
{
    const RowInputs *p = &in;
    const cudaDataType vt = in.cuda_type();
    const macko_datatype_t t = in.vt->type;
    /* C := A B with N = n: fp16 / bf16 in/out with fp32 accumulation (CUBLAS_COMPUTE_32F). */
    auto gemm_ex = [p, vt](int k) {
        const Ctx &cx = *p->cx;
        return blas_status("cublasGemmEx",
                           cublasGemmEx(cx.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)p->R, p->n, (int)p->C, &p->alpha,
                                        p->pool->dense[(size_t)k], vt, (int)p->C, p->rot->x[(size_t)k], vt,
                                        (int)p->C, &p->beta, p->out->p, vt, (int)p->R, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT));
    };
    std::vector<Method> ms;
    if (in.n > 1 && t == MACKO_R_32F) {
        /* fp32 FMA without TF32: the handle's math mode is CUBLAS_DEFAULT_MATH (set in main), which never trades
         * precision for tensor cores. */
        ms.push_back(blas_method("cublasSgemm", "Sgemm", Slot::Gemm, [p](int k) {
            const Ctx &cx = *p->cx;
            return blas_status("cublasSgemm",
                               cublasSgemm(cx.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)p->R, p->n, (int)p->C, &p->alpha,
                                           static_cast<const float *>(p->pool->dense[(size_t)k]), (int)p->C,
                                           static_cast<const float *>(p->rot->x[(size_t)k]), (int)p->C, &p->beta,
                                           p->out->as<float>(), (int)p->R));
        }));
    } else if (in.n > 1 && t == MACKO_R_64F) {
        ms.push_back(blas_method("cublasDgemm", "Dgemm", Slot::Gemm, [p](int k) {
            const Ctx &cx = *p->cx;
            return blas_status("cublasDgemm",
                               cublasDgemm(cx.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)p->R, p->n, (int)p->C,
                                           &p->alpha_d, static_cast<const double *>(p->pool->dense[(size_t)k]),
                                           (int)p->C, static_cast<const double *>(p->rot->x[(size_t)k]), (int)p->C,
                                           &p->beta_d, p->out->as<double>(), (int)p->R));
        }));
    } else if (in.n > 1) {
        ms.push_back(blas_method("cublasGemmEx", "GemmEx", Slot::Gemm, gemm_ex));
    } else if (t == MACKO_R_32F) {
        ms.push_back(blas_method("cublasSgemv", "Sgemv", Slot::Gemv, [p](int k) {
            const Ctx &cx = *p->cx;
            return blas_status("cublasSgemv",
                               cublasSgemv(cx.blas, CUBLAS_OP_T, (int)p->C, (int)p->R, &p->alpha,
                                           static_cast<const float *>(p->pool->dense[(size_t)k]), (int)p->C,
                                           static_cast<const float *>(p->rot->x[(size_t)k]), 1, &p->beta,
                                           p->out->as<float>(), 1));
        }));
    } else if (t == MACKO_R_64F) {
        ms.push_back(blas_method("cublasDgemv", "Dgemv", Slot::Gemv, [p](int k) {
            const Ctx &cx = *p->cx;
            return blas_status("cublasDgemv",
                               cublasDgemv(cx.blas, CUBLAS_OP_T, (int)p->C, (int)p->R, &p->alpha_d,
                                           static_cast<const double *>(p->pool->dense[(size_t)k]), (int)p->C,
                                           static_cast<const double *>(p->rot->x[(size_t)k]), 1, &p->beta_d,
                                           p->out->as<double>(), 1));
        }));
    } else if (t == MACKO_R_16BF) {
        ms.push_back(blas_method("cublasGemmEx", "GemmEx", Slot::Gemm, gemm_ex));
        ms.push_back(blas_method("cublasTSTgemvStridedBatched", "TSTgemv", Slot::Gemv, [p](int k) {
            const Ctx &cx = *p->cx;
            return blas_status("cublasTSTgemvStridedBatched",
                               cublasTSTgemvStridedBatched(
                                   cx.blas, CUBLAS_OP_T, (int)p->C, (int)p->R, &p->alpha,
                                   static_cast<const __nv_bfloat16 *>(p->pool->dense[(size_t)k]), (int)p->C,
                                   (long long)p->R * p->C, static_cast<const __nv_bfloat16 *>(p->rot->x[(size_t)k]),
                                   1, p->C, &p->beta, p->out->as<__nv_bfloat16>(), 1, p->R, 1));
        }));
    } else {
        ms.push_back(blas_method("cublasGemmEx", "GemmEx", Slot::Gemm, gemm_ex));
        ms.push_back(blas_method("cublasHSHgemvStridedBatched", "HSHgemv", Slot::Gemv, [p](int k) {
            const Ctx &cx = *p->cx;
            return blas_status("cublasHSHgemvStridedBatched",
                               cublasHSHgemvStridedBatched(
                                   cx.blas, CUBLAS_OP_T, (int)p->C, (int)p->R, &p->alpha,
                                   static_cast<const __half *>(p->pool->dense[(size_t)k]), (int)p->C,
                                   (long long)p->R * p->C, static_cast<const __half *>(p->rot->x[(size_t)k]), 1, p->C,
                                   &p->beta, p->out->as<__half>(), 1, p->R, 1));
        }));
    }
    return ms;
}
