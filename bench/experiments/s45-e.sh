#!/usr/bin/env bash
# Session 45's last device run (about 300 s of device time left): the tile kernel's groups of 16 tiles chosen per
# matrix at upload (macko_tiles_kg: where that kernel keeps >= 3 blocks an SM, n <= 16) against the tree before
# (e17c352's macko-bench), automatic paths, n = 1 / 8 / 16, d = 0.5 and 0.3, quick shapes, once each; then, side by
# side, the tile tests (with the new ways 13 / 14: groups of 16 forced) and compute-sanitizer's four tools over the
# fp16 products' subset (way 13 among them), each cut where the time runs out.
# NOT RUN in session 45 (its device time ran out before this call could start a machine). The change is
# bench/experiments/s45-tiles-kg-choice.patch (against the tree of session 45; 90-real, -Werror, 0 spills, the CPU
# tests passed): apply it, build, and carry build-carry/kw.tar.xz (the change's macko-bench and macko_tests, stripped,
# made in session 45 from that build) and hb.tar.xz (e17c352's macko-bench); rebuild both if the tree moved.
set -u
# shellcheck source=device-run.sh
CARRY=kw.tar.xz OLD_CARRY=hb.tar.xz . bench/experiments/device-run.sh s45e
for d in 0.5 0.3; do
    TILES_BIN=$OLD tiles_run "old-d$d" 30 --densities "$d" --n 1,8,16
    tiles_run "new-d$d" 30 --densities "$d" --n 1,8,16
done
pk timing
for d in 0.5 0.3; do
    python3 bench/experiments/ab-compare.py "$L" "old-d$d.csv:new-d$d.csv" 2>/dev/null | tail -n 3
done
LEFT=$((190 - $(elapsed)))
[ "$LEFT" -lt 30 ] && LEFT=30
tiles_checks "$LEFT"
pk end
