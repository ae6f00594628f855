#!/usr/bin/env bash
# Runs the GPU checks of macko on a machine with an NVIDIA GPU, from the repository root:
#   1. the device and toolkit (nvidia-smi -L, nvcc --version);
#   2. the whole GoogleTest binary (every CPU and GPU test), then the fault-injection binary (testing/fault) plain and
#      under compute-sanitizer memcheck;
#   3. the examples' GPU paths where their binaries are in BUILD (C demo, C spmv loop vs cuBLAS, C and Fortran CG vs
#      LAPACK, Fortran SpMV example and host test), and the Python wrapper tests + examples/python_linear.py when
#      python3 with numpy (and torch) runs;
#   4. compute-sanitizer memcheck, racecheck, initcheck and synccheck, each over the whole GPU suite except GpuLarge
#      (2.4e9 entries: hours under a sanitizer) and the conversion timing (GpuConvertTiming), in gtest shards that all
#      run in parallel; the suite is the typed suites Gpu*/H, Gpu*/S, GpuProduct/Hspmv, ... and the parameter tables
#      <Table>/Gpu*.<Test>/<row> (testing/RELIABILITY.md, "GPU conformance harness"), hence both patterns;
#   5. the quick timing of the benchmark driver (12288x12288 at d = 0.5 and 0.3, fp16 and fp32);
#   6. with RUN_E2E=1, a smoke run of the end-to-end benchmark bench/e2e_llm.py (--preset tiny: seconds) when
#      python3 has torch with CUDA and transformers.
#
# usage: testing/run_gpu.sh [BUILD_DIR]
#   BUILD_DIR  a build tree made elsewhere (holding testing/macko_tests or macko_tests, and bench/macko-bench or
#              macko-bench). Without it the script configures and builds in build-gpu/ with
#              CMAKE_CUDA_ARCHITECTURES="90-real;90-virtual".
# environment:
#   OUT               when set, every log goes there (else build-gpu/logs or BUILD_DIR/logs)
#   SANITIZER_FILTER  gtest filter for the sanitizer runs (default: every GPU test but GpuLarge and GpuConvertTiming)
#   RACECHECK_SHARDS  gtest shards for racecheck (default 6; the other tools use 2)
#   SANITIZER_TIMEOUT seconds each sanitizer run may take (default: no limit); a run cut short counts as FAIL
#   SKIP_FAULT=1, SKIP_EXAMPLES=1, SKIP_SANITIZER=1, SKIP_BENCH=1   leave those steps out (SKIP_SANITIZER also
#                     leaves out the fault test's memcheck run)
#   BENCH_ARGS        extra arguments for the benchmark driver
#   RUN_E2E=1         also step 6; E2E_ARGS replaces its arguments (default: the tiny smoke test)
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

if [ "${SKIP_FAULT:-0}" != 1 ]; then
    # Fault injection on the real device (testing/fault): every allocation and CUDA call of each routine failed in
    # turn, every success compared bit for bit; then the same under compute-sanitizer memcheck (failure paths that
    # free memory a kernel still uses, or copy from freed memory, show up there).
    FAULT=$(first_of "$BUILD/testing/fault/macko_fault_tests" "$BUILD/macko_fault_tests")
    if [ -n "$FAULT" ]; then
        echo "== fault injection: $FAULT"
        "$FAULT" --gtest_color=no >"$LOGDIR/fault.log" 2>&1
        rc=$?
        tail -n 50 "$LOGDIR/fault.log"
        note "fault injection" $rc "$(grep -E '^fault injection:' "$LOGDIR/fault.log" | tail -n 1 | cut -c1-160)"
        if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
            echo "== fault injection under compute-sanitizer memcheck"
            ${SANITIZER_TIMEOUT:+timeout "$SANITIZER_TIMEOUT"} compute-sanitizer --tool memcheck --error-exitcode 99 \
                "$FAULT" --gtest_color=no >"$LOGDIR/fault-memcheck.log" 2>&1
            rc=$?
            tail -n 5 "$LOGDIR/fault-memcheck.log"
            note "fault injection memcheck" $rc "$(grep -E 'ERROR SUMMARY' "$LOGDIR/fault-memcheck.log" | tail -n 1)"
        fi
    else
        echo "no macko_fault_tests under $BUILD (MACKO_BUILD_FAULT_TESTS=OFF?)"
        note "fault injection" 1 "no macko_fault_tests under $BUILD"
    fi
fi

