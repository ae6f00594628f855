#!/usr/bin/env bash
# Session 43: width 64's split count on 4096 x 4096 at n = 17-64 (64 K-slices, 32 tiles: the rule takes 8 splits of 8
# slices, the most a wave of 264 blocks holds; session 41's sweep had 4 splits 0.94x its time at n = 64). The
# automatic rule against 4 / 5 / 6 splits forced, in the same binary, alternating, twice (d = 0.5; 4096 x 11008, 172
# slices in 8 splits of 22, beside it). Carry build-carry/n.tar.xz. About 2 minutes.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s43w64
for i in 1 2; do
    for s in 0 4 5 6; do
        tiles_run "s$s-$i" 30 --densities 0.5 --n 17,24,32,40,48,64 --shapes 4096x4096,4096x11008 --tiles-splits $s
    done
done
pk w64
for s in 4 5 6; do
    for i in 1 2; do python3 bench/experiments/ab-compare.py "$L" "s0-$i.csv:s$s-$i.csv:auto:s$s" | grep -v "^d "; done
done
