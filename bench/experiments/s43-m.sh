#!/usr/bin/env bash
# Session 43, run 1: the review's mends of session 42's clusters (one split-K sum through distributed shared memory
# for the fused product and the panel GEMM, wgmma.cuh's cluster_sum8 / add8 / ClusterLaunch; the panel GEMM's sum now
# from zero with all loads in flight). Carry build-carry/m.tar.xz (this tree, 90-real, MACKO_WERROR) and
# build-carry/q.tar.xz (087cc92's macko-bench, for the same-run A/B). About 8 minutes: the four sanitizers over the
# tests that take either sum beside the tile, panel and plan tests; the same-run A/B of the fused product (tile layout)
# and of the panel GEMM (rows layout, --mm-path panel); then the 7B end-to-end of the tile layout at d = 0.5.
set -u
# shellcheck source=device-run.sh
CARRY=m.tar.xz OLD_CARRY=q.tar.xz . bench/experiments/device-run.sh s43m
san_bg 170 cl 'GpuTiles/*.FusedSplitKInClusters:GpuSpmmTc/*.PanelSplitsInClusters' memcheck racecheck initcheck synccheck
tests_parts 170 'GpuTiles/*.FusedSplitKInClusters:GpuTiles/*.GraphCapture*:GpuTilesH.*:GpuTiles/*.FusedWidths*' \
    'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/H.FusedTailSplit:GpuTiles/B.FusedTailSplit' \
    'GpuTiles/*.IssueNList*:GpuTiles/*.Matrices*:GpuTiles/*.Transpose*:GpuTiles/*.Download*:GpuTiles/*.Panels*:Plan*' \
    'GpuSpmmTc*'
pk tests
san_sum
pk sanitizers
tiles_ab 0.5 256,512,1280 45
ROWS_Q="--layout rows --flush rotate --shapes quick --no-cusparse --mm-path panel --densities 0.5 --n 128,512"
for i in 1 2; do
    # shellcheck disable=SC2086
    timeout 45 "$OLD" $ROWS_Q --csv "$L/pold-$i.csv" >"$L/pold-$i.log" 2>&1; echo "panel old $i rc $?"
    # shellcheck disable=SC2086
    timeout 45 "$BENCH" $ROWS_Q --csv "$L/pnew-$i.csv" >"$L/pnew-$i.log" 2>&1; echo "panel new $i rc $?"
done
pk panel-ab
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv | tail -n 8
for i in 1 2; do python3 bench/experiments/ab-compare.py "$L" "pold-$i.csv:pnew-$i.csv" | tail -n 4; done
LEFT=$((570 - $(elapsed)))
[ "$LEFT" -gt 90 ] && timeout "$LEFT" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 \
    --profile '' --deadline-s $((LEFT - 10)) --out "$L" --tag s43-tiles >"$L/e2e-tiles.log" 2>&1
echo "e2e tiles rc $? (left $LEFT s)"
tail -n 30 "$L/e2e-tiles.log"
pk e2e-tiles
