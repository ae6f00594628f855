/* The GEN and SIMT paths of the N:M kind (kernels/nm.h) over the GEN device layout (the canonical arrays of
 * lapack_style_docs/FORMAT_NM.md): value j of window w of row r at values[r*kept + w*n + j], its position at
 * pos[(r/v)*kept + w*n + j]. */
#include "nm.h"

#include "macko_mma.cuh"

#include "../src/plan.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace {

/* Value type T, its accumulation type (fp32; fp64 for fp64) and zero test (+0/-0 are padding). */
template <typename T> struct Ty;
template <> struct Ty<__half> {
    using Acc = float;
    static __device__ __forceinline__ float get(const __half *p) { return __half2float(*p); }
    static __device__ __forceinline__ void put(__half *p, float v) { *p = __float2half_rn(v); }
};
template <> struct Ty<__nv_bfloat16> {
    using Acc = float;
    static __device__ __forceinline__ float get(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
    static __device__ __forceinline__ void put(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }
};
template <> struct Ty<float> {
    using Acc = float;
    static __device__ __forceinline__ float get(const float *p) { return *p; }
    static __device__ __forceinline__ void put(float *p, float v) { *p = v; }
};
template <> struct Ty<double> {
    using Acc = double;
    static __device__ __forceinline__ double get(const double *p) { return *p; }
    static __device__ __forceinline__ void put(double *p, double v) { *p = v; }
};

template <typename T> struct G {
    int64_t rows, cols, n, kept;
    int nn, mm, vv;
    const T *vals;
    const uint8_t *pos;
    const T *b;
    int64_t incb, ldb;
    T *c;
    int64_t incc, ldc;
    /* scalars in the accumulation type: fp32 combos use the float fields, fp64 the double ones */
    const float *alpha_dev, *beta_dev;
    float alpha, beta;
    const double *alpha_dev_d, *beta_dev_d;
    double alpha_d, beta_d;
    int splits; /* SIMT: blocks along K (blockIdx.z); above 1 their sums go to ws and simt_reduce finishes C */
    float *ws;  /* SIMT with splits > 1: splits * rows * n floats */
};

template <typename T> __device__ __forceinline__ void scalars(const G<T> &p, typename Ty<T>::Acc &alpha, typename Ty<T>::Acc &beta)
{
    if constexpr (std::is_same<T, double>::value) {
        alpha = p.alpha_dev_d ? *p.alpha_dev_d : p.alpha_d;
        beta = p.beta_dev_d ? *p.beta_dev_d : p.beta_d;
    } else {
        alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
        beta = p.beta_dev ? *p.beta_dev : p.beta;
    }
}

template <typename T> __device__ __forceinline__ void put_c(const G<T> &p, int64_t r, int64_t j, typename Ty<T>::Acc v,
                                                            typename Ty<T>::Acc alpha, typename Ty<T>::Acc beta)
{
    T *cp = p.c + r * p.incc + j * p.ldc;
    typename Ty<T>::Acc out = alpha * v;
    if (beta != 0)
        out = fma(beta, (typename Ty<T>::Acc)Ty<T>::get(cp), out);
    Ty<T>::put(cp, out);
}

constexpr int kGenWarps = 8;

/* One warp per row and tile of NT columns; lanes take the row's kept values 32 apart and skip zeros. The lane sums
 * are added by a fixed butterfly: deterministic. */
template <typename T, int NT> __global__ void __launch_bounds__(kGenWarps * 32, 4) gen_kernel(const G<T> p)
{
    using A = typename Ty<T>::Acc;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t r = (int64_t)blockIdx.x * kGenWarps + warp;
    const int64_t j0 = (int64_t)blockIdx.y * NT;
    if (r >= p.rows)
        return;
    A alpha, beta;
    scalars(p, alpha, beta);
    if (alpha == 0) {
        if (lane < NT && j0 + lane < p.n) {
            T *cp = p.c + r * p.incc + (j0 + lane) * p.ldc;
            Ty<T>::put(cp, beta != 0 ? beta * (A)Ty<T>::get(cp) : (A)0);
        }
        return;
    }
    A acc[NT];
#pragma unroll
    for (int c = 0; c < NT; c++)
        acc[c] = 0;
    const T *vr = p.vals + r * p.kept;
    const uint8_t *pr = p.pos + (r / p.vv) * p.kept;
    const unsigned short *vbits = reinterpret_cast<const unsigned short *>(vr);
    const int q32 = 32 / p.nn, r32 = 32 % p.nn;
    int64_t w = lane / p.nn;
    int s = lane % p.nn;
    for (int64_t j = lane; j < p.kept; j += 32) {
        bool nz;
        if constexpr (sizeof(T) == 2)
            nz = (__ldg(vbits + j) & 0x7FFFu) != 0;
        else
            nz = vr[j] != (T)0;
        if (nz) {
            const A v = (A)Ty<T>::get(vr + j);
            const int64_t col = w * p.mm + __ldg(pr + j);
            const T *bp = p.b + col * p.incb + j0 * p.ldb;
#pragma unroll
            for (int c = 0; c < NT; c++)
                if (j0 + c < p.n)
                    acc[c] = fma(v, (A)Ty<T>::get(bp + c * p.ldb), acc[c]);
        }
        s += r32;
        w += q32;
        if (s >= p.nn) {
            s -= p.nn;
            w++;
        }
    }
#pragma unroll
    for (int c = 0; c < NT; c++) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            acc[c] += __shfl_xor_sync(0xFFFFFFFFu, acc[c], o);
    }
#pragma unroll
    for (int c = 0; c < NT; c++)
        if (lane == c && j0 + c < p.n)
            put_c(p, r, j0 + c, acc[c], alpha, beta);
}

