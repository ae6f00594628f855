/*
 * options.h -- macko-bench's command line: the run's configuration and its parser.
 */
#ifndef MACKO_BENCH_OPTIONS_H
#define MACKO_BENCH_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

struct Shape {
    int64_t rows, cols;
};

/* --flush rotate: the most copies one method may cycle through (beyond it the row falls back to the write flush). */
static const int kMaxCopies = 1024;
/* --flush rotate: the copies of one method's inputs together are at least kRotateL2Mult x L2. */
static const int kRotateL2Mult = 4;
/* The largest --n. */
static const int kMaxN = 8192;

struct Config {
    std::vector<Shape> shapes;
    std::vector<double> densities;
    std::vector<int> ns{1};
    bool fp32 = false;
    uint64_t seed = 20261121;
    int warmup = 20, iters = 100;
    int flush_mult = 4;  /* flush buffer = flush_mult x L2 */
    bool rotate = false; /* --flush rotate: cycle among copies of the inputs instead of the write flush */
    bool cusparse = true; /* --no-cusparse: no cuSPARSE methods (their columns stay empty) */
    std::string csv, md;
    int device = 0;
    int threads = 0;
    bool check_only = false;
    std::string cmdline;
    /* ---- PLAN OVERRIDE: the place for a test-only option that forces the library's SpMV/SpMM path or geometry
     * (through the library's plan override, once it has one; never through an environment variable). Its field goes
     * here, its parsing in parse_args (options.cpp, marked the same way), its line in usage(), and the report header
     * (report.cpp, report_header) should name it, so that a forced run cannot pass for a normal one. ---- */
};

/* Parses argv; prints the usage and exits 0 on --help, dies (exit 1) on a bad option. */
Config parse_args(int argc, char **argv);

std::string shape_str(const Shape &s);

#endif
