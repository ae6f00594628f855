/* Fault-injection shim, force-included into every source of the test-only library objects macko_fault_objects
 * (testing/fault/CMakeLists.txt: the C sources of src/ and the CUDA sources of kernels/ of the release library,
 * compiled again with -include of this file). The release library never sees it.
 *
 * It first includes every system and CUDA header whose functions it wraps, so that their declarations stay as they
 * are, and then renames the library's calls of those functions with function-like macros to macko_fault_* wrappers
 * (fault_shim.c): allocation, CUDA runtime and file calls. A new call site of any wrapped function is covered without
 * any change here; a call of a function not listed below is not (add it to the list and to fault_shim.c's table).
 * Device code (__CUDA_ARCH__) is left alone. */
#ifndef MACKO_FAULT_SHIM_H
#define MACKO_FAULT_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#ifdef __cplusplus
#include <cuda_runtime.h>
#else
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
#define MF_DV(v) = v
extern "C" {
#else
#define MF_DV(v)
#endif

/* ---- host memory */
void *macko_fault_malloc(size_t n);
void *macko_fault_calloc(size_t n, size_t size);
void *macko_fault_realloc(void *p, size_t n);
void *macko_fault_aligned_alloc(size_t align, size_t n);
int macko_fault_posix_memalign(void **p, size_t align, size_t n);
char *macko_fault_strdup(const char *s);
char *macko_fault_realpath(const char *path, char *resolved);
void macko_fault_free(void *p);

/* ---- files */
FILE *macko_fault_fopen(const char *path, const char *mode);
FILE *macko_fault_fdopen(int fd, const char *mode);
int macko_fault_fclose(FILE *f);
size_t macko_fault_fwrite(const void *p, size_t size, size_t n, FILE *f);
size_t macko_fault_fread(void *p, size_t size, size_t n, FILE *f);
int macko_fault_fflush(FILE *f);
int macko_fault_fsync(int fd);
int macko_fault_fdatasync(int fd);
int macko_fault_rename(const char *from, const char *to);
int macko_fault_open(const char *path, int flags, ...);
int macko_fault_close(int fd);
int macko_fault_fstat(int fd, struct stat *sb);
int macko_fault_lstat(const char *path, struct stat *sb);
int macko_fault_stat(const char *path, struct stat *sb);
int macko_fault_fchmod(int fd, mode_t mode);

/* ---- CUDA runtime */
cudaError_t macko_fault_cudaMalloc(void **p, size_t n);
cudaError_t macko_fault_cudaMallocAsync(void **p, size_t n, cudaStream_t s);
cudaError_t macko_fault_cudaMallocHost(void **p, size_t n);
cudaError_t macko_fault_cudaHostAlloc(void **p, size_t n, unsigned int flags);
cudaError_t macko_fault_cudaMallocManaged(void **p, size_t n, unsigned int flags MF_DV(cudaMemAttachGlobal));
cudaError_t macko_fault_cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height);
cudaError_t macko_fault_cudaFree(void *p);
cudaError_t macko_fault_cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t macko_fault_cudaFreeHost(void *p);
cudaError_t macko_fault_cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind);
cudaError_t macko_fault_cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                        cudaStream_t s MF_DV(0));
cudaError_t macko_fault_cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, enum cudaMemcpyKind kind);
cudaError_t macko_fault_cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                          size_t height, enum cudaMemcpyKind kind, cudaStream_t s MF_DV(0));
cudaError_t macko_fault_cudaMemset(void *p, int v, size_t n);
cudaError_t macko_fault_cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s MF_DV(0));
cudaError_t macko_fault_cudaStreamSynchronize(cudaStream_t s);
cudaError_t macko_fault_cudaDeviceSynchronize(void);
cudaError_t macko_fault_cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status);
cudaError_t macko_fault_cudaGetLastError(void);
cudaError_t macko_fault_cudaPeekAtLastError(void);
cudaError_t macko_fault_cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                                         cudaStream_t s);
cudaError_t macko_fault_cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value);
cudaError_t macko_fault_cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func);
cudaError_t macko_fault_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block,
                                                                      size_t smem);
