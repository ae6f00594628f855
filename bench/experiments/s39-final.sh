#!/usr/bin/env bash
# Session 39's last device run, on the final tree (carry build-carry/n.tar.xz: 90-real, Werror): the whole GoogleTest
# binary in 8 shards side by side, nothing else on the GPU, each shard cut at 200 s.
set -u
# shellcheck source=device-run.sh
CARRY=n.tar.xz . bench/experiments/device-run.sh s39f
suite_shards 200 # (device-run.sh since session 45: the same commands)