/* ---- SIMT: fp32, blocked */
constexpr int kBM = 128;
constexpr int kMaxGroups = kBM / 8;
constexpr int kCP = kBM + 4; /* floats per column of the C tile staged for the epilogue */

/* Geometry of the SIMT kernel: S4 slots per row and step (a multiple of 4), BN columns of C per block (128: 256
 * threads, one block per SM; 64: 128 threads, three blocks per SM where the shared memory allows), KB columns of A
 * per step (32 or 64); and its shared memory (two stages of each buffer). */
template <int S4, int BN, int KB> struct Simt {
    static constexpr int nt = 2 * BN;       /* threads: 16 rows of threads x BN / 8 columns of threads, 8 x 8 each */
    static constexpr int bp = BN + 4;       /* floats per row of the transposed B: (BN + 4) / 4 = 1 mod 8 units */
    static constexpr int upc = KB / 4;      /* 16-byte units per column of B's piece */
    static constexpr int sa = (S4 / 4) % 2 ? S4 : S4 + 4; /* floats per row of A as read: an odd number of units */
    static constexpr int ar = kBM * sa;     /* A as read: [row][slot], the rows' kept values of the step as stored */
    static constexpr int at = S4 * kBM;     /* A transposed: [slot][row] */
    static constexpr int r = BN * KB;       /* B as read: [column][k], 16-byte units swizzled by column / 4 */
    static constexpr int t = KB * bp;       /* B transposed: [k][column] */
    static constexpr int o = kMaxGroups * S4; /* [group][slot]: byte offset in t of the B row the slot selects */
    static constexpr int main_bytes = (2 * (ar + at + r + t + o) + S4) * 4;
    static constexpr int c_bytes = BN * kCP * 4;
    static constexpr int bytes = main_bytes > c_bytes ? main_bytes : c_bytes;
};

/* The exact sum of row r times column j over the row's nonzero values in column order (replaces a NaN sum). */
__device__ __forceinline__ float gen_row_dot(const G<float> &p, int64_t r, int64_t j)
{
    const float *vr = p.vals + r * p.kept;
    const uint8_t *pr = p.pos + (r / p.vv) * p.kept;
    float acc = 0.0f;
    for (int64_t q = 0; q < p.kept; q++) {
        const float v = vr[q];
        if (v != 0.0f)
            acc = fmaf(v, p.b[((q / p.nn) * p.mm + pr[q]) * p.incb + j * p.ldb], acc);
    }
    return acc;
}

/* The first 64-column K-slice of split z of `splits` (z = splits: the slices' count): the slices shared out evenly. */
__host__ __device__ __forceinline__ int simt_split(int64_t cols, int splits, int z)
{
    const int64_t slices = (cols + 63) / 64;
    return (int)(slices * z / (splits > 0 ? splits : 1));
}

/* SIMT with splits > 1: C = alpha * (the splits' sums added in split order) + beta * C, the exact row sum where that
 * total is NaN (as the unsplit kernel); alpha == 0: C = beta * C (ws and A not read). */
