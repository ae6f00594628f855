/*
 * matgen.h -- the random matrices and vectors of BENCH.md: exactly round(d*R*C) nonzeros at uniformly random
 * positions, values uniform in [-1, 1] and never zero; the same numbers whatever the thread count.
 */
#ifndef MACKO_BENCH_MATGEN_H
#define MACKO_BENCH_MATGEN_H

#include "common.h"
#include "options.h"

#include <cstdint>
#include <memory>
#include <vector>

inline uint64_t splitmix64(uint64_t &s)
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

/* float -> fp16 bits, round to nearest even, for finite |f| < 65520. */
uint16_t half_bits(float f);
/* float -> bf16 bits, round to nearest even, for finite f. */
uint16_t bf16_bits(float f);

/* A random CSR matrix on the host: int32 indices, values of type t as 16-bit patterns (h: fp16 or bf16), float
 * (f) or double (d). */
struct HostCsr {
    int64_t rows = 0, cols = 0, nnz = 0;
    macko_datatype_t t = MACKO_R_16F;
    std::unique_ptr<int32_t[]> row_ptr, col;
    std::unique_ptr<uint16_t[]> h;
    std::unique_ptr<float[]> f;
    std::unique_ptr<double[]> d;
    const void *values() const { return h ? (const void *)h.get() : f ? (const void *)f.get() : (const void *)d.get(); }
    double value(int64_t k) const { return h ? bits_value(h[k], t) : f ? (double)f[k] : d[k]; }
};

/* An N:M matrix's arrays as lapack_style_docs/FORMAT_NM.md lays them out, for macko_mat_create_nm_host: values
 * (rows * kept of the type, row-major, window by window) and positions (groups * kept bytes). */
struct HostNm {
    NmPattern p{0, 0, 0};
    int64_t kept = 0, groups = 0;
    std::unique_ptr<unsigned char[]> values;
    std::unique_ptr<uint8_t[]> positions;
};

/* The seed of one (shape, density), derived from the run's seed. */
uint64_t case_seed(uint64_t seed, const Shape &s, double d);

/* The matrix of one (shape, density); cseed from case_seed. */
HostCsr generate(const Shape &s, double d, macko_datatype_t t, uint64_t cseed, int threads);

/* The seed of one (shape, N:M pattern), derived from the run's seed (macko-bench --kind nm and
 * macko-cusparselt-bench make the same matrices from the same --seed). */
uint64_t nm_case_seed(uint64_t seed, const Shape &s, const NmPattern &p);

/* A dense R x C matrix of values uniform in [-1, 1], never zero (random stream 8, one draw per row group),
 * magnitude-pruned to p: in each group of v rows and window of m columns the n columns of largest sum |a| over the
 * group's rows are kept (ties: the lower column). Fills nm with the canonical N:M arrays (kept positions ascending;
 * padding, zero values at the smallest free positions, only where a last window has fewer than n columns) and returns
 * the same matrix as CSR (the reference, cuSPARSE and the dense copy). */
HostCsr generate_nm(const Shape &s, const NmPattern &p, macko_datatype_t t, uint64_t cseed, int threads, HostNm &nm);

/* Checks what generate_nm(.., cseed, ..) promises on the host (no GPU): the arrays hold p canonically (positions
 * ascending in [0, m), every column with a nonzero kept, padding at the smallest free positions, zero), the CSR is
 * exactly their nonzeros, the values are the ones drawn, every kept column outweighs (sum |a| over the group, within
 * the window, before pruning) every dropped one, and macko_mat_create_nm_host takes the arrays and gives them back
 * unchanged. "" or what is wrong. */
std::string check_nm(const HostCsr &m, const HostNm &nm, uint64_t cseed);

/* count values uniform in [-1, 1) from the random stream (cseed, stream, index), in type t (the x of an SpMV row:
 * stream 4, index 0; the B of an SpMM row: stream 6, index n). The positions and the random numbers do not depend on
 * t: an fp16 and a bf16 run time the same pattern, with the same values rounded to each type. */
std::vector<unsigned char> random_operand(uint64_t cseed, uint64_t stream, uint64_t index, int64_t count,
                                          macko_datatype_t t);

#endif
