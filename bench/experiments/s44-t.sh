#!/usr/bin/env bash
# Session 44's one device call (42 s; bench/NOTES.md session 44): s43-rule.sh (width 64's split rule of 3dd0481, the
# automatic path, against the rule before: 4096 x 4096 and 4096 x 11008, d = 0.5, n = 24 / 40 / 64, alternating,
# twice), then the pipelined consumer loop (bench/experiments/s44-pipe.patch, macko-bench only, not tested) at width
# 64 (n = 16 / 32 / 64, quick shapes, d = 0.5) against 3dd0481's, once. Carry build-carry/v.tar.xz (3dd0481's
# macko-bench), w.tar.xz (s43-e's, the rule before) and fb.tar.xz (the patch's macko-bench). About 2 minutes.
set -u
# shellcheck source=device-run.sh
CARRY=v.tar.xz . bench/experiments/device-run.sh s44t
bash bench/experiments/s43-rule.sh
mkdir -p /tmp/f && tar -xJf build-carry/fb.tar.xz -C /tmp/f
tiles_run v-w64 40 --densities 0.5 --n 16,32,64
TILES_BIN=/tmp/f/bench/macko-bench tiles_run f-w64 40 --densities 0.5 --n 16,32,64
pk pipe
python3 bench/experiments/ab-compare.py "$L" v-w64.csv:f-w64.csv:old:pipe | tail -n 3
