#!/usr/bin/env bash
# Session 41's last device run (362 s of device time left): split K's epilogue skips the columns past n (the n = 32
# loss of 7a8c23d on 4096^2 and 4096 x 11008: the old epilogue summed only the columns of C, the new one summed the
# whole width). GpuTiles* in five processes side by side (cut at 100 s); same-run A/B against 53e22de (n3) at
# d = 0.5, n = 32 / 64 / 40; compute-sanitizer's four tools over GraphCaptureGivesTheSameBits (split K at widths
# 256 / 64 / 128 with n = 40: the partial width). Carry build-carry/n4.tar.xz and build-carry/o3.tar.xz (53e22de's macko-bench).
set -u
# shellcheck source=device-run.sh
CARRY=n4.tar.xz OLD_CARRY=o3.tar.xz . bench/experiments/device-run.sh s41h
i=0
for f in 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/H.FusedTailSplit' 'GpuTiles/B.FusedTailSplit' \
    'GpuTilesH.*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:GpuTiles/*.Matrices*:GpuTiles/*.Transpose*:GpuTiles/*.Download*:GpuTiles/*.Panels*:GpuTiles/*.FusedWidths*'; do
    { timeout 100 "$T" --gtest_color=no --gtest_filter="$f" >"$L/gtest-$i.log" 2>&1; echo "part $i rc $?" >>"$L/gtest-rc.txt"; } &
    i=$((i + 1))
done
wait
sort "$L/gtest-rc.txt"
grep -h "^\[  FAILED\|^\[  PASSED\|^\[       OK" "$L"/gtest-*.log | sort | uniq -c
pk tests
tiles_ab 0.5 32,40,64 40
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv | tail -22
(for tool in memcheck racecheck initcheck synccheck; do
    { MACKO_TEST_REPEATS=3 timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 "$T" --gtest_color=no \
          --gtest_filter='GpuTiles/*.GraphCaptureGivesTheSameBits' >"$L/san-$tool.log" 2>&1
      echo "$tool rc $?" >>"$L/san-rc.txt"; } &
done; wait)
sort "$L/san-rc.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^\[  PASSED\|^\[  FAILED" "$L"/san-*.log | sort | uniq -c
pk sanitizers
