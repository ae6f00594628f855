/* Persistence: macko_mat_serialized_size / serialize / deserialize / save / load (all on the CPU).
 * The byte layout is lapack_style_docs/file_format.md; the golden tests pin it. */
#include "common.h"
#include "serialize_util.h"

#include "macko_internal.h"

#ifdef __linux__
#include <sys/resource.h>
#endif

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using mt::read_file;
using mt::TempDir;
using mt::write_file;
using st::crc;
using st::Edit;
using st::expect_bit_flips_are_format_errors;
using st::expect_format_error;
using st::fix_header_crc;
using st::fix_payload_crc;
using st::get_i64;
using st::get_u32;
using st::kHdr;
using st::kPoison;
using st::set_i64;
using st::set_u32;

/* ---------------------------------------------------------------- helpers */

macko_mat_t make_dense(const mt::Dense &d, macko_datatype_t type)
{
    int64_t ld = d.cols > 0 ? d.cols : 1;
    std::vector<uint8_t> b = mt::to_bytes(d, type, MACKO_ORDER_ROW, ld);
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_dense_host(&A, d.rows, d.cols, type, b.data(), ld, MACKO_ORDER_ROW),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    return A;
}

/* ---------------------------------------------------------------- the golden matrix
 * 3 x 20: row 0 = 1 at column 0, 2 at column 18 (one padding entry at 16); row 1 empty; row 2 = -3 at column 19
 * (one padding entry at 15). Entries 5, padded to 8; nnz 3. */
mt::Dense golden_dense()
{
    mt::Dense d;
    d.rows = 3;
    d.cols = 20;
    d.v.assign(60, 0.0f);
    d.at(0, 0) = 1.0f;
    d.at(0, 18) = 2.0f;
    d.at(2, 19) = -3.0f;
    return d;
}

const Bytes kGoldenHalf = {
    0x4d, 0x41, 0x43, 0x4b, 0x4f, 0x4d, 0x41, 0x54, 0x01, 0x00, 0x00, 0x00, 0x60, 0x00, 0x00, 0x00, /* magic, 1, 96 */
    0x02, 0x10, 0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 16F,16,4,4; rows */
    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* cols, nnz */
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* entries, padded */
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* array bytes */
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x63, 0xb5, 0xa3, 0xaa, 0x03, 0x1e, 0x1a, /* ..., crcs */
    0x00, 0x3c, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xc2, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* values */
    0xf0, 0xf1, 0x03, 0x00,                                                                         /* deltas */
    0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, /* row_ptr */
};

/* Each edit of the golden fp16 file, with its checksums made valid again by fix, must be a FORMAT_ERROR naming its
 * expect. */
void expect_edits_are_format_errors(const std::vector<Edit> &edits, void (*fix)(Bytes &), const char *file)
{
    st::expect_edits_are_format_errors(kGoldenHalf, edits, fix, file);
}

const Bytes kGoldenFloat = {
    0x4d, 0x41, 0x43, 0x4b, 0x4f, 0x4d, 0x41, 0x54, 0x01, 0x00, 0x00, 0x00, 0x60, 0x00, 0x00, 0x00,
    0x00, 0x20, 0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0xcf, 0x0a, 0x95, 0xc9, 0xe8, 0x89, 0xd8,
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x40, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xf0, 0xf1, 0x03, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
};

/* ---------------------------------------------------------------- round trips */

struct Shape {
    int64_t rows, cols;
    double density;
    bool structure;
};

const Shape kShapes[] = {
    {0, 0, 0.0, false},   {1, 1, 1.0, false},  {1, 1, 0.0, false},    {0, 7, 0.5, false},   {5, 0, 0.5, false},
    {3, 1, 0.7, false},   {1, 200, 0.05, false}, {7, 33, 0.5, false}, {37, 129, 0.3, true}, {64, 100, 0.9, true},
    {50, 17, 0.1, true},
};

