/* Small-n SpMM on the MACKO format: C = alpha*M*B + beta*C for n columns of B and C (macko_spmm_args in
 * macko_kernels.h). The SpMV kernel (kernels/spmv.cu) with every entry of M applied to a tile of NT columns.
 *
 * The walk over M is the SpMV one (macko_decode.cuh): one warp per row, a persistent grid striding over the rows,
 * 256 entries per warp step, 8 per lane, the next chunk loaded while the current one is decoded. Per entry the lane
 * needs the NT values B(col, j0..j0+NT-1), which in column-major B lie ldb apart. The ways to get them:
 *
 * - STAGED: every block first copies the tile of B into shared memory transposed, one row of NT values per column
 *   of M (fp16 NT = 8: 16 bytes), so an entry costs one vector load (two or four when a row is wider than 16
 *   bytes: the rows are split into 16-byte planes) instead of NT scattered loads. One 1024-thread block per SM,
 *   since the tile (cols x NT values) fills most of the 227 KB. A padding or masked entry reads a zero row, so Inf or
 *   NaN in B at a column the row does not store never meets its zero value. The layout may be swizzled so that the
 *   8 lanes of a quarter warp, whose columns lie about 8/density apart, fall into different bank groups.
 * - MMA: the same staging with tensor-core accumulation (mma.m16n8k16, B fragments by ldmatrix.trans, rows whose
 *   result is NaN recomputed on the CUDA cores). Correct and tested, but slower on the H100 (bench/NOTES.md), so
 *   only a forced path for experiments; AUTO never takes it.
 * - GLOBAL: NT predicated loads per entry through the read-only cache; any shape, any stride, 64-bit indices.
 *
 * At a row's end the NT per-lane partial sums are reduced by a butterfly that halves the vector at each of the
 * first log2(NT) levels (NT - 1 shuffles instead of 5*NT), after which lane L holds column L / (32/NT). Fixed order
 * everywhere, fp32 accumulation, no atomics: bitwise reproducible. Columns beyond n in the last tile are zeros in
 * shared memory or unloaded in the global path, and never written. No allocation: graph-capturable.
 */
#include "macko_kernels.h"
#include "macko_decode.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

using namespace macko_decode;

constexpr int kStagedThreads = 1024; /* one block per SM: the staged tile fills the shared memory */
constexpr int kGlobalThreads = 256;
/* Blocks per SM the global path's grid is sized for (64 registers with 32-bit indices, 128 with 64-bit ones). */
template <typename IDX> constexpr int global_blocks_per_sm() { return sizeof(IDX) == 4 ? 4 : 2; }
/* Widest staged tile: rows of at most 32 bytes (two 16-byte planes) keep the staged kernel within 64 registers. */
template <typename T> constexpr int max_staged_tile() { return 32 / (int)sizeof(T); }
static_assert(kStagedThreads % kWarp == 0 && kGlobalThreads % kWarp == 0, "whole warps per block");

template <typename T, typename RP> struct MmParams {
    int64_t rows, cols;
    const T *values;
    const uint32_t *dwords; /* the delta nibbles, 8 per word */
    const RP *row_ptr;
    const T *b;
    int64_t incb, ldb;
    T *c;
    int64_t incc, ldc;
    int n; /* columns of this tile, 1..NT */
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
    /* staged path */
    int swz;               /* spacing shift s of the swizzled layout (0: plain) */
    uint32_t slots;        /* rows per plane before the zero row (cols rounded up to 8 << s) */
    uint32_t plane_stride; /* bytes */
};

/* ---- a staged row: NT values of type T, split into 16-byte planes when wider */
template <int BYTES> struct VecOf;
template <> struct VecOf<4> {
    using type = uint32_t;
    static __device__ __forceinline__ void get(const type &v, uint32_t *w) { w[0] = v; }
    static __device__ __forceinline__ type make(const uint32_t *w) { return w[0]; }
};
template <> struct VecOf<8> {
    using type = uint2;
    static __device__ __forceinline__ void get(const type &v, uint32_t *w) { w[0] = v.x; w[1] = v.y; }
    static __device__ __forceinline__ type make(const uint32_t *w) { return make_uint2(w[0], w[1]); }
};
template <> struct VecOf<16> {
    using type = uint4;
    static __device__ __forceinline__ void get(const type &v, uint32_t *w)
    {
        w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
    }
    static __device__ __forceinline__ type make(const uint32_t *w) { return make_uint4(w[0], w[1], w[2], w[3]); }
};

