/*
 * variant_timer.cu -- macko-variant-timer, the variant timer of bench/NOTES.md: every launch variant the plan can be
 * forced to (macko_plan_override, src/plan.h) timed on the same matrix, for choosing the rule of the plan. Not a
 * benchmark of record (macko-bench is) and not a test (macko_tests is): it moved here from the test binary, where it
 * ran as the disabled tests SpmvTiming.DISABLED_Kernels and SpmmTiming.DISABLED_Paths.
 *
 *   macko-variant-timer spmv [--shapes RxC,...] [--densities d,...] [--types H,S]
 *     The SpMV geometries (MACKO_SPMV_WARP / MACKO_SPMV_STAGED) and cuBLAS (cublasGemmEx N = 1 for fp16, cublasSgemv
 *     for fp32), timed interleaved in rounds (6 rounds of 15 launches each, after 10 warm-ups), median of all launches.
 *     Defaults: the quick shapes of BENCH.md at 0.7, 0.5, 0.3, 0.1, both types; the environment variables
 *     MACKO_TIMING_SHAPES, MACKO_TIMING_DENSITIES, MACKO_TIMING_TYPES of the old test still set them. Every geometry's
 *     result is checked against WARP's (relative L2 error below 2e-3 fp16, 1e-5 fp32); one the plan cannot run on
 *     this shape and device is reported as n/a. A line per (type, shape, density); `*` marks the plan's choice.
 *   macko-variant-timer spmm [--shapes RxC,...] [--densities d,...]
 *     The fp16 SpMM paths (automatic, staged plain, staged swizzled, global at n = 8) for n = 1, 2, 4, 8, 16, median of
 *     30 launches after 5 warm-ups. Defaults: 12288x12288 and 28672x8192 at d = 0.5.
 *
 * Matrices are generated on the device (Bernoulli pattern of density d from a hash, values in [-1, 1] never 0, fixed
 * seed) and encoded with macko_mat_create_dense_device, so that large shapes cost seconds, not minutes. Method as
 * BENCH.md: L2 flushed (4 x L2 memset) before every launch, CUDA events around the launch only. Exit status 1 when a
 * check fails or a call is refused.
 */
#include "macko_internal.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

int g_failed = 0;

[[noreturn]] void fatal(const char *what, const char *detail)
{
    fprintf(stderr, "macko-variant-timer: error: %s: %s\n", what, detail);
    exit(1);
}

#define OK_CUDA(call)                                                                                                \
    do {                                                                                                             \
        const cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess)                                                                                       \
            fatal(#call, cudaGetErrorString(e_));                                                                    \
    } while (0)
#define OK_MACKO(call)                                                                                               \
    do {                                                                                                             \
        if ((call) != MACKO_STATUS_SUCCESS)                                                                          \
            fatal(#call, macko_get_last_error_message());                                                            \
    } while (0)

__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

template <typename T> __device__ __forceinline__ T to_t(float v);
template <> __device__ __forceinline__ __half to_t<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ float to_t<float>(float v) { return v; }

/* a[i] = value in [-1, 1] (never 0) with probability d, else 0; d < 0: every element (a dense vector). */
template <typename T> __global__ void fill_random(T *a, int64_t n, double d, uint64_t seed)
{
    const uint64_t thr = d < 0 ? ~0ull : (uint64_t)(d * 16777216.0);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t h = mix64(seed ^ mix64((uint64_t)i));
        float v = 0.0f;
        if (d < 0 || (h >> 40) < thr) {
            v = (float)(h & 0xFFFFFF) / 8388608.0f - 1.0f;
            if (to_t<T>(v) == to_t<T>(0.0f))
                v = 0.5f;
        }
        a[i] = to_t<T>(v);
    }
}

struct Dev {
    void *p = nullptr;
    explicit Dev(size_t n) { OK_CUDA(cudaMalloc(&p, n)); }
    ~Dev() { cudaFree(p); }
    Dev(const Dev &) = delete;
    Dev &operator=(const Dev &) = delete;
};

/* The device, its L2 flush buffer, and the handles. */
struct Rig {
    cudaDeviceProp prop;
    size_t flush_bytes = 0;
    void *flush = nullptr;
    macko_handle_t h = nullptr;
    cublasHandle_t blas = nullptr;
    void flush_l2(int i) { cudaMemsetAsync(flush, i & 0xFF, flush_bytes); }
};

