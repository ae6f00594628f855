#!/usr/bin/env bash
# Session 49's last device call (about 300 s of budget left): is the tile kernel now faster than the fused wgmma
# product at n = 17-64? Session 36 set the crossover at 17 (n = 32: kernel 0.83x, fused 0.92x of cuBLAS); since then
# the tile kernel gained 6-15 % (sessions 46-49) and the fused product 5-7 %. Quick shapes, the automatic path (`a`,
# the fused product from 17) against the tile kernel forced (`k`, --tiles-path kernel), one binary (69ed547's kernels,
# build-carry/e4.tar.xz), d = 0.5 then 0.3, each run cut at 40 s; not alternated (no time for a second pair).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e4.tar.xz . bench/experiments/device-run.sh s49h
for d in 0.5 0.3; do
    tiles_run "a-d$d" 40 --densities "$d" --n 17,24,32,48,64
    tiles_run "k-d$d" 40 --densities "$d" --n 17,24,32,48,64 --tiles-path kernel
    pk "d $d"
done
ab_pairs "-d0.5" a:k
ab_pairs "-d0.3" a:k
