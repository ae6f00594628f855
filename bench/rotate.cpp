/* rotate.cpp -- see rotate.h. */
#include "rotate.h"

#include "options.h"

#include <algorithm>
#include <cinttypes>

std::string macko_error(const char *fn, macko_status_t st)
{
    return strf("%s: %s (%s)", fn, macko_get_status_name(st), macko_get_last_error_message());
}

int64_t copies_for(int64_t bytes_per_launch, size_t l2)
{
    const int64_t want = (int64_t)kRotateL2Mult * (int64_t)std::max<size_t>(l2, size_t(1) << 20);
    const int64_t b = std::max<int64_t>(bytes_per_launch, 1);
    return std::max<int64_t>(2, (want + b - 1) / b);
}

Pool::~Pool()
{
    for (size_t i = 1; i < macko.size(); ++i)
        macko_mat_destroy(macko[i]);
}

size_t Pool::need(int64_t kb, int64_t ks, int64_t km) const
{
    size_t n = 0;
    for (int64_t k = (int64_t)dense.size(); k < kb; ++k)
        n += dense_bytes + kAllocSlack;
    for (int64_t k = (int64_t)csr.size(); k < ks; ++k)
        n += rp_bytes + col_bytes + val_bytes + 3 * kAllocSlack;
    for (int64_t k = (int64_t)macko.size(); k < km; ++k)
        n += (size_t)storage + 3 * kAllocSlack;
    return n;
}

