#!/usr/bin/env bash
# Session 41's last device run (362 s of device time left): split K's epilogue skips the columns past n (the n = 32
# loss of 7a8c23d on 4096^2 and 4096 x 11008: the old epilogue summed only the columns of C, the new one summed the
# whole width). GpuTiles* in five processes side by side (cut at 100 s); same-run A/B against 53e22de (n3) at
# d = 0.5, n = 32 / 64 / 40; compute-sanitizer's four tools over GraphCaptureGivesTheSameBits (split K at widths
# 256 / 64 / 128 with n = 40: the partial width). Carry build-carry/n4.tar.xz and build-carry/o3.tar.xz (53e22de's macko-bench).
set -u
# shellcheck source=device-run.sh
CARRY=n4.tar.xz OLD_CARRY=o3.tar.xz . bench/experiments/device-run.sh s41h
tests_parts 100 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/H.FusedTailSplit' 'GpuTiles/B.FusedTailSplit' \
    'GpuTilesH.*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:GpuTiles/*.Matrices*:GpuTiles/*.Transpose*:GpuTiles/*.Download*:GpuTiles/*.Panels*:GpuTiles/*.FusedWidths*'
pk tests
tiles_ab 0.5 32,40,64 40
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv | tail -22
san_bg 60 all 'GpuTiles/*.GraphCaptureGivesTheSameBits' memcheck racecheck initcheck synccheck
san_sum
pk sanitizers
