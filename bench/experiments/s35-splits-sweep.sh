#!/usr/bin/env bash
# Session 35: the tile kernel's blocks along K (--tiles-splits) swept on the eight quick + 7B shapes at n = 8 / 16 / 32
# / 64, to fit and check a split rule (bench/NOTES.md, session 35). Uses the build carried as in s34-next-runs.sh
# (build-carry/b.tar.xz; any build of main since f380d4a). Packs $OUT/sweep.tgz after every step.
set -u
L=/tmp/logs-sweep
mkdir -p "$L" /tmp/b
tar -xJf build-carry/b.tar.xz -C /tmp/b
BENCH=/tmp/b/bench/macko-bench
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR"
T0=$(date +%s)
pk() { tar -czf "$OUTDIR/sweep.tgz" -C "$L" .; echo "$1 done at $(($(date +%s) - T0)) s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$L/gpu.txt" 2>&1
cat "$L/gpu.txt"
Q="4096x4096,4096x11008,11008x4096,12288x12288,36864x12288,28672x8192,12288x4096,22016x4096"
run() { # density, n list, split list
    for sp in $3; do
        a=""
        [ "$sp" != auto ] && a="--tiles-splits $sp"
        # shellcheck disable=SC2086
        timeout 60 $BENCH --layout tiles --tiles-path kernel $a --flush rotate --shapes $Q --densities $1 --no-cusparse \
            --n $2 --csv "$L/d$1-s$sp.csv" >"$L/d$1-s$sp.log" 2>&1
        echo "d $1 splits $sp rc $?"
        pk "d $1 s $sp"
    done
}
run 0.5 8,16,32,64 "auto 1 2 3 4 5 6 8 11 16 24"
run 0.3 8,32 "auto 2 3 4 6 8 11"
if [ $(($(date +%s) - T0)) -lt 480 ]; then
    for sp in 4 5; do
        timeout 60 ncu --section WarpStateStats --section SchedulerStats --section Occupancy --print-details all \
            -k regex:tiles_kernel -c 1 $BENCH --layout tiles --tiles-path kernel --tiles-splits $sp --shapes 12288x12288 \
            --densities 0.5 --no-cusparse --n 8 >"$L/ncu-n8-s$sp.txt" 2>&1
        echo "ncu s$sp rc $?"
        pk "ncu s$sp"
    done
fi
