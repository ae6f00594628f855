/* What the SpMM conformance suites of the MACKO rows share (testing/spmm16.h for the 16-bit paths,
 * test_gpu_spmm_simt.cpp for fp32): the matrix shapes every suite runs (odd sizes, a single row / column,
 * non-multiples of 16/32/64/128/256, empty / dense / gappy rows (structure), K-tiles with no entry, Inf / NaN in B
 * (nonfinite) and all-positive values (positive)), the issue's list of n, and the ways a product is forced. */
#pragma once

#include "macko_internal.h"

#include <gtest/gtest.h>
#include <stdint.h>

namespace spmm_shapes {

struct Shape {
    int64_t rows, cols;
    double d;
    bool structure, nonfinite, positive;
};

inline const Shape kShapes[] = {
    {1, 1, 1.0, false, false, false},     {7, 33, 0.5, false, true, false},     {33, 7, 0.5, false, false, false},
    {64, 256, 0.5, false, false, true},   {100, 1000, 0.3, true, true, false},  {257, 4097, 0.1, false, false, false},
    {130, 777, 0.5, true, true, false},   {90, 3000, 0.02, false, false, false}, {1, 5000, 0.5, false, false, false},
    {500, 1, 0.7, false, false, false},   {200, 600, 1.0, false, false, false},
};

/* Issue 16's n: 1..17, each side of 32, 64, 128 and 256, 1000, 2048 and 4097. */
inline const int64_t kIssueNs[] = {1,  2,  3,  4,  5,  6,   7,   8,   9,   10,  11,   12,   13,   14,  15,
                                   16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 1000, 2048, 4097};

/* One way to run a product: the automatic plan, or a forced path with its knobs (0: the plan's own choice). */
struct Way {
    const char *name;
    int path;    /* MACKO_MM_PATH_AUTO, TC, PANEL or SIMT */
    int kt, group, splits; /* TC's K-tile and lane group; blocks along K (TC, SIMT) */
    int64_t panel_rows;
    int gemm;    /* the panel GEMM: 0 automatic (wgmma where the library and device have it), 1 mma.sync */
    int psplits; /* the wgmma panel GEMM's blocks along K (a cluster per tile): 0 automatic, 1..8 */
};

/* simt_tc: the fp32 SIMT path's form (0 automatic, MACKO_SIMT_FMA, MACKO_SIMT_TF32X3). */
inline void force(macko_handle_t h, macko_mat_t A, macko_operation_t op, const Way &w, int simt_tc = 0)
{
    if (w.path == MACKO_MM_PATH_AUTO) {
        ASSERT_EQ(macko_plan_override(h, A, op, nullptr), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        return;
    }
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.mm_path = w.path;
    f.tc_kt = w.kt;
    f.tc_group = w.group;
    f.tc_splits = w.splits;
    f.panel_rows = w.panel_rows;
    f.panel_gemm = w.gemm;
    f.panel_splits = w.psplits;
    f.simt_tc = simt_tc;
    ASSERT_EQ(macko_plan_override(h, A, op, &f), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
}

} // namespace spmm_shapes
