/* macko_Hspmm / Sspmm / Dspmm, macko_spmm_ex (one checking path, spmm below, with each signature's positions; the
 * ex routine's type arguments are judged right after A) and macko_H/S/Dspmv_strided_batched: argument checks in
 * signature order, then the launches the encoding's plan (plan.h) has for n columns (the SpMM kernels of
 * kernels/spmm.cu, one launch per tile of columns, or the SpMV kernel for one column). Both routines are the same
 * product: column j of B / vector j of the batch is at b + k*incb + j*ldb, with (incb, ldb) = (1, ldb) for spmm and
 * (incx, stridex) for the strided batch.
 * No allocation, no synchronisation, no host<->device copy, no device query: graph-capturable. */
#include "check.h"

#include <stdint.h>

/* Positions of the arguments in a signature (0: none; the type is fixed). */
typedef struct mm_sig {
    const char *name;
    macko_datatype_t letter; /* the BLAS-letter routines: A's type; unused by the ex routine */
    int ex;                  /* the type arguments are arguments */
    int alpha, A, B, btype, ldb, beta, C, ctype, ldc, compute;
} mm_sig;

static const mm_sig sig_h = {"macko_Hspmm", MACKO_R_16F, 0, 4, 5, 6, 0, 7, 8, 9, 0, 10, 0};
static const mm_sig sig_s = {"macko_Sspmm", MACKO_R_32F, 0, 4, 5, 6, 0, 7, 8, 9, 0, 10, 0};
static const mm_sig sig_d = {"macko_Dspmm", MACKO_R_64F, 0, 4, 5, 6, 0, 7, 8, 9, 0, 10, 0};
static const mm_sig sig_ex = {"macko_spmm_ex", MACKO_R_32F, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};

/* Everything is valid, m > 0 and n > 0: the plan's launch for n, once per tile of its columns. */
static macko_status_t mm_run(int combo, const char *fn, macko_handle_t handle, const struct macko_mat_s *M,
                             int64_t n, const void *alpha, const void *beta, const void *b, int64_t incb,
                             int64_t ldb, void *c, int64_t incc, int64_t ldc)
{
    const int64_t xelem = (int64_t)macko_combo_xelem(combo);
    macko_launch wide;
    const macko_launch *L;
    macko_kargs a;
    int64_t j0;

    if (M->kind == MACKO_KIND_NM)
        return macko_nm_compute(fn, handle, M, combo, alpha, b, incb, ldb, beta, c, incc, ldc, n);
    if (M->kind == MACKO_KIND_QUANT)
        return macko_quant_compute(fn, handle, M, alpha, b, incb, ldb, beta, c, incc, ldc, n);
    if (M->dev_layout == MACKO_LAYOUT_TILES)
        return macko_tiles_compute(fn, handle, M, combo, alpha, b, incb, ldb, beta, c, incc, ldc, n);
    L = xelem > (int64_t)macko_type_size(M->type)
            ? macko_plan_mm_wide_b(&M->plan, M, n, incb, ldb, incc, (int)xelem, &handle->props, &wide)
            : macko_plan_mm(&M->plan, n, M->cols, incb, ldb, incc);

    if (L == NULL)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 0,
                          "the launch plan forced on A (macko_plan_override) has no path for n = %lld", (long long)n);
    a.rows = M->rows;
    a.cols = M->cols;
    a.values = M->dev.values;
    a.deltas = M->dev.deltas;
    a.row_ptr = M->plan.row_ptr;
    a.incb = incb;
    a.ldb = ldb;
    a.incc = incc;
    a.ldc = ldc;
    macko_kargs_scalars(handle, combo, alpha, beta, &a);
    a.stream = handle->stream;
    if (L->kernel == MACKO_K_MM_TC || L->kernel == MACKO_K_MM_PANEL || L->kernel == MACKO_K_MM_SIMT) {
        /* every column in one call */
        int err;
        a.b = b;
        a.c = c;
        a.n = n;
        err = macko_plan_launch_tc(combo, &M->plan, &a, L, &handle->ws, &handle->props);
        if (err != 0)
            return macko_launch_fail(handle, fn, err);
        return macko_ok();
    }
    for (j0 = 0; j0 < n; j0 += L->tile) {
        int err;
        a.b = (const char *)b + j0 * ldb * xelem;
        a.c = (char *)c + j0 * ldc * xelem; /* every combination has y's elements as wide as x's */
        a.n = n - j0 < L->tile ? n - j0 : L->tile;
        err = macko_plan_launch(combo, &a, L);
        if (err != 0)
            return macko_launch_fail(handle, fn, err);
    }
    return macko_ok();
}

