#!/usr/bin/env bash
# Session 50's A/B of the tile kernel's 24-column tile (n = 17-24: three n8 MMAs a tile where the 32-column tile does
# four) and of groups of 16 tiles at 24 / 32 columns (bench/NOTES.md, session 49, "Next"), then the tile tests and
# the four sanitizers over the fp16 tile products on the new kernels.
# build-carry/x.tar.xz: the working tree's macko-bench and tests (90-real); build-carry/e4.tar.xz: 69ed547's (OLD).
# Per density, quick shapes, n = 16, 17, 20, 24, 32: `a` 69ed547 automatic (the fused wgmma product from n = 17), `k`
# 69ed547's tile kernel forced (32-column tile from 17), `n` the new tile kernel forced (24 columns up to n = 24),
# `w` the same with groups of 16 tiles forced. Each run cut at ${AB_S:-40} s.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=x.tar.xz OLD_CARRY=e4.tar.xz . bench/experiments/device-run.sh s50b
NL=16,17,20,24,32
for d in 0.5 0.3; do
    TILES_BIN=$OLD tiles_run "a-d$d" "${AB_S:-40}" --densities "$d" --n $NL
    TILES_BIN=$OLD tiles_run "k-d$d" "${AB_S:-40}" --densities "$d" --n $NL --tiles-path kernel
    tiles_run "n-d$d" "${AB_S:-40}" --densities "$d" --n $NL --tiles-path kernel
    tiles_run "w-d$d" "${AB_S:-40}" --densities "$d" --n $NL --tiles-path kernel --tiles-kg 16
    pk "d $d"
done
for d in 0.5 0.3; do
    ab_pairs "-d$d" a:k a:n a:w k:n n:w
done
tiles_checks "${CHK_S:-200}"
pk end
