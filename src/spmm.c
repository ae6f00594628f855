/* macko_Hspmm / macko_Sspmm and macko_Hspmv_strided_batched / macko_Sspmv_strided_batched: argument checks in
 * signature order, then the launches the encoding's plan (plan.h) has for n columns (the SpMM kernels of
 * kernels/spmm.cu, one launch per tile of columns, or the SpMV kernel for one column). Both routines are the same
 * product: column j of B / vector j of the batch is at b + k*incb + j*ldb, with (incb, ldb) = (1, ldb) for spmm and
 * (incx, stridex) for the strided batch.
 * No allocation, no synchronisation, no host<->device copy, no device query: graph-capturable. */
#include "macko_internal.h"

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

/* The element at offset (len - 1)*inc + (count - 1)*stride is addressable: its byte offset fits int64 (all
 * arguments non-negative; len or count 0 means nothing is addressed). */
static int mm_span_ok(int64_t len, int64_t inc, int64_t count, int64_t stride, size_t elem)
{
    int64_t a, b;
    if (len <= 0 || count <= 0)
        return 1;
    return macko_mul_i64(len - 1, inc, &a) && macko_mul_i64(count - 1, stride, &b) && macko_add_i64(a, b, &a) &&
           macko_mul_i64(a, (int64_t)elem, &a);
}

/* handle, op and A (at position posA): A is an fp16/fp32 matrix as the routine letter says, on the handle's
 * device, with the transposed encoding for op T. *out: the encoding to multiply by. */
static macko_status_t mm_check_matrix(const mm_precision *P, const char *fn, macko_handle_t handle,
                                      macko_operation_t op, macko_mat_t A, int posA,
                                      const struct macko_mat_s **out)
{
    if (A == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, posA, "A is NULL");
    if (A->type != P->type)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, posA, "A has value type %d, this routine needs %d",
                          (int)A->type, (int)P->type);
    if (!A->has_device)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, posA, "A is not on the device (see macko_mat_upload)");
    if (A->device != handle->device)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, posA, "A is on device %d, the handle on device %d",
                          A->device, handle->device);
    if (op == MACKO_OPERATION_TRANSPOSE && (A->trans == NULL || !A->trans->has_device))
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 2,
                          "op T needs the transposed encoding: call macko_analysis with op T first");
    *out = op == MACKO_OPERATION_NON_TRANSPOSE ? A : A->trans;
    return MACKO_STATUS_SUCCESS;
}

/* Everything is valid, m > 0 and n > 0: the plan's launch for n, once per tile of its columns. */
static macko_status_t mm_run(int prec, const char *fn, macko_handle_t handle, const struct macko_mat_s *M,
                             int64_t n, const float *alpha, const float *beta, const void *b, int64_t incb,
                             int64_t ldb, void *c, int64_t incc, int64_t ldc)
{
    const int64_t elem = (int64_t)mm_prec[prec].elem;
    const macko_launch *L = macko_plan_mm(&M->plan, n, M->cols, incb, ldb);
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
    for (j0 = 0; j0 < n; j0 += L->tile) {
        int err;
        a.b = (const char *)b + j0 * ldb * elem;
        a.c = (char *)c + j0 * ldc * elem;
        a.n = n - j0 < L->tile ? n - j0 : L->tile;
        err = macko_plan_launch(M->type, &a, L);
        if (err != 0)
            return macko_fail(MACKO_STATUS_EXECUTION_FAILED, fn, 0, "kernel launch failed (CUDA error %d)", err);
    }
    return macko_ok();
}

