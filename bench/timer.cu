/* timer.cu -- see timer.h. */
#include "timer.h"

#include "common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

/* Keeps the GPU busy for `ns` nanoseconds so that the host can queue the launches of a timing series ahead of the
 * GPU: the events then time device work only, never a gap waiting for the host. */
__global__ void spin_ns(uint64_t ns)
{
    uint64_t t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
}

Counts counts_for(double once_us, int warmup, int iters)
{
    Counts c;
    c.warmup = warmup;
    c.iters = iters;
    if (once_us > 1000.0) {
        const double f = 1000.0 / once_us;
        c.iters = std::max(10, std::min(iters, (int)std::ceil(iters * f)));
        c.warmup = std::max(5, std::min(warmup, (int)std::ceil(warmup * f)));
    }
    return c;
}

double once_us(cudaStream_t stream, const std::function<bool(int)> &launch)
{
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    CUDA_OK(cudaEventRecord(e0, stream));
    const bool ran = launch(0);
    CUDA_OK(cudaEventRecord(e1, stream));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ran ? 1e3 * ms : NAN;
}

void Timer::init(cudaStream_t s, void *fbuf, size_t fbytes, int max_iters)
{
    stream = s;
    flush = fbuf;
    flush_bytes = fbytes;
    ev0.resize((size_t)max_iters);
    ev1.resize((size_t)max_iters);
    for (int i = 0; i < max_iters; ++i) {
        CUDA_OK(cudaEventCreate(&ev0[(size_t)i]));
        CUDA_OK(cudaEventCreate(&ev1[(size_t)i]));
    }
}

void Timer::destroy()
{
    for (size_t i = 0; i < ev0.size(); ++i) {
        cudaEventDestroy(ev0[i]);
        cudaEventDestroy(ev1[i]);
    }
    ev0.clear();
    ev1.clear();
}

double Timer::median_us(int copies, Counts c, const std::function<bool(int)> &launch)
{
    const bool rot = copies >= 2;
    const int w = rot ? std::max(c.warmup, copies) : c.warmup, iters = c.iters;
    if (iters > (int)ev0.size())
        die("internal: a series of %d launches, the timer has events for %zu", iters, ev0.size());
    /* The host must queue the series ahead of the GPU; without flushes between them the launches follow each other
     * closely, so the head start grows with their number (about 15 us each, up to 200 ms). */
    const uint64_t spin = rot ? std::min<uint64_t>(200000000ull,
                                                   std::max<uint64_t>(3000000ull, 15000ull * (uint64_t)(w + iters)))
                              : 3000000ull;
    spin_ns<<<1, 1, 0, stream>>>(spin);
    CUDA_OK(cudaGetLastError());
    for (int i = 0; i < w; ++i) {
        if (!rot)
            CUDA_OK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, stream));
        if (!launch(rot ? i % copies : 0))
            return NAN;
    }
    for (int i = 0; i < iters; ++i) {
        if (!rot)
            CUDA_OK(cudaMemsetAsync(flush, (i + 1) & 0xFF, flush_bytes, stream));
        CUDA_OK(cudaEventRecord(ev0[(size_t)i], stream));
        if (!launch(rot ? (w + i) % copies : 0))
            return NAN;
        CUDA_OK(cudaEventRecord(ev1[(size_t)i], stream));
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaGetLastError());
    std::vector<double> t((size_t)iters);
    for (int i = 0; i < iters; ++i) {
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, ev0[(size_t)i], ev1[(size_t)i]));
        t[(size_t)i] = 1e3 * ms;
    }
    std::sort(t.begin(), t.end());
    const size_t h = t.size() / 2;
    return t.size() % 2 ? t[h] : 0.5 * (t[h - 1] + t[h]);
}

double copy_bandwidth_gbps(cudaStream_t stream)
{
    const size_t n = size_t(1) << 30;
    DevBuf a(n), b(n);
    CUDA_OK(cudaMemsetAsync(a.p, 0x5A, n, stream));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    for (int i = 0; i < 3; ++i)
        CUDA_OK(cudaMemcpyAsync(b.p, a.p, n, cudaMemcpyDeviceToDevice, stream));
    std::vector<double> t;
    for (int i = 0; i < 20; ++i) {
        CUDA_OK(cudaEventRecord(e0, stream));
        CUDA_OK(cudaMemcpyAsync(b.p, a.p, n, cudaMemcpyDeviceToDevice, stream));
        CUDA_OK(cudaEventRecord(e1, stream));
        CUDA_OK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    std::sort(t.begin(), t.end());
    const double ms = 0.5 * (t[9] + t[10]);
    return 2.0 * (double)n / (ms * 1e-3) / 1e9;
}