/* R x C of type T at density d, made on the device and encoded there (seed as the old test's). */
template <typename T> macko_mat_t make_matrix(Rig &g, int64_t R, int64_t C, double d, Dev &dense)
{
    fill_random<T><<<4096, 256>>>(static_cast<T *>(dense.p), R * C, d, 0x5eed0000ull + (uint64_t)(d * 1000) + R);
    OK_CUDA(cudaDeviceSynchronize());
    macko_mat_t A = nullptr;
    OK_MACKO(macko_mat_create_dense_device(g.h, &A, R, C, sizeof(T) == 2 ? MACKO_R_16F : MACKO_R_32F, dense.p, C,
                                           MACKO_ORDER_ROW));
    return A;
}

double median_us(std::vector<float> t)
{
    std::sort(t.begin(), t.end());
    return t.empty() ? 0.0 : 1000.0 * t[t.size() / 2];
}

/* ---------------------------------------------------------------- spmv: the geometries */

double value(const __half &v) { return (double)__half2float(v); }
double value(const float &v) { return (double)v; }

template <typename T> void time_spmv(Rig &g, int64_t R, int64_t C, double d)
{
    const bool half = sizeof(T) == 2;
    Dev dense((size_t)(R * C) * sizeof(T)), dx((size_t)C * sizeof(T)), dy((size_t)R * sizeof(T));
    fill_random<T><<<64, 256>>>(static_cast<T *>(dx.p), C, -1.0, 77);
    macko_mat_t A = make_matrix<T>(g, R, C, d, dense);
    int64_t bytes = 0;
    macko_mat_get_storage(A, &bytes, nullptr, nullptr, nullptr);

    /* (geometry, prefetch depth) pairs: WARP and STAGED at depth 1, then both at depths 2..MACKO_SPMV_MAX_DEPTH */
    constexpr int kGeometries = 2 * MACKO_SPMV_MAX_DEPTH;
    auto geometry_of = [](int k) { return k % 2 == 0 ? MACKO_SPMV_WARP : MACKO_SPMV_STAGED; };
    auto depth_of = [](int k) { return k / 2 + 1; };
    const int chosen = (A->plan.spmv_unit.kernel == MACKO_K_SPMV_STAGED ? MACKO_SPMV_STAGED : MACKO_SPMV_WARP) +
                       2 * (A->plan.spmv_unit.depth - 1);
    const float one = 1.0f, zero = 0.0f;
    bool runs[kGeometries];
    /* geometry k forced into A's plan (cuBLAS: nothing); false where the plan cannot run it */
    auto force = [&](int k) {
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        f.spmv_geometry = k < kGeometries ? geometry_of(k) : -1;
        f.spmv_depth = k < kGeometries ? depth_of(k) : 0;
        return k >= kGeometries ||
               macko_plan_override(g.h, A, MACKO_OPERATION_NON_TRANSPOSE, &f) == MACKO_STATUS_SUCCESS;
    };
    auto macko = [&] {
        return half ? macko_Hspmv(g.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, static_cast<const macko_half *>(dx.p),
                                  1, &zero, static_cast<macko_half *>(dy.p), 1)
                    : macko_Sspmv(g.h, MACKO_OPERATION_NON_TRANSPOSE, &one, A, static_cast<const float *>(dx.p), 1,
                                  &zero, static_cast<float *>(dy.p), 1);
    };

    /* correctness of every geometry against WARP */
    std::vector<T> ref((size_t)R), got((size_t)R);
    std::vector<double> relerr(kGeometries, 0.0);
    for (int k = 0; k < kGeometries; k++) {
        cudaMemset(dy.p, 0xFF, (size_t)R * sizeof(T));
        runs[k] = force(k) && macko() == MACKO_STATUS_SUCCESS;
        if (!runs[k] && k == MACKO_SPMV_WARP)
            fatal("the WARP geometry", macko_get_last_error_message());
        if (!runs[k])
            continue;
        OK_CUDA(cudaDeviceSynchronize());
        cudaMemcpy(k == 0 ? ref.data() : got.data(), dy.p, (size_t)R * sizeof(T), cudaMemcpyDeviceToHost);
        if (k > 0) {
            double num = 0, den = 0;
            for (int64_t i = 0; i < R; i++) {
                const double r = value(ref[(size_t)i]), v = value(got[(size_t)i]);
                num += (v - r) * (v - r);
                den += r * r;
            }
            relerr[(size_t)k] = std::isfinite(num) ? std::sqrt(num / (den > 0 ? den : 1)) : INFINITY;
            if (!(relerr[(size_t)k] < (half ? 2e-3 : 1e-5))) {
                fprintf(stderr, "FAIL: %lldx%lld d=%.2f kernel %d: relative error %.2e against WARP\n", (long long)R,
                        (long long)C, d, k, relerr[(size_t)k]);
                g_failed = 1;
            }
        }
    }

    const int M = kGeometries + 1; /* + cuBLAS */
    std::vector<std::vector<float>> t((size_t)M);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    /* the plan override (a host-side rebuild) stays outside the timed region: once per group of launches */
    auto launch = [&](int k) {
        if (k < kGeometries) {
            macko();
        } else if (half) {
            cublasGemmEx(g.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)R, 1, (int)C, &one, dense.p, CUDA_R_16F, (int)C, dx.p,
                         CUDA_R_16F, (int)C, &zero, dy.p, CUDA_R_16F, (int)R, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        } else {
            cublasSgemv(g.blas, CUBLAS_OP_T, (int)C, (int)R, &one, static_cast<const float *>(dense.p), (int)C,
                        static_cast<const float *>(dx.p), 1, &zero, static_cast<float *>(dy.p), 1);
        }
    };
    for (int k = 0; k < M; k++) {
        if (k < kGeometries && !(runs[k] && force(k)))
            continue;
        for (int i = 0; i < 10; i++)
            launch(k);
    }
    for (int round = 0; round < 6; round++) {
        for (int k = 0; k < M; k++) {
            if (k < kGeometries && !(runs[k] && force(k)))
                continue;
            for (int i = 0; i < 15; i++) {
                g.flush_l2(i);
                cudaEventRecord(e0);
                launch(k);
                cudaEventRecord(e1);
                cudaEventSynchronize(e1);
                float ms = 0;
                cudaEventElapsedTime(&ms, e0, e1);
                t[(size_t)k].push_back(ms);
            }
        }
    }
    OK_CUDA(cudaDeviceSynchronize());
    const double blas_us = median_us(t[(size_t)M - 1]);
    printf("[timing] %s %c %lldx%lld d=%.2f cuBLAS %7.1f us |", g.prop.name, half ? 'H' : 'S', (long long)R,
           (long long)C, d, blas_us);
    for (int k = 0; k < kGeometries; k++) {
        char name[32];
        snprintf(name, sizeof name, depth_of(k) == 1 ? "%s" : "%s-d%d",
                 geometry_of(k) == MACKO_SPMV_WARP ? "warp" : "staged", depth_of(k));
        if (!runs[k]) {
            printf(" %s n/a", name);
            continue;
        }
        const double us = median_us(t[(size_t)k]);
        printf(" %s%s %.1f (%.2fx, %.0f GB/s)", k == chosen ? "*" : "", name, us, blas_us / us,
               (double)(bytes + (R + C) * (int64_t)sizeof(T)) / (us * 1e3));
    }
    printf(" | maxrelerr %.1e\n", *std::max_element(relerr.begin(), relerr.end()));
    fflush(stdout);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    macko_mat_destroy(A);
}

