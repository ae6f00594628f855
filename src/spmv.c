/* macko_Hspmv / macko_Sspmv / macko_Dspmv and macko_spmv_ex: one checking path (spmv below) for all of them, with
 * the argument positions of each signature; then the launch of the encoding's plan (plan.h) for this incx. The
 * BLAS-letter routines fix the types (A must have the letter's type); macko_spmv_ex takes x's, y's and the compute
 * type as arguments, judged right after A (the checks of x and y need their element sizes).
 * No allocation, no synchronisation, no host<->device copy, no device query: graph-capturable. */
#include "check.h"

#include <stdint.h>

/* Positions of the arguments in a signature (0: the signature has none, the type is fixed). */
typedef struct spmv_sig {
    const char *name;
    macko_datatype_t letter; /* the BLAS-letter routines: A's type; unused by the ex routine */
    int ex;                  /* the type arguments are arguments */
    int alpha, A, x, xtype, incx, beta, y, ytype, incy, compute;
} spmv_sig;

static const spmv_sig sig_h = {"macko_Hspmv", MACKO_R_16F, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 0};
static const spmv_sig sig_s = {"macko_Sspmv", MACKO_R_32F, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 0};
static const spmv_sig sig_d = {"macko_Dspmv", MACKO_R_64F, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 0};
static const spmv_sig sig_ex = {"macko_spmv_ex", MACKO_R_32F, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

static macko_status_t spmv(const spmv_sig *S, macko_handle_t handle, macko_operation_t op, const void *alpha,
                           macko_mat_t A, const void *x, int xtype, int64_t incx, const void *beta, void *y,
                           int ytype, int64_t incy, int compute)
{
    const char *fn = S->name;
    const struct macko_mat_s *M;
    macko_kargs a;
    int64_t m, n;
    size_t xe, ye;
    int combo, err;

    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_OP, (int)op));
    MACKO_CHECK(macko_check_ptr(fn, S->alpha, "alpha", alpha));
    MACKO_CHECK(macko_check_dev_mat(fn, S->A, A, handle, S->ex ? MACKO_ANY_TYPE : (int)S->letter, 2, op, &M));
    if (S->ex)
    {
        MACKO_CHECK(macko_check_combo(fn, A->type, S->xtype, "xtype", xtype, S->ytype, "ytype", ytype, S->compute,
                                      compute, &combo));
        MACKO_CHECK(macko_check_quant_combo(fn, S->xtype, A, combo));
        MACKO_CHECK(macko_check_nm_combo(fn, S->xtype, A, combo));
        MACKO_CHECK(macko_check_tiles_combo(fn, S->xtype, A, op, combo));
    } else
        combo = macko_combo_of_type(S->letter);
    xe = macko_type_size((macko_datatype_t)xtype);
    ye = macko_type_size((macko_datatype_t)ytype);
    m = M->rows;
    n = M->cols;
    MACKO_CHECK(macko_check_array(fn, S->x, "x", x, "len(x)", n, NULL, 0, xe));
    MACKO_CHECK(macko_check_min(fn, S->incx, "incx", incx, 1));
    MACKO_CHECK(macko_check_span(fn, S->incx, "(len(x) - 1) * incx", n, incx, 1, 0, xe));
    MACKO_CHECK(macko_check_ptr(fn, S->beta, "beta", beta));
    MACKO_CHECK(macko_check_array(fn, S->y, "y", y, "len(y)", m, NULL, 0, ye));
    MACKO_CHECK(macko_check_min(fn, S->incy, "incy", incy, 1));
    MACKO_CHECK(macko_check_span(fn, S->incy, "(len(y) - 1) * incy", m, incy, 1, 0, ye));

    if (m == 0)
        return macko_ok();
    if (M->kind == MACKO_KIND_NM)
        return macko_nm_compute(fn, handle, M, combo, alpha, x, incx, 0, beta, y, incy, 0, 1);
    if (M->kind == MACKO_KIND_QUANT)
        return macko_quant_compute(fn, handle, M, alpha, x, incx, 0, beta, y, incy, 0, 1);
    if (M->dev_layout == MACKO_LAYOUT_TILES)
        return macko_tiles_compute(fn, handle, M, combo, alpha, x, incx, 0, beta, y, incy, 0, 1);

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
    macko_kargs_scalars(handle, combo, alpha, beta, &a);
    a.stream = handle->stream;

    err = macko_plan_launch(combo, &a, macko_plan_spmv(&M->plan, incx));
    if (err != 0)
        return macko_launch_fail(handle, fn, err);
    return macko_ok();
}

macko_status_t macko_Hspmv(macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                           const macko_half *x, int64_t incx, const float *beta, macko_half *y, int64_t incy)
{
    return spmv(&sig_h, handle, op, alpha, A, x, MACKO_R_16F, incx, beta, y, MACKO_R_16F, incy, MACKO_R_32F);
}

macko_status_t macko_Sspmv(macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                           const float *x, int64_t incx, const float *beta, float *y, int64_t incy)
{
    return spmv(&sig_s, handle, op, alpha, A, x, MACKO_R_32F, incx, beta, y, MACKO_R_32F, incy, MACKO_R_32F);
}

macko_status_t macko_Dspmv(macko_handle_t handle, macko_operation_t op, const double *alpha, macko_mat_t A,
                           const double *x, int64_t incx, const double *beta, double *y, int64_t incy)
{
    return spmv(&sig_d, handle, op, alpha, A, x, MACKO_R_64F, incx, beta, y, MACKO_R_64F, incy, MACKO_R_64F);
}

macko_status_t macko_spmv_ex(macko_handle_t handle, macko_operation_t op, const void *alpha, macko_mat_t A,
                             const void *x, macko_datatype_t xtype, int64_t incx, const void *beta, void *y,
                             macko_datatype_t ytype, int64_t incy, macko_datatype_t compute_type)
{
    return spmv(&sig_ex, handle, op, alpha, A, x, (int)xtype, incx, beta, y, (int)ytype, incy, (int)compute_type);
}
