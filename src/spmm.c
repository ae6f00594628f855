/* macko_Hspmm / macko_Sspmm and macko_Hspmv_strided_batched / macko_Sspmv_strided_batched: argument checks in
 * signature order, then the launches the encoding's plan (plan.h) has for n columns (the SpMM kernels of
 * kernels/spmm.cu, one launch per tile of columns, or the SpMV kernel for one column). Both routines are the same
 * product: column j of B / vector j of the batch is at b + k*incb + j*ldb, with (incb, ldb) = (1, ldb) for spmm and
 * (incx, stridex) for the strided batch.
 * No allocation, no synchronisation, no host<->device copy, no device query: graph-capturable. */
#include "check.h"

#include <stdint.h>

/* Precisions in the order of mm_prec's rows. */
enum { MM_H = 0, MM_S = 1, MM_PRECISIONS = 2 };

typedef struct mm_precision {
    const char *mm_name;   /* routine names for error messages */
    const char *sb_name;
    macko_datatype_t type; /* the matrix type the routine letter names */
    size_t elem;           /* bytes of one B/C (x/y) element */
} mm_precision;

static const mm_precision mm_prec[MM_PRECISIONS] = {
    [MM_H] = {"macko_Hspmm", "macko_Hspmv_strided_batched", MACKO_R_16F, 2},
    [MM_S] = {"macko_Sspmm", "macko_Sspmv_strided_batched", MACKO_R_32F, 4},
};

/* Everything is valid, m > 0 and n > 0: the plan's launch for n, once per tile of its columns. */
static macko_status_t mm_run(int prec, const char *fn, macko_handle_t handle, const struct macko_mat_s *M,
                             int64_t n, const float *alpha, const float *beta, const void *b, int64_t incb,
                             int64_t ldb, void *c, int64_t incc, int64_t ldc)
{
    const int64_t elem = (int64_t)mm_prec[prec].elem;
    const macko_launch *L = macko_plan_mm(&M->plan, n, M->cols, incb, ldb, incc);
    macko_kargs a;
    int64_t j0;

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
    macko_resolve_scalars(handle, alpha, beta, &a.alpha, &a.beta, &a.alpha_dev, &a.beta_dev);
    a.stream = handle->stream;
    if (L->kernel == MACKO_K_MM_TC || L->kernel == MACKO_K_MM_PANEL) { /* every column in one call */
        int err;
        a.b = b;
        a.c = c;
        a.n = n;
        err = macko_plan_launch_tc(&M->plan, &a, L, &handle->ws, &handle->props);
        if (err != 0)
            return macko_launch_fail(handle, fn, err);
        return macko_ok();
    }
    for (j0 = 0; j0 < n; j0 += L->tile) {
        int err;
        a.b = (const char *)b + j0 * ldb * elem;
        a.c = (char *)c + j0 * ldc * elem;
        a.n = n - j0 < L->tile ? n - j0 : L->tile;
        err = macko_plan_launch(M->type, &a, L);
        if (err != 0)
            return macko_launch_fail(handle, fn, err);
    }
    return macko_ok();
}

static macko_status_t spmm(int prec, macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha,
                           macko_mat_t A, const void *B, int64_t ldb, const float *beta, void *C, int64_t ldc)
{
    const mm_precision *P = &mm_prec[prec];
    const char *fn = P->mm_name;
    const struct macko_mat_s *M = NULL;
    int64_t m, k;

    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_OP, (int)op));
    MACKO_CHECK(macko_check_min(fn, 3, "n", n, 0));
    MACKO_CHECK(macko_check_ptr(fn, 4, "alpha", alpha));
    MACKO_CHECK(macko_check_dev_mat(fn, 5, A, handle, (int)P->type, 2, op, &M));
    m = M->rows;
    k = M->cols;
    MACKO_CHECK(macko_check_array(fn, 6, "B", B, "k", k, "n", n, P->elem));
    MACKO_CHECK(macko_check_ld(fn, 7, "ldb", ldb, "k", k));
    MACKO_CHECK(macko_check_span(fn, 7, "(n - 1) * ldb + k", k, 1, n, ldb, P->elem));
    MACKO_CHECK(macko_check_ptr(fn, 8, "beta", beta));
    MACKO_CHECK(macko_check_array(fn, 9, "C", C, "m", m, "n", n, P->elem));
    MACKO_CHECK(macko_check_ld(fn, 10, "ldc", ldc, "m", m));
    MACKO_CHECK(macko_check_span(fn, 10, "(n - 1) * ldc + m", m, 1, n, ldc, P->elem));

    if (m == 0 || n == 0)
        return macko_ok();
    return mm_run(prec, fn, handle, M, n, alpha, beta, B, 1, ldb, C, 1, ldc);
}

