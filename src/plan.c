/* Launch plans (plan.h): the rule that picks kernel, geometry, tile and layout for an encoding on a device, the
 * launcher table, and the call-time lookups. The rule is measured on the H100 (bench/NOTES.md); it is a function of
 * the encoding's shape and the device's properties only, so that a matrix always takes the same path. */
#include "device_common.h"

#include <stdio.h>
#include <string.h>

/* ---- launcher table: value type x kernel (MACKO_K_MM_TC: added with kernels/spmm_tc.cu) */
enum { PREC_H = 0, PREC_S = 1, PRECISIONS = 2 };

static const macko_launcher launchers[PRECISIONS][MACKO_KERNELS] = {
    [PREC_H] = {[MACKO_K_SPMV_WARP_I32_UNIT] = macko_h_spmv_warp_i32_unit,
                [MACKO_K_SPMV_WARP_I32_STRIDED] = macko_h_spmv_warp_i32_strided,
                [MACKO_K_SPMV_WARP_I64_RP32] = macko_h_spmv_warp_i64_rp32,
                [MACKO_K_SPMV_WARP_I64_RP64] = macko_h_spmv_warp_i64_rp64,
                [MACKO_K_SPMV_STAGED] = macko_h_spmv_staged,
                [MACKO_K_MM_STAGED] = macko_h_mm_staged,
                [MACKO_K_MM_GLOBAL_I32] = macko_h_mm_global_i32,
                [MACKO_K_MM_GLOBAL_I64_RP32] = macko_h_mm_global_i64_rp32,
                [MACKO_K_MM_GLOBAL_I64_RP64] = macko_h_mm_global_i64_rp64},
    [PREC_S] = {[MACKO_K_SPMV_WARP_I32_UNIT] = macko_s_spmv_warp_i32_unit,
                [MACKO_K_SPMV_WARP_I32_STRIDED] = macko_s_spmv_warp_i32_strided,
                [MACKO_K_SPMV_WARP_I64_RP32] = macko_s_spmv_warp_i64_rp32,
                [MACKO_K_SPMV_WARP_I64_RP64] = macko_s_spmv_warp_i64_rp64,
                [MACKO_K_SPMV_STAGED] = macko_s_spmv_staged,
                [MACKO_K_MM_STAGED] = macko_s_mm_staged,
                [MACKO_K_MM_GLOBAL_I32] = macko_s_mm_global_i32,
                [MACKO_K_MM_GLOBAL_I64_RP32] = macko_s_mm_global_i64_rp32,
                [MACKO_K_MM_GLOBAL_I64_RP64] = macko_s_mm_global_i64_rp64},
};

int macko_plan_launch(macko_datatype_t t, const macko_kargs *a, const macko_launch *L)
{
    const macko_launcher f = launchers[t == MACKO_R_16F ? PREC_H : PREC_S][L->kernel];
    return f != NULL ? f(a, L) : 1; /* 1 = cudaErrorInvalidValue: a kernel without a launcher */
}

/* ---- shapes */
#define WARP 32
#define DEFAULT_SMEM_BLOCK (48 * 1024) /* dynamic shared memory a block gets without opting in */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Blocks of a persistent grid with one warp per row, at most bps blocks of wpb warps per SM resident. EQUAL: as
 * few equal rounds of rows per warp as the resident warps allow (every warp gets ceil(rows / warps) rows); else
 * every resident slot up to one warp per row (the staged SpMM, whose blocks each stage B once). */
static unsigned grid_blocks(int64_t rows, int sm_count, int bps, int wpb, int equal)
{
    const int64_t max_warps = (int64_t)(sm_count > 0 ? sm_count : 1) * bps * wpb;
    int64_t warps, blocks;
    if (equal) {
        int64_t per_warp = (rows + max_warps - 1) / max_warps;
        if (per_warp < 1)
            per_warp = 1;
        warps = (rows + per_warp - 1) / per_warp;
    } else {
        warps = min64(rows, max_warps);
    }
    blocks = (warps + wpb - 1) / wpb;
    return (unsigned)(blocks < 1 ? 1 : blocks);
}

