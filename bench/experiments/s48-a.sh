#!/usr/bin/env bash
# Session 48's first device call: s47-tiles-end-on-9519d46.patch (the A fragments from the values before `end`, the
# lane's bits by an IMAD; tile kernel and fused wgmma product) against the tree without it, then its checks.
#   f: the tree at dd9bd16 (kernels as 9519d46; build-carry/fb.tar.xz, macko-bench)
#   e: f + the patch (build-carry/e.tar.xz, 90-real macko-bench and macko_tests)
# Quick shapes: the tile kernel (n = 1 / 8 / 16) and the fused product (n = 32 / 64 / 256), d = 0.5 and 0.3, each A/B
# in one run; then compute-sanitizer's four tools over e's fp16 tile products (every way, the fused product's among
# them), memcheck and racecheck over its fused tests, and four test processes, side by side.
# With build-carry/e2b.tar.xz (macko-bench of e + s48-tiles-mulhi.patch: the lane's two bits and subtile 3's start by
# IMAD.HI instead of a shift / prmt, the FMA pipe instead of the ALU's), that third build beside them.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e.tar.xz OLD_CARRY=fb.tar.xz . bench/experiments/device-run.sh s48a
E2=
if [ -f build-carry/e2b.tar.xz ]; then mkdir -p /tmp/e2 && tar -xJf build-carry/e2b.tar.xz -C /tmp/e2 && E2=/tmp/e2/bench/macko-bench; fi
for d in 0.5 0.3; do
    tiles_run "e-d$d" 45 --densities "$d" --n 1,8,16
    TILES_BIN=$OLD tiles_run "f-d$d" 45 --densities "$d" --n 1,8,16
    [ -n "$E2" ] && TILES_BIN=$E2 tiles_run "e2-d$d" 45 --densities "$d" --n 1,8,16
    pk "tile kernel $d"
    ab_pairs "-d$d" f:e
    [ -n "$E2" ] && ab_pairs "-d$d" e:e2
done
for d in 0.5 0.3; do
    tiles_run "ew-d$d" 50 --densities "$d" --n 32,64,256
    TILES_BIN=$OLD tiles_run "fw-d$d" 50 --densities "$d" --n 32,64,256
    [ -n "$E2" ] && TILES_BIN=$E2 tiles_run "e2w-d$d" 50 --densities "$d" --n 32,64,256
    pk "fused $d"
    ab_pairs "-d$d" fw:ew
    [ -n "$E2" ] && ab_pairs "-d$d" ew:e2w
done
CHK=$((500 - $(elapsed)))
[ "$CHK" -gt 240 ] && CHK=240
[ "$CHK" -lt 90 ] && CHK=90
echo "checks get $CHK s"
san_bg "$CHK" e 'GpuTiles/H.ProductsAgainstTheDoubleReference' memcheck racecheck initcheck synccheck
san_bg "$CHK" ef 'GpuTiles/H.Fused*' memcheck racecheck
tests_parts "$CHK" 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/*.Transpose*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:Plan*:TilesSplits*' \
    'GpuTiles/*.Matrices*:GpuTiles/*.Download*:GpuTilesH.*:GpuTiles/*.Fused*:GpuTiles/*.Panels*'
san_sum
pk end
