#!/usr/bin/env bash
# Session 42, fifth run: what clusters of 4 would give the 4096-row shapes at n = 65-256 if they fit (the H100 holds
# 30 clusters of 4; those shapes have 32 tiles): 3840-row shapes (30 tiles, the rule's 4 splits) at n = 128 / 256,
# split K through the workspace (--tiles-cluster -1) against clusters, alternating, twice. Carry: build-carry/c.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=c.tar.xz . bench/experiments/device-run.sh s42q
Q="--densities 0.5 --n 128,256 --shapes 3840x4096,3840x11008"
for i in 1 2; do
    # shellcheck disable=SC2086
    tiles_run ws-$i 40 $Q --tiles-cluster -1
    # shellcheck disable=SC2086
    tiles_run cl-$i 40 $Q
done
pk probe2
for i in 1 2; do
    python3 bench/experiments/ab-compare.py "$L" ws-$i.csv:cl-$i.csv:ws:cl 2>/dev/null | head -6
done
