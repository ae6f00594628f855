/* Matrix objects: allocation, destruction and the host-side queries. */
#include "check.h"
#include "nm_host.h"
#include "quant_host.h"
#include "tiles.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

struct macko_mat_s *macko_mat_alloc(void)
{
    return (struct macko_mat_s *)calloc(1, sizeof(struct macko_mat_s));
}

void *macko_aligned_calloc(size_t bytes)
{
    size_t n = (bytes + 63) & ~(size_t)63;
    void *p;
    if (n < bytes)
        return NULL;
    if (n == 0)
        n = 64;
    p = aligned_alloc(64, n);
    if (p != NULL)
        memset(p, 0, n);
    return p;
}

void macko_aligned_free(void *p) { free(p); }

macko_status_t macko_host_arrays_alloc(struct macko_mat_s *m)
{
    int64_t vb = macko_values_bytes(m->type, m->entries_padded);
    int64_t rb = macko_rowptr_bytes(m->rows, m->rp64);
    if ((vb == 0 && m->entries_padded != 0) || rb == 0 || (uint64_t)vb > SIZE_MAX || (uint64_t)rb > SIZE_MAX)
        return MACKO_STATUS_INVALID_VALUE;
    m->host.values = macko_aligned_calloc((size_t)vb);
    m->host.deltas = (uint8_t *)macko_aligned_calloc((size_t)(m->entries_padded / 2));
    m->host.row_ptr = macko_aligned_calloc((size_t)rb);
    if (m->host.values == NULL || m->host.deltas == NULL || m->host.row_ptr == NULL) {
        macko_host_arrays_free(m);
        return MACKO_STATUS_ALLOC_FAILED;
    }
    m->has_host = 1;
    return MACKO_STATUS_SUCCESS;
}

void macko_host_arrays_free(struct macko_mat_s *m)
{
    macko_aligned_free(m->host.values);
    macko_aligned_free(m->host.deltas);
    macko_aligned_free(m->host.row_ptr);
    memset(&m->host, 0, sizeof m->host);
    macko_quant_host_free(&m->q.host);
    macko_nm_host_free(m);
    m->has_host = 0;
}

void macko_device_arrays_free(struct macko_mat_s *m)
{
    macko_quant_device_free(m);
    if (m->trans != NULL) {
        macko_mat_destroy(m->trans);
        m->trans = NULL;
    }
    int i, any = m->has_device || m->dev.values || m->dev.deltas || m->dev.row_ptr;
    const int nm_dev = m->nm.dvalues != NULL || m->nm.dmeta != NULL;
    any |= nm_dev;
    for (i = 0; i < MACKO_EXTRAS; i++)
        any |= m->extra[i] != NULL;
    if (any) {
        int cur = -1, switched = 0;
        int failed = cudaGetDevice(&cur) != cudaSuccess;
        if (!failed && cur != m->device) {
            switched = cudaSetDevice(m->device) == cudaSuccess;
            failed = !switched;
        }
        failed |= cudaFree(m->dev.values) != cudaSuccess;
        failed |= cudaFree(m->dev.deltas) != cudaSuccess;
        failed |= cudaFree(m->dev.row_ptr) != cudaSuccess;
        for (i = 0; i < MACKO_EXTRAS; i++)
            failed |= cudaFree(m->extra[i]) != cudaSuccess;
        if (nm_dev) /* not for a host-only matrix: cudaFree(NULL) would start the CUDA runtime */
            macko_nm_device_free(m);
        if (switched)
            failed |= cudaSetDevice(cur) != cudaSuccess;
        /* Freeing cannot fail for the caller; an error recorded by the runtime here would be reported by the next
         * call that checks for one (a compute call's launch check), so it is cleared. */
        if (failed)
            cudaGetLastError();
    }
    memset(&m->dev, 0, sizeof m->dev);
    memset(m->extra, 0, sizeof m->extra);
    memset(&m->plan, 0, sizeof m->plan);
    m->dev_layout = MACKO_LAYOUT_ROWS;
    memset(&m->td, 0, sizeof m->td);
    m->nm.dev_layout = MACKO_NMDEV_GEN;
    m->nm.dvalues_bytes = m->nm.dmeta_bytes = 0;
    m->has_device = 0;
}

macko_status_t macko_mat_destroy(macko_mat_t A)
{
    if (A == NULL)
        return macko_ok();
    macko_device_arrays_free(A);
    macko_host_arrays_free(A);
    free(A);
    return macko_ok();
}

macko_status_t macko_mat_get_info(macko_mat_t A, int64_t *rows, int64_t *cols, int64_t *nnz, macko_datatype_t *type)
{
    MACKO_CHECK(macko_check_ptr("macko_mat_get_info", 1, "A", A));
    if (rows) *rows = A->rows;
    if (cols) *cols = A->cols;
    if (nnz) *nnz = A->nnz;
    if (type) *type = A->type;
    return macko_ok();
}

