/* The N:M kind on the GPU (lapack_style_docs/FORMAT_NM.md): the device layouts (GEN: the canonical arrays; SP24: the
 * arrays of mma.sp, for m == 4, n <= 2 and 16-bit values), upload, download and the launches of the products
 * (kernels/nm.h). Upload decides the layout; a call only picks the path for its n (macko_nm_path). */
#include "device_common.h"
#include "plan.h"
#include "../kernels/nm.h"
#include "../kernels/spmm_tc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int macko_nm_gen_prepare(int max_smem_optin); /* kernels/nm_gen.cu: the SIMT instances that fit */

int macko_nm_pattern_ok(int n, int m, int v)
{
    return (m == 4 || m == 8 || m == 16 || m == 32) && n >= 1 && n <= m &&
           (v == 1 || v == 2 || v == 4 || v == 8 || v == 16 || v == 32);
}

int macko_nm_auto_layout(int n, int m, int v, macko_datatype_t type)
{
    (void)v;
    return m == 4 && n <= 2 && (type == MACKO_R_16F || type == MACKO_R_16BF) ? MACKO_NMDEV_SP24 : MACKO_NMDEV_GEN;
}

void macko_nm_device_bytes(int64_t rows, int64_t cols, int n, int m, int v, macko_datatype_t type, int layout,
                           int64_t *values_bytes, int64_t *meta_bytes)
{
    if (layout == MACKO_NMDEV_SP24) {
        const int64_t units = ((rows + 15) / 16) * ((cols + 31) / 32);
        *values_bytes = units * 512;
        *meta_bytes = units * 64;
    } else {
        const int64_t kept = (cols + m - 1) / m * n;
        *values_bytes = rows * kept * (int64_t)macko_type_size(type);
        *meta_bytes = (rows + v - 1) / v * kept;
    }
}

/* ---- SP24: unit (band b, k-step s) = 16 rows x 32 columns; lane L = 4g + t holds rows g, g + 8 and windows t,
 * t + 4 (kernels/nm_sp24.cu). A window's two slots: n == 2 as stored; n == 1 the kept position p with a zero partner,
 * (p, p + 1) for p < 3 and (0, 3) for p == 3, so that the pair says which slot was kept. */
static void sp24_pair(const struct macko_mat_s *A, int64_t row, int64_t w, uint16_t val[2], int idx[2])
{
    const macko_nm *nm = &A->nm;
    const uint16_t *hv = (const uint16_t *)nm->hvalues;
    val[0] = val[1] = 0;
    idx[0] = 0;
    idx[1] = 1;
    if (row >= A->rows || w >= nm->windows)
        return;
    if (nm->n == 2) {
        val[0] = hv[row * nm->kept + w * 2];
        val[1] = hv[row * nm->kept + w * 2 + 1];
        idx[0] = nm->hpos[(row / nm->v) * nm->kept + w * 2];
        idx[1] = nm->hpos[(row / nm->v) * nm->kept + w * 2 + 1];
    } else {
        const int p = nm->hpos[(row / nm->v) * nm->kept + w];
        const uint16_t x = hv[row * nm->kept + w];
        if (p < 3) {
            idx[0] = p;
            idx[1] = p + 1;
            val[0] = x;
        } else {
            idx[0] = 0;
            idx[1] = 3;
            val[1] = x;
        }
    }
}

static void sp24_build(const struct macko_mat_s *A, uint16_t *vals, uint32_t *meta)
{
    const int64_t bands = (A->rows + 15) / 16, ksteps = (A->cols + 31) / 32;
    int64_t b, s;
    for (b = 0; b < bands; b++)
        for (s = 0; s < ksteps; s++) {
            const int64_t unit = b * ksteps + s;
            int lane, q;
            for (lane = 0; lane < 32; lane++) {
                const int g = lane >> 2, t = lane & 3;
                for (q = 0; q < 4; q++) {
                    const int64_t row = b * 16 + g + 8 * (q & 1), w = s * 8 + t + 4 * (q >> 1);
                    uint16_t v[2];
                    int idx[2];
                    sp24_pair(A, row, w, v, idx);
                    vals[unit * 256 + lane * 8 + q * 2] = v[0];
                    vals[unit * 256 + lane * 8 + q * 2 + 1] = v[1];
                }
            }
            for (lane = 0; lane < 16; lane++) {
                const int g = lane >> 1, t = lane & 1;
                uint32_t word = 0;
                int c, h;
                for (h = 0; h < 2; h++)
                    for (c = 0; c < 4; c++) {
                        uint16_t v[2];
                        int idx[2];
                        sp24_pair(A, b * 16 + g + 8 * h, s * 8 + 4 * t + c, v, idx);
                        word |= (uint32_t)(idx[0] | idx[1] << 2) << (16 * h + 4 * c);
                    }
                meta[unit * 16 + lane] = word;
            }
        }
}

