/* Control of the fault-injection shim (fault_shim.c) for the fault tests: arm a failure, read the ledger.
 *
 * The shim sits between the library objects built with fault_shim.h force-included (macko_fault_objects) and libc /
 * the CUDA runtime. Every wrapped call that can fail is a "fault point" and passes through one decision (one table
 * row per wrapped function: its name, its category and the error an injected failure returns). Points are counted
 * globally, in call order, from the last mf_arm(); mf_arm(k, 0) makes the k-th point fail once (the error is not
 * sticky: the next call of that function works again), mf_arm(k, 1) makes the k-th and every later point fail.
 * Releasing calls (free, cudaFree*, close) are never fault points; they only update the ledger. */
#ifndef MACKO_FAULT_CONTROL_H
#define MACKO_FAULT_CONTROL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MF_HOST_ALLOC = 0,   /* malloc & co.; also fdopen and realpath, which fail when memory runs out (ENOMEM) */
    MF_DEVICE_ALLOC = 1, /* cudaMalloc* (cudaErrorMemoryAllocation) */
    MF_CUDA = 2,         /* every other CUDA runtime call, cudaGetLastError after a launch included */
    MF_FILE = 3,         /* fopen, fwrite (short write, ENOSPC), fflush, fsync, fclose, rename, open, stat, ... */
    MF_CATEGORIES = 4
} mf_category;

/* k >= 1: the k-th fault point from now fails (sticky: and every later one); k = 0: nothing fails. Resets the point
 * counter and the list of injected failures. */
void mf_arm(long k, int sticky);
/* Nothing fails any more; the counter and the list of injected failures stay for reading. */
void mf_disarm(void);
long mf_points(void);                 /* fault points passed since mf_arm / mf_disarm */
long mf_points_in(mf_category c);
int mf_fired(void);                   /* failures injected since mf_arm */
const char *mf_fired_name(int i);     /* i < mf_fired(): the failed call ("cudaMalloc") */
mf_category mf_fired_category(int i);
const char *mf_point_name(long i);    /* i < mf_points() (the first 512): the calls in order, for messages */
const char *mf_category_name(mf_category c);

/* Live objects the library holds through the shim. */
typedef struct {
    long host, device, files, fds; /* allocations (host incl. pinned), device allocations, FILE streams, descriptors */
    size_t host_bytes, device_bytes;
    long foreign_releases;         /* free / cudaFree / fclose / close of something the ledger does not hold */
} mf_ledger;
mf_ledger mf_ledger_now(void);

/* The CUDA error the emulated runtime would return from the next cudaGetLastError (an injected CUDA failure is
 * recorded there, as the runtime records real ones); 0 when none. */
int mf_pending_cuda_error(void);
void mf_clear_pending_cuda_error(void);

/* Fake devices (for machines without a GPU): device memory is host memory, copies are memcpy, device queries answer
 * as an H100 would, kernels are not run (a launch reports success unless a failure is injected). devices = how many
 * (0: off, the default); set before the first library call. Device 0 is current at first. */
void mf_set_fake_device(int devices);
int mf_fake_device(void); /* the number of fake devices; 0 when the real runtime is used */
void mf_fake_set_current_device(int device); /* what the library's cudaGetDevice then returns */
int mf_fake_current_device(void);
/* The fake device's view of a pointer: 1 if it lies inside a live fake device allocation. */
int mf_is_device_pointer(const void *p);

#ifdef __cplusplus
}
#endif

#endif
