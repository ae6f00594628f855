#!/usr/bin/env bash
# NOT RUN in session 47 (see s47-a.sh). Session 47's run on the final tree (build-carry/$CARRY, a 90-real build of
# macko-bench and macko_tests): the whole GoogleTest binary in 8 shards (nothing else on the GPU), then both layouts by
# n at n = 1..16 (the n the tile kernel serves; where s47-tiles-end lands, the fused product changes too: add device-
# run.sh's ntables for n >= 32), d = 0.5 and 0.3, on the quick shapes against cublasGemmEx in one run
# ($L/ntable16-LAYOUT-dD.{csv,md}).
set -u
# shellcheck shell=bash source=device-run.sh
. bench/experiments/device-run.sh s47b
suite_shards "${SUITE_S:-240}"
for d in 0.5 0.3; do
    for lay in tiles rows; do
        # shellcheck disable=SC2086
        timeout 60 "$BENCH" ${TILES_Q/--layout tiles/--layout $lay} --densities "$d" --n 1,2,4,8,16 \
            --csv "$L/ntable16-$lay-d$d.csv" --md "$L/ntable16-$lay-d$d.md" >"$L/ntable16-$lay-d$d.log" 2>&1
        echo "ntable16 $lay $d rc $?"
    done
    pk "ntables $d"
done
