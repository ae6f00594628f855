#!/usr/bin/env bash
# Session 45's device run on the tree of e17c352 (no kernel change since e53e718): the whole GoogleTest binary in 8
# shards alone (session 44's upload_wg refactor of testing/test_gpu_tiles.cpp had not run on a GPU), then the tile
# layout's tables by n at d = 0.5 and 0.3 on the quick shapes (the tables of record with width 64's split rule of
# 3dd0481, which session 43's predate). Carry build-carry/h.tar.xz (90-real build of e17c352: macko-bench, macko_tests,
# libmacko).
set -u
# shellcheck source=device-run.sh
CARRY=h.tar.xz . bench/experiments/device-run.sh s45a
(for s in 0 1 2 3 4 5 6 7; do
    { GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 230 "$T" --gtest_color=no >"$L/gtest-$s.log" 2>&1
      echo "shard $s rc $?" >>"$L/gtest-rc.txt"; } &
done; wait)
sort "$L/gtest-rc.txt"
grep -h "^\[  FAILED\|^\[  PASSED\|^\[  SKIPPED" "$L"/gtest-*.log | sort | uniq -c | head -20
grep -h "tests ran\|^\[  FAILED  \]" "$L"/gtest-*.log | head -20
pk tests
ntables 100 0.5 0.3
