/* Handle: binds a device, carries the stream, the pointer mode and the device's properties (read once here). */
#include "check.h"

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>
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
                          h->device, h->props.cc_major, h->props.cc_minor, err);
    return macko_fail(st, fn, 0, "kernel launch failed (CUDA error %d)", err);
}

macko_status_t macko_create(macko_handle_t *handle)
{
    static const char fn[] = "macko_create";
    int dev = 0, n = 0;
    macko_devprops props;
    struct macko_handle_s *h;
    MACKO_CHECK(macko_check_ptr(fn, 1, "handle", handle));
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "no usable CUDA device");
    }
    if (cudaGetDevice(&dev) != cudaSuccess || read_props(dev, &props) != cudaSuccess) {
        cudaGetLastError();
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 0, "the current CUDA device cannot be queried");
    }
    if (!macko_arch_supported(props.cc_major, props.cc_minor))
        return macko_fail(MACKO_STATUS_ARCH_MISMATCH, fn, 0,
                          "device %d has compute capability %d.%d; macko needs 8.0 or newer (Ampere, Ada, Hopper or "
                          "later)",
                          dev, props.cc_major, props.cc_minor);
    h = (struct macko_handle_s *)calloc(1, sizeof *h);
    if (h == NULL)
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    h->device = dev;
    h->stream = NULL;
    h->pointer_mode = MACKO_POINTER_MODE_HOST;
    h->props = props;
    /* The tensor-core SpMM paths' workspace (plan.h): made here so that no compute call allocates. */
    {
        cudaError_t e = cudaMalloc(&h->ws.base, (size_t)MACKO_WS_BYTES);
        if (e == cudaSuccess)
            e = cudaMemset(h->ws.base, 0, (size_t)MACKO_WS_COUNTERS * sizeof(int));
        if (e != cudaSuccess) {
            /* as cublasCreate: out of memory is ALLOC_FAILED, any other failure NOT_INITIALIZED */
            const macko_status_t st =
                e == cudaErrorMemoryAllocation ? MACKO_STATUS_ALLOC_FAILED : MACKO_STATUS_NOT_INITIALIZED;
            cudaFree(h->ws.base);
            cudaGetLastError();
            free(h);
            return macko_fail(st, fn, 0, "cannot make the %lld-byte device workspace (CUDA error %d)",
                              (long long)MACKO_WS_BYTES, (int)e);
        }
        h->ws.counters = (int *)h->ws.base;
        h->ws.partial = (float *)((char *)h->ws.base + (size_t)MACKO_WS_COUNTERS * sizeof(int));
        h->ws.partial_bytes = MACKO_WS_BYTES - (int64_t)MACKO_WS_COUNTERS * (int64_t)sizeof(int);
        h->ws.panel_bytes = h->ws.partial_bytes;
    }
    *handle = h;
    return macko_ok();
}

macko_status_t macko_destroy(macko_handle_t handle)
{
    if (handle != NULL && handle->ws.base != NULL) {
        int cur = -1, switched = 0;
        if (cudaGetDevice(&cur) == cudaSuccess && cur != handle->device)
            switched = cudaSetDevice(handle->device) == cudaSuccess;
        cudaFree(handle->ws.base); /* waits for the work that may still use it */
        if (switched)
            cudaSetDevice(cur);
        cudaGetLastError(); /* destroying cannot fail for the caller; no error is left for the next call */
    }
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

_Static_assert((int64_t)MACKO_WORKSPACE_MIN_BYTES == MACKO_WS_BYTES, "the smallest workspace of the caller is the handle's own size");

/* Device memory the handle's kernels can write: 1 when cudaPointerGetAttributes says device memory of `device` or
 * managed memory, or cannot tell (as the compute calls' pointer checks: the kernels decide); else 0. */
static int workspace_usable(const void *p, int device)
{
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    return at.type == cudaMemoryTypeManaged || (at.type == cudaMemoryTypeDevice && at.device == device);
}

macko_status_t macko_set_workspace(macko_handle_t handle, void *workspace, size_t workspace_bytes)
{
    static const char fn[] = "macko_set_workspace";
    MACKO_CHECK(macko_check_handle(fn, handle));
    if (workspace == NULL && workspace_bytes != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2,
                          "workspace is NULL with workspace_bytes = %zu (NULL goes with 0: the handle's own workspace)",
                          workspace_bytes);
    if (workspace != NULL && ((uintptr_t)workspace & 255u) != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2, "workspace %p is not 256-byte aligned", workspace);
    if (workspace != NULL && !workspace_usable(workspace, handle->device))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2,
                          "workspace %p is not device memory of the handle's device %d", workspace, handle->device);
    if (workspace != NULL && workspace_bytes < MACKO_WORKSPACE_MIN_BYTES)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3,
                          "workspace_bytes is %zu; a workspace must hold at least MACKO_WORKSPACE_MIN_BYTES (%zu)",
                          workspace_bytes, (size_t)MACKO_WORKSPACE_MIN_BYTES);
    if (workspace == NULL) {
        handle->ws.partial = (float *)((char *)handle->ws.base + (size_t)MACKO_WS_COUNTERS * sizeof(int));
        handle->ws.panel_bytes = handle->ws.partial_bytes;
    } else {
        handle->ws.partial = (float *)workspace;
        handle->ws.panel_bytes = workspace_bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)workspace_bytes;
    }
    return macko_ok();
}
