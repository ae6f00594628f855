/*
 * options.h -- macko-bench's command line: the run's configuration and its parser.
 */
#ifndef MACKO_BENCH_OPTIONS_H
#define MACKO_BENCH_OPTIONS_H

#include "macko.h"
#include "plan.h" /* the test-only plan override behind --spmv-geometry / --mm-path */

#include <cstdint>
#include <string>
#include <vector>

struct Shape {
    int64_t rows, cols;
};

/* --kind nm: one N:M pattern (lapack_style_docs/FORMAT_NM.md): n kept of every m consecutive columns, the same
 * positions for v consecutive rows. */
struct NmPattern {
    int n, m, v;
    double density() const { return (double)n / (double)m; }
    std::string str() const; /* "n:m:v" */
};

/* What a run's value type (--type) decides: the matrix, x / B and y / C all have it; fp16 and bf16 accumulate in
 * fp32, fp32 in fp32, fp64 in fp64 (the baselines' compute type too). */
struct ValueType {
    macko_datatype_t type; /* macko's and cudaDataType's number: MACKO_R_16F == CUDA_R_16F, ... */
    char letter;           /* H, B, S, D: the CSV's type column and --type's argument */
    const char *name;      /* "fp16", "bf16", "fp32", "fp64" */
    int size;              /* bytes per value */
    bool fp64_compute;     /* compute type CUDA_R_64F (double alpha/beta) instead of CUDA_R_32F */
    double tol;            /* the check's relative L2 error bound against the reference */
};
/* H, B, S, D; the one of a macko type. */
extern const ValueType kValueTypes[4];
const ValueType &value_type(macko_datatype_t t);

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
    macko_datatype_t type = MACKO_R_16F; /* --type */
    const ValueType &vt() const { return value_type(type); }
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
    /* Forced through the library's test-only plan override (src/plan.h), for experiments; the report header names
     * them, so that a forced run cannot pass for a normal one. -1 / 0: the plan's own choice. */
    int spmv_geometry = -1; /* --spmv-geometry: MACKO_SPMV_WARP / MACKO_SPMV_STAGED */
    int mm_path = 0;        /* --mm-path: MACKO_MM_PATH_STAGED / GLOBAL / TC / PANEL */
    int tiles_path = 0;     /* --tiles-path: 1 the tile kernel, 2 dense panels + GEMM, 3 fused wgmma (0: automatic) */
    int tiles_splits = 0;   /* --tiles-splits: blocks along K of the TILES kernel (0: automatic) */
    int layout = 0;         /* --layout: MACKO_LAYOUT_ROWS (0) / MACKO_LAYOUT_TILES (1), set before every upload */
    int nm_path = 0;        /* --nm-path: MACKO_NM_PATH_GEN / SIMT / SP24 / SP24WG (0: automatic) */
    int nm_cfg = 0;         /* --nm-cfg: 1 + the forced path's kernel configuration (0: automatic) */
    int panel_gemm = 0;     /* --panel-gemm: 1 mma.sync, 2 wgmma (0: automatic) */
    int64_t panel_rows = 0; /* --panel-rows: ROWS, the dense-panel path's rows per panel (0: automatic) */
    int panel_splits = 0;   /* --panel-splits: the wgmma panel GEMM's blocks along K, 1..8 (0: automatic) */
    int tiles_wg_bn = 0;    /* --tiles-bn: TILES, the fused wgmma product's C-tile width 64 / 128 / 256 (0: automatic) */
    int tiles_wg_stream = 0; /* --tiles-stream: TILES, the fused product's stream-K: -1 off, G blocks (0: automatic) */
    int tiles_wg_tail = 0;   /* --tiles-tail: TILES, the fused product's tail split: -1 off, 2..16 (0: automatic) */
    int tiles_wg_cluster = 0; /* --tiles-cluster: TILES, -1 the fused product's split K through the workspace only */
    int tiles_kg = 0;         /* --tiles-kg: TILES, the tile kernel's tiles per group at n <= 16, 8 or 16 (0: auto) */
    int tiles_cp_async = 0;   /* --tiles-cp-async: TILES, 1 the tile kernel's records by cp.async (0: automatic) */
    int simt_tc = 0;          /* --simt-form: fp32 SIMT path, 1 FMA, 2 TF32x3 (0: automatic) */
    /* --workspace-mib: a device workspace of this many MiB given to the macko handle (macko_set_workspace; a public
     * setting, not an override); 0: the handle's own 64 MiB */
    int64_t workspace_mib = 0;
    /* --kind nm: the matrices are random dense ones magnitude-pruned to each N:M pattern (instead of the densities'
     * random sparsity), encoded as MACKO_KIND_NM */
    bool nm = false;
    std::vector<NmPattern> patterns; /* --pattern */
    bool check_generator = false;    /* --check-nm-generator: check generate_nm's matrices on the host and exit */
    /* the matrix axis of the run besides the shapes: the patterns (--kind nm) or the densities */
    size_t cases_per_shape() const { return nm ? patterns.size() : densities.size(); }
    bool forced() const
    {
        return spmv_geometry >= 0 || mm_path != 0 || tiles_splits != 0 || tiles_path != 0 || nm_path != 0 ||
               panel_gemm != 0 || panel_rows != 0 || panel_splits != 0 || tiles_wg_bn != 0 || tiles_wg_stream != 0 ||
               tiles_wg_tail != 0 || tiles_wg_cluster != 0 || tiles_kg != 0 || tiles_cp_async != 0 || simt_tc != 0;
    }
};

/* Forces cfg's choices into the plan of A (op N) on handle h; SUCCESS when nothing is forced. */
macko_status_t force_plan(const Config &cfg, macko_handle_t h, macko_mat_t A);

/* Parses argv; prints the usage and exits 0 on --help, dies (exit 1) on a bad option. */
Config parse_args(int argc, char **argv);

std::string shape_str(const Shape &s);

#endif
