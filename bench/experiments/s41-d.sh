#!/usr/bin/env bash
# Session 41's third device run: where the fused product's split K stands after its new epilogue (7a8c23d) on the
# shapes with few tiles. Forced width (64 / 128 / 256) x blocks along K (1 / 2 / 4 / 8), stream-K and the tail split
# off, and the automatic rule, at d = 0.5, n = 64 / 128 / 256 / 512 on 4096^2, 4096 x 11008, 11008 x 4096, 12288^2
# (rotate flush); then ncu (SpeedOfLight, occupancy, launch, warp state; raw metrics) of the automatic rule on 4096^2
# at n = 128 and 256 (4 splits of 16 slices). Carry build-carry/n2.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=n2.tar.xz . bench/experiments/device-run.sh s41d
SH=4096x4096,4096x11008,11008x4096,12288x12288
tiles_run auto 40 --shapes $SH --densities 0.5 --n 64,128,256,512
for bn in 64 128 256; do
    for s in 1 2 4 8; do
        tiles_run "w$bn-s$s" 40 --shapes $SH --densities 0.5 --n 64,128,256,512 --tiles-path fused --tiles-bn $bn \
            --tiles-splits $s --tiles-stream -1 --tiles-tail -1
    done
    pk "width $bn"
done
NCU_SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
for n in 128 256; do
    # shellcheck disable=SC2086
    timeout 40 ncu $NCU_SEC --print-details all -k regex:tiles_wg -c 1 -o "$L/a-$n" $BENCH --layout tiles \
        --shapes 4096x4096 --densities 0.5 --no-cusparse --n $n >"$L/ncu-run-$n.log" 2>&1
    echo "ncu $n rc $?"
    ncu -i "$L/a-$n.ncu-rep" --print-details all >"$L/a-$n.txt" 2>&1
    ncu -i "$L/a-$n.ncu-rep" --page raw --csv >"$L/a-$n-raw.csv" 2>&1
    rm -f "$L/a-$n.ncu-rep"
done
pk ncu
