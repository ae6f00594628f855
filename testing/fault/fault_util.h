/* Helpers of the fault tests: matrices, byte snapshots of a matrix's arrays (host and device), device buffers that
 * are host memory on the shim's fake device. Test code is compiled without the shim: its calls are the real ones. */
#pragma once

#include "common.h"
#include "fault_control.h"
#include "fault_sweep.h"
#include "macko_internal.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace ft {

using Bytes = std::vector<uint8_t>;

/* Never a valid handle or matrix: an output that must stay untouched is preset to this. */
template <class T> T poison() { return reinterpret_cast<T>(uintptr_t(0xF00D0)); }

/* The three arrays of an encoding, as bytes. */
struct Arrays {
    Bytes values, deltas, row_ptr;
    bool operator==(const Arrays &o) const
    {
        return values == o.values && deltas == o.deltas && row_ptr == o.row_ptr;
    }
};

inline size_t values_bytes(const macko_mat_s *m) { return (size_t)macko_values_bytes(m->type, m->entries_padded); }
inline size_t rowptr_bytes(const macko_mat_s *m) { return (size_t)macko_rowptr_bytes(m->rows, m->rp64); }

inline Bytes host_bytes(const void *p, size_t n)
{
    const uint8_t *b = static_cast<const uint8_t *>(p);
    return n > 0 && p != nullptr ? Bytes(b, b + n) : Bytes();
}

/* Device memory read back (plain memory on the fake device). */
inline Bytes device_bytes(const void *p, size_t n)
{
    Bytes b(n);
    if (n == 0 || p == nullptr)
        return Bytes();
    if (mf_fake_device())
        std::memcpy(b.data(), p, n);
    else
        EXPECT_EQ(cudaMemcpy(b.data(), p, n, cudaMemcpyDeviceToHost), cudaSuccess);
    return b;
}

inline Arrays host_arrays(const macko_mat_s *m)
{
    return {host_bytes(m->host.values, values_bytes(m)), host_bytes(m->host.deltas, (size_t)m->entries_padded / 2),
            host_bytes(m->host.row_ptr, rowptr_bytes(m))};
}

/* The device copy's arrays in its layout: the three MACKO arrays, or for MACKO_LAYOUT_TILES the tile stream (as
 * values), no deltas and the record offsets (as row_ptr). */
inline Arrays device_arrays(const macko_mat_s *m)
{
    if (m->dev_layout == MACKO_LAYOUT_TILES)
        return {device_bytes(m->dev.values, (size_t)m->td.words * 16), Bytes(),
                device_bytes(m->dev.row_ptr, (size_t)(m->td.bands * m->td.tcols + 1) * 4)};
    return {device_bytes(m->dev.values, values_bytes(m)), device_bytes(m->dev.deltas, (size_t)m->entries_padded / 2),
            device_bytes(m->dev.row_ptr, rowptr_bytes(m))};
}

/* Everything a failed call must leave as it was: the fields and the arrays' addresses and bytes. */
struct MatState {
    macko_mat_s fields;
    Arrays host, dev;
};

inline MatState mat_state(const macko_mat_s *m)
{
    MatState s;
    s.fields = *m;
    if (m->has_host)
        s.host = host_arrays(m);
    if (m->has_device)
        s.dev = device_arrays(m);
    return s;
}

inline void expect_same_state(const macko_mat_s *m, const MatState &s)
{
    const macko_mat_s &f = s.fields;
    EXPECT_TRUE(m->rows == f.rows && m->cols == f.cols && m->nnz == f.nnz && m->entries == f.entries &&
                m->entries_padded == f.entries_padded && m->type == f.type && m->rp64 == f.rp64)
        << "the matrix's sizes changed";
    EXPECT_TRUE(m->has_host == f.has_host && m->host.values == f.host.values && m->host.deltas == f.host.deltas &&
                m->host.row_ptr == f.host.row_ptr)
        << "the host copy changed";
    EXPECT_TRUE(m->has_device == f.has_device && m->device == f.device && m->dev.values == f.dev.values &&
                m->dev.deltas == f.dev.deltas && m->dev.row_ptr == f.dev.row_ptr && m->trans == f.trans)
        << "the device copy or the analysis changed";
    EXPECT_TRUE(m->layout == f.layout && m->dev_layout == f.dev_layout &&
                std::memcmp(&m->td, &f.td, sizeof m->td) == 0)
        << "the layout or the device copy's tile layout fields changed";
    if (m->has_host) {
        EXPECT_TRUE(host_arrays(m) == s.host) << "the host arrays changed";
    }
    if (m->has_device) {
        EXPECT_TRUE(device_arrays(m) == s.dev) << "the device arrays changed";
    }
}

