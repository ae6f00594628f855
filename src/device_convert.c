/* Encoding on the GPU from device data: macko_mat_create_dense_device / macko_mat_create_csr_device.
 *
 * The arguments are checked by the host encoders' validators (check.h), one position later: the handle comes first.
 * Then, on the handle's stream: count (validating CSR input), read the totals back (the one synchronisation before
 * the end), scan the counts into row pointers, allocate, fill, pack. Temporaries are freed before returning, on
 * errors too; the result is device-only (has_host = 0) and byte-identical to the host encoder's. */
#include "check.h"
#include "device_common.h"
#include "convert.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int csr;
    int es;
    /* dense */
    const void *a;
    int64_t ld;
    int colmajor;
    /* CSR */
    int idx64;
    int64_t base, nnz;
    const void *rp, *ci, *vals;
} conv_src;

typedef struct {
    int64_t *counts; /* rows + 1; becomes the int64 row_ptr (adopted when rp64) */
    macko_conv_stats *stats;
    void *scan_tmp;
    uint8_t *dtmp;
    macko_arrays out;
} conv_tmp;

static void conv_tmp_free(conv_tmp *t)
{
    if (t->out.row_ptr == t->counts)
        t->out.row_ptr = NULL;
    cudaFree(t->counts);
    cudaFree(t->stats);
    cudaFree(t->scan_tmp);
    cudaFree(t->dtmp);
    macko_dev_arrays_release(&t->out);
    memset(t, 0, sizeof *t);
}

/* One index element of a device array (error reporting only). */
static int64_t dev_idx(const void *p, int i64, int64_t k, cudaStream_t s)
{
    int64_t v64 = 0;
    int32_t v32 = 0;
    if (i64)
        cudaMemcpyAsync(&v64, (const int64_t *)p + k, sizeof v64, cudaMemcpyDeviceToHost, s);
    else
        cudaMemcpyAsync(&v32, (const int32_t *)p + k, sizeof v32, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    return i64 ? v64 : (int64_t)v32;
}

/* The device's row_ptr fault kinds go to the shared messages as they are. */
_Static_assert(MACKO_CONV_RP_FIRST == (int)MACKO_CSR_RP_FIRST && MACKO_CONV_RP_DECREASE == (int)MACKO_CSR_RP_DECREASE &&
                   MACKO_CONV_RP_EXCEED == (int)MACKO_CSR_RP_EXCEED && MACKO_CONV_RP_LAST == (int)MACKO_CSR_RP_LAST,
               "the row_ptr fault kinds of kernels/convert.h and check.h differ");

/* Reproduces the host encoder's message for the first bad row found on the GPU. */
static macko_status_t csr_report(const char *fn, const conv_src *c, int64_t rows, int64_t cols,
                                 const macko_conv_stats *st, cudaStream_t s)
{
    const int64_t base = c->base, nnz = c->nnz;
    if (st->bad_rp != MACKO_CONV_NONE) {
        int64_t r = (int64_t)(st->bad_rp / 4);
        macko_csr_rp_fault kind = (macko_csr_rp_fault)(st->bad_rp % 4);
        if (kind == MACKO_CSR_RP_FIRST)
            return macko_fail_csr_row_ptr(fn, 6, kind, 0, dev_idx(c->rp, c->idx64, 0, s), 0, nnz, base);
        if (kind == MACKO_CSR_RP_LAST)
            return macko_fail_csr_row_ptr(fn, 6, kind, r, dev_idx(c->rp, c->idx64, rows, s), 0, nnz, base);
        return macko_fail_csr_row_ptr(fn, 6, kind, r, dev_idx(c->rp, c->idx64, r + 1, s),
                                      kind == MACKO_CSR_RP_DECREASE ? dev_idx(c->rp, c->idx64, r, s) : 0, nnz, base);
    }
    {
        const int64_t r = (int64_t)st->bad_col;
        const int64_t kb = dev_idx(c->rp, c->idx64, r, s) - base, ke = dev_idx(c->rp, c->idx64, r + 1, s) - base;
        const size_t isz = c->idx64 ? 8 : 4;
        int64_t k, prev = -1;
        void *buf = ke > kb ? malloc((size_t)(ke - kb) * isz) : NULL;
        if (buf != NULL && cudaMemcpyAsync(buf, (const char *)c->ci + kb * (int64_t)isz, (size_t)(ke - kb) * isz,
                                           cudaMemcpyDeviceToHost, s) == cudaSuccess &&
            cudaStreamSynchronize(s) == cudaSuccess) {
            for (k = kb; k < ke; k++) {
                int64_t col = macko_idx_get(buf, c->idx64, k - kb);
                if (!macko_csr_col_ok(col, prev, base, cols)) {
                    free(buf);
                    return macko_fail_csr_col(fn, 7, r, k, col, prev, base, cols);
                }
                prev = col - base;
            }
        }
        free(buf);
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 7,
                          "row %" PRId64 ": col_ind holds a column outside [%" PRId64 ", %" PRId64
                          ") or not strictly increasing", r, base, cols + base);
    }
}

