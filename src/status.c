/* Status names/strings, version, and the thread-local error details (xerbla's information without printing). */
#include "check.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local int tl_pos;
static _Thread_local char tl_msg[512];

macko_status_t macko_fail(macko_status_t st, const char *fn, int pos, const char *fmt, ...)
{
    int n;
    va_list ap;
    tl_pos = pos;
    if (pos > 0)
        n = snprintf(tl_msg, sizeof tl_msg, "%s: argument %d: ", fn, pos);
    else
        n = snprintf(tl_msg, sizeof tl_msg, "%s: ", fn);
    if (n < 0 || (size_t)n >= sizeof tl_msg)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(tl_msg + n, sizeof tl_msg - (size_t)n, fmt, ap);
    va_end(ap);
    macko_log("%s -> %s", tl_msg, macko_get_status_name(st));
    return st;
}

macko_status_t macko_ok(void)
{
    tl_pos = 0;
    tl_msg[0] = '\0';
    return MACKO_STATUS_SUCCESS;
}

void macko_log(const char *fmt, ...)
{
    /* Every thread computes the same value; atomic so that concurrent first calls are not a data race. */
    static atomic_int enabled = -1;
    int on = atomic_load_explicit(&enabled, memory_order_relaxed);
    va_list ap;
    if (on < 0) {
        const char *e = getenv("MACKO_LOG");
        on = (e != NULL && e[0] != '\0' && e[0] != '0') ? 1 : 0;
        atomic_store_explicit(&enabled, on, memory_order_relaxed);
    }
    if (!on)
        return;
    va_start(ap, fmt);
    fputs("[macko] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int macko_get_last_error_position(void) { return tl_pos; }
const char *macko_get_last_error_message(void) { return tl_msg; }

macko_status_t macko_get_version(int *major, int *minor, int *patch)
{
    MACKO_CHECK(macko_check_ptr("macko_get_version", 1, "major", major));
    MACKO_CHECK(macko_check_ptr("macko_get_version", 2, "minor", minor));
    MACKO_CHECK(macko_check_ptr("macko_get_version", 3, "patch", patch));
    *major = MACKO_VERSION_MAJOR;
    *minor = MACKO_VERSION_MINOR;
    *patch = MACKO_VERSION_PATCH;
    return macko_ok();
}

const char *macko_get_status_name(macko_status_t status)
{
    switch (status) {
    case MACKO_STATUS_SUCCESS: return "MACKO_STATUS_SUCCESS";
    case MACKO_STATUS_NOT_INITIALIZED: return "MACKO_STATUS_NOT_INITIALIZED";
    case MACKO_STATUS_ALLOC_FAILED: return "MACKO_STATUS_ALLOC_FAILED";
    case MACKO_STATUS_INVALID_VALUE: return "MACKO_STATUS_INVALID_VALUE";
    case MACKO_STATUS_ARCH_MISMATCH: return "MACKO_STATUS_ARCH_MISMATCH";
    case MACKO_STATUS_EXECUTION_FAILED: return "MACKO_STATUS_EXECUTION_FAILED";
    case MACKO_STATUS_INTERNAL_ERROR: return "MACKO_STATUS_INTERNAL_ERROR";
    case MACKO_STATUS_NOT_SUPPORTED: return "MACKO_STATUS_NOT_SUPPORTED";
    case MACKO_STATUS_INSUFFICIENT_RESOURCES: return "MACKO_STATUS_INSUFFICIENT_RESOURCES";
    case MACKO_STATUS_IO_ERROR: return "MACKO_STATUS_IO_ERROR";
    case MACKO_STATUS_FORMAT_ERROR: return "MACKO_STATUS_FORMAT_ERROR";
    }
    return "MACKO_STATUS_<unknown>";
}

const char *macko_get_status_string(macko_status_t status)
{
    switch (status) {
    case MACKO_STATUS_SUCCESS: return "success";
    case MACKO_STATUS_NOT_INITIALIZED: return "not initialized: no usable CUDA device, or the matrix lacks the copy "
                                              "or analysis this call needs";
    case MACKO_STATUS_ALLOC_FAILED: return "a host or device allocation failed";
    case MACKO_STATUS_INVALID_VALUE: return "an argument has an invalid value (see the last error position)";
    case MACKO_STATUS_ARCH_MISMATCH: return "the device does not support this operation";
    case MACKO_STATUS_EXECUTION_FAILED: return "a GPU kernel or copy failed to launch or run";
    case MACKO_STATUS_INTERNAL_ERROR: return "internal error";
    case MACKO_STATUS_NOT_SUPPORTED: return "this combination of arguments is not supported";
    case MACKO_STATUS_INSUFFICIENT_RESOURCES: return "insufficient resources";
    case MACKO_STATUS_IO_ERROR: return "a file could not be opened, read or written";
    case MACKO_STATUS_FORMAT_ERROR: return "the serialized data is truncated, corrupted or not a macko matrix";
    }
    return "unknown status";
}
