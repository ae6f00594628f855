#!/usr/bin/env bash
# Session 51's first device call, on the tree's build (build-carry/y.tar.xz: macko-bench and the tests, 90-real, the
# kernels of e01bc4e; build-carry/ly.tar.xz: its libmacko.so for Python). First the three test suites that session
# 50's last call cut (AlphaBeta/GpuScalars, NaNInB/GpuAlphaZero, StridedAndWide/GpuLayouts; 4 shards side by side).
# Then, by the GPU it got:
# - an H200: the tile layout's tables by n at d = 0.5 / 0.3 (each cut at ${NT_S:-95} s) and the 7B end-to-end of the
#   tile layout at d = 0.5 (cut at ${E2E_S:-150} s): the H200's tables of the tile layout's current kernels;
# - an H100: the tile kernel (--tiles-path kernel) with groups of 8 and of 16 tiles forced (--tiles-kg), each with
#   its automatic splits, at n = 8 / 16 / 24 / 32 and d = 0.3 / 0.5 / 0.7 on the quick shapes and five more (the
#   data for a group-size rule that sees the matrix's shape, session 50's "Next" (2)).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=y.tar.xz . bench/experiments/device-run.sh s51a
tar -xJf build-carry/ly.tar.xz -C /tmp/b
(for s in 0 1 2 3; do
    { GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s timeout "${CUT_S:-110}" "$T" --gtest_color=no \
          --gtest_filter='AlphaBeta/GpuScalars.*:NaNInB/GpuAlphaZero.*:StridedAndWide/GpuLayouts.*' \
          >"$L/gtest-$s.log" 2>&1; echo "shard $s rc $?" >>"$L/gtest-rc.txt"; } &
done; wait)
sort "$L/gtest-rc.txt"
grep -h "^\[  FAILED\|^\[  PASSED\|^\[  SKIPPED" "$L"/gtest-*.log | sort | uniq -c | head -20
pk tests
if grep -q H200 "$L/gpu.txt"; then
    ntables "${NT_S:-95}" 0.5 0.3
    timeout "${E2E_S:-150}" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1,8,32 --profile '' \
        --deadline-s $((${E2E_S:-150} - 20)) --out "$L" --tag s51-tiles >"$L/e2e-tiles.log" 2>&1
    echo "e2e tiles rc $?"
    tail -n 30 "$L/e2e-tiles.log"
else
    SH=4096x4096,4096x11008,11008x4096,12288x12288,36864x12288,28672x8192,12288x4096,22016x4096,8192x8192,8192x28672,14336x4096
    for kg in 8 16; do
        timeout "${KG_S:-150}" "$BENCH" --layout tiles --flush rotate --no-cusparse --shapes "$SH" \
            --densities 0.3,0.5,0.7 --n 8,16,24,32 --tiles-path kernel --tiles-kg $kg \
            --csv "$L/kg$kg.csv" >"$L/kg$kg.log" 2>&1
        echo "kg $kg rc $?"
        pk "kg $kg"
    done
    python3 bench/experiments/ab-compare.py "$L" "kg8.csv:kg16.csv:kg8:kg16" 2>/dev/null | tail -n 12
fi
pk end
