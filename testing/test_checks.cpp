/* The canonical message of each kind of argument check (src/check.h, lapack_style_docs/README.md "Argument checks"),
 * verbatim, in routines of different families: one wording per check wherever it is made. Runs without a GPU: the
 * handle is a struct made here and the device copy is a flag, and every call fails in its checks, before anything
 * would touch a device. */
#include "common.h"
#include "macko_internal.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace
{

/* Expects status st at position pos with exactly this message. */
#define EXPECT_CHECK(call, st, pos, msg)                                                                               \
    do {                                                                                                               \
        EXPECT_EQ((call), (st));                                                                                       \
        EXPECT_EQ(macko_get_last_error_position(), (pos));                                                             \
        EXPECT_EQ(std::string(macko_get_last_error_message()), std::string(msg));                                      \
    } while (0)

constexpr macko_status_t kInvalid = MACKO_STATUS_INVALID_VALUE;
constexpr macko_status_t kNotInit = MACKO_STATUS_NOT_INITIALIZED;
constexpr macko_operation_t kN = MACKO_OPERATION_NON_TRANSPOSE;
constexpr macko_operation_t kT = MACKO_OPERATION_TRANSPOSE;

/* A 3 x 5 fp16 host matrix that claims a device copy on device 0 (no arrays there: the calls never get that far). */
struct FakeDeviceMatrix {
    macko_mat_t A = nullptr;
    FakeDeviceMatrix()
    {
        std::vector<uint16_t> v(15, 0x3C00);
        EXPECT_EQ(macko_mat_create_dense_host(&A, 3, 5, MACKO_R_16F, v.data(), 5, MACKO_ORDER_ROW),
                  MACKO_STATUS_SUCCESS);
        A->has_device = 1;
        A->device = 0;
    }
    ~FakeDeviceMatrix()
    {
        A->has_device = 0;
        A->has_host = 1;
        macko_mat_destroy(A);
    }
};

} // namespace

TEST(Checks, HandlePointerEnum)
{
    macko_handle_s h{};
    FakeDeviceMatrix F;
    float one = 1.0f;
    EXPECT_CHECK(macko_set_stream(nullptr, nullptr), kInvalid, 1, "macko_set_stream: argument 1: handle is NULL");
    EXPECT_CHECK(macko_Hspmv(nullptr, kN, &one, F.A, nullptr, 1, &one, nullptr, 1), kInvalid, 1,
                 "macko_Hspmv: argument 1: handle is NULL");
    EXPECT_CHECK(macko_get_stream(&h, nullptr), kInvalid, 2, "macko_get_stream: argument 2: stream is NULL");
    {
        alignas(256) static char ws[512];
        char at[64];
        std::snprintf(at, sizeof at, "%p", (void *)(ws + 64));
        const macko_workspace before = h.ws;
        EXPECT_CHECK(macko_set_workspace(nullptr, ws, MACKO_WORKSPACE_MIN_BYTES), kInvalid, 1,
                     "macko_set_workspace: argument 1: handle is NULL");
        EXPECT_CHECK(macko_set_workspace(&h, nullptr, 1), kInvalid, 2,
                     "macko_set_workspace: argument 2: workspace is NULL with workspace_bytes = 1 (NULL goes with 0: "
                     "the handle's own workspace)");
        EXPECT_CHECK(macko_set_workspace(&h, ws + 64, 1), kInvalid, 2,
                     "macko_set_workspace: argument 2: workspace " + std::string(at) + " is not 256-byte aligned");
        EXPECT_EQ(std::memcmp(&h.ws, &before, sizeof before), 0) << "a refused macko_set_workspace changed the handle";
    }
    EXPECT_CHECK(macko_Hspmm(&h, kN, 1, nullptr, F.A, nullptr, 5, &one, nullptr, 3), kInvalid, 4,
                 "macko_Hspmm: argument 4: alpha is NULL");
    EXPECT_CHECK(macko_set_pointer_mode(&h, (macko_pointer_mode_t)2), kInvalid, 2,
                 "macko_set_pointer_mode: argument 2: mode is 2; it must be MACKO_POINTER_MODE_HOST (0) or "
                 "MACKO_POINTER_MODE_DEVICE (1)");
    EXPECT_CHECK(macko_analysis(&h, (macko_operation_t)5, F.A), kInvalid, 2,
                 "macko_analysis: argument 2: op is 5; it must be MACKO_OPERATION_NON_TRANSPOSE (0) or "
                 "MACKO_OPERATION_TRANSPOSE (1)");
    EXPECT_CHECK(macko_Sspmv_strided_batched(&h, (macko_operation_t)-1, &one, F.A, nullptr, 1, 0, &one, nullptr, 1,
                                             0, 0),
                 kInvalid, 2,
                 "macko_Sspmv_strided_batched: argument 2: op is -1; it must be MACKO_OPERATION_NON_TRANSPOSE (0) or "
                 "MACKO_OPERATION_TRANSPOSE (1)");
}

