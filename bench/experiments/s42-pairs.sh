#!/usr/bin/env bash
# Session 42, after the clusters: split K in pairs, clusters of 2 whose sums meet in the workspace, where a tile's
# splits do not fit one cluster (the 32 tiles of the 4096-row shapes at n = 65-256 in 4 splits: the H100 holds 30
# clusters of 4, 66 of 2; landed in 087cc92). Carry build-carry/p.tar.xz (that tree, 90-real, MACKO_WERROR). About 4 minutes: the sanitizers over FusedSplitKInClusters (pairs
# forced at 8 splits) beside the tests that take them, then the same binary through the workspace and in pairs,
# alternating, twice, on the 4096-row shapes at n = 128 / 192 / 256.
set -u
# shellcheck source=device-run.sh
CARRY=p.tar.xz . bench/experiments/device-run.sh s42pairs
san_bg 170 cl 'GpuTiles/*.FusedSplitKInClusters' memcheck racecheck initcheck synccheck
tests_parts 170 'GpuTiles/*.FusedSplitKInClusters:GpuTiles/*.GraphCapture*:GpuTiles/*.Transpose*' \
    'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/H.FusedTailSplit'
pk tests
san_sum
pk sanitizers
tiles_alt 40 ws "--tiles-cluster -1" pr "" --densities 0.5 --n 128,192,256 --shapes 4096x4096,4096x11008
