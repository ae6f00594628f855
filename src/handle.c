/* Handle: binds a device, carries the stream and the pointer mode. */
#include "check.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>

macko_status_t macko_create(macko_handle_t *handle)
{
    static const char fn[] = "macko_create";
    int dev = 0, n = 0, sms = 0;
    struct macko_handle_s *h;
    MACKO_CHECK(macko_check_ptr(fn, 1, "handle", handle));
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
    MACKO_CHECK(macko_check_handle("macko_set_stream", handle));
    handle->stream = stream;
    return macko_ok();
}

macko_status_t macko_get_stream(macko_handle_t handle, macko_stream_t *stream)
{
    MACKO_CHECK(macko_check_handle("macko_get_stream", handle));
    MACKO_CHECK(macko_check_ptr("macko_get_stream", 2, "stream", stream));
    *stream = handle->stream;
    return macko_ok();
}

macko_status_t macko_set_pointer_mode(macko_handle_t handle, macko_pointer_mode_t mode)
{
    MACKO_CHECK(macko_check_handle("macko_set_pointer_mode", handle));
    MACKO_CHECK(macko_check_enum("macko_set_pointer_mode", 2, MACKO_ARG_POINTER_MODE, (int)mode));
    handle->pointer_mode = mode;
    return macko_ok();
}

macko_status_t macko_get_pointer_mode(macko_handle_t handle, macko_pointer_mode_t *mode)
{
    MACKO_CHECK(macko_check_handle("macko_get_pointer_mode", handle));
    MACKO_CHECK(macko_check_ptr("macko_get_pointer_mode", 2, "mode", mode));
    *mode = handle->pointer_mode;
    return macko_ok();
}
