#!/usr/bin/env bash
# Session 40's second device run: what s40-ab.sh's sanitizer step (cut at 154 s) did not reach. compute-sanitizer's
# memcheck, racecheck and initcheck over GpuTiles.FusedTailSplit (both types; the tail split's two launches, quick
# mode: width 128) and racecheck over GpuTiles/B.GraphCaptureGivesTheSameBits (stream-K over 5 blocks, widths 256 and
# 128: the new epilogue), all side by side, each cut at 170 s. Carry build-carry/n.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s40s
(for tool in memcheck racecheck initcheck; do
    for ty in H B; do
        { MACKO_TEST_REPEATS=3 timeout 170 compute-sanitizer --tool $tool --error-exitcode 99 "$T" --gtest_color=no \
              --gtest_filter="GpuTiles/$ty.FusedTailSplit" >"$L/san-$tool-$ty.log" 2>&1
          echo "$tool $ty rc $?" >>"$L/san-rc.txt"; } &
    done
done
{ MACKO_TEST_REPEATS=3 timeout 170 compute-sanitizer --tool racecheck --error-exitcode 99 "$T" --gtest_color=no \
      --gtest_filter="GpuTiles/B.GraphCaptureGivesTheSameBits" >"$L/san-racecheck-graph-B.log" 2>&1
  echo "racecheck graph B rc $?" >>"$L/san-rc.txt"; } &
wait)
sort "$L/san-rc.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^\[  PASSED\|^\[  FAILED\|^\[       OK" "$L"/san-*.log | sort | uniq -c
pk sanitizers
