#!/usr/bin/env bash
# Session 37's third device run (bench/NOTES.md session 37): where the fused product's consumers wait, per SASS
# instruction (ncu's PC sampling), at widths 128 (n = 128) and 256 (n = 512) on 12288^2, d = 0.5, with the library of
# 23aebc2 (build-carry/o.tar.xz: its macko-bench, which links libmacko statically). Reports and the source pages come
# back as $OUT/s37n.tgz.
set -u
L=/tmp/logs-s37n
mkdir -p "$L" /tmp/o
tar -xJf build-carry/o.tar.xz -C /tmp/o
B=/tmp/o/bench/macko-bench
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$L/gpu.txt" 2>&1
ncu --version >"$L/ncu-version.txt" 2>&1
for n in 128 512; do
    timeout 120 ncu --section WarpStateStats --section SchedulerStats --section SourceCounters \
        --section MemoryWorkloadAnalysis_Tables --section SpeedOfLight --print-details all -k regex:tiles_wg -c 1 \
        -o "$L/w$n" $B --layout tiles --tiles-path fused --shapes 12288x12288 --densities 0.5 --no-cusparse --n $n \
        >"$L/run-$n.log" 2>&1
    echo "ncu n=$n rc $?"
    ncu -i "$L/w$n.ncu-rep" --print-details all >"$L/w$n.txt" 2>&1
    ncu -i "$L/w$n.ncu-rep" --page source --csv --print-source sass >"$L/w$n-sass.csv" 2>&1
    echo "source page rc $? ($(wc -l <"$L/w$n-sass.csv") lines)"
    tar -czf "${OUT:-/tmp/out}/s37n.tgz" -C "$L" .
done
