// Stream probe (bench/NOTES.md, sessions 5 and 16): how fast can one warp-per-row stream (MACKO-like: 16 B values +
// 4 B deltas per lane per 256-entry chunk) read memory on this GPU, as a function of prefetch depth, warps per SM,
// extra ALU work per chunk and access pattern (row streams, one linear sweep, or a block per row)? Not part of the
// library and not built by CMake: nvcc -O3 -arch=sm_90 -o stream_probe stream_probe.cu && ./stream_probe ROWS CPR
// (results: bench/results/experiments/H200-2026-11-23-stream-probe.txt; the block-row mode:
// H200-2026-12-02-s16-sweep-probe.txt).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

struct Chunk { uint4 v; uint32_t d; };

template <int D, int WORK, int MODE, int BPS>
__global__ void __launch_bounds__(256, BPS) probe(const uint4 *__restrict__ vals, const uint32_t *__restrict__ dl,
                                                   int rows, int cpr, uint32_t *out)
{
    const int lane = threadIdx.x & 31;
    const int W = gridDim.x * 8;
    const int w = blockIdx.x * 8 + (threadIdx.x >> 5);
    const long total = (long)rows * cpr;
    constexpr bool LINEAR = MODE == 1;
    // sequence of chunk ids this warp reads. MODE 0 (rows): warp w walks rows w, w+W, ...; MODE 1 (linear): chunks
    // w, w+W, ...; MODE 2 (block rows): block b walks rows b, b+G, ... as one list of chunks, warp i of the block
    // takes list positions i, i+8, ...
    const int wib = threadIdx.x >> 5;
    const long G = gridDim.x;
    auto chunk_id = [&](long k) -> long {
        if (MODE == 1) return (long)w + k * W;
        if (MODE == 2) {
            long pos = wib + 8 * k;
            long r = blockIdx.x + (pos / cpr) * G;
            return r * cpr + (pos % cpr);
        }
        long r = w + (k / cpr) * (long)W;
        return r * cpr + (k % cpr);
    };
    long nmine;
    if (MODE == 1) nmine = (total - w + W - 1) / W;
    else if (MODE == 2) { long nr = (rows - (long)blockIdx.x + G - 1) / G; long np = nr * cpr; nmine = np > wib ? (np - wib + 7) / 8 : 0; }
    else { long nr = (rows - w + W - 1) / W; nmine = nr * cpr; }
    if (MODE == 2 ? (blockIdx.x >= rows || nmine == 0) : (w >= (LINEAR ? total : rows))) return;
    Chunk buf[D];
#pragma unroll
    for (int i = 0; i < D; i++) {
        if (i < nmine) { long c = chunk_id(i); buf[i].v = __ldg(vals + c * 32 + lane); buf[i].d = __ldg(dl + c * 32 + lane); }
        else { buf[i].v = make_uint4(0,0,0,0); buf[i].d = 0; }
    }
    uint32_t acc = 0, a2 = lane;
    for (long k = 0; k < nmine; k += D) {
#pragma unroll
        for (int i = 0; i < D; i++) {
            Chunk cur = buf[i];
            long kn = k + i + D;
            if (kn < nmine) { long c = chunk_id(kn); buf[i].v = __ldg(vals + c * 32 + lane); buf[i].d = __ldg(dl + c * 32 + lane); }
            acc ^= cur.v.x + cur.v.y * 3 + cur.v.z * 5 + cur.v.w * 7 + cur.d;
#pragma unroll
            for (int j = 0; j < WORK; j++) a2 = a2 * 0x9E3779B1u + (acc >> (j & 7));
            acc += __shfl_xor_sync(0xffffffffu, acc, 1);
        }
    }
    if ((acc ^ a2) == 0x12345678u) out[w] = acc;
}

template <int D, int WORK, int MODE, int BPS>
float run(const uint4 *v, const uint32_t *d, int rows, int cpr, uint32_t *out, int sms, double bytes, const char *name)
{
    int grid = sms * BPS;
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int it = 0; it < 25; it++) {
        CK(cudaEventRecord(a));
        probe<D, WORK, MODE, BPS><<<grid, 256>>>(v, d, rows, cpr, out);
        CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (it >= 5) t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    float us = t[t.size() / 2] * 1000.f;
    int regs = 0; cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, probe<D, WORK, MODE, BPS>)); regs = fa.numRegs;
    printf("%-8s D=%d work=%3d blocks/SM=%d regs=%2d  %8.1f us  %6.0f GB/s\n", name, D, WORK, BPS, regs, us, bytes / us / 1e3);
    return us;
}

int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 12288;
    int cpr = argc > 2 ? atoi(argv[2]) : 24; // 12288^2 d=0.5: 6144 entries per row = 24 chunks
    int dev = 0; cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, dev));
    long nchunks = (long)rows * cpr;
    double bytes = nchunks * 640.0;
    printf("%s, %d SMs; %d rows x %d chunks = %.1f MB\n", p.name, p.multiProcessorCount, rows, cpr, bytes / 1e6);
    uint4 *v; uint32_t *d, *out;
    CK(cudaMalloc(&v, nchunks * 512)); CK(cudaMalloc(&d, nchunks * 128)); CK(cudaMalloc(&out, 1 << 20));
    CK(cudaMemset(v, 1, nchunks * 512)); CK(cudaMemset(d, 2, nchunks * 128));
    // copy bandwidth
    {
        void *s, *t; size_t n = 1ul << 30; CK(cudaMalloc(&s, n)); CK(cudaMalloc(&t, n));
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        CK(cudaMemcpy(t, s, n, cudaMemcpyDeviceToDevice));
        cudaEventRecord(a); for (int i = 0; i < 5; i++) cudaMemcpy(t, s, n, cudaMemcpyDeviceToDevice); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); printf("copy %.0f GB/s (read+write)\n", 2.0 * n * 5 / ms / 1e6);
        cudaFree(s); cudaFree(t);
    }
    int sms = p.multiProcessorCount;
#define R(D, WK, L, B) run<D, WK, L, B>(v, d, rows, cpr, out, sms, bytes, L == 1 ? "linear" : L == 2 ? "blockrow" : "rows")
    R(1, 0, 0, 6); R(2, 0, 0, 4); R(1, 0, 1, 6); R(1, 0, 2, 6); R(2, 0, 2, 4);
    R(1, 60, 0, 6); R(4, 60, 0, 4); R(1, 60, 1, 6); R(2, 60, 1, 6); R(1, 60, 2, 6); R(2, 60, 2, 6); R(2, 60, 2, 4);
    R(1, 30, 0, 6); R(1, 30, 1, 6); R(2, 30, 1, 6); R(1, 30, 2, 6); R(2, 30, 2, 6);
    return 0;
}
