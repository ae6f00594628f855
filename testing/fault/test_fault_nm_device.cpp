/* Fault injection, the N:M kind on the device (fault_sweep.h; the host routines in test_fault_nm.cpp): upload in
 * both device layouts (GEN: the host arrays; SP24: m = 4, n <= 2, 16-bit values, built on the host), upload over a
 * device copy, download, create_nm_dense_device, the test override's re-upload in the other layout, the products
 * (GEN, SIMT, SP24 with and without split K), destroy.
 *
 * On the fake device (no GPU) the routines but the products do all their work (device memory is host memory), so
 * every output is checked byte for byte; the products' kernels do not run there, so only their status and recovery
 * are checked. On a GPU every success of a product is compared bit for bit with a run made before the sweep. */
#include "fault_util.h"
#include "plan.h"

#include <cuda_runtime_api.h>

#include <memory>

extern "C" cudaError_t macko_fault_cudaMalloc(void **p, size_t n);
extern "C" cudaError_t macko_fault_cudaFree(void *p);

namespace {

using namespace ft;

/* Device memory through the shim (fake device memory without a GPU: create_nm_dense_device asks the shim whether
 * its input is device memory), filled from bytes; made before the sweeps, so never armed. */
struct DevBuf {
    void *p = nullptr;
    size_t n = 0;
    explicit DevBuf(const Bytes &b) : n(b.size())
    {
        EXPECT_EQ(macko_fault_cudaMalloc(&p, std::max<size_t>(n, 16)), cudaSuccess);
        set(b);
    }
    ~DevBuf() { macko_fault_cudaFree(p); }
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;
    void set(const Bytes &b)
    {
        if (mf_fake_device())
            std::memcpy(p, b.data(), b.size());
        else
            EXPECT_EQ(cudaMemcpy(p, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    Bytes get() const { return device_bytes(p, n); }
};

/* An N:M matrix: the pattern, the dense source (row-major, and column-major with ld = rows + 5). */
struct NmSrc {
    const char *label;
    int64_t rows, cols;
    macko_datatype_t type;
    int n, m, v;
    Bytes row_major, col_major;
};

/* Group g keeps, in window w, the n positions p with (p + 3g + 5w) mod m < n: the kept positions move from window to
 * window and group to group; a few kept values are zero (density 0.95). */
NmSrc nm_src(const char *label, int64_t rows, int64_t cols, macko_datatype_t type, int n, int m, int v, uint64_t seed)
{
    const bool half = type == MACKO_R_16F || type == MACKO_R_16BF;
    mt::Dense d = mt::random_dense(rows, cols, 0.95, seed, half);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            if ((c % m + 3 * (r / v) + 5 * (c / m)) % m >= n)
                d.at(r, c) = 0.0f;
    return {label, rows, cols, type, n, m, v, mt::to_bytes(d, type, MACKO_ORDER_ROW, cols),
            mt::to_bytes(d, type, MACKO_ORDER_COL, rows + 5)};
}

/* GEN (fp32 4:8 v2), SP24 (fp16 2:4, bf16 1:4 v4: over 1024 columns, so that n = 4 splits K), SIMT (fp32 16:32
 * v32), fp64 GEN. */
const NmSrc &gen32()
{
    static const NmSrc s = nm_src("4:8 v2 fp32, GEN", 37, 70, MACKO_R_32F, 4, 8, 2, 61);
    return s;
}
const NmSrc &sp24h()
{
    static const NmSrc s = nm_src("2:4 fp16, SP24", 37, 1030, MACKO_R_16F, 2, 4, 1, 62);
    return s;
}
const NmSrc &sp24b()
{
    static const NmSrc s = nm_src("1:4 v4 bf16, SP24", 37, 1030, MACKO_R_16BF, 1, 4, 4, 63);
    return s;
}
const NmSrc &simt32()
{
    static const NmSrc s = nm_src("16:32 v32 fp32", 70, 100, MACKO_R_32F, 16, 32, 32, 64);
    return s;
}
const NmSrc &gen64()
{
    static const NmSrc s = nm_src("2:8 fp64, GEN", 37, 70, MACKO_R_64F, 2, 8, 1, 65);
    return s;
}

macko_mat_t nm_host(const NmSrc &s)
{
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_nm_dense_host(&A, s.rows, s.cols, s.type, s.row_major.data(), s.cols, MACKO_ORDER_ROW,
                                             s.n, s.m, s.v),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    return A;
}

/* The arrays of both copies, as bytes (empty where there is no copy). */
struct NmBytes {
    Bytes hvalues, hpos, dvalues, dmeta;
    bool operator==(const NmBytes &o) const
    {
        return hvalues == o.hvalues && hpos == o.hpos && dvalues == o.dvalues && dmeta == o.dmeta;
    }
};

NmBytes nm_host_bytes(const macko_mat_s *A)
{
    NmBytes b;
    if (A->has_host) {
        b.hvalues = host_bytes(A->nm.hvalues, (size_t)(A->rows * A->nm.kept) * macko_type_size(A->type));
        b.hpos = host_bytes(A->nm.hpos, (size_t)(A->nm.groups * A->nm.kept));
    }
    return b;
}

NmBytes nm_bytes(const macko_mat_s *A)
{
    NmBytes b = nm_host_bytes(A);
    if (A->has_device) {
        b.dvalues = device_bytes(A->nm.dvalues, (size_t)A->nm.dvalues_bytes);
        b.dmeta = device_bytes(A->nm.dmeta, (size_t)A->nm.dmeta_bytes);
    }
    return b;
}

/* Everything a failed call must leave as it was: the fields (pointers included) and the bytes of both copies. */
struct NmState {
    macko_mat_s f;
    NmBytes bytes;
};

NmState nm_state(const macko_mat_s *A) { return {*A, nm_bytes(A)}; }

void expect_same_nm(const macko_mat_s *A, const NmState &s)
{
    const macko_nm &a = A->nm, &b = s.f.nm;
    EXPECT_TRUE(A->kind == s.f.kind && A->rows == s.f.rows && A->cols == s.f.cols && A->nnz == s.f.nnz &&
                A->type == s.f.type && A->has_host == s.f.has_host && A->has_device == s.f.has_device &&
                A->device == s.f.device)
        << "the matrix's fields changed";
    EXPECT_TRUE(a.n == b.n && a.m == b.m && a.v == b.v && a.windows == b.windows && a.groups == b.groups &&
                a.kept == b.kept && a.hvalues == b.hvalues && a.hpos == b.hpos)
        << "the pattern or the host copy's addresses changed";
    EXPECT_TRUE(a.dev_layout == b.dev_layout && a.dvalues == b.dvalues && a.dmeta == b.dmeta &&
                a.dvalues_bytes == b.dvalues_bytes && a.dmeta_bytes == b.dmeta_bytes && a.path == b.path)
        << "the device copy (layout, addresses, sizes, forced path) changed";
    EXPECT_TRUE(nm_bytes(A) == s.bytes) << "the bytes of a copy changed";
}

/* What an upload of s in the automatic layout (or `layout`) makes, with nothing armed: the host arrays and the
 * device arrays. */
NmBytes uploaded(macko_handle_t h, const NmSrc &s, int path = MACKO_NM_PATH_AUTO)
{
    macko_mat_t A = nm_host(s);
    NmBytes b;
    EXPECT_EQ(macko_mat_upload(h, A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    if (path != MACKO_NM_PATH_AUTO) {
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        f.nm_path = path;
        EXPECT_EQ(macko_plan_override(h, A, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
    }
    b = nm_bytes(A);
    macko_mat_destroy(A);
    return b;
}

struct NmDevice : ::testing::Test {
    macko_handle_t handle = nullptr;
    macko_mat_t A = nullptr;
    std::unique_ptr<DevBuf> x, y; /* for the product that shows a device copy is usable */

    void SetUp() override
    {
        ASSERT_EQ(macko_create(&handle), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        x = std::make_unique<DevBuf>(Bytes(1030 * 8, 0));
        y = std::make_unique<DevBuf>(Bytes(1030 * 8, 0));
    }
    void TearDown() override
    {
        x.reset();
        y.reset();
        macko_destroy(handle);
    }

    /* s encoded on the host, then (nothing armed) uploaded, forced to a path, its host copy released, as asked. */
    macko_mat_t make(const NmSrc &s, bool upload, bool release, int path = MACKO_NM_PATH_AUTO)
    {
        macko_mat_t M = nm_host(s);
        EXPECT_NE(M, nullptr);
        if (upload) {
            EXPECT_EQ(macko_mat_upload(handle, M), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        }
        if (path != MACKO_NM_PATH_AUTO) {
            macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
            f.nm_path = path;
            EXPECT_EQ(macko_plan_override(handle, M, MACKO_OPERATION_NON_TRANSPOSE, &f), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
        }
        if (release) {
            EXPECT_EQ(macko_mat_release_host(M), MACKO_STATUS_SUCCESS);
        }
        return M;
    }

    /* y = A x in A's type: the device copy works (on the fake device: the call is accepted and launches). */
    void expect_usable(macko_mat_t M)
    {
        const float a = 1.0f, b = 0.0f;
        const double ad = 1.0, bd = 0.0;
        macko_status_t st;
        if (M->type == MACKO_R_64F)
            st = macko_Dspmv(handle, MACKO_OPERATION_NON_TRANSPOSE, &ad, M, static_cast<double *>(x->p), 1, &bd,
                             static_cast<double *>(y->p), 1);
        else
            st = macko_spmv_ex(handle, MACKO_OPERATION_NON_TRANSPOSE, &a, M, x->p, M->type, 1, &b, y->p, M->type, 1,
                               MACKO_R_32F);
        EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << "the device copy is not usable: " << macko_get_last_error_message();
    }

    /* A case on the matrix A that prepare makes: after a failure A is exactly as before (fields, addresses, bytes of
     * both copies) and a device copy it had still works; cleanup destroys it. */
    Case matrix_case(const std::string &name, const std::string &routine, std::function<macko_mat_t()> make_A,
                     std::function<macko_status_t()> call, std::function<void()> succeeded)
    {
        auto state = std::make_shared<NmState>();
        Case c;
        c.name = name;
        c.routine = routine;
        c.tolerable = {"cudaGetLastError"}; /* the reset of an earlier error before the work */
        c.prepare = [this, make_A, state] {
            A = make_A();
            *state = nm_state(A);
        };
        c.call = std::move(call);
        c.unchanged = [this, state] {
            expect_same_nm(A, *state);
            if (A->has_device)
                expect_usable(A);
        };
        c.succeeded = std::move(succeeded);
        c.cleanup = [this] {
            macko_mat_destroy(A);
            A = nullptr;
        };
        return c;
    }
};

const NmSrc *const kLayouts[] = {&gen32(), &sp24h(), &sp24b()};

int auto_layout(const NmSrc &s) { return macko_nm_auto_layout(s.n, s.m, s.v, s.type); }

TEST_F(NmDevice, Upload)
{
    for (const NmSrc *s : kLayouts) {
        const NmBytes ref = uploaded(handle, *s);
        const int layout = auto_layout(*s);
        ASSERT_EQ(layout, std::string(s->label).find("SP24") != std::string::npos ? MACKO_NMDEV_SP24 : MACKO_NMDEV_GEN);
        if (layout == MACKO_NMDEV_GEN) { /* the GEN device arrays are the host arrays */
            EXPECT_EQ(ref.dvalues, ref.hvalues);
            EXPECT_EQ(ref.dmeta, ref.hpos);
        }
        auto on_device = [this, &ref, layout] {
            ASSERT_TRUE(A->has_device);
            EXPECT_EQ(A->nm.dev_layout, layout);
            EXPECT_EQ(A->nm.path, 0);
            EXPECT_TRUE(nm_bytes(A) == ref);
        };
        sweep(matrix_case(
            std::string("macko_mat_upload (N:M ") + s->label + ", host copy only)", "macko_mat_upload",
            [this, s] { return make(*s, false, false); }, [this] { return macko_mat_upload(handle, A); }, on_device));
        /* the new copy replaces the old one only on success; a failure keeps the old one working */
        sweep(matrix_case(
            std::string("macko_mat_upload (N:M ") + s->label + ", over the device copy)", "macko_mat_upload",
            [this, s] { return make(*s, true, false); }, [this] { return macko_mat_upload(handle, A); }, on_device));
    }
}

TEST_F(NmDevice, DownloadAndRelease)
{
    for (const NmSrc *s : kLayouts) {
        const NmBytes ref = uploaded(handle, *s);
        auto back = [this, &ref] {
            ASSERT_TRUE(A->has_host);
            EXPECT_TRUE(nm_bytes(A) == ref) << "the host arrays are not the encoder's, or the device copy changed";
        };
        sweep(matrix_case(
            std::string("macko_mat_download (N:M ") + s->label + ", host copy released)", "macko_mat_download",
            [this, s] { return make(*s, true, true); }, [this] { return macko_mat_download(handle, A); }, back));
        sweep(matrix_case(
            std::string("macko_mat_download (N:M ") + s->label + ", over the host copy)", "macko_mat_download",
            [this, s] { return make(*s, true, false); }, [this] { return macko_mat_download(handle, A); }, back));
    }
    const Tally t = sweep(matrix_case(
        "macko_mat_release_host (N:M, SP24)", "macko_mat_release_host", [this] { return make(sp24h(), true, false); },
        [this] { return macko_mat_release_host(A); }, [this] { EXPECT_FALSE(A->has_host); }));
    EXPECT_EQ(t.points, 0);
}

TEST_F(NmDevice, CreateNmDenseDevice)
{
    macko_mat_t out = poison<macko_mat_t>();
    const struct {
        const NmSrc *s;
        const char *name;
        bool col, detect;
    } variants[] = {
        {&gen32(), "4:8 v2 fp32 (GEN), row-major: one copy", false, false},
        {&sp24h(), "2:4 fp16 (SP24), column-major, ld = rows + 5: a 2-D copy", true, false},
        {&sp24b(), "1:4 v4 bf16 with n detected (SP24), row-major", false, true},
    };
    for (const auto &v : variants) {
        const NmSrc &s = *v.s;
        DevBuf dense(v.col ? s.col_major : s.row_major);
        auto call = [&] {
            const int n = v.detect ? 0 : s.n; /* given m and v: the smallest n that holds, s.n */
            return v.col ? macko_mat_create_nm_dense_device(handle, &out, s.rows, s.cols, s.type, dense.p, s.rows + 5,
                                                            MACKO_ORDER_COL, n, s.m, s.v)
                         : macko_mat_create_nm_dense_device(handle, &out, s.rows, s.cols, s.type, dense.p, s.cols,
                                                            MACKO_ORDER_ROW, n, s.m, s.v);
        };
        /* the reference: the same call with nothing armed, and the host routine's arrays */
        ASSERT_EQ(call(), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        const NmBytes ref = nm_bytes(out);
        const int layout = out->nm.dev_layout;
        macko_mat_destroy(out);
        out = poison<macko_mat_t>();
        EXPECT_EQ(layout, auto_layout(s));
        macko_mat_t H = nm_host(s);
        ASSERT_NE(H, nullptr);
        EXPECT_TRUE(nm_host_bytes(H) == NmBytes({ref.hvalues, ref.hpos, {}, {}}));
        macko_mat_destroy(H);

        Case c;
        c.name = std::string("macko_mat_create_nm_dense_device (") + v.name + ")";
        c.routine = "macko_mat_create_nm_dense_device";
        /* a failed cudaPointerGetAttributes / cudaDeviceGetAttribute while checking the input ("cannot tell": the
         * copy decides), a failed reset of an earlier error before the work */
        c.tolerable = {"cudaPointerGetAttributes", "cudaDeviceGetAttribute", "cudaGetLastError"};
        c.prepare = [&] { out = poison<macko_mat_t>(); };
        c.call = call;
        c.unchanged = [&] { EXPECT_EQ(out, poison<macko_mat_t>()); };
        c.succeeded = [&] {
            ASSERT_NE(out, poison<macko_mat_t>());
            ASSERT_NE(out, nullptr);
            EXPECT_EQ(out->kind, (int)MACKO_KIND_NM);
            EXPECT_TRUE(out->has_device);
            EXPECT_EQ(out->nm.dev_layout, layout);
            EXPECT_TRUE(nm_bytes(out) == ref);
        };
        c.cleanup = [&] {
            if (out != poison<macko_mat_t>())
                macko_mat_destroy(out);
            out = poison<macko_mat_t>();
        };
        const Bytes before = dense.get();
        sweep(c);
        EXPECT_EQ(dense.get(), before) << "the dense input changed";
    }
}

/* The test override (src/plan_override.c): a path in the other device layout uploads A again in it, which replaces
 * the old copy only on success; a path in the same layout changes nothing on the device. */
TEST_F(NmDevice, PlanOverride)
{
    const NmBytes gen = uploaded(handle, sp24h(), MACKO_NM_PATH_GEN), sp24 = uploaded(handle, sp24h());
    EXPECT_EQ(gen.dvalues, gen.hvalues);
    EXPECT_EQ(gen.dmeta, gen.hpos);
    auto override_to = [this](int path) {
        macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
        f.nm_path = path;
        return macko_plan_override(handle, A, MACKO_OPERATION_NON_TRANSPOSE, &f);
    };
    sweep(matrix_case(
        "macko_plan_override (N:M 2:4 fp16: nm_path GEN uploads the SP24 copy again in GEN)", "macko_plan_override",
        [this] { return make(sp24h(), true, false); }, [override_to] { return override_to(MACKO_NM_PATH_GEN); },
        [this, &gen] {
            EXPECT_EQ(A->nm.dev_layout, MACKO_NMDEV_GEN);
            EXPECT_EQ(A->nm.path, MACKO_NM_PATH_GEN);
            EXPECT_TRUE(nm_bytes(A) == gen);
        }));
    sweep(matrix_case(
        "macko_plan_override (N:M 2:4 fp16: nm_path SP24 uploads the GEN copy again in SP24)", "macko_plan_override",
        [this] { return make(sp24h(), true, false, MACKO_NM_PATH_GEN); },
        [override_to] { return override_to(MACKO_NM_PATH_SP24); },
        [this, &sp24] {
            EXPECT_EQ(A->nm.dev_layout, MACKO_NMDEV_SP24);
            EXPECT_EQ(A->nm.path, MACKO_NM_PATH_SP24);
            EXPECT_TRUE(nm_bytes(A) == sp24);
        }));
    const Tally t = sweep(matrix_case(
        "macko_plan_override (N:M 16:32 v32 fp32: nm_path SIMT, same layout)", "macko_plan_override",
        [this] { return make(simt32(), true, false); }, [override_to] { return override_to(MACKO_NM_PATH_SIMT); },
        [this] { EXPECT_EQ(A->nm.path, MACKO_NM_PATH_SIMT); }));
    EXPECT_EQ(t.points, 0);
}

TEST_F(NmDevice, Destroy)
{
    /* destroy frees both copies whatever fails on the way (the ledger is checked after every run) */
    Case d;
    d.routine = "macko_mat_destroy";
    d.call = [this] { return macko_mat_destroy(A); };
    d.name = "macko_mat_destroy (N:M, SP24 device copy and host copy)";
    d.prepare = [this] { A = make(sp24h(), true, false); };
    sweep(d);
    d.name = "macko_mat_destroy (N:M, GEN device copy only)";
    d.prepare = [this] { A = make(gen32(), true, true); };
    sweep(d);
}

/* ---------------------------------------------------------------- the products */

Bytes random_values(int64_t n, macko_datatype_t type, uint64_t seed)
{
    return mt::values_bytes(mt::random_vector(n, seed, type == MACKO_R_16F || type == MACKO_R_16BF), type);
}

struct NmCompute : NmDevice {
    long compute(const std::string &name, const std::string &routine, DevBuf &C, std::function<macko_status_t()> launch)
    {
        return sweep_compute(name, routine, C, std::move(launch));
    }
};

TEST_F(NmCompute, Products)
{
    const float alpha = 1.25f, beta = -0.5f;
    const double dalpha = 1.25, dbeta = -0.5;
    const macko_operation_t N = MACKO_OPERATION_NON_TRANSPOSE;
    macko_mat_t H = make(sp24h(), true, false), Bf = make(sp24b(), true, false), G = make(gen32(), true, false);
    macko_mat_t S = make(simt32(), true, false), D = make(gen64(), true, false);
    ASSERT_EQ(H->nm.dev_layout, MACKO_NMDEV_SP24);
    ASSERT_EQ(Bf->nm.dev_layout, MACKO_NMDEV_SP24);
    const int64_t k = 1030, m = 70, wide = 40;
    DevBuf Bh(random_values(k * wide, MACKO_R_16F, 71)), Ch(random_values(m * wide, MACKO_R_16F, 72));
    DevBuf Bb(random_values(k * wide, MACKO_R_16BF, 73)), Cb(random_values(m * wide, MACKO_R_16BF, 74));
    DevBuf Bs(random_values(k * wide, MACKO_R_32F, 75)), Cs(random_values(m * wide, MACKO_R_32F, 76));
    DevBuf Bd(random_values(k * wide, MACKO_R_64F, 77)), Cd(random_values(m * wide, MACKO_R_64F, 78));
    auto hp = [](const DevBuf &b) { return static_cast<macko_half *>(b.p); };
    auto fp = [](const DevBuf &b) { return static_cast<float *>(b.p); };

    compute("macko_Hspmv (N:M 2:4, SP24)", "macko_Hspmv", Ch,
            [&] { return macko_Hspmv(handle, N, &alpha, H, hp(Bh), 1, &beta, hp(Ch), 1); });
    /* n = 4 on 33 k-steps, the staged configuration 9 forced: split K, the partial sums in the handle's workspace and
     * a finishing launch */
    macko_plan_forced f = MACKO_PLAN_FORCED_NONE;
    f.nm_path = MACKO_NM_PATH_SP24;
    f.nm_cfg = 1 + 5; /* a retired configuration (not compiled, kernels/nm_sp24.cu): refused at argument 4 */
    EXPECT_EQ(macko_plan_override(handle, H, N, &f), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 4);
    f.nm_cfg = 1 + 9;
    ASSERT_EQ(macko_plan_override(handle, H, N, &f), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(compute("macko_Hspmm (N:M 2:4, SP24, n = 4: split K)", "macko_Hspmm", Ch,
                      [&] { return macko_Hspmm(handle, N, 4, &alpha, H, hp(Bh), k, &beta, hp(Ch), m); }),
              2);
    f = MACKO_PLAN_FORCED_NONE;
    ASSERT_EQ(macko_plan_override(handle, H, N, &f), MACKO_STATUS_SUCCESS);
    /* the same, automatic: a direct configuration, K over the warps of a block, one launch */
    EXPECT_EQ(compute("macko_Hspmm (N:M 2:4, SP24, n = 4: direct)", "macko_Hspmm", Ch,
                      [&] { return macko_Hspmm(handle, N, 4, &alpha, H, hp(Bh), k, &beta, hp(Ch), m); }),
              1);
    compute("macko_Hspmm (N:M 2:4, SP24, n = 40)", "macko_Hspmm", Ch,
            [&] { return macko_Hspmm(handle, N, wide, &alpha, H, hp(Bh), k, &beta, hp(Ch), m); });
    compute("macko_spmm_ex (N:M 1:4 v4 bf16, SP24, n = 4, bf16 B and C)", "macko_spmm_ex", Cb, [&] {
        return macko_spmm_ex(handle, N, 4, &alpha, Bf, Bb.p, MACKO_R_16BF, k, &beta, Cb.p, MACKO_R_16BF, m,
                             MACKO_R_32F);
    });
    compute("macko_Sspmm (N:M 4:8 v2, GEN, n = 4)", "macko_Sspmm", Cs,
            [&] { return macko_Sspmm(handle, N, 4, &alpha, G, fp(Bs), gen32().cols, &beta, fp(Cs), m); });
    /* 70 rows: GEN up to n = 127 (macko_nm_simt_from), SIMT from 128; B's 100 x 128 fit in Bs */
    const int64_t simt_n = 128;
    DevBuf Cs2(random_values(m * simt_n, MACKO_R_32F, 79));
    ASSERT_EQ(macko_nm_path(S, MACKO_COMBO_S, simt_n - 1), MACKO_NM_PATH_GEN);
    ASSERT_EQ(macko_nm_path(S, MACKO_COMBO_S, simt_n), MACKO_NM_PATH_SIMT);
    compute("macko_Sspmm (N:M 16:32 v32, SIMT, n = 128)", "macko_Sspmm", Cs2,
            [&] { return macko_Sspmm(handle, N, simt_n, &alpha, S, fp(Bs), simt32().cols, &beta, fp(Cs2), m); });
    compute("macko_Dspmv (N:M 2:8 fp64, GEN)", "macko_Dspmv", Cd, [&] {
        return macko_Dspmv(handle, N, &dalpha, D, static_cast<double *>(Bd.p), 1, &dbeta,
                           static_cast<double *>(Cd.p), 1);
    });
    for (macko_mat_t M : {H, Bf, G, S, D})
        macko_mat_destroy(M);
}

} // namespace
