#!/usr/bin/env bash
# Session 37's fourth device run (bench/NOTES.md session 37): the fused product's consumers give their stage back
# before they wait for the next one when the next has not landed (session 37's ncu: at width 128, n = 128, 27 % of
# the warps' samples wait for a stage to fill while the producer waits for an empty one). Carry build-carry/n.tar.xz
# (23aebc2 + s37-tiles-wg-early-release.patch, 90-real, Werror) and build-carry/o.tar.xz (macko-bench of 23aebc2). Steps, each alone: the
# tile tests; old and new macko-bench on the quick shapes, n = 32 .. 512 at d = 0.5, 64 / 128 at d = 0.3;
# compute-sanitizer's four tools over GpuTiles*; ncu's stall sampling of the new kernel at n = 128 if time is left.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh s37r
tests_alone '*Tiles*' 150
pk gtest
tiles_ab 0.5 32,64,128,256,512 60
tiles_ab 0.3 64,128 30
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv old-d0.3.csv:new-d0.3.csv
sanitizers_until 420 'GpuTiles*'
if [ "$(elapsed)" -lt 440 ]; then
    timeout 40 ncu --section WarpStateStats --section SourceCounters --print-details all -k regex:tiles_wg -c 1 \
        -o "$L/w128" $BENCH --layout tiles --tiles-path fused --shapes 12288x12288 --densities 0.5 --no-cusparse \
        --n 128 >"$L/ncu-128.log" 2>&1
    echo "ncu rc $?"
    ncu -i "$L/w128.ncu-rep" --page source --csv --print-source sass >"$L/w128-sass.csv" 2>&1
    rm -f "$L/w128.ncu-rep"
    pk ncu
fi