/* ---------------------------------------------------------------- spmm: the paths */

/* Median of 30 launches (after 5), each after an L2 flush. */
double time_us(Rig &g, const std::function<void()> &launch, int iters = 30)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> t;
    for (int i = 0; i < iters + 5; i++) {
        g.flush_l2(i);
        cudaEventRecord(e0, nullptr);
        launch();
        cudaEventRecord(e1, nullptr);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 5)
            t.push_back(ms);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return median_us(t);
}

void time_spmm(Rig &g, int64_t R, int64_t C, double d)
{
    const auto t0 = std::chrono::steady_clock::now();
    macko_mat_t A = nullptr;
    {
        Dev dense((size_t)(R * C) * 2);
        A = make_matrix<__half>(g, R, C, d, dense);
    }
    const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t nmax = 16;
    Dev db((size_t)(C * nmax) * 2), dc((size_t)(R * nmax) * 2);
    cudaMemset(db.p, 0x3C, (size_t)(C * nmax) * 2); /* 1.0009765625-ish halves: finite */
    struct Run {
        const char *name;
        int path, tile, swizzle;
    };
    const Run runs[] = {{"auto", MACKO_MM_PATH_AUTO, 0, -1},
                        {"staged plain", MACKO_MM_PATH_STAGED, 0, 0},
                        {"staged swizzle", MACKO_MM_PATH_STAGED, 0, -1},
                        {"global", MACKO_MM_PATH_GLOBAL, 0, 0}};
    for (int64_t n : {1, 2, 4, 8, 16})
        for (const Run &r : runs) {
            if ((n == 1 && r.path != MACKO_MM_PATH_AUTO) || (r.path == MACKO_MM_PATH_GLOBAL && n != 8))
                continue;
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            f.mm_path = r.path;
            f.mm_tile = r.tile;
            f.mm_swizzle = r.swizzle;
            OK_MACKO(macko_plan_override(g.h, A, MACKO_OPERATION_NON_TRANSPOSE, &f));
            const float one = 1.0f, zero = 0.0f;
            int err = 0;
            const macko_half *B = static_cast<const macko_half *>(db.p);
            const double us = time_us(g, [&] {
                err |= macko_Hspmm(g.h, MACKO_OPERATION_NON_TRANSPOSE, n, &one, A, B, C, &zero,
                                   static_cast<macko_half *>(dc.p), R) != MACKO_STATUS_SUCCESS;
            });
            g_failed |= err;
            printf("[timing] %s %lldx%lld d=%.1f n=%lld %-22s %8.1f us%s\n", g.prop.name, (long long)R, (long long)C, d,
                   (long long)n, r.name, us, err ? " (launch error)" : "");
        }
    printf("[timing] (matrix generation and encoding %.1f s)\n", gen_s);
    fflush(stdout);
    macko_mat_destroy(A);
}