/* The canonical host arrays from the SP24 arrays (the inverse of sp24_build). */
static void sp24_unbuild(struct macko_mat_s *A, const uint16_t *vals, const uint32_t *meta)
{
    macko_nm *nm = &A->nm;
    uint16_t *hv = (uint16_t *)nm->hvalues;
    const int64_t ksteps = (A->cols + 31) / 32;
    int64_t row, w;
    for (row = 0; row < A->rows; row++)
        for (w = 0; w < nm->windows; w++) {
            const int64_t unit = (row / 16) * ksteps + w / 8;
            const int rr = (int)(row % 16), g = rr & 7, h = rr >> 3, c = (int)(w % 8);
            const int lane = g * 4 + (c & 3), q = (c >> 2) * 2 + h;
            const uint32_t nib = (meta[unit * 16 + g * 2 + (c >> 2)] >> (16 * h + 4 * (c & 3))) & 15u;
            const int i0 = (int)(nib & 3u), i1 = (int)(nib >> 2);
            const uint16_t v0 = vals[unit * 256 + lane * 8 + q * 2], v1 = vals[unit * 256 + lane * 8 + q * 2 + 1];
            const int first = row % nm->v == 0;
            if (nm->n == 2) {
                hv[row * nm->kept + w * 2] = v0;
                hv[row * nm->kept + w * 2 + 1] = v1;
                if (first) {
                    nm->hpos[(row / nm->v) * nm->kept + w * 2] = (uint8_t)i0;
                    nm->hpos[(row / nm->v) * nm->kept + w * 2 + 1] = (uint8_t)i1;
                }
            } else {
                const int second = i0 == 0 && i1 == 3;
                hv[row * nm->kept + w] = second ? v1 : v0;
                if (first)
                    nm->hpos[(row / nm->v) * nm->kept + w] = (uint8_t)(second ? 3 : i0);
            }
        }
}

static size_t at_least16(int64_t bytes) { return bytes < 16 ? 16 : (size_t)bytes; }

