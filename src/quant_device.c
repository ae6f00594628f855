/* The QUANT kind on the GPU (lapack_style_docs/FORMAT_QUANT.md): upload with the choice of the outlier layout and
 * the block shape, download, freeing, and the launches of the compute routines (kernels/quant_gemv.cu).
 *
 * Upload decides everything once: TCOL (the band-interleaved outliers) where its padding stays small, else CSR; the
 * warps per block so that the bands fill the device. Compute calls only look at the call's strides. */
#include "check.h"
#include "device_common.h"
#include "quant.h"
#include "../kernels/quant.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static size_t at_least16(int64_t bytes) { return bytes < 16 ? 16 : (size_t)bytes; }

/* TCOL slots of the host CSR outliers: per band 16 * the longest row of the band. */
static int64_t tcol_slots(const struct macko_mat_s *A)
{
    const int32_t *rp = A->q.host.optr;
    int64_t b, total = 0;
    for (b = 0; b < A->q.bands; b++) {
        int64_t r, longest = 0;
        for (r = b * 16; r < b * 16 + 16 && r < A->rows; r++)
            if (rp[r + 1] - rp[r] > longest)
                longest = rp[r + 1] - rp[r];
        total += 16 * longest;
    }
    return total;
}

/* The layout upload picks: TCOL when its padding costs at most MACKO_QUANT_TCOL_MAX_PAD of the outlier bytes. */
int macko_quant_auto_layout(int64_t outliers, int64_t tcol_slots)
{
    return outliers > 0 && (double)tcol_slots <= MACKO_QUANT_TCOL_MAX_PAD * (double)outliers ? MACKO_QOUT_TCOL
                                                                                           : MACKO_QOUT_CSR;
}

/* Floats of the workspace the unit sums may use: all of its partial region. */
#define QUANT_WS_FLOATS ((MACKO_WS_BYTES - (int64_t)MACKO_WS_COUNTERS * (int64_t)sizeof(int)) / (int64_t)sizeof(float))

int macko_quant_auto_unit(int64_t rows, int64_t tcols, int ounits, int group, int sm_count)
{
    const int64_t bands = (rows + 15) / 16;
    /* whole groups of tiles (quant_gemv.cu: 8 with one band per unit, 4 with four); with four bands, at least 16
     * tiles: shorter units measured slower at n = 8 and 16 (each output then adds more unit sums; bench/NOTES.md) */
    const int64_t gran = group == 1 ? 8 : 4, least = group == 1 ? 8 : 16;
    int64_t unit = bands * tcols / (group * (int64_t)sm_count * (group == 1 ? 64 : 16)) / gran * gran;
    unit = unit < least ? least : unit > 32 ? 32 : unit;
    while (unit < tcols && macko_quant_ws_floats(rows, tcols, (int)unit, ounits, MACKO_QUANT_TILE_N) > QUANT_WS_FLOATS)
        unit *= 2;
    if (unit > tcols)
        unit = tcols > 0 ? tcols : 1;
    return macko_quant_ws_floats(rows, tcols, (int)unit, ounits, MACKO_QUANT_TILE_N) > QUANT_WS_FLOATS ? 0 : (int)unit;
}

/* The outlier units of a layout, at most max_units per band: TCOL: chunks of at least 16 slot rows, at most 64
 * units; CSR: at most one unit per row. */
static void outlier_units(const struct macko_mat_s *A, int layout, const int32_t *band_ptr, int max_units,
                          int *ounits, int *ochunk)
{
    *ounits = 0;
    *ochunk = 16;
    if (A->q.outliers == 0)
        return;
    if (layout == MACKO_QOUT_CSR) {
        *ounits = max_units < 16 ? max_units : 16;
        return;
    }
    {
        const int64_t cap = max_units < 64 ? max_units : 64;
        int64_t b, longest = 0;
        for (b = 0; b < A->q.bands; b++)
            if ((band_ptr[b + 1] - band_ptr[b]) / 16 > longest)
                longest = (band_ptr[b + 1] - band_ptr[b]) / 16;
        if ((longest + cap - 1) / cap > 16)
            *ochunk = (int)((longest + cap - 1) / cap);
        *ounits = (int)((longest + *ochunk - 1) / *ochunk);
    }
}