template <typename T, int NT> struct Rows {
    static constexpr int kBytes = NT * (int)sizeof(T);
    static constexpr int kPlaneBytes = kBytes < 16 ? kBytes : 16;
    static constexpr int kPlanes = kBytes / kPlaneBytes;
    static constexpr int kPlaneWords = kPlaneBytes / 4;
    static constexpr int kWords = kBytes / 4;
    static_assert(kBytes >= 4 && kBytes % kPlaneBytes == 0, "a row is 4, 8 or 16 bytes, or whole 16-byte planes");
    using V = VecOf<kPlaneBytes>;
    static __device__ __forceinline__ void load(const char *smem, uint32_t stride, uint32_t q, uint32_t *w)
    {
#pragma unroll
        for (int p = 0; p < kPlanes; p++)
            V::get(reinterpret_cast<const typename V::type *>(smem + p * stride)[q], w + p * kPlaneWords);
    }
    static __device__ __forceinline__ void store(char *smem, uint32_t stride, uint32_t q, const uint32_t *w)
    {
#pragma unroll
        for (int p = 0; p < kPlanes; p++)
            reinterpret_cast<typename V::type *>(smem + p * stride)[q] = V::make(w + p * kPlaneWords);
    }
};

/* Shared-memory bytes of the staged tile (host side too). */
__host__ __device__ inline uint32_t staged_slots(int64_t cols, int s)
{
    return (uint32_t)((cols + (8 << s) - 1) & ~(int64_t)((8 << s) - 1));
}

/* Swizzled layout with spacing shift s: column c = h*2^s + r (r < 2^s) sits in row r*P + h, P = slots >> s (a
 * multiple of 8), so its bank group (16-byte rows) is h & 7 = (c >> s) & 7: lanes whose columns are about 2^s apart
 * hit different groups. A bijection on [0, slots); s == 0 is not used (plain layout: row = column). Three
 * instructions per entry. */
__device__ __forceinline__ uint32_t swz_slot(uint32_t c, uint32_t lo, uint32_t P, int s)
{
    return (c & lo) * P + (c >> s);
}
/* The staging visits the rows in the order k = (h >> 3, r, h & 7): 8 consecutive threads write 8 consecutive rows
 * (r*P + h, no bank conflict) and a warp reads B at 8 groups of 4 consecutive columns (few sectors). Returns the
 * column; *q the row. */
__device__ __forceinline__ uint32_t swz_stage(uint32_t k, uint32_t lo, uint32_t P, int s, uint32_t *q)
{
    const uint32_t h = ((k >> (s + 3)) << 3) | (k & 7u), r = (k >> 3) & lo;
    *q = r * P + h;
    return (h << s) | r;
}

/* C = beta*C (or 0) when M and B are not to be read: alpha == 0 or no columns. */
template <typename T, typename RP> __device__ void mm_scale_only(const MmParams<T, RP> &p, float beta)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int j = 0; j < p.n; j++)
        for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += stride) {
            T *cp = p.c + r * p.incc + (int64_t)j * p.ldc;
            Ty<T>::y_put(cp, beta != 0.0f ? beta * Ty<T>::y_at(cp) : 0.0f);
        }
}

/* Sum of acc over the warp for every column, scattered: afterwards lane L holds column L / (32/NT). The first
 * log2(NT) butterfly levels halve the vector (each lane keeps the half its lane bit selects and adds the partner's
 * copy of it), the remaining levels add whole values. */
template <int NT> __device__ __forceinline__ float reduce_scatter(float (&acc)[NT], int lane)
{
#pragma unroll
    for (int lvl = 0; (1 << lvl) < NT; lvl++) {
        const int m = NT >> lvl, o = kWarp / 2 >> lvl;
        const bool upper = (lane & o) != 0;
#pragma unroll
        for (int k = 0; k < m / 2; k++) {
            const float send = upper ? acc[k] : acc[k + m / 2];
            const float keep = upper ? acc[k + m / 2] : acc[k];
            acc[k] = keep + __shfl_xor_sync(kFull, send, o);
        }
    }
    float v = acc[0];
#pragma unroll
    for (int o = kWarp / NT / 2; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFull, v, o);
    return v;
}

/* The lane that writes column j of a row, and which j. */
template <int NT> __device__ __forceinline__ bool writer_lane(int lane) { return (lane & (kWarp / NT - 1)) == 0; }
template <int NT> __device__ __forceinline__ int lane_column(int lane) { return lane / (kWarp / NT); }

/* The walk over the rows, shared by every path: CHUNK(cur, cb, b, e, carry) accumulates one chunk of the row [b, e),
 * FINISH(row, b, e) reduces, writes and resets when the row is done (c.row is then the next row, maybe >= rows). */
template <typename T, typename RP, typename IDX, typename CHUNK, typename FINISH>
__device__ __forceinline__ void walk_rows(const MmParams<T, RP> &p, Cursor<MmParams<T, RP>, IDX> &c,
                                          typename Ty<T>::Group &buf0, IDX nwarps, int lane, CHUNK &&chunk,
                                          FINISH &&finish)
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
        const IDX row = c.row, rb = c.b, re = c.e;
        if (c.advance(p, nwarps)) {
            finish(row, rb, re);
            if (c.row >= (IDX)p.rows)
                return false;
            carry = 0;
        }
        return true;
    };
    G buf1;
    while (step(buf0, buf1) && step(buf1, buf0)) {
    }
}

/* CUDA-core accumulation: per lane NT partial sums (kept by the caller as a plain array, so that they stay in
 * registers), reduced by reduce_scatter at the row's end. */
