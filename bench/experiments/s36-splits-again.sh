#!/usr/bin/env bash
# Session 36: the tile kernel's split rule (session 35) timed again, on whichever Hopper part the device tool lends
# (an H200 would check it off the H100 it was fitted on), in one call: the rule and forced counts 1 / 2 / 3 / 4 / 5 /
# 6 / 8 / 16 on the 8 fitted and 4 unfitted shapes at n = 8 / 16, d = 0.5 (`--tiles-path kernel`; the forced counts
# include both rules' counts on every cell; on Hopper the tile kernel runs n <= 16), then the tile layout by n at
# d = 0.5 with this build; about 320 s on an H100 (session 36's run 4 stopped the sweep at 190 s, before 8 and 16).
# Analysis: merge the sweep's CSVs as in bench/results/experiments/H100-2026-12-05-s36-tiles-splits-again.csv (run
# 'again'), then `python3 bench/experiments/s36-splits-check.py CSV again`. Build and carry as in s34-next-runs.sh.
set -u
# shellcheck source=device-run.sh
. bench/experiments/device-run.sh s36s
S="4096x4096,4096x11008,11008x4096,12288x12288,36864x12288,28672x8192,12288x4096,22016x4096"
S="$S,8192x8192,14336x4096,4096x14336,16384x4096"
for sp in auto 1 2 3 4 5 6 8 16; do
    [ $(elapsed) -gt 250 ] && break
    a=""
    [ "$sp" != auto ] && a="--tiles-splits $sp"
    # shellcheck disable=SC2086
    timeout 40 $BENCH --layout tiles --tiles-path kernel $a --flush rotate --shapes $S --densities 0.5 --no-cusparse \
        --n 8,16 --csv "$L/sw-s$sp.csv" >"$L/sw-s$sp.log" 2>&1
    echo "sweep $sp rc $?"
    pk "sweep $sp"
done
[ $(elapsed) -lt 300 ] && timeout 75 $BENCH --layout tiles --flush rotate --shapes quick --densities 0.5 \
    --no-cusparse --n 2,4,8,16,32,64,128,256,512,2048,8192 --csv "$L/tiles-d0.5.csv" --md "$L/tiles-d0.5.md" \
    >"$L/tiles-d0.5.log" 2>&1
echo "tiles 0.5 rc $?"
pk "ntable tiles 0.5"
