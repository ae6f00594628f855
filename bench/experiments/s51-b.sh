#!/usr/bin/env bash
# Session 51, the data for the tile kernel's group size (session 50's "Next" (2)), on the candidate build
# (build-carry/c.tar.xz, 90-real: the tree of e01bc4e plus the launch-model rule of macko_tiles_kg): the tile kernel
# (--tiles-path kernel) with groups of 8 and of 16 tiles forced (--tiles-kg), each with its automatic splits, then the
# candidate's automatic choice, at n = 8 / 16 / 24 and d = 0.1 / 0.3 / 0.5 / 0.7 on 11 shapes (the quick six, the
# 7B model's fused 12288 x 4096 and 22016 x 4096, and 8192^2, 8192 x 28672, 14336 x 4096); each run cut at
# ${KG_S:-170} s, the shapes the rule changes first.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=c.tar.xz . bench/experiments/device-run.sh s51b
SH=8192x8192,8192x28672,14336x4096,28672x8192,12288x12288,4096x11008,11008x4096,4096x4096,22016x4096,12288x4096,36864x12288
for kg in 8 16 0; do
    timeout "${KG_S:-170}" "$BENCH" --layout tiles --flush rotate --no-cusparse --shapes "$SH" \
        --densities 0.1,0.3,0.5,0.7 --n 8,16,24 --tiles-path kernel --tiles-kg $kg \
        --csv "$L/kg$kg.csv" >"$L/kg$kg.log" 2>&1
    echo "kg $kg rc $?"
    pk "kg $kg"
done
python3 bench/experiments/ab-compare.py "$L" "kg8.csv:kg16.csv:kg8:kg16" 2>/dev/null | tail -n 12
pk end
