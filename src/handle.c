/* Handle: binds a device, carries the stream and the pointer mode. */
#include "macko_internal.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>

macko_status_t macko_create(macko_handle_t *handle)
{
    static const char fn[] = "macko_create";
    int dev = 0, n = 0, sms = 0;
    struct macko_handle_s *h;
    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 1, "handle is NULL");
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "no usable CUDA device");
    }
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "the current CUDA device cannot be queried");
    }
    h = (struct macko_handle_s *)calloc(1, sizeof *h);
    if (h == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    h->device = dev;
    h->stream = NULL;
    h->pointer_mode = MACKO_POINTER_MODE_HOST;
    h->sm_count = sms;
    *handle = h;
    return macko_ok();
}

macko_status_t macko_destroy(macko_handle_t handle)
{
    free(handle);
    return macko_ok();
}

macko_status_t macko_set_stream(macko_handle_t handle, macko_stream_t stream)
{
    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, "macko_set_stream", 1, "handle is NULL");
    handle->stream = stream;
    return macko_ok();
}

macko_status_t macko_get_stream(macko_handle_t handle, macko_stream_t *stream)
{
    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, "macko_get_stream", 1, "handle is NULL");
    if (stream == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, "macko_get_stream", 2, "stream is NULL");
    *stream = handle->stream;
    return macko_ok();
}

macko_status_t macko_set_pointer_mode(macko_handle_t handle, macko_pointer_mode_t mode)
{
    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, "macko_set_pointer_mode", 1, "handle is NULL");
    if (mode != MACKO_POINTER_MODE_HOST && mode != MACKO_POINTER_MODE_DEVICE)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, "macko_set_pointer_mode", 2,
                          "mode is %d; it must be MACKO_POINTER_MODE_HOST (0) or MACKO_POINTER_MODE_DEVICE (1)",
                          (int)mode);
    handle->pointer_mode = mode;
    return macko_ok();
}

macko_status_t macko_get_pointer_mode(macko_handle_t handle, macko_pointer_mode_t *mode)
{
    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, "macko_get_pointer_mode", 1, "handle is NULL");
    if (mode == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, "macko_get_pointer_mode", 2, "mode is NULL");
    *mode = handle->pointer_mode;
    return macko_ok();
}