macko_status_t macko_mat_get_kind(macko_mat_t A, macko_kind_t *kind)
{
    MACKO_CHECK(macko_check_ptr("macko_mat_get_kind", 1, "A", A));
    MACKO_CHECK(macko_check_ptr("macko_mat_get_kind", 2, "kind", kind));
    *kind = (macko_kind_t)A->kind;
    return macko_ok();
}

macko_status_t macko_mat_get_storage(macko_mat_t A, int64_t *bytes, int64_t *entries, int64_t *entries_padded,
                                     double *effective_density)
{
    int64_t b, ep;
    MACKO_CHECK(macko_check_ptr("macko_mat_get_storage", 1, "A", A));
    ep = A->entries_padded;
    if (A->kind == MACKO_KIND_QUANT) {
        b = A->q.words_count * 8 + macko_quant_outlier_bytes(A);
        ep = A->q.slots; /* the outlier slots held: the device layout's once uploaded */
    } else if (A->kind == MACKO_KIND_NM) {
        b = macko_nm_host_bytes(A);
        if (A->has_device) { /* what the device holds (the SP24 layout differs from the host arrays) */
            int64_t vb = 0, mb = 0;
            macko_nm_device_bytes(A->rows, A->cols, A->nm.n, A->nm.m, A->nm.v, A->type, A->nm.dev_layout, &vb, &mb);
            b = vb + mb;
        }
    } else {
        b = macko_values_bytes(A->type, A->entries_padded) + A->entries_padded / 2 +
            macko_rowptr_bytes(A->rows, A->rp64);
        if (A->has_device && A->extra[MACKO_EXTRA_TILE_INDEX] != NULL)
            b += A->plan.tc.tidx_bytes; /* the tensor-core paths' tile index, kept on the device with the encoding */
        if (A->has_device && A->dev_layout == MACKO_LAYOUT_TILES)
            b = macko_tiles_bytes(A->td.bands, A->td.tcols, A->td.words); /* what the device holds instead */
    }
    if (bytes) *bytes = b;
    if (entries) *entries = A->entries;
    if (entries_padded) *entries_padded = ep;
    if (effective_density) {
        double dense = (double)A->rows * (double)A->cols * (double)macko_type_size(A->type);
        *effective_density = dense > 0 ? (double)b / dense : 0.0;
    }
    return macko_ok();
}

macko_status_t macko_mat_set_layout(macko_mat_t A, macko_layout_t layout)
{
    static const char fn[] = "macko_mat_set_layout";
    MACKO_CHECK(macko_check_ptr(fn, 1, "A", A));
    MACKO_CHECK(macko_check_enum(fn, 2, MACKO_ARG_LAYOUT, (int)layout));
    if (layout == MACKO_LAYOUT_TILES &&
        (A->kind != MACKO_KIND_MACKO || (A->type != MACKO_R_16F && A->type != MACKO_R_16BF)))
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2,
                          "layout MACKO_LAYOUT_TILES holds MACKO_KIND_MACKO matrices of type MACKO_R_16F or "
                          "MACKO_R_16BF only; A is a %s matrix of type %d",
                          macko_kind_name(A->kind), (int)A->type);
    A->layout = (int)layout;
    return macko_ok();
}

macko_status_t macko_mat_get_layout(macko_mat_t A, macko_layout_t *layout)
{
    MACKO_CHECK(macko_check_ptr("macko_mat_get_layout", 1, "A", A));
    MACKO_CHECK(macko_check_ptr("macko_mat_get_layout", 2, "layout", layout));
    *layout = (macko_layout_t)A->layout;
    return macko_ok();
}

macko_status_t macko_mat_get_macko_host(macko_mat_t A, const void **values, const uint8_t **deltas,
                                        const void **row_ptr, macko_indextype_t *row_ptr_type, int64_t *entries,
                                        int64_t *entries_padded)
{
    MACKO_CHECK(macko_check_ptr("macko_mat_get_macko_host", 1, "A", A));
    MACKO_CHECK(macko_check_kind("macko_mat_get_macko_host", 1, A, MACKO_KIND_MACKO));
    MACKO_CHECK(macko_check_host_mat("macko_mat_get_macko_host", 1, A));
    if (values) *values = A->host.values;
    if (deltas) *deltas = A->host.deltas;
    if (row_ptr) *row_ptr = A->host.row_ptr;
    if (row_ptr_type) *row_ptr_type = A->rp64 ? MACKO_INDEX_64I : MACKO_INDEX_32I;
    if (entries) *entries = A->entries;
    if (entries_padded) *entries_padded = A->entries_padded;
    return macko_ok();
}
