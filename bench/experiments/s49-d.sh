#!/usr/bin/env bash
# Session 49's fourth device call: the 7B end-to-end of the tile layout at d = 0.5 (time to first token at 512 and
# 2048 tokens, decode at batch 1 / 8 / 32) with the library of 69ed547 (90-real libmacko.so, build-carry/l4.tar.xz;
# the kernels of the tables of s49-b.sh). Last measured in session 43 (s43-e.sh); since then the tile kernel (n <= 16:
# bulk copies, groups of 16, the A fragments from `end`, the barrier of 69ed547) and the fused product (the A fragments).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=l4.tar.xz . bench/experiments/device-run.sh s49d
timeout "${E2E_S:-420}" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 --profile '' \
    --deadline-s $((${E2E_S:-420} - 20)) --out "$L" --tag s49-tiles >"$L/e2e-tiles.log" 2>&1
echo "e2e tiles rc $?"
tail -n 30 "$L/e2e-tiles.log"
pk end
