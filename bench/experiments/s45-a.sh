#!/usr/bin/env bash
# Session 45's device run on the tree of e17c352 (no kernel change since e53e718): the whole GoogleTest binary in 8
# shards alone (session 44's upload_wg refactor of testing/test_gpu_tiles.cpp had not run on a GPU), then the tile
# layout's tables by n at d = 0.5 and 0.3 on the quick shapes (the tables of record with width 64's split rule of
# 3dd0481, which session 43's predate). Carry build-carry/h.tar.xz (90-real build of e17c352: macko-bench, macko_tests,
# libmacko).
set -u
# shellcheck source=device-run.sh
CARRY=h.tar.xz . bench/experiments/device-run.sh s45a
suite_shards 230 # (ran with these commands inline; the helper since)
ntables 100 0.5 0.3