template <int NT> __device__ __forceinline__ void zero_acc(float (&acc)[NT])
{
#pragma unroll
    for (int j = 0; j < NT; j++)
        acc[j] = 0.0f;
}
template <typename T, typename RP, int NT> struct LaneAcc {
    float cold; /* C(row, lane_column) before the call, when beta != 0 */
    int jl;
    bool writes;
    __device__ __forceinline__ void init(const MmParams<T, RP> &p, int lane, int64_t row, float beta)
    {
        jl = lane_column<NT>(lane);
        writes = writer_lane<NT>(lane) && jl < p.n;
        prefetch(p, row, beta);
    }
    __device__ __forceinline__ T *at(const MmParams<T, RP> &p, int64_t row) const
    {
        return p.c + row * p.incc + (int64_t)jl * p.ldc;
    }
    __device__ __forceinline__ void prefetch(const MmParams<T, RP> &p, int64_t row, float beta)
    {
        cold = (beta != 0.0f && writes && row < p.rows) ? Ty<T>::y_at(at(p, row)) : 0.0f;
    }
    __device__ __forceinline__ void finish(const MmParams<T, RP> &p, int64_t row, float alpha, float beta, int lane,
                                           float (&acc)[NT])
    {
        const float sum = reduce_scatter<NT>(acc, lane);
        if (writes) {
            float r = alpha * sum;
            if (beta != 0.0f)
                r = fmaf(beta, cold, r);
            Ty<T>::y_put(at(p, row), r);
        }
        zero_acc<NT>(acc);
    }
};

/* ---- STAGED: B's tile in shared memory (row q of every plane: B(col(q), j0..j0+NT-1), zeros past n and cols;
 * row `slots` all zeros) */
template <typename T, int NT, bool SWZ, typename RP>
__device__ __forceinline__ void stage_tile(const MmParams<T, RP> &p, char *smem, uint32_t lo, uint32_t blk, int s,
                                           int nthreads)
{
    using R = Rows<T, NT>;
    /* U rows per thread per round, all their loads issued before the first store: ~U times fewer dependent L2 round
     * trips before the first FMA (every block of the launch stages at the same moment). U * NT <= 16 registers (32
     * spilled under the 64-register cap). */
    constexpr int U = NT >= 16 ? 1 : 16 / NT;
    for (uint32_t k0 = threadIdx.x; k0 <= p.slots; k0 += (uint32_t)(U * nthreads)) {
        uint32_t bits[U][NT], qs[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t k = k0 + (uint32_t)(u * nthreads);
            uint32_t q = k;
            const uint32_t col = k >= p.slots ? 0xFFFFFFFFu : SWZ ? swz_stage(k, lo, blk, s, &q) : k;
            qs[u] = q;
#pragma unroll
            for (int j = 0; j < NT; j++)
                bits[u][j] = (j < p.n && (int64_t)col < p.cols)
                                 ? Ty<T>::x_bits(p.b + (int64_t)col * p.incb + (int64_t)j * p.ldb)
                                 : 0u;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (k0 + (uint32_t)(u * nthreads) > p.slots)
                break;
            uint32_t w[R::kWords];
#pragma unroll
            for (int k = 0; k < R::kWords; k++)
                w[k] = Ty<T>::kPerWord == 2 ? (bits[u][2 * k] | (bits[u][2 * k + 1] << 16)) : bits[u][k];
            R::store(smem, p.plane_stride, qs[u], w);
        }
    }
}

/* One chunk on the CUDA cores: per entry one row of NT values from shared memory, NT fused multiply-adds. */
template <typename T, int NT, bool SWZ>
__device__ __forceinline__ void staged_chunk_fma(typename Ty<T>::Group &cur, int cb, int b, int e, int lane,
                                                 int &carry, float (&acc)[NT], const char *smem, uint32_t stride,
                                                 uint32_t zero_row, uint32_t lo, uint32_t blk, int s)
{
    using R = Rows<T, NT>;
    const ChunkCols<int> cc = decode_chunk<T, int>(cur, cb, b, e, lane, carry);
    const uint32_t base = (uint32_t)cc.base;
#pragma unroll
    for (int i = 0; i < kLaneEntries; i++) {
        const uint32_t col = base + cc.off(i);
        const uint32_t q = Ty<T>::nonzero(cur, i) ? (SWZ ? swz_slot(col, lo, blk, s) : col) : zero_row;
        uint32_t w[R::kWords];
        R::load(smem, stride, q, w);
        const float a = Ty<T>::value(cur, i);
#pragma unroll
        for (int j = 0; j < NT; j++)
            acc[j] = fmaf(a, Ty<T>::packed_value(w, j), acc[j]);
    }
}