__global__ void __launch_bounds__(256) simt_reduce(const G<float> p)
{
    float alpha, beta;
    scalars(p, alpha, beta);
    const int64_t plane = p.rows * p.n, col = blockIdx.y; /* grid: rows x the n (<= 128) columns */
    for (int64_t r = (int64_t)blockIdx.x * 256 + threadIdx.x; r < p.rows; r += (int64_t)gridDim.x * 256) {
        const int64_t i = col * p.rows + r;
        if (alpha == 0.0f) {
            float *cp = p.c + r * p.incc + col * p.ldc;
            *cp = beta != 0.0f ? beta * *cp : 0.0f;
            continue;
        }
        float v = p.ws[i];
        for (int z = 1; z < p.splits; z++)
            v += p.ws[z * plane + i];
        if (isnan(v))
            v = gen_row_dot(p, r, col);
        put_c(p, r, col, v, alpha, beta);
    }
}

/* Block: 128 rows x BN columns of C; 2*BN threads of 8 x 8 (rows 8*ty.., columns 4*tx.. and BN/2 + 4*tx..), a warp
 * 4 threads down by 8 along. A step is KB columns of A (KB/m windows, S = n*KB/m kept values per row, padded to S4
 * with zero values that select B row 0). Per step, with one barrier:
 * - A's 128 x S values and B's KB x BN piece are copied as stored (cp.async; A [row][slot], B 16-byte units along k
 *   per column, swizzled) two steps ahead of their use, and transposed in shared memory one step ahead (A to
 *   [slot][row]: one 16-byte load and four 4-byte stores per unit; B to [k][column]: 4 x 4 blocks, four 16-byte loads
 *   and stores; all conflict-free);
 * - per group of rows and slot, the byte offset of the B row the slot selects (from the group's position bytes).
 * A thread's 8 rows share one group (v >= 8). Per slot it loads 2 x 16 bytes of A and 2 x 16 bytes of B for 64
 * multiply-adds, and per 4 slots the 4 offsets. Global addresses advance by pointer per step. */
