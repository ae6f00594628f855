/* The device walk shared by the SpMV (kernels/spmv.cu) and SpMM (kernels/spmm.cu) kernels: their one parameter
 * block, the alpha/beta prologue with its C = beta*C shortcut, the warp-to-row mapping and the row walk around the
 * chunk decode of macko_decode.cuh. A kernel is a short composition of these: read the scalars, find the warp's first
 * row, start the cursor and the first chunk's loads, walk the rows with its own per-chunk accumulation and per-row
 * write. The grids are sized by the launch plan (src/plan.c). Device code and one host helper (make_params);
 * header-only, inlined into the kernels. */
#ifndef MACKO_WALK_CUH
#define MACKO_WALK_CUH

#include "macko_kernels.h"
#include "macko_decode.cuh"

namespace macko_walk {

using namespace macko_decode;

/* The parameters of every kernel: M, and B / C as macko_kargs describes them (SpMV: x = b, incx = incb, y = c, incy
 * = incc, n = 1). RP: the row_ptr element type in memory; X, Y: the element types of B and C (M's type T unless the
 * call mixes types); Acc: the accumulation type, which alpha and beta have (Ty<T>::Acc: fp32, fp64 for fp64). */
template <typename T, typename RP, typename X = T, typename Y = X> struct Params {
    using Acc = typename Ty<T>::Acc;
    int64_t rows, cols;
    const T *values;
    const uint32_t *dwords; /* the delta nibbles, 8 per word */
    const RP *row_ptr;
    const X *b;
    int64_t incb, ldb;
    Y *c;
    int64_t incc, ldc;
    int n; /* columns of this launch, 1..NT */
    const Acc *alpha_dev, *beta_dev;
    Acc alpha, beta;
};

/* The scalars of a launch in the accumulation type's fields of macko_kargs. */
inline void kargs_scalars(const macko_kargs *a, const float **ad, const float **bd, float *av, float *bv)
{
    *ad = a->alpha_dev;
    *bd = a->beta_dev;
    *av = a->alpha;
    *bv = a->beta;
}
inline void kargs_scalars(const macko_kargs *a, const double **ad, const double **bd, double *av, double *bv)
{
    *ad = a->alpha_dev_d;
    *bd = a->beta_dev_d;
    *av = a->alpha_d;
    *bv = a->beta_d;
}

template <typename T, typename RP, typename X = T, typename Y = X>
inline Params<T, RP, X, Y> make_params(const macko_kargs *a)
{
    Params<T, RP, X, Y> p;
    p.rows = a->rows;
    p.cols = a->cols;
    p.values = static_cast<const T *>(a->values);
    p.dwords = reinterpret_cast<const uint32_t *>(a->deltas);
    p.row_ptr = static_cast<const RP *>(a->row_ptr);
    p.b = static_cast<const X *>(a->b);
    p.incb = a->incb;
    p.ldb = a->ldb;
    p.c = static_cast<Y *>(a->c);
    p.incc = a->incc;
    p.ldc = a->ldc;
    p.n = (int)a->n;
    kargs_scalars(a, &p.alpha_dev, &p.beta_dev, &p.alpha, &p.beta);
    return p;
}

/* C = beta*C (or 0) when M and B are not to be read: alpha == 0 or no columns. ONE: the launch has one column
 * (SpMV), known at compile time. */
template <bool ONE, typename T, typename RP, typename X, typename Y, typename A>
__device__ void scale_only(const Params<T, RP, X, Y> &p, A beta)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int n = ONE ? 1 : p.n;
    for (int j = 0; j < n; j++)
        for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += stride) {
            Y *cp = p.c + r * p.incc + (int64_t)j * p.ldc;
            Ty<Y>::y_put(cp, beta != (A)0 ? beta * (A)Ty<Y>::y_at(cp) : (A)0);
        }
}

/* The prologue of every kernel: alpha and beta (through the device pointers in POINTER_MODE_DEVICE); when M and B
 * are not to be read, C is scaled instead and the result is true (the kernel returns). */
