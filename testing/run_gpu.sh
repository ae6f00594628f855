#!/usr/bin/env bash
# Runs the GPU checks of macko on a machine with an NVIDIA GPU, from the repository root:
#   1. the device and toolkit (nvidia-smi -L, nvcc --version);
#   2. the whole GoogleTest binary (every CPU and GPU test);
#   3. compute-sanitizer memcheck, racecheck, initcheck and synccheck on a reduced GPU filter;
#   4. the quick timing of the benchmark driver (12288x12288 at d = 0.5 and 0.3, fp16 and fp32).
#
# usage: testing/run_gpu.sh [BUILD_DIR]
#   BUILD_DIR  a build tree made elsewhere (holding testing/macko_tests or macko_tests, and bench/macko-bench or
#              macko-bench). Without it the script configures and builds in build-gpu/ with
#              CMAKE_CUDA_ARCHITECTURES="90-real;90-virtual".
# environment:
#   OUT               when set, every log goes there (else build-gpu/logs or BUILD_DIR/logs)
#   SANITIZER_FILTER  gtest filter for the sanitizer runs (default: the small GPU SpMV tests)
#   SKIP_SANITIZER=1, SKIP_BENCH=1   leave those steps out
#   BENCH_ARGS        extra arguments for the benchmark driver
# Exit status: 0 when every step that ran passed, else 1. The last lines are a summary table.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

BUILD=${1:-}
if [ -z "$BUILD" ]; then
    BUILD=build-gpu
    LOGDIR=${OUT:-$BUILD/logs}
    mkdir -p "$LOGDIR"
    echo "== configuring and building in $BUILD"
    { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" &&
      cmake --build "$BUILD" -j "$(nproc)"; } >"$LOGDIR/build.log" 2>&1
    rc=$?
    tail -n 20 "$LOGDIR/build.log"
    if [ $rc -ne 0 ]; then
        echo "build FAILED (see build.log)"
        exit 1
    fi
else
    LOGDIR=${OUT:-$BUILD/logs}
    mkdir -p "$LOGDIR"
fi

first_of() {
    for f in "$@"; do
        if [ -x "$f" ]; then
            echo "$f"
            return 0
        fi
    done
    return 1
}
TESTS=$(first_of "$BUILD/testing/macko_tests" "$BUILD/macko_tests") || { echo "no macko_tests under $BUILD"; exit 1; }
BENCH=$(first_of "$BUILD/bench/macko-bench" "$BUILD/macko-bench") || BENCH=""

declare -a SUMMARY
FAILED=0
note() { # name rc detail
    local verdict=PASS
    if [ "$2" -ne 0 ]; then verdict=FAIL; FAILED=1; fi
    SUMMARY+=("$(printf '%-28s %-5s %s' "$1" "$verdict" "$3")")
}

echo "== device"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; \
  nvcc --version 2>/dev/null || echo "nvcc: not on PATH"; } 2>&1 | tee "$LOGDIR/device.log"

echo "== all tests: $TESTS"
"$TESTS" --gtest_color=no >"$LOGDIR/tests.log" 2>&1
rc=$?
tail -n 40 "$LOGDIR/tests.log"
counts=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGDIR/tests.log" | grep -E 'test' | tr -s ' ' | tr '\n' ';')
note "gtest (all)" $rc "$counts"

if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
    FILTER=${SANITIZER_FILTER:-'GpuSpmv/*.ZeroSizes:GpuSpmv/*.AlphaZeroReadsNoX:GpuSpmv/*.NonFinite*:GpuSpmv/*.KernelVariantsAgreeBitwise:GpuSpmv/*.GraphCaptureAndReplay:GpuSpmv/*.BadArgumentsByPosition:GpuSpmv/*.StreamsAndTwoHandles'}
    if command -v compute-sanitizer >/dev/null 2>&1; then
        for tool in memcheck racecheck initcheck synccheck; do
            echo "== compute-sanitizer --tool $tool ($FILTER)"
            compute-sanitizer --tool "$tool" --error-exitcode 99 "$TESTS" --gtest_color=no --gtest_filter="$FILTER" \
                >"$LOGDIR/sanitizer-$tool.log" 2>&1
            rc=$?
            tail -n 6 "$LOGDIR/sanitizer-$tool.log"
            note "compute-sanitizer $tool" $rc "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGDIR/sanitizer-$tool.log" | tail -n 1)"
        done
    else
        echo "compute-sanitizer not found"
        note "compute-sanitizer" 1 "not found"
    fi
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
    if [ -n "$BENCH" ]; then
        for t in H S; do
            echo "== $BENCH --quick12288 --type $t ${BENCH_ARGS:-}"
            # shellcheck disable=SC2086
            "$BENCH" --quick12288 --type $t --md "$LOGDIR/bench-quick-$t.md" ${BENCH_ARGS:-} \
                >"$LOGDIR/bench-quick-$t.log" 2>&1
            rc=$?
            tail -n 12 "$LOGDIR/bench-quick-$t.log"
            note "bench quick12288 $t" $rc "see bench-quick-$t.log"
        done
    else
        echo "no macko-bench under $BUILD: timing skipped"
        note "bench" 0 "skipped: no macko-bench"
    fi
fi

echo
echo "== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1))"
for l in "${SUMMARY[@]}"; do echo "$l"; done
exit $FAILED