/* At most bps blocks of `block` threads per SM, and no more than the device holds (sm_75: 1024 threads; the kernels'
 * __launch_bounds__ are capped the same way). */
static int resident(int bps, int block, const macko_devprops *dp)
{
    return dp->max_threads_per_sm > 0 && bps * block > dp->max_threads_per_sm ? dp->max_threads_per_sm / block : bps;
}

static macko_launch launch_of(int kernel, int tile, int block, int bps, unsigned grid)
{
    macko_launch L;
    memset(&L, 0, sizeof L);
    L.kernel = kernel;
    L.tile = tile;
    L.block = (unsigned)block;
    L.blocks_per_sm = bps;
    L.grid = grid;
    return L;
}

static int index_variant(const struct macko_mat_s *m)
{
    if (m->rp64)
        return MACKO_IDX_I64_RP64;
    if (m->entries_padded > MACKO_SPMV_I32_LIMIT || m->cols > MACKO_SPMV_I32_LIMIT || m->rows > MACKO_SPMV_I32_LIMIT)
        return MACKO_IDX_I64_RP32;
    return MACKO_IDX_I32;
}

/* ---- SpMV */

/* The geometry for a matrix of rows x cols with `entries` stored entries (padding included) and elem-byte values,
 * before the device's fit check (plan.h). */
static int spmv_geometry(int64_t rows, int64_t cols, int64_t entries, int elem)
{
    if ((double)entries >= MACKO_SPMV_DENSE_FRACTION * (double)rows * (double)cols)
        return MACKO_SPMV_WARP;
    return cols <= (elem == 2 ? MACKO_SPMV_STAGE_MAX_COLS : MACKO_SPMV_STAGE_MAX_COLS_S) ? MACKO_SPMV_STAGED
                                                                                        : MACKO_SPMV_WARP;
}

/* Dynamic shared memory of one STAGED block: x as fp32, rounded up to 16 bytes. */
static int64_t spmv_staged_bytes(int64_t cols) { return (cols * 4 + 15) & ~(int64_t)15; }

/* Blocks of STAGED per SM for cols columns (as many as the registers allow, fewer when x does not fit that often),
 * or 0 when fewer than 2 fit or a block cannot get the bytes: then WARP runs. Up to 48 KiB every device fits them. */
static int spmv_staged_fit(int64_t cols, int elem, const macko_devprops *dp)
{
    const int64_t bytes = spmv_staged_bytes(cols);
    const int most = resident(elem == 2 ? MACKO_SPMV_STAGED_BLOCKS_PER_SM_H : MACKO_SPMV_STAGED_BLOCKS_PER_SM_S,
                              MACKO_SPMV_STAGED_THREADS, dp);
    int64_t fit;
    if (cols > MACKO_SPMV_STAGE_MAX_COLS)
        return 0;
    if (bytes <= DEFAULT_SMEM_BLOCK)
        return most;
    fit = dp->smem_per_sm / (bytes + dp->smem_reserved_per_block);
    if (bytes > dp->smem_per_block_optin || fit < 2)
        return 0;
    return (int)min64(fit, most);
}

static macko_launch spmv_warp(int kernel, int64_t rows, const macko_devprops *dp, int bps)
{
    const int wpb = MACKO_SPMV_BLOCK_THREADS / WARP;
    bps = resident(bps, MACKO_SPMV_BLOCK_THREADS, dp);
    return launch_of(kernel, 1, MACKO_SPMV_BLOCK_THREADS, bps, grid_blocks(rows, dp->sm_count, bps, wpb, 1));
}

