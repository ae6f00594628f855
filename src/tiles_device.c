/* The tile layout on the GPU (MACKO_LAYOUT_TILES): upload (the host builds the layout from the MACKO rows, tiles.c),
 * download (back to the canonical MACKO rows) and the compute dispatch to kernels/spmm_tiles.cu. Everything a launch
 * needs besides the call's arguments (the group buffer size, the kernels' occupancy) is found at upload; a compute
 * call only does arithmetic and one launch: no allocation, no synchronisation, no device query. */
#include "check.h"
#include "device_common.h"
#include "tiles.h"
#include "../kernels/spmm_tc.h"
#include "../kernels/spmm_tiles.h"

#include <cuda_runtime.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t at_least16(int64_t bytes) { return bytes < 16 ? 16 : (size_t)bytes; }

/* The wide groups are chosen where their kernel keeps at least this many blocks of 8 warps on an SM (bench/NOTES.md,
 * session 45, H100, n = 1..16: at 3 blocks against the narrow groups' 4 they took 0.94-0.96x the time, at 2 against 4
 * 1.02-1.03x). */
#define MACKO_TILES_WIDE_MIN_OCC 3
/* ... for the column tiles 8 and 16 (at 2 blocks an SM, and for 24 / 32, the launch model in macko_tiles_kg decides) */
#define MACKO_TILES_WIDE_AUTO_NT 2

/* The largest span of kg consecutive records of a band (a group the kernel stages at once), in bytes. */
static int64_t group_bytes(const macko_tiles *t, int64_t kg)
{
    int64_t b, g, best = 0;
    for (b = 0; b < t->bands; b++)
        for (g = 0; g < t->tcols; g += kg) {
            const int64_t q0 = b * t->tcols + g;
            const int64_t q1 = b * t->tcols + (g + kg < t->tcols ? g + kg : t->tcols);
            const int64_t w = (int64_t)t->offs[q1] - (int64_t)t->offs[q0];
            if (w > best)
                best = w;
        }
    return best * MACKO_TILE_WORD_BYTES;
}

_Static_assert(sizeof(((struct macko_mat_s *)0)->td.occ) == MACKO_TILES_NTILES * sizeof(int), "td.occ");
_Static_assert(sizeof(((struct macko_mat_s *)0)->td.occ_wide) == MACKO_TILES_WIDE_NT * sizeof(int), "td.occ_wide");

/* The block times an SM takes for `blocks` blocks over sm_count SMs: ceil(blocks / SMs) of them in rounds of occ, a
 * round of r blocks lasting max(1, r / ks) block times (ks blocks keep an SM's issue busy). Shared by the split model
 * and the group-size model below. */
static double sm_rounds(int64_t blocks, int sm_count, int occ, double ks)
{
    const int64_t sms = sm_count > 0 ? sm_count : 1, o = occ > 0 ? occ : 1;
    const int64_t k = (blocks + sms - 1) / sms, full = k / o, r = k % o;
    const double round_full = (double)o / ks > 1.0 ? (double)o / ks : 1.0;
    const double round_last = r == 0 ? 0.0 : ((double)r / ks > 1.0 ? (double)r / ks : 1.0);
    return (double)full * round_full + round_last;
}

/* The modelled time of a tile-kernel launch of at most 32 columns (splits along K as the launch makes them), in
 * tiles: sm_rounds with 2 blocks keeping an SM busy, as in macko_tiles_auto_splits, times a block's tiles, gps x kg. */
static double launch_tiles(int64_t rows, int64_t tcols, int64_t kg, int64_t n, int splits, int occ, int sm_count)
{
    const int64_t nt = macko_tiles_ntile(n), groups = (tcols + kg - 1) / kg;
    const int64_t gps = splits > 1 ? (groups + splits - 1) / splits : groups;
    const int64_t s = gps > 0 ? (groups + gps - 1) / gps : 1;
    const int64_t blocks = ((n + nt - 1) / nt) * ((rows + MACKO_TILES_ROWS - 1) / MACKO_TILES_ROWS) * s;
    return sm_rounds(blocks, sm_count, occ, 2.0) * (double)(gps * kg);
}

