/* GPU conversion to MACKO: the pipeline's shared passes (launchers declared in convert.h).
 *
 * count (convert_dense.cu / convert_csr.cu: entries and nonzeros per row, CSR validated) -> host reads the totals
 * -> exclusive scan of the counts into int64 row pointers (CUB, here) -> fill (values and one delta byte per entry)
 * -> finish (here: deltas packed two per byte, low nibble = even entry; row pointers narrowed to int32 when
 * entries < 2^31). All integer work, no atomics on the arrays: the output is bit-identical to the host encoder's.
 */
#include "convert_common.cuh"

#include <cub/device/device_scan.cuh>

namespace {

/* ------------------------------------------------------------------ finish: pack deltas, narrow row_ptr */

/* Four nibbles of a 32-bit word of delta bytes (each < 16) side by side: byte j -> bits 4j..4j+3. */
__device__ __forceinline__ uint32_t pack4(uint32_t x)
{
    return (x & 0xFu) | ((x >> 4) & 0xF0u) | ((x >> 8) & 0xF00u) | ((x >> 12) & 0xF000u);
}

/* One 32-bit word of packed deltas (8 entries) per thread and step: entry j of the word is bits 4j..4j+3, which
 * is FORMAT.md's "entry k in byte k/2, low nibble if k is even" on a little-endian word. */
__global__ void finish_kernel(const int64_t *__restrict__ rp, int32_t *__restrict__ rp32, int64_t rows,
                              const uint8_t *__restrict__ dtmp, uint8_t *__restrict__ deltas, int64_t entries,
                              int64_t words)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        const int64_t k = 8 * i;
        uint32_t w = 0;
        if (k + 8 <= entries) {
            const uint2 p = reinterpret_cast<const uint2 *>(dtmp)[i];
            w = pack4(p.x) | (pack4(p.y) << 16);
        } else {
            for (int j = 0; j < 8 && k + j < entries; j++)
                w |= (uint32_t)dtmp[k + j] << (4 * j);
        }
        reinterpret_cast<uint32_t *>(deltas)[i] = w;
    }
    if (rp32 != nullptr)
        for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r <= rows; r += stride)
            rp32[r] = (int32_t)rp[r];
}

} // namespace

extern "C" int macko_conv_scan(void *temp, size_t *temp_bytes, int64_t *data, int64_t n, macko_stream_t stream)
{
    return (int)cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, data, data, n, (cudaStream_t)stream);
}

extern "C" int macko_conv_finish(const int64_t *rp, int32_t *rp32, int64_t rows, const uint8_t *dtmp,
                                 uint8_t *deltas, int64_t entries, int64_t entries_padded, int sm_count,
                                 macko_stream_t stream)
{
    const int64_t words = entries_padded / 8; /* entries_padded is a multiple of 8 */
    const int64_t work = words > rows + 1 ? words : rows + 1;
    finish_kernel<<<grid_for(finish_kernel, work, kBlock, sm_count), kBlock, 0, (cudaStream_t)stream>>>(
        rp, rp32, rows, dtmp, deltas, entries, words);
    return (int)cudaGetLastError();
}
