/* Launch plans (plan.h): the rule that picks kernel, geometry, tile and layout for an encoding on a device, the
 * launcher table, and the call-time lookups. The rule is measured on the H100 (bench/NOTES.md); it is a function of
 * the encoding's shape and the device's properties only, so that a matrix always takes the same path. */
#include "device_common.h"
#include "../kernels/spmm_tc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- launcher table: type combination (macko_kernels.h) x kernel (MACKO_K_MM_TC / PANEL: kernels/spmm_tc.cu, their
 * own launchers). A hole is a kernel the combination is not built for (the plan never asks for it). */
#define SPMV_LAUNCHERS(L)                                                                                            \
    [MACKO_K_SPMV_WARP_I32_UNIT] = macko_##L##_spmv_warp_i32_unit,                                                 \
    [MACKO_K_SPMV_WARP_I32_STRIDED] = macko_##L##_spmv_warp_i32_strided,                                           \
    [MACKO_K_SPMV_WARP_I64_RP32] = macko_##L##_spmv_warp_i64_rp32,                                                 \
    [MACKO_K_SPMV_WARP_I64_RP64] = macko_##L##_spmv_warp_i64_rp64,                                                 \
    [MACKO_K_SPMV_STAGED] = macko_##L##_spmv_staged
#define MM_GLOBAL_LAUNCHERS(L)                                                                                       \
    [MACKO_K_MM_GLOBAL_I32] = macko_##L##_mm_global_i32,                                                           \
    [MACKO_K_MM_GLOBAL_I64_RP32] = macko_##L##_mm_global_i64_rp32,                                                 \
    [MACKO_K_MM_GLOBAL_I64_RP64] = macko_##L##_mm_global_i64_rp64
static const macko_launcher launchers[MACKO_COMBOS][MACKO_KERNELS] = {
    [MACKO_COMBO_H] = {SPMV_LAUNCHERS(h), [MACKO_K_MM_STAGED] = macko_h_mm_staged, MM_GLOBAL_LAUNCHERS(h)},
    [MACKO_COMBO_S] = {SPMV_LAUNCHERS(s), [MACKO_K_MM_STAGED] = macko_s_mm_staged, MM_GLOBAL_LAUNCHERS(s)},
    [MACKO_COMBO_B] = {SPMV_LAUNCHERS(b), [MACKO_K_MM_STAGED] = macko_b_mm_staged, MM_GLOBAL_LAUNCHERS(b)},
    [MACKO_COMBO_D] = {SPMV_LAUNCHERS(d), MM_GLOBAL_LAUNCHERS(d)},
    [MACKO_COMBO_HS] = {SPMV_LAUNCHERS(hs), MM_GLOBAL_LAUNCHERS(hs)},
    [MACKO_COMBO_BS] = {SPMV_LAUNCHERS(bs), MM_GLOBAL_LAUNCHERS(bs)},
};
#undef SPMV_LAUNCHERS
#undef MM_GLOBAL_LAUNCHERS

