#!/usr/bin/env bash
# Session 42, fifth run: what clusters of 4 would give the 4096-row shapes at n = 65-256 if they fit (the H100 holds
# 30 clusters of 4; those shapes have 32 tiles): 3840-row shapes (30 tiles, the rule's 4 splits) at n = 128 / 256,
# split K through the workspace (--tiles-cluster -1) against clusters, alternating, twice. Carry: build-carry/c.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=c.tar.xz . bench/experiments/device-run.sh s42q
tiles_alt 40 ws "--tiles-cluster -1" cl "" --densities 0.5 --n 128,256 --shapes 3840x4096,3840x11008
