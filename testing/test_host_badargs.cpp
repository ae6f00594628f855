/* Bad arguments of every host matrix routine, broken one at a time: status, position, out-parameters untouched. */
#include "common.h"
#include "encode_ref.h"
#include "macko_internal.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

using namespace mt;

namespace
{

const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(uintptr_t(0xBAD0));

/* Expects status st at position pos (and, when given, exactly this message). */
#define EXPECT_FAIL(call, st, pos)                                                                                     \
    do {                                                                                                               \
        EXPECT_EQ((call), (st));                                                                                       \
        EXPECT_EQ(macko_get_last_error_position(), (pos));                                                             \
    } while (0)

/* A valid 3 x 5 fp16 matrix and its CSR / raw forms, the baseline every case breaks one argument of. */
struct Base {
    RawMat m = raw_random(3, 5, MACKO_R_16F, 0.6, 4242, false);
    std::vector<uint8_t> dense = raw_bytes(m, MACKO_ORDER_ROW, 5);
    std::vector<int32_t> rp, ci;
    std::vector<uint16_t> v;
    Arrays a = ref_encode(m);
    std::vector<int32_t> arp = rp32(a.row_ptr);
    Base()
    {
        m.at(0, 0) = 0x3C00; /* at least one nonzero */
        dense = raw_bytes(m, MACKO_ORDER_ROW, 5);
        a = ref_encode(m);
        arp = rp32(a.row_ptr);
        rp.push_back(0);
        for (int64_t r = 0; r < 3; r++) {
            for (int64_t c = 0; c < 5; c++)
                if (!m.is_zero(m.at(r, c))) {
                    ci.push_back((int32_t)c);
                    v.push_back((uint16_t)m.at(r, c));
                }
            rp.push_back((int32_t)ci.size());
        }
    }
};

} // namespace