/* ---- tensor-core accumulation (fp16, tiles of 8 columns: 16-byte rows)
 *
 * One mma.m16n8k16 multiplies a 16x16 A fragment by a 16x8 B fragment. k runs over 16 entries: in round i of a
 * chunk, lanes 0..15 (first mma) and 16..31 (second) each contribute their entry i; ldmatrix.x4.trans with every
 * lane pointing at its entry's staged row delivers exactly the B fragments (rows k, columns n). Each entry's value
 * goes to one A element in rows 0..3 (entry of lane k -> row (k & 1) + 2 (k >> 3), column k), so that every one of
 * threads 0..15 holds one value: one shuffle per word (two entries) and one byte permute per register. The four
 * partial rows are summed at the row's end. A zero of A meets every B value of its column, and 0 * Inf = NaN: a row
 * whose result holds a NaN is therefore recomputed on the CUDA cores (exact Inf/NaN semantics; rare: it needs
 * Inf/NaN in B or A). */
__device__ __forceinline__ void ldsm_x4_trans(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}
__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a2, uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
}

template <int NT> struct MmaAcc {
    static constexpr int kTiles = NT / 8;
    int src;                /* the lane whose entry this thread places in A (first mma; +16 for the second) */
    uint32_t sel0[2], sel2[2]; /* byte permutes placing entry i + r of the shuffled word into A registers 0 and 2 */
    __device__ __forceinline__ void init(int lane)
    {
        const int g = lane >> 2, cq = lane & 3, e = g & 1, h = g >> 1;
        const bool holder = lane < 16;
        src = holder ? 8 * h + 2 * cq + e : lane;
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const uint32_t place = e ? (r ? 0x3244u : 0x1044u) : (r ? 0x4432u : 0x4410u);
            sel0[r] = holder && h == 0 ? place : 0x4444u;
            sel2[r] = holder && h == 1 ? place : 0x4444u;
        }
    }
};

template <bool SWZ, int NT>
__device__ __forceinline__ void staged_chunk_mma(typename Ty<__half>::Group &cur, int cb, int b, int e, int lane,
                                                 int &carry, const MmaAcc<NT> &m, float (&d)[NT / 8][4],
                                                 uint32_t smem_u32, uint32_t stride,
                                                 uint32_t zero_row, uint32_t lo, uint32_t blk, int s)
{
    using H = Ty<__half>;
    const ChunkCols<int> cc = decode_chunk<__half, int>(cur, cb, b, e, lane, carry);
    const uint32_t base = (uint32_t)cc.base;
#pragma unroll
    for (int i = 0; i < kLaneEntries; i += 2) {
        const uint32_t w = H::word(cur, i >> 1);
        const uint32_t w1 = __shfl_sync(kFull, w, m.src), w2 = __shfl_sync(kFull, w, m.src + 16);
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int ie = i + r;
            const uint32_t col = base + cc.off(ie);
            const uint32_t q = H::nonzero(cur, ie) ? (SWZ ? swz_slot(col, lo, blk, s) : col) : zero_row;
            const uint32_t addr = smem_u32 + q * 16u;
            const uint32_t a10 = __byte_perm(w1, 0u, m.sel0[r]), a12 = __byte_perm(w1, 0u, m.sel2[r]);
            const uint32_t a20 = __byte_perm(w2, 0u, m.sel0[r]), a22 = __byte_perm(w2, 0u, m.sel2[r]);
#pragma unroll
            for (int t = 0; t < MmaAcc<NT>::kTiles; t++) {
                uint32_t b0, b1, b2, b3;
                ldsm_x4_trans(addr + (uint32_t)t * stride, b0, b1, b2, b3);
                mma_16816(d[t], a10, a12, b0, b1);
                mma_16816(d[t], a20, a22, b2, b3);
            }
        }
    }
}

/* Staged kernel. MMA: tensor-core accumulation (fp16 only, NT = 8; the code takes 16 too, which does not fit in
 * 64 registers with its CUDA-core fallback), else CUDA cores. */
