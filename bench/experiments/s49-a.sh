#!/usr/bin/env bash
# Session 49's first device call: s48-d.sh (racecheck and synccheck over e3's fp16 tile products, racecheck over e's,
# one repeat each, cut at ${SECS:-210} s) with e3's whole GoogleTest binary in 8 shards beside them (cut at
# ${SUITE_S:-240} s). e3 = the landed tree (0f36f67) + s48-mbar-inval.patch (build-carry/e3.tar.xz); e = the landed
# tree (build-carry/e.tar.xz; OLD=f.tar.xz for 9519d46's).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e3.tar.xz . bench/experiments/device-run.sh s49a
mkdir -p /tmp/x && tar -xJf "build-carry/${OLD:-e.tar.xz}" -C /tmp/x
F='GpuTiles/H.ProductsAgainstTheDoubleReference'
one() { # TOOL TAG BINARY
    { MACKO_TEST_REPEATS=1 timeout "${SECS:-210}" compute-sanitizer --tool "$1" --error-exitcode 99 "$3" \
          --gtest_color=no --gtest_filter="$F" >"$L/san-$1-$2.log" 2>&1
      echo "$1 $2 rc $? at $(elapsed) s" >>"$L/san-rc.txt"; } &
}
one racecheck e3 "$T"
one synccheck e3 "$T"
one racecheck x /tmp/x/testing/macko_tests # x: e (or OLD)
suite_shards "${SUITE_S:-240}"
san_sum
grep -h "Race reported\|Invalid\|hazard" "$L"/san-racecheck-*.log | sed 's/0x[0-9a-f]*/ADDR/g' | sort | uniq -c | head -20
pk end
