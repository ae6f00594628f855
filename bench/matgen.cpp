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

uint64_t nm_case_seed(uint64_t seed, const Shape &s, const NmPattern &p)
{
    uint64_t m = case_seed(seed, s, p.density());
    m ^= splitmix64(m) + (uint64_t)(p.n * 4096 + p.m * 64 + p.v);
    return splitmix64(m);
}

/* The value of entry i of an array of type t, as a double (exact). */
static double value_of(const void *vals, macko_datatype_t t, int64_t i)
{
    switch (t) {
    case MACKO_R_64F: return static_cast<const double *>(vals)[i];
    case MACKO_R_32F: return (double)static_cast<const float *>(vals)[i];
    default: return bits_value(static_cast<const uint16_t *>(vals)[i], t);
    }
}

HostCsr generate_nm(const Shape &s, const NmPattern &p, macko_datatype_t t, uint64_t cseed, int threads, HostNm &nm)
{
    const int64_t R = s.rows, C = s.cols, W = (C + p.m - 1) / p.m, G = (R + p.v - 1) / p.v, kept = W * p.n;
    const int64_t last = C - (W - 1) * p.m; /* columns of the last window */
    /* every value drawn is nonzero, so each window keeps min(n, its columns) nonzeros in every row */
    const int64_t per_row = (W - 1) * p.n + std::min<int64_t>(p.n, last);
    if (R * per_row > INT32_MAX)
        die("%" PRId64 "x%" PRId64 " at %s has %" PRId64 " nonzeros: more than int32 CSR indices allow", R, C,
            p.str().c_str(), R * per_row);
    const size_t tsz = (size_t)value_type(t).size;
    HostCsr m;
    m.t = t;
    m.rows = R;
    m.cols = C;
    m.nnz = R * per_row;
    m.row_ptr.reset(new int32_t[R + 1]);
    for (int64_t r = 0; r <= R; ++r)
        m.row_ptr[r] = (int32_t)(r * per_row);
    const int64_t K = std::max<int64_t>(m.nnz, 1);
    m.col.reset(new int32_t[K]);
    if (t == MACKO_R_64F)
        m.d.reset(new double[K]);
    else if (t == MACKO_R_32F)
        m.f.reset(new float[K]);
    else
        m.h.reset(new uint16_t[K]);
    unsigned char *cval = static_cast<unsigned char *>(const_cast<void *>(m.values()));
    nm.p = p;
    nm.kept = kept;
    nm.groups = G;
    nm.values.reset(new unsigned char[std::max<size_t>((size_t)(R * kept) * tsz, 1)]);
    nm.positions.reset(new uint8_t[std::max<int64_t>(G * kept, 1)]);

    std::vector<std::vector<unsigned char>> bufs((size_t)threads);
    parallel_for(G, 1, threads, [&](int64_t b, int64_t e, int th) {
        std::vector<unsigned char> &buf = bufs[(size_t)th];
        for (int64_t g = b; g < e; ++g) {
            const int64_t r0 = g * p.v, nr = std::min<int64_t>(p.v, R - r0);
            buf.resize((size_t)(nr * C) * tsz);
            Rng rng(cseed, 8, (uint64_t)g);
            for (int64_t i = 0; i < nr * C; ++i)
                draw_nonzero(rng, t, buf.data(), i);
            for (int64_t w = 0; w < W; ++w) {
                const int64_t c0 = w * p.m, valid = std::min<int64_t>(p.m, C - c0);
                double score[32];
                int idx[32];
                bool keep[32] = {false};
                for (int j = 0; j < valid; ++j) {
                    score[j] = 0.0;
                    for (int64_t i = 0; i < nr; ++i)
                        score[j] += std::fabs(value_of(buf.data(), t, i * C + c0 + j));
                    idx[j] = j;
                }
                std::sort(idx, idx + valid,
                          [&](int a, int c) { return score[a] > score[c] || (score[a] == score[c] && a < c); });
                for (int j = 0; j < std::min<int64_t>(p.n, valid); ++j)
                    keep[idx[j]] = true;
                /* the kept positions, then the smallest free ones (past the last column) as padding, ascending */
                uint8_t *pos = &nm.positions[(size_t)(g * kept + w * p.n)];
                int slots = 0;
                for (int j = 0; j < p.m && slots < p.n; ++j)
                    if (j >= valid || keep[j])
                        pos[slots++] = (uint8_t)j;
                for (int64_t i = 0; i < nr; ++i) {
                    const int64_t r = r0 + i;
                    int64_t at = r * per_row + w * p.n;
                    for (int k = 0; k < p.n; ++k) {
                        unsigned char *dst = &nm.values[(size_t)(r * kept + w * p.n + k) * tsz];
                        if (pos[k] >= valid) {
                            memset(dst, 0, tsz);
                            continue;
                        }
                        const unsigned char *src = &buf[(size_t)(i * C + c0 + pos[k]) * tsz];
                        memcpy(dst, src, tsz);
                        m.col[at] = (int32_t)(c0 + pos[k]);
                        memcpy(cval + (size_t)at * tsz, src, tsz);
                        ++at;
                    }
                }
            }
        }
    });
    return m;
}

