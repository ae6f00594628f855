#!/usr/bin/env bash
# Session 42, third run: would the 4096-row shapes at n = 128 / 192 / 256 (32 tiles: the rule's 4 splits through the
# workspace, since the H100 holds 30 clusters of 4) gain from 3 or 2 splits in clusters (39 / 66 fit)? Forced splits
# (--tiles-splits; stream-K and the tail split off), alternating, twice. Carry: build-carry/c.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=c.tar.xz . bench/experiments/device-run.sh s42p
Q="--densities 0.5 --n 128,192,256 --shapes 4096x4096,4096x11008"
for i in 1 2; do
    for s in 4 3 2; do
        # shellcheck disable=SC2086
        tiles_run s$s-$i 40 $Q --tiles-splits $s
    done
done
pk probe
for i in 1 2; do
    python3 bench/experiments/ab-compare.py "$L" s4-$i.csv:s3-$i.csv:ws4:cl3 | head -6
    python3 bench/experiments/ab-compare.py "$L" s4-$i.csv:s2-$i.csv:ws4:cl2 | head -6
done
