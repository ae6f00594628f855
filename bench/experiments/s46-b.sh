#!/usr/bin/env bash
# NOT RUN in session 46: from 22:38 on no H100 or H200 could be started (about 1,270 s of the session's device time
# went in failed starts), and this call was refused for want of device time. For the next session, two 90-real builds:
#   f: 9519d46, the tile kernel's records by bulk copies on sm_90 and the per-matrix groups of 16 (build-carry/f.tar.xz,
#      macko-bench and macko_tests)
#   t: f + bench/experiments/s46-tiles-tma-b.patch, B's piece by the tensor memory accelerator on sm_90 (16 x NT boxes,
#      32-byte swizzle, on a block mbarrier; the block's first barrier per group a warp's own), the cp.async staging
#      writing the same swizzled layout (build-carry/t.tar.xz, macko-bench and macko_tests)
# Rebuild both if the tree moved. Quick shapes, n = 1 / 8 / 16, d = 0.5 and 0.3: t and f in one run; then t's tile
# products and other tile and plan tests with memcheck and synccheck over its fp16 tile products, side by side (add
# racecheck / initcheck and the whole suite when there is time: this form was cut to fit 340 s).
set -u
# shellcheck source=device-run.sh
CARRY=t.tar.xz OLD_CARRY=f.tar.xz . bench/experiments/device-run.sh s46b
for d in 0.5 0.3; do
    tiles_run "t-d$d" 40 --densities "$d" --n 1,8,16
    TILES_BIN=$OLD tiles_run "f-d$d" 40 --densities "$d" --n 1,8,16
    pk "timing $d"
    ab_pairs "-d$d" f:t
done
LEFT=$((200 - $(elapsed)))
[ "$LEFT" -lt 60 ] && LEFT=60
[ "$LEFT" -gt 160 ] && LEFT=160
echo "tests and sanitizers get $LEFT s"
san_bg "$LEFT" t 'GpuTiles/H.ProductsAgainstTheDoubleReference' memcheck synccheck
tests_parts "$LEFT" 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/*.Transpose*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:GpuTiles/*.Matrices*:GpuTilesH.*:Plan*'
san_sum
pk end
