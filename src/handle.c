/* Handle: binds a device, carries the stream and the pointer mode. */
#include "check.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>

int macko_arch_supported(int major, int minor)
{
    (void)minor; /* every 8.x runs the sm_80 code (8.0 SASS, or 8.6/8.9 of the default list); 9.0+ runs PTX if not */
    return major >= 8;
}

macko_status_t macko_status_of_cuda_error(int err)
{
    switch (err) {
    case cudaSuccess: return MACKO_STATUS_SUCCESS;
    case cudaErrorMemoryAllocation: return MACKO_STATUS_ALLOC_FAILED;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction: /* what older runtimes say for the same */
        return MACKO_STATUS_ARCH_MISMATCH;
    default: return MACKO_STATUS_EXECUTION_FAILED;
    }
}

macko_status_t macko_launch_fail(const struct macko_handle_s *h, const char *fn, int err)
{
    macko_status_t st = macko_status_of_cuda_error(err);
    if (st == MACKO_STATUS_ARCH_MISMATCH)
        return macko_fail(st, fn, 0,
                          "no kernel image for device %d (compute capability %d.%d): this libmacko was built for "
                          "other GPU architectures (CMAKE_CUDA_ARCHITECTURES; CUDA error %d)",
                          h->device, h->cc_major, h->cc_minor, err);
    return macko_fail(st, fn, 0, "kernel launch failed (CUDA error %d)", err);
}

macko_status_t macko_create(macko_handle_t *handle)
{
    static const char fn[] = "macko_create";
    int dev = 0, n = 0, sms = 0, major = 0, minor = 0;
    struct macko_handle_s *h;
    MACKO_CHECK(macko_check_ptr(fn, 1, "handle", handle));
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "no usable CUDA device");
    }
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "the current CUDA device cannot be queried");
    }
    if (!macko_arch_supported(major, minor))
        return macko_fail(MACKO_STATUS_ARCH_MISMATCH, fn, 0,
                          "device %d has compute capability %d.%d; macko needs 8.0 or newer (Ampere, Ada, Hopper or "
                          "later)",
                          dev, major, minor);
    h = (struct macko_handle_s *)calloc(1, sizeof *h);
    if (h == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    h->device = dev;
    h->stream = NULL;
    h->pointer_mode = MACKO_POINTER_MODE_HOST;
    h->sm_count = sms;
    h->cc_major = major;
    h->cc_minor = minor;
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