int macko_tiles_kg(int64_t n, int64_t rows, int64_t tcols, const int occ[MACKO_TILES_NTILES],
                   const int occ_wide[MACKO_TILES_WIDE_NT], int forced, int sm_count, int64_t ws_floats,
                   int64_t ws_counters)
{
    const int i = macko_tiles_ntile_index(n);
    int s8, s16;
    if (i >= MACKO_TILES_WIDE_NT || occ_wide[i] <= 0 || forced == MACKO_TILES_KG)
        return MACKO_TILES_KG;
    if (forced == MACKO_TILES_KG_WIDE)
        return MACKO_TILES_KG_WIDE;
    /* the rule's choice where it was measured: column tiles 8 and 16 at 3 blocks an SM and more */
    if (i < MACKO_TILES_WIDE_AUTO_NT && occ_wide[i] >= MACKO_TILES_WIDE_MIN_OCC)
        return MACKO_TILES_KG_WIDE;
    /* At 2 blocks an SM (any column tile up to 32): the wide groups where their launch's modelled time, with the
     * splits the rule gives each, is no more than the narrow groups' (bench/NOTES.md, sessions 50 and 51: 28672 x
     * 8192 at d = 0.5, n = 16-24, whose 224 blocks are at most 2 an SM either way, took 0.86-0.91x the time in groups
     * of 16 on an H100; where the narrow launch puts 3 or more blocks on an SM, or its blocks have fewer tiles, it
     * stays. On an H200 over 11 shapes, d = 0.1-0.7, n = 8-24: 0.998-1.021x the faster group size's time) */
    if (occ_wide[i] < 2 || occ[i] <= 0)
        return MACKO_TILES_KG;
    s8 = macko_tiles_auto_splits(rows, tcols, MACKO_TILES_KG, n, occ[i], sm_count, ws_floats, ws_counters);
    s16 = macko_tiles_auto_splits(rows, tcols, MACKO_TILES_KG_WIDE, n, occ_wide[i], sm_count, ws_floats, ws_counters);
    return launch_tiles(rows, tcols, MACKO_TILES_KG_WIDE, n, s16, occ_wide[i], sm_count) <=
                   launch_tiles(rows, tcols, MACKO_TILES_KG, n, s8, occ[i], sm_count)
               ? MACKO_TILES_KG_WIDE
               : MACKO_TILES_KG;
}

int macko_tiles_auto_splits(int64_t rows, int64_t tcols, int64_t kg, int64_t n, int occ, int sm_count,
                            int64_t ws_floats, int64_t ws_counters)
{
    const int64_t nt = macko_tiles_ntile(n);
    const int64_t groups = (tcols + kg - 1) / kg;
    const int64_t blocks = ((n + nt - 1) / nt) * ((rows + MACKO_TILES_ROWS - 1) / MACKO_TILES_ROWS);
    /* Two blocks keep an SM's issue busy (ncu: 0.70 issued a scheduler a cycle with 3 or 4 blocks; 1.5 for the
     * 64-column tile, whose block does 8x the MMAs of the 8-column one) */
    const double ks = nt >= 64 ? 1.5 : 2.0;
    int64_t smax = groups / 4, s, best = 1;
    double best_cost = 0.0;
    if (smax > 64)
        smax = 64;
    /* The count of the smallest modelled time (bench/NOTES.md, session 35: fitted on an H100's sweep of 1..24 splits
     * over 8 shapes, n = 8..64, d = 0.5 / 0.3). A block costs 1 + groups / s group-times, plus nt / 8 for its partial
     * tile's round trip when s > 1; an SM takes ceil(blocks * s / SMs) blocks in rounds of occ, a round of r blocks
     * lasting max(1, r / ks) block-times. Ties go to fewer splits; only counts whose partials and counters fit the
     * workspace are considered (the partials grow with s, so these are 1..some bound). */
    for (s = 1; s <= smax; s++) {
        if (s > 1 && (macko_tiles_ws_floats(rows, n, (int)s) > ws_floats ||
                      macko_tiles_counters(rows, n, (int)s) > ws_counters))
            break;
        const double cost = (1.0 + (s > 1 ? (double)nt / 8.0 : 0.0) + (double)groups / (double)s) *
                            sm_rounds(blocks * s, sm_count, occ, ks);
        if (s == 1 || cost < best_cost) {
            best = s;
            best_cost = cost;
        }
    }
    return (int)best;
}

