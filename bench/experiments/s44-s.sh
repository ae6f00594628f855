#!/usr/bin/env bash
# Session 44, the short form of s44-r.sh (for a device budget under 500 s): the A/B old / F (d = 0.5, n = 16-2048 on
# the quick shapes), then the four sanitizers over graph capture and the narrow instance beside every GpuTiles test
# and Plan*, each cut at 150 s. Carry build-carry/f.tar.xz and build-carry/v.tar.xz (as s44-r.sh says).
set -u
# shellcheck source=device-run.sh
CARRY=f.tar.xz OLD_CARRY=v.tar.xz . bench/experiments/device-run.sh s44s
NL=16,64,128,256,512,2048
TILES_BIN=$OLD tiles_run old-1 60 --densities 0.5 --n $NL
tiles_run new-1 60 --densities 0.5 --n $NL
pk ab
python3 bench/experiments/ab-compare.py "$L" old-1.csv:new-1.csv | tail -n 8
san_bg 150 g 'GpuTiles/*.GraphCapture*:GpuTiles/*.FusedNarrowSplitK' memcheck racecheck initcheck synccheck
tiles_tests 150
san_sum
pk sanitizers
