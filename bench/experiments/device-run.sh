# Sourced by the device scripts of bench/experiments (from session 36 on): `. bench/experiments/device-run.sh NAME`
# unpacks the carried build (build-carry/b.tar.xz, as s34-next-runs.sh says, or build-carry/$CARRY) into /tmp/b and sets L (the logs,
# /tmp/logs-NAME), BENCH, T (the test binary), ROOT, OUTDIR ($OUT of the device tool), T0 and MACKO_LIBRARY /
# PYTHONPATH for the Python benchmarks; `pk STEP` packs the logs into $OUTDIR/NAME.tgz (so a run cut short still
# returns what it did) and prints the seconds since T0; `elapsed` prints them; `tests_alone FILTER SECONDS` runs the
# GoogleTest binary's FILTER in 4 shards side by side (nothing else on the GPU meanwhile: a benchmark never shares
# it), each cut at SECONDS, logs $L/gtest-*.log and sums them up; `sanitizers_alone FILTER SECONDS` runs
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck over FILTER (2 shards each, all side by side,
# MACKO_TEST_REPEATS=3), logs $L/san-*.log and sums them up. It records the GPU in $L/gpu.txt.
ROOT=$(pwd)
L=/tmp/logs-$1
mkdir -p "$L" /tmp/b
tar -xJf "build-carry/${CARRY:-b.tar.xz}" -C /tmp/b
# OLD_CARRY=ARCHIVE: a second build's macko-bench for same-run A/B (it links libmacko statically), unpacked to /tmp/o
OLD=
if [ -n "${OLD_CARRY:-}" ]; then
    mkdir -p /tmp/o && tar -xJf "build-carry/$OLD_CARRY" -C /tmp/o && OLD=/tmp/o/bench/macko-bench
fi
BENCH=/tmp/b/bench/macko-bench
T=/tmp/b/testing/macko_tests
export MACKO_LIBRARY=/tmp/b/libmacko.so.0.1.0 PYTHONPATH=$ROOT/interfaces/python
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR"
T0=$(date +%s)
RUN_NAME=$1
elapsed() { echo $(($(date +%s) - T0)); }
pk() { tar -czf "$OUTDIR/$RUN_NAME.tgz" -C "$L" .; echo "$1 done at $(elapsed) s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$L/gpu.txt" 2>&1
cat "$L/gpu.txt"
tests_alone() {
    (for s in 0 1 2 3; do
        { GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s timeout "$2" "$T" --gtest_color=no --gtest_filter="$1" \
              >"$L/gtest-$s.log" 2>&1; echo "shard $s rc $?" >>"$L/gtest-rc.txt"; } &
    done; wait)
    cat "$L/gtest-rc.txt"
    grep -h "^\[  FAILED\|^\[  PASSED\|^\[  SKIPPED" "$L"/gtest-*.log | sort | uniq -c | head
}
sanitizers_alone() {
    (for tool in memcheck racecheck initcheck synccheck; do
        for s in 0 1; do
            { MACKO_TEST_REPEATS=3 GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$s timeout "$2" compute-sanitizer --tool $tool \
                  --error-exitcode 99 "$T" --gtest_color=no --gtest_filter="$1" >"$L/san-$tool-$s.log" 2>&1
              echo "$tool $s rc $?" >>"$L/san-rc.txt"; } &
        done
    done; wait)
    cat "$L/san-rc.txt"
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^\[  PASSED\|^\[  FAILED" "$L"/san-*.log | sort | uniq -c
}