/* ---------------------------------------------------------------- command line */

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : s + ",") {
        if (c == ',') {
            if (!cur.empty())
                out.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    return out;
}

const char *env_or(const char *name, const char *def)
{
    const char *e = getenv(name);
    return e != nullptr ? e : def;
}

[[noreturn]] void usage()
{
    fprintf(stderr, "usage: macko-variant-timer spmv|spmm [--shapes RxC,...] [--densities d,...] [--types H,S]\n"
                    "(bench/variant_timer.cu says what each mode times)\n");
    exit(2);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "spmv") != 0 && strcmp(argv[1], "spmm") != 0))
        usage();
    const bool spmv = strcmp(argv[1], "spmv") == 0;
    std::string shapes = spmv ? env_or("MACKO_TIMING_SHAPES", "4096x4096,4096x11008,11008x4096,12288x12288,"
                                                              "36864x12288,28672x8192")
                              : "12288x12288,28672x8192";
    std::string dens = spmv ? env_or("MACKO_TIMING_DENSITIES", "0.7,0.5,0.3,0.1") : "0.5";
    std::string types = spmv ? env_or("MACKO_TIMING_TYPES", "H,S") : "H";
    for (int i = 2; i < argc; i++) {
        const std::string a = argv[i];
        if (i + 1 >= argc)
            usage();
        if (a == "--shapes")
            shapes = argv[++i];
        else if (a == "--densities")
            dens = argv[++i];
        else if (a == "--types" && spmv)
            types = argv[++i];
        else
            usage();
    }

    Rig g;
    OK_CUDA(cudaGetDeviceProperties(&g.prop, 0));
    g.flush_bytes = (size_t)g.prop.l2CacheSize * 4;
    Dev flush(g.flush_bytes);
    g.flush = flush.p;
    OK_MACKO(macko_create(&g.h));
    if (cublasCreate(&g.blas) != CUBLAS_STATUS_SUCCESS)
        fatal("cublasCreate", "failed");
    for (const std::string &ty : split(types))
        for (const std::string &sh : split(shapes))
            for (const std::string &ds : split(dens)) {
                long long R = 0, C = 0;
                if (sscanf(sh.c_str(), "%lldx%lld", &R, &C) != 2 || R <= 0 || C <= 0)
                    fatal("a shape is not RxC", sh.c_str());
                const double d = atof(ds.c_str());
                if (!spmv)
                    time_spmm(g, R, C, d);
                else if (ty == "H")
                    time_spmv<__half>(g, R, C, d);
                else
                    time_spmv<float>(g, R, C, d);
            }
    cublasDestroy(g.blas);
    macko_destroy(g.h);
    return g_failed;
}
