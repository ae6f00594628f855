/* macko_analysis: the one-time work for later compute calls.
 *
 * op N needs nothing. op T gets A->trans, a device-resident encoding of A^T that is bit-for-bit what the host
 * encoder makes of the transposed matrix: A's nonzeros are exported as CSR (from the host copy, or from a temporary
 * download when A has none), transposed on the host by a counting sort on the column (stable in the row, so every
 * transposed row comes out sorted), encoded by macko_mat_create_csr_host and uploaded. Zero-valued entries of A
 * (padding, stored zeros) are not nonzeros of A, so they do not appear in A^T. This is the slow, simple path:
 * analysis runs once per matrix, and compute calls never allocate. */
#include "check.h"
#include "device_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Builds the host encoding of src^T (src has host arrays) into *out. */
static macko_status_t transpose_host(struct macko_mat_s *src, struct macko_mat_s **out)
{
    const int64_t rows = src->rows, cols = src->cols, nnz = src->nnz;
    const int i64 = nnz > INT32_MAX - 1 || rows > INT32_MAX - 1 || cols > INT32_MAX - 1;
    const size_t isz = i64 ? 8 : 4, es = macko_type_size(src->type);
    const macko_indextype_t it = i64 ? MACKO_INDEX_64I : MACKO_INDEX_32I;
    void *rp = malloc(((size_t)rows + 1) * isz), *ci = malloc((size_t)(nnz > 0 ? nnz : 1) * isz);
    void *va = malloc((size_t)(nnz > 0 ? nnz : 1) * es);
    void *trp = calloc((size_t)cols + 1, isz), *tci = malloc((size_t)(nnz > 0 ? nnz : 1) * isz);
    void *tva = malloc((size_t)(nnz > 0 ? nnz : 1) * es);
    macko_status_t st = MACKO_STATUS_ALLOC_FAILED;
    int64_t r, k, c;
    if (rp == NULL || ci == NULL || va == NULL || trp == NULL || tci == NULL || tva == NULL)
        goto done;
    st = macko_mat_export_csr_host(src, rp, ci, va, it, MACKO_INDEX_BASE_ZERO);
    if (st != MACKO_STATUS_SUCCESS)
        goto done;
    /* trp[c + 1] = count of column c, then prefix sums: trp[c] = first slot of transposed row c. */
    for (k = 0; k < nnz; k++) {
        c = macko_idx_get(ci, i64, k);
        macko_idx_set(trp, i64, c + 1, macko_idx_get(trp, i64, c + 1) + 1);
    }
    for (c = 0; c < cols; c++)
        macko_idx_set(trp, i64, c + 1, macko_idx_get(trp, i64, c + 1) + macko_idx_get(trp, i64, c));
    for (r = 0; r < rows; r++)
        for (k = macko_idx_get(rp, i64, r); k < macko_idx_get(rp, i64, r + 1); k++) {
            int64_t slot;
            c = macko_idx_get(ci, i64, k);
            slot = macko_idx_get(trp, i64, c); /* trp[c] runs ahead as the cursor of row c... */
            macko_idx_set(trp, i64, c, slot + 1);
            macko_idx_set(tci, i64, slot, r);
            memcpy((char *)tva + (size_t)slot * es, (const char *)va + (size_t)k * es, es);
        }
    /* ... so now trp[c] is the end of row c: shift back by one to get the starts. */
    for (c = cols; c > 0; c--)
        macko_idx_set(trp, i64, c, macko_idx_get(trp, i64, c - 1));
    macko_idx_set(trp, i64, 0, 0);
    st = macko_mat_create_csr_host(out, cols, rows, nnz, trp, tci, tva, it, MACKO_INDEX_BASE_ZERO, src->type);
done:
    free(rp);
    free(ci);
    free(va);
    free(trp);
    free(tci);
    free(tva);
    return st;
}

macko_status_t macko_analysis(macko_handle_t handle, macko_operation_t op, macko_mat_t A)
{
    static const char fn[] = "macko_analysis";
    struct macko_mat_s *t = NULL, tmp;
    macko_arrays dev;
    macko_plan plan;
    void *tidx = NULL;
    macko_dev_guard g;
    macko_status_t st;
    cudaError_t e;
    int own_host = 0;

    MACKO_CHECK(macko_check_handle(fn, handle));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_OP, (int)op));
    MACKO_CHECK(macko_check_dev_mat(fn, 3, A, handle, MACKO_ANY_TYPE, 0, op, NULL));
    if (op == MACKO_OPERATION_TRANSPOSE && A->kind == MACKO_KIND_QUANT)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2, "op T is not supported on a QUANT matrix");
    if (op == MACKO_OPERATION_TRANSPOSE && A->kind == MACKO_KIND_NM)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2, "op T is not supported on an N:M matrix");
    if (op == MACKO_OPERATION_NON_TRANSPOSE || A->trans != NULL)
        return macko_ok(); /* A^T is a function of A, which never changes: an existing one stays valid */
    if (A->dev_layout == MACKO_LAYOUT_TILES && !A->has_host)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 3,
                          "A is on the device in the tile layout without a host copy: op T is built from the MACKO "
                          "rows (call macko_mat_download first)");

    e = macko_dev_enter(&g, handle->device);
    if (e != cudaSuccess)
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", handle->device,
                          cudaGetErrorString(e));
    cudaGetLastError();
    /* A shallow view of A that owns a temporary host copy when A has none. */
    tmp = *A;
    tmp.trans = NULL;
    tmp.has_device = 0;
    if (!A->has_host) {
        st = macko_dev_download_arrays(A, handle->stream, &tmp.host);
        if (st != MACKO_STATUS_SUCCESS) {
            macko_dev_leave(&g);
            return macko_fail(st, fn, 0, "cannot copy A to the host for the transposition");
        }
        tmp.has_host = 1;
        own_host = 1;
    }
    st = transpose_host(&tmp, &t);
    if (own_host)
        macko_host_arrays_free(&tmp);
    if (st != MACKO_STATUS_SUCCESS) {
        macko_dev_leave(&g);
        return macko_fail(st, fn, 0, "cannot build the transposed encoding on the host");
    }
    st = macko_dev_upload_arrays(t, handle->stream, &dev);
    if (st == MACKO_STATUS_SUCCESS) {
        e = cudaStreamSynchronize((cudaStream_t)handle->stream); /* the host arrays go right away */
        if (e != cudaSuccess) {
            macko_dev_arrays_release(&dev);
            st = macko_cuda_status(e);
        }
    }
    if (st != MACKO_STATUS_SUCCESS) {
        macko_dev_leave(&g);
        macko_mat_destroy(t);
        return macko_fail(st, fn, 0, "cannot upload the transposed encoding");
    }
    st = macko_plan_build(fn, t, dev.row_ptr, dev.deltas, handle->stream, &handle->props, NULL, &plan, &tidx);
    if (st != MACKO_STATUS_SUCCESS) {
        /* not macko_mat_destroy: its macko_ok() would clear the error details just recorded */
        macko_dev_arrays_release(&dev);
        macko_dev_leave(&g);
        macko_host_arrays_free(t);
        free(t);
        return st;
    }
    macko_dev_leave(&g);
    macko_host_arrays_free(t);
    t->dev = dev;
    t->extra[MACKO_EXTRA_TILE_INDEX] = tidx;
    t->plan = plan;
    t->device = handle->device;
    t->has_device = 1;
    A->trans = t;
    return macko_ok();
}
