/* macko_Hspmv / macko_Sspmv: argument checks in signature order, then one kernel launch looked up in a table.
 * No allocation, no synchronisation, no host<->device copy: graph-capturable. */
#include "check.h"
#include "macko_kernels.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

int macko_spmv_forced_kernel(void)
{
    /* -2: not read yet. Every thread computes the same value; atomic so that first calls do not race. */
    static atomic_int forced = -2;
    int f = atomic_load_explicit(&forced, memory_order_relaxed);
    if (f == -2) {
        const char *env = getenv("MACKO_SPMV_VARIANT");
        f = (env != NULL && env[0] >= '0' && env[0] < '0' + MACKO_SPMV_KERNELS && env[1] == '\0') ? env[0] - '0' : -1;
        atomic_store_explicit(&forced, f, memory_order_relaxed);
    }
    return f;
}

/* Precisions in the order of the table rows. */
enum { SPMV_H = 0, SPMV_S = 1, SPMV_PRECISIONS = 2 };

static const macko_spmv_launcher spmv_table[SPMV_PRECISIONS][MACKO_SPMV_VARIANTS] = {
    [SPMV_H] = {[MACKO_SPMV_I32_UNIT] = macko_spmv_h_i32_unit,
                [MACKO_SPMV_I32_STRIDED] = macko_spmv_h_i32_strided,
                [MACKO_SPMV_I64_RP32] = macko_spmv_h_i64_rp32,
                [MACKO_SPMV_I64_RP64] = macko_spmv_h_i64_rp64},
    [SPMV_S] = {[MACKO_SPMV_I32_UNIT] = macko_spmv_s_i32_unit,
                [MACKO_SPMV_I32_STRIDED] = macko_spmv_s_i32_strided,
                [MACKO_SPMV_I64_RP32] = macko_spmv_s_i64_rp32,
                [MACKO_SPMV_I64_RP64] = macko_spmv_s_i64_rp64},
};

typedef struct spmv_precision {
    const char *name;      /* routine name for error messages */
    macko_datatype_t type; /* the matrix type the routine letter names */
    size_t elem;           /* bytes of one x/y element */
} spmv_precision;

static const spmv_precision spmv_prec[SPMV_PRECISIONS] = {
    [SPMV_H] = {"macko_Hspmv", MACKO_R_16F, 2},
    [SPMV_S] = {"macko_Sspmv", MACKO_R_32F, 4},
};

static int spmv_variant(const struct macko_mat_s *M, int64_t incx)
{
    if (M->rp64)
        return MACKO_SPMV_I64_RP64;
    if (M->entries_padded > MACKO_SPMV_I32_LIMIT || M->cols > MACKO_SPMV_I32_LIMIT || M->rows > MACKO_SPMV_I32_LIMIT)
        return MACKO_SPMV_I64_RP32;
    return incx == 1 ? MACKO_SPMV_I32_UNIT : MACKO_SPMV_I32_STRIDED;
}

static macko_status_t spmv(int prec, macko_handle_t handle, macko_operation_t op, const float *alpha, macko_mat_t A,
                           const void *x, int64_t incx, const float *beta, void *y, int64_t incy)
{
    const spmv_precision *P = &spmv_prec[prec];
    const char *fn = P->name;
    const struct macko_mat_s *M;
    macko_spmv_args a;
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
    a.row_ptr = M->dev.row_ptr;
    a.x = x;
    a.incx = incx;
    a.y = y;
    a.incy = incy;
    macko_resolve_scalars(handle, alpha, beta, &a.alpha, &a.beta, &a.alpha_dev, &a.beta_dev);
    a.sm_count = handle->sm_count;
    a.stream = handle->stream;
    a.kernel = macko_spmv_choose_kernel(M->rows, M->cols, M->entries, P->elem);

    err = spmv_table[prec][spmv_variant(M, incx)](&a);
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
