#!/usr/bin/env bash
# Session 50's device call for whichever machine comes (s50-a.sh and the first form of this script got none): the A/B
# of the tile kernel's 24-column tile and of groups of 16 at 24 / 32 columns (build-carry/x.tar.xz, the working tree's
# build, against build-carry/e4.tar.xz, 69ed547's); on an H200 also the tile layout's tables by n (69ed547's
# macko-bench: the table's n list has no n in 17-24, and 32 takes the fused product, so they are the final kernels'
# tables there);
# then the tile tests and the four sanitizers over the fp16 tile products on the new kernels, cut at ${CHK_S:-200} s.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=x.tar.xz OLD_CARRY=e4.tar.xz . bench/experiments/device-run.sh s50c
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
if grep -q H200 "$L/gpu.txt"; then
    BENCH=$OLD ntables "${NT_S:-95}" 0.5 0.3
fi
tiles_checks "${CHK_S:-200}"
pk end