/* Builds the TCOL arrays from the host CSR into band_ptr (bands + 1) and slots (zeroed, n slots). */
static void tcol_build(const struct macko_mat_s *A, int32_t *band_ptr, uint32_t *slots)
{
    const int32_t *rp = A->q.host.optr;
    int64_t b, at = 0;
    for (b = 0; b < A->q.bands; b++) {
        int64_t r, longest = 0;
        band_ptr[b] = (int32_t)at;
        for (r = b * 16; r < b * 16 + 16 && r < A->rows; r++) {
            int64_t j;
            for (j = 0; j < rp[r + 1] - rp[r]; j++)
                slots[at + 16 * j + (r - b * 16)] = A->q.host.oent[rp[r] + j];
            if (rp[r + 1] - rp[r] > longest)
                longest = rp[r + 1] - rp[r];
        }
        at += 16 * longest;
    }
    band_ptr[A->q.bands] = (int32_t)at;
}

static void dev_release(macko_quant_arrays *d)
{
    cudaFree(d->words);
    cudaFree(d->optr);
    cudaFree(d->oent);
    memset(d, 0, sizeof *d);
}

void macko_quant_device_free(struct macko_mat_s *m)
{
    if (m->q.dev.words == NULL && m->q.dev.optr == NULL && m->q.dev.oent == NULL)
        return;
    {
        int cur = -1, switched = 0, failed = cudaGetDevice(&cur) != cudaSuccess;
        if (!failed && cur != m->device) {
            switched = cudaSetDevice(m->device) == cudaSuccess;
            failed = !switched;
        }
        dev_release(&m->q.dev);
        if (switched && cudaSetDevice(cur) != cudaSuccess)
            failed = 1;
        if (failed)
            cudaGetLastError();
    }
    memset(&m->q.dev, 0, sizeof m->q.dev);
}

