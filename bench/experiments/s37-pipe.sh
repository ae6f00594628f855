#!/usr/bin/env bash
# Session 37's second device run (bench/NOTES.md session 37): the fused product's widths 128 and 256 with one wgmma
# group per record (a record's fragment is built while the groups before it multiply), against the build before it.
# Carry build-carry/n.tar.xz (23aebc2 + s37-tiles-wg-pipelined-records.patch, 90-real, Werror) and build-carry/o.tar.xz (macko-bench of
# 23aebc2). Steps, each alone on the GPU: the tile tests of the new build; old and new macko-bench on the quick shapes
# at n = 65 .. 1024 (d = 0.5) and n = 128 / 512 (d = 0.3); the new one with the fused product forced at n = 2048 /
# 4096 against its automatic path there (the panels); compute-sanitizer's four tools over GpuTiles*.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh s37p
tests_alone '*Tiles*' 150
pk gtest
tiles_ab 0.5 65,128,192,256,512,1024 70
tiles_ab 0.3 128,512 40
tiles_run new-fused-big 60 --densities 0.5 --n 2048,4096 --tiles-path fused
tiles_run new-auto-big 60 --densities 0.5 --n 2048,4096
pk big
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv old-d0.3.csv:new-d0.3.csv \
    new-auto-big.csv:new-fused-big.csv:auto:fused
sanitizers_until 560 'GpuTiles*'
