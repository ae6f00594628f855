/* Private helpers of the device-side matrix routines (device.c, device_convert.c, analysis.c). */
#ifndef MACKO_DEVICE_COMMON_H
#define MACKO_DEVICE_COMMON_H

#include "macko_internal.h"

#include <cuda_runtime_api.h>

/* Makes `device` current for the duration of a call and restores the caller's device afterwards. */
typedef struct {
    int prev;
    int switched;
} macko_dev_guard;
cudaError_t macko_dev_enter(macko_dev_guard *g, int device);
void macko_dev_leave(const macko_dev_guard *g);

/* ALLOC_FAILED for an out-of-memory error, ARCH_MISMATCH when no kernel image fits the device, EXECUTION_FAILED for
 * anything else (macko_status_of_cuda_error). Clears the runtime's last error. */
macko_status_t macko_cuda_status(cudaError_t e);

/* 0 when p is plainly host memory that `device` cannot dereference; 1 otherwise (device, managed, mapped pinned
 * memory, or a device with pageable memory access). */
int macko_dev_ptr_usable(const void *p, int device);

/* Allocates device arrays for m's rows / entries_padded / type / rp64 on the current device (each at least 16 bytes,
 * so no pointer is NULL; cudaMalloc aligns to 256 bytes). row_ptr is skipped when want_row_ptr is 0. */
cudaError_t macko_dev_arrays_alloc(const struct macko_mat_s *m, macko_arrays *out, int want_row_ptr);
void macko_dev_arrays_release(macko_arrays *a); /* current device; NULL members are fine */

/* Copies the device arrays of m into freshly allocated host arrays in `host` (synchronous on stream). m must be on
 * the current device. */
macko_status_t macko_dev_download_arrays(const struct macko_mat_s *m, macko_stream_t stream, macko_arrays *host);

/* Uploads m's host arrays to the current device on stream into fresh device arrays (returned in dev). */
macko_status_t macko_dev_upload_arrays(const struct macko_mat_s *m, macko_stream_t stream, macko_arrays *dev);

#endif