macko_status_t macko_quant_upload(const char *fn, macko_handle_t handle, macko_mat_t A, int layout, int unit_tiles,
                                  int max_ounits)
{
    macko_dev_guard g;
    macko_quant_arrays d;
    cudaStream_t s = (cudaStream_t)handle->stream;
    const int64_t tslots = A->q.outliers > 0 ? tcol_slots(A) : 0;
    int64_t slots, optr_n;
    int32_t *bp = NULL;
    uint32_t *ts = NULL;
    int ounits = 0, ochunk = 16, unit_tiles_g = 0, u1 = 0, maxou, fits;
    cudaError_t e;
    if (layout < 0)
        layout = macko_quant_auto_layout(A->q.outliers, tslots);
    slots = layout == MACKO_QOUT_TCOL ? tslots : A->q.outliers;
    optr_n = layout == MACKO_QOUT_TCOL ? A->q.bands + 1 : A->rows + 1;
    if (slots > INT32_MAX)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2, "A's TCOL outliers need %" PRId64 " slots (> 2^31 - 1)",
                          slots);
    if (layout == MACKO_QOUT_TCOL) {
        bp = (int32_t *)malloc((size_t)optr_n * sizeof *bp);
        ts = (uint32_t *)calloc((size_t)(slots > 0 ? slots : 1), sizeof *ts);
        if (bp == NULL || ts == NULL) {
            free(bp);
            free(ts);
            return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "cannot allocate the TCOL outliers (%" PRId64 " slots)",
                              slots);
        }
        tcol_build(A, bp, ts);
    }
    /* fewer outlier units (each longer) until the unit sums fit the workspace */
    for (maxou = max_ounits > 0 ? max_ounits : 64;; maxou /= 2) {
        outlier_units(A, layout, bp, maxou, &ounits, &ochunk);
        u1 = unit_tiles > 0 ? unit_tiles : macko_quant_auto_unit(A->rows, A->q.tcols, ounits, 1, handle->props.sm_count);
        unit_tiles_g =
            unit_tiles > 0 ? unit_tiles : macko_quant_auto_unit(A->rows, A->q.tcols, ounits, 4, handle->props.sm_count);
        fits = u1 > 0 && unit_tiles_g > 0 &&
               macko_quant_ws_floats(A->rows, A->q.tcols, u1 < unit_tiles_g ? u1 : unit_tiles_g, ounits,
                                     MACKO_QUANT_TILE_N) <= QUANT_WS_FLOATS;
        if (fits || maxou == 1)
            break;
    }
    if (!fits) {
        free(bp);
        free(ts);
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2,
                          "A has %" PRId64 " rows: its unit sums do not fit the handle's workspace", A->rows);
    }
    e = macko_dev_enter(&g, handle->device);
    if (e != cudaSuccess) {
        free(bp);
        free(ts);
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", handle->device,
                          cudaGetErrorString(e));
    }
    cudaGetLastError();
    memset(&d, 0, sizeof d);
    e = cudaMalloc((void **)&d.words, at_least16(A->q.words_count * 8));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&d.optr, at_least16(optr_n * 4));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&d.oent, at_least16(slots * 4));
    /* from pageable memory each copy returns once its source is staged: the temporaries may go right after */
    if (e == cudaSuccess && A->q.words_count > 0)
        e = cudaMemcpyAsync(d.words, A->q.host.words, (size_t)A->q.words_count * 8, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(d.optr, layout == MACKO_QOUT_TCOL ? bp : A->q.host.optr, (size_t)optr_n * 4,
                            cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess && slots > 0)
        e = cudaMemcpyAsync(d.oent, layout == MACKO_QOUT_TCOL ? ts : A->q.host.oent, (size_t)slots * 4,
                            cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) {
        macko_status_t st = macko_cuda_status(e);
        cudaStreamSynchronize(s);
        dev_release(&d);
        macko_dev_leave(&g);
        free(bp);
        free(ts);
        return macko_fail(st, fn, 0, "cannot %s the device arrays (%" PRId64 " words)",
                          st == MACKO_STATUS_ALLOC_FAILED ? "allocate" : "copy", A->q.words_count);
    }
    macko_dev_leave(&g);
    free(bp);
    free(ts);
    macko_quant_device_free(A);
    A->q.dev = d;
    A->q.layout = layout;
    A->q.slots = slots;
    A->entries_padded = slots;
    A->q.unit_tiles = u1;
    A->q.unit_tiles_g = unit_tiles_g;
    A->q.ounits = ounits;
    A->q.ochunk = ochunk;
    A->device = handle->device;
    A->has_device = 1;
    return macko_ok();
}

