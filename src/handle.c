/* Handle: binds a device, carries the stream, the pointer mode and the device's properties (read once here). */
#include "macko_internal.h"

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The properties of device dev (devprops.h); cudaSuccess or the first failing query's error. */
static cudaError_t read_props(int dev, macko_devprops *p)
{
    static const struct {
        enum cudaDeviceAttr attr;
        size_t offset;
    } q[] = {
        {cudaDevAttrMultiProcessorCount, offsetof(macko_devprops, sm_count)},
        {cudaDevAttrComputeCapabilityMajor, offsetof(macko_devprops, cc_major)},
        {cudaDevAttrComputeCapabilityMinor, offsetof(macko_devprops, cc_minor)},
        {cudaDevAttrMaxSharedMemoryPerBlockOptin, offsetof(macko_devprops, smem_per_block_optin)},
        {cudaDevAttrMaxSharedMemoryPerMultiprocessor, offsetof(macko_devprops, smem_per_sm)},
        {cudaDevAttrReservedSharedMemoryPerBlock, offsetof(macko_devprops, smem_reserved_per_block)},
        {cudaDevAttrMaxRegistersPerMultiprocessor, offsetof(macko_devprops, regs_per_sm)},
        {cudaDevAttrMaxThreadsPerMultiProcessor, offsetof(macko_devprops, max_threads_per_sm)},
        {cudaDevAttrL2CacheSize, offsetof(macko_devprops, l2_bytes)},
    };
    size_t i;
    memset(p, 0, sizeof *p);
    p->device = dev;
    for (i = 0; i < sizeof q / sizeof q[0]; i++) {
        const cudaError_t e = cudaDeviceGetAttribute((int *)((char *)p + q[i].offset), q[i].attr, dev);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

macko_status_t macko_create(macko_handle_t *handle)
{
    static const char fn[] = "macko_create";
    int dev = 0, n = 0;
    macko_devprops props;
    struct macko_handle_s *h;
    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 1, "handle is NULL");
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "no usable CUDA device");
    }
    if (cudaGetDevice(&dev) != cudaSuccess || read_props(dev, &props) != cudaSuccess) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "the current CUDA device cannot be queried");
    }
    h = (struct macko_handle_s *)calloc(1, sizeof *h);
    if (h == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    h->device = dev;
    h->stream = NULL;
    h->pointer_mode = MACKO_POINTER_MODE_HOST;
    h->props = props;
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
