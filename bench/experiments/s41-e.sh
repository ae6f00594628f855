#!/usr/bin/env bash
# Session 41's last device run, on the final kernels (53e22de: 7a8c23d's split-K epilogue, the launch helper):
# GpuTiles* tests; the tile layout by n (issue 16's list and 1280) at d = 0.5 and 0.3 on the quick shapes against
# cublasGemmEx (the tables of record; rotate flush); compute-sanitizer's four tools over FusedTailSplit and
# GraphCaptureGivesTheSameBits (the tail split's two launches, split K at widths 256 / 64 / 128, stream-K).
# Carry build-carry/n3.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=n3.tar.xz . bench/experiments/device-run.sh s41e
tests_alone 'GpuTiles*' 120
pk tests
for d in 0.5 0.3; do
    timeout 95 $BENCH --layout tiles --flush rotate --shapes quick --densities $d --no-cusparse \
        --n 1,2,4,8,16,32,64,128,256,512,1280,2048,8192 --csv "$L/ntable-tiles-d$d.csv" --md "$L/ntable-tiles-d$d.md" \
        >"$L/ntable-tiles-d$d.log" 2>&1
    echo "ntable $d rc $?"
    pk "ntable $d"
done
sanitizers_until $(( $(elapsed) + 150 )) 'GpuTiles/*.FusedTailSplit:GpuTiles/*.GraphCaptureGivesTheSameBits'
