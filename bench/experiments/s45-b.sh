#!/usr/bin/env bash
# Session 45, meant for an H200 (the README's H200 table was session 31's), run on the warm H100 the tool kept: both
# layouts by n (issue 16's list and 1280) at d = 0.5 and 0.3 on the quick shapes against cublasGemmEx in one run of
# one binary (the README's table now). Carry build-carry/h.tar.xz (as s45-a.sh).
set -u
# shellcheck source=device-run.sh
CARRY=h.tar.xz . bench/experiments/device-run.sh s45b
ntables 110 0.5 0.3
NT_LAYOUT=rows ntables 110 0.5 0.3 # (ran as its own loop with the same command; device-run.sh's NT_LAYOUT since)
