/* The launch-plan rule (src/plan.c: macko_plan_compute) on the host, with device properties filled by hand: which
 * kernel, geometry, tile, layout and grid a matrix gets, and what a forced choice may do. No GPU needed. The GPU
 * tests (GpuSpmv.KernelVariantsAgreeBitwise, GpuSpmm.PathsAgreeBitwise) show that every choice computes the bitwise
 * same result, so this rule moves time, never results. */
#include "macko_internal.h"

#include "../kernels/nm.h"
#include "../kernels/spmm_tc.h"
#include "../kernels/spmm_tiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>

namespace {

/* H100 SXM (sm_90) and RTX 3090 (sm_86) as the CUDA runtime reports them. */
macko_devprops h100()
{
    macko_devprops d{};
    d.sm_count = 132;
    d.cc_major = 9;
    d.smem_per_block_optin = 232448;
    d.smem_per_sm = 233472;
    d.smem_reserved_per_block = 1024;
    d.regs_per_sm = 65536;
    d.max_threads_per_sm = 2048;
    d.l2_bytes = 50331648;
    return d;
}

/* H200: the same SMs, shared memory and L2 as the H100 (only the memory differs, which the plan does not read) */
macko_devprops h200() { return h100(); }

macko_devprops rtx3090()
{
    macko_devprops d = h100();
    d.sm_count = 82;
    d.cc_major = 8;
    d.cc_minor = 6;
    d.smem_per_block_optin = 101376;
    d.smem_per_sm = 102400;
    d.max_threads_per_sm = 1536;
    d.l2_bytes = 6291456;
    return d;
}

/* Tesla T4 (sm_75): 1024 resident threads and 64 KiB of shared memory per SM. */
macko_devprops t4()
{
    macko_devprops d = h100();
    d.sm_count = 40;
    d.cc_major = 7;
    d.cc_minor = 5;
    d.smem_per_block_optin = 65536;
    d.smem_per_sm = 65536;
    d.smem_reserved_per_block = 0;
    d.max_threads_per_sm = 1024;
    d.l2_bytes = 4194304;
    return d;
}

/* An encoding's shape: what the plan reads of it. */
macko_mat_s shape(int64_t rows, int64_t cols, int64_t entries, macko_datatype_t type = MACKO_R_16F)
{
    macko_mat_s m;
    std::memset(&m, 0, sizeof m);
    m.rows = rows;
    m.cols = cols;
    m.entries = entries;
    m.entries_padded = macko_round8(entries);
    m.type = type;
    m.rp64 = entries >= MACKO_RP32_LIMIT;
    return m;
}

const void *const kRowPtr = reinterpret_cast<const void *>(0x1000);

macko_plan plan_of(const macko_mat_s &m, const macko_devprops &d, const macko_plan_forced *f = nullptr)
{
    macko_plan p;
    char msg[256];
    std::memset(&p, 0xAB, sizeof p);
    EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &d, f, &p, msg, sizeof msg), MACKO_STATUS_SUCCESS) << msg;
    return p;
}

/* The incx == 1 SpMV kernel of a 4096-row matrix of cols columns and `entries` entries. */
int spmv_kernel(int64_t cols, int64_t entries, macko_datatype_t t = MACKO_R_16F, const macko_devprops &d = h100())
{
    return plan_of(shape(4096, cols, entries, t), d).spmv_unit.kernel;
}

constexpr int W = MACKO_K_SPMV_WARP_I32_UNIT, S = MACKO_K_SPMV_STAGED;
constexpr int64_t R = 4096;
int64_t half_full(int64_t cols) { return R * cols / 2; }

TEST(Plan, SpmvGeometryByColumnsDensityAndType)
{
    /* fp16: STAGED up to MACKO_SPMV_STAGE_MAX_COLS columns */
    EXPECT_EQ(spmv_kernel(4096, half_full(4096)), S);
    EXPECT_EQ(spmv_kernel(MACKO_SPMV_STAGE_MAX_COLS, half_full(MACKO_SPMV_STAGE_MAX_COLS)), S);
    EXPECT_EQ(spmv_kernel(MACKO_SPMV_STAGE_MAX_COLS + 1, half_full(MACKO_SPMV_STAGE_MAX_COLS + 1)), W);
    /* nearly dense (at least MACKO_SPMV_DENSE_FRACTION of the positions stored): WARP at any width */
    EXPECT_EQ(spmv_kernel(4096, R * 4096), W);
    EXPECT_EQ(spmv_kernel(20000, R * 20000), W);
    EXPECT_EQ(spmv_kernel(4096, (int64_t)(MACKO_SPMV_DENSE_FRACTION * (double)(R * 4096)) + 1), W);
    EXPECT_EQ(spmv_kernel(4096, (int64_t)(0.95 * (double)(R * 4096))), S);
    /* padding entries count as stored entries, and a sparse matrix with much padding stays far below the fraction */
    EXPECT_EQ(spmv_kernel(4096, R * 4096 / 16), S);
    /* fp32: STAGED only up to 12288 columns (48 KiB of x) */
    EXPECT_EQ(spmv_kernel(4096, half_full(4096), MACKO_R_32F), S);
    EXPECT_EQ(spmv_kernel(12288, half_full(12288), MACKO_R_32F), S);
    EXPECT_EQ(spmv_kernel(12289, half_full(12289), MACKO_R_32F), W);
    EXPECT_EQ(spmv_kernel(4096, R * 4096, MACKO_R_32F), W);
    /* empty shapes take WARP (which writes beta*y or zeros) */
    EXPECT_EQ(plan_of(shape(0, 0, 0), h100()).spmv_unit.kernel, W);
    EXPECT_EQ(plan_of(shape(5, 0, 0), h100()).spmv_unit.kernel, W);
    /* incx > 1 always runs the strided WARP kernel */
    EXPECT_EQ(plan_of(shape(R, 4096, half_full(4096)), h100()).spmv_strided.kernel, MACKO_K_SPMV_WARP_I32_STRIDED);
}

/* SP24's retired staged configurations (0, 1, 5-8: not compiled, kernels/nm_sp24.cu) are never what the rule picks,
 * at any n on any SM count, and the rest are built. */
TEST(Plan, Sp24RetiredConfigurationsAreNeverChosen)
{
    const int retired[] = {0, 1, 5, 6, 7, 8};
    for (int c = 0; c < macko_nm_sp24_configs(); c++)
        EXPECT_EQ(macko_nm_sp24_config_built(c), std::find(std::begin(retired), std::end(retired), c) ==
                                                     std::end(retired) ? 1 : 0) << c;
    EXPECT_EQ(macko_nm_sp24_config_built(-1), 0);
    EXPECT_EQ(macko_nm_sp24_config_built(macko_nm_sp24_configs()), 0);
    for (int64_t n : std::initializer_list<int64_t>{1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 128, 1000, 4097,
                                                    65536, INT64_C(1) << 33}) {
        EXPECT_EQ(macko_nm_sp24_config_built(macko_nm_sp24_config(n)), 1) << n;
        for (int sms : {1, 78, 114, 132})
            for (int64_t rows : {16, 4096, 36864})
                EXPECT_EQ(macko_nm_sp24_config_built(macko_nm_sp24_auto_cfg(rows, 12288, n, sms)), 1) << n;
    }
}

/* SP24's configuration rule (kernels/nm_sp24.cu): the direct configurations up to 8 columns (11 up to 4, 13 from 5),
 * 12 in place of 11 and 14 in place of 13 where 11 or 13 would run one warp per block; the warps per block of a
 * direct configuration: its warps per SM (11: 32, 12: 48, 13: 16, 14: 20) over the blocks each SM takes (one wave),
 * at most 16, at least U k-steps each. */
TEST(Plan, Sp24DirectRule)
{
    EXPECT_EQ(macko_nm_sp24_configs(), 15);
    for (int64_t n = 1; n <= 4; n++)
        EXPECT_EQ(macko_nm_sp24_config(n), 11) << n;
    for (int64_t n = 5; n <= 8; n++)
        EXPECT_EQ(macko_nm_sp24_config(n), 13) << n;
    EXPECT_EQ(macko_nm_sp24_config(9), 10);
    EXPECT_EQ(macko_nm_sp24_auto_cfg(12288, 12288, 1, 132), 11);
    EXPECT_EQ(macko_nm_sp24_auto_cfg(28672, 8192, 4, 132), 11);
    EXPECT_EQ(macko_nm_sp24_auto_cfg(36864, 12288, 1, 132), 12); /* 2304 bands: one warp per block in 11 */
    EXPECT_EQ(macko_nm_sp24_auto_cfg(36864, 12288, 8, 132), 14); /* 1152 blocks of two bands: one warp each in 13 */
    EXPECT_EQ(macko_nm_sp24_auto_cfg(36864, 12288, 5, 132), 14);
    EXPECT_EQ(macko_nm_sp24_auto_cfg(28672, 8192, 8, 132), 13);  /* 896 blocks: 7 per SM, two warps each */
    EXPECT_EQ(macko_nm_sp24_auto_cfg(12288, 12288, 8, 132), 13);
    EXPECT_EQ(macko_nm_sp24_auto_cfg(36864, 12288, 9, 132), 10);
    EXPECT_EQ(macko_nm_sp24_splits(4096, 4096, 1, 11, 132, 0), 16);   /* 256 bands: 32 / 2 */
    EXPECT_EQ(macko_nm_sp24_splits(12288, 12288, 1, 11, 132, 0), 5);  /* 768 bands: 6 blocks per SM */
    EXPECT_EQ(macko_nm_sp24_splits(11008, 4096, 1, 11, 132, 0), 5);   /* 688 bands: 6 blocks on some SMs */
    EXPECT_EQ(macko_nm_sp24_splits(12288, 12288, 8, 13, 132, 0), 5);  /* 384 blocks of two bands: 3 per SM */
    EXPECT_EQ(macko_nm_sp24_splits(36864, 12288, 8, 13, 132, 0), 1);  /* 1152 blocks: 9 per SM */
    EXPECT_EQ(macko_nm_sp24_splits(36864, 12288, 8, 14, 132, 0), 4);  /* 576 blocks of four bands: 20 / 5 */
    EXPECT_EQ(macko_nm_sp24_splits(28672, 8192, 8, 13, 132, 0), 2);   /* 896 blocks: 16 / 7 */
    EXPECT_EQ(macko_nm_sp24_splits(36864, 12288, 1, 12, 132, 0), 2);  /* 2304 bands: 48 / 18 */
    EXPECT_EQ(macko_nm_sp24_splits(16, 100, 1, 11, 132, 0), 1);       /* 4 k-steps: one group of 4 */
    EXPECT_EQ(macko_nm_sp24_splits(4096, 4096, 8, 13, 132, 0), 16);   /* 128 blocks of two bands: at most 16 */
    EXPECT_EQ(macko_nm_sp24_splits(4096, 4096, 16, 11, 132, 0), 8);   /* two column tiles */
}

TEST(Plan, SpmvDepthForFewLongRows)
{
    /* 3584 x 18944 at d 0.5: 3584 rows <= 132 SMs x 32 deep warps, 9472 entries per row: fp16 loads 3 chunks ahead,
     * in 2 STAGED blocks per SM (the same rule on the H100 and the H200: both measured it) */
    for (const macko_devprops &d : {h100(), h200()}) {
        const macko_plan p = plan_of(shape(3584, 18944, 3584 * 9472), d);
        EXPECT_EQ(p.spmv_unit.kernel, S);
        EXPECT_EQ(p.spmv_unit.depth, 3);
        EXPECT_EQ(p.spmv_unit.blocks_per_sm, MACKO_SPMV_STAGED_DEEP_BLOCKS_PER_SM);
        EXPECT_EQ(p.spmv_strided.depth, 1);
    }
    /* rows below MACKO_SPMV_DEEP_MIN_ROW entries, more rows than the deep grid's warps, fp32: depth 1 */
    EXPECT_EQ(plan_of(shape(3584, 18944, 3584 * (MACKO_SPMV_DEEP_MIN_ROW - 1)), h100()).spmv_unit.depth, 1);
    EXPECT_EQ(plan_of(shape(3584, 18944, 3584 * MACKO_SPMV_DEEP_MIN_ROW), h100()).spmv_unit.depth, 3);
    EXPECT_EQ(plan_of(shape(132 * 32 + 1, 18944, (132 * 32 + 1) * 9472), h100()).spmv_unit.depth, 1);
    EXPECT_EQ(plan_of(shape(132 * 32, 18944, 132 * 32 * 9472), h100()).spmv_unit.depth, 3);
    EXPECT_EQ(plan_of(shape(3584, 18944, 3584 * 9472, MACKO_R_32F), h100()).spmv_unit.depth, 1);
    /* a device with fewer SMs has fewer deep warps */
    EXPECT_EQ(plan_of(shape(3584, 18944, 3584 * 9472), rtx3090()).spmv_unit.depth, 1);
    /* wider than STAGED holds: WARP, 4 blocks of 256 per SM at depth 3 */
    const macko_plan w = plan_of(shape(2048, 40000, 2048 * 8000), h100());
    EXPECT_EQ(w.spmv_unit.kernel, W);
    EXPECT_EQ(w.spmv_unit.depth, 3);
    EXPECT_EQ(w.spmv_unit.blocks_per_sm, MACKO_SPMV_DEEP_BLOCKS_PER_SM);
}

