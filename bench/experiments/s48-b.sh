#!/usr/bin/env bash
# NOT RUN (s48-c.sh took its place, and it did not run either). Session 48's run on the final tree
# (build-carry/$CARRY, a 90-real build of macko-bench and macko_tests with s47-tiles-end landed): the whole GoogleTest binary in 8 shards (nothing else on the GPU), then the tile layout by n
# (issue 16's list and 1280, n = 1..8192: the tile kernel and the fused product both changed), d = 0.5 and 0.3, on the
# quick shapes against cublasGemmEx ($L/ntable-tiles-dD.{csv,md}; the rows layout did not change: session 45's).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=${CARRY:-e.tar.xz} . bench/experiments/device-run.sh s48b
suite_shards "${SUITE_S:-220}"
ntables 100 0.5 0.3