macko_status_t macko_tiles_upload(const char *fn, macko_handle_t handle, macko_mat_t A)
{
    macko_dev_guard g;
    cudaStream_t s = (cudaStream_t)handle->stream;
    macko_tiles t;
    void *doffs = NULL, *dstream = NULL;
    int64_t abuf, abuf_wide, bytes;
    int occ[MACKO_TILES_NTILES] = {0}, occ_wide[MACKO_TILES_WIDE_NT] = {0}, i, fits = 1;
    int ccap[3][MACKO_TILES_WG_CLUSTERS];
    macko_status_t st;
    cudaError_t e;

    if ((A->rows + MACKO_TILES_ROWS - 1) / MACKO_TILES_ROWS > 65535 || A->cols > INT32_MAX)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2,
                          "A has %" PRId64 " rows and %" PRId64 " columns: the tile layout takes at most %d rows and "
                          "2^31 - 1 columns (use MACKO_LAYOUT_ROWS)",
                          A->rows, A->cols, 65535 * MACKO_TILES_ROWS);
    memset(&t, 0, sizeof t);
    st = macko_tiles_build_host(fn, A, &t);
    if (st != MACKO_STATUS_SUCCESS)
        return st;
    abuf = group_bytes(&t, MACKO_TILES_KG);
    abuf_wide = group_bytes(&t, MACKO_TILES_KG_WIDE);
    e = macko_dev_enter(&g, handle->device);
    if (e != cudaSuccess) {
        macko_tiles_free(&t);
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot make device %d current: %s", handle->device,
                          cudaGetErrorString(e));
    }
    cudaGetLastError();
    e = cudaMalloc(&doffs, at_least16((t.bands * t.tcols + 1) * 4));
    if (e == cudaSuccess)
        e = cudaMalloc(&dstream, at_least16(t.words * MACKO_TILE_WORD_BYTES));
    /* from pageable memory each copy returns once its source is staged: the host arrays may go right after */
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(doffs, t.offs, (size_t)(t.bands * t.tcols + 1) * 4, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess && t.words > 0)
        e = cudaMemcpyAsync(dstream, t.stream, (size_t)t.words * MACKO_TILE_WORD_BYTES, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = (cudaError_t)macko_tiles_prepare(A->type == MACKO_R_16BF, (int)abuf, handle->props.smem_per_block_optin,
                                             occ);
    /* the wide groups where they were measured (Hopper); occ_wide stays 0 where they do not fit */
    if (e == cudaSuccess && handle->props.cc_major == 9)
        e = (cudaError_t)macko_tiles_prepare_wide(A->type == MACKO_R_16BF, (int)abuf_wide,
                                                  handle->props.smem_per_block_optin, occ_wide);
    if (e == cudaSuccess)
        e = (cudaError_t)macko_panel_prepare(A->type);
    memset(ccap, 0, sizeof ccap);
    if (e == cudaSuccess && macko_panel_gemm_of(&handle->props) == MACKO_PANEL_GEMM_WG) {
        e = (cudaError_t)macko_tiles_wg_prepare(A->type == MACKO_R_16BF);
        if (e == cudaSuccess)
            macko_tiles_wg_cluster_caps(A->type == MACKO_R_16BF, ccap);
    }
    for (i = 0; e == cudaSuccess && i < MACKO_TILES_NTILES; i++)
        fits &= occ[i] > 0;
    if (e != cudaSuccess || !fits) {
        bytes = t.words * MACKO_TILE_WORD_BYTES;
        /* The queued copies may still read the host arrays. The status is taken after the clean-up, whose own
         * failures must not be left for the next call's error check either. */
        cudaStreamSynchronize(s);
        cudaFree(doffs);
        cudaFree(dstream);
        st = e != cudaSuccess ? macko_cuda_status(e) : MACKO_STATUS_NOT_SUPPORTED;
        cudaGetLastError();
        macko_dev_leave(&g);
        macko_tiles_free(&t);
        if (e == cudaSuccess)
            return macko_fail(st, fn, 2,
                              "A's tile layout needs %" PRId64 " bytes of shared memory per group of %d tiles, more "
                              "than device %d gives a block (use MACKO_LAYOUT_ROWS)",
                              abuf, MACKO_TILES_KG, handle->device);
        return macko_fail(st, fn, 0, "cannot %s the tile layout (%" PRId64 " bytes)",
                          st == MACKO_STATUS_ALLOC_FAILED ? "allocate" : "copy, or set up the kernels for", bytes);
    }
    macko_dev_leave(&g);
    macko_device_arrays_free(A); /* the old copy (either layout) and A^T */
    A->dev.values = dstream;
    A->dev.row_ptr = doffs;
    A->dev.deltas = NULL;
    A->dev_layout = MACKO_LAYOUT_TILES;
    A->td.bands = t.bands;
    A->td.tcols = t.tcols;
    A->td.words = t.words;
    A->td.abuf = (int)abuf;
    memcpy(A->td.occ, occ, sizeof occ);
    A->td.abuf_wide = (int)abuf_wide;
    memcpy(A->td.occ_wide, occ_wide, sizeof occ_wide);
    A->td.kg = 0;
    A->td.cp_async = 0;
    A->td.splits = 0;
    A->td.path = 0;
    A->td.panel_gemm = macko_panel_gemm_of(&handle->props);
    A->td.panel_splits = 0;
    A->td.wg_bn = 0;
    A->td.wg_stream = 0;
    A->td.wg_tail = 0;
    A->td.wg_cluster = 0;
    memcpy(A->td.wg_ccap, ccap, sizeof ccap);
    A->device = handle->device;
    A->has_device = 1;
    macko_tiles_free(&t);
    return macko_ok();
}

