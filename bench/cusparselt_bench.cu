/*
 * cusparselt_bench.cu -- macko-cusparselt-bench: cuSPARSELt's 2:4 SpMM measured directly (issue 18), beside
 * cublasGemmEx and macko_Hspmm (macko_spmm_ex for bf16) on the same matrices, with BENCH.md's method.
 *
 * The matrices are macko-bench --kind nm's (matgen.cpp's generate_nm, seed nm_case_seed: the same --seed, shape and
 * pattern give the same matrix): a dense matrix magnitude-pruned to 2:4 (any N:M:V with M = 4 and N <= 2 is a 2:4
 * matrix). C (rows x n) = A (rows x cols, row-major) * B (cols x n), B and C column-major with ld = cols / rows, fp16
 * (or bf16) in and out, fp32 accumulation, alpha = 1, beta = 0. cuSPARSELt: A as a structured matrix (50 %), pruning
 * checked (cusparseLtSpMMAPruneCheck: the pattern is cuSPARSELt's own 2:4), compressed once, then timed with the
 * default algorithm (configuration 0) and with the one cusparseLtMatmulSearch picks. An n that cuSPARSELt's
 * descriptors refuse is padded to the next multiple of 16 (B's extra columns zero; the row says so).
 *
 * No build or link dependency on cuSPARSELt: libcusparseLt.so.0 is opened at run time (--lib, MACKO_CUSPARSELT_LIB,
 * the loader's path, then the usual Python and CUDA places); the few declarations it needs are written here from the
 * public documentation. Without the library (or with one older than 0.6, whose enums differ) the program says so and
 * exits 0 ("skipped"). Timing as macko-bench's --flush write: CUDA events around each launch, warm-ups, the median,
 * L2 flushed by a write of --flush-mult x L2 before every launch (timer.cu).
 */
#include "common.h"
#include "matgen.h"
#include "options.h"
#include "timer.h"

#include "macko.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

/* ---------------------------------------------------------------- cuSPARSELt, opened at run time */

/* cuSPARSELt's opaque structures (cusparseLtHandle_t, ...: 512 bytes, 16-byte aligned in 0.6 - 0.8), with room. */
struct alignas(16) Opaque {
    unsigned char data[2048];
};
enum { kSparsity50 = 0, kCompute32F = 2, kAlgDefault = 0, kAlgConfigId = 0, kPruneStrip = 1 }; /* >= 0.6's values */

struct Lt {
    void *so = nullptr;
    std::string path;
    cusparseStatus_t (*init)(Opaque *);
    cusparseStatus_t (*destroy)(const Opaque *);
    cusparseStatus_t (*get_version)(const Opaque *, int *);
    const char *(*error_string)(cusparseStatus_t);
    cusparseStatus_t (*dense_init)(const Opaque *, Opaque *, int64_t, int64_t, int64_t, uint32_t, cudaDataType,
                                   cusparseOrder_t);
    cusparseStatus_t (*structured_init)(const Opaque *, Opaque *, int64_t, int64_t, int64_t, uint32_t, cudaDataType,
                                        cusparseOrder_t, int);
    cusparseStatus_t (*mat_destroy)(const Opaque *);
    cusparseStatus_t (*matmul_init)(const Opaque *, Opaque *, cusparseOperation_t, cusparseOperation_t, const Opaque *,
                                    const Opaque *, const Opaque *, const Opaque *, int);
    cusparseStatus_t (*alg_init)(const Opaque *, Opaque *, const Opaque *, int);
    cusparseStatus_t (*alg_destroy)(const Opaque *);
    cusparseStatus_t (*alg_get)(const Opaque *, const Opaque *, int, void *, size_t);
    cusparseStatus_t (*workspace)(const Opaque *, const Opaque *, size_t *);
    cusparseStatus_t (*plan_init)(const Opaque *, Opaque *, const Opaque *, const Opaque *);
    cusparseStatus_t (*plan_destroy)(const Opaque *);
    cusparseStatus_t (*matmul)(const Opaque *, const Opaque *, const void *, const void *, const void *, const void *,
                               const void *, void *, void *, cudaStream_t *, int32_t);
    cusparseStatus_t (*search)(const Opaque *, Opaque *, const void *, const void *, const void *, const void *,
                               const void *, void *, void *, cudaStream_t *, int32_t);
    cusparseStatus_t (*prune_check)(const Opaque *, const Opaque *, const void *, int *, cudaStream_t);
    cusparseStatus_t (*prune)(const Opaque *, const Opaque *, const void *, void *, int, cudaStream_t);
    cusparseStatus_t (*compressed_size)(const Opaque *, const Opaque *, size_t *, size_t *);
    cusparseStatus_t (*compress)(const Opaque *, const Opaque *, const void *, void *, void *, cudaStream_t);
};

