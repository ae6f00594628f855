#!/usr/bin/env bash
# Reliability CI on a machine without a GPU (called by .ci/run after the main tests; its time: testing/RELIABILITY.md):
#   0. sanitizer canaries: a leak, a heap overflow, signed overflow and a data race must each be reported;
#   1. the whole CPU test suite (ctest; GPU tests skip themselves; MACKO_TEST_LARGE=1 adds the 2^31-entry host test)
#      built with AddressSanitizer + UBSan, leaks checked, the fault-injection tests (testing/fault) included;
#   2. the concurrency tests (Concurrency.*) built with ThreadSanitizer, repeated;
#   3. each libFuzzer target (clang) from the committed seed corpus for MACKO_FUZZ_SECONDS (60) seconds.
# Any sanitizer report, leak, fuzzer finding or test failure fails the script. Build folders: <prefix>asan,
# <prefix>tsan, <prefix>fuzz with prefix MACKO_REL_PREFIX (default "build-"); MACKO_REL_WERROR=OFF builds without
# -Werror. Findings and the fuzzers' new corpus entries stay in <prefix>fuzz/run-<target>/ for inspection.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=${MACKO_REL_PREFIX:-build-}
fuzz_seconds=${MACKO_FUZZ_SECONDS:-60}
werror=${MACKO_REL_WERROR:-ON}
jobs=$(nproc)
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
t0=$(date +%s)
step() { echo "== reliability [$(($(date +%s) - t0)) s]: $*"; }
failed=()

# allocator_may_return_null: the tests ask for impossible allocations (petabytes) and expect ALLOC_FAILED, which
# ASan would otherwise turn into a fatal report. protect_shadow_gap=0 lets the CUDA driver map its memory when this
# runs on a machine with a GPU.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:protect_shadow_gap=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
export LSAN_OPTIONS=report_objects=1

# The kernels as PTX only (90a-virtual; no ptxas, about half of their compile time): these builds check host code,
# and on a machine with a GPU the driver compiles the PTX at first use. MACKO_REL_CUDA_ARCHITECTURES overrides.
archs=${MACKO_REL_CUDA_ARCHITECTURES:-90a-virtual}
common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DMACKO_WERROR="$werror" -DCMAKE_CUDA_ARCHITECTURES="$archs"
        -DMACKO_BUILD_BENCH=OFF -DMACKO_TEST_PYTHON=OFF)

# ---------------------------------------------------------------- 0. the sanitizers are live
step "sanitizer canaries"
canary_dir=${prefix}asan/canary
mkdir -p "$canary_dir"
cc=${CC:-cc}
"$cc" -g -O1 -fsanitize=address -fno-omit-frame-pointer testing/canary/sanitizer_canary.c -o "$canary_dir/canary_asan"
"$cc" -g -O1 -fsanitize=undefined testing/canary/sanitizer_canary.c -o "$canary_dir/canary_ubsan"
"$cc" -g -O1 -fsanitize=thread testing/canary/sanitizer_canary.c -o "$canary_dir/canary_tsan" -lpthread
expect_report() { # binary mode headline
  local out rc=0
  out=$("$1" "$2" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ] && grep -q "$3" <<<"$out"; then
    echo "   canary '$2': reported ($3)"
  else
    echo "   canary '$2': NOT reported (exit $rc)"; echo "$out" | tail -n 20
    failed+=("canary $2")
  fi
}
expect_report "$canary_dir/canary_asan" leak "detected memory leaks"
expect_report "$canary_dir/canary_asan" overflow "heap-buffer-overflow"
expect_report "$canary_dir/canary_ubsan" ub "signed integer overflow"
expect_report "$canary_dir/canary_tsan" race "data race"

# ---------------------------------------------------------------- 1. ASan + UBSan: the CPU suite
step "ASan+UBSan build (${prefix}asan)"
cmake -S . -B "${prefix}asan" "${common[@]}" -DMACKO_SANITIZE=address,undefined >/dev/null
cmake --build "${prefix}asan" -j"$jobs" >"${prefix}asan/build.log" 2>&1 || { tail -n 50 "${prefix}asan/build.log"; exit 1; }
step "ASan+UBSan: ctest"
# MACKO_TEST_LARGE=1: also the 2^31-entry host test (Sizes64.HostEncodingWithTwoToThe31Entries, ~6 GiB, ~25 s).
if MACKO_TEST_LARGE=1 ctest --test-dir "${prefix}asan" --output-on-failure -j"$jobs" >"${prefix}asan/ctest.log" 2>&1; then
  echo "   $(grep -E 'tests passed' "${prefix}asan/ctest.log")," \
       "$(grep -c '(Skipped)' "${prefix}asan/ctest.log" || true) of them skipped (GPU tests on a machine without one)"
else
  tail -n 80 "${prefix}asan/ctest.log"
  failed+=("ASan+UBSan suite")
fi

