#!/usr/bin/env bash
# Session 40's device run: two changes to the tile layout's fused product (kernels/spmm_tiles_wg.cu), against the
# macko-bench of the tree before them in the same run. (1) Stream-K's partial tiles go to the workspace straight from
# the accumulators, and the last block keeps its own part in its registers (no write and read-back through shared
# memory). (2) The tail split: where the tiles fill whole waves and part of one more, the whole waves one block per
# tile and the rest split along K in a second launch (macko_tiles_wg_tail; it takes the place of stream-K where its
# model says so, e.g. n = 1280 on the 4096-row and -column shapes). Carry build-carry/n.tar.xz (this tree, 90-real,
# Werror) and build-carry/o.tar.xz (the old macko-bench). Each step alone on the GPU: the tile layout's GPU tests (the
# new GpuTiles.FusedTailSplit among them); old and new timed at d = 0.5 on the quick shapes: the automatic rule at
# n = 512 / 1152 / 1280, stream-K forced over 132 blocks at n = 1024 / 1280 (change 1 alone); compute-sanitizer's
# four tools over the tile tests that force stream-K and the tail split; then, with the time left, the tail split and
# split K 4 forced at n = 1280 (new build; on an H200 instead the fused product and the panels forced at 1280 / 1536).
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh s40
tests_alone 'GpuTiles*' 120
pk gtest
TILES_BIN=$OLD tiles_run old-auto 50 --densities 0.5 --n 512,1152,1280
tiles_run new-auto 50 --densities 0.5 --n 512,1152,1280
TILES_BIN=$OLD tiles_run old-sk 30 --densities 0.5 --n 1024,1280 --tiles-stream 132
tiles_run new-sk 30 --densities 0.5 --n 1024,1280 --tiles-stream 132
pk ab
python3 bench/experiments/ab-compare.py "$L" old-auto.csv:new-auto.csv old-sk.csv:new-sk.csv
sanitizers_until 330 'GpuTiles*ProductsAgainstTheDoubleReference*:GpuTiles*GraphCapture*:GpuTiles*FusedTailSplit*'
left=$((390 - $(elapsed)))
if [ "$left" -gt 20 ] && grep -q H200 "$L/gpu.txt"; then
    # lead 2 of session 39: the H200's crossover of the fused product and the panels (the switch is the H100's)
    tiles_run h200-fused $((left / 2)) --densities 0.5 --n 1280,1536 --tiles-path fused
    tiles_run h200-panel $((left / 2 - 5)) --densities 0.5 --n 1280,1536 --tiles-path panel
    pk h200
    python3 bench/experiments/ab-compare.py "$L" h200-fused.csv:h200-panel.csv:fused:panels
elif [ "$left" -gt 20 ]; then
    tiles_run split4 $((left / 2)) --densities 0.5 --n 1280 --tiles-splits 4
    tiles_run sk-off $((left / 2 - 5)) --densities 0.5 --n 1280 --tiles-stream -1 --tiles-tail -1
    pk variants
    python3 bench/experiments/ab-compare.py "$L" new-auto.csv:split4.csv:auto:split4 new-auto.csv:sk-off.csv:auto:one-per-tile
fi