cudaError_t macko_fault_cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr attr, int device);
cudaError_t macko_fault_cudaGetDevice(int *device);
cudaError_t macko_fault_cudaSetDevice(int device);
cudaError_t macko_fault_cudaGetDeviceCount(int *n);
cudaError_t macko_fault_cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *p);
cudaError_t macko_fault_cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);

#ifdef __cplusplus
}

/* The CUDA runtime's C++ overloads (typed pointers, kernels as function pointers) of the wrapped calls. */
template <class T> static inline cudaError_t macko_fault_cudaMalloc(T **p, size_t n)
{
    return macko_fault_cudaMalloc(reinterpret_cast<void **>(p), n);
}
template <class T> static inline cudaError_t macko_fault_cudaMallocAsync(T **p, size_t n, cudaStream_t s)
{
    return macko_fault_cudaMallocAsync(reinterpret_cast<void **>(p), n, s);
}
template <class T> static inline cudaError_t macko_fault_cudaFuncSetAttribute(T *func, enum cudaFuncAttribute a, int v)
{
    return macko_fault_cudaFuncSetAttribute((const void *)func, a, v);
}
template <class T> static inline cudaError_t macko_fault_cudaFuncGetAttributes(struct cudaFuncAttributes *at, T *func)
{
    return macko_fault_cudaFuncGetAttributes(at, (const void *)func);
}
template <class T>
static inline cudaError_t macko_fault_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, T func, int block,
                                                                                    size_t smem)
{
    return macko_fault_cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void *)func, block, smem);
}
template <class T>
static inline cudaError_t macko_fault_cudaLaunchKernel(const T *func, dim3 grid, dim3 block, void **args,
                                                       size_t smem = 0, cudaStream_t s = 0)
{
    return macko_fault_cudaLaunchKernel((const void *)func, grid, block, args, smem, s);
}
#endif

#if !defined(MACKO_FAULT_IMPL) && !defined(__CUDA_ARCH__) && !defined(__cplusplus)
/* The C library's calls, in the C sources only: the CUDA sources make none, and the C++ headers they include later
 * (libcu++, CUB) name these functions in ways a macro cannot follow (cuda::std::malloc). Function-like macros, so
 * that `struct stat` and other uses of the names that are not calls stay as they are. */
#undef malloc
#undef calloc
#undef realloc
#undef free
#define malloc(...) macko_fault_malloc(__VA_ARGS__)
#define calloc(...) macko_fault_calloc(__VA_ARGS__)
#define realloc(...) macko_fault_realloc(__VA_ARGS__)
#define aligned_alloc(...) macko_fault_aligned_alloc(__VA_ARGS__)
#define posix_memalign(...) macko_fault_posix_memalign(__VA_ARGS__)
#define strdup(...) macko_fault_strdup(__VA_ARGS__)
#define realpath(...) macko_fault_realpath(__VA_ARGS__)
#define free(...) macko_fault_free(__VA_ARGS__)

#define fopen(...) macko_fault_fopen(__VA_ARGS__)
#define fdopen(...) macko_fault_fdopen(__VA_ARGS__)
#define fclose(...) macko_fault_fclose(__VA_ARGS__)
#define fwrite(...) macko_fault_fwrite(__VA_ARGS__)
#define fread(...) macko_fault_fread(__VA_ARGS__)
#define fflush(...) macko_fault_fflush(__VA_ARGS__)
#define fsync(...) macko_fault_fsync(__VA_ARGS__)
#define fdatasync(...) macko_fault_fdatasync(__VA_ARGS__)
#define rename(...) macko_fault_rename(__VA_ARGS__)
#define open(...) macko_fault_open(__VA_ARGS__)
#define close(...) macko_fault_close(__VA_ARGS__)
#define fstat(...) macko_fault_fstat(__VA_ARGS__)
#define lstat(...) macko_fault_lstat(__VA_ARGS__)
#define stat(...) macko_fault_stat(__VA_ARGS__)
#define fchmod(...) macko_fault_fchmod(__VA_ARGS__)
#endif

