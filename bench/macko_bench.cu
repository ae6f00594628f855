/*
 * macko_bench.cu -- the benchmark driver of BENCH.md: macko SpMV against cuBLAS and cuSPARSE, on the same random
 * matrices, in the same run. macko is reached only through its public header (macko.h). Not part of the library.
 *
 * Per (shape, density): generate exactly round(d*R*C) nonzeros at uniformly random positions on the host (CSR,
 * multithreaded), encode with macko_mat_create_csr_host, upload; build the dense copy on the device from the CSR;
 * check every result against cuBLAS; then time every method with CUDA events around the launch alone, median of
 * >= 100 launches after >= 20 warm-ups, with the weights kept out of L2 in one of BENCH.md's two ways: L2 flushed
 * (cudaMemsetAsync of a buffer >= 2x L2) before every launch (--flush write, the default), or launches rotating among
 * K copies of each method's inputs whose total is >= 4x L2 (--flush rotate).
 */
#include "macko.h"
#include "plan.h" /* macko_plan_override (test hook) for --spmv-geometry */

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// ------------------------------------------------------------------------------------------------ errors

[[noreturn]] static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "macko-bench: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

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

static std::string strf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

static double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ------------------------------------------------------------------------------------------------ random numbers

static uint64_t splitmix64(uint64_t &s)
{
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* xoshiro256**, seeded per (seed, stream, index) so that every row draws the same numbers whatever the thread
 * count. Also a UniformRandomBitGenerator for std::binomial_distribution. */
struct Rng {
    using result_type = uint64_t;
    uint64_t s[4];
    Rng(uint64_t seed, uint64_t stream, uint64_t index)
    {
        uint64_t m = seed ^ (0xD6E8FEB86659FD93ull * (stream + 1));
        m = splitmix64(m) ^ (0x632BE59BD9B4E019ull * (index + 1));
        for (uint64_t &w : s)
            w = splitmix64(m);
    }
    static constexpr uint64_t min() { return 0; }
    static constexpr uint64_t max() { return UINT64_MAX; }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t operator()()
    {
        const uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return r;
    }
    /* Uniform in [-1, 1). */
    double pm1() { return (double)((*this)() >> 11) * 0x1.0p-52 - 1.0; }
    /* Uniform integer in [0, n), n <= 2^32, without bias (Lemire's multiply-and-reject). */
    uint64_t below(uint64_t n)
    {
        uint64_t m = ((*this)() >> 32) * n;
        if ((uint32_t)m < n) {
            const uint32_t t = (uint32_t)(0x100000000ull % n);
            while ((uint32_t)m < t)
                m = ((*this)() >> 32) * n;
        }
        return m >> 32;
    }
};

/* float -> fp16 bits, round to nearest even, for finite |f| < 65520 (the generator only makes |f| <= 1). Written out
 * because the host path of __float2half_rn is slow enough to dominate generating half a billion values. */
static uint16_t half_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
    if (ax < 0x38800000u) /* below 2^-14: fp16 subnormal (or zero); |f| * 2^24 is exact, lrintf rounds to even */
        return (uint16_t)(sign | (uint32_t)lrintf(fabsf(f) * 16777216.0f));
    uint32_t t = ax - 0x38000000u; /* rebias the exponent from 127 to 15 */
    t += 0x0FFFu + ((t >> 13) & 1u);
    return (uint16_t)(sign | (t >> 13));
}

static double half_value(uint16_t bits)
{
    __half_raw r;
    r.x = bits;
    return (double)__half2float(__half(r));
}

// ------------------------------------------------------------------------------------------------ configuration

struct Shape {
    int64_t rows, cols;
};

static const char *const kQuickShapes = "4096x4096 4096x11008 11008x4096 12288x12288 36864x12288 28672x8192";
static const char *const kAllShapes =
    "4096x4096 8192x8192 8192x29568 32000x5120 32000x8192 28672x8192 5120x5120 5120x13824 3584x20480 4096x11008 "
    "13824x5120 18944x3584 14336x4096 4096x14336 8192x28672 11008x4096 32000x4096 20480x3584 3584x18944 21504x7168 "
    "7168x7168 28672x7168 7168x28672 27648x9216 9216x9216 36864x9216 9216x36864 36864x12288 12288x12288 "
    "49152x12288 12288x49152";
static const char *const kDefaultDensities = "1.0,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1,0.05";

struct Config {
    std::vector<Shape> shapes;
    std::vector<double> densities;
    std::vector<int> ns{1};
    bool fp32 = false;
    uint64_t seed = 20261121;
    int warmup = 20, iters = 100;
    int flush_mult = 4; /* flush buffer = flush_mult x L2 */
    bool rotate = false; /* --flush rotate: cycle among copies of the inputs instead of the write flush */
    std::string csv, md;
    int device = 0;
    int threads = 0;
    bool check_only = false;
    int spmv_geometry = -1; /* --spmv-geometry: MACKO_SPMV_WARP / MACKO_SPMV_STAGED forced into every matrix's plan */
    std::string cmdline;
};

/* --flush rotate: the most copies one method may cycle through (beyond it the row falls back to the write flush). */
static const int kMaxCopies = 1024;
/* --flush rotate: the copies of one method's inputs together are at least kRotateL2Mult x L2. */
static const int kRotateL2Mult = 4;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: macko-bench [options]\n"
            "\n"
            "Times macko SpMV (macko_Hspmv / macko_Sspmv) and small-n SpMM (macko_Hspmm / macko_Sspmm) against\n"
            "cuBLAS and cuSPARSE on the same random matrices,\n"
            "with the method of BENCH.md, and checks every macko result against cuBLAS before timing it.\n"
            "\n"
            "Matrices:\n"
            "  --shapes LIST      'quick' (default: %s),\n"
            "                     'all' (the 31 shapes of BENCH.md), or RxC[,RxC...] (comma or space separated)\n"
            "  --densities LIST   comma-separated densities in (0, 1] (default %s)\n"
            "  --n LIST           right-hand-side counts in [1, 1024] (default 1). n = 1: SpMV rows (macko_Hspmv vs\n"
            "                     cuBLAS GEMV/GEMM and cusparseSpMV); n > 1: SpMM rows (macko_Hspmm vs cublasGemmEx\n"
            "                     N = n and cusparseSpMM CSR, column-major B and C, fastest algorithm)\n"
            "  --seed S           random seed (default %" PRIu64 "); every (shape, density) derives its own seed from it\n"
            "  --fp32 | --type S  fp32 mode: macko_Sspmv vs cublasSgemv and cuSPARSE fp32 (default --type H: fp16)\n"
            "  --quick12288       preset: only 12288x12288 at densities 0.5 and 0.3 (quick test of the kernels)\n"
            "\n"
            "Timing:\n"
            "  --warmup N         warm-up launches per method (default 20, at least 20)\n"
            "  --iters N          timed launches per method; the median is reported (default 100, at least 100)\n"
            "  --flush write|rotate\n"
            "                     how the weights are kept out of L2 (default write):\n"
            "                     write:  a buffer of --flush-mult x L2 is written (cudaMemsetAsync) before\n"
            "                             every launch\n"
            "                     rotate: each method's launches cycle through K copies of all its inputs\n"
            "                             (matrix arrays and x / B; launch i reads copy i %% K), no flush in\n"
            "                             between; K is the smallest count with K x (bytes one launch reads)\n"
            "                             >= 4 x L2, at least 2; the warm-ups are at least K. A row whose copies\n"
            "                             do not fit in free device memory (1 GiB kept spare) or need K > %d\n"
            "                             uses the write flush (status 'ok (write flush)', CSV flush column\n"
            "                             'write-fallback')\n"
            "  --flush-mult K     write flush buffer = K x L2 size (default 4, at least 2)\n"
            "  --check-only       generate and check correctness only; no timing\n"
            "  --spmv-geometry warp|staged\n"
            "                     force macko's SpMV geometry (the library's plan override, src/plan.h; default:\n"
            "                     the plan's own choice); a shape the geometry cannot run on is a FAIL row\n"
            "\n"
            "Output:\n"
            "  --csv FILE         one row per (shape, density, n), written as the run goes\n"
            "  --md FILE          Markdown report (device, CUDA versions, date, command, table, geometric means),\n"
            "                     rewritten after every row\n"
            "  (the table and the geometric means also go to stdout; progress lines go to stderr)\n"
            "\n"
            "Other:\n"
            "  --device I         CUDA device (default 0)\n"
            "  --threads T        host threads for matrix generation (default: all)\n"
            "  -h, --help         this text\n"
            "\n"
            "Exit status: 0 when every macko result passed its check, 2 when any failed or a macko call returned an\n"
            "error (those rows are reported as FAIL and not timed), 1 on a usage or CUDA error.\n",
            kQuickShapes, kDefaultDensities, Config().seed, kMaxCopies);
}

static std::vector<std::string> split_list(const std::string &s)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
            if (!cur.empty())
                out.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    if (!cur.empty())
        out.push_back(cur);
    return out;
}

static std::vector<Shape> parse_shapes(const std::string &arg)
{
    const std::string list = arg == "quick" ? kQuickShapes : arg == "all" ? kAllShapes : arg;
    std::vector<Shape> out;
    for (const std::string &t : split_list(list)) {
        char *end = nullptr;
        const long long r = strtoll(t.c_str(), &end, 10);
        if (end == t.c_str() || (*end != 'x' && *end != 'X'))
            die("--shapes: '%s' is not RxC", t.c_str());
        const char *c0 = end + 1;
        const long long c = strtoll(c0, &end, 10);
        if (end == c0 || *end != '\0')
            die("--shapes: '%s' is not RxC", t.c_str());
        if (r < 1 || c < 1 || r > INT32_MAX - 1 || c > INT32_MAX - 1)
            die("--shapes: '%s': rows and columns must be in [1, 2^31 - 2]", t.c_str());
        out.push_back({r, c});
    }
    if (out.empty())
        die("--shapes: empty list");
    return out;
}

static std::vector<double> parse_densities(const std::string &arg)
{
    std::vector<double> out;
    for (const std::string &t : split_list(arg)) {
        char *end = nullptr;
        const double d = strtod(t.c_str(), &end);
        if (end == t.c_str() || *end != '\0' || !(d > 0.0 && d <= 1.0))
            die("--densities: '%s' is not a density in (0, 1]", t.c_str());
        out.push_back(d);
    }
    if (out.empty())
        die("--densities: empty list");
    return out;
}

static long long parse_int(const char *opt, const char *s, long long lo, long long hi)
{
    char *end = nullptr;
    const long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        die("%s: '%s' is not an integer in [%lld, %lld]", opt, s, lo, hi);
    return v;
}

