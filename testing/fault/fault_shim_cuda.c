/* The shim's wrappers of the CUDA runtime calls, and the fake device (see fault_control.h). */
#define _GNU_SOURCE
#include "fault_internal.h"

/* The fake devices' current device (one thread uses them). */
static int fake_current;

void mf_fake_set_current_device(int device) { fake_current = device; }
int mf_fake_current_device(void) { return fake_current; }

/* ---------------------------------------------------------------- CUDA: allocations */

/* Fake device memory: host memory, 256-byte aligned like cudaMalloc's. */
static cudaError_t fake_alloc(void **p, size_t n)
{
    size_t m = n == 0 ? 256 : (n + 255) & ~(size_t)255;
    *p = aligned_alloc(256, m);
    return *p != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
}

static cudaError_t device_alloc(enum kind k, void **p, size_t n, cudaError_t (*real)(void **, size_t, void *),
                                void *ctx)
{
    cudaError_t e;
    if (mf_fault_point(k))
        return mf_fail_cuda(k);
    e = mf_fake ? fake_alloc(p, n) : real(p, n, ctx);
    if (e == cudaSuccess)
        mf_led_add(O_DEVICE, *p, n);
    return e;
}

static cudaError_t r_malloc(void **p, size_t n, void *ctx) { (void)ctx; return cudaMalloc(p, n); }
static cudaError_t r_malloc_async(void **p, size_t n, void *ctx) { return cudaMallocAsync(p, n, (cudaStream_t)ctx); }
static cudaError_t r_malloc_host(void **p, size_t n, void *ctx) { (void)ctx; return cudaMallocHost(p, n); }
static cudaError_t r_host_alloc(void **p, size_t n, void *ctx)
{
    return cudaHostAlloc(p, n, (unsigned)(uintptr_t)ctx);
}
static cudaError_t r_malloc_managed(void **p, size_t n, void *ctx)
{
    return cudaMallocManaged(p, n, (unsigned)(uintptr_t)ctx);
}

cudaError_t macko_fault_cudaMalloc(void **p, size_t n) { return device_alloc(K_cudaMalloc, p, n, r_malloc, NULL); }
cudaError_t macko_fault_cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    return device_alloc(K_cudaMallocAsync, p, n, r_malloc_async, (void *)s);
}
cudaError_t macko_fault_cudaMallocHost(void **p, size_t n)
{
    return device_alloc(K_cudaMallocHost, p, n, r_malloc_host, NULL);
}
cudaError_t macko_fault_cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    return device_alloc(K_cudaHostAlloc, p, n, r_host_alloc, (void *)(uintptr_t)flags);
}
cudaError_t macko_fault_cudaMallocManaged(void **p, size_t n, unsigned int flags)
{
    return device_alloc(K_cudaMallocManaged, p, n, r_malloc_managed, (void *)(uintptr_t)flags);
}

cudaError_t macko_fault_cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    cudaError_t e;
    if (mf_fault_point(K_cudaMallocPitch))
        return mf_fail_cuda(K_cudaMallocPitch);
    if (mf_fake) {
        *pitch = (width + 511) & ~(size_t)511;
        e = fake_alloc(p, *pitch * height);
    } else {
        e = cudaMallocPitch(p, pitch, width, height);
    }
    if (e == cudaSuccess)
        mf_led_add(O_DEVICE, *p, *pitch * height);
    return e;
}

static cudaError_t device_free(void *p, cudaError_t (*real)(void *, void *), void *ctx)
{
    if (p == NULL)
        return cudaSuccess;
    if (!mf_led_remove(O_DEVICE, p))
        return mf_fake ? cudaErrorInvalidValue : real(p, ctx);
    if (mf_fake) {
        free(p);
        return cudaSuccess;
    }
    return real(p, ctx);
}

static cudaError_t r_free(void *p, void *ctx) { (void)ctx; return cudaFree(p); }
static cudaError_t r_free_async(void *p, void *ctx) { return cudaFreeAsync(p, (cudaStream_t)ctx); }
static cudaError_t r_free_host(void *p, void *ctx) { (void)ctx; return cudaFreeHost(p); }

cudaError_t macko_fault_cudaFree(void *p) { return device_free(p, r_free, NULL); }
cudaError_t macko_fault_cudaFreeAsync(void *p, cudaStream_t s) { return device_free(p, r_free_async, (void *)s); }
cudaError_t macko_fault_cudaFreeHost(void *p) { return device_free(p, r_free_host, NULL); }

