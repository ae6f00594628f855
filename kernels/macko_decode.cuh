/* The MACKO chunk decode shared by the SpMV (kernels/spmv.cu) and SpMM (kernels/spmm.cu) kernels (the row walk around
 * it: macko_walk.cuh). Device code only, header-only; every function is inlined into the kernels that use it.
 *
 * A warp walks one row at a time in steps of kChunk = 256 consecutive entries: lane L owns the 8-entry group at
 * chunk_base + 8L (values as one or two 16-byte loads, 8 delta nibbles as one 32-bit word). The first chunk of a row
 * starts at row_begin rounded down to 8, so a lane may see entries of the neighbouring rows; decode_chunk zeroes
 * their values (and their deltas, so they do not move the columns), and callers skip zero-valued entries by
 * predicate (never multiply them: 0*Inf = NaN). Padding entries (value +-0) are skipped the same way.
 *
 * Column of entry k of a row starting at b:  col(k) = (k - b) + sum_{j=b..k} delta_j.  The delta sums are a packed
 * in-word prefix (nibbles -> bytes, pair sums, multiply by 0x01010101), one 5-step warp scan of the lane totals and
 * a carry across chunks, so the per-entry cost is one byte extract and one address computation.
 */
#ifndef MACKO_DECODE_CUH
#define MACKO_DECODE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <type_traits>

namespace macko_decode {

constexpr int kWarp = 32;
constexpr int kLaneEntries = 8;
constexpr int kChunk = kWarp * kLaneEntries; /* entries per warp step */
constexpr unsigned kFull = 0xFFFFFFFFu;

/* ---- per value type: one lane's 8-entry group and how to read it (the matrix side: Group, load, zero, nonzero,
 * value, mask), and the element as a vector of x / B / C (x_bits, x_value, packed_value, y_at, y_put). Acc: the
 * accumulation type (fp32, fp64 for fp64); Bits: an element's raw bits as loaded. */
template <typename T> struct Ty;

/* The 16-bit value types share everything but the conversion to and from float (Cv: to_float(bits of one value in
 * the low half), lo / hi (the values of a word's halves), from_float). */
template <typename H, typename Cv> struct Ty16 {
    using Acc = float;
    using Bits = uint32_t;
    struct Group {
        uint4 v;    /* 8 16-bit values, two per word, entry 2j in the low half of word j */
        uint32_t d; /* 8 delta nibbles, entry i at bits 4i */
    };
    static __device__ __forceinline__ uint32_t word(const Group &g, int j)
    {
        return j == 0 ? g.v.x : j == 1 ? g.v.y : j == 2 ? g.v.z : g.v.w;
    }
    static __device__ __forceinline__ void set_word(Group &g, int j, uint32_t w)
    {
        if (j == 0) g.v.x = w; else if (j == 1) g.v.y = w; else if (j == 2) g.v.z = w; else g.v.w = w;
    }
    template <typename U> static __device__ __forceinline__ Group load(const H *vals, const uint32_t *dwords, U k0)
    {
        Group g;
        g.v = __ldg(reinterpret_cast<const uint4 *>(vals + k0));
        g.d = __ldg(dwords + (k0 >> 3));
        return g;
    }
    static __device__ __forceinline__ Group zero()
    {
        Group g;
        g.v = make_uint4(0, 0, 0, 0);
        g.d = 0;
        return g;
    }
    /* Entry i (compile-time) is stored and nonzero. */
    static __device__ __forceinline__ bool nonzero(const Group &g, int i)
    {
        return (word(g, i >> 1) & ((i & 1) ? 0x7FFF0000u : 0x00007FFFu)) != 0;
    }
    static __device__ __forceinline__ float value(const Group &g, int i)
    {
        const uint32_t w = word(g, i >> 1);
        return (i & 1) ? Cv::hi(w) : Cv::lo(w);
    }
    /* Zero the entries whose bit in keep8 is clear. */
    static __device__ __forceinline__ void mask(Group &g, uint32_t keep8)
    {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t m = (((keep8 >> (2 * j)) & 1u) ? 0x0000FFFFu : 0u) |
                         (((keep8 >> (2 * j + 1)) & 1u) ? 0xFFFF0000u : 0u);
            set_word(g, j, word(g, j) & m);
        }
    }
    /* x as raw bits (0 when not loaded), so that only the load itself is predicated. */
    static __device__ __forceinline__ uint32_t x_bits(const H *p)
    {
        return __ldg(reinterpret_cast<const unsigned short *>(p));
    }
    static __device__ __forceinline__ float x_value(uint32_t bits) { return Cv::to_float(bits); }
    /* Element j of a packed row of values (two per 32-bit word, element 2w in the low half of word w). */
    static __device__ __forceinline__ float packed_value(const uint32_t *words, int j)
    {
        const uint32_t w = words[j >> 1];
        return (j & 1) ? Cv::hi(w) : Cv::lo(w);
    }
    static constexpr int kPerWord = 2;
    static __device__ __forceinline__ float y_at(const H *p)
    {
        return Cv::to_float(*reinterpret_cast<const unsigned short *>(p));
    }
    static __device__ __forceinline__ void y_put(H *p, float v) { *p = Cv::from_float(v); }
};

