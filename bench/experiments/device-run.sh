# Sourced by the device scripts of bench/experiments (from session 36 on): `. bench/experiments/device-run.sh NAME`
# unpacks the carried build (build-carry/b.tar.xz, as s34-next-runs.sh says, or build-carry/$CARRY) into /tmp/b and sets L (the logs,
# /tmp/logs-NAME), BENCH, T (the test binary), ROOT, OUTDIR ($OUT of the device tool), T0 and MACKO_LIBRARY /
# PYTHONPATH for the Python benchmarks; `pk STEP` packs the logs into $OUTDIR/NAME.tgz (so a run cut short still
# returns what it did) and prints the seconds since T0; `elapsed` prints them; `tests_alone FILTER SECONDS` runs the
# GoogleTest binary's FILTER in 4 shards side by side (nothing else on the GPU meanwhile: a benchmark never shares
# it), each cut at SECONDS, logs $L/gtest-*.log and sums them up; `sanitizers_alone FILTER SECONDS` runs
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck over FILTER (2 shards each, all side by side,
# MACKO_TEST_REPEATS=3), logs $L/san-*.log and sums them up; `sanitizers_until T FILTER` does that with what is left
# of T seconds since T0 (at most 200) and packs. For the tile layout on the quick shapes (rotate flush, no cuSPARSE):
# `tiles_run NAME SECONDS ARGS...` runs the carried macko-bench into $L/NAME.csv; `tiles_ab D NLIST SECONDS` runs the
# OLD_CARRY build's then the carried one at density D into $L/old-dD.csv and $L/new-dD.csv, and packs.
# It records the GPU in $L/gpu.txt. At the end: `tests_parts` (one test process per filter, side by side) and
# `san_bg` / `san_sum` (compute-sanitizer tools over a filter in the background, then their summary; session 41).
ROOT=$(pwd)
L=/tmp/logs-$1
mkdir -p "$L" /tmp/b
tar -xJf "build-carry/${CARRY:-b.tar.xz}" -C /tmp/b
# OLD_CARRY=ARCHIVE: a second build's macko-bench for same-run A/B (it links libmacko statically), unpacked to /tmp/o
OLD=
if [ -n "${OLD_CARRY:-}" ]; then
    mkdir -p /tmp/o && tar -xJf "build-carry/$OLD_CARRY" -C /tmp/o && OLD=/tmp/o/bench/macko-bench
fi
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
sanitizers_alone() {
    (for tool in memcheck racecheck initcheck synccheck; do
        for s in 0 1; do
            { MACKO_TEST_REPEATS=3 GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$s timeout "$2" compute-sanitizer --tool $tool \
                  --error-exitcode 99 "$T" --gtest_color=no --gtest_filter="$1" >"$L/san-$tool-$s.log" 2>&1
              echo "$tool $s rc $?" >>"$L/san-rc.txt"; } &
        done
    done; wait)
    cat "$L/san-rc.txt"
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^\[  PASSED\|^\[  FAILED" "$L"/san-*.log | sort | uniq -c
}
sanitizers_until() {
    local left=$(($1 - $(elapsed)))
    [ "$left" -gt 200 ] && left=200
    echo "sanitizers get $left s"
    sanitizers_alone "$2" "$left"
    pk sanitizers
}
TILES_Q="--layout tiles --flush rotate --shapes quick --no-cusparse"
tiles_run() {
    local name=$1 secs=$2 bin=${TILES_BIN:-$BENCH}
    shift 2
    # shellcheck disable=SC2086
    timeout "$secs" $bin $TILES_Q "$@" --csv "$L/$name.csv" >"$L/$name.log" 2>&1
    echo "$name rc $?"
}
tiles_ab() {
    TILES_BIN=$OLD tiles_run "old-d$1" "$3" --densities "$1" --n "$2"
    tiles_run "new-d$1" "$3" --densities "$1" --n "$2"
    pk "ab $1"
}
# `tests_parts SECONDS FILTER...` runs the GoogleTest binary once per FILTER, all side by side, each cut at SECONDS
# (logs $L/gtest-0.log, ...), and sums them up.
tests_parts() {
    local secs=$1 i=0
    shift
    for f in "$@"; do
        { timeout "$secs" "$T" --gtest_color=no --gtest_filter="$f" >"$L/gtest-$i.log" 2>&1
          echo "part $i rc $?" >>"$L/gtest-rc.txt"; } &
        i=$((i + 1))
    done
    wait
    sort "$L/gtest-rc.txt"
    grep -h "^\[  FAILED\|^\[  PASSED\|^\[       OK" "$L"/gtest-*.log | sort | uniq -c
}
# `san_bg SECONDS TAG FILTER TOOL...` starts compute-sanitizer's TOOLs over FILTER in the background, side by side
# (MACKO_TEST_REPEATS=3, each cut at SECONDS; logs $L/san-TOOL-TAG.log); `san_sum` waits for them and sums them up
# (in the shell that started them: in a pipe, its `wait` sees none of them and the run ends under them).
san_bg() {
    local secs=$1 tag=$2 filt=$3
    shift 3
    for tool in "$@"; do
        { MACKO_TEST_REPEATS=3 timeout "$secs" compute-sanitizer --tool "$tool" --error-exitcode 99 "$T" \
              --gtest_color=no --gtest_filter="$filt" >"$L/san-$tool-$tag.log" 2>&1
          echo "$tool $tag rc $?" >>"$L/san-rc.txt"; } &
    done
}
san_sum() {
    wait
    sort "$L/san-rc.txt"
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^\[  PASSED\|^\[  FAILED\|^\[       OK" "$L"/san-*.log | sort | uniq -c
}
# `tiles_tests SECONDS`: every GpuTiles test and the Plan tests in seven processes side by side, each cut at
# SECONDS, then packs (session 42; FusedNarrowSplitK, session 43's, from session 44).
tiles_tests() {
    tests_parts "$1" 'GpuTiles/*.FusedSplitKInClusters:GpuTiles/*.GraphCapture*:GpuTilesH.*:GpuTiles/*.FusedWidths*' \
        'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
        'GpuTiles/H.FusedTailSplit' 'GpuTiles/B.FusedTailSplit' 'GpuTiles/*.FusedNarrow*:GpuTiles/*.IssueNList*' \
        'GpuTiles/*.Matrices*:GpuTiles/*.Transpose*:GpuTiles/*.Download*:GpuTiles/*.Panels*:Plan*'
    pk tests
}
# `ntables SECONDS D...`: the tile layout by n (issue 16's list and 1280) at each density D on the quick shapes
# against cublasGemmEx, each cut at SECONDS ($L/ntable-tiles-dD.{csv,md}; the tables of record; session 42).
# NT_LAYOUT=rows: the same for the rows layout ($L/ntable-rows-dD.*; session 45).
ntables() {
    local secs=$1 d lay=${NT_LAYOUT:-tiles}
    shift
    for d in "$@"; do
        # shellcheck disable=SC2086
        timeout "$secs" "$BENCH" ${TILES_Q/--layout tiles/--layout $lay} --densities "$d" \
            --n 1,2,4,8,16,32,64,128,256,512,1280,2048,8192 \
            --csv "$L/ntable-$lay-d$d.csv" --md "$L/ntable-$lay-d$d.md" >"$L/ntable-$lay-d$d.log" 2>&1
        echo "ntable $lay $d rc $?"
        pk "ntable $lay $d"
    done
}
# `tiles_alt SECONDS LA "A-ARGS" LB "B-ARGS" ARGS...`: the carried macko-bench on the quick-shape setup with ARGS and
# A-ARGS, then with B-ARGS, twice, alternating ($L/LA-1.csv, $L/LB-1.csv, $L/LA-2.csv, ...), packs, and compares
# each pair (the same binary two ways; session 42).
tiles_alt() {
    local secs=$1 la=$2 aa=$3 lb=$4 ba=$5 i
    shift 5
    for i in 1 2; do
        # shellcheck disable=SC2086
        tiles_run "$la-$i" "$secs" "$@" $aa
        # shellcheck disable=SC2086
        tiles_run "$lb-$i" "$secs" "$@" $ba
    done
    pk "$la-$lb"
    for i in 1 2; do
        python3 bench/experiments/ab-compare.py "$L" "$la-$i.csv:$lb-$i.csv:$la:$lb" 2>/dev/null | tail -n 24
    done
}
# `ab_pairs SUFFIX A:B...`: ab-compare.py's last three lines for each pair of runs $L/A$SUFFIX.csv, $L/B$SUFFIX.csv
# (session 46).
ab_pairs() {
    local suf=$1 pair a b
    shift
    for pair in "$@"; do
        a=${pair%:*} b=${pair#*:}
        echo "== $suf $a -> $b"
        python3 bench/experiments/ab-compare.py "$L" "$a$suf.csv:$b$suf.csv:$a:$b" 2>/dev/null | tail -n 3
    done
}
# `tiles_checks SECONDS`: the four sanitizers over the fp16 tile products and four test processes (the tile products of
# both types; the tile layout's other tests and the plan tests) side by side, each cut at SECONDS, then sums them up
# (sessions 45 / 46).
tiles_checks() {
    san_bg "$1" t 'GpuTiles/H.ProductsAgainstTheDoubleReference' memcheck racecheck initcheck synccheck
    # (tests_parts' wait also waits for the sanitizers started above)
    tests_parts "$1" 'GpuTiles/H.ProductsAgainstTheDoubleReference' 'GpuTiles/B.ProductsAgainstTheDoubleReference' \
        'GpuTiles/*.Transpose*:GpuTiles/*.IssueNList*:GpuTiles/*.GraphCapture*:Plan*:TilesSplits*' \
        'GpuTiles/*.Matrices*:GpuTiles/*.Download*:GpuTilesH.*:GpuTiles/*.Fused*:GpuTiles/*.Panels*'
    san_sum
}
# `suite_shards SECONDS`: the whole GoogleTest binary in 8 shards side by side (nothing else on the GPU), each cut at
# SECONDS, then sums them up and packs (session 45; session 39's s39-final.sh ran the same).
suite_shards() {
    (for s in 0 1 2 3 4 5 6 7; do
        { GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout "$1" "$T" --gtest_color=no >"$L/gtest-$s.log" 2>&1
          echo "shard $s rc $?" >>"$L/gtest-rc.txt"; } &
    done; wait)
    sort "$L/gtest-rc.txt"
    grep -h "^\[  FAILED\|^\[  PASSED\|^\[  SKIPPED" "$L"/gtest-*.log | sort | uniq -c | head -20
    pk tests
}
