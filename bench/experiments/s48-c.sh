#!/usr/bin/env bash
# NOT RUN (no machine could be started; s48-d.sh is its cut-down form). Session 48's second device call.
# s48-a.sh's racecheck over e's fp16 tile products reported 15 write-write hazards between the tile kernel's B staging (cp.async and the element stores) and mbar_init of its stage mbarriers, in
# tiles_kernel<half, 8, 16>; e's change writes nothing new. Suspected: a block's mbarriers were never invalidated, so
# the next block on the SM whose window covers them writes over live mbarrier objects (as the tool sees them). e3 = e
# + mbarrier.inval of each warp's stage mbarriers after the loop (s48-mbar-inval.patch; build-carry/e3.tar.xz);
# build-carry/f.tar.xz is 9519d46's bench and tests (the tree before e). Side by side: racecheck and synccheck over
# e3's fp16 tile products, racecheck over f's (is it older than e?), and e3's whole GoogleTest binary in 8 shards; then,
# with the time left, the tile layout by n against cublasGemmEx (quick shapes, d = 0.5 then 0.3).
set -u
# shellcheck shell=bash source=device-run.sh
CARRY=e3.tar.xz . bench/experiments/device-run.sh s48c
mkdir -p /tmp/f && tar -xJf build-carry/f.tar.xz -C /tmp/f
san_bg 280 e3 'GpuTiles/H.ProductsAgainstTheDoubleReference' racecheck synccheck
T=/tmp/f/testing/macko_tests san_bg 280 f 'GpuTiles/H.ProductsAgainstTheDoubleReference' racecheck
suite_shards 280
san_sum
pk sanitizers
[ "$(elapsed)" -lt 340 ] && ntables 70 0.5
[ "$(elapsed)" -lt 410 ] && ntables 70 0.3
pk end