static macko_status_t spmv_sb(int prec, macko_handle_t handle, macko_operation_t op, const float *alpha,
                              macko_mat_t A, const void *x, int64_t incx, int64_t stridex, const float *beta,
                              void *y, int64_t incy, int64_t stridey, int64_t batch)
{
    const mm_precision *P = &mm_prec[prec];
    const char *fn = P->sb_name;
    const struct macko_mat_s *M = NULL;
    int64_t ly, lx;

    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_OP, (int)op));
    MACKO_CHECK(macko_check_ptr(fn, 3, "alpha", alpha));
    MACKO_CHECK(macko_check_dev_mat(fn, 4, A, handle, (int)P->type, 2, op, &M));
    ly = M->rows;
    lx = M->cols;
    MACKO_CHECK(macko_check_array(fn, 5, "x", x, "len(x)", lx, "batch", batch, P->elem));
    MACKO_CHECK(macko_check_min(fn, 6, "incx", incx, 1));
    MACKO_CHECK(macko_check_min(fn, 7, "stridex", stridex, 0));
    MACKO_CHECK(macko_check_ptr(fn, 8, "beta", beta));
    MACKO_CHECK(macko_check_array(fn, 9, "y", y, "len(y)", ly, "batch", batch, P->elem));
    MACKO_CHECK(macko_check_min(fn, 10, "incy", incy, 1));
    MACKO_CHECK(macko_check_min(fn, 11, "stridey", stridey, 0));
    if (stridey == 0 && batch > 1 && ly > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 11,
                          "stridey = 0 with batch = %lld: the outputs of the batch would be the same elements",
                          (long long)batch);
    MACKO_CHECK(macko_check_min(fn, 12, "batch", batch, 0));
    /* Spans, now that batch is known: the vector's own span at inc's position, the batch's at the stride's. */
    MACKO_CHECK(macko_check_span(fn, 6, "(len(x) - 1) * incx", lx, incx, 1, 0, P->elem));
    MACKO_CHECK(macko_check_span(fn, 7, "(batch - 1) * stridex + (len(x) - 1) * incx", lx, incx, batch, stridex,
                                 P->elem));
    MACKO_CHECK(macko_check_span(fn, 10, "(len(y) - 1) * incy", ly, incy, 1, 0, P->elem));
    MACKO_CHECK(macko_check_span(fn, 11, "(batch - 1) * stridey + (len(y) - 1) * incy", ly, incy, batch, stridey,
                                 P->elem));

    if (ly == 0 || batch == 0)
        return macko_ok();
    return mm_run(prec, fn, handle, M, batch, alpha, beta, x, incx, stridex, y, incy, stridey);
}

macko_status_t macko_Hspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha, macko_mat_t A,
                           const macko_half *B, int64_t ldb, const float *beta, macko_half *C, int64_t ldc)
{
    return spmm(MM_H, handle, op, n, alpha, A, B, ldb, beta, C, ldc);
}

macko_status_t macko_Sspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha, macko_mat_t A,
                           const float *B, int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    return spmm(MM_S, handle, op, n, alpha, A, B, ldb, beta, C, ldc);
}

macko_status_t macko_Hspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const float *alpha,
                                           macko_mat_t A, const macko_half *x, int64_t incx, int64_t stridex,
                                           const float *beta, macko_half *y, int64_t incy, int64_t stridey,
                                           int64_t batch)
{
    return spmv_sb(MM_H, handle, op, alpha, A, x, incx, stridex, beta, y, incy, stridey, batch);
}

macko_status_t macko_Sspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const float *alpha,
                                           macko_mat_t A, const float *x, int64_t incx, int64_t stridex,
                                           const float *beta, float *y, int64_t incy, int64_t stridey,
                                           int64_t batch)
{
    return spmv_sb(MM_S, handle, op, alpha, A, x, incx, stridex, beta, y, incy, stridey, batch);
}
