/*
 * quant_bench.cu -- macko-quant-bench: the QUANT kind (3-bit weights + fp16 outliers, FORMAT_QUANT.md) against
 * cublasGemmEx on the dense fp16 weight of the same shape (N = n, fp32 compute) and against macko's MACKO fp16 kind
 * at density 0.5, in the same run, BENCH.md's method: an L2 write flush before every launch, warm-ups, CUDA events
 * around each launch, the median. The QUANT matrix is a random valid encoding (codes, statistics and outlier
 * positions uniform at random: the kernel's time depends on the shape, the outlier count and their spread, not on
 * the values); the result is checked against cuBLAS on the matrix's own dense export (relative L2 error).
 *
 *   macko-quant-bench [--shapes "RxC ..."] [--n "1 2 4 8 16"] [--outliers 0.01] [--iters 100] [--csv FILE]
 */
#include "common.h"
#include "macko_internal.h"
#include "quant.h"
#include "timer.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "macko.h"

namespace {

struct Opt {
    std::vector<std::pair<int64_t, int64_t>> shapes;
    std::vector<int> ns = {1, 2, 4, 8, 16};
    double outliers = 0.01;
    int iters = 100, warmup = 20;
    std::string csv;
};

std::vector<std::pair<int64_t, int64_t>> parse_shapes(const std::string &s)
{
    std::vector<std::pair<int64_t, int64_t>> out;
    std::istringstream in(s);
    std::string t;
    while (in >> t) {
        long long r = 0, c = 0;
        if (sscanf(t.c_str(), "%lldx%lld", &r, &c) != 2)
            die("bad shape '%s'", t.c_str());
        out.push_back({r, c});
    }
    return out;
}

/* A random valid QUANT encoding with outliers at the given density (FORMAT_QUANT.md). */
void random_quant(int64_t rows, int64_t cols, double od, uint64_t seed, std::vector<uint64_t> &words,
                  std::vector<int32_t> &rp, std::vector<uint32_t> &oe)
{
    std::mt19937_64 rng(seed);
    const int64_t bands = (rows + 15) / 16, tcols = (cols + 15) / 16;
    words.assign((size_t)(bands * tcols * 16), 0);
    for (int64_t b = 0; b < bands; b++)
        for (int64_t t = 0; t < tcols; t++) {
            const uint64_t S = (uint64_t)macko_half_from_double(0.0005 + 0.001 * (double)(rng() % 8)) |
                               (uint64_t)macko_half_from_double(-1.0) << 16 |
                               (uint64_t)macko_half_from_double(1.0) << 32 | (uint64_t)macko_half_from_double(0.5) << 48;
            for (int i = 0; i < 16; i++) {
                uint64_t r = rng();
                unsigned q[16] = {0};
                for (int k = 0; k < 16; k++)
                    if (b * 16 + i < rows && t * 16 + k < cols)
                        q[k] = (unsigned)((r >> (3 * k)) & 7u);
                const bool live = b * 16 + i < rows;
                words[(size_t)((b * tcols + t) * 16 + i)] =
                    macko_quant_pack(q, live ? (unsigned)(r >> 50) & 7u : 0u, live ? (unsigned)(r >> 55) & 7u : 0u,
                                     macko_quant_stats_piece(S, i));
            }
        }
    rp.assign((size_t)rows + 1, 0);
    oe.clear();
    std::geometric_distribution<int64_t> gap(od);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = od > 0 ? gap(rng) : cols; c < cols; c += 1 + gap(rng))
            oe.push_back(macko_quant_outlier((unsigned)c, macko_half_from_double(((rng() & 1) ? 0.1 : -0.1))));
        rp[(size_t)r + 1] = (int32_t)oe.size();
    }
}

/* A random MACKO fp16 matrix of density d (CSR through the public encoder). */
macko_mat_t random_macko(int64_t rows, int64_t cols, double d, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::vector<int32_t> rp((size_t)rows + 1, 0), ci;
    std::vector<uint16_t> v;
    const uint64_t thr = (uint64_t)(d * 4294967296.0);
    ci.reserve((size_t)(rows * cols * d * 1.01) + 16);
    v.reserve(ci.capacity());
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++)
            if ((rng() & 0xFFFFFFFFu) < thr) {
                ci.push_back((int32_t)c);
                v.push_back(0x2C00); /* 0.0625 */
            }
        rp[(size_t)r + 1] = (int32_t)ci.size();
    }
    macko_mat_t A = nullptr;
    if (macko_mat_create_csr_host(&A, rows, cols, (int64_t)ci.size(), rp.data(), ci.data(), v.data(), MACKO_INDEX_32I,
                                  MACKO_INDEX_BASE_ZERO, MACKO_R_16F) != MACKO_STATUS_SUCCESS)
        die("macko_mat_create_csr_host: %s", macko_get_last_error_message());
    return A;
}