std::string Pool::grow(int64_t kb, int64_t ks, int64_t km, std::string &macko_fail)
{
    auto dup = [&](const void *src, size_t bytes) -> const void * {
        std::unique_ptr<DevBuf> b = DevBuf::try_alloc(bytes);
        if (!b)
            return nullptr;
        CUDA_OK(cudaMemcpyAsync(b->p, src, bytes, cudaMemcpyDeviceToDevice, stream));
        owned.push_back(std::move(b));
        return owned.back()->p;
    };
    while ((int64_t)dense.size() < kb) {
        const void *d = dup(dense[0], dense_bytes);
        if (!d)
            return strf("cudaMalloc of a dense copy (%.3f GB) failed", (double)dense_bytes / 1e9);
        dense.push_back(d);
    }
    while ((int64_t)csr.size() < ks) {
        const Csr c{dup(csr[0].rp, rp_bytes), dup(csr[0].col, col_bytes), dup(csr[0].val, val_bytes)};
        if (!c.rp || !c.col || !c.val)
            return "cudaMalloc of a CSR copy failed";
        csr.push_back(c);
    }
    if ((int64_t)macko.size() < km) {
        const void *values = nullptr, *row_ptr = nullptr;
        const uint8_t *deltas = nullptr;
        int64_t entries = 0;
        macko_kind_t kind = MACKO_KIND_MACKO;
        int nn = 0, nm = 0, nv = 0; /* an N:M matrix's pattern; deltas are then its positions */
        macko_status_t st = macko_mat_get_kind(macko[0], &kind);
        if (st == MACKO_STATUS_SUCCESS)
            st = kind == MACKO_KIND_NM ? macko_mat_get_nm_host(macko[0], &nn, &nm, &nv, &values, &deltas)
                                       : macko_mat_get_macko_host(macko[0], &values, &deltas, &row_ptr, nullptr,
                                                                  &entries, nullptr);
        if (st != MACKO_STATUS_SUCCESS) {
            macko_fail = macko_error(kind == MACKO_KIND_NM ? "macko_mat_get_nm_host" : "macko_mat_get_macko_host", st);
            return "";
        }
        while ((int64_t)macko.size() < km) {
            /* The same encoding, imported (validated, copied), uploaded and analysed like the original; its
             * host copy is released once on the device. */
            macko_mat_t B = nullptr;
            const char *fn = kind == MACKO_KIND_NM ? "macko_mat_create_nm_host" : "macko_mat_create_macko_host";
            st = kind == MACKO_KIND_NM ? macko_mat_create_nm_host(&B, rows, cols, type, nn, nm, nv, values, deltas)
                                       : macko_mat_create_macko_host(&B, rows, cols, type, entries, values, deltas,
                                                                     row_ptr);
            if (st == MACKO_STATUS_SUCCESS && cfg != nullptr && kind != MACKO_KIND_NM &&
                (st = macko_mat_set_layout(B, (macko_layout_t)cfg->layout)) != MACKO_STATUS_SUCCESS)
                fn = "macko_mat_set_layout";
            else if (st == MACKO_STATUS_SUCCESS && (st = macko_mat_upload(handle, B)) != MACKO_STATUS_SUCCESS)
                fn = "macko_mat_upload";
            else if (st == MACKO_STATUS_SUCCESS &&
                     (st = macko_analysis(handle, MACKO_OPERATION_NON_TRANSPOSE, B)) != MACKO_STATUS_SUCCESS)
                fn = "macko_analysis";
            else if (st == MACKO_STATUS_SUCCESS && (st = macko_mat_release_host(B)) != MACKO_STATUS_SUCCESS)
                fn = "macko_mat_release_host";
            else if (st == MACKO_STATUS_SUCCESS && cfg != nullptr && (st = force_plan(*cfg, handle, B)) !=
                                                                         MACKO_STATUS_SUCCESS)
                fn = "macko_plan_override";
            if (st != MACKO_STATUS_SUCCESS) {
                const std::string e = macko_error(fn, st);
                macko_mat_destroy(B);
                (void)cudaGetLastError();
                if (st == MACKO_STATUS_ALLOC_FAILED)
                    return "macko copy: " + e;
                macko_fail = e;
                return "";
            }
            macko.push_back(B);
        }
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    return "";
}

bool setup_rotation(Pool &pool, Rotation &rot, size_t l2, size_t x_bytes, bool with_sparse, bool with_macko,
                    size_t sp_per_copy, std::string &why, std::string &macko_fail)
{
    const int64_t xb = (int64_t)x_bytes;
    const int64_t kb = copies_for((int64_t)pool.dense_bytes + xb, l2);
    const int64_t csr_bytes = (int64_t)(pool.rp_bytes + pool.col_bytes + pool.val_bytes);
    const int64_t ks = with_sparse ? copies_for(csr_bytes + xb, l2) : 0;
    const int64_t km = with_macko ? copies_for(pool.storage + xb, l2) : 0;
    if (std::max(kb, std::max(ks, km)) > kMaxCopies) {
        why = strf("K = %" PRId64 "/%" PRId64 "/%" PRId64 " (cuBLAS/cuSPARSE/macko) is more than %d copies", kb, ks, km,
                   kMaxCopies);
        return false;
    }
    const int64_t kx = std::max(kb, std::max(ks, km));
    const size_t x_stride = round_up(x_bytes, kCopyAlign);
    const size_t need = pool.need(kb, ks, km) + (size_t)(kx - 1) * x_stride + kAllocSlack +
                        (size_t)std::max<int64_t>(ks - 1, 0) * sp_per_copy;
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (need + kSpareBytes > free_b) {
        why = strf("the copies need %.2f GB, %.2f GB free (1 GiB kept spare)", (double)need / 1e9,
                   (double)free_b / 1e9);
        return false;
    }
    why = pool.grow(kb, ks, km, macko_fail);
    if (!why.empty())
        return false;
    rot.slab = DevBuf::try_alloc((size_t)(kx - 1) * x_stride);
    if (!rot.slab) {
        why = strf("cudaMalloc of the x/B copies (%.3f GB) failed", (double)((size_t)(kx - 1) * x_stride) / 1e9);
        return false;
    }
    rot.x.resize(1);
    for (int64_t k = 1; k < kx; ++k) {
        void *dst = rot.slab->as<unsigned char>() + (size_t)(k - 1) * x_stride;
        CUDA_OK(cudaMemcpyAsync(dst, rot.x[0], x_bytes, cudaMemcpyDeviceToDevice, pool.stream));
        rot.x.push_back(dst);
    }
    CUDA_OK(cudaStreamSynchronize(pool.stream));
    rot.on = true;
    rot.kb = (int)kb;
    rot.ks = (int)ks;
    rot.km = macko_fail.empty() ? (int)km : 0;
    return true;
}