macko_status_t macko_nm_upload_as(const char *fn, macko_handle_t handle, macko_mat_t A, int layout)
{
    macko_dev_guard g;
    cudaStream_t s = (cudaStream_t)handle->stream;
    int64_t vb, mb;
    void *tv = NULL, *tm = NULL, *dv = NULL, *dm = NULL;
    cudaError_t e;
    int wg;
    if (layout < 0)
        layout = macko_nm_auto_layout(A->nm.n, A->nm.m, A->nm.v, A->type);
    /* the wgmma.sp product where the device runs sm_90a code (the panel GEMM's rule, src/plan.c) */
    wg = layout == MACKO_NMDEV_SP24 && macko_panel_gemm_of(&handle->props) == MACKO_PANEL_GEMM_WG;
    macko_nm_device_bytes(A->rows, A->cols, A->nm.n, A->nm.m, A->nm.v, A->type, layout, &vb, &mb);
    if (layout == MACKO_NMDEV_SP24) {
        tv = malloc(at_least16(vb));
        tm = malloc(at_least16(mb));
        if (tv == NULL || tm == NULL) {
            free(tv);
            free(tm);
            return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "cannot allocate the SP24 arrays (%" PRId64 " bytes)",
                              vb + mb);
        }
        sp24_build(A, (uint16_t *)tv, (uint32_t *)tm);
    }
    e = macko_dev_enter(&g, handle->device);
    if (e != cudaSuccess) {
        free(tv);
        free(tm);
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", handle->device,
                          cudaGetErrorString(e));
    }
    cudaGetLastError();
    e = (cudaError_t)macko_nm_prepare();
    if (e == cudaSuccess)
        e = (cudaError_t)macko_nm_gen_prepare(handle->props.smem_per_block_optin);
    if (e == cudaSuccess && wg)
        e = (cudaError_t)macko_nm_sp24_wg_prepare();
    if (e != cudaSuccess) {
        free(tv);
        free(tm);
        macko_dev_leave(&g);
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot set the N:M kernels' shared-memory limits: %s",
                          cudaGetErrorString(e));
    }
    if (e == cudaSuccess)
        e = cudaMalloc(&dv, at_least16(vb));
    if (e == cudaSuccess)
        e = cudaMalloc(&dm, at_least16(mb));
    /* from pageable memory each copy returns once its source is staged: the temporaries may go right after */
    if (e == cudaSuccess && vb > 0)
        e = cudaMemcpyAsync(dv, tv != NULL ? tv : A->nm.hvalues, (size_t)vb, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess && mb > 0)
        e = cudaMemcpyAsync(dm, tm != NULL ? tm : (void *)A->nm.hpos, (size_t)mb, cudaMemcpyHostToDevice, s);
    free(tv);
    free(tm);
    if (e != cudaSuccess) {
        const macko_status_t st = macko_cuda_status(e);
        /* a copy queued before the failure may still read into dv; a failed wait must not be left for the next
         * call's error check */
        if (cudaStreamSynchronize(s) != cudaSuccess)
            cudaGetLastError();
        cudaFree(dv);
        cudaFree(dm);
        macko_dev_leave(&g);
        return macko_fail(st, fn, 0, "cannot %s the device arrays (%" PRId64 " bytes)",
                          st == MACKO_STATUS_ALLOC_FAILED ? "allocate" : "copy", vb + mb);
    }
    macko_dev_leave(&g);
    macko_nm_device_free(A);
    A->nm.dvalues = dv;
    A->nm.dmeta = dm;
    A->nm.dvalues_bytes = vb;
    A->nm.dmeta_bytes = mb;
    A->nm.dev_layout = layout;
    A->nm.path = 0;
    A->nm.cfg = 0;
    A->nm.wg = wg && macko_nm_sp24_wg_ready();
    A->nm.simt_cfg = macko_nm_simt_auto_cfg(A->nm.n, A->nm.m, handle->props.smem_per_block_optin);
    A->nm.simt_n = A->nm.simt_cfg >= 0 ? macko_nm_simt_from(A->rows, A->cols, A->nm.n, A->nm.m,
                                                                            handle->props.sm_count)
                                       : INT64_MAX;
    A->device = handle->device;
    A->has_device = 1;
    return macko_ok();
}

macko_status_t macko_nm_upload(const char *fn, macko_handle_t handle, macko_mat_t A)
{
    return macko_nm_upload_as(fn, handle, A, -1);
}

