/* Matrices on the GPU: upload, download, release of the host copy, and the helpers shared by the device routines.
 *
 * Every routine makes the handle's device current for its duration and restores the caller's device. A matrix
 * object is only changed once everything has succeeded (new arrays are allocated and filled first, then swapped
 * in), so on any error the matrix is exactly as it was. */
#include "check.h"
#include "device_common.h"

#include <inttypes.h>
#include <string.h>

cudaError_t macko_dev_enter(macko_dev_guard *g, int device)
{
    cudaError_t e;
    g->switched = 0;
    e = cudaGetDevice(&g->prev);
    if (e != cudaSuccess)
        return e;
    if (g->prev != device) {
        e = cudaSetDevice(device);
        if (e != cudaSuccess)
            return e;
        g->switched = 1;
    }
    return cudaSuccess;
}

void macko_dev_leave(const macko_dev_guard *g)
{
    /* The routine's own outcome stands; a failed restore must not be left for the next call's error check. */
    if (g->switched && cudaSetDevice(g->prev) != cudaSuccess)
        cudaGetLastError();
}

macko_status_t macko_cuda_status(cudaError_t e)
{
    macko_status_t st = macko_status_of_cuda_error((int)e);
    cudaGetLastError();
    return st == MACKO_STATUS_SUCCESS ? MACKO_STATUS_EXECUTION_FAILED : st;
}

int macko_dev_ptr_usable(const void *p, int device)
{
    struct cudaPointerAttributes at;
    int pageable = 0;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();
        return 1; /* cannot tell: let the kernel decide */
    }
    if (at.type != cudaMemoryTypeUnregistered)
        return 1;
    if (cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    return pageable != 0;
}

static size_t at_least16(int64_t bytes) { return bytes < 16 ? 16 : (size_t)bytes; }

cudaError_t macko_dev_arrays_alloc(const struct macko_mat_s *m, macko_arrays *out, int want_row_ptr)
{
    int64_t vb = macko_values_bytes(m->type, m->entries_padded);
    int64_t rb = macko_rowptr_bytes(m->rows, m->rp64);
    cudaError_t e;
    memset(out, 0, sizeof *out);
    if ((vb == 0 && m->entries_padded != 0) || rb == 0 || (uint64_t)vb > SIZE_MAX || (uint64_t)rb > SIZE_MAX)
        return cudaErrorMemoryAllocation;
    e = cudaMalloc(&out->values, at_least16(vb));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&out->deltas, at_least16(m->entries_padded / 2));
    if (e == cudaSuccess && want_row_ptr)
        e = cudaMalloc(&out->row_ptr, at_least16(rb));
    if (e != cudaSuccess)
        macko_dev_arrays_release(out);
    return e;
}

void macko_dev_arrays_release(macko_arrays *a)
{
    cudaFree(a->values);
    cudaFree(a->deltas);
    cudaFree(a->row_ptr);
    memset(a, 0, sizeof *a);
}

/* The three arrays' byte counts (validated when the matrix was made). */
static void array_bytes(const struct macko_mat_s *m, size_t *vb, size_t *db, size_t *rb)
{
    *vb = (size_t)macko_values_bytes(m->type, m->entries_padded);
    *db = (size_t)(m->entries_padded / 2);
    *rb = (size_t)macko_rowptr_bytes(m->rows, m->rp64);
}

