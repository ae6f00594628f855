#!/usr/bin/env bash
# Session 43: width 64's new split rule (4 splits where the wave's would put two blocks of fewer than 16 slices on an
# SM and 4 give each block an SM of its own: 4096 x 4096 at n = 17-64) against the rule before, the automatic path of
# both benches, alternating, twice, d = 0.5 (4096 x 11008 beside it: unchanged). Carry build-carry/v.tar.xz (this
# tree's macko-bench) and build-carry/w.tar.xz (s43-e.sh's). About a minute.
# Not run in session 43 (its device time was spent); run in session 44 (inside s44-t.sh: bench/NOTES.md session 44).
set -u
# shellcheck source=device-run.sh
CARRY=v.tar.xz OLD_CARRY=w.tar.xz . bench/experiments/device-run.sh s43rule
for i in 1 2; do
    TILES_BIN=$OLD tiles_run "old-$i" 30 --densities 0.5 --n 24,40,64 --shapes 4096x4096,4096x11008
    tiles_run "new-$i" 30 --densities 0.5 --n 24,40,64 --shapes 4096x4096,4096x11008
done
pk rule
for i in 1 2; do python3 bench/experiments/ab-compare.py "$L" "old-$i.csv:new-$i.csv"; done
