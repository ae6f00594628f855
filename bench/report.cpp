/* report.cpp -- see report.h. */
#include "report.h"

#include "common.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

std::string cuda_ver(int v) { return strf("%d.%d", v / 1000, (v % 1000) / 10); }

void write_csv_header(FILE *f)
{
    fprintf(f, "type,rows,cols,density,n,nnz,cublas_us,cublas_variant,cublas_gemm_us,cublas_gemv_us,cusparse_us,"
               "cusparse_alg,cusparse_default_us,cusparse_alg2_us,macko_us,speedup_vs_cublas,speedup_vs_cusparse,"
               "macko_bytes,macko_gbps,macko_pct_copy,copy_gbps,cublas_gbps,effective_density,macko_storage_bytes,"
               "macko_entries,macko_entries_padded,rel_err_macko,rel_err_cusparse,rel_err_cublas_spot,status,"
               "cusparse_algs,flush,rotate_k_cublas,rotate_k_cusparse,rotate_k_macko,iters_cublas,iters_cusparse,"
               "iters_macko,pattern\n");
}

void write_csv_row(FILE *f, const Config &cfg, const Env &env, const Row &r)
{
    const double tsz = cfg.vt().size;
    const double dense_bytes = tsz * ((double)r.s.rows * (double)r.s.cols + (double)r.s.rows + (double)r.s.cols);
    auto g = [](double v) { return std::isfinite(v) ? strf("%.6g", v) : std::string(); };
    std::string st = r.status;
    for (char &c : st)
        if (c == '"')
            c = '\'';
    auto k = [](int v) { return v > 0 ? strf("%d", v) : std::string(); };
    fprintf(f, "%s,%" PRId64 ",%" PRId64 ",%g,%d,%" PRId64 ",%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%" PRId64
               ",%s,%s,%s,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%s,%s,\"%s\",\"%s\",%s,%s,%s,%s,%s,%s,%s,%s\n",
            std::string(1, cfg.vt().letter).c_str(), r.s.rows, r.s.cols, r.density, r.n, r.nnz, g(r.cublas_us).c_str(),
            r.cublas_variant.c_str(), g(r.gemm_us).c_str(), g(r.gemv_us).c_str(), g(r.cusparse_us).c_str(),
            r.cusparse_alg.c_str(), g(r.sp_default_us).c_str(), g(r.sp_alg2_us).c_str(), g(r.macko_us).c_str(),
            g(r.vs_cublas()).c_str(), g(r.vs_cusparse()).c_str(), r.macko_bytes, g(r.macko_gbps()).c_str(),
            g(100.0 * r.macko_gbps() / env.copy_gbps).c_str(), g(env.copy_gbps).c_str(),
            g(dense_bytes / (r.cublas_us * 1e3)).c_str(), g(r.effd).c_str(), r.storage, r.entries, r.entries_padded,
            g(r.err_macko).c_str(), g(r.err_cusparse).c_str(), g(r.err_cublas_ref).c_str(), st.c_str(),
            r.cusparse_algs.c_str(), r.flush.c_str(), k(r.k_blas).c_str(), k(r.k_sp).c_str(), k(r.k_macko).c_str(),
            k(r.iters_blas).c_str(), k(r.iters_sp).c_str(), k(r.iters_macko).c_str(), r.pattern.c_str());
    fflush(f);
}

/* Geometric means of macko's speedups per (density, n) over the shapes whose rows are ok and timed (vs cuSPARSE over
 * those that timed it: none with --no-cusparse). */
struct Geo {
    int count = 0, count_sp = 0;
    double log_blas = 0, log_sp = 0;
    double min_blas = INFINITY, min_sp = INFINITY; /* the smallest speedup over one shape */
};

/* (-density, pattern, n): densest first, the patterns of one density apart */
using GeoKey = std::tuple<double, std::string, int>;

/* The density column: "0.50", or "0.50 (2:4:1)" for an N:M pattern. */
static std::string density_cell(double d, const std::string &pattern)
{
    return pattern.empty() ? strf("%.2f", d) : strf("%.2f (%s)", d, pattern.c_str());
}

static std::map<GeoKey, Geo> geomeans(const std::vector<Row> &rows)
{
    std::map<GeoKey, Geo> m;
    for (const Row &r : rows) {
        if (!r.ok() || !std::isfinite(r.vs_cublas()))
            continue;
        Geo &g = m[GeoKey{-r.density, r.pattern, r.n}];
        ++g.count;
        g.log_blas += std::log(r.vs_cublas());
        g.min_blas = std::min(g.min_blas, r.vs_cublas());
        if (std::isfinite(r.vs_cusparse())) {
            ++g.count_sp;
            g.log_sp += std::log(r.vs_cusparse());
            g.min_sp = std::min(g.min_sp, r.vs_cusparse());
        }
    }
    return m;
}

