#!/usr/bin/env bash
# Session 35's check of the tile kernel's new split rule (src/tiles_device.c macko_tiles_auto_splits; bench/NOTES.md
# session 35) on one GPU, in one call of the device tool: the tile tests, the automatic rule on the swept shapes,
# a sweep on shapes the rule was not fitted on, the 7B end-to-end with the tile layout, the tile layout's n-table,
# the tile kernel against the fused wgmma product at n = 15 / 16. Order: the unfitted shapes' sweep, then the rest.
# Build and carry as in s34-next-runs.sh (build-carry/b.tar.xz, a build of this tree). Packs $OUT/s35.tgz after every
# step, so a run cut short still returns what it did. Its setup is device-run.sh's since session 36 (run 1 of session
# 36 ran it with the same lines inline).
set -u
# shellcheck source=device-run.sh
. bench/experiments/device-run.sh s35
tests_alone '*Tiles*' 60
pk gtest
O="8192x8192,14336x4096,4096x14336,16384x4096"
for sp in auto 1 2 3 4 6 8 16; do
    [ $(($(date +%s) - T0)) -gt 150 ] && break
    a=""
    [ "$sp" != auto ] && a="--tiles-splits $sp"
    # shellcheck disable=SC2086
    timeout 40 $BENCH --layout tiles --tiles-path kernel $a --flush rotate --shapes $O --densities 0.5 --no-cusparse \
        --n 8,16,32,64 --csv "$L/oos-s$sp.csv" >"$L/oos-s$sp.log" 2>&1
    echo "oos $sp rc $?"
    pk "oos $sp"
done
Q="4096x4096,4096x11008,11008x4096,12288x12288,36864x12288,28672x8192,12288x4096,22016x4096"
[ $(($(date +%s) - T0)) -lt 200 ] && timeout 60 $BENCH --layout tiles --tiles-path kernel --flush rotate --shapes $Q --densities 0.5 --no-cusparse \
    --n 8,16,32,64 --csv "$L/new-d0.5.csv" >"$L/new-d0.5.log" 2>&1; echo "new 0.5 rc $?"
[ $(($(date +%s) - T0)) -lt 230 ] && timeout 40 $BENCH --layout tiles --tiles-path kernel --flush rotate --shapes $Q --densities 0.3 --no-cusparse \
    --n 8,32 --csv "$L/new-d0.3.csv" >"$L/new-d0.3.log" 2>&1; echo "new 0.3 rc $?"
pk "new rule"
[ $(($(date +%s) - T0)) -lt 260 ] && timeout 90 python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 --profile '' --deadline-s 80 \
    --out "$L" --tag s35-tiles >"$L/e2e-tiles.log" 2>&1
echo "e2e tiles rc $?"
tail -3 "$L/e2e-tiles.log"
pk e2e
for d in 0.5 0.3; do
    [ $(($(date +%s) - T0)) -gt 300 ] && break
    timeout 70 $BENCH --layout tiles --flush rotate --shapes quick --densities $d --no-cusparse \
        --n 2,4,8,16,32,64,128,256,512,2048,8192 --csv "$L/tiles-d$d.csv" --md "$L/tiles-d$d.md" >"$L/tiles-d$d.log" 2>&1
    echo "tiles $d rc $?"
    pk "ntable tiles $d"
done
# n = 15 / 16: the tile kernel (new rule) against the fused wgmma product (Hopper, sm_90a), where
# MACKO_TILES_WG_N_FILL lets the fused product take n = 16 (bench/NOTES.md session 35, Next 2)
for p in kernel fused; do
    [ $(($(date +%s) - T0)) -gt 420 ] && break
    timeout 40 $BENCH --layout tiles --tiles-path $p --flush rotate --shapes $Q --densities 0.5 --no-cusparse \
        --n 15,16 --csv "$L/n16-$p.csv" >"$L/n16-$p.log" 2>&1
    echo "n16 $p rc $?"
    pk "n16 $p"
done