struct HalfCv {
    static __device__ __forceinline__ float lo(uint32_t w)
    {
        return __low2float(*reinterpret_cast<const __half2 *>(&w));
    }
    static __device__ __forceinline__ float hi(uint32_t w)
    {
        return __high2float(*reinterpret_cast<const __half2 *>(&w));
    }
    static __device__ __forceinline__ float to_float(uint32_t bits)
    {
        return __half2float(__ushort_as_half((unsigned short)bits));
    }
    static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
};
/* A bf16 value is the upper half of a float: the conversions are exact shifts and masks. */
struct Bf16Cv {
    static __device__ __forceinline__ float lo(uint32_t w) { return __uint_as_float(w << 16); }
    static __device__ __forceinline__ float hi(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }
    static __device__ __forceinline__ float to_float(uint32_t bits) { return __uint_as_float(bits << 16); }
    static __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};

template <> struct Ty<__half> : Ty16<__half, HalfCv> {};
template <> struct Ty<__nv_bfloat16> : Ty16<__nv_bfloat16, Bf16Cv> {};

template <> struct Ty<float> {
    using Acc = float;
    using Bits = uint32_t;
    struct Group {
        uint4 v0, v1; /* 8 fp32 values */
        uint32_t d;
    };
    static __device__ __forceinline__ uint32_t word(const Group &g, int j)
    {
        switch (j) {
        case 0: return g.v0.x;
        case 1: return g.v0.y;
        case 2: return g.v0.z;
        case 3: return g.v0.w;
        case 4: return g.v1.x;
        case 5: return g.v1.y;
        case 6: return g.v1.z;
        default: return g.v1.w;
        }
    }
    template <typename U> static __device__ __forceinline__ Group load(const float *vals, const uint32_t *dwords, U k0)
    {
        Group g;
        g.v0 = __ldg(reinterpret_cast<const uint4 *>(vals + k0));
        g.v1 = __ldg(reinterpret_cast<const uint4 *>(vals + k0) + 1);
        g.d = __ldg(dwords + (k0 >> 3));
        return g;
    }
    static __device__ __forceinline__ Group zero()
    {
        Group g;
        g.v0 = make_uint4(0, 0, 0, 0);
        g.v1 = make_uint4(0, 0, 0, 0);
        g.d = 0;
        return g;
    }
    static __device__ __forceinline__ bool nonzero(const Group &g, int i) { return (word(g, i) & 0x7FFFFFFFu) != 0; }
    static __device__ __forceinline__ float value(const Group &g, int i) { return __uint_as_float(word(g, i)); }
    static __device__ __forceinline__ void mask(Group &g, uint32_t keep8)
    {
        uint32_t m[8];
#pragma unroll
        for (int j = 0; j < 8; j++)
            m[j] = ((keep8 >> j) & 1u) ? kFull : 0u;
        g.v0.x &= m[0]; g.v0.y &= m[1]; g.v0.z &= m[2]; g.v0.w &= m[3];
        g.v1.x &= m[4]; g.v1.y &= m[5]; g.v1.z &= m[6]; g.v1.w &= m[7];
    }
    static __device__ __forceinline__ uint32_t x_bits(const float *p)
    {
        return __ldg(reinterpret_cast<const unsigned int *>(p));
    }
    static __device__ __forceinline__ float x_value(uint32_t bits) { return __uint_as_float(bits); }
    static __device__ __forceinline__ float packed_value(const uint32_t *words, int j)
    {
        return __uint_as_float(words[j]);
    }
    static constexpr int kPerWord = 1;
    static __device__ __forceinline__ float y_at(const float *p) { return *p; }
    static __device__ __forceinline__ void y_put(float *p, float v) { *p = v; }
};

