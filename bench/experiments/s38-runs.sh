#!/usr/bin/env bash
# Session 38's first device script (bench/NOTES.md session 38; written without a GPU, for the next session that has
# one): tests, sanitizers and the timing of the fused product's width 256 in pairs of column blocks that share the
# decode (bench/experiments/s38-pairs.patch, test-only override --tiles-pair). Carry build-carry/n.tar.xz: a build of
# the patched tree (90-real, Werror). Steps, each alone on the GPU: the pair tests (both kinds of pairs) and the tile
# tests they touch; then the fused product at n = 512 / 1024 / 2048, d = 0.5, three ways in one binary: automatic
# (stream-K as the rule says), width 256 one block per tile without pairs, and with pairs; d = 0.3 at n = 1024; then
# compute-sanitizer's four tools over the pair tests.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s38
tests_alone '*PanelSplitsInClusters*:GpuTiles*FusedPairs*:GpuTiles*Graph*:GpuTiles*Transpose*:GpuTiles*ProductsAgainst*' 150
pk gtest
FUSED="--tiles-path fused --tiles-bn 256 --tiles-stream -1 --tiles-splits 1"
tiles_run auto-d0.5 60 --densities 0.5 --n 512,1024,2048 --tiles-path fused
# shellcheck disable=SC2086
tiles_run single-d0.5 60 --densities 0.5 --n 512,1024,2048 $FUSED --tiles-pair -1
# shellcheck disable=SC2086
tiles_run pairs-d0.5 60 --densities 0.5 --n 512,1024,2048 $FUSED --tiles-pair 1
# shellcheck disable=SC2086
tiles_run single-d0.3 40 --densities 0.3 --n 1024 $FUSED --tiles-pair -1
# shellcheck disable=SC2086
tiles_run pairs-d0.3 40 --densities 0.3 --n 1024 $FUSED --tiles-pair 1
pk timing
python3 bench/experiments/ab-compare.py "$L" single-d0.5.csv:pairs-d0.5.csv:single:pairs \
    auto-d0.5.csv:pairs-d0.5.csv:auto:pairs single-d0.3.csv:pairs-d0.3.csv:single:pairs
sanitizers_until 560 '*PanelSplitsInClusters*:GpuTiles*FusedPairs*'
