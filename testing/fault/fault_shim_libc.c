/* The shim's wrappers of the C library's allocation and file calls (see fault_control.h). */
#define _GNU_SOURCE
#include "fault_internal.h"

/* Descriptors are held in the ledger as descriptor + 1 (0 would read as NULL). */
static const void *fd_key(int fd) { return (const void *)(uintptr_t)((unsigned)fd + 1u); }

/* ---------------------------------------------------------------- host memory */

static void *track(void *p, size_t n)
{
    if (p != NULL)
        mf_led_add(O_HOST, p, n);
    return p;
}

void *macko_fault_malloc(size_t n)
{
    if (mf_fault_point(K_malloc))
        return mf_fail_errno(K_malloc), NULL;
    return track(malloc(n), n);
}

void *macko_fault_calloc(size_t n, size_t size)
{
    if (mf_fault_point(K_calloc))
        return mf_fail_errno(K_calloc), NULL;
    return track(calloc(n, size), n * size);
}

void *macko_fault_realloc(void *p, size_t n)
{
    void *q;
    if (mf_fault_point(K_realloc))
        return mf_fail_errno(K_realloc), NULL;
    if (p != NULL) /* taken out before the call: p is not to be looked at after a successful realloc */
        mf_led_remove(O_HOST, p);
    q = realloc(p, n);
    if (q != NULL)
        mf_led_add(O_HOST, q, n);
    else if (p != NULL && n != 0)
        mf_led_add(O_HOST, p, 0); /* failed: p is still live (its size is not known here) */
    return q;
}

void *macko_fault_aligned_alloc(size_t align, size_t n)
{
    if (mf_fault_point(K_aligned_alloc))
        return mf_fail_errno(K_aligned_alloc), NULL;
    return track(aligned_alloc(align, n), n);
}

int macko_fault_posix_memalign(void **p, size_t align, size_t n)
{
    int r;
    if (mf_fault_point(K_posix_memalign))
        return ENOMEM;
    r = posix_memalign(p, align, n);
    if (r == 0)
        track(*p, n);
    return r;
}

char *macko_fault_strdup(const char *s)
{
    if (mf_fault_point(K_strdup))
        return mf_fail_errno(K_strdup), NULL;
    return (char *)track(strdup(s), strlen(s) + 1);
}

char *macko_fault_realpath(const char *path, char *resolved)
{
    char *r;
    if (mf_fault_point(K_realpath))
        return mf_fail_errno(K_realpath), NULL;
    r = realpath(path, resolved);
    if (r != NULL && resolved == NULL)
        track(r, strlen(r) + 1);
    return r;
}

void macko_fault_free(void *p)
{
    if (p == NULL)
        return;
    mf_led_remove(O_HOST, p);
    free(p);
}

/* ---------------------------------------------------------------- files */

FILE *macko_fault_fopen(const char *path, const char *mode)
{
    FILE *f;
    if (mf_fault_point(K_fopen))
        return mf_fail_errno(K_fopen), NULL;
    f = fopen(path, mode);
    if (f != NULL)
        mf_led_add(O_FILE, f, 0);
    return f;
}

FILE *macko_fault_fdopen(int fd, const char *mode)
{
    FILE *f;
    if (mf_fault_point(K_fdopen))
        return mf_fail_errno(K_fdopen), NULL;
    f = fdopen(fd, mode);
    if (f != NULL) { /* the stream now owns the descriptor */
        mf_led_remove(O_FD, fd_key(fd));
        mf_led_add(O_FILE, f, 0);
    }
    return f;
}

int macko_fault_fclose(FILE *f)
{
    int fail = mf_fault_point(K_fclose), r;
    mf_led_remove(O_FILE, f);
    r = fclose(f);
    if (fail)
        return mf_fail_errno(K_fclose), EOF;
    return r;
}

size_t macko_fault_fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    if (mf_fault_point(K_fwrite)) {
        size_t part = size > 0 ? fwrite(p, size, n / 2, f) : 0;
        errno = mf_kinds[K_fwrite].err;
        return part;
    }
    return fwrite(p, size, n, f);
}

size_t macko_fault_fread(void *p, size_t size, size_t n, FILE *f)
{
    if (mf_fault_point(K_fread)) {
        size_t part = size > 0 ? fread(p, size, n / 2, f) : 0;
        errno = mf_kinds[K_fread].err;
        return part;
    }
    return fread(p, size, n, f);
}

int macko_fault_fflush(FILE *f)
{
    if (mf_fault_point(K_fflush))
        return mf_fail_errno(K_fflush), EOF;
    return fflush(f);
}

int macko_fault_fsync(int fd)
{
    if (mf_fault_point(K_fsync))
        return mf_fail_errno(K_fsync);
    return fsync(fd);
}

int macko_fault_fdatasync(int fd)
{
    if (mf_fault_point(K_fdatasync))
        return mf_fail_errno(K_fdatasync);
    return fdatasync(fd);
}

int macko_fault_rename(const char *from, const char *to)
{
    if (mf_fault_point(K_rename))
        return mf_fail_errno(K_rename);
    return rename(from, to);
}

int macko_fault_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    int fd;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (mf_fault_point(K_open))
        return mf_fail_errno(K_open);
    fd = open(path, flags, mode);
    if (fd >= 0)
        mf_led_add(O_FD, fd_key(fd), 0);
    return fd;
}

int macko_fault_close(int fd)
{
    mf_led_remove(O_FD, fd_key(fd));
    return close(fd);
}

int macko_fault_fstat(int fd, struct stat *sb)
{
    if (mf_fault_point(K_fstat))
        return mf_fail_errno(K_fstat);
    return fstat(fd, sb);
}

int macko_fault_lstat(const char *path, struct stat *sb)
{
    if (mf_fault_point(K_lstat))
        return mf_fail_errno(K_lstat);
    return lstat(path, sb);
}

int macko_fault_stat(const char *path, struct stat *sb)
{
    if (mf_fault_point(K_stat))
        return mf_fail_errno(K_stat);
    return stat(path, sb);
}

int macko_fault_fchmod(int fd, mode_t mode)
{
    if (mf_fault_point(K_fchmod))
        return mf_fail_errno(K_fchmod);
    return fchmod(fd, mode);
}
