#!/usr/bin/env bash
# Session 39's device script: the tile layout's switch from the fused product to the dense panels moved from
# n = 2048 to 1281 (MACKO_TILES_PANEL_N_WG, from s38-panel.sh's crossover) and the fused product where the panels do
# not fit the workspace. Carry build-carry/n.tar.xz (this tree, 90-real, Werror). Steps, each alone on the GPU: the
# tile layout's GPU tests (the new GpuTiles.PanelsWithoutRoomTakeTheFusedProduct among them); the automatic rule on
# both sides of the old and new switch at d = 0.3 / 0.5 (0.1 / 0.7: the new one) (issue 16's "no cliff"); the fused product and
# the panels forced at d = 0.3, n = 1280 / 1536 (is d = 0.5's crossover also d = 0.3's?).
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s39
tests_alone 'GpuTiles*' 200
pk gtest
tiles_run edges 150 --densities 0.3,0.5 --n 1024,1280,1281,1536,2047,2048
tiles_run edges-lo-hi 60 --densities 0.1,0.7 --n 1280,1281
pk edges
tiles_run d03-fused 60 --densities 0.3 --n 1280,1536 --tiles-path fused
tiles_run d03-panel 60 --densities 0.3 --n 1280,1536 --tiles-path panel
pk d03
python3 bench/experiments/ab-compare.py "$L" d03-fused.csv:d03-panel.csv:fused:panels
