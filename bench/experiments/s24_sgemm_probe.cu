// SGEMM probe (bench/NOTES.md, session 24): how fast is the fp32 SIMT path's multiply-add loop (kernels/spmm_simt.cu)
// on its own, with a dense A brought by cp.async instead of the MACKO decode, and in a few other thread-tile / stage
// shapes, against cublasSgemm (TF32 off) in the same run? Not part of the library and not built by CMake:
// nvcc -O3 -std=c++17 -arch=sm_90 -o sgemm_probe s24_sgemm_probe.cu -lcublas && ./sgemm_probe M N K
// (results: bench/results/experiments/H200-2026-12-03-s24-sgemm-probe.txt).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstdint>
#include <algorithm>
#include <cmath>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp16(uint32_t d, const void *s) { asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(d), "l"(s) : "memory"); }
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void waitg() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory"); }

// C (M x N, col-major, ldc = M) = A (At: [k][m], K x M) * B ([n][k], col-major K x N)
// block 128 rows x BN cols; THREADS threads of 8 rows x TN cols (rows 8*ty.., cols tx + TX*j); BK per stage; S stages
template <int THREADS, int TN, int BK, int S, int BPS, int PF>
__global__ void __launch_bounds__(THREADS, BPS) gemm(const float *At, const float *B, float *C, int M, int N, int K)
{
    constexpr int TX = THREADS / 16, BN = TX * TN, LDA = 128, LDB = BK + 4;
    constexpr int SA = BK * LDA, SB = BN * LDB;
    extern __shared__ __align__(16) float sm[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int tx = (warp % (TX / 8)) * 8 + (lane & 7), ty = (warp / (TX / 8)) * 4 + (lane >> 3);
    const int m0 = blockIdx.x * 128, n0 = blockIdx.y * BN;
    auto load = [&](int st, int kt) {
        float *As = sm + st * (SA + SB), *Bs = As + SA;
        const int k0 = kt * BK;
        for (int x = tid; x < BK * 32; x += THREADS) { const int k = x / 32, u = x % 32; cp16(sa(As + k * LDA + 4 * u), At + (size_t)(k0 + k) * M + m0 + 4 * u); }
        for (int x = tid; x < BN * (BK / 4); x += THREADS) { const int c = x / (BK / 4), u = x % (BK / 4); cp16(sa(Bs + c * LDB + 4 * u), B + (size_t)(n0 + c) * K + k0 + 4 * u); }
    };
    float acc[8][TN];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.f;
    const int T = K / BK;
#pragma unroll
    for (int s = 0; s < S - 1; s++) { if (s < T) load(s, s); commit(); }
    for (int t = 0; t < T; t++) {
        waitg<S - 2>();
        __syncthreads();
        if (t + S - 1 < T) load((t + S - 1) % S, t + S - 1);
        commit();
        const float *A = sm + (t % S) * (SA + SB) + ty * 8;
        const float *Bp = sm + (t % S) * (SA + SB) + SA + tx * LDB;
        if (PF == 0) {
#pragma unroll 4
            for (int k = 0; k < BK; k += 4) {
                float4 bq[TN];
#pragma unroll
                for (int j = 0; j < TN; j++) bq[j] = *reinterpret_cast<const float4 *>(Bp + j * TX * LDB + k);
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const float4 x0 = *reinterpret_cast<const float4 *>(A + (k + q) * LDA);
                    const float4 x1 = *reinterpret_cast<const float4 *>(A + (k + q) * LDA + 4);
                    const float a[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
                    for (int i = 0; i < 8; i++)
#pragma unroll
                        for (int j = 0; j < TN; j++) {
                            const float b = q == 0 ? bq[j].x : q == 1 ? bq[j].y : q == 2 ? bq[j].z : bq[j].w;
                            acc[i][j] = fmaf(a[i], b, acc[i][j]);
                        }
                }
            }
        } else { // explicit register double buffering of A (next k) and B (next group of 4 k)
            float4 bq[2][TN], ax[2][2];
#pragma unroll
            for (int j = 0; j < TN; j++) bq[0][j] = *reinterpret_cast<const float4 *>(Bp + j * TX * LDB);
            ax[0][0] = *reinterpret_cast<const float4 *>(A);
            ax[0][1] = *reinterpret_cast<const float4 *>(A + 4);
#pragma unroll
            for (int k = 0; k < BK; k++) {
                const int g = (k >> 2) & 1, q = k & 3, c = k & 1;
                if (k + 1 < BK) {
                    ax[c ^ 1][0] = *reinterpret_cast<const float4 *>(A + (k + 1) * LDA);
                    ax[c ^ 1][1] = *reinterpret_cast<const float4 *>(A + (k + 1) * LDA + 4);
                }
                if (q == 0 && k + 4 < BK) {
#pragma unroll
                    for (int j = 0; j < TN; j++) bq[g ^ 1][j] = *reinterpret_cast<const float4 *>(Bp + j * TX * LDB + k + 4);
                }
                const float a[8] = {ax[c][0].x, ax[c][0].y, ax[c][0].z, ax[c][0].w, ax[c][1].x, ax[c][1].y, ax[c][1].z, ax[c][1].w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++) {
                        const float b = q == 0 ? bq[g][j].x : q == 1 ? bq[g][j].y : q == 2 ? bq[g][j].z : bq[g][j].w;
                        acc[i][j] = fmaf(a[i], b, acc[i][j]);
                    }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) C[(size_t)(n0 + tx + TX * j) * M + m0 + ty * 8 + i] = acc[i][j];
}

template <int THREADS, int TN, int BK, int S, int BPS, int PF>
double run(const char *name, const float *A, const float *B, float *C, int M, int N, int K, const float *ref, std::vector<float> &h)
{
    constexpr int TX = THREADS / 16, BN = TX * TN;
    const size_t smem = (size_t)S * (BK * 128 + BN * (BK + 4)) * 4;
    auto k = gemm<THREADS, TN, BK, S, BPS, PF>;
    if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess) { printf("%-28s smem %zu: no\n", name, smem); cudaGetLastError(); return 0; }
    cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, k);
    int occ = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, THREADS, smem);
    dim3 g(M / 128, N / BN);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (int i = 0; i < 3; i++) k<<<g, THREADS, smem>>>(A, B, C, M, N, K);
    CK(cudaDeviceSynchronize());
    std::vector<float> ts;
    for (int r = 0; r < 7; r++) { cudaEventRecord(e0); k<<<g, THREADS, smem>>>(A, B, C, M, N, K); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms); }
    std::sort(ts.begin(), ts.end());
    CK(cudaMemcpy(h.data(), C, (size_t)M * 64 * 4, cudaMemcpyDeviceToHost));
    double err = 0; for (size_t i = 0; i < (size_t)M * 64; i++) err = fmax(err, fabs(h[i] - ref[i]));
    const double tf = 2.0 * M * N * K / (ts[3] * 1e-3) / 1e12;
    printf("%-28s regs %3d spill %zu occ %d smem %6zu: %8.3f ms %6.2f TF/s  maxerr %.2e\n", name, fa.numRegs, fa.localSizeBytes, occ, smem, ts[3], tf, err);
    return tf;
}

