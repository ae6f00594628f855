#!/usr/bin/env bash
# The device runs planned for the next session with a GPU (bench/NOTES.md, session 34, "Next"), ready to go: each mode
# fits one call of the device tool (600 s) and packs its logs into $OUT/<mode>.tgz after every step, so a run cut short
# still returns what it did.
#
# Before the first run, on the build machine (no GPU needed):
#   git apply bench/experiments/s33-tiles-spmv.patch          # the tile layout's n = 1 SpMV (not in the library yet)
#   cmake -S . -B /tmp/w/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real -DMACKO_WERROR=ON \
#         -DMACKO_BUILD_FORTRAN=OFF -DMACKO_TEST_PYTHON=OFF
#   cmake --build /tmp/w/b -j2 --target macko macko-bench macko_tests
#   mkdir -p build-carry && tar -cJf build-carry/b.tar.xz -C /tmp/w/b bench/macko-bench testing/macko_tests \
#         libmacko.so libmacko.so.0 libmacko.so.0.1.0               # (strip the binaries first: ~26 MB)
# then call the device tool with carry ["build-carry"] and the command `bash bench/experiments/s34-next-runs.sh MODE`.
#
# Modes:
#   land   the patch's evidence: the whole GoogleTest binary alone (8 shards, 200 s each); the n = 1 table of the tile
#          layout (automatic = the SpMV kernel, `--tiles-path kernel` = today's tensor-core tile kernel) against the
#          rows layout on the quick and 7B shapes at d = 0.5 / 0.3, and a split sweep against macko_tiles_spmv_splits;
#          compute-sanitizer's four tools over GpuTiles* (initcheck must now be clean). Land the patch if every test
#          passes, the sanitizers are clean and the SpMV beats the tile kernel on the cells of the table.
#   e2e    the 7B end-to-end benchmark with the CUDA-graph prefill (rows layout, d = 0.5 and 0.3, TTFT 512 / 2048,
#          decode batch 1 / 8 / 32), then the same with --layout tiles at batch 1 (what the SpMV changes), then ncu's
#          warp-state and scheduler sections of the tile kernel at n = 8 and 16 (12288^2, d = 0.5): which stall keeps its
#          issue near 0.57 a cycle per scheduler (bench/NOTES.md, session 34).
#   splits the tile kernel's blocks along K at n = 8 / 16 on three shapes at d = 0.5: the automatic rule and 3..16 forced
#          (session 34's ncu: a quarter of the warp slots empty with the rule's 480 blocks on 12288^2).
#   ntable issue 16's table by n for the rows and the tile layout (n = 1 of the tiles: `land`'s tile-kernel column).
# Session 34 ran `land` (H100) and `e2e` (H200, as separate commands); `splits` and `ntable` are still to run.
# `splits` and `ntable` do not depend on the patch (the tile kernel forced; the rows; the tiles from n = 2): a build of
# main serves them as well.
set -u
MODE=${1:?usage: s34-next-runs.sh land|e2e|splits|ntable}
ROOT=$(pwd)
L=/tmp/logs-$MODE
mkdir -p "$L" /tmp/b
tar -xJf build-carry/b.tar.xz -C /tmp/b
BENCH=/tmp/b/bench/macko-bench
T=/tmp/b/testing/macko_tests
export MACKO_LIBRARY=/tmp/b/libmacko.so.0.1.0 PYTHONPATH=$ROOT/interfaces/python
T0=$(date +%s)
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR"
pk() { tar -czf "$OUTDIR/$MODE.tgz" -C "$L" .; echo "$1 done at $(($(date +%s) - T0)) s"; }
left() { echo $((${1} - ($(date +%s) - T0))); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$L/gpu.txt" 2>&1
cat "$L/gpu.txt"

Q="4096x4096,4096x11008,11008x4096,12288x12288,36864x12288,28672x8192,12288x4096,22016x4096"

if [ "$MODE" = land ]; then
    (for s in 0 1 2 3 4 5 6 7; do
        { GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 200 $T --gtest_color=no >"$L/gtest-$s.log" 2>&1
          echo "shard $s rc $?" >>"$L/gtest-rc.txt"; } &
    done; wait)
    cat "$L/gtest-rc.txt"
    grep -h "^\[  FAILED\|^\[  PASSED" "$L"/gtest-*.log | sort | uniq -c | head -20
    pk gtest
    for v in auto kernel rows; do
        case $v in
        auto) a="--layout tiles" ;;
        kernel) a="--layout tiles --tiles-path kernel" ;;
        rows) a="--layout rows" ;;
        esac
        timeout 45 $BENCH $a --flush rotate --shapes $Q --densities 0.5,0.3 --no-cusparse --n 1 \
            --csv "$L/n1-$v.csv" >"$L/n1-$v.log" 2>&1
        echo "$v rc $?"
    done
    for sp in 1 2 4 8 16; do
        timeout 20 $BENCH --layout tiles --tiles-splits $sp --flush rotate --shapes 4096x11008,12288x12288,36864x12288,28672x8192 \
            --densities 0.5 --no-cusparse --n 1 --csv "$L/n1-s$sp.csv" >"$L/n1-s$sp.log" 2>&1
        echo "splits $sp rc $?"
    done
    python3 - "$L" <<'PY'
