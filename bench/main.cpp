/*
 * main.cpp -- macko-bench, the benchmark driver of BENCH.md: macko SpMV and SpMM against cuBLAS and cuSPARSE, on the
 * same random matrices, in the same run. macko is reached only through its public header (macko.h). Not part of the
 * library.
 *
 * The parts: options (command line), matgen (matrices and vectors), timer (events, warm-ups, median, write flush),
 * rotate (--flush rotate: copies of the inputs), report (CSV, Markdown), methods_* (one record per cuBLAS, cuSPARSE
 * and macko routine: method.h), row (the one loop over methods), case (one matrix, its rows).
 */
#include "bench.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

/* The kernel driver's version ("580.159.04"): the first dotted number after "Kernel Module" in the first line of
 * /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release ..."). */
static std::string driver_version_in(const char *line)
{
    const char *k = strstr(line, "Kernel Module");
    for (k = k ? k : line; *k; ++k) {
        if (!isdigit((unsigned char)*k) || (k > line && !isspace((unsigned char)k[-1])))
            continue;
        const char *e = k;
        while (isdigit((unsigned char)*e) || *e == '.')
            ++e;
        const std::string t(k, e);
        if (t.find('.') != std::string::npos && (isspace((unsigned char)*e) || *e == '\0'))
            return t;
    }
    return "unknown";
}

