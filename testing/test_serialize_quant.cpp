/* Persistence of the QUANT kind: format version 2 (lapack_style_docs/file_format.md, "Format version 2"), through
 * serialized_size / serialize / deserialize / save / load, all on the CPU. The golden test pins the bytes. */
#include "common.h"
#include "quant_ref.h"
#include "serialize_util.h"

#include "macko_internal.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;
using mt::read_file;
using mt::TempDir;
using mt::write_file;
using qt::QArrays;
using st::Edit;
using st::expect_format_error;
using st::fix_header_crc;
using st::fix_payload_crc;
using st::get_i64;
using st::get_u32;
using st::kHdr;
using st::kPoison;
using st::set_i64;
using st::set_u32;

struct Owned {
    macko_mat_t A = nullptr;
    Owned() = default;
    Owned(const Owned &) = delete;
    Owned &operator=(const Owned &) = delete;
    ~Owned() { macko_mat_destroy(A); }
};

/* The arrays of a QUANT matrix's host copy, read back through the public query. */
QArrays arrays_of(macko_mat_t A)
{
    int bits = 0;
    const uint64_t *w = nullptr;
    const int32_t *rp = nullptr;
    const uint32_t *e = nullptr;
    int64_t wc = -1, no = -1, rows = -1, cols = -1;
    QArrays a;
    EXPECT_EQ(macko_mat_get_quant_host(A, &bits, &w, &wc, &no, &rp, &e), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    EXPECT_EQ(macko_mat_get_info(A, &rows, &cols, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(bits, 3);
    a.rows = rows;
    a.cols = cols;
    a.words.assign(w, w + wc);
    a.optr.assign(rp, rp + rows + 1);
    a.oent.assign(e, e + no);
    return a;
}

/* B is a QUANT matrix equal to A byte for byte (arrays, sizes, nnz). */
void expect_same_quant(macko_mat_t A, macko_mat_t B)
{
    macko_kind_t kind = MACKO_KIND_MACKO;
    ASSERT_EQ(macko_mat_get_kind(B, &kind), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(kind, MACKO_KIND_QUANT);
    int64_t r1, c1, n1, r2, c2, n2, s1, s2, e1, e2;
    macko_datatype_t t1, t2;
    ASSERT_EQ(macko_mat_get_info(A, &r1, &c1, &n1, &t1), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_info(B, &r2, &c2, &n2, &t2), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(r1, r2);
    EXPECT_EQ(c1, c2);
    EXPECT_EQ(n1, n2);
    EXPECT_EQ(t2, MACKO_R_16F);
    ASSERT_EQ(macko_mat_get_storage(A, &s1, &e1, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(B, &s2, &e2, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(s1, s2);
    EXPECT_EQ(e1, e2);
    const QArrays a = arrays_of(A), b = arrays_of(B);
    EXPECT_EQ(a.words, b.words);
    EXPECT_EQ(a.optr, b.optr);
    EXPECT_EQ(a.oent, b.oent);
}

/* ---------------------------------------------------------------- the golden matrix
 * 2 x 5, one tile. Statistics s_s = 0.25, z_s = -2, s_z = 0.5, z_z = 0 (FORMAT_QUANT.md's worked example). Row 0:
 * sq 2, zq 5 (s = 1, m = 2.5), codes 0 1 2 3 4 -> -2.5 -1.5 -0.5 0.5 1.5; row 1: sq 3, zq 0 (s = 1.25, m = 0), codes
 * 7 0 1 0 2 -> 8.75 0 1.25 0 2.5. Outliers +0.5 at (0, 4) and -3 at (1, 1). A = W + O has 9 nonzeros. */
QArrays golden_arrays()
{
    QArrays a;
    a.rows = 2;
    a.cols = 5;
    a.words.assign(16, 0);
    const uint64_t stats = qt::stats_of(0x3400, 0xC000, 0x3800, 0x0000);
    unsigned q[16][16] = {{0, 1, 2, 3, 4}, {7, 0, 1, 0, 2}}, sq[16] = {2, 3}, zq[16] = {5, 0};
    qt::put_tile(a, 0, 0, stats, q, sq, zq);
    a.optr = {0, 1, 2};
    a.oent = {macko_quant_outlier(4, 0x3800), macko_quant_outlier(1, 0xC200)};
    return a;
}

const Bytes kGoldenQuant = {
    0x4d, 0x41, 0x43, 0x4b, 0x4f, 0x4d, 0x41, 0x54, 0x02, 0x00, 0x00, 0x00, 0x60, 0x00, 0x00, 0x00, /* magic, 2, 96 */
    0x01, 0x02, 0x03, 0x10, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* QUANT,16F,3,16; rows */
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* cols, nnz */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* outliers, words */
    0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* array bytes */
    0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xee, 0x98, 0x2e, 0xf6, 0x49, 0x0f, 0x37, 0x5c, /* ..., crcs */
    0x10, 0x01, 0x19, 0x00, 0x00, 0x04, 0x00, 0x0a, 0x8f, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, /* words 0, 1 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, /* 2, 3 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 4, 5 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, /* 6, 7 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 8, 9 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, /* 10, 11 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 12, 13 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 14, 15 */
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,                         /* row_ptr */
    0x04, 0x00, 0x00, 0x38, 0x01, 0x00, 0x00, 0xc2,                                                 /* entries */
};
/* payload offsets of the golden file */
constexpr size_t kWords = kHdr, kOptr = kHdr + 128, kOent = kOptr + 12;

TEST(SerializeQuant, GoldenBytes)
{
    Owned A, B, C;
    ASSERT_EQ(qt::create(golden_arrays(), &A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(mt::serialized(A.A), kGoldenQuant);
    /* the first word is FORMAT_QUANT.md's layout: q0 0, q2 2, q4 4 | q1 1, q3 3 | sq 2 | zq 5 */
    EXPECT_EQ(golden_arrays().words[0], UINT64_C(0x0A00040000190110));
    TempDir dir;
    const std::string path = dir.file("golden.macko");
    ASSERT_EQ(macko_mat_save(A.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(read_file(path), kGoldenQuant);

    ASSERT_EQ(macko_mat_deserialize(&B.A, kGoldenQuant.data(), (int64_t)kGoldenQuant.size()), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    expect_same_quant(A.A, B.A);
    ASSERT_EQ(macko_mat_load(&C.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    expect_same_quant(A.A, C.A);
    int64_t nnz = 0;
    ASSERT_EQ(macko_mat_get_info(B.A, nullptr, nullptr, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(nnz, 9);
    const double want[10] = {-2.5, -1.5, -0.5, 0.5, 2.0, 8.75, -3.0, 1.25, 0.0, 2.5};
    std::vector<uint16_t> d(10, 0xFFFF);
    ASSERT_EQ(macko_mat_export_dense_host(B.A, d.data(), 5, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(qt::h2d(d[(size_t)i]), want[i]) << "element " << i;
}

/* ---------------------------------------------------------------- round trips */

struct QShape {
    int64_t rows, cols;
    double density; /* of the outliers */
};

const QShape kShapes[] = {
    {0, 0, 0.0},  {0, 5, 0.0},    {7, 0, 0.0},   {1, 1, 0.0},   {1, 1, 1.0},    {2, 5, 0.3},
    {16, 16, 0.0}, {17, 33, 0.05}, {33, 17, 0.2}, {40, 70, 0.01}, {5, 300, 0.0}, {100, 3, 0.5},
};

/* serialize / deserialize / save / load of A: byte-identical everywhere. */
void round_trip(macko_mat_t A, const std::string &path)
{
    int64_t size = -1, storage = -1, rows = -1, cols = -1, nnz = -1, outliers = -1, wc = -1;
    ASSERT_EQ(macko_mat_serialized_size(A, &size), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(A, &storage, &outliers, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_info(A, &rows, &cols, &nnz, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_quant_host(A, nullptr, nullptr, &wc, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    /* on the host the outliers are CSR: the storage is exactly the payload */
    EXPECT_EQ(size, (int64_t)kHdr + storage);
    EXPECT_EQ(size, (int64_t)kHdr + 8 * wc + 4 * (rows + 1) + 4 * outliers);

    Bytes buf((size_t)size + 64, 0xCD);
    ASSERT_EQ(macko_mat_serialize(A, buf.data(), (int64_t)buf.size()), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    for (size_t i = (size_t)size; i < buf.size(); i++)
        ASSERT_EQ(buf[i], 0xCD) << "byte " << i << " beyond serialized_size was written";
    buf.resize((size_t)size);

    EXPECT_EQ(get_u32(buf, 8), 2u);
    EXPECT_EQ(get_u32(buf, 12), 96u);
    EXPECT_EQ(buf[16], 1);  /* MACKO_KIND_QUANT */
    EXPECT_EQ(buf[17], 2);  /* MACKO_R_16F */
    EXPECT_EQ(buf[18], 3);  /* weight bits */
    EXPECT_EQ(buf[19], 16); /* group size */
    EXPECT_EQ(get_u32(buf, 20), 0u);
    EXPECT_EQ(get_i64(buf, 24), rows);
    EXPECT_EQ(get_i64(buf, 32), cols);
    EXPECT_EQ(get_i64(buf, 40), nnz);
    EXPECT_EQ(get_i64(buf, 48), outliers);
    EXPECT_EQ(get_i64(buf, 56), wc);
    EXPECT_EQ(get_i64(buf, 64), 8 * wc);
    EXPECT_EQ(get_i64(buf, 72), 4 * (rows + 1));
    EXPECT_EQ(get_i64(buf, 80), 4 * outliers);
    EXPECT_EQ(get_u32(buf, 88), st::crc(buf.data() + kHdr, buf.size() - kHdr));
    EXPECT_EQ(get_u32(buf, 92), st::crc(buf.data(), 92));
    /* the payload is the arrays, little-endian (this host's order) */
    const QArrays a = arrays_of(A);
    if (!a.words.empty()) { /* data() of an empty vector may be NULL, which memcmp must not get */
        ASSERT_EQ(std::memcmp(buf.data() + kHdr, a.words.data(), 8 * a.words.size()), 0);
    }
    ASSERT_EQ(std::memcmp(buf.data() + kHdr + 8 * a.words.size(), a.optr.data(), 4 * a.optr.size()), 0);
    if (!a.oent.empty()) {
        ASSERT_EQ(std::memcmp(buf.data() + kHdr + 8 * a.words.size() + 4 * a.optr.size(), a.oent.data(),
                              4 * a.oent.size()),
                  0);
    }

    EXPECT_EQ(mt::serialized(A), buf); /* deterministic */

    Owned B, C;
    ASSERT_EQ(macko_mat_deserialize(&B.A, buf.data(), size), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(macko_get_last_error_position(), 0);
    expect_same_quant(A, B.A);
    EXPECT_EQ(mt::serialized(B.A), buf);

    ASSERT_EQ(macko_mat_save(A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(read_file(path), buf);
    ASSERT_EQ(macko_mat_load(&C.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    expect_same_quant(A, C.A);
    ASSERT_EQ(macko_mat_save(C.A, path.c_str()), MACKO_STATUS_SUCCESS); /* over the existing file */
    EXPECT_EQ(read_file(path), buf);
}

TEST(SerializeQuant, RoundTripIsByteIdentical)
{
    TempDir dir;
    uint64_t seed = 300;
    for (const QShape &s : kShapes) {
        SCOPED_TRACE(::testing::Message() << s.rows << " x " << s.cols << ", outlier density " << s.density);
        const QArrays a = qt::random_arrays(s.rows, s.cols, s.density, ++seed);
        Owned A;
        ASSERT_EQ(qt::create(a, &A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
        round_trip(A.A, dir.file("q.macko"));
        if (s.density == 0.0 && s.rows * s.cols > 0) {
            EXPECT_EQ(a.outliers(), 0);
        }
    }
}

/* The encoder's output (outliers chosen by FRACTION, and none) and the widest matrix the kind holds. */
TEST(SerializeQuant, RoundTripOfEncodedAndWideMatrices)
{
    TempDir dir;
    const mt::Dense d = mt::random_dense(37, 61, 1.0, 17, true);
    const Bytes in = mt::to_bytes(d, MACKO_R_32F, MACKO_ORDER_ROW, 61);
    for (macko_outlier_rule_t rule : {MACKO_OUTLIERS_NONE, MACKO_OUTLIERS_FRACTION}) {
        SCOPED_TRACE(rule);
        Owned A;
        ASSERT_EQ(macko_mat_create_quant_dense_host(&A.A, 37, 61, MACKO_R_32F, in.data(), 61, MACKO_ORDER_ROW, 3, rule,
                                                    rule == MACKO_OUTLIERS_NONE ? 0.0 : 0.02),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        round_trip(A.A, dir.file("enc.macko"));
    }
    /* cols = 65536, the largest: outlier columns up to 65535 */
    QArrays w = qt::random_arrays(3, 65536, 0.0, 9);
    w.optr = {0, 2, 2, 3};
    w.oent = {macko_quant_outlier(0, 0x3C00), macko_quant_outlier(65535, 0xBC00), macko_quant_outlier(40000, 0x4000)};
    Owned W;
    ASSERT_EQ(qt::create(w, &W.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    round_trip(W.A, dir.file("wide.macko"));
}

/* ---------------------------------------------------------------- a matrix without a host copy */

TEST(SerializeQuant, WithoutHostCopy)
{
    TempDir dir;
    Owned A;
    ASSERT_EQ(qt::create(qt::random_arrays(17, 33, 0.05, 4), &A.A), MACKO_STATUS_SUCCESS);
    const Bytes ser = mt::serialized(A.A);
    macko_host_arrays_free(A.A); /* as macko_mat_release_host leaves it */
    int64_t size = -1;
    ASSERT_EQ(macko_mat_serialized_size(A.A, &size), MACKO_STATUS_SUCCESS); /* from the sizes alone */
    EXPECT_EQ(size, (int64_t)ser.size());
    Bytes buf(ser.size(), 0xAB);
    EXPECT_EQ(macko_mat_serialize(A.A, buf.data(), (int64_t)buf.size()), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_EQ(buf, Bytes(ser.size(), 0xAB));
    const std::string path = dir.file("none.macko");
    EXPECT_EQ(macko_mat_save(A.A, path.c_str()), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SerializeQuant, BufferTooSmall)
{
    Owned A;
    ASSERT_EQ(qt::create(golden_arrays(), &A.A), MACKO_STATUS_SUCCESS);
    Bytes buf(kGoldenQuant.size(), 0xCD);
    EXPECT_EQ(macko_mat_serialize(A.A, buf.data(), (int64_t)buf.size() - 1), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 3);
    EXPECT_EQ(buf, Bytes(kGoldenQuant.size(), 0xCD));
}

/* ---------------------------------------------------------------- corrupted input */

/* Headers with a valid checksum whose fields are not: each caught by its own check, naming the field, before anything
 * is allocated (the large sizes would need terabytes: an allocation attempt would be ALLOC_FAILED). */
TEST(SerializeQuant, EveryHeaderFieldIsChecked)
{
    const int64_t big = INT64_C(1) << 62;
    /* rows x cols with consistent array sizes and no outliers: a header that is valid but for the bytes present */
    const auto announce = [](Bytes &b, int64_t rows, int64_t cols) {
        /* unsigned: 2^56 x 65536 wraps (that header is refused before its sizes are looked at) */
        const uint64_t words = UINT64_C(16) * (uint64_t)((rows + 15) / 16) * (uint64_t)((cols + 15) / 16);
        set_i64(b, 24, rows);
        set_i64(b, 32, cols);
        set_i64(b, 40, 0);
        set_i64(b, 48, 0);
        set_i64(b, 56, (int64_t)words);
        set_i64(b, 64, (int64_t)(8 * words));
        set_i64(b, 72, 4 * (rows + 1));
        set_i64(b, 80, 0);
    };
    const std::vector<Edit> cases = {
        {"magic", [](Bytes &b) { b[3] = 'X'; }, "'magic'"},
        {"version 0", [](Bytes &b) { set_u32(b, 8, 0); }, "'version'"},
        {"version 3 (a version-2 header read as version 3: kind 1 is QUANT)", [](Bytes &b) { set_u32(b, 8, 3); },
         "'kind' (byte 16) is 1 (MACKO_KIND_QUANT); format version 3 holds MACKO_KIND_NM (2) only"},
        {"version 4", [](Bytes &b) { set_u32(b, 8, 4); }, "'version' (byte 8) is 4; this library reads format versions 1, 2 and 3"},
        {"version 1 (a version-2 header read as version 1: kind 1 is value type 1, fp64)",
         [](Bytes &b) { set_u32(b, 8, 1); }, "'value_bits'"},
        {"header size 112", [](Bytes &b) { set_u32(b, 12, 112); }, "'header_size'"},
        {"kind 0 (MACKO)", [](Bytes &b) { b[16] = 0; }, "'kind' (byte 16) is 0 (MACKO_KIND_MACKO)"},
        {"kind 2 (N:M)", [](Bytes &b) { b[16] = 2; }, "'kind' (byte 16) is 2 (MACKO_KIND_NM); format version 2 holds"},
        {"kind 3", [](Bytes &b) { b[16] = 3; }, "'kind' (byte 16) is 3, not a known macko_kind_t"},
        {"kind 255", [](Bytes &b) { b[16] = 255; }, "'kind'"},
        {"value type fp32", [](Bytes &b) { b[17] = 0; }, "'value_type'"},
        {"value type bf16", [](Bytes &b) { b[17] = 14; }, "'value_type'"},
        {"weight bits 2", [](Bytes &b) { b[18] = 2; }, "'weight_bits'"},
        {"weight bits 4", [](Bytes &b) { b[18] = 4; }, "'weight_bits'"},
        {"group size 8", [](Bytes &b) { b[19] = 8; }, "'group_size'"},
        {"group size 32", [](Bytes &b) { b[19] = 32; }, "'group_size'"},
        {"flags 1", [](Bytes &b) { set_u32(b, 20, 1); }, "'flags'"},
        {"flags 2^31", [](Bytes &b) { set_u32(b, 20, 0x80000000u); }, "'flags'"},
        {"rows -1", [](Bytes &b) { set_i64(b, 24, -1); }, "'rows'"},
        {"rows 2^62", [&](Bytes &b) { set_i64(b, 24, big); }, "'rows'"},
        {"rows 3", [](Bytes &b) { set_i64(b, 24, 3); }, "'outlier_row_ptr_bytes'"},
        {"rows 17", [](Bytes &b) { set_i64(b, 24, 17); }, "'words_count'"},
        {"cols -1", [](Bytes &b) { set_i64(b, 32, -1); }, "'cols'"},
        {"cols 65537", [](Bytes &b) { set_i64(b, 32, 65537); }, "'cols' (byte 32) is 65537, outside [0, 65536]"},
        {"cols 2^62", [&](Bytes &b) { set_i64(b, 32, big); }, "'cols'"},
        {"cols 17", [](Bytes &b) { set_i64(b, 32, 17); }, "'words_count'"},
        {"nnz -1", [](Bytes &b) { set_i64(b, 40, -1); }, "'nnz'"},
        {"nnz 11 > rows x cols", [](Bytes &b) { set_i64(b, 40, 11); }, "'nnz' (byte 40) is 11, more than"},
        {"outliers -1", [](Bytes &b) { set_i64(b, 48, -1); }, "'outliers'"},
        {"outliers 11 > rows x cols", [](Bytes &b) { set_i64(b, 48, 11); }, "'outliers'"},
        {"outliers 3", [](Bytes &b) { set_i64(b, 48, 3); }, "'outlier_entries_bytes'"},
        {"outliers 2^31 in a large matrix",
         [&](Bytes &b) {
             announce(b, 1 << 20, 1 << 12);
             set_i64(b, 48, INT64_C(1) << 31);
         },
         "'outliers'"},
        {"words_count 32", [](Bytes &b) { set_i64(b, 56, 32); }, "'words_count'"},
        {"words_count -16", [](Bytes &b) { set_i64(b, 56, -16); }, "'words_count'"},
        {"words_bytes 127", [](Bytes &b) { set_i64(b, 64, 127); }, "'words_bytes'"},
        {"words_bytes 2^62", [&](Bytes &b) { set_i64(b, 64, big); }, "'words_bytes'"},
        {"outlier_row_ptr_bytes 16", [](Bytes &b) { set_i64(b, 72, 16); }, "'outlier_row_ptr_bytes'"},
        {"outlier_row_ptr_bytes -12", [](Bytes &b) { set_i64(b, 72, -12); }, "'outlier_row_ptr_bytes'"},
        {"outlier_entries_bytes 4", [](Bytes &b) { set_i64(b, 80, 4); }, "'outlier_entries_bytes'"},
        {"outlier_entries_bytes 2^62", [&](Bytes &b) { set_i64(b, 80, big); }, "'outlier_entries_bytes'"},
        {"2^56 rows x 65536 cols: more than 2^56 words",
         [&](Bytes &b) { announce(b, INT64_C(1) << 56, 65536); }, "'words_count'"},
        /* self-consistent headers that announce far more data than there is */
        {"2^40 x 16, consistent sizes", [&](Bytes &b) { announce(b, INT64_C(1) << 40, 16); }, "truncated"},
        {"2^52 x 16, consistent sizes", [&](Bytes &b) { announce(b, INT64_C(1) << 52, 16); }, "truncated"},
        {"1000 x 5, consistent sizes", [&](Bytes &b) { announce(b, 1000, 5); }, "truncated"},
        {"2^31 - 1 outliers, consistent sizes",
         [&](Bytes &b) {
             announce(b, 1 << 20, 1 << 12);
             set_i64(b, 48, INT32_MAX);
             set_i64(b, 80, INT64_C(4) * INT32_MAX);
         },
         "truncated"},
        {"2 x 5 read as 0 x 0", [&](Bytes &b) { announce(b, 0, 0); }, "unexpected bytes after the end of the payload"},
    };
    st::expect_edits_are_format_errors(kGoldenQuant, cases, fix_header_crc, "hostile.macko");
}

TEST(SerializeQuant, EveryHeaderBitFlipIsFormatError)
{
    TempDir dir;
    st::expect_bit_flips_are_format_errors(kGoldenQuant, 0, kHdr, dir.file("flip.macko"));
}

TEST(SerializeQuant, EveryPayloadBitFlipIsFormatError)
{
    TempDir dir;
    st::expect_bit_flips_are_format_errors(kGoldenQuant, kHdr, kGoldenQuant.size(), dir.file("flip.macko"),
                                           "'payload_crc32'");
}

TEST(SerializeQuant, TruncatedAndExtendedBuffers)
{
    TempDir dir;
    const std::string path = dir.file("cut.macko");
    for (size_t n = 0; n < kGoldenQuant.size(); n++) {
        SCOPED_TRACE(::testing::Message() << "length " << n);
        const std::string msg = expect_format_error(Bytes(kGoldenQuant.begin(), kGoldenQuant.begin() + (long)n), path);
        EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
    }
    for (size_t extra : {1, 3, 4, 8, 4096}) {
        SCOPED_TRACE(::testing::Message() << extra << " extra bytes");
        Bytes b = kGoldenQuant;
        b.insert(b.end(), extra, 0);
        const std::string msg = expect_format_error(b, path);
        EXPECT_NE(msg.find("unexpected bytes after the end of the payload"), std::string::npos) << msg;
    }
    /* one more outlier entry appended and announced, checksums valid: now the content is wrong, not the length */
    Bytes b = kGoldenQuant;
    b.insert(b.end(), {0x02, 0x00, 0x00, 0x3c});
    set_i64(b, 48, 3);
    set_i64(b, 80, 12);
    fix_payload_crc(b);
    const std::string msg = expect_format_error(b, path);
    EXPECT_NE(msg.find("not a valid QUANT encoding: outlier_row_ptr"), std::string::npos) << msg;
}

/* Payloads with a recomputed (valid) checksum that are not a valid QUANT encoding: the importer's validator names
 * the array, the tile row or the outlier. */
TEST(SerializeQuant, InvalidContentWithValidChecksumIsFormatError)
{
    /* word i at kWords + 8i; row pointers at kOptr (3 x i32), entries at kOent (2 x u32: column, value << 16) */
    const std::string bad = "the payload is not a valid QUANT encoding: ";
    const auto set_word = [](Bytes &b, int i, uint64_t w) { set_i64(b, kWords + 8 * (size_t)i, (int64_t)w); };
    const auto word = [](const Bytes &b, int i) { return (uint64_t)get_i64(b, kWords + 8 * (size_t)i); };
    const std::vector<Edit> cases = {
        {"reserved bit 15 of word 0", [&](Bytes &b) { set_word(b, 0, word(b, 0) | 1u << 15); },
         "words: word 0 (row 0, tile column 0): bits 15, 31 and 60..63 must be zero"},
        {"reserved bit 63 of word 9", [&](Bytes &b) { set_word(b, 9, word(b, 9) | UINT64_C(1) << 63); },
         "words: word 9 (row 9, tile column 0)"},
        {"code of column 5 (past cols) in row 1",
         [&](Bytes &b) { set_word(b, 1, word(b, 1) | (uint64_t)3 << macko_quant_qpos(5)); },
         "weight 5 (column 5, past cols = 5) has code 3"},
        {"scale code in padding row 2", [&](Bytes &b) { set_word(b, 2, word(b, 2) | UINT64_C(1) << 41); },
         "a padding row (rows = 2) must have weight, scale and zero codes 0"},
        {"s_s = Inf (pieces 3 of words 0..3: 0x7C00)",
         [&](Bytes &b) {
             const unsigned nib[4] = {0x0, 0x0, 0xC, 0x7};
             for (int i = 0; i < 4; i++)
                 set_word(b, i, (word(b, i) & ~(UINT64_C(0xF) << 44)) | (uint64_t)nib[i] << 44);
         },
         "words: word 0 (row 0, tile column 0): the scale s decodes to inf"},
        {"outlier_row_ptr[0] = 1", [](Bytes &b) { set_u32(b, kOptr, 1); }, "outlier_row_ptr: row 0"},
        {"outlier_row_ptr decreases",
         [](Bytes &b) {
             set_u32(b, kOptr + 4, 2);
             set_u32(b, kOptr + 8, 1);
         },
         "outlier_row_ptr: row 1: outlier_row_ptr decreases"},
        {"outlier_row_ptr[rows] = 1 != outliers", [](Bytes &b) { set_u32(b, kOptr + 8, 1); }, "outlier_row_ptr"},
        {"outlier_row_ptr negative", [](Bytes &b) { set_u32(b, kOptr + 4, 0xFFFFFFFFu); }, "outlier_row_ptr"},
        {"outlier column 5 = cols", [](Bytes &b) { set_u32(b, kOent, macko_quant_outlier(5, 0x3800)); },
         "outlier_entries: row 0, outlier 0: column 5 is outside [0, cols = 5)"},
        {"outlier value +0", [](Bytes &b) { set_u32(b, kOent, macko_quant_outlier(4, 0x0000)); },
         "outlier_entries: row 0, outlier 0: value 0x0000 (column 4) is zero"},
        {"outlier value -0", [](Bytes &b) { set_u32(b, kOent + 4, macko_quant_outlier(1, 0x8000)); },
         "outlier_entries: row 1, outlier 1"},
        {"outlier value Inf", [](Bytes &b) { set_u32(b, kOent, macko_quant_outlier(4, 0x7C00)); }, "not finite"},
        {"outlier value NaN", [](Bytes &b) { set_u32(b, kOent + 4, macko_quant_outlier(1, 0xFE00)); }, "not finite"},
        {"two outliers of row 1, columns decreasing",
         [](Bytes &b) {
             set_u32(b, kOptr + 4, 0);
             set_u32(b, kOent, macko_quant_outlier(4, 0x3800));
         },
         "outlier_entries: row 1, outlier 1: column 1 does not follow the row's previous column 4"},
        {"an outlier cancelling its weight (nnz 8 != 9)",
         [](Bytes &b) { set_u32(b, kOent, macko_quant_outlier(4, 0xBE00)); },
         "header field 'nnz' (byte 40) is 9 but the payload holds 8 nonzero values"},
        {"header nnz 8, valid payload with 9", [](Bytes &b) { set_i64(b, 40, 8); }, "'nnz' (byte 40) is 8 but"},
    };
    for (const Edit &c : cases) {
        /* every message but nnz's comes from the validator */
        if (std::string(c.expect).find("'nnz'") == std::string::npos) {
            Bytes b = kGoldenQuant;
            c.edit(b);
            fix_payload_crc(b);
            EXPECT_NE(expect_format_error(b).find(bad), std::string::npos) << c.name;
        }
    }
    st::expect_edits_are_format_errors(kGoldenQuant, cases, fix_payload_crc, "content.macko");
}

/* Random edits with recomputed checksums: never a crash (run under ASan to see invalid reads); whatever is accepted
 * is a valid QUANT matrix that serializes back to exactly the accepted bytes. */
TEST(SerializeQuant, RandomEditsWithValidChecksumsNeverCrash)
{
    Owned A;
    ASSERT_EQ(qt::create(qt::random_arrays(21, 37, 0.05, 8), &A.A), MACKO_STATUS_SUCCESS);
    const Bytes base = mt::serialized(A.A);
    std::mt19937_64 g(2025);
    int accepted = 0, rejected = 0;
    for (int it = 0; it < 3000; it++) {
        Bytes b = base;
        const int edits = 1 + (int)(g() % 3);
        for (int e = 0; e < edits; e++) {
            const size_t pos = (g() % 4 == 0) ? 16 + g() % (88 - 16) : kHdr + g() % (b.size() - kHdr);
            b[pos] = (g() % 2) ? (uint8_t)g() : (uint8_t)(b[pos] ^ (1u << (g() % 8)));
        }
        fix_payload_crc(b);
        macko_mat_t B = kPoison;
        const macko_status_t s = macko_mat_deserialize(&B, b.data(), (int64_t)b.size());
        if (s == MACKO_STATUS_SUCCESS) {
            accepted++;
            EXPECT_EQ(mt::serialized(B), b) << "iteration " << it;
            Owned C; /* the accepted arrays pass the importer too */
            const QArrays a = arrays_of(B);
            EXPECT_EQ(qt::create(a, &C.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            macko_mat_destroy(B);
        } else {
            rejected++;
            ASSERT_EQ(s, MACKO_STATUS_FORMAT_ERROR) << "iteration " << it << ": " << macko_get_last_error_message();
            ASSERT_EQ(B, kPoison);
        }
    }
    EXPECT_GT(rejected, 0);
    EXPECT_GT(accepted, 0); /* code and value edits that keep the encoding valid (and nnz unchanged) */
}

} // namespace