static std::string shell_quote(const std::string &s)
{
    bool plain = !s.empty();
    for (char c : s)
        if (!(isalnum((unsigned char)c) || strchr("_./=,:+-@%", c)))
            plain = false;
    if (plain)
        return s;
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

static Config parse_args(int argc, char **argv)
{
    Config cfg;
    std::string shapes = "quick", densities = kDefaultDensities;
    for (int i = 0; i < argc; ++i)
        cfg.cmdline += (i ? " " : "") + shell_quote(argv[i]);
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char * {
            if (i + 1 >= argc)
                die("%s needs a value (see --help)", a.c_str());
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            usage(stdout);
            exit(0);
        } else if (a == "--shapes") {
            shapes = value();
        } else if (a == "--densities") {
            densities = value();
        } else if (a == "--n") {
            cfg.ns.clear();
            for (const std::string &t : split_list(value()))
                cfg.ns.push_back((int)parse_int("--n", t.c_str(), 1, 1024));
            if (cfg.ns.empty())
                die("--n: empty list");
        } else if (a == "--seed") {
            cfg.seed = (uint64_t)parse_int("--seed", value(), 0, INT64_MAX);
        } else if (a == "--fp32") {
            cfg.fp32 = true;
        } else if (a == "--type") {
            const std::string t = value();
            if (t == "H" || t == "h" || t == "fp16")
                cfg.fp32 = false;
            else if (t == "S" || t == "s" || t == "fp32")
                cfg.fp32 = true;
            else
                die("--type: '%s' is not H or S", t.c_str());
        } else if (a == "--quick12288") {
            shapes = "12288x12288";
            densities = "0.5,0.3";
        } else if (a == "--warmup") {
            cfg.warmup = (int)parse_int("--warmup", value(), 20, 100000);
        } else if (a == "--iters") {
            cfg.iters = (int)parse_int("--iters", value(), 100, 100000);
        } else if (a == "--flush") {
            const std::string t = value();
            if (t == "write")
                cfg.rotate = false;
            else if (t == "rotate")
                cfg.rotate = true;
            else
                die("--flush: '%s' is not write or rotate", t.c_str());
        } else if (a == "--flush-mult") {
            cfg.flush_mult = (int)parse_int("--flush-mult", value(), 2, 64);
        } else if (a == "--check-only") {
            cfg.check_only = true;
        } else if (a == "--spmv-geometry") {
            const std::string t = value();
            if (t == "warp")
                cfg.spmv_geometry = MACKO_SPMV_WARP;
            else if (t == "staged")
                cfg.spmv_geometry = MACKO_SPMV_STAGED;
            else
                die("--spmv-geometry: '%s' is not warp or staged", t.c_str());
        } else if (a == "--csv") {
            cfg.csv = value();
        } else if (a == "--md") {
            cfg.md = value();
        } else if (a == "--device") {
            cfg.device = (int)parse_int("--device", value(), 0, 1023);
        } else if (a == "--threads") {
            cfg.threads = (int)parse_int("--threads", value(), 1, 4096);
        } else {
            die("unknown option '%s' (see --help)", a.c_str());
        }
    }
    cfg.shapes = parse_shapes(shapes);
    cfg.densities = parse_densities(densities);
    if (cfg.threads == 0)
        cfg.threads = (int)std::max(1u, std::thread::hardware_concurrency());
    return cfg;
}

// ------------------------------------------------------------------------------------------------ matrix generation

/* Runs f(begin, end, thread) over [0, n) in chunks of `grain`, on `threads` threads. */
template <class F> static void parallel_for(int64_t n, int64_t grain, int threads, F &&f)
{
    std::atomic<int64_t> next{0};
    auto work = [&](int t) {
        for (;;) {
            const int64_t b = next.fetch_add(grain);
            if (b >= n)
                return;
            f(b, std::min(n, b + grain), t);
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(work, t);
    work(0);
    for (std::thread &th : pool)
        th.join();
}

/* A random CSR matrix on the host: int32 indices, values as fp16 bits (h) or float (f). */
struct HostCsr {
    int64_t rows = 0, cols = 0, nnz = 0;
    std::unique_ptr<int32_t[]> row_ptr, col;
    std::unique_ptr<uint16_t[]> h;
    std::unique_ptr<float[]> f;
    const void *values() const { return h ? (const void *)h.get() : (const void *)f.get(); }
    double value(int64_t k) const { return h ? half_value(h[k]) : (double)f[k]; }
};

static uint64_t case_seed(uint64_t seed, const Shape &s, double d)
{
    uint64_t m = seed;
    m ^= splitmix64(m) + (uint64_t)s.rows * 0x9E3779B97F4A7C15ull;
    m ^= splitmix64(m) + (uint64_t)s.cols * 0xC2B2AE3D27D4EB4Full;
    m ^= splitmix64(m) + (uint64_t)llround(d * 1e6);
    return splitmix64(m);
}

/* Exactly round(d*R*C) nonzeros: row counts ~ Binomial(C, d), then +-1 on uniformly drawn rows until the total is
 * exact; columns within a row a uniform k-subset (Floyd's algorithm on a bitmap, or on the complement when k > C/2);
 * values uniform in [-1, 1], never zero (fp16-rounded in fp16 mode). */
static HostCsr generate(const Shape &s, double d, bool fp32, uint64_t cseed, int threads)
{
    HostCsr m;
    const int64_t R = s.rows, C = s.cols;
    m.rows = R;
    m.cols = C;
    const int64_t K = (int64_t)llroundl((long double)d * (long double)R * (long double)C);
    if (K > INT32_MAX)
        die("%" PRId64 "x%" PRId64 " at density %g has %" PRId64 " nonzeros: more than int32 CSR indices allow", R, C,
            d, K);
    m.nnz = K;

    std::unique_ptr<int64_t[]> cnt(new int64_t[R]);
    parallel_for(R, 512, threads, [&](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; ++r) {
            if (d >= 1.0) {
                cnt[r] = C;
            } else {
                Rng g(cseed, 0, (uint64_t)r);
                std::binomial_distribution<int64_t> bd(C, d);
                cnt[r] = bd(g);
            }
        }
    });
    int64_t total = 0;
    for (int64_t r = 0; r < R; ++r)
        total += cnt[r];
    Rng adj(cseed, 1, 0);
    while (total < K) {
        const int64_t r = (int64_t)adj.below((uint64_t)R);
        if (cnt[r] < C) {
            ++cnt[r];
            ++total;
        }
    }
    while (total > K) {
        const int64_t r = (int64_t)adj.below((uint64_t)R);
        if (cnt[r] > 0) {
            --cnt[r];
            --total;
        }
    }

    m.row_ptr.reset(new int32_t[R + 1]);
    m.row_ptr[0] = 0;
    for (int64_t r = 0; r < R; ++r)
        m.row_ptr[r + 1] = (int32_t)(m.row_ptr[r] + cnt[r]);
    m.col.reset(new int32_t[std::max<int64_t>(K, 1)]);
    if (fp32)
        m.f.reset(new float[std::max<int64_t>(K, 1)]);
    else
        m.h.reset(new uint16_t[std::max<int64_t>(K, 1)]);

    const int64_t words = (C + 63) / 64;
    std::vector<std::vector<uint64_t>> bitmaps((size_t)threads, std::vector<uint64_t>((size_t)words, 0));
    parallel_for(R, 16, threads, [&](int64_t b, int64_t e, int t) {
        uint64_t *bm = bitmaps[(size_t)t].data();
        for (int64_t r = b; r < e; ++r) {
            const int64_t k = cnt[r];
            int32_t *out = m.col.get() + m.row_ptr[r];
            if (k == C) {
                for (int64_t c = 0; c < C; ++c)
                    out[c] = (int32_t)c;
            } else if (k > 0) {
                const bool complement = k > C / 2;
                const int64_t pick = complement ? C - k : k;
                Rng g(cseed, 2, (uint64_t)r);
                for (int64_t j = C - pick; j < C; ++j) {
                    const uint64_t t2 = g.below((uint64_t)j + 1);
                    if (bm[t2 >> 6] >> (t2 & 63) & 1)
                        bm[j >> 6] |= 1ull << (j & 63);
                    else
                        bm[t2 >> 6] |= 1ull << (t2 & 63);
                }
                int64_t pos = 0;
                for (int64_t w = 0; w < words; ++w) {
                    uint64_t bits = bm[w];
                    bm[w] = 0;
                    if (complement) {
                        bits = ~bits;
                        if (w == words - 1 && (C & 63))
                            bits &= (1ull << (C & 63)) - 1;
                    }
                    while (bits) {
                        out[pos++] = (int32_t)(w * 64 + __builtin_ctzll(bits));
                        bits &= bits - 1;
                    }
                }
                if (pos != k)
                    die("internal: row %" PRId64 " got %" PRId64 " columns, wanted %" PRId64, r, pos, k);
            }
            Rng gv(cseed, 3, (uint64_t)r);
            const int64_t base = m.row_ptr[r];
            for (int64_t i = 0; i < k; ++i) {
                if (fp32) {
                    float v;
                    do
                        v = (float)gv.pm1();
                    while (v == 0.0f);
                    m.f[base + i] = v;
                } else {
                    uint16_t v;
                    do
                        v = half_bits((float)gv.pm1());
                    while ((v & 0x7FFF) == 0);
                    m.h[base + i] = v;
                }
            }
        }
    });
    return m;
}

// ------------------------------------------------------------------------------------------------ device helpers

/* cudaMalloc'ed bytes, freed on scope exit. */
struct DevBuf {
    void *p = nullptr;
    size_t bytes = 0;
    DevBuf() = default;
    explicit DevBuf(size_t n) : bytes(n)
    {
        const cudaError_t e = cudaMalloc(&p, std::max<size_t>(n, 16));
        if (e != cudaSuccess)
            die("cudaMalloc of %.3f GB failed: %s", (double)n / 1e9, cudaGetErrorString(e));
    }
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;
    ~DevBuf()
    {
        if (p)
            cudaFree(p);
    }
    template <class T> T *as() const { return static_cast<T *>(p); }
    /* nullptr (and the CUDA error cleared) when cudaMalloc fails, instead of dying. */
    static std::unique_ptr<DevBuf> try_alloc(size_t n)
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
};

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* dense[r*cols + col[j]] = val[j] for the entries of row r; one warp per row. */
template <class T>
__global__ void scatter_rows(const int32_t *__restrict__ row_ptr, const int32_t *__restrict__ col,
                             const T *__restrict__ val, T *__restrict__ dense, int64_t rows, int64_t cols)
{
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows)
        return;
    T *drow = dense + row * cols;
    for (int64_t j = row_ptr[row] + (threadIdx.x % 32); j < row_ptr[row + 1]; j += 32)
        drow[col[j]] = val[j];
}

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

struct Timer {
    cudaStream_t stream = nullptr;
    void *flush = nullptr;
    size_t flush_bytes = 0;
    int warmup = 20, iters = 100;
    std::vector<cudaEvent_t> ev0, ev1;

