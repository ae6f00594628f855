#!/usr/bin/env bash
# Session 37's second device run (bench/NOTES.md session 37): the fused product's widths 128 and 256 with one wgmma
# group per record (a record's fragment is built while the groups before it multiply), against the build before it.
# Carry build-carry/n.tar.xz (23aebc2 + s37-tiles-wg-pipelined-records.patch, 90-real, Werror) and build-carry/o.tar.xz (macko-bench of
# 23aebc2). Steps, each alone on the GPU: the tile tests of the new build; old and new macko-bench on the quick shapes
# at n = 65 .. 1024 (d = 0.5) and n = 128 / 512 (d = 0.3); the new one with the fused product forced at n = 2048 /
# 4096 against its automatic path there (the panels); compute-sanitizer's four tools over GpuTiles*.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh s37p
tests_alone '*Tiles*' 150
pk gtest
Q="--layout tiles --flush rotate --shapes quick --no-cusparse"
for v in old new; do
    B=$BENCH; [ $v = old ] && B=$OLD
    timeout 70 $B $Q --densities 0.5 --n 65,128,192,256,512,1024 --csv "$L/$v-d0.5.csv" >"$L/$v-d0.5.log" 2>&1
    echo "$v 0.5 rc $?"
    timeout 40 $B $Q --densities 0.3 --n 128,512 --csv "$L/$v-d0.3.csv" >"$L/$v-d0.3.log" 2>&1
    echo "$v 0.3 rc $?"
    pk "ab $v"
done
timeout 60 $BENCH $Q --densities 0.5 --n 2048,4096 --tiles-path fused --csv "$L/new-fused-big.csv" >"$L/new-fused-big.log" 2>&1
echo "new fused big rc $?"
timeout 60 $BENCH $Q --densities 0.5 --n 2048,4096 --csv "$L/new-auto-big.csv" >"$L/new-auto-big.log" 2>&1
echo "new auto big rc $?"
pk big
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv old-d0.3.csv:new-d0.3.csv \
    new-auto-big.csv:new-fused-big.csv:auto:fused
F='GpuTiles*'
LEFT=$((560 - $(elapsed)))
[ "$LEFT" -gt 200 ] && LEFT=200
echo "sanitizers get $LEFT s"
sanitizers_alone "$F" "$LEFT"
pk sanitizers
