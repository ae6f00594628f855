#!/usr/bin/env bash
# Session 37's first device run (bench/NOTES.md session 37), one GPU, one call of the device tool: the fused
# product's width 128 as two blocks of 8 warps per SM (consumer warp 0 produces), against the one block of 12 warps
# before. Carry build-carry/n.tar.xz (a build of 23aebc2 with s37-tiles-wg-bn128-two-blocks.patch: 90-real, Werror) and
# build-carry/o.tar.xz (macko-bench of the build before it, 23aebc2). Steps, each alone on the GPU: the tile tests of the new build;
# old and new macko-bench (both link libmacko statically) at n = 64 / 65 / 96 / 128, d = 0.5 and 0.3; the new one with
# stream-K off, and width 128 forced at n = 192 / 256; then compute-sanitizer's four tools over GpuTiles*.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s37
mkdir -p /tmp/o && tar -xJf build-carry/o.tar.xz -C /tmp/o
OLD=/tmp/o/bench/macko-bench
tests_alone '*Tiles*' 150
pk gtest
Q="--layout tiles --flush rotate --shapes quick --no-cusparse"
for d in 0.5 0.3; do
    timeout 60 $OLD $Q --densities $d --n 64,65,96,128 --csv "$L/old-d$d.csv" >"$L/old-d$d.log" 2>&1
    echo "old $d rc $?"
    timeout 60 $BENCH $Q --densities $d --n 64,65,96,128 --csv "$L/new-d$d.csv" >"$L/new-d$d.log" 2>&1
    echo "new $d rc $?"
    pk "ab $d"
done
timeout 40 $BENCH $Q --densities 0.5 --n 65,128 --tiles-stream -1 --csv "$L/new-nosk.csv" >"$L/new-nosk.log" 2>&1
echo "new no stream-K rc $?"
timeout 40 $BENCH $Q --densities 0.5 --n 192,256 --tiles-bn 128 --csv "$L/new-bn128.csv" >"$L/new-bn128.log" 2>&1
echo "new bn128 rc $?"
timeout 40 $BENCH $Q --densities 0.5 --n 192,256 --csv "$L/new-bn256.csv" >"$L/new-bn256.log" 2>&1
echo "new bn256 rc $?"
pk variants
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
LEFT=$((570 - $(elapsed)))
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