template <int S4, int BN, int KB, bool SPLIT>
__global__ void __launch_bounds__(2 * BN, BN == 128 ? 1 : 3) simt_kernel(const G<float> p)
{
    using Z = Simt<S4, BN, KB>;
    constexpr int kST = Z::nt, kBP = Z::bp, kTX = BN / 8, kU = Z::upc; /* threads, B row stride, threads along */
    extern __shared__ __align__(16) float fsm[];
    float *As = fsm;                                        /* [2][Z::ar] */
    float *Ats = As + 2 * Z::ar;                            /* [2][Z::at] */
    float *Rs = Ats + 2 * Z::at;                            /* [2][Z::r] */
    float *Ts = Rs + 2 * Z::r;                              /* [2][Z::t] */
    int *Os = reinterpret_cast<int *>(Ts + 2 * Z::t);       /* [2][Z::o] */
    int *Ws = Os + 2 * Z::o; /* [S4]: first column in the step of slot ss's window, -1 for padding slots */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int tx = (warp % (kTX / 8)) * 8 + (lane & 7), ty = (warp / (kTX / 8)) * 4 + (lane >> 3);
    const int64_t row0 = (int64_t)blockIdx.x * kBM, col0 = (int64_t)blockIdx.y * BN;
    float alpha, beta;
    scalars(p, alpha, beta);
    if (SPLIT && alpha == 0.0f)
        return; /* simt_reduce scales C */
    if (alpha == 0.0f) { /* (the scalars are read again for the epilogue: fewer registers live in the loop) */
        for (int e = tid; e < kBM * BN; e += kST) {
            const int64_t r = row0 + e % kBM, j = col0 + e / kBM;
            if (r < p.rows && j < p.n) {
                float *cp = p.c + r * p.incc + j * p.ldc;
                *cp = beta != 0.0f ? beta * *cp : 0.0f;
            }
        }
        return;
    }
    const int S = p.nn * KB / p.mm; /* kept values per row per step */
    /* this block's steps [s0, s1): split z of the K-slices of 64 columns (simt_split), so that every configuration
     * splits at the same columns */
    const int s0 = SPLIT ? simt_split(p.cols, p.splits, (int)blockIdx.z) * (64 / KB) : 0;
    const int s1 = !SPLIT || (int)blockIdx.z + 1 == p.splits
                       ? (int)((p.cols + KB - 1) / KB)
                       : simt_split(p.cols, p.splits, (int)blockIdx.z + 1) * (64 / KB);
    const int64_t g0 = row0 / p.vv;
    const int64_t G = (p.rows + p.vv - 1) / p.vv;
    const int groups = (int)(G - g0 < kBM / p.vv ? G - g0 : kBM / p.vv); /* groups of rows in this block */
    const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(fsm);
    if (tid < S4)
        Ws[tid] = tid < S ? (tid / p.nn) * p.mm : -1;

    /* A: kTR threads per row; thread takes the 4-slot chunks (tid % kTR) + kTR*i of row tid / kTR */
    constexpr int kTR = kST / kBM, kAL = (S4 / 4 + kTR - 1) / kTR;
    const bool va = ((p.kept | (int64_t)S) & 3) == 0 && ((uintptr_t)p.vals & 15) == 0;
    const int arow = tid / kTR, ach = 4 * (tid % kTR);
    const bool avalid = row0 + arow < p.rows;
    const float *aptr = p.vals + (avalid ? (row0 + arow) * p.kept : 0) + ach + (int64_t)s0 * S; /* + S a step */
    /* B as read: columns tid / kU + kBC*i (i < bcols), 16-byte unit tid % kU (k = 4 * unit ..) */
    constexpr int kBC = kST / kU, kBPASS = BN / kBC;
    const int bcol = tid / kU, bq = tid % kU;
    const bool bvec = p.incb == 1 && (p.ldb & 3) == 0 && ((uintptr_t)p.b & 15) == 0;
    const int64_t bleft = p.n - col0 - bcol;
    const int bcols = bleft <= 0 ? 0 : bleft > (int64_t)(kBPASS - 1) * kBC ? kBPASS : (int)((bleft + kBC - 1) / kBC);
    const float *bptr = p.b + (bcols > 0 ? (col0 + bcol) * p.ldb + (int64_t)s0 * KB * p.incb : 0); /* column bcol,
                                                                                                  row 0 of step s0 */
    const int64_t bstride = (int64_t)kBC * p.ldb;
    const uint8_t *optr = p.pos + (groups > 0 ? g0 * p.kept + (int64_t)s0 * S : 0); /* the block's first group, slot
                                                                                        0 of step s0 */

    constexpr int kOE = (kMaxGroups * S4 + kST - 1) / kST; /* offset entries per thread */
    int ro[kOE];
    auto load_a = [&](int buf, int st) { /* A(st) into stage buf; aptr at step st */
        const int64_t left = p.kept - (int64_t)st * S; /* slots of the row from this step's first on */
#pragma unroll
        for (int i = 0; i < kAL; i++) {
            const int sl = ach + 4 * kTR * i; /* first slot of the chunk */
            if (sl >= S4)
                continue;
            const int dst = buf * Z::ar + arow * Z::sa + sl;
            const uint32_t d = sbase + (uint32_t)dst * 4u;
            if (va) {
                if (avalid && sl < S && sl < left)
                    cp_async16(d, aptr + 4 * kTR * i, 16);
                else
                    *reinterpret_cast<float4 *>(As + dst) = make_float4(0.f, 0.f, 0.f, 0.f);
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    if (avalid && sl + e < S && sl + e < left)
                        cp_async4(d + 4u * e, aptr + 4 * kTR * i + e);
                    else
                        As[dst + e] = 0.0f;
                }
            }
        }
        aptr += S;
    };
    auto load_b = [&](int buf, int st) { /* B(st) as read into stage buf; bptr at step st */
        const int64_t k = (int64_t)st * KB + 4 * bq;
        const bool whole = bvec && (int64_t)st * KB + KB <= p.cols;
#pragma unroll
        for (int i = 0; i < kBPASS; i++) {
            const int col = bcol + kBC * i;
            const int u = col * kU + (bq ^ ((col >> 2) & 7));
            float *d = Rs + buf * Z::r + 4 * u;
            if (i >= bcols) {
                *reinterpret_cast<float4 *>(d) = make_float4(0.f, 0.f, 0.f, 0.f);
                continue;
            }
            const float *src = bptr + i * bstride;
            if (whole || (bvec && k + 4 <= p.cols)) {
                cp_async16(sbase + (uint32_t)((d - fsm) * 4), src + 4 * bq, 16);
            } else { /* a partial unit, or B not 16-byte aligned: plain loads, zeros past the last column */
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (k < p.cols) v.x = src[k * p.incb - (int64_t)st * KB * p.incb];
                if (k + 1 < p.cols) v.y = src[(k + 1) * p.incb - (int64_t)st * KB * p.incb];
                if (k + 2 < p.cols) v.z = src[(k + 2) * p.incb - (int64_t)st * KB * p.incb];
                if (k + 3 < p.cols) v.w = src[(k + 3) * p.incb - (int64_t)st * KB * p.incb];
                *reinterpret_cast<float4 *>(d) = v;
            }
        }
        bptr += (int64_t)KB * p.incb;
    };
    auto load_o = [&](int st) { /* offsets(st) into registers; optr at step st */
        const int64_t left = p.kept - (int64_t)st * S;
#pragma unroll
        for (int e = 0; e < kOE; e++) {
            const int f = tid + e * kST, g = f / S4, ss = f % S4;
            const int w = Ws[ss];
            ro[e] = 0;
            if (w >= 0 && g < groups && ss < left)
                ro[e] = (w + (int)__ldg(optr + g * p.kept + ss)) * (kBP * 4);
        }
        optr += S;
    };
    auto store_o = [&](int buf) {
#pragma unroll
        for (int e = 0; e < kOE; e++) {
            const int f = tid + e * kST;
            if (f < Z::o)
                Os[buf * Z::o + f] = ro[e];
        }
    };
    /* A from [row][slot] to [slot][row]: per 16-byte unit (a warp's 32 consecutive rows) one load, four stores */
    auto transpose_a = [&](int buf) {
        for (int c = tid; c < kBM * (S4 / 4); c += kST) {
            const int row = c % kBM, sq = c / kBM;
            const float4 v = *reinterpret_cast<const float4 *>(As + buf * Z::ar + row * Z::sa + 4 * sq);
            float *t = Ats + buf * Z::at + 4 * sq * kBM + row;
            t[0 * kBM] = v.x;
            t[1 * kBM] = v.y;
            t[2 * kBM] = v.z;
            t[3 * kBM] = v.w;
        }
    };
    /* B: thread (column quad tid % (BN/4), k quads tid / (BN/4) + 8*j): 4 x 4 blocks from Rs[buf] to Ts[buf] */
    auto transpose_b = [&](int buf) {
        const int cq = tid % (BN / 4);
#pragma unroll
        for (int j = 0; j < KB / 32; j++) {
            const int kq = tid / (BN / 4) + 8 * j;
            float4 v[4];
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int col = 4 * cq + r;
                v[r] = *reinterpret_cast<const float4 *>(Rs + buf * Z::r + 4 * (col * kU + (kq ^ (cq & 7))));
            }
            float *t = Ts + buf * Z::t + 4 * kq * kBP + 4 * cq;
            *reinterpret_cast<float4 *>(t + 0 * kBP) = make_float4(v[0].x, v[1].x, v[2].x, v[3].x);
            *reinterpret_cast<float4 *>(t + 1 * kBP) = make_float4(v[0].y, v[1].y, v[2].y, v[3].y);
            *reinterpret_cast<float4 *>(t + 2 * kBP) = make_float4(v[0].z, v[1].z, v[2].z, v[3].z);
            *reinterpret_cast<float4 *>(t + 3 * kBP) = make_float4(v[0].w, v[1].w, v[2].w, v[3].w);
        }
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0.0f;
    const int gi = ty * 8 / p.vv;

    /* prologue: A(0), O(0), B(0) as read; A(0), B(0) transposed; A(1), B(1) as read */
    __syncthreads(); /* Ws */
    load_a(0, s0);
    load_b(0, s0);
    load_o(s0);
    cp_async_commit();
    store_o(0);
    cp_async_wait<0>();
    __syncthreads();
    transpose_a(0);
    transpose_b(0);
    if (s0 + 1 < s1) {
        load_a(1, s0 + 1);
        load_b(1, s0 + 1);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    /* top of step st: Ats/Ts/Os[(st - s0) & 1] hold step st, As/Rs of the other stage A and B of step st + 1 as
     * read */
    for (int st = s0; st < s1; st++) {
        const int buf = (st - s0) & 1, nxt = buf ^ 1;
        const bool more = st + 1 < s1;
        if (more) {
            transpose_a(nxt);
            transpose_b(nxt);
            if (st + 2 < s1) {
                load_a(buf, st + 2);
                load_b(buf, st + 2);
            }
            load_o(st + 1);
            cp_async_commit();
        }
        const float *as = Ats + buf * Z::at + ty * 8;
        const char *bs = reinterpret_cast<const char *>(Ts + buf * Z::t + tx * 4);
        const int *os = Os + buf * Z::o + gi * S4;
#pragma unroll(BN == 128 ? S4 / 4 : 1)
        for (int q4 = 0; q4 < S4 / 4; q4++) {
            const int4 o4 = *reinterpret_cast<const int4 *>(os + 4 * q4);
            const int oo[4] = {o4.x, o4.y, o4.z, o4.w};
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float4 a0 = *reinterpret_cast<const float4 *>(as + (4 * q4 + e) * kBM);
                const float4 a1 = *reinterpret_cast<const float4 *>(as + (4 * q4 + e) * kBM + 4);
                const float4 b0 = *reinterpret_cast<const float4 *>(bs + oo[e]);
                const float4 b1 = *reinterpret_cast<const float4 *>(bs + oo[e] + BN / 2 * 4);
                const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
                const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
        }
        if (more) {
            store_o(nxt);
            cp_async_wait<0>();
        }
        __syncthreads();
    }
    /* the tile through shared memory (free after the last barrier), then written a column at a time */
    float *Cs = fsm; /* [column][row], kCP floats per column */
#pragma unroll
    for (int j = 0; j < 8; j++) {
        float *cc = Cs + (j < 4 ? tx * 4 + j : BN / 2 + tx * 4 + j - 4) * kCP + ty * 8;
        *reinterpret_cast<float4 *>(cc) = make_float4(acc[0][j], acc[1][j], acc[2][j], acc[3][j]);
        *reinterpret_cast<float4 *>(cc + 4) = make_float4(acc[4][j], acc[5][j], acc[6][j], acc[7][j]);
    }
    __syncthreads();
    if (SPLIT) { /* this split's sums, as they are (simt_reduce adds them in split order) */
        float *w = p.ws + (int64_t)blockIdx.z * p.rows * p.n;
        for (int cl = warp; cl < BN; cl += kST / 32) {
            const int64_t col = (int64_t)blockIdx.y * BN + cl;
            if (col >= p.n)
                break;
#pragma unroll
            for (int h = 0; h < kBM / 32; h++) {
                const int64_t r = (int64_t)blockIdx.x * kBM + h * 32 + lane;
                if (r < p.rows)
                    w[col * p.rows + r] = Cs[cl * kCP + h * 32 + lane];
            }
        }
        return;
    }
    scalars(p, alpha, beta);
    for (int cl = warp; cl < BN; cl += kST / 32) {
        const int64_t col = (int64_t)blockIdx.y * BN + cl;
        if (col >= p.n)
            break;
#pragma unroll
        for (int h = 0; h < kBM / 32; h++) {
            const int64_t r = (int64_t)blockIdx.x * kBM + h * 32 + lane;
            if (r < p.rows) {
                float v = Cs[cl * kCP + h * 32 + lane];
                if (isnan(v))
                    v = gen_row_dot(p, r, col);
                put_c(p, r, col, v, alpha, beta);
            }
        }
    }
}