macko_status_t macko_nm_download(const char *fn, macko_handle_t handle, macko_mat_t A)
{
    macko_dev_guard g;
    cudaStream_t s = (cudaStream_t)handle->stream;
    const int64_t vbytes = A->rows * A->nm.kept * (int64_t)macko_type_size(A->type);
    const int64_t pbytes = A->nm.groups * A->nm.kept;
    void *hv = macko_aligned_calloc((size_t)vbytes);
    uint8_t *hp = (uint8_t *)macko_aligned_calloc((size_t)pbytes);
    void *tv = NULL, *tm = NULL;
    const int sp24 = A->nm.dev_layout == MACKO_NMDEV_SP24;
    cudaError_t e;
    if (sp24) {
        tv = malloc(at_least16(A->nm.dvalues_bytes));
        tm = malloc(at_least16(A->nm.dmeta_bytes));
    }
    if (hv == NULL || hp == NULL || (sp24 && (tv == NULL || tm == NULL))) {
        macko_aligned_free(hv);
        macko_aligned_free(hp);
        free(tv);
        free(tm);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "cannot allocate the host arrays (%" PRId64 " bytes)",
                          vbytes + pbytes);
    }
    e = macko_dev_enter(&g, A->device);
    if (e == cudaSuccess) {
        cudaGetLastError();
        if (A->nm.dvalues_bytes > 0)
            e = cudaMemcpyAsync(sp24 ? tv : hv, A->nm.dvalues, (size_t)A->nm.dvalues_bytes, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess && A->nm.dmeta_bytes > 0)
            e = cudaMemcpyAsync(sp24 ? tm : (void *)hp, A->nm.dmeta, (size_t)A->nm.dmeta_bytes, cudaMemcpyDeviceToHost,
                                s);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s);
        macko_dev_leave(&g);
    }
    if (e != cudaSuccess) {
        macko_aligned_free(hv);
        macko_aligned_free(hp);
        free(tv);
        free(tm);
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot copy the device arrays back: %s", cudaGetErrorString(e));
    }
    if (A->has_host) {
        macko_aligned_free(A->nm.hvalues);
        macko_aligned_free(A->nm.hpos);
    }
    A->nm.hvalues = hv;
    A->nm.hpos = hp;
    if (sp24)
        sp24_unbuild(A, (const uint16_t *)tv, (const uint32_t *)tm);
    free(tv);
    free(tm);
    A->has_host = 1;
    return macko_ok();
}

void macko_nm_device_free(struct macko_mat_s *m)
{
    cudaFree(m->nm.dvalues);
    cudaFree(m->nm.dmeta);
    m->nm.dvalues = m->nm.dmeta = NULL;
    m->nm.dvalues_bytes = m->nm.dmeta_bytes = 0;
}

/* Floats of the workspace the SP24 and SIMT partial sums may use: all of its partial region. */
#define NM_WS_FLOATS ((MACKO_WS_BYTES - (int64_t)MACKO_WS_COUNTERS * (int64_t)sizeof(int)) / (int64_t)sizeof(float))

/* Columns from which fp32 products take the blocked SIMT kernel where it applies (bench/NOTES.md, sessions 15 and
 * 16). Up to 128 columns SIMT's grid is one 128-row block per row block (times its splits along K) whatever n is, so
 * its time hardly grows with n, while GEN's grows linearly in n: SIMT pays from about n = k * 8192 * waves / (rows *
 * splits), with waves = ceil(ceil(rows / 128) / sm_count), splits = macko_nm_simt_splits at n = 128 and k = 8 + 64 /
 * S for S = nn * 32 / mm kept values per 32 columns (the transposes of B's piece do not shrink with S). Fitted on an
 * H200 to 8192^2 and 4096 x 11008 at 4..16 of 32 (crossings at n = 12..56 unsplit, 8..12 with 2 and 4 splits); kept
 * within 16..128, 8..128 where SIMT splits (measured down to 8). Pure. */
int macko_nm_simt_auto_cfg(int nn, int mm, int max_smem_optin)
{
    const int b0 = macko_nm_simt_smem(0, nn, mm), b1 = macko_nm_simt_smem(1, nn, mm);
    return b0 >= 0 && b0 <= max_smem_optin ? 0 : b1 >= 0 && b1 <= max_smem_optin ? 1 : -1;
}

int64_t macko_nm_simt_from(int64_t rows, int64_t cols, int nn, int mm, int sm_count)
{
    const int64_t s = mm > 0 ? (int64_t)nn * 32 / mm : 0;
    int64_t blocks, waves, n, lo;
    int splits;
    if (rows <= 0 || s <= 0 || sm_count <= 0)
        return 128;
    blocks = (rows + 127) / 128;
    waves = (blocks + sm_count - 1) / sm_count;
    splits = macko_nm_simt_splits(rows, cols, 128, sm_count, NM_WS_FLOATS);
    lo = splits > 1 ? 8 : 16;
    /* ceil((8 + 64 / s) * 8192 * waves / (rows * splits)) = ceil((8 s + 64) * 8192 * waves / (s * rows * splits)) */
    n = ((8 * s + 64) * 8192 * waves + s * rows * splits - 1) / (s * rows * splits);
    return n < lo ? lo : n > 128 ? 128 : n;
}
/* Columns from which SP24 products take the wgmma.sp kernel where the device runs it (bench/NOTES.md, sessions 11
 * and 17: with the B box narrowed to n, SP24WG at n = 64 took 24 / 89 / 122 us on 4096^2 / 12288^2 / 28672 x 8192
 * against SP24's 31 / 170 / 195 us; the two other 4096-sized shapes were ahead on SP24WG at n = 64 already before). */
