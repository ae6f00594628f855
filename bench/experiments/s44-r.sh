#!/usr/bin/env bash
# Session 44, one device call for the pipelined consumer loop of the fused product (one wgmma group per 16-column
# step: a fragment is gathered once the group that last read it has completed, so up to three groups run while the
# warp decodes) against the loop before (one group per slice, waited for before the next slice's gather).
# Not landed in session 44 (no device machine could be started: bench/NOTES.md, session 44): the loop is
# bench/experiments/s44-pipe.patch. To run: `git apply bench/experiments/s44-pipe.patch`, build 90-real with
# MACKO_WERROR and stage macko-bench, macko_tests and libmacko as build-carry/f.tar.xz; build-carry/v.tar.xz is the
# tree without the patch (its macko-bench: the old loop); build-carry/e.tar.xz (optional) a variant's macko-bench.
# (1) The A/B, old / F / E, d = 0.5, n = 16-2048 on the quick shapes. (2) The four sanitizers over the tests that
# run the changed loop (graph capture, the narrow instance, the clusters' split K, stream-K's tail split) beside every
# GpuTiles test and Plan*. (3) Where F took less time than old (geomean over the A/B's rows), the tables of record
# (d = 0.5 and 0.3), the fused product forced at n = 2048 / 4096 (the rule's panels), and the 7B end-to-end of the
# tile layout at d = 0.5 with what is left.
set -u
# shellcheck source=device-run.sh
CARRY=f.tar.xz OLD_CARRY=v.tar.xz . bench/experiments/device-run.sh s44r
[ -f build-carry/e.tar.xz ] && mkdir -p /tmp/e && tar -xJf build-carry/e.tar.xz -C /tmp/e
NL=16,64,128,256,512,2048
TILES_BIN=$OLD tiles_run old-1 60 --densities 0.5 --n $NL
tiles_run new-1 60 --densities 0.5 --n $NL
[ -x /tmp/e/bench/macko-bench ] && TILES_BIN=/tmp/e/bench/macko-bench tiles_run e-1 60 --densities 0.5 --n $NL
pk ab
python3 bench/experiments/ab-compare.py "$L" old-1.csv:new-1.csv | tail -n 8
[ -f "$L/e-1.csv" ] && python3 bench/experiments/ab-compare.py "$L" old-1.csv:e-1.csv:old:E | tail -n 8
san_bg 200 g 'GpuTiles/*.GraphCapture*:GpuTiles/*.FusedNarrowSplitK' memcheck racecheck initcheck synccheck
san_bg 200 cl 'GpuTiles/H.FusedSplitKInClusters' memcheck initcheck synccheck
san_bg 200 tail 'GpuTiles/H.FusedTailSplit' memcheck racecheck
tiles_tests 200
san_sum
pk sanitizers
GAIN=$(python3 - "$L" <<'PY'
import csv, math, sys
d = sys.argv[1]
def load(f):
    return {(r['rows'], r['cols'], r['density'], r['n']): float(r['macko_us']) for r in csv.DictReader(open(f"{d}/{f}"))}
try:
    a, b = load('old-1.csv'), load('new-1.csv')
    k = [x for x in b if x in a]
    print(1 if k and math.exp(sum(math.log(b[x] / a[x]) for x in k) / len(k)) < 0.99 else 0)
except Exception:
    print(0)
PY
)
echo "F faster: $GAIN"
[ "$GAIN" = 1 ] || exit 0
ntables 100 0.5 0.3
# the fused product forced where the rule takes the panels (n >= MACKO_TILES_PANEL_N_WG = 1281), the same binary
[ "$(elapsed)" -lt 380 ] || exit 0
tiles_run auto-p 60 --densities 0.5 --n 2048,4096
tiles_run fused-p 60 --densities 0.5 --n 2048,4096 --tiles-path fused
pk panels
python3 bench/experiments/ab-compare.py "$L" auto-p.csv:fused-p.csv:panels:fused | tail -n 4
e2e_tiles 520 s44-tiles
