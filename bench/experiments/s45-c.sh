#!/usr/bin/env bash
# Session 45: fp32 SpMM (macko_Sspmm, rows layout, the automatic path) against cublasSgemm (TF32 off) on the quick
# shapes at d = 0.5 and 0.3 on an H100 (issue 16's deliverable 3 had only H200 tables). Carry build-carry/h.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=h.tar.xz . bench/experiments/device-run.sh s45c
for d in 0.5 0.3; do
    timeout 200 "$BENCH" --type S --flush rotate --shapes quick --no-cusparse --densities "$d" \
        --n 8,16,32,64,128,256,512,2048 --csv "$L/S-rows-d$d.csv" --md "$L/S-rows-d$d.md" >"$L/S-rows-d$d.log" 2>&1
    echo "S $d rc $?"
    pk "S $d"
done
