/* options.cpp -- see options.h. */
#include "options.h"

#include "common.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

static const char *const kQuickShapes = "4096x4096 4096x11008 11008x4096 12288x12288 36864x12288 28672x8192";
static const char *const kAllShapes =
    "4096x4096 8192x8192 8192x29568 32000x5120 32000x8192 28672x8192 5120x5120 5120x13824 3584x20480 4096x11008 "
    "13824x5120 18944x3584 14336x4096 4096x14336 8192x28672 11008x4096 32000x4096 20480x3584 3584x18944 21504x7168 "
    "7168x7168 28672x7168 7168x28672 27648x9216 9216x9216 36864x9216 9216x36864 36864x12288 12288x12288 "
    "49152x12288 12288x49152";
static const char *const kDefaultDensities = "1.0,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1,0.05";
/* The NM-SpMM paper's square sizes (--shapes nm-square) and --kind nm's default patterns: 2:4 (Hopper's sparse tensor
 * cores) and the paper's vector-wise M = V = 32 ones at 50, 62.5, 75 and 87.5 % sparsity. */
static const char *const kNmSquareShapes = "4096x4096 8192x8192 12288x12288 16384x16384";
static const char *const kDefaultPatterns = "2:4:1,16:32:32,12:32:32,8:32:32,4:32:32";
/* --n edges: both sides of each n where an automatic rule of this tree changes path or tile. Rows (src/plan.c): the
 * SpMV at 1, the CUDA-core tiles of 2 / 4 / 8 (TC from 3 or 5 on small matrices), TC from 9 in tiles of 16 / 32 / 64,
 * PANEL from 65; fp32's SIMT from 25 (up to 64 by shape). Tiles (src/tiles_device.c, kernels/spmm_tiles.h): the tile
 * kernel's column tiles up to 16, the fused product from 17 (MACKO_TILES_WG_N) in widths 64 / 128 / 256, the panels
 * from 1281 (MACKO_TILES_PANEL_N_WG; 2048 with the mma.sync GEMM, MACKO_TILES_PANEL_N). A table of these shows a
 * step where a larger n takes less time. */
static const char *const kEdges = "1 2 3 4 5 8 9 16 17 24 25 32 33 64 65 128 129 256 257 1280 1281 2047 2048";

/* bf16 keeps 8 significant bits (fp16 11): its results round 8x coarser, hence the looser bound. */
const ValueType kValueTypes[4] = {{MACKO_R_16F, 'H', "fp16", 2, false, 1e-2},
                                  {MACKO_R_16BF, 'B', "bf16", 2, false, 4e-2},
                                  {MACKO_R_32F, 'S', "fp32", 4, false, 1e-4},
                                  {MACKO_R_64F, 'D', "fp64", 8, true, 1e-12}};

