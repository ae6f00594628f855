/* common.cpp -- see common.h. */
#include "common.h"

#include "macko.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "macko-bench: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

std::string strf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

std::string fmt_num(double v, const char *f)
{
    return std::isfinite(v) ? strf(f, v) : std::string("–");
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double half_value(uint16_t bits)
{
    __half_raw r;
    r.x = bits;
    return (double)__half2float(__half(r));
}

double bits_value(uint16_t bits, int t)
{
    if (t == MACKO_R_16F)
        return half_value(bits);
    const uint32_t u = (uint32_t)bits << 16; /* bf16: the upper half of a float */
    float f;
    memcpy(&f, &u, 4);
    return (double)f;
}

DevBuf::DevBuf(size_t n) : bytes(n)
{
    const cudaError_t e = cudaMalloc(&p, std::max<size_t>(n, 16));
    if (e != cudaSuccess)
        die("cudaMalloc of %.3f GB failed: %s", (double)n / 1e9, cudaGetErrorString(e));
}

DevBuf::~DevBuf()
{
    if (p)
        cudaFree(p);
}

std::unique_ptr<DevBuf> DevBuf::try_alloc(size_t n)
{
    std::unique_ptr<DevBuf> b(new DevBuf());
    if (cudaMalloc(&b->p, std::max<size_t>(n, 16)) != cudaSuccess) {
        b->p = nullptr;
        (void)cudaGetLastError();
        return nullptr;
    }
    b->bytes = n;
    return b;
}

std::vector<unsigned char> raw_bytes(const DevBuf &d, cudaStream_t stream)
{
    std::vector<unsigned char> out(d.bytes);
    CUDA_OK(cudaMemcpyAsync(out.data(), d.p, d.bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    return out;
}

std::vector<double> to_host(const DevBuf &d, int64_t n, int t, cudaStream_t stream)
{
    std::vector<double> out((size_t)n);
    if (t == MACKO_R_64F) {
        CUDA_OK(cudaMemcpyAsync(out.data(), d.p, (size_t)n * 8, cudaMemcpyDeviceToHost, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        return out;
    }
    if (t == MACKO_R_32F) {
        std::vector<float> f((size_t)n);
        CUDA_OK(cudaMemcpyAsync(f.data(), d.p, (size_t)n * 4, cudaMemcpyDeviceToHost, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        for (int64_t i = 0; i < n; ++i)
            out[(size_t)i] = f[(size_t)i];
        return out;
    }
    std::vector<uint16_t> b((size_t)n);
    CUDA_OK(cudaMemcpyAsync(b.data(), d.p, (size_t)n * 2, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    for (int64_t i = 0; i < n; ++i)
        out[(size_t)i] = bits_value(b[(size_t)i], t);
    return out;
}

template <class T> static double rel_l2_of(const std::vector<T> &a, const std::vector<T> &ref)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = a[i], r = ref[i];
        if (!std::isfinite(x))
            return INFINITY;
        num += (x - r) * (x - r);
        den += r * r;
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

double rel_l2(const std::vector<float> &a, const std::vector<float> &ref) { return rel_l2_of(a, ref); }
double rel_l2(const std::vector<double> &a, const std::vector<double> &ref) { return rel_l2_of(a, ref); }
