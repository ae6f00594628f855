/*
 * report.h -- one result row per (shape, density, n), and the outputs: the CSV (one line per row, flushed as the run
 * goes) and the Markdown report (header with the device, versions, command and method; the table; geometric means).
 * bench/plot.py, bench/plot_n.py and bench/bounds.py read the CSV by column name.
 */
#ifndef MACKO_BENCH_REPORT_H
#define MACKO_BENCH_REPORT_H

#include "options.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

struct Row {
    Shape s{0, 0};
    double density = 0;     /* --kind nm: n / m of the pattern */
    std::string pattern;    /* --kind nm: "n:m:v"; empty for MACKO matrices */
    int n = 1;
    int64_t nnz = 0;
    double gemm_us = NAN, gemv_us = NAN, cublas_us = NAN; /* gemm: GemmEx or Sgemm; gemv: HSHgemv or Sgemv */
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
    /* Timed launches of the reported cuBLAS / cuSPARSE method and of macko (fewer than --iters for slow launches). */
    int iters_blas = 0, iters_sp = 0, iters_macko = 0;
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

std::string cuda_ver(int v);

void write_csv_header(FILE *f);
void write_csv_row(FILE *f, const Config &cfg, const Env &env, const Row &r);

/* The Markdown header (device, versions, command, method) and body (table, geometric means). */
std::string report_header(const Config &cfg, const Env &env);
std::string report_body(const Config &cfg, const Env &env, const std::vector<Row> &rows);
/* Rewrites cfg.md (when given) with the rows so far. */
void write_md(const Config &cfg, const Env &env, const std::vector<Row> &rows);

#endif