TEST(HostBadArgs, CreateDense)
{
    Base b;
    const void *x = b.dense.data();
    macko_mat_t A = kPoison;
    EXPECT_FAIL(macko_mat_create_dense_host(nullptr, 3, 5, MACKO_R_16F, x, 5, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_dense_host: argument 1: A is NULL");
    EXPECT_FAIL(macko_mat_create_dense_host(&A, -1, 5, MACKO_R_16F, x, 5, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE,
                2);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_dense_host: argument 2: rows is -1; it must be in [0, 2^56]");
    EXPECT_FAIL(macko_mat_create_dense_host(&A, INT64_C(1) << 57, 5, MACKO_R_16F, x, 5, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, -5, MACKO_R_16F, x, 5, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE,
                3);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, INT64_MAX, MACKO_R_16F, x, 5, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 3);
    /* rows*cols overflows the element limit: refused before anything is allocated or read. */
    EXPECT_FAIL(macko_mat_create_dense_host(&A, INT64_C(1) << 40, INT64_C(1) << 40, MACKO_R_16F, x, INT64_C(1) << 40,
                                            MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_create_dense_host: argument 3: rows*cols (1099511627776 x "
                                                 "1099511627776) exceeds the 2^56 element limit");
    EXPECT_FAIL(macko_mat_create_dense_host(&A, INT64_C(1) << 29, INT64_C(1) << 28, MACKO_R_32F, x, INT64_C(1) << 28,
                                            MACKO_ORDER_COL),
                MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, (macko_datatype_t)3, x, 5, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 4);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, (macko_datatype_t)15, x, 5, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 4);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, (macko_datatype_t)-1, x, 5, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 4);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, nullptr, 5, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 1, 1, MACKO_R_16F, nullptr, 1, MACKO_ORDER_COL),
                MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, x, 4, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE,
                6);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_dense_host: argument 6: ld is 4; it must be at least max(1, cols) = 5");
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, x, 2, MACKO_ORDER_COL), MACKO_STATUS_INVALID_VALUE,
                6);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 0, MACKO_R_16F, nullptr, 0, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 6); /* ld >= max(1, cols) even for an empty matrix */
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, x, INT64_C(1) << 62, MACKO_ORDER_ROW),
                MACKO_STATUS_INVALID_VALUE, 6); /* (rows-1)*ld overflows */
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, x, 5, (macko_order_t)0), MACKO_STATUS_INVALID_VALUE,
                7);
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, x, 5, (macko_order_t)3), MACKO_STATUS_INVALID_VALUE,
                7);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_dense_host: argument 7: order is 3; it must be MACKO_ORDER_ROW (2) or "
                 "MACKO_ORDER_COL (1)");
    /* A bad order with a bad ld reports the order: ld cannot be judged without it. */
    EXPECT_FAIL(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, x, 0, (macko_order_t)9), MACKO_STATUS_INVALID_VALUE,
                7);
    /* The first bad argument wins. */
    EXPECT_FAIL(macko_mat_create_dense_host(&A, -1, -1, (macko_datatype_t)9, nullptr, 0, (macko_order_t)0),
                MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_EQ(A, kPoison);

    /* Empty matrices need no values. */
    for (auto rc : {std::pair<int64_t, int64_t>{0, 0}, {0, 5}, {3, 0}}) {
        macko_mat_t E = nullptr;
        ASSERT_EQ(macko_mat_create_dense_host(&E, rc.first, rc.second, MACKO_R_32F, nullptr,
                                              std::max<int64_t>(rc.second, 1), MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        EXPECT_EQ(macko_get_last_error_position(), 0);
        EXPECT_STREQ(macko_get_last_error_message(), "");
        int64_t rows = -1, entries = -1;
        ASSERT_EQ(macko_mat_get_info(E, &rows, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_get_storage(E, nullptr, &entries, nullptr, nullptr), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(rows, rc.first);
        EXPECT_EQ(entries, 0);
        Arrays a = get_arrays(E);
        EXPECT_EQ(a.row_ptr, std::vector<int64_t>((size_t)rc.first + 1, 0));
        macko_mat_destroy(E);
    }
}

/* An allocation that cannot succeed (2^50 rows of a 0-column matrix: the row pointers alone are 4 PiB) gives
 * ALLOC_FAILED at position 0 with its message kept, and *A untouched. (Under ASan: allocator_may_return_null=1.) */
TEST(HostBadArgs, CreateDenseAllocFailure)
{
    macko_mat_t A = kPoison;
    EXPECT_FAIL(macko_mat_create_dense_host(&A, INT64_C(1) << 50, 0, MACKO_R_16F, nullptr, 1, MACKO_ORDER_ROW),
                MACKO_STATUS_ALLOC_FAILED, 0);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_dense_host: out of host memory (1125899906842624 rows)");
    EXPECT_EQ(A, kPoison);
}

TEST(HostBadArgs, CreateCsr)
{
    Base b;
    const int64_t nnz = (int64_t)b.ci.size();
    const void *rp = b.rp.data(), *ci = b.ci.data(), *v = b.v.data();
    const auto I32 = MACKO_INDEX_32I;
    const auto B0 = MACKO_INDEX_BASE_ZERO;
    macko_mat_t A = kPoison;
    EXPECT_FAIL(macko_mat_create_csr_host(nullptr, 3, 5, nnz, rp, ci, v, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, -3, 5, nnz, rp, ci, v, I32, B0, MACKO_R_16F), MACKO_STATUS_INVALID_VALUE,
                2);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, -5, nnz, rp, ci, v, I32, B0, MACKO_R_16F), MACKO_STATUS_INVALID_VALUE,
                3);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, -1, rp, ci, v, I32, B0, MACKO_R_16F), MACKO_STATUS_INVALID_VALUE,
                4);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_csr_host: argument 4: nnz is -1; it must be in [0, 2^56]");
    /* nnz inconsistent with row_ptr: reported on row_ptr, whose last element is the one that disagrees. */
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz - 1, rp, ci, v, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz, nullptr, ci, v, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 0, 5, 0, nullptr, nullptr, nullptr, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 5); /* row_ptr has rows + 1 >= 1 elements */
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz, rp, nullptr, v, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 6);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz, rp, ci, nullptr, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 7);
    const int32_t rp1[2] = {0, 1};
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 1, 5, 1, rp1, nullptr, v, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 6);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 1, 5, 1, rp1, ci, nullptr, I32, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 7);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz, rp, ci, v, (macko_indextype_t)1, B0, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 8);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz, rp, ci, v, I32, (macko_index_base_t)2, MACKO_R_16F),
                MACKO_STATUS_INVALID_VALUE, 9);
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz, rp, ci, v, I32, B0, (macko_datatype_t)3),
                MACKO_STATUS_INVALID_VALUE, 10);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_create_csr_host: argument 10: type is 3; it must be MACKO_R_16F (2), MACKO_R_32F (0), "
                 "MACKO_R_16BF (14) or MACKO_R_64F (1)");
    /* Scalars and enums are checked before the array contents: a bad type wins over a bad row_ptr. */
    const int32_t badrp[4] = {7, 0, 0, 0};
    EXPECT_FAIL(macko_mat_create_csr_host(&A, 3, 5, nnz, badrp, ci, v, I32, B0, (macko_datatype_t)3),
                MACKO_STATUS_INVALID_VALUE, 10);
    EXPECT_EQ(A, kPoison);

    /* nnz == 0: col_ind and values may be NULL. */
    const int32_t zrp[4] = {1, 1, 1, 1};
    macko_mat_t Z = nullptr;
    ASSERT_EQ(macko_mat_create_csr_host(&Z, 3, 5, 0, zrp, nullptr, nullptr, I32, MACKO_INDEX_BASE_ONE, MACKO_R_16F),
              MACKO_STATUS_SUCCESS);
    macko_mat_destroy(Z);
}