static std::string kernel_driver_version()
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return "unknown";
    char line[512] = {0};
    const std::string v = fgets(line, sizeof line, f) ? driver_version_in(line) : "unknown";
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    const Config cfg = parse_args(argc, argv);
    if (cfg.check_generator) { /* host only: no device needed */
        int bad = 0;
        for (const Shape &s : cfg.shapes)
            for (const NmPattern &p : cfg.patterns)
                for (const ValueType &vt : kValueTypes) {
                    HostNm nm;
                    const uint64_t cseed = nm_case_seed(cfg.seed, s, p);
                    const HostCsr m = generate_nm(s, p, vt.type, cseed, cfg.threads, nm);
                    const std::string why = check_nm(m, nm, cseed);
                    printf("%s %s %s: %s\n", shape_str(s).c_str(), p.str().c_str(), vt.name,
                           why.empty() ? "ok" : why.c_str());
                    bad += !why.empty();
                }
        printf("%s\n", bad ? "FAILED" : "all ok");
        return bad ? 2 : 0;
    }

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
        die("no CUDA device found (use --help to see the options without a GPU)");
    if (cfg.device >= ndev)
        die("--device %d: only %d device(s)", cfg.device, ndev);
    CUDA_OK(cudaSetDevice(cfg.device));

    Env env;
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, cfg.device));
    env.device_name = prop.name;
    env.sm_count = prop.multiProcessorCount;
    env.l2 = (size_t)prop.l2CacheSize;
    env.mem = prop.totalGlobalMem;
    CUDA_OK(cudaRuntimeGetVersion(&env.runtime));
    CUDA_OK(cudaDriverGetVersion(&env.driver));
    env.kernel_driver = kernel_driver_version();
    {
        int a = 0, b = 0, c = 0;
        CUBLAS_OK(cublasGetProperty(MAJOR_VERSION, &a));
        CUBLAS_OK(cublasGetProperty(MINOR_VERSION, &b));
        CUBLAS_OK(cublasGetProperty(PATCH_LEVEL, &c));
        env.cublas_ver = strf("%d.%d.%d", a, b, c);
        CUSPARSE_OK(cusparseGetProperty(MAJOR_VERSION, &a));
        CUSPARSE_OK(cusparseGetProperty(MINOR_VERSION, &b));
        CUSPARSE_OK(cusparseGetProperty(PATCH_LEVEL, &c));
        env.cusparse_ver = strf("%d.%d.%d", a, b, c);
        macko_get_version(&a, &b, &c);
        env.macko_ver = strf("%d.%d.%d", a, b, c);
    }
    {
        char buf[64];
        const time_t now = time(nullptr);
        struct tm tmv;
        gmtime_r(&now, &tmv);
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tmv);
        env.date = buf;
    }

    Ctx cx;
    cx.cfg = &cfg;
    cx.env = &env;
    CUDA_OK(cudaStreamCreateWithFlags(&cx.stream, cudaStreamNonBlocking));
    CUBLAS_OK(cublasCreate(&cx.blas));
    CUBLAS_OK(cublasSetStream(cx.blas, cx.stream));
    CUBLAS_OK(cublasSetPointerMode(cx.blas, CUBLAS_POINTER_MODE_HOST));
    /* cuBLAS's default, set explicitly: the fp32 baselines (Sgemv, Sgemm) never use TF32 tensor cores under it (that
     * would need CUBLAS_TF32_TENSOR_OP_MATH or CUBLAS_COMPUTE_32F_FAST_TF32); fp16 GemmEx is unaffected. */
    CUBLAS_OK(cublasSetMathMode(cx.blas, CUBLAS_DEFAULT_MATH));
    CUSPARSE_OK(cusparseCreate(&cx.sparse));
    CUSPARSE_OK(cusparseSetStream(cx.sparse, cx.stream));
    CUSPARSE_OK(cusparseSetPointerMode(cx.sparse, CUSPARSE_POINTER_MODE_HOST));
    macko_status_t mst = macko_create(&cx.macko);
    if (mst != MACKO_STATUS_SUCCESS)
        die("macko_create: %s (%s)", macko_get_status_name(mst), macko_get_last_error_message());
    if ((mst = macko_set_stream(cx.macko, cx.stream)) != MACKO_STATUS_SUCCESS)
        die("macko_set_stream: %s (%s)", macko_get_status_name(mst), macko_get_last_error_message());
    DevBuf macko_ws(cfg.workspace_mib > 0 ? (size_t)cfg.workspace_mib << 20 : 0);
    if (cfg.workspace_mib > 0 &&
        (mst = macko_set_workspace(cx.macko, macko_ws.p, (size_t)cfg.workspace_mib << 20)) != MACKO_STATUS_SUCCESS)
        die("macko_set_workspace: %s (%s)", macko_get_status_name(mst), macko_get_last_error_message());

    env.flush_bytes = std::max<size_t>(env.l2, size_t(1) << 20) * (size_t)cfg.flush_mult;
    DevBuf flush(env.flush_bytes);
    cx.timer.init(cx.stream, flush.p, flush.bytes, cfg.iters);
    env.copy_gbps = copy_bandwidth_gbps(cx.stream);

    const int count = (int)(cfg.shapes.size() * cfg.cases_per_shape() * cfg.ns.size());
    fprintf(stderr, "macko-bench: %s, %d SMs, %.0f MiB L2; CUDA runtime %s, driver %s (%s); seed %" PRIu64
                    "; copy bandwidth %.0f GB/s; %d case(s)%s\n",
            env.device_name.c_str(), env.sm_count, (double)env.l2 / 1048576.0, cuda_ver(env.runtime).c_str(),
            cuda_ver(env.driver).c_str(), env.kernel_driver.c_str(), cfg.seed, env.copy_gbps, count,
            cfg.check_only ? " (check only)" : "");

    FILE *csv = nullptr;
    if (!cfg.csv.empty()) {
        csv = fopen(cfg.csv.c_str(), "w");
        if (!csv)
            die("cannot write %s: %s", cfg.csv.c_str(), strerror(errno));
        write_csv_header(csv);
    }

    std::vector<Row> rows;
    int idx = 0;
    const auto emit = [&](const Row &r) {
        rows.push_back(r);
        if (csv)
            write_csv_row(csv, cfg, env, rows.back());
        write_md(cfg, env, rows);
    };
    for (const Shape &s : cfg.shapes) {
        if (cfg.nm)
            for (const NmPattern &p : cfg.patterns)
                run_case(cx, s, p.density(), &p, idx, count, emit);
        else
            for (double d : cfg.densities)
                run_case(cx, s, d, nullptr, idx, count, emit);
    }
    if (csv)
        fclose(csv);

    printf("%s%s", report_header(cfg, env).c_str(), report_body(cfg, env, rows).c_str());
    int failed = 0;
    for (const Row &r : rows)
        failed += !r.ok();
    if (failed)
        printf("\n%d of %zu row(s) FAILED (see the status column)\n", failed, rows.size());

    cx.timer.destroy();
    macko_destroy(cx.macko);
    cusparseDestroy(cx.sparse);
    cublasDestroy(cx.blas);
    cudaStreamDestroy(cx.stream);
    return failed ? 2 : 0;
}