import csv, sys
L = sys.argv[1]
def ld(f):
    try:
        return {(r['rows'], r['cols'], r['density']): r for r in csv.DictReader(open(f))}
    except OSError:
        return {}
A, K, R = (ld(f"{L}/n1-{v}.csv") for v in ("auto", "kernel", "rows"))
S = {sp: ld(f"{L}/n1-s{sp}.csv") for sp in (1, 2, 4, 8, 16)}
for k in sorted(A, key=lambda k: (k[2], int(k[0]), int(k[1]))):
    us = lambda d: float(d[k]['macko_us']) if k in d else float('nan')
    print(k, f"spmv {us(A):.1f} tile-kernel {us(K):.1f} rows {us(R):.1f} cublas {A[k]['cublas_us']} "
          f"{A[k]['status']} err {A[k]['rel_err_macko']} | " + " ".join(f"s{sp} {us(S[sp]):.1f}" for sp in S))
PY
    pk bench
    F='GpuTiles*'
    LEFT=$(left 560)
    [ "$LEFT" -gt 200 ] && LEFT=200
    (for tool in memcheck racecheck initcheck synccheck; do
        for s in 0 1; do
            { MACKO_TEST_REPEATS=3 GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$s timeout "$LEFT" compute-sanitizer --tool $tool \
                  --error-exitcode 99 $T --gtest_color=no --gtest_filter="$F" >"$L/san-$tool-$s.log" 2>&1
              echo "$tool $s rc $?" >>"$L/san-rc.txt"; } &
        done
    done; wait)
    cat "$L/san-rc.txt"
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|^\[  PASSED\|^\[  FAILED" "$L"/san-*.log | sort | uniq -c
    pk sanitizers
elif [ "$MODE" = e2e ]; then
    LEFT=$(left 330)
    timeout "$LEFT" python3 bench/e2e_llm.py --densities 0.5,0.3 --batches 1,8,32 --profile '' \
        --deadline-s $((LEFT - 60)) --out "$L" --tag s34-rows >"$L/e2e-rows.log" 2>&1
    echo "e2e rows rc $?"
    tail -3 "$L/e2e-rows.log"
    pk e2e-rows
    LEFT=$(left 460)
    timeout "$LEFT" python3 bench/e2e_llm.py --layout tiles --densities 0.5 --batches 1 --prompt-lens 512 --profile '' \
        --deadline-s $((LEFT - 40)) --out "$L" --tag s34-tiles-b1 >"$L/e2e-tiles.log" 2>&1
    echo "e2e tiles rc $?"
    tail -3 "$L/e2e-tiles.log"
    pk e2e-tiles
    # the counts of bench/NOTES.md session 34's estimate: instructions, shared-memory wavefronts (loads / stores)
    NCU_METRICS=smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
    NCU_METRICS=$NCU_METRICS,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
    NCU_METRICS=$NCU_METRICS,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
    NCU_METRICS=$NCU_METRICS,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
    for n in 8 16; do
        LEFT=$(left 585)
        [ "$LEFT" -lt 30 ] && break
        timeout "$LEFT" ncu --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis_Tables \
            --section InstructionStats --section Occupancy --metrics "$NCU_METRICS" -k regex:tiles_kernel -c 1 \
            --print-details all $BENCH --layout tiles --tiles-path kernel --shapes 12288x12288 --densities 0.5 \
            --no-cusparse --n $n >"$L/ncu-tiles-n$n.txt" 2>&1
        echo "ncu n=$n rc $?"
    done
    pk ncu
elif [ "$MODE" = splits ]; then
    # the tile kernel's blocks along K at n = 8 / 16 (d = 0.5): the automatic rule against forced counts
    for sp in auto 3 4 5 6 8 11 16; do
        a=""
        [ $sp != auto ] && a="--tiles-splits $sp"
        # shellcheck disable=SC2086
        timeout 30 $BENCH --layout tiles --tiles-path kernel $a --flush rotate --shapes 12288x12288,28672x8192,11008x4096 \
            --densities 0.5 --no-cusparse --n 8,16 --csv "$L/splits-$sp.csv" >"$L/splits-$sp.log" 2>&1
        echo "splits $sp rc $?"
        pk "splits $sp"
    done
elif [ "$MODE" = ntable ]; then
    # issue 16's table by n (rows, and the tile layout from n = 2), quick shapes, d = 0.5 then 0.3 (about 460 s)
    for d in 0.5 0.3; do
        timeout 125 $BENCH --layout rows --flush rotate --shapes quick --densities $d --no-cusparse \
            --n 1,2,4,8,16,32,64,128,256,512,2048,8192 --csv "$L/rows-d$d.csv" --md "$L/rows-d$d.md" >"$L/rows-d$d.log" 2>&1
        echo "rows $d rc $?"
        pk "rows $d"
        timeout 105 $BENCH --layout tiles --flush rotate --shapes quick --densities $d --no-cusparse \
            --n 2,4,8,16,32,64,128,256,512,2048,8192 --csv "$L/tiles-d$d.csv" --md "$L/tiles-d$d.md" >"$L/tiles-d$d.log" 2>&1
        echo "tiles $d rc $?"
        pk "tiles $d"
    done
else
    echo "unknown mode $MODE"
    exit 2
fi
exit 0