TEST(HostBadArgs, CreateMacko)
{
    Base b;
    const int64_t e = b.a.entries;
    const void *v = b.a.values.data(), *rp = b.arp.data();
    const uint8_t *d = b.a.deltas.data();
    macko_mat_t A = kPoison;
    EXPECT_FAIL(macko_mat_create_macko_host(nullptr, 3, 5, MACKO_R_16F, e, v, d, rp), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, -3, 5, MACKO_R_16F, e, v, d, rp), MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, -5, MACKO_R_16F, e, v, d, rp), MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, 5, (macko_datatype_t)5, e, v, d, rp), MACKO_STATUS_INVALID_VALUE, 4);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, 5, MACKO_R_16F, -1, v, d, rp), MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, 5, MACKO_R_16F, INT64_MAX, v, d, rp), MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, 5, MACKO_R_16F, e, nullptr, d, rp), MACKO_STATUS_INVALID_VALUE, 6);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, 5, MACKO_R_16F, e, v, nullptr, rp), MACKO_STATUS_INVALID_VALUE, 7);
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, 5, MACKO_R_16F, e, v, d, nullptr), MACKO_STATUS_INVALID_VALUE, 8);
    /* entries inconsistent with row_ptr: row_ptr is what disagrees. */
    EXPECT_FAIL(macko_mat_create_macko_host(&A, 3, 5, MACKO_R_16F, e + 1, v, d, rp), MACKO_STATUS_INVALID_VALUE, 8);
    EXPECT_EQ(A, kPoison);
    /* entries == 0: values and deltas may be NULL. */
    const int32_t zrp[4] = {0, 0, 0, 0};
    macko_mat_t Z = nullptr;
    ASSERT_EQ(macko_mat_create_macko_host(&Z, 3, 5, MACKO_R_32F, 0, nullptr, nullptr, zrp), MACKO_STATUS_SUCCESS);
    macko_mat_destroy(Z);
}