#define MACKO_OK(call)                                                                                               \
    do {                                                                                                             \
        const macko_status_t st_ = (call);                                                                           \
        if (st_ != MACKO_STATUS_SUCCESS)                                                                             \
            die("%s: %s (%s)", #call, macko_get_status_name(st_), macko_get_last_error_message());                  \
    } while (0)

} // namespace

int main(int argc, char **argv)
{
    Opt o;
    o.shapes = parse_shapes("4096x4096 4096x11008 11008x4096 12288x12288 36864x12288 28672x8192");
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc)
                die("%s needs a value", a.c_str());
            return argv[++i];
        };
        if (a == "--shapes")
            o.shapes = parse_shapes(next());
        else if (a == "--n") {
            o.ns.clear();
            std::istringstream in(next());
            int n;
            while (in >> n)
                o.ns.push_back(n);
        } else if (a == "--outliers")
            o.outliers = atof(next().c_str());
        else if (a == "--iters")
            o.iters = atoi(next().c_str());
        else if (a == "--csv")
            o.csv = next();
        else
            die("unknown option %s", a.c_str());
    }
    int nmax = 1;
    for (int n : o.ns)
        nmax = std::max(nmax, n);

    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    cublasHandle_t blas;
    CUBLAS_OK(cublasCreate(&blas));
    CUBLAS_OK(cublasSetStream(blas, s));
    macko_handle_t h;
    MACKO_OK(macko_create(&h));
    MACKO_OK(macko_set_stream(h, (macko_stream_t)s));
    const size_t fbytes = (size_t)prop.l2CacheSize * 2;
    DevBuf flush(fbytes);
    Timer timer;
    timer.init(s, flush.p, fbytes, o.iters);
    const double copy = copy_bandwidth_gbps(s);
    int rtv = 0;
    cudaRuntimeGetVersion(&rtv);
    printf("# macko-quant-bench: %s, CUDA runtime %d, copy bandwidth %.0f GB/s, outliers %.3f, L2 write flush, "
           "median of %d\n\n",
           prop.name, rtv, copy, o.outliers, o.iters);
    printf("| shape | n | storage vs fp16 | outlier layout | cublasGemmEx us | QUANT CSR us | QUANT TCOL us | QUANT auto "
           "us | MACKO d0.5 us | QUANT vs cuBLAS | QUANT vs MACKO d0.5 | QUANT %% of copy | rel err |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    FILE *csv = o.csv.empty() ? nullptr : fopen(o.csv.c_str(), "w");
    if (csv)
        fprintf(csv, "device,rows,cols,n,outliers,storage_ratio,auto_layout,cublas_us,quant_csr_us,quant_tcol_us,"
                     "quant_us,macko_d05_us,speedup_cublas,speedup_macko,pct_copy,rel_err\n");
    const Counts cnt{o.warmup, o.iters};
    for (const auto &shape : o.shapes) {
        const int64_t R = shape.first, C = shape.second;
        std::vector<uint64_t> words;
        std::vector<int32_t> rp;
        std::vector<uint32_t> oe;
        random_quant(R, C, o.outliers, (uint64_t)(R * 131 + C), words, rp, oe);
        macko_mat_t Q = nullptr;
        MACKO_OK(macko_mat_create_quant_host(&Q, R, C, 3, words.data(), (int64_t)oe.size(), rp.data(), oe.data()));
        /* the dense fp16 weight cuBLAS multiplies: Q's own export (row-major R x C = column-major C x R) */
        std::vector<uint16_t> dense((size_t)(R * C));
        MACKO_OK(macko_mat_export_dense_host(Q, dense.data(), C, MACKO_ORDER_ROW));
        MACKO_OK(macko_mat_upload(h, Q));
        macko_mat_t M = random_macko(R, C, 0.5, (uint64_t)(R + C));
        MACKO_OK(macko_mat_upload(h, M));
        int64_t qbytes = 0;
        DevBuf dW((size_t)(R * C) * 2), dX((size_t)(C * nmax) * 2), dY((size_t)(R * nmax) * 2),
            dY2((size_t)(R * nmax) * 2);
        CUDA_OK(cudaMemcpy(dW.p, dense.data(), dW.bytes, cudaMemcpyHostToDevice));
        {
            std::vector<uint16_t> x((size_t)(C * nmax));
            std::mt19937 rng(7);
            for (auto &v : x)
                v = macko_half_from_double((double)(rng() % 2001) / 1000.0 - 1.0);
            CUDA_OK(cudaMemcpy(dX.p, x.data(), dX.bytes, cudaMemcpyHostToDevice));
        }
        const float one = 1.0f, zero = 0.0f;
        for (int n : o.ns) {
            auto gemm = [&](int) {
                return cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)R, n, (int)C, &one, dW.p, CUDA_R_16F, (int)C,
                                    dX.p, CUDA_R_16F, (int)C, &zero, dY.p, CUDA_R_16F, (int)R, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
            };
            auto quant = [&](int) {
                return macko_Hspmm(h, MACKO_OPERATION_NON_TRANSPOSE, n, &one, Q, dX.as<macko_half>(), C, &zero,
                                   dY2.as<macko_half>(), R) == MACKO_STATUS_SUCCESS;
            };
            auto mack = [&](int) {
                return macko_Hspmm(h, MACKO_OPERATION_NON_TRANSPOSE, n, &one, M, dX.as<macko_half>(), C, &zero,
                                   dY2.as<macko_half>(), R) == MACKO_STATUS_SUCCESS;
            };
            const double tb = timer.median_us(0, cnt, gemm);
            double tq[2];
            for (int lay = 0; lay < 2; lay++) {
                macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
                f.quant_outliers = lay;
                MACKO_OK(macko_plan_override(h, Q, MACKO_OPERATION_NON_TRANSPOSE, &f));
                tq[lay] = timer.median_us(0, cnt, quant);
            }
            if (const char *ul = getenv("QB_UNITS")) { /* tuning: the tiles per unit, forced */
                std::istringstream in(ul);
                int ut;
                while (in >> ut) {
                    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
                    f.quant_unit_tiles = ut;
                    if (macko_plan_override(h, Q, MACKO_OPERATION_NON_TRANSPOSE, &f) != MACKO_STATUS_SUCCESS)
                        continue;
                    fprintf(stderr, "  %lldx%lld n %d unit %d: %.1f us\n", (long long)R, (long long)C, n, ut,
                            timer.median_us(0, cnt, quant));
                }
            }
            MACKO_OK(macko_plan_override(h, Q, MACKO_OPERATION_NON_TRANSPOSE, nullptr));
            const double ta = timer.median_us(0, cnt, quant);
            /* the bytes the kernel reads (FORMAT_QUANT.md; = macko_mat_get_storage's) */
            qbytes = Q->q.words_count * 8 + (Q->q.layout == MACKO_QOUT_TCOL ? Q->q.bands + 1 : R + 1) * 4 +
                     Q->q.slots * 4;
            const double eff = (double)qbytes / (2.0 * (double)R * (double)C);
            const int64_t ent = (int64_t)oe.size();
            const bool tcol = Q->q.layout == MACKO_QOUT_TCOL;
            /* check: QUANT against cuBLAS on the dense export (which rounds W + O once to fp16) */
            CUDA_OK(cudaStreamSynchronize(s));
            gemm(0);
            quant(0);
            CUDA_OK(cudaStreamSynchronize(s));
            std::vector<uint16_t> y1((size_t)(R * n)), y2((size_t)(R * n));
            CUDA_OK(cudaMemcpy(y1.data(), dY.p, y1.size() * 2, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(y2.data(), dY2.p, y2.size() * 2, cudaMemcpyDeviceToHost));
            double num = 0, den = 0;
            for (size_t i = 0; i < y1.size(); i++) {
                const double a = half_value(y1[i]), b = half_value(y2[i]);
                num += (a - b) * (a - b);
                den += a * a;
            }
            const double err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
            const double tm = timer.median_us(0, cnt, mack);
            const double bytes = (double)qbytes + 2.0 * (double)(C * n + R * n);
            const double pct = bytes / (ta * 1e-6) / (copy * 1e9) * 100.0; /* BENCH.md: bytes / time / copy GB/s */
            printf("| %lldx%lld | %d | %.3f | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.0f %% | %.1e |\n",
                   (long long)R, (long long)C, n, eff, tcol ? "TCOL" : "CSR", tb, tq[0], tq[1], ta, tm, tb / ta,
                   tm / ta, pct, err);
            fflush(stdout);
            if (csv)
                fprintf(csv, "%s,%lld,%lld,%d,%lld,%.4f,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.1f,%.2e\n", prop.name,
                        (long long)R, (long long)C, n, (long long)ent, eff, tcol ? "TCOL" : "CSR", tb, tq[0], tq[1],
                        ta, tm, tb / ta, tm / ta, pct, err);
        }
        macko_mat_destroy(Q);
        macko_mat_destroy(M);
    }
    if (csv)
        fclose(csv);
    timer.destroy();
    macko_destroy(h);
    cublasDestroy(blas);
    return 0;
}
