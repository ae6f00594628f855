/* matgen.cpp -- see matgen.h. */
#include "matgen.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

/* Written out because the host path of __float2half_rn is slow enough to dominate generating half a billion values. */
uint16_t half_bits(float f)
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

uint16_t bf16_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/* One random value in [-1, 1), never zero after rounding to t, stored at out[i] (out: t's values). */
static void draw_nonzero(Rng &g, macko_datatype_t t, void *out, int64_t i)
{
    switch (t) {
    case MACKO_R_64F: {
        double v;
        do
            v = g.pm1();
        while (v == 0.0);
        static_cast<double *>(out)[i] = v;
        return;
    }
    case MACKO_R_32F: {
        float v;
        do
            v = (float)g.pm1();
        while (v == 0.0f);
        static_cast<float *>(out)[i] = v;
        return;
    }
    default: {
        uint16_t v;
        do
            v = t == MACKO_R_16BF ? bf16_bits((float)g.pm1()) : half_bits((float)g.pm1());
        while ((v & 0x7FFF) == 0);
        static_cast<uint16_t *>(out)[i] = v;
    }
    }
}

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

uint64_t case_seed(uint64_t seed, const Shape &s, double d)
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
HostCsr generate(const Shape &s, double d, macko_datatype_t t, uint64_t cseed, int threads)
{
    HostCsr m;
    m.t = t;
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
    if (t == MACKO_R_64F)
        m.d.reset(new double[std::max<int64_t>(K, 1)]);
    else if (t == MACKO_R_32F)
        m.f.reset(new float[std::max<int64_t>(K, 1)]);
    else
        m.h.reset(new uint16_t[std::max<int64_t>(K, 1)]);
    void *vals = const_cast<void *>(m.values());

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
            for (int64_t i = 0; i < k; ++i)
                draw_nonzero(gv, m.t, vals, base + i);
        }
    });
    return m;
}

std::vector<unsigned char> random_operand(uint64_t cseed, uint64_t stream, uint64_t index, int64_t count,
                                          macko_datatype_t t)
{
    const size_t sz = (size_t)value_type(t).size;
    std::vector<unsigned char> out((size_t)count * sz);
    Rng g(cseed, stream, index);
    for (int64_t j = 0; j < count; ++j) {
        const double r = g.pm1();
        unsigned char *o = &out[(size_t)j * sz];
        if (t == MACKO_R_64F) {
            memcpy(o, &r, 8);
        } else if (t == MACKO_R_32F) {
            const float v = (float)r;
            memcpy(o, &v, 4);
        } else {
            const uint16_t v = t == MACKO_R_16BF ? bf16_bits((float)r) : half_bits((float)r);
            memcpy(o, &v, 2);
        }
    }
    return out;
}
