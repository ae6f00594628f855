#!/usr/bin/env bash
# Session 51, the group-size rule on an H100: the automatic path of e01bc4e (build-carry/y.tar.xz) against the
# candidate's (build-carry/c.tar.xz: macko_tiles_kg with the launch model), same run, alternating, at n = 8 / 16 / 24
# and d = 0.5 / 0.3 on the 11 shapes of s51-b.sh (each run cut at ${AB_S:-70} s).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=c.tar.xz OLD_CARRY=y.tar.xz . bench/experiments/device-run.sh s51e
SH=8192x8192,8192x28672,14336x4096,28672x8192,12288x12288,4096x11008,11008x4096,4096x4096,22016x4096,12288x4096,36864x12288
for d in 0.5 0.3; do
    for side in y c; do
        bin=$BENCH
        [ "$side" = y ] && bin=$OLD
        timeout "${AB_S:-70}" "$bin" --layout tiles --flush rotate --no-cusparse --shapes "$SH" --densities "$d" \
            --n 8,16,24 --csv "$L/$side-d$d.csv" >"$L/$side-d$d.log" 2>&1
        echo "$side $d rc $?"
    done
    pk "d $d"
done
for d in 0.5 0.3; do
    python3 bench/experiments/ab-compare.py "$L" "y-d$d.csv:c-d$d.csv:y:c" 2>/dev/null | tail -n 3
done
pk end
