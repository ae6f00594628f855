#!/usr/bin/env bash
# Session 50's last device call, on the final tree's build (build-carry/y.tar.xz, 90-real): the whole GoogleTest
# binary in 8 shards (cut at ${SUITE_S:-200} s), then the automatic path against 69ed547's (build-carry/e4.tar.xz) at
# n = 16, 17, 20, 24, 25, 32, quick shapes, d = 0.5 and 0.3 (each run cut at ${AB_S:-35} s): the 24-column tile where
# MACKO_TILES_N24_ELEMS takes it, the fused product elsewhere, and no step down from 24 to 25. On an H200 also the
# tile layout's tables by n (none of their n is in 17-24: the same kernels as 69ed547's there).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=y.tar.xz OLD_CARRY=e4.tar.xz . bench/experiments/device-run.sh s50d
suite_shards "${SUITE_S:-200}"
NL=16,17,20,24,25,32
for d in 0.5 0.3; do
    TILES_BIN=$OLD tiles_run "a-d$d" "${AB_S:-35}" --densities "$d" --n $NL
    tiles_run "y-d$d" "${AB_S:-35}" --densities "$d" --n $NL
    pk "d $d"
done
for d in 0.5 0.3; do
    python3 bench/experiments/ab-compare.py "$L" "a-d$d.csv:y-d$d.csv:old:new" 2>/dev/null | tail -n 6
done
if grep -q H200 "$L/gpu.txt"; then
    ntables "${NT_S:-95}" 0.5 0.3
fi
pk end