    void init(cudaStream_t s, void *fbuf, size_t fbytes, int w, int n)
    {
        stream = s;
        flush = fbuf;
        flush_bytes = fbytes;
        warmup = w;
        iters = n;
        ev0.resize((size_t)n);
        ev1.resize((size_t)n);
        for (int i = 0; i < n; ++i) {
            CUDA_OK(cudaEventCreate(&ev0[(size_t)i]));
            CUDA_OK(cudaEventCreate(&ev1[(size_t)i]));
        }
    }
    void destroy()
    {
        for (size_t i = 0; i < ev0.size(); ++i) {
            cudaEventDestroy(ev0[i]);
            cudaEventDestroy(ev1[i]);
        }
        ev0.clear();
        ev1.clear();
    }
    /* Median microseconds of `iters` launches; NaN when a launch reports failure. copies = 0: write flush, every
     * launch is launch(0) after an L2 flush. copies = K >= 2: rotation, no flush; the j-th launch (warm-ups first,
     * then the timed ones, one count) is launch(j % K), and there are max(warmup, K) warm-ups so that every copy
     * has been read once before the timed launches. */
    double median_us(int copies, const std::function<bool(int)> &launch)
    {
        const bool rot = copies >= 2;
        const int w = rot ? std::max(warmup, copies) : warmup;
        /* The host must queue the series ahead of the GPU; without flushes between them the launches follow each
         * other closely, so the head start grows with their number (about 15 us each, up to 200 ms). */
        const uint64_t spin = rot ? std::min<uint64_t>(200000000ull, std::max<uint64_t>(3000000ull,
                                                                                      15000ull * (uint64_t)(w + iters)))
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
};

/* Device-to-device copy bandwidth, (bytes read + bytes written) / time, median of 20 copies of 1 GiB. */
static double copy_bandwidth_gbps(cudaStream_t stream)
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

// ------------------------------------------------------------------------------------------------ results

struct Row {
    Shape s{0, 0};
    double density = 0;
    int n = 1;
    int64_t nnz = 0;
    double gemm_us = NAN, gemv_us = NAN, cublas_us = NAN; /* gemm: GemmEx (fp16); gemv: HSHgemv or Sgemv */
    std::string cublas_variant;
    double sp_default_us = NAN, sp_alg2_us = NAN, cusparse_us = NAN;
    std::string cusparse_alg;
    std::string cusparse_algs; /* n > 1: every SpMM algorithm tried, "NAME=us" or "NAME=n/a (why)" */
    double macko_us = NAN;
    int64_t storage = 0, entries = 0, entries_padded = 0;
    double effd = NAN;
    int64_t macko_bytes = 0;
    double err_macko = NAN, err_cusparse = NAN, err_cublas_ref = NAN;
    std::string status = "ok";
    /* How L2 was kept cold: "write", "rotate" (copies per method in k_*), "write-fallback" (--flush rotate, but the
     * copies did not fit: status "ok (write flush)"), "none" (--check-only). */
    std::string flush = "write";
    int k_blas = 0, k_sp = 0, k_macko = 0;
    double vs_cublas() const { return cublas_us / macko_us; }
    double vs_cusparse() const { return cusparse_us / macko_us; }
    double macko_gbps() const { return (double)macko_bytes / (macko_us * 1e3); }
    /* "ok", or "ok (...)" for a passed row with a remark (e.g. "ok (write flush)"). */
    bool ok() const { return status == "ok" || status.rfind("ok (", 0) == 0; }
};

struct Env {
    std::string device_name, date, kernel_driver;
    int sm_count = 0, runtime = 0, driver = 0;
    size_t l2 = 0, mem = 0, flush_bytes = 0;
    std::string cublas_ver, cusparse_ver, macko_ver;
    double copy_gbps = NAN;
};

static std::string fmt_num(double v, const char *f)
{
    return std::isfinite(v) ? strf(f, v) : std::string("–");
}

static std::string shape_str(const Shape &s) { return strf("%" PRId64 "x%" PRId64, s.rows, s.cols); }

static std::string cuda_ver(int v) { return strf("%d.%d", v / 1000, (v % 1000) / 10); }

static void write_csv_header(FILE *f)
{
    fprintf(f, "type,rows,cols,density,n,nnz,cublas_us,cublas_variant,cublas_gemm_us,cublas_gemv_us,cusparse_us,"
               "cusparse_alg,cusparse_default_us,cusparse_alg2_us,macko_us,speedup_vs_cublas,speedup_vs_cusparse,"
               "macko_bytes,macko_gbps,macko_pct_copy,copy_gbps,cublas_gbps,effective_density,macko_storage_bytes,"
               "macko_entries,macko_entries_padded,rel_err_macko,rel_err_cusparse,rel_err_cublas_spot,status,"
               "cusparse_algs,flush,rotate_k_cublas,rotate_k_cusparse,rotate_k_macko\n");
}

static void write_csv_row(FILE *f, const Config &cfg, const Env &env, const Row &r)
{
    const double tsz = cfg.fp32 ? 4.0 : 2.0;
    const double dense_bytes = tsz * ((double)r.s.rows * (double)r.s.cols + (double)r.s.rows + (double)r.s.cols);
    auto g = [](double v) { return std::isfinite(v) ? strf("%.6g", v) : std::string(); };
    std::string st = r.status;
    for (char &c : st)
        if (c == '"')
            c = '\'';
    auto k = [](int v) { return v > 0 ? strf("%d", v) : std::string(); };
    fprintf(f, "%s,%" PRId64 ",%" PRId64 ",%g,%d,%" PRId64 ",%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%" PRId64
               ",%s,%s,%s,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%s,%s,\"%s\",\"%s\",%s,%s,%s,%s\n",
            cfg.fp32 ? "S" : "H", r.s.rows, r.s.cols, r.density, r.n, r.nnz, g(r.cublas_us).c_str(),
            r.cublas_variant.c_str(), g(r.gemm_us).c_str(), g(r.gemv_us).c_str(), g(r.cusparse_us).c_str(),
            r.cusparse_alg.c_str(), g(r.sp_default_us).c_str(), g(r.sp_alg2_us).c_str(), g(r.macko_us).c_str(),
            g(r.vs_cublas()).c_str(), g(r.vs_cusparse()).c_str(), r.macko_bytes, g(r.macko_gbps()).c_str(),
            g(100.0 * r.macko_gbps() / env.copy_gbps).c_str(), g(env.copy_gbps).c_str(),
            g(dense_bytes / (r.cublas_us * 1e3)).c_str(), g(r.effd).c_str(), r.storage, r.entries, r.entries_padded,
            g(r.err_macko).c_str(), g(r.err_cusparse).c_str(), g(r.err_cublas_ref).c_str(), st.c_str(),
            r.cusparse_algs.c_str(), r.flush.c_str(), k(r.k_blas).c_str(), k(r.k_sp).c_str(), k(r.k_macko).c_str());
    fflush(f);
}

/* Geometric means of macko's speedups per (density, n) over the shapes whose rows are ok and timed. */
struct Geo {
    int count = 0;
    double log_blas = 0, log_sp = 0;
};

static std::map<std::pair<double, int>, Geo> geomeans(const std::vector<Row> &rows)
{
    std::map<std::pair<double, int>, Geo> m;
    for (const Row &r : rows) {
        if (!r.ok() || !std::isfinite(r.vs_cublas()) || !std::isfinite(r.vs_cusparse()))
            continue;
        Geo &g = m[{-r.density, r.n}];
        ++g.count;
        g.log_blas += std::log(r.vs_cublas());
        g.log_sp += std::log(r.vs_cusparse());
    }
    return m;
}

static std::string report_body(const Config &cfg, const Env &env, const std::vector<Row> &rows)
{
    const double tsz = cfg.fp32 ? 4.0 : 2.0;
    std::string o;
    const bool kcol = cfg.rotate && !cfg.check_only; /* K column: copies per method, or the flush ("write-fallback") */
    o += "| shape | density | n | cuBLAS µs | cuSPARSE µs | macko µs | vs cuBLAS | vs cuSPARSE | macko GB/s | % copy | "
         "cuBLAS GB/s | eff. density | rel. err | ";
    o += kcol ? "K cuBLAS/cuSPARSE/macko | status |\n" : "status |\n";
    o += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";
    o += kcol ? "---|\n" : "\n";
    for (const Row &r : rows) {
        const double dense_bytes =
            tsz * ((double)r.s.rows * (double)r.s.cols + (double)r.s.rows + (double)r.s.cols);
        o += "| " + shape_str(r.s) + " | " + strf("%.2f", r.density) + " | " + strf("%d", r.n) + " | " +
             fmt_num(r.cublas_us, "%.1f") + " | " + fmt_num(r.cusparse_us, "%.1f") + " | " +
             fmt_num(r.macko_us, "%.1f") + " | " + fmt_num(r.vs_cublas(), "%.2fx") + " | " +
             fmt_num(r.vs_cusparse(), "%.2fx") + " | " + fmt_num(r.macko_gbps(), "%.0f") + " | " +
             fmt_num(100.0 * r.macko_gbps() / env.copy_gbps, "%.1f%%") + " | " +
             fmt_num(dense_bytes / (r.cublas_us * 1e3), "%.0f") + " | " + fmt_num(r.effd, "%.3f") + " | " +
             fmt_num(r.err_macko, "%.1e") + " | ";
        if (kcol) {
            auto k = [](int v) { return v > 0 ? strf("%d", v) : std::string("–"); };
            o += (r.flush == "rotate" ? k(r.k_blas) + "/" + k(r.k_sp) + "/" + k(r.k_macko) : r.flush) + " | ";
        }
        o += (r.ok() ? r.status : "**" + r.status + "**") + " |\n";
    }
    const auto geo = geomeans(rows);
    if (!geo.empty()) {
        o += "\nGeometric mean of macko's speedup over the shapes, per density:\n\n";
        o += "| density | n | shapes | vs cuBLAS | vs cuSPARSE |\n|---|---|---|---|---|\n";
        for (const auto &kv : geo)
            o += strf("| %.2f | %d | %d | %.2fx | %.2fx |\n", -kv.first.first, kv.first.second, kv.second.count,
                      std::exp(kv.second.log_blas / kv.second.count), std::exp(kv.second.log_sp / kv.second.count));
    }
    return o;
}

static std::string report_header(const Config &cfg, const Env &env)
{
    std::string o;
    o += "# macko SpMV benchmark: " + env.device_name + ", " + env.date + "\n\n";
    o += "- command: `" + cfg.cmdline + "`\n";
    o += strf("- device: %s, %d SMs, %.0f MiB L2, %.1f GiB memory\n", env.device_name.c_str(), env.sm_count,
              (double)env.l2 / 1048576.0, (double)env.mem / 1073741824.0);
    o += "- CUDA runtime " + cuda_ver(env.runtime) + ", driver API " + cuda_ver(env.driver) + ", kernel driver " +
         env.kernel_driver + ", cuBLAS " + env.cublas_ver + ", cuSPARSE " + env.cusparse_ver + ", macko " +
         env.macko_ver + "\n";
    o += strf("- type: %s; seed %" PRIu64 " (each (shape, density) derives its own seed from it)\n",
              cfg.fp32 ? "fp32 (macko_Sspmv)" : "fp16 (macko_Hspmv)", cfg.seed);
    o += "- matrices: exactly round(d·R·C) nonzeros at uniformly random positions, values uniform in [-1, 1] "
         "(never 0), x uniform in [-1, 1]; alpha = 1, beta = 0\n";
    if (!cfg.rotate)
        o += strf("- timing (--flush write): CUDA events around each launch only; %d warm-ups, median of %d launches; "
                  "L2 flushed before every launch by cudaMemsetAsync of a %.0f MiB buffer (%d x L2), outside the timed "
                  "region\n",
                  cfg.warmup, cfg.iters, (double)env.flush_bytes / 1048576.0, cfg.flush_mult);
    else
        o += strf("- timing (--flush rotate): CUDA events around each launch only; median of %d launches after "
                  "max(%d, K) warm-ups; no flush: each method's launches cycle through K copies of all the inputs it "
                  "reads (launch i reads copy i mod K, warm-ups included; outputs shared), K = max(2, ceil(%d x L2 / "
                  "bytes one launch reads)) per method and row (column K), with bytes read = cuBLAS: dense A + x (B); "
                  "cuSPARSE: row_ptr + col_ind + values + x (B), work buffer not counted (one per copy, "
                  "preprocessed); macko: values + deltas + row_ptr + x (B). A row whose copies need more than the "
                  "free device memory less 1 GiB, or K > %d, uses the write flush instead (status 'ok (write flush)', "
                  "K column 'write-fallback'): cudaMemsetAsync of a %.0f MiB buffer (%d x L2) before every launch\n",
                  cfg.iters, cfg.warmup, kRotateL2Mult, kMaxCopies, (double)env.flush_bytes / 1048576.0,
                  cfg.flush_mult);
    o += strf("- device-to-device copy bandwidth (1 GiB cudaMemcpy, read + write): %.0f GB/s\n", env.copy_gbps);
    if (cfg.fp32)
        o += "- cuBLAS = cublasSgemv (row-major A, CUBLAS_OP_T); cuSPARSE = cusparseSpMV CSR int32 fp32, CUDA_R_32F, "
             "preprocessed, faster of ALG_DEFAULT and CSR_ALG2\n";
    else
        o += "- cuBLAS = faster of cublasGemmEx (N = 1, fp16 in/out, CUBLAS_COMPUTE_32F) and "
             "cublasHSHgemvStridedBatched (batch 1), row-major A (CUBLAS_OP_T); cuSPARSE = cusparseSpMV CSR int32 "
             "fp16, CUDA_R_32F, preprocessed, faster of ALG_DEFAULT and CSR_ALG2\n";
    if (std::any_of(cfg.ns.begin(), cfg.ns.end(), [](int n) { return n > 1; }))
        o += strf("- n > 1: macko = %s (column-major B and C, ld = rows); cuBLAS = cublasGemmEx with N = n (%s in/out, "
                  "CUBLAS_COMPUTE_32F, row-major A, CUBLAS_OP_T); cuSPARSE = cusparseSpMM CSR int32, column-major B "
                  "and C, CUDA_R_32F compute, preprocessed, fastest of ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3 "
                  "among those that accept the problem (all in the CSV's cusparse_algs)\n",
                  cfg.fp32 ? "macko_Sspmm" : "macko_Hspmm", cfg.fp32 ? "fp32" : "fp16");
    o += "- macko GB/s counts values + deltas + row pointers + x + y (B + C for n > 1); % copy is of the copy "
         "bandwidth above; "
         "eff. density = macko storage / dense bytes; rel. err = ||y_macko - y_cuBLAS|| / ||y_cuBLAS||\n\n";
    return o;
}

static void write_md(const Config &cfg, const Env &env, const std::vector<Row> &rows)
{
    if (cfg.md.empty())
        return;
    FILE *f = fopen(cfg.md.c_str(), "w");
    if (!f)
        die("cannot write %s: %s", cfg.md.c_str(), strerror(errno));
    const std::string s = report_header(cfg, env) + report_body(cfg, env, rows);
    fputs(s.c_str(), f);
    fclose(f);
}

// ------------------------------------------------------------------------------------------------ one case

struct Ctx {
    const Config *cfg;
    Env *env;
    cudaStream_t stream;
    cublasHandle_t blas;
    cusparseHandle_t sparse;
    macko_handle_t macko;
    Timer timer;
};

static std::vector<unsigned char> raw_bytes(const DevBuf &d, cudaStream_t stream)
{
    std::vector<unsigned char> out(d.bytes);
    CUDA_OK(cudaMemcpyAsync(out.data(), d.p, d.bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    return out;
}

static std::vector<double> to_host(const DevBuf &d, int64_t n, bool fp32, cudaStream_t stream)
{
    std::vector<double> out((size_t)n);
    if (fp32) {
        std::vector<float> t((size_t)n);
        CUDA_OK(cudaMemcpyAsync(t.data(), d.p, (size_t)n * 4, cudaMemcpyDeviceToHost, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        for (int64_t i = 0; i < n; ++i)
            out[(size_t)i] = t[(size_t)i];
    } else {
        std::vector<uint16_t> t((size_t)n);
        CUDA_OK(cudaMemcpyAsync(t.data(), d.p, (size_t)n * 2, cudaMemcpyDeviceToHost, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        for (int64_t i = 0; i < n; ++i)
            out[(size_t)i] = half_value(t[(size_t)i]);
    }
    return out;
}

/* ||a - ref|| / ||ref||; +Inf when a holds a NaN or Inf. */
static double rel_l2(const std::vector<double> &a, const std::vector<double> &ref)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i]))
            return INFINITY;
        num += (a[i] - ref[i]) * (a[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

static std::string macko_error(const char *fn, macko_status_t st)
{
    return strf("%s: %s (%s)", fn, macko_get_status_name(st), macko_get_last_error_message());
}

/* --spmv-geometry: the geometry forced into A's plan (geometry -1: the plan stays as built). */
static macko_status_t force_spmv_geometry(macko_handle_t h, macko_mat_t A, int geometry)
{
    if (geometry < 0)
        return MACKO_STATUS_SUCCESS;
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.spmv_geometry = geometry;
    return macko_plan_override(h, A, MACKO_OPERATION_NON_TRANSPOSE, &f);
}

// ------------------------------------------------------------------------------------------------ --flush rotate

/* Room counted for each extra cudaMalloc when estimating whether the copies fit (allocation granularity). */
static const size_t kAllocSlack = size_t(2) << 20;
/* Free device memory left untouched by the copies. */
static const size_t kSpareBytes = size_t(1) << 30;
/* Copies inside one allocation start this many bytes apart at least (cudaMalloc's own alignment). */
static const size_t kCopyAlign = 256;

/* K for one method: the smallest count with K x bytes >= kRotateL2Mult x L2, at least 2. */
static int64_t copies_for(int64_t bytes_per_launch, size_t l2)
{
    const int64_t want = (int64_t)kRotateL2Mult * (int64_t)std::max<size_t>(l2, size_t(1) << 20);
    const int64_t b = std::max<int64_t>(bytes_per_launch, 1);
    return std::max<int64_t>(2, (want + b - 1) / b);
}

/* The matrix inputs of one (shape, density) and, for --flush rotate, their copies: index 0 is the original (the one
 * the checks use), the others are made on demand by grow() and kept for every n of the case (K only shrinks as n
 * grows, so n = 1 usually makes all of them). */
struct Pool {
    struct Csr {
        const void *rp, *col, *val;
    };
    macko_handle_t handle = nullptr;
    cudaStream_t stream = nullptr;
    bool fp32 = false;
    int spmv_geometry = -1; /* --spmv-geometry, forced into the copies too */
    int64_t rows = 0, cols = 0, storage = 0;
    size_t dense_bytes = 0, rp_bytes = 0, col_bytes = 0, val_bytes = 0;
    std::vector<const void *> dense;
    std::vector<Csr> csr;
    std::vector<macko_mat_t> macko; /* [0] is the case's matrix (not owned), the others are destroyed here */
    std::vector<std::unique_ptr<DevBuf>> owned;

    Pool() = default;
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;
    ~Pool()
    {
        for (size_t i = 1; i < macko.size(); ++i)
            macko_mat_destroy(macko[i]);
    }
    /* Device bytes that grow(kb, ks, km) would allocate, counted generously. */
    size_t need(int64_t kb, int64_t ks, int64_t km) const
    {
        size_t n = 0;
        for (int64_t k = (int64_t)dense.size(); k < kb; ++k)
            n += dense_bytes + kAllocSlack;
        for (int64_t k = (int64_t)csr.size(); k < ks; ++k)
            n += rp_bytes + col_bytes + val_bytes + 3 * kAllocSlack;
        for (int64_t k = (int64_t)macko.size(); k < km; ++k)
            n += (size_t)storage + 3 * kAllocSlack;
        return n;
    }
    /* Makes copies until there are kb dense, ks CSR and km macko matrices (km = 0: no macko copies). Returns "" or,
     * when device memory ran out, why; a macko call failing for another reason sets macko_fail and makes no more
     * macko copies (the baselines' copies are still made). */
    std::string grow(int64_t kb, int64_t ks, int64_t km, std::string &macko_fail)
    {
        auto dup = [&](const void *src, size_t bytes) -> const void * {
            std::unique_ptr<DevBuf> b = DevBuf::try_alloc(bytes);
            if (!b)
                return nullptr;
            CUDA_OK(cudaMemcpyAsync(b->p, src, bytes, cudaMemcpyDeviceToDevice, stream));
            owned.push_back(std::move(b));
            return owned.back()->p;
        };
        while ((int64_t)dense.size() < kb) {
            const void *d = dup(dense[0], dense_bytes);
            if (!d)
                return strf("cudaMalloc of a dense copy (%.3f GB) failed", (double)dense_bytes / 1e9);
            dense.push_back(d);
        }
        while ((int64_t)csr.size() < ks) {
            const Csr c{dup(csr[0].rp, rp_bytes), dup(csr[0].col, col_bytes), dup(csr[0].val, val_bytes)};
            if (!c.rp || !c.col || !c.val)
                return "cudaMalloc of a CSR copy failed";
            csr.push_back(c);
        }
        if ((int64_t)macko.size() < km) {
            const void *values = nullptr, *row_ptr = nullptr;
            const uint8_t *deltas = nullptr;
            int64_t entries = 0;
            macko_status_t st = macko_mat_get_macko_host(macko[0], &values, &deltas, &row_ptr, nullptr, &entries,
                                                         nullptr);
            if (st != MACKO_STATUS_SUCCESS) {
                macko_fail = macko_error("macko_mat_get_macko_host", st);
                return "";
            }
            while ((int64_t)macko.size() < km) {
                /* The same encoding, imported (validated, copied), uploaded and analysed like the original; its
                 * host copy is released once on the device. */
                macko_mat_t B = nullptr;
                const char *fn = "macko_mat_create_macko_host";
                st = macko_mat_create_macko_host(&B, rows, cols, fp32 ? MACKO_R_32F : MACKO_R_16F, entries, values,
                                                 deltas, row_ptr);
                if (st == MACKO_STATUS_SUCCESS && (st = macko_mat_upload(handle, B)) != MACKO_STATUS_SUCCESS)
                    fn = "macko_mat_upload";
                else if (st == MACKO_STATUS_SUCCESS &&
                         (st = macko_analysis(handle, MACKO_OPERATION_NON_TRANSPOSE, B)) != MACKO_STATUS_SUCCESS)
                    fn = "macko_analysis";
                else if (st == MACKO_STATUS_SUCCESS && (st = macko_mat_release_host(B)) != MACKO_STATUS_SUCCESS)
                    fn = "macko_mat_release_host";
                else if (st == MACKO_STATUS_SUCCESS &&
                         (st = force_spmv_geometry(handle, B, spmv_geometry)) != MACKO_STATUS_SUCCESS)
                    fn = "macko_plan_override";
                if (st != MACKO_STATUS_SUCCESS) {
                    const std::string e = macko_error(fn, st);
                    macko_mat_destroy(B);
                    (void)cudaGetLastError();
                    if (st == MACKO_STATUS_ALLOC_FAILED)
                        return "macko copy: " + e;
                    macko_fail = e;
                    return "";
                }
                macko.push_back(B);
            }
        }
        CUDA_OK(cudaStreamSynchronize(stream));
        return "";
    }
};

/* One row's rotation: K per method (0 = that method uses the write flush / is not timed) and the copies of x (n = 1)
 * or B (n > 1), index 0 the original. */
struct Rotation {
    bool on = false;
    int kb = 0, ks = 0, km = 0;
    std::vector<const void *> x;
    std::unique_ptr<DevBuf> slab;
    explicit Rotation(const void *x0) : x{x0} {}
};

/* Plans the row's copies: K per method from the bytes one launch reads (x_bytes = x or B), checks that the copies
 * not made yet (pool, x/B copies and sp_per_copy bytes of cuSPARSE work buffers per extra CSR copy) fit in the free
 * device memory less kSpareBytes, and makes them. True: rot.on, rot.k*, rot.x set (the caller still makes its
 * cuSPARSE descriptors per copy). False: the row uses the write flush; why says why. macko_fail: see Pool::grow. */
static bool setup_rotation(Pool &pool, Rotation &rot, size_t l2, size_t x_bytes, bool with_macko, size_t sp_per_copy,
                           std::string &why, std::string &macko_fail)
{
    const int64_t xb = (int64_t)x_bytes;
    const int64_t kb = copies_for((int64_t)pool.dense_bytes + xb, l2);
    const int64_t ks = copies_for((int64_t)(pool.rp_bytes + pool.col_bytes + pool.val_bytes) + xb, l2);
    const int64_t km = with_macko ? copies_for(pool.storage + xb, l2) : 0;
    if (std::max(kb, std::max(ks, km)) > kMaxCopies) {
        why = strf("K = %" PRId64 "/%" PRId64 "/%" PRId64 " (cuBLAS/cuSPARSE/macko) is more than %d copies", kb, ks, km,
                   kMaxCopies);
        return false;
    }
    const int64_t kx = std::max(kb, std::max(ks, km));
    const size_t x_stride = round_up(x_bytes, kCopyAlign);
    const size_t need = pool.need(kb, ks, km) + (size_t)(kx - 1) * x_stride + kAllocSlack +
                        (size_t)(ks - 1) * sp_per_copy;
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (need + kSpareBytes > free_b) {
        why = strf("the copies need %.2f GB, %.2f GB free (1 GiB kept spare)", (double)need / 1e9,
                   (double)free_b / 1e9);
        return false;
    }
    why = pool.grow(kb, ks, km, macko_fail);
    if (!why.empty())
        return false;
    rot.slab = DevBuf::try_alloc((size_t)(kx - 1) * x_stride);
    if (!rot.slab) {
        why = strf("cudaMalloc of the x/B copies (%.3f GB) failed", (double)((size_t)(kx - 1) * x_stride) / 1e9);
        return false;
    }
    rot.x.resize(1);
    for (int64_t k = 1; k < kx; ++k) {
        void *dst = rot.slab->as<unsigned char>() + (size_t)(k - 1) * x_stride;
        CUDA_OK(cudaMemcpyAsync(dst, rot.x[0], x_bytes, cudaMemcpyDeviceToDevice, pool.stream));
        rot.x.push_back(dst);
    }
    CUDA_OK(cudaStreamSynchronize(pool.stream));
    rot.on = true;
    rot.kb = (int)kb;
    rot.ks = (int)ks;
    rot.km = macko_fail.empty() ? (int)km : 0;
    return true;
}

/* A macko call failed while setup_rotation made macko's copies (macko_fail set): the row fails, the baselines run. */
static void rotation_macko_failed(Row &row, bool &macko_ok, const std::string &macko_fail, const std::string &tag)
{
    if (macko_fail.empty())
        return;
    row.status = "FAIL " + macko_fail + " (making the copies for --flush rotate)";
    macko_ok = false;
    fprintf(stderr, "\n*** %s: macko %s ***\n\n", tag.c_str(), row.status.c_str());
}

/* The last of macko's copies must give copy 0's bytes (want) in out; run(k) computes into out with copy k, fn names
 * the routine. A failure fails the row's macko part. */
template <typename Run>
static void check_last_macko_copy(Row &row, bool &macko_ok, const Rotation &rot, Run run, const char *fn,
                                  const DevBuf &out, const std::vector<unsigned char> &want, cudaStream_t stream,
                                  const std::string &tag)
{
    if (!macko_ok)
        return;
    CUDA_OK(cudaMemsetAsync(out.p, 0xFF, out.bytes, stream));
    const macko_status_t st = run(rot.km - 1);
    if (st != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error(fn, st) + strf(" (copy %d)", rot.km - 1);
    else if (raw_bytes(out, stream) != want)
        row.status = strf("FAIL check: copy %d gives other bytes than copy 0", rot.km - 1);
    if (!row.ok()) {
        macko_ok = false;
        fprintf(stderr, "\n*** %s: macko %s ***\n\n", tag.c_str(), row.status.c_str());
    }
}

/* The row's flush fields: each method's K, or (rot.on false) the fall-back to the write flush, with why. */
static void record_rotation(Row &row, Rotation &rot, bool macko_ok, const std::string &why, const std::string &tag)
{
    if (rot.on) {
        row.flush = "rotate";
        row.k_blas = rot.kb;
        row.k_sp = rot.ks;
        row.k_macko = macko_ok ? rot.km : 0;
        return;
    }
    rot.kb = rot.ks = rot.km = 0;
    row.flush = "write-fallback";
    if (row.ok())
        row.status = "ok (write flush)";
    fprintf(stderr, "%s: warning: --flush rotate: %s; this row uses the write flush\n", tag.c_str(), why.c_str());
}

/* One SpMM row (n > 1) on the matrix of run_case: B is C x n and the results R x n, column-major with ld = rows.
 * cublasGemmEx with N = n is the reference (spot-checked against a double host product); every cusparseSpMM CSR
 * algorithm that accepts the problem is checked against it and timed (the fastest is reported), and so is
 * macko_Hspmm / macko_Sspmm. The matrix inputs (and their copies for --flush rotate) are pool's. */
static Row run_spmm(Ctx &cx, const HostCsr &m, Pool &pool, Row row, int n, uint64_t cseed, const std::string &tag)
{
    const Config &cfg = *cx.cfg;
    const bool fp32 = cfg.fp32;
    const size_t tsz = fp32 ? 4 : 2;
    const cudaDataType vt = fp32 ? CUDA_R_32F : CUDA_R_16F;
    const double tol = fp32 ? 1e-4 : 1e-2;
    const int64_t R = row.s.rows, C = row.s.cols;
    const auto t_case = std::chrono::steady_clock::now();
    cudaStream_t st = cx.stream;
    row.n = n;
    row.macko_bytes = row.storage + (int64_t)tsz * (R + C) * n;

    // ---- B: n columns uniform in [-1, 1], its own random stream per (case, n)
    std::vector<unsigned char> hb((size_t)C * n * tsz);
    {
        Rng gb(cseed, 6, (uint64_t)n);
        for (int64_t j = 0; j < C * n; ++j) {
            if (fp32) {
                const float v = (float)gb.pm1();
                memcpy(&hb[(size_t)j * 4], &v, 4);
            } else {
                const uint16_t v = half_bits((float)gb.pm1());
                memcpy(&hb[(size_t)j * 2], &v, 2);
            }
        }
    }
    DevBuf d_b((size_t)C * n * tsz), d_cref((size_t)R * n * tsz), d_c((size_t)R * n * tsz);
    CUDA_OK(cudaMemcpyAsync(d_b.p, hb.data(), d_b.bytes, cudaMemcpyHostToDevice, st));
    const float alpha = 1.0f, beta = 0.0f;
    const int iR = (int)R, iC = (int)C;
    Rotation rot(d_b.p); /* B copies (rot.x[k]); the matrix copies are pool.*[k]; k = 0: the originals */

    // ---- cuBLAS GemmEx, N = n: the reference
    auto blas_mm = [&](void *c, int k) -> bool {
        return cublasGemmEx(cx.blas, CUBLAS_OP_T, CUBLAS_OP_N, iR, n, iC, &alpha, pool.dense[(size_t)k], vt, iC,
                            rot.x[(size_t)k], vt, iC, &beta, c, vt, iR, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
    };
    CUDA_OK(cudaMemsetAsync(d_cref.p, 0xFF, d_cref.bytes, st));
    if (!blas_mm(d_cref.p, 0))
        die("%s: cublasGemmEx (N = %d) failed", tag.c_str(), n);
    const std::vector<double> cref = to_host(d_cref, R * n, fp32, st);
    {
        Rng g(cseed, 7, (uint64_t)n);
        std::vector<double> a, b;
        for (int i = 0; i < 256; ++i) {
            const int64_t r = (int64_t)g.below((uint64_t)R), j = (int64_t)g.below((uint64_t)n);
            double acc = 0;
            for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
                const size_t bi = (size_t)(j * C + m.col[k]);
                const double bv = fp32 ? (double)reinterpret_cast<const float *>(hb.data())[bi]
                                       : half_value(reinterpret_cast<const uint16_t *>(hb.data())[bi]);
                acc += m.value(k) * bv;
            }
            a.push_back(cref[(size_t)(j * R + r)]);
            b.push_back(acc);
        }
        row.err_cublas_ref = rel_l2(a, b);
        if (!(row.err_cublas_ref <= tol))
            die("%s: cublasGemmEx disagrees with the host reference (rel. err %.3g): the driver is broken",
                tag.c_str(), row.err_cublas_ref);
    }

    // ---- cuSPARSE SpMM: CSR int32, column-major B and C, every algorithm that takes the problem
    // (copy k of the inputs: descriptors A[k] and mb[k], work buffer buf[k]; k = 0 made here)
    struct SpAlg {
        cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT;
        const char *name = "";
        std::vector<cusparseSpMatDescr_t> A;
        std::vector<std::unique_ptr<DevBuf>> buf;
        size_t buf_bytes = 0;
        bool ok = false, timed = false;
        double us = NAN, once_us = NAN; /* median of the timing series; one untimed-method run after the check */
    };
    SpAlg algs[4];
    const cusparseSpMMAlg_t alg_ids[4] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2,
                                          CUSPARSE_SPMM_CSR_ALG3};
    const char *const alg_names[4] = {"ALG_DEFAULT", "CSR_ALG1", "CSR_ALG2", "CSR_ALG3"};
    for (int i = 0; i < 4; ++i) {
        algs[i].alg = alg_ids[i];
        algs[i].name = alg_names[i];
    }
    std::vector<cusparseDnMatDescr_t> mb;
    cusparseDnMatDescr_t mc = nullptr;
    {
        cusparseDnMatDescr_t b0 = nullptr;
        CUSPARSE_OK(cusparseCreateDnMat(&b0, C, n, C, d_b.p, vt, CUSPARSE_ORDER_COL));
        mb.push_back(b0);
    }
    CUSPARSE_OK(cusparseCreateDnMat(&mc, R, n, R, d_c.p, vt, CUSPARSE_ORDER_COL));
    const cusparseOperation_t opn = CUSPARSE_OPERATION_NON_TRANSPOSE;
    auto sparse_mm = [&](SpAlg &a, int k) -> bool {
        return cusparseSpMM(cx.sparse, opn, opn, &alpha, a.A[(size_t)k], mb[(size_t)k], &beta, mc, CUDA_R_32F, a.alg,
                            a.buf[(size_t)k]->p) == CUSPARSE_STATUS_SUCCESS;
    };
    auto csr_descr = [&](size_t k) {
        cusparseSpMatDescr_t d = nullptr;
        const Pool::Csr &c = pool.csr[k];
        CUSPARSE_OK(cusparseCreateCsr(&d, R, C, m.nnz, const_cast<void *>(c.rp), const_cast<void *>(c.col),
                                      const_cast<void *>(c.val), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, vt));
        return d;
    };
    row.err_cusparse = 0;
    std::string why[4];
    for (int i = 0; i < 4; ++i) {
        SpAlg &a = algs[i];
        a.A.push_back(csr_descr(0));
        size_t bs = 0;
        cusparseStatus_t ss = cusparseSpMM_bufferSize(cx.sparse, opn, opn, &alpha, a.A[0], mb[0], &beta, mc,
                                                      CUDA_R_32F, a.alg, &bs);
        if (ss != CUSPARSE_STATUS_SUCCESS) {
            why[i] = strf("n/a (bufferSize: %s)", cusparseGetErrorString(ss));
            continue;
        }
        a.buf_bytes = bs;
        a.buf.emplace_back(new DevBuf(bs));
        ss = cusparseSpMM_preprocess(cx.sparse, opn, opn, &alpha, a.A[0], mb[0], &beta, mc, CUDA_R_32F, a.alg,
                                     a.buf[0]->p);
        if (ss != CUSPARSE_STATUS_SUCCESS) {
            why[i] = strf("n/a (preprocess: %s)", cusparseGetErrorString(ss));
            continue;
        }
        CUDA_OK(cudaMemsetAsync(d_c.p, 0xFF, d_c.bytes, st));
        if (!sparse_mm(a, 0)) {
            why[i] = "n/a (cusparseSpMM failed)";
            continue;
        }
        const double e = rel_l2(to_host(d_c, R * n, fp32, st), cref);
        if (!(e <= tol)) {
            why[i] = strf("n/a (wrong: rel. err %.3g)", e);
            continue;
        }
        row.err_cusparse = std::max(row.err_cusparse, e);
        a.ok = true;
        /* One timed run (L2 warm), to leave out of the timing series algorithms that are orders of magnitude
         * slower than the others (CSR_ALG1 / ALG_DEFAULT with column-major B took ~170 ms on the H100). */
        cudaEvent_t e0, e1;
        CUDA_OK(cudaEventCreate(&e0));
        CUDA_OK(cudaEventCreate(&e1));
        CUDA_OK(cudaEventRecord(e0, st));
        const bool ran = sparse_mm(a, 0);
        CUDA_OK(cudaEventRecord(e1, st));
        CUDA_OK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        a.once_us = ran ? 1e3 * ms : NAN;
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    if (!std::any_of(algs, algs + 4, [](const SpAlg &a) { return a.ok; }))
        die("%s: no cusparseSpMM algorithm accepts the problem (%s; %s; %s; %s)", tag.c_str(), why[0].c_str(),
            why[1].c_str(), why[2].c_str(), why[3].c_str());
    double best_once = INFINITY;
    for (const SpAlg &a : algs)
        if (a.ok && a.once_us < best_once)
            best_once = a.once_us;
    for (int i = 0; i < 4; ++i) {
        SpAlg &a = algs[i];
        a.timed = a.ok && a.once_us <= 10.0 * best_once;
        if (a.ok && !a.timed && !cfg.check_only)
            why[i] = strf("~%.0f (one run; over 10x the fastest, not timed)", a.once_us);
    }

    // ---- macko
    auto macko_mm = [&](int k) -> macko_status_t {
        const macko_mat_t Ak = pool.macko[(size_t)k];
        if (fp32)
            return macko_Sspmm(cx.macko, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, Ak,
                               static_cast<const float *>(rot.x[(size_t)k]), C, &beta, d_c.as<float>(), R);
        return macko_Hspmm(cx.macko, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, Ak,
                           static_cast<const macko_half *>(rot.x[(size_t)k]), C, &beta, d_c.as<macko_half>(), R);
    };
    const char *mm_name = fp32 ? "macko_Sspmm" : "macko_Hspmm";
    bool macko_ok = row.ok();
    macko_status_t mst;
    std::vector<unsigned char> cmacko; /* macko's checked result (copy 0), raw bytes */
    if (macko_ok) {
        CUDA_OK(cudaMemsetAsync(d_c.p, 0xFF, d_c.bytes, st));
        if ((mst = macko_mm(0)) != MACKO_STATUS_SUCCESS) {
            row.status = "FAIL " + macko_error(mm_name, mst);
            macko_ok = false;
        } else {
            const cudaError_t ce = cudaStreamSynchronize(st);
            if (ce != cudaSuccess)
                die("%s: %s left a CUDA error: %s", tag.c_str(), mm_name, cudaGetErrorString(ce));
            cmacko = raw_bytes(d_c, st);
            row.err_macko = rel_l2(to_host(d_c, R * n, fp32, st), cref);
            if (!(row.err_macko <= tol)) {
                row.status = strf("FAIL check: rel. err %.3g > %.0e", row.err_macko, tol);
                macko_ok = false;
            }
        }
    }
    if (!macko_ok)
        fprintf(stderr, "\n*** %s: macko %s ***\n\n", tag.c_str(), row.status.c_str());

    // ---- --flush rotate: the copies, and a check that the last copy of each method gives the checked result
    if (cfg.rotate && !cfg.check_only) {
        std::string rwhy, macko_fail;
        size_t sp_per_copy = 0;
        for (const SpAlg &a : algs)
            if (a.timed)
                sp_per_copy += round_up(a.buf_bytes, kCopyAlign) + kAllocSlack;
        if (setup_rotation(pool, rot, cx.env->l2, d_b.bytes, macko_ok, sp_per_copy, rwhy, macko_fail)) {
            for (size_t k = 1; k < (size_t)rot.ks && rot.on; ++k) {
                cusparseDnMatDescr_t bk = nullptr;
                CUSPARSE_OK(cusparseCreateDnMat(&bk, C, n, C, const_cast<void *>(rot.x[k]), vt, CUSPARSE_ORDER_COL));
                mb.push_back(bk);
                for (SpAlg &a : algs) {
                    if (!a.timed)
                        continue;
                    a.A.push_back(csr_descr(k));
                    std::unique_ptr<DevBuf> b = DevBuf::try_alloc(a.buf_bytes);
                    if (!b) {
                        rot.on = false;
                        rwhy = strf("cudaMalloc of a cusparseSpMM buffer copy (%zu bytes) failed", a.buf_bytes);
                        break;
                    }
                    a.buf.push_back(std::move(b));
                    const cusparseStatus_t ss = cusparseSpMM_preprocess(cx.sparse, opn, opn, &alpha, a.A[k], mb[k],
                                                                        &beta, mc, CUDA_R_32F, a.alg, a.buf[k]->p);
                    if (ss != CUSPARSE_STATUS_SUCCESS) {
                        rot.on = false;
                        rwhy = strf("cusparseSpMM_preprocess (%s) on copy %zu: %s", a.name, k,
                                    cusparseGetErrorString(ss));
                        break;
                    }
                }
            }
        }
        rotation_macko_failed(row, macko_ok, macko_fail, tag);
        if (rot.on) {
            const int lb = rot.kb - 1, ls = rot.ks - 1;
            CUDA_OK(cudaMemsetAsync(d_c.p, 0xFF, d_c.bytes, st));
            const bool ran = blas_mm(d_c.p, lb);
            const double e = ran ? rel_l2(to_host(d_c, R * n, fp32, st), cref) : INFINITY;
            if (!(e <= tol))
                die("%s: cublasGemmEx on copy %d disagrees with copy 0 (rel. err %.3g)", tag.c_str(), lb, e);
            for (SpAlg &a : algs) {
                if (!a.timed)
                    continue;
                CUDA_OK(cudaMemsetAsync(d_c.p, 0xFF, d_c.bytes, st));
                const bool ok = sparse_mm(a, ls);
                const double es = ok ? rel_l2(to_host(d_c, R * n, fp32, st), cref) : INFINITY;
                if (!(es <= tol))
                    die("%s: cusparseSpMM (%s) on copy %d disagrees with cuBLAS (rel. err %.3g)", tag.c_str(), a.name,
                        ls, es);
            }
            check_last_macko_copy(row, macko_ok, rot, macko_mm, mm_name, d_c, cmacko, st, tag);
        }
        record_rotation(row, rot, macko_ok, rwhy, tag);
    }

    // ---- timing
    auto t0 = std::chrono::steady_clock::now();
    if (!cfg.check_only) {
        row.gemm_us = cx.timer.median_us(rot.kb, [&](int k) { return blas_mm(d_c.p, k); });
        row.cublas_us = row.gemm_us;
        row.cublas_variant = "GemmEx";
        for (int i = 0; i < 4; ++i) {
            SpAlg &a = algs[i];
            if (!a.timed)
                continue;
            a.us = cx.timer.median_us(rot.ks, [&](int k) { return sparse_mm(a, k); });
            why[i] = fmt_num(a.us, "%.1f");
            if (!(a.us >= row.cusparse_us)) {
                row.cusparse_us = a.us;
                row.cusparse_alg = a.name;
            }
        }
        row.sp_default_us = algs[0].us;
        row.sp_alg2_us = algs[2].us;
        if (!std::isfinite(row.cublas_us) || !std::isfinite(row.cusparse_us))
            die("%s: a baseline launch failed during timing", tag.c_str());
        if (macko_ok) {
            row.macko_us = cx.timer.median_us(rot.km, [&](int k) { return macko_mm(k) == MACKO_STATUS_SUCCESS; });
            if (!std::isfinite(row.macko_us))
                row.status = "FAIL " + macko_error(mm_name, macko_mm(0));
        }
    }
    for (int i = 0; i < 4; ++i)
        row.cusparse_algs += strf("%s%s=%s", i ? " " : "", algs[i].name, why[i].empty() ? "ok" : why[i].c_str());
    const double t_time = seconds_since(t0);
    for (SpAlg &a : algs)
        for (cusparseSpMatDescr_t d : a.A)
            cusparseDestroySpMat(d);
    for (cusparseDnMatDescr_t b : mb)
        cusparseDestroyDnMat(b);
    cusparseDestroyDnMat(mc);
    CUDA_OK(cudaStreamSynchronize(st));

    fprintf(stderr, "%s: macko %s us (%s cuBLAS GemmEx %s us, %s cuSPARSE %s us [%s]), rel. err %s; timing %.1f s, "
                    "total %.1f s\n",
            tag.c_str(), fmt_num(row.macko_us, "%.1f").c_str(), fmt_num(row.vs_cublas(), "%.2fx").c_str(),
            fmt_num(row.cublas_us, "%.1f").c_str(), fmt_num(row.vs_cusparse(), "%.2fx").c_str(),
            fmt_num(row.cusparse_us, "%.1f").c_str(), row.cusparse_algs.c_str(),
            fmt_num(row.err_macko, "%.1e").c_str(), t_time, seconds_since(t_case));
    return row;
}

/* One (shape, density): the matrix is generated, encoded and uploaded once, then one row per n of ns is emitted
 * (n = 1: SpMV; n > 1: run_spmm). idx counts the rows for the progress lines. */
static void run_case(Ctx &cx, const Shape &s, double d, const std::vector<int> &ns, int &idx, int count,
                     const std::function<void(const Row &)> &emit)
{
    const Config &cfg = *cx.cfg;
    const bool fp32 = cfg.fp32;
    const size_t tsz = fp32 ? 4 : 2;
    const cudaDataType vt = fp32 ? CUDA_R_32F : CUDA_R_16F;
    const double tol = fp32 ? 1e-4 : 1e-2;
    const int64_t R = s.rows, C = s.cols;
    const auto t_case = std::chrono::steady_clock::now();
    const std::string case_tag = strf("%s d=%.2f", shape_str(s).c_str(), d);
    fprintf(stderr, "[%d/%d] %s: generating\n", idx + 1, count, case_tag.c_str());

    Row row;
    row.s = s;
    row.density = d;
    row.n = 1;

    // ---- host matrix and x
    const uint64_t cseed = case_seed(cfg.seed, s, d);
    auto t0 = std::chrono::steady_clock::now();
    HostCsr m = generate(s, d, fp32, cseed, cfg.threads);
    row.nnz = m.nnz;
    std::vector<unsigned char> hx((size_t)C * tsz);
    {
        Rng gx(cseed, 4, 0);
        for (int64_t j = 0; j < C; ++j) {
            if (fp32) {
                const float v = (float)gx.pm1();
                memcpy(&hx[(size_t)j * 4], &v, 4);
            } else {
                const uint16_t v = half_bits((float)gx.pm1());
                memcpy(&hx[(size_t)j * 2], &v, 2);
            }
        }
    }
    const double t_gen = seconds_since(t0);

    // ---- macko encoding (host), through the public API
    t0 = std::chrono::steady_clock::now();
    macko_mat_t A = nullptr;
    macko_status_t mst = macko_mat_create_csr_host(&A, R, C, m.nnz, m.row_ptr.get(), m.col.get(), m.values(),
                                                   MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO,
                                                   fp32 ? MACKO_R_32F : MACKO_R_16F);
    if (mst != MACKO_STATUS_SUCCESS) {
        row.status = "FAIL " + macko_error("macko_mat_create_csr_host", mst);
        A = nullptr;
    } else if ((mst = macko_mat_get_storage(A, &row.storage, &row.entries, &row.entries_padded, &row.effd)) !=
               MACKO_STATUS_SUCCESS) {
        row.status = "FAIL " + macko_error("macko_mat_get_storage", mst);
    }
    row.macko_bytes = row.storage + (int64_t)tsz * (R + C);
    const double t_enc = seconds_since(t0);

    // ---- device copies: CSR, x, dense (built on the device from the CSR), outputs
    t0 = std::chrono::steady_clock::now();
    cudaStream_t st = cx.stream;
    DevBuf d_rp((size_t)(R + 1) * 4), d_col((size_t)m.nnz * 4), d_val((size_t)m.nnz * tsz), d_x((size_t)C * tsz);
    DevBuf d_dense((size_t)R * (size_t)C * tsz), d_yref((size_t)R * tsz), d_y((size_t)R * tsz);
    CUDA_OK(cudaMemcpyAsync(d_rp.p, m.row_ptr.get(), d_rp.bytes, cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaMemcpyAsync(d_col.p, m.col.get(), d_col.bytes, cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaMemcpyAsync(d_val.p, m.values(), d_val.bytes, cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaMemcpyAsync(d_x.p, hx.data(), d_x.bytes, cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaMemsetAsync(d_dense.p, 0, d_dense.bytes, st));
    {
        const unsigned blocks = (unsigned)((R + 7) / 8);
        if (fp32)
            scatter_rows<float><<<blocks, 256, 0, st>>>(d_rp.as<int32_t>(), d_col.as<int32_t>(), d_val.as<float>(),
                                                        d_dense.as<float>(), R, C);
        else
            scatter_rows<uint16_t><<<blocks, 256, 0, st>>>(d_rp.as<int32_t>(), d_col.as<int32_t>(),
                                                           d_val.as<uint16_t>(), d_dense.as<uint16_t>(), R, C);
        CUDA_OK(cudaGetLastError());
    }
    CUDA_OK(cudaStreamSynchronize(st));
    if (row.ok() && (mst = macko_mat_upload(cx.macko, A)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_mat_upload", mst);
    if (row.ok() && (mst = macko_analysis(cx.macko, MACKO_OPERATION_NON_TRANSPOSE, A)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_analysis", mst);
    if (row.ok() && (mst = force_spmv_geometry(cx.macko, A, cfg.spmv_geometry)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_plan_override", mst);
    const double t_setup0 = seconds_since(t0);
    row.flush = cfg.check_only ? "none" : "write";
    const Row base = row;

    // ---- the matrix inputs (and their copies for --flush rotate, made per row as needed)
    Pool pool;
    pool.handle = cx.macko;
    pool.stream = st;
    pool.fp32 = fp32;
    pool.spmv_geometry = cfg.spmv_geometry;
    pool.rows = R;
    pool.cols = C;
    pool.storage = row.storage;
    pool.dense_bytes = d_dense.bytes;
    pool.rp_bytes = d_rp.bytes;
    pool.col_bytes = d_col.bytes;
    pool.val_bytes = d_val.bytes;
    pool.dense.push_back(d_dense.p);
    pool.csr.push_back({d_rp.p, d_col.p, d_val.p});
    pool.macko.push_back(A);

    if (std::find(ns.begin(), ns.end(), 1) != ns.end()) {
        t0 = std::chrono::steady_clock::now();
        const std::string tag = strf("[%d/%d] %s n=1", ++idx, count, case_tag.c_str());

        const float alpha = 1.0f, beta = 0.0f;
        const int iR = (int)R, iC = (int)C;
        Rotation rot(d_x.p); /* x copies (rot.x[k]); the matrix copies are pool.*[k]; k = 0: the originals */

        // ---- cuBLAS: row-major A is a column-major C x R matrix; y = A x is op T on it
        auto blas_gemm = [&](void *y, int k) -> bool {
            return cublasGemmEx(cx.blas, CUBLAS_OP_T, CUBLAS_OP_N, iR, 1, iC, &alpha, pool.dense[(size_t)k], vt, iC,
                                rot.x[(size_t)k], vt, iC, &beta, y, vt, iR, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
        };
        auto blas_gemv = [&](void *y, int k) -> bool {
            if (fp32)
                return cublasSgemv(cx.blas, CUBLAS_OP_T, iC, iR, &alpha,
                                   static_cast<const float *>(pool.dense[(size_t)k]), iC,
                                   static_cast<const float *>(rot.x[(size_t)k]), 1, &beta, static_cast<float *>(y),
                                   1) == CUBLAS_STATUS_SUCCESS;
            return cublasHSHgemvStridedBatched(cx.blas, CUBLAS_OP_T, iC, iR, &alpha,
                                               static_cast<const __half *>(pool.dense[(size_t)k]), iC,
                                               (long long)R * C, static_cast<const __half *>(rot.x[(size_t)k]), 1, C,
                                               &beta, static_cast<__half *>(y), 1, R, 1) == CUBLAS_STATUS_SUCCESS;
        };
        // The reference: GemmEx for fp16, Sgemv for fp32.
        CUDA_OK(cudaMemsetAsync(d_yref.p, 0xFF, d_yref.bytes, st));
        if (!(fp32 ? blas_gemv(d_yref.p, 0) : blas_gemm(d_yref.p, 0)))
            die("%s: cuBLAS reference call failed", tag.c_str());
        const std::vector<double> yref = to_host(d_yref, R, fp32, st);
        {
            // Spot-check the reference against a double-precision host product on up to 256 rows.
            Rng g(cseed, 5, 0);
            std::vector<double> a, b;
            for (int i = 0; i < 256 && i < R; ++i) {
                const int64_t r = R <= 256 ? i : (int64_t)g.below((uint64_t)R);
                double acc = 0;
                for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
                    const int64_t c = m.col[k];
                    const double xv = fp32 ? (double)reinterpret_cast<const float *>(hx.data())[c]
                                           : half_value(reinterpret_cast<const uint16_t *>(hx.data())[c]);
                    acc += m.value(k) * xv;
                }
                a.push_back(yref[(size_t)r]);
                b.push_back(acc);
            }
            row.err_cublas_ref = rel_l2(a, b);
            if (!(row.err_cublas_ref <= tol))
                die("%s: cuBLAS disagrees with the host reference (rel. err %.3g): the driver is broken", tag.c_str(),
                    row.err_cublas_ref);
        }
        if (!fp32) {
            CUDA_OK(cudaMemsetAsync(d_y.p, 0xFF, d_y.bytes, st));
            if (!blas_gemv(d_y.p, 0))
                die("%s: cublasHSHgemvStridedBatched failed", tag.c_str());
            const double e = rel_l2(to_host(d_y, R, fp32, st), yref);
            if (!(e <= tol))
                die("%s: cublasHSHgemvStridedBatched disagrees with cublasGemmEx (rel. err %.3g)", tag.c_str(), e);
        }

        // ---- cuSPARSE: CSR int32, both algorithms, each with its own descriptor and preprocessed buffer
        // (copy k of the inputs: descriptors spA[a][k] and vx[k], work buffer spbuf[a][k]; k = 0 made here)
        const cusparseSpMVAlg_t algs[2] = {CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG2};
        std::vector<cusparseSpMatDescr_t> spA[2];
        std::vector<cusparseDnVecDescr_t> vx;
        cusparseDnVecDescr_t vy = nullptr;
        std::vector<std::unique_ptr<DevBuf>> spbuf[2];
        size_t spbuf_bytes[2] = {0, 0};
        /* Descriptors, buffer and preprocessing of copy k = vx.size(); false when its buffer cannot be allocated. */
        auto add_sparse_copy = [&]() -> bool {
            const size_t k = vx.size();
            cusparseDnVecDescr_t v = nullptr;
            CUSPARSE_OK(cusparseCreateDnVec(&v, C, const_cast<void *>(rot.x[k]), vt));
            vx.push_back(v);
            for (int a = 0; a < 2; ++a) {
                cusparseSpMatDescr_t d = nullptr;
                const Pool::Csr &c = pool.csr[k];
                CUSPARSE_OK(cusparseCreateCsr(&d, R, C, m.nnz, const_cast<void *>(c.rp), const_cast<void *>(c.col),
                                              const_cast<void *>(c.val), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                              CUSPARSE_INDEX_BASE_ZERO, vt));
                spA[a].push_back(d);
                size_t bs = 0;
                CUSPARSE_OK(cusparseSpMV_bufferSize(cx.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, d, v, &beta,
                                                    vy, CUDA_R_32F, algs[a], &bs));
                spbuf_bytes[a] = std::max(spbuf_bytes[a], bs);
                std::unique_ptr<DevBuf> b = DevBuf::try_alloc(bs);
                if (!b) {
                    if (k == 0)
                        die("%s: cudaMalloc of the cusparseSpMV buffer (%zu bytes) failed", tag.c_str(), bs);
                    return false;
                }
                spbuf[a].push_back(std::move(b));
                CUSPARSE_OK(cusparseSpMV_preprocess(cx.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, d, v, &beta,
                                                    vy, CUDA_R_32F, algs[a], spbuf[a].back()->p));
            }
            return true;
        };
        CUSPARSE_OK(cusparseCreateDnVec(&vy, R, d_y.p, vt));
        add_sparse_copy();
        auto sparse_mv = [&](int a, int k) -> bool {
            return cusparseSpMV(cx.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, spA[a][(size_t)k], vx[(size_t)k],
                                &beta, vy, CUDA_R_32F, algs[a], spbuf[a][(size_t)k]->p) == CUSPARSE_STATUS_SUCCESS;
        };
        row.err_cusparse = 0;
        for (int a = 0; a < 2; ++a) {
            CUDA_OK(cudaMemsetAsync(d_y.p, 0xFF, d_y.bytes, st));
            if (!sparse_mv(a, 0))
                die("%s: cusparseSpMV (alg %d) failed", tag.c_str(), (int)algs[a]);
            const double e = rel_l2(to_host(d_y, R, fp32, st), yref);
            row.err_cusparse = std::max(row.err_cusparse, e);
            if (!(e <= tol))
                die("%s: cusparseSpMV (alg %d) disagrees with cuBLAS (rel. err %.3g)", tag.c_str(), (int)algs[a], e);
        }

        // ---- macko: upload, analysis, check against cuBLAS
        auto macko_mv = [&](int k) -> macko_status_t {
            const macko_mat_t Ak = pool.macko[(size_t)k];
            if (fp32)
                return macko_Sspmv(cx.macko, MACKO_OPERATION_NON_TRANSPOSE, &alpha, Ak,
                                   static_cast<const float *>(rot.x[(size_t)k]), 1, &beta, d_y.as<float>(), 1);
            return macko_Hspmv(cx.macko, MACKO_OPERATION_NON_TRANSPOSE, &alpha, Ak,
                               static_cast<const macko_half *>(rot.x[(size_t)k]), 1, &beta, d_y.as<macko_half>(), 1);
        };
        const char *mv_name = fp32 ? "macko_Sspmv" : "macko_Hspmv";
        bool macko_ok = row.ok();
        std::vector<unsigned char> ymacko; /* macko's checked result (copy 0), raw bytes */
        if (macko_ok) {
            CUDA_OK(cudaMemsetAsync(d_y.p, 0xFF, d_y.bytes, st));
            if ((mst = macko_mv(0)) != MACKO_STATUS_SUCCESS) {
                row.status = "FAIL " + macko_error(mv_name, mst);
                macko_ok = false;
            } else {
                const cudaError_t ce = cudaStreamSynchronize(st);
                if (ce != cudaSuccess)
                    die("%s: %s left a CUDA error: %s", tag.c_str(), mv_name, cudaGetErrorString(ce));
                ymacko = raw_bytes(d_y, st);
                row.err_macko = rel_l2(to_host(d_y, R, fp32, st), yref);
                if (!(row.err_macko <= tol)) {
                    row.status = strf("FAIL check: rel. err %.3g > %.0e", row.err_macko, tol);
                    macko_ok = false;
                }
            }
        }
        if (!macko_ok)
            fprintf(stderr, "\n*** %s: macko %s ***\n\n", tag.c_str(), row.status.c_str());

        // ---- --flush rotate: the copies, and a check that the last copy of each method gives the checked result
        if (cfg.rotate && !cfg.check_only) {
            std::string why, macko_fail;
            const size_t sp_per_copy = round_up(spbuf_bytes[0], kCopyAlign) + round_up(spbuf_bytes[1], kCopyAlign) +
                                       2 * kAllocSlack;
            if (setup_rotation(pool, rot, cx.env->l2, d_x.bytes, macko_ok, sp_per_copy, why, macko_fail)) {
                while (rot.on && (int)vx.size() < rot.ks) {
                    if (!add_sparse_copy()) {
                        rot.on = false;
                        why = strf("cudaMalloc of a cusparseSpMV buffer copy (%zu bytes) failed",
                                   std::max(spbuf_bytes[0], spbuf_bytes[1]));
                    }
                }
            }
            rotation_macko_failed(row, macko_ok, macko_fail, tag);
            if (rot.on) {
                const int lb = rot.kb - 1, ls = rot.ks - 1;
                if (!fp32) {
                    CUDA_OK(cudaMemsetAsync(d_y.p, 0xFF, d_y.bytes, st));
                    const bool ran = blas_gemm(d_y.p, lb);
                    const double e = ran ? rel_l2(to_host(d_y, R, fp32, st), yref) : INFINITY;
                    if (!(e <= tol))
                        die("%s: cublasGemmEx on copy %d disagrees with copy 0 (rel. err %.3g)", tag.c_str(), lb, e);
                }
                CUDA_OK(cudaMemsetAsync(d_y.p, 0xFF, d_y.bytes, st));
                const bool ran = blas_gemv(d_y.p, lb);
                const double e = ran ? rel_l2(to_host(d_y, R, fp32, st), yref) : INFINITY;
                if (!(e <= tol))
                    die("%s: cuBLAS gemv on copy %d disagrees with copy 0 (rel. err %.3g)", tag.c_str(), lb, e);
                for (int a = 0; a < 2; ++a) {
                    CUDA_OK(cudaMemsetAsync(d_y.p, 0xFF, d_y.bytes, st));
                    const bool ok = sparse_mv(a, ls);
                    const double es = ok ? rel_l2(to_host(d_y, R, fp32, st), yref) : INFINITY;
                    if (!(es <= tol))
                        die("%s: cusparseSpMV (alg %d) on copy %d disagrees with cuBLAS (rel. err %.3g)", tag.c_str(),
                            (int)algs[a], ls, es);
                }
                check_last_macko_copy(row, macko_ok, rot, macko_mv, mv_name, d_y, ymacko, st, tag);
            }
            record_rotation(row, rot, macko_ok, why, tag);
        }
        const double t_setup = t_setup0 + seconds_since(t0);

        // ---- timing
        t0 = std::chrono::steady_clock::now();
        if (!cfg.check_only) {
            if (fp32) {
                row.gemv_us = cx.timer.median_us(rot.kb, [&](int k) { return blas_gemv(d_y.p, k); });
                row.cublas_us = row.gemv_us;
                row.cublas_variant = "Sgemv";
            } else {
                row.gemm_us = cx.timer.median_us(rot.kb, [&](int k) { return blas_gemm(d_y.p, k); });
                row.gemv_us = cx.timer.median_us(rot.kb, [&](int k) { return blas_gemv(d_y.p, k); });
                const bool gemm_faster = row.gemm_us <= row.gemv_us;
                row.cublas_us = gemm_faster ? row.gemm_us : row.gemv_us;
                row.cublas_variant = gemm_faster ? "GemmEx" : "HSHgemv";
            }
            row.sp_default_us = cx.timer.median_us(rot.ks, [&](int k) { return sparse_mv(0, k); });
            row.sp_alg2_us = cx.timer.median_us(rot.ks, [&](int k) { return sparse_mv(1, k); });
            const bool def_faster = row.sp_default_us <= row.sp_alg2_us;
            row.cusparse_us = def_faster ? row.sp_default_us : row.sp_alg2_us;
            row.cusparse_alg = def_faster ? "ALG_DEFAULT" : "CSR_ALG2";
            if (!std::isfinite(row.cublas_us) || !std::isfinite(row.cusparse_us))
                die("%s: a baseline launch failed during timing", tag.c_str());
            if (macko_ok) {
                row.macko_us = cx.timer.median_us(rot.km, [&](int k) { return macko_mv(k) == MACKO_STATUS_SUCCESS; });
                if (!std::isfinite(row.macko_us))
                    row.status = "FAIL " + macko_error(mv_name, macko_mv(0));
            }
        }
        const double t_time = seconds_since(t0);

        for (int a = 0; a < 2; ++a)
            for (cusparseSpMatDescr_t d : spA[a])
                cusparseDestroySpMat(d);
        for (cusparseDnVecDescr_t v : vx)
            cusparseDestroyDnVec(v);
        cusparseDestroyDnVec(vy);
        CUDA_OK(cudaStreamSynchronize(st));

        fprintf(stderr,
                "%s: macko %s us (%s cuBLAS, %s cuSPARSE), rel. err %s; gen %.1f s, encode %.1f s, setup %.1f s, "
                "timing %.1f s, total %.1f s\n",
                tag.c_str(), fmt_num(row.macko_us, "%.1f").c_str(), fmt_num(row.vs_cublas(), "%.2fx").c_str(),
                fmt_num(row.vs_cusparse(), "%.2fx").c_str(), fmt_num(row.err_macko, "%.1e").c_str(), t_gen, t_enc,
                t_setup, t_time, seconds_since(t_case));
        emit(row);
    }
    for (int n : ns)
        if (n > 1)
            emit(run_spmm(cx, m, pool, base, n, cseed,
                          strf("[%d/%d] %s n=%d", ++idx, count, case_tag.c_str(), n)));
    macko_mat_destroy(A);
    CUDA_OK(cudaStreamSynchronize(st));
}

// ------------------------------------------------------------------------------------------------ main

/* The kernel driver's version ("580.159.04"): the first dotted number after "Kernel Module" in the first line of
 * /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release ..."). */
static std::string driver_version_in(const char *line)
{
    const char *k = strstr(line, "Kernel Module");
    for (k = k ? k : line; *k; ++k) {
        if (!isdigit((unsigned char)*k) || (k > line && !isspace((unsigned char)k[-1])))
            continue;
        const char *e = k;
        while (isdigit((unsigned char)*e) || *e == '.')
            ++e;
        const std::string t(k, e);
        if (t.find('.') != std::string::npos && (isspace((unsigned char)*e) || *e == '\0'))
            return t;
    }
    return "unknown";
}

static std::string kernel_driver_version()
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return "unknown";
    char line[512] = {0};
    const std::string v = fgets(line, sizeof line, f) ? driver_version_in(line) : "unknown";
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    const Config cfg = parse_args(argc, argv);

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
        die("no CUDA device found (use --help to see the options without a GPU)");
    if (cfg.device >= ndev)
        die("--device %d: only %d device(s)", cfg.device, ndev);
    CUDA_OK(cudaSetDevice(cfg.device));

    Env env;
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, cfg.device));
    env.device_name = prop.name;
    env.sm_count = prop.multiProcessorCount;
    env.l2 = (size_t)prop.l2CacheSize;
    env.mem = prop.totalGlobalMem;
    CUDA_OK(cudaRuntimeGetVersion(&env.runtime));
    CUDA_OK(cudaDriverGetVersion(&env.driver));
    env.kernel_driver = kernel_driver_version();
    {
        int a = 0, b = 0, c = 0;
        CUBLAS_OK(cublasGetProperty(MAJOR_VERSION, &a));
        CUBLAS_OK(cublasGetProperty(MINOR_VERSION, &b));
        CUBLAS_OK(cublasGetProperty(PATCH_LEVEL, &c));
        env.cublas_ver = strf("%d.%d.%d", a, b, c);
        CUSPARSE_OK(cusparseGetProperty(MAJOR_VERSION, &a));
        CUSPARSE_OK(cusparseGetProperty(MINOR_VERSION, &b));
        CUSPARSE_OK(cusparseGetProperty(PATCH_LEVEL, &c));
        env.cusparse_ver = strf("%d.%d.%d", a, b, c);
        macko_get_version(&a, &b, &c);
        env.macko_ver = strf("%d.%d.%d", a, b, c);
    }
    {
        char buf[64];
        const time_t now = time(nullptr);
        struct tm tmv;
        gmtime_r(&now, &tmv);
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tmv);
        env.date = buf;
    }

    Ctx cx;
    cx.cfg = &cfg;
    cx.env = &env;
    CUDA_OK(cudaStreamCreateWithFlags(&cx.stream, cudaStreamNonBlocking));
    CUBLAS_OK(cublasCreate(&cx.blas));
    CUBLAS_OK(cublasSetStream(cx.blas, cx.stream));
    CUBLAS_OK(cublasSetPointerMode(cx.blas, CUBLAS_POINTER_MODE_HOST));
    CUSPARSE_OK(cusparseCreate(&cx.sparse));
    CUSPARSE_OK(cusparseSetStream(cx.sparse, cx.stream));
    CUSPARSE_OK(cusparseSetPointerMode(cx.sparse, CUSPARSE_POINTER_MODE_HOST));
    macko_status_t mst = macko_create(&cx.macko);
    if (mst != MACKO_STATUS_SUCCESS)
        die("macko_create: %s (%s)", macko_get_status_name(mst), macko_get_last_error_message());
    if ((mst = macko_set_stream(cx.macko, cx.stream)) != MACKO_STATUS_SUCCESS)
        die("macko_set_stream: %s (%s)", macko_get_status_name(mst), macko_get_last_error_message());

    env.flush_bytes = std::max<size_t>(env.l2, size_t(1) << 20) * (size_t)cfg.flush_mult;
    DevBuf flush(env.flush_bytes);
    cx.timer.init(cx.stream, flush.p, flush.bytes, cfg.warmup, cfg.iters);
    env.copy_gbps = copy_bandwidth_gbps(cx.stream);

    const int count = (int)(cfg.shapes.size() * cfg.densities.size() * cfg.ns.size());
    fprintf(stderr, "macko-bench: %s, %d SMs, %.0f MiB L2; CUDA runtime %s, driver %s (%s); seed %" PRIu64
                    "; copy bandwidth %.0f GB/s; %d case(s)%s\n",
            env.device_name.c_str(), env.sm_count, (double)env.l2 / 1048576.0, cuda_ver(env.runtime).c_str(),
            cuda_ver(env.driver).c_str(), env.kernel_driver.c_str(), cfg.seed, env.copy_gbps, count,
            cfg.check_only ? " (check only)" : "");

    FILE *csv = nullptr;
    if (!cfg.csv.empty()) {
        csv = fopen(cfg.csv.c_str(), "w");
        if (!csv)
            die("cannot write %s: %s", cfg.csv.c_str(), strerror(errno));
        write_csv_header(csv);
    }

    std::vector<Row> rows;
    int idx = 0;
    for (const Shape &s : cfg.shapes)
        for (double d : cfg.densities)
            run_case(cx, s, d, cfg.ns, idx, count, [&](const Row &r) {
                rows.push_back(r);
                if (csv)
                    write_csv_row(csv, cfg, env, rows.back());
                write_md(cfg, env, rows);
            });
    if (csv)
        fclose(csv);

    printf("%s%s", report_header(cfg, env).c_str(), report_body(cfg, env, rows).c_str());
    int failed = 0;
    for (const Row &r : rows)
        failed += !r.ok();
    if (failed)
        printf("\n%d of %zu row(s) FAILED (see the status column)\n", failed, rows.size());

    cx.timer.destroy();
    macko_destroy(cx.macko);
    cusparseDestroy(cx.sparse);
    cublasDestroy(cx.blas);
    cudaStreamDestroy(cx.stream);
    return failed ? 2 : 0;
}