/* ---------------------------------------------------------------- CUDA: copies, synchronisation, errors */

cudaError_t macko_fault_cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    if (mf_fault_point(K_cudaMemcpy))
        return mf_fail_cuda(K_cudaMemcpy);
    if (mf_fake)
        return memmove(dst, src, n), cudaSuccess;
    return cudaMemcpy(dst, src, n, kind);
}

cudaError_t macko_fault_cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                        cudaStream_t s)
{
    if (mf_fault_point(K_cudaMemcpyAsync))
        return mf_fail_cuda(K_cudaMemcpyAsync);
    if (mf_fake)
        return memmove(dst, src, n), cudaSuccess;
    return cudaMemcpyAsync(dst, src, n, kind, s);
}

static void fake_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height)
{
    size_t r;
    for (r = 0; r < height; r++)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
}

cudaError_t macko_fault_cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, enum cudaMemcpyKind kind)
{
    if (mf_fault_point(K_cudaMemcpy2D))
        return mf_fail_cuda(K_cudaMemcpy2D);
    if (mf_fake)
        return fake_copy2d(dst, dpitch, src, spitch, width, height), cudaSuccess;
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t macko_fault_cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                          size_t height, enum cudaMemcpyKind kind, cudaStream_t s)
{
    if (mf_fault_point(K_cudaMemcpy2DAsync))
        return mf_fail_cuda(K_cudaMemcpy2DAsync);
    if (mf_fake)
        return fake_copy2d(dst, dpitch, src, spitch, width, height), cudaSuccess;
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s);
}

cudaError_t macko_fault_cudaMemset(void *p, int v, size_t n)
{
    if (mf_fault_point(K_cudaMemset))
        return mf_fail_cuda(K_cudaMemset);
    if (mf_fake)
        return memset(p, v, n), cudaSuccess;
    return cudaMemset(p, v, n);
}

cudaError_t macko_fault_cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    if (mf_fault_point(K_cudaMemsetAsync))
        return mf_fail_cuda(K_cudaMemsetAsync);
    if (mf_fake)
        return memset(p, v, n), cudaSuccess;
    return cudaMemsetAsync(p, v, n, s);
}

cudaError_t macko_fault_cudaStreamSynchronize(cudaStream_t s)
{
    if (mf_fault_point(K_cudaStreamSynchronize))
        return mf_fail_cuda(K_cudaStreamSynchronize);
    return mf_fake ? cudaSuccess : cudaStreamSynchronize(s);
}

cudaError_t macko_fault_cudaDeviceSynchronize(void)
{
    if (mf_fault_point(K_cudaDeviceSynchronize))
        return mf_fail_cuda(K_cudaDeviceSynchronize);
    return mf_fake ? cudaSuccess : cudaDeviceSynchronize();
}

cudaError_t macko_fault_cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
    if (mf_fault_point(K_cudaStreamIsCapturing))
        return mf_fail_cuda(K_cudaStreamIsCapturing);
    if (mf_fake)
        return *status = cudaStreamCaptureStatusNone, cudaSuccess;
    return cudaStreamIsCapturing(s, status);
}

/* The real runtime's last error is read (and so reset) in either mode: on the fake device it holds the failures of
 * the launches the kernels' stubs tried, which the fake device reports as successes. An injected failure of an
 * earlier call is reported once, as the runtime would. */
cudaError_t macko_fault_cudaGetLastError(void)
{
    cudaError_t real = cudaGetLastError(), p = mf_take_pending();
    if (mf_fault_point(K_cudaGetLastError))
        return mf_kinds[K_cudaGetLastError].cuda; /* a launch failure, read and reset like a real one */
    if (p != cudaSuccess)
        return p;
    return mf_fake ? cudaSuccess : real;
}

cudaError_t macko_fault_cudaPeekAtLastError(void)
{
    cudaError_t p;
    if (mf_fault_point(K_cudaPeekAtLastError))
        return mf_fail_cuda(K_cudaPeekAtLastError); /* stays pending: the next cudaGetLastError reads it */
    p = mf_peek_pending();
    if (p != cudaSuccess)
        return p;
    return mf_fake ? cudaSuccess : cudaPeekAtLastError();
}

cudaError_t macko_fault_cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                                         cudaStream_t s)
{
    if (mf_fault_point(K_cudaLaunchKernel))
        return mf_fail_cuda(K_cudaLaunchKernel);
    return mf_fake ? cudaSuccess : cudaLaunchKernel(func, grid, block, args, smem, s);
}

