/*
 * methods_cusparse.cpp -- the sparse baselines: cusparseSpMV (n = 1) and cusparseSpMM (n > 1, column-major B and C)
 * on the case's CSR (int32 indices, values of the run's type; CUDA_R_32F compute, CUDA_R_64F for fp64). Each algorithm has its own matrix
 * descriptor and preprocessed work buffer per copy; the x / B descriptors of a copy and the output's are shared.
 */
#include "method.h"

#include <memory>

namespace {

/* The dense operands' descriptors: x (DnVec) or B (DnMat) of copy k, made on demand, and the output y or C. */
struct Operands {
    const RowInputs *in;
    std::vector<cusparseDnVecDescr_t> vx;
    std::vector<cusparseDnMatDescr_t> mb;
    cusparseDnVecDescr_t vy = nullptr;
    cusparseDnMatDescr_t mc = nullptr;

    explicit Operands(const RowInputs *p) : in(p)
    {
        const cudaDataType vt = p->cuda_type();
        if (p->n == 1)
            CUSPARSE_OK(cusparseCreateDnVec(&vy, p->R, p->out->p, vt));
        else
            CUSPARSE_OK(cusparseCreateDnMat(&mc, p->R, p->n, p->R, p->out->p, vt, CUSPARSE_ORDER_COL));
    }
    Operands(const Operands &) = delete;
    Operands &operator=(const Operands &) = delete;
    ~Operands()
    {
        for (cusparseDnVecDescr_t v : vx)
            cusparseDestroyDnVec(v);
        for (cusparseDnMatDescr_t b : mb)
            cusparseDestroyDnMat(b);
        if (vy)
            cusparseDestroyDnVec(vy);
        if (mc)
            cusparseDestroyDnMat(mc);
    }
    /* Makes the descriptors of copies up to k. */
    void reach(int k)
    {
        const cudaDataType vt = in->cuda_type();
        while ((int)(in->n == 1 ? vx.size() : mb.size()) <= k) {
            void *x = const_cast<void *>(in->rot->x[in->n == 1 ? vx.size() : mb.size()]);
            if (in->n == 1) {
                cusparseDnVecDescr_t v = nullptr;
                CUSPARSE_OK(cusparseCreateDnVec(&v, in->C, x, vt));
                vx.push_back(v);
            } else {
                cusparseDnMatDescr_t b = nullptr;
                CUSPARSE_OK(cusparseCreateDnMat(&b, in->C, in->n, in->C, x, vt, CUSPARSE_ORDER_COL));
                mb.push_back(b);
            }
        }
    }
};

/* One algorithm: its CSR descriptor and work buffer per copy. */
struct Alg {
    std::shared_ptr<Operands> ops;
    int alg = 0; /* cusparseSpMVAlg_t (n = 1) or cusparseSpMMAlg_t */
    std::vector<cusparseSpMatDescr_t> A;
    std::vector<std::unique_ptr<DevBuf>> buf;

    Alg(std::shared_ptr<Operands> o, int a) : ops(std::move(o)), alg(a) {}
    Alg(const Alg &) = delete;
    Alg &operator=(const Alg &) = delete;
    ~Alg()
    {
        for (cusparseSpMatDescr_t d : A)
            cusparseDestroySpMat(d);
    }

