#!/usr/bin/env bash
# Session 52, call 1 (H100): fp32 SpMM on the tensor cores (issue 16, deliverable 3). The carried build
# (build-carry/s.tar.xz: the SIMT kernel's TF32x3 form, the fp32 panel path) first runs its fp32 tests, the plan and
# 16-bit panel tests, and compute-sanitizer's four tools over the fp32 products (both SIMT forms, the panels) and the
# fp32 panel decode, all side by side (each cut at ${TS:-230} s); then macko-bench, fp32 against cublasSgemm (TF32 off):
# the SIMT path forced in its TF32x3 form at d = 0.5 and 0.3, and in its FMA form at d = 0.5 (each cut at ${BS:-110} s).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=s.tar.xz . bench/experiments/device-run.sh s52a
san_bg "${TS:-230}" s 'GpuSpmmSimt.PathsAgainstTheDoubleReference:GpuSpmmSimt.RowsDecodeDenseWritesTheFp32Matrix' \
    memcheck racecheck initcheck synccheck
tests_parts "${TS:-230}" 'GpuSpmmSimt.PathsAgainstTheDoubleReference' \
    'GpuSpmmSimt.*-GpuSpmmSimt.PathsAgainstTheDoubleReference' \
    'Plan*:GpuSpmmTc/*.RowsDecode*:GpuSpmmTc/*.PanelGemmChoice*:GpuSpmmTc/*.CallersWorkspace*' \
    'GpuSpmmTc/*.PathsAgainstTheDoubleReference'
san_sum
pk checks
S_Q="--type S --flush rotate --shapes quick --no-cusparse --mm-path simt"
for run in "tf32x3 0.5" "tf32x3 0.3" "fma 0.5"; do
    set -- $run
    # shellcheck disable=SC2086
    timeout "${BS:-110}" "$BENCH" $S_Q --simt-form "$1" --densities "$2" --n 16,32,64,128,256,512,2048 \
        --csv "$L/S-$1-d$2.csv" --md "$L/S-$1-d$2.md" >"$L/S-$1-d$2.log" 2>&1
    echo "S $1 $2 rc $?"
    pk "S $1 $2"
    tail -n 12 "$L/S-$1-d$2.log"
done