template <typename T, int NT, bool SWZ, bool MMA, typename RP>
__global__ void __launch_bounds__(kStagedThreads, 1) mm_staged_kernel(const MmParams<T, RP> p)
{
    using G = typename Ty<T>::Group;
    extern __shared__ uint4 smem_u4[];
    char *smem = reinterpret_cast<char *>(smem_u4);
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    if (alpha == 0.0f || p.cols == 0) {
        mm_scale_only(p, beta);
        return;
    }
    const int s = SWZ ? p.swz : 0;
    const uint32_t lo = (1u << s) - 1u, blk = SWZ ? p.slots >> s : 0u; /* blk: P of swz_slot */
    const int lane = (int)(threadIdx.x % kWarp);
    const int first = (int)(blockIdx.x * (kStagedThreads / kWarp) + threadIdx.x / kWarp);
    const int nwarps = (int)(gridDim.x * (kStagedThreads / kWarp));
    const bool active = first < (int)p.rows;

    /* The first chunk's loads go out before the staging, so that DRAM is busy meanwhile. */
    Cursor<MmParams<T, RP>, int> c;
    G buf0 = Ty<T>::zero();
    if (active) {
        c.start(p, first, nwarps);
        buf0 = load_group<T, int>(p.values, p.dwords, c.cb + lane * kLaneEntries, c.e);
    }
    stage_tile<T, NT, SWZ>(p, smem, lo, blk, s, kStagedThreads);
    __syncthreads();
    if (!active)
        return;

    const uint32_t zero_row = p.slots, stride = p.plane_stride;
    if constexpr (!MMA) {
        LaneAcc<T, RP, NT> la;
        la.init(p, lane, c.row, beta);
        float acc[NT];
        zero_acc<NT>(acc);
        walk_rows<T, RP, int>(
            p, c, buf0, nwarps, lane,
            [&](G &cur, int cb, int b, int e, int &carry) {
                staged_chunk_fma<T, NT, SWZ>(cur, cb, b, e, lane, carry, acc, smem, stride, zero_row, lo, blk, s);
            },
            [&](int row, int, int) {
                la.finish(p, row, alpha, beta, lane, acc);
                la.prefetch(p, c.row, beta);
            });
    } else {
        static_assert(sizeof(T) == 2 && (NT == 8 || NT == 16), "tensor-core path: fp16, 16-byte planes");
        constexpr int kTiles = NT / 8;
        const uint32_t smem_u32 = (uint32_t)__cvta_generic_to_shared(smem);
        MmaAcc<NT> m;
        m.init(lane);
        float d[kTiles][4], cold[kTiles][2];
        auto reset = [&]() {
#pragma unroll
            for (int t = 0; t < kTiles; t++)
#pragma unroll
                for (int k = 0; k < 4; k++)
                    d[t][k] = 0.0f;
        };
        reset();
        const bool writes = lane < 4; /* lane w writes columns 2w, 2w + 1 of every 8-column tile */
        auto prefetch = [&](int64_t row) {
#pragma unroll
            for (int t = 0; t < kTiles; t++)
#pragma unroll
                for (int k = 0; k < 2; k++) {
                    const int j = 8 * t + 2 * lane + k;
                    cold[t][k] = (beta != 0.0f && writes && j < p.n && row < p.rows)
                                       ? Ty<T>::y_at(p.c + row * p.incc + (int64_t)j * p.ldc)
                                       : 0.0f;
                }
        };
        prefetch(c.row);
        walk_rows<T, RP, int>(
            p, c, buf0, nwarps, lane,
            [&](G &cur, int cb, int b, int e, int &carry) {
                staged_chunk_mma<SWZ, NT>(cur, cb, b, e, lane, carry, m, d, smem_u32, stride, zero_row, lo, blk, s);
            },
            [&](int row, int rb, int re) {
                /* rows 0..3 of D hold the partial sums: add them (lanes 4 and 8 apart) */
                float v[kTiles][2];
                bool bad = false;
#pragma unroll
                for (int t = 0; t < kTiles; t++)
#pragma unroll
                    for (int k = 0; k < 2; k++) {
                        float x = d[t][k];
                        x += __shfl_xor_sync(kFull, x, 4);
                        x += __shfl_xor_sync(kFull, x, 8);
                        v[t][k] = x;
                        bad |= writes && 8 * t + 2 * lane + k < p.n && isnan(x);
                    }
                reset();
                if (__any_sync(kFull, bad)) {
                    /* Exact CUDA-core recomputation of this row. */
                    LaneAcc<T, RP, NT> la;
                    la.init(p, lane, row, beta);
                    float acc[NT];
                    zero_acc<NT>(acc);
                    int carry2 = 0;
                    for (int cb = rb & ~7; cb < re; cb += kChunk) {
                        G g = load_group<T, int>(p.values, p.dwords, cb + lane * kLaneEntries, re);
                        staged_chunk_fma<T, NT, SWZ>(g, cb, rb, re, lane, carry2, acc, smem, stride, zero_row, lo,
                                                     blk, s);
                    }
                    la.finish(p, row, alpha, beta, lane, acc);
                } else if (writes) {
#pragma unroll
                    for (int t = 0; t < kTiles; t++)
#pragma unroll
                        for (int k = 0; k < 2; k++) {
                            const int j = 8 * t + 2 * lane + k;
                            if (j < p.n) {
                                float r = alpha * v[t][k];
                                if (beta != 0.0f)
                                    r = fmaf(beta, cold[t][k], r);
                                Ty<T>::y_put(p.c + (int64_t)row * p.incc + (int64_t)j * p.ldc, r);
                            }
                        }
                }
                prefetch(c.row);
            });
    }
}

/* ---- GLOBAL: B gathered through the read-only cache. IDX arithmetic covers B's offsets too (the launcher checks
 * that they fit). */
