#!/usr/bin/env bash
# NOT RUN as such: it ran as session 49's s49-a.sh, with the suite beside it (16 race reports over each build).
# Written for session 48's last device call (about 370 s left after s48-c.sh's starts failed); then no
# machine could be started. The sanitizers of s48-c.sh over the fp16 tile products, one repeat each
# (MACKO_TEST_REPEATS=1, each cut at ${SECS:-210} s), side by side: racecheck and synccheck over e3
# (build-carry/e3.tar.xz: the tree as landed + s48-mbar-inval.patch, 90-real bench and tests; rebuild if absent),
# racecheck over e (build-carry/e.tar.xz: the landed tree, 0f36f67, bench and tests; s48-a.sh's racecheck over it
# reported 15 hazards: do they come back with one repeat, beside e3's?). OLD=f.tar.xz for 9519d46's build instead
# (is the hazard older than s47-tiles-end?): the carry holds two of these archives, not three.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e3.tar.xz . bench/experiments/device-run.sh s48d
mkdir -p /tmp/x && tar -xJf "build-carry/${OLD:-e.tar.xz}" -C /tmp/x
F='GpuTiles/H.ProductsAgainstTheDoubleReference'
one() { # TOOL TAG BINARY
    { MACKO_TEST_REPEATS=1 timeout "${SECS:-210}" compute-sanitizer --tool "$1" --error-exitcode 99 "$3" \
          --gtest_color=no --gtest_filter="$F" >"$L/san-$1-$2.log" 2>&1
      echo "$1 $2 rc $? at $(elapsed) s" >>"$L/san-rc.txt"; } &
}
one racecheck e3 "$T"
one synccheck e3 "$T"
# (memcheck: clean on e in s48-a.sh, and the mbarrier.inval is no ordinary access; left out for time)
one racecheck x /tmp/x/testing/macko_tests  # x: e (or OLD)
san_sum
grep -h "Race reported" "$L"/san-racecheck-*.log | sort | uniq -c | head -20
pk end