template <typename T> G<T> make(const macko_nm_args *a)
{
    G<T> p;
    p.splits = 1;
    p.ws = nullptr;
    p.rows = a->k.rows;
    p.cols = a->k.cols;
    p.n = a->k.n;
    p.kept = a->kept;
    p.nn = a->nn;
    p.mm = a->mm;
    p.vv = a->vv;
    p.vals = (const T *)a->values;
    p.pos = (const uint8_t *)a->meta;
    p.b = (const T *)a->k.b;
    p.incb = a->k.incb;
    p.ldb = a->k.ldb;
    p.c = (T *)a->k.c;
    p.incc = a->k.incc;
    p.ldc = a->k.ldc;
    p.alpha_dev = a->k.alpha_dev;
    p.beta_dev = a->k.beta_dev;
    p.alpha = a->k.alpha;
    p.beta = a->k.beta;
    p.alpha_dev_d = a->k.alpha_dev_d;
    p.beta_dev_d = a->k.beta_dev_d;
    p.alpha_d = a->k.alpha_d;
    p.beta_d = a->k.beta_d;
    return p;
}

template <typename T, int NT> cudaError_t gen_launch(G<T> p, cudaStream_t st)
{
    const int64_t chunk = (int64_t)65535 * NT;
    for (int64_t j0 = 0; j0 < p.n; j0 += chunk) {
        G<T> q = p;
        q.n = p.n - j0 < chunk ? p.n - j0 : chunk;
        q.b = p.b + j0 * p.ldb;
        q.c = p.c + j0 * p.ldc;
        const dim3 grid((unsigned)((p.rows + kGenWarps - 1) / kGenWarps), (unsigned)((q.n + NT - 1) / NT));
        gen_kernel<T, NT><<<grid, kGenWarps * 32, 0, st>>>(q);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

template <typename T> cudaError_t gen_run(const macko_nm_args *a)
{
    const G<T> p = make<T>(a);
    const cudaStream_t st = (cudaStream_t)a->k.stream;
    if (p.n <= 1)
        return gen_launch<T, 1>(p, st);
    if (p.n <= 2)
        return gen_launch<T, 2>(p, st);
    if (p.n <= 4)
        return gen_launch<T, 4>(p, st);
    return gen_launch<T, 8>(p, st);
}

template <int S4, int BN, int KB> cudaError_t simt_launch(const G<float> &p, cudaStream_t st)
{
    const int64_t chunk = (int64_t)65535 * BN;
    for (int64_t j0 = 0; j0 < p.n; j0 += chunk) {
        G<float> q = p;
        q.n = p.n - j0 < chunk ? p.n - j0 : chunk;
        q.b = p.b + j0 * p.ldb;
        q.c = p.c + j0 * p.ldc;
        const dim3 grid((unsigned)((p.rows + kBM - 1) / kBM), (unsigned)((q.n + BN - 1) / BN), (unsigned)q.splits);
        if (q.splits > 1)
            simt_kernel<S4, BN, KB, true><<<grid, 2 * BN, Simt<S4, BN, KB>::bytes, st>>>(q);
        else
            simt_kernel<S4, BN, KB, false><<<grid, 2 * BN, Simt<S4, BN, KB>::bytes, st>>>(q);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess && q.splits > 1) {
            const int64_t want = (p.rows + 255) / 256;
            simt_reduce<<<dim3((unsigned)(want < 1024 ? want : 1024), (unsigned)q.n), 256, 0, st>>>(q);
            e = cudaGetLastError();
        }
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* The instances: configuration 0 (BN = 128) takes 64 columns per step where a 32-column step holds at most 16 slots
 * (S4 = 4..32 for 64 columns), 32 columns otherwise (S4 = 20..32); configuration 1 (BN = 64) 32 columns (S4 =
 * 4..32). */
template <int BN, int KB, int S4> struct SimtInst {
    static cudaError_t launch(const G<float> &p, cudaStream_t st) { return simt_launch<S4, BN, KB>(p, st); }
    static constexpr int bytes = Simt<S4, BN, KB>::bytes;
    /* raises the instance's shared-memory limit where the device allows it (others are never launched) */
    static cudaError_t prepare(int max_smem_optin)
    {
        if (bytes > max_smem_optin)
            return cudaSuccess;
        cudaError_t e = cudaSuccess;
        for (auto k : {simt_kernel<S4, BN, KB, false>, simt_kernel<S4, BN, KB, true>}) {
            if (e == cudaSuccess)
                e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, Simt<S4, BN, KB>::bytes);
            if (e == cudaSuccess)
                e = cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                         cudaSharedmemCarveoutMaxShared);
        }
        return e;
    }
};

/* F(inst) for the instance of (BN, KB, S4) */
template <int BN, int KB, int LO, class F> cudaError_t simt_pick(int s4, F f)
{
    switch (s4) {
    case 4: if constexpr (LO <= 4) return f(SimtInst<BN, KB, 4>()); break;
    case 8: if constexpr (LO <= 8) return f(SimtInst<BN, KB, 8>()); break;
    case 12: if constexpr (LO <= 12) return f(SimtInst<BN, KB, 12>()); break;
    case 16: if constexpr (LO <= 16) return f(SimtInst<BN, KB, 16>()); break;
    case 20: return f(SimtInst<BN, KB, 20>());
    case 24: return f(SimtInst<BN, KB, 24>());
    case 28: return f(SimtInst<BN, KB, 28>());
    case 32: return f(SimtInst<BN, KB, 32>());
    default: break;
    }
    return cudaErrorInvalidValue;
}

/* Calls f with the instance that runs pattern (nn, mm) in configuration cfg. */
template <class F> cudaError_t simt_for(int cfg, int nn, int mm, F f)
{
    const int s32 = nn * 32 / mm;
    if (cfg == 1)
        return simt_pick<64, 32, 4>((s32 + 3) & ~3, f);
    if (s32 <= 16)
        return simt_pick<128, 64, 4>((2 * s32 + 3) & ~3, f);
    return simt_pick<128, 32, 20>((s32 + 3) & ~3, f);
}

cudaError_t simt_run(const macko_nm_args *a)
{
    G<float> p = make<float>(a);
    if (a->splits > 1 && a->ws != nullptr) { /* one column chunk (the caller's rule: n <= 128) */
        p.splits = a->splits;
        p.ws = a->ws;
    }
    const cudaStream_t st = (cudaStream_t)a->k.stream;
    /* the caller passes the forced configuration or the matrix's (macko_nm_simt_auto_cfg) */
    const int cfg = a->cfg >= 0 ? a->cfg : 0;
    return simt_for(cfg, p.nn, p.mm, [&](auto inst) { return decltype(inst)::launch(p, st); });
}

cudaError_t simt_prepare_all(int max_smem_optin)
{
    cudaError_t e = cudaSuccess;
    auto prep = [max_smem_optin](auto inst) { return decltype(inst)::prepare(max_smem_optin); };
    for (int s32 = 1; s32 <= 32 && e == cudaSuccess; s32++) /* (nn, 32): every slot count */
        for (int cfg = 0; cfg < 2 && e == cudaSuccess; cfg++)
            e = simt_for(cfg, s32, 32, prep);
    return e;
}

} // namespace