const ValueType &value_type(macko_datatype_t t)
{
    for (const ValueType &v : kValueTypes)
        if (v.type == t)
            return v;
    die("internal: value type %d", (int)t);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: macko-bench [options]\n"
            "\n"
            "Times macko SpMV (macko_Hspmv / _Sspmv / _Dspmv; macko_spmv_ex for bf16) and SpMM (macko_Hspmm /\n"
            "_Sspmm / _Dspmm; macko_spmm_ex for bf16) against cuBLAS and cuSPARSE on the same random matrices, with\n"
            "the method of BENCH.md, and checks every macko result against cuBLAS before timing it.\n"
            "\n"
            "Matrices:\n"
            "  --shapes LIST      'quick' (default: %s),\n"
            "                     'all' (the 31 shapes of BENCH.md), or RxC[,RxC...] (comma or space separated)\n"
            "  --densities LIST   comma-separated densities in (0, 1] (default %s)\n"
            "  --n LIST           right-hand-side counts in [1, %d] (default 1). n = 1: SpMV rows (macko_Hspmv vs\n"
            "                     cuBLAS GEMV/GEMM and cusparseSpMV); n > 1: SpMM rows (macko_Hspmm vs cublasGemmEx\n"
            "                     N = n, or macko_Sspmm vs cublasSgemm without TF32, and cusparseSpMM CSR,\n"
            "                     column-major B and C, fastest algorithm); 'edges': both sides of every n where an\n"
            "                     automatic rule changes path or tile, for issue 16's \"no cliff\" check:\n"
            "                     %s\n"
            "  --seed S           random seed (default %" PRIu64 "); every (shape, density) derives its own seed from it\n"
            "  --type H|B|S|D     value type of A, x and y (default H; also fp16, f16, bf16, fp32, f32, ...):\n"
            "                     H fp16: vs cublasGemmEx (N = 1) / cublasHSHgemvStridedBatched, cuSPARSE fp16\n"
            "                     B bf16: macko_spmv_ex (16BF, compute 32F) vs cublasGemmEx CUDA_R_16BF (N = 1) /\n"
            "                             cublasTSTgemvStridedBatched, cuSPARSE bf16 (compute 32F)\n"
            "                     S fp32 (also --fp32): vs cublasSgemv, cuSPARSE fp32\n"
            "                     D fp64: macko_Dspmv vs cublasDgemv, cuSPARSE fp64 (compute 64F)\n"
            "                     (n > 1: GemmEx with N = n / Sgemm / Dgemm and cusparseSpMM of that type)\n"
            "                     bench/compare_types.py puts the rows of two runs side by side (bf16 vs fp16);\n"
            "                     bench/quick_types.sh runs H, B and D and compares them in one command\n"
            "  --quick12288       preset: only 12288x12288 at densities 0.5 and 0.3 (quick test of the kernels)\n"
            "  --kind macko|nm    the matrix kind (default macko: random sparsity at each density, MACKO_KIND_MACKO).\n"
            "                     nm: a random dense matrix (values uniform in [-1, 1]) magnitude-pruned to each\n"
            "                     --pattern, encoded as MACKO_KIND_NM (macko_mat_create_nm_host); the baselines run\n"
            "                     on the same pruned matrix (cuBLAS dense, cuSPARSE its CSR). --densities is ignored\n"
            "  --pattern LIST     --kind nm: N:M:V patterns, comma separated (default %s);\n"
            "                     N of every M consecutive columns kept, shared by V consecutive rows (V = 1:\n"
            "                     elementwise, e.g. 2:4:1); per group of V rows and window of M columns the N columns\n"
            "                     of largest sum |a| over the group are kept\n"
            "  --nm-path gen|simt|sp24|sp24wg\n"
            "                     --kind nm: force the N:M kernel for every n (test-only plan override)\n"
            "  --nm-cfg K         with --nm-path sp24, sp24wg or simt: that kernel's configuration K for every n\n"
            "                     (SP24: 0..10 staged tile shapes, 11..14 direct; SP24WG: 0 one fragment set,\n"
            "                     1 two, 2 two with the units by tensor maps)\n"
            "  (--shapes nm-square: the NM-SpMM paper's square sizes, %s)\n"
            "  --check-nm-generator\n"
            "                     --kind nm: generate every shape x pattern x type on the host, check the N:M\n"
            "                     arrays and the CSR against each other and the library's import, and exit (no GPU)\n"
            "\n"
            "Timing:\n"
            "  --warmup N         warm-up launches per method (default 20, at least 20)\n"
            "  --iters N          timed launches per method; the median is reported (default 100, at least 100).\n"
            "                     A method whose launch takes t > 1 ms (one launch timed after its check) gets\n"
            "                     max(10, ceil(N x 1 ms / t)) timed launches and max(5, ceil(warm-ups x 1 ms / t))\n"
            "                     warm-ups; the CSV's iters_* columns give the count of every row\n"
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
            "  --no-cusparse      leave cuSPARSE out (its columns stay empty): cusparseSpMM takes seconds per launch\n"
            "                     at large n\n"
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
            "  --spmv-geometry warp|staged\n"
            "                     force macko's SpMV geometry (the library's test-only plan override, src/plan.h)\n"
            "  --mm-path staged|global|tc|panel|simt\n"
            "                     force macko's SpMM path for every n (the same override; tc/panel: fp16, bf16;\n"
            "                     simt: fp32)\n"
            "  --simt-form fma|tf32x3\n"
            "                     fp32's SIMT path: FMAs on the CUDA cores, or split-TF32 products on the tensor\n"
            "                     cores (override; default: fma; tf32x3 needs 102 KiB of shared memory a block)\n"
            "  --layout rows|tiles           device layout of the macko matrices (default rows)\n"
            "  --tiles-splits N   TILES: blocks along K forced (test-only plan override; 0 automatic)\n"
            "  --tiles-path kernel|panel|fused\n"
            "                              TILES: the tile kernel, dense panels + GEMM, or the fused wgmma product\n"
            "                              (sm_90a) for every n (override)\n"
            "  --panel-gemm mma|wgmma      the dense-panel path's GEMM: mma.sync, or wgmma (sm_90a; override)\n"
            "  --panel-rows R     ROWS: the dense-panel path's rows per panel, a multiple of 128 (override; 0 auto)\n"
            "  --panel-splits S   the wgmma panel GEMM's blocks along K, 1..8 (override; 0 automatic)\n"
            "  --workspace-mib M  give the macko handle a workspace of M MiB (macko_set_workspace; >= 64, 0: its own)\n"
            "  --tiles-bn W       TILES: the fused wgmma product's C-tile width, 64, 128 or 256 (override; 0 auto)\n"
            "  --tiles-stream G   TILES: the fused product's stream-K, -1 off or G blocks (override; 0 auto)\n"
            "  --tiles-tail S     TILES: the fused product's tail split, -1 off or S = 2..16 blocks along K for the\n"
            "                     tiles past the last whole wave (override; 0 auto)\n"
            "  --tiles-cluster C  TILES: -1 the fused product's split K sums through the workspace only; 0 in\n"
            "                     thread-block clusters where they fit, else in pairs; 2 in pairs (override; default 0)\n"
            "  --tiles-kg G       TILES: the tile kernel's tiles per group at n <= 32, 8 or 16 (override; 0 automatic)\n"
            "  --tiles-cp-async   TILES: the tile kernel stages its records by cp.async, not by bulk copies (override)\n"
            "  -h, --help         this text\n"
            "\n"
            "Exit status: 0 when every macko result passed its check, 2 when any failed or a macko call returned an\n"
            "error (those rows are reported as FAIL and not timed), 1 on a usage or CUDA error.\n",
            kQuickShapes, kDefaultDensities, kMaxN, kEdges, Config().seed, kDefaultPatterns, kNmSquareShapes,
            kMaxCopies);
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
    const std::string list = arg == "quick"       ? kQuickShapes
                             : arg == "all"       ? kAllShapes
                             : arg == "nm-square" ? kNmSquareShapes
                                                  : arg;
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