/* ---------------------------------------------------------------- CUDA: queries and settings */

cudaError_t macko_fault_cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    if (mf_fault_point(K_cudaFuncSetAttribute))
        return mf_fail_cuda(K_cudaFuncSetAttribute);
    return mf_fake ? cudaSuccess : cudaFuncSetAttribute(func, attr, value);
}

cudaError_t macko_fault_cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (mf_fault_point(K_cudaFuncGetAttributes))
        return mf_fail_cuda(K_cudaFuncGetAttributes);
    if (mf_fake) {
        memset(attr, 0, sizeof *attr);
        attr->maxThreadsPerBlock = 1024;
        attr->numRegs = 32;
        attr->ptxVersion = 90;
        attr->binaryVersion = 90;
        return cudaSuccess;
    }
    return cudaFuncGetAttributes(attr, func);
}

cudaError_t macko_fault_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block,
                                                                      size_t smem)
{
    if (mf_fault_point(K_cudaOccupancy))
        return mf_fail_cuda(K_cudaOccupancy);
    if (mf_fake)
        return *n = 2, cudaSuccess;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, func, block, smem);
}

/* The fake device answers as an H100 SXM (sm_90, 132 SMs) would; attributes not listed read 0. */
static int fake_attribute(enum cudaDeviceAttr attr)
{
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: return 132;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: return 232448;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: return 233472;
    case cudaDevAttrMaxSharedMemoryPerBlock: return 49152;
    case cudaDevAttrComputeCapabilityMajor: return 9;
    case cudaDevAttrComputeCapabilityMinor: return 0;
    case cudaDevAttrMaxThreadsPerBlock: return 1024;
    case cudaDevAttrMaxThreadsPerMultiProcessor: return 2048;
    case cudaDevAttrWarpSize: return 32;
    case cudaDevAttrL2CacheSize: return 52428800;
    default: return 0;
    }
}

cudaError_t macko_fault_cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr attr, int device)
{
    if (mf_fault_point(K_cudaDeviceGetAttribute))
        return mf_fail_cuda(K_cudaDeviceGetAttribute);
    if (mf_fake) {
        if (device < 0 || device >= mf_fake)
            return cudaErrorInvalidDevice;
        *v = fake_attribute(attr);
        return cudaSuccess;
    }
    return cudaDeviceGetAttribute(v, attr, device);
}

cudaError_t macko_fault_cudaGetDevice(int *device)
{
    if (mf_fault_point(K_cudaGetDevice))
        return mf_fail_cuda(K_cudaGetDevice);
    if (mf_fake)
        return *device = fake_current, cudaSuccess;
    return cudaGetDevice(device);
}

cudaError_t macko_fault_cudaSetDevice(int device)
{
    if (mf_fault_point(K_cudaSetDevice))
        return mf_fail_cuda(K_cudaSetDevice);
    if (mf_fake) {
        if (device < 0 || device >= mf_fake)
            return cudaErrorInvalidDevice;
        fake_current = device;
        return cudaSuccess;
    }
    return cudaSetDevice(device);
}

cudaError_t macko_fault_cudaGetDeviceCount(int *n)
{
    if (mf_fault_point(K_cudaGetDeviceCount))
        return mf_fail_cuda(K_cudaGetDeviceCount);
    if (mf_fake)
        return *n = mf_fake, cudaSuccess;
    return cudaGetDeviceCount(n);
}

cudaError_t macko_fault_cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *p)
{
    if (mf_fault_point(K_cudaPointerGetAttributes))
        return mf_fail_cuda(K_cudaPointerGetAttributes);
    if (mf_fake) {
        memset(attr, 0, sizeof *attr);
        if (mf_is_device_pointer(p)) {
            attr->type = cudaMemoryTypeDevice;
            attr->device = 0;
            attr->devicePointer = (void *)p;
        } else {
            attr->type = cudaMemoryTypeUnregistered;
            attr->device = -2;
        }
        return cudaSuccess;
    }
    return cudaPointerGetAttributes(attr, p);
}

cudaError_t macko_fault_cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (mf_fault_point(K_cudaMemGetInfo))
        return mf_fail_cuda(K_cudaMemGetInfo);
    if (mf_fake) {
        *total_bytes = (size_t)80 << 30;
        *free_bytes = *total_bytes - mf_ledger_now().device_bytes;
        return cudaSuccess;
    }
    return cudaMemGetInfo(free_bytes, total_bytes);
}