static macko_status_t spmm(int prec, macko_handle_t handle, macko_operation_t op, int64_t n, const float *alpha,
                           macko_mat_t A, const void *B, int64_t ldb, const float *beta, void *C, int64_t ldc)
{
    const mm_precision *P = &mm_prec[prec];
    const char *fn = P->mm_name;
    const struct macko_mat_s *M = NULL;
    macko_status_t st;
    int64_t m, k;

    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 1, "handle is NULL");
    if (op != MACKO_OPERATION_NON_TRANSPOSE && op != MACKO_OPERATION_TRANSPOSE)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2,
                          "op is %d; it must be MACKO_OPERATION_NON_TRANSPOSE (0) or MACKO_OPERATION_TRANSPOSE (1)",
                          (int)op);
    if (n < 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3, "n = %lld must be at least 0", (long long)n);
    if (alpha == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "alpha is NULL");
    if ((st = mm_check_matrix(P, fn, handle, op, A, 5, &M)) != MACKO_STATUS_SUCCESS)
        return st;
    m = M->rows;
    k = M->cols;
    if (B == NULL && k > 0 && n > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 6, "B is NULL");
    if (k > 0 && n > 0 && (uintptr_t)B % P->elem != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 6, "B is not aligned to its element size %zu", P->elem);
    if (ldb < (k > 1 ? k : 1))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 7, "ldb = %lld must be at least max(1, k) = %lld",
                          (long long)ldb, (long long)(k > 1 ? k : 1));
    if (!mm_span_ok(k, 1, n, ldb, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 7, "(n - 1) * ldb + k overflows");
    if (beta == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 8, "beta is NULL");
    if (C == NULL && m > 0 && n > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 9, "C is NULL");
    if (m > 0 && n > 0 && (uintptr_t)C % P->elem != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 9, "C is not aligned to its element size %zu", P->elem);
    if (ldc < (m > 1 ? m : 1))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10, "ldc = %lld must be at least max(1, m) = %lld",
                          (long long)ldc, (long long)(m > 1 ? m : 1));
    if (!mm_span_ok(m, 1, n, ldc, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10, "(n - 1) * ldc + m overflows");

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
    macko_status_t st;
    int64_t ly, lx;

    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 1, "handle is NULL");
    if (op != MACKO_OPERATION_NON_TRANSPOSE && op != MACKO_OPERATION_TRANSPOSE)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2,
                          "op is %d; it must be MACKO_OPERATION_NON_TRANSPOSE (0) or MACKO_OPERATION_TRANSPOSE (1)",
                          (int)op);
    if (alpha == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3, "alpha is NULL");
    if ((st = mm_check_matrix(P, fn, handle, op, A, 4, &M)) != MACKO_STATUS_SUCCESS)
        return st;
    ly = M->rows;
    lx = M->cols;
    if (x == NULL && lx > 0 && batch > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 5, "x is NULL");
    if (lx > 0 && batch > 0 && (uintptr_t)x % P->elem != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 5, "x is not aligned to its element size %zu", P->elem);
    if (incx < 1)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 6, "incx = %lld must be at least 1", (long long)incx);
    if (stridex < 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 7, "stridex = %lld must be at least 0",
                          (long long)stridex);
    if (beta == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 8, "beta is NULL");
    if (y == NULL && ly > 0 && batch > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 9, "y is NULL");
    if (ly > 0 && batch > 0 && (uintptr_t)y % P->elem != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 9, "y is not aligned to its element size %zu", P->elem);
    if (incy < 1)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10, "incy = %lld must be at least 1", (long long)incy);
    if (stridey < 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 11, "stridey = %lld must be at least 0",
                          (long long)stridey);
    if (stridey == 0 && batch > 1 && ly > 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 11,
                          "stridey = 0 with batch = %lld: the outputs of the batch would be the same elements",
                          (long long)batch);
    if (batch < 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 12, "batch = %lld must be at least 0", (long long)batch);
    /* Spans, now that batch is known: the vector's own span at inc's position, the batch's at the stride's. */
    if (!mm_span_ok(lx, incx, 1, 0, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 6, "(len(x) - 1) * incx overflows");
    if (!mm_span_ok(lx, incx, batch, stridex, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 7, "(batch - 1) * stridex + (len(x) - 1) * incx overflows");
    if (!mm_span_ok(ly, incy, 1, 0, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 10, "(len(y) - 1) * incy overflows");
    if (!mm_span_ok(ly, incy, batch, stridey, P->elem))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 11,
                          "(batch - 1) * stridey + (len(y) - 1) * incy overflows");

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