/* The pipeline of both routines; m has rows, cols and type set. On success m holds the device arrays. */
static macko_status_t convert(macko_handle_t h, const char *fn, struct macko_mat_s *m, const conv_src *c)
{
    cudaStream_t s = (cudaStream_t)h->stream;
    const int64_t rows = m->rows;
    conv_tmp t;
    macko_conv_stats st;
    size_t scan_bytes = 0;
    int64_t entries, ep, vb;
    cudaError_t e;
    const char *what = "launch the conversion";

    memset(&t, 0, sizeof t);
    cudaGetLastError();
    e = cudaMalloc((void **)&t.counts, ((size_t)rows + 1) * sizeof(int64_t));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&t.stats, sizeof *t.stats);
    if (e != cudaSuccess) {
        what = "allocate temporary device memory";
        goto cuda_fail;
    }
    e = (cudaError_t)(c->csr ? macko_conv_csr_count(c->es, c->idx64, c->base, rows, m->cols, c->nnz, c->rp, c->ci,
                                                    c->vals, t.counts, t.stats, h->props.sm_count, h->stream)
                             : macko_conv_dense_count(c->es, c->a, rows, m->cols, c->ld, c->colmajor, t.counts,
                                                      t.stats, h->props.sm_count, h->stream));
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&st, t.stats, sizeof st, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess)
        goto cuda_fail;
    if (c->csr && (st.bad_rp != MACKO_CONV_NONE || st.bad_col != MACKO_CONV_NONE)) {
        macko_status_t r = csr_report(fn, c, rows, m->cols, &st, s);
        conv_tmp_free(&t);
        return r;
    }
    if (st.entries > (unsigned long long)MACKO_MAX_ELEMS) {
        conv_tmp_free(&t);
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 0, "the encoding would exceed 2^56 entries");
    }
    entries = (int64_t)st.entries;
    ep = macko_round8(entries);
    vb = macko_values_bytes(m->type, ep);
    m->nnz = (int64_t)st.nnz;
    m->entries = entries;
    m->entries_padded = ep;
    m->rp64 = entries >= MACKO_RP32_LIMIT;

    what = "allocate the device arrays";
    e = (cudaError_t)macko_conv_scan(NULL, &scan_bytes, t.counts, rows + 1, h->stream);
    if (e == cudaSuccess)
        e = cudaMalloc(&t.scan_tmp, scan_bytes > 0 ? scan_bytes : 16);
    if (e == cudaSuccess)
        e = macko_dev_arrays_alloc(m, &t.out, !m->rp64);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&t.dtmp, entries > 16 ? (size_t)entries : 16);
    if (e != cudaSuccess)
        goto cuda_fail;
    what = "run the conversion";
    e = (cudaError_t)macko_conv_scan(t.scan_tmp, &scan_bytes, t.counts, rows + 1, h->stream);
    if (e == cudaSuccess && entries > 0)
        e = (cudaError_t)(c->csr ? macko_conv_csr_fill(c->es, c->idx64, c->base, rows, c->rp, c->ci, c->vals,
                                                       t.counts, t.out.values, t.dtmp, h->props.sm_count, h->stream)
                                 : macko_conv_dense_fill(c->es, c->a, rows, m->cols, c->ld, c->colmajor, t.counts,
                                                         t.out.values, t.dtmp, h->props.sm_count, h->stream));
    if (e == cudaSuccess)
        e = (cudaError_t)macko_conv_finish(t.counts, m->rp64 ? NULL : (int32_t *)t.out.row_ptr, rows, t.dtmp,
                                           t.out.deltas, entries, ep, h->props.sm_count, h->stream);
    if (e == cudaSuccess && ep > entries)
        e = cudaMemsetAsync((char *)t.out.values + (vb / ep) * entries, 0, (size_t)((vb / ep) * (ep - entries)), s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess)
        goto cuda_fail;
    if (m->rp64) {
        t.out.row_ptr = t.counts;
        t.counts = NULL;
    }
    m->dev = t.out;
    memset(&t.out, 0, sizeof t.out);
    m->has_device = 1;
    m->device = h->device;
    conv_tmp_free(&t);
    return MACKO_STATUS_SUCCESS;

