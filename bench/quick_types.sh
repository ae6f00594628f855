#!/usr/bin/env bash
# The value types of issue 17 on the quick shapes, one command: macko-bench with the same options for fp16, bf16 and
# fp64 (the same seed, so the same positions and random numbers for every type), then bf16 against fp16
# (compare_types.py: issue 17's "within 3 %") and the fp64 speedups (the geometric-mean table of the fp64 report:
# vs cublasDgemv and vs cuSPARSE fp64, with the smallest over one shape).
#
#   bench/quick_types.sh OUT_PREFIX [macko-bench options...]     e.g.
#   bench/quick_types.sh bench/results/H100-types --flush rotate --densities 0.7,0.5,0.3,0.1
#
# Writes OUT_PREFIX-{H,B,D}.{csv,md} and OUT_PREFIX-B-vs-H.md. MACKO_BENCH names the binary (default:
# build/bench/macko-bench); TYPES the types to run (default "H B D"). Exit status: the first failing macko-bench's.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,10p' "$0"; exit 1; }
prefix=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
bench=${MACKO_BENCH:-$here/../build/bench/macko-bench}
status=0
for t in ${TYPES:-H B D}; do
  echo "== quick_types: --type $t" >&2
  "$bench" --type "$t" "$@" --csv "$prefix-$t.csv" --md "$prefix-$t.md" >/dev/null || { rc=$?; [ $status -ne 0 ] || status=$rc; }
done
if [ -s "$prefix-H.csv" ] && [ -s "$prefix-B.csv" ]; then
  python3 "$here/compare_types.py" "$prefix-H.csv" "$prefix-B.csv" --md "$prefix-B-vs-H.md" | sed -n '/^| density/,$p'
fi
if [ -s "$prefix-D.md" ]; then
  echo
  echo "fp64 ($prefix-D.md):"
  sed -n '/^Geometric mean/,/^$/p;/^| density | n | shapes/,/^$/p' "$prefix-D.md" | grep '^|' || true
fi
exit $status