TEST(Plan, SpmvStagedRunsWhereTheDeviceHoldsTwoBlocksOfX)
{
    /* 20011 fp16 columns: 80048 bytes of x per block; an H100 SM holds 2 (with 1 KiB reserved each), a 3090 SM one */
    const macko_plan p = plan_of(shape(301, 20011, 301 * 20011 / 3), h100());
    EXPECT_EQ(p.spmv_unit.kernel, S);
    EXPECT_EQ(p.spmv_unit.blocks_per_sm, 2);
    EXPECT_EQ(p.spmv_unit.smem, 80048u);
    EXPECT_EQ(spmv_kernel(20011, half_full(20011), MACKO_R_16F, rtx3090()), W);
    /* up to 48 KiB every device holds 3 fp16 / 2 fp32 blocks; 12288 columns (48 KiB + 16 bytes... exactly 48 KiB) */
    EXPECT_EQ(plan_of(shape(R, 12288, half_full(12288)), rtx3090()).spmv_unit.blocks_per_sm, 3);
    EXPECT_EQ(plan_of(shape(R, 12289, half_full(12289)), rtx3090()).spmv_unit.blocks_per_sm, 2);
    EXPECT_EQ(plan_of(shape(R, 4096, half_full(4096), MACKO_R_32F), rtx3090()).spmv_unit.blocks_per_sm, 2);
    /* forcing STAGED where it cannot run is refused, with the reason */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.spmv_geometry = MACKO_SPMV_STAGED;
    const macko_mat_s m = shape(R, 20011, half_full(20011));
    macko_plan p2;
    char msg[256];
    const macko_devprops H = h100(), d = rtx3090();
    EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &H, &f, &p2, msg, sizeof msg), MACKO_STATUS_SUCCESS) << msg;
    EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &d, &f, &p2, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_NE(std::string(msg).find("20011 columns"), std::string::npos) << msg;
    /* and WARP may always be forced */
    f.spmv_geometry = MACKO_SPMV_WARP;
    EXPECT_EQ(plan_of(m, h100(), &f).spmv_unit.kernel, W);
}

TEST(Plan, SpmvGridsAndIndexVariants)
{
    /* WARP fp16: 6 blocks of 8 warps per SM; 4096 rows fit one round of 132 * 48 warps: one warp per row */
    const macko_plan w = plan_of(shape(R, 4096, R * 4096), h100());
    EXPECT_EQ(w.spmv_unit.block, 256u);
    EXPECT_EQ(w.spmv_unit.grid, 512u);
    EXPECT_EQ(w.spmv_unit.blocks_per_sm, 6);
    EXPECT_EQ(w.spmv_unit.smem, 0u);
    EXPECT_EQ(w.index, MACKO_IDX_I32);
    EXPECT_EQ(w.row_ptr, kRowPtr);
    /* STAGED: 512-thread blocks, 3 per SM */
    const macko_plan s = plan_of(shape(R, 4096, half_full(4096)), h100());
    EXPECT_EQ(s.spmv_unit.block, 512u);
    EXPECT_EQ(s.spmv_unit.grid, 256u);
    EXPECT_EQ(s.spmv_unit.smem, 16384u);
    /* 100000 rows: ceil(100000 / 6336) = 16 rows per warp, 6250 warps, 782 blocks */
    EXPECT_EQ(plan_of(shape(100000, 4096, 100000 * 4096), h100()).spmv_unit.grid, 782u);
    /* strided: 4 blocks per SM */
    EXPECT_EQ(w.spmv_strided.blocks_per_sm, 4);
    EXPECT_EQ(w.spmv_strided.grid, 512u);
    /* 64-bit arithmetic past MACKO_SPMV_I32_LIMIT columns, int64 row pointers from 2^31 entries: any incx */
    const macko_plan big = plan_of(shape(4, MACKO_SPMV_I32_LIMIT + 1, 64), h100());
    EXPECT_EQ(big.index, MACKO_IDX_I64_RP32);
    EXPECT_EQ(big.spmv_unit.kernel, MACKO_K_SPMV_WARP_I64_RP32);
    EXPECT_EQ(big.spmv_strided.kernel, MACKO_K_SPMV_WARP_I64_RP32);
    const macko_plan rp64 = plan_of(shape(70000, 70000, MACKO_RP32_LIMIT), h100());
    EXPECT_EQ(rp64.index, MACKO_IDX_I64_RP64);
    EXPECT_EQ(rp64.spmv_unit.kernel, MACKO_K_SPMV_WARP_I64_RP64);
    EXPECT_EQ(rp64.spmv_unit.blocks_per_sm, 4);
}

TEST(Plan, BlocksPerSmWithinTheDevicesResidentThreads)
{
    /* sm_75 holds 1024 threads per SM: 4 WARP blocks of 256 (not 6), 2 STAGED blocks of 512 (not 3); x of more than
     * 48 KiB cannot be held twice in its 64 KiB */
    const macko_plan w = plan_of(shape(R, 4096, R * 4096), t4());
    EXPECT_EQ(w.spmv_unit.kernel, W);
    EXPECT_EQ(w.spmv_unit.blocks_per_sm, 4);
    EXPECT_EQ(w.spmv_unit.grid, 128u); /* at most 40 x 4 x 8 = 1280 warps: 4 rows each, 1024 warps */
    const macko_plan s = plan_of(shape(R, 4096, half_full(4096)), t4());
    EXPECT_EQ(s.spmv_unit.kernel, S);
    EXPECT_EQ(s.spmv_unit.blocks_per_sm, 2);
    EXPECT_EQ(plan_of(shape(R, 12289, half_full(12289)), t4()).spmv_unit.kernel, W);
    /* the other devices are not capped */
    EXPECT_EQ(plan_of(shape(R, 4096, R * 4096), rtx3090()).spmv_unit.blocks_per_sm, 6);
    EXPECT_EQ(plan_of(shape(R, 4096, half_full(4096)), rtx3090()).spmv_unit.blocks_per_sm, 3);
}

