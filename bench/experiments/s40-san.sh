#!/usr/bin/env bash
# Session 40's second device run: what s40-ab.sh's sanitizer step (cut at 154 s) did not reach. compute-sanitizer's
# memcheck, racecheck and initcheck over GpuTiles.FusedTailSplit (both types; the tail split's two launches, quick
# mode: width 128) and racecheck over GpuTiles/B.GraphCaptureGivesTheSameBits (stream-K over 5 blocks, widths 256 and
# 128: the new epilogue), all side by side, each cut at 170 s. Carry build-carry/n.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s40s
for ty in H B; do
    san_bg 170 $ty "GpuTiles/$ty.FusedTailSplit" memcheck racecheck initcheck
done
san_bg 170 graph-B GpuTiles/B.GraphCaptureGivesTheSameBits racecheck
san_sum
pk sanitizers