# The fault-injection tests (testing/fault: every allocation, CUDA and file call of each routine failed in turn, on
# the shim's fake device here) ran in ctest above; run once more to print their counts.
step "ASan+UBSan: fault injection"
if "${prefix}asan/testing/fault/macko_fault_tests" --gtest_color=no >"${prefix}asan/fault.log" 2>&1; then
  echo "   $(grep -E '^fault injection:' "${prefix}asan/fault.log" | tail -n 1)"
  echo "   $(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "${prefix}asan/fault.log") tests passed" \
       "($(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "${prefix}asan/fault.log") skipped: GPU only)," \
       "no ASan, UBSan or leak report"
else
  tail -n 60 "${prefix}asan/fault.log"
  failed+=("fault injection")
fi

# ---------------------------------------------------------------- 2. TSan: the concurrency tests
step "TSan build (${prefix}tsan)"
cmake -S . -B "${prefix}tsan" "${common[@]}" -DMACKO_SANITIZE=thread -DMACKO_BUILD_EXAMPLES=OFF \
  -DMACKO_BUILD_FORTRAN=OFF >/dev/null
cmake --build "${prefix}tsan" -j"$jobs" --target macko_concurrency_tests >"${prefix}tsan/build.log" 2>&1 ||
  { tail -n 50 "${prefix}tsan/build.log"; exit 1; }
step "TSan: Concurrency.* x 5"
if "${prefix}tsan/testing/macko_concurrency_tests" --gtest_filter='Concurrency.*' --gtest_repeat=5 \
     >"${prefix}tsan/concurrency.log" 2>&1 && ! grep -q "ThreadSanitizer" "${prefix}tsan/concurrency.log"; then
  echo "   $(grep -c '^\[       OK \]' "${prefix}tsan/concurrency.log") test runs passed, no ThreadSanitizer report"
else
  tail -n 80 "${prefix}tsan/concurrency.log"
  failed+=("TSan concurrency tests")
fi

# ---------------------------------------------------------------- 3. fuzzing
step "fuzz build (${prefix}fuzz, clang-14)"
cmake -S . -B "${prefix}fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMACKO_WERROR="$werror" -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  "-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all" \
  -DMACKO_SANITIZE=address,undefined -DMACKO_SANITIZE_CUDA_HOST=OFF -DMACKO_BUILD_FUZZ=ON -DMACKO_BUILD_TESTS=OFF \
  -DMACKO_BUILD_EXAMPLES=OFF -DMACKO_BUILD_BENCH=OFF -DMACKO_BUILD_FORTRAN=OFF -DMACKO_TEST_PYTHON=OFF >/dev/null
cmake --build "${prefix}fuzz" -j"$jobs" --target fuzz_deserialize fuzz_csr fuzz_macko_import fuzz_encode_dense macko_fuzz_seeds \
  >"${prefix}fuzz/build.log" 2>&1 || { tail -n 50 "${prefix}fuzz/build.log"; exit 1; }
fuzz_bin=${prefix}fuzz/testing/fuzz

# The committed seeds are what the generator writes today (else: regenerate them, see testing/RELIABILITY.md).
rm -rf "${prefix}fuzz/seeds"
"$fuzz_bin/macko_fuzz_seeds" "${prefix}fuzz/seeds"
if ! diff -r "${prefix}fuzz/seeds" testing/fuzz/corpus >/dev/null; then
  echo "   testing/fuzz/corpus differs from what macko_fuzz_seeds writes:"; diff -r "${prefix}fuzz/seeds" testing/fuzz/corpus || true
  failed+=("seed corpus out of date")
fi

for t in deserialize csr macko_import encode_dense; do
  step "fuzz_$t for ${fuzz_seconds} s"
  work=${prefix}fuzz/run-$t
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/findings"
  rc=0
  "$fuzz_bin/fuzz_$t" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$work/findings/" "$work/corpus" "testing/fuzz/corpus/$t" \
    >"$work/fuzz.log" 2>&1 || rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/fuzz.log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -oE 'DONE +cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$work/fuzz.log" | tail -n 1 | sed -E 's/DONE +//' || true)
  findings=$(find "$work/findings" -type f | wc -l)
  if [ "$rc" -eq 0 ] && [ "$findings" -eq 0 ]; then
    echo "   fuzz_$t: $runs executions in ${fuzz_seconds} s, no finding ($cov)"
  else
    echo "   fuzz_$t: FINDING after $runs executions (exit $rc); inputs in $work/findings:"
    ls "$work/findings"
    grep -E -A 30 "ERROR|runtime error|fuzz check failed|Sanitizer" "$work/fuzz.log" | head -n 60
    failed+=("fuzz_$t")
  fi
done

step "done"
if [ ${#failed[@]} -gt 0 ]; then
  echo "reliability: FAILED: ${failed[*]}"
  exit 1
fi
echo "reliability: all steps passed in $(($(date +%s) - t0)) s"
