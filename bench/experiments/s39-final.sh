#!/usr/bin/env bash
# Session 39's last device run, on the final tree (carry build-carry/n.tar.xz: 90-real, Werror): the whole GoogleTest
# binary in 8 shards side by side, nothing else on the GPU, each shard cut at 200 s.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s39f
(for s in 0 1 2 3 4 5 6 7; do
    { GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 200 "$T" --gtest_color=no >"$L/gtest-$s.log" 2>&1
      echo "shard $s rc $?" >>"$L/gtest-rc.txt"; } &
done; wait)
sort "$L/gtest-rc.txt"
grep -h "^\[  FAILED\|^\[  PASSED\|^\[  SKIPPED \] [0-9]" "$L"/gtest-*.log | sort | uniq -c
pk gtest