/* Invalid raw arrays: column overflow through the deltas, nonzero tails, bad row_ptr. */
TEST(HostBadArgs, CreateMackoInvalidArrays)
{
    /* 2 x 20: row 0 = 1.0 at column 3, row 1 = 2.0 at column 0 and 3.0 at column 19. */
    RawMat m = raw_zero(2, 20, MACKO_R_16F);
    m.at(0, 3) = 0x3C00;
    m.at(1, 0) = 0x4000;
    m.at(1, 19) = 0x4200;
    Arrays a = ref_encode(m); /* entries: (1.0,3) | (2.0,0) (0,15) (3.0,2) */
    ASSERT_EQ(a.entries, 4);
    std::vector<int32_t> rp = rp32(a.row_ptr);
    struct Case {
        const char *what;
        int pos;
        const char *msg;
    };
    auto run = [&](const Case &c, const Arrays &x, const std::vector<int32_t> &r, int64_t cols) {
        SCOPED_TRACE(c.what);
        macko_mat_t A = kPoison;
        EXPECT_FAIL(macko_mat_create_macko_host(&A, 2, cols, MACKO_R_16F, x.entries, x.values.data(), x.deltas.data(),
                                                r.data()),
                    MACKO_STATUS_INVALID_VALUE, c.pos);
        EXPECT_STREQ(macko_get_last_error_message(), c.msg);
        EXPECT_EQ(A, kPoison);
    };
    {
        Mat ok; /* the unmodified arrays are valid */
        ASSERT_EQ(macko_mat_create_macko_host(&ok.A, 2, 20, MACKO_R_16F, a.entries, a.values.data(), a.deltas.data(),
                                              rp.data()),
                  MACKO_STATUS_SUCCESS);
    }
    run({"cols too small for row 1", 7,
         "macko_mat_create_macko_host: argument 7: deltas: row 1: entry 3 decodes to column 19, outside [0, 19)"},
        a, rp, 19);
    Arrays x = a;
    x.deltas[1] = (uint8_t)((x.deltas[1] & 0x0F) | 0xF0); /* entry 3: delta 2 -> 15: column 32 */
    run({"delta overflows the row", 7,
         "macko_mat_create_macko_host: argument 7: deltas: row 1: entry 3 decodes to column 32, outside [0, 20)"},
        x, rp, 20);
    x = a;
    x.deltas[0] = (uint8_t)((x.deltas[0] & 0xF0) | 0x0F); /* entry 0: delta 3 -> 15 (column 15): still valid */
    {
        Mat ok;
        EXPECT_EQ(macko_mat_create_macko_host(&ok.A, 2, 20, MACKO_R_16F, x.entries, x.values.data(), x.deltas.data(),
                                              rp.data()),
                  MACKO_STATUS_SUCCESS);
    }
    x = a;
    x.values[2 * 5] = 1; /* tail value (entry 5) */
    run({"nonzero tail value", 6,
         "macko_mat_create_macko_host: argument 6: values: tail value 5 (past entries = 4) is not zero"},
        x, rp, 20);
    x = a;
    x.values[2 * 7 + 1] = 0x80; /* tail value -0 is not the zero tail either */
    run({"-0 tail value", 6,
         "macko_mat_create_macko_host: argument 6: values: tail value 7 (past entries = 4) is not zero"},
        x, rp, 20);
    x = a;
    x.deltas[3] = 0x10; /* entry 7's delta */
    run({"nonzero tail delta", 7,
         "macko_mat_create_macko_host: argument 7: deltas: tail delta 7 (past entries = 4) is not zero"},
        x, rp, 20);
    /* row_ptr faults, one entry changed each; a hostile value far outside the arrays is caught before any entry is
     * read */
    const struct {
        size_t i;
        int32_t v;
        Case c;
    } rp_faults[] = {
        {0, 1, {"row_ptr[0] != 0", 8, "macko_mat_create_macko_host: argument 8: row 0: row_ptr[0] is 1; it must be 0"}},
        {1, 5,
         {"row_ptr past entries", 8,
          "macko_mat_create_macko_host: argument 8: row 0: row_ptr[1] = 5 exceeds entries = 4"}},
        {1, -1,
         {"row_ptr decreasing", 8,
          "macko_mat_create_macko_host: argument 8: row 0: row_ptr decreases (row_ptr[1] = -1 < row_ptr[0] = 0)"}},
        {2, 3,
         {"row_ptr wrong end", 8,
          "macko_mat_create_macko_host: argument 8: row 1: row_ptr[rows] is 3; it must be entries = 4"}},
        {1, INT32_MAX,
         {"row_ptr huge", 8,
          "macko_mat_create_macko_host: argument 8: row 0: row_ptr[1] = 2147483647 exceeds entries = 4"}},
    };
    for (const auto &f : rp_faults) {
        std::vector<int32_t> r = rp;
        r[f.i] = f.v;
        run(f.c, a, r, 20);
    }
}

