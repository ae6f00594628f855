/*
 * bench.h -- the run's context (configuration, device facts, stream, library handles, timer) and the entry points
 * of its two levels: a case (one matrix: shape and density) and a row (one n on that matrix).
 */
#ifndef MACKO_BENCH_BENCH_H
#define MACKO_BENCH_BENCH_H

#include "matgen.h"
#include "options.h"
#include "report.h"
#include "rotate.h"
#include "timer.h"

#include "macko.h"

#include <cublas_v2.h>
#include <cusparse.h>

#include <functional>
#include <string>

struct Ctx {
    const Config *cfg = nullptr;
    Env *env = nullptr;
    cudaStream_t stream = nullptr; /* one stream for every method, the copies and the checks */
    cublasHandle_t blas = nullptr;
    cusparseHandle_t sparse = nullptr;
    macko_handle_t macko = nullptr;
    Timer timer;
};

/* One (shape, density), or (shape, N:M pattern) when pat is given (--kind nm; d is then its n / m): the matrix is
 * generated, encoded and uploaded once, then one row per n of cfg.ns is emitted (n = 1 first). idx counts the rows
 * for the progress lines. */
void run_case(Ctx &cx, const Shape &s, double d, const NmPattern *pat, int &idx, int count,
              const std::function<void(const Row &)> &emit);

/* One row: n right-hand sides on the case's matrix m (host CSR, for the reference spot check) whose device forms
 * (dense, CSR, macko) and their copies are pool's; base carries the case's fields (shape, density, storage, status
 * of the encoding). */
Row run_row(Ctx &cx, const HostCsr &m, uint64_t cseed, Pool &pool, Row base, int n, const std::string &tag);

#endif