static macko_status_t plan_spmv(const struct macko_mat_s *m, const macko_devprops *dp, int forced_geometry,
                                macko_plan *p, char *msg, size_t msg_size)
{
    const int elem = (int)macko_type_size(m->type);
    int geometry, bps;
    if (p->index != MACKO_IDX_I32) {
        const int k = p->index == MACKO_IDX_I64_RP64 ? MACKO_K_SPMV_WARP_I64_RP64 : MACKO_K_SPMV_WARP_I64_RP32;
        if (forced_geometry == MACKO_SPMV_STAGED) {
            snprintf(msg, msg_size, "the STAGED SpMV geometry needs 32-bit indices");
            return MACKO_STATUS_NOT_SUPPORTED;
        }
        p->spmv_unit = p->spmv_strided = spmv_warp(k, m->rows, dp, MACKO_SPMV_BLOCKS_PER_SM_OTHER);
        return MACKO_STATUS_SUCCESS;
    }
    p->spmv_strided = spmv_warp(MACKO_K_SPMV_WARP_I32_STRIDED, m->rows, dp, MACKO_SPMV_BLOCKS_PER_SM_OTHER);
    geometry = forced_geometry >= 0 ? forced_geometry : spmv_geometry(m->rows, m->cols, m->entries, elem);
    bps = geometry == MACKO_SPMV_STAGED ? spmv_staged_fit(m->cols, elem, dp) : 0;
    if (geometry == MACKO_SPMV_STAGED && bps == 0 && forced_geometry == MACKO_SPMV_STAGED) {
        snprintf(msg, msg_size, "the STAGED SpMV geometry cannot hold x of %lld columns (%lld bytes) twice per SM "
                 "on this device", (long long)m->cols, (long long)spmv_staged_bytes(m->cols));
        return MACKO_STATUS_NOT_SUPPORTED;
    }
    if (bps > 0) {
        const int wpb = MACKO_SPMV_STAGED_THREADS / WARP;
        p->spmv_unit = launch_of(MACKO_K_SPMV_STAGED, 1, MACKO_SPMV_STAGED_THREADS, bps,
                                 grid_blocks(m->rows, dp->sm_count, bps, wpb, 1));
        p->spmv_unit.smem = (uint32_t)spmv_staged_bytes(m->cols);
    } else {
        p->spmv_unit = spmv_warp(MACKO_K_SPMV_WARP_I32_UNIT, m->rows, dp,
                                 elem == 2 ? MACKO_SPMV_BLOCKS_PER_SM_H : MACKO_SPMV_BLOCKS_PER_SM_S);
    }
    return MACKO_STATUS_SUCCESS;
}

/* ---- SpMM */

/* Rows per plane of the staged tile with swizzle shift s: cols rounded up to 8 << s. */
static int64_t staged_slots(int64_t cols, int s)
{
    return (cols + ((int64_t)8 << s) - 1) & ~(((int64_t)8 << s) - 1);
}

/* Shared-memory bytes of the staged tile of nt elem-byte columns with shift s: planes of at most 16 bytes per row,
 * each slots + 1 rows (the last one zeros), 16-byte aligned. */
static int64_t staged_bytes(int64_t cols, int nt, int s, int elem)
{
    const int rb = nt * elem, pb = rb < 16 ? rb : 16, planes = rb / pb;
    const int64_t plane = ((staged_slots(cols, s) + 1) * pb + 15) & ~(int64_t)15;
    return plane * planes;
}

/* Spacing of a lane's 8 entries in columns, about 8 * cols * rows / entries, as a shift in 3..12. */
static int auto_swizzle(const struct macko_mat_s *m)
{
    double spacing;
    int s = 3;
    if (m->entries <= 0 || m->rows <= 0)
        return 0;
    spacing = 8.0 * (double)m->cols * (double)m->rows / (double)m->entries;
    while (s < 12 && (double)(1 << s) * 1.4142 < spacing)
        s++;
    return s;
}

/* The B offsets of a tile of nt columns, up to (cols - 1)*incb + (nt - 1)*ldb, fit 32-bit arithmetic. */
static int offsets_fit_i32(int64_t cols, int64_t incb, int64_t ldb, int nt)
{
    const double span = (double)(cols - 1) * (double)incb + (double)(nt - 1) * (double)ldb;
    return span < 2147483647.0 - 65536.0;
}

