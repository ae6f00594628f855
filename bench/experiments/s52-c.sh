#!/usr/bin/env bash
# Session 52, call 3 (H100): the TF32x3 form with its per-stage sums (the tensor cores' truncating accumulation kept to
# one K-stage; build-carry/t.tar.xz) and the new start of the SIMT path: its fp32 tests, the plan tests and the four
# sanitizers over the fp32 products side by side (each cut at ${TS:-150} s); then the automatic path (TF32x3 from
# macko_plan_simt_from) against cublasSgemm (TF32 off) by n at d = 0.5, 0.3, 0.1 and 0.7 (each cut at ${BS:-100} s).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=t.tar.xz . bench/experiments/device-run.sh s52c
san_bg "${TS:-150}" s 'GpuSpmmSimt.PathsAgainstTheDoubleReference' memcheck racecheck initcheck synccheck
tests_parts "${TS:-150}" 'GpuSpmmSimt.PathsAgainstTheDoubleReference' \
    'GpuSpmmSimt.*-GpuSpmmSimt.PathsAgainstTheDoubleReference:Plan*'
san_sum
pk checks
S_Q="--type S --flush rotate --shapes quick --no-cusparse"
for run in "0.5 16,17,20,24,32,48,64,128,256,512,2048" "0.3 16,20,24,28,32,48,64,128,256,512,2048" \
    "0.1 24,28,32,40,48,56,64,256,2048" "0.7 16,17,24,64,256,2048"; do
    set -- $run
    # shellcheck disable=SC2086
    timeout "${BS:-100}" "$BENCH" $S_Q --densities "$1" --n "$2" \
        --csv "$L/S-auto-d$1.csv" --md "$L/S-auto-d$1.md" >"$L/S-auto-d$1.log" 2>&1
    echo "S auto $1 rc $?"
    pk "S auto $1"
    grep "^| 0" "$L/S-auto-d$1.log"
done
