/*
 * case.cu -- one (shape, density) or (shape, N:M pattern): the matrix is generated on the host (matgen.cpp), encoded
 * through the public API (macko_mat_create_csr_host, or macko_mat_create_nm_host for --kind nm ->
 * macko_mat_get_storage -> macko_mat_upload -> macko_analysis), copied to the device
 * as CSR and as a dense row-major matrix (built on the device from the CSR), and every n of the run is a row on it
 * (row.cpp). Device memory is freed after the case.
 */
#include "bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

/* dense[r*cols + col[j]] = val[j] for the entries of row r; one warp per row. */
template <class T>
__global__ void scatter_rows(const int32_t *__restrict__ row_ptr, const int32_t *__restrict__ col,
                             const T *__restrict__ val, T *__restrict__ dense, int64_t rows, int64_t cols)
{
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows)
        return;
    T *drow = dense + row * cols;
    for (int64_t j = row_ptr[row] + (threadIdx.x % 32); j < row_ptr[row + 1]; j += 32)
        drow[col[j]] = val[j];
}

void run_case(Ctx &cx, const Shape &s, double d, const NmPattern *pat, int &idx, int count,
              const std::function<void(const Row &)> &emit)
{
    const Config &cfg = *cx.cfg;
    const ValueType &vt = cfg.vt();
    const size_t tsz = (size_t)vt.size;
    const int64_t R = s.rows, C = s.cols;
    const std::string case_tag =
        pat ? strf("%s %s", shape_str(s).c_str(), pat->str().c_str()) : strf("%s d=%.2f", shape_str(s).c_str(), d);
    fprintf(stderr, "[%d/%d] %s: generating\n", idx + 1, count, case_tag.c_str());

    Row row;
    row.s = s;
    row.density = d;
    if (pat)
        row.pattern = pat->str();

    // ---- host matrix (--kind nm: pruned to the pattern, with its N:M arrays)
    const uint64_t cseed = pat ? nm_case_seed(cfg.seed, s, *pat) : case_seed(cfg.seed, s, d);
    auto t0 = std::chrono::steady_clock::now();
    HostNm nm;
    HostCsr m = pat ? generate_nm(s, *pat, vt.type, cseed, cfg.threads, nm) : generate(s, d, vt.type, cseed,
                                                                                        cfg.threads);
    row.nnz = m.nnz;
    const double t_gen = seconds_since(t0);

    // ---- macko encoding (host), through the public API
    t0 = std::chrono::steady_clock::now();
    macko_mat_t A = nullptr;
    const char *create = pat ? "macko_mat_create_nm_host" : "macko_mat_create_csr_host";
    macko_status_t mst =
        pat ? macko_mat_create_nm_host(&A, R, C, vt.type, pat->n, pat->m, pat->v, nm.values.get(), nm.positions.get())
            : macko_mat_create_csr_host(&A, R, C, m.nnz, m.row_ptr.get(), m.col.get(), m.values(), MACKO_INDEX_32I,
                                        MACKO_INDEX_BASE_ZERO, vt.type);
    nm = HostNm(); /* copied by the library */
    if (mst != MACKO_STATUS_SUCCESS) {
        row.status = "FAIL " + macko_error(create, mst);
        A = nullptr;
    } else if ((mst = macko_mat_get_storage(A, &row.storage, &row.entries, &row.entries_padded, &row.effd)) !=
               MACKO_STATUS_SUCCESS) {
        row.status = "FAIL " + macko_error("macko_mat_get_storage", mst);
    }
    const double t_enc = seconds_since(t0);

    // ---- device copies: CSR, dense (built on the device from the CSR); macko upload and analysis
    t0 = std::chrono::steady_clock::now();
    cudaStream_t st = cx.stream;
    DevBuf d_rp((size_t)(R + 1) * 4), d_col((size_t)m.nnz * 4), d_val((size_t)m.nnz * tsz);
    DevBuf d_dense((size_t)R * (size_t)C * tsz);
    CUDA_OK(cudaMemcpyAsync(d_rp.p, m.row_ptr.get(), d_rp.bytes, cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaMemcpyAsync(d_col.p, m.col.get(), d_col.bytes, cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaMemcpyAsync(d_val.p, m.values(), d_val.bytes, cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaMemsetAsync(d_dense.p, 0, d_dense.bytes, st));
    {
        const unsigned blocks = (unsigned)((R + 7) / 8);
        /* the values are copied as bits: one instance per value size */
        if (tsz == 8)
            scatter_rows<uint64_t><<<blocks, 256, 0, st>>>(d_rp.as<int32_t>(), d_col.as<int32_t>(),
                                                           d_val.as<uint64_t>(), d_dense.as<uint64_t>(), R, C);
        else if (tsz == 4)
            scatter_rows<float><<<blocks, 256, 0, st>>>(d_rp.as<int32_t>(), d_col.as<int32_t>(), d_val.as<float>(),
                                                        d_dense.as<float>(), R, C);
        else
            scatter_rows<uint16_t><<<blocks, 256, 0, st>>>(d_rp.as<int32_t>(), d_col.as<int32_t>(),
                                                           d_val.as<uint16_t>(), d_dense.as<uint16_t>(), R, C);
        CUDA_OK(cudaGetLastError());
    }
    CUDA_OK(cudaStreamSynchronize(st));
    if (row.ok() && !pat && (mst = macko_mat_set_layout(A, (macko_layout_t)cfg.layout)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_mat_set_layout", mst);
    if (row.ok() && (mst = macko_mat_upload(cx.macko, A)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_mat_upload", mst);
    if (row.ok() && (mst = macko_analysis(cx.macko, MACKO_OPERATION_NON_TRANSPOSE, A)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_analysis", mst);
    if (row.ok() && (mst = force_plan(cfg, cx.macko, A)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_plan_override", mst);
    /* the bytes the device copy holds, which the kernels read (an N:M matrix's SP24 layout or a tile layout differs
     * from the host arrays measured above; before session 20 the report counted the host arrays' bytes) */
    if (row.ok() && (mst = macko_mat_get_storage(A, &row.storage, nullptr, nullptr, &row.effd)) != MACKO_STATUS_SUCCESS)
        row.status = "FAIL " + macko_error("macko_mat_get_storage", mst);
    row.flush = cfg.check_only ? "none" : "write";
    fprintf(stderr, "[%d/%d] %s: generated in %.1f s, encoded in %.1f s, on the device in %.1f s\n", idx + 1, count,
            case_tag.c_str(), t_gen, t_enc, seconds_since(t0));

    // ---- the matrix inputs (and their copies for --flush rotate, made per row as needed)
    {
        Pool pool;
        pool.handle = cx.macko;
        pool.stream = st;
        pool.cfg = &cfg;
        pool.type = vt.type;
        pool.rows = R;
        pool.cols = C;
        pool.nnz = m.nnz;
        pool.storage = row.storage;
        pool.dense_bytes = d_dense.bytes;
        pool.rp_bytes = d_rp.bytes;
        pool.col_bytes = d_col.bytes;
        pool.val_bytes = d_val.bytes;
        pool.dense.push_back(d_dense.p);
        pool.csr.push_back({d_rp.p, d_col.p, d_val.p});
        pool.macko.push_back(A);

        /* n = 1 first: its rotation makes the most copies, which the larger n reuse (K only shrinks as n grows). */
        if (std::find(cfg.ns.begin(), cfg.ns.end(), 1) != cfg.ns.end())
            emit(run_row(cx, m, cseed, pool, row, 1, strf("[%d/%d] %s n=1", ++idx, count, case_tag.c_str())));
        for (int n : cfg.ns)
            if (n > 1)
                emit(run_row(cx, m, cseed, pool, row, n, strf("[%d/%d] %s n=%d", ++idx, count, case_tag.c_str(), n)));
    }
    macko_mat_destroy(A);
    CUDA_OK(cudaStreamSynchronize(st));
}
