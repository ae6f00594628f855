#!/usr/bin/env bash
# Prepared in session 41 for the next session with a GPU: the test and timing of bench/experiments/s41-ncol.patch
# (split K writes and sums only the float4 groups that hold columns of C). Build the tree with the patch applied
# (90-real, MACKO_WERROR) and carry it as build-carry/n.tar.xz (bench/macko-bench, testing/macko_tests, libmacko.so*),
# and the tree's own macko-bench without it as build-carry/o.tar.xz. About 4 minutes:
#   1. GpuTiles* in five processes side by side (the Products tests force split K at widths 64 / 128 / 256 with
#      n below the width), cut at 150 s;
#   2. initcheck (the reads of unwritten workspace s41-h.sh found), memcheck, racecheck and synccheck over
#      GraphCaptureGivesTheSameBits (split K at widths 256 / 64 / 128, n = 40) and FusedTailSplit (fp16);
#   3. same-run A/B at d = 0.5, n = 32 / 40 / 64 / 128 on the quick shapes.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh s42n
tests_parts 150 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/H.FusedTailSplit' 'GpuTiles/B.FusedTailSplit' \
    'GpuTilesH.*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:GpuTiles/*.Matrices*:GpuTiles/*.Transpose*:GpuTiles/*.Download*:GpuTiles/*.Panels*:GpuTiles/*.FusedWidths*'
pk tests
san_bg 150 all 'GpuTiles/*.GraphCaptureGivesTheSameBits:GpuTiles/H.FusedTailSplit' memcheck racecheck initcheck synccheck
san_sum
pk sanitizers
tiles_ab 0.5 32,40,64,128 60
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv | tail -28
