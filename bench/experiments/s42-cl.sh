#!/usr/bin/env bash
# Session 42: the fused product's split K in thread-block clusters (a tile's splits sum through distributed shared
# memory instead of the workspace and the last block). `bash s42-cl.sh 1` was the first run (clusters at every width;
# width 64's sum then loaded one part at a time: its 96 registers spilled with more in flight), `bash s42-cl.sh 2` the
# second, on the final code (widths 128 and 256 only). Carry: build-carry/c.tar.xz (the tree with the change, 90-real,
# MACKO_WERROR: bench/macko-bench, bench/macko-caps (prints the device's cluster counts: macko_tiles_wg_prepare, then
# macko_tiles_wg_cluster_caps, for both types), testing/macko_tests, libmacko.so*) and build-carry/o.tar.xz (the
# tree's macko-bench before the change). 5 / 6 minutes:
#   1. the clusters of 2..8 blocks the device holds at once, per width and type;
#   2. every GpuTiles test and the Plan tests in processes side by side, cut at 170 s;
#   3. memcheck, racecheck, initcheck and synccheck over FusedSplitKInClusters, GraphCaptureGivesTheSameBits and
#      H.FusedTailSplit (its tail launch in clusters and through the workspace); run 2: FusedTailSplit apart
#      (memcheck, racecheck and initcheck), as run 1's racecheck over all three was cut at 170 s;
#   4. run 1: same-run A/B against the tree before at d = 0.5, n = 32 / 64 / 128 / 256 / 512 on the quick shapes;
#      run 2: the same binary with split K through the workspace (--tiles-cluster -1) and in clusters, twice each,
#      alternating, at n = 384 / 512 / 1280 (where the automatic rule's launches take clusters: 2 splits of the
#      4096-row shapes, the tail splits), then the A/B against the tree before at n = 32 / 64 / 128 / 256 (no
#      clusters there: the code's other cost).
set -u
RUN=${1:-2}
# shellcheck source=device-run.sh
CARRY=c.tar.xz OLD_CARRY=o.tar.xz . bench/experiments/device-run.sh "s42-cl$RUN"
/tmp/b/bench/macko-caps | tee "$L/caps.txt"
tiles_tests 170
CL='GpuTiles/*.FusedSplitKInClusters:GpuTiles/*.GraphCaptureGivesTheSameBits'
if [ "$RUN" = 1 ]; then
    san_bg 170 all "$CL:GpuTiles/H.FusedTailSplit" memcheck racecheck initcheck synccheck
else
    san_bg 200 cl "$CL" memcheck racecheck initcheck synccheck
    san_bg 200 tail 'GpuTiles/H.FusedTailSplit' memcheck racecheck initcheck
fi
san_sum
pk sanitizers
if [ "$RUN" = 1 ]; then
    tiles_ab 0.5 32,64,128,256,512 75
    python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv | tail -36
    exit 0
fi
tiles_alt 80 ws "--tiles-cluster -1" cl "" --densities 0.5 --n 384,512,1280
tiles_ab 0.5 32,64,128,256 70
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv | tail -4