macko_status_t macko_tiles_download(const char *fn, macko_handle_t handle, macko_mat_t A)
{
    macko_dev_guard g;
    cudaStream_t s = (cudaStream_t)handle->stream;
    macko_tiles t;
    macko_status_t st;
    cudaError_t e;
    memset(&t, 0, sizeof t);
    t.bands = A->td.bands;
    t.tcols = A->td.tcols;
    t.words = A->td.words;
    t.offs = (uint32_t *)macko_aligned_calloc((size_t)(t.bands * t.tcols + 1) * 4);
    t.stream = macko_aligned_calloc((size_t)at_least16(t.words * MACKO_TILE_WORD_BYTES));
    if (t.offs == NULL || t.stream == NULL) {
        macko_tiles_free(&t);
        return macko_fail(MACKO_STATUS_ALLOC_FAILED, fn, 0, "cannot allocate the host copy of the tile layout");
    }
    e = macko_dev_enter(&g, handle->device);
    if (e == cudaSuccess) {
        cudaError_t e2;
        cudaGetLastError();
        e = cudaMemcpyAsync(t.offs, A->dev.row_ptr, (size_t)(t.bands * t.tcols + 1) * 4, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess && t.words > 0)
            e = cudaMemcpyAsync(t.stream, A->dev.values, (size_t)t.words * MACKO_TILE_WORD_BYTES,
                                cudaMemcpyDeviceToHost, s);
        e2 = cudaStreamSynchronize(s);
        if (e == cudaSuccess)
            e = e2;
        macko_dev_leave(&g);
    }
    if (e != cudaSuccess) {
        macko_tiles_free(&t);
        return macko_fail(macko_cuda_status(e), fn, 0, "cannot copy the tile layout: %s", cudaGetErrorString(e));
    }
    st = macko_tiles_to_macko_host(fn, &t, A);
    macko_tiles_free(&t);
    return st == MACKO_STATUS_SUCCESS ? macko_ok() : st;
}

/* The launch arguments both tile-layout kernels share: the call's (k) and the matrix's tile layout. */
static void tiles_args_of(const struct macko_mat_s *M, const macko_kargs *k, macko_tiles_args *a)
{
    memset(a, 0, sizeof *a);
    a->k = *k;
    a->bf16 = M->type == MACKO_R_16BF;
    a->bands = M->td.bands;
    a->tcols = M->td.tcols;
    a->offs = (const uint32_t *)M->dev.row_ptr;
    a->stream = M->dev.values;
}

