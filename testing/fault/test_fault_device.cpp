/* Fault injection, device routines: every allocation and CUDA call (the cudaGetLastError after a kernel launch is
 * how a failed launch is seen) of one representative call of each routine fails in turn (fault_sweep.h).
 *
 * On a machine without a GPU the routines run on the shim's fake device (fault_control.h): the handle, upload,
 * download, release, analysis and destroy do all their work there (device memory is host memory), so their failure
 * paths, outputs and ledger are checked in CI; the compute routines' kernels do not run, so there only their status
 * and recovery are checked, not y; the device creators need their kernels' results and skip. On a GPU everything
 * runs for real and every success is compared bit for bit with a run made before the sweep. */
#include "fault_util.h"
#include "tiles.h"

#include <cuda_runtime_api.h>

/* The shim's allocation calls (fault_shim.h, not included here: its macros would wrap this file's own CUDA calls),
 * for a workspace that is device memory to the fake device too. */
extern "C" cudaError_t macko_fault_cudaMalloc(void **p, size_t n);
extern "C" cudaError_t macko_fault_cudaFree(void *p);

namespace {

using namespace ft;

constexpr int64_t kRows = 64, kCols = 300, kN = 4, kWide = 20, kBatch = 3;
constexpr int64_t kMany = 40; /* fp32: the SIMT path (n >= 25); fp16: the tensor-core tiles */

/* Device memory of the test (host memory on the fake device), filled from bytes. */
struct Buf {
    void *p = nullptr;
    size_t n = 0;
    Bytes host;
    explicit Buf(const Bytes &b) : n(b.size())
    {
        if (mf_fake_device()) {
            host = b;
            host.resize(std::max<size_t>(n, 16));
            p = host.data();
        } else {
            EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(n, 16)), cudaSuccess);
            set(b);
        }
    }
    ~Buf()
    {
        if (!mf_fake_device())
            cudaFree(p);
    }
    Buf(const Buf &) = delete;
    Buf &operator=(const Buf &) = delete;
    void set(const Bytes &b)
    {
        if (mf_fake_device())
            std::memcpy(p, b.data(), b.size());
        else
            EXPECT_EQ(cudaMemcpy(p, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    Bytes get() const { return device_bytes(p, n); }
    template <class T> T *as() const { return static_cast<T *>(p); }
};

/* The tile layout of s's host encoding (MACKO_LAYOUT_TILES), as device_arrays gives it; built with nothing armed. */
Arrays tile_arrays(const Source &s)
{
    macko_mat_t A = encode(s);
    macko_tiles t{};
    Arrays a;
    if (A != nullptr && macko_tiles_build_host("-", A, &t) == MACKO_STATUS_SUCCESS) {
        a = {host_bytes(t.stream, (size_t)t.words * 16), Bytes(), host_bytes(t.offs, (size_t)(t.bands * t.tcols + 1) * 4)};
        macko_tiles_free(&t);
    }
    EXPECT_FALSE(a.row_ptr.empty());
    macko_mat_destroy(A);
    return a;
}

Bytes random_values(int64_t n, macko_datatype_t type, uint64_t seed)
{
    return mt::values_bytes(mt::random_vector(n, seed, type == MACKO_R_16F), type);
}

struct DeviceFixture : ::testing::Test {
    macko_handle_t handle = nullptr;
    Source h = make_source(kRows, kCols, MACKO_R_16F, 21);
    Source s = make_source(kRows, kCols, MACKO_R_32F, 22);
    Arrays h_arrays = encoded_arrays(h), ht_arrays = encoded_arrays(transposed(h)), t_arrays = tile_arrays(h);
    macko_mat_t A = nullptr;

    void SetUp() override { ASSERT_EQ(macko_create(&handle), MACKO_STATUS_SUCCESS) << macko_get_last_error_message(); }
    void TearDown() override { macko_destroy(handle); }

    /* h encoded on the host, then (nothing armed) uploaded with handle `on` (default: handle), analysed for op T,
     * its host copy released, as asked. */
    macko_mat_t make(bool upload, bool trans, bool release, const Source *src = nullptr, macko_handle_t on = nullptr)
    {
        macko_mat_t M = encode(src != nullptr ? *src : h);
        EXPECT_NE(M, nullptr);
        if (on == nullptr)
            on = handle;
        if (upload) {
            EXPECT_EQ(macko_mat_upload(on, M), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        }
        if (trans) {
            EXPECT_EQ(macko_analysis(on, MACKO_OPERATION_TRANSPOSE, M), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
        }
        if (release) {
            EXPECT_EQ(macko_mat_release_host(M), MACKO_STATUS_SUCCESS);
        }
        return M;
    }

    /* h encoded on the host with layout MACKO_LAYOUT_TILES, then (nothing armed) uploaded with handle `on` when
     * asked (default: handle: the device holds the tiles), its host copy released, as asked. */
    macko_mat_t make_tiles(bool upload, bool release, macko_handle_t on = nullptr)
    {
        macko_mat_t M = encode(h);
        EXPECT_NE(M, nullptr);
        EXPECT_EQ(macko_mat_set_layout(M, MACKO_LAYOUT_TILES), MACKO_STATUS_SUCCESS);
        if (upload) {
            EXPECT_EQ(macko_mat_upload(on != nullptr ? on : handle, M), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            EXPECT_EQ(M->dev_layout, MACKO_LAYOUT_TILES);
        }
        if (release) {
            EXPECT_EQ(macko_mat_release_host(M), MACKO_STATUS_SUCCESS);
        }
        return M;
    }

    /* A case on the matrix A that prepare makes: after a failure A is exactly as before (fields, addresses, bytes
     * of both copies); cleanup destroys it. */
    Case matrix_case(const std::string &name, const std::string &routine, std::function<macko_mat_t()> make_A,
                     std::function<macko_status_t()> call, std::function<void()> succeeded,
                     std::shared_ptr<MatState> state)
    {
        Case c;
        c.name = name;
        c.routine = routine;
        c.prepare = [this, make_A, state] {
            A = make_A();
            *state = mat_state(A);
        };
        c.call = std::move(call);
        c.unchanged = [this, state] { expect_same_state(A, *state); };
        c.succeeded = std::move(succeeded);
        c.cleanup = [this] {
            macko_mat_destroy(A);
            A = nullptr;
        };
        return c;
    }
};

TEST_F(DeviceFixture, CreateAndDestroyHandle)
{
    macko_handle_t out = nullptr;
    Case c;
    c.name = "macko_create";
    c.routine = "macko_create";
    /* "the current CUDA device cannot be queried", or the workspace cannot be made (macko_create.md) */
    c.expect.cuda = MACKO_STATUS_NOT_INITIALIZED;
    c.tolerable = kNothingTolerable;
    c.prepare = [&] { out = poison<macko_handle_t>(); };
    c.call = [&] { return macko_create(&out); };
    c.unchanged = [&] { EXPECT_EQ(out, poison<macko_handle_t>()); };
    c.succeeded = [&] {
        ASSERT_NE(out, poison<macko_handle_t>());
        EXPECT_EQ(out->props.sm_count, handle->props.sm_count);
        EXPECT_EQ(out->device, handle->device);
    };
    c.cleanup = [&] {
        if (out != poison<macko_handle_t>())
            macko_destroy(out);
    };
    sweep(c);

    Case d;
    d.name = "macko_destroy";
    d.routine = "macko_destroy";
    d.prepare = [&] { ASSERT_EQ(macko_create(&out), MACKO_STATUS_SUCCESS); };
    d.call = [&] { return macko_destroy(out); };
    /* destroy frees the handle's workspace on its device: a failed device switch or free is not the caller's
     * failure (the run must succeed, and leave no CUDA error behind) */
    EXPECT_GT(sweep(d).points, 0);
}

TEST_F(DeviceFixture, Upload)
{
    auto st = std::make_shared<MatState>();
    sweep(matrix_case(
        "macko_mat_upload (host copy only)", "macko_mat_upload", [this] { return make(false, false, false); },
        [this] { return macko_mat_upload(handle, A); },
        [this] {
            ASSERT_TRUE(A->has_device);
            EXPECT_TRUE(device_arrays(A) == h_arrays);
            EXPECT_TRUE(host_arrays(A) == h_arrays);
        },
        st));
    /* Uploading again replaces the device copy and keeps the analysis; a failure keeps the old copy working. */
    macko_mat_s *trans = nullptr;
    sweep(matrix_case(
        "macko_mat_upload (again, with op T analysis)", "macko_mat_upload",
        [this, &trans] {
            macko_mat_t M = make(true, true, false);
            trans = M->trans;
            return M;
        },
        [this] { return macko_mat_upload(handle, A); },
        [this, &trans] {
            EXPECT_TRUE(device_arrays(A) == h_arrays);
            EXPECT_EQ(A->trans, trans);
            EXPECT_TRUE(device_arrays(A->trans) == ht_arrays);
        },
        st));
}

/* The tile layout (MACKO_LAYOUT_TILES): built on the host from the MACKO arrays and uploaded in their place; over a
 * copy in MACKO rows with an op T analysis, which only a successful tile upload frees; and back to MACKO rows. */
TEST_F(DeviceFixture, UploadTiles)
{
    auto st = std::make_shared<MatState>();
    auto tiles_on_device = [this] {
        ASSERT_TRUE(A->has_device);
        EXPECT_EQ(A->dev_layout, MACKO_LAYOUT_TILES);
        EXPECT_EQ(A->dev.deltas, nullptr);
        EXPECT_TRUE(device_arrays(A) == t_arrays);
        EXPECT_TRUE(host_arrays(A) == h_arrays);
    };
    sweep(matrix_case(
        "macko_mat_upload (tile layout, host copy only)", "macko_mat_upload", [this] { return make_tiles(false, false); },
        [this] { return macko_mat_upload(handle, A); }, tiles_on_device, st));
    sweep(matrix_case(
        "macko_mat_upload (tile layout, over MACKO rows with op T analysis)", "macko_mat_upload",
        [this] {
            macko_mat_t M = make(true, true, false);
            EXPECT_EQ(macko_mat_set_layout(M, MACKO_LAYOUT_TILES), MACKO_STATUS_SUCCESS);
            return M;
        },
        [this] { return macko_mat_upload(handle, A); },
        [this, tiles_on_device] {
            tiles_on_device();
            EXPECT_EQ(A->trans, nullptr); /* freed with the MACKO rows: analyse again for op T */
        },
        st));
    sweep(matrix_case(
        "macko_mat_upload (MACKO rows, over the tile layout)", "macko_mat_upload",
        [this] {
            macko_mat_t M = make_tiles(true, false);
            EXPECT_EQ(macko_mat_set_layout(M, MACKO_LAYOUT_ROWS), MACKO_STATUS_SUCCESS);
            return M;
        },
        [this] { return macko_mat_upload(handle, A); },
        [this] {
            EXPECT_EQ(A->dev_layout, MACKO_LAYOUT_ROWS);
            EXPECT_TRUE(device_arrays(A) == h_arrays);
        },
        st));
}

TEST_F(DeviceFixture, DownloadAndRelease)
{
    auto st = std::make_shared<MatState>();
    sweep(matrix_case(
        "macko_mat_download (host copy released)", "macko_mat_download", [this] { return make(true, false, true); },
        [this] { return macko_mat_download(handle, A); },
        [this] {
            ASSERT_TRUE(A->has_host);
            EXPECT_TRUE(host_arrays(A) == h_arrays);
        },
        st));
    sweep(matrix_case(
        "macko_mat_download (over the host copy)", "macko_mat_download", [this] { return make(true, false, false); },
        [this] { return macko_mat_download(handle, A); }, [this] { EXPECT_TRUE(host_arrays(A) == h_arrays); }, st));
    /* From the tile layout: the canonical MACKO encoding of the nonzeros, here the host encoder's arrays; the device
     * keeps the tiles. */
    auto from_tiles = [this] {
        ASSERT_TRUE(A->has_host);
        EXPECT_TRUE(host_arrays(A) == h_arrays);
        EXPECT_EQ(A->dev_layout, MACKO_LAYOUT_TILES);
        EXPECT_TRUE(device_arrays(A) == t_arrays);
    };
    sweep(matrix_case(
        "macko_mat_download (tile layout, host copy released)", "macko_mat_download",
        [this] { return make_tiles(true, true); }, [this] { return macko_mat_download(handle, A); }, from_tiles, st));
    sweep(matrix_case(
        "macko_mat_download (tile layout, over the host copy)", "macko_mat_download",
        [this] { return make_tiles(true, false); }, [this] { return macko_mat_download(handle, A); }, from_tiles, st));
    const Tally t = sweep(matrix_case(
        "macko_mat_release_host", "macko_mat_release_host", [this] { return make(true, false, false); },
        [this] { return macko_mat_release_host(A); }, [this] { EXPECT_FALSE(A->has_host); }, st));
    EXPECT_EQ(t.points, 0);
}

TEST_F(DeviceFixture, AnalysisAndDestroy)
{
    auto st = std::make_shared<MatState>();
    auto check_trans = [this] {
        ASSERT_NE(A->trans, nullptr);
        EXPECT_TRUE(A->trans->has_device);
        EXPECT_FALSE(A->trans->has_host);
        EXPECT_TRUE(device_arrays(A->trans) == ht_arrays);
    };
    sweep(matrix_case(
        "macko_analysis (op T)", "macko_analysis", [this] { return make(true, false, false); },
        [this] { return macko_analysis(handle, MACKO_OPERATION_TRANSPOSE, A); }, check_trans, st));
    sweep(matrix_case(
        "macko_analysis (op T, host copy released)", "macko_analysis", [this] { return make(true, false, true); },
        [this] { return macko_analysis(handle, MACKO_OPERATION_TRANSPOSE, A); }, check_trans, st));
    sweep(matrix_case(
        "macko_analysis (op T, tile layout: from the host copy)", "macko_analysis",
        [this] { return make_tiles(true, false); },
        [this] { return macko_analysis(handle, MACKO_OPERATION_TRANSPOSE, A); }, check_trans, st));
    EXPECT_EQ(sweep(matrix_case(
                        "macko_analysis (op N)", "macko_analysis", [this] { return make(true, false, false); },
                        [this] { return macko_analysis(handle, MACKO_OPERATION_NON_TRANSPOSE, A); }, [] {}, st))
                  .points,
              0);

    /* Destroy frees both copies and A^T whatever fails on the way (the ledger is checked after every run). */
    Case d;
    d.name = "macko_mat_destroy (device matrix with op T analysis)";
    d.routine = "macko_mat_destroy";
    d.prepare = [this] { A = make(true, true, false); };
    d.call = [this] { return macko_mat_destroy(A); };
    sweep(d);
    d.name = "macko_mat_destroy (tile layout)";
    d.prepare = [this] { A = make_tiles(true, true); };
    sweep(d);
}

/* ---------------------------------------------------------------- a handle on another device */

int current_device()
{
    int d = -1;
    if (mf_fake_device())
        return mf_fake_current_device();
    EXPECT_EQ(cudaGetDevice(&d), cudaSuccess);
    return d;
}

void set_current_device(int d)
{
    if (mf_fake_device())
        mf_fake_set_current_device(d);
    else
        EXPECT_EQ(cudaSetDevice(d), cudaSuccess);
}

/* The routines that switch to the handle's device must switch back: after every run the caller's device 0 is
 * current again, unless restoring it is what failed. */
Case keeps_device_zero(Case c)
{
    auto check = [] {
        if (!fired("cudaSetDevice")) {
            EXPECT_EQ(current_device(), 0) << "the caller's current device was not restored";
        }
    };
    c.unchanged = [u = c.unchanged, check] {
        u();
        check();
    };
    c.succeeded = [s = c.succeeded, check] {
        s();
        check();
    };
    c.cleanup = [cl = c.cleanup] {
        cl();
        set_current_device(0);
    };
    return c;
}

TEST_F(DeviceFixture, HandleOnAnotherDevice)
{
    int n = 0;
    if (!mf_fake_device() && (cudaGetDeviceCount(&n) != cudaSuccess || n < 2))
        GTEST_SKIP() << "needs two devices";
    macko_handle_t h1 = nullptr;
    set_current_device(1);
    ASSERT_EQ(macko_create(&h1), MACKO_STATUS_SUCCESS);
    set_current_device(0);
    ASSERT_EQ(h1->device, 1);
    auto st = std::make_shared<MatState>();
    sweep(keeps_device_zero(matrix_case(
        "macko_mat_upload (handle on device 1)", "macko_mat_upload", [this] { return make(false, false, false); },
        [this, h1] { return macko_mat_upload(h1, A); },
        [this] {
            EXPECT_EQ(A->device, 1);
            EXPECT_TRUE(device_arrays(A) == h_arrays);
        },
        st)));
    sweep(keeps_device_zero(matrix_case(
        "macko_mat_download (handle on device 1)", "macko_mat_download",
        [this, h1] { return make(true, false, true, nullptr, h1); }, [this, h1] { return macko_mat_download(h1, A); },
        [this] { EXPECT_TRUE(host_arrays(A) == h_arrays); }, st)));
    sweep(keeps_device_zero(matrix_case(
        "macko_mat_upload (tile layout, handle on device 1)", "macko_mat_upload",
        [this] { return make_tiles(false, false); }, [this, h1] { return macko_mat_upload(h1, A); },
        [this] {
            EXPECT_EQ(A->device, 1);
            EXPECT_EQ(A->dev_layout, MACKO_LAYOUT_TILES);
            EXPECT_TRUE(device_arrays(A) == t_arrays);
        },
        st)));
    sweep(keeps_device_zero(matrix_case(
        "macko_mat_download (tile layout, handle on device 1)", "macko_mat_download",
        [this, h1] { return make_tiles(true, true, h1); }, [this, h1] { return macko_mat_download(h1, A); },
        [this] { EXPECT_TRUE(host_arrays(A) == h_arrays); }, st)));
    sweep(keeps_device_zero(matrix_case(
        "macko_analysis (op T, handle on device 1)", "macko_analysis",
        [this, h1] { return make(true, false, false, nullptr, h1); },
        [this, h1] { return macko_analysis(h1, MACKO_OPERATION_TRANSPOSE, A); },
        [this] {
            ASSERT_NE(A->trans, nullptr);
            EXPECT_EQ(A->trans->device, 1);
            EXPECT_TRUE(device_arrays(A->trans) == ht_arrays);
        },
        st)));
    Case d;
    d.name = "macko_mat_destroy (matrix on device 1, with op T analysis)";
    d.routine = "macko_mat_destroy";
    d.prepare = [this, h1] { A = make(true, true, false, nullptr, h1); };
    d.call = [this] { return macko_mat_destroy(A); };
    sweep(keeps_device_zero(d));
    macko_destroy(h1);
}

/* ---------------------------------------------------------------- compute */

struct ComputeFixture : DeviceFixture {
    macko_mat_t AH = nullptr, AS = nullptr;
    void SetUp() override
    {
        DeviceFixture::SetUp();
        AH = make(true, true, false);
        AS = make(true, true, false, &s);
    }
    void TearDown() override
    {
        macko_mat_destroy(AH);
        macko_mat_destroy(AS);
        DeviceFixture::TearDown();
    }

    void compute(const std::string &name, const std::string &routine, Buf &y, std::function<macko_status_t()> launch)
    {
        sweep_compute(name, routine, y, std::move(launch));
    }
};

TEST_F(ComputeFixture, SpmvSpmmStridedBatched)
{
    const float alpha = 1.25f, beta = -0.5f;
    const int64_t big = std::max(kRows, kCols);
    for (macko_datatype_t type : {MACKO_R_16F, MACKO_R_32F}) {
        const bool half = type == MACKO_R_16F;
        const std::string P = half ? "H" : "S";
        macko_mat_t M = half ? AH : AS;
        Buf x(random_values(big * kBatch, type, 31)), y(random_values(big * kBatch, type, 32));
        Buf B(random_values(big * kMany, type, 33)), C(random_values(big * kMany, type, 34));
        for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
            const std::string o = op == MACKO_OPERATION_TRANSPOSE ? "op T" : "op N";
            const int64_t k = op == MACKO_OPERATION_TRANSPOSE ? kRows : kCols;
            const int64_t m = op == MACKO_OPERATION_TRANSPOSE ? kCols : kRows;
            compute("macko_" + P + "spmv (" + o + ")", "macko_" + P + "spmv", y, [&] {
                return half ? macko_Hspmv(handle, op, &alpha, M, x.as<macko_half>(), 1, &beta, y.as<macko_half>(), 1)
                            : macko_Sspmv(handle, op, &alpha, M, x.as<float>(), 1, &beta, y.as<float>(), 1);
            });
            compute("macko_" + P + "spmm (" + o + ", n = 4)", "macko_" + P + "spmm", C, [&] {
                return half ? macko_Hspmm(handle, op, kN, &alpha, M, B.as<macko_half>(), k, &beta,
                                          C.as<macko_half>(), m)
                            : macko_Sspmm(handle, op, kN, &alpha, M, B.as<float>(), k, &beta, C.as<float>(), m);
            });
            if (op == MACKO_OPERATION_NON_TRANSPOSE) { /* 20 columns: 2 tiles (fp16) or 3 (fp32), a launch each */
                compute("macko_" + P + "spmm (op N, n = 20)", "macko_" + P + "spmm", C, [&] {
                    return half ? macko_Hspmm(handle, op, kWide, &alpha, M, B.as<macko_half>(), k, &beta,
                                              C.as<macko_half>(), m)
                                : macko_Sspmm(handle, op, kWide, &alpha, M, B.as<float>(), k, &beta, C.as<float>(), m);
                });
                compute("macko_" + P + "spmm (op N, n = 40)", "macko_" + P + "spmm", C, [&] {
                    return half ? macko_Hspmm(handle, op, kMany, &alpha, M, B.as<macko_half>(), k, &beta,
                                              C.as<macko_half>(), m)
                                : macko_Sspmm(handle, op, kMany, &alpha, M, B.as<float>(), k, &beta, C.as<float>(), m);
                });
            }
            compute("macko_" + P + "spmv_strided_batched (" + o + ", batch 3)", "macko_" + P + "spmv_strided_batched",
                    y, [&] {
                        return half ? macko_Hspmv_strided_batched(handle, op, &alpha, M, x.as<macko_half>(), 1, k,
                                                                  &beta, y.as<macko_half>(), 1, m, kBatch)
                                    : macko_Sspmv_strided_batched(handle, op, &alpha, M, x.as<float>(), 1, k, &beta,
                                                                  y.as<float>(), 1, m, kBatch);
                    });
        }
    }
}

/* A workspace of the caller's (macko_set_workspace): its one CUDA call, cudaPointerGetAttributes, may fail ("cannot
 * tell": the workspace is taken, as the compute calls' pointer checks do); then fp16 products through it (n = 40:
 * the tensor-core tiles, split K in the caller's workspace; n = 200: the dense panels), swept as the others. The
 * workspace is the shim's device memory (fake device memory where there is no GPU). */
TEST_F(ComputeFixture, CallersWorkspace)
{
    void *ws = nullptr;
    ASSERT_EQ(macko_fault_cudaMalloc(&ws, MACKO_WORKSPACE_MIN_BYTES), cudaSuccess);
    float *const own = handle->ws.partial;
    Case c;
    c.name = "macko_set_workspace";
    c.routine = "macko_set_workspace";
    c.tolerable = {"cudaPointerGetAttributes", "cudaGetLastError"};
    c.prepare = [&] { ASSERT_EQ(macko_set_workspace(handle, nullptr, 0), MACKO_STATUS_SUCCESS); };
    c.call = [&] { return macko_set_workspace(handle, ws, MACKO_WORKSPACE_MIN_BYTES); };
    c.unchanged = [&] { EXPECT_EQ(handle->ws.partial, own); };
    c.succeeded = [&] {
        EXPECT_EQ(handle->ws.partial, static_cast<float *>(ws));
        EXPECT_EQ(handle->ws.panel_bytes, (int64_t)MACKO_WORKSPACE_MIN_BYTES);
    };
    EXPECT_GE(sweep(c).points, 1);
    ASSERT_EQ(macko_set_workspace(handle, ws, MACKO_WORKSPACE_MIN_BYTES), MACKO_STATUS_SUCCESS);
    const float alpha = 1.25f, beta = -0.5f;
    const int64_t wide = 200;
    Buf B(random_values(kCols * wide, MACKO_R_16F, 41)), C(random_values(kRows * wide, MACKO_R_16F, 42));
    for (int64_t n : {kMany, wide})
        compute("macko_Hspmm (op N, n = " + std::to_string(n) + ", the caller's workspace)", "macko_Hspmm", C, [&] {
            return macko_Hspmm(handle, MACKO_OPERATION_NON_TRANSPOSE, n, &alpha, AH, B.as<macko_half>(), kCols, &beta,
                               C.as<macko_half>(), kRows);
        });
    ASSERT_EQ(macko_set_workspace(handle, nullptr, 0), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(handle->ws.partial, own);
    macko_fault_cudaFree(ws);
}

/* An fp16 matrix held in the tile layout: every op N product is one launch of the tile kernel (its launch check the
 * one fault point); op T runs the MACKO rows' kernels on the transposed encoding, swept above. */
TEST_F(ComputeFixture, TileLayout)
{
    const float alpha = 1.25f, beta = -0.5f;
    const int64_t big = std::max(kRows, kCols);
    macko_mat_t T = make_tiles(true, false);
    Buf x(random_values(big * kBatch, MACKO_R_16F, 51)), y(random_values(big * kBatch, MACKO_R_16F, 52));
    Buf B(random_values(big * kWide, MACKO_R_16F, 53)), C(random_values(big * kWide, MACKO_R_16F, 54));
    const macko_operation_t N = MACKO_OPERATION_NON_TRANSPOSE;
    compute("macko_Hspmv (op N, tile layout)", "macko_Hspmv", y, [&] {
        return macko_Hspmv(handle, N, &alpha, T, x.as<macko_half>(), 1, &beta, y.as<macko_half>(), 1);
    });
    for (int64_t n : {kN, kWide})
        compute("macko_Hspmm (op N, n = " + std::to_string(n) + ", tile layout)", "macko_Hspmm", C, [&] {
            return macko_Hspmm(handle, N, n, &alpha, T, B.as<macko_half>(), kCols, &beta, C.as<macko_half>(), kRows);
        });
    /* stridex not a multiple of 8: the kernel's element loads of B (overlapping x is fine: it is only read) */
    compute("macko_Hspmv_strided_batched (op N, batch 3, stridex 297, tile layout)", "macko_Hspmv_strided_batched", y,
            [&] {
                return macko_Hspmv_strided_batched(handle, N, &alpha, T, x.as<macko_half>(), 1, kCols - 3, &beta,
                                                   y.as<macko_half>(), 1, kRows, kBatch);
            });
    compute("macko_spmm_ex (op N, n = 4, tile layout, fp16 B and C)", "macko_spmm_ex", C, [&] {
        return macko_spmm_ex(handle, N, kN, &alpha, T, B.p, MACKO_R_16F, kCols, &beta, C.p, MACKO_R_16F, kRows,
                             MACKO_R_32F);
    });
    macko_mat_destroy(T);
}

/* The fp64 routines, and the generic ones on an fp16 matrix with fp32 x / B (their mixed-type launches). */
TEST_F(ComputeFixture, DoubleAndGenericEntryPoints)
{
    const Source d = make_source(kRows, kCols, MACKO_R_64F, 23);
    macko_mat_t AD = make(true, true, false, &d);
    const double dalpha = 1.25, dbeta = -0.5;
    const float alpha = 1.25f, beta = -0.5f;
    const int64_t big = std::max(kRows, kCols);
    Buf x(random_values(big * kBatch, MACKO_R_64F, 41)), y(random_values(big * kBatch, MACKO_R_64F, 42));
    Buf B(random_values(big * kWide, MACKO_R_64F, 43)), C(random_values(big * kWide, MACKO_R_64F, 44));
    for (macko_operation_t op : {MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE}) {
        const std::string o = op == MACKO_OPERATION_TRANSPOSE ? "op T" : "op N";
        const int64_t k = op == MACKO_OPERATION_TRANSPOSE ? kRows : kCols;
        const int64_t m = op == MACKO_OPERATION_TRANSPOSE ? kCols : kRows;
        compute("macko_Dspmv (" + o + ")", "macko_Dspmv", y, [&] {
            return macko_Dspmv(handle, op, &dalpha, AD, x.as<double>(), 1, &dbeta, y.as<double>(), 1);
        });
        compute("macko_Dspmm (" + o + ", n = 4)", "macko_Dspmm", C, [&] {
            return macko_Dspmm(handle, op, kN, &dalpha, AD, B.as<double>(), k, &dbeta, C.as<double>(), m);
        });
        compute("macko_Dspmv_strided_batched (" + o + ", batch 3)", "macko_Dspmv_strided_batched", y, [&] {
            return macko_Dspmv_strided_batched(handle, op, &dalpha, AD, x.as<double>(), 1, k, &dbeta, y.as<double>(),
                                               1, m, kBatch);
        });
        /* fp16 A with fp32 x / B: the buffers hold fp64 values, read as fp32 here (any bits do for the sweep) */
        compute("macko_spmv_ex (" + o + ", fp16 A, fp32 x and y)", "macko_spmv_ex", y, [&] {
            return macko_spmv_ex(handle, op, &alpha, AH, x.p, MACKO_R_32F, 1, &beta, y.p, MACKO_R_32F, 1,
                                 MACKO_R_32F);
        });
        compute("macko_spmm_ex (" + o + ", n = 4, fp16 A, fp32 B and C)", "macko_spmm_ex", C, [&] {
            return macko_spmm_ex(handle, op, kN, &alpha, AH, B.p, MACKO_R_32F, k, &beta, C.p, MACKO_R_32F, m,
                                 MACKO_R_32F);
        });
    }
    macko_mat_destroy(AD);
}

/* ---------------------------------------------------------------- device creators (GPU only) */

TEST_F(DeviceFixture, CreateOnTheDevice)
{
    if (mf_fake_device())
        GTEST_SKIP() << "the device creators need their kernels' results: GPU only";
    macko_mat_t out = nullptr;
    auto make_case = [&](const std::string &name, const Arrays &ref, std::function<macko_status_t()> call) {
        Case c;
        c.name = name;
        c.routine = name.substr(0, name.find(' '));
        c.prepare = [&] { out = poison<macko_mat_t>(); };
        c.call = std::move(call);
        c.unchanged = [&] { EXPECT_EQ(out, poison<macko_mat_t>()); };
        c.succeeded = [&out, &ref] {
            ASSERT_NE(out, poison<macko_mat_t>());
            EXPECT_FALSE(out->has_host);
            EXPECT_TRUE(device_arrays(out) == ref);
        };
        c.cleanup = [&] {
            if (out != poison<macko_mat_t>())
                macko_mat_destroy(out);
            out = poison<macko_mat_t>();
        };
        /* One call before the sweep: CUB (the scan) keeps the outcome of its first device queries for the life of
         * the process, a failure included, so a failure injected there would fail every later conversion; that is
         * CUB's behaviour (testing/RELIABILITY.md), not what this sweep is about. */
        c.prepare();
        EXPECT_EQ(c.call(), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        c.cleanup();
        return c;
    };
    Buf dense(h.row_major);
    sweep(make_case("macko_mat_create_dense_device (fp16, row-major)", h_arrays, [&] {
        return macko_mat_create_dense_device(handle, &out, kRows, kCols, MACKO_R_16F, dense.p, kCols,
                                             MACKO_ORDER_ROW);
    }));
    const mt::Csr csr = mt::to_csr(s.m);
    const std::vector<int32_t> rp(csr.row_ptr.begin(), csr.row_ptr.end()), ci(csr.col_ind.begin(), csr.col_ind.end());
    Buf drp(host_bytes(rp.data(), rp.size() * 4)), dci(host_bytes(ci.data(), ci.size() * 4));
    Buf dval(mt::values_bytes(csr.val, MACKO_R_32F));
    const Arrays s_arrays = encoded_arrays(s);
    sweep(make_case("macko_mat_create_csr_device (int32, base 0, fp32)", s_arrays, [&] {
        return macko_mat_create_csr_device(handle, &out, kRows, kCols, (int64_t)ci.size(), drp.p, dci.p, dval.p,
                                           MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, MACKO_R_32F);
    }));
}

} // namespace
