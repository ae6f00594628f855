/*
 * common.h -- what every part of macko-bench uses: fatal errors, formatting, device buffers, host copies of results
 * and their comparison. The driver reaches macko only through macko.h.
 */
#ifndef MACKO_BENCH_COMMON_H
#define MACKO_BENCH_COMMON_H

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/* Prints "macko-bench: error: ..." and exits with status 1: a usage or CUDA error, or a baseline that disagrees with
 * the host reference (then the driver itself is wrong). */
[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

std::string strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* v formatted with f, or an en dash when v is not finite (an empty cell of the Markdown table). */
std::string fmt_num(double v, const char *f);

double seconds_since(std::chrono::steady_clock::time_point t0);

/* fp16 bits -> value (exact). */
double half_value(uint16_t bits);
/* 16-bit pattern of type t (MACKO_R_16F or MACKO_R_16BF) -> value (exact). */
double bits_value(uint16_t bits, int t);

/* call must return ok_value; otherwise die with the call, its place and to_string(status). */
#define CHECK_STATUS(call, ok_value, to_string)                                                                      \
    do {                                                                                                             \
        const auto s_ = (call);                                                                                      \
        if (s_ != (ok_value))                                                                                        \
            die("%s:%d: %s: %s", __FILE__, __LINE__, #call, to_string(s_));                                          \
    } while (0)
#define CUDA_OK(call) CHECK_STATUS(call, cudaSuccess, cudaGetErrorString)
#define CUBLAS_OK(call) CHECK_STATUS(call, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)
#define CUSPARSE_OK(call) CHECK_STATUS(call, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorString)

/* cudaMalloc'ed bytes, freed on scope exit. */
struct DevBuf {
    void *p = nullptr;
    size_t bytes = 0;
    DevBuf() = default;
    explicit DevBuf(size_t n); /* dies when cudaMalloc fails */
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;
    ~DevBuf();
    template <class T> T *as() const { return static_cast<T *>(p); }
    /* nullptr (and the CUDA error cleared) when cudaMalloc fails, instead of dying. */
    static std::unique_ptr<DevBuf> try_alloc(size_t n);
};

inline size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* The bytes of d, on the host (the stream is synchronized). */
std::vector<unsigned char> raw_bytes(const DevBuf &d, cudaStream_t stream);

/* The first n values of d, of value type t (a macko_datatype_t), as doubles: exact for every type, so a comparison of
 * these is the comparison of the values themselves. */
std::vector<double> to_host(const DevBuf &d, int64_t n, int t, cudaStream_t stream);

/* ||a - ref|| / ||ref|| accumulated in double; +Inf when a holds a NaN or Inf. */
double rel_l2(const std::vector<float> &a, const std::vector<float> &ref);
double rel_l2(const std::vector<double> &a, const std::vector<double> &ref);

#endif