std::string report_body(const Config &cfg, const Env &env, const std::vector<Row> &rows)
{
    const double tsz = cfg.vt().size;
    std::string o;
    const bool kcol = cfg.rotate && !cfg.check_only; /* K column: copies per method, or the flush ("write-fallback") */
    /* launches column: only when some method of some row was timed over fewer launches than --iters (slow launches) */
    const bool icol = std::any_of(rows.begin(), rows.end(), [&](const Row &r) {
        for (int v : {r.iters_blas, r.iters_sp, r.iters_macko})
            if (v > 0 && v < cfg.iters)
                return true;
        return false;
    });
    o += "| shape | density | n | cuBLAS µs | cuSPARSE µs | macko µs | vs cuBLAS | vs cuSPARSE | macko GB/s | % copy | "
         "cuBLAS GB/s | eff. density | rel. err | ";
    o += kcol ? "K cuBLAS/cuSPARSE/macko | " : "";
    o += icol ? "launches cuBLAS/cuSPARSE/macko | status |\n" : "status |\n";
    o += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";
    o += kcol ? "---|" : "";
    o += icol ? "---|\n" : "\n";
    for (const Row &r : rows) {
        const double dense_bytes =
            tsz * ((double)r.s.rows * (double)r.s.cols + (double)r.s.rows + (double)r.s.cols);
        o += "| " + shape_str(r.s) + " | " + density_cell(r.density, r.pattern) + " | " + strf("%d", r.n) + " | " +
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
        if (icol) {
            auto k = [](int v) { return v > 0 ? strf("%d", v) : std::string("–"); };
            o += k(r.iters_blas) + "/" + k(r.iters_sp) + "/" + k(r.iters_macko) + " | ";
        }
        o += (r.ok() ? r.status : "**" + r.status + "**") + " |\n";
    }
    const auto geo = geomeans(rows);
    if (!geo.empty()) {
        o += "\nGeometric mean of macko's speedup over the shapes, per density (min: the smallest over one shape):\n\n";
        o += "| density | n | shapes | vs cuBLAS | vs cuSPARSE | min vs cuBLAS | min vs cuSPARSE |\n"
             "|---|---|---|---|---|---|---|\n";
        for (const auto &kv : geo) {
            const Geo &g = kv.second;
            std::string sp = g.count_sp ? strf("%.2fx", std::exp(g.log_sp / g.count_sp)) : std::string("–");
            if (g.count_sp && g.count_sp != g.count)
                sp += strf(" (%d shape%s)", g.count_sp, g.count_sp == 1 ? "" : "s");
            const std::string dens = density_cell(-std::get<0>(kv.first), std::get<1>(kv.first));
            o += strf("| %s | %d | %d | %.2fx | %s | %.2fx | %s |\n", dens.c_str(), std::get<2>(kv.first), g.count,
                      std::exp(g.log_blas / g.count), sp.c_str(), g.min_blas,
                      g.count_sp ? strf("%.2fx", g.min_sp).c_str() : "–");
        }
    }
    if (icol)
        o += strf("\nlaunches: timed launches of each method where fewer than %d: a method whose launch takes t > 1 ms "
                  "is timed over max(10, ceil(%d x 1 ms / t)) launches after max(5, ceil(%d x 1 ms / t)) warm-ups "
                  "(t: one launch timed after its check)\n",
                  cfg.iters, cfg.iters, cfg.warmup);
    return o;
}