/* The places libcusparseLt.so.0 is looked for after the loader's own path: pip wheels (nvidia-cusparselt-cu12/13,
 * brought by torch) in the active virtual or conda environment, the usual site-packages and those of python3 on PATH;
 * the CUDA toolkit and the system library directories. */
std::vector<std::string> candidates()
{
    std::vector<std::string> out;
    const char *lib = "nvidia/cusparselt/lib/libcusparseLt.so.0";
    std::vector<std::string> pats;
    for (const char *env : {"VIRTUAL_ENV", "CONDA_PREFIX"})
        if (const char *e = getenv(env))
            pats.push_back(std::string(e) + "/lib/python3*/site-packages/" + lib);
    if (const char *h = getenv("HOME"))
        pats.push_back(std::string(h) + "/.local/lib/python3*/site-packages/" + lib);
    for (const char *root : {"/usr/local/lib/python3*/dist-packages/", "/usr/local/lib/python3*/site-packages/",
                             "/usr/lib/python3/dist-packages/", "/usr/lib/python3*/site-packages/",
                             "/opt/conda/lib/python3*/site-packages/", "/opt/*/lib/python3*/site-packages/"})
        pats.push_back(std::string(root) + lib);
    for (const char *p : {"/usr/local/cuda/lib64/libcusparseLt.so.0", "/usr/lib/x86_64-linux-gnu/libcusparseLt.so.0",
                          "/usr/lib/x86_64-linux-gnu/libcusparse_lt/*/libcusparseLt.so.0"})
        pats.push_back(p);
    /* and the site-packages of the python3 on PATH (where torch and its nvidia-* wheels usually are) */
    if (FILE *py = popen("python3 -c \"import site; print('\\n'.join(site.getsitepackages() + "
                         "[site.getusersitepackages()]))\" 2>/dev/null", "r")) {
        char line[4096];
        while (fgets(line, sizeof line, py)) {
            line[strcspn(line, "\n")] = 0;
            if (line[0])
                pats.push_back(std::string(line) + "/" + lib);
        }
        pclose(py);
    }
    for (const std::string &p : pats) {
        glob_t g;
        if (glob(p.c_str(), 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i)
                out.push_back(g.gl_pathv[i]);
        globfree(&g);
    }
    return out;
}

template <class F> bool sym(Lt &lt, F &f, const char *name, std::string &why)
{
    f = reinterpret_cast<F>(dlsym(lt.so, name));
    if (!f)
        why = strf("%s has no %s", lt.path.c_str(), name);
    return f != nullptr;
}

/* Opens cuSPARSELt: "" or why not (tried: where). */
std::string open_lt(Lt &lt, const std::string &asked)
{
    std::vector<std::string> tries;
    if (!asked.empty())
        tries.push_back(asked);
    else {
        if (const char *e = getenv("MACKO_CUSPARSELT_LIB"))
            tries.push_back(e);
        tries.push_back("libcusparseLt.so.0");
        for (const std::string &c : candidates())
            tries.push_back(c);
    }
    std::string tried, last;
    for (const std::string &t : tries) {
        lt.so = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lt.so) {
            lt.path = t;
            break;
        }
        const char *e = dlerror();
        last = e ? e : "";
        tried += (tried.empty() ? "" : ", ") + t;
    }
    if (!lt.so)
        return "libcusparseLt.so.0 not found (tried " + tried + "; last: " + last +
               "; give --lib PATH or MACKO_CUSPARSELT_LIB)";
    std::string why;
    const bool ok = sym(lt, lt.init, "cusparseLtInit", why) && sym(lt, lt.destroy, "cusparseLtDestroy", why) &&
                    sym(lt, lt.get_version, "cusparseLtGetVersion", why) &&
                    sym(lt, lt.error_string, "cusparseLtGetErrorString", why) &&
                    sym(lt, lt.dense_init, "cusparseLtDenseDescriptorInit", why) &&
                    sym(lt, lt.structured_init, "cusparseLtStructuredDescriptorInit", why) &&
                    sym(lt, lt.mat_destroy, "cusparseLtMatDescriptorDestroy", why) &&
                    sym(lt, lt.matmul_init, "cusparseLtMatmulDescriptorInit", why) &&
                    sym(lt, lt.alg_init, "cusparseLtMatmulAlgSelectionInit", why) &&
                    sym(lt, lt.alg_destroy, "cusparseLtMatmulAlgSelectionDestroy", why) &&
                    sym(lt, lt.alg_get, "cusparseLtMatmulAlgGetAttribute", why) &&
                    sym(lt, lt.workspace, "cusparseLtMatmulGetWorkspace", why) &&
                    sym(lt, lt.plan_init, "cusparseLtMatmulPlanInit", why) &&
                    sym(lt, lt.plan_destroy, "cusparseLtMatmulPlanDestroy", why) &&
                    sym(lt, lt.matmul, "cusparseLtMatmul", why) && sym(lt, lt.search, "cusparseLtMatmulSearch", why) &&
                    sym(lt, lt.prune_check, "cusparseLtSpMMAPruneCheck", why) &&
                    sym(lt, lt.prune, "cusparseLtSpMMAPrune", why) &&
                    sym(lt, lt.compressed_size, "cusparseLtSpMMACompressedSize", why) &&
                    sym(lt, lt.compress, "cusparseLtSpMMACompress", why);
    return ok ? "" : why;
}

