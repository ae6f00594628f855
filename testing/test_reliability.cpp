/* Reliability (host): hostile CSR indices, 64-bit sizes with tiny inputs (huge dimensions must fail cleanly or
 * succeed, never wrap), outputs left untouched on the error paths the other suites do not poison, a failed save that
 * keeps the earlier file, verbatim messages. Concurrent use from 8 threads: test_concurrency.cpp. */
#include "common.h"
#include "encode_ref.h"
#include "macko_internal.h"

#include <zlib.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace mt;

namespace
{

namespace fs = std::filesystem;

const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(uintptr_t(0xF00D0));

#define EXPECT_FAIL_AT(call, st, pos)                                                                                  \
    do {                                                                                                               \
        macko_status_t st_ = (call);                                                                                   \
        EXPECT_EQ(st_, (st)) << macko_get_status_name(st_) << ": " << macko_get_last_error_message();                  \
        EXPECT_EQ(macko_get_last_error_position(), (pos)) << macko_get_last_error_message();                           \
    } while (0)

/* ---------------------------------------------------------------- hostile CSR indices */

/* An int64 column index of INT64_MIN with index base one: removing the base overflowed int64 (found by fuzz_csr under
 * UBSan, testing/RELIABILITY.md). Now refused as out of range, with the index as given. */
TEST(HostileInput, CsrColumnIndexInt64MinWithBaseOne)
{
    const int64_t rp[2] = {1, 2};
    const uint16_t v[1] = {0x3C00};
    for (int64_t bad : {INT64_MIN, INT64_MIN + 1, INT64_C(0), INT64_MAX}) {
        SCOPED_TRACE(bad);
        const int64_t ci[1] = {bad};
        macko_mat_t A = kPoison;
        EXPECT_FAIL_AT(macko_mat_create_csr_host(&A, 1, 5, 1, rp, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ONE,
                                                 MACKO_R_16F),
                       MACKO_STATUS_INVALID_VALUE, 6);
        EXPECT_EQ(macko_get_last_error_message(), "macko_mat_create_csr_host: argument 6: row 0: col_ind[0] = " +
                                                      std::to_string(bad) + " is outside [1, 6)");
        EXPECT_EQ(A, kPoison);
    }
    /* Hostile int64 row pointers: INT64_MIN / INT64_MAX anywhere are refused on row_ptr (5) before col_ind is read. */
    const int64_t ci[1] = {1};
    for (int64_t bad : {INT64_MIN, INT64_MAX}) {
        const int64_t rp2[3] = {1, bad, 2};
        macko_mat_t A = kPoison;
        EXPECT_FAIL_AT(macko_mat_create_csr_host(&A, 2, 5, 1, rp2, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ONE,
                                                 MACKO_R_16F),
                       MACKO_STATUS_INVALID_VALUE, 5);
        EXPECT_EQ(A, kPoison);
    }
}

/* ---------------------------------------------------------------- 64-bit sizes */

/* 3 x 2^40 with 3 nonzeros: accepted, and the 2^40 columns survive every path (info, storage, CSR export, the
 * serialized header, the dense export's checks). */
TEST(Sizes64, CsrWideMatrixTinyNnz)
{
    const int64_t cols = INT64_C(1) << 40;
    const int64_t rp[4] = {0, 2, 2, 3};
    const int64_t ci[3] = {0, 20, 7};
    const uint16_t v[3] = {0x3C00, 0x4000, 0xC200};
    Mat A;
    ASSERT_EQ(macko_mat_create_csr_host(&A.A, 3, cols, 3, rp, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO,
                                        MACKO_R_16F),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    int64_t rows = -1, c = -1, nnz = -1, bytes = -1, entries = -1, ep = -1;
    double dens = -1;
    ASSERT_EQ(macko_mat_get_info(A.A, &rows, &c, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rows, 3);
    EXPECT_EQ(c, cols);
    EXPECT_EQ(nnz, 3);
    ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, &entries, &ep, &dens), MACKO_STATUS_SUCCESS);
    /* row 0: 1.0 at 0 | padding (skips 16) | 2.0 with delta 3 at 20; row 2: -3.0 with delta 7 */
    EXPECT_EQ(entries, 4);
    EXPECT_EQ(ep, 8);
    EXPECT_EQ(bytes, 8 * 2 + 4 + 4 * 4);
    EXPECT_DOUBLE_EQ(dens, 36.0 / (3.0 * 1099511627776.0 * 2.0));
    Arrays a = get_arrays(A.A);
    EXPECT_EQ(a.row_ptr, (std::vector<int64_t>{0, 3, 3, 4}));
    EXPECT_EQ(a.deltas, (Bytes{0xF0, 0x73, 0x00, 0x00}));

    /* CSR export: int64 with base 1 holds the columns; int32 cannot (largest column 2^40 - 1): position 5, untouched. */
    int64_t orp[4], oci[3];
    uint16_t ov[3];
    ASSERT_EQ(macko_mat_export_csr_host(A.A, orp, oci, ov, MACKO_INDEX_64I, MACKO_INDEX_BASE_ONE),
              MACKO_STATUS_SUCCESS);
    EXPECT_EQ(std::vector<int64_t>(orp, orp + 4), (std::vector<int64_t>{1, 3, 3, 4}));
    EXPECT_EQ(std::vector<int64_t>(oci, oci + 3), (std::vector<int64_t>{1, 21, 8}));
    EXPECT_EQ(std::vector<uint16_t>(ov, ov + 3), (std::vector<uint16_t>{0x3C00, 0x4000, 0xC200}));
    int32_t rp32o[4] = {-9, -9, -9, -9}, ci32o[3] = {-9, -9, -9};
    EXPECT_FAIL_AT(macko_mat_export_csr_host(A.A, rp32o, ci32o, ov, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO),
                   MACKO_STATUS_INVALID_VALUE, 5);
    for (int32_t x : rp32o)
        EXPECT_EQ(x, -9);
    for (int32_t x : ci32o)
        EXPECT_EQ(x, -9);

    /* Serialized: cols = 2^40 in the header (bytes 32..39), and back. */
    Bytes s = serialized(A.A);
    ASSERT_EQ(s.size(), 96u + 36u);
    EXPECT_EQ(s[32 + 5], 0x01); /* 2^40 = byte 5 of the little-endian int64 */
    Mat B;
    ASSERT_EQ(macko_mat_deserialize(&B.A, s.data(), (int64_t)s.size()), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(serialized(B.A), s);

    /* Dense export: 3 x 2^40 is within the element limit, so the checks reach values and ld, with exact numbers. */
    uint16_t dummy[4] = {1, 2, 3, 4};
    EXPECT_FAIL_AT(macko_mat_export_dense_host(A.A, nullptr, cols, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_export_dense_host: argument 2: values is NULL but rows*cols = 3298534883328");
    EXPECT_FAIL_AT(macko_mat_export_dense_host(A.A, dummy, cols - 1, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_export_dense_host: argument 3: ld is 1099511627775; it must be at least max(1, cols) = "
                 "1099511627776");
    EXPECT_EQ(dummy[0], 1);
}

/* A CSR matrix whose encoding cannot exist: one nonzero at column 2^56 - 1 needs 2^52 entries (8 PiB of fp16
 * values). The input is 3 numbers; the result is ALLOC_FAILED at position 0 with *A untouched, never a wrapped size.
 * (Under ASan this needs allocator_may_return_null=1, as .ci/reliability.sh sets.) */
TEST(Sizes64, CsrEncodingThatCannotBeAllocatedFailsCleanly)
{
    const int64_t cols = INT64_C(1) << 56;
    const int64_t rp[3] = {0, 1, 1};
    const int64_t ci[1] = {cols - 1};
    const float v[1] = {1.0f};
    for (macko_datatype_t t : {MACKO_R_16F, MACKO_R_32F}) {
        macko_mat_t A = kPoison;
        EXPECT_FAIL_AT(macko_mat_create_csr_host(&A, 2, cols, 1, rp, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO, t),
                       MACKO_STATUS_ALLOC_FAILED, 0);
        EXPECT_STREQ(macko_get_last_error_message(),
                     "macko_mat_create_csr_host: cannot allocate the encoding (4503599627370496 entries)");
        EXPECT_EQ(A, kPoison);
    }
    /* 17 such rows: 17 * 2^52 entries pass the 2^56 limit at row 16; counted in int64 without overflow. */
    std::vector<int64_t> rp17(18), ci17(17, cols - 1);
    std::vector<float> v17(17, 2.0f);
    for (int64_t r = 0; r <= 17; r++)
        rp17[(size_t)r] = r;
    macko_mat_t A = kPoison;
    EXPECT_FAIL_AT(macko_mat_create_csr_host(&A, 17, cols, 17, rp17.data(), ci17.data(), v17.data(), MACKO_INDEX_64I,
                                             MACKO_INDEX_BASE_ZERO, MACKO_R_32F),
                   MACKO_STATUS_INVALID_VALUE, 0);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_csr_host: the encoding would exceed 2^56 entries (row 16)");
    EXPECT_EQ(A, kPoison);
}

/* 2^16 x 2^56 (rows*cols = 2^72 overflows int64) imported from a 4-row_ptr-bytes-per-row input: accepted; the dense
 * export refuses it at position 1 instead of computing a wrapped size; storage and serialization stay exact. */
TEST(Sizes64, ImportedMatrixWhoseAreaOverflowsInt64)
{
    const int64_t rows = INT64_C(1) << 16, cols = INT64_C(1) << 56;
    std::vector<int32_t> rp((size_t)rows + 1, 0);
    Mat A;
    ASSERT_EQ(macko_mat_create_macko_host(&A.A, rows, cols, MACKO_R_16F, 0, nullptr, nullptr, rp.data()),
              MACKO_STATUS_SUCCESS);
    uint16_t out[2] = {7, 7};
    EXPECT_FAIL_AT(macko_mat_export_dense_host(A.A, out, cols, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_export_dense_host: argument 1: A (65536 x 72057594037927936) is too large for a dense array");
    EXPECT_EQ(out[0], 7);
    int64_t bytes = -1;
    double dens = -1;
    ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, nullptr, nullptr, &dens), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bytes, (rows + 1) * 4);
    EXPECT_GT(dens, 0.0);
    EXPECT_LT(dens, 1e-15);
    Bytes s = serialized(A.A);
    ASSERT_EQ(s.size(), (size_t)(96 + (rows + 1) * 4));
    Mat B;
    ASSERT_EQ(macko_mat_deserialize(&B.A, s.data(), (int64_t)s.size()), MACKO_STATUS_SUCCESS);
    int64_t r2 = -1, c2 = -1;
    ASSERT_EQ(macko_mat_get_info(B.A, &r2, &c2, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(r2, rows);
    EXPECT_EQ(c2, cols);
}

/* Dense requests whose sizes overflow are refused from the scalars alone, before the (tiny) buffer is read. Requests
 * that are valid but larger than the buffer cannot be tested honestly and are not here. */
TEST(Sizes64, DenseOverflowingRequestsRefusedBeforeReading)
{
    const uint16_t tiny[4] = {0x3C00, 0x3C00, 0x3C00, 0x3C00};
    struct Case {
        int64_t rows, cols, ld;
        macko_order_t order;
        int pos;
    };
    const int64_t K = INT64_C(1);
    const Case cases[] = {
        {K << 62, 4, 4, MACKO_ORDER_ROW, 2},              /* rows beyond 2^56 */
        {4, K << 62, K << 62, MACKO_ORDER_ROW, 3},        /* cols beyond 2^56 */
        {K << 28, K << 29, K << 29, MACKO_ORDER_ROW, 3},  /* rows*cols = 2^57 */
        {K << 32, K << 32, K << 32, MACKO_ORDER_COL, 3},  /* rows*cols = 2^64 wraps to 0 in uint64 */
        {K << 55, K << 55, K << 55, MACKO_ORDER_ROW, 3},  /* rows*cols = 2^110 */
        {3, 5, INT64_MAX, MACKO_ORDER_ROW, 6},            /* (rows-1)*ld overflows */
        {5, 3, INT64_MAX, MACKO_ORDER_COL, 6},            /* (cols-1)*ld overflows */
        {K << 20, K << 20, K << 40, MACKO_ORDER_ROW, 6},  /* (rows-1)*ld + cols ~ 2^60 */
        {K << 20, K << 20, INT64_MIN, MACKO_ORDER_COL, 6}, /* negative ld */
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.cols) + " ld " + std::to_string(c.ld));
        macko_mat_t A = kPoison;
        EXPECT_FAIL_AT(macko_mat_create_dense_host(&A, c.rows, c.cols, MACKO_R_16F, tiny, c.ld, c.order),
                       MACKO_STATUS_INVALID_VALUE, c.pos);
        EXPECT_EQ(A, kPoison);
    }
}

/* More than 2^31 entries on the host from a tiny input: 1 x 2^35 with one nonzero in the last column needs 2^31 - 1
 * padding entries before it, so entries = 2^31 and row_ptr switches to int64 (lapack_style_docs/FORMAT.md).
 * About 5.4 GiB of memory and 15 s (plain build), so it runs only with MACKO_TEST_LARGE=1 (as .ci/reliability.sh sets
 * for the ASan suite) and 8 GiB of free memory. */
TEST(Sizes64, HostEncodingWithTwoToThe31Entries)
{
    const char *large = std::getenv("MACKO_TEST_LARGE");
    if (large == nullptr || std::string(large) != "1")
        GTEST_SKIP() << "set MACKO_TEST_LARGE=1 to run (5.4 GiB, 15 s)";
    const double avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (avail < 8.0 * 1073741824.0)
        GTEST_SKIP() << "needs 8 GiB of free memory, " << avail / 1073741824.0 << " GiB available";
    const int64_t cols = INT64_C(1) << 35, e31 = INT64_C(1) << 31;
    const int64_t rp[2] = {0, 1}, ci[1] = {cols - 1};
    const uint16_t v[1] = {0xBC00}; /* -1 */
    Mat A;
    ASSERT_EQ(macko_mat_create_csr_host(&A.A, 1, cols, 1, rp, ci, v, MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO,
                                        MACKO_R_16F),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    const void *hv = nullptr, *hrp = nullptr;
    const uint8_t *hd = nullptr;
    macko_indextype_t rpt = MACKO_INDEX_32I;
    int64_t entries = -1, ep = -1, nnz = -1, bytes = -1;
    ASSERT_EQ(macko_mat_get_macko_host(A.A, &hv, &hd, &hrp, &rpt, &entries, &ep), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rpt, MACKO_INDEX_64I);
    EXPECT_EQ(entries, e31);
    EXPECT_EQ(ep, e31);
    EXPECT_EQ(static_cast<const int64_t *>(hrp)[0], 0);
    EXPECT_EQ(static_cast<const int64_t *>(hrp)[1], e31);
    EXPECT_EQ(static_cast<const uint16_t *>(hv)[e31 - 1], 0xBC00);
    EXPECT_EQ(static_cast<const uint16_t *>(hv)[e31 - 2], 0);
    EXPECT_EQ(hd[e31 / 2 - 1], 0xFF); /* padding (15) and the last entry's delta 15: 2^35 - 1 = 16 (2^31 - 1) + 15 */
    EXPECT_EQ(hd[0], 0xFF);
    ASSERT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, 1);
    ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bytes, e31 * 2 + e31 / 2 + 2 * 8);
    int64_t n = -1;
    ASSERT_EQ(macko_mat_serialized_size(A.A, &n), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(n, 96 + bytes);
    /* decoding walks all 2^31 entries with int64 positions */
    int64_t orp[2] = {-1, -1}, oci[1] = {-1};
    uint16_t ov[1] = {0};
    ASSERT_EQ(macko_mat_export_csr_host(A.A, orp, oci, ov, MACKO_INDEX_64I, MACKO_INDEX_BASE_ONE),
              MACKO_STATUS_SUCCESS);
    EXPECT_EQ(orp[1], 2);
    EXPECT_EQ(oci[0], cols);
    EXPECT_EQ(ov[0], 0xBC00);
    /* int32 CSR cannot hold column 2^35 - 1 */
    int32_t r32[2] = {5, 5};
    EXPECT_FAIL_AT(macko_mat_export_csr_host(A.A, r32, oci, ov, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO),
                   MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_EQ(r32[0], 5);
}

/* ---- a valid rows x 2^40 matrix with 3 nonzeros (in its last row), serialized, written as a sparse file */

void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
void put_i64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* CRC-32 of n zero bytes, by doubling with crc32_combine. */
uLong crc_of_zeros(uint64_t n)
{
    const uint8_t zero = 0;
    uLong result = crc32(0L, Z_NULL, 0), block = crc32(0L, &zero, 1);
    uint64_t len = 1;
    while (n != 0) {
        if (n & 1)
            result = crc32_combine(result, block, (z_off_t)len);
        block = crc32_combine(block, block, (z_off_t)len);
        len *= 2;
        n >>= 1;
    }
    return result;
}

/* Writes the file; returns its size, or -1 (with a reason) if the file system cannot hold it. */
int64_t write_sparse_matrix_file(const std::string &path, int64_t rows, std::string *why)
{
    const int64_t entries = 3, ep = 8, vbytes = ep * 2, dbytes = ep / 2, rpbytes = (rows + 1) * 4;
    const int64_t total = 96 + vbytes + dbytes + rpbytes;
    uint8_t head[96 + 16 + 4] = {0};
    uint8_t *h = head, *values = head + 96;
    std::memcpy(h, "MACKOMAT", 8);
    put_u32(h + 8, 1);
    put_u32(h + 12, 96);
    h[16] = MACKO_R_16F;
    h[17] = 16;
    h[18] = 4;
    h[19] = 4;
    put_i64(h + 24, rows);
    put_i64(h + 32, INT64_C(1) << 40);
    put_i64(h + 40, 3);
    put_i64(h + 48, entries);
    put_i64(h + 56, ep);
    put_i64(h + 64, vbytes);
    put_i64(h + 72, dbytes);
    put_i64(h + 80, rpbytes);
    /* values 1, 2, 3 at columns 0, 1, 2 of the last row (deltas all 0); row_ptr = 0 ... 0, 3 */
    values[1] = 0x3C;
    values[3] = 0x40;
    values[5] = 0x42;
    const uint8_t last[4] = {3, 0, 0, 0};
    uLong crc = crc32(0L, values, (uInt)(vbytes + dbytes));
    crc = crc32_combine(crc, crc_of_zeros((uint64_t)(rpbytes - 4)), (z_off_t)(rpbytes - 4));
    crc = crc32_combine(crc, crc32(0L, last, 4), 4);
    put_u32(h + 88, (uint32_t)crc);
    put_u32(h + 92, (uint32_t)crc32(0L, h, 92));

    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        *why = std::string("open: ") + std::strerror(errno);
        return -1;
    }
    bool ok = write(fd, head, sizeof head) == (ssize_t)sizeof head;
    if (ok && ftruncate(fd, (off_t)(total - 4)) != 0) {
        *why = std::string("ftruncate to ") + std::to_string(total) + " bytes: " + std::strerror(errno);
        ok = false;
    } else if (ok) {
        ok = pwrite(fd, last, 4, (off_t)(total - 4)) == 4;
        if (!ok)
            *why = std::string("pwrite: ") + std::strerror(errno);
    }
    close(fd);
    return ok ? total : -1;
}

/* The construction itself is a valid matrix: with 1024 rows (a 4 KiB file) it loads and holds the 3 entries. */
TEST(Sizes64, SparseFileConstructionIsValid)
{
    TempDir dir;
    std::string why, path = dir.file("small.macko");
    ASSERT_EQ(write_sparse_matrix_file(path, 1024, &why), 96 + 16 + 4 + 1025 * 4) << why;
    Mat A;
    ASSERT_EQ(macko_mat_load(&A.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    std::vector<int64_t> rp(1025), ci(3);
    std::vector<uint16_t> v(3);
    ASSERT_EQ(macko_mat_export_csr_host(A.A, rp.data(), ci.data(), v.data(), MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO),
              MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rp[1023], 0);
    EXPECT_EQ(rp[1024], 3);
    EXPECT_EQ(ci, (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(v, (std::vector<uint16_t>{0x3C00, 0x4000, 0x4200}));
}

/* The example: a valid 2^40 x 2^40 matrix with 3 nonzeros. Its 2^40 + 1 row pointers are 4 TiB, so it can
 * only exist as a file (sparse here). Loading it must fail cleanly with ALLOC_FAILED at position 0, *A untouched, and
 * deserializing a buffer that holds just its first bytes must say "truncated" without allocating. */
TEST(Sizes64, Load2p40x2p40MatrixWith3NonzerosFailsWithAllocFailed)
{
    {
        std::ifstream oc("/proc/sys/vm/overcommit_memory");
        int mode = 0;
        if (oc >> mode && mode == 1)
            GTEST_SKIP() << "vm.overcommit_memory = 1: a 4 TiB allocation could succeed and then exhaust memory";
        const double ram = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        if (ram >= 4.0 * 1099511627776.0)
            GTEST_SKIP() << "this machine has 4 TiB of memory or more";
    }
    const int64_t rows = INT64_C(1) << 40;
    TempDir dir;
    std::string why, path = dir.file("huge.macko");
    const int64_t total = write_sparse_matrix_file(path, rows, &why);
    if (total < 0)
        GTEST_SKIP() << "the file system cannot hold a sparse 4 TiB file: " << why;
    ASSERT_EQ(total, 96 + 16 + 4 + ((INT64_C(1) << 40) + 1) * 4);
    macko_mat_t A = kPoison;
    EXPECT_FAIL_AT(macko_mat_load(&A, path.c_str()), MACKO_STATUS_ALLOC_FAILED, 0);
    EXPECT_EQ(macko_get_last_error_message(),
              "macko_mat_load: cannot allocate the host arrays (" + std::to_string(total - 96) + " bytes)");
    EXPECT_EQ(A, kPoison);

    Bytes head(116);
    {
        std::ifstream f(path, std::ios::binary);
        f.read(reinterpret_cast<char *>(head.data()), (std::streamsize)head.size());
        ASSERT_TRUE(f.good());
    }
    EXPECT_FAIL_AT(macko_mat_deserialize(&A, head.data(), (int64_t)head.size()), MACKO_STATUS_FORMAT_ERROR, 2);
    EXPECT_EQ(macko_get_last_error_message(),
              "macko_mat_deserialize: argument 2: buffer: truncated: the header announces " + std::to_string(total) +
                  " bytes, only 116 are present");
    EXPECT_EQ(A, kPoison);
}

/* ---------------------------------------------------------------- no partial writes (gaps of the other suites) */

TEST(NoPartialWrites, HandleGettersWithoutHandle)
{
    macko_stream_t s = reinterpret_cast<macko_stream_t>(uintptr_t(0x5110));
    macko_pointer_mode_t m = MACKO_POINTER_MODE_DEVICE; /* not the default */
    EXPECT_FAIL_AT(macko_get_stream(nullptr, &s), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL_AT(macko_get_pointer_mode(nullptr, &m), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_EQ(s, reinterpret_cast<macko_stream_t>(uintptr_t(0x5110)));
    EXPECT_EQ(m, MACKO_POINTER_MODE_DEVICE);
}

TEST(NoPartialWrites, GetMackoHostWithoutHostCopy)
{
    Mat A;
    A.A = random_host_matrix(5, 40, MACKO_R_16F, 3);
    ASSERT_NE(A.A, nullptr);
    macko_host_arrays_free(A.A); /* as after macko_mat_release_host */
    const int sentinel = 0;
    const void *v = &sentinel, *rp = &sentinel;
    const uint8_t *d = reinterpret_cast<const uint8_t *>(&sentinel);
    macko_indextype_t rpt = (macko_indextype_t)0; /* neither index type (0 is inside the enum's range) */
    int64_t e = -5, ep = -6;
    EXPECT_FAIL_AT(macko_mat_get_macko_host(A.A, &v, &d, &rp, &rpt, &e, &ep), MACKO_STATUS_NOT_INITIALIZED, 1);
    EXPECT_EQ(v, (const void *)&sentinel);
    EXPECT_EQ(rp, (const void *)&sentinel);
    EXPECT_EQ((const void *)d, (const void *)&sentinel);
    EXPECT_EQ((int)rpt, 0);
    EXPECT_EQ(e, -5);
    EXPECT_EQ(ep, -6);
    /* the same matrix cannot be serialized, saved or exported: nothing is written anywhere */
    int64_t n = -1;
    ASSERT_EQ(macko_mat_serialized_size(A.A, &n), MACKO_STATUS_SUCCESS); /* a size query needs no host copy */
    Bytes buf((size_t)n, 0xEE);
    EXPECT_FAIL_AT(macko_mat_serialize(A.A, buf.data(), n), MACKO_STATUS_NOT_INITIALIZED, 1);
    EXPECT_EQ(buf, Bytes((size_t)n, 0xEE));
    TempDir dir;
    EXPECT_FAIL_AT(macko_mat_save(A.A, dir.file("x.macko").c_str()), MACKO_STATUS_NOT_INITIALIZED, 1);
    EXPECT_TRUE(dir.entries().empty());
}

/* The device routines check the handle first, so without one they fail on any machine, writing nothing. */
TEST(NoPartialWrites, DeviceRoutinesWithoutHandle)
{
    const uint16_t dense[4] = {0x3C00, 0, 0, 0x3C00};
    const int32_t rp[3] = {0, 1, 2}, ci[2] = {0, 1};
    macko_mat_t A = kPoison;
    EXPECT_FAIL_AT(macko_mat_create_dense_device(nullptr, &A, 2, 2, MACKO_R_16F, dense, 2, MACKO_ORDER_ROW),
                   MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL_AT(macko_mat_create_csr_device(nullptr, &A, 2, 2, 2, rp, ci, dense, MACKO_INDEX_32I,
                                               MACKO_INDEX_BASE_ZERO, MACKO_R_16F),
                   MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_EQ(A, kPoison);
    Mat M;
    M.A = random_host_matrix(4, 30, MACKO_R_16F, 4);
    const Bytes before = serialized(M.A);
    EXPECT_FAIL_AT(macko_mat_upload(nullptr, M.A), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL_AT(macko_mat_download(nullptr, M.A), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL_AT(macko_analysis(nullptr, MACKO_OPERATION_TRANSPOSE, M.A), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_EQ(serialized(M.A), before);
    const float one = 1.0f;
    std::vector<float> x(30, 1.0f), y(4, -2.0f);
    EXPECT_FAIL_AT(macko_Sspmv(nullptr, MACKO_OPERATION_NON_TRANSPOSE, &one, M.A, x.data(), 1, &one, y.data(), 1),
                   MACKO_STATUS_INVALID_VALUE, 1);
    for (float f : y)
        EXPECT_EQ(f, -2.0f);
}

void set_fsize_limit_and_save(macko_mat_t A, const std::string &path, rlim_t limit, macko_status_t *st, int *pos,
                              std::string *msg)
{
    struct rlimit old_lim;
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    struct rlimit lim = old_lim;
    lim.rlim_cur = limit;
    void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
    *st = macko_mat_save(A, path.c_str());
    *pos = macko_get_last_error_position();
    *msg = macko_get_last_error_message();
    setrlimit(RLIMIT_FSIZE, &old_lim);
    std::signal(SIGXFSZ, old_handler);
}

/* A save that fails half way (file size limit) leaves the earlier file of that name byte for byte, and no temporary
 * file behind. */
TEST(NoPartialWrites, FailedSaveKeepsTheEarlierFile)
{
    TempDir dir;
    const std::string path = dir.file("weights.macko");
    Mat A, B;
    A.A = random_host_matrix(3, 20, MACKO_R_16F, 5);
    B.A = random_host_matrix(40, 300, MACKO_R_32F, 6); /* serialized far beyond 1000 bytes */
    ASSERT_EQ(macko_mat_save(A.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    const Bytes old = read_file(path);
    ASSERT_EQ(old, serialized(A.A));
    ASSERT_LT(old.size(), 1000u);
    macko_status_t st;
    int pos;
    std::string msg;
    set_fsize_limit_and_save(B.A, path, 1000, &st, &pos, &msg);
    EXPECT_EQ(st, MACKO_STATUS_IO_ERROR) << msg;
    EXPECT_EQ(pos, 2);
    EXPECT_EQ(msg, "macko_mat_save: argument 2: path '" + path + "': writing failed: " + std::strerror(EFBIG));
    EXPECT_EQ(read_file(path), old) << "a failed save changed the earlier file";
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"weights.macko"}) << "a temporary file was left behind";
    /* without the limit the same save replaces the file */
    ASSERT_EQ(macko_mat_save(B.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(read_file(path), serialized(B.A));
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"weights.macko"});
}

/* Replacing keeps the file's permissions, and a symbolic link stays a link to the replaced file. */
TEST(NoPartialWrites, SaveReplacesKeepingModeAndLinks)
{
    TempDir dir;
    const std::string path = dir.file("a.macko"), link = dir.file("link.macko");
    Mat A, B;
    A.A = random_host_matrix(3, 20, MACKO_R_16F, 7);
    B.A = random_host_matrix(6, 50, MACKO_R_16F, 8);
    ASSERT_EQ(macko_mat_save(A.A, path.c_str()), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(chmod(path.c_str(), 0640), 0);
    ASSERT_EQ(macko_mat_save(B.A, path.c_str()), MACKO_STATUS_SUCCESS);
    struct stat sb;
    ASSERT_EQ(stat(path.c_str(), &sb), 0);
    EXPECT_EQ(sb.st_mode & 07777, 0640u);
    EXPECT_EQ(read_file(path), serialized(B.A));
    fs::create_symlink("a.macko", link);
    ASSERT_EQ(macko_mat_save(A.A, link.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(read_file(path), serialized(A.A));
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"a.macko", "link.macko"}));
    /* a failed save through the link keeps the target too */
    macko_status_t st;
    int pos;
    std::string msg;
    set_fsize_limit_and_save(B.A, link, 100, &st, &pos, &msg);
    EXPECT_EQ(st, MACKO_STATUS_IO_ERROR) << msg;
    EXPECT_EQ(read_file(path), serialized(A.A));
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"a.macko", "link.macko"}));
}

/* ---------------------------------------------------------------- messages */

/* "routine: argument N: <argument name> ..." for argument errors, "routine: ..." otherwise. */
TEST(Messages, NameTheRoutineAndTheArgument)
{
    int a = 0;
    EXPECT_EQ(macko_get_version(&a, nullptr, &a), MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_get_version: argument 2: minor is NULL");
    Mat A;
    A.A = random_host_matrix(3, 20, MACKO_R_16F, 9);
    uint8_t buf[8];
    EXPECT_EQ(macko_mat_serialize(A.A, buf, -1), MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_serialize: argument 3: buffer_size is -1; it must be at least 0");
    EXPECT_EQ(macko_mat_export_csr_host(A.A, nullptr, buf, buf, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_export_csr_host: argument 2: row_ptr is NULL (it receives rows + 1 entries)");
    macko_mat_t B = kPoison;
    EXPECT_EQ(macko_mat_create_macko_host(&B, 3, 5, MACKO_R_16F, 0, nullptr, nullptr, nullptr),
              MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_macko_host: argument 8: row_ptr is NULL (it holds rows + 1 entries)");
    EXPECT_EQ(macko_mat_load(&B, nullptr), MACKO_STATUS_INVALID_VALUE);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_load: argument 2: path is NULL");
    EXPECT_EQ(macko_mat_load(&B, "/nonexistent/dir/x.macko"), MACKO_STATUS_IO_ERROR);
    EXPECT_EQ(std::string(macko_get_last_error_message()),
              std::string("macko_mat_load: argument 2: path '/nonexistent/dir/x.macko': cannot open for reading: ") +
                  std::strerror(ENOENT));
    EXPECT_EQ(macko_mat_save(A.A, "/nonexistent/dir/x.macko"), MACKO_STATUS_IO_ERROR);
    EXPECT_EQ(std::string(macko_get_last_error_message()),
              std::string("macko_mat_save: argument 2: path '/nonexistent/dir/x.macko': cannot open for writing: ") +
                  std::strerror(ENOENT));
    EXPECT_EQ(B, kPoison);
    /* A success clears the details. */
    EXPECT_EQ(macko_get_version(&a, &a, &a), MACKO_STATUS_SUCCESS);
    EXPECT_STREQ(macko_get_last_error_message(), "");
    EXPECT_EQ(macko_get_last_error_position(), 0);
}

/* Errors in an array's content or a serialized header name the argument too: "name: detail". */
TEST(Messages, ContentAndFormatErrorsNameTheArgument)
{
    /* 1 x 20, entries (1.0, 3) (2.0, 15): the second decodes to column 19. */
    const uint16_t vals[8] = {0x3C00, 0x4000, 0, 0, 0, 0, 0, 0};
    uint8_t deltas[4] = {0xF3, 0, 0, 0};
    const int32_t rp[2] = {0, 2};
    macko_mat_t B = kPoison;
    EXPECT_FAIL_AT(macko_mat_create_macko_host(&B, 1, 19, MACKO_R_16F, 2, vals, deltas, rp), MACKO_STATUS_INVALID_VALUE,
                   7);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_macko_host: argument 7: deltas: row 0: entry 1 decodes to column 19, "
                 "outside [0, 19)");
    deltas[2] = 0x01; /* entry 4 lies in the tail */
    EXPECT_FAIL_AT(macko_mat_create_macko_host(&B, 1, 20, MACKO_R_16F, 2, vals, deltas, rp), MACKO_STATUS_INVALID_VALUE,
                   7);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_macko_host: argument 7: deltas: tail delta 4 (past entries = 2) is not zero");
    EXPECT_EQ(B, kPoison);

    Mat A;
    A.A = random_host_matrix(3, 20, MACKO_R_16F, 4);
    Bytes b = serialized(A.A);
    ASSERT_FALSE(b.empty());
    b[0] = 'X';
    EXPECT_FAIL_AT(macko_mat_deserialize(&B, b.data(), (int64_t)b.size()), MACKO_STATUS_FORMAT_ERROR, 2);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_deserialize: argument 2: buffer: header field 'magic' (byte 0) is not \"MACKOMAT\": "
                 "not a serialized macko matrix");
    b[0] = 'M';
    b.push_back(0);
    EXPECT_FAIL_AT(macko_mat_deserialize(&B, b.data(), (int64_t)b.size()), MACKO_STATUS_FORMAT_ERROR, 2);
    EXPECT_EQ(std::string(macko_get_last_error_message()),
              "macko_mat_deserialize: argument 2: buffer: 1 unexpected bytes after the end of the payload (header "
              "announces " + std::to_string(b.size() - 1) + " bytes)");
    TempDir dir;
    const std::string path = dir.file("short.macko");
    {
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char *>(b.data()), 10);
    }
    EXPECT_FAIL_AT(macko_mat_load(&B, path.c_str()), MACKO_STATUS_FORMAT_ERROR, 2);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_load: argument 2: path: truncated: 10 bytes, shorter than the 96-byte header");
    EXPECT_EQ(B, kPoison);
}

} // namespace
