/* macko_Hspmv / macko_Sspmv: argument checks in signature order, then the launch of the encoding's plan (plan.h)
 * for this incx. No allocation, no synchronisation, no host<->device copy, no device query: graph-capturable. */
#include "macko_internal.h"

#include <stdint.h>

/* Precisions in the order of spmv_prec's rows. */
enum { SPMV_H = 0, SPMV_S = 1, SPMV_PRECISIONS = 2 };

typedef struct spmv_precision {
    const char *name;      /* routine name for error messages */
    macko_datatype_t type; /* the matrix type the routine letter names */
    size_t elem;           /* bytes of one x/y element */
} spmv_precision;

static const spmv_precision spmv_prec[SPMV_PRECISIONS] = {
    [SPMV_H] = {"macko_Hspmv", MACKO_R_16F, 2},
    [SPMV_S] = {"macko_Sspmv", MACKO_R_32F, 4},
};

/* The last element of a strided vector of len elements must be addressable: (len - 1) * inc * elem fits int64. */
static int spmv_span_ok(int64_t len, int64_t inc, size_t elem)
{
    int64_t t;
    return len <= 1 || (macko_mul_i64(len - 1, inc, &t) && macko_mul_i64(t, (int64_t)elem, &t));
}

static macko_status_t spmv(int prec, macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                           const void *x, int64_t incx, const float *beta, void *y, int64_t incy)
{
    const spmv_precision *P = &spmv_prec[prec];
    const char *fn = P->name;
    const struct macko_mat_s *M;
    macko_kargs a;
    int64_t m, n;
    int err;

    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 1, "handle is NULL");
    if (op != MACKO_OPERATION_NON_TRANSPOSE && op != MACKO_OPERATION_TRANSPOSE)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2,
                          "op is %d; it must be MACKO_OPERATION_NON_TRANSPOSE (0) or MACKO_OPERATION_TRANSPOSE (1)",
                          (int)op);
    if (alpha == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3, "alpha is NULL");
    if (A == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "A is NULL");
    if (A->type != P->type)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "A has value type %d, this routine needs %d",
                          (int)A->type, (int)P->type);
    if (!A->has_device)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 4, "A is not on the device (see macko_mat_upload)");
    if (A->device != handle->device)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "A is on device %d, the handle on device %d", A->device,
                          handle->device);
    if (op == MACKO_OPERATION_TRANSPOSE && (A->trans == NULL || !A->trans->has_device))
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 2,
                          "op T needs the transposed encoding: call macko_analysis with op T first");
    M = op == MACKO_OPERATION_NON_TRANSPOSE ? A : A->trans;
    m = M->rows;
    n = M->cols;
    if (x == NULL && n > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 5, "x is NULL");
    if (n > 0 && (uintptr_t)x % P->elem != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 5, "x is not aligned to its element size %zu", P->elem);
    if (incx < 1)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 6, "incx = %lld must be at least 1", (long long)incx);
    if (!spmv_span_ok(n, incx, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 6, "(n - 1) * incx overflows");
    if (beta == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 7, "beta is NULL");
    if (y == NULL && m > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 8, "y is NULL");
    if (m > 0 && (uintptr_t)y % P->elem != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 8, "y is not aligned to its element size %zu", P->elem);
    if (incy < 1)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 9, "incy = %lld must be at least 1", (long long)incy);
    if (!spmv_span_ok(m, incy, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 9, "(m - 1) * incy overflows");

    if (m == 0)
        return macko_ok();

    a.rows = m;
    a.cols = n;
    a.values = M->dev.values;
    a.deltas = M->dev.deltas;
    a.row_ptr = M->plan.row_ptr;
    a.b = x;
    a.incb = incx;
    a.ldb = 0;
    a.c = y;
    a.incc = incy;
    a.ldc = 0;
    a.n = 1;
    macko_resolve_scalars(handle, alpha, beta, &a.alpha, &a.beta, &a.alpha_dev, &a.beta_dev);
    a.stream = handle->stream;

    err = macko_plan_launch(M->type, &a, macko_plan_spmv(&M->plan, incx));
    if (err != 0)
        return macko_fail(MACKO_STATUS_EXECUTION_FAILED, fn, 0, "kernel launch failed (CUDA error %d)", err);
    return macko_ok();
}

macko_status_t macko_Hspmv(macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                           const macko_half *x, int64_t incx, const float *beta, macko_half *y, int64_t incy)
{
    return spmv(SPMV_H, handle, op, alpha, A, x, incx, beta, y, incy);
}

macko_status_t macko_Sspmv(macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                           const float *x, int64_t incx, const float *beta, float *y, int64_t incy)
{
    return spmv(SPMV_S, handle, op, alpha, A, x, incx, beta, y, incy);
}
