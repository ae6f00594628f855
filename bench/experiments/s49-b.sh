#!/usr/bin/env bash
# Session 49's second device call. s49-a.sh: racecheck still reports the write-write hazards between the tile kernel's
# B staging and mbar_init with s48-mbar-inval.patch (e3) as without it (e), 16 reports each in 210 s, the first at the
# test's start; so not (only) mbarriers outliving their block. e4 = e3 + a block barrier after the mbarriers'
# initialisation (was __syncwarp: each warp initialises and uses its own, but another warp's first B stage was not
# ordered after that warp's init). build-carry/e4.tar.xz (90-real bench and tests), eb.tar.xz (e's macko-bench).
#   1. the tile kernel n = 1 / 8 / 16, d = 0.5 and 0.3, e4 against e (what the barrier costs), e4 first then e;
#   2. compute-sanitizer's four tools over e4's fp16 tile products (MACKO_TEST_REPEATS=1) and four test processes side
#      by side, each cut at ${CHK:-200} s;
#   3. if racecheck reported no hazard: the tile layout by n against cublasGemmEx, d = 0.5 then 0.3 (tables of record).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e4.tar.xz OLD_CARRY=eb.tar.xz . bench/experiments/device-run.sh s49b
for d in 0.5 0.3; do
    tiles_run "e4-d$d" 40 --densities "$d" --n 1,8,16
    TILES_BIN=$OLD tiles_run "e-d$d" 40 --densities "$d" --n 1,8,16
    pk "tile kernel $d"
    ab_pairs "-d$d" e:e4
done
F='GpuTiles/H.ProductsAgainstTheDoubleReference'
for tool in memcheck racecheck initcheck synccheck; do
    { MACKO_TEST_REPEATS=1 timeout "${CHK:-200}" compute-sanitizer --tool "$tool" --error-exitcode 99 "$T" \
          --gtest_color=no --gtest_filter="$F" >"$L/san-$tool-e4.log" 2>&1
      echo "$tool e4 rc $? at $(elapsed) s" >>"$L/san-rc.txt"; } &
done
tests_parts "${CHK:-200}" 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
    'GpuTiles/*.Transpose*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:Plan*:TilesSplits*' \
    'GpuTiles/*.Matrices*:GpuTiles/*.Download*:GpuTilesH.*:GpuTiles/*.Fused*:GpuTiles/*.Panels*'
san_sum
echo "race reports: $(grep -c 'Race reported' "$L/san-racecheck-e4.log")"
grep -h "Race reported\|hazards\]" "$L/san-racecheck-e4.log" | sed 's/0x[0-9a-f]*/ADDR/g' | sort | uniq -c | head
pk checks
if ! grep -q 'Race reported' "$L/san-racecheck-e4.log"; then
    [ "$(elapsed)" -lt 400 ] && ntables 95 0.5
    [ "$(elapsed)" -lt 495 ] && ntables 95 0.3
fi
pk end
