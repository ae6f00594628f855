#!/usr/bin/env bash
# Session 45: the tile kernel (n <= 16 on Hopper) with 3 stages of groups (s3: records and B two groups ahead of the
# multiply instead of one) and with groups of 16 tiles (k16: MACKO_TILES_KG 16, 2 stages), each against the tree's
# (e17c352: 2 stages of 8 tiles), n = 1 / 2 / 4 / 8 / 16 on the quick shapes at d = 0.5 and 0.3, alternating, twice;
# then the tile tests and compute-sanitizer's four tools with s3's test binary. s3 is bench/experiments/s45-tiles-
# 3stages.patch, k16 s45-tiles-kg16.patch (both against e17c352; neither landed: bench/NOTES.md, session 45).
# Carry build-carry/s3.tar.xz (s3's macko-bench and macko_tests), hb.tar.xz (the tree's macko-bench) and k16.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=s3.tar.xz OLD_CARRY=hb.tar.xz . bench/experiments/device-run.sh s45d
mkdir -p /tmp/k && tar -xJf build-carry/k16.tar.xz -C /tmp/k
for i in 1 2; do
    for d in 0.5 0.3; do
        TILES_BIN=$OLD tiles_run "old-d$d-$i" 60 --densities "$d" --n 1,2,4,8,16
        tiles_run "s3-d$d-$i" 60 --densities "$d" --n 1,2,4,8,16
        TILES_BIN=/tmp/k/bench/macko-bench tiles_run "k16-d$d-$i" 60 --densities "$d" --n 1,2,4,8,16
    done
done
pk timing
for i in 1 2; do
    for d in 0.5 0.3; do
        python3 bench/experiments/ab-compare.py "$L" "old-d$d-$i.csv:s3-d$d-$i.csv:old:s3" 2>/dev/null | tail -n 8
        python3 bench/experiments/ab-compare.py "$L" "old-d$d-$i.csv:k16-d$d-$i.csv:old:k16" 2>/dev/null | tail -n 8
    done
done
tiles_tests 120
LEFT=$((540 - $(elapsed)))
[ "$LEFT" -gt 150 ] && LEFT=150
if [ "$LEFT" -gt 40 ]; then
    san_bg "$LEFT" t 'GpuTiles/*.ProductsAgainstTheDoubleReference:GpuTilesH.*:GpuTiles/*.GraphCapture*' \
        memcheck racecheck initcheck synccheck
    san_sum
fi
pk sanitizers