static macko_status_t spmm(const mm_sig *S, macko_handle_t handle, macko_operation_t op, int64_t n,
                           const void *alpha, macko_mat_t A, const void *B, int btype, int64_t ldb, const void *beta,
                           void *C, int ctype, int64_t ldc, int compute)
{
    const char *fn = S->name;
    const struct macko_mat_s *M = NULL;
    int64_t m, k;
    size_t be, ce;
    int combo;

    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_OP, (int)op));
    MACKO_CHECK(macko_check_min(fn, 3, "n", n, 0));
    MACKO_CHECK(macko_check_ptr(fn, S->alpha, "alpha", alpha));
    MACKO_CHECK(macko_check_dev_mat(fn, S->A, A, handle, S->ex ? MACKO_ANY_TYPE : (int)S->letter, 2, op, &M));
    if (S->ex)
    {
        MACKO_CHECK(macko_check_combo(fn, A->type, S->btype, "btype", btype, S->ctype, "ctype", ctype, S->compute,
                                      compute, &combo));
        MACKO_CHECK(macko_check_quant_combo(fn, S->btype, A, combo));
        MACKO_CHECK(macko_check_nm_combo(fn, S->btype, A, combo));
        MACKO_CHECK(macko_check_tiles_combo(fn, S->btype, A, op, combo));
    } else
        combo = macko_combo_of_type(S->letter);
    be = macko_type_size((macko_datatype_t)btype);
    ce = macko_type_size((macko_datatype_t)ctype);
    m = M->rows;
    k = M->cols;
    MACKO_CHECK(macko_check_array(fn, S->B, "B", B, "k", k, "n", n, be));
    MACKO_CHECK(macko_check_ld(fn, S->ldb, "ldb", ldb, "k", k));
    MACKO_CHECK(macko_check_span(fn, S->ldb, "(n - 1) * ldb + k", k, 1, n, ldb, be));
    MACKO_CHECK(macko_check_ptr(fn, S->beta, "beta", beta));
    MACKO_CHECK(macko_check_array(fn, S->C, "C", C, "m", m, "n", n, ce));
    MACKO_CHECK(macko_check_ld(fn, S->ldc, "ldc", ldc, "m", m));
    MACKO_CHECK(macko_check_span(fn, S->ldc, "(n - 1) * ldc + m", m, 1, n, ldc, ce));

    if (m == 0 || n == 0)
        return macko_ok();
    return mm_run(combo, fn, handle, M, n, alpha, beta, B, 1, ldb, C, 1, ldc);
}

