#!/usr/bin/env bash
# Session 51, on the H200 that s51-b.sh got (warm): the tile layout's tables by n at d = 0.5 / 0.3 (each cut at
# ${NT_S:-95} s) on the candidate build (build-carry/c.tar.xz), and the 7B end-to-end of the tile layout at d = 0.5
# (cut at ${E2E_S:-150} s) with the library of e01bc4e (build-carry/ly.tar.xz; the 7B shapes take the same groups
# under both rules at the batches timed).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=c.tar.xz . bench/experiments/device-run.sh s51c
tar -xJf build-carry/ly.tar.xz -C /tmp/b
ntables "${NT_S:-95}" 0.5 0.3
timeout "${E2E_S:-150}" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 --profile '' \
    --deadline-s $((${E2E_S:-150} - 20)) --out "$L" --tag s51-tiles >"$L/e2e-tiles.log" 2>&1
echo "e2e tiles rc $?"
tail -n 30 "$L/e2e-tiles.log"
pk end