TEST(Plan, SpmmRuleOverN)
{
    /* 4096^2 fp16 at d = 0.5: a lane's entries lie ~16 columns apart, swizzle shift 4 */
    const macko_plan p = plan_of(shape(R, 4096, half_full(4096)), h100());
    ASSERT_GE(p.mm_rules, 1);
    EXPECT_EQ(p.mm[p.mm_rules - 1].n_max, INT64_MAX);
    EXPECT_EQ(macko_plan_mm(&p, 1, 4096, 1, 4096, 1), &p.spmv_unit);
    EXPECT_EQ(macko_plan_mm(&p, 1, 4096, 3, 4096, 1), &p.spmv_strided);
    struct Want {
        int64_t n;
        int tile, swizzle;
        uint32_t smem, plane_stride;
    };
    /* tiles of 2 and 4: 4- and 8-byte rows, plain; 8 and 16: 16-byte rows (two planes for 16), swizzled (CUDA
     * cores up to n = 16 on a matrix of fewer than 2^25 positions) */
    for (const Want &w : {Want{2, 2, 0, 16400, 16400}, Want{3, 4, 0, 32784, 32784}, Want{4, 4, 0, 32784, 32784},
                          Want{5, 8, 4, 65552, 65552}, Want{8, 8, 4, 65552, 65552}, Want{9, 16, 4, 131104, 65552},
                          Want{16, 16, 4, 131104, 65552}}) {
        SCOPED_TRACE(w.n);
        const macko_launch *L = macko_plan_mm(&p, w.n, 4096, 1, 4096, 1);
        ASSERT_NE(L, nullptr);
        EXPECT_EQ(L->kernel, MACKO_K_MM_STAGED);
        EXPECT_EQ(L->tile, w.tile);
        EXPECT_EQ(L->swizzle, w.swizzle);
        EXPECT_EQ(L->smem, w.smem);
        EXPECT_EQ(L->plane_stride, w.plane_stride);
        EXPECT_EQ(L->slots, 4096u);
        EXPECT_EQ(L->block, 1024u);
        EXPECT_EQ(L->grid, 128u); /* one warp per row, at most one block per SM */
    }
    /* then the tensor cores: tiles of 32 and 64 columns up to n = 64 (128), the dense panels beyond */
    EXPECT_EQ(p.tc.kt, 192); /* d = 0.5: 96 entries a segment, 8 lanes of 16 */
    EXPECT_EQ(p.tc.group, 8);
    EXPECT_EQ(p.tc.tidx_bytes, R * (4096 / 192 + 1 + 1) * 4);
    for (const Want &w : {Want{17, 32, 0, 0, 0}, Want{32, 32, 0, 0, 0}, Want{33, 64, 0, 0, 0}, Want{64, 64, 0, 0, 0}}) {
        SCOPED_TRACE(w.n);
        const macko_launch *L = macko_plan_mm(&p, w.n, 4096, 1, 4096, 1);
        ASSERT_NE(L, nullptr);
        EXPECT_EQ(L->kernel, MACKO_K_MM_TC);
        EXPECT_EQ(L->tile, w.tile);
        EXPECT_EQ(L->smem, (uint32_t)macko_tc_smem_bytes(192, w.tile));
        EXPECT_EQ(L->block, w.tile == 64 ? 256u : 128u); /* 8 warps share the 64-column tile's B, 4 the 32's */
        EXPECT_GE(L->blocks_per_sm, 2);
    }
    /* n = 65..128: PANEL where its GEMM is wgmma (clusters along K), TC (two launches of 64 columns) with mma.sync */
    const macko_devprops hp = h100();
    for (int64_t n : {65, 100, 127, 128}) {
        SCOPED_TRACE(n);
        EXPECT_EQ(macko_plan_mm(&p, n, 4096, 1, 4096, 1)->kernel,
                  macko_panel_gemm_of(&hp) == MACKO_PANEL_GEMM_WG ? MACKO_K_MM_PANEL : MACKO_K_MM_TC);
    }
    EXPECT_EQ(macko_plan_mm(&p, 129, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_PANEL);
    EXPECT_EQ(macko_plan_mm(&p, 100000, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_PANEL);
    /* strided B or C (the strided-batched SpMV): the widest CUDA-core row instead */
    EXPECT_EQ(macko_plan_mm(&p, 64, 4096, 3, 4096, 1)->kernel, MACKO_K_MM_STAGED);
    EXPECT_EQ(macko_plan_mm(&p, 64, 4096, 3, 4096, 1)->tile, 16);
    EXPECT_EQ(macko_plan_mm(&p, 300, 4096, 1, 4096, 2)->tile, 16);
    /* bf16: the rule of fp16, row for row (the same 16-bit tiles; the tensor cores from the same n) */
    const macko_plan b = plan_of(shape(R, 4096, half_full(4096), MACKO_R_16BF), h100());
    EXPECT_EQ(b.tc.kt, p.tc.kt);
    EXPECT_EQ(b.tc.group, p.tc.group);
    EXPECT_EQ(b.tc.tidx_bytes, p.tc.tidx_bytes);
    ASSERT_EQ(b.mm_rules, p.mm_rules);
    for (int i = 0; i < p.mm_rules; i++) {
        SCOPED_TRACE(i);
        EXPECT_EQ(b.mm[i].n_max, p.mm[i].n_max);
        EXPECT_EQ(b.mm[i].path, p.mm[i].path);
        EXPECT_EQ(b.mm[i].launch.kernel, p.mm[i].launch.kernel);
        EXPECT_EQ(b.mm[i].launch.tile, p.mm[i].launch.tile);
        EXPECT_EQ(b.mm[i].launch.smem, p.mm[i].launch.smem);
        EXPECT_EQ(b.mm[i].launch.blocks_per_sm, p.mm[i].launch.blocks_per_sm);
    }
    EXPECT_EQ(macko_plan_mm(&b, 17, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_TC);
    EXPECT_EQ(macko_plan_mm(&b, 129, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_PANEL);
    /* fp32 (and fp64): no tensor-core path; rows of at most 32 bytes, so n = 16 runs two tiles of 8; fp32 takes the
     * SIMT path from 25 columns on (Plan.Fp32SimtRule) */
    const macko_plan s = plan_of(shape(R, 4096, half_full(4096), MACKO_R_32F), h100());
    EXPECT_EQ(s.tc.kt, MACKO_SIMT_KT);
    EXPECT_EQ(plan_of(shape(R, 4096, half_full(4096), MACKO_R_64F), h100()).tc.kt, 0);
    EXPECT_EQ(macko_plan_mm(&s, 16, 4096, 1, 4096, 1)->tile, 8);
    EXPECT_EQ(macko_plan_mm(&s, 24, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_STAGED);
    EXPECT_EQ(macko_plan_mm(&s, 1000, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_SIMT);
    /* 28672 fp16 columns: 8 columns would need 458 KB and only a tile of 4 fits, which would split a tile of 8: the
     * global path, tile 8; from n = 9 on (2^25 positions or more) the tensor cores */
    const macko_plan g = plan_of(shape(R, 28672, half_full(28672)), h100());
    const macko_launch *L = macko_plan_mm(&g, 8, 28672, 1, 28672, 1);
    EXPECT_EQ(L->kernel, MACKO_K_MM_GLOBAL_I32);
    EXPECT_EQ(L->tile, 8);
    EXPECT_EQ(L->blocks_per_sm, 4);
    EXPECT_EQ(macko_plan_mm(&g, 4, 28672, 1, 28672, 1)->kernel, MACKO_K_MM_STAGED); /* a tile of 4 still fits */
    EXPECT_EQ(macko_plan_mm(&g, 9, 28672, 1, 28672, 1)->kernel, MACKO_K_MM_TC);
    EXPECT_EQ(macko_plan_mm(&g, 9, 28672, 1, 28672, 1)->tile, 16);
    /* the 16-column tile runs 8 warps a block (MACKO_TC_WARPS_OF), 3 blocks per SM at kt = 192 */
    EXPECT_EQ(g.tc.kt, 192);
    EXPECT_EQ(macko_plan_mm(&g, 16, 28672, 1, 28672, 1)->block, 256u);
    EXPECT_EQ(macko_plan_mm(&g, 16, 28672, 1, 28672, 1)->blocks_per_sm, 3);
    EXPECT_EQ(macko_plan_mm(&g, 16, 28672, 1, 28672, 1)->smem, (uint32_t)macko_tc_smem_bytes(192, 16));
    EXPECT_EQ(macko_tc_smem_bytes(192, 16), (size_t)2 * (128 * (192 + 40) + 2 * 16 * (192 + 8)));
    /* fewer than 2^25 positions keep the CUDA-core tile of 16 columns only with at least 4096 rows of at most 4096
     * columns (its grid then fills the GPU); fewer rows or longer ones take TC from n = 9 */
    const std::pair<int64_t, int64_t> small_shapes[] = {{4096, 2048}, {8000, 4096}, {4095, 4096},
                                                          {1024, 8192}, {2048, 4096}, {5120, 5120}};
    for (const auto &rc : small_shapes) {
        const int64_t rows = rc.first, cols = rc.second;
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
        const macko_plan sp = plan_of(shape(rows, cols, rows * cols / 2), h100());
        const bool cores = rows >= 4096 && cols <= 4096;
        EXPECT_EQ(macko_plan_mm(&sp, 16, cols, 1, cols, 1)->kernel, cores ? MACKO_K_MM_STAGED : MACKO_K_MM_TC);
        EXPECT_EQ(macko_plan_mm(&sp, 9, cols, 1, cols, 1)->kernel, cores ? MACKO_K_MM_STAGED : MACKO_K_MM_TC);
        EXPECT_EQ(macko_plan_mm(&sp, 8, cols, 1, cols, 1)->kernel == MACKO_K_MM_TC, rows <= 1024);
    }
    /* at most 1024 rows with at least 28 % of the positions stored: the TC tile of 8 from n = 5, from n = 3 with at
     * least 40 % (n = 2 stays on the CUDA cores); below 28 %, or with 1025 rows, the CUDA cores up to n = 8 */
    for (const int64_t rows : {1, 33, 512, 1024, 1025}) {
        for (const double d : {0.27, 0.3, 0.39, 0.41, 0.7}) {
            const int64_t cols = 4096;
            SCOPED_TRACE(std::to_string(rows) + " rows, d = " + std::to_string(d));
            const macko_plan sp = plan_of(shape(rows, cols, (int64_t)(d * (double)(rows * cols))), h100());
            const bool tc = rows <= 1024 && d >= 0.28;
            EXPECT_NE(macko_plan_mm(&sp, 2, cols, 1, cols, 1)->kernel, MACKO_K_MM_TC);
            for (const int64_t n : {3, 4})
                EXPECT_EQ(macko_plan_mm(&sp, n, cols, 1, cols, 1)->kernel == MACKO_K_MM_TC, tc && d >= 0.4) << n;
            for (const int64_t n : {5, 8}) {
                const macko_launch *L = macko_plan_mm(&sp, n, cols, 1, cols, 1);
                EXPECT_EQ(L->kernel == MACKO_K_MM_TC, tc) << n;
                if (tc) {
                    EXPECT_EQ(L->tile, 8);
                    EXPECT_EQ(L->block, 128u);
                }
            }
            EXPECT_EQ(macko_plan_mm(&sp, 9, cols, 1, cols, 1)->kernel, MACKO_K_MM_TC);
        }
    }
    /* lower densities take smaller groups */
    EXPECT_EQ(plan_of(shape(R, 4096, R * 4096 * 3 / 10), h100()).tc.group, 4);
    EXPECT_EQ(plan_of(shape(R, 4096, R * 4096 / 10), h100()).tc.group, 4);
}

/* fp32 with 32-bit indices: the CUDA-core tiles up to n = macko_plan_simt_from - 1 (24; below d = 0.4 and 0.2 later, the more rows the later), then the SIMT path (64 columns per block
 * up to n = 64, 128 beyond; 64 where a block cannot have the wider kernel's shared memory), with the tile index at
 * kt = 64 counted; forced SIMT for every n; refused on 16-bit matrices, with 64-bit indices and another kt; the
 * tensor-core paths refused on fp32. No SIMT on a device without cp.async (sm_75). */
TEST(Plan, Fp32SimtRule)
{
    const macko_devprops H = h100();
    const macko_mat_s m = shape(R, 4096, half_full(4096), MACKO_R_32F);
    constexpr int F = MACKO_SIMT_FMA, T = MACKO_SIMT_TF32X3;
    /* the form: FMA unless forced (TF32x3: the override only); TF32x3 forced where its block does not fit (99 KiB):
     * NOT_SUPPORTED */
    EXPECT_EQ(plan_of(m, h100()).tc.simt_tc, F);
    EXPECT_EQ(plan_of(m, rtx3090()).tc.simt_tc, F);
    EXPECT_GT(macko_simt_smem_bytes(64, T), macko_simt_smem_bytes(64, F));
    {
        macko_plan_forced ft = MACKO_PLAN_FORCED_NONE;
        ft.simt_tc = T;
        const macko_plan pt = plan_of(m, h100(), &ft);
        EXPECT_EQ(pt.tc.simt_tc, T);
        EXPECT_NE(macko_plan_mm(&pt, 16, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_SIMT);
        EXPECT_EQ(macko_plan_mm(&pt, 17, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_SIMT);
        EXPECT_EQ(macko_plan_mm(&pt, 1000, 4096, 1, 4096, 1)->smem, (uint32_t)macko_simt_smem_bytes(128, T));
        const macko_devprops G = rtx3090();
        macko_plan out;
        char msg[256];
        EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &G, &ft, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_NE(std::strstr(msg, "TF32x3"), nullptr) << msg;
    }
    const int from = macko_plan_simt_from(&m, F);
    EXPECT_EQ(from, 25); /* d = 0.5 */
    EXPECT_EQ(macko_plan_simt_from(&m, T), 17);
    const macko_mat_s quarter = shape(R, 4096, R * 4096 / 4, MACKO_R_32F), tenth = shape(R, 4096, R * 4096 / 10, MACKO_R_32F);
    EXPECT_EQ(macko_plan_simt_from(&quarter, F), 26);
    EXPECT_EQ(macko_plan_simt_from(&tenth, F), 37);
    EXPECT_EQ(macko_plan_simt_from(&quarter, T), 20);
    EXPECT_EQ(macko_plan_simt_from(&tenth, T), 28);
    /* more rows: later at low density (the crossovers measured on the quick shapes), never past 64 */
    const macko_mat_s big5 = shape(36864, 12288, 36864 * 6144, MACKO_R_32F), big3 = shape(12288, 12288, 12288 * 3686, MACKO_R_32F),
                      big1 = shape(12288, 12288, 12288 * 1229, MACKO_R_32F), huge1 = shape(36864, 12288, 36864 * 1229, MACKO_R_32F);
    EXPECT_EQ(macko_plan_simt_from(&big5, F), 25);
    EXPECT_EQ(macko_plan_simt_from(&big3, F), 32);
    EXPECT_EQ(macko_plan_simt_from(&big1, F), 57);
    EXPECT_EQ(macko_plan_simt_from(&huge1, F), 64);
    /* TF32x3: 17; 20 + 2 log2(rows / 4096) = 23.2; 28 + 7 log2(3) = 39.1; 28 + 7 log2(9) = 50.2 */
    EXPECT_EQ(macko_plan_simt_from(&big5, T), 17);
    EXPECT_EQ(macko_plan_simt_from(&big3, T), 24);
    EXPECT_EQ(macko_plan_simt_from(&big1, T), 40);
    EXPECT_EQ(macko_plan_simt_from(&huge1, T), 51);
    const macko_plan lo = plan_of(tenth, h100());
    EXPECT_NE(macko_plan_mm(&lo, 36, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_SIMT);
    EXPECT_EQ(macko_plan_mm(&lo, 37, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_SIMT);
    /* wide fp32 rows: the staged tile of 4 columns (8 do not fit 12288 columns), not the gather (whose fp32 tile is
     * 4 columns too) */
    const macko_plan wide = plan_of(shape(R, 12288, R * 12288 / 10, MACKO_R_32F), h100());
    EXPECT_EQ(macko_plan_mm(&wide, 8, 12288, 1, 12288, 1)->kernel, MACKO_K_MM_STAGED);
    EXPECT_EQ(macko_plan_mm(&wide, 8, 12288, 1, 12288, 1)->tile, 4);
    EXPECT_EQ(macko_plan_mm(&wide, 16, 12288, 1, 12288, 1)->kernel, MACKO_K_MM_STAGED);
    EXPECT_EQ(macko_plan_mm(&wide, 16, 12288, 1, 12288, 1)->tile, 4);
    EXPECT_EQ(macko_plan_mm(&wide, 36, 12288, 1, 12288, 1)->kernel, MACKO_K_MM_STAGED);
    /* rows of 18944 fp32 columns: not even 4 columns of B fit shared memory, the tiles read B from global memory and
     * SIMT takes over from n = 15 (d >= 0.4) / 16 (d >= 0.28); lower densities keep macko_plan_simt_from. 11008 and
     * 14336 columns stage 4 (not 8): SIMT from 21 on at most 8192 rows (d >= 0.28); 4096 columns stage 8 */
    const struct {
        int64_t rows, cols;
        double d;
        int from;
    } wides[] = {{3584, 18944, 0.5, 15}, {3584, 18944, 0.3, 16}, {8192, 29568, 0.5, 15}, {3584, 18944, 0.25, 26},
                 {3584, 18944, 0.1, 37}, {4096, 14336, 0.5, 21}, {4096, 11008, 0.5, 21}, {4096, 11008, 0.3, 21},
                 {5120, 13824, 0.5, 21}, {8192, 11008, 0.5, 21}, {8193, 11008, 0.5, 25}, {12288, 12288, 0.5, 25},
                 {4096, 11008, 0.25, 26}, {4096, 4096, 0.5, 25}, {11008, 4096, 0.3, 31}};
    for (const auto &w : wides) {
        SCOPED_TRACE(std::to_string(w.cols) + " columns, d = " + std::to_string(w.d));
        const int64_t entries = (int64_t)(w.d * (double)(w.rows * w.cols));
        const macko_plan g = plan_of(shape(w.rows, w.cols, entries, MACKO_R_32F), h100());
        EXPECT_NE(macko_plan_mm(&g, w.from - 1, w.cols, 1, w.cols, 1)->kernel, MACKO_K_MM_SIMT);
        EXPECT_EQ(macko_plan_mm(&g, w.from, w.cols, 1, w.cols, 1)->kernel, MACKO_K_MM_SIMT);
        EXPECT_EQ(macko_plan_mm(&g, 12, w.cols, 1, w.cols, 1)->kernel == MACKO_K_MM_STAGED, w.cols < 14500);
        EXPECT_EQ(macko_plan_mm(&g, 12, w.cols, 1, w.cols, 1)->tile == 4, w.cols > 4096); /* global: 4 too */
    }
    const macko_plan p = plan_of(m, h100());
    EXPECT_EQ(p.tc.kt, MACKO_SIMT_KT);
    EXPECT_EQ(p.tc.tidx_bytes, R * (4096 / 64 + 1) * 4);
    for (int64_t n : {(int64_t)2, (int64_t)8, (int64_t)from - 1}) {
        SCOPED_TRACE(n);
        const int k = macko_plan_mm(&p, n, 4096, 1, 4096, 1)->kernel;
        EXPECT_TRUE(k == MACKO_K_MM_STAGED || k == MACKO_K_MM_GLOBAL_I32) << k;
    }
    for (int64_t n : {(int64_t)from, (int64_t)64, (int64_t)65, (int64_t)100000}) {
        SCOPED_TRACE(n);
        const macko_launch *L = macko_plan_mm(&p, n, 4096, 1, 4096, 1);
        ASSERT_NE(L, nullptr);
        EXPECT_EQ(L->kernel, MACKO_K_MM_SIMT);
        EXPECT_EQ(L->tile, n <= 64 ? 64 : 128);
        EXPECT_EQ(L->smem, (uint32_t)macko_simt_smem_bytes(L->tile, p.tc.simt_tc));
        EXPECT_LE((int64_t)L->smem, (int64_t)h100().smem_per_block_optin);
    }
    /* strided B or C: the widest CUDA-core row (fp32: 8 columns) */
    EXPECT_EQ(macko_plan_mm(&p, 100, 4096, 2, 4096, 1)->kernel, MACKO_K_MM_STAGED);
    EXPECT_EQ(macko_plan_mm(&p, 100, 4096, 2, 4096, 1)->tile, 8);
    /* a device whose blocks get 99 KiB: 64 columns for every n */
    const macko_plan g = plan_of(m, rtx3090());
    EXPECT_EQ(macko_plan_mm(&g, 1000, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_SIMT);
    EXPECT_EQ(macko_plan_mm(&g, 1000, 4096, 1, 4096, 1)->tile, 64);
    /* sm_75: no SIMT, no index */
    const macko_plan o = plan_of(m, t4());
    EXPECT_EQ(o.tc.kt, 0);
    EXPECT_NE(macko_plan_mm(&o, 1000, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_SIMT);
    /* fp64 has no SIMT path */
    EXPECT_EQ(plan_of(shape(R, 4096, half_full(4096), MACKO_R_64F), h100()).tc.kt, 0);

    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_SIMT;
    f.tc_splits = 3;
    const macko_plan q = plan_of(m, h100(), &f);
    EXPECT_EQ(q.tc.splits, 3);
    for (int64_t n : {1, 7, 64, 65, 5000}) {
        const macko_launch *L = macko_plan_mm(&q, n, 4096, 1, 4096, 1);
        ASSERT_NE(L, nullptr);
        EXPECT_EQ(L->kernel, MACKO_K_MM_SIMT);
        EXPECT_EQ(L->tile, n <= 64 ? 64 : 128);
    }
    char msg[256];
    macko_plan out;
    for (macko_datatype_t t : {MACKO_R_16F, MACKO_R_16BF, MACKO_R_64F}) {
        const macko_mat_s other = shape(R, 4096, half_full(4096), t);
        EXPECT_EQ(macko_plan_compute(&other, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_NE(std::strstr(msg, "SIMT"), nullptr) << msg;
    }
    f.index = MACKO_IDX_I64_RP32;
    EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    f = MACKO_PLAN_FORCED_NONE;
    f.tc_kt = 128;
    EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_NE(std::strstr(msg, "tc_kt"), nullptr) << msg;
    for (int path : {MACKO_MM_PATH_TC, MACKO_MM_PATH_PANEL}) {
        f = MACKO_PLAN_FORCED_NONE;
        f.mm_path = path;
        EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    }
}


/* SIMT parts along K: a partly filled last wave is split away where the finishing pass costs less than the idle SMs;
 * full waves and short K are left whole; the workspace bounds the parts. (132 SMs as an H100 / H200.) */
TEST(Plan, SimtSplitsFillTheWaves)
{
    const int64_t ws = 64 << 20;
    /* 11008 x 4096, n = 256: 172 blocks of 128 x 128, one per SM: 1.3 waves -> 3 parts, 3.9 waves */
    EXPECT_EQ(macko_plan_simt_splits(11008, 4096, 256, 128, 1, 132, ws), 3);
    /* 12288^2, n = 64: 96 blocks of 128 x 64, two per SM -> 8 parts (768 blocks, 2.9 waves) */
    EXPECT_EQ(macko_plan_simt_splits(12288, 12288, 64, 64, 2, 132, ws), 8);
    /* 36864 x 12288, n = 64: 288 blocks on 264 slots (1.09 waves); 8 parts would be best, the 64 MiB hold 6 */
    EXPECT_EQ(macko_plan_simt_splits(36864, 12288, 64, 64, 2, 132, ws), 6);
    EXPECT_EQ(macko_plan_simt_splits(36864, 12288, 64, 64, 2, 132, 80 << 20), 8);
    /* many full waves: whole */
    EXPECT_EQ(macko_plan_simt_splits(4096, 4096, 2048, 128, 1, 132, ws), 1);
    EXPECT_EQ(macko_plan_simt_splits(36864, 12288, 2048, 128, 1, 132, ws), 1);
    /* K too short for two parts of 8 steps (T = 15) */
    EXPECT_EQ(macko_plan_simt_splits(128, 960, 64, 64, 2, 132, ws), 1);
    /* the workspace: 36864 x 64 floats are 9.4 MB a part, 20 MB hold two */
    EXPECT_EQ(macko_plan_simt_splits(36864, 12288, 64, 64, 2, 132, 20 << 20), 2);
    EXPECT_EQ(macko_plan_simt_splits(36864, 12288, 64, 64, 2, 132, 9 << 20), 1);
    /* never more than 16, never below 1, for any n */
    for (int64_t n = 1; n <= 4097; n += 97) {
        const int s = macko_plan_simt_splits(4096, 16384, n, n <= 64 ? 64 : 128, n <= 64 ? 2 : 1, 132, ws);
        EXPECT_GE(s, 1) << n;
        EXPECT_LE(s, 16) << n;
    }
}
/* TC parts along K (macko_plan_tc_splits): the fewest that fill whole waves best, a penalty of 0.02 a split, at most T
 * and 64; a grid left inside one wave that is not full takes as many as one wave holds. (132 SMs as an H100 / H200.) */
TEST(Plan, TcSplitsFillOneWaveAtLeast)
{
    /* 12288^2, n = 16: 96 row blocks of 128 on 396 slots (3 a SM) -> 4 (384 blocks, 0.97 of a wave) */
    EXPECT_EQ(macko_plan_tc_splits(96, 96, 396.0), 4);
    /* 2048 x 4096, n = 16: 16 row blocks -> 24 (384 of 396) */
    EXPECT_EQ(macko_plan_tc_splits(16, 32, 396.0), 24);
    /* 36864 x 12288, n = 32: 576 blocks on 528 slots (1.09 waves): 6 parts make 6.55 waves, 7 of them 94 % full */
    EXPECT_EQ(macko_plan_tc_splits(576, 96, 528.0), 6);
    /* 1024 x 8192, n = 8, the 8-column tile (8 blocks a SM, 1056 slots): 16 row blocks gain 0.015 of a wave a split,
     * less than the penalty; one wave holds 66 of them, K-tiles and the cap allow 64 */
    EXPECT_EQ(macko_plan_tc_splits(16, 64, 1056.0), 64);
    EXPECT_EQ(macko_plan_tc_splits(16, 43, 1056.0), 43);
    /* 512 x 4096 (4 row blocks of 128), 396 slots: 99 in a wave, 32 K-tiles */
    EXPECT_EQ(macko_plan_tc_splits(4, 32, 396.0), 32);
    /* full waves stay whole; one K-tile or no blocks: one part */
    EXPECT_EQ(macko_plan_tc_splits(792, 96, 396.0), 1);
    EXPECT_EQ(macko_plan_tc_splits(16, 1, 1056.0), 1);
    EXPECT_EQ(macko_plan_tc_splits(0, 64, 1056.0), 1);
    /* never below 1, never above 64 or T, and never a grid under one wave where one more split still fits */
    for (int64_t blocks = 1; blocks <= 2000; blocks += 37)
        for (int64_t T = 1; T <= 200; T += 13) {
            const int s = macko_plan_tc_splits(blocks, T, 528.0);
            EXPECT_GE(s, 1);
            EXPECT_LE(s, 64);
            EXPECT_LE(s, T);
            if (blocks * s < 528 && s < 64 && s < T) {
                EXPECT_GT(blocks * (s + 1), 528) << blocks << " " << T;
            }
        }
}
TEST(Plan, SpmmGlobalOffsetsPastInt32TakeTheWideKernel)
{
    const int64_t cols = 100000, ldb_fits = cols, ldb_16 = INT64_C(2147483647) / 12; /* 15 * ldb_16 > 2^31 > 7 * */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_GLOBAL;
    /* fp16: the 32-bit kernel's tile is 8, as the wide one's: it runs while a tile of 8 fits 32-bit offsets */
    const macko_plan h = plan_of(shape(R, cols, R * 100), h100(), &f);
    EXPECT_EQ(macko_plan_mm(&h, 16, cols, 1, ldb_fits, 1)->kernel, MACKO_K_MM_GLOBAL_I32);
    EXPECT_EQ(macko_plan_mm(&h, 16, cols, 1, ldb_16, 1)->kernel, MACKO_K_MM_GLOBAL_I32);
    EXPECT_EQ(macko_plan_mm(&h, 16, cols, 1, ldb_16 * 2, 1)->kernel, MACKO_K_MM_GLOBAL_I64_RP32);
    EXPECT_EQ(macko_plan_mm(&h, 16, cols, 1, ldb_16 * 2, 1)->tile, 8);
    /* fp32: the 32-bit kernel holds 4 columns; where 16 do not fit 32-bit offsets the 64-bit kernel takes 8 */
    const macko_plan s = plan_of(shape(R, cols, R * 100, MACKO_R_32F), h100(), &f);
    EXPECT_EQ(macko_plan_mm(&s, 16, cols, 1, ldb_fits, 1)->kernel, MACKO_K_MM_GLOBAL_I32);
    EXPECT_EQ(macko_plan_mm(&s, 16, cols, 1, ldb_fits, 1)->tile, 4);
    EXPECT_EQ(macko_plan_mm(&s, 16, cols, 1, ldb_16, 1)->kernel, MACKO_K_MM_GLOBAL_I64_RP32);
    EXPECT_EQ(macko_plan_mm(&s, 16, cols, 1, ldb_16, 1)->tile, 8);
    EXPECT_EQ(macko_plan_mm(&s, 16, cols, 1, ldb_16, 1)->blocks_per_sm, 2);
    /* a large incb (strided batch) counts too */
    EXPECT_EQ(macko_plan_mm(&s, 2, cols, 30000, 1, 1)->kernel, MACKO_K_MM_GLOBAL_I64_RP32);
}

TEST(Plan, ForcedChoices)
{
    const macko_mat_s m = shape(R, 4096, half_full(4096));
    const macko_devprops H = h100();
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    /* one path, tile and layout for every n, n == 1 included */
    f.mm_path = MACKO_MM_PATH_STAGED;
    f.mm_tile = 4;
    f.mm_swizzle = 5;
    const macko_plan p = plan_of(m, h100(), &f);
    EXPECT_EQ(p.forced, 1);
    for (int64_t n : {1, 2, 7, 100}) {
        const macko_launch *L = macko_plan_mm(&p, n, 4096, 1, 4096, 1);
        EXPECT_EQ(L->kernel, MACKO_K_MM_STAGED);
        EXPECT_EQ(L->tile, 4);
        EXPECT_EQ(L->swizzle, 5);
    }
    /* the SPMV path serves n == 1 only */
    f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_SPMV;
    const macko_plan v = plan_of(m, h100(), &f);
    EXPECT_EQ(macko_plan_mm(&v, 1, 4096, 1, 4096, 1), &v.spmv_unit);
    EXPECT_EQ(macko_plan_mm(&v, 2, 4096, 1, 4096, 1), nullptr);
    /* 64-bit indices on a small matrix (the int64 row-pointer copy is the override's business) */
    f = MACKO_PLAN_FORCED_NONE;
    f.index = MACKO_IDX_I64_RP64;
    const macko_plan r = plan_of(m, h100(), &f);
    EXPECT_EQ(r.spmv_unit.kernel, MACKO_K_SPMV_WARP_I64_RP64);
    EXPECT_EQ(macko_plan_mm(&r, 8, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_GLOBAL_I64_RP64);

    /* TC and PANEL for every n, with the K-tile, group, splits and panel rows of the tests */
    f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_TC;
    f.tc_kt = 32;
    f.tc_group = 4;
    f.tc_splits = 3;
    const macko_plan t = plan_of(m, h100(), &f);
    EXPECT_EQ(t.tc.kt, 32);
    EXPECT_EQ(t.tc.group, 4);
    EXPECT_EQ(t.tc.splits, 3);
    for (int64_t n : {1, 8, 9, 16, 17, 32, 33, 5000}) {
        const macko_launch *L = macko_plan_mm(&t, n, 4096, 1, 4096, 1);
        ASSERT_NE(L, nullptr);
        EXPECT_EQ(L->kernel, MACKO_K_MM_TC);
        EXPECT_EQ(L->tile, n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 64);
    }
    EXPECT_EQ(macko_plan_mm(&t, 8, 4096, 2, 4096, 1), nullptr); /* strided: no CUDA-core row in a forced plan */
    f.mm_path = MACKO_MM_PATH_PANEL;
    f.panel_rows = 256;
    const macko_plan q = plan_of(m, h100(), &f);
    EXPECT_EQ(q.tc.panel_rows, 256);
    EXPECT_EQ(macko_plan_mm(&q, 1, 4096, 1, 4096, 1)->kernel, MACKO_K_MM_PANEL);
    /* the same forced paths on a bf16 matrix; fp32 and fp64 matrices have none */
    for (int path : {MACKO_MM_PATH_TC, MACKO_MM_PATH_PANEL}) {
        SCOPED_TRACE(path);
        f = MACKO_PLAN_FORCED_NONE;
        f.mm_path = path;
        const macko_plan bp = plan_of(shape(R, 4096, half_full(4096), MACKO_R_16BF), h100(), &f);
        EXPECT_EQ(macko_plan_mm(&bp, 40, 4096, 1, 4096, 1)->kernel,
                  path == MACKO_MM_PATH_TC ? MACKO_K_MM_TC : MACKO_K_MM_PANEL);
        for (macko_datatype_t t : {MACKO_R_32F, MACKO_R_64F}) {
            const macko_mat_s wide_values = shape(R, 4096, half_full(4096), t);
            macko_plan out;
            char msg[256];
            EXPECT_EQ(macko_plan_compute(&wide_values, kRowPtr, &H, &f, &out, msg, sizeof msg),
                      MACKO_STATUS_NOT_SUPPORTED);
            EXPECT_NE(std::strstr(msg, "fp16 or bf16"), nullptr) << msg;
        }
    }

    /* refused: choices the matrix cannot take, and values out of range */
    struct Bad {
        macko_plan_forced f;
        macko_status_t st;
    };
    const macko_mat_s big = shape(4, MACKO_SPMV_I32_LIMIT + 1, 64), huge = shape(70000, 70000, MACKO_RP32_LIMIT);
    const Bad bad[] = {{{MACKO_IDX_I64_RP32, MACKO_SPMV_STAGED, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_NOT_SUPPORTED},
                       {{MACKO_IDX_I64_RP32, -1, MACKO_MM_PATH_STAGED, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_NOT_SUPPORTED},
                       {{3, -1, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, 2, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 7, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       /* the tensor-core paths: 32-bit indices only */
                       {{MACKO_IDX_I64_RP32, -1, MACKO_MM_PATH_TC, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_NOT_SUPPORTED},
                       {{MACKO_IDX_I64_RP32, -1, MACKO_MM_PATH_PANEL, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_NOT_SUPPORTED},
                       {{-1, -1, 0, 3, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 32, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, 2, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, 13, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 20, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 528, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       /* tc_kt 512: the 64-column tile's block (8 warps) needs 268 KiB, more than a block gets */
                       {{-1, -1, 0, 0, -1, 512, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_NOT_SUPPORTED},
                       {{-1, -1, 0, 0, -1, 0, 5, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 0, 0, 65, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 100, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       /* SpMV prefetch depth: 1..MACKO_SPMV_MAX_DEPTH */
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, MACKO_SPMV_MAX_DEPTH + 1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       /* the panel GEMM: 0..2 */
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       /* the wgmma panel GEMM's splits: 0..8 */
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0}, MACKO_STATUS_INVALID_VALUE},
                       /* the SIMT form: 0..2 */
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}, MACKO_STATUS_INVALID_VALUE},
                       {{-1, -1, 0, 0, -1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1}, MACKO_STATUS_INVALID_VALUE}};
    for (const Bad &b : bad) {
        macko_plan out;
        char msg[256];
        std::memset(&out, 0x5A, sizeof out);
        const macko_plan before = out;
        EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &H, &b.f, &out, msg, sizeof msg), b.st) << msg;
        EXPECT_NE(msg[0], '\0');
        EXPECT_EQ(std::memcmp(&out, &before, sizeof out), 0) << "a refused plan writes nothing";
    }
    macko_plan out;
    char msg[256];
    f = MACKO_PLAN_FORCED_NONE;
    f.index = MACKO_IDX_I32;
    EXPECT_EQ(macko_plan_compute(&big, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    f.index = MACKO_IDX_I64_RP32;
    EXPECT_EQ(macko_plan_compute(&huge, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    /* fp32 runs at most depth 2 (depth 3 spills at 64 registers) */
    f = MACKO_PLAN_FORCED_NONE;
    f.spmv_depth = 3;
    const macko_mat_s single = shape(R, 4096, half_full(4096), MACKO_R_32F);
    EXPECT_EQ(macko_plan_compute(&single, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    f.spmv_depth = 2;
    EXPECT_EQ(macko_plan_compute(&single, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_SUCCESS) << msg;
    EXPECT_EQ(out.spmv_unit.depth, 2);
    EXPECT_EQ(out.spmv_unit.blocks_per_sm, MACKO_SPMV_STAGED_DEEP_BLOCKS_PER_SM);
    /* the staged SpMM path with a tile that no shared memory holds */
    f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = MACKO_MM_PATH_STAGED;
    const macko_mat_s wide = shape(R, 100000, R * 1000);
    EXPECT_EQ(macko_plan_compute(&wide, kRowPtr, &H, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
}

/* ---------------------------------------------------------------- split K of the tile layout (tiles_device.c) */

/* The rule as src/tiles_device.c's comment and macko_Hspmm.md state it, written out independently in exact integer
 * arithmetic: of the counts s = 1 .. min(64, groups / 4) whose partial tiles and counters fit the workspace (s = 1
 * always), the one of the smallest modelled time, the smaller on a tie. A block costs 1 + groups / s group-times,
 * plus NT / 8 when s > 1; an SM takes k = ceil(blocks * s / SMs) blocks in rounds of occ (at least 1), a round of r
 * blocks lasting max(1, r / q) block-times, q = 2 (q = 3 / 2 for the 64-column tile). */
int64_t col_tile(int64_t n) { return n <= 8 ? 8 : n <= 16 ? 16 : n <= 24 ? 24 : n <= 32 ? 32 : 64; }
int64_t row_blocks(int64_t rows) { return (rows + 127) / 128; }
int64_t ref_ws_floats(int64_t rows, int64_t n, int64_t s)
{
    return s <= 1 ? 0 : row_blocks(rows) * ((n + col_tile(n) - 1) / col_tile(n)) * s * 128 * col_tile(n);
}
int64_t ref_counters(int64_t rows, int64_t n, int64_t s)
{
    return s <= 1 ? 0 : row_blocks(rows) * ((n + col_tile(n) - 1) / col_tile(n));
}
/* 8 s x (rounds x 2, or x 3 for the 64-column tile) times the modelled cost of s splits: the cost is this over 8 s
 * (the other factor is the same for every s) */
long double ref_cost_num(int64_t rows, int64_t tcols, int64_t n, int occ, int sms, int64_t s)
{
    const int64_t nt = col_tile(n), groups = (tcols + 7) / 8, o = std::max(occ, 1), p = std::max(sms, 1);
    const int64_t blocks = row_blocks(rows) * ((n + nt - 1) / nt);
    const int64_t k = (blocks * s + p - 1) / p, full = k / o, r = k % o;
    /* max(1, x / q) scaled by q: max(q, x) for q = 2; max(3, 2x) for q = 3 / 2 */
    const auto round = [nt](int64_t x) { return nt >= 64 ? std::max<int64_t>(3, 2 * x) : std::max<int64_t>(2, x); };
    const int64_t rounds = full * round(o) + (r > 0 ? round(r) : 0);
    return (long double)(8 * s + (s > 1 ? nt * s : 0) + 8 * groups) * (long double)rounds;
}
bool ref_cheaper(int64_t rows, int64_t tcols, int64_t n, int occ, int sms, int64_t a, int64_t b)
{
    return ref_cost_num(rows, tcols, n, occ, sms, a) * (long double)b <
           ref_cost_num(rows, tcols, n, occ, sms, b) * (long double)a;
}
int64_t ref_rule(int64_t rows, int64_t tcols, int64_t n, int occ, int sms, int64_t lim_floats, int64_t lim_counters)
{
    const int64_t smax = std::min<int64_t>(64, (tcols + 7) / 8 / 4);
    int64_t best = 1;
    for (int64_t s = 2; s <= smax; s++) {
        if (ref_ws_floats(rows, n, s) > lim_floats || ref_counters(rows, n, s) > lim_counters)
            break;
        if (ref_cheaper(rows, tcols, n, occ, sms, s, best))
            best = s;
    }
    return best;
}

constexpr int64_t kAmple = INT64_MAX / 4; /* a workspace nothing exceeds */
/* the handle's: its workspace less the counters (src/handle.c) */
const int64_t kWsFloats = (MACKO_WS_BYTES - MACKO_WS_COUNTERS * (int64_t)sizeof(int)) / (int64_t)sizeof(float);

int splits(int64_t rows, int64_t cols, int64_t n, int occ = 2, int sms = 132, int64_t wsf = kAmple,
           int64_t wsc = kAmple)
{
    return macko_tiles_auto_splits(rows, (cols + 15) / 16, MACKO_TILES_KG, n, occ, sms, wsf, wsc);
}

TEST(TilesSplits, ConstantsAndWorkspaceSizes)
{
    ASSERT_EQ(MACKO_TILES_ROWS, 128); /* the reference above is written for these */
    ASSERT_EQ(MACKO_TILES_KG, 8);
    for (int64_t n : {1, 8, 9, 16, 17, 24, 25, 32, 33, 64, 65, 100, 5000})
        EXPECT_EQ(macko_tiles_ntile(n), col_tile(n)) << n;
    for (int64_t n : {1, 8, 9, 16, 17, 24, 25, 32, 33, 64, 65, 100, 5000}) {
        const int i = macko_tiles_ntile_index(n);
        ASSERT_TRUE(i >= 0 && i < MACKO_TILES_NTILES) << n;
        EXPECT_EQ((int64_t)"\x08\x10\x18\x20\x40"[i], col_tile(n)) << n;
    }
    for (int64_t rows : {1, 128, 129, 4096, 11008})
        for (int64_t n : {1, 8, 20, 33, 100, 5000})
            for (int s : {1, 2, 7, 64}) {
                EXPECT_EQ(macko_tiles_ws_floats(rows, n, s), ref_ws_floats(rows, n, s)) << rows << " " << n << " " << s;
                EXPECT_EQ(macko_tiles_counters(rows, n, s), ref_counters(rows, n, s)) << rows << " " << n << " " << s;
            }
}

TEST(TilesSplits, ByHand)
{
    /* 4096 x 11008 (H100: 132 SMs, 2 blocks each): 32 row blocks, 688 K-tiles = 86 groups (at most 21 splits).
     * n = 8: one column tile, 32 blocks; 8 splits: 2 blocks an SM, one round, (1 + 1 + 86 / 8) = 12.75; 16 splits: 4
     * an SM, 2 rounds of 2: (1 + 1 + 86 / 16) x 2 = 14.75; 4 splits: 1 an SM, 23.5. n = 100: two column tiles of 64, 64
     * blocks, 4 splits (2 an SM, max(1, 2 / 1.5) rounds: (1 + 8 + 21.5) x 4 / 3 = 40.7; 2: 52, 8: 52.7); n = 5000:
     * 79 column tiles, 2528 blocks: 1. */
    EXPECT_EQ(splits(4096, 11008, 1), 8);
    EXPECT_EQ(splits(4096, 11008, 8), 8);
    EXPECT_EQ(splits(4096, 11008, 33), 8);
    EXPECT_EQ(splits(4096, 11008, 100), 4);
    EXPECT_EQ(splits(4096, 11008, 5000), 1);
    /* 11008 x 4096: 86 row blocks, 32 groups (at most 8 splits): 3 (258 blocks, 2 an SM: 1 + 1 + 10.7 = 12.7; 4
     * splits: 3 an SM, 2 rounds of 10: 20); n = 100: 172 blocks, 1 */
    EXPECT_EQ(splits(11008, 4096, 8), 3);
    EXPECT_EQ(splits(11008, 4096, 100), 1);
    /* few rows and many columns: 64 is the cap (4096 groups allow 1024) */
    EXPECT_EQ(splits(1, 1 << 19, 1), 64);
    EXPECT_EQ(splits(128, 1 << 19, 8), 64);
    /* few columns: the groups cap it (1 x 1 is one group: 1; 512 columns = 4 groups: 1; 4096 = 32 groups: 8) */
    EXPECT_EQ(splits(1, 1, 1), 1);
    EXPECT_EQ(splits(1, 1, 5000), 1);
    EXPECT_EQ(splits(1, 512, 1), 1);
    EXPECT_EQ(splits(1, 1024, 1), 2);
    EXPECT_EQ(splits(1, 4096, 1), 8);
    /* occupancy 0 counts as 1 block per SM: 4096 x 11008, n = 8, 8 splits: 2 rounds of 1 block (25.5) against 4
     * splits' one (23.5); 2 per SM and more: 8 */
    EXPECT_EQ(splits(4096, 11008, 8, 0), 4);
    EXPECT_EQ(splits(4096, 11008, 8, 1), 4);
    EXPECT_EQ(splits(4096, 11008, 8, 4), 8);
    /* an empty matrix */
    EXPECT_EQ(splits(0, 4096, 8), 1);
    EXPECT_EQ(splits(4096, 0, 8), 1);
}

/* The counts the H100 sweep of session 35 (bench/NOTES.md) found best or within 2 % of it, n = 8 / 16 / 32 / 64
 * (occupancy 4 blocks up to the 32-column tile, 2 for the 64-column one): the rule must keep choosing them. */
TEST(TilesSplits, SweptShapesH100)
{
    const struct {
        int64_t rows, cols;
        int want[4];
    } cases[] = {{4096, 4096, {8, 8, 8, 4}},      {4096, 11008, {8, 8, 8, 8}},   {11008, 4096, {3, 3, 3, 3}},
                 {12288, 4096, {4, 4, 4, 1}},     {12288, 12288, {4, 4, 4, 5}},  {22016, 4096, {3, 3, 3, 1}},
                 {28672, 8192, {4, 1, 1, 1}},     {36864, 12288, {5, 5, 3, 3}}};
    const int64_t ns[4] = {8, 16, 32, 64};
    for (const auto &c : cases)
        for (int i = 0; i < 4; i++)
            EXPECT_EQ(splits(c.rows, c.cols, ns[i], ns[i] <= 32 ? 4 : 2, 132, kWsFloats, MACKO_WS_COUNTERS),
                      c.want[i])
                << c.rows << "x" << c.cols << " n=" << ns[i];
}

TEST(TilesSplits, WorkspaceLimits)
{
    /* 4096 x 11008, n = 8: 8 splits take 32 x 8 x 128 x 8 floats and 32 counters. One float short: 7 splits; room
     * for 5 splits: 5; the counters do not depend on the splits, so one counter short: 1. */
    const int64_t f8 = ref_ws_floats(4096, 8, 8);
    EXPECT_EQ(f8, 32 * 8 * 128 * 8);
    EXPECT_EQ(splits(4096, 11008, 8, 2, 132, f8, 32), 8);
    EXPECT_EQ(splits(4096, 11008, 8, 2, 132, f8 - 1, 32), 7);
    EXPECT_EQ(splits(4096, 11008, 8, 2, 132, ref_ws_floats(4096, 8, 5), 32), 5);
    EXPECT_EQ(splits(4096, 11008, 8, 2, 132, ref_ws_floats(4096, 8, 2), 32), 2);
    EXPECT_EQ(splits(4096, 11008, 8, 2, 132, ref_ws_floats(4096, 8, 2) - 1, 32), 1);
    EXPECT_EQ(splits(4096, 11008, 8, 2, 132, f8, 31), 1);
    /* nothing fits: no workspace at all */
    for (int64_t n : {1, 8, 33, 100, 5000}) {
        EXPECT_EQ(splits(4096, 11008, n, 2, 132, 0, kAmple), 1) << n;
        EXPECT_EQ(splits(4096, 11008, n, 2, 132, kAmple, 0), 1) << n;
        EXPECT_EQ(splits(1, 1 << 19, n, 2, 132, 0, 0), 1) << n;
    }
    /* the handle's workspace (64 MiB less the counters, 16.7 M floats) binds only far beyond the shapes measured:
     * 12800 x 2^19 at n = 100 (100 row blocks x 2 column tiles of 64, 4096 groups) takes 13 splits unlimited (21.3
     * M floats); the handle's holds up to 10 (16.4 M), of which the model prefers 9. */
    EXPECT_EQ(splits(128, 1 << 19, 64, 2, 132, kWsFloats, MACKO_WS_COUNTERS), 64);
    EXPECT_EQ(splits(4096, 11008, 8, 2, 132, kWsFloats, MACKO_WS_COUNTERS), 8);
    EXPECT_EQ(splits(12800, 1 << 19, 100, 2, 132), 13);
    EXPECT_EQ(ref_ws_floats(12800, 100, 10), 16384000);
    EXPECT_LE(ref_ws_floats(12800, 100, 10), kWsFloats);
    EXPECT_GT(ref_ws_floats(12800, 100, 11), kWsFloats);
    EXPECT_EQ(splits(12800, 1 << 19, 100, 2, 132, kWsFloats, MACKO_WS_COUNTERS), 9);
}

/* Over a grid of shapes, n, devices and workspaces: the result is in [1, 64], at most groups / 4 unless 1, fits the
 * workspace unless 1, is the reference's count (the cheapest of the counts that fit, by the model in exact
 * arithmetic), no fitting count is cheaper, and it never grows when the workspace shrinks. */
TEST(TilesSplits, PropertiesOverShapes)
{
    const int64_t shapes[][2] = {{1, 1},       {1, 17},     {17, 1},      {16, 16},    {128, 128},  {129, 4097},
                                 {4096, 4096}, {4096, 11008}, {11008, 4096}, {12288, 12288}, {1, 1 << 19},
                                 {300, 65536}, {100000, 300}, {36864, 12288}, {28672, 8192}, {22016, 4096}};
    const struct {
        int occ, sms;
    } devices[] = {{2, 132}, {1, 132}, {4, 132}, {0, 132}, {3, 82}, {1, 1}, {4, 0}};
    /* each limit is below the one before in one of its two parts */
    const int64_t limits[][2] = {{kAmple, kAmple}, {kWsFloats, MACKO_WS_COUNTERS}, {100000, MACKO_WS_COUNTERS},
                                 {100000, 100}, {5000, 100}, {0, 0}};
    long checked = 0;
    for (const auto &sh : shapes)
        for (int64_t n : {1, 8, 16, 33, 64, 100, 5000})
            for (const auto &d : devices) {
                const int64_t rows = sh[0], tcols = (sh[1] + 15) / 16, groups = (tcols + 7) / 8;
                int prev = 65;
                for (const auto &lim : limits) {
                    const std::string at = std::to_string(rows) + "x" + std::to_string(sh[1]) + " n=" +
                                           std::to_string(n) + " occ=" + std::to_string(d.occ) + " sms=" +
                                           std::to_string(d.sms) + " ws=" + std::to_string(lim[0]) + "/" +
                                           std::to_string(lim[1]);
                    const int s = macko_tiles_auto_splits(rows, tcols, MACKO_TILES_KG, n, d.occ, d.sms, lim[0], lim[1]);
                    ASSERT_GE(s, 1) << at;
                    ASSERT_LE(s, 64) << at;
                    EXPECT_TRUE(s == 1 || 4 * s <= groups) << at;
                    const bool fits = macko_tiles_ws_floats(rows, n, s) <= lim[0] &&
                                      macko_tiles_counters(rows, n, s) <= lim[1];
                    EXPECT_TRUE(s == 1 || fits) << at;
                    EXPECT_EQ(s, ref_rule(rows, tcols, n, d.occ, d.sms, lim[0], lim[1])) << at;
                    for (int64_t t = 1; t <= std::min<int64_t>(64, groups / 4); t++)
                        if (t == 1 || (ref_ws_floats(rows, n, t) <= lim[0] && ref_counters(rows, n, t) <= lim[1])) {
                            EXPECT_FALSE(ref_cheaper(rows, tcols, n, d.occ, d.sms, t, s)) << at << ": " << t;
                        }
                    EXPECT_LE(s, prev) << at << ": a smaller workspace gave more splits";
                    prev = s;
                    checked++;
                }
            }
    EXPECT_EQ(checked, 16L * 7 * 7 * 6);
}

/* Groups of 16 tiles are counted as groups: the rule gives what it gives for groups of 8 over the same group count. */
TEST(TilesSplits, WideGroupsCountTheirGroups)
{
    const int64_t shapes[][2] = {{1, 1}, {17, 1}, {129, 4097}, {4096, 4096}, {4096, 11008}, {12288, 12288},
                                 {300, 65536}, {36864, 12288}, {28672, 8192}, {22016, 4096}};
    const struct {
        int occ, sms;
    } devices[] = {{2, 132}, {3, 132}, {4, 132}, {0, 132}, {3, 82}, {1, 1}};
    for (const auto &sh : shapes)
        for (int64_t n : {1, 8, 16})
            for (const auto &d : devices) {
                const int64_t tcols = (sh[1] + 15) / 16, groups = (tcols + 15) / 16;
                EXPECT_EQ(macko_tiles_auto_splits(sh[0], tcols, MACKO_TILES_KG_WIDE, n, d.occ, d.sms, kAmple, kAmple),
                          macko_tiles_auto_splits(sh[0], 8 * groups, MACKO_TILES_KG, n, d.occ, d.sms, kAmple, kAmple))
                    << sh[0] << "x" << sh[1] << " n=" << n;
            }
}

/* macko_tiles_kg for a matrix whose narrow launch keeps 3 blocks and more on an SM at every n <= 32 (36864 x 12288,
 * 132 SMs, 4 blocks an SM for the groups of 8): its choice is the occupancy's (session 45's rule) and a test's */
int kg_busy(int64_t n, const int occ_wide[4], int forced)
{
    const int occ[5] = {4, 4, 4, 4, 2};
    return macko_tiles_kg(n, 36864, 768, occ, occ_wide, forced, 132, kAmple, kAmple);
}

/* The tile kernel's groups: 16 tiles where n <= 16 and the wide kernel keeps 3 blocks an SM, else 8 unless the
 * launch model below prefers them; a test's forced 16 wherever the wide kernel fits at all (column tiles 8 to 32),
 * its forced 8 always. */
TEST(TilesSplits, GroupsPerMatrixAndN)
{
    const int three[4] = {3, 3, 3, 3}, two[4] = {2, 4, 2, 2}, none[4] = {0, 0, 0, 0}, mixed[4] = {4, 2, 4, 0};
    for (int64_t n : {1, 2, 7, 8}) {
        EXPECT_EQ(kg_busy(n, three, 0), MACKO_TILES_KG_WIDE) << n;
        EXPECT_EQ(kg_busy(n, two, 0), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, two, MACKO_TILES_KG_WIDE), MACKO_TILES_KG_WIDE) << n;
        EXPECT_EQ(kg_busy(n, three, MACKO_TILES_KG), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, none, MACKO_TILES_KG_WIDE), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, mixed, 0), MACKO_TILES_KG_WIDE) << n;
    }
    for (int64_t n : {9, 15, 16}) {
        EXPECT_EQ(kg_busy(n, three, 0), MACKO_TILES_KG_WIDE) << n;
        EXPECT_EQ(kg_busy(n, two, 0), MACKO_TILES_KG_WIDE) << n;
        EXPECT_EQ(kg_busy(n, mixed, 0), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, mixed, MACKO_TILES_KG_WIDE), MACKO_TILES_KG_WIDE) << n;
        EXPECT_EQ(kg_busy(n, none, 0), MACKO_TILES_KG) << n;
    }
    /* 24 and 32 columns: 8 at this occupancy unless forced, 16 when forced where the wide kernel fits (mixed: at
     * 24, not at 32) */
    for (int64_t n : {17, 24, 25, 32}) {
        EXPECT_EQ(kg_busy(n, three, 0), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, two, 0), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, three, MACKO_TILES_KG), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, three, MACKO_TILES_KG_WIDE), MACKO_TILES_KG_WIDE) << n;
        EXPECT_EQ(kg_busy(n, mixed, MACKO_TILES_KG_WIDE), n <= 24 ? MACKO_TILES_KG_WIDE : MACKO_TILES_KG) << n;
        EXPECT_EQ(kg_busy(n, none, MACKO_TILES_KG_WIDE), MACKO_TILES_KG) << n;
    }
    for (int64_t n : {33, 64, 1000})
        for (int forced : {0, MACKO_TILES_KG, MACKO_TILES_KG_WIDE})
            EXPECT_EQ(kg_busy(n, three, forced), MACKO_TILES_KG) << n;
}

/* The launch model's part of macko_tiles_kg (132 SMs, 4 blocks an SM in groups of 8, 2 in groups of 16; session 51),
 * worked by hand. 28672 x 8192 (224 row blocks, 512 K-tiles: 64 groups of 8, 32 of 16): n = 16, 24, 32: one split
 * either way, 224 blocks, at most 2 an SM, one round of 512 tiles each way: the tie goes to 16. n = 8: groups of 8
 * take 4 splits (896 blocks, 7 an SM: a round of 4 and one of 3, 2 + 1.5 block times of 128 tiles = 448) against
 * 16's one split (512): 8. With 1 block an SM in groups of 16: 8. 12288^2 (96 row blocks, 768 K-tiles): groups of 8,
 * 4 splits, 384 blocks, 3 an SM (1.5 x 192 = 288); of 16, 5 splits (480 blocks, 4 an SM: 2 rounds x 160 = 320): 8.
 * 4096 x 11008 (32 row blocks, 688 K-tiles): 8 splits either way, 256 blocks, 2 an SM; 11 groups of 8 = 88 tiles a
 * block against 6 of 16 = 96: 8. 8192^2: 4 splits either way, 256 blocks, 128 tiles a block: 16. */
TEST(TilesSplits, GroupsByTheLaunchModel)
{
    const int occ[5] = {4, 4, 4, 4, 2}, occ3[5] = {3, 3, 3, 3, 2}, two[4] = {2, 2, 2, 2}, one[4] = {1, 1, 1, 1};
    const auto kg = [&](int64_t rows, int64_t cols, int64_t n, const int *o, const int *ow) {
        return macko_tiles_kg(n, rows, (cols + 15) / 16, o, ow, 0, 132, kAmple, kAmple);
    };
    for (int64_t n : {9, 16, 17, 24, 25, 32})
        EXPECT_EQ(kg(28672, 8192, n, occ, two), MACKO_TILES_KG_WIDE) << n;
    for (int64_t n : {1, 8})
        EXPECT_EQ(kg(28672, 8192, n, occ, two), MACKO_TILES_KG) << n;
    for (int64_t n : {1, 8, 16, 24, 32}) {
        EXPECT_EQ(kg(28672, 8192, n, occ3, one), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg(12288, 12288, n, occ, two), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg(4096, 11008, n, occ, two), MACKO_TILES_KG) << n;
        EXPECT_EQ(kg(8192, 8192, n, occ, two), MACKO_TILES_KG_WIDE) << n;
    }
    /* past 32 columns, or with no blocks of 8 that fit: 8; a workspace that allows no split: one split each way
     * (12288^2: 96 blocks either way, 768 tiles each, a tie: 16) */
    EXPECT_EQ(kg(28672, 8192, 33, occ, two), MACKO_TILES_KG);
    const int none8[5] = {0, 0, 0, 0, 0};
    EXPECT_EQ(kg(28672, 8192, 16, none8, two), MACKO_TILES_KG);
    EXPECT_EQ(macko_tiles_kg(16, 12288, 768, occ, two, 0, 132, 0, 0), MACKO_TILES_KG_WIDE);
}

} // namespace

/* The panel GEMM per device: wgmma on compute capability 9.0 exactly when the library holds sm_90a code; forcing
 * wgmma elsewhere gives -1 (the override's NOT_SUPPORTED), forcing mma.sync is always possible. */
TEST(Plan, PanelGemmPerDevice)
{
    const macko_devprops H = h100(), R = rtx3090();
    macko_devprops h100a = H, b200 = H, r = R;
    b200.cc_major = 10;
#ifdef MACKO_HAVE_SM90A
    EXPECT_EQ(macko_panel_gemm_of(&H), MACKO_PANEL_GEMM_WG);
    EXPECT_EQ(macko_panel_gemm_forced(&H, 2), MACKO_PANEL_GEMM_WG);
#else
    EXPECT_EQ(macko_panel_gemm_of(&H), MACKO_PANEL_GEMM_MMA);
    EXPECT_EQ(macko_panel_gemm_forced(&H, 2), -1);
#endif
    EXPECT_EQ(macko_panel_gemm_forced(&h100a, 1), MACKO_PANEL_GEMM_MMA);
    for (macko_devprops *d : {&r, &b200}) {
        EXPECT_EQ(macko_panel_gemm_of(d), MACKO_PANEL_GEMM_MMA);
        EXPECT_EQ(macko_panel_gemm_forced(d, 0), MACKO_PANEL_GEMM_MMA);
        EXPECT_EQ(macko_panel_gemm_forced(d, 1), MACKO_PANEL_GEMM_MMA);
        EXPECT_EQ(macko_panel_gemm_forced(d, 2), -1);
    }
    /* the plan keeps the choice */
    const macko_mat_s m = shape(4096, 4096, 4096 * 2048);
    macko_plan out;
    char msg[256];
    ASSERT_EQ(macko_plan_compute(&m, kRowPtr, &R, nullptr, &out, msg, sizeof msg), MACKO_STATUS_SUCCESS) << msg;
    EXPECT_EQ(out.tc.panel_gemm, MACKO_PANEL_GEMM_MMA);
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.panel_gemm = 2;
    EXPECT_EQ(macko_plan_compute(&m, kRowPtr, &R, &f, &out, msg, sizeof msg), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_NE(std::strstr(msg, "sm_90a"), nullptr) << msg;
}

/* The wgmma panel GEMM's panel height and blocks along K (a model of its waves, kernels/spmm_panel.cu): panels that
 * fill whole waves rather than the workspace, clusters along K where the column blocks alone leave SMs idle; a
 * forced height or split count is kept (the count cut to the K-slices there are). */
TEST(Plan, PanelWgHeightAndSplits)
{
    int s = 0;
    /* 12288 x 12288, 2688 rows fit the workspace: n = 2048 takes 6 panels of 2048 rows (128 blocks: one wave each)
     * instead of 5 of 2688 (168 blocks: two waves each) */
    EXPECT_EQ(macko_panel_rows_wg(12288, 12288, 2048, 2688, 0, 132, &s), 2048);
    EXPECT_EQ(s, 1);
    s = 0;
    EXPECT_EQ(macko_panel_rows_wg(12288, 12288, 8192, 2688, 0, 132, &s), 2560);
    EXPECT_EQ(s, 1);
    /* n = 256: one column block, so the 21 row blocks of a panel run in clusters of 4 (84 blocks) */
    s = 0;
    EXPECT_EQ(macko_panel_rows_wg(12288, 12288, 256, 2688, 0, 132, &s), 2688);
    EXPECT_EQ(s, 4);
    /* 4096 x 4096, n = 256: one panel, 32 tiles in clusters of 2 */
    s = 0;
    EXPECT_EQ(macko_panel_rows_wg(4096, 4096, 256, 8192, 0, 132, &s), 4096);
    EXPECT_EQ(s, 2);
    /* a fixed height stays; the splits are still chosen */
    s = 0;
    EXPECT_EQ(macko_panel_rows_wg(12288, 12288, 2048, 2688, 1, 132, &s), 2688);
    EXPECT_EQ(s, 2);
    /* forced splits are kept, cut to the K-slices: 130 columns are 3 slices */
    s = 3;
    EXPECT_EQ(macko_panel_rows_wg(12288, 12288, 256, 2688, 0, 132, &s), 2688);
    EXPECT_EQ(s, 3);
    s = 8;
    (void)macko_panel_rows_wg(300, 130, 64, 65536, 0, 132, &s);
    EXPECT_EQ(s, 3);
    /* one row block */
    s = 0;
    EXPECT_EQ(macko_panel_rows_wg(100, 100, 1, 128, 0, 132, &s), 128);
    EXPECT_EQ(s, 1);
    /* always a multiple of 128 within the workspace's rows, 1..8 splits of at least 4 slices each */
    for (int64_t rows : {1, 700, 4096, 11008, 36864})
        for (int64_t cols : {64, 1000, 4096, 12288})
            for (int64_t n : {1, 128, 300, 2048, 8192})
                for (int sms : {1, 16, 114, 132}) {
                    const int64_t pmax = macko_panel_rows(cols, INT64_C(64) << 20);
                    s = 0;
                    const int64_t r = macko_panel_rows_wg(rows, cols, n, pmax, 0, sms, &s);
                    EXPECT_TRUE(r % 128 == 0 && r >= 128 && r <= pmax) << rows << "x" << cols << " n=" << n;
                    EXPECT_TRUE(s >= 1 && s <= 8 && (s == 1 || (cols + 63) / 64 / s >= 4))
                        << rows << "x" << cols << " n=" << n << " splits " << s;
                }
}

/* The fused wgmma product's blocks along K: only within one wave (SMs x the blocks of the width one SM holds: one of
 * 128 x 256 or 128 x 128, two of 128 x 64), each split at least 8 K-slices of 64 columns, within the workspace;
 * workspace and counters as the kernel indexes them. */
TEST(Plan, TilesWgSplits)
{
    const int64_t big = INT64_C(1) << 40;
    /* 12288 x 12288 (768 tiles of 16 columns): n = 256, 96 tiles: a second split would need 192 blocks on 132 SMs */
    EXPECT_EQ(macko_tiles_wg_splits(12288, 768, 256, 256, 132, big, big), 1);
    EXPECT_EQ(macko_tiles_wg_splits(12288, 768, 512, 256, 132, big, big), 1);
    /* 4096 x 4096, n = 256: 32 tiles, 4 splits (128 blocks) of 16 slices */
    EXPECT_EQ(macko_tiles_wg_splits(4096, 256, 256, 256, 132, big, big), 4);
    /* 4096 x 11008 (688 tiles of 16 columns, 172 slices), n = 64: 32 tiles, 4 splits */
    EXPECT_EQ(macko_tiles_wg_splits(4096, 688, 64, 256, 132, big, big), 4);
    /* a short K: 4096 x 1024 (16 slices): at most 2 splits of 8 */
    EXPECT_EQ(macko_tiles_wg_splits(4096, 64, 64, 256, 132, big, big), 2);
    /* a small grid on many SMs: capped at 16 */
    EXPECT_EQ(macko_tiles_wg_splits(128, 4096, 8, 256, 1000, big, big), 16);
    /* the workspace decides: 4 splits of 32 tiles need 4 * 32 * 128 * 256 floats */
    EXPECT_EQ(macko_tiles_wg_ws_floats(4096, 256, 4, 256), INT64_C(4) * 32 * 128 * 256);
    EXPECT_EQ(macko_tiles_wg_counters(4096, 256, 4, 256), 32);
    EXPECT_EQ(macko_tiles_wg_ws_floats(4096, 256, 1, 256), 0);
    EXPECT_EQ(macko_tiles_wg_splits(4096, 256, 256, 256, 132, INT64_C(3) * 32 * 128 * 256, big), 3);
    EXPECT_EQ(macko_tiles_wg_splits(4096, 256, 256, 256, 132, big, 31), 1);
    /* one tile or none */
    EXPECT_EQ(macko_tiles_wg_splits(1, 1, 1, 256, 132, big, big), 1);

    /* the narrowest tiles: two blocks per SM, so a wave is 264 blocks on 132 SMs */
    EXPECT_EQ(macko_tiles_wg_blocks_per_sm(64), 2);
    EXPECT_EQ(macko_tiles_wg_blocks_per_sm(128), 1);
    EXPECT_EQ(macko_tiles_wg_blocks_per_sm(256), 1);
    EXPECT_EQ(macko_tiles_wg_blocks_per_sm(7), 1); /* any other width counts as 256 */
    /* 12288 x 12288, n = 64, BN = 64: 96 tiles; the wave takes 2 splits (192 blocks; 3 would be 288), which leaves
     * 27 % of it empty: 4 instead */
    EXPECT_EQ(macko_tiles_wg_splits(12288, 768, 64, 64, 132, big, big), 4);
    /* 28672 x 8192 and 36864 x 12288: 224 and 288 tiles, unsplit within the wave or past it: 4 */
    EXPECT_EQ(macko_tiles_wg_splits(28672, 512, 32, 64, 132, big, big), 4);
    EXPECT_EQ(macko_tiles_wg_splits(36864, 768, 64, 64, 132, big, big), 4);
    /* ... unless the workspace or K cannot take 4: 4096 x 96 columns (tcols 6: 2 slices), and a workspace for 2 */
    EXPECT_EQ(macko_tiles_wg_splits(28672, 6, 32, 64, 132, big, big), 1);
    EXPECT_EQ(macko_tiles_wg_splits(12288, 768, 64, 64, 132, INT64_C(2) * 96 * 128 * 64, big), 2);
    /* 4096 x 4096 (32 tiles, 64 slices): the wave's 8 splits of 8 slices put two blocks on an SM; 4 give each block an
     * SM of its own (session 43); 4096 x 11008 (172 slices) keeps the wave's 8, and 2048 x 4096 (16 tiles: 8 splits
     * are 128 blocks, one an SM) too; on 120 SMs 4 splits would not give each block its own: the wave's 7 */
    EXPECT_EQ(macko_tiles_wg_splits(4096, 256, 64, 64, 132, big, big), 4);
    EXPECT_EQ(macko_tiles_wg_splits(4096, 256, 32, 64, 132, big, big), 4);
    EXPECT_EQ(macko_tiles_wg_splits(4096, 688, 64, 64, 132, big, big), 8);
    EXPECT_EQ(macko_tiles_wg_splits(2048, 256, 64, 64, 132, big, big), 8);
    EXPECT_EQ(macko_tiles_wg_splits(4096, 256, 64, 64, 120, big, big), 7);
    /* more than a quarter of a wave past it: the wave rule (46080 rows: 360 tiles, 1.36 waves) */
    EXPECT_EQ(macko_tiles_wg_splits(46080, 768, 64, 64, 132, big, big), 1);
    /* width 256 keeps the wave rule (11008 x 4096, n = 200: 86 tiles, 1 split) */
    EXPECT_EQ(macko_tiles_wg_splits(11008, 256, 200, 256, 132, big, big), 1);
    /* the same n with BN = 128 (one block per SM): 96 tiles, no second split */
    EXPECT_EQ(macko_tiles_wg_splits(12288, 768, 64, 128, 132, big, big), 1);
    /* n = 128 at BN = 64: two column blocks, 64 tiles, 4 splits (256 blocks: the wave is full) */
    EXPECT_EQ(macko_tiles_wg_splits(4096, 256, 128, 64, 132, big, big), 4);
    EXPECT_EQ(macko_tiles_wg_ws_floats(4096, 64, 4, 64), INT64_C(4) * 32 * 128 * 64);
    EXPECT_EQ(macko_tiles_wg_counters(4096, 128, 4, 64), 64);
    EXPECT_EQ(macko_tiles_wg_ws_floats(4096, 100, 2, 128), INT64_C(2) * 32 * 128 * 128);
}

/* Stream-K of the fused product (widths 128 and 256): a wave of blocks where one block per tile and split leaves
 * enough of the wave idle (the model in spmm_tiles_wg.cu), never for width 64, within the workspace (two partial
 * tiles per block) and the counters (one per tile). */
TEST(Plan, TilesWgStream)
{
    const int64_t big = INT64_C(1) << 40;
    /* 12288 x 12288 (192 slices): 96 tiles at n = 128 and 256 (a wave 73 % full), 192 at n = 512 (1.45 waves) */
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 128, 128, 132, big, big), 132);
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 256, 256, 132, big, big), 132);
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 512, 256, 132, big, big), 132);
    /* 4096 x 4096, n = 256: 32 tiles in 4 splits fill 97 % of the wave: none */
    EXPECT_EQ(macko_tiles_wg_stream(4096, 256, 256, 256, 132, big, big), 0);
    /* width 64, or too few slices for 8 a block, or nothing at all: none */
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 64, 64, 132, big, big), 0);
    EXPECT_EQ(macko_tiles_wg_stream(12288, 8, 128, 128, 132, big, big), 0);
    EXPECT_EQ(macko_tiles_wg_stream(1, 1, 1, 256, 132, big, big), 0);
    EXPECT_EQ(macko_tiles_wg_stream(12288, 0, 128, 128, 132, big, big), 0);
    /* the workspace: two partial tiles of 128 x 128 floats per block; one counter per tile */
    EXPECT_EQ(macko_tiles_wg_stream_ws_floats(132, 128), INT64_C(2) * 132 * 128 * 128);
    EXPECT_EQ(macko_tiles_wg_stream_ws_floats(0, 256), 0);
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 128, 128, 132, INT64_C(2) * 132 * 128 * 128, 96), 132);
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 128, 128, 132, INT64_C(2) * 132 * 128 * 128 - 1, big), 0);
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 128, 128, 132, big, 95), 0);
    /* a wave of a GPU with more SMs */
    EXPECT_EQ(macko_tiles_wg_stream(12288, 768, 128, 128, 144, big, big), 144);
}

/* The fused product's tail split (widths 128 and 256): where the tiles fill whole waves and part of one more, the
 * most blocks along K that fit a wave for the rest (each at least 8 K-slices, within the workspace and counters),
 * where its model beats split K and stream-K (spmm_tiles_wg.cu). */
TEST(Plan, TilesWgTail)
{
    const int64_t big = INT64_C(1) << 40;
    /* n = 1280, width 256: 4096 x 4096 (160 tiles, 64 slices: 28 past the wave, 4 x 28 <= 132), 11008 x 4096 (430:
     * 3 waves and 34, 3 x 34), 4096 x 11008 (160, 172 slices) */
    EXPECT_EQ(macko_tiles_wg_tail(4096, 256, 1280, 256, 132, big, big), 4);
    EXPECT_EQ(macko_tiles_wg_tail_tile0(4096, 1280, 256, 132), 132);
    EXPECT_EQ(macko_tiles_wg_tail(11008, 256, 1280, 256, 132, big, big), 3);
    EXPECT_EQ(macko_tiles_wg_tail_tile0(11008, 1280, 256, 132), 396);
    EXPECT_EQ(macko_tiles_wg_tail(4096, 688, 1280, 256, 132, big, big), 4);
    /* no tiles past a wave, or fewer than a wave: none; 36864 x 12288 (1440 tiles: 120 past 10 waves, no two splits
     * fit); width 64; too few K-slices */
    EXPECT_EQ(macko_tiles_wg_tail(4096, 256, 1024, 256, 132, big, big), 0);
    EXPECT_EQ(macko_tiles_wg_tail(128 * 132, 256, 256, 256, 132, big, big), 0);
    EXPECT_EQ(macko_tiles_wg_tail(36864, 768, 1280, 256, 132, big, big), 0);
    EXPECT_EQ(macko_tiles_wg_tail(12288, 768, 1280, 64, 132, big, big), 0);
    EXPECT_EQ(macko_tiles_wg_tail(4096, 60, 1280, 256, 132, big, big), 0);
    /* 8 slices a split at least: 2900 columns (46 slices) take 5 at most (the GPU test's shape) */
    EXPECT_EQ(macko_tiles_wg_tail(3544, 182, 1230, 256, 132, big, big), 5);
    /* stream-K's model ahead: 59 tiles past a wave, 768 slices (1156 slices a block against 1112 + 24) */
    EXPECT_EQ(macko_tiles_wg_tail(128 * 191, 3072, 256, 256, 132, big, big), 0);
    /* the workspace (r x s partial tiles) and the counters (r) */
    EXPECT_EQ(macko_tiles_wg_tail_ws_floats(4096, 1280, 256, 132, 4), INT64_C(28) * 4 * 128 * 256);
    EXPECT_EQ(macko_tiles_wg_tail_ws_floats(4096, 1280, 256, 132, 1), 0);
    EXPECT_EQ(macko_tiles_wg_tail(4096, 256, 1280, 256, 132, INT64_C(28) * 4 * 128 * 256, big), 4);
    EXPECT_EQ(macko_tiles_wg_tail(4096, 256, 1280, 256, 132, INT64_C(28) * 4 * 128 * 256 - 1, big), 3);
    EXPECT_EQ(macko_tiles_wg_tail(4096, 256, 1280, 256, 132, big, 27), 0);
    /* width 128 (one block per SM too): 4096 x 4096 at n = 1280 has 320 tiles, 56 past 2 waves: 2 splits */
    EXPECT_EQ(macko_tiles_wg_tail(4096, 256, 1280, 128, 132, big, big), 2);
    EXPECT_EQ(macko_tiles_wg_tail_tile0(4096, 1280, 128, 132), 264);
}

/* The fused product's C-tile width by n: 64 up to 64 columns, 128 up to 128, 256 beyond. */
TEST(Plan, TilesWgWidth)
{
    for (int64_t n : {INT64_C(1), INT64_C(8), INT64_C(33), INT64_C(64)})
        EXPECT_EQ(macko_tiles_wg_bn(n), 64) << n;
    for (int64_t n : {INT64_C(65), INT64_C(100), INT64_C(128)})
        EXPECT_EQ(macko_tiles_wg_bn(n), 128) << n;
    for (int64_t n : {INT64_C(129), INT64_C(256), INT64_C(2047), INT64_C(1) << 40})
        EXPECT_EQ(macko_tiles_wg_bn(n), 256) << n;
}

/* The tile layout's path by n (src/tiles_device.c): with wgmma, the tile kernel up to 16 columns, the fused product
 * from 17 (MACKO_TILES_WG_N), the dense panels from 1281 (MACKO_TILES_PANEL_N_WG: the H100's crossover, session 39),
 * and the fused product beyond where no panel fits the workspace; with mma.sync, the tile kernel up to 2047, the
 * panels from 2048 where they fit. */
TEST(Plan, TilesAutoPath)
{
    ASSERT_EQ(MACKO_TILES_WG_N, 17);
    ASSERT_EQ(MACKO_TILES_PANEL_N_WG, 1281);
    ASSERT_EQ(MACKO_TILES_PANEL_N, 2048);
    ASSERT_EQ(MACKO_TILES_N24_ELEMS, INT64_C(8192) * 8192);
    const int64_t small[2] = {4096, 11008}, at[2] = {65536, 1024}, below[2] = {8191, 8192}, big[2] = {36864, 12288};
    for (const int64_t *rc : {small, at, below, big}) {
        const bool large = rc[0] * rc[1] >= INT64_C(1) << 26;
        const int64_t r = rc[0], c = rc[1];
        for (int fits : {0, 1}) {
            for (int64_t n : {INT64_C(1), INT64_C(9), INT64_C(16)})
                EXPECT_EQ(macko_tiles_auto_path(n, r, c, 1, fits), 1) << n;
            /* n = 17..24: the 24-column tile kernel on the larger matrices, else the fused product */
            for (int64_t n : {INT64_C(17), INT64_C(20), INT64_C(24)})
                EXPECT_EQ(macko_tiles_auto_path(n, r, c, 1, fits), large ? 1 : 3) << r << "x" << c << " n=" << n;
            for (int64_t n : {INT64_C(25), INT64_C(32), INT64_C(64), INT64_C(512), INT64_C(1280)})
                EXPECT_EQ(macko_tiles_auto_path(n, r, c, 1, fits), 3) << n;
            for (int64_t n : {INT64_C(1), INT64_C(17), INT64_C(24), INT64_C(1281), INT64_C(2047)})
                EXPECT_EQ(macko_tiles_auto_path(n, r, c, 0, fits), 1) << n;
        }
        for (int64_t n : {INT64_C(1281), INT64_C(2047), INT64_C(2048), INT64_C(1) << 40}) {
            EXPECT_EQ(macko_tiles_auto_path(n, r, c, 1, 1), 2) << n;
            EXPECT_EQ(macko_tiles_auto_path(n, r, c, 1, 0), 3) << n;
        }
        for (int64_t n : {INT64_C(2048), INT64_C(4097)}) {
            EXPECT_EQ(macko_tiles_auto_path(n, r, c, 0, 1), 2) << n;
            EXPECT_EQ(macko_tiles_auto_path(n, r, c, 0, 0), 1) << n;
        }
    }
    /* the layout's largest matrix: rows x cols does not overflow */
    EXPECT_EQ(macko_tiles_auto_path(20, INT64_C(65535) * MACKO_TILES_ROWS, INT32_MAX, 1, 1), 1);
}

/* The n from which fp32 N:M products take SIMT instead of GEN: the crossings measured on the H200 (bench/NOTES.md,
 * session 15: 8192^2 about 12 at 16:32 and 24 at 4:32; 4096 x 11008 about 24 / 27 / 28 / 52 at 16 / 12 / 8 / 4 of
 * 32), fewer columns where the rows take more waves of blocks, and the bounds 16 and 128. */
/* SIMT's blocks along K: only for one column tile (n <= 128) whose 128-row blocks fill at most half the SMs; about
 * one block per SM, each split at least 8 K-slices of 64 columns, at most 16, and what the workspace holds. */
TEST(Plan, NmSimtSplits)
{
    const int64_t ws = INT64_MAX;
    EXPECT_EQ(macko_nm_simt_splits(8192, 8192, 32, 132, ws), 2);   /* 64 blocks */
    EXPECT_EQ(macko_nm_simt_splits(4096, 11008, 64, 132, ws), 4);  /* 32 blocks */
    EXPECT_EQ(macko_nm_simt_splits(8192, 8192, 129, 132, ws), 1);  /* two column tiles */
    EXPECT_EQ(macko_nm_simt_splits(8448, 8192, 16, 132, ws), 2);   /* 66 blocks: half the SMs */
    EXPECT_EQ(macko_nm_simt_splits(8576, 8192, 16, 132, ws), 1);   /* 67 */
    EXPECT_EQ(macko_nm_simt_splits(300, 4000, 8, 132, ws), 7);     /* 63 slices / 8 */
    EXPECT_EQ(macko_nm_simt_splits(100, 100000, 8, 132, ws), 16);  /* at most 16 */
    EXPECT_EQ(macko_nm_simt_splits(300, 960, 8, 132, ws), 1);      /* 15 slices: fewer than two of 8 ... */
    EXPECT_EQ(macko_nm_simt_splits(300, 1024, 8, 132, ws), 2);     /* ... 16: two */
    EXPECT_EQ(macko_nm_simt_splits(300, 4000, 8, 132, 300 * 8 * 3), 3); /* the workspace holds 3 */
    EXPECT_EQ(macko_nm_simt_splits(0, 4000, 8, 132, ws), 1);
    EXPECT_EQ(macko_nm_simt_splits(300, 0, 8, 132, ws), 1);
    EXPECT_EQ(macko_nm_simt_splits(300, 4000, 8, 0, ws), 1);
}

/* SP24WG's blocks along K (2:4): only where its 128 x 256 tiles fill at most a quarter of the SMs; up to one wave of
 * blocks, each split at least 8 K-slices of 64 columns, 4 to 16 splits within the workspace, else none. */
TEST(Plan, NmSp24WgSplits)
{
    const int64_t ws = INT64_MAX;
    EXPECT_EQ(macko_nm_sp24_wg_splits(4096, 11008, 128, 132, ws), 4);  /* 32 tiles */
    EXPECT_EQ(macko_nm_sp24_wg_splits(4096, 4096, 256, 132, ws), 4);   /* 32 tiles, 64 slices */
    EXPECT_EQ(macko_nm_sp24_wg_splits(4096, 4096, 512, 132, ws), 1);   /* 64 tiles: 2 would be the wave */
    EXPECT_EQ(macko_nm_sp24_wg_splits(4224, 4096, 128, 132, ws), 4);   /* 33 tiles: a quarter of 132 */
    EXPECT_EQ(macko_nm_sp24_wg_splits(4352, 4096, 128, 132, ws), 1);   /* 34 */
    EXPECT_EQ(macko_nm_sp24_wg_splits(12288, 12288, 128, 132, ws), 1); /* 96 tiles */
    EXPECT_EQ(macko_nm_sp24_wg_splits(300, 4000, 1, 132, ws), 7);      /* 63 slices / 8 */
    EXPECT_EQ(macko_nm_sp24_wg_splits(100, 100000, 8, 132, ws), 16);   /* at most 16 */
    EXPECT_EQ(macko_nm_sp24_wg_splits(300, 1984, 8, 132, ws), 1);      /* 31 slices: three of 8, fewer than 4 */
    EXPECT_EQ(macko_nm_sp24_wg_splits(300, 2048, 8, 132, ws), 4);      /* 32: four */
    EXPECT_EQ(macko_nm_sp24_wg_splits(300, 4000, 8, 132, 300 * 8 * 5), 5); /* the workspace holds 5 */
    EXPECT_EQ(macko_nm_sp24_wg_splits(300, 4000, 8, 132, 300 * 8 * 3), 1); /* ... 3: none */
    EXPECT_EQ(macko_nm_sp24_wg_splits(0, 4000, 8, 132, ws), 1);
    EXPECT_EQ(macko_nm_sp24_wg_splits(300, 0, 8, 132, ws), 1);
    EXPECT_EQ(macko_nm_sp24_wg_splits(300, 4000, 8, 0, ws), 1);
}

/* SP24WG's automatic configuration: 6 (one block per tile) below n = 1024, 9 (clusters of two row blocks sharing B)
 * from it on; both within the configurations. */
TEST(Plan, NmSp24WgAutoCfg)
{
    EXPECT_EQ(macko_nm_sp24_wg_auto_cfg(1), 6);
    EXPECT_EQ(macko_nm_sp24_wg_auto_cfg(1023), 6);
    EXPECT_EQ(macko_nm_sp24_wg_auto_cfg(1024), 9);
    EXPECT_EQ(macko_nm_sp24_wg_auto_cfg(INT64_C(1) << 40), 9);
    EXPECT_EQ(macko_nm_sp24_wg_configs(), 11);
}

TEST(Plan, NmSimtFrom)
{
    /* split along K (macko_nm_simt_splits: 8192 rows 2, 4096 rows 4): from 8..12 columns */
    EXPECT_EQ(macko_nm_simt_from(8192, 8192, 16, 32, 132), 8); /* 6, raised to 8 */
    EXPECT_EQ(macko_nm_simt_from(8192, 8192, 8, 32, 132), 8);
    EXPECT_EQ(macko_nm_simt_from(8192, 8192, 4, 32, 132), 12);
    EXPECT_EQ(macko_nm_simt_from(4096, 11008, 16, 32, 132), 8);
    EXPECT_EQ(macko_nm_simt_from(4096, 11008, 12, 32, 132), 8); /* 6.7 */
    EXPECT_EQ(macko_nm_simt_from(4096, 11008, 8, 32, 132), 8);
    EXPECT_EQ(macko_nm_simt_from(4096, 11008, 4, 32, 132), 12);
    /* unsplit (960 columns: 15 K-slices, fewer than two splits' worth): as in session 15, from 16 */
    EXPECT_EQ(macko_nm_simt_from(8192, 960, 16, 32, 132), 16); /* 12, raised to 16 */
    EXPECT_EQ(macko_nm_simt_from(8192, 960, 4, 32, 132), 24);
    EXPECT_EQ(macko_nm_simt_from(4096, 960, 16, 32, 132), 24);
    EXPECT_EQ(macko_nm_simt_from(4096, 960, 12, 32, 132), 27); /* 26.7 */
    EXPECT_EQ(macko_nm_simt_from(4096, 960, 8, 32, 132), 32);
    EXPECT_EQ(macko_nm_simt_from(4096, 960, 4, 32, 132), 48);
    EXPECT_EQ(macko_nm_simt_from(4096, 960, 2, 8, 132), 32); /* 8 kept per 32 columns: the same as 8:32 ... */
    EXPECT_EQ(macko_nm_simt_from(4096, 960, 1, 4, 132), 32); /* ... 1:4 too */
    EXPECT_EQ(macko_nm_simt_from(4096, 960, 4, 16, 132), 32);
    /* 36864 rows: 288 blocks, 3 waves of 132, unsplit */
    EXPECT_EQ(macko_nm_simt_from(36864, 12288, 16, 32, 132), 16);
    EXPECT_EQ(macko_nm_simt_from(36864, 12288, 4, 32, 132), 16);
    /* 16896 rows (132 blocks: one wave) against 17024 (133: two), unsplit */
    EXPECT_EQ(macko_nm_simt_from(16896, 8192, 4, 32, 132), 16);
    EXPECT_EQ(macko_nm_simt_from(17024, 8192, 4, 32, 132), 24);
    /* 8448 rows (66 blocks: half the SMs, 2 splits) against 8576 (67: unsplit) */
    EXPECT_EQ(macko_nm_simt_from(8448, 8192, 4, 32, 132), 12); /* 11.6 */
    EXPECT_EQ(macko_nm_simt_from(8576, 8192, 4, 32, 132), 23); /* 22.9 */
    /* few rows: GEN up to 127 columns, split or not */
    EXPECT_EQ(macko_nm_simt_from(70, 4000, 16, 32, 132), 128);
    EXPECT_EQ(macko_nm_simt_from(70, 100, 16, 32, 132), 128);
    EXPECT_EQ(macko_nm_simt_from(1, 1, 1, 32, 132), 128);
    EXPECT_EQ(macko_nm_simt_from(0, 100, 16, 32, 132), 128);
    EXPECT_EQ(macko_nm_simt_from(4096, 4096, 16, 32, 0), 128);
    for (int64_t cols : {960, 8192})
        for (int64_t rows = 1; rows < 40000; rows += 97)
            for (int s = 1; s <= 32; s++) {
                const int64_t n = macko_nm_simt_from(rows, cols, s, 32, 132);
                EXPECT_GE(n, 8);
                EXPECT_LE(n, 128);
                if (macko_nm_simt_splits(rows, cols, 128, 132, INT64_MAX) == 1) {
                    EXPECT_GE(n, 16);
                }
                if (rows >= 128) { /* more kept values per 32 columns: SIMT no later */
                    EXPECT_LE(n, macko_nm_simt_from(rows, cols, 1, 32, 132));
                }
            }
}

/* The SIMT instances' shared memory and the configuration an upload takes from the device's opt-in limit: every
 * instance fits an sm_90 block (227 KiB), configuration 0 takes 108-202 KiB (so not on sm_86 / sm_89, 99 KiB), and
 * where no instance fits the product stays on GEN. */
TEST(Plan, NmSimtSharedMemoryAndConfiguration)
{
    const int sm90 = 232448, sm80 = 166912, sm86 = 101376;
    EXPECT_EQ(macko_nm_simt_smem(0, 16, 32), 206976); /* 64-column steps of 32 slots */
    EXPECT_EQ(macko_nm_simt_smem(0, 2, 4), 206976);   /* the same slot count */
    EXPECT_EQ(macko_nm_simt_smem(0, 4, 32), 154656);
    EXPECT_EQ(macko_nm_simt_smem(0, 20, 32), 110160); /* 32-column steps */
    EXPECT_EQ(macko_nm_simt_smem(1, 16, 32), 72768);
    EXPECT_EQ(macko_nm_simt_smem(1, 32, 32), 107648);
    EXPECT_EQ(macko_nm_simt_smem(2, 16, 32), -1);
    EXPECT_EQ(macko_nm_simt_smem(-1, 16, 32), -1);
    EXPECT_EQ(macko_nm_simt_smem(0, 5, 4), -1);
    EXPECT_EQ(macko_nm_simt_smem(0, 0, 32), -1);
    EXPECT_EQ(macko_nm_simt_smem(0, 1, 64), -1);
    for (int m : {4, 8, 16, 32})
        for (int n = 1; n <= m; n++)
            for (int cfg = 0; cfg < macko_nm_simt_configs(); cfg++) {
                const int b = macko_nm_simt_smem(cfg, n, m);
                EXPECT_GT(b, 0) << n << ":" << m << " configuration " << cfg;
                EXPECT_LE(b, sm90) << n << ":" << m << " configuration " << cfg;
                if (cfg == 0) {
                    EXPECT_GT(b, sm86) << n << ":" << m;
                }
            }
    EXPECT_EQ(macko_nm_simt_auto_cfg(16, 32, sm90), 0);
    EXPECT_EQ(macko_nm_simt_auto_cfg(16, 32, sm80), 1);
    EXPECT_EQ(macko_nm_simt_auto_cfg(1, 32, sm80), 0);
    EXPECT_EQ(macko_nm_simt_auto_cfg(16, 32, sm86), 1);
    EXPECT_EQ(macko_nm_simt_auto_cfg(32, 32, sm86), -1);
    EXPECT_EQ(macko_nm_simt_auto_cfg(16, 32, 0), -1);
    EXPECT_EQ(macko_nm_simt_auto_cfg(5, 4, sm90), -1);
}
