#!/usr/bin/env bash
# Session 42's last device run, on the final kernels (split K in clusters at widths 128 / 256): the tile layout by n
# (issue 16's list and 1280) at d = 0.5 and 0.3 on the quick shapes against cublasGemmEx (the tables of record;
# rotate flush). The tests and sanitizers of this build ran in `s42-cl.sh 2`. Carry build-carry/c.tar.xz.
set -u
# shellcheck source=device-run.sh
CARRY=c.tar.xz . bench/experiments/device-run.sh s42e
ntables 100 0.5 0.3
