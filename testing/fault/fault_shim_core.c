/* The fault-injection shim's core: the table of wrapped calls, the one decision per fault point, the ledger of live
 * objects and the control functions of fault_control.h. The wrappers are in fault_shim_libc.c and fault_shim_cuda.c;
 * all three are compiled without the forced include, so the calls there are the real ones. */
#define _GNU_SOURCE
#include "fault_internal.h"

#include <pthread.h>

/* ---------------------------------------------------------------- the table */

/* What an injected failure of each call looks like: libc calls return their failure value with errno = err,
 * CUDA calls return cuda (never a sticky error: the context stays usable). fwrite / fread transfer half of what was
 * asked first (a short write on a full disk, a short read), fclose closes the stream before it reports EIO. */
const mf_kind_info mf_kinds[K_COUNT] = {
    [K_malloc] = {"malloc", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_calloc] = {"calloc", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_realloc] = {"realloc", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_aligned_alloc] = {"aligned_alloc", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_posix_memalign] = {"posix_memalign", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_strdup] = {"strdup", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_realpath] = {"realpath", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_fdopen] = {"fdopen", MF_HOST_ALLOC, ENOMEM, cudaSuccess},
    [K_fopen] = {"fopen", MF_FILE, EIO, cudaSuccess},
    [K_fclose] = {"fclose", MF_FILE, EIO, cudaSuccess},
    [K_fwrite] = {"fwrite", MF_FILE, ENOSPC, cudaSuccess},
    [K_fread] = {"fread", MF_FILE, EIO, cudaSuccess},
    [K_fflush] = {"fflush", MF_FILE, ENOSPC, cudaSuccess},
    [K_fsync] = {"fsync", MF_FILE, EIO, cudaSuccess},
    [K_fdatasync] = {"fdatasync", MF_FILE, EIO, cudaSuccess},
    [K_rename] = {"rename", MF_FILE, EIO, cudaSuccess},
    [K_open] = {"open", MF_FILE, EIO, cudaSuccess},
    [K_fstat] = {"fstat", MF_FILE, EIO, cudaSuccess},
    [K_lstat] = {"lstat", MF_FILE, EIO, cudaSuccess},
    [K_stat] = {"stat", MF_FILE, EIO, cudaSuccess},
    [K_fchmod] = {"fchmod", MF_FILE, EIO, cudaSuccess},
    [K_cudaMalloc] = {"cudaMalloc", MF_DEVICE_ALLOC, 0, cudaErrorMemoryAllocation},
    [K_cudaMallocAsync] = {"cudaMallocAsync", MF_DEVICE_ALLOC, 0, cudaErrorMemoryAllocation},
    [K_cudaMallocHost] = {"cudaMallocHost", MF_DEVICE_ALLOC, 0, cudaErrorMemoryAllocation},
    [K_cudaHostAlloc] = {"cudaHostAlloc", MF_DEVICE_ALLOC, 0, cudaErrorMemoryAllocation},
    [K_cudaMallocManaged] = {"cudaMallocManaged", MF_DEVICE_ALLOC, 0, cudaErrorMemoryAllocation},
    [K_cudaMallocPitch] = {"cudaMallocPitch", MF_DEVICE_ALLOC, 0, cudaErrorMemoryAllocation},
    [K_cudaMemcpy] = {"cudaMemcpy", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaMemcpyAsync] = {"cudaMemcpyAsync", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaMemcpy2D] = {"cudaMemcpy2D", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaMemcpy2DAsync] = {"cudaMemcpy2DAsync", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaMemset] = {"cudaMemset", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaMemsetAsync] = {"cudaMemsetAsync", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaStreamSynchronize] = {"cudaStreamSynchronize", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaDeviceSynchronize] = {"cudaDeviceSynchronize", MF_CUDA, 0, cudaErrorUnknown},
    [K_cudaStreamIsCapturing] = {"cudaStreamIsCapturing", MF_CUDA, 0, cudaErrorInvalidValue},
    [K_cudaGetLastError] = {"cudaGetLastError", MF_CUDA, 0, cudaErrorLaunchOutOfResources},
    [K_cudaPeekAtLastError] = {"cudaPeekAtLastError", MF_CUDA, 0, cudaErrorLaunchOutOfResources},
    [K_cudaLaunchKernel] = {"cudaLaunchKernel", MF_CUDA, 0, cudaErrorLaunchOutOfResources},
    [K_cudaFuncSetAttribute] = {"cudaFuncSetAttribute", MF_CUDA, 0, cudaErrorInvalidValue},
    [K_cudaFuncGetAttributes] = {"cudaFuncGetAttributes", MF_CUDA, 0, cudaErrorInvalidValue},
    [K_cudaOccupancy] = {"cudaOccupancyMaxActiveBlocksPerMultiprocessor", MF_CUDA, 0, cudaErrorInvalidValue},
    [K_cudaDeviceGetAttribute] = {"cudaDeviceGetAttribute", MF_CUDA, 0, cudaErrorInvalidValue},
    [K_cudaGetDevice] = {"cudaGetDevice", MF_CUDA, 0, cudaErrorDevicesUnavailable},
    [K_cudaSetDevice] = {"cudaSetDevice", MF_CUDA, 0, cudaErrorDevicesUnavailable},
    [K_cudaGetDeviceCount] = {"cudaGetDeviceCount", MF_CUDA, 0, cudaErrorNoDevice},
    [K_cudaPointerGetAttributes] = {"cudaPointerGetAttributes", MF_CUDA, 0, cudaErrorInvalidValue},
    [K_cudaMemGetInfo] = {"cudaMemGetInfo", MF_CUDA, 0, cudaErrorInvalidValue},
};

/* ---------------------------------------------------------------- state */

