#!/usr/bin/env bash
# Session 50's first device call, for an H200 (the kind a plain run got then): the tile layout by n against
# cublasGemmEx on the quick shapes at d = 0.5 and 0.3 (each cut at ${NT_S:-95} s), then the 7B end-to-end of the tile
# layout at d = 0.5 (cut at ${E2E_S:-150} s), on the kernels of 69ed547 (build-carry/e4.tar.xz: macko-bench and the
# tests; build-carry/l4.tar.xz: libmacko.so for Python; both 90-real). The H200's last table by n (session 31)
# predates most of the tile layout's kernels; s49-g.sh asked for an H200 and got an H100.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e4.tar.xz . bench/experiments/device-run.sh s50a
tar -xJf build-carry/l4.tar.xz -C /tmp/b
ntables "${NT_S:-95}" 0.5 0.3
timeout "${E2E_S:-150}" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 --profile '' \
    --deadline-s $((${E2E_S:-150} - 20)) --out "$L" --tag s50-tiles >"$L/e2e-tiles.log" 2>&1
echo "e2e tiles rc $?"
tail -n 30 "$L/e2e-tiles.log"
pk end