std::string NmPattern::str() const { return strf("%d:%d:%d", n, m, v); }

/* "N:M:V[,N:M:V...]": M in {4, 8, 16, 32}, 1 <= N <= M, V in {1, 2, 4, 8, 16, 32} (what the library supports). */
static std::vector<NmPattern> parse_patterns(const std::string &arg)
{
    std::vector<NmPattern> out;
    for (const std::string &t : split_list(arg)) {
        NmPattern p{0, 0, 0};
        char tail = 0;
        if (sscanf(t.c_str(), "%d:%d:%d%c", &p.n, &p.m, &p.v, &tail) != 3)
            die("--pattern: '%s' is not N:M:V", t.c_str());
        const bool m_ok = p.m == 4 || p.m == 8 || p.m == 16 || p.m == 32;
        const bool v_ok = p.v == 1 || p.v == 2 || p.v == 4 || p.v == 8 || p.v == 16 || p.v == 32;
        if (!m_ok || !v_ok || p.n < 1 || p.n > p.m)
            die("--pattern: '%s': M must be 4, 8, 16 or 32, 1 <= N <= M, V 1, 2, 4, 8, 16 or 32", t.c_str());
        out.push_back(p);
    }
    if (out.empty())
        die("--pattern: empty list");
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

Config parse_args(int argc, char **argv)
{
    Config cfg;
    std::string shapes = "quick", densities = kDefaultDensities, patterns = kDefaultPatterns, kind = "macko";
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
            const std::string v = value();
            for (const std::string &t : split_list(v == "edges" ? kEdges : v))
                cfg.ns.push_back((int)parse_int("--n", t.c_str(), 1, kMaxN));
            if (cfg.ns.empty())
                die("--n: empty list");
        } else if (a == "--seed") {
            cfg.seed = (uint64_t)parse_int("--seed", value(), 0, INT64_MAX);
        } else if (a == "--fp32") {
            cfg.type = MACKO_R_32F;
        } else if (a == "--type") {
            const std::string t = value();
            bool found = false;
            for (const ValueType &v : kValueTypes)
                if ((t.size() == 1 && toupper((unsigned char)t[0]) == v.letter) || t == v.name ||
                    (t.size() == 3 && t[0] == 'f' && v.name[0] == 'f' && t.substr(1) == v.name + 2)) { /* f32 */
                    cfg.type = v.type;
                    found = true;
                }
            if (!found)
                die("--type: '%s' is not H, B, S or D (fp16, bf16, fp32, fp64)", t.c_str());
        } else if (a == "--kind") {
            kind = value();
            if (kind != "macko" && kind != "nm")
                die("--kind: '%s' is not macko or nm", kind.c_str());
        } else if (a == "--check-nm-generator") {
            cfg.check_generator = true;
        } else if (a == "--pattern") {
            patterns = value();
        } else if (a == "--nm-path") {
            const std::string t = value();
            if (t == "gen")
                cfg.nm_path = MACKO_NM_PATH_GEN;
            else if (t == "simt")
                cfg.nm_path = MACKO_NM_PATH_SIMT;
            else if (t == "sp24")
                cfg.nm_path = MACKO_NM_PATH_SP24;
            else if (t == "sp24wg")
                cfg.nm_path = MACKO_NM_PATH_SP24WG;
            else
                die("--nm-path: '%s' is not gen, simt, sp24 or sp24wg", t.c_str());
        } else if (a == "--nm-cfg") {
            cfg.nm_cfg = 1 + (int)parse_int("--nm-cfg", value(), 0, 63);
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
        } else if (a == "--no-cusparse") {
            cfg.cusparse = false;
        } else if (a == "--spmv-geometry") {
            const std::string t = value();
            if (t == "warp")
                cfg.spmv_geometry = MACKO_SPMV_WARP;
            else if (t == "staged")
                cfg.spmv_geometry = MACKO_SPMV_STAGED;
            else
                die("--spmv-geometry: '%s' is not warp or staged", t.c_str());
        } else if (a == "--mm-path") {
            const std::string t = value();
            if (t == "staged")
                cfg.mm_path = MACKO_MM_PATH_STAGED;
            else if (t == "global")
                cfg.mm_path = MACKO_MM_PATH_GLOBAL;
            else if (t == "tc")
                cfg.mm_path = MACKO_MM_PATH_TC;
            else if (t == "panel")
                cfg.mm_path = MACKO_MM_PATH_PANEL;
            else if (t == "simt")
                cfg.mm_path = MACKO_MM_PATH_SIMT;
            else
                die("--mm-path: '%s' is not staged, global, tc, panel or simt", t.c_str());
        } else if (a == "--tiles-path") {
            const std::string t = value();
            if (t == "kernel")
                cfg.tiles_path = 1;
            else if (t == "panel")
                cfg.tiles_path = 2;
            else if (t == "fused")
                cfg.tiles_path = 3;
            else
                die("--tiles-path: '%s' is not kernel, panel or fused", t.c_str());
        } else if (a == "--panel-gemm") {
            const std::string t = value();
            if (t == "mma")
                cfg.panel_gemm = 1;
            else if (t == "wgmma")
                cfg.panel_gemm = 2;
            else
                die("--panel-gemm: '%s' is not mma or wgmma", t.c_str());
        } else if (a == "--panel-rows") {
            cfg.panel_rows = parse_int("--panel-rows", value(), 0, INT64_C(1) << 31);
            if (cfg.panel_rows % 128 != 0)
                die("--panel-rows: %lld is not a multiple of 128", (long long)cfg.panel_rows);
        } else if (a == "--workspace-mib") {
            cfg.workspace_mib = parse_int("--workspace-mib", value(), 0, INT64_C(1) << 20);
            if (cfg.workspace_mib != 0 && cfg.workspace_mib < 64)
                die("--workspace-mib: %lld is below 64 (MACKO_WORKSPACE_MIN_BYTES)", (long long)cfg.workspace_mib);
        } else if (a == "--panel-splits") {
            cfg.panel_splits = (int)parse_int("--panel-splits", value(), 0, 8);
        } else if (a == "--tiles-stream") {
            cfg.tiles_wg_stream = (int)parse_int("--tiles-stream", value(), -1, 1 << 20);
        } else if (a == "--tiles-tail") {
            cfg.tiles_wg_tail = (int)parse_int("--tiles-tail", value(), -1, 16);
            if (cfg.tiles_wg_tail == 1)
                die("--tiles-tail: 1 is not -1, 0 or 2..16");
        } else if (a == "--tiles-cluster") {
            cfg.tiles_wg_cluster = (int)parse_int("--tiles-cluster", value(), -1, 2);
        } else if (a == "--tiles-bn") {
            cfg.tiles_wg_bn = (int)parse_int("--tiles-bn", value(), 0, 256);
            if (cfg.tiles_wg_bn != 0 && cfg.tiles_wg_bn != 64 && cfg.tiles_wg_bn != 128 && cfg.tiles_wg_bn != 256)
                die("--tiles-bn: %d is not 0, 64, 128 or 256", cfg.tiles_wg_bn);
        } else if (a == "--tiles-kg") {
            cfg.tiles_kg = (int)parse_int("--tiles-kg", value(), 0, 16);
            if (cfg.tiles_kg != 0 && cfg.tiles_kg != 8 && cfg.tiles_kg != 16)
                die("--tiles-kg: %d is not 0, 8 or 16", cfg.tiles_kg);
        } else if (a == "--tiles-cp-async") {
            cfg.tiles_cp_async = 1;
        } else if (a == "--simt-form") {
            const std::string t = value();
            if (t == "fma")
                cfg.simt_tc = 1;
            else if (t == "tf32x3")
                cfg.simt_tc = 2;
            else
                die("--simt-form: '%s' is not fma or tf32x3", t.c_str());
        } else if (a == "--tiles-splits") {
            cfg.tiles_splits = (int)parse_int("--tiles-splits", value(), 0, 64);
        } else if (a == "--layout") {
            const std::string t = value();
            if (t == "rows")
                cfg.layout = MACKO_LAYOUT_ROWS;
            else if (t == "tiles")
                cfg.layout = MACKO_LAYOUT_TILES;
            else
                die("--layout: '%s' is not rows or tiles", t.c_str());
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
    cfg.nm = kind == "nm";
    if (cfg.nm) {
        cfg.patterns = parse_patterns(patterns);
        if (cfg.layout != MACKO_LAYOUT_ROWS || cfg.spmv_geometry >= 0 || cfg.mm_path != 0 || cfg.tiles_path != 0 ||
            cfg.tiles_splits != 0 || cfg.tiles_wg_bn != 0 || cfg.tiles_wg_stream != 0 || cfg.tiles_wg_tail != 0 ||
            cfg.tiles_wg_cluster != 0 || cfg.tiles_kg != 0 || cfg.tiles_cp_async != 0 || cfg.panel_gemm != 0)
            die("--kind nm: --layout, --spmv-geometry, --mm-path and --tiles-* are for MACKO matrices (use --nm-path)");
    } else if (cfg.nm_path != 0 || cfg.check_generator) {
        die("--nm-path and --check-nm-generator need --kind nm");
    }
    if (cfg.nm_cfg != 0 && cfg.nm_path != MACKO_NM_PATH_SP24 && cfg.nm_path != MACKO_NM_PATH_SP24WG &&
        cfg.nm_path != MACKO_NM_PATH_SIMT)
        die("--nm-cfg needs --nm-path sp24, sp24wg or simt");
    if (cfg.threads == 0)
        cfg.threads = (int)std::max(1u, std::thread::hardware_concurrency());
    return cfg;
}

std::string shape_str(const Shape &s) { return strf("%" PRId64 "x%" PRId64, s.rows, s.cols); }

macko_status_t force_plan(const Config &cfg, macko_handle_t h, macko_mat_t A)
{
    if (!cfg.forced())
        return MACKO_STATUS_SUCCESS;
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.spmv_geometry = cfg.spmv_geometry;
    f.mm_path = cfg.mm_path;
    f.tiles_splits = cfg.tiles_splits;
    f.tiles_path = cfg.tiles_path;
    f.nm_path = cfg.nm_path;
    f.nm_cfg = cfg.nm_cfg;
    f.panel_gemm = cfg.panel_gemm;
    f.panel_rows = cfg.panel_rows;
    f.panel_splits = cfg.panel_splits;
    f.tiles_wg_bn = cfg.tiles_wg_bn;
    f.tiles_wg_stream = cfg.tiles_wg_stream;
    f.tiles_wg_tail = cfg.tiles_wg_tail;
    f.tiles_wg_cluster = cfg.tiles_wg_cluster;
    f.tiles_kg = cfg.tiles_kg;
    f.tiles_cp_async = cfg.tiles_cp_async;
    f.simt_tc = cfg.simt_tc;
    return macko_plan_override(h, A, MACKO_OPERATION_NON_TRANSPOSE, &f);
}
