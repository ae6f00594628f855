#!/usr/bin/env bash
# Session 41's first device run. (1) What session 40's sanitizer step did not reach (s40-san.sh): memcheck, racecheck
# and initcheck over GpuTiles.FusedTailSplit (both types; the tail split's second launch) and racecheck over
# GpuTiles/B.GraphCaptureGivesTheSameBits, side by side, cut at 170 s. (2) ncu of the fused product on 4096^2, d = 0.5,
# n = 1280: the tail split's two launches (automatic rule) and one block per tile (tail and stream-K off), to see where
# the 20-50 us the slice model misses go. (3) The 1280 -> 1281 edge (fused -> panels) at d = 0.5 and 0.1 on the quick
# shapes, re-measured now that n = 1280 takes the tail split. Carry build-carry/n.tar.xz.
# (1) is s40-san.sh itself (its logs in $OUT/s40s.tgz).
set -u
bash bench/experiments/s40-san.sh
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s41a
NCU_SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis"
for way in auto:0:0 one:-1:-1; do
    IFS=: read -r name tail sk <<<"$way"
    # shellcheck disable=SC2086
    timeout 60 ncu $NCU_SEC --print-details all -k regex:tiles_wg -c 2 -o "$L/t-$name" $BENCH --layout tiles \
        --tiles-path fused --tiles-tail "$tail" --tiles-stream "$sk" --shapes 4096x4096 --densities 0.5 --no-cusparse \
        --n 1280 --warmup 20 --iters 100 >"$L/ncu-run-$name.log" 2>&1
    echo "ncu $name rc $?"
    ncu -i "$L/t-$name.ncu-rep" --print-details all >"$L/t-$name.txt" 2>&1
    ncu -i "$L/t-$name.ncu-rep" --page raw --csv >"$L/t-$name-raw.csv" 2>&1
    rm -f "$L/t-$name.ncu-rep"
    pk "ncu $name"
done
tiles_run edge-d0.5 80 --densities 0.5 --n 1280,1281
tiles_run edge-d0.1 80 --densities 0.1 --n 1280,1281
pk edges
