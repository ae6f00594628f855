# Sourced by the device scripts of bench/experiments (from session 36 on): `. bench/experiments/device-run.sh NAME`
# unpacks the carried build (build-carry/b.tar.xz, as s34-next-runs.sh says, or build-carry/$CARRY) into /tmp/b and sets L (the logs,
# /tmp/logs-NAME), BENCH, T (the test binary), ROOT, OUTDIR ($OUT of the device tool), T0 and MACKO_LIBRARY /
# PYTHONPATH for the Python benchmarks; `pk STEP` packs the logs into $OUTDIR/NAME.tgz (so a run cut short still
# returns what it did) and prints the seconds since T0; `elapsed` prints them; `tests_alone FILTER SECONDS` runs the
# GoogleTest binary's FILTER in 4 shards side by side (nothing else on the GPU meanwhile: a benchmark never shares
# it), each cut at SECONDS, logs $L/gtest-*.log and sums them up. It records the GPU in $L/gpu.txt.
ROOT=$(pwd)
L=/tmp/logs-$1
mkdir -p "$L" /tmp/b
tar -xJf "build-carry/${CARRY:-b.tar.xz}" -C /tmp/b
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
