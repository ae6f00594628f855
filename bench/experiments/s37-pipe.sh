#!/usr/bin/env bash
# Session 37's second device run (bench/NOTES.md session 37): the fused product's widths 128 and 256 with one wgmma
# group per record (a record's fragment is built while the groups before it multiply), against the build before it.
# Carry build-carry/n.tar.xz (23aebc2 + s37-tiles-wg-pipelined-records.patch, 90-real, Werror) and build-carry/o.tar.xz (macko-bench of
# 23aebc2). Steps, each alone on the GPU: the tile tests of the new build; old and new macko-bench on the quick shapes
# at n = 65 .. 1024 (d = 0.5) and n = 128 / 512 (d = 0.3); the new one with the fused product forced at n = 2048 /
# 4096 against its automatic path there (the panels); compute-sanitizer's four tools over GpuTiles*.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s37p
mkdir -p /tmp/o && tar -xJf build-carry/o.tar.xz -C /tmp/o
OLD=/tmp/o/bench/macko-bench
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
python3 - "$L" <<'PY'
import csv, sys, math
L = sys.argv[1]
def ld(f):
    try:
        return {(r['rows'], r['cols'], r['density'], r['n']): r for r in csv.DictReader(open(f"{L}/{f}"))}
    except Exception as e:
        print(f, e); return {}
def ab(a, b, la, lb):
    O, N = ld(a), ld(b)
    by = {}
    for k in sorted(N, key=lambda k: (k[2], int(k[3]), int(k[0]), int(k[1]))):
        if k not in O: continue
        o, n = float(O[k]['macko_us']), float(N[k]['macko_us'])
        cb = float(N[k]['cublas_us'])
        print(k[2], k[3], k[0], k[1], f"{la} {o:.1f} {lb} {n:.1f} ratio {n/o:.3f} cublas {cb:.1f} {lb}-speedup {cb/n:.3f}", N[k]['status'])
        by.setdefault((k[2], k[3]), []).append((n / o, cb / n, float(O[k]['cublas_us']) / o))
    for (d, nn), v in by.items():
        g = lambda i: math.exp(sum(math.log(x[i]) for x in v) / len(v))
        print(f"d {d} n {nn}: {lb}/{la} time {g(0):.3f}, speedup {lb} {g(1):.3f} {la} {g(2):.3f}")
ab("old-d0.5.csv", "new-d0.5.csv", "old", "new")
ab("old-d0.3.csv", "new-d0.3.csv", "old", "new")
ab("new-auto-big.csv", "new-fused-big.csv", "auto", "fused")
PY
F='GpuTiles*'
LEFT=$((560 - $(elapsed)))
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
