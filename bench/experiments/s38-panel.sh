#!/usr/bin/env bash
# Session 38's second device script (bench/NOTES.md session 38; written without a GPU): the wgmma panel GEMM in pairs
# of row blocks that share B (multicast; bench/experiments/s38-pairs.patch, test-only override --panel-mc) against
# single blocks, in one binary, and the tile layout's step from the fused product (n <= 2047) to the panels (n >=
# 2048). Carry build-carry/n.tar.xz (the patched tree). Steps, each alone on the GPU, packed after each:
# 1. macko-bench with pairs off, then on: rows layout and the tile layout's panels, d = 0.5, n = 2048 / 8192;
# 2. the tile layout at n = 1024 / 1280 / 1536 / 2047 with the fused product and with the panels forced: issue 16's
#    "no cliff" (session 37 timed the fused product at n = 2048 at 1.26x the panels, so n = 2047 -> 2048 likely drops
#    by ~20 %; the crossover where both take the same time is where MACKO_TILES_PANEL_N_WG should be);
# 3. ncu's speed-of-light, memory and compute sections of one panel GEMM launch without and with pairs (12288^2,
#    d = 0.5, n = 8192): whether B's L2 traffic was what held the GEMM at ~0.82x of cuBLAS.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s38p
for mc in -1 1; do # the rows layout: device-run.sh's tiles_run with the rows' options in place of TILES_Q
    TILES_Q="--flush rotate --shapes quick --no-cusparse" tiles_run "rows-mc$mc" 80 --densities 0.5 --n 2048,8192 \
        --panel-mc $mc
done
pk rows
for mc in -1 1; do
    tiles_run "tiles-mc$mc" 70 --densities 0.5 --n 2048,8192 --panel-mc $mc
done
pk tiles
python3 bench/experiments/ab-compare.py "$L" rows-mc-1.csv:rows-mc1.csv:single:pairs \
    tiles-mc-1.csv:tiles-mc1.csv:single:pairs
tiles_run cliff-fused 70 --densities 0.5 --n 1024,1280,1536,2047 --tiles-path fused
tiles_run cliff-panel 70 --densities 0.5 --n 1024,1280,1536,2047 --tiles-path panel
pk cliff
python3 bench/experiments/ab-compare.py "$L" cliff-fused.csv:cliff-panel.csv:fused:panels
for mc in -1 1; do
    timeout 60 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
        -k regex:panel_wg -c 1 -o "$L/ncu-mc$mc" "$BENCH" --shapes 12288x12288 --densities 0.5 --no-cusparse --n 8192 \
        --panel-mc $mc >"$L/ncu-run-mc$mc.log" 2>&1
    echo "ncu mc $mc rc $?"
    ncu -i "$L/ncu-mc$mc.ncu-rep" --print-details all >"$L/ncu-mc$mc.txt" 2>&1
done
pk ncu
