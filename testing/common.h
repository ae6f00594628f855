/* Shared test helpers: fp16 bits, random matrices, the double-accumulating host reference, GPU detection. */
#pragma once

#include "macko.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace mt {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f); /* round to nearest even */
/* Round a float to the nearest fp16 value (as float). */
inline float round_half(float f) { return half_to_float(float_to_half(f)); }
/* bf16: the upper half of a float's bits; rounding to nearest even (NaN stays NaN). */
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);
inline float round_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }
/* f rounded to what value type t holds (fp32 and fp64 hold every float). */
float round_to(float f, macko_datatype_t t);
/* Every value type, for the type loops of the tests. */
constexpr macko_datatype_t kAllTypes[] = {MACKO_R_16F, MACKO_R_32F, MACKO_R_16BF, MACKO_R_64F};
/* Bytes per value of type t. */
inline size_t value_bytes(macko_datatype_t t) { return t == MACKO_R_64F ? 8 : t == MACKO_R_32F ? 4 : 2; }
/* The value (as double) of element k of a host array of type t. */
double value_at(const void *values, macko_datatype_t t, int64_t k);

/* A dense matrix in row-major float; for fp16 tests every value is exactly representable in fp16. */
struct Dense {
    int64_t rows = 0, cols = 0;
    std::vector<float> v; /* rows * cols, row-major */
    float &at(int64_t r, int64_t c) { return v[(size_t)(r * cols + c)]; }
    float at(int64_t r, int64_t c) const { return v[(size_t)(r * cols + c)]; }
    int64_t nnz() const;
};

/* Uniformly random pattern with about density*rows*cols nonzeros (each position independently), values uniform in
 * [-1, 1] and never zero, rounded to fp16 when half_exact. */
Dense random_dense(int64_t rows, int64_t cols, double density, uint64_t seed, bool half_exact);
/* Exactly round(density*rows*cols) nonzeros at uniformly random positions (BENCH.md's pattern). */
Dense random_dense_exact(int64_t rows, int64_t cols, double density, uint64_t seed, bool half_exact);
/* Adds structure that stresses the format: some empty rows, some fully dense rows, and rows with gaps > 16. */
void add_structure(Dense &m, uint64_t seed);

/* A rows x cols array of es-byte elements laid out in `order` with leading dimension ld, in max(outer, 1) * ld
 * elements whose bytes outside the array hold `junk`; put(r, c, dst) writes element (r, c) at dst. */
template <class Put>
std::vector<uint8_t> lay_out(int64_t rows, int64_t cols, size_t es, macko_order_t order, int64_t ld, uint8_t junk,
                             Put put)
{
    const int64_t outer = order == MACKO_ORDER_ROW ? rows : cols;
    std::vector<uint8_t> out((size_t)((outer > 1 ? outer : 1) * ld) * es, junk);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            put(r, c, &out[(size_t)(order == MACKO_ORDER_ROW ? r * ld + c : c * ld + r) * es]);
    return out;
}

/* The matrix's values as bytes of type `type`, laid out in `order` with leading dimension ld (padding bytes are
 * filled with a junk pattern that must not be read as matrix entries... they are never read, so any value). */
std::vector<uint8_t> to_bytes(const Dense &m, macko_datatype_t type, macko_order_t order, int64_t ld);
/* CSR of the nonzeros of m, in int64 (convert as needed). */
struct Csr {
    std::vector<int64_t> row_ptr, col_ind;
    std::vector<float> val;
};
Csr to_csr(const Dense &m);
/* The values as bytes of type `type` (rounded to nearest even for fp16/bf16). */
std::vector<uint8_t> values_bytes(const std::vector<float> &v, macko_datatype_t type);
/* m with every value rounded to what type t holds. */
Dense rounded(const Dense &m, macko_datatype_t t);

/* Random vector uniform in [-1, 1], rounded to fp16 when half_exact. */
std::vector<float> random_vector(int64_t n, uint64_t seed, bool half_exact);

/* For the non-finite-x tests: a rows x cols matrix (cols > 2000) whose nonzeros (fp16-exact) lie only in columns
 * c % 40 == 0, so every gap of 39 zero columns holds padding entries, and whose rows 3, 20, 37, ... hold only column
 * 2000 (a long run of padding); and an x of cols values that is finite (random, seed 77) at those columns and
 * NaN / +Inf / -Inf at every other one. */
Dense padding_grid_matrix(int64_t rows, int64_t cols, bool half_exact);
std::vector<float> nonfinite_off_grid_x(int64_t cols, bool half_exact);

/* Host reference: y = alpha*op(A)*x + beta*y in double, decoded from A's host MACKO arrays. Entries whose value is
 * zero (padding) are skipped, so x's Inf/NaN at unstored columns cannot leak; beta == 0 does not read y. */
void ref_spmv(macko_mat_t A, macko_operation_t op, double alpha, const std::vector<double> &x, double beta,
              std::vector<double> &y);
/* Dense oracle through the reference BLAS dgemv on m. */
void cblas_gemv(const Dense &m, macko_operation_t op, double alpha, const std::vector<double> &x, double beta,
                std::vector<double> &y);

/* Relative L2 error ||a - b|| / ||b|| (0 when both are zero). */
double rel_l2(const std::vector<double> &a, const std::vector<double> &b);

/* ---- files and bytes of the host tests */
using Bytes = std::vector<uint8_t>;
/* The whole file (empty when it cannot be read). */
Bytes read_file(const std::string &path);
/* Replaces the file's contents with b (a failure is reported). */
void write_file(const std::string &path, const Bytes &b);
/* A's serialized bytes (empty after a failure, which is reported). */
Bytes serialized(macko_mat_t A);
/* A and B (both with a host copy) hold the same info, storage and byte-identical host arrays. */
void expect_same_host(macko_mat_t A, macko_mat_t B);
/* A fresh directory under the temporary directory, removed with its contents at scope exit. */
struct TempDir {
    std::filesystem::path path;
    TempDir();
    ~TempDir();
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    std::string file(const std::string &name) const { return (path / name).string(); }
    std::vector<std::string> entries() const; /* the names in it, sorted */
};

/* Starts n threads running f(t) at (about) the same moment; returns after all have finished. */
template <class F> void run_threads(int n, F f)
{
    std::atomic<int> ready{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < n; t++)
        ts.emplace_back([&, t] {
            ready.fetch_add(1);
            while (ready.load() < n)
                std::this_thread::yield();
            f(t);
        });
    for (auto &th : ts)
        th.join();
}

/* True when a CUDA device can be used. */
bool gpu_available();

/* Repetitions of the run-to-run determinism tests: def, or MACKO_TEST_REPEATS (a positive integer) when set.
 * testing/run_gpu.sh lowers it only under compute-sanitizer racecheck, where one repetition takes seconds. */
int repeat_count(int def);

} // namespace mt

#define MACKO_REQUIRE_GPU()                                                                                          \
    do {                                                                                                             \
        if (!mt::gpu_available())                                                                                    \
            GTEST_SKIP() << "no CUDA device: GPU test skipped";                                                      \
    } while (0)
