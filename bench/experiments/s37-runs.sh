#!/usr/bin/env bash
# Session 37's first device run (bench/NOTES.md session 37), one GPU, one call of the device tool: the fused
# product's width 128 as two blocks of 8 warps per SM (consumer warp 0 produces), against the one block of 12 warps
# before. Carry build-carry/n.tar.xz (a build of 23aebc2 with s37-tiles-wg-bn128-two-blocks.patch: 90-real, Werror) and
# build-carry/o.tar.xz (macko-bench of the build before it, 23aebc2). Steps, each alone on the GPU: the tile tests of the new build;
# old and new macko-bench (both link libmacko statically) at n = 64 / 65 / 96 / 128, d = 0.5 and 0.3; the new one with
# stream-K off, and width 128 forced at n = 192 / 256; then compute-sanitizer's four tools over GpuTiles*.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh s37
tests_alone '*Tiles*' 150
pk gtest
Q="--layout tiles --flush rotate --shapes quick --no-cusparse"
for d in 0.5 0.3; do
    timeout 60 $OLD $Q --densities $d --n 64,65,96,128 --csv "$L/old-d$d.csv" >"$L/old-d$d.log" 2>&1
    echo "old $d rc $?"
    timeout 60 $BENCH $Q --densities $d --n 64,65,96,128 --csv "$L/new-d$d.csv" >"$L/new-d$d.log" 2>&1
    echo "new $d rc $?"
    pk "ab $d"
done
timeout 40 $BENCH $Q --densities 0.5 --n 65,128 --tiles-stream -1 --csv "$L/new-nosk.csv" >"$L/new-nosk.log" 2>&1
echo "new no stream-K rc $?"
timeout 40 $BENCH $Q --densities 0.5 --n 192,256 --tiles-bn 128 --csv "$L/new-bn128.csv" >"$L/new-bn128.log" 2>&1
echo "new bn128 rc $?"
timeout 40 $BENCH $Q --densities 0.5 --n 192,256 --csv "$L/new-bn256.csv" >"$L/new-bn256.log" 2>&1
echo "new bn256 rc $?"
pk variants
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv old-d0.3.csv:new-d0.3.csv
F='GpuTiles*'
LEFT=$((570 - $(elapsed)))
[ "$LEFT" -gt 200 ] && LEFT=200
echo "sanitizers get $LEFT s"
sanitizers_alone "$F" "$LEFT"
pk sanitizers
