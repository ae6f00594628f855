/* macko_mat_create_nm_dense_device: the dense device matrix is copied to the host on the handle's stream, encoded
 * there by the host encoder (nm_encode.c) and uploaded (nm_device.c). The encoding is the host routine's, so host and
 * device creation agree byte for byte by construction. */
#include "check.h"
#include "device_common.h"
#include "nm_host.h"

#include <inttypes.h>
#include <stdlib.h>

/* Pitches above this go line by line (cudaMemcpy2D refuses pitches beyond the device's limit, 2^31 - 1 or so). */
#define MAX_2D_PITCH INT64_C(0x7FFFFFFF)

/* outer lines of inner elements, ld apart on the device, into the compact host array h (synchronous). */
static cudaError_t copy_dense(void *h, const void *d, int64_t inner, int64_t outer, int64_t ld, size_t es,
                              cudaStream_t s)
{
    const size_t width = (size_t)inner * es;
    cudaError_t e = cudaSuccess, e2;
    int64_t i;
    if (ld == inner)
        e = cudaMemcpyAsync(h, d, width * (size_t)outer, cudaMemcpyDeviceToHost, s);
    else if (ld * (int64_t)es <= MAX_2D_PITCH)
        e = cudaMemcpy2DAsync(h, width, d, (size_t)ld * es, width, (size_t)outer, cudaMemcpyDeviceToHost, s);
    else
        for (i = 0; i < outer && e == cudaSuccess; i++)
            e = cudaMemcpyAsync((char *)h + (size_t)i * width, (const char *)d + (size_t)(i * ld) * es, width,
                                cudaMemcpyDeviceToHost, s);
    e2 = cudaStreamSynchronize(s);
    return e != cudaSuccess ? e : e2;
}

macko_status_t macko_mat_create_nm_dense_device(macko_handle_t handle, macko_mat_t *A, int64_t rows, int64_t cols,
                                               macko_datatype_t type, const void *values, int64_t ld,
                                               macko_order_t order, int n, int m, int v)
{
    static const char fn[] = "macko_mat_create_nm_dense_device";
    const int colmajor = order == MACKO_ORDER_COL;
    macko_device_data dev;
    struct macko_mat_s *mat = NULL;
    void *host = NULL;
    int64_t inner, outer;
    size_t es;
    macko_status_t st;

    MACKO_CHECK(macko_check_handle(fn, handle));
    dev.device = handle->device;
    dev.readable = macko_dev_ptr_usable;
    MACKO_CHECK(macko_check_dense_input(fn, 2, A, rows, cols, type, values, ld, order, &dev));
    MACKO_CHECK(macko_check_nm_pattern(fn, 9, n, m, v, 1));

    es = macko_type_size(type);
    inner = colmajor ? rows : cols;
    outer = colmajor ? cols : rows;
    if (rows > 0 && cols > 0) { /* rows * cols <= 2^56: checked */
        macko_dev_guard g;
        cudaError_t e;
        if ((uint64_t)(rows * cols) > SIZE_MAX / es || (host = malloc((size_t)(rows * cols) * es)) == NULL)
            return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0,
                              "cannot allocate the host copy of the dense matrix (%" PRId64 " x %" PRId64 ")", rows,
                              cols);
        e = macko_dev_enter(&g, handle->device);
        if (e == cudaSuccess) {
            cudaGetLastError();
            e = copy_dense(host, values, inner, outer, ld, es, (cudaStream_t)handle->stream);
            macko_dev_leave(&g);
        }
        if (e != cudaSuccess) {
            free(host);
            return macko_fail(macko_cuda_status(e), fn, 0, "cannot copy the dense matrix to the host: %s",
                              cudaGetErrorString(e));
        }
    }
    st = macko_nm_encode_dense(fn, 2, &mat, rows, cols, type, host, inner > 0 ? inner : 1, colmajor, n, m, v);
    free(host);
    if (st != MACKO_STATUS_SUCCESS)
        return st;
    st = macko_nm_upload(fn, handle, mat);
    if (st != MACKO_STATUS_SUCCESS) {
        /* not macko_mat_destroy: its macko_ok() would clear the error details just recorded */
        macko_device_arrays_free(mat);
        macko_host_arrays_free(mat);
        free(mat);
        return st;
    }
    *A = mat;
    return macko_ok();
}