template <typename T, int NT, typename RP, typename IDX>
__global__ void __launch_bounds__(kGlobalThreads, (global_blocks_per_sm<IDX>()))
    mm_global_kernel(const MmParams<T, RP> p)
{
    using G = typename Ty<T>::Group;
    const float alpha = p.alpha_dev != nullptr ? *p.alpha_dev : p.alpha;
    const float beta = p.beta_dev != nullptr ? *p.beta_dev : p.beta;
    if (alpha == 0.0f || p.cols == 0) {
        mm_scale_only(p, beta);
        return;
    }
    const int lane = (int)(threadIdx.x % kWarp);
    const IDX first = (IDX)(blockIdx.x * (kGlobalThreads / kWarp) + threadIdx.x / kWarp);
    const IDX nwarps = (IDX)(gridDim.x * (kGlobalThreads / kWarp));
    if (first >= (IDX)p.rows)
        return;
    Cursor<MmParams<T, RP>, IDX> c;
    c.start(p, first, nwarps);
    G buf0 = load_group<T, IDX>(p.values, p.dwords, c.cb + (IDX)(lane * kLaneEntries), c.e);
    using U = typename std::make_unsigned<IDX>::type; /* entries outside the row give unused, wrapping offsets */
    const U incb = (U)p.incb, ldb = (U)p.ldb;
    LaneAcc<T, RP, NT> la;
    la.init(p, lane, (int64_t)c.row, beta);
    float acc[NT];
    zero_acc<NT>(acc);
    walk_rows<T, RP, IDX>(
        p, c, buf0, nwarps, lane,
        [&](G &cur, IDX cb, IDX b, IDX e, IDX &carry) {
            const ChunkCols<IDX> cc = decode_chunk<T, IDX>(cur, cb, b, e, lane, carry);
#pragma unroll
            for (int i = 0; i < kLaneEntries; i++) {
                /* All NT loads of an entry first, then the products; unloaded values stay 0 (the entry is +-0). */
                const T *bi = p.b + ((U)cc.base + (U)cc.off(i)) * incb;
                const bool nz = Ty<T>::nonzero(cur, i);
                uint32_t xs[NT];
#pragma unroll
                for (int j = 0; j < NT; j++)
                    xs[j] = (nz && j < p.n) ? Ty<T>::x_bits(bi + (U)j * ldb) : 0u;
                const float a = Ty<T>::value(cur, i);
#pragma unroll
                for (int j = 0; j < NT; j++)
                    acc[j] = fmaf(a, Ty<T>::x_value(xs[j]), acc[j]);
            }
        },
        [&](IDX row, IDX, IDX) {
            la.finish(p, (int64_t)row, alpha, beta, lane, acc);
            la.prefetch(p, (int64_t)c.row, beta);
        });
}

/* ---- host side */

inline unsigned global_grid(int64_t rows, int sm_count, int blocks_per_sm)
{
    const int64_t wpb = kGlobalThreads / kWarp;
    int64_t max_warps = (int64_t)(sm_count > 0 ? sm_count : 1) * blocks_per_sm * wpb;
    int64_t per_warp = (rows + max_warps - 1) / max_warps;
    if (per_warp < 1)
        per_warp = 1;
    const int64_t warps = (rows + per_warp - 1) / per_warp;
    const int64_t blocks = (warps + wpb - 1) / wpb;
    return (unsigned)(blocks < 1 ? 1 : blocks);
}

inline unsigned staged_grid(int64_t rows, int sm_count)
{
    const int64_t wpb = kStagedThreads / kWarp;
    const int64_t need = (rows + wpb - 1) / wpb;
    const int64_t sms = sm_count > 0 ? sm_count : 1;
    return (unsigned)(need < 1 ? 1 : need < sms ? need : sms);
}

template <typename T> inline int row_bytes(int nt) { return nt * (int)sizeof(T); }

/* Staged shared-memory bytes for tile nt and swizzle shift s (planes of at most 16 bytes, each 16-byte aligned). */
template <typename T> inline int64_t staged_bytes(int64_t cols, int nt, int s)
{
    const int rb = row_bytes<T>(nt), pb = rb < 16 ? rb : 16, planes = rb / pb;
    const int64_t plane = (((int64_t)staged_slots(cols, s) + 1) * pb + 15) & ~(int64_t)15;
    return plane * planes;
}

inline int max_smem_optin()
{
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                                      dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 48 * 1024;
    }
    return v;
}

inline int pow2_tile(int64_t n)
{
    return n <= 2 ? 2 : n <= 4 ? 4 : n <= 8 ? 8 : 16;
}

/* Spacing of a lane's 8 entries in columns, about 8 * cols * rows / entries, as a shift in 3..12. */
inline int auto_swizzle(const macko_spmm_args *a)
{
    if (a->entries <= 0 || a->rows <= 0)
        return 0;
    const double spacing = 8.0 * (double)a->cols * (double)a->rows / (double)a->entries;
    int s = 3;
    while (s < 12 && (double)(1 << s) * 1.4142 < spacing)
        s++;
    return s;
}

template <typename T, typename RP> MmParams<T, RP> make_params(const macko_spmm_args *a)
{
    MmParams<T, RP> p;
    p.rows = a->rows;
    p.cols = a->cols;
    p.values = static_cast<const T *>(a->values);
    p.dwords = reinterpret_cast<const uint32_t *>(a->deltas);
    p.row_ptr = static_cast<const RP *>(a->row_ptr);
    p.b = static_cast<const T *>(a->b);
    p.incb = a->incb;
    p.ldb = a->ldb;
    p.c = static_cast<T *>(a->c);
    p.incc = a->incc;
    p.ldc = a->ldc;
    p.n = 0;
    p.alpha_dev = a->alpha_dev;
    p.beta_dev = a->beta_dev;
    p.alpha = a->alpha;
    p.beta = a->beta;
    p.swz = 0;
    p.slots = 0;
    p.plane_stride = 0;
    return p;
}