static macko_launch mm_global(int kernel, int tile, int64_t rows, const macko_devprops *dp)
{
    const int bps = kernel == MACKO_K_MM_GLOBAL_I32 ? MACKO_MM_GLOBAL_BLOCKS_PER_SM_I32
                                                     : MACKO_MM_GLOBAL_BLOCKS_PER_SM_I64;
    return launch_of(kernel, tile, MACKO_MM_GLOBAL_THREADS, bps,
                     grid_blocks(rows, dp->sm_count, bps, MACKO_MM_GLOBAL_THREADS / WARP, 1));
}

/* One rule row for tile `want`: path STAGED, GLOBAL or AUTO (staged unless that would split a tile of up to 8
 * columns: then global), swizzle forced (>= 0) or automatic (only 16-byte rows pay for it: bench/NOTES.md). */
static macko_status_t mm_rule(const struct macko_mat_s *m, const macko_devprops *dp, int index, int path, int want,
                              int swizzle, macko_mm_rule *r, char *msg, size_t msg_size)
{
    const int elem = (int)macko_type_size(m->type), max_staged = MACKO_MM_STAGED_ROW_BYTES / elem;
    int wide_tile;
    r->path = MACKO_MM_PATH_GLOBAL;
    r->want = want;
    memset(&r->launch, 0, sizeof r->launch);
    memset(&r->wide, 0, sizeof r->wide);
    if (path != MACKO_MM_PATH_GLOBAL && index == MACKO_IDX_I32) {
        const int s_auto = auto_swizzle(m);
        int fit = want < max_staged ? want : max_staged;
        while (fit >= 2 && staged_bytes(m->cols, fit, swizzle < 0 ? s_auto : swizzle, elem) >
                               (int64_t)dp->smem_per_block_optin)
            fit /= 2;
        if (fit >= 2 && (path == MACKO_MM_PATH_STAGED || fit >= (want < 8 ? want : 8))) {
            const int s = swizzle >= 0 ? swizzle : (fit * elem >= 16 ? s_auto : 0);
            const int64_t smem = staged_bytes(m->cols, fit, s, elem);
            const int rb = fit * elem;
            r->path = MACKO_MM_PATH_STAGED;
            r->launch = launch_of(MACKO_K_MM_STAGED, fit, MACKO_MM_STAGED_THREADS, 1,
                                  grid_blocks(m->rows, dp->sm_count, 1, MACKO_MM_STAGED_THREADS / WARP, 0));
            r->launch.swizzle = s;
            r->launch.smem = (uint32_t)smem;
            r->launch.slots = (uint32_t)staged_slots(m->cols, s);
            r->launch.plane_stride = (uint32_t)(smem / (rb < 16 ? 1 : rb / 16));
            return MACKO_STATUS_SUCCESS;
        }
        if (path == MACKO_MM_PATH_STAGED) {
            snprintf(msg, msg_size, "the staged SpMM path cannot hold even 2 columns of B (%lld rows) in the %d "
                     "bytes of shared memory a block gets on this device", (long long)m->cols,
                     dp->smem_per_block_optin);
            return MACKO_STATUS_NOT_SUPPORTED;
        }
    } else if (path == MACKO_MM_PATH_STAGED) {
        snprintf(msg, msg_size, "the staged SpMM path needs 32-bit indices");
        return MACKO_STATUS_NOT_SUPPORTED;
    }
    wide_tile = want < MACKO_MM_GLOBAL_TILE_I64 ? want : MACKO_MM_GLOBAL_TILE_I64;
    if (index == MACKO_IDX_I32) {
        const int cap = MACKO_MM_GLOBAL_TILE_BYTES_I32 / elem;
        r->launch = mm_global(MACKO_K_MM_GLOBAL_I32, want < cap ? want : cap, m->rows, dp);
        r->wide = mm_global(MACKO_K_MM_GLOBAL_I64_RP32, wide_tile, m->rows, dp);
    } else {
        const int k = index == MACKO_IDX_I64_RP64 ? MACKO_K_MM_GLOBAL_I64_RP64 : MACKO_K_MM_GLOBAL_I64_RP32;
        r->launch = mm_global(k, wide_tile, m->rows, dp);
    }
    return MACKO_STATUS_SUCCESS;
}