int macko_plan_launch(int combo, const macko_kargs *a, const macko_launch *L)
{
    const macko_launcher f = combo >= 0 && combo < MACKO_COMBOS ? launchers[combo][L->kernel] : NULL;
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
    L.depth = 1;
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
    if (elem == 8 || (double)entries >= MACKO_SPMV_DENSE_FRACTION * (double)rows * (double)cols)
        return MACKO_SPMV_WARP; /* fp64: STAGED holds x as fp32, which would round it */
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

/* Chunks each warp of the incx == 1 launch keeps loading ahead (macko_walk.cuh's walk_rows_deep above 1). Deeper
 * costs registers: the deep kernels run 32 warps per SM instead of 48, so depth pays only where those warps already
 * hold every row (no second round) and the rows are long enough that one chunk in flight per warp leaves DRAM idle:
 * 3584 x 18944 at d 0.5 / 0.3 6-11 % faster on the H100 and the H200, shapes with more rows than the deep grid has
 * warps 5-25 % slower (bench/NOTES.md, session 5). fp16 only: fp32 gained at most 1-2 %. */
static int spmv_depth(int64_t rows, int64_t entries, int elem, const macko_devprops *dp)
{
    const int64_t deep_warps = (int64_t)dp->sm_count * resident(MACKO_SPMV_STAGED_DEEP_BLOCKS_PER_SM,
                                                                MACKO_SPMV_STAGED_THREADS, dp) *
                               (MACKO_SPMV_STAGED_THREADS / WARP);
    if (elem != 2 || rows == 0 || rows > deep_warps || entries < MACKO_SPMV_DEEP_MIN_ROW * rows)
        return 1;
    return MACKO_SPMV_MAX_DEPTH_OF(elem);
}

static macko_status_t plan_spmv(const struct macko_mat_s *m, const macko_devprops *dp, int forced_geometry,
                                int forced_depth, macko_plan *p, char *msg, size_t msg_size)
{
    const int elem = (int)macko_type_size(m->type);
    /* fp64 runs every variant with its own register budget (the kernels' __launch_bounds__ say the same) */
    const int other = elem == 8 ? MACKO_SPMV_BLOCKS_PER_SM_D : MACKO_SPMV_BLOCKS_PER_SM_OTHER;
    int geometry, bps, depth;
    if (p->index != MACKO_IDX_I32) {
        const int k = p->index == MACKO_IDX_I64_RP64 ? MACKO_K_SPMV_WARP_I64_RP64 : MACKO_K_SPMV_WARP_I64_RP32;
        if (forced_geometry == MACKO_SPMV_STAGED) {
            snprintf(msg, msg_size, "the STAGED SpMV geometry needs 32-bit indices");
            return MACKO_STATUS_NOT_SUPPORTED;
        }
        p->spmv_unit = p->spmv_strided = spmv_warp(k, m->rows, dp, other);
        return MACKO_STATUS_SUCCESS;
    }
    if (forced_geometry == MACKO_SPMV_STAGED && elem == 8) {
        snprintf(msg, msg_size, "the STAGED SpMV geometry holds x as fp32: not for fp64 matrices");
        return MACKO_STATUS_NOT_SUPPORTED;
    }
    p->spmv_strided = spmv_warp(MACKO_K_SPMV_WARP_I32_STRIDED, m->rows, dp, other);
    geometry = forced_geometry >= 0 ? forced_geometry : spmv_geometry(m->rows, m->cols, m->entries, elem);
    bps = geometry == MACKO_SPMV_STAGED ? spmv_staged_fit(m->cols, elem, dp) : 0;
    if (geometry == MACKO_SPMV_STAGED && bps == 0 && forced_geometry == MACKO_SPMV_STAGED) {
        snprintf(msg, msg_size, "the STAGED SpMV geometry cannot hold x of %lld columns (%lld bytes) twice per SM "
                 "on this device", (long long)m->cols, (long long)spmv_staged_bytes(m->cols));
        return MACKO_STATUS_NOT_SUPPORTED;
    }
    depth = forced_depth > 0 ? forced_depth : spmv_depth(m->rows, m->entries, elem, dp);
    if (depth > MACKO_SPMV_MAX_DEPTH_OF(elem)) {
        snprintf(msg, msg_size, "the SpMV prefetch depth %d is above this value type's deepest, %d", depth,
                 MACKO_SPMV_MAX_DEPTH_OF(elem));
        return MACKO_STATUS_NOT_SUPPORTED;
    }
    if (bps > 0) {
        const int wpb = MACKO_SPMV_STAGED_THREADS / WARP;
        if (depth > 1)
            bps = (int)min64(bps, resident(MACKO_SPMV_STAGED_DEEP_BLOCKS_PER_SM, MACKO_SPMV_STAGED_THREADS, dp));
        p->spmv_unit = launch_of(MACKO_K_SPMV_STAGED, 1, MACKO_SPMV_STAGED_THREADS, bps,
                                 grid_blocks(m->rows, dp->sm_count, bps, wpb, 1));
        p->spmv_unit.smem = (uint32_t)spmv_staged_bytes(m->cols);
    } else {
        p->spmv_unit = spmv_warp(MACKO_K_SPMV_WARP_I32_UNIT, m->rows, dp,
                                 depth > 1   ? MACKO_SPMV_DEEP_BLOCKS_PER_SM
                                 : elem == 2 ? MACKO_SPMV_BLOCKS_PER_SM_H
                                 : elem == 8 ? MACKO_SPMV_BLOCKS_PER_SM_D
                                             : MACKO_SPMV_BLOCKS_PER_SM_S);
    }
    p->spmv_unit.depth = depth;
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

static macko_launch mm_global(int kernel, int tile, int64_t rows, int elem, const macko_devprops *dp)
{
    const int bps = elem == 8                           ? MACKO_MM_GLOBAL_BLOCKS_PER_SM_D
                    : kernel == MACKO_K_MM_GLOBAL_I32 ? MACKO_MM_GLOBAL_BLOCKS_PER_SM_I32
                                                      : MACKO_MM_GLOBAL_BLOCKS_PER_SM_I64;
    return launch_of(kernel, tile, MACKO_MM_GLOBAL_THREADS, bps,
                     grid_blocks(rows, dp->sm_count, bps, MACKO_MM_GLOBAL_THREADS / WARP, 1));
}

/* One rule row for tile `want`: path STAGED, GLOBAL or AUTO (staged unless that would split a tile of up to 8
 * columns: then global; fp32 staged down to 4 columns, the gather's own widest tile), swizzle forced (>= 0) or
 * automatic (only 16-byte rows pay for it: bench/NOTES.md). */
static macko_status_t mm_rule(const struct macko_mat_s *m, const macko_devprops *dp, int index, int path, int want,
                              int swizzle, macko_mm_rule *r, char *msg, size_t msg_size)
{
    const int elem = (int)macko_type_size(m->type), max_staged = MACKO_MM_STAGED_ROW_BYTES / elem;
    int wide_tile;
    r->path = MACKO_MM_PATH_GLOBAL;
    r->want = want;
    memset(&r->launch, 0, sizeof r->launch);
    memset(&r->wide, 0, sizeof r->wide);
    if (elem == 8 && path == MACKO_MM_PATH_STAGED) {
        snprintf(msg, msg_size, "the staged SpMM path is not built for fp64 matrices");
        return MACKO_STATUS_NOT_SUPPORTED;
    }
    if (path != MACKO_MM_PATH_GLOBAL && index == MACKO_IDX_I32 && elem != 8) {
        const int s_auto = auto_swizzle(m);
        int fit = want < max_staged ? want : max_staged;
        while (fit >= 2 && staged_bytes(m->cols, fit, swizzle < 0 ? s_auto : swizzle, elem) >
                               (int64_t)dp->smem_per_block_optin)
            fit /= 2;
        /* automatic: staged where the tile holds the asked columns or 8; fp32 also with 4 columns, which is the
         * gather's widest fp32 tile, so both take the same passes over the rows (H200, session 23: each staged pass
         * 1.45-2.66x faster on every quick shape, measured at n = 16 and 32) */
        if (fit >= 2 && (path == MACKO_MM_PATH_STAGED || fit >= (want < 8 ? want : 8) || (elem == 4 && fit >= 4))) {
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
        r->launch = mm_global(MACKO_K_MM_GLOBAL_I32, want < cap ? want : cap, m->rows, elem, dp);
        r->wide = mm_global(MACKO_K_MM_GLOBAL_I64_RP32, wide_tile, m->rows, elem, dp);
    } else {
        const int k = index == MACKO_IDX_I64_RP64 ? MACKO_K_MM_GLOBAL_I64_RP64 : MACKO_K_MM_GLOBAL_I64_RP32;
        r->launch = mm_global(k, wide_tile, m->rows, elem, dp);
    }
    return MACKO_STATUS_SUCCESS;
}

/* ---- tensor-core paths (fp16 or bf16, 32-bit indices) */

/* Blocks per SM the TC kernel's registers are capped for (its __launch_bounds__, spmm_tc.cu), per column tile. */
static int tc_reg_blocks(int ntile) { return MACKO_TC_REG_BLOCKS_OF(ntile); }

/* Resident TC blocks per SM for column tile ntile and K-tile kt: registers and shared memory (0: none fits). */
static int tc_blocks(int ntile, int kt, const macko_devprops *dp)
{
    const int64_t bytes = (int64_t)macko_tc_smem_bytes(kt, ntile) + dp->smem_reserved_per_block;
    int64_t fit = bytes > dp->smem_per_block_optin + dp->smem_reserved_per_block ? 0 : dp->smem_per_sm / bytes;
    const int regs = tc_reg_blocks(ntile);
    return (int)(fit < regs ? fit : regs);
}

/* Stored entries (padding included) per position of the matrix; 0 for an empty shape. */
static double stored_fraction(const struct macko_mat_s *m)
{
    return m->rows > 0 && m->cols > 0 ? (double)m->entries / ((double)m->rows * (double)m->cols) : 0.0;
}

/* kt and group (plan.h): for kt in 128..192 (a multiple of 32; the 32-column tiles keep 4 blocks per SM), the
 * smallest group whose 16*group entries hold a segment, kt*de + 7 + 2*sqrt(kt*de); then the least passes per column,
 * group / kt. Longer segments are correct, just slower (another pass). */
static void tc_choose(const struct macko_mat_s *m, const macko_devprops *dp, int *kt_out, int *group_out)
{
    static const int groups[] = {4, 8, 16};
    const double de = stored_fraction(m);
    double best = 1e30;
    int kt, i;
    *kt_out = 128;
    *group_out = 16;
    for (kt = 128; kt <= 192; kt += 32) {
        const double seg = kt * de;
        if (tc_blocks(32, kt, dp) < 4)
            continue;
        for (i = 0; i < 3; i++)
            if (seg + 7.0 + 2.0 * sqrt(seg) <= 16.0 * groups[i]) {
                const double cost = (double)groups[i] / kt;
                if (cost <= best + 1e-12) {
                    best = cost;
                    *kt_out = kt;
                    *group_out = groups[i];
                }
                break;
            }
    }
}

/* The encoding can take the tensor-core paths: fp16 or bf16, 32-bit indices, rows of fewer than 2^28 entries, a
 * device of compute capability 8.0 or newer. (B and C of a call must then be of the matrix's type: fp32 B and C take
 * the CUDA cores, macko_plan_mm_wide_b.) */
static int tc_eligible(const struct macko_mat_s *m, int index, const macko_devprops *dp)
{
    return (m->type == MACKO_R_16F || m->type == MACKO_R_16BF) && index == MACKO_IDX_I32 && m->rows > 0 &&
           m->cols > 0 && m->cols < (INT64_C(1) << 27) && dp->cc_major >= 8;
}

static macko_launch tc_launch(int ntile, int kt, const macko_devprops *dp)
{
    macko_launch L = launch_of(MACKO_K_MM_TC, ntile, MACKO_TC_WARPS_OF(ntile) * 32, tc_blocks(ntile, kt, dp), 0);
    L.smem = (uint32_t)macko_tc_smem_bytes(kt, ntile);
    return L;
}

/* Column tile of the TC path for n columns. */
static int tc_ntile(int64_t n) { return n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 64; }

/* A TC or PANEL row. */
static void tc_rule(const macko_devprops *dp, const macko_plan *p, int path, int64_t n_max, int ntile,
                    macko_mm_rule *r)
{
    memset(r, 0, sizeof *r);
    r->n_max = n_max;
    r->path = path;
    r->want = ntile;
    if (path == MACKO_MM_PATH_TC)
        r->launch = tc_launch(ntile, p->tc.kt, dp);
    else
        r->launch = launch_of(MACKO_K_MM_PANEL, 128, 256, 2, 0);
}

/* The TC/PANEL rows of the automatic rule, measured on the H100 (bench/NOTES.md): the CUDA-core tiles stay up to
 * n = 8 (up to 16 for matrices of fewer than 2^25 positions with at least 4096 rows of at most 4096 columns: the
 * staged tile of 16 columns, one warp per row in blocks of 32 warps with B in shared memory, then fills the GPU in
 * one wave; H200, session 30: TC took 0.47-0.83x the time of the CUDA-core tiles at n = 9..16 on 1024 x 8192,
 * 2048 x 4096 and 5120^2 and on 3072^2 at d = 0.5, 1.04-1.16x on 4096 x 2048 and 4096^2); matrices of at most 1024
 * rows with at least 28 % of their positions stored take the TC tile of 8 from n = 5, from n = 3 with at least 40 %
 * (their CUDA-core grid is a few blocks a SM, the TC tile splits K to fill the GPU and its time hardly depends on the
 * density; H200, session 32, n = 6 and 8: 0.66-0.81x the time on 512 x 4096, 1024 x 4096 and 1024 x 8192 at d = 0.5,
 * 0.79-0.91x at d = 0.3, which puts the crossover near d = 0.26; n = 3 and 4: 0.79-0.94x at d = 0.5, 0.99-1.12x at
 * 0.3; n = 2: 1.03-1.26x; 2048 rows 0.84-0.98x at d = 0.5 but 1.03-1.19x at 0.3), the TC tiles of 16, 32
 * and 64 columns take n up to 128, the PANEL path larger n where a panel of 128 rows fits the handle's workspace.
 * Where the panel GEMM is wgmma (clusters along K fill the GPU at one column block), PANEL takes n = 65..128 too: TC
 * runs n = 65..128 as two launches of 64 columns while PANEL's time hardly grows with n (session 12: PANEL level or
 * ahead of TC at n = 128 on the H100; session 28, H200: 1.08-2.1x faster than TC at n = 96 and 127 on all 12 quick
 * cases, mixed at n = 33-64). */
static void plan_mm_tc(const struct macko_mat_s *m, const macko_devprops *dp, macko_plan *p)
{
    const int small = (double)m->rows * (double)m->cols < 33554432.0 && m->rows >= 4096 && m->cols <= 4096;
    const int64_t ldp = (m->cols + 7) & ~INT64_C(7);
    const int panel = 128 * ldp * 2 <= MACKO_WS_BYTES - MACKO_WS_COUNTERS * 4;
    const double de = stored_fraction(m);
    int i = p->mm_rules - 1; /* the last row (n > 8, tile 16) is replaced, or kept up to n = 16 */
    if (m->rows <= 1024 && de >= 0.28) { /* the row of n = 5..8, and from 40 % stored the row of n = 3..4 */
        tc_rule(dp, p, MACKO_MM_PATH_TC, 8, 8, &p->mm[i - 1]);
        if (de >= 0.4)
            tc_rule(dp, p, MACKO_MM_PATH_TC, 4, 8, &p->mm[i - 2]);
    }
    if (small)
        p->mm[i++].n_max = 16;
    else
        tc_rule(dp, p, MACKO_MM_PATH_TC, 16, 16, &p->mm[i++]);
    tc_rule(dp, p, MACKO_MM_PATH_TC, 32, 32, &p->mm[i++]);
    tc_rule(dp, p, MACKO_MM_PATH_TC, !panel ? INT64_MAX : macko_panel_gemm_of(dp) == MACKO_PANEL_GEMM_WG ? 64 : 128, 64,
            &p->mm[i++]);
    if (panel)
        tc_rule(dp, p, MACKO_MM_PATH_PANEL, INT64_MAX, 128, &p->mm[i++]);
    p->mm_rules = i;
}

/* ---- the SIMT path (fp32, many columns; kernels/spmm_simt.cu) */

/* The encoding can take the SIMT path: fp32, 32-bit indices, rows of fewer than 2^27 columns, a device of compute
 * capability 8.0 or newer (cp.async) whose blocks can have the 64-column kernel's shared memory. */
static int simt_eligible(const struct macko_mat_s *m, int index, const macko_devprops *dp)
{
    return m->type == MACKO_R_32F && index == MACKO_IDX_I32 && m->rows > 0 && m->cols > 0 &&
           m->cols < (INT64_C(1) << 27) && dp->cc_major >= 8 &&
           (int64_t)macko_simt_smem_bytes(64, MACKO_SIMT_FMA) <= (int64_t)dp->smem_per_block_optin;
}

/* The SIMT row for n up to n_max in the form of the plan (MACKO_SIMT_*): 64 columns of C per block up to n = 64 (and
 * wherever the 128-column kernel's shared memory does not fit a block), 128 beyond. */
static void simt_rule(const macko_devprops *dp, int form, int64_t n_max, macko_mm_rule *r)
{
    const int wide = n_max > 64 && (int64_t)macko_simt_smem_bytes(128, form) <= (int64_t)dp->smem_per_block_optin;
    const int tile = wide ? 128 : 64;
    memset(r, 0, sizeof *r);
    r->n_max = n_max;
    r->path = MACKO_MM_PATH_SIMT;
    r->want = tile;
    r->launch = launch_of(MACKO_K_MM_SIMT, tile, 256, wide ? 1 : 2, 0);
    r->launch.smem = (uint32_t)macko_simt_smem_bytes(tile, form);
}

int macko_plan_simt_from(const struct macko_mat_s *m, int form)
{
    const double de = stored_fraction(m);
    /* SIMT's time is flat up to 64 columns (one column block), the tiles' grows with n, and more slowly per entry the
     * more rows there are, so the crossover rises with log2(rows); from 65 on SIMT takes two column blocks, so the rule
     * stops at 64. FMA form, measured per quick shape (H200, session 23): 22-27 at d = 0.5, 24-35 at 0.3 and 37-73 at
     * 0.1. TF32x3 form, about 1.35x faster (H100, session 52: both forms and the tiles forced at n = 8..48): 17-20 at
     * d = 0.5 (the tiles ahead at 16 on five of the six shapes), 20-27 at 0.3, 26-51 at 0.1. */
    const double lr = m->rows > 4096 ? log2((double)m->rows / 4096.0) : 0.0;
    const double from = form == MACKO_SIMT_TF32X3
                            ? (de >= 0.4 ? 17.0 : de >= 0.2 ? 20.0 + 2.0 * lr : 28.0 + 7.0 * lr)
                            : (de >= 0.4 ? 25.0 : de >= 0.2 ? 26.0 + 3.3 * lr : 37.0 + 12.0 * lr);
    return from < 64.0 ? (int)ceil(from - 1e-9) : 64;
}

/* The automatic rows of an fp32 encoding with the tile index: the CUDA-core tiles up to n = macko_plan_simt_from - 1,
 * then SIMT. Where those tiles cannot stage 4 columns of B in shared memory (about 14,500 fp32 rows of B) they read B
 * from global memory, passes that cost more the more columns, and SIMT takes over earlier: from n = 15 where at least
 * 40 % of the positions are stored, 16 from 28 % (H200, session 32: SIMT took 0.72-0.80x the time of the global tiles
 * at n = 16 on 3584 x 18944, 3584 x 20480 and 8192 x 29568 at d = 0.5, 0.79-0.89x at d = 0.3, and 0.95-1.07x /
 * 1.05-1.19x at n = 12; lower densities unmeasured, so unchanged). Where they stage only 4 columns (8 do not fit: more
 * than about 7,200 columns) on at most 8192 rows, SIMT from n = 21, where those tiles go from 5 passes to 6 (from 28 %
 * stored: SIMT took 0.84-0.89x their time at n = 21..24 on 4096 x 11008 and 4096 x 14336 at d = 0.5, 0.89-1.01x at
 * 0.3, 0.59-0.73x on 5120 x 13824, and 1.07-1.21x at n = 17..20; with more rows the tiles keep up: 12288^2 1.015x,
 * 28672 x 8192 1.04x, 36864 x 12288 1.065x at n = 21..24). */
static void plan_mm_simt(const struct macko_mat_s *m, const macko_devprops *dp, macko_plan *p)
{
    int i = p->mm_rules - 1; /* the last row (n > 8, tile 16) now ends below macko_plan_simt_from */
    const double de = stored_fraction(m);
    int from = macko_plan_simt_from(m, p->tc.simt_tc);
    const macko_launch *tiles = &p->mm[i].launch;
    if (tiles->kernel != MACKO_K_MM_STAGED && de >= 0.28 && from > (de >= 0.4 ? 15 : 16))
        from = de >= 0.4 ? 15 : 16;
    else if (tiles->kernel == MACKO_K_MM_STAGED && tiles->tile == 4 && m->rows <= 8192 && de >= 0.28 && from > 21)
        from = 21;
    p->mm[i++].n_max = from - 1;
    simt_rule(dp, p->tc.simt_tc, 64, &p->mm[i++]);
    simt_rule(dp, p->tc.simt_tc, INT64_MAX, &p->mm[i++]);
    p->mm_rules = i;
}

/* A plan forced to SIMT: that path for every n. */
static void plan_mm_forced_simt(const macko_devprops *dp, macko_plan *p)
{
    p->mm_rules = 2;
    simt_rule(dp, p->tc.simt_tc, 64, &p->mm[0]);
    simt_rule(dp, p->tc.simt_tc, INT64_MAX, &p->mm[1]);
}

/* A plan forced to TC or PANEL: that path for every n. */
static void plan_mm_forced_tc(const macko_devprops *dp, int path, macko_plan *p)
{
    static const int64_t n_max[] = {8, 16, 32, INT64_MAX};
    int i;
    p->mm_rules = path == MACKO_MM_PATH_PANEL ? 1 : 4;
    for (i = 0; i < p->mm_rules; i++)
        tc_rule(dp, p, path, path == MACKO_MM_PATH_PANEL ? INT64_MAX : n_max[i],
                path == MACKO_MM_PATH_PANEL ? 128 : tc_ntile(n_max[i] == INT64_MAX ? 64 : n_max[i]), &p->mm[i]);
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
        if (f->mm_path == MACKO_MM_PATH_TC || f->mm_path == MACKO_MM_PATH_PANEL || f->mm_path == MACKO_MM_PATH_SIMT)
            break;
        st = mm_rule(m, dp, p->index, f->mm_path, f->mm_tile ? f->mm_tile : want[i], f->mm_swizzle, r, msg,
                     msg_size);
        if (st != MACKO_STATUS_SUCCESS)
            return st;
    }
    if (f->mm_path == MACKO_MM_PATH_SIMT) {
        if (p->tc.kt == 0 || m->type != MACKO_R_32F) {
            snprintf(msg, msg_size, "the SIMT SpMM path needs an fp32 matrix with 32-bit indices, fewer than 2^27 "
                     "columns and a device of compute capability 8.0 or newer");
            return MACKO_STATUS_NOT_SUPPORTED;
        }
        plan_mm_forced_simt(dp, p);
        return MACKO_STATUS_SUCCESS;
    }
    if (f->mm_path == MACKO_MM_PATH_TC || f->mm_path == MACKO_MM_PATH_PANEL) {
        if (p->tc.kt == 0 || m->type == MACKO_R_32F) {
            snprintf(msg, msg_size, "the tensor-core SpMM paths need an fp16 or bf16 matrix with 32-bit indices, fewer "
                     "than 2^27 columns and a device of compute capability 8.0 or newer");
            return MACKO_STATUS_NOT_SUPPORTED;
        }
        plan_mm_forced_tc(dp, f->mm_path, p);
        return MACKO_STATUS_SUCCESS;
    }
    if (p->tc.kt > 0 && f->mm_path == MACKO_MM_PATH_AUTO && f->mm_tile == 0) {
        if (m->type == MACKO_R_32F)
            plan_mm_simt(m, dp, p);
        else
            plan_mm_tc(m, dp, p);
    }
    return MACKO_STATUS_SUCCESS;
}

/* The launch of a CUDA-core row for B's strides (GLOBAL: 64-bit offsets where 32-bit ones do not fit). */
static const macko_launch *cuda_core_launch(const macko_mm_rule *r, int64_t cols, int64_t incb, int64_t ldb)
{
    /* 32-bit offsets while B's span at the asked tile fits them; past that the 64-bit kernel, except where the
     * 32-bit kernel's own (narrower) tile is the 64-bit one's and still fits. */
    if (r->path == MACKO_MM_PATH_STAGED || r->wide.kernel == MACKO_K_NONE || offsets_fit_i32(cols, incb, ldb, r->want) ||
        (r->launch.tile == r->wide.tile && offsets_fit_i32(cols, incb, ldb, r->launch.tile)))
        return &r->launch;
    return &r->wide;
}

const macko_launch *macko_plan_mm(const macko_plan *p, int64_t n, int64_t cols, int64_t incb, int64_t ldb,
                                  int64_t incc)
{
    const macko_mm_rule *r = p->mm, *q, *cc = NULL;
    while (n > r->n_max)
        r++;
    switch (r->path) {
    case MACKO_MM_PATH_SPMV: return macko_plan_spmv(p, incb);
    case MACKO_MM_PATH_STAGED:
    case MACKO_MM_PATH_GLOBAL: return cuda_core_launch(r, cols, incb, ldb);
    case MACKO_MM_PATH_TC:
    case MACKO_MM_PATH_PANEL:
    case MACKO_MM_PATH_SIMT:
        /* these paths read B and write C column-major with unit element strides; the strided-batched SpMV with
         * other strides takes the widest CUDA-core row of the plan instead (a forced plan has none: NULL) */
        if (incb == 1 && incc == 1)
            return &r->launch;
        for (q = p->mm; q < p->mm + p->mm_rules; q++)
            if (q->path == MACKO_MM_PATH_STAGED || q->path == MACKO_MM_PATH_GLOBAL)
                cc = q;
        return cc != NULL ? cuda_core_launch(cc, cols, incb, ldb) : NULL;
    default: return NULL;
    }
}

const macko_launch *macko_plan_mm_wide_b(const macko_plan *p, const struct macko_mat_s *m, int64_t n, int64_t incb,
                                         int64_t ldb, int64_t incc, int xelem, const macko_devprops *dp,
                                         macko_launch *scratch)
{
    const macko_launch *L = macko_plan_mm(p, n, m->cols, incb, ldb, incc);
    const macko_mm_rule *r = p->mm;
    int want, cap;
    if (L == NULL || L->kernel < MACKO_K_MM_STAGED)
        return L; /* the SpMV launch (or none): it reads x as its own type */
    while (n > r->n_max)
        r++;
    want = r->want < 16 ? r->want : 16;
    if (p->index != MACKO_IDX_I32) {
        *scratch = mm_global(p->index == MACKO_IDX_I64_RP64 ? MACKO_K_MM_GLOBAL_I64_RP64 : MACKO_K_MM_GLOBAL_I64_RP32,
                             want < MACKO_MM_GLOBAL_TILE_I64 ? want : MACKO_MM_GLOBAL_TILE_I64, m->rows, 2, dp);
        return scratch;
    }
    cap = MACKO_MM_GLOBAL_TILE_BYTES_I32 / xelem;
    if (offsets_fit_i32(m->cols, incb, ldb, want < cap ? want : cap))
        *scratch = mm_global(MACKO_K_MM_GLOBAL_I32, want < cap ? want : cap, m->rows, 2, dp);
    else
        *scratch = mm_global(MACKO_K_MM_GLOBAL_I64_RP32,
                             want < MACKO_MM_GLOBAL_TILE_I64 ? want : MACKO_MM_GLOBAL_TILE_I64, m->rows, 2, dp);
    return scratch;
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
    if (f->spmv_depth < 0 || f->spmv_depth > MACKO_SPMV_MAX_DEPTH) {
        snprintf(msg, n, "spmv_depth is %d; it must be 0 (automatic) or 1..%d", f->spmv_depth, MACKO_SPMV_MAX_DEPTH);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->spmv_geometry < -1 || f->spmv_geometry > MACKO_SPMV_STAGED) {
        snprintf(msg, n, "spmv_geometry is %d; it must be -1, MACKO_SPMV_WARP or MACKO_SPMV_STAGED",
                 f->spmv_geometry);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->mm_path != MACKO_MM_PATH_AUTO && f->mm_path != MACKO_MM_PATH_STAGED && f->mm_path != MACKO_MM_PATH_GLOBAL &&
        f->mm_path != MACKO_MM_PATH_SPMV && f->mm_path != MACKO_MM_PATH_TC && f->mm_path != MACKO_MM_PATH_PANEL &&
        f->mm_path != MACKO_MM_PATH_SIMT) {
        snprintf(msg, n, "mm_path is %d; it must be AUTO, STAGED, GLOBAL, SPMV, TC, PANEL or SIMT", f->mm_path);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->tc_kt != 0 && (f->tc_kt < 32 || f->tc_kt > 512 || f->tc_kt % 16 != 0)) {
        snprintf(msg, n, "tc_kt is %d; it must be 0 or a multiple of 16 in 32..512", f->tc_kt);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->tc_group != 0 && f->tc_group != 4 && f->tc_group != 8 && f->tc_group != 16) {
        snprintf(msg, n, "tc_group is %d; it must be 0, 4, 8 or 16", f->tc_group);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->tc_splits < 0 || f->tc_splits > 64) {
        snprintf(msg, n, "tc_splits is %d; it must be 0..64", f->tc_splits);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->panel_rows < 0 || f->panel_rows % 128 != 0) {
        snprintf(msg, n, "panel_rows is %lld; it must be 0 or a positive multiple of 128", (long long)f->panel_rows);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->panel_gemm < 0 || f->panel_gemm > 2) {
        snprintf(msg, n, "panel_gemm is %d; it must be 0 (automatic), 1 (mma.sync) or 2 (wgmma)", f->panel_gemm);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->panel_splits < 0 || f->panel_splits > 8) {
        snprintf(msg, n, "panel_splits is %d; it must be 0..8", f->panel_splits);
        return MACKO_STATUS_INVALID_VALUE;
    }
    if (f->simt_tc < 0 || f->simt_tc > MACKO_SIMT_TF32X3) {
        snprintf(msg, n, "simt_tc is %d; it must be 0 (automatic), 1 (FMA) or 2 (TF32x3)", f->simt_tc);
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

int macko_panel_gemm_of(const macko_devprops *dp)
{
#ifdef MACKO_HAVE_SM90A
    if (dp->cc_major == 9 && dp->cc_minor == 0)
        return MACKO_PANEL_GEMM_WG;
#else
    (void)dp;
#endif
    return MACKO_PANEL_GEMM_MMA;
}

int macko_panel_gemm_forced(const macko_devprops *dp, int f)
{
    const int a = macko_panel_gemm_of(dp);
    if (f == 2)
        return a == MACKO_PANEL_GEMM_WG ? a : -1;
    return f == 1 ? MACKO_PANEL_GEMM_MMA : a;
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
    if (tc_eligible(m, p.index, dp)) {
        tc_choose(m, dp, &p.tc.kt, &p.tc.group);
        if (f->tc_kt) {
            /* the widest tile's block (the most shared memory) must fit this device */
            if (macko_tc_smem_bytes(f->tc_kt, 64) > (size_t)dp->smem_per_block_optin) {
                snprintf(msg, msg_size, "tc_kt = %d needs %zu bytes of shared memory per block for 64 columns; this "
                         "device has %d", f->tc_kt, macko_tc_smem_bytes(f->tc_kt, 64), dp->smem_per_block_optin);
                return MACKO_STATUS_NOT_SUPPORTED;
            }
            p.tc.kt = f->tc_kt;
        }
        if (f->tc_group)
            p.tc.group = f->tc_group;
        p.tc.splits = f->tc_splits;
        p.tc.panel_rows = f->panel_rows;
        p.tc.panel_splits = f->panel_splits;
        p.tc.panel_gemm = macko_panel_gemm_forced(dp, f->panel_gemm);
        if (p.tc.panel_gemm < 0) {
            snprintf(msg, msg_size, "panel_gemm = 2 (wgmma) needs compute capability 9.0 and a library built for "
                                    "sm_90a (this device: %d.%d)", dp->cc_major, dp->cc_minor);
            return MACKO_STATUS_NOT_SUPPORTED;
        }
    } else if (simt_eligible(m, p.index, dp)) {
        if (f->tc_kt != 0 && f->tc_kt != MACKO_SIMT_KT) {
            snprintf(msg, msg_size, "tc_kt is %d; the SIMT path of fp32 matrices is built for %d", f->tc_kt,
                     MACKO_SIMT_KT);
            return MACKO_STATUS_NOT_SUPPORTED;
        }
        p.tc.kt = MACKO_SIMT_KT;
        p.tc.splits = f->tc_splits;
        /* the form: FMAs on the CUDA cores unless forced. The TF32x3 form (about 1.35x faster on an H100) is not
         * taken automatically: a product of it may be off by up to about 2^-20 of its value (the dropped lo * lo
         * term of a truncated split), several times what an fp32 FMA rounds, and the conformance suite's fp32
         * bounds failed on it (bench/NOTES.md, session 52) */
        p.tc.simt_tc = f->simt_tc ? f->simt_tc : MACKO_SIMT_FMA;
        if (p.tc.simt_tc == MACKO_SIMT_TF32X3 &&
            (int64_t)macko_simt_smem_bytes(64, MACKO_SIMT_TF32X3) > (int64_t)dp->smem_per_block_optin) {
            snprintf(msg, msg_size, "simt_tc = 2 (TF32x3) needs %zu bytes of shared memory per block; this device has "
                     "%d", macko_simt_smem_bytes(64, MACKO_SIMT_TF32X3), dp->smem_per_block_optin);
            return MACKO_STATUS_NOT_SUPPORTED;
        }
    }
    if (p.tc.kt > 0)
        p.tc.tidx_bytes = m->rows * ((m->cols + p.tc.kt - 1) / p.tc.kt + 1) * 4;
    st = plan_spmv(m, dp, f->spmv_geometry, f->spmv_depth, &p, msg, msg_size);
    if (st == MACKO_STATUS_SUCCESS)
        st = plan_mm(m, dp, f, &p, msg, msg_size);
    if (st == MACKO_STATUS_SUCCESS)
        *out = p;
    return st;
}

/* Opts the kernels of p with more dynamic shared memory than a block gets by default in, on the current device. */
static int plan_optin(const macko_plan *p, macko_datatype_t type, const macko_devprops *dp)
{
    int e = 0, i;
    if (p->spmv_unit.kernel == MACKO_K_SPMV_STAGED && p->spmv_unit.smem > DEFAULT_SMEM_BLOCK)
        e = macko_spmv_staged_optin(type, dp->smem_per_block_optin);
    for (i = 0; i < p->mm_rules && e == 0; i++) {
        const macko_launch *L = &p->mm[i].launch;
        if (p->mm[i].path == MACKO_MM_PATH_STAGED && L->smem > DEFAULT_SMEM_BLOCK)
            e = macko_mm_staged_optin(type, L->tile, L->swizzle != 0, dp->smem_per_block_optin);
        if (p->mm[i].path == MACKO_MM_PATH_TC || p->mm[i].path == MACKO_MM_PATH_PANEL) {
            const macko_launch *W = &p->mm[i].wide;
            if (W->kernel == MACKO_K_MM_STAGED && W->smem > DEFAULT_SMEM_BLOCK)
                e = macko_mm_staged_optin(type, W->tile, W->swizzle != 0, dp->smem_per_block_optin);
        }
    }
    if (e == 0 && p->tc.kt > 0)
        e = type == MACKO_R_32F ? macko_simt_prepare(dp->smem_per_block_optin)
                                : macko_tc_prepare(type, p->tc.group, dp->smem_per_block_optin);
    return e;
}

macko_status_t macko_plan_build(const char *fn, const struct macko_mat_s *m, const void *row_ptr,
                                const uint8_t *deltas, macko_stream_t stream, const macko_devprops *dp,
                                const macko_plan_forced *f, macko_plan *out, void **tile_index)
{
    char msg[256];
    macko_plan p;
    void *tidx = NULL;
    int e;
    macko_status_t st = macko_plan_compute(m, row_ptr, dp, f, &p, msg, sizeof msg);
    if (st != MACKO_STATUS_SUCCESS)
        return macko_fail(st, fn, f != NULL ? 4 : 0, "%s", msg);
    e = plan_optin(&p, m->type, dp);
    if (e != 0)
        return macko_fail(macko_cuda_status((cudaError_t)e), fn, 0,
                          "cannot give the kernels their shared memory (CUDA error %d)", e);
    if (p.tc.kt > 0) {
        const cudaError_t ea = cudaMalloc(&tidx, (size_t)p.tc.tidx_bytes);
        if (ea != cudaSuccess)
            return macko_fail(macko_cuda_status(ea), fn, 0, "cannot allocate the tile index (%lld bytes)",
                              (long long)p.tc.tidx_bytes);
        e = macko_tc_build_index(m->rows, m->cols, deltas, (const int32_t *)row_ptr, p.tc.kt, (uint32_t *)tidx,
                                 stream);
        if (e != 0) {
            cudaFree(tidx);
            return macko_fail(macko_status_of_cuda_error(e), fn, 0, "cannot build the tile index (CUDA error %d)",
                              e);
        }
        p.tc.tidx = (const uint32_t *)tidx;
    }
    *out = p;
    *tile_index = tidx;
    return MACKO_STATUS_SUCCESS;
}

/* ---- launching the tensor-core paths */

/* Blocks along K for a TC launch of `blocks` (row block, column tile) pairs over T K-tiles on `slots` resident
 * blocks: the fewest that fill whole waves best (a little penalty per split: the partial tiles go through the
 * workspace), no more than the K-tiles and 64. Where that leaves the grid inside one wave that is not full, as many as
 * one wave holds: with few row blocks and many slots (1024 rows at 64 a block are 16 blocks; the 8-column tile has 8
 * blocks per SM, 1056 slots on 132 SMs) each split adds less than the penalty takes, and the scores alone kept one
 * split, 16 blocks for the whole GPU (H200, session 32: 1024 x 8192 at n = 8, 168 us against 21 us split). */
int macko_plan_tc_splits(int64_t blocks, int64_t T, double slots)
{
    double best = -1.0;
    int64_t sp, pick = 1, room;
    if (blocks < 1 || T < 2 || slots < 1.0)
        return 1;
    for (sp = 1; sp <= 64 && sp <= T; sp++) {
        const double waves = (double)(blocks * sp) / slots;
        const double score = waves / ceil(waves) - 0.02 * (double)(sp - 1);
        if (score > best) {
            best = score;
            pick = sp;
        }
    }
    room = (int64_t)(slots / (double)blocks); /* splits one wave holds */
    if (room > 64)
        room = 64;
    if (room > T)
        room = T;
    if ((double)(blocks * pick) < slots && room > pick)
        pick = room;
    return (int)pick;
}

/* Blocks along K for a TC launch: the test-only override, else macko_plan_tc_splits, no more than the workspace
 * holds. */
static int tc_splits(const macko_plan *p, const macko_kargs *a, const macko_launch *L, const macko_workspace *ws,
                     const macko_devprops *dp)
{
    const int64_t rowblocks = (a->rows + MACKO_TC_ROWS_OF(L->tile) - 1) / MACKO_TC_ROWS_OF(L->tile);
    const int64_t ntiles = (a->n + L->tile - 1) / L->tile;
    const int64_t T = (a->cols + p->tc.kt - 1) / p->tc.kt;
    const double slots = (double)(dp->sm_count > 0 ? dp->sm_count : 1) * (L->blocks_per_sm > 0 ? L->blocks_per_sm : 1);
    int pick = p->tc.splits > 0 ? p->tc.splits : macko_plan_tc_splits(rowblocks * ntiles, T, slots);
    /* what the workspace holds (the column tiles of one launch: at most 65535) */
    while (pick > 1 && (macko_tc_ws_floats(a->rows, ntiles < 65535 ? a->n : (int64_t)65535 * L->tile, L->tile, pick) * 4 >
                            ws->partial_bytes ||
                        macko_tc_counters(a->rows, ntiles < 65535 ? a->n : (int64_t)65535 * L->tile, L->tile, pick) >
                            MACKO_WS_COUNTERS))
        pick--;
    return pick;
}

/* Blocks along K for a SIMT launch. The blocks run in waves of slots (SMs x blocks per SM); a last wave only partly
 * filled leaves SMs idle for a whole block's time (11008 x 4096 at n = 256: 172 blocks of 128 x 128 on 132 SMs take
 * two full block times for 1.3 waves of work). Splitting K into s parts makes s times as many blocks, each 1/s as
 * long, at the cost of a finishing pass over s planes of partial sums. Over s = 1 .. min(16, T / 8) (each part at
 * least 8 K-steps of 64 columns) whose partial sums the workspace holds, the one of least
 *     E(s) = ceil(blocks s / slots) ceil(T / s) slots / (blocks T)  +  [s > 1] (s + 1) 47 / cols
 * (ties: fewer parts). The first term is the blocks' time in K-steps against perfectly filled waves; the second the
 * finishing pass against the same: s + 1 planes of rows x n floats moved at about 3 TB/s, against 2 rows cols n
 * multiply-adds at the SIMT path's 35 TFLOP/s on an H100 / H200 (4 x 35 / 3 = 47). */
int macko_plan_simt_splits(int64_t rows, int64_t cols, int64_t n, int tile, int blocks_per_sm, int sm_count,
                           int64_t ws_bytes)
{
    if (rows < 1 || cols < 1 || n < 1 || tile < 1)
        return 1;
    const int64_t nn = n < (int64_t)65535 * tile ? n : (int64_t)65535 * tile; /* the columns of one launch */
    const int64_t blocks = ((rows + 127) / 128) * ((nn + tile - 1) / tile);
    const int64_t slots = (int64_t)(sm_count > 0 ? sm_count : 1) * (blocks_per_sm > 0 ? blocks_per_sm : 1);
    const int64_t T = (cols + MACKO_SIMT_KT - 1) / MACKO_SIMT_KT;
    const int64_t smax = T / 8 < 16 ? T / 8 : 16;
    int pick = 1;
    double best = 0.0;
    for (int64_t s = 1; s <= (smax > 1 ? smax : 1); s++) {
        if (s > 1 && s * rows * nn * 4 > ws_bytes)
            break;
        const double waves = (double)((blocks * s + slots - 1) / slots), steps = (double)((T + s - 1) / s);
        const double e = waves * steps * (double)slots / ((double)blocks * (double)T) +
                         (s > 1 ? (double)(s + 1) * 47.0 / (double)cols : 0.0);
        if (s == 1 || e < best - 1e-9) {
            best = e;
            pick = (int)s;
        }
    }
    return pick;
}

/* The SIMT launch's parts along K: the test-only override where set (as far as the workspace holds them), else
 * macko_plan_simt_splits. */
static int simt_splits(const macko_plan *p, const macko_kargs *a, const macko_launch *L, const macko_workspace *ws,
                       const macko_devprops *dp)
{
    if (p->tc.splits <= 0)
        return macko_plan_simt_splits(a->rows, a->cols, a->n, L->tile, L->blocks_per_sm, dp->sm_count,
                                      ws->partial_bytes);
    const int64_t n = a->n < (int64_t)65535 * L->tile ? a->n : (int64_t)65535 * L->tile;
    int64_t pick = p->tc.splits;
    while (pick > 1 && pick * a->rows * n * 4 > ws->partial_bytes)
        pick--;
    return (int)pick;
}

void macko_tc_args_from(int combo, const macko_kargs *a, struct macko_tc_args *t)
{
    memset(t, 0, sizeof *t);
    t->type = combo == MACKO_COMBO_H ? MACKO_R_16F : combo == MACKO_COMBO_S ? MACKO_R_32F : MACKO_R_16BF;
    t->rows = a->rows;
    t->cols = a->cols;
    t->values = a->values;
    t->deltas = a->deltas;
    t->row_ptr = (const int32_t *)a->row_ptr;
    t->n = a->n;
    t->b = a->b;
    t->ldb = a->ldb;
    t->c = a->c;
    t->ldc = a->ldc;
    t->alpha_dev = a->alpha_dev;
    t->beta_dev = a->beta_dev;
    t->alpha = a->alpha;
    t->beta = a->beta;
    t->stream = a->stream;
}

int macko_plan_launch_tc(int combo, const macko_plan *p, const macko_kargs *a, const macko_launch *L,
                         const macko_workspace *ws, const macko_devprops *dp)
{
    macko_tc_args t;
    if (L->kernel == MACKO_K_MM_SIMT ? combo != MACKO_COMBO_S : combo != MACKO_COMBO_H && combo != MACKO_COMBO_B)
        return 1; /* cudaErrorInvalidValue: the kernels read B and write C as the matrix's own type */
    macko_tc_args_from(combo, a, &t);
    t.tidx = p->tc.tidx;
    t.kt = p->tc.kt;
    t.group = p->tc.group;
    if (L->kernel == MACKO_K_MM_SIMT) {
        t.ntile = L->tile;
        t.simt_tc = p->tc.simt_tc;
        t.splits = simt_splits(p, a, L, ws, dp);
        t.ws = ws->partial;
        return macko_simt_spmm(&t, dp->sm_count);
    }
    if (L->kernel == MACKO_K_MM_TC) {
        t.ntile = L->tile;
        t.splits = tc_splits(p, a, L, ws, dp);
        t.ws = ws->partial;
        t.counters = ws->counters;
        return macko_tc_spmm(&t);
    } else {
        const int64_t row_bytes = 2 * ((a->cols + 7) & ~INT64_C(7)); /* one 16-bit panel row */
        macko_panel_args q;
        memset(&q, 0, sizeof q);
        q.mm = t;
        q.sm_count = dp->sm_count;
        q.ws = ws->partial;
        q.ws_bytes = macko_ws_panel_bytes(ws, a->n);
        q.gemm = p->tc.panel_gemm;
        q.splits = p->tc.panel_splits;
        if (p->tc.panel_rows > 0) {
            if (p->tc.panel_rows * row_bytes < q.ws_bytes)
                q.ws_bytes = p->tc.panel_rows * row_bytes;
            q.fixed_rows = 1;
        }
        return macko_panel_spmm(&q);
    }
}
