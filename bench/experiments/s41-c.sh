#!/usr/bin/env bash
# Session 41's second device run: split K's epilogue from the accumulators (the partial tiles written as stream-K's,
# the last block summing them into its registers with 8 loads in flight). GpuTiles* tests; same-run A/B against
# HEAD's build (o2) at d = 0.5 on the quick shapes, n = 64 .. 1280 (split K and the tail split are the automatic
# rule's there); compute-sanitizer's four tools over FusedTailSplit and GraphCaptureGivesTheSameBits (split K at
# widths 256 / 64 / 128). Carry build-carry/n2.tar.xz and build-carry/o2.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=n2.tar.xz OLD_CARRY=o2.tar.xz . bench/experiments/device-run.sh s41c
tests_alone 'GpuTiles*' 120
pk tests
tiles_ab 0.5 64,128,256,512,1280 100
python3 bench/experiments/ab-compare.py "$L" old-d0.5.csv:new-d0.5.csv:old:new 2>&1 | tail -30
sanitizers_until $(( $(elapsed) + 190 )) 'GpuTiles/*.FusedTailSplit:GpuTiles/*.GraphCaptureGivesTheSameBits'
