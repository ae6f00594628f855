/*
 * rotate.h -- --flush rotate: each method's launches cycle through K copies of every input it reads, K per method
 * and row the smallest count whose copies together are >= 4 x L2 (at least 2), so that no launch finds its inputs
 * in L2 and no flush leaves dirty lines behind. Copy 0 is the original, the one the checks use.
 */
#ifndef MACKO_BENCH_ROTATE_H
#define MACKO_BENCH_ROTATE_H

#include "common.h"

#include "macko.h"
#include "options.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/* Room counted for each extra cudaMalloc when estimating whether the copies fit (allocation granularity). */
static const size_t kAllocSlack = size_t(2) << 20;
/* Free device memory left untouched by the copies. */
static const size_t kSpareBytes = size_t(1) << 30;
/* Copies inside one allocation start this many bytes apart at least (cudaMalloc's own alignment). */
static const size_t kCopyAlign = 256;

/* K for one method: the smallest count with K x bytes >= kRotateL2Mult x L2, at least 2. */
int64_t copies_for(int64_t bytes_per_launch, size_t l2);

/* The matrix inputs of one (shape, density) and, for --flush rotate, their copies: index 0 is the original (the one
 * the checks use), the others are made on demand by grow() and kept for every n of the case (K only shrinks as n
 * grows, so n = 1 usually makes all of them). */
struct Pool {
    struct Csr {
        const void *rp, *col, *val;
    };
    macko_handle_t handle = nullptr;
    cudaStream_t stream = nullptr;
    const Config *cfg = nullptr; /* its forced plan choices go into the copies too */
    macko_datatype_t type = MACKO_R_16F;
    int64_t rows = 0, cols = 0, nnz = 0, storage = 0;
    size_t dense_bytes = 0, rp_bytes = 0, col_bytes = 0, val_bytes = 0;
    std::vector<const void *> dense;
    std::vector<Csr> csr;
    std::vector<macko_mat_t> macko; /* [0] is the case's matrix (not owned), the others are destroyed here */
    std::vector<std::unique_ptr<DevBuf>> owned;

    Pool() = default;
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;
    ~Pool();
    /* Device bytes that grow(kb, ks, km) would allocate, counted generously. */
    size_t need(int64_t kb, int64_t ks, int64_t km) const;
    /* Makes copies until there are kb dense, ks CSR and km macko matrices (km = 0: no macko copies). Returns "" or,
     * when device memory ran out, why; a macko call failing for another reason sets macko_fail and makes no more
     * macko copies (the baselines' copies are still made). */
    std::string grow(int64_t kb, int64_t ks, int64_t km, std::string &macko_fail);
};

/* One row's rotation: K per method family (0 = that family uses the write flush / is not timed) and the copies of x
 * (n = 1) or B (n > 1), index 0 the original. */
struct Rotation {
    bool on = false;
    int kb = 0, ks = 0, km = 0; /* cuBLAS, cuSPARSE, macko */
    std::vector<const void *> x;
    std::unique_ptr<DevBuf> slab;
    explicit Rotation(const void *x0) : x{x0} {}
};

/* Plans the row's copies: K per family from the bytes one launch reads (x_bytes = x or B; with_sparse / with_macko
 * false: that family gets no copies), checks that the copies not made yet (pool, x/B copies and sp_per_copy bytes
 * of cuSPARSE work buffers per extra CSR copy) fit in the free device memory less kSpareBytes, and makes them. True:
 * rot.on, rot.k*, rot.x set (the methods still make their own per-copy state). False: the row uses the write flush;
 * why says why. macko_fail: see Pool::grow. */
bool setup_rotation(Pool &pool, Rotation &rot, size_t l2, size_t x_bytes, bool with_sparse, bool with_macko,
                    size_t sp_per_copy, std::string &why, std::string &macko_fail);

/* "fn: STATUS_NAME (last error message)" of a failed macko call. */
std::string macko_error(const char *fn, macko_status_t st);

#endif