std::string report_header(const Config &cfg, const Env &env)
{
    std::string o;
    o += "# macko SpMV benchmark: " + env.device_name + ", " + env.date + "\n\n";
    o += "- command: `" + cfg.cmdline + "`\n";
    o += strf("- device: %s, %d SMs, %.0f MiB L2, %.1f GiB memory\n", env.device_name.c_str(), env.sm_count,
              (double)env.l2 / 1048576.0, (double)env.mem / 1073741824.0);
    o += "- CUDA runtime " + cuda_ver(env.runtime) + ", driver API " + cuda_ver(env.driver) + ", kernel driver " +
         env.kernel_driver + ", cuBLAS " + env.cublas_ver + ", cuSPARSE " + env.cusparse_ver + ", macko " +
         env.macko_ver + "\n";
    static const char *const kMacko[] = {"fp16 (macko_Hspmv)", "bf16 (macko_spmv_ex: 16BF A, x, y, compute 32F)",
                                         "fp32 (macko_Sspmv)", "fp64 (macko_Dspmv)"};
    o += strf("- type: %c = %s; seed %" PRIu64 " (each (shape, density) derives its own seed from it)\n",
              cfg.vt().letter, kMacko[&cfg.vt() - kValueTypes], cfg.seed);
    if (cfg.nm_path != 0)
        o += strf("- FORCED through the library's test-only plan override: N:M path %s for every n%s\n",
                  cfg.nm_path == MACKO_NM_PATH_GEN    ? "GEN"
                  : cfg.nm_path == MACKO_NM_PATH_SIMT ? "SIMT"
                  : cfg.nm_path == MACKO_NM_PATH_SP24 ? "SP24"
                                                      : "SP24WG",
                  cfg.nm_cfg != 0 ? strf(", kernel configuration %d", cfg.nm_cfg - 1).c_str() : "");
    else if (cfg.forced())
        o += strf("- FORCED through the library's test-only plan override: SpMV geometry %s, SpMM path %s\n",
                  cfg.spmv_geometry == MACKO_SPMV_WARP ? "WARP" : cfg.spmv_geometry == MACKO_SPMV_STAGED ? "STAGED"
                                                                                                         : "automatic",
                  cfg.mm_path == MACKO_MM_PATH_STAGED   ? "STAGED"
                  : cfg.mm_path == MACKO_MM_PATH_GLOBAL ? "GLOBAL"
                  : cfg.mm_path == MACKO_MM_PATH_TC     ? "TC"
                  : cfg.mm_path == MACKO_MM_PATH_PANEL  ? "PANEL"
                  : cfg.mm_path == MACKO_MM_PATH_SIMT   ? "SIMT"
                                                        : "automatic");
    o += cfg.workspace_mib > 0
             ? strf("- macko workspace: %lld MiB of the caller's (macko_set_workspace)\n", (long long)cfg.workspace_mib)
             : "- macko workspace: the handle's own (64 MiB)\n";
    if (cfg.panel_gemm != 0)
        o += strf("- FORCED: the dense-panel path's GEMM is %s\n", cfg.panel_gemm == 1 ? "mma.sync" : "wgmma (sm_90a)");
    if (cfg.simt_tc != 0)
        o += strf("- FORCED: fp32's SIMT path in the %s form\n", cfg.simt_tc == 1 ? "FMA" : "TF32x3");
    if (cfg.panel_rows != 0 || cfg.panel_splits != 0)
        o += strf("- FORCED: dense panels of %s rows, wgmma panel GEMM with %s blocks along K\n",
                  cfg.panel_rows != 0 ? strf("%lld", (long long)cfg.panel_rows).c_str() : "automatic",
                  cfg.panel_splits != 0 ? strf("%d", cfg.panel_splits).c_str() : "automatic");
    else if (!cfg.nm)
        o += "- the dense-panel path's GEMM: automatic (wgmma on compute capability 9.0 with the sm_90a build, else "
             "mma.sync)\n";
    if (cfg.nm)
        o += "- macko device layout: the N:M kind's (GEN: the host arrays; SP24, 16-bit with M = 4 and N <= 2: mma.sp "
             "fragments and metadata, run by mma.sp, or from n = 64 by wgmma.sp where the library holds sm_90a code "
             "and the GPU is compute capability 9.0)\n";
    else
        o += strf("- macko device layout: %s\n", cfg.layout == MACKO_LAYOUT_TILES ? "TILES (macko_mat_set_layout before every "
                                                                           "upload: bitmap tiles, tensor cores)"
                                                                         : "ROWS (the MACKO rows, the default)");
    if (cfg.tiles_path != 0 || cfg.tiles_splits != 0 || cfg.tiles_wg_bn != 0 || cfg.tiles_wg_stream != 0 ||
        cfg.tiles_wg_tail != 0 || cfg.tiles_wg_cluster != 0 || cfg.tiles_kg != 0 || cfg.tiles_cp_async != 0)
        o += strf("- FORCED (TILES): path %s, blocks along K %s, fused product's C-tile width %s, stream-K %s, "
                  "tail split %s, split K %s, tile kernel's groups %s, its records by %s\n",
                  cfg.tiles_path == 1   ? "tile kernel"
                  : cfg.tiles_path == 2 ? "dense panels + GEMM"
                  : cfg.tiles_path == 3 ? "fused wgmma"
                                        : "automatic",
                  cfg.tiles_splits != 0 ? strf("%d", cfg.tiles_splits).c_str() : "automatic",
                  cfg.tiles_wg_bn != 0 ? strf("%d", cfg.tiles_wg_bn).c_str() : "automatic",
                  cfg.tiles_wg_stream < 0   ? "off"
                  : cfg.tiles_wg_stream > 0 ? strf("%d blocks", cfg.tiles_wg_stream).c_str()
                                            : "automatic",
                  cfg.tiles_wg_tail < 0   ? "off"
                  : cfg.tiles_wg_tail > 0 ? strf("%d blocks along K", cfg.tiles_wg_tail).c_str()
                                          : "automatic",
                  cfg.tiles_wg_cluster < 0    ? "through the workspace"
                  : cfg.tiles_wg_cluster == 2 ? "in pairs (clusters of 2) where they fit"
                                              : "in clusters where they fit",
                  cfg.tiles_kg != 0 ? strf("%d tiles", cfg.tiles_kg).c_str() : "automatic",
                  cfg.tiles_cp_async ? "cp.async" : "the automatic copy");
    if (cfg.nm) {
        std::string pats;
        for (const NmPattern &p : cfg.patterns)
            pats += (pats.empty() ? "" : ", ") + p.str();
        o += "- matrices: MACKO_KIND_NM (macko_mat_create_nm_host), patterns N:M:V " + pats +
             ": a dense matrix of values uniform in [-1, 1] (never 0), magnitude-pruned: in each group of V rows "
             "and window of M columns the N columns of largest sum |a| over the group kept; the baselines run on the "
             "same pruned matrix (density column: N/M); x uniform in [-1, 1]; alpha = 1, beta = 0\n";
    } else {
        o += "- matrices: exactly round(d·R·C) nonzeros at uniformly random positions, values uniform in [-1, 1] "
             "(never 0), x uniform in [-1, 1]; alpha = 1, beta = 0\n";
    }
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
    switch (cfg.type) {
    case MACKO_R_32F:
        o += "- cuBLAS = cublasSgemv (row-major A, CUBLAS_OP_T); cuSPARSE = cusparseSpMV CSR int32 fp32, CUDA_R_32F, "
             "preprocessed, faster of ALG_DEFAULT and CSR_ALG2\n";
        break;
    case MACKO_R_64F:
        o += "- cuBLAS = cublasDgemv (row-major A, CUBLAS_OP_T); cuSPARSE = cusparseSpMV CSR int32 fp64, CUDA_R_64F, "
             "preprocessed, faster of ALG_DEFAULT and CSR_ALG2\n";
        break;
    default: {
        const bool bf = cfg.type == MACKO_R_16BF;
        o += strf("- cuBLAS = faster of cublasGemmEx (N = 1, %s in/out, CUBLAS_COMPUTE_32F) and %s (batch 1), "
                  "row-major A (CUBLAS_OP_T); cuSPARSE = cusparseSpMV CSR int32 %s, CUDA_R_32F, preprocessed, faster "
                  "of ALG_DEFAULT and CSR_ALG2\n",
                  bf ? "bf16 (CUDA_R_16BF)" : "fp16",
                  bf ? "cublasTSTgemvStridedBatched" : "cublasHSHgemvStridedBatched", bf ? "bf16" : "fp16");
    }
    }
    if (std::any_of(cfg.ns.begin(), cfg.ns.end(), [](int n) { return n > 1; }))
        o += strf("- n > 1: macko = %s (column-major B and C, ld = rows); cuBLAS = %s, row-major A (CUBLAS_OP_T); "
                  "cuSPARSE = cusparseSpMM CSR int32, column-major B and C, %s compute, preprocessed, fastest "
                  "of ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3 among those that accept the problem (all in the CSV's "
                  "cusparse_algs; one more than 10x slower than the fastest in its one run is not timed)\n",
                  cfg.type == MACKO_R_16BF ? "macko_spmm_ex (16BF, compute 32F)"
                                           : strf("macko_%cspmm", cfg.vt().letter).c_str(),
                  cfg.type == MACKO_R_32F   ? "cublasSgemm with N = n, math mode CUBLAS_DEFAULT_MATH (fp32 FMA, no TF32)"
                  : cfg.type == MACKO_R_64F ? "cublasDgemm with N = n"
                                            : strf("cublasGemmEx with N = n (%s in/out, CUBLAS_COMPUTE_32F)",
                                                   cfg.vt().name).c_str(),
                  cfg.vt().fp64_compute ? "CUDA_R_64F" : "CUDA_R_32F");
    if (!cfg.cusparse)
        o += "- --no-cusparse: cuSPARSE not run (its columns are empty)\n";
    o += cfg.nm ? "- macko GB/s counts the device bytes of the N:M matrix (macko_mat_get_storage) + x + y (B + C for "
                  "n > 1); "
                : "- macko GB/s counts values + deltas + row pointers + x + y (B + C for n > 1); ";
    o += "% copy is of the copy bandwidth above; "
         "eff. density = macko storage / dense bytes; rel. err = ||y_macko - y_cuBLAS|| / ||y_cuBLAS||\n\n";
    return o;
}

void write_md(const Config &cfg, const Env &env, const std::vector<Row> &rows)
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