    /* Copy k's descriptor, work buffer and preprocessing (copies are made in order, k = A.size()). */
    std::string prepare(int k, size_t *bytes)
    {
        const RowInputs &in = *ops->in;
        const Ctx &cx = *in.cx;
        const cudaDataType vt = in.cuda_type();
        const cusparseOperation_t opn = CUSPARSE_OPERATION_NON_TRANSPOSE;
        *bytes = 0;
        if (k != (int)A.size())
            die("internal: cuSPARSE copy %d made out of order", k);
        ops->reach(k);
        const Pool::Csr &c = in.pool->csr[(size_t)k];
        cusparseSpMatDescr_t d = nullptr;
        CUSPARSE_OK(cusparseCreateCsr(&d, in.R, in.C, in.pool->nnz, const_cast<void *>(c.rp),
                                      const_cast<void *>(c.col), const_cast<void *>(c.val), CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt));
        A.push_back(d);
        size_t bs = 0;
        cusparseStatus_t s =
            in.n == 1 ? cusparseSpMV_bufferSize(cx.sparse, opn, in.alpha_c(), d, ops->vx[(size_t)k], in.beta_c(),
                                                ops->vy, in.compute(), (cusparseSpMVAlg_t)alg, &bs)
                      : cusparseSpMM_bufferSize(cx.sparse, opn, opn, in.alpha_c(), d, ops->mb[(size_t)k], in.beta_c(),
                                                ops->mc, in.compute(), (cusparseSpMMAlg_t)alg, &bs);
        if (s != CUSPARSE_STATUS_SUCCESS)
            return strf("bufferSize: %s", cusparseGetErrorString(s));
        std::unique_ptr<DevBuf> b = DevBuf::try_alloc(bs);
        if (!b)
            return strf("cudaMalloc of the work buffer (%zu bytes) failed", bs);
        buf.push_back(std::move(b));
        *bytes = bs;
        s = in.n == 1 ? cusparseSpMV_preprocess(cx.sparse, opn, in.alpha_c(), d, ops->vx[(size_t)k], in.beta_c(),
                                                ops->vy, in.compute(), (cusparseSpMVAlg_t)alg, buf.back()->p)
                      : cusparseSpMM_preprocess(cx.sparse, opn, opn, in.alpha_c(), d, ops->mb[(size_t)k], in.beta_c(),
                                                ops->mc, in.compute(), (cusparseSpMMAlg_t)alg, buf.back()->p);
        return s == CUSPARSE_STATUS_SUCCESS ? std::string() : strf("preprocess: %s", cusparseGetErrorString(s));
    }

    std::string launch(int k)
    {
        const RowInputs &in = *ops->in;
        const cusparseOperation_t opn = CUSPARSE_OPERATION_NON_TRANSPOSE;
        const size_t i = (size_t)k;
        const cusparseStatus_t s =
            in.n == 1 ? cusparseSpMV(in.cx->sparse, opn, in.alpha_c(), A[i], ops->vx[i], in.beta_c(), ops->vy,
                                     in.compute(), (cusparseSpMVAlg_t)alg, buf[i]->p)
                      : cusparseSpMM(in.cx->sparse, opn, opn, in.alpha_c(), A[i], ops->mb[i], in.beta_c(), ops->mc,
                                     in.compute(), (cusparseSpMMAlg_t)alg, buf[i]->p);
        return s == CUSPARSE_STATUS_SUCCESS ? std::string()
                                            : strf("%s: %s", in.n == 1 ? "cusparseSpMV" : "cusparseSpMM",
                                                   cusparseGetErrorString(s));
    }
};

Method sparse_method(const std::shared_ptr<Operands> &ops, int alg, const char *label, Slot slot, bool alternative)
{
    auto a = std::make_shared<Alg>(ops, alg);
    Method m;
    m.name = strf("%s %s", ops->in->n == 1 ? "cusparseSpMV" : "cusparseSpMM", label);
    m.label = label;
    m.family = Family::Sparse;
    m.slot = slot;
    m.alternative = alternative;
    m.prepare = [a](int k, size_t *bytes) { return a->prepare(k, bytes); };
    m.launch = [a](int k) { return a->launch(k); };
    return m;
}

} // namespace

std::vector<Method> cusparse_methods(const RowInputs &in)
{
    auto ops = std::make_shared<Operands>(&in);
    std::vector<Method> ms;
    if (in.n == 1) {
        ms.push_back(sparse_method(ops, CUSPARSE_SPMV_ALG_DEFAULT, "ALG_DEFAULT", Slot::SpDefault, false));
        ms.push_back(sparse_method(ops, CUSPARSE_SPMV_CSR_ALG2, "CSR_ALG2", Slot::SpAlg2, false));
    } else {
        /* Every CSR algorithm that accepts the problem, the fastest reported: with column-major B, ALG_DEFAULT and
         * CSR_ALG1 took ~170 ms on the H100 where CSR_ALG3 took 0.5-2 ms. */
        ms.push_back(sparse_method(ops, CUSPARSE_SPMM_ALG_DEFAULT, "ALG_DEFAULT", Slot::SpDefault, true));
        ms.push_back(sparse_method(ops, CUSPARSE_SPMM_CSR_ALG1, "CSR_ALG1", Slot::None, true));
        ms.push_back(sparse_method(ops, CUSPARSE_SPMM_CSR_ALG2, "CSR_ALG2", Slot::SpAlg2, true));
        ms.push_back(sparse_method(ops, CUSPARSE_SPMM_CSR_ALG3, "CSR_ALG3", Slot::None, true));
    }
    return ms;
}