template <typename T, int NT, bool SWZ, bool MMA>
int launch_staged_tile(MmParams<T, int32_t> p, int64_t smem, const macko_spmm_args *a)
{
    auto k = mm_staged_kernel<T, NT, SWZ, MMA, int32_t>;
    cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* reported here: else the next call's launch check would report it again */
        return (int)e;
    }
    k<<<staged_grid(a->rows, a->sm_count), kStagedThreads, (size_t)smem,
        reinterpret_cast<cudaStream_t>(a->stream)>>>(p);
    return (int)cudaGetLastError();
}

template <typename T, int NT>
int launch_staged_nt(const MmParams<T, int32_t> &p, int64_t smem, const macko_spmm_args *a, bool mma)
{
    if constexpr (sizeof(T) == 2 && NT == 8) {
        if (mma)
            return p.swz ? launch_staged_tile<T, NT, true, true>(p, smem, a)
                         : launch_staged_tile<T, NT, false, true>(p, smem, a);
    }
    if (mma)
        return (int)cudaErrorInvalidValue;
    return p.swz ? launch_staged_tile<T, NT, true, false>(p, smem, a)
                 : launch_staged_tile<T, NT, false, false>(p, smem, a);
}

template <typename T, typename RP, typename IDX, int NT> int launch_global_tile(const MmParams<T, RP> &p,
                                                                               const macko_spmm_args *a)
{
    const unsigned grid = global_grid(a->rows, a->sm_count, global_blocks_per_sm<IDX>());
    mm_global_kernel<T, NT, RP, IDX><<<grid, kGlobalThreads, 0, reinterpret_cast<cudaStream_t>(a->stream)>>>(p);
    return (int)cudaGetLastError();
}

/* Widest global tile: NT values of B per entry held in registers (within 64 registers with 32-bit indices, 128
 * with 64-bit ones, without spilling). */
template <typename T, typename IDX> constexpr int max_global_tile()
{
    return sizeof(IDX) == 8 ? 8 : 16 / (int)sizeof(T);
}

template <typename T, typename RP, typename IDX> int launch_global(const MmParams<T, RP> &p, int nt,
                                                                  const macko_spmm_args *a)
{
    switch (nt) {
    case 2: return launch_global_tile<T, RP, IDX, 2>(p, a);
    case 4: return launch_global_tile<T, RP, IDX, 4>(p, a);
    default: return launch_global_tile<T, RP, IDX, max_global_tile<T, IDX>()>(p, a);
    }
}

template <typename T>
int launch_staged(const MmParams<T, int32_t> &p, int nt, int64_t smem, const macko_spmm_args *a, bool mma)
{
    switch (nt) {
    case 2: return launch_staged_nt<T, 2>(p, smem, a, mma);
    case 4: return launch_staged_nt<T, 4>(p, smem, a, mma);
    case 8: return launch_staged_nt<T, 8>(p, smem, a, mma);
    default: return launch_staged_nt<T, max_staged_tile<T>()>(p, smem, a, mma);
    }
}

/* n == 1: the SpMV kernel (so that a one-column product is bitwise the SpMV result). */
template <typename T> int launch_spmv(const macko_spmm_args *a, int variant)
{
    macko_spmv_args s;
    s.rows = a->rows;
    s.cols = a->cols;
    s.values = a->values;
    s.deltas = a->deltas;
    s.row_ptr = a->row_ptr;
    s.x = a->b;
    s.incx = a->incb;
    s.y = a->c;
    s.incy = a->incc;
    s.alpha_dev = a->alpha_dev;
    s.beta_dev = a->beta_dev;
    s.alpha = a->alpha;
    s.beta = a->beta;
    s.sm_count = a->sm_count;
    s.stream = a->stream;
    s.kernel = macko_spmv_choose_kernel(a->rows, a->cols, a->entries, sizeof(T)); /* as macko_Hspmv/Sspmv */
    const bool h = sizeof(T) == 2;
    if (variant == MACKO_SPMM_I64_RP64)
        return h ? macko_spmv_h_i64_rp64(&s) : macko_spmv_s_i64_rp64(&s);
    if (variant == MACKO_SPMM_I64_RP32)
        return h ? macko_spmv_h_i64_rp32(&s) : macko_spmv_s_i64_rp32(&s);
    if (a->incb == 1)
        return h ? macko_spmv_h_i32_unit(&s) : macko_spmv_s_i32_unit(&s);
    return h ? macko_spmv_h_i32_strided(&s) : macko_spmv_s_i32_strided(&s);
}

/* The largest B offset a tile touches, (cols - 1)*incb + (nt - 1)*ldb, fits int32. */
inline bool offsets_fit_i32(const macko_spmm_args *a, int nt)
{
    const double span = (double)(a->cols - 1) * (double)a->incb + (double)(nt - 1) * (double)a->ldb;
    return span < 2147483647.0 - 65536.0;
}

