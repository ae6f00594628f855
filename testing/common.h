/* Shared test helpers: fp16 bits, random matrices, the double-accumulating host reference, GPU detection. */
#pragma once

#include "macko.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mt {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f); /* round to nearest even */
/* Round a float to the nearest fp16 value (as float). */
inline float round_half(float f) { return half_to_float(float_to_half(f)); }

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

/* The matrix's values as bytes of type `type`, laid out in `order` with leading dimension ld (padding bytes are
 * filled with a junk pattern that must not be read as matrix entries... they are never read, so any value). */
std::vector<uint8_t> to_bytes(const Dense &m, macko_datatype_t type, macko_order_t order, int64_t ld);
/* CSR of the nonzeros of m, in int64 (convert as needed). */
struct Csr {
    std::vector<int64_t> row_ptr, col_ind;
    std::vector<float> val;
};
Csr to_csr(const Dense &m);
std::vector<uint8_t> values_bytes(const std::vector<float> &v, macko_datatype_t type);

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