#define TRACE_MAX 512
#define FIRED_MAX 4096

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long armed_k;     /* 0: off */
static int armed_sticky;
static long points, points_cat[MF_CATEGORIES];
static enum kind trace[TRACE_MAX];
static enum kind fired[FIRED_MAX];
static int n_fired;
int mf_fake;
static cudaError_t pending; /* the emulated runtime's last error (injected failures only) */

/* One decision for every fault point: counts it and says whether it fails. */
int mf_fault_point(enum kind k)
{
    int fail;
    pthread_mutex_lock(&mu);
    if (points < TRACE_MAX)
        trace[points] = k;
    points++;
    points_cat[mf_kinds[k].cat]++;
    fail = armed_k > 0 && (points == armed_k || (armed_sticky && points > armed_k));
    if (fail && n_fired < FIRED_MAX)
        fired[n_fired++] = k;
    pthread_mutex_unlock(&mu);
    return fail;
}

int mf_fail_errno(enum kind k)
{
    errno = mf_kinds[k].err;
    return -1;
}

cudaError_t mf_fail_cuda(enum kind k)
{
    pthread_mutex_lock(&mu);
    pending = mf_kinds[k].cuda;
    pthread_mutex_unlock(&mu);
    return mf_kinds[k].cuda;
}

cudaError_t mf_take_pending(void)
{
    cudaError_t p;
    pthread_mutex_lock(&mu);
    p = pending;
    pending = cudaSuccess;
    pthread_mutex_unlock(&mu);
    return p;
}

cudaError_t mf_peek_pending(void)
{
    cudaError_t p;
    pthread_mutex_lock(&mu);
    p = pending;
    pthread_mutex_unlock(&mu);
    return p;
}

void mf_arm(long k, int sticky)
{
    pthread_mutex_lock(&mu);
    armed_k = k > 0 ? k : 0;
    armed_sticky = sticky;
    points = 0;
    memset(points_cat, 0, sizeof points_cat);
    n_fired = 0;
    pthread_mutex_unlock(&mu);
}

void mf_disarm(void)
{
    pthread_mutex_lock(&mu);
    armed_k = 0;
    pthread_mutex_unlock(&mu);
}
long mf_points(void) { return points; }
long mf_points_in(mf_category c) { return c < MF_CATEGORIES ? points_cat[c] : 0; }
int mf_fired(void) { return n_fired; }
const char *mf_fired_name(int i) { return i >= 0 && i < n_fired ? mf_kinds[fired[i]].name : "?"; }
mf_category mf_fired_category(int i) { return i >= 0 && i < n_fired ? mf_kinds[fired[i]].cat : MF_CATEGORIES; }
const char *mf_point_name(long i) { return i >= 0 && i < points && i < TRACE_MAX ? mf_kinds[trace[i]].name : "?"; }

const char *mf_category_name(mf_category c)
{
    static const char *names[MF_CATEGORIES] = {"host allocation", "device allocation", "CUDA call", "file call"};
    return c < MF_CATEGORIES ? names[c] : "?";
}

int mf_pending_cuda_error(void) { return (int)pending; }
void mf_clear_pending_cuda_error(void) { pending = cudaSuccess; }
void mf_set_fake_device(int devices) { mf_fake = devices > 0 ? devices : 0; }
int mf_fake_device(void) { return mf_fake; }

/* ---------------------------------------------------------------- the ledger */

typedef struct {
    const void *p; /* for O_FD: the descriptor + 1 */
    size_t n;
    enum mf_obj kind;
} entry;

static entry *ledger;
static size_t ledger_len, ledger_cap;
static long foreign;

void mf_led_add(enum mf_obj kind, const void *p, size_t n)
{
    pthread_mutex_lock(&mu);
    if (ledger_len == ledger_cap) {
        size_t cap = ledger_cap ? 2 * ledger_cap : 256;
        entry *e = (entry *)realloc(ledger, cap * sizeof *e);
        if (e == NULL)
            abort(); /* the test harness itself is out of memory */
        ledger = e;
        ledger_cap = cap;
    }
    ledger[ledger_len].p = p;
    ledger[ledger_len].n = n;
    ledger[ledger_len].kind = kind;
    ledger_len++;
    pthread_mutex_unlock(&mu);
}

int mf_led_remove(enum mf_obj kind, const void *p)
{
    size_t i;
    pthread_mutex_lock(&mu);
    for (i = ledger_len; i-- > 0;) {
        if (ledger[i].p == p && ledger[i].kind == kind) {
            ledger[i] = ledger[--ledger_len];
            pthread_mutex_unlock(&mu);
            return 1;
        }
    }
    foreign++;
    pthread_mutex_unlock(&mu);
    return 0;
}

mf_ledger mf_ledger_now(void)
{
    mf_ledger l;
    size_t i;
    memset(&l, 0, sizeof l);
    pthread_mutex_lock(&mu);
    for (i = 0; i < ledger_len; i++) {
        switch (ledger[i].kind) {
        case O_HOST: l.host++; l.host_bytes += ledger[i].n; break;
        case O_DEVICE: l.device++; l.device_bytes += ledger[i].n; break;
        case O_FILE: l.files++; break;
        case O_FD: l.fds++; break;
        }
    }
    l.foreign_releases = foreign;
    pthread_mutex_unlock(&mu);
    return l;
}

int mf_is_device_pointer(const void *p)
{
    size_t i;
    int r = 0;
    pthread_mutex_lock(&mu);
    for (i = 0; i < ledger_len && !r; i++)
        r = ledger[i].kind == O_DEVICE && (const char *)p >= (const char *)ledger[i].p &&
            (const char *)p < (const char *)ledger[i].p + ledger[i].n;
    pthread_mutex_unlock(&mu);
    return r;
}
