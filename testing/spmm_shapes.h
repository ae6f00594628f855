/* The matrix shapes every SpMM conformance suite runs (testing/spmm16.h for the 16-bit paths, test_gpu_spmm_simt.cpp
 * for fp32): odd sizes, a single row / column, non-multiples of 16/32/64/128/256, empty / dense / gappy rows
 * (structure), K-tiles with no entry, Inf / NaN in B (nonfinite) and all-positive values (positive). */
#pragma once

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

} // namespace spmm_shapes