int macko_tiles_auto_path(int64_t n, int64_t rows, int64_t cols, int wg, int panel_fits)
{
    /* the tile kernel's 24-column tile on the larger matrices (rows x cols < 2^54 within the layout's limits) */
    if (wg && n >= MACKO_TILES_WG_N && n <= 24 && rows * cols >= MACKO_TILES_N24_ELEMS)
        return 1;
    /* the fused product from MACKO_TILES_WG_N up to the panels, and beyond them where they cannot run */
    if (wg && n >= MACKO_TILES_WG_N && (n < MACKO_TILES_PANEL_N_WG || !panel_fits))
        return 3;
    if (panel_fits && n >= (wg ? MACKO_TILES_PANEL_N_WG : MACKO_TILES_PANEL_N))
        return 2;
    return 1;
}

macko_status_t macko_tiles_compute(const char *fn, macko_handle_t handle, const struct macko_mat_s *M, int combo,
                                   const void *alpha, const void *b, int64_t incb, int64_t ldb, const void *beta,
                                   void *c, int64_t incc, int64_t ldc, int64_t n)
{
    const macko_workspace *ws = &handle->ws;
    macko_kargs k;
    macko_tiles_args a;
    int err, path;
    /* the dense panels can run: unit strides and room in the workspace for a panel of at least 128 rows */
    const int panel_fits = incb == 1 && incc == 1 && macko_panel_rows(M->cols, ws->partial_bytes) >= 128;
    memset(&k, 0, sizeof k);
    k.rows = M->rows;
    k.cols = M->cols;
    k.b = b;
    k.incb = incb;
    k.ldb = ldb;
    k.c = c;
    k.incc = incc;
    k.ldc = ldc;
    k.n = n;
    macko_kargs_scalars(handle, combo, alpha, beta, &k);
    k.stream = handle->stream;
    path = M->td.path > 0 ? M->td.path
                          : macko_tiles_auto_path(n, M->rows, M->cols, M->td.panel_gemm == MACKO_PANEL_GEMM_WG,
                                                  panel_fits);
    if (path == 3) {
        /* the fused wgmma product, where B can be described by a tensor map (else the tile kernel) */
        if (M->td.panel_gemm == MACKO_PANEL_GEMM_WG && incb == 1 && incc == 1 && ldb % 8 == 0 &&
            ((uintptr_t)b & 15u) == 0 && macko_tiles_wg_ready()) {
            const int64_t wsf = ws->partial_bytes / (int64_t)sizeof(float);
            tiles_args_of(M, &k, &a);
            a.wg_bn = M->td.wg_bn > 0 ? M->td.wg_bn : macko_tiles_wg_bn(n);
            a.splits = M->td.splits > 0 ? M->td.splits
                                        : macko_tiles_wg_splits(M->rows, M->td.tcols, n, a.wg_bn, handle->props.sm_count,
                                                                wsf, MACKO_WS_COUNTERS);
            if (macko_tiles_wg_ws_floats(M->rows, n, a.splits, a.wg_bn) > wsf ||
                macko_tiles_wg_counters(M->rows, n, a.splits, a.wg_bn) > MACKO_WS_COUNTERS)
                a.splits = 1;
            /* stream-K: forced (a block count), off (-1 or forced splits), or by the rule */
            if (M->td.wg_stream > 0)
                a.stream_blocks = M->td.wg_stream;
            else if (M->td.wg_stream == 0 && M->td.splits == 0)
                a.stream_blocks = macko_tiles_wg_stream(M->rows, M->td.tcols, n, a.wg_bn, handle->props.sm_count, wsf,
                                                        MACKO_WS_COUNTERS);
            /* the tail split: forced (its blocks along K), off (-1, or forced splits or stream-K), or by the rule,
             * which then takes the place of stream-K */
            if (M->td.wg_tail > 0)
                a.tail_splits = M->td.wg_tail;
            else if (M->td.wg_tail == 0 && M->td.splits == 0 && M->td.wg_stream == 0)
                a.tail_splits = macko_tiles_wg_tail(M->rows, M->td.tcols, n, a.wg_bn, handle->props.sm_count, wsf,
                                                    MACKO_WS_COUNTERS);
            if (a.tail_splits > 1) {
                a.tail_tile0 = macko_tiles_wg_tail_tile0(M->rows, n, a.wg_bn, handle->props.sm_count);
                /* the tail launch's partial tiles, and its counters: one per tile past the whole waves */
                if (macko_tiles_wg_tail_ws_floats(M->rows, n, a.wg_bn, handle->props.sm_count, a.tail_splits) > wsf ||
                    macko_tiles_wg_counters(M->rows, n, 2, a.wg_bn) - a.tail_tile0 > MACKO_WS_COUNTERS)
                    a.tail_splits = 0; /* a forced count the workspace cannot take */
                else
                    a.stream_blocks = 0;
            }
            /* a forced block count the workspace cannot take (two parts per block; one counter per tile, which is
             * what the counters of a split launch come to) */
            if (macko_tiles_wg_stream_ws_floats(a.stream_blocks, a.wg_bn) > wsf ||
                macko_tiles_wg_counters(M->rows, n, 2, a.wg_bn) > MACKO_WS_COUNTERS)
                a.stream_blocks = 0;
            a.wg_ccap = M->td.wg_cluster < 0 ? NULL : M->td.wg_ccap[macko_tiles_wg_width_index(a.wg_bn)];
            a.wg_pairs = M->td.wg_cluster == 2;
            a.ws = ws->partial;
            a.counters = ws->counters;
            err = macko_tiles_wg_spmm(&a);
            if (err != 0)
                return macko_launch_fail(handle, fn, err);
            return macko_ok();
        }
    }
    if (path == 2 && panel_fits) {
        macko_panel_args q;
        memset(&q, 0, sizeof q);
        macko_tc_args_from(combo, &k, &q.mm);
        q.sm_count = handle->props.sm_count;
        q.ws = ws->partial;
        q.ws_bytes = macko_ws_panel_bytes(ws, n);
        q.tiles_stream = M->dev.values;
        q.tiles_offs = (const uint32_t *)M->dev.row_ptr;
        q.tiles_tcols = M->td.tcols;
        q.gemm = M->td.panel_gemm;
        q.splits = M->td.panel_splits;
        err = macko_panel_spmm(&q);
        if (err != 0)
            return macko_launch_fail(handle, fn, err);
        return macko_ok();
    }
    tiles_args_of(M, &k, &a);
    a.kg = macko_tiles_kg(n, M->rows, M->td.tcols, M->td.occ, M->td.occ_wide, M->td.kg, handle->props.sm_count,
                          ws->partial_bytes / (int64_t)sizeof(float), MACKO_WS_COUNTERS);
    a.bulk = !M->td.cp_async && handle->props.cc_major >= 9; /* the kernel's sm_90 code has the bulk copies */
    a.abuf = a.kg == MACKO_TILES_KG ? M->td.abuf : M->td.abuf_wide;
    a.splits = M->td.splits > 0
                   ? M->td.splits
                   : macko_tiles_auto_splits(M->rows, M->td.tcols, a.kg, n,
                                             a.kg == MACKO_TILES_KG ? M->td.occ[macko_tiles_ntile_index(n)]
                                                                    : M->td.occ_wide[macko_tiles_ntile_index(n)],
                                             handle->props.sm_count, ws->partial_bytes / (int64_t)sizeof(float),
                                             MACKO_WS_COUNTERS);
    if (macko_tiles_ws_floats(M->rows, n, a.splits) > ws->partial_bytes / (int64_t)sizeof(float) ||
        macko_tiles_counters(M->rows, n, a.splits) > MACKO_WS_COUNTERS)
        a.splits = 1; /* a forced split count the workspace cannot take */
    a.ws = ws->partial;
    a.counters = ws->counters;
    err = macko_tiles_spmm(&a);
    if (err != 0)
        return macko_launch_fail(handle, fn, err);
    return macko_ok();
}
