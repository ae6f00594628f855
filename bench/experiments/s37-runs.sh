#!/usr/bin/env bash
# Session 37's first device run (bench/NOTES.md session 37), one GPU, one call of the device tool: the fused
# product's width 128 as two blocks of 8 warps per SM (consumer warp 0 produces), against the one block of 12 warps
# before. Carry build-carry/n.tar.xz (a build of 23aebc2 with s37-tiles-wg-bn128-two-blocks.patch: 90-real, Werror) and
# build-carry/o.tar.xz (macko-bench of the build before it, 23aebc2). Steps, each alone on the GPU: the tile tests of the new build;
# old and new macko-bench (both link libmacko statically) at n = 64 / 65 / 96 / 128, d = 0.5 and 0.3; the new one with
# stream-K off, and width 128 forced at n = 192 / 256; then compute-sanitizer's four tools over GpuTiles*.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh s37
tests_alone '*Tiles*' 150
pk gtest
tiles_ab 0.5 64,65,96,128 60
tiles_ab 0.3 64,65,96,128 60
tiles_run new-nosk 40 --densities 0.5 --n 65,128 --tiles-stream -1
tiles_run new-bn128 40 --densities 0.5 --n 192,256 --tiles-bn 128
tiles_run new-bn256 40 --densities 0.5 --n 192,256
pk variants
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv old-d0.3.csv:new-d0.3.csv
sanitizers_until 570 'GpuTiles*'
