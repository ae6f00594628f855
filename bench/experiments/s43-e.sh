#!/usr/bin/env bash
# Session 43's last device run, on the final kernels (run 2's build: the narrow instance at width 64): the tile layout
# by n (issue 16's list and 1280) at d = 0.5 and 0.3 on the quick shapes against cublasGemmEx (the tables of record;
# rotate flush), then the 7B end-to-end of the tile layout at d = 0.5 again (batch 32 runs the narrow instance). The
# tests and sanitizers of this build ran in s43-n.sh. Carry build-carry/n.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s43e
# (d = 0.3 ran as a call of its own after this one: the e2e_llm.py line below with --densities 0.3 --tag s43-tiles-d03)
ntables 100 0.5 0.3
LEFT=$((560 - $(elapsed)))
[ "$LEFT" -gt 90 ] && timeout "$LEFT" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 \
    --profile '' --deadline-s $((LEFT - 10)) --out "$L" --tag s43-tiles-final >"$L/e2e-tiles.log" 2>&1
echo "e2e tiles rc $? (left $LEFT s)"
tail -n 14 "$L/e2e-tiles.log"
pk e2e-tiles
