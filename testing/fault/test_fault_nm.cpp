/* Fault injection, the N:M kind's host routines (no GPU needed; fault_sweep.h): every allocation of one
 * representative call fails in turn. The device routines (create_nm_dense_device, upload, download, the override,
 * the products, destroy): test_fault_nm_device.cpp. */
#include "fault_util.h"

#include <cstring>
#include <memory>

namespace {

using namespace ft;

constexpr int64_t kRows = 37, kCols = 70;

/* The two host arrays of an N:M matrix and its pattern, as bytes. */
struct NmArrays {
    int n = 0, m = 0, v = 0;
    Bytes values, positions;
    bool operator==(const NmArrays &o) const
    {
        return n == o.n && m == o.m && v == o.v && values == o.values && positions == o.positions;
    }
};

NmArrays nm_arrays(const macko_mat_s *A)
{
    return {A->nm.n, A->nm.m, A->nm.v, host_bytes(A->nm.hvalues, (size_t)A->entries * macko_type_size(A->type)),
            host_bytes(A->nm.hpos, (size_t)(A->nm.groups * A->nm.kept))};
}

Case nm_case(const std::string &name, const char *routine, macko_mat_t &out, const NmArrays &ref,
             std::function<macko_status_t()> call)
{
    return matrix_case(name, routine, out,
                       [&ref](macko_mat_t m) {
                           EXPECT_EQ(m->kind, (int)MACKO_KIND_NM);
                           EXPECT_TRUE(nm_arrays(m) == ref);
                       },
                       std::move(call));
}

/* A dense matrix in 3:8 with v = 4 (rows of the random source, thinned to the pattern), row-major and column-major. */
struct NmSource {
    Source src = make_source(kRows, kCols, MACKO_R_32F, 21);
    Bytes row_major, col_major;
    NmSource()
    {
        for (int64_t r = 0; r < kRows; r++)
            for (int64_t c = 0; c < kCols; c++)
                if (c % 8 != (r / 4) % 8 && c % 8 != 7 && c % 8 != 2)
                    src.m.at(r, c) = 0.0f;
        row_major = mt::to_bytes(src.m, MACKO_R_32F, MACKO_ORDER_ROW, kCols);
        col_major = mt::to_bytes(src.m, MACKO_R_32F, MACKO_ORDER_COL, kRows + 3);
    }
};

macko_mat_t nm_encode(const NmSource &s, int n, int m, int v)
{
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_nm_dense_host(&A, kRows, kCols, MACKO_R_32F, s.row_major.data(), kCols,
                                             MACKO_ORDER_ROW, n, m, v),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    return A;
}

} // namespace

TEST(NmFault, CreateNmDenseHost)
{
    const NmSource s;
    macko_mat_t out = poison<macko_mat_t>();
    const struct {
        const char *name;
        int n, m, v;
        bool col;
    } variants[] = {
        {"3:8 v4, row-major (the pattern given: masks, two arrays, the object)", 3, 8, 4, false},
        {"detected, column-major (+ the detection's workspace)", 0, 0, 0, true},
        {"3:8 with v detected, row-major", 3, 8, 0, false},
    };
    for (const auto &v : variants) {
        macko_mat_t R = nm_encode(s, v.n, v.m, v.v);
        ASSERT_NE(R, nullptr);
        const NmArrays ref = nm_arrays(R);
        macko_mat_destroy(R);
        sweep(nm_case(std::string("macko_mat_create_nm_dense_host (") + v.name + ")", "macko_mat_create_nm_dense_host",
                      out, ref, [&] {
                          return v.col ? macko_mat_create_nm_dense_host(&out, kRows, kCols, MACKO_R_32F,
                                                                        s.col_major.data(), kRows + 3,
                                                                        MACKO_ORDER_COL, v.n, v.m, v.v)
                                       : macko_mat_create_nm_dense_host(&out, kRows, kCols, MACKO_R_32F,
                                                                        s.row_major.data(), kCols, MACKO_ORDER_ROW,
                                                                        v.n, v.m, v.v);
                      }));
    }
}

