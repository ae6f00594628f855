/* Concurrent use of the host routines from 8 threads (also run under ThreadSanitizer by .ci/reliability.sh, filter
 * Concurrency.*): one shared read-only matrix, parallel encoding, thread-local error details, concurrent saves to one
 * path. */
#include "common.h"
#include "encode_ref.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace mt;

namespace
{

const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(uintptr_t(0xF00D0));
constexpr int kThreads = 8;

struct Exports {
    Bytes ser;
    std::vector<int32_t> rp32, ci32;
    std::vector<int64_t> rp64, ci64;
    Bytes v32, v64, dense_row, dense_col;
};

/* Everything a reader can get out of A without changing it. */
Exports exports_of(macko_mat_t A, bool *ok)
{
    Exports e;
    int64_t rows = 0, cols = 0, nnz = 0;
    macko_datatype_t type = MACKO_R_16F;
    *ok = macko_mat_get_info(A, &rows, &cols, &nnz, &type) == MACKO_STATUS_SUCCESS;
    const size_t es = type == MACKO_R_16F ? 2 : 4;
    e.ser = serialized(A);
    e.rp32.resize((size_t)rows + 1);
    e.ci32.resize((size_t)nnz);
    e.rp64.resize((size_t)rows + 1);
    e.ci64.resize((size_t)nnz);
    e.v32.resize((size_t)nnz * es);
    e.v64.resize((size_t)nnz * es);
    e.dense_row.resize((size_t)(rows * cols) * es);
    e.dense_col.resize((size_t)(rows * cols) * es);
    *ok = *ok && !e.ser.empty() &&
          macko_mat_export_csr_host(A, e.rp32.data(), e.ci32.data(), e.v32.data(), MACKO_INDEX_32I,
                                    MACKO_INDEX_BASE_ZERO) == MACKO_STATUS_SUCCESS &&
          macko_mat_export_csr_host(A, e.rp64.data(), e.ci64.data(), e.v64.data(), MACKO_INDEX_64I,
                                    MACKO_INDEX_BASE_ONE) == MACKO_STATUS_SUCCESS &&
          macko_mat_export_dense_host(A, e.dense_row.data(), cols, MACKO_ORDER_ROW) == MACKO_STATUS_SUCCESS &&
          macko_mat_export_dense_host(A, e.dense_col.data(), rows, MACKO_ORDER_COL) == MACKO_STATUS_SUCCESS;
    return e;
}

bool same(const Exports &a, const Exports &b)
{
    return a.ser == b.ser && a.rp32 == b.rp32 && a.ci32 == b.ci32 && a.rp64 == b.rp64 && a.ci64 == b.ci64 &&
           a.v32 == b.v32 && a.v64 == b.v64 && a.dense_row == b.dense_row && a.dense_col == b.dense_col;
}

/* 8 threads read one matrix at once: serialize, deserialize, save + load (own files), CSR and dense exports, info.
 * Every result equals the single-threaded one, and the shared matrix is unchanged afterwards. */
TEST(Concurrency, SharedReadOnlyMatrixFromEightThreads)
{
    Mat A;
    A.A = random_host_matrix(120, 200, MACKO_R_16F, 10);
    ASSERT_NE(A.A, nullptr);
    bool ok = false;
    const Exports ref = exports_of(A.A, &ok);
    ASSERT_TRUE(ok);
    TempDir dir;
    std::atomic<int> bad{0}, done{0};
    run_threads(kThreads, [&](int t) {
        const std::string path = dir.file("t" + std::to_string(t) + ".macko");
        for (int it = 0; it < 6; it++) {
            bool eok = false;
            Exports e = exports_of(A.A, &eok);
            if (!eok || !same(e, ref))
                bad++;
            macko_mat_t B = nullptr, C = nullptr;
            if (macko_mat_deserialize(&B, ref.ser.data(), (int64_t)ref.ser.size()) != MACKO_STATUS_SUCCESS ||
                serialized(B) != ref.ser)
                bad++;
            if (macko_mat_save(A.A, path.c_str()) != MACKO_STATUS_SUCCESS ||
                macko_mat_load(&C, path.c_str()) != MACKO_STATUS_SUCCESS || serialized(C) != ref.ser)
                bad++;
            const void *v = nullptr;
            if (macko_mat_get_macko_host(A.A, &v, nullptr, nullptr, nullptr, nullptr, nullptr) !=
                    MACKO_STATUS_SUCCESS ||
                v == nullptr)
                bad++;
            macko_mat_destroy(B);
            macko_mat_destroy(C);
            done++;
        }
    });
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(done.load(), kThreads * 6);
    bool ok2 = false;
    EXPECT_TRUE(same(exports_of(A.A, &ok2), ref));
    EXPECT_TRUE(ok2);
}

/* 8 threads encode their own data (dense both orders, CSR both index types); every result is byte-identical to the
 * single-threaded encoding of the same data. */
TEST(Concurrency, ParallelEncodeMatchesSingleThread)
{
    struct Job {
        RawMat m;
        Bytes row, col, csr;
    };
    std::vector<Job> jobs(kThreads);
    auto encode_all = [](const RawMat &m, Bytes *row, Bytes *col, Bytes *csr) {
        macko_mat_t A = nullptr;
        if (encode_dense(m, MACKO_ORDER_ROW, m.cols + 3, &A) == MACKO_STATUS_SUCCESS)
            *row = serialized(A);
        macko_mat_destroy(A);
        A = nullptr;
        if (encode_dense(m, MACKO_ORDER_COL, m.rows, &A) == MACKO_STATUS_SUCCESS)
            *col = serialized(A);
        macko_mat_destroy(A);
        A = nullptr;
        std::vector<int64_t> rp{0}, ci;
        Bytes v;
        for (int64_t r = 0; r < m.rows; r++) {
            for (int64_t c = 0; c < m.cols; c++)
                if (!m.is_zero(m.at(r, c))) {
                    ci.push_back(c);
                    uint32_t b = m.at(r, c);
                    v.insert(v.end(), reinterpret_cast<uint8_t *>(&b), reinterpret_cast<uint8_t *>(&b) + m.es());
                }
            rp.push_back((int64_t)ci.size());
        }
        if (macko_mat_create_csr_host(&A, m.rows, m.cols, (int64_t)ci.size(), rp.data(), ci.data(), v.data(),
                                      MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO, m.type) == MACKO_STATUS_SUCCESS)
            *csr = serialized(A);
        macko_mat_destroy(A);
    };
    for (int t = 0; t < kThreads; t++) {
        jobs[(size_t)t].m = raw_random(70 + 13 * t, 90 + 29 * t, t % 2 ? MACKO_R_32F : MACKO_R_16F, 0.1 + 0.1 * t,
                                       100 + (uint64_t)t);
        encode_all(jobs[(size_t)t].m, &jobs[(size_t)t].row, &jobs[(size_t)t].col, &jobs[(size_t)t].csr);
        ASSERT_FALSE(jobs[(size_t)t].row.empty());
        ASSERT_EQ(jobs[(size_t)t].row, jobs[(size_t)t].col); /* both orders encode the same matrix */
        ASSERT_EQ(jobs[(size_t)t].row, jobs[(size_t)t].csr);
    }
    std::atomic<int> bad{0};
    run_threads(kThreads, [&](int t) {
        for (int it = 0; it < 3; it++) {
            Bytes row, col, csr;
            encode_all(jobs[(size_t)t].m, &row, &col, &csr);
            if (row != jobs[(size_t)t].row || col != jobs[(size_t)t].col || csr != jobs[(size_t)t].csr)
                bad++;
        }
    });
    EXPECT_EQ(bad.load(), 0);
}

/* Error details are per thread: each thread's failures and successes, interleaved with the others', read back its
 * own position and message. */
TEST(Concurrency, ErrorDetailsAreThreadLocal)
{
    std::atomic<int> bad{0};
    run_threads(kThreads, [&](int t) {
        const int64_t rows = -(int64_t)t - 1;
        const std::string want = "macko_mat_create_dense_host: argument 2: rows is " + std::to_string(rows) +
                                 "; it must be in [0, 2^56]";
        int x = 0;
        for (int it = 0; it < 300; it++) {
            macko_mat_t A = kPoison;
            if (macko_mat_create_dense_host(&A, rows, 4, MACKO_R_16F, nullptr, 4, MACKO_ORDER_ROW) !=
                    MACKO_STATUS_INVALID_VALUE ||
                macko_get_last_error_position() != 2 || want != macko_get_last_error_message() || A != kPoison)
                bad++;
            std::this_thread::yield();
            if (macko_get_last_error_position() != 2 || want != macko_get_last_error_message())
                bad++;
            const int p = 1 + (t + it) % 3;
            if (macko_get_version(p == 1 ? nullptr : &x, p == 2 ? nullptr : &x, p == 3 ? nullptr : &x) !=
                    MACKO_STATUS_INVALID_VALUE ||
                macko_get_last_error_position() != p)
                bad++;
            if (macko_get_version(&x, &x, &x) != MACKO_STATUS_SUCCESS || macko_get_last_error_position() != 0 ||
                macko_get_last_error_message()[0] != '\0')
                bad++;
        }
    });
    EXPECT_EQ(bad.load(), 0);
}

/* 8 threads save different matrices to the same path at once: the file is always one complete matrix (the last
 * rename wins), never a mix, and no temporary file is left. */
TEST(Concurrency, ConcurrentSavesToOnePathNeverTear)
{
    std::vector<Mat> ms(kThreads);
    std::vector<Bytes> sers;
    for (int t = 0; t < kThreads; t++) {
        ms[(size_t)t].A = random_host_matrix(10 + 7 * t, 60 + 11 * t, t % 2 ? MACKO_R_32F : MACKO_R_16F, 200 + (uint64_t)t);
        sers.push_back(serialized(ms[(size_t)t].A));
    }
    TempDir dir;
    const std::string path = dir.file("shared.macko");
    std::atomic<int> bad{0};
    run_threads(kThreads, [&](int t) {
        for (int it = 0; it < 5; it++) {
            if (macko_mat_save(ms[(size_t)t].A, path.c_str()) != MACKO_STATUS_SUCCESS)
                bad++;
            macko_mat_t B = nullptr;
            /* a concurrent reader sees a complete file of one of the writers */
            if (macko_mat_load(&B, path.c_str()) != MACKO_STATUS_SUCCESS)
                bad++;
            else if (std::find(sers.begin(), sers.end(), serialized(B)) == sers.end())
                bad++;
            macko_mat_destroy(B);
        }
    });
    EXPECT_EQ(bad.load(), 0);
    const Bytes final_bytes = read_file(path);
    EXPECT_NE(std::find(sers.begin(), sers.end(), final_bytes), sers.end());
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"shared.macko"});
}

} // namespace