macko_status_t macko_quant_download(const char *fn, macko_handle_t handle, macko_mat_t A)
{
    macko_dev_guard g;
    cudaStream_t s = (cudaStream_t)handle->stream;
    const int64_t optr_n = A->q.layout == MACKO_QOUT_TCOL ? A->q.bands + 1 : A->rows + 1;
    uint64_t *w = (uint64_t *)macko_aligned_calloc((size_t)A->q.words_count * 8);
    int32_t *op = (int32_t *)macko_aligned_calloc((size_t)optr_n * 4);
    uint32_t *oe = (uint32_t *)macko_aligned_calloc((size_t)A->q.slots * 4);
    int32_t *rp = NULL;
    uint32_t *ce = NULL;
    cudaError_t e = cudaSuccess;
    if (w == NULL || op == NULL || oe == NULL) {
        macko_aligned_free(w);
        macko_aligned_free(op);
        macko_aligned_free(oe);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "cannot allocate the host arrays");
    }
    e = macko_dev_enter(&g, handle->device);
    if (e == cudaSuccess) {
        cudaGetLastError();
        if (A->q.words_count > 0)
            e = cudaMemcpyAsync(w, A->q.dev.words, (size_t)A->q.words_count * 8, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(op, A->q.dev.optr, (size_t)optr_n * 4, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess && A->q.slots > 0)
            e = cudaMemcpyAsync(oe, A->q.dev.oent, (size_t)A->q.slots * 4, cudaMemcpyDeviceToHost, s);
        {
            cudaError_t e2 = cudaStreamSynchronize(s);
            if (e == cudaSuccess)
                e = e2;
        }
        macko_dev_leave(&g);
    }
    if (e != cudaSuccess) {
        macko_aligned_free(w);
        macko_aligned_free(op);
        macko_aligned_free(oe);
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot copy the device arrays: %s", cudaGetErrorString(e));
    }
    if (A->q.layout == MACKO_QOUT_TCOL) {
        /* back to CSR: a row's outliers are its band's nonzero slots 16j + i, j = 0, 1, ... (values are never 0) */
        int64_t b, at = 0;
        rp = (int32_t *)macko_aligned_calloc((size_t)(A->rows + 1) * 4);
        ce = (uint32_t *)macko_aligned_calloc((size_t)A->q.outliers * 4);
        if (rp == NULL || ce == NULL) {
            macko_aligned_free(w);
            macko_aligned_free(op);
            macko_aligned_free(oe);
            macko_aligned_free(rp);
            macko_aligned_free(ce);
            return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "cannot allocate the host arrays");
        }
        for (b = 0; b < A->q.bands; b++) {
            const int64_t len = (op[b + 1] - op[b]) / 16;
            int64_t i, j;
            for (i = 0; i < 16 && b * 16 + i < A->rows; i++) {
                rp[b * 16 + i] = (int32_t)at;
                for (j = 0; j < len && oe[op[b] + 16 * j + i] != 0u; j++)
                    ce[at++] = oe[op[b] + 16 * j + i];
            }
        }
        rp[A->rows] = (int32_t)at;
        macko_aligned_free(op);
        macko_aligned_free(oe);
        op = rp;
        oe = ce;
    }
    macko_host_arrays_free(A);
    A->q.host.words = w;
    A->q.host.optr = op;
    A->q.host.oent = oe;
    A->has_host = 1;
    return macko_ok();
}

macko_status_t macko_quant_compute(const char *fn, macko_handle_t handle, const struct macko_mat_s *M,
                                   const void *alpha, const void *b, int64_t incb, int64_t ldb, const void *beta,
                                   void *c, int64_t incc, int64_t ldc, int64_t n)
{
    macko_quant_kargs a;
    int64_t j0;
    memset(&a, 0, sizeof a);
    a.rows = M->rows;
    a.cols = M->cols;
    a.tcols = M->q.tcols;
    a.words = M->q.dev.words;
    a.optr = M->q.dev.optr;
    a.oent = M->q.dev.oent;
    a.tcol_outliers = M->q.layout == MACKO_QOUT_TCOL;
    a.unit_tiles = M->q.unit_tiles;
    a.unit_tiles_g = M->q.unit_tiles_g;
    a.ounits = M->q.ounits;
    a.ochunk = M->q.ochunk;
    a.ws = handle->ws.partial;
    a.incb = incb;
    a.ldb = ldb;
    a.incc = incc;
    a.ldc = ldc;
    macko_resolve_scalars(handle, (const float *)alpha, (const float *)beta, &a.alpha, &a.beta, &a.alpha_dev,
                          &a.beta_dev);
    a.stream = handle->stream;
    for (j0 = 0; j0 < n; j0 += MACKO_QUANT_TILE_N) {
        int err;
        a.n = n - j0 < MACKO_QUANT_TILE_N ? n - j0 : MACKO_QUANT_TILE_N;
        a.b = (const uint16_t *)b + j0 * ldb;
        a.c = (uint16_t *)c + j0 * ldc;
        err = macko_quant_launch(&a);
        if (err != 0)
            return macko_launch_fail(handle, fn, err);
    }
    return macko_ok();
}