TEST(Checks, SizesAndArrays)
{
    macko_handle_s h{};
    FakeDeviceMatrix F;
    float one = 1.0f;
    alignas(8) uint16_t buf[64] = {};
    const uint16_t *odd = reinterpret_cast<const uint16_t *>(reinterpret_cast<const char *>(buf) + 1);
    /* at least: counts, increments, strides */
    EXPECT_CHECK(macko_Hspmm(&h, kN, -1, &one, F.A, buf, 5, &one, buf, 3), kInvalid, 3,
                 "macko_Hspmm: argument 3: n is -1; it must be at least 0");
    EXPECT_CHECK(macko_Hspmv(&h, kN, &one, F.A, buf, 0, &one, buf, 1), kInvalid, 6,
                 "macko_Hspmv: argument 6: incx is 0; it must be at least 1");
    EXPECT_CHECK(macko_Hspmv_strided_batched(&h, kN, &one, F.A, buf, 1, -5, &one, buf, 1, 3, 2), kInvalid, 7,
                 "macko_Hspmv_strided_batched: argument 7: stridex is -5; it must be at least 0");
    EXPECT_CHECK(macko_Hspmv_strided_batched(&h, kN, &one, F.A, buf, 1, 5, &one, buf, 1, 3, -2), kInvalid, 12,
                 "macko_Hspmv_strided_batched: argument 12: batch is -2; it must be at least 0");
    uint8_t bytes[8];
    EXPECT_CHECK(macko_mat_serialize(F.A, bytes, -1), kInvalid, 3,
                 "macko_mat_serialize: argument 3: buffer_size is -1; it must be at least 0");
    /* leading dimensions, host and device routines alike */
    EXPECT_CHECK(macko_Hspmm(&h, kN, 2, &one, F.A, buf, 4, &one, buf, 3), kInvalid, 7,
                 "macko_Hspmm: argument 7: ldb is 4; it must be at least max(1, k) = 5");
    EXPECT_CHECK(macko_mat_export_dense_host(F.A, buf, 4, MACKO_ORDER_ROW), kInvalid, 3,
                 "macko_mat_export_dense_host: argument 3: ld is 4; it must be at least max(1, cols) = 5");
    /* arrays: NULL with a nonzero size, and alignment to the element size */
    EXPECT_CHECK(macko_Hspmv(&h, kN, &one, F.A, nullptr, 1, &one, buf, 1), kInvalid, 5,
                 "macko_Hspmv: argument 5: x is NULL but len(x) = 5");
    EXPECT_CHECK(macko_Hspmv_strided_batched(&h, kN, &one, F.A, nullptr, 1, 5, &one, buf, 1, 3, 2), kInvalid, 5,
                 "macko_Hspmv_strided_batched: argument 5: x is NULL but len(x) = 5 and batch = 2");
    EXPECT_CHECK(macko_Hspmm(&h, kN, 2, &one, F.A, nullptr, 5, &one, buf, 3), kInvalid, 6,
                 "macko_Hspmm: argument 6: B is NULL but k = 5 and n = 2");
    EXPECT_CHECK(macko_mat_export_csr_host(F.A, buf, nullptr, buf, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO), kInvalid,
                 3, "macko_mat_export_csr_host: argument 3: col_ind is NULL but nnz = 15");
    EXPECT_CHECK(macko_Hspmv(&h, kN, &one, F.A, buf, 1, &one, const_cast<uint16_t *>(odd), 1), kInvalid, 8,
                 "macko_Hspmv: argument 8: y is not aligned to its element size 2");
    /* spans */
    EXPECT_CHECK(macko_Hspmv(&h, kN, &one, F.A, buf, INT64_MAX / 4, &one, buf, 1), kInvalid, 6,
                 "macko_Hspmv: argument 6: (len(x) - 1) * incx overflows");
    EXPECT_CHECK(macko_Hspmm(&h, kN, 2, &one, F.A, buf, INT64_MAX / 2, &one, buf, 3), kInvalid, 7,
                 "macko_Hspmm: argument 7: (n - 1) * ldb + k overflows");
}

