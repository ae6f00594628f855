#!/usr/bin/env bash
# Session 43, run 2: width 64's narrow instance at n <= 32 (split K writes and sums only the tile's first 32 columns,
# a template instance of its own, so that n = 33-64 keep their code). Carry build-carry/n.tar.xz (this tree, 90-real,
# MACKO_WERROR) and build-carry/r.tar.xz (run 1's macko-bench: the mends without the narrow instance). About 7
# minutes: the four sanitizers over the new test and the graph test, racecheck over the cluster tests run 1 cut short
# (one process each), beside the tile tests and GpuSpmmTc/B (cut by run 1's limit); then the same-run A/B, old / new,
# twice, d = 0.5, n = 16 / 17 / 24 / 32 / 33 / 40 / 64 on the quick shapes.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=r.tar.xz . bench/experiments/device-run.sh s43n
san_bg 240 nw 'GpuTiles/*.FusedNarrowSplitK:GpuTiles/*.GraphCapture*' memcheck racecheck initcheck synccheck
san_bg 240 rc1 'GpuTiles/*.FusedSplitKInClusters' racecheck
san_bg 240 rc2 'GpuSpmmTc/*.PanelSplitsInClusters' racecheck
tests_parts 240 'GpuTiles/*.FusedNarrow*:GpuTiles/*.GraphCapture*:GpuTiles/*.FusedSplitKInClusters:GpuTilesH.*' \
    'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/*.IssueNList*:GpuTiles/*.Transpose*:GpuTiles/*.FusedWidths*:Plan*' 'GpuSpmmTc/B.*'
pk tests
san_sum
pk sanitizers
for i in 1 2; do
    TILES_BIN=$OLD tiles_run "old-$i" 50 --densities 0.5 --n 16,17,24,32,33,40,64
    tiles_run "new-$i" 50 --densities 0.5 --n 16,17,24,32,33,40,64
done
pk ab
for i in 1 2; do python3 bench/experiments/ab-compare.py "$L" "old-$i.csv:new-$i.csv" | tail -n 7; done
python3 bench/experiments/ab-compare.py "$L" old-1.csv:new-1.csv | grep " 32 \| 24 "