extern "C" int macko_nm_simt_ok(int nn, int mm, int vv, int64_t kept)
{
    (void)nn;
    (void)mm;
    (void)kept;
    return vv >= 8;
}

extern "C" int macko_nm_simt_smem(int cfg, int nn, int mm)
{
    if (cfg < 0 || cfg >= 2 || mm <= 0 || nn < 1 || nn > mm || 32 % mm != 0)
        return -1;
    int bytes = -1;
    simt_for(cfg, nn, mm, [&bytes](auto inst) {
        bytes = decltype(inst)::bytes;
        return cudaSuccess;
    });
    return bytes;
}

extern "C" int macko_nm_simt_configs(void) { return 2; }

/* SIMT's blocks along K: where the 128-row blocks of one column tile (n <= 128) fill fewer than half the SMs, enough
 * splits for about one block per SM (SIMT runs one block per SM in configuration 0), each at least 8 K-slices of 64
 * columns; at most 16, and no more than the workspace holds (splits * rows * n floats). The same for every
 * configuration, so that they split at the same columns. */
extern "C" int macko_nm_simt_splits(int64_t rows, int64_t cols, int64_t n, int sm_count, int64_t ws_floats)
{
    const int64_t blocks = (rows + 127) / 128, slices = (cols + 63) / 64;
    int64_t s;
    if (n > 128 || blocks <= 0 || sm_count <= 0 || 2 * blocks > sm_count)
        return 1;
    s = sm_count / blocks;
    if (s > slices / 8)
        s = slices / 8;
    if (s > 16)
        s = 16;
    while (s > 1 && s * rows * n > ws_floats)
        s--;
    return s < 1 ? 1 : (int)s;
}

extern "C" int macko_nm_gen_prepare(int max_smem_optin)
{
    const cudaError_t e = simt_prepare_all(max_smem_optin);
    if (e != cudaSuccess)
        cudaGetLastError();
    return (int)e;
}

extern "C" int macko_nm_gen_spmm(const macko_nm_args *a)
{
    if (a->path == MACKO_NM_PATH_SIMT)
        return (int)simt_run(a);
    switch (a->combo) {
    case MACKO_COMBO_H: return (int)gen_run<__half>(a);
    case MACKO_COMBO_B: return (int)gen_run<__nv_bfloat16>(a);
    case MACKO_COMBO_S: return (int)gen_run<float>(a);
    case MACKO_COMBO_D: return (int)gen_run<double>(a);
    default: return (int)cudaErrorInvalidValue;
    }
}

extern "C" int macko_nm_spmm(const macko_nm_args *a)
{
    return a->path == MACKO_NM_PATH_SP24     ? macko_nm_sp24_spmm(a)
           : a->path == MACKO_NM_PATH_SP24WG ? macko_nm_sp24_wg_spmm(a)
                                             : macko_nm_gen_spmm(a);
}