TEST(Serialize, RoundTripIsByteIdentical)
{
    TempDir dir;
    uint64_t seed = 100;
    for (macko_datatype_t type : mt::kAllTypes) {
        for (const Shape &s : kShapes) {
            SCOPED_TRACE(::testing::Message() << "type " << type << " shape " << s.rows << "x" << s.cols << " d "
                                              << s.density);
            mt::Dense d = mt::random_dense(s.rows, s.cols, s.density, ++seed, type == MACKO_R_16F);
            if (s.structure)
                mt::add_structure(d, seed);
            d = mt::rounded(d, type);
            macko_mat_t A = make_dense(d, type);
            ASSERT_NE(A, nullptr);

            int64_t size = -1;
            ASSERT_EQ(macko_mat_serialized_size(A, &size), MACKO_STATUS_SUCCESS);
            int64_t bytes = 0, epad = 0;
            ASSERT_EQ(macko_mat_get_storage(A, &bytes, nullptr, &epad, nullptr), MACKO_STATUS_SUCCESS);
            EXPECT_EQ(size, (int64_t)kHdr + bytes);

            /* serialize writes exactly `size` bytes into a larger poisoned buffer */
            Bytes buf((size_t)size + 64, 0xCD);
            ASSERT_EQ(macko_mat_serialize(A, buf.data(), (int64_t)buf.size()), MACKO_STATUS_SUCCESS);
            for (size_t i = (size_t)size; i < buf.size(); i++)
                ASSERT_EQ(buf[i], 0xCD) << "byte " << i << " beyond serialized_size was written";
            buf.resize((size_t)size);

            /* header fields say what the matrix is */
            int64_t rows, cols, nnz;
            macko_datatype_t t;
            ASSERT_EQ(macko_mat_get_info(A, &rows, &cols, &nnz, &t), MACKO_STATUS_SUCCESS);
            EXPECT_EQ(buf[16], (uint8_t)type);
            EXPECT_EQ(buf[17], 8 * mt::value_bytes(type));
            EXPECT_EQ(get_i64(buf, 24), rows);
            EXPECT_EQ(get_i64(buf, 32), cols);
            EXPECT_EQ(get_i64(buf, 40), nnz);
            EXPECT_EQ(nnz, d.nnz());
            EXPECT_EQ(get_i64(buf, 56), epad);
            EXPECT_EQ(get_u32(buf, 88), crc(buf.data() + kHdr, buf.size() - kHdr));
            EXPECT_EQ(get_u32(buf, 92), crc(buf.data(), 92));

            /* determinism */
            EXPECT_EQ(mt::serialized(A), buf);

            /* memory round trip */
            macko_mat_t B = nullptr;
            ASSERT_EQ(macko_mat_deserialize(&B, buf.data(), size), MACKO_STATUS_SUCCESS)
                << macko_get_last_error_message();
            EXPECT_EQ(macko_get_last_error_position(), 0);
            mt::expect_same_host(A, B);
            EXPECT_EQ(mt::serialized(B), buf);

            /* file round trip; the file holds exactly the serialized bytes */
            std::string path = dir.file("m.macko");
            ASSERT_EQ(macko_mat_save(A, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            EXPECT_EQ(read_file(path), buf);
            macko_mat_t C = nullptr;
            ASSERT_EQ(macko_mat_load(&C, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
            mt::expect_same_host(A, C);
            /* saving over an existing file replaces it */
            ASSERT_EQ(macko_mat_save(C, path.c_str()), MACKO_STATUS_SUCCESS);
            EXPECT_EQ(read_file(path), buf);

            macko_mat_destroy(A);
            macko_mat_destroy(B);
            macko_mat_destroy(C);
        }
    }
}

TEST(Serialize, GoldenBytesHalf)
{
    macko_mat_t A = make_dense(golden_dense(), MACKO_R_16F);
    ASSERT_NE(A, nullptr);
    Bytes b = mt::serialized(A);
    ASSERT_EQ(b.size(), kGoldenHalf.size());
    for (size_t i = 0; i < b.size(); i++)
        EXPECT_EQ(b[i], kGoldenHalf[i]) << "byte " << i;
    macko_mat_t B = nullptr;
    ASSERT_EQ(macko_mat_deserialize(&B, kGoldenHalf.data(), (int64_t)kGoldenHalf.size()), MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    mt::expect_same_host(A, B);
    macko_mat_destroy(A);
    macko_mat_destroy(B);
}

TEST(Serialize, GoldenBytesFloatFromCsr)
{
    const int32_t row_ptr[] = {0, 2, 2, 3};
    const int32_t col_ind[] = {0, 18, 19};
    const float vals[] = {1.0f, 2.0f, -3.0f};
    macko_mat_t A = nullptr;
    ASSERT_EQ(macko_mat_create_csr_host(&A, 3, 20, 3, row_ptr, col_ind, vals, MACKO_INDEX_32I,
                                        MACKO_INDEX_BASE_ZERO, MACKO_R_32F),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    Bytes b = mt::serialized(A);
    ASSERT_EQ(b.size(), kGoldenFloat.size());
    for (size_t i = 0; i < b.size(); i++)
        EXPECT_EQ(b[i], kGoldenFloat[i]) << "byte " << i;
    TempDir dir;
    std::string path = dir.file("golden.macko");
    ASSERT_EQ(macko_mat_save(A, path.c_str()), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(read_file(path), kGoldenFloat);
    macko_mat_destroy(A);
}

/* bf16 and fp64 (added in format version 1 without a header change: value_type 14 / 1, value_bits 16 / 64): the
 * golden matrix's file is the fp16 one with the type bytes, the values (their own bits, values_bytes for 8-byte
 * values) and the checksums changed; deltas and row_ptr are the same bytes. */
TEST(Serialize, GoldenBytesBf16AndDouble)
{
    const double want_vals[] = {1.0, 0.0, 2.0, 0.0, -3.0, 0.0, 0.0, 0.0}; /* the golden encoding's 8 entries */
    for (macko_datatype_t type : {MACKO_R_16BF, MACKO_R_64F}) {
        SCOPED_TRACE(::testing::Message() << "type " << type);
        const size_t es = mt::value_bytes(type), vb = 8 * es;
        macko_mat_t A = make_dense(golden_dense(), type);
        ASSERT_NE(A, nullptr);
        Bytes b = mt::serialized(A);
        ASSERT_EQ(b.size(), kGoldenHalf.size() - 16 + vb);
        Bytes want(kGoldenHalf.begin(), kGoldenHalf.begin() + kHdr);
        want[16] = (uint8_t)type;
        want[17] = (uint8_t)(8 * es);
        set_i64(want, 64, (int64_t)vb);
        for (double v : want_vals) {
            uint8_t e[8];
            if (type == MACKO_R_64F) {
                std::memcpy(e, &v, 8);
            } else {
                const uint16_t h = mt::float_to_bf16((float)v);
                std::memcpy(e, &h, 2);
            }
            want.insert(want.end(), e, e + es);
        }
        want.insert(want.end(), kGoldenHalf.begin() + kHdr + 16, kGoldenHalf.end()); /* deltas, row_ptr */
        set_u32(want, 88, crc(want.data() + kHdr, want.size() - kHdr));
        set_u32(want, 92, crc(want.data(), 92));
        EXPECT_EQ(b, want);
        /* bf16's 1, 2 and -3 are the upper halves of the floats' bits */
        if (type == MACKO_R_16BF) {
            EXPECT_EQ(b[kHdr + 1], 0x3f);
            EXPECT_EQ(b[kHdr + 5], 0x40);
            EXPECT_EQ(b[kHdr + 9], 0xc0);
        }
        macko_mat_t B = nullptr;
        ASSERT_EQ(macko_mat_deserialize(&B, want.data(), (int64_t)want.size()), MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        mt::expect_same_host(A, B);
        /* the width must match the type: a bf16 file claiming 32-bit values is refused */
        Bytes bad = want;
        bad[17] = 32;
        set_u32(bad, 92, crc(bad.data(), 92));
        macko_mat_t C = kPoison;
        EXPECT_EQ(macko_mat_deserialize(&C, bad.data(), (int64_t)bad.size()), MACKO_STATUS_FORMAT_ERROR);
        EXPECT_NE(std::string(macko_get_last_error_message()).find("value_bits"), std::string::npos);
        EXPECT_EQ(C, kPoison);
        macko_mat_destroy(A);
        macko_mat_destroy(B);
    }
}

/* Files written by macko 0.1.0 before bf16/fp64 existed (these byte images were produced by that version) still
 * load, to the same matrices. */
TEST(Serialize, FilesOfTheFirstReleaseLoad)
{
    for (const Bytes *img : {&kGoldenHalf, &kGoldenFloat}) {
        macko_mat_t A = nullptr;
        ASSERT_EQ(macko_mat_deserialize(&A, img->data(), (int64_t)img->size()), MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        int64_t rows = 0, cols = 0, nnz = 0;
        macko_datatype_t t;
        ASSERT_EQ(macko_mat_get_info(A, &rows, &cols, &nnz, &t), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(rows, 3);
        EXPECT_EQ(cols, 20);
        EXPECT_EQ(nnz, 3);
        EXPECT_EQ(t, img == &kGoldenHalf ? MACKO_R_16F : MACKO_R_32F);
        Bytes out(60 * mt::value_bytes(t));
        ASSERT_EQ(macko_mat_export_dense_host(A, out.data(), 20, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
        for (int i = 0; i < 60; i++) {
            const double want = i == 0 ? 1.0 : i == 18 ? 2.0 : i == 59 ? -3.0 : 0.0;
            EXPECT_EQ(mt::value_at(out.data(), t, i), want) << "element " << i;
        }
        EXPECT_EQ(mt::serialized(A), *img);
        macko_mat_destroy(A);
    }
}

/* ---------------------------------------------------------------- corrupted input */

TEST(Serialize, EveryHeaderBitFlipIsFormatError)
{
    TempDir dir;
    expect_bit_flips_are_format_errors(kGoldenHalf, 0, kHdr, dir.file("flip.macko"));
}

TEST(Serialize, EveryPayloadBitFlipIsFormatError)
{
    TempDir dir;
    expect_bit_flips_are_format_errors(kGoldenHalf, kHdr, kGoldenHalf.size(), dir.file("flip.macko"), "payload_crc32");
}

TEST(Serialize, WrongPayloadChecksumIsFormatError)
{
    Bytes b = kGoldenFloat;
    set_u32(b, 88, get_u32(b, 88) + 1);
    fix_header_crc(b);
    std::string msg = expect_format_error(b);
    EXPECT_NE(msg.find("payload_crc32"), std::string::npos) << msg;
}

TEST(Serialize, TruncationAtEveryOffsetIsFormatError)
{
    TempDir dir;
    std::string path = dir.file("trunc.macko");
    for (size_t n = 0; n < kGoldenHalf.size(); n++) {
        SCOPED_TRACE(::testing::Message() << "length " << n);
        Bytes b(kGoldenHalf.begin(), kGoldenHalf.begin() + (std::ptrdiff_t)n);
        std::string msg = expect_format_error(b, path);
        EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
    }
    /* a larger matrix, many offsets (memory only) */
    mt::Dense d = mt::random_dense(40, 70, 0.4, 7, true);
    macko_mat_t A = make_dense(d, MACKO_R_16F);
    Bytes full = mt::serialized(A);
    macko_mat_destroy(A);
    for (size_t n = 0; n < full.size(); n += (n < 200 ? 1 : 13)) {
        SCOPED_TRACE(::testing::Message() << "length " << n << " of " << full.size());
        expect_format_error(Bytes(full.begin(), full.begin() + (std::ptrdiff_t)n));
    }
}

TEST(Serialize, TrailingBytesAreFormatError)
{
    TempDir dir;
    for (size_t extra : {1, 7, 4096}) {
        SCOPED_TRACE(extra);
        Bytes b = kGoldenHalf;
        b.insert(b.end(), extra, 0);
        std::string msg = expect_format_error(b, dir.file("trail.macko"));
        EXPECT_NE(msg.find("unexpected bytes after the end"), std::string::npos) << msg;
    }
    /* two matrices back to back are not one matrix */
    Bytes two = kGoldenHalf;
    two.insert(two.end(), kGoldenHalf.begin(), kGoldenHalf.end());
    expect_format_error(two);
}

/* Headers whose checksum is valid but whose fields are not: each must be caught by its own check, before anything
 * is allocated (these sizes would need terabytes; an allocation attempt would show as ALLOC_FAILED, not FORMAT_ERROR). */
TEST(Serialize, HostileHeadersWithValidChecksumAreFormatErrors)
{
    const int64_t big = INT64_C(1) << 62;
    /* A header that announces e fp16 entries, with values, deltas and 64-bit row offsets sized to match:
     * self-consistent, but far more data than the file holds. */
    const auto announce_entries = [](Bytes &b, int64_t e) {
        set_i64(b, 48, e);
        set_i64(b, 56, e);
        b[19] = 8;
        set_i64(b, 64, 2 * e);
        set_i64(b, 72, e / 2);
        set_i64(b, 80, 4 * 8);
    };
    /* the message must name the field */
    const std::vector<Edit> cases = {
        {"version 4", [](Bytes &b) { set_u32(b, 8, 4); }, "'version'"},
        /* a version-1 header read as version 2: its value_type byte (2, fp16) is the N:M kind, not QUANT */
        {"version 2", [](Bytes &b) { set_u32(b, 8, 2); }, "'kind'"},
        /* ... and read as version 3: kind 2 fits, but its value_bits byte (16) is no value type */
        {"version 3", [](Bytes &b) { set_u32(b, 8, 3); }, "'value_type'"},
        {"version 0", [](Bytes &b) { set_u32(b, 8, 0); }, "'version'"},
        {"header size 97", [](Bytes &b) { set_u32(b, 12, 97); }, "'header_size'"},
        {"header size 2^32-1", [](Bytes &b) { set_u32(b, 12, 0xFFFFFFFFu); }, "'header_size'"},
        {"type 3", [](Bytes &b) { b[16] = 3; }, "'value_type'"},
        {"fp64 type with 16-bit values", [](Bytes &b) { b[16] = 1; }, "'value_bits'"},
        {"type 255", [](Bytes &b) { b[16] = 255; }, "'value_type'"},
        {"fp16 with 32-bit values", [](Bytes &b) { b[17] = 32; }, "'value_bits'"},
        {"fp32 type with 16-bit values",
         [](Bytes &b) {
             b[16] = 0;
             b[17] = 16;
         },
         "'value_bits'"},
        {"fp32 type, sizes of fp16", [](Bytes &b) {
             b[16] = 0;
             b[17] = 32;
         }, "'values_bytes'"},
        {"delta bits 8", [](Bytes &b) { b[18] = 8; }, "'delta_bits'"},
        {"delta bits 2", [](Bytes &b) { b[18] = 2; }, "'delta_bits'"},
        {"flags 1", [](Bytes &b) { set_u32(b, 20, 1); }, "'flags'"},
        {"rows 2^62", [&](Bytes &b) { set_i64(b, 24, big); }, "'rows'"},
        {"rows -1", [](Bytes &b) { set_i64(b, 24, -1); }, "'rows'"},
        {"rows INT64_MAX", [](Bytes &b) { set_i64(b, 24, INT64_MAX); }, "'rows'"},
        {"rows 4", [](Bytes &b) { set_i64(b, 24, 4); }, "'row_ptr_total_bytes'"},
        {"cols -1", [](Bytes &b) { set_i64(b, 32, -1); }, "'cols'"},
        {"nnz -1", [](Bytes &b) { set_i64(b, 40, -1); }, "'nnz'"},
        {"nnz > entries", [](Bytes &b) { set_i64(b, 40, 6); }, "'nnz'"},
        {"entries -1", [](Bytes &b) { set_i64(b, 48, -1); }, "'entries'"},
        {"entries 2^62", [&](Bytes &b) { set_i64(b, 48, big); }, "'entries'"},
        {"entries 9", [](Bytes &b) { set_i64(b, 48, 9); }, "'entries_padded'"},
        {"entries_padded 5", [](Bytes &b) { set_i64(b, 56, 5); }, "'entries_padded'"},
        {"entries_padded 16", [](Bytes &b) { set_i64(b, 56, 16); }, "'entries_padded'"},
        {"entries_padded 0", [](Bytes &b) { set_i64(b, 56, 0); }, "'entries_padded'"},
        {"8-byte row_ptr, few entries", [](Bytes &b) { b[19] = 8; }, "'row_ptr_bytes'"},
        {"0-byte row_ptr", [](Bytes &b) { b[19] = 0; }, "'row_ptr_bytes'"},
        {"values_bytes + 1", [](Bytes &b) { set_i64(b, 64, 17); }, "'values_bytes'"},
        {"values_bytes -16", [](Bytes &b) { set_i64(b, 64, -16); }, "'values_bytes'"},
        {"values_bytes 2^62", [&](Bytes &b) { set_i64(b, 64, big); }, "'values_bytes'"},
        {"deltas_bytes 8", [](Bytes &b) { set_i64(b, 72, 8); }, "'deltas_bytes'"},
        {"deltas_bytes -4", [](Bytes &b) { set_i64(b, 72, -4); }, "'deltas_bytes'"},
        {"row_ptr total 12", [](Bytes &b) { set_i64(b, 80, 12); }, "'row_ptr_total_bytes'"},
        {"row_ptr total 2^62", [&](Bytes &b) { set_i64(b, 80, big); }, "'row_ptr_total_bytes'"},
        /* self-consistent headers that announce far more data than there is */
        {"2^31 entries, consistent sizes", [&](Bytes &b) { announce_entries(b, INT64_C(1) << 31); }, "truncated"},
        {"2^56 entries, consistent sizes", [&](Bytes &b) { announce_entries(b, INT64_C(1) << 56); }, "truncated"},
        {"2^56 rows, consistent sizes",
         [](Bytes &b) {
             int64_t r = INT64_C(1) << 56;
             set_i64(b, 24, r);
             set_i64(b, 80, (r + 1) * 4);
         },
         "truncated"},
        {"1000 rows, consistent sizes",
         [](Bytes &b) {
             set_i64(b, 24, 1000);
             set_i64(b, 80, 1001 * 4);
         },
         "truncated"},
    };
    expect_edits_are_format_errors(cases, fix_header_crc, "hostile.macko");
}

/* Payloads with a recomputed (valid) checksum that do not decode to a valid matrix. */
TEST(Serialize, InvalidPayloadWithValidChecksumIsFormatError)
{
    /* golden fp16 payload: values at 96..111 (8 x u16), deltas at 112..115, row_ptr at 116..131 (4 x i32) */
    const std::vector<Edit> cases = {
        {"column beyond cols (last delta 3 -> 4)", [](Bytes &b) { b[114] = 0x04; }, "payload"},
        {"column beyond cols (first delta 0 -> 15, 15 -> 15)", [](Bytes &b) { b[112] = 0xFF; }, "payload"},
        {"row_ptr decreasing", [](Bytes &b) { set_u32(b, 124, 2); }, "payload"},
        {"row_ptr[0] != 0", [](Bytes &b) { set_u32(b, 116, 1); }, "payload"},
        {"row_ptr[rows] != entries", [](Bytes &b) { set_u32(b, 128, 4); }, "payload"},
        {"row_ptr negative", [](Bytes &b) { set_u32(b, 120, 0xFFFFFFFFu); }, "payload"},
        {"row_ptr beyond entries", [](Bytes &b) { set_u32(b, 120, 7); }, "payload"},
        {"nonzero tail value", [](Bytes &b) { b[111] = 0x3c; }, "payload"},
        {"nonzero tail delta", [](Bytes &b) { b[115] = 0x10; }, "payload"},
        {"padding entry became nonzero (nnz 4 != 3)", [](Bytes &b) { b[99] = 0x3c; }, "'nnz'"},
        {"value became +0 (nnz 2 != 3)", [](Bytes &b) { b[97] = 0x00; }, "'nnz'"},
        {"value became -0 (nnz 2 != 3)", [](Bytes &b) { b[97] = 0x80; }, "'nnz'"},
        {"header nnz 2, valid payload with 3", [](Bytes &b) { set_i64(b, 40, 2); }, "'nnz'"},
    };
    expect_edits_are_format_errors(cases, fix_payload_crc, "payload.macko");
}

/* Random edits with recomputed checksums: never a crash; whatever is accepted is a valid matrix that serializes back
 * to exactly the accepted bytes. */
TEST(Serialize, RandomEditsWithValidChecksumsNeverCrash)
{
    mt::Dense d = mt::random_dense(9, 41, 0.3, 11, true);
    mt::add_structure(d, 12);
    macko_mat_t A = make_dense(d, MACKO_R_16F);
    const Bytes base = mt::serialized(A);
    macko_mat_destroy(A);
    std::mt19937_64 g(2024);
    int accepted = 0, rejected = 0;
    for (int it = 0; it < 3000; it++) {
        Bytes b = base;
        int edits = 1 + (int)(g() % 3);
        for (int e = 0; e < edits; e++) {
            /* mostly payload, sometimes the header's fields */
            size_t pos = (g() % 4 == 0) ? 16 + g() % (88 - 16) : kHdr + g() % (b.size() - kHdr);
            b[pos] = (g() % 2) ? (uint8_t)g() : (uint8_t)(b[pos] ^ (1u << (g() % 8)));
        }
        fix_payload_crc(b);
        macko_mat_t B = kPoison;
        macko_status_t st = macko_mat_deserialize(&B, b.data(), (int64_t)b.size());
        if (st == MACKO_STATUS_SUCCESS) {
            accepted++;
            EXPECT_EQ(mt::serialized(B), b) << "iteration " << it;
            macko_mat_destroy(B);
        } else {
            rejected++;
            ASSERT_EQ(st, MACKO_STATUS_FORMAT_ERROR) << "iteration " << it << ": " << macko_get_last_error_message();
            ASSERT_EQ(B, kPoison);
        }
    }
    EXPECT_GT(rejected, 0);
    EXPECT_GT(accepted, 0); /* value edits that keep zeros zero are valid matrices */
}

/* ---------------------------------------------------------------- bad arguments */

void expect_error(macko_status_t st, macko_status_t want, int pos)
{
    EXPECT_EQ(st, want) << macko_get_status_name(st) << " " << macko_get_last_error_message();
    EXPECT_EQ(macko_get_last_error_position(), pos) << macko_get_last_error_message();
}

TEST(Serialize, BadArgumentsSerializedSize)
{
    macko_mat_t A = make_dense(golden_dense(), MACKO_R_16F);
    int64_t n = -7;
    expect_error(macko_mat_serialized_size(nullptr, &n), MACKO_STATUS_INVALID_VALUE, 1);
    expect_error(macko_mat_serialized_size(A, nullptr), MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_EQ(n, -7);
    macko_mat_destroy(A);
}

TEST(Serialize, BadArgumentsSerialize)
{
    macko_mat_t A = make_dense(golden_dense(), MACKO_R_16F);
    const int64_t need = (int64_t)kGoldenHalf.size();
    Bytes buf((size_t)need + 8, 0xCD);
    const Bytes poisoned = buf;
    expect_error(macko_mat_serialize(nullptr, buf.data(), need), MACKO_STATUS_INVALID_VALUE, 1);
    expect_error(macko_mat_serialize(A, nullptr, need), MACKO_STATUS_INVALID_VALUE, 2);
    expect_error(macko_mat_serialize(A, buf.data(), -1), MACKO_STATUS_INVALID_VALUE, 3);
    expect_error(macko_mat_serialize(A, buf.data(), 0), MACKO_STATUS_INVALID_VALUE, 3);
    expect_error(macko_mat_serialize(A, buf.data(), need - 1), MACKO_STATUS_INVALID_VALUE, 3);
    expect_error(macko_mat_serialize(A, buf.data(), 96), MACKO_STATUS_INVALID_VALUE, 3);
    expect_error(macko_mat_serialize(A, nullptr, 0), MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_EQ(buf, poisoned) << "a failed serialize wrote into the buffer";
    ASSERT_EQ(macko_mat_serialize(A, buf.data(), need), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(Bytes(buf.begin(), buf.begin() + need), kGoldenHalf);

    /* a matrix without a host copy (as after macko_mat_release_host) */
    struct macko_mat_s *dev_only = macko_mat_alloc();
    ASSERT_NE(dev_only, nullptr);
    buf = poisoned;
    expect_error(macko_mat_serialize(dev_only, buf.data(), (int64_t)buf.size()), MACKO_STATUS_NOT_INITIALIZED, 1);
    EXPECT_EQ(buf, poisoned);
    macko_mat_destroy(dev_only);
    macko_mat_destroy(A);
}

TEST(Serialize, BadArgumentsDeserialize)
{
    macko_mat_t B = kPoison;
    const Bytes &g = kGoldenHalf;
    expect_error(macko_mat_deserialize(nullptr, g.data(), (int64_t)g.size()), MACKO_STATUS_INVALID_VALUE, 1);
    expect_error(macko_mat_deserialize(&B, nullptr, (int64_t)g.size()), MACKO_STATUS_INVALID_VALUE, 2);
    expect_error(macko_mat_deserialize(&B, g.data(), -1), MACKO_STATUS_INVALID_VALUE, 3);
    expect_error(macko_mat_deserialize(&B, g.data(), INT64_MIN), MACKO_STATUS_INVALID_VALUE, 3);
    /* an empty buffer is data, just not a matrix */
    expect_error(macko_mat_deserialize(&B, nullptr, 0), MACKO_STATUS_FORMAT_ERROR, 2);
    expect_error(macko_mat_deserialize(&B, g.data(), 0), MACKO_STATUS_FORMAT_ERROR, 2);
    EXPECT_EQ(B, kPoison);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_deserialize: argument 2: buffer: truncated: 0 bytes, "
                                                 "shorter than the 96-byte header");
}

TEST(Serialize, BadArgumentsSave)
{
    TempDir dir;
    macko_mat_t A = make_dense(golden_dense(), MACKO_R_16F);
    std::string path = dir.file("a.macko");
    expect_error(macko_mat_save(nullptr, path.c_str()), MACKO_STATUS_INVALID_VALUE, 1);
    expect_error(macko_mat_save(A, nullptr), MACKO_STATUS_INVALID_VALUE, 2);
    EXPECT_FALSE(fs::exists(path));
    std::string missing_dir = dir.file("no_such_dir/a.macko");
    expect_error(macko_mat_save(A, missing_dir.c_str()), MACKO_STATUS_IO_ERROR, 2);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("no_such_dir"), std::string::npos);
    expect_error(macko_mat_save(A, dir.path.string().c_str()), MACKO_STATUS_IO_ERROR, 2); /* a directory */
    expect_error(macko_mat_save(A, ""), MACKO_STATUS_IO_ERROR, 2);
    struct macko_mat_s *dev_only = macko_mat_alloc();
    expect_error(macko_mat_save(dev_only, path.c_str()), MACKO_STATUS_NOT_INITIALIZED, 1);
    EXPECT_FALSE(fs::exists(path));
    macko_mat_destroy(dev_only);
#ifdef __linux__
    /* a full device: the write fails, the status says so (and the device node is not removed) */
    if (fs::exists("/dev/full")) {
        expect_error(macko_mat_save(A, "/dev/full"), MACKO_STATUS_IO_ERROR, 2);
        EXPECT_TRUE(fs::exists("/dev/full"));
    }
    /* a write that fails half way (file size limit): IO_ERROR and no partial file left behind */
    {
        struct rlimit old_lim;
        ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
        struct rlimit lim = old_lim;
        lim.rlim_cur = 100; /* the header fits, the payload does not */
        void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
        ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
        macko_status_t st = macko_mat_save(A, path.c_str());
        int pos = macko_get_last_error_position();
        setrlimit(RLIMIT_FSIZE, &old_lim);
        std::signal(SIGXFSZ, old_handler);
        EXPECT_EQ(st, MACKO_STATUS_IO_ERROR) << macko_get_last_error_message();
        EXPECT_EQ(pos, 2);
        EXPECT_FALSE(fs::exists(path)) << "a failed save left a partial file";
    }
#endif
    macko_mat_destroy(A);
}

TEST(Serialize, BadArgumentsLoad)
{
    TempDir dir;
    macko_mat_t B = kPoison;
    std::string path = dir.file("a.macko");
    write_file(path, kGoldenHalf);
    expect_error(macko_mat_load(nullptr, path.c_str()), MACKO_STATUS_INVALID_VALUE, 1);
    expect_error(macko_mat_load(&B, nullptr), MACKO_STATUS_INVALID_VALUE, 2);
    std::string missing = dir.file("missing.macko");
    expect_error(macko_mat_load(&B, missing.c_str()), MACKO_STATUS_IO_ERROR, 2);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("missing.macko"), std::string::npos);
    expect_error(macko_mat_load(&B, dir.path.string().c_str()), MACKO_STATUS_IO_ERROR, 2); /* a directory */
    expect_error(macko_mat_load(&B, ""), MACKO_STATUS_IO_ERROR, 2);
    std::string empty = dir.file("empty.macko");
    write_file(empty, {});
    expect_error(macko_mat_load(&B, empty.c_str()), MACKO_STATUS_FORMAT_ERROR, 2);
    EXPECT_EQ(B, kPoison);
    ASSERT_EQ(macko_mat_load(&B, path.c_str()), MACKO_STATUS_SUCCESS) << macko_get_last_error_message();
    EXPECT_EQ(macko_get_last_error_position(), 0);
    EXPECT_STREQ(macko_get_last_error_message(), "");
    EXPECT_EQ(mt::serialized(B), kGoldenHalf);
    macko_mat_destroy(B);
}

} // namespace