#define MACKO_NM_WG_N 64

int macko_nm_path(const struct macko_mat_s *M, int combo, int64_t n)
{
    if (M->nm.path != 0)
        return M->nm.path;
    if (M->nm.dev_layout == MACKO_NMDEV_SP24)
        return M->nm.wg && n >= MACKO_NM_WG_N ? MACKO_NM_PATH_SP24WG : MACKO_NM_PATH_SP24;
    if (combo == MACKO_COMBO_S && n >= M->nm.simt_n && macko_nm_simt_ok(M->nm.n, M->nm.m, M->nm.v, M->nm.kept))
        return MACKO_NM_PATH_SIMT;
    return MACKO_NM_PATH_GEN;
}


macko_status_t macko_nm_compute(const char *fn, macko_handle_t handle, const struct macko_mat_s *M, int combo,
                                const void *alpha, const void *b, int64_t incb, int64_t ldb, const void *beta,
                                void *c, int64_t incc, int64_t ldc, int64_t n)
{
    macko_nm_args a;
    int err;
    memset(&a, 0, sizeof a);
    a.k.rows = M->rows;
    a.k.cols = M->cols;
    a.k.b = b;
    a.k.incb = incb;
    a.k.ldb = ldb;
    a.k.c = c;
    a.k.incc = incc;
    a.k.ldc = ldc;
    a.k.n = n;
    a.k.stream = handle->stream;
    macko_kargs_scalars(handle, combo, alpha, beta, &a.k);
    a.combo = combo;
    a.nn = M->nm.n;
    a.mm = M->nm.m;
    a.vv = M->nm.v;
    a.kept = M->nm.kept;
    a.values = M->nm.dvalues;
    a.meta = M->nm.dmeta;
    a.path = macko_nm_path(M, combo, n);
    a.cfg = M->nm.cfg - 1;
    if (a.path == MACKO_NM_PATH_SIMT && a.cfg < 0)
        a.cfg = M->nm.simt_cfg;
    /* SP24WG reads B through a tensor map: at least one column in A, B with unit element stride, 16-byte aligned, ldb
     * a multiple of 8 elements */
    if (a.path == MACKO_NM_PATH_SP24WG &&
        !(M->nm.wg && M->cols > 0 && incb == 1 && ldb % 8 == 0 && ((uintptr_t)b & 15u) == 0)) {
        a.path = MACKO_NM_PATH_SP24;
        if (M->nm.path == MACKO_NM_PATH_SP24WG)
            a.cfg = -1; /* a forced configuration was SP24WG's */
    }
    if (a.path == MACKO_NM_PATH_SP24) {
        if (a.cfg < 0)
            a.cfg = macko_nm_sp24_auto_cfg(M->rows, M->cols, n, handle->props.sm_count);
        a.splits = macko_nm_sp24_splits(M->rows, M->cols, n, a.cfg, handle->props.sm_count, NM_WS_FLOATS);
        a.ws = handle->ws.partial;
    }
    if (a.path == MACKO_NM_PATH_SP24WG) {
        a.splits = macko_nm_sp24_wg_splits(M->rows, M->cols, n, handle->props.sm_count, NM_WS_FLOATS);
        a.ws = handle->ws.partial;
        if (a.cfg < 0)
            a.cfg = macko_nm_sp24_wg_auto_cfg(n);
    }
    if (a.path == MACKO_NM_PATH_SIMT) {
        a.splits = macko_nm_simt_splits(M->rows, M->cols, n, handle->props.sm_count, NM_WS_FLOATS);
        a.ws = handle->ws.partial;
    }
    err = macko_nm_spmm(&a);
    if (err != 0)
        return macko_launch_fail(handle, fn, err);
    return macko_ok();
}