/* A test matrix of either type with empty rows, full rows and gaps longer than 16 (padding), as dense bytes. */
struct Source {
    mt::Dense m;
    macko_datatype_t type;
    Bytes row_major;
};

inline Source make_source(int64_t rows, int64_t cols, macko_datatype_t type, uint64_t seed)
{
    Source s;
    s.m = mt::random_dense(rows, cols, 0.3, seed, type == MACKO_R_16F);
    mt::add_structure(s.m, seed + 1);
    s.type = type;
    s.row_major = mt::to_bytes(s.m, type, MACKO_ORDER_ROW, cols);
    return s;
}

/* The transposed matrix of s (same type). */
inline Source transposed(const Source &s)
{
    Source t;
    t.m.rows = s.m.cols;
    t.m.cols = s.m.rows;
    t.m.v.resize(s.m.v.size());
    for (int64_t r = 0; r < s.m.rows; r++)
        for (int64_t c = 0; c < s.m.cols; c++)
            t.m.at(c, r) = s.m.at(r, c);
    t.type = s.type;
    t.row_major = mt::to_bytes(t.m, t.type, MACKO_ORDER_ROW, t.m.cols);
    return t;
}

/* Host encoding of s (made with nothing armed). */
inline macko_mat_t encode(const Source &s)
{
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_dense_host(&A, s.m.rows, s.m.cols, s.type, s.row_major.data(), s.m.cols,
                                          MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    return A;
}

inline Arrays encoded_arrays(const Source &s)
{
    macko_mat_t A = encode(s);
    Arrays a = A != nullptr ? host_arrays(A) : Arrays();
    macko_mat_destroy(A);
    return a;
}

inline Bytes serialized(macko_mat_t A)
{
    int64_t n = -1;
    if (macko_mat_serialized_size(A, &n) != MACKO_STATUS_SUCCESS || n < 0)
        return Bytes();
    Bytes b((size_t)n);
    if (macko_mat_serialize(A, b.data(), n) != MACKO_STATUS_SUCCESS)
        return Bytes();
    return b;
}

/* A case whose call makes a matrix into out (routine: the name its failure messages start with): out is untouched
 * (poisoned) after a failure; after a success it is a matrix that right(out) accepts, destroyed by the cleanup. */
inline Case matrix_case(const std::string &name, const char *routine, macko_mat_t &out,
                        std::function<void(macko_mat_t)> right, std::function<macko_status_t()> call)
{
    Case c;
    c.name = name;
    c.routine = routine;
    c.tolerable = kNothingTolerable;
    c.prepare = [&out] { out = poison<macko_mat_t>(); };
    c.call = std::move(call);
    c.unchanged = [&out] { EXPECT_EQ(out, poison<macko_mat_t>()); };
    c.succeeded = [&out, right] {
        ASSERT_NE(out, poison<macko_mat_t>());
        ASSERT_NE(out, nullptr);
        right(out);
    };
    c.cleanup = [&out] {
        if (out != poison<macko_mat_t>())
            macko_mat_destroy(out);
        out = poison<macko_mat_t>();
    };
    return c;
}

/* A product under every failure: out (a buffer with get() and set(Bytes)) is reset before every call, and a success
 * must give what the same call gave before the sweep (a real GPU; on the fake device no kernel runs and only the
 * status is checked). A failed launch (seen by the cudaGetLastError after it) must be reported, even where the kernel
 * ran after all (an injected failure on a GPU); a query with a fallback may fail unnoticed. Returns the fault points
 * (at least one expected: the launch is checked through the shim). */
template <class Buffer>
long sweep_compute(const std::string &name, const std::string &routine, Buffer &out,
                   std::function<macko_status_t()> launch)
{
    const Bytes out0 = out.get();
    if (launch() != MACKO_STATUS_SUCCESS) {
        ADD_FAILURE() << name << ": " << macko_get_last_error_message();
        return 0;
    }
    const Bytes ref = out.get();
    Case c;
    c.name = name;
    c.routine = routine;
    c.must_report = {"cudaGetLastError", "cudaPeekAtLastError", "cudaLaunchKernel"};
    c.call = [&out, &out0, launch] {
        out.set(out0);
        return launch();
    };
    c.succeeded = [&out, &ref] {
        if (!mf_fake_device()) {
            EXPECT_EQ(out.get(), ref);
        }
    };
    const Tally t = sweep(c);
    EXPECT_GE(t.points, 1) << "no fault point: the launch is not checked through the shim";
    return t.points;
}

} // namespace ft