/* fp64: 8 values are four 16-byte loads; accumulation in double. No packed rows (the staged SpMM paths are not
 * built for fp64). */
template <> struct Ty<double> {
    using Acc = double;
    using Bits = unsigned long long;
    struct Group {
        uint4 v[4]; /* entry 2j: words (v[j].x, v[j].y), entry 2j+1: (v[j].z, v[j].w); low word first */
        uint32_t d;
    };
    template <typename U> static __device__ __forceinline__ Group load(const double *vals, const uint32_t *dwords, U k0)
    {
        Group g;
#pragma unroll
        for (int j = 0; j < 4; j++)
            g.v[j] = __ldg(reinterpret_cast<const uint4 *>(vals + k0) + j);
        g.d = __ldg(dwords + (k0 >> 3));
        return g;
    }
    static __device__ __forceinline__ Group zero()
    {
        Group g;
#pragma unroll
        for (int j = 0; j < 4; j++)
            g.v[j] = make_uint4(0, 0, 0, 0);
        g.d = 0;
        return g;
    }
    static __device__ __forceinline__ uint32_t lo(const Group &g, int i)
    {
        return (i & 1) ? g.v[i >> 1].z : g.v[i >> 1].x;
    }
    static __device__ __forceinline__ uint32_t hi(const Group &g, int i)
    {
        return (i & 1) ? g.v[i >> 1].w : g.v[i >> 1].y;
    }
    static __device__ __forceinline__ bool nonzero(const Group &g, int i)
    {
        return (lo(g, i) | (hi(g, i) & 0x7FFFFFFFu)) != 0;
    }
    static __device__ __forceinline__ double value(const Group &g, int i)
    {
        return __hiloint2double((int)hi(g, i), (int)lo(g, i));
    }
    static __device__ __forceinline__ void mask(Group &g, uint32_t keep8)
    {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const uint32_t m0 = ((keep8 >> (2 * j)) & 1u) ? kFull : 0u, m1 = ((keep8 >> (2 * j + 1)) & 1u) ? kFull : 0u;
            g.v[j].x &= m0; g.v[j].y &= m0; g.v[j].z &= m1; g.v[j].w &= m1;
        }
    }
    static __device__ __forceinline__ unsigned long long x_bits(const double *p)
    {
        return __ldg(reinterpret_cast<const unsigned long long *>(p));
    }
    static __device__ __forceinline__ double x_value(unsigned long long bits)
    {
        return __longlong_as_double((long long)bits);
    }
    static __device__ __forceinline__ double y_at(const double *p) { return *p; }
    static __device__ __forceinline__ void y_put(double *p, double v) { *p = v; }
};

/* acc + a*x in the accumulation type, fused (fp32: fmaf, as always). */
__device__ __forceinline__ float fma_acc(float a, float x, float acc) { return fmaf(a, x, acc); }
__device__ __forceinline__ double fma_acc(double a, double x, double acc) { return fma(a, x, acc); }

