#!/usr/bin/env bash
# Session 46's first device run. Three builds of the tile kernel (n <= 16 on Hopper), one run:
#   old: b29fc84 (library code of e17c352; build-carry/hb.tar.xz, macko-bench)
#   kw:  + bench/experiments/s45-tiles-kg-choice.patch (groups of 16 tiles chosen per matrix at upload where that kernel
#        keeps >= 3 blocks an SM; build-carry/kwb.tar.xz, macko-bench)
#   bk:  kw + each warp's records of a group by one bulk copy on a per-warp mbarrier on sm_90 (s46-tiles-bulk.patch on
#        top of kw; build-carry/bk.tar.xz, macko-bench and macko_tests)
# n = 1 / 8 / 16 at d = 0.5 and 0.3, quick shapes, alternating; ncu's executed instructions per SASS line of the tile
# kernel (12288^2, n = 8); then bk's tile tests and the four sanitizers over its tile products, side by side.
set -u
# shellcheck source=device-run.sh
CARRY=bk.tar.xz OLD_CARRY=hb.tar.xz . bench/experiments/device-run.sh s46a
mkdir -p /tmp/k && tar -xJf build-carry/kwb.tar.xz -C /tmp/k
KW=/tmp/k/bench/macko-bench
for d in 0.5 0.3; do
    TILES_BIN=$OLD tiles_run "old-d$d" 40 --densities "$d" --n 1,8,16
    TILES_BIN=$KW tiles_run "kw-d$d" 40 --densities "$d" --n 1,8,16
    tiles_run "bk-d$d" 40 --densities "$d" --n 1,8,16
    pk "timing $d"
done
for d in 0.5 0.3; do
    ab_pairs "-d$d" old:kw old:bk kw:bk # (ran as a loop printing 8 lines a pair; the helper since)
done
# ncu: per-instruction executed counts (SourceCounters) and warp states of one launch of the tile kernel
prof() {
    local name=$1 bin=$2 d=$3
    timeout 75 ncu --section SourceCounters --section WarpStateStats --section InstructionStats --section Occupancy \
        --section LaunchStats --metrics smsp__inst_executed.sum,gpu__time_duration.sum -k regex:tiles_kernel -c 1 \
        -o "$L/$name" "$bin" --layout tiles --tiles-path kernel --shapes 12288x12288 \
        --densities "$d" --no-cusparse --n 8 --warmup 20 --iters 100 >"$L/$name.txt" 2>&1
    echo "ncu $name rc $?"
    ncu --import "$L/$name.ncu-rep" --print-details all >"$L/$name-details.txt" 2>&1
    ncu --import "$L/$name.ncu-rep" --page source --csv --print-source sass >"$L/$name-sass.csv" 2>&1
    echo "sass $name rc $? $(wc -l <"$L/$name-sass.csv") lines"
}
prof ncu-old-d0.5 "$OLD" 0.5
prof ncu-kw-d0.3 "$KW" 0.3
prof ncu-bk-d0.5 "$BENCH" 0.5
pk ncu
LEFT=$((545 - $(elapsed)))
[ "$LEFT" -lt 60 ] && LEFT=60
[ "$LEFT" -gt 200 ] && LEFT=200
echo "tests and sanitizers get $LEFT s"
tiles_checks "$LEFT" # (written out in the script when it ran; the helper since)
pk end
