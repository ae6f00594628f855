/* macko_plan_override (plan.h): the one test hook that forces kernel choices, so that the tests reach every kernel
 * (64-bit indices on small matrices included) through the public compute routines. Not in macko.h. */
#include "device_common.h"
#include "../kernels/nm.h"
#include "../kernels/spmm_tc.h"
#include "../kernels/spmm_tiles.h"

#include <stdlib.h>

/* An int64 copy of M's int32 device row pointers, on the current device (synchronous on stream). */
static macko_status_t widen_row_ptr(const struct macko_mat_s *M, macko_stream_t stream, void **out)
{
    const size_t n = (size_t)M->rows + 1;
    const cudaStream_t s = (cudaStream_t)stream;
    int32_t *h32 = (int32_t *)malloc(n * sizeof *h32);
    int64_t *h64 = (int64_t *)malloc(n * sizeof *h64);
    void *d = NULL;
    macko_status_t st = MACKO_STATUS_ALLOC_FAILED;
    *out = NULL;
    if (h32 != NULL && h64 != NULL) {
        size_t i;
        cudaError_t e = cudaMemcpyAsync(h32, M->dev.row_ptr, n * sizeof *h32, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s);
        if (e == cudaSuccess) {
            for (i = 0; i < n; i++)
                h64[i] = h32[i];
            e = cudaMalloc(&d, n * sizeof *h64);
        }
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(d, h64, n * sizeof *h64, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s);
        if (e != cudaSuccess) {
            cudaFree(d);
            d = NULL;
        }
        st = e == cudaSuccess ? MACKO_STATUS_SUCCESS : macko_cuda_status(e);
    }
    free(h32);
    free(h64);
    *out = d;
    return st;
}

