#!/usr/bin/env bash
# Session 36's device run (bench/NOTES.md session 36), one GPU, one call of the device tool: the tile tests with the
# fused product no longer taking n = 16 (MACKO_TILES_WG_N_FILL removed), the 7B end-to-end of the rows layout alone
# (session 36's first one ran beside a test shard and is void), the 7B end-to-end of the tile layout, and the tile
# layout's n = 8 / 16 (d = 0.5) and n-table at d = 0.3. Build and carry as in s34-next-runs.sh (build-carry/b.tar.xz,
# a build of this tree; set up by device-run.sh, which session 36 ran with its lines inline). Packs $OUT/s36.tgz
# after every step, so a run cut short still returns what it did.
set -u
# shellcheck source=device-run.sh
. bench/experiments/device-run.sh s36
# the tests alone (nothing else runs beside them)
tests_alone '*Tiles*' 150
pk gtest
timeout 130 python3 bench/e2e_llm.py --densities 0.5,0.3 --batches 1,8,32 --profile '' --deadline-s 120 \
    --out "$L" --tag s36-rows >"$L/e2e-rows.log" 2>&1
echo "e2e rows rc $?"
tail -3 "$L/e2e-rows.log"
pk e2e-rows
LEFT=$((450 - $(elapsed)))
[ "$LEFT" -gt 60 ] && timeout "$LEFT" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 \
    --profile '' --deadline-s $((LEFT - 10)) --out "$L" --tag s36-tiles >"$L/e2e-tiles.log" 2>&1
echo "e2e tiles rc $?"
tail -3 "$L/e2e-tiles.log"
pk e2e-tiles
[ $(elapsed) -lt 480 ] && timeout 30 $BENCH --layout tiles --flush rotate --shapes quick --densities 0.5 \
    --no-cusparse --n 8,16 --csv "$L/tiles-d0.5-n16.csv" >"$L/tiles-d0.5-n16.log" 2>&1
echo "tiles 0.5 n16 rc $?"
pk "tiles n16"
[ $(elapsed) -lt 500 ] && timeout 75 $BENCH --layout tiles --flush rotate --shapes quick --densities 0.3 \
    --no-cusparse --n 2,4,8,16,32,64,128,256,512,2048,8192 --csv "$L/tiles-d0.3.csv" --md "$L/tiles-d0.3.md" \
    >"$L/tiles-d0.3.log" 2>&1
echo "tiles 0.3 rc $?"
pk "ntable tiles 0.3"