/* The strided-batched SpMV exists with the BLAS letters only. */
static macko_status_t spmv_sb(const char *fn, macko_datatype_t type, macko_handle_t handle, macko_operation_t op,
                              const void *alpha, macko_mat_t A, const void *x, int64_t incx, int64_t stridex,
                              const void *beta, void *y, int64_t incy, int64_t stridey, int64_t batch)
{
    const size_t elem = macko_type_size(type);
    const struct macko_mat_s *M = NULL;
    int64_t ly, lx;

    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_OP, (int)op));
    MACKO_CHECK(macko_check_ptr(fn, 3, "alpha", alpha));
    MACKO_CHECK(macko_check_dev_mat(fn, 4, A, handle, (int)type, 2, op, &M));
    ly = M->rows;
    lx = M->cols;
    MACKO_CHECK(macko_check_array(fn, 5, "x", x, "len(x)", lx, "batch", batch, elem));
    MACKO_CHECK(macko_check_min(fn, 6, "incx", incx, 1));
    MACKO_CHECK(macko_check_min(fn, 7, "stridex", stridex, 0));
    MACKO_CHECK(macko_check_ptr(fn, 8, "beta", beta));
    MACKO_CHECK(macko_check_array(fn, 9, "y", y, "len(y)", ly, "batch", batch, elem));
    MACKO_CHECK(macko_check_min(fn, 10, "incy", incy, 1));
    MACKO_CHECK(macko_check_min(fn, 11, "stridey", stridey, 0));
    if (stridey == 0 && batch > 1 && ly > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 11,
                          "stridey = 0 with batch = %lld: the outputs of the batch would be the same elements",
                          (long long)batch);
    MACKO_CHECK(macko_check_min(fn, 12, "batch", batch, 0));
    /* Spans, now that batch is known: the vector's own span at inc's position, the batch's at the stride's. */
    MACKO_CHECK(macko_check_span(fn, 6, "(len(x) - 1) * incx", lx, incx, 1, 0, elem));
    MACKO_CHECK(macko_check_span(fn, 7, "(batch - 1) * stridex + (len(x) - 1) * incx", lx, incx, batch, stridex,
                                 elem));
    MACKO_CHECK(macko_check_span(fn, 10, "(len(y) - 1) * incy", ly, incy, 1, 0, elem));
    MACKO_CHECK(macko_check_span(fn, 11, "(batch - 1) * stridey + (len(y) - 1) * incy", ly, incy, batch, stridey,
                                 elem));

    if (ly == 0 || batch == 0)
        return macko_ok();
    return mm_run(macko_combo_of_type(type), fn, handle, M, batch, alpha, beta, x, incx, stridex, y, incy,
                  stridey);
}

macko_status_t macko_Hspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha, macko_mat_t A,
                           const macko_half *B, int64_t ldb, const float *beta, macko_half *C, int64_t ldc)
{
    return spmm(&sig_h, handle, op, n, alpha, A, B, MACKO_R_16F, ldb, beta, C, MACKO_R_16F, ldc, MACKO_R_32F);
}

macko_status_t macko_Sspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha, macko_mat_t A,
                           const float *B, int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    return spmm(&sig_s, handle, op, n, alpha, A, B, MACKO_R_32F, ldb, beta, C, MACKO_R_32F, ldc, MACKO_R_32F);
}

macko_status_t macko_Dspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const double *alpha,
                           macko_mat_t A, const double *B, int64_t ldb, const double *beta, double *C, int64_t ldc)
{
    return spmm(&sig_d, handle, op, n, alpha, A, B, MACKO_R_64F, ldb, beta, C, MACKO_R_64F, ldc, MACKO_R_64F);
}

macko_status_t macko_spmm_ex(macko_handle_t handle, macko_operation_t op, int64_t n, const void *alpha,
                             macko_mat_t A, const void *B, macko_datatype_t btype, int64_t ldb, const void *beta,
                             void *C, macko_datatype_t ctype, int64_t ldc, macko_datatype_t compute_type)
{
    return spmm(&sig_ex, handle, op, n, alpha, A, B, (int)btype, ldb, beta, C, (int)ctype, ldc, (int)compute_type);
}

macko_status_t macko_Hspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const float *alpha,
                                           macko_mat_t A, const macko_half *x, int64_t incx, int64_t stridex,
                                           const float *beta, macko_half *y, int64_t incy, int64_t stridey,
                                           int64_t batch)
{
    return spmv_sb("macko_Hspmv_strided_batched", MACKO_R_16F, handle, op, alpha, A, x, incx, stridex, beta, y, incy,
                   stridey, batch);
}

macko_status_t macko_Sspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const float *alpha,
                                           macko_mat_t A, const float *x, int64_t incx, int64_t stridex,
                                           const float *beta, float *y, int64_t incy, int64_t stridey,
                                           int64_t batch)
{
    return spmv_sb("macko_Sspmv_strided_batched", MACKO_R_32F, handle, op, alpha, A, x, incx, stridex, beta, y, incy,
                   stridey, batch);
}

macko_status_t macko_Dspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const double *alpha,
                                           macko_mat_t A, const double *x, int64_t incx, int64_t stridex,
                                           const double *beta, double *y, int64_t incy, int64_t stridey,
                                           int64_t batch)
{
    return spmv_sb("macko_Dspmv_strided_batched", MACKO_R_64F, handle, op, alpha, A, x, incx, stridex, beta, y, incy,
                   stridey, batch);
}
