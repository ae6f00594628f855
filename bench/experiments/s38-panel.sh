#!/usr/bin/env bash
# Session 38's second device script (bench/NOTES.md session 38; written without a GPU): the wgmma panel GEMM in pairs
# of row blocks that share B (multicast; bench/experiments/s38-pairs.patch, test-only override --panel-mc) against
# single blocks, in one binary. Carry build-carry/n.tar.xz (the patched tree). Steps, each alone on the GPU:
# macko-bench with pairs off, then on (rows layout, d = 0.5, n = 1024 / 2048 / 4096 / 8192; the tile layout's panels at
# n = 2048 / 8192); then ncu's speed-of-light, memory and compute sections of one panel GEMM launch with and without
# pairs (12288^2, d = 0.5, n = 8192): whether B's L2 traffic was what held the GEMM at ~0.82x of cuBLAS.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s38p
ROWS_Q="--flush rotate --shapes quick --no-cusparse --densities 0.5"
for mc in -1 1; do
    # shellcheck disable=SC2086
    timeout 100 $BENCH $ROWS_Q --n 1024,2048,4096,8192 --panel-mc $mc --csv "$L/rows-mc$mc.csv" >"$L/rows-mc$mc.log" 2>&1
    echo "rows mc $mc rc $? at $(elapsed) s"
done
pk rows
for mc in -1 1; do
    tiles_run "tiles-mc$mc" 70 --densities 0.5 --n 2048,8192 --panel-mc $mc
done
pk tiles
python3 bench/experiments/ab-compare.py "$L" rows-mc-1.csv:rows-mc1.csv:single:pairs \
    tiles-mc-1.csv:tiles-mc1.csv:single:pairs
for mc in -1 1; do
    timeout 70 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
        -k regex:panel_wg -c 1 -o "$L/ncu-mc$mc" "$BENCH" --shapes 12288x12288 --densities 0.5 --no-cusparse --n 8192 \
        --panel-mc $mc >"$L/ncu-run-mc$mc.log" 2>&1
    echo "ncu mc $mc rc $?"
    ncu -i "$L/ncu-mc$mc.ncu-rep" --print-details all >"$L/ncu-mc$mc.txt" 2>&1
done
pk ncu