TEST(NmFault, CreateNmHostPersistenceAndTheRoutinesWithoutFaultPoints)
{
    const NmSource s;
    macko_mat_t out = poison<macko_mat_t>();
    macko_mat_t A = nm_encode(s, 3, 8, 4);
    ASSERT_NE(A, nullptr);
    const NmArrays ref = nm_arrays(A);
    sweep(nm_case("macko_mat_create_nm_host", "macko_mat_create_nm_host", out, ref, [&] {
        return macko_mat_create_nm_host(&out, kRows, kCols, MACKO_R_32F, 3, 8, 4, A->nm.hvalues, A->nm.hpos);
    }));
    const Bytes ser = serialized(A);
    sweep(nm_case("macko_mat_deserialize (N:M)", "macko_mat_deserialize", out, ref,
                  [&] { return macko_mat_deserialize(&out, ser.data(), (int64_t)ser.size()); }));

    std::vector<float> dense(kRows * kCols), want(kRows * kCols);
    ASSERT_EQ(macko_mat_export_dense_host(A, want.data(), kCols, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    int64_t nnz = 0;
    ASSERT_EQ(macko_mat_get_info(A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    std::vector<int64_t> rp(kRows + 1), ci((size_t)nnz), rp2(kRows + 1), ci2((size_t)nnz);
    std::vector<float> cv((size_t)nnz), cv2((size_t)nnz);
    ASSERT_EQ(macko_mat_export_csr_host(A, rp2.data(), ci2.data(), cv2.data(), MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO),
              MACKO_STATUS_SUCCESS);
    Bytes buf(ser.size());
    const void *vals = nullptr;
    Case c;
    c.routine = "-";
    c.name = "macko_mat_get_nm_host";
    c.call = [&] { return macko_mat_get_nm_host(A, nullptr, nullptr, nullptr, &vals, nullptr); };
    c.succeeded = [&] { EXPECT_EQ(vals, A->nm.hvalues); };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_export_dense_host (N:M)";
    c.call = [&] { return macko_mat_export_dense_host(A, dense.data(), kCols, MACKO_ORDER_ROW); };
    c.succeeded = [&] { EXPECT_EQ(dense, want); };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_export_csr_host (N:M)";
    c.call = [&] { return macko_mat_export_csr_host(A, rp.data(), ci.data(), cv.data(), MACKO_INDEX_64I,
                                                    MACKO_INDEX_BASE_ZERO); };
    c.succeeded = [&] {
        EXPECT_EQ(rp, rp2);
        EXPECT_EQ(ci, ci2);
        EXPECT_EQ(cv, cv2);
    };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_get_storage, macko_mat_get_kind, macko_mat_get_info (N:M)";
    c.call = [&] {
        int64_t b = 0;
        macko_kind_t k;
        macko_status_t st = macko_mat_get_storage(A, &b, nullptr, nullptr, nullptr);
        if (st == MACKO_STATUS_SUCCESS)
            st = macko_mat_get_kind(A, &k);
        return st == MACKO_STATUS_SUCCESS ? macko_mat_get_info(A, nullptr, nullptr, nullptr, nullptr) : st;
    };
    c.succeeded = [] {};
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_serialized_size, macko_mat_serialize (N:M)";
    c.call = [&] {
        int64_t n = 0;
        macko_status_t st = macko_mat_serialized_size(A, &n);
        return st == MACKO_STATUS_SUCCESS ? macko_mat_serialize(A, buf.data(), n) : st;
    };
    c.succeeded = [&] { EXPECT_EQ(buf, ser); };
    EXPECT_EQ(sweep(c).points, 0);
    c.succeeded = [] {};
    macko_mat_destroy(A);

    macko_mat_t D = nullptr;
    c.name = "macko_mat_destroy (N:M host matrix)";
    c.prepare = [&] { D = nm_encode(s, 0, 0, 0); };
    c.call = [&] { return macko_mat_destroy(D); };
    EXPECT_EQ(sweep(c).points, 0);
}