/* ---------------------------------------------------------------- one problem on cuSPARSELt */

struct LtRun {
    const Lt &lt;
    const Opaque &h;
    Opaque a, b, c, mm, sel, plan;
    bool has_a = false, has_b = false, has_c = false, has_sel = false, has_plan = false;
    bool refused = false;         /* the failure was a descriptor's or the plan's: the n may be what they refuse */
    bool valid_untouched = false; /* the pruning check left d_valid as it was (it writes only on failure) */
    std::unique_ptr<DevBuf> compressed, ws;
    size_t compressed_bytes = 0;
    int config = -1;
    LtRun(const Lt &l, const Opaque &hh) : lt(l), h(hh) {}
    LtRun(const LtRun &) = delete;
    LtRun &operator=(const LtRun &) = delete;
    ~LtRun()
    {
        if (has_plan)
            lt.plan_destroy(&plan);
        if (has_sel)
            lt.alg_destroy(&sel);
        for (auto *d : {has_a ? &a : nullptr, has_b ? &b : nullptr, has_c ? &c : nullptr})
            if (d)
                lt.mat_destroy(d);
    }
    std::string err(const char *fn, cusparseStatus_t st) const
    {
        return strf("%s: %s", fn, lt.error_string ? lt.error_string(st) : "error");
    }
    /* Descriptors, plan (default algorithm), pruning check and compression of dense A (device, row-major; host_a:
     * the same matrix on the host, for the diagnostic of a failed check). */
    std::string setup(int64_t R, int64_t C, int64_t n, cudaDataType t, const void *dA, const uint16_t *host_a,
                      cudaStream_t s)
    {
        cusparseStatus_t st;
        refused = true;
        st = lt.structured_init(&h, &a, R, C, C, 16, t, CUSPARSE_ORDER_ROW, kSparsity50);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtStructuredDescriptorInit", st);
        has_a = true;
        if ((st = lt.dense_init(&h, &b, C, n, C, 16, t, CUSPARSE_ORDER_COL)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtDenseDescriptorInit (B)", st);
        has_b = true;
        if ((st = lt.dense_init(&h, &c, R, n, R, 16, t, CUSPARSE_ORDER_COL)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtDenseDescriptorInit (C)", st);
        has_c = true;
        if ((st = lt.matmul_init(&h, &mm, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &a, &b,
                                 &c, &c, kCompute32F)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtMatmulDescriptorInit", st);
        if ((st = lt.alg_init(&h, &sel, &mm, kAlgDefault)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtMatmulAlgSelectionInit", st);
        has_sel = true;
        if ((st = lt.plan_init(&h, &plan, &mm, &sel)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtMatmulPlanInit", st);
        has_plan = true;
        refused = false;
        /* d_valid is pre-filled with a sentinel. NVIDIA's sample checks a freshly cudaMalloc'ed int, which the driver
         * hands out zeroed; a library that writes d_valid only when the matrix is not 2:4 then reads "valid". Here
         * the int comes from memory the previous n's buffers (C, workspace) had written, so such a library hands back
         * their garbage: the first row passed, every later one failed. The sentinel left in place means valid. */
        const int sentinel = 0x5A5A5A5A;
        DevBuf valid(sizeof(int));
        int v = -1;
        CUDA_OK(cudaMemsetAsync(valid.p, 0x5A, sizeof(int), s));
        if ((st = lt.prune_check(&h, &mm, dA, valid.as<int>(), s)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtSpMMAPruneCheck", st);
        CUDA_OK(cudaMemcpyAsync(&v, valid.p, sizeof v, cudaMemcpyDeviceToHost, s));
        CUDA_OK(cudaStreamSynchronize(s));
        if (v == sentinel) {
            valid_untouched = true;
            v = 0;
        }
        if (v != 0)
            return strf("cusparseLtSpMMAPruneCheck: the matrix is not 2:4 as cuSPARSELt reads it (d_valid = %d)", v) +
                   diagnose(R, C, dA, host_a, s);
        size_t buf_bytes = 0;
        if ((st = lt.compressed_size(&h, &plan, &compressed_bytes, &buf_bytes)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtSpMMACompressedSize", st);
        compressed.reset(new DevBuf(std::max<size_t>(compressed_bytes, 1)));
        DevBuf buf(std::max<size_t>(buf_bytes, 1));
        if ((st = lt.compress(&h, &plan, dA, compressed->p, buf.p, s)) != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtSpMMACompress", st);
        CUDA_OK(cudaStreamSynchronize(s));
        return workspace();
    }
    /* Why the check refused: groups of 4 (a row's consecutive columns) with more than 2 nonzeros in the host copy;
     * elements where the device copy differs from it; elements cuSPARSELt's own STRIP pruning (of a copy) changes:
     * 0 means cuSPARSELt reads the groups where they were written, many means another orientation. */
    std::string diagnose(int64_t R, int64_t C, const void *dA, const uint16_t *host_a, cudaStream_t s)
    {
        const size_t count = (size_t)(R * C), bytes = count * sizeof(uint16_t);
        int64_t crowded = 0, moved = 0, pruned = 0;
        for (size_t g = 0; g + 4 <= count; g += 4) { /* C is a multiple of 16: no group spans two rows */
            int nz = 0;
            for (int j = 0; j < 4; ++j)
                nz += (host_a[g + j] & 0x7FFF) != 0; /* +-0 in fp16 and bf16 alike */
            crowded += nz > 2;
        }
        std::vector<uint16_t> back(count);
        CUDA_OK(cudaMemcpyAsync(back.data(), dA, bytes, cudaMemcpyDeviceToHost, s));
        CUDA_OK(cudaStreamSynchronize(s));
        for (size_t i = 0; i < count; ++i)
            moved += back[i] != host_a[i];
        std::string out = strf("; diagnostic: %" PRId64 " groups of 4 with > 2 nonzeros in A (host), device A differs "
                               "from the host copy in %" PRId64 " elements",
                               crowded, moved);
        std::unique_ptr<DevBuf> copy = DevBuf::try_alloc(bytes);
        if (!copy)
            return out + ", no device memory for the cusparseLtSpMMAPrune comparison";
        CUDA_OK(cudaMemcpyAsync(copy->p, dA, bytes, cudaMemcpyDeviceToDevice, s));
        const cusparseStatus_t st = lt.prune(&h, &mm, copy->p, copy->p, kPruneStrip, s);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return out + ", " + err("cusparseLtSpMMAPrune", st);
        CUDA_OK(cudaMemcpyAsync(back.data(), copy->p, bytes, cudaMemcpyDeviceToHost, s));
        CUDA_OK(cudaStreamSynchronize(s));
        for (size_t i = 0; i < count; ++i)
            pruned += back[i] != host_a[i];
        return out + strf(", cusparseLtSpMMAPrune (STRIP) changes %" PRId64 " of %zu elements", pruned, count);
    }
    std::string workspace()
    {
        size_t bytes = 0;
        const cusparseStatus_t st = lt.workspace(&h, &plan, &bytes);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return err("cusparseLtMatmulGetWorkspace", st);
        if (!ws || bytes > ws->bytes)
            ws.reset(new DevBuf(std::max<size_t>(bytes, 256)));
        lt.alg_get(&h, &sel, kAlgConfigId, &config, sizeof config);
        return "";
    }
    std::string run(const void *dB, void *dC, cudaStream_t s, bool search)
    {
        const float alpha = 1.0f, beta = 0.0f;
        cudaStream_t streams[1] = {s};
        const cusparseStatus_t st =
            search ? lt.search(&h, &plan, &alpha, compressed->p, dB, &beta, dC, dC, ws->p, streams, 1)
                   : lt.matmul(&h, &plan, &alpha, compressed->p, dB, &beta, dC, dC, ws->p, streams, 1);
        if (st != CUSPARSE_STATUS_SUCCESS)
            return err(search ? "cusparseLtMatmulSearch" : "cusparseLtMatmul", st);
        return search ? workspace() : "";
    }
};

/* ---------------------------------------------------------------- the run */

struct Result {
    Shape s{0, 0};
    std::string pattern;
    int n = 0, n_run = 0;
    double blas_us = NAN, lt_default_us = NAN, lt_search_us = NAN, macko_us = NAN;
    int config = -1;
    size_t lt_bytes = 0;
    int64_t macko_bytes = 0;
    double err_blas = NAN, err_lt = NAN, err_macko = NAN;
    std::string status = "ok";
    double lt_best() const { return std::fmin(lt_default_us, lt_search_us); }
};

void usage()
{
    printf("usage: macko-cusparselt-bench [options]\n\n"
           "cuSPARSELt's 2:4 SpMM (libcusparseLt.so.0, opened at run time) beside cublasGemmEx and macko_Hspmm on\n"
           "macko-bench --kind nm's matrices (same --seed, shapes and pattern: the same matrix), BENCH.md's method\n"
           "(write flush). Exits 0 with 'skipped' when cuSPARSELt cannot be loaded.\n\n"
           "  --lib PATH          libcusparseLt.so.0 to open (else MACKO_CUSPARSELT_LIB, the loader's path, the\n"
           "                      nvidia/cusparselt/lib of the usual Python site-packages, the CUDA toolkit)\n"
           "  --alg default|search|both   cuSPARSELt's default algorithm, cusparseLtMatmulSearch's pick, or both\n"
           "                      (default both)\n"
           "  --no-macko          leave macko out\n"
           "  macko-bench options: --shapes quick|all|nm-square|RxC,...  --pattern N:4:V,... (N <= 2; default 2:4:1)\n"
           "                      --n LIST  --type H|B  --seed S  --warmup N  --iters N  --flush-mult K  --threads T\n"
           "                      --device I  --check-only  --csv FILE  --md FILE\n");
}

double rel_err(const std::vector<double> &a, const std::vector<double> &b) { return rel_l2(a, b); }

} // namespace

int main(int argc, char **argv)
{
    std::string lib, alg = "both";
    bool with_macko = true;
    std::vector<char *> rest{argv[0]};
    bool has_pattern = false;
    std::string cmdline;
    for (int i = 0; i < argc; ++i)
        cmdline += (i ? " " : "") + std::string(argv[i]);
    static char kind[] = "--kind", nm[] = "nm", pat[] = "--pattern", p24[] = "2:4:1";
    rest.push_back(kind);
    rest.push_back(nm);
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            usage();
            return 0;
        } else if ((a == "--lib" || a == "--alg") && i + 1 < argc) {
            (a == "--lib" ? lib : alg) = argv[++i];
        } else if (a == "--no-macko") {
            with_macko = false;
        } else if (a == "--flush" || a == "--kind" || a == "--nm-path" || a == "--check-nm-generator") {
            die("%s is not an option of macko-cusparselt-bench (see --help)", a.c_str());
        } else {
            has_pattern = has_pattern || a == "--pattern";
            rest.push_back(argv[i]);
        }
    }
    if (alg != "default" && alg != "search" && alg != "both")
        die("--alg: '%s' is not default, search or both", alg.c_str());
    if (!has_pattern) {
        rest.push_back(pat);
        rest.push_back(p24);
    }
    const Config cfg = parse_args((int)rest.size(), rest.data());
    for (const NmPattern &p : cfg.patterns)
        if (p.m != 4 || p.n > 2)
            die("--pattern %s: cuSPARSELt runs 2:4 (M = 4, N <= 2)", p.str().c_str());
    if (cfg.type != MACKO_R_16F && cfg.type != MACKO_R_16BF)
        die("--type: fp16 or bf16 (cuSPARSELt's 2:4 with fp32 accumulation)");

    Lt lt;
    const std::string why = open_lt(lt, lib);
    if (!why.empty()) {
        printf("macko-cusparselt-bench: skipped: %s\n", why.c_str());
        return 0;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("macko-cusparselt-bench: skipped: no CUDA device (cuSPARSELt found at %s)\n", lt.path.c_str());
        return 0;
    }
    CUDA_OK(cudaSetDevice(cfg.device));
    Opaque h;
    cusparseStatus_t lst = lt.init(&h);
    if (lst != CUSPARSE_STATUS_SUCCESS) {
        printf("macko-cusparselt-bench: skipped: cusparseLtInit failed (%d) with %s\n", (int)lst, lt.path.c_str());
        return 0;
    }
    int ltver = 0;
    lt.get_version(&h, &ltver);
    if (ltver < 600) {
        printf("macko-cusparselt-bench: skipped: cuSPARSELt %d.%d.%d at %s is older than 0.6 (other enum values)\n",
               ltver / 1000, ltver % 1000 / 100, ltver % 100, lt.path.c_str());
        lt.destroy(&h);
        return 0;
    }
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, cfg.device));
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasHandle_t blas;
    CUBLAS_OK(cublasCreate(&blas));
    CUBLAS_OK(cublasSetStream(blas, s));
    macko_handle_t mh = nullptr;
    if (with_macko && (macko_create(&mh) != MACKO_STATUS_SUCCESS || macko_set_stream(mh, s) != MACKO_STATUS_SUCCESS))
        die("macko_create: %s", macko_get_last_error_message());
    const size_t flush_bytes = std::max<size_t>((size_t)prop.l2CacheSize, size_t(1) << 20) * (size_t)cfg.flush_mult;
    DevBuf flush(flush_bytes);
    Timer timer;
    timer.init(s, flush.p, flush.bytes, cfg.iters);
    const cudaDataType ct = cfg.type == MACKO_R_16BF ? CUDA_R_16BF : CUDA_R_16F;
    fprintf(stderr, "macko-cusparselt-bench: %s; cuSPARSELt %d.%d.%d (%s); seed %" PRIu64 "\n", prop.name,
            ltver / 1000, ltver % 1000 / 100, ltver % 100, lt.path.c_str(), cfg.seed);

    std::vector<Result> results;
    bool lt_untouched = false; /* a pruning check left d_valid unwritten on a valid matrix */
    for (const Shape &sh : cfg.shapes)
        for (const NmPattern &p : cfg.patterns) {
            const int64_t R = sh.rows, C = sh.cols;
            const uint64_t cseed = nm_case_seed(cfg.seed, sh, p);
            HostNm arrays;
            const HostCsr m = generate_nm(sh, p, cfg.type, cseed, cfg.threads, arrays);
            /* A dense, row-major (cuBLAS and cuSPARSELt read it; cuSPARSELt compresses it); the host copy is kept and
             * uploaded again before each n's cuSPARSELt setup, on s (a non-blocking stream: a plain cudaMemcpy from
             * pageable memory may still be in flight when work on s starts) */
            std::vector<uint16_t> dense((size_t)(R * C), 0);
            for (int64_t r = 0; r < R; ++r)
                for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k)
                    dense[(size_t)(r * C + m.col[k])] = m.h[k];
            DevBuf dA(dense.size() * 2);
            macko_mat_t A = nullptr;
            std::string macko_fail;
            int64_t macko_storage = 0;
            if (with_macko) {
                macko_status_t st = macko_mat_create_nm_host(&A, R, C, cfg.type, p.n, p.m, p.v, arrays.values.get(),
                                                             arrays.positions.get());
                if (st == MACKO_STATUS_SUCCESS)
                    st = macko_mat_upload(mh, A);
                if (st == MACKO_STATUS_SUCCESS)
                    st = macko_mat_get_storage(A, &macko_storage, nullptr, nullptr, nullptr);
                if (st != MACKO_STATUS_SUCCESS)
                    macko_fail = strf("macko: %s (%s)", macko_get_status_name(st), macko_get_last_error_message());
            }
            arrays = HostNm();
            for (int n : cfg.ns) {
                Result res;
                res.s = sh;
                res.pattern = p.str();
                res.n = n;
                const std::vector<unsigned char> hb = random_operand(cseed, 6, (uint64_t)n, C * n, cfg.type);
                /* cuSPARSELt first: the n it takes decides the buffers (extra columns of B zero, of C ignored). An n
                 * that a descriptor or the plan refuses is tried again rounded up to 16; both errors are kept. */
                auto lt_setup = [&](int nn, std::unique_ptr<LtRun> &run) {
                    CUDA_OK(cudaMemcpyAsync(dA.p, dense.data(), dA.bytes, cudaMemcpyHostToDevice, s));
                    CUDA_OK(cudaStreamSynchronize(s));
                    run.reset(new LtRun(lt, h));
                    std::string e = run->setup(R, C, nn, ct, dA.p, dense.data(), s);
                    lt_untouched = lt_untouched || run->valid_untouched;
                    return e;
                };
                std::unique_ptr<LtRun> lr;
                int nr = n;
                std::string lerr = lt_setup(n, lr);
                const int n16 = (n + 15) / 16 * 16;
                if (!lerr.empty() && lr->refused && n16 != n) {
                    std::unique_ptr<LtRun> padded;
                    const std::string perr = lt_setup(n16, padded);
                    if (perr.empty()) {
                        lr = std::move(padded);
                        nr = n16;
                        lerr.clear();
                    } else {
                        lerr = strf("at n = %d: %s; at n = %d: %s", n, lerr.c_str(), n16, perr.c_str());
                    }
                }
                res.n_run = nr;
                DevBuf dB((size_t)(C * nr) * 2), dC((size_t)(R * nr) * 2);
                CUDA_OK(cudaMemsetAsync(dB.p, 0, dB.bytes, s));
                CUDA_OK(cudaMemcpyAsync(dB.p, hb.data(), hb.size(), cudaMemcpyHostToDevice, s));
                const int64_t cnt = R * n;
                /* cuBLAS: the reference, spot-checked against the host product */
                const float one = 1.0f, zero = 0.0f;
                auto blas_launch = [&](int) {
                    return cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)R, n, (int)C, &one, dA.p, ct, (int)C,
                                        dB.p, ct, (int)C, &zero, dC.p, ct, (int)R, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
                };
                CUDA_OK(cudaMemsetAsync(dC.p, 0xFF, dC.bytes, s));
                if (!blas_launch(0))
                    die("cublasGemmEx failed");
                const std::vector<double> ref = to_host(dC, cnt, cfg.type, s);
                {
                    std::vector<double> got, want;
                    Rng g(cseed, 7, (uint64_t)n);
                    for (int i = 0; i < 256; ++i) {
                        const int64_t r = (int64_t)g.below((uint64_t)R), j = (int64_t)g.below((uint64_t)n);
                        const uint16_t *bj = reinterpret_cast<const uint16_t *>(hb.data()) + j * C;
                        double acc = 0.0;
                        for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k)
                            acc += m.value(k) * bits_value(bj[m.col[k]], cfg.type);
                        got.push_back(ref[(size_t)(j * R + r)]);
                        want.push_back(acc);
                    }
                    res.err_blas = rel_err(got, want);
                    if (!(res.err_blas <= 1e-2))
                        die("%s %s n=%d: cublasGemmEx disagrees with the host product (%.3g)", shape_str(sh).c_str(),
                            p.str().c_str(), n, res.err_blas);
                }
                auto timed = [&](const std::function<bool(int)> &f) {
                    if (cfg.check_only)
                        return (double)NAN;
                    return timer.median_us(0, counts_for(once_us(s, f), cfg.warmup, cfg.iters), f);
                };
                res.blas_us = timed(blas_launch);
                /* cuSPARSELt */
                if (lerr.empty()) {
                    res.lt_bytes = lr->compressed_bytes;
                    for (int pass = 0; pass < 2 && lerr.empty(); ++pass) {
                        const bool search = pass == 1;
                        if ((search && alg == "default") || (!search && alg == "search"))
                            continue;
                        if (search)
                            lerr = lr->run(dB.p, dC.p, s, true);
                        CUDA_OK(cudaMemsetAsync(dC.p, 0xFF, dC.bytes, s));
                        if (lerr.empty())
                            lerr = lr->run(dB.p, dC.p, s, false);
                        if (!lerr.empty())
                            break;
                        res.err_lt = rel_err(to_host(dC, cnt, cfg.type, s), ref);
                        if (!(res.err_lt <= 1e-2)) {
                            lerr = strf("cuSPARSELt wrong: rel. err %.3g", res.err_lt);
                            break;
                        }
                        const double us = timed([&](int) { return lr->run(dB.p, dC.p, s, false).empty(); });
                        (search ? res.lt_search_us : res.lt_default_us) = us;
                        if (search)
                            res.config = lr->config;
                    }
                }
                if (!lerr.empty())
                    res.status = "cuSPARSELt " + lerr;
                /* macko, on the same B (its own n) */
                if (with_macko && macko_fail.empty()) {
                    res.macko_bytes = macko_storage;
                    auto mlaunch = [&](int) {
                        return (cfg.type == MACKO_R_16BF
                                    ? macko_spmm_ex(mh, MACKO_OPERATION_NON_TRANSPOSE, n, &one, A, dB.p, MACKO_R_16BF,
                                                    C, &zero, dC.p, MACKO_R_16BF, R, MACKO_R_32F)
                                    : macko_Hspmm(mh, MACKO_OPERATION_NON_TRANSPOSE, n, &one, A, dB.as<macko_half>(), C,
                                                  &zero, dC.as<macko_half>(), R)) == MACKO_STATUS_SUCCESS;
                    };
                    CUDA_OK(cudaMemsetAsync(dC.p, 0xFF, dC.bytes, s));
                    if (!mlaunch(0)) {
                        macko_fail = strf("macko: %s", macko_get_last_error_message());
                    } else {
                        res.err_macko = rel_err(to_host(dC, cnt, cfg.type, s), ref);
                        if (!(res.err_macko <= 1e-2))
                            macko_fail = strf("macko wrong: rel. err %.3g", res.err_macko);
                        else
                            res.macko_us = timed(mlaunch);
                    }
                }
                if (!macko_fail.empty())
                    res.status = (res.status == "ok" ? "" : res.status + "; ") + macko_fail;
                if (nr != n)
                    res.status += strf(" (cuSPARSELt at n = %d)", nr);
                fprintf(stderr, "%s %s n=%d: cuBLAS %.1f us, cuSPARSELt %.1f / %.1f us (default / search), macko %.1f "
                                "us; %s\n",
                        shape_str(sh).c_str(), p.str().c_str(), n, res.blas_us, res.lt_default_us, res.lt_search_us,
                        res.macko_us, res.status.c_str());
                results.push_back(res);
            }
            macko_mat_destroy(A);
        }

    /* the table (stdout, --md) and the CSV */
    std::string md = strf("# cuSPARSELt 2:4 SpMM: %s\n\n- command: `%s`\n- cuSPARSELt %d.%d.%d (%s); %s in/out, fp32 "
                          "accumulation (CUSPARSE_COMPUTE_32F); A row-major (structured, compressed once), B and C "
                          "column-major; cuBLAS = cublasGemmEx (CUBLAS_OP_T on row-major A, CUBLAS_COMPUTE_32F); macko "
                          "= %s on MACKO_KIND_NM\n- matrices: macko-bench --kind nm's (seed %" PRIu64 "): dense, "
                          "magnitude-pruned to the pattern\n- timing: CUDA events around each launch, %d warm-ups, "
                          "median of %d launches, L2 flushed (cudaMemsetAsync of %.0f MiB) before every launch\n\n",
                          prop.name, cmdline.c_str(), ltver / 1000, ltver % 1000 / 100, ltver % 100, lt.path.c_str(),
                          cfg.type == MACKO_R_16BF ? "bf16" : "fp16",
                          cfg.type == MACKO_R_16BF ? "macko_spmm_ex" : "macko_Hspmm", cfg.seed, cfg.warmup, cfg.iters,
                          (double)flush_bytes / 1048576.0);
    if (lt_untouched) {
        md += "- cusparseLtSpMMAPruneCheck left d_valid unwritten on a 2:4 matrix (it writes only on failure; the "
              "benchmark pre-fills it with a sentinel)\n\n";
        fprintf(stderr, "macko-cusparselt-bench: note: cusparseLtSpMMAPruneCheck writes d_valid only on failure\n");
    }
    md += "| shape | pattern | n | cuBLAS µs | cuSPARSELt µs (default) | cuSPARSELt µs (search, config) | macko µs | "
          "cuSPARSELt vs cuBLAS | macko vs cuBLAS | macko vs cuSPARSELt | cuSPARSELt MB | macko MB | status |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Result &r : results)
        md += "| " + shape_str(r.s) + " | " + r.pattern + " | " + strf("%d", r.n) + " | " +
              fmt_num(r.blas_us, "%.1f") + " | " + fmt_num(r.lt_default_us, "%.1f") + " | " +
              fmt_num(r.lt_search_us, "%.1f") + (r.config >= 0 ? strf(" (%d)", r.config) : "") + " | " +
              fmt_num(r.macko_us, "%.1f") + " | " + fmt_num(r.blas_us / r.lt_best(), "%.2fx") + " | " +
              fmt_num(r.blas_us / r.macko_us, "%.2fx") + " | " + fmt_num(r.lt_best() / r.macko_us, "%.2fx") + " | " +
              fmt_num(r.lt_bytes ? (double)r.lt_bytes / 1e6 : NAN, "%.1f") + " | " +
              fmt_num(r.macko_bytes ? (double)r.macko_bytes / 1e6 : NAN, "%.1f") + " | " + r.status + " |\n";
    printf("%s", md.c_str());
    if (!cfg.md.empty()) {
        FILE *f = fopen(cfg.md.c_str(), "w");
        if (!f)
            die("cannot write %s", cfg.md.c_str());
        fputs(md.c_str(), f);
        fclose(f);
    }
    if (!cfg.csv.empty()) {
        FILE *f = fopen(cfg.csv.c_str(), "w");
        if (!f)
            die("cannot write %s", cfg.csv.c_str());
        fprintf(f, "type,rows,cols,pattern,n,n_cusparselt,cublas_us,cusparselt_default_us,cusparselt_search_us,"
                   "cusparselt_config,macko_us,cusparselt_bytes,macko_bytes,rel_err_cublas_spot,rel_err_cusparselt,"
                   "rel_err_macko,status\n");
        auto g = [](double v) { return std::isfinite(v) ? strf("%.6g", v) : std::string(); };
        for (const Result &r : results)
            fprintf(f, "%c,%" PRId64 ",%" PRId64 ",%s,%d,%d,%s,%s,%s,%d,%s,%zu,%" PRId64 ",%s,%s,%s,\"%s\"\n",
                    cfg.vt().letter, r.s.rows, r.s.cols, r.pattern.c_str(), r.n, r.n_run, g(r.blas_us).c_str(),
                    g(r.lt_default_us).c_str(), g(r.lt_search_us).c_str(), r.config, g(r.macko_us).c_str(),
                    r.lt_bytes, r.macko_bytes, g(r.err_blas).c_str(), g(r.err_lt).c_str(), g(r.err_macko).c_str(),
                    r.status.c_str());
        fclose(f);
    }
    int failed = 0;
    for (const Result &r : results)
        failed += r.status.find("wrong") != std::string::npos;
    timer.destroy();
    if (mh)
        macko_destroy(mh);
    cublasDestroy(blas);
    lt.destroy(&h);
    cudaStreamDestroy(s);
    return failed ? 2 : 0;
}