macko_status_t macko_plan_override(macko_handle_t handle, macko_mat_t A, macko_operation_t op,
                                   const macko_plan_forced *f)
{
    static const char fn[] = "macko_plan_override";
    struct macko_mat_s *M;
    macko_dev_guard g;
    macko_plan p;
    macko_status_t st;
    void *rp64 = NULL, *tidx = NULL;
    cudaError_t e;

    if (handle == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 1, "handle is NULL");
    if (A == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2, "A is NULL");
    if (!A->has_device)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 2, "A is not on the device (see macko_mat_upload)");
    if (A->device != handle->device)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 2, "A is on device %d, the handle on device %d", A->device,
                          handle->device);
    if (op != MACKO_OPERATION_NON_TRANSPOSE && op != MACKO_OPERATION_TRANSPOSE)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 3,
                          "op is %d; it must be MACKO_OPERATION_NON_TRANSPOSE (0) or MACKO_OPERATION_TRANSPOSE (1)",
                          (int)op);
    if (A->kind == MACKO_KIND_NM) {
        const int path = f != NULL ? f->nm_path : 0, cfg = f != NULL ? f->nm_cfg : 0;
        const int type_ok = A->type == MACKO_R_16F || A->type == MACKO_R_16BF;
        int layout = A->nm.dev_layout;
        macko_status_t st2;
        if (op == MACKO_OPERATION_TRANSPOSE)
            return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 3, "op T is not supported on an N:M matrix");
        if (path < MACKO_NM_PATH_AUTO || path > MACKO_NM_PATH_SP24WG)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "nm_path = %d out of range (0..4)", path);
        if (cfg < 0 || cfg > (path == MACKO_NM_PATH_SP24     ? macko_nm_sp24_configs()
                              : path == MACKO_NM_PATH_SP24WG ? macko_nm_sp24_wg_configs()
                              : path == MACKO_NM_PATH_SIMT   ? macko_nm_simt_configs()
                                                             : 0))
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "nm_cfg = %d out of range for nm_path = %d", cfg, path);
        if (path == MACKO_NM_PATH_SP24 && cfg > 0 && !macko_nm_sp24_config_built(cfg - 1))
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4,
                              "nm_cfg = %d: SP24 configuration %d is retired (not compiled; kernels/nm_sp24.cu)", cfg,
                              cfg - 1);
        if ((path == MACKO_NM_PATH_SP24 || path == MACKO_NM_PATH_SP24WG) && !(A->nm.m == 4 && A->nm.n <= 2 && type_ok))
            return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 4, "the %s path needs m == 4, n <= 2 and 16-bit values",
                              path == MACKO_NM_PATH_SP24 ? "SP24" : "SP24WG");
        if (path == MACKO_NM_PATH_SP24WG && !(A->nm.dev_layout == MACKO_NMDEV_SP24 ? A->nm.wg
                                              : macko_panel_gemm_of(&handle->props) == MACKO_PANEL_GEMM_WG))
            return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 4,
                              "the SP24WG path needs wgmma.sp: compute capability 9.0 and a build with sm_90a");
        if (path == MACKO_NM_PATH_SIMT &&
            !(A->type == MACKO_R_32F && macko_nm_simt_ok(A->nm.n, A->nm.m, A->nm.v, A->nm.kept)))
            return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 4,
                              "the SIMT path needs fp32 values and v >= 8");
        if (path == MACKO_NM_PATH_SIMT) { /* the forced configuration, or the one the device takes */
            const int optin = handle->props.smem_per_block_optin;
            const int simt_cfg = cfg > 0 ? cfg - 1 : macko_nm_simt_auto_cfg(A->nm.n, A->nm.m, optin);
            const int bytes = macko_nm_simt_smem(simt_cfg < 0 ? 1 : simt_cfg, A->nm.n, A->nm.m);
            if (simt_cfg < 0 || bytes > optin)
                return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 4,
                                  "the SIMT kernel for %d:%d (configuration %d) needs %d bytes of shared memory per "
                                  "block; the device allows %d",
                                  A->nm.n, A->nm.m, simt_cfg < 0 ? 1 : simt_cfg, bytes, optin);
        }
        if (path == MACKO_NM_PATH_SP24 || path == MACKO_NM_PATH_SP24WG)
            layout = MACKO_NMDEV_SP24;
        else if (path != MACKO_NM_PATH_AUTO)
            layout = MACKO_NMDEV_GEN;
        else
            layout = macko_nm_auto_layout(A->nm.n, A->nm.m, A->nm.v, A->type);
        if (layout != A->nm.dev_layout) {
            if (!A->has_host)
                return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 2,
                                  "this N:M override uploads A again: it needs A's host copy");
            st2 = macko_nm_upload_as(fn, handle, A, layout);
            if (st2 != MACKO_STATUS_SUCCESS)
                return st2;
        }
        A->nm.path = path;
        A->nm.cfg = cfg;
        return macko_ok();
    }
    if (op == MACKO_OPERATION_TRANSPOSE && (A->trans == NULL || !A->trans->has_device))
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 3,
                          "op T needs the transposed encoding: call macko_analysis with op T first");
    if (A->dev_layout == MACKO_LAYOUT_TILES && op == MACKO_OPERATION_NON_TRANSPOSE) {
        const int sp = f != NULL ? f->tiles_splits : 0, path = f != NULL ? f->tiles_path : 0;
        const int gemm = macko_panel_gemm_forced(&handle->props, f != NULL ? f->panel_gemm : 0);
        if (sp < 0 || sp > 64 || path < 0 || path > 3)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4,
                              "tiles_splits = %d (0..64) / tiles_path = %d (0..3) out of range", sp, path);
        if (f != NULL && (f->panel_gemm < 0 || f->panel_gemm > 2))
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "panel_gemm = %d out of range (0..2)", f->panel_gemm);
        if (f != NULL && (f->panel_splits < 0 || f->panel_splits > 8))
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "panel_splits = %d out of range (0..8)",
                              f->panel_splits);
        if (f != NULL && f->tiles_wg_bn != 0 && f->tiles_wg_bn != 64 && f->tiles_wg_bn != 128 && f->tiles_wg_bn != 256)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "tiles_wg_bn = %d is not 0, 64, 128 or 256",
                              f->tiles_wg_bn);
        if (f != NULL && (f->tiles_wg_stream < -1 || f->tiles_wg_stream > (1 << 20)))
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "tiles_wg_stream = %d out of range (-1..2^20)",
                              f->tiles_wg_stream);
        if (f != NULL && (f->tiles_wg_tail < -1 || f->tiles_wg_tail == 1 || f->tiles_wg_tail > 16))
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "tiles_wg_tail = %d is not -1, 0 or 2..16",
                              f->tiles_wg_tail);
        if (f != NULL && (f->tiles_wg_cluster < -1 || f->tiles_wg_cluster == 1 || f->tiles_wg_cluster > 2))
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "tiles_wg_cluster = %d is not -1, 0 or 2",
                              f->tiles_wg_cluster);
        if (f != NULL && f->tiles_kg != 0 && f->tiles_kg != MACKO_TILES_KG && f->tiles_kg != MACKO_TILES_KG_WIDE)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "tiles_kg = %d is not 0, %d or %d", f->tiles_kg,
                              MACKO_TILES_KG, MACKO_TILES_KG_WIDE);
        if (f != NULL && f->tiles_cp_async != 0 && f->tiles_cp_async != 1)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4, "tiles_cp_async = %d is not 0 or 1", f->tiles_cp_async);
        if (gemm < 0)
            return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 4,
                              "panel_gemm = 2 (wgmma) needs compute capability 9.0 and a library built for sm_90a");
        if (path == 3 && gemm != MACKO_PANEL_GEMM_WG)
            return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 4,
                              "tiles_path = 3 (the fused wgmma product) needs compute capability 9.0, a library built "
                              "for sm_90a and panel_gemm 0 or 2");
        A->td.splits = sp;
        A->td.path = path;
        A->td.panel_gemm = gemm;
        A->td.panel_splits = f != NULL ? f->panel_splits : 0;
        A->td.wg_bn = f != NULL ? f->tiles_wg_bn : 0;
        A->td.wg_stream = f != NULL ? f->tiles_wg_stream : 0;
        A->td.wg_tail = f != NULL ? f->tiles_wg_tail : 0;
        A->td.wg_cluster = f != NULL ? f->tiles_wg_cluster : 0;
        A->td.kg = f != NULL ? f->tiles_kg : 0;
        A->td.cp_async = f != NULL ? f->tiles_cp_async : 0;
        return macko_ok();
    }
    if (A->kind == MACKO_KIND_QUANT) {
        const int lay = f != NULL ? f->quant_outliers : -1, ut = f != NULL ? f->quant_unit_tiles : 0;
        const int mo = f != NULL ? f->quant_max_ounits : 0;
        if (lay < -1 || lay > MACKO_QOUT_TCOL || ut < 0 || mo < 0)
            return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, 4,
                              "quant_outliers = %d / quant_unit_tiles = %d / quant_max_ounits = %d out of range", lay,
                              ut, mo);
        if (!A->has_host)
            return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, 2, "a QUANT override uploads A again: it needs A's "
                                                                   "host copy");
        return macko_quant_upload(fn, handle, A, lay, ut, mo);
    }
    M = op == MACKO_OPERATION_NON_TRANSPOSE ? A : A->trans;

    e = macko_dev_enter(&g, handle->device);
    if (e != cudaSuccess)
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", handle->device,
                          cudaGetErrorString(e));
    cudaGetLastError();
    if (f != NULL && f->index == MACKO_IDX_I64_RP64 && !M->rp64) {
        st = widen_row_ptr(M, handle->stream, &rp64);
        if (st != MACKO_STATUS_SUCCESS) {
            macko_dev_leave(&g);
            return macko_fail(st, fn, 0, "cannot make the int64 copy of the row pointers");
        }
    }
    st = macko_plan_build(fn, M, rp64 != NULL ? rp64 : M->dev.row_ptr, M->dev.deltas, handle->stream, &handle->props,
                          f, &p, &tidx);
    if (st != MACKO_STATUS_SUCCESS) {
        cudaFree(rp64);
        macko_dev_leave(&g);
        return st;
    }
    /* cudaFree waits for the launches that may still read the old copy */
    cudaFree(M->extra[MACKO_EXTRA_ROW_PTR64]);
    M->extra[MACKO_EXTRA_ROW_PTR64] = rp64;
    cudaFree(M->extra[MACKO_EXTRA_TILE_INDEX]);
    M->extra[MACKO_EXTRA_TILE_INDEX] = tidx;
    M->plan = p;
    macko_dev_leave(&g);
    return macko_ok();
}
