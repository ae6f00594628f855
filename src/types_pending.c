/* Placeholders for the fp64 and generic entry points of issue 17 while they are being written: each returns
 * MACKO_STATUS_NOT_SUPPORTED. This file goes away when the real routines land (they live beside Hspmv/Sspmv). */
#include "macko_internal.h"

#define PENDING(fn) return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 0, "not implemented yet")

macko_status_t macko_Dspmv(macko_handle_t handle, macko_operation_t op, const double *alpha, macko_mat_t A,
                           const double *x, int64_t incx, const double *beta, double *y, int64_t incy)
{
    (void)handle, (void)op, (void)alpha, (void)A, (void)x, (void)incx, (void)beta, (void)y, (void)incy;
    PENDING("macko_Dspmv");
}

macko_status_t macko_Dspmm(macko_handle_t handle, macko_operation_t op, int64_t n, const double *alpha,
                           macko_mat_t A, const double *B, int64_t ldb, const double *beta, double *C, int64_t ldc)
{
    (void)handle, (void)op, (void)n, (void)alpha, (void)A, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    PENDING("macko_Dspmm");
}

macko_status_t macko_Dspmv_strided_batched(macko_handle_t handle, macko_operation_t op, const double *alpha,
                                           macko_mat_t A, const double *x, int64_t incx, int64_t stridex,
                                           const double *beta, double *y, int64_t incy, int64_t stridey,
                                           int64_t batch)
{
    (void)handle, (void)op, (void)alpha, (void)A, (void)x, (void)incx, (void)stridex, (void)beta, (void)y,
        (void)incy, (void)stridey, (void)batch;
    PENDING("macko_Dspmv_strided_batched");
}

macko_status_t macko_spmv_ex(macko_handle_t handle, macko_operation_t op, const void *alpha, macko_mat_t A,
                             const void *x, macko_datatype_t xtype, int64_t incx, const void *beta, void *y,
                             macko_datatype_t ytype, int64_t incy, macko_datatype_t compute_type)
{
    (void)handle, (void)op, (void)alpha, (void)A, (void)x, (void)xtype, (void)incx, (void)beta, (void)y,
        (void)ytype, (void)incy, (void)compute_type;
    PENDING("macko_spmv_ex");
}

macko_status_t macko_spmm_ex(macko_handle_t handle, macko_operation_t op, int64_t n, const void *alpha,
                             macko_mat_t A, const void *B, macko_datatype_t btype, int64_t ldb, const void *beta,
                             void *C, macko_datatype_t ctype, int64_t ldc, macko_datatype_t compute_type)
{
    (void)handle, (void)op, (void)n, (void)alpha, (void)A, (void)B, (void)btype, (void)ldb, (void)beta, (void)C,
        (void)ctype, (void)ldc, (void)compute_type;
    PENDING("macko_spmm_ex");
}
