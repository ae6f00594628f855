#!/usr/bin/env bash
# Session 49's H200 call: the tile layout by n against cublasGemmEx on the quick shapes, d = 0.5 then 0.3, on the
# kernels of 69ed547 (build-carry/e4.tar.xz, 90-real); the H200's last table by n (session 31) predates most of the
# tile layout's kernels. Each density cut at ${NT_S:-95} s.
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e4.tar.xz . bench/experiments/device-run.sh s49g
ntables "${NT_S:-95}" 0.5 0.3
pk end