#if !defined(MACKO_FAULT_IMPL) && !defined(__CUDA_ARCH__)
/* #undef first: with per-thread default streams some of these names are macros of the runtime's headers. */
#undef cudaMalloc
#undef cudaMallocAsync
#undef cudaMallocHost
#undef cudaHostAlloc
#undef cudaMallocManaged
#undef cudaMallocPitch
#undef cudaFree
#undef cudaFreeAsync
#undef cudaFreeHost
#undef cudaMemcpy
#undef cudaMemcpyAsync
#undef cudaMemcpy2D
#undef cudaMemcpy2DAsync
#undef cudaMemset
#undef cudaMemsetAsync
#undef cudaStreamSynchronize
#undef cudaDeviceSynchronize
#undef cudaStreamIsCapturing
#undef cudaGetLastError
#undef cudaPeekAtLastError
#undef cudaLaunchKernel
#undef cudaFuncSetAttribute
#undef cudaFuncGetAttributes
#undef cudaOccupancyMaxActiveBlocksPerMultiprocessor
#undef cudaDeviceGetAttribute
#undef cudaGetDevice
#undef cudaSetDevice
#undef cudaGetDeviceCount
#undef cudaPointerGetAttributes
#undef cudaMemGetInfo
#define cudaMalloc(...) macko_fault_cudaMalloc(__VA_ARGS__)
#define cudaMallocAsync(...) macko_fault_cudaMallocAsync(__VA_ARGS__)
#define cudaMallocHost(...) macko_fault_cudaMallocHost(__VA_ARGS__)
#define cudaHostAlloc(...) macko_fault_cudaHostAlloc(__VA_ARGS__)
#define cudaMallocManaged(...) macko_fault_cudaMallocManaged(__VA_ARGS__)
#define cudaMallocPitch(...) macko_fault_cudaMallocPitch(__VA_ARGS__)
#define cudaFree(...) macko_fault_cudaFree(__VA_ARGS__)
#define cudaFreeAsync(...) macko_fault_cudaFreeAsync(__VA_ARGS__)
#define cudaFreeHost(...) macko_fault_cudaFreeHost(__VA_ARGS__)
#define cudaMemcpy(...) macko_fault_cudaMemcpy(__VA_ARGS__)
#define cudaMemcpyAsync(...) macko_fault_cudaMemcpyAsync(__VA_ARGS__)
#define cudaMemcpy2D(...) macko_fault_cudaMemcpy2D(__VA_ARGS__)
#define cudaMemcpy2DAsync(...) macko_fault_cudaMemcpy2DAsync(__VA_ARGS__)
#define cudaMemset(...) macko_fault_cudaMemset(__VA_ARGS__)
#define cudaMemsetAsync(...) macko_fault_cudaMemsetAsync(__VA_ARGS__)
#define cudaStreamSynchronize(...) macko_fault_cudaStreamSynchronize(__VA_ARGS__)
#define cudaDeviceSynchronize(...) macko_fault_cudaDeviceSynchronize(__VA_ARGS__)
#define cudaStreamIsCapturing(...) macko_fault_cudaStreamIsCapturing(__VA_ARGS__)
#define cudaGetLastError(...) macko_fault_cudaGetLastError(__VA_ARGS__)
#define cudaPeekAtLastError(...) macko_fault_cudaPeekAtLastError(__VA_ARGS__)
#define cudaLaunchKernel(...) macko_fault_cudaLaunchKernel(__VA_ARGS__)
#define cudaFuncSetAttribute(...) macko_fault_cudaFuncSetAttribute(__VA_ARGS__)
#define cudaFuncGetAttributes(...) macko_fault_cudaFuncGetAttributes(__VA_ARGS__)
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor(...)                                                             \
    macko_fault_cudaOccupancyMaxActiveBlocksPerMultiprocessor(__VA_ARGS__)
#define cudaDeviceGetAttribute(...) macko_fault_cudaDeviceGetAttribute(__VA_ARGS__)
#define cudaGetDevice(...) macko_fault_cudaGetDevice(__VA_ARGS__)
#define cudaSetDevice(...) macko_fault_cudaSetDevice(__VA_ARGS__)
#define cudaGetDeviceCount(...) macko_fault_cudaGetDeviceCount(__VA_ARGS__)
#define cudaPointerGetAttributes(...) macko_fault_cudaPointerGetAttributes(__VA_ARGS__)
#define cudaMemGetInfo(...) macko_fault_cudaMemGetInfo(__VA_ARGS__)
#endif

#endif