int main(int argc, char **argv)
{
    const int M = argc > 1 ? atoi(argv[1]) : 12288, N = argc > 2 ? atoi(argv[2]) : 2048, K = argc > 3 ? atoi(argv[3]) : 12288;
    std::vector<float> ha((size_t)M * K), hb((size_t)K * N);
    uint32_t s = 1; for (auto &x : ha) { s = s * 1664525u + 1013904223u; x = ((s >> 9) & 1023) / 1024.f - 0.5f; }
    for (auto &x : hb) { s = s * 1664525u + 1013904223u; x = ((s >> 9) & 1023) / 1024.f - 0.5f; }
    float *A, *B, *C, *Cr;
    CK(cudaMalloc(&A, ha.size() * 4)); CK(cudaMalloc(&B, hb.size() * 4)); CK(cudaMalloc(&C, (size_t)M * N * 4)); CK(cudaMalloc(&Cr, (size_t)M * N * 4));
    CK(cudaMemcpy(A, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(B, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    cublasHandle_t hb_; cublasCreate(&hb_); cublasSetMathMode(hb_, CUBLAS_DEFAULT_MATH);
    const float one = 1, zero = 0;
    // At is [k][m] = A^T stored col-major M x K with lda = M... At[k*M+m] = A(m,k): that is column-major A (M x K, lda M)
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (int i = 0; i < 3; i++) cublasSgemm(hb_, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, M, B, K, &zero, Cr, M);
    std::vector<float> ts;
    for (int r = 0; r < 7; r++) { cudaEventRecord(e0); cublasSgemm(hb_, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, M, B, K, &zero, Cr, M); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms); }
    std::sort(ts.begin(), ts.end());
    printf("%d x %d x %d\ncublasSgemm                  %8.3f ms %6.2f TF/s\n", M, N, K, ts[3], 2.0 * M * N * K / (ts[3] * 1e-3) / 1e12);
    std::vector<float> ref((size_t)M * 64), h((size_t)M * 64);
    CK(cudaMemcpy(ref.data(), Cr, ref.size() * 4, cudaMemcpyDeviceToHost));
    run<256, 8, 64, 2, 1, 0>("a T256 TN8 BK64 S2 (ours)", A, B, C, M, N, K, ref.data(), h);
    run<256, 8, 64, 2, 1, 1>("a' + reg double buffer", A, B, C, M, N, K, ref.data(), h);
    run<256, 8, 32, 3, 1, 0>("b T256 TN8 BK32 S3", A, B, C, M, N, K, ref.data(), h);
    run<256, 8, 32, 3, 1, 1>("b' + reg double buffer", A, B, C, M, N, K, ref.data(), h);
    run<256, 8, 32, 2, 2, 0>("f T256 TN8 BK32 S2 2/SM", A, B, C, M, N, K, ref.data(), h);
    run<256, 8, 16, 3, 2, 1>("f' T256 TN8 BK16 S3 2/SM pf", A, B, C, M, N, K, ref.data(), h);
    run<128, 16, 32, 2, 2, 0>("c T128 TN16 BK32 S2 2/SM", A, B, C, M, N, K, ref.data(), h);
    run<128, 16, 32, 3, 2, 0>("d T128 TN16 BK32 S3 2/SM", A, B, C, M, N, K, ref.data(), h);
    run<128, 16, 16, 4, 2, 1>("e T128 TN16 BK16 S4 2/SM pf", A, B, C, M, N, K, ref.data(), h);
    run<128, 16, 32, 3, 2, 1>("d' T128 TN16 BK32 S3 pf", A, B, C, M, N, K, ref.data(), h);
    return 0;
}
