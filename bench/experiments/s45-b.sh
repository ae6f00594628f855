#!/usr/bin/env bash
# Session 45, meant for an H200 (the README's H200 table was session 31's), run on the warm H100 the tool kept: both
# layouts by n (issue 16's list and 1280) at d = 0.5 and 0.3 on the quick shapes against cublasGemmEx in one run of
# one binary (the README's table now). Carry build-carry/h.tar.xz (as s45-a.sh).
set -u
# shellcheck source=device-run.sh
CARRY=h.tar.xz . bench/experiments/device-run.sh s45b
ntables 110 0.5 0.3
for d in 0.5 0.3; do
    timeout 110 "$BENCH" --layout rows --flush rotate --shapes quick --no-cusparse --densities "$d" \
        --n 1,2,4,8,16,32,64,128,256,512,1280,2048,8192 --csv "$L/ntable-rows-d$d.csv" --md "$L/ntable-rows-d$d.md" \
        >"$L/ntable-rows-d$d.log" 2>&1
    echo "rows $d rc $?"
    pk "rows $d"
done