/* The rule over n: n == 1 (the SpMV launch unless a path is forced), and tiles of 2, 4, 8 and 16 columns for n up
 * to 2, 4, 8 and beyond (n = 1 under a forced path: the tile of 2). */
static macko_status_t plan_mm(const struct macko_mat_s *m, const macko_devprops *dp, const macko_plan_forced *f,
                              macko_plan *p, char *msg, size_t msg_size)
{
    static const int64_t n_max[] = {1, 2, 4, 8, INT64_MAX};
    static const int want[] = {2, 2, 4, 8, 16};
    int i;
    p->mm_rules = (int)(sizeof n_max / sizeof n_max[0]);
    for (i = 0; i < p->mm_rules; i++) {
        macko_mm_rule *r = &p->mm[i];
        macko_status_t st;
        memset(r, 0, sizeof *r);
        r->n_max = n_max[i];
        if (f->mm_path == MACKO_MM_PATH_SPMV || (f->mm_path == MACKO_MM_PATH_AUTO && n_max[i] == 1)) {
            r->path = n_max[i] == 1 ? MACKO_MM_PATH_SPMV : MACKO_MM_PATH_NONE;
            continue;
        }
        st = mm_rule(m, dp, p->index, f->mm_path, f->mm_tile ? f->mm_tile : want[i], f->mm_swizzle, r, msg,
                     msg_size);
        if (st != MACKO_STATUS_SUCCESS)
            return st;
    }
    return MACKO_STATUS_SUCCESS;
}

const macko_launch *macko_plan_mm(const macko_plan *p, int64_t n, int64_t cols, int64_t incb, int64_t ldb)
{
    const macko_mm_rule *r = p->mm;
    while (n > r->n_max)
        r++;
    switch (r->path) {
    case MACKO_MM_PATH_SPMV: return macko_plan_spmv(p, incb);
    case MACKO_MM_PATH_STAGED:
    case MACKO_MM_PATH_TC: return &r->launch;
    case MACKO_MM_PATH_GLOBAL:
        /* 32-bit offsets while B's span at the asked tile fits them; past that the 64-bit kernel, except where the
         * 32-bit kernel's own (narrower) tile is the 64-bit one's and still fits. */
        if (r->wide.kernel == MACKO_K_NONE || offsets_fit_i32(cols, incb, ldb, r->want) ||
            (r->launch.tile == r->wide.tile && offsets_fit_i32(cols, incb, ldb, r->launch.tile)))
            return &r->launch;
        return &r->wide;
    default: return NULL;
    }
}

/* ---- the whole plan */

