/*
 * timer.h -- BENCH.md's timing: CUDA events around each launch only, warm-ups first, the median of the timed
 * launches; the weights kept out of L2 by a write flush before every launch or by rotating among copies of the inputs.
 */
#ifndef MACKO_BENCH_TIMER_H
#define MACKO_BENCH_TIMER_H

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

/* How many launches one timing series makes. */
struct Counts {
    int warmup = 20, iters = 100;
};

/* The counts for a method whose launch takes once_us: --warmup / --iters while a launch takes at most 1 ms; beyond,
 * both shrink in proportion, so that a series lasts about --iters ms, to at least 10 timed launches and 5 warm-ups
 * (a row of a slow method, e.g. cusparseSpMM at n = 8192, then takes seconds, not minutes). */
Counts counts_for(double once_us, int warmup, int iters);

/* GPU time of one launch of `launch(0)` (events around it, no flush): the estimate counts_for takes. */
double once_us(cudaStream_t stream, const std::function<bool(int)> &launch);

struct Timer {
    cudaStream_t stream = nullptr;
    void *flush = nullptr;
    size_t flush_bytes = 0;
    std::vector<cudaEvent_t> ev0, ev1;

    /* max_iters: the most timed launches any series makes. */
    void init(cudaStream_t s, void *fbuf, size_t fbytes, int max_iters);
    void destroy();
    /* Median microseconds of c.iters launches; NaN when a launch reports failure. copies = 0: write flush, every
     * launch is launch(0) after an L2 flush. copies = K >= 2: rotation, no flush; the j-th launch (warm-ups first,
     * then the timed ones, one count) is launch(j % K), and there are max(c.warmup, K) warm-ups so that every copy
     * has been read once before the timed launches. */
    double median_us(int copies, Counts c, const std::function<bool(int)> &launch);
};

/* Device-to-device copy bandwidth, (bytes read + bytes written) / time, median of 20 copies of 1 GiB. */
double copy_bandwidth_gbps(cudaStream_t stream);

#endif
