/* What the library needs to know about a device, read once by macko_create (handle.c) and kept in the handle, so
 * that no compute routine and no kernel launcher queries the device. The launch plans (plan.h) are computed from
 * it; a host test fills one by hand. Plain C, no CUDA headers. */
#ifndef MACKO_DEVPROPS_H
#define MACKO_DEVPROPS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct macko_devprops {
    int device;                  /* CUDA ordinal the values were read from */
    int sm_count;                /* multiprocessors */
    int cc_major, cc_minor;      /* compute capability */
    int smem_per_block_optin;    /* bytes of shared memory one block may use after opting in */
    int smem_per_sm;             /* bytes of shared memory per multiprocessor */
    int smem_reserved_per_block; /* bytes the system reserves per resident block */
    int regs_per_sm;             /* 32-bit registers per multiprocessor */
    int max_threads_per_sm;      /* resident threads per multiprocessor */
    int l2_bytes;                /* L2 cache size */
} macko_devprops;

#ifdef __cplusplus
}
#endif

#endif