cuda_fail:
    cudaStreamSynchronize(s);
    conv_tmp_free(&t);
    return macko_fail(macko_cuda_status(e), fn, 0, "cannot %s: %s", what, cudaGetErrorString(e));
}

/* Runs the pipeline on the handle's device and hands out the matrix. */
static macko_status_t run(macko_handle_t h, const char *fn, macko_mat_t *A, int64_t rows, int64_t cols,
                          macko_datatype_t type, const conv_src *c)
{
    macko_dev_guard g;
    struct macko_mat_s *m;
    macko_status_t st;
    cudaError_t e = macko_dev_enter(&g, h->device);
    if (e != cudaSuccess)
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", h->device,
                          cudaGetErrorString(e));
    m = macko_mat_alloc();
    if (m == NULL) {
        macko_dev_leave(&g);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "out of host memory");
    }
    m->rows = rows;
    m->cols = cols;
    m->type = type;
    st = convert(h, fn, m, c);
    if (st == MACKO_STATUS_SUCCESS)
        st = macko_plan_build(fn, m, m->dev.row_ptr, m->dev.deltas, h->stream, &h->props, NULL, &m->plan,
                              &m->extra[MACKO_EXTRA_TILE_INDEX]);
    macko_dev_leave(&g);
    if (st != MACKO_STATUS_SUCCESS) {
        /* not macko_mat_destroy: its macko_ok() would clear the error details just recorded */
        macko_device_arrays_free(m);
        free(m);
        return st;
    }
    *A = m;
    return macko_ok();
}

/* The handle (position 1), and in *dev the device that reads the input arrays. */
static macko_status_t check_handle(const char *fn, macko_handle_t handle, macko_device_data *dev)
{
    MACKO_CHECK(macko_check_handle(fn, handle));
    dev->device = handle->device;
    dev->readable = macko_dev_ptr_usable;
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_mat_create_dense_device(macko_handle_t handle, macko_mat_t *A, int64_t rows, int64_t cols,
                                             macko_datatype_t type, const void *values, int64_t ld,
                                             macko_order_t order)
{
    static const char fn[] = "macko_mat_create_dense_device";
    macko_device_data dev;
    conv_src c;

    MACKO_CHECK(check_handle(fn, handle, &dev));
    MACKO_CHECK(macko_check_dense_input(fn, 2, A, rows, cols, type, values, ld, order, &dev));

    memset(&c, 0, sizeof c);
    c.es = (int)macko_type_size(type);
    c.a = values;
    c.ld = ld;
    c.colmajor = order == MACKO_ORDER_COL;
    return run(handle, fn, A, rows, cols, type, &c);
}

macko_status_t macko_mat_create_csr_device(macko_handle_t handle, macko_mat_t *A, int64_t rows, int64_t cols,
                                           int64_t nnz, const void *row_ptr, const void *col_ind, const void *values,
                                           macko_indextype_t index_type, macko_index_base_t index_base,
                                           macko_datatype_t type)
{
    static const char fn[] = "macko_mat_create_csr_device";
    macko_device_data dev;
    conv_src c;

    MACKO_CHECK(check_handle(fn, handle, &dev));
    MACKO_CHECK(macko_check_csr_input(fn, 2, A, rows, cols, nnz, row_ptr, col_ind, values, index_type, index_base,
                                      type, &dev));

    memset(&c, 0, sizeof c);
    c.csr = 1;
    c.es = (int)macko_type_size(type);
    c.idx64 = index_type == MACKO_INDEX_64I;
    c.base = (int64_t)index_base;
    c.nnz = nnz;
    c.rp = row_ptr;
    c.ci = col_ind;
    c.vals = values;
    return run(handle, fn, A, rows, cols, type, &c);
}
