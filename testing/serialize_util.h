/* Helpers of the serialization tests (test_serialize.cpp: format version 1; test_serialize_quant.cpp: version 2):
 * little-endian header fields, checksum repair, and the FORMAT_ERROR contract of deserialize and load. */
#pragma once

#include "common.h"

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace st {

using Bytes = std::vector<uint8_t>;

inline const macko_mat_t kPoison = reinterpret_cast<macko_mat_t>(static_cast<uintptr_t>(0xDEADBEEF));
constexpr size_t kHdr = 96;

inline uint32_t crc(const uint8_t *p, size_t n) { return (uint32_t)crc32(0, p, (uInt)n); }

inline void set_u32(Bytes &b, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + i] = (uint8_t)(v >> (8 * i));
}
inline void set_i64(Bytes &b, size_t off, int64_t v)
{
    for (int i = 0; i < 8; i++)
        b[off + i] = (uint8_t)((uint64_t)v >> (8 * i));
}
inline uint32_t get_u32(const Bytes &b, size_t off)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)b[off + i] << (8 * i);
    return v;
}
inline int64_t get_i64(const Bytes &b, size_t off)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)b[off + i] << (8 * i);
    return (int64_t)v;
}
/* Recompute the header checksum (bytes 0..91 -> 92) so that a hostile header passes that check. */
inline void fix_header_crc(Bytes &b) { set_u32(b, 92, crc(b.data(), 92)); }
/* Recompute the payload checksum (-> 88), then the header's. */
inline void fix_payload_crc(Bytes &b)
{
    set_u32(b, 88, crc(b.data() + kHdr, b.size() - kHdr));
    fix_header_crc(b);
}

/* The input must be rejected as FORMAT_ERROR at argument 2 through both deserialize and (if a path is given) load,
 * with the same message naming path instead of buffer, leaving the poisoned out-parameter alone. Returns the
 * deserialize message. */
inline std::string expect_format_error(const Bytes &b, const std::string &path = "")
{
    macko_mat_t A = kPoison;
    macko_status_t s = macko_mat_deserialize(&A, b.data(), (int64_t)b.size());
    std::string msg = macko_get_last_error_message();
    EXPECT_EQ(s, MACKO_STATUS_FORMAT_ERROR) << macko_get_status_name(s) << " " << msg;
    EXPECT_EQ(macko_get_last_error_position(), 2) << msg;
    const std::string head = "macko_mat_deserialize: argument 2: buffer: ";
    EXPECT_EQ(msg.rfind(head, 0), 0u) << msg;
    EXPECT_EQ(A, kPoison);
    if (A != kPoison)
        macko_mat_destroy(A);
    if (!path.empty()) {
        mt::write_file(path, b);
        A = kPoison;
        s = macko_mat_load(&A, path.c_str());
        EXPECT_EQ(s, MACKO_STATUS_FORMAT_ERROR) << macko_get_status_name(s) << " " << macko_get_last_error_message();
        EXPECT_EQ(macko_get_last_error_position(), 2);
        if (msg.rfind(head, 0) == 0) {
            EXPECT_EQ(macko_get_last_error_message(), "macko_mat_load: argument 2: path: " + msg.substr(head.size()));
        }
        EXPECT_EQ(A, kPoison);
        if (A != kPoison)
            macko_mat_destroy(A);
    }
    return msg;
}

/* One edit of a valid serialized matrix, and a substring the FORMAT_ERROR message must contain. */
struct Edit {
    const char *name;
    std::function<void(Bytes &)> edit;
    const char *expect;
};

/* Each edit of `base`, with its checksums made valid again by fix, must be a FORMAT_ERROR naming its expect (through
 * a file named `file` in a temporary directory too). */
inline void expect_edits_are_format_errors(const Bytes &base, const std::vector<Edit> &edits, void (*fix)(Bytes &),
                                           const char *file)
{
    mt::TempDir dir;
    const std::string path = dir.file(file);
    for (const Edit &c : edits) {
        SCOPED_TRACE(c.name);
        Bytes b = base;
        c.edit(b);
        fix(b);
        const std::string msg = expect_format_error(b, path);
        EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    }
}

/* Every single-bit flip of bytes [from, to) of golden is a FORMAT_ERROR, each with want in its message (when not
 * null); through a file at path too (when not empty) for the lowest and highest bit of each byte (keeps it fast). */
inline void expect_bit_flips_are_format_errors(const Bytes &golden, size_t from, size_t to, const std::string &path,
                                               const char *want = nullptr)
{
    for (size_t i = from; i < to; i++)
        for (int bit = 0; bit < 8; bit++) {
            SCOPED_TRACE(::testing::Message() << "byte " << i << " bit " << bit);
            Bytes b = golden;
            b[i] ^= (uint8_t)(1u << bit);
            const std::string msg = expect_format_error(b, !path.empty() && (bit == 0 || bit == 7) ? path : "");
            if (want != nullptr) {
                EXPECT_NE(msg.find(want), std::string::npos) << msg;
            }
        }
}

} // namespace st