template <typename T, typename RP, typename IDX> int launch(const macko_spmm_args *a, int variant)
{
    const int64_t n = a->n;
    int path = a->path;
    if (path == MACKO_SPMM_PATH_SPMV || (path == MACKO_SPMM_PATH_AUTO && n == 1))
        return n == 1 ? launch_spmv<T>(a, variant) : (int)cudaErrorInvalidValue;

    /* Tile and path. Staged needs 32-bit indices and the tile in shared memory. AUTO never takes the tensor cores
     * (MMA): measured slower than the CUDA cores on the H100 (bench/NOTES.md). The swizzled layout pays for 16-byte
     * rows and costs for narrower ones. */
    const bool i32 = variant == MACKO_SPMM_I32;
    const bool forced_staged = path == MACKO_SPMM_PATH_STAGED || path == MACKO_SPMM_PATH_MMA;
    const int want = a->tile ? a->tile : path == MACKO_SPMM_PATH_MMA ? 8 : pow2_tile(n);
    int nt = want, s = 0;
    bool mma = false;
    int64_t smem = 0;
    if (path != MACKO_SPMM_PATH_GLOBAL && i32) {
        const int64_t limit = max_smem_optin();
        const int s_auto = auto_swizzle(a);
        int fit = want < max_staged_tile<T>() ? want : max_staged_tile<T>();
        while (fit >= 2 && staged_bytes<T>(a->cols, fit, a->swizzle < 0 ? s_auto : a->swizzle) > limit)
            fit /= 2;
        /* AUTO takes the staged path unless that would split a tile of up to 8 columns. */
        const bool staged_ok = fit >= 2 && (forced_staged || fit >= (want < 8 ? want : 8));
        if (staged_ok) {
            mma = path == MACKO_SPMM_PATH_MMA;
            if (mma && !(sizeof(T) == 2 && fit >= 8))
                return (int)cudaErrorInvalidValue;
            if (mma)
                fit = 8;
            path = MACKO_SPMM_PATH_STAGED;
            nt = fit;
            s = a->swizzle >= 0 ? a->swizzle : (row_bytes<T>(nt) >= 16 ? s_auto : 0);
            smem = staged_bytes<T>(a->cols, nt, s);
        } else if (forced_staged) {
            return (int)cudaErrorInvalidValue;
        }
    } else if (forced_staged) {
        return (int)cudaErrorInvalidValue;
    }
    if (path != MACKO_SPMM_PATH_STAGED) {
        path = MACKO_SPMM_PATH_GLOBAL;
        const bool wide = sizeof(IDX) == 8 || !offsets_fit_i32(a, nt);
        const int cap = wide ? max_global_tile<T, int64_t>() : max_global_tile<T, IDX>();
        nt = nt < cap ? nt : cap;
    }

    for (int64_t j0 = 0; j0 < n; j0 += nt) {
        const int nh = (int)(n - j0 < nt ? n - j0 : nt);
        int err;
        if (path == MACKO_SPMM_PATH_STAGED) {
            MmParams<T, int32_t> p = make_params<T, int32_t>(a);
            p.b += j0 * a->ldb;
            p.c += j0 * a->ldc;
            p.n = nh;
            p.swz = s;
            p.slots = staged_slots(a->cols, s);
            p.plane_stride = (uint32_t)(smem / (row_bytes<T>(nt) < 16 ? 1 : row_bytes<T>(nt) / 16));
            err = launch_staged<T>(p, nt, smem, a, mma);
        } else {
            MmParams<T, RP> p = make_params<T, RP>(a);
            p.b += j0 * a->ldb;
            p.c += j0 * a->ldc;
            p.n = nh;
            if (sizeof(IDX) == 4 && !offsets_fit_i32(a, nt))
                err = launch_global<T, RP, int64_t>(p, nt, a);
            else
                err = launch_global<T, RP, IDX>(p, nt, a);
        }
        if (err != 0)
            return err;
    }
    return 0;
}

} // namespace

/* The thin C launchers: one list, stamped per value type. */
#define MACKO_SPMM_LAUNCHER(L, T, NAME, RP, IDX, VARIANT)                                                            \
    extern "C" int macko_spmm_##L##_##NAME(const macko_spmm_args *a) { return launch<T, RP, IDX>(a, VARIANT); }
#define MACKO_SPMM_LAUNCHERS(L, T)                                                                                   \
    MACKO_SPMM_LAUNCHER(L, T, i32, int32_t, int32_t, MACKO_SPMM_I32)                                                 \
    MACKO_SPMM_LAUNCHER(L, T, i64_rp32, int32_t, int64_t, MACKO_SPMM_I64_RP32)                                       \
    MACKO_SPMM_LAUNCHER(L, T, i64_rp64, int64_t, int64_t, MACKO_SPMM_I64_RP64)

MACKO_SPMM_LAUNCHERS(h, __half)
MACKO_SPMM_LAUNCHERS(s, float)