/* Byte j (compile-time) of w, zero-extended: one PRMT. */
__device__ __forceinline__ uint32_t byte_of(uint32_t w, int j) { return __byte_perm(w, 0u, 0x4440u | (uint32_t)j); }

/* The group at k0 when it holds entries of the row ending at e, else zeros (never reads past round8(e), which is
 * inside the arrays since entries_padded is a multiple of 8). */
template <typename T, typename IDX>
__device__ __forceinline__ typename Ty<T>::Group load_group(const T *values, const uint32_t *dwords, IDX k0, IDX e)
{
    if (k0 < e)
        return Ty<T>::load(values, dwords, (typename std::make_unsigned<IDX>::type)k0); /* k0 >= 0 here */
    return Ty<T>::zero();
}

/* Inclusive prefix sum over the warp: the shuffle's own validity predicate guards the add (2 instructions a step). */
__device__ __forceinline__ int warp_inclusive_scan(int v)
{
#pragma unroll
    for (int o = 1; o < kWarp; o <<= 1)
        asm volatile("{\n\t.reg .s32 t;\n\t.reg .pred p;\n\t"
                     "shfl.sync.up.b32 t|p, %0, %1, 0, -1;\n\t"
                     "@p add.s32 %0, %0, t;\n\t}"
                     : "+r"(v)
                     : "r"(o));
    return v;
}

/* The columns of one lane's 8 entries after decode_chunk: entry i is at column base + off(i). */
template <typename IDX> struct ChunkCols {
    IDX base;
    uint32_t e_even, e_odd; /* byte j: offset of entry 2j (e_even) and 2j+1 (e_odd) from base */
    __device__ __forceinline__ uint32_t off(int i) const { return byte_of((i & 1) ? e_odd : e_even, i >> 1); }
};

/* Decodes the chunk at cb of the row [b, e): zeroes the entries of cur outside the row (values and deltas) and
 * returns this lane's columns. carry: delta sum of the row's entries before cb (updated to include this chunk). */
template <typename T, typename IDX>
__device__ __forceinline__ ChunkCols<IDX> decode_chunk(typename Ty<T>::Group &cur, IDX cb, IDX b, IDX e, int lane,
                                                       IDX &carry)
{
    const IDX k0 = cb + (IDX)(lane * kLaneEntries);
    if (k0 < b || k0 + kLaneEntries > e) {
        /* Row boundary inside this lane's group: keep entries [b, e) only. */
        const int s = k0 < b ? (int)(b - k0) : 0;                                  /* 0..7 */
        const int t = k0 + kLaneEntries <= e ? 8 : (k0 < e ? (int)(e - k0) : 0); /* 0..8 */
        const uint32_t keep = (0xFFu << s) & (0xFFu >> (8 - t));
        Ty<T>::mask(cur, keep);
        cur.d &= kFull << (4 * s); /* deltas of the previous row must not move the columns */
    }

    /* In-word prefix of the delta nibbles (+ entry index), packed in bytes. */
    const uint32_t w = cur.d;
    const uint32_t lo = w & 0x0F0F0F0Fu;          /* byte j: delta of entry 2j */
    const uint32_t hi = (w >> 4) & 0x0F0F0F0Fu;   /* byte j: delta of entry 2j+1 */
    const uint32_t pre = (lo + hi) * 0x01010101u; /* byte j: deltas of entries 0..2j+1 summed (<= 120) */
    const int tot = (int)(pre >> 24);

    const int incl = warp_inclusive_scan(tot);
    ChunkCols<IDX> cc;
    cc.base = (k0 - b) + carry + (IDX)(incl - tot);
    carry += (IDX)__shfl_sync(kFull, incl, kWarp - 1);
    cc.e_odd = pre + 0x07050301u;        /* entry 2j+1: prefix + index */
    cc.e_even = pre - hi + 0x06040200u;  /* entry 2j:   prefix + index */
    return cc;
}

} // namespace macko_decode

#endif