TEST(HostBadArgs, InfoStorageAndMackoHost)
{
    int64_t rows = 11, cols = 12, nnz = 13, bytes = 14, entries = 15, ep = 16;
    macko_datatype_t type = (macko_datatype_t)3; /* in the enum's range (C++), but no type */
    double effd = 18;
    const void *v = &rows, *rp = &rows;
    const uint8_t *d = (const uint8_t *)&rows;
    macko_indextype_t rpt = (macko_indextype_t)1;
    EXPECT_FAIL(macko_mat_get_info(nullptr, &rows, &cols, &nnz, &type), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_info: argument 1: A is NULL");
    EXPECT_FAIL(macko_mat_get_storage(nullptr, &bytes, &entries, &ep, &effd), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL(macko_mat_get_macko_host(nullptr, &v, &d, &rp, &rpt, &entries, &ep), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_EQ(rows, 11);
    EXPECT_EQ(cols, 12);
    EXPECT_EQ(nnz, 13);
    EXPECT_EQ(bytes, 14);
    EXPECT_EQ(entries, 15);
    EXPECT_EQ(ep, 16);
    EXPECT_EQ((int)type, 3);
    EXPECT_EQ(effd, 18);
    EXPECT_EQ(v, (const void *)&rows);
    EXPECT_EQ(rp, (const void *)&rows);
    EXPECT_EQ((const void *)d, (const void *)&rows);
    EXPECT_EQ((int)rpt, 1);

    /* All outputs optional. */
    Base b;
    Mat A;
    ASSERT_EQ(encode_dense(b.m, MACKO_ORDER_ROW, 5, &A.A), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_get_info(A.A, nullptr, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_get_storage(A.A, nullptr, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_get_macko_host(A.A, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
              MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, &entries, &ep, &effd), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(entries, b.a.entries);
    EXPECT_EQ(ep, b.a.entries_padded);
    EXPECT_EQ(bytes, ep * 2 + ep / 2 + 4 * 4);
    EXPECT_DOUBLE_EQ(effd, (double)bytes / (3 * 5 * 2));

    /* Without a host copy (as after macko_mat_release_host): NOT_INITIALIZED at position 1, outputs untouched. */
    macko_host_arrays_free(A.A);
    v = &rows;
    EXPECT_FAIL(macko_mat_get_macko_host(A.A, &v, &d, &rp, &rpt, &entries, &ep), MACKO_STATUS_NOT_INITIALIZED, 1);
    EXPECT_EQ(v, (const void *)&rows);
    /* Info and storage describe the matrix and do not need the host copy. */
    EXPECT_EQ(macko_mat_get_info(A.A, &rows, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(rows, 3);
}

TEST(HostBadArgs, ExportCsr)
{
    Base b;
    Mat A;
    ASSERT_EQ(encode_dense(b.m, MACKO_ORDER_ROW, 5, &A.A), MACKO_STATUS_SUCCESS);
    std::vector<int64_t> rp(4, 77), ci(15, 77);
    std::vector<uint16_t> v(15, 77);
    const auto I32 = MACKO_INDEX_32I;
    const auto B0 = MACKO_INDEX_BASE_ZERO;
    EXPECT_FAIL(macko_mat_export_csr_host(nullptr, rp.data(), ci.data(), v.data(), I32, B0), MACKO_STATUS_INVALID_VALUE,
                1);
    EXPECT_FAIL(macko_mat_export_csr_host(A.A, nullptr, ci.data(), v.data(), I32, B0), MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_FAIL(macko_mat_export_csr_host(A.A, rp.data(), nullptr, v.data(), I32, B0), MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_FAIL(macko_mat_export_csr_host(A.A, rp.data(), ci.data(), nullptr, I32, B0), MACKO_STATUS_INVALID_VALUE, 4);
    EXPECT_FAIL(macko_mat_export_csr_host(A.A, rp.data(), ci.data(), v.data(), (macko_indextype_t)0, B0),
                MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_FAIL(macko_mat_export_csr_host(A.A, rp.data(), ci.data(), v.data(), I32, (macko_index_base_t)-1),
                MACKO_STATUS_INVALID_VALUE, 6);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_export_csr_host: argument 6: index_base is -1; it must be MACKO_INDEX_BASE_ZERO (0) or "
                 "MACKO_INDEX_BASE_ONE (1)");
    for (int64_t x : rp)
        EXPECT_EQ(x, 77);
    for (int64_t x : ci)
        EXPECT_EQ(x, 77);
    for (uint16_t x : v)
        EXPECT_EQ(x, 77);

    /* cols beyond 32-bit indices (an imported 1 x 2^31 matrix): int32 refused at position 5 with base 1 only... */
    const int32_t zrp[2] = {0, 0};
    Mat W;
    ASSERT_EQ(macko_mat_create_macko_host(&W.A, 1, INT64_C(1) << 31, MACKO_R_16F, 0, nullptr, nullptr, zrp),
              MACKO_STATUS_SUCCESS);
    int32_t orp[2] = {9, 9};
    EXPECT_FAIL(macko_mat_export_csr_host(W.A, orp, nullptr, nullptr, I32, MACKO_INDEX_BASE_ONE),
                MACKO_STATUS_INVALID_VALUE, 5);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_export_csr_host: argument 5: index_type MACKO_INDEX_32I "
                                                 "cannot hold nnz = 0 or cols = 2147483648 with index_base 1");
    EXPECT_EQ(orp[0], 9);
    /* ...while base 0 fits (largest column 2^31 - 1) and int64 always does. */
    EXPECT_EQ(macko_mat_export_csr_host(W.A, orp, nullptr, nullptr, I32, B0), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(orp[0], 0);
    EXPECT_EQ(orp[1], 0);

    /* Without a host copy: NOT_INITIALIZED at position 1. */
    macko_host_arrays_free(A.A);
    EXPECT_FAIL(macko_mat_export_csr_host(A.A, rp.data(), ci.data(), v.data(), I32, B0), MACKO_STATUS_NOT_INITIALIZED,
                1);
    for (int64_t x : rp)
        EXPECT_EQ(x, 77);
}

TEST(HostBadArgs, ExportDense)
{
    Base b;
    Mat A;
    ASSERT_EQ(encode_dense(b.m, MACKO_ORDER_ROW, 5, &A.A), MACKO_STATUS_SUCCESS);
    std::vector<uint16_t> out(100, 0xABCD);
    void *o = out.data();
    EXPECT_FAIL(macko_mat_export_dense_host(nullptr, o, 5, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 1);
    EXPECT_FAIL(macko_mat_export_dense_host(A.A, nullptr, 5, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_FAIL(macko_mat_export_dense_host(A.A, o, 4, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_FAIL(macko_mat_export_dense_host(A.A, o, 2, MACKO_ORDER_COL), MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_STREQ(macko_get_last_error_message(),
                 "macko_mat_export_dense_host: argument 3: ld is 2; it must be at least max(1, rows) = 3");
    EXPECT_FAIL(macko_mat_export_dense_host(A.A, o, INT64_C(1) << 61, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_FAIL(macko_mat_export_dense_host(A.A, o, 5, (macko_order_t)7), MACKO_STATUS_INVALID_VALUE, 4);
    EXPECT_FAIL(macko_mat_export_dense_host(A.A, o, -1, (macko_order_t)7), MACKO_STATUS_INVALID_VALUE, 4);
    for (uint16_t x : out)
        EXPECT_EQ(x, 0xABCD);
    /* A matrix too large to exist densely (imported 2 x 2^56). */
    const int32_t zrp[3] = {0, 0, 0};
    Mat W;
    ASSERT_EQ(macko_mat_create_macko_host(&W.A, 2, INT64_C(1) << 56, MACKO_R_16F, 0, nullptr, nullptr, zrp),
              MACKO_STATUS_SUCCESS);
    EXPECT_FAIL(macko_mat_export_dense_host(W.A, o, INT64_C(1) << 56, MACKO_ORDER_ROW), MACKO_STATUS_INVALID_VALUE, 1);
    /* Empty: nothing written, values may be NULL. */
    Mat E;
    ASSERT_EQ(macko_mat_create_dense_host(&E.A, 0, 4, MACKO_R_16F, nullptr, 4, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_export_dense_host(E.A, nullptr, 4, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_mat_export_dense_host(E.A, nullptr, 1, MACKO_ORDER_COL), MACKO_STATUS_SUCCESS);
    /* Without a host copy. */
    macko_host_arrays_free(A.A);
    EXPECT_FAIL(macko_mat_export_dense_host(A.A, o, 5, MACKO_ORDER_ROW), MACKO_STATUS_NOT_INITIALIZED, 1);
    for (uint16_t x : out)
        EXPECT_EQ(x, 0xABCD);
}

TEST(HostBadArgs, DestroyNullIsFine)
{
    EXPECT_EQ(macko_mat_destroy(nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_get_last_error_position(), 0);
}

/* Random, mostly invalid raw arrays of exactly the documented sizes: the import must answer SUCCESS or INVALID_VALUE
 * and never read outside them (run under ASan to see that); what it accepts must decode consistently. */
TEST(HostBadArgs, CreateMackoRandomArraysAreSafe)
{
    std::mt19937_64 g(2024);
    int accepted = 0, rejected = 0;
    for (int it = 0; it < 3000; it++) {
        int64_t rows = (int64_t)(g() % 6), cols = (int64_t)(g() % 40), entries = (int64_t)(g() % 24);
        int64_t ep = (entries + 7) / 8 * 8;
        std::vector<uint16_t> v((size_t)ep);
        std::vector<uint8_t> d((size_t)ep / 2);
        std::vector<int32_t> rp((size_t)rows + 1);
        for (auto &x : v)
            x = (g() % 3 == 0) ? 0 : (uint16_t)g();
        for (auto &x : d)
            x = (uint8_t)(g() % 4 == 0 ? 0 : g());
        /* row_ptr: sorted random cuts of [0, entries], sometimes perturbed. */
        for (auto &x : rp)
            x = (int32_t)(g() % (uint64_t)(entries + 1));
        std::sort(rp.begin(), rp.end());
        rp[0] = 0;
        rp[(size_t)rows] = (int32_t)entries;
        if (g() % 4 == 0)
            rp[g() % rp.size()] = (int32_t)g();
        if (g() % 2 == 0) /* a zero tail half the time, so that some get past it */
            for (int64_t k = entries; k < ep; k++) {
                v[(size_t)k] = 0;
                d[(size_t)(k / 2)] &= (uint8_t)(k % 2 ? 0x0F : 0xF0);
            }
        macko_mat_t A = kPoison;
        macko_status_t st = macko_mat_create_macko_host(&A, rows, cols, MACKO_R_16F, entries, ep ? v.data() : nullptr,
                                                        ep ? d.data() : nullptr, rp.data());
        if (st != MACKO_STATUS_SUCCESS) {
            ASSERT_EQ(st, MACKO_STATUS_INVALID_VALUE);
            int pos = macko_get_last_error_position();
            ASSERT_TRUE(pos >= 6 && pos <= 8) << pos;
            ASSERT_EQ(A, kPoison);
            rejected++;
            continue;
        }
        accepted++;
        /* Accepted: every entry decodes inside the row, and the dense export holds the nonzero values. */
        std::vector<uint16_t> out((size_t)std::max<int64_t>(rows * cols, 1), 0x1234);
        ASSERT_EQ(macko_mat_export_dense_host(A, out.data(), std::max<int64_t>(cols, 1), MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        int64_t nnz = -1, dense_nnz = 0;
        ASSERT_EQ(macko_mat_get_info(A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
        for (int64_t i = 0; i < rows * cols; i++)
            dense_nnz += (out[(size_t)i] & 0x7FFF) != 0;
        EXPECT_EQ(nnz, dense_nnz);
        macko_mat_destroy(A);
    }
    EXPECT_GT(accepted, 50);
    EXPECT_GT(rejected, 50);
}