if [ "${SKIP_EXAMPLES:-0}" != 1 ]; then
    # Each example exits non-zero when its GPU result disagrees with its reference (cuBLAS / torch.matmul).
    run_example() { # name command...
        local name=$1
        shift
        echo "== example $name"
        "$@" >"$LOGDIR/example-$name.log" 2>&1
        local rc=$?
        tail -n 8 "$LOGDIR/example-$name.log"
        note "example $name" $rc "$(tail -n 1 "$LOGDIR/example-$name.log")"
    }
    EX=$(first_of "$BUILD/examples/macko-demo") && run_example demo "$EX"
    EX=$(first_of "$BUILD/examples/macko-example-spmv-loop") && run_example spmv_loop "$EX"
    if EX=$(first_of "$BUILD/examples/macko-example-cg"); then
        run_example cg "$EX"
        run_example cg_laplacian "$EX" --laplacian 40
    fi
    EX=$(first_of "$BUILD/interfaces/fortran/macko_fortran_example_spmv" "$BUILD/fortran/macko_fortran_example_spmv") &&
        run_example fortran_spmv "$EX"
    EX=$(first_of "$BUILD/interfaces/fortran/macko_fortran_example_cg" "$BUILD/fortran/macko_fortran_example_cg") &&
        run_example fortran_cg "$EX"
    EX=$(first_of "$BUILD/interfaces/fortran/macko_fortran_test_host" "$BUILD/fortran/macko_fortran_test_host") &&
        run_example fortran_test_host "$EX"
    LIB=$(first_of "$BUILD/libmacko.so" "$BUILD/src/libmacko.so") || LIB=""
    if [ -n "$LIB" ] && python3 -c 'import numpy' >/dev/null 2>&1; then
        export MACKO_LIBRARY=$LIB
        export PYTHONPATH=$ROOT/interfaces/python${PYTHONPATH:+:$PYTHONPATH}
        if python3 -c 'import pytest' >/dev/null 2>&1; then
            run_example pytest python3 -m pytest "$ROOT/interfaces/python/tests" -q -p no:cacheprovider
        fi
        run_example python_linear python3 "$ROOT/examples/python_linear.py"
    else
        echo "python3 with numpy or libmacko.so not found: Python checks skipped"
    fi
fi

if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
    FILTER=${SANITIZER_FILTER:-'Gpu*:*/Gpu*-GpuLarge.*:*Timing*'}
    if command -v compute-sanitizer >/dev/null 2>&1; then
        # Each tool's test list is split into gtest shards (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX) that run side by
        # side with the other tools' shards: racecheck is by far the slowest, so it gets the most.
        echo "== compute-sanitizer memcheck, racecheck, initcheck, synccheck in parallel shards ($FILTER)"
        declare -A SHARDS=([memcheck]=2 [racecheck]=${RACECHECK_SHARDS:-6} [initcheck]=2 [synccheck]=2)
        declare -A SAN_PID
        for tool in memcheck racecheck initcheck synccheck; do
            for ((i = 0; i < SHARDS[$tool]; i++)); do
                # Under racecheck the 100-repetition determinism tests run 3 repetitions (MACKO_TEST_REPEATS): the
                # same kernels and inputs, checked for hazards; the plain run above does the 100.
                reps=100
                [ "$tool" = racecheck ] && reps=3
                MACKO_TEST_REPEATS=$reps GTEST_TOTAL_SHARDS=${SHARDS[$tool]} GTEST_SHARD_INDEX=$i \
                    ${SANITIZER_TIMEOUT:+timeout "$SANITIZER_TIMEOUT"} compute-sanitizer --tool "$tool" \
                    --error-exitcode 99 "$TESTS" --gtest_color=no --gtest_filter="$FILTER" \
                    >"$LOGDIR/sanitizer-$tool-$i.log" 2>&1 &
                SAN_PID[$tool-$i]=$!
            done
        done
        for tool in memcheck racecheck initcheck synccheck; do
            trc=0
            passed=0
            failed=0
            errors=""
            for ((i = 0; i < SHARDS[$tool]; i++)); do
                wait "${SAN_PID[$tool-$i]}"
                rc=$?
                [ $rc -ne 0 ] && trc=$rc
                log="$LOGDIR/sanitizer-$tool-$i.log"
                p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
                f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
                passed=$((passed + ${p:-0}))
                failed=$((failed + ${f:-0}))
                errors="$errors$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1 | sed 's/=* *//');"
                echo "-- $tool shard $i (exit $rc): $(tail -n 1 "$log")"
            done
            note "compute-sanitizer $tool" $trc "${SHARDS[$tool]} shards: $passed passed, $failed failed; $errors"
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

if [ "${RUN_E2E:-0}" = 1 ]; then
    LIB=$(first_of "$BUILD/libmacko.so" "$BUILD/src/libmacko.so") || LIB=""
    if [ -n "$LIB" ] && python3 -c 'import torch, transformers; assert torch.cuda.is_available()' >/dev/null 2>&1; then
        E2E_ARGS=${E2E_ARGS:-"--preset tiny --prompt-lens 64,256 --batches 1,4 --new-tokens 20 --densities 0.5"}
        echo "== bench/e2e_llm.py $E2E_ARGS"
        # shellcheck disable=SC2086
        MACKO_LIBRARY=$LIB PYTHONPATH=$ROOT/interfaces/python${PYTHONPATH:+:$PYTHONPATH} \
            python3 "$ROOT/bench/e2e_llm.py" $E2E_ARGS --out "$LOGDIR" >"$LOGDIR/e2e.log" 2>&1
        rc=$?
        tail -n 12 "$LOGDIR/e2e.log"
        note "e2e_llm (tiny)" $rc "see e2e.log and e2e-*.md"
    else
        echo "libmacko.so, or python3 with torch (CUDA) and transformers, not found: e2e skipped"
        note "e2e_llm" 0 "skipped: no torch/transformers"
    fi
fi

echo
echo "== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1))"
for l in "${SUMMARY[@]}"; do echo "$l"; done
exit $FAILED
