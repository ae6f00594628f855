#!/usr/bin/env bash
# Session 37's fourth device run (bench/NOTES.md session 37): the fused product's consumers give their stage back
# before they wait for the next one when the next has not landed (session 37's ncu: at width 128, n = 128, 27 % of
# the warps' samples wait for a stage to fill while the producer waits for an empty one). Carry build-carry/n.tar.xz
# (23aebc2 + s37-tiles-wg-early-release.patch, 90-real, Werror) and build-carry/o.tar.xz (macko-bench of 23aebc2). Steps, each alone: the
# tile tests; old and new macko-bench on the quick shapes, n = 32 .. 512 at d = 0.5, 64 / 128 at d = 0.3;
# compute-sanitizer's four tools over GpuTiles*; ncu's stall sampling of the new kernel at n = 128 if time is left.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s37r
mkdir -p /tmp/o && tar -xJf build-carry/o.tar.xz -C /tmp/o
OLD=/tmp/o/bench/macko-bench
tests_alone '*Tiles*' 150
pk gtest
Q="--layout tiles --flush rotate --shapes quick --no-cusparse"
for v in old new; do
    B=$BENCH; [ $v = old ] && B=$OLD
    timeout 60 $B $Q --densities 0.5 --n 32,64,128,256,512 --csv "$L/$v-d0.5.csv" >"$L/$v-d0.5.log" 2>&1
    echo "$v 0.5 rc $?"
    timeout 30 $B $Q --densities 0.3 --n 64,128 --csv "$L/$v-d0.3.csv" >"$L/$v-d0.3.log" 2>&1
    echo "$v 0.3 rc $?"
    pk "ab $v"
done
python3 - "$L" <<'PY'
import csv, sys, math
L = sys.argv[1]
def ld(f):
    try:
        return {(r['rows'], r['cols'], r['density'], r['n']): r for r in csv.DictReader(open(f"{L}/{f}"))}
    except Exception as e:
        print(f, e); return {}
for d in ("0.5", "0.3"):
    O, N = ld(f"old-d{d}.csv"), ld(f"new-d{d}.csv")
    by = {}
    for k in sorted(N, key=lambda k: (int(k[3]), int(k[0]), int(k[1]))):
        if k not in O: continue
        o, n = float(O[k]['macko_us']), float(N[k]['macko_us'])
        cb = float(N[k]['cublas_us'])
        print(d, k[3], k[0], k[1], f"old {o:.1f} new {n:.1f} ratio {n/o:.3f} cublas {cb:.1f} new-speedup {cb/n:.3f}", N[k]['status'])
        by.setdefault(k[3], []).append((n / o, cb / n, float(O[k]['cublas_us']) / o))
    for nn, v in by.items():
        g = lambda i: math.exp(sum(math.log(x[i]) for x in v) / len(v))
        print(f"d {d} n {nn}: new/old time {g(0):.3f}, speedup new {g(1):.3f} old {g(2):.3f}")
PY
F='GpuTiles*'
LEFT=$((420 - $(elapsed)))
[ "$LEFT" -gt 200 ] && LEFT=200
echo "sanitizers get $LEFT s"
(for tool in memcheck racecheck initcheck synccheck; do
    for s in 0 1; do
        { MACKO_TEST_REPEATS=3 GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$s timeout "$LEFT" compute-sanitizer --tool $tool \
              --error-exitcode 99 $T --gtest_color=no --gtest_filter="$F" >"$L/san-$tool-$s.log" 2>&1
          echo "$tool $s rc $?" >>"$L/san-rc.txt"; } &
    done
done; wait)
cat "$L/san-rc.txt"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^\[  PASSED\|^\[  FAILED" "$L"/san-*.log | sort | uniq -c
pk sanitizers
if [ "$(elapsed)" -lt 440 ]; then
    timeout 40 ncu --section WarpStateStats --section SourceCounters --print-details all -k regex:tiles_wg -c 1 \
        -o "$L/w128" $BENCH --layout tiles --tiles-path fused --shapes 12288x12288 --densities 0.5 --no-cusparse \
        --n 128 >"$L/ncu-128.log" 2>&1
    echo "ncu rc $?"
    ncu -i "$L/w128.ncu-rep" --page source --csv --print-source sass >"$L/w128-sass.csv" 2>&1
    rm -f "$L/w128.ncu-rep"
    pk ncu
fi