template <bool ONE, typename T, typename RP, typename X, typename Y, typename A>
__device__ __forceinline__ bool scaled_only(const Params<T, RP, X, Y> &p, A &alpha, A &beta)
{
    alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    if (alpha == (A)0 || p.cols == 0) {
        scale_only<ONE>(p, beta);
        return true;
    }
    return false;
}

/* One warp per row, persistent grid of WPB-warp blocks: this thread's lane, its warp's first row, the warps of the
 * launch (the row stride). */
template <int WPB, typename IDX> __device__ __forceinline__ void warp_rows(int &lane, IDX &first, IDX &nwarps)
{
    lane = (int)(threadIdx.x % kWarp);
    first = (IDX)(blockIdx.x * WPB + threadIdx.x / kWarp);
    nwarps = (IDX)(gridDim.x * WPB);
}

/* A warp's walk over its chunks: rows row, row + nwarps, ...; every row has at least one chunk (an empty row one
 * with nothing in it), so that every output element is written. The bounds of the next row are loaded one row
 * ahead. P: the kernel's parameters (Params). */
template <typename P, typename IDX> struct Cursor {
    IDX row, b, e, cb, nb, ne;
    __device__ __forceinline__ void start(const P &p, IDX first, IDX nwarps)
    {
        row = first;
        b = (IDX)__ldg(p.row_ptr + row);
        e = (IDX)__ldg(p.row_ptr + row + 1);
        cb = b & ~(IDX)7;
        fetch_next(p, nwarps);
    }
    __device__ __forceinline__ void fetch_next(const P &p, IDX nwarps)
    {
        const IDX nrow = row + nwarps;
        nb = ne = 0;
        if (nrow < (IDX)p.rows) {
            nb = (IDX)__ldg(p.row_ptr + nrow);
            ne = (IDX)__ldg(p.row_ptr + nrow + 1);
        }
    }
    __device__ __forceinline__ bool last_of_row() const { return cb + kChunk >= e; }
    /* Moves to the next chunk; returns true when that starts a new row (row >= rows: done). */
    __device__ __forceinline__ bool advance(const P &p, IDX nwarps)
    {
        if (!last_of_row()) {
            cb += kChunk;
            return false;
        }
        row += nwarps;
        if (row < (IDX)p.rows) {
            b = nb;
            e = ne;
            cb = b & ~(IDX)7;
            fetch_next(p, nwarps);
        }
        return true;
    }
};


/* A warp's walk over its rows from the cursor's: two register buffers alternate, the loads of the chunk after the
 * current one (in this row, or the next row's first) issued before the current one is consumed, so that no copies
 * are needed. CHUNK(cur, cb, b, e, carry) accumulates the chunk at cb of the row [b, e) (carry: delta sum of the
 * row's entries before cb); at a row's end FINISH(row) writes it, and BEGIN() prepares the next row (not after the
 * last). buf0: the cursor's first chunk, already loaded. */
template <typename T, typename P, typename IDX, typename CHUNK, typename FINISH, typename BEGIN>
__device__ __forceinline__ void walk_rows(const P &p, Cursor<P, IDX> &c, typename Ty<T>::Group &buf0, IDX nwarps,
                                          int lane, CHUNK &&chunk, FINISH &&finish, BEGIN &&begin)
{
    using G = typename Ty<T>::Group;
    const IDX lane_off = (IDX)(lane * kLaneEntries);
    IDX carry = 0;
    auto step = [&](G &cur, G &nxt) -> bool {
        const bool same_row = !c.last_of_row();
        const IDX ncb = same_row ? c.cb + kChunk : (c.nb & ~(IDX)7);
        const IDX nend = same_row ? c.e : (c.row + nwarps < (IDX)p.rows ? c.ne : (IDX)0);
        nxt = load_group<T, IDX>(p.values, p.dwords, ncb + lane_off, nend);
        chunk(cur, c.cb, c.b, c.e, carry);
        const IDX row = c.row;
        if (c.advance(p, nwarps)) {
            finish(row);
            if (c.row >= (IDX)p.rows)
                return false;
            begin();
            carry = 0;
        }
        return true;
    };
    G buf1;
    while (step(buf0, buf1) && step(buf1, buf0)) {
    }
}

} // namespace macko_walk

#endif
