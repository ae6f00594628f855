/* The SpMV geometry choice (kernels/macko_kernels.h: macko_spmv_choose_kernel): a function of the matrix alone,
 * checked on the host. Both geometries sum in the same order (GpuSpmv.KernelVariantsAgreeBitwise), so the choice
 * moves time, never results. */
#include "../kernels/macko_kernels.h"

#include <gtest/gtest.h>

#include <cstdint>

TEST(KernelChoice, ByColumnsDensityAndType)
{
    if (macko_spmv_forced_kernel() >= 0)
        GTEST_SKIP() << "MACKO_SPMV_VARIANT forces a geometry in this process";
    const int W = MACKO_SPMV_KERNEL_WARP, S = MACKO_SPMV_KERNEL_STAGED;
    const int64_t R = 4096;
    auto half_full = [&](int64_t cols) { return R * cols / 2; };
    /* fp16: STAGED up to MACKO_SPMV_STAGE_MAX_COLS columns (whether the device can hold x is the launcher's call) */
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4096, half_full(4096), 2), S);
    EXPECT_EQ(macko_spmv_choose_kernel(R, MACKO_SPMV_STAGE_MAX_COLS, half_full(MACKO_SPMV_STAGE_MAX_COLS), 2), S);
    EXPECT_EQ(macko_spmv_choose_kernel(R, MACKO_SPMV_STAGE_MAX_COLS + 1, half_full(MACKO_SPMV_STAGE_MAX_COLS + 1), 2),
              W);
    /* nearly dense (at least MACKO_SPMV_DENSE_FRACTION of the positions stored): WARP at any width */
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4096, R * 4096, 2), W);
    EXPECT_EQ(macko_spmv_choose_kernel(R, 20000, R * 20000, 2), W);
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4096, (int64_t)(MACKO_SPMV_DENSE_FRACTION * (double)(R * 4096)) + 1, 2), W);
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4096, (int64_t)(0.95 * (double)(R * 4096)), 2), S);
    /* padding entries count as stored entries, and a sparse matrix with much padding stays far below the fraction */
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4096, R * 4096 / 16, 2), S);
    /* fp32: STAGED only up to 4096 columns */
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4096, half_full(4096), 4), S);
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4097, half_full(4097), 4), W);
    EXPECT_EQ(macko_spmv_choose_kernel(R, 4096, R * 4096, 4), W);
    /* empty shapes take WARP (which writes beta*y or zeros) */
    EXPECT_EQ(macko_spmv_choose_kernel(0, 0, 0, 2), W);
    EXPECT_EQ(macko_spmv_choose_kernel(5, 0, 0, 2), W);
}
