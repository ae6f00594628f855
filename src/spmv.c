/* macko_Hspmv / macko_Sspmv: argument checks in signature order, then the launch of the encoding's plan (plan.h)
 * for this incx. No allocation, no synchronisation, no host<->device copy, no device query: graph-capturable. */
#include "check.h"

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

static macko_status_t spmv(int prec, macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                           const void *x, int64_t incx, const float *beta, void *y, int64_t incy)
{
    const spmv_precision *P = &spmv_prec[prec];
    const char *fn = P->name;
    const struct macko_mat_s *M;
    macko_kargs a;
    int64_t m, n;
    int err;

    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_OP, (int)op));
    MACKO_CHECK(macko_check_ptr(fn, 3, "alpha", alpha));
    MACKO_CHECK(macko_check_dev_mat(fn, 4, A, handle, (int)P->type, 2, op, &M));
    m = M->rows;
    n = M->cols;
    MACKO_CHECK(macko_check_array(fn, 5, "x", x, "len(x)", n, NULL, 0, P->elem));
    MACKO_CHECK(macko_check_min(fn, 6, "incx", incx, 1));
    MACKO_CHECK(macko_check_span(fn, 6, "(len(x) - 1) * incx", n, incx, 1, 0, P->elem));
    MACKO_CHECK(macko_check_ptr(fn, 7, "beta", beta));
    MACKO_CHECK(macko_check_array(fn, 8, "y", y, "len(y)", m, NULL, 0, P->elem));
    MACKO_CHECK(macko_check_min(fn, 9, "incy", incy, 1));
    MACKO_CHECK(macko_check_span(fn, 9, "(len(y) - 1) * incy", m, incy, 1, 0, P->elem));

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
        return macko_launch_fail(handle, fn, err);
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