static macko_status_t check_forced(const struct macko_mat_s *m, const macko_plan_forced *f, char *msg, size_t n)
{
    const int automatic = index_variant(m);
    if (f->index < -1 || f->index > MACKO_IDX_I64_RP64) {
        snprintf(msg, n, "index is %d; it must be -1 or MACKO_IDX_I32, I64_RP32 or I64_RP64", f->index);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if ((f->index == MACKO_IDX_I32 && automatic != MACKO_IDX_I32) || (f->index == MACKO_IDX_I64_RP32 && m->rp64)) {
        snprintf(msg, n, "index variant %d cannot run this matrix (automatic: %d)", f->index,
                 automatic);
        return MACKO_STATUS_NOT_SUPPORTED;
    }
    if (f->spmv_geometry < -1 || f->spmv_geometry > MACKO_SPMV_STAGED) {
        snprintf(msg, n, "spmv_geometry is %d; it must be -1, MACKO_SPMV_WARP or MACKO_SPMV_STAGED",
                 f->spmv_geometry);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->mm_path != MACKO_MM_PATH_AUTO && f->mm_path != MACKO_MM_PATH_STAGED && f->mm_path != MACKO_MM_PATH_GLOBAL &&
        f->mm_path != MACKO_MM_PATH_SPMV) {
        snprintf(msg, n, "mm_path is %d; it must be AUTO, STAGED, GLOBAL or SPMV", f->mm_path);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->mm_tile != 0 && f->mm_tile != 2 && f->mm_tile != 4 && f->mm_tile != 8 && f->mm_tile != 16) {
        snprintf(msg, n, "mm_tile is %d; it must be 0, 2, 4, 8 or 16", f->mm_tile);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->mm_swizzle != -1 && f->mm_swizzle != 0 && (f->mm_swizzle < 3 || f->mm_swizzle > 12)) {
        snprintf(msg, n, "mm_swizzle is %d; it must be -1, 0 or 3..12", f->mm_swizzle);
        return MACKO_STATUS_INVALID_VALUE;
    }
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_plan_compute(const struct macko_mat_s *m, const void *row_ptr, const macko_devprops *dp,
                                  const macko_plan_forced *f, macko_plan *out, char *msg, size_t msg_size)
{
    static const macko_plan_forced automatic = MACKO_PLAN_FORCED_NONE;
    macko_plan p;
    macko_status_t st;
    if (msg_size > 0)
        msg[0] = '\0';
    if (f != NULL && (st = check_forced(m, f, msg, msg_size)) != MACKO_STATUS_SUCCESS)
        return st;
    memset(&p, 0, sizeof p);
    p.forced = f != NULL;
    if (f == NULL)
        f = &automatic;
    p.index = f->index >= 0 ? f->index : index_variant(m);
    p.row_ptr = row_ptr;
    st = plan_spmv(m, dp, f->spmv_geometry, &p, msg, msg_size);
    if (st == MACKO_STATUS_SUCCESS)
        st = plan_mm(m, dp, f, &p, msg, msg_size);
    if (st == MACKO_STATUS_SUCCESS)
        *out = p;
    return st;
}

/* Opts the kernels of p with more dynamic shared memory than a block gets by default in, on the current device. */
static int plan_optin(const macko_plan *p, int elem, const macko_devprops *dp)
{
    int e = 0, i;
    if (p->spmv_unit.kernel == MACKO_K_SPMV_STAGED && p->spmv_unit.smem > DEFAULT_SMEM_BLOCK)
        e = macko_spmv_staged_optin(elem, dp->smem_per_block_optin);
    for (i = 0; i < p->mm_rules && e == 0; i++) {
        const macko_launch *L = &p->mm[i].launch;
        if (p->mm[i].path == MACKO_MM_PATH_STAGED && L->smem > DEFAULT_SMEM_BLOCK)
            e = macko_mm_staged_optin(elem, L->tile, L->swizzle != 0, dp->smem_per_block_optin);
    }
    return e;
}

macko_status_t macko_plan_build(const char *fn, const struct macko_mat_s *m, const void *row_ptr,
                                const macko_devprops *dp, const macko_plan_forced *f, macko_plan *out)
{
    char msg[256];
    macko_plan p;
    int e;
    macko_status_t st = macko_plan_compute(m, row_ptr, dp, f, &p, msg, sizeof msg);
    if (st != MACKO_STATUS_SUCCESS)
        return macko_fail(st, fn, f != NULL ? 4 : 0, "%s", msg);
    e = plan_optin(&p, (int)macko_type_size(m->type), dp);
    if (e != 0)
        return macko_fail(macko_cuda_status((cudaError_t)e), fn, 0,
                          "cannot give the kernels their shared memory (CUDA error %d)", e);
    *out = p;
    return MACKO_STATUS_SUCCESS;
}