TEST(Checks, MatrixCopies)
{
    macko_handle_s h{};
    FakeDeviceMatrix F;
    float one = 1.0f;
    uint16_t buf[8] = {};
    float fbuf[8] = {};
    EXPECT_CHECK(macko_Sspmv(&h, kN, &one, F.A, fbuf, 1, &one, fbuf, 1), kInvalid, 4,
                 "macko_Sspmv: argument 4: A has value type 2, this routine needs 0");
    EXPECT_CHECK(macko_Hspmv(&h, kT, &one, F.A, buf, 1, &one, buf, 1), kNotInit, 2,
                 "macko_Hspmv: argument 2: op T needs the transposed encoding: call macko_analysis with op T first");
    /* the same device check, one wording, in compute, analysis and download */
    F.A->device = 7;
    EXPECT_CHECK(macko_Hspmv(&h, kN, &one, F.A, buf, 1, &one, buf, 1), kInvalid, 4,
                 "macko_Hspmv: argument 4: A is on device 7, the handle on device 0");
    EXPECT_CHECK(macko_analysis(&h, kT, F.A), kInvalid, 3,
                 "macko_analysis: argument 3: A is on device 7, the handle on device 0");
    EXPECT_CHECK(macko_mat_download(&h, F.A), kInvalid, 2,
                 "macko_mat_download: argument 2: A is on device 7, the handle on device 0");
    F.A->device = 0;
    F.A->has_device = 0;
    EXPECT_CHECK(macko_Hspmm(&h, kN, 1, &one, F.A, buf, 5, &one, buf, 3), kNotInit, 5,
                 "macko_Hspmm: argument 5: A is not on the device (see macko_mat_upload)");
    EXPECT_CHECK(macko_mat_download(&h, F.A), kNotInit, 2,
                 "macko_mat_download: argument 2: A is not on the device (see macko_mat_upload)");
    /* no host copy: one wording in upload and in the routines that read the host arrays */
    F.A->has_host = 0;
    EXPECT_CHECK(macko_mat_upload(&h, F.A), kNotInit, 2,
                 "macko_mat_upload: argument 2: A has no host copy (released or created on the device; see "
                 "macko_mat_download)");
    EXPECT_CHECK(macko_mat_serialize(F.A, buf, 8), kNotInit, 1,
                 "macko_mat_serialize: argument 1: A has no host copy (released or created on the device; see "
                 "macko_mat_download)");
}

/* A matrix of the other kind: one wording in every routine that takes one kind only. */
TEST(Checks, MatrixKind)
{
    FakeDeviceMatrix F;
    const int32_t zero_rp[2] = {0, 0};
    macko_mat_t Q = nullptr;
    ASSERT_EQ(macko_mat_create_quant_host(&Q, 1, 0, 3, nullptr, 0, zero_rp, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_CHECK(macko_mat_get_macko_host(Q, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
                 MACKO_STATUS_NOT_SUPPORTED, 1,
                 "macko_mat_get_macko_host: argument 1: A is a MACKO_KIND_QUANT matrix; this routine takes "
                 "MACKO_KIND_MACKO matrices only");
    EXPECT_CHECK(macko_mat_export_csr_host(Q, nullptr, nullptr, nullptr, MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO),
                 MACKO_STATUS_NOT_SUPPORTED, 1,
                 "macko_mat_export_csr_host: argument 1: A is a MACKO_KIND_QUANT matrix; this routine takes "
                 "MACKO_KIND_MACKO and MACKO_KIND_NM matrices only");
    EXPECT_CHECK(macko_mat_get_quant_host(F.A, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
                 MACKO_STATUS_NOT_SUPPORTED, 1,
                 "macko_mat_get_quant_host: argument 1: A is a MACKO_KIND_MACKO matrix; this routine takes "
                 "MACKO_KIND_QUANT matrices only");
    macko_mat_destroy(Q);
}
