#!/usr/bin/env bash
# NOT RUN as written in session 47: fifteen calls found no H100 or H200; the sixteenth ran a cut-down form (the tile
# kernel at n = 8 / 16 of f, t and u, and u's tile products; bench/NOTES.md session 47 has the command). The carried
# builds are in build-carry (ignored; fb / tb macko-bench, u bench and tests): rebuild them if absent or the tree moved.
# Session 47's device call as written: session 46's s46-b.sh (the tensor-map patch's A/B) with a third build. Three
# 90-real builds (their macko-bench; u's macko_tests too):
#   f: 9519d46 (build-carry/fb.tar.xz; the tree's kernels have not moved since)
#   t: f + bench/experiments/s46-tiles-tma-b.patch, B's piece by a tensor map on sm_90 (build-carry/tb.tar.xz)
#   u: t + bench/experiments/s47-tiles-end.patch, the A fragments from the values before `end`, the lane's bits by an
#      IMAD (the ALU pipe's work to the FMA pipe) in the tile kernel and the fused product (build-carry/u.tar.xz)
# Quick shapes: the tile kernel (n = 1 / 8 / 16) f, t and u; the fused product (n = 32 / 64 / 256) f and u; d = 0.5
# and 0.3, all in one run. Then u's tile and plan tests (four processes) and compute-sanitizer's four tools over its
# fp16 tile products (the fused product's ways among them), memcheck and racecheck over its fused tests, side by side.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=u.tar.xz OLD_CARRY=fb.tar.xz . bench/experiments/device-run.sh s47a
mkdir -p /tmp/t && tar -xJf build-carry/tb.tar.xz -C /tmp/t
TB=/tmp/t/bench/macko-bench
for d in 0.5 0.3; do
    tiles_run "u-d$d" 45 --densities "$d" --n 1,8,16
    TILES_BIN=$TB tiles_run "t-d$d" 45 --densities "$d" --n 1,8,16
    TILES_BIN=$OLD tiles_run "f-d$d" 45 --densities "$d" --n 1,8,16
    pk "tile kernel $d"
    ab_pairs "-d$d" f:t t:u f:u
done
for d in 0.5 0.3; do
    tiles_run "uw-d$d" 50 --densities "$d" --n 32,64,256
    TILES_BIN=$OLD tiles_run "fw-d$d" 50 --densities "$d" --n 32,64,256
    pk "fused $d"
    ab_pairs "-d$d" fw:uw
done
CHK=$((400 - $(elapsed)))
[ "$CHK" -gt 200 ] && CHK=200
[ "$CHK" -lt 90 ] && CHK=90
echo "checks get $CHK s"
san_bg "$CHK" u 'GpuTiles/H.ProductsAgainstTheDoubleReference' memcheck racecheck initcheck synccheck
san_bg "$CHK" uf 'GpuTiles/H.Fused*' memcheck racecheck
tests_parts "$CHK" 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/*.Transpose*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:Plan*:TilesSplits*' \
    'GpuTiles/*.Matrices*:GpuTiles/*.Download*:GpuTilesH.*:GpuTiles/*.Fused*:GpuTiles/*.Panels*'
san_sum
pk end
