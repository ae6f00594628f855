/* Shared by the shim's own sources (fault_shim*.c), which are compiled without the forced include. */
#ifndef MACKO_FAULT_INTERNAL_H
#define MACKO_FAULT_INTERNAL_H

#define MACKO_FAULT_IMPL
#include "fault_shim.h"
#include "fault_control.h"

/* One row of the table per wrapped call that can fail. */
enum kind {
    K_malloc, K_calloc, K_realloc, K_aligned_alloc, K_posix_memalign, K_strdup, K_realpath, K_fdopen,
    K_fopen, K_fclose, K_fwrite, K_fread, K_fflush, K_fsync, K_fdatasync, K_rename, K_open, K_fstat, K_lstat,
    K_stat, K_fchmod,
    K_cudaMalloc, K_cudaMallocAsync, K_cudaMallocHost, K_cudaHostAlloc, K_cudaMallocManaged, K_cudaMallocPitch,
    K_cudaMemcpy, K_cudaMemcpyAsync, K_cudaMemcpy2D, K_cudaMemcpy2DAsync, K_cudaMemset, K_cudaMemsetAsync,
    K_cudaStreamSynchronize, K_cudaDeviceSynchronize, K_cudaStreamIsCapturing, K_cudaGetLastError,
    K_cudaPeekAtLastError, K_cudaLaunchKernel, K_cudaFuncSetAttribute, K_cudaFuncGetAttributes,
    K_cudaOccupancy, K_cudaDeviceGetAttribute, K_cudaGetDevice, K_cudaSetDevice, K_cudaGetDeviceCount,
    K_cudaPointerGetAttributes, K_cudaMemGetInfo,
    K_COUNT
};

typedef struct {
    const char *name;
    mf_category cat;
    int err;          /* libc: errno of an injected failure */
    cudaError_t cuda; /* CUDA: the error an injected failure returns */
} mf_kind_info;
extern const mf_kind_info mf_kinds[K_COUNT];

/* The one decision: counts a fault point of kind k and says whether it fails. */
int mf_fault_point(enum kind k);
/* An injected failure: errno set, -1 returned / the table's CUDA error recorded as pending and returned. */
int mf_fail_errno(enum kind k);
cudaError_t mf_fail_cuda(enum kind k);
/* Reads and resets the pending CUDA error. */
cudaError_t mf_take_pending(void);
cudaError_t mf_peek_pending(void);
extern int mf_fake;

enum mf_obj { O_HOST, O_DEVICE, O_FILE, O_FD };
void mf_led_add(enum mf_obj kind, const void *p, size_t n);
int mf_led_remove(enum mf_obj kind, const void *p); /* 0 (a foreign release counted) when not held */

#endif
