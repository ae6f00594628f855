#!/usr/bin/env bash
# Session 49's third device call (given inline as the command, recorded here): e4's whole GoogleTest binary in 8 shards
# alone on the GPU, each cut at 270 s (e4 = the tree of 69ed547's kernels, build-carry/e4.tar.xz).
CARRY=e4.tar.xz
set -u
# shellcheck shell=bash source=device-run.sh
. bench/experiments/device-run.sh s49c
suite_shards 270
pk end