std::string check_nm(const HostCsr &m, const HostNm &nm, uint64_t cseed)
{
    const NmPattern p = nm.p;
    const int64_t R = m.rows, C = m.cols, W = (C + p.m - 1) / p.m;
    const size_t tsz = (size_t)value_type(m.t).size;
    if (nm.kept != W * p.n || nm.groups != (R + p.v - 1) / p.v)
        return "kept / groups";
    std::vector<double> dense((size_t)(R * C), 0.0);
    for (int64_t r = 0; r < R; ++r)
        for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
            if (m.value(k) == 0.0 || (k > m.row_ptr[r] && m.col[k] <= m.col[k - 1]))
                return strf("CSR row %" PRId64 ": a zero or unsorted column", r);
            dense[(size_t)(r * C + m.col[k])] = m.value(k);
        }
    std::vector<unsigned char> drawn;
    for (int64_t g = 0; g < nm.groups; ++g) {
        /* the group's values before pruning, drawn again */
        const int64_t nr = std::min<int64_t>(p.v, R - g * p.v);
        drawn.resize((size_t)(nr * C) * tsz);
        Rng rng(cseed, 8, (uint64_t)g);
        for (int64_t i = 0; i < nr * C; ++i)
            draw_nonzero(rng, m.t, drawn.data(), i);
        for (int64_t w = 0; w < W; ++w) {
            const int64_t c0 = w * p.m, valid = std::min<int64_t>(p.m, C - c0);
            const uint8_t *pos = &nm.positions[(size_t)(g * nm.kept + w * p.n)];
            bool kept[32] = {false}, nonzero[32] = {false};
            for (int k = 0; k < p.n; ++k) {
                if (pos[k] >= p.m || (k > 0 && pos[k] <= pos[k - 1]))
                    return strf("group %" PRId64 " window %" PRId64 ": positions not ascending in [0, m)", g, w);
                kept[pos[k]] = true;
            }
            for (int j = 0; j < valid; ++j)
                for (int64_t r = g * p.v; r < std::min<int64_t>(R, (g + 1) * p.v); ++r)
                    nonzero[j] = nonzero[j] || dense[(size_t)(r * C + c0 + j)] != 0.0;
            /* canonical: every column with a nonzero kept, the rest the smallest positions without one */
            for (int j = 0, first_free = -1; j < p.m; ++j) {
                if (j < valid && nonzero[j]) {
                    if (!kept[j])
                        return strf("group %" PRId64 " window %" PRId64 ": column %d has a nonzero, not kept", g, w, j);
                    continue;
                }
                if (kept[j] && first_free >= 0)
                    return strf("group %" PRId64 " window %" PRId64 ": padding at %d, position %d free", g, w, j,
                                first_free);
                if (!kept[j] && first_free < 0)
                    first_free = j;
            }
            double worst_kept = INFINITY, best_dropped = -1.0;
            for (int j = 0; j < valid; ++j) {
                double score = 0.0;
                for (int64_t r = g * p.v; r < std::min<int64_t>(R, (g + 1) * p.v); ++r) {
                    const double a = dense[(size_t)(r * C + c0 + j)];
                    const double before = value_of(drawn.data(), m.t, (r - g * p.v) * C + c0 + j);
                    score += std::fabs(before);
                    if (a != 0.0 && a != before)
                        return strf("row %" PRId64 " column %" PRId64 ": kept %g, drawn %g", r, c0 + j, a, before);
                    const int64_t k = std::find(pos, pos + p.n, (uint8_t)j) - pos;
                    const double stored = k < p.n ? value_of(nm.values.get(), m.t, r * nm.kept + w * p.n + k) : 0.0;
                    if (stored != a)
                        return strf("row %" PRId64 " column %" PRId64 ": array value %g, CSR value %g", r, c0 + j,
                                    stored, a);
                }
                if (kept[j])
                    worst_kept = std::min(worst_kept, score);
                else
                    best_dropped = std::max(best_dropped, score);
            }
            if (best_dropped > worst_kept)
                return strf("group %" PRId64 " window %" PRId64 ": a dropped column outweighs a kept one", g, w);
            for (int k = 0; k < p.n; ++k)
                if (pos[k] >= valid)
                    for (int64_t r = g * p.v; r < std::min<int64_t>(R, (g + 1) * p.v); ++r)
                        if (value_of(nm.values.get(), m.t, r * nm.kept + w * p.n + k) != 0.0)
                            return "a slot past the last column holds a nonzero";
        }
    }
    /* the library takes the arrays as they are and keeps them unchanged */
    macko_mat_t A = nullptr;
    macko_status_t st = macko_mat_create_nm_host(&A, R, C, m.t, p.n, p.m, p.v, nm.values.get(), nm.positions.get());
    if (st != MACKO_STATUS_SUCCESS)
        return strf("macko_mat_create_nm_host: %s (%s)", macko_get_status_name(st), macko_get_last_error_message());
    int n = 0, mm = 0, v = 0;
    const void *vals = nullptr;
    const uint8_t *pos = nullptr;
    int64_t nnz = 0;
    std::string why;
    if ((st = macko_mat_get_nm_host(A, &n, &mm, &v, &vals, &pos)) != MACKO_STATUS_SUCCESS)
        why = strf("macko_mat_get_nm_host: %s", macko_get_status_name(st));
    else if (n != p.n || mm != p.m || v != p.v ||
             memcmp(vals, nm.values.get(), (size_t)(R * nm.kept) * tsz) != 0 ||
             memcmp(pos, nm.positions.get(), (size_t)(nm.groups * nm.kept)) != 0)
        why = "macko_mat_get_nm_host gives other arrays";
    else if (macko_mat_get_info(A, nullptr, nullptr, &nnz, nullptr) != MACKO_STATUS_SUCCESS || nnz != m.nnz)
        why = strf("macko_mat_get_info: nnz %" PRId64 ", CSR %" PRId64, nnz, m.nnz);
    macko_mat_destroy(A);
    return why;
}