macko_status_t macko_dev_upload_arrays(const struct macko_mat_s *m, macko_stream_t stream, macko_arrays *dev)
{
    size_t vb, db, rb;
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e = macko_dev_arrays_alloc(m, dev, 1);
    if (e != cudaSuccess)
        return macko_cuda_status(e);
    array_bytes(m, &vb, &db, &rb);
    /* From pageable memory each call returns once the source has been staged: the host arrays may go right after. */
    e = cudaMemcpyAsync(dev->values, m->host.values, vb, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dev->deltas, m->host.deltas, db, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dev->row_ptr, m->host.row_ptr, rb, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) {
        cudaStreamSynchronize(s);
        macko_dev_arrays_release(dev);
        return macko_cuda_status(e);
    }
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_dev_download_arrays(const struct macko_mat_s *m, macko_stream_t stream, macko_arrays *host)
{
    struct macko_mat_s tmp;
    size_t vb, db, rb;
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    macko_status_t st;
    memset(&tmp, 0, sizeof tmp);
    tmp.rows = m->rows;
    tmp.entries_padded = m->entries_padded;
    tmp.type = m->type;
    tmp.rp64 = m->rp64;
    st = macko_host_arrays_alloc(&tmp);
    if (st != MACKO_STATUS_SUCCESS)
        return st;
    array_bytes(m, &vb, &db, &rb);
    e = cudaMemcpyAsync(tmp.host.values, m->dev.values, vb, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(tmp.host.deltas, m->dev.deltas, db, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(tmp.host.row_ptr, m->dev.row_ptr, rb, cudaMemcpyDeviceToHost, s);
    {
        cudaError_t e2 = cudaStreamSynchronize(s);
        if (e == cudaSuccess)
            e = e2;
    }
    if (e != cudaSuccess) {
        macko_host_arrays_free(&tmp);
        return macko_cuda_status(e);
    }
    *host = tmp.host;
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_mat_upload(macko_handle_t handle, macko_mat_t A)
{
    static const char fn[] = "macko_mat_upload";
    macko_dev_guard g;
    macko_arrays d;
    macko_plan plan;
    void *tidx = NULL;
    macko_status_t st, pst = MACKO_STATUS_SUCCESS;
    cudaError_t e;
    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_host_mat(fn, 2, A));
    if (A->kind == MACKO_KIND_NM)
        return macko_nm_upload(fn, handle, A);
    if (A->kind == MACKO_KIND_QUANT)
        return macko_quant_upload(fn, handle, A, -1, 0, 0);
    if (A->layout == MACKO_LAYOUT_TILES)
        return macko_tiles_upload(fn, handle, A);
    e = macko_dev_enter(&g, handle->device);
    if (e != cudaSuccess)
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", handle->device,
                          cudaGetErrorString(e));
    cudaGetLastError();
    st = macko_dev_upload_arrays(A, handle->stream, &d);
    if (st == MACKO_STATUS_SUCCESS) {
        pst = macko_plan_build(fn, A, d.row_ptr, d.deltas, handle->stream, &handle->props, NULL, &plan, &tidx);
        if (pst != MACKO_STATUS_SUCCESS)
            macko_dev_arrays_release(&d);
    }
    macko_dev_leave(&g);
    if (st != MACKO_STATUS_SUCCESS)
        return macko_fail(st, fn, 0, "cannot %s the device arrays (%" PRId64 " entries)",
                          st == MACKO_STATUS_ALLOC_FAILED ? "allocate" : "copy", A->entries_padded);
    if (pst != MACKO_STATUS_SUCCESS)
        return pst;
    if (A->has_device) {
        /* The old copy goes (with its extras and plan); A^T stays valid where it already lives on the same
         * device. */
        struct macko_mat_s old;
        memset(&old, 0, sizeof old);
        old.has_device = 1;
        old.device = A->device;
        old.dev = A->dev;
        memcpy(old.extra, A->extra, sizeof old.extra);
        memset(A->extra, 0, sizeof A->extra);
        if (A->trans != NULL && A->device != handle->device) {
            macko_mat_destroy(A->trans);
            A->trans = NULL;
        }
        macko_device_arrays_free(&old);
    }
    A->dev = d;
    A->dev_layout = MACKO_LAYOUT_ROWS;
    memset(&A->td, 0, sizeof A->td);
    A->extra[MACKO_EXTRA_TILE_INDEX] = tidx;
    A->plan = plan;
    A->device = handle->device;
    A->has_device = 1;
    return macko_ok();
}

macko_status_t macko_mat_download(macko_handle_t handle, macko_mat_t A)
{
    static const char fn[] = "macko_mat_download";
    macko_dev_guard g;
    macko_arrays h;
    macko_status_t st;
    cudaError_t e;
    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_dev_mat(fn, 2, A, handle, MACKO_ANY_TYPE, 0, MACKO_OPERATION_NON_TRANSPOSE, NULL));
    if (A->kind == MACKO_KIND_NM)
        return macko_nm_download(fn, handle, A);
    if (A->kind == MACKO_KIND_QUANT)
        return macko_quant_download(fn, handle, A);
    if (A->dev_layout == MACKO_LAYOUT_TILES)
        return macko_tiles_download(fn, handle, A);
    e = macko_dev_enter(&g, handle->device);
    if (e != cudaSuccess)
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", handle->device,
                          cudaGetErrorString(e));
    cudaGetLastError();
    st = macko_dev_download_arrays(A, handle->stream, &h);
    macko_dev_leave(&g);
    if (st != MACKO_STATUS_SUCCESS)
        return macko_fail(st, fn, 0, "cannot %s the host arrays (%" PRId64 " entries)",
                          st == MACKO_STATUS_ALLOC_FAILED ? "allocate" : "copy into", A->entries_padded);
    macko_host_arrays_free(A);
    A->host = h;
    A->has_host = 1;
    return macko_ok();
}

/* Contract choice: releasing the host copy of a matrix that is not on the device would lose the matrix, so it is
 * refused with NOT_INITIALIZED ("not on the device yet", as the compute routines say). Releasing twice is fine. */
macko_status_t macko_mat_release_host(macko_mat_t A)
{
    static const char fn[] = "macko_mat_release_host";
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    if (!A->has_device)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 1,
                          "A is not on the device; releasing its host copy would lose it (see macko_mat_upload)");
    macko_host_arrays_free(A);
    return macko_ok();
}
