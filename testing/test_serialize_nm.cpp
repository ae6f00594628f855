/* Persistence of the N:M kind (lapack_style_docs/file_format.md, "Format version 3"): the golden bytes of the
 * format's example, round trips (serialize / deserialize / save / load) byte for byte, every header field checked,
 * every bit flip and truncation a FORMAT_ERROR, and payloads with valid checksums that are not N:M encodings. */
#include "common.h"
#include "nm_ref.h"
#include "serialize_util.h"

#include <string>
#include <vector>

using namespace st;

namespace
{

struct Owned {
    macko_mat_t A = nullptr;
    ~Owned() { macko_mat_destroy(A); }
};

/* file_format.md's example: 3 x 6 fp16, 2:4 with v = 2; 1 at (0,0), 2 at (0,5), -3 at (1,2), 0.5 at (2,3), 4 at
 * (2,4). Group 0 keeps positions 0, 2 of window 0 and 0, 1 of window 1 (column 4 padding); group 1 (row 2) keeps
 * 0, 3 and 0, 1 (column 5 padding). */
const Bytes kGoldenNm = {
    0x4d, 0x41, 0x43, 0x4b, 0x4f, 0x4d, 0x41, 0x54, 0x03, 0x00, 0x00, 0x00, 0x60, 0x00, 0x00, 0x00, /* 00 */
    0x02, 0x02, 0x02, 0x04, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 10 */
    0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 20 */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 30 */
    0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 40 */
    0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xbf, 0x89, 0xb6, 0xc1, 0x68, 0x5d, 0x59, 0xef, /* 50 */
    0x00, 0x3c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xc2, 0x00, 0x00, 0x00, 0x00, /* 60 */
    0x00, 0x00, 0x00, 0x38, 0x00, 0x44, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x03, 0x00, 0x01, /* 70 */
};

nmr::Dense golden_dense()
{
    nmr::Dense d = nmr::zeros(3, 6, MACKO_R_16F);
    d.at(0, 0) = 0x3C00;
    d.at(0, 5) = 0x4000;
    d.at(1, 2) = 0xC200;
    d.at(2, 3) = 0x3800;
    d.at(2, 4) = 0x4400;
    return d;
}

macko_status_t create(const nmr::Dense &d, int n, int m, int v, macko_mat_t *A)
{
    const std::vector<uint8_t> b = d.bytes(MACKO_ORDER_ROW, std::max<int64_t>(d.cols, 1));
    return macko_mat_create_nm_dense_host(A, d.rows, d.cols, d.type, b.data(), std::max<int64_t>(d.cols, 1),
                                          MACKO_ORDER_ROW, n, m, v);
}

/* A and B hold the same N:M matrix: pattern, info, storage and host arrays byte for byte. */
void expect_same_nm(macko_mat_t A, macko_mat_t B)
{
    int n1, m1, v1, n2, m2, v2;
    const void *x1, *x2;
    const uint8_t *p1, *p2;
    ASSERT_EQ(macko_mat_get_nm_host(A, &n1, &m1, &v1, &x1, &p1), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_nm_host(B, &n2, &m2, &v2, &x2, &p2), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(n1, n2);
    EXPECT_EQ(m1, m2);
    EXPECT_EQ(v1, v2);
    int64_t r1, c1, z1, r2, c2, z2, s1, s2, e1, e2;
    macko_datatype_t t1, t2;
    ASSERT_EQ(macko_mat_get_info(A, &r1, &c1, &z1, &t1), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_info(B, &r2, &c2, &z2, &t2), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(r1, r2);
    EXPECT_EQ(c1, c2);
    EXPECT_EQ(z1, z2);
    EXPECT_EQ(t1, t2);
    ASSERT_EQ(macko_mat_get_storage(A, &s1, &e1, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_mat_get_storage(B, &s2, &e2, nullptr, nullptr), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(s1, s2);
    ASSERT_EQ(e1, e2);
    const size_t vb = (size_t)e1 * nmr::es_of(t1);
    if (vb > 0) {
        EXPECT_EQ(std::memcmp(x1, x2, vb), 0) << "values differ";
        EXPECT_EQ(std::memcmp(p1, p2, (size_t)s1 - vb), 0) << "positions differ";
    }
}

} // namespace

TEST(SerializeNm, GoldenBytes)
{
    Owned A, B, C;
    ASSERT_EQ(create(golden_dense(), 2, 4, 2, &A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(mt::serialized(A.A), kGoldenNm);
    int64_t size = 0;
    ASSERT_EQ(macko_mat_serialized_size(A.A, &size), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(size, 128);
    mt::TempDir dir;
    const std::string path = dir.file("golden.macko");
    ASSERT_EQ(macko_mat_save(A.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(mt::read_file(path), kGoldenNm);
    ASSERT_EQ(macko_mat_deserialize(&B.A, kGoldenNm.data(), (int64_t)kGoldenNm.size()), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    expect_same_nm(A.A, B.A);
    ASSERT_EQ(macko_mat_load(&C.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    expect_same_nm(A.A, C.A);
    macko_kind_t kind = MACKO_KIND_MACKO;
    ASSERT_EQ(macko_mat_get_kind(C.A, &kind), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(kind, MACKO_KIND_NM);
    std::vector<uint16_t> d(18, 0xFFFF);
    ASSERT_EQ(macko_mat_export_dense_host(C.A, d.data(), 6, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    const std::vector<uint16_t> want = {0x3C00, 0, 0, 0, 0, 0x4000, 0, 0, 0xC200, 0, 0, 0, 0, 0, 0, 0x3800, 0x4400, 0};
    EXPECT_EQ(d, want);
}

TEST(SerializeNm, RoundTripIsByteIdentical)
{
    mt::TempDir dir;
    uint64_t seed = 1;
    const int64_t shapes[][2] = {{1, 1}, {7, 33}, {33, 4097}, {0, 5}, {5, 0}, {70, 40}};
    for (const auto &s : shapes)
        for (macko_datatype_t t : mt::kAllTypes)
            for (const int *p : {(const int[]){2, 4, 1}, (const int[]){7, 16, 4}, (const int[]){0, 0, 0}}) {
                SCOPED_TRACE(std::to_string(s[0]) + " x " + std::to_string(s[1]) + " type " + std::to_string((int)t));
                const nmr::Dense d = p[0] == 2 ? nmr::follows(s[0], s[1], t, 2, 4, 1, seed++)
                                               : nmr::follows(s[0], s[1], t, 7, 16, 4, seed++);
                Owned A, B, C;
                ASSERT_EQ(create(d, p[0], p[1], p[2], &A.A), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
                const Bytes ser = mt::serialized(A.A);
                int64_t bytes = 0;
                ASSERT_EQ(macko_mat_get_storage(A.A, &bytes, nullptr, nullptr, nullptr), MACKO_STATUS_SUCCESS);
                EXPECT_EQ((int64_t)ser.size(), 96 + bytes);
                EXPECT_EQ(get_u32(ser, 8), 3u);
                ASSERT_EQ(macko_mat_deserialize(&B.A, ser.data(), (int64_t)ser.size()), MACKO_STATUS_SUCCESS)
                    << macko_get_last_error_message();
                expect_same_nm(A.A, B.A);
                EXPECT_EQ(mt::serialized(B.A), ser);
                const std::string path = dir.file("m.macko");
                ASSERT_EQ(macko_mat_save(B.A, path.c_str()), MACKO_STATUS_SUCCESS);
                ASSERT_EQ(macko_mat_load(&C.A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
                EXPECT_EQ(mt::serialized(C.A), ser);
            }
}

TEST(SerializeNm, EveryHeaderFieldIsChecked)
{
    const int64_t big = INT64_C(1) << 62;
    /* rows x cols with the golden pattern and consistent sizes: valid but for the bytes present */
    const auto announce = [](Bytes &b, int64_t rows, int64_t cols) {
        const int64_t kept = (cols + 3) / 4 * 2;
        set_i64(b, 24, rows);
        set_i64(b, 32, cols);
        set_i64(b, 40, 0);
        set_i64(b, 56, kept);
        set_i64(b, 64, 2 * rows * kept);
        set_i64(b, 72, (rows + 1) / 2 * kept);
        set_i64(b, 80, rows * kept);
    };
    const std::vector<Edit> cases = {
        {"version 4", [](Bytes &b) { set_u32(b, 8, 4); }, "'version' (byte 8) is 4"},
        {"version 2 (kind 2 is N:M)", [](Bytes &b) { set_u32(b, 8, 2); },
         "'kind' (byte 16) is 2 (MACKO_KIND_NM); format version 2 holds MACKO_KIND_QUANT (1) only"},
        {"version 1 (kind 2 read as the value type fp16, value_bits 2)", [](Bytes &b) { set_u32(b, 8, 1); },
         "'value_bits'"},
        {"kind 0", [](Bytes &b) { b[16] = 0; }, "'kind' (byte 16) is 0 (MACKO_KIND_MACKO); format version 3 holds"},
        {"kind 1", [](Bytes &b) { b[16] = 1; }, "a QUANT matrix is format version 2"},
        {"kind 3", [](Bytes &b) { b[16] = 3; }, "'kind' (byte 16) is 3, not a known macko_kind_t"},
        {"value type 3", [](Bytes &b) { b[17] = 3; }, "'value_type' (byte 17) is 3"},
        {"value type fp32", [](Bytes &b) { b[17] = 0; }, "'values_bytes' (byte 64) is 24; entries and the type imply 48"},
        {"m 5", [](Bytes &b) { b[19] = 5; }, "'m' (byte 19) is 5; the supported m are 4, 8, 16 and 32"},
        {"m 0 and n 0: m first", [](Bytes &b) { b[19] = 0, b[18] = 0; }, "'m'"},
        {"m 64", [](Bytes &b) { b[19] = 64; }, "'m'"},
        {"n 0", [](Bytes &b) { b[18] = 0; }, "'n' (byte 18) is 0, outside [1, m = 4]"},
        {"n 5", [](Bytes &b) { b[18] = 5; }, "'n' (byte 18) is 5, outside [1, m = 4]"},
        {"n 3", [](Bytes &b) { b[18] = 3; }, "'kept' (byte 56) is 4; cols, m and n imply ceil(cols/m)*n = 6"},
        {"m 8", [](Bytes &b) { b[19] = 8; }, "'kept' (byte 56) is 4; cols, m and n imply ceil(cols/m)*n = 2"},
        {"flags 1", [](Bytes &b) { set_u32(b, 20, 1); }, "'flags' (byte 20) is 0x1"},
        {"rows -1", [](Bytes &b) { set_i64(b, 24, -1); }, "'rows'"},
        {"rows 2^62", [&](Bytes &b) { set_i64(b, 24, big); }, "'rows'"},
        {"cols -1", [](Bytes &b) { set_i64(b, 32, -1); }, "'cols'"},
        {"cols 2^62", [&](Bytes &b) { set_i64(b, 32, big); }, "'cols'"},
        {"v 0", [](Bytes &b) { set_i64(b, 48, 0); }, "'v' (byte 48) is 0; the supported v are"},
        {"v 3", [](Bytes &b) { set_i64(b, 48, 3); }, "'v'"},
        {"v 2^32 + 2", [](Bytes &b) { set_i64(b, 48, (INT64_C(1) << 32) + 2); }, "'v'"},
        {"v -2", [](Bytes &b) { set_i64(b, 48, -2); }, "'v'"},
        {"v 1", [](Bytes &b) { set_i64(b, 48, 1); }, "'positions_bytes' (byte 72) is 8; rows, v and kept imply"},
        {"kept 5", [](Bytes &b) { set_i64(b, 56, 5); }, "'kept'"},
        {"kept -4", [](Bytes &b) { set_i64(b, 56, -4); }, "'kept'"},
        {"entries 13", [](Bytes &b) { set_i64(b, 80, 13); }, "'entries' (byte 80) is 13; rows x kept is 12"},
        {"nnz -1", [](Bytes &b) { set_i64(b, 40, -1); }, "'nnz'"},
        {"nnz 13", [](Bytes &b) { set_i64(b, 40, 13); }, "'nnz' (byte 40) is 13, outside [0, entries = 12]"},
        {"values_bytes 2^62", [&](Bytes &b) { set_i64(b, 64, big); }, "'values_bytes'"},
        {"positions_bytes 9", [](Bytes &b) { set_i64(b, 72, 9); }, "'positions_bytes'"},
        {"rows x kept beyond 2^56", [&](Bytes &b) { announce(b, INT64_C(1) << 40, INT64_C(1) << 20); },
         "'entries' (byte 80)"},
        {"2^40 x 8, consistent sizes", [&](Bytes &b) { announce(b, INT64_C(1) << 40, 8); }, "truncated"},
        {"1000 x 5, consistent sizes", [&](Bytes &b) { announce(b, 1000, 5); }, "truncated"},
        {"3 x 6 read as 0 x 0", [&](Bytes &b) { announce(b, 0, 0); }, "unexpected bytes after the end of the payload"},
    };
    expect_edits_are_format_errors(kGoldenNm, cases, fix_header_crc, "hostile.macko");
}

TEST(SerializeNm, EveryBitFlipAndTruncationIsFormatError)
{
    expect_bit_flips_are_format_errors(kGoldenNm, 0, kHdr, "");
    expect_bit_flips_are_format_errors(kGoldenNm, kHdr, kGoldenNm.size(), "", "'payload_crc32'");
    for (size_t n = 0; n < kGoldenNm.size(); n++) {
        const std::string msg = expect_format_error(Bytes(kGoldenNm.begin(), kGoldenNm.begin() + (long)n));
        EXPECT_NE(msg.find("truncated"), std::string::npos) << n << ": " << msg;
    }
    Bytes longer = kGoldenNm;
    longer.push_back(0);
    EXPECT_NE(expect_format_error(longer).find("unexpected bytes"), std::string::npos);
}

/* Payloads with valid checksums that are not N:M encodings: the importer's message, after the format's prefix. */
TEST(SerializeNm, InvalidContentWithValidChecksumIsFormatError)
{
    mt::TempDir dir;
    const std::vector<Edit> cases = {
        {"position 4 (= m)", [](Bytes &b) { b[96 + 24 + 1] = 4; },
         "the payload is not a valid N:M encoding: positions: group 0 (rows 0..1), window 0: slot 1 holds position 4; "
         "it must be less than m = 4"},
        {"positions not ascending", [](Bytes &b) { b[96 + 24 + 5] = 0; },
         "positions: group 1 (rows 2..2), window 0: slot 1 holds position 0 after 0"},
        /* group 1 keeps position 1 (column 5) of window 1 at slot 1 and 3 (column 7, past cols) moved there */
        {"a nonzero past cols", [](Bytes &b) { b[96 + 24 + 7] = 3, b[96 + 22] = 0x01; },
         "values: row 2, window 1: slot 1 (position 3, column 7, past cols = 6) holds a nonzero value"},
        {"nnz 4", [](Bytes &b) { set_i64(b, 40, 4); }, "'nnz' (byte 40) is 4 but the payload holds 5 nonzero values"},
        {"nnz 6 (a value made nonzero)", [](Bytes &b) { b[96 + 2] = 0x01; },
         "'nnz' (byte 40) is 5 but the payload holds 6 nonzero values"},
    };
    expect_edits_are_format_errors(kGoldenNm, cases, fix_payload_crc, "content.macko");
    /* -0 past cols is a zero: accepted */
    Bytes b = kGoldenNm;
    b[96 + 24 + 7] = 3;
    b[96 + 23] = 0x80;
    fix_payload_crc(b);
    Owned A;
    EXPECT_EQ(macko_mat_deserialize(&A.A, b.data(), (int64_t)b.size()), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
}
