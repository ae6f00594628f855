/* The tile layout (src/tiles.h; lapack_style_docs/FORMAT.md, "Tile layout"): the host builder against a naive
 * reference written from the page, the reverse against macko_mat_create_csr_host, the storage formula, the
 * refusals; and macko_mat_set_layout / macko_mat_get_layout. CPU only. */
#include "bad_args.h"
#include "encode_ref.h"
#include "tiles.h"

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace mt;

namespace {

/* A tile layout as plain vectors. */
struct Tiles {
    int64_t bands = 0, tcols = 0;
    std::vector<uint32_t> offs;
    std::vector<uint8_t> stream;
};

/* Straight from the page: tile q = b * tcols + t, band-major; subtile s holds rows 8 * (s & 1) .. + 7 and columns
 * 8 * (s >> 1) .. + 7 of the tile; bit 8 i + j; the four little-endian bitmaps, the values by subtile and bit, zeros
 * up to a multiple of 16 bytes. Nothing outside the matrix, no +0/-0. */
Tiles ref_tiles(const RawMat &m)
{
    Tiles t;
    t.bands = (m.rows + 15) / 16;
    t.tcols = (m.cols + 15) / 16;
    for (int64_t b = 0; b < t.bands; b++)
        for (int64_t tc = 0; tc < t.tcols; tc++) {
            t.offs.push_back((uint32_t)(t.stream.size() / 16));
            uint64_t bm[4] = {0, 0, 0, 0};
            std::vector<uint16_t> vals;
            for (int s = 0; s < 4; s++)
                for (int bit = 0; bit < 64; bit++) {
                    const int64_t r = 16 * b + 8 * (s & 1) + bit / 8, c = 16 * tc + 8 * (s >> 1) + bit % 8;
                    if (r < m.rows && c < m.cols && !m.is_zero(m.at(r, c))) {
                        bm[s] |= UINT64_C(1) << bit;
                        vals.push_back((uint16_t)m.at(r, c));
                    }
                }
            /* header: the bitmaps' low words, their high words, the values before each low / high word */
            for (int half = 0; half < 2; half++)
                for (int s = 0; s < 4; s++)
                    for (int k = 0; k < 4; k++)
                        t.stream.push_back((uint8_t)(bm[s] >> (32 * half + 8 * k)));
            int before[8], run = 0;
            for (int s = 0; s < 4; s++) {
                before[s] = run;
                before[4 + s] = run + __builtin_popcount((uint32_t)bm[s]);
                run += __builtin_popcountll(bm[s]);
            }
            for (int i = 0; i < 8; i++)
                t.stream.push_back((uint8_t)before[i]);
            for (uint16_t v : vals) {
                t.stream.push_back((uint8_t)v);
                t.stream.push_back((uint8_t)(v >> 8));
            }
            while (t.stream.size() % 16 != 0)
                t.stream.push_back(0);
        }
    t.offs.push_back((uint32_t)(t.stream.size() / 16));
    return t;
}

Tiles as_vectors(const macko_tiles &h)
{
    Tiles t;
    t.bands = h.bands;
    t.tcols = h.tcols;
    t.offs.assign(h.offs, h.offs + h.bands * h.tcols + 1);
    const uint8_t *s = static_cast<const uint8_t *>(h.stream);
    t.stream.assign(s, s + h.words * 16);
    return t;
}

void expect_same_tiles(const Tiles &got, const Tiles &want, const std::string &what)
{
    EXPECT_EQ(got.bands, want.bands) << what;
    EXPECT_EQ(got.tcols, want.tcols) << what;
    EXPECT_TRUE(got.offs == want.offs) << what << ": offs differ";
    EXPECT_TRUE(got.stream == want.stream) << what << ": stream differs";
}

/* Owns a host tile layout. */
struct HostTiles {
    macko_tiles t{};
    ~HostTiles() { macko_tiles_free(&t); }
};

/* An empty MACKO matrix struct of these sizes, as a download would fill (host arrays absent). */
struct Shell {
    macko_mat_t A = macko_mat_alloc();
    Shell(int64_t rows, int64_t cols, macko_datatype_t type)
    {
        A->kind = MACKO_KIND_MACKO;
        A->rows = rows;
        A->cols = cols;
        A->type = type;
    }
    ~Shell() { macko_mat_destroy(A); }
};

/* The matrix the library makes from m's MACKO arrays with explicit zeros where `stored` says (padding entries come
 * from the gaps): a host matrix whose entries include +0 and -0 values. */
macko_mat_t import_with_zeros(const RawMat &m, const std::vector<uint8_t> &stored)
{
    const Arrays a = ref_encode(m, &stored);
    const std::vector<int32_t> rp = rp32(a.row_ptr); /* entries < 2^31 here */
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_macko_host(&A, m.rows, m.cols, m.type, a.entries, a.values.data(), a.deltas.data(),
                                          rp.data()),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    return A;
}

/* The canonical encoding of m's nonzeros: macko_mat_create_csr_host of them alone. */
macko_mat_t csr_of_nonzeros(const RawMat &m)
{
    std::vector<int32_t> rp{0}, ci;
    std::vector<uint16_t> v;
    for (int64_t r = 0; r < m.rows; r++) {
        for (int64_t c = 0; c < m.cols; c++)
            if (!m.is_zero(m.at(r, c))) {
                ci.push_back((int32_t)c);
                v.push_back((uint16_t)m.at(r, c));
            }
        rp.push_back((int32_t)ci.size());
    }
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_csr_host(&A, m.rows, m.cols, (int64_t)ci.size(), rp.data(), ci.data(), v.data(),
                                        MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, m.type),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    return A;
}

/* Builds the layout of m (stored: the explicit entries besides the nonzeros), checks it against the reference and
 * its size against the formula, and turns it back into MACKO rows: byte for byte the canonical encoding. */
void check_matrix(const RawMat &m, const std::vector<uint8_t> &stored, const std::string &what)
{
    Mat A;
    A.A = import_with_zeros(m, stored);
    ASSERT_NE(A.A, nullptr) << what;
    HostTiles h;
    ASSERT_EQ(macko_tiles_build_host("test", A.A, &h.t), MACKO_STATUS_SUCCESS) << what << ": "
                                                                                << macko_get_last_error_message();
    const Tiles want = ref_tiles(m);
    expect_same_tiles(as_vectors(h.t), want, what);
    EXPECT_EQ(h.t.words, (int64_t)want.offs.back()) << what;
    EXPECT_EQ(macko_tiles_bytes(h.t.bands, h.t.tcols, h.t.words),
              (int64_t)(want.stream.size() + 4 * want.offs.size()))
        << what;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h.t.offs) % 64, 0u) << what;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h.t.stream) % 64, 0u) << what;

    Shell back(m.rows, m.cols, m.type);
    ASSERT_EQ(macko_tiles_to_macko_host("test", &h.t, back.A), MACKO_STATUS_SUCCESS)
        << what << ": " << macko_get_last_error_message();
    Mat canon;
    canon.A = csr_of_nonzeros(m);
    ASSERT_NE(canon.A, nullptr) << what;
    expect_same_arrays(get_arrays(back.A), get_arrays(canon.A), what + " (tiles -> MACKO)");
    EXPECT_EQ(back.A->nnz, m.nnz()) << what;
    EXPECT_EQ(back.A->nnz, A.A->nnz) << what;
    EXPECT_EQ(back.A->has_host, 1) << what;
}

/* Every nonzero is stored; so are about a fifth of the zeros (as +0 or -0, as raw_random made them). */
std::vector<uint8_t> stored_with_zeros(const RawMat &m, uint64_t seed)
{
    std::mt19937_64 g(seed);
    std::vector<uint8_t> s(m.b.size());
    for (size_t i = 0; i < s.size(); i++)
        s[i] = !m.is_zero(m.b[i]) || g() % 5 == 0;
    return s;
}

} // namespace

/* The page's example: one 16 x 16 tile, pinned byte by byte. */
TEST(Tiles, OneTileByHand)
{
    RawMat m = raw_zero(16, 16, MACKO_R_16F);
    m.at(0, 0) = 0x3C00;  /* subtile 0, bit 0 */
    m.at(0, 1) = 0x4000;  /* subtile 0, bit 1 */
    m.at(9, 1) = 0x4200;  /* subtile 1, bit 9 */
    m.at(2, 8) = 0x4400;  /* subtile 2, bit 16 */
    m.at(15, 15) = 0xBC00; /* subtile 3, bit 63 */
    m.at(5, 5) = 0x8000;  /* -0 as a stored entry: not in the layout */
    std::vector<uint8_t> stored(256, 0);
    for (int64_t r = 0; r < 16; r++)
        for (int64_t c = 0; c < 16; c++)
            stored[(size_t)(r * 16 + c)] = !m.is_zero(m.at(r, c)) || (r == 5 && c == 5);
    Mat A;
    A.A = import_with_zeros(m, stored);
    ASSERT_NE(A.A, nullptr);
    HostTiles h;
    ASSERT_EQ(macko_tiles_build_host("test", A.A, &h.t), MACKO_STATUS_SUCCESS);
    const std::vector<uint8_t> want = {
        0x03, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, /* low words: bits 0, 1 / 9 / 16 / none */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,       /* high words: subtile 3's bit 63 */
        0, 2, 3, 4, 2, 3, 4, 4,                                  /* values before each subtile / high word */
        0x00, 0x3C, 0x00, 0x40, 0x00, 0x42, 0x00, 0x44, 0x00, 0xBC, /* values, subtile by subtile */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};               /* padding to 64 bytes */
    EXPECT_EQ(h.t.bands, 1);
    EXPECT_EQ(h.t.tcols, 1);
    EXPECT_EQ(h.t.words, 4);
    ASSERT_NE(h.t.offs, nullptr);
    EXPECT_EQ(h.t.offs[0], 0u);
    EXPECT_EQ(h.t.offs[1], 4u);
    EXPECT_TRUE(as_vectors(h.t).stream == want);
    EXPECT_EQ(macko_tiles_bytes(1, 1, 4), 64 + 8);
    check_matrix(m, stored, "one tile");
}

/* Odd shapes at every density, fp16 and bf16, with explicit +0/-0 entries, padding entries (gaps > 16), an empty
 * row, a row that holds a value only every 40 columns, NaN, Inf and subnormals. */
TEST(Tiles, RandomMatricesMatchTheReference)
{
    const int64_t shapes[][2] = {{1, 1}, {7, 33}, {17, 16}, {33, 4097}, {100, 100}};
    const double densities[] = {0.05, 0.3, 0.5, 1.0};
    const macko_datatype_t types[] = {MACKO_R_16F, MACKO_R_16BF};
    uint64_t seed = 1000;
    for (macko_datatype_t type : types)
        for (const auto &sh : shapes)
            for (double d : densities) {
                RawMat m = raw_random(sh[0], sh[1], type, d, ++seed);
                if (d < 1.0) {
                    raw_add_specials(m, ++seed, 9);
                    for (int64_t c = 0; c < m.cols && m.rows > 4; c++) {
                        m.at(1, c) = 0;
                        m.at(2, c) = c % 40 == 7 ? 0x3C01u : 0u;
                    }
                }
                const std::string what = std::string(type == MACKO_R_16F ? "fp16 " : "bf16 ") +
                                         std::to_string(sh[0]) + " x " + std::to_string(sh[1]) + " d = " +
                                         std::to_string(d);
                check_matrix(m, stored_with_zeros(m, ++seed), what);
                std::vector<uint8_t> nonzeros(m.b.size());
                for (size_t i = 0; i < m.b.size(); i++)
                    nonzeros[i] = !m.is_zero(m.b[i]);
                check_matrix(m, nonzeros, what + " (nonzeros only)");
            }
}

TEST(Tiles, EmptyMatrices)
{
    const int64_t shapes[][2] = {{0, 0}, {0, 37}, {37, 0}, {20, 30}};
    for (const auto &sh : shapes) {
        const RawMat m = raw_zero(sh[0], sh[1], MACKO_R_16F);
        const std::string what = std::to_string(sh[0]) + " x " + std::to_string(sh[1]);
        check_matrix(m, std::vector<uint8_t>(m.b.size(), 0), what);
        /* all stored, all zero: the layout is the same, headers only */
        check_matrix(m, std::vector<uint8_t>(m.b.size(), 1), what + ", every entry a stored zero");
    }
    Mat A;
    A.A = import_with_zeros(raw_zero(20, 30, MACKO_R_16F), std::vector<uint8_t>(600, 0));
    ASSERT_NE(A.A, nullptr);
    HostTiles h;
    ASSERT_EQ(macko_tiles_build_host("test", A.A, &h.t), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(h.t.words, 2 * 2 * 3); /* four tiles, a 40-byte header each (48 with the padding) */
    EXPECT_EQ(macko_tiles_bytes(h.t.bands, h.t.tcols, h.t.words), 4 * 48 + 5 * 4);
}

TEST(Tiles, AFullRowAndAFullColumn)
{
    for (macko_datatype_t type : {MACKO_R_16F, MACKO_R_16BF}) {
        RawMat m = raw_zero(45, 70, type);
        std::mt19937_64 g(5);
        for (int64_t c = 0; c < m.cols; c++)
            m.at(17, c) = raw_random_nonzero(g, type);
        for (int64_t r = 0; r < m.rows; r++)
            m.at(r, 33) = raw_random_nonzero(g, type);
        std::vector<uint8_t> nonzeros(m.b.size());
        for (size_t i = 0; i < m.b.size(); i++)
            nonzeros[i] = !m.is_zero(m.b[i]);
        check_matrix(m, nonzeros, "row 17 and column 33 full");
        m.at(0, 69) = raw_random_nonzero(g, type); /* a long gap before a row's only value: padding */
        check_matrix(m, stored_with_zeros(m, 6), "... with padding and stored zeros");
    }
}

/* FORMAT.md's figures: bytes / dense bytes ~ d + 0.0996 for uniform patterns (0.200, 0.400, 0.600 at 0.1, 0.3, 0.5),
 * and a full matrix at 564 / 512 per tile. */
TEST(Tiles, SizeMatchesFormat)
{
    const double d[] = {0.1, 0.3, 0.5, 1.0}, want[] = {0.1996, 0.3996, 0.5996, 564.0 / 512.0};
    for (int i = 0; i < 4; i++) {
        Mat A;
        ASSERT_EQ(encode_dense(raw_random(512, 1024, MACKO_R_16F, d[i], 40 + i), MACKO_ORDER_ROW, 1024, &A.A),
                  MACKO_STATUS_SUCCESS);
        HostTiles h;
        ASSERT_EQ(macko_tiles_build_host("test", A.A, &h.t), MACKO_STATUS_SUCCESS);
        const double eff = (double)macko_tiles_bytes(h.t.bands, h.t.tcols, h.t.words) / (512.0 * 1024 * 2);
        EXPECT_NEAR(eff, want[i], i < 3 ? 0.005 : 1e-4) << "d = " << d[i];
    }
}

TEST(Tiles, StorageFormula)
{
    EXPECT_EQ(macko_tiles_bytes(0, 0, 0), 4);
    EXPECT_EQ(macko_tiles_bytes(3, 5, 40), 40 * 16 + 16 * 4);
    EXPECT_EQ(macko_tiles_bytes(1792, 512, 1000000), 16000000 + (1792 * 512 + 1) * 4);
    EXPECT_EQ(macko_tiles_bytes(INT64_C(1) << 40, INT64_C(1) << 40, 1), 0); /* overflow */
    EXPECT_EQ(macko_tiles_bytes(1, 1, INT64_MAX / 8), 0);
    EXPECT_EQ(macko_tiles_bytes(-1, 1, 1), 0);
    EXPECT_EQ(macko_tiles_bytes(1, 1, -1), 0);
}

TEST(Tiles, Refusals)
{
    HostTiles h;
    /* More tiles than 2^32 - 1 words can head (three words each): refused before anything is allocated. */
    {
        const int32_t rp[2] = {0, 0};
        Mat wide;
        ASSERT_EQ(macko_mat_create_macko_host(&wide.A, 1, INT64_C(16) << 31, MACKO_R_16F, 0, nullptr, nullptr, rp),
                  MACKO_STATUS_SUCCESS);
        EXPECT_EQ(macko_tiles_build_host("macko_mat_upload", wide.A, &h.t), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(macko_get_last_error_position(), 0);
        EXPECT_NE(std::string(macko_get_last_error_message()).find("macko_mat_upload: "), std::string::npos);
        EXPECT_NE(std::string(macko_get_last_error_message()).find("2^32"), std::string::npos);
        EXPECT_EQ(h.t.offs, nullptr);
    }
    /* Types and kinds the layout does not hold; a matrix without host arrays. */
    {
        RawMat m = raw_random(20, 20, MACKO_R_32F, 0.5, 3);
        Mat s;
        ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, 20, &s.A), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(macko_tiles_build_host("test", s.A, &h.t), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(h.t.offs, nullptr);
        Shell back(20, 20, MACKO_R_32F);
        EXPECT_EQ(macko_tiles_to_macko_host("test", &h.t, back.A), MACKO_STATUS_NOT_SUPPORTED);
        Mat d;
        ASSERT_EQ(encode_dense(raw_random(20, 20, MACKO_R_64F, 0.5, 3), MACKO_ORDER_ROW, 20, &d.A),
                  MACKO_STATUS_SUCCESS);
        EXPECT_EQ(macko_tiles_build_host("test", d.A, &h.t), MACKO_STATUS_NOT_SUPPORTED);
        Mat a;
        ASSERT_EQ(encode_dense(raw_random(20, 20, MACKO_R_16F, 0.5, 3), MACKO_ORDER_ROW, 20, &a.A),
                  MACKO_STATUS_SUCCESS);
        macko_host_arrays_free(a.A);
        EXPECT_EQ(macko_tiles_build_host("test", a.A, &h.t), MACKO_STATUS_NOT_INITIALIZED);
        EXPECT_EQ(macko_get_last_error_position(), 0);
        EXPECT_EQ(h.t.offs, nullptr);
    }
    {
        std::vector<float> w(32 * 32);
        for (size_t i = 0; i < w.size(); i++)
            w[i] = (float)(i % 7) - 3.0f;
        Mat q;
        ASSERT_EQ(macko_mat_create_quant_dense_host(&q.A, 32, 32, MACKO_R_32F, w.data(), 32, MACKO_ORDER_ROW, 3,
                                                    MACKO_OUTLIERS_NONE, 0.0),
                  MACKO_STATUS_SUCCESS)
            << macko_get_last_error_message();
        EXPECT_EQ(macko_tiles_build_host("test", q.A, &h.t), MACKO_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(h.t.offs, nullptr);
    }
}

/* A layout read back that does not fit the matrix (only corrupted device memory could give one) is INTERNAL_ERROR,
 * and the matrix keeps its host arrays. */
TEST(Tiles, CorruptLayoutIsRefused)
{
    RawMat m = raw_random(20, 40, MACKO_R_16F, 0.4, 77);
    m.at(17, 33) = 0x3C00; /* the last tile (band 1, tile column 2) holds a value */
    Mat A;
    ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, 40, &A.A), MACKO_STATUS_SUCCESS);
    HostTiles h;
    ASSERT_EQ(macko_tiles_build_host("test", A.A, &h.t), MACKO_STATUS_SUCCESS);
    const Tiles good = as_vectors(h.t);
    const int64_t ntiles = h.t.bands * h.t.tcols;
    uint8_t *s = static_cast<uint8_t *>(h.t.stream);
    uint8_t *last = s + 16 * (int64_t)h.t.offs[ntiles - 1];
    /* a record whose values do not fill its last word */
    int64_t padded = -1;
    for (int64_t q = 0; q < ntiles && padded < 0; q++) {
        int n = 0;
        for (int k = 0; k < 32; k++)
            n += __builtin_popcount(s[16 * (int64_t)h.t.offs[q] + k]);
        if (n % 8 != 4) /* 40 + 2n bytes end inside a word */
            padded = q;
    }
    ASSERT_GE(padded, 0);
    uint8_t *pad_end = s + 16 * (int64_t)h.t.offs[padded + 1] - 1;
    const std::vector<std::pair<std::string, std::function<void()>>> faults = {
        {"a bit below the last row", [&] { last[16] ^= 0x01; }},      /* subtile 0's high word, local row 4: row 20 */
        {"a bit right of the last column", [&] { last[8] ^= 0x01; }}, /* subtile 2's low word: columns 40-47 */
        {"a zero under a set bit", [&] { last[40] = 0; last[41] = 0x80; }},
        {"a start count off by one", [&] { last[36] ^= 0x01; }},
        {"nonzero padding", [&] { *pad_end = 0x01; }},
        {"offs[0] not 0", [&] { h.t.offs[0] = 1; }},
        {"a record of the wrong length", [&] { h.t.offs[1] += 1; }},
        {"words not offs[last]", [&] { h.t.words += 1; }},
        {"bands not ceil(rows / 16)", [&] { h.t.bands += 1; }},
    };
    for (const auto &f : faults) {
        std::memcpy(h.t.offs, good.offs.data(), good.offs.size() * 4);
        std::memcpy(h.t.stream, good.stream.data(), good.stream.size());
        h.t.bands = good.bands;
        h.t.words = (int64_t)good.offs.back();
        f.second();
        Mat keep;
        keep.A = csr_of_nonzeros(m);
        ASSERT_NE(keep.A, nullptr);
        const void *v = keep.A->host.values;
        const int64_t entries = keep.A->entries;
        EXPECT_EQ(macko_tiles_to_macko_host("macko_mat_download", &h.t, keep.A), MACKO_STATUS_INTERNAL_ERROR)
            << f.first;
        EXPECT_EQ(macko_get_last_error_position(), 0) << f.first;
        EXPECT_EQ(std::string(macko_get_last_error_message()).rfind("macko_mat_download: ", 0), 0u) << f.first;
        EXPECT_EQ(keep.A->host.values, v) << f.first;
        EXPECT_EQ(keep.A->entries, entries) << f.first;
        EXPECT_EQ(keep.A->has_host, 1) << f.first;
    }
    /* restored, it reads back */
    std::memcpy(h.t.offs, good.offs.data(), good.offs.size() * 4);
    std::memcpy(h.t.stream, good.stream.data(), good.stream.size());
    h.t.bands = good.bands;
    h.t.words = (int64_t)good.offs.back();
    Shell back(20, 40, MACKO_R_16F);
    EXPECT_EQ(macko_tiles_to_macko_host("test", &h.t, back.A), MACKO_STATUS_SUCCESS);
}

/* ---------------------------------------------------------------- macko_mat_set_layout / macko_mat_get_layout */

TEST(Layout, DefaultIsRowsForEveryCreator)
{
    RawMat m = raw_random(10, 20, MACKO_R_16F, 0.5, 9);
    Mat dense, imported, deser;
    ASSERT_EQ(encode_dense(m, MACKO_ORDER_ROW, 20, &dense.A), MACKO_STATUS_SUCCESS);
    imported.A = csr_of_nonzeros(m);
    ASSERT_NE(imported.A, nullptr);
    const Bytes ser = serialized(dense.A);
    ASSERT_EQ(macko_mat_deserialize(&deser.A, ser.data(), (int64_t)ser.size()), MACKO_STATUS_SUCCESS);
    for (macko_mat_t A : {dense.A, imported.A, deser.A}) {
        macko_layout_t l = (macko_layout_t)7;
        ASSERT_EQ(macko_mat_get_layout(A, &l), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(l, MACKO_LAYOUT_ROWS);
    }
}

TEST(Layout, SetAndGet)
{
    for (macko_datatype_t type : {MACKO_R_16F, MACKO_R_16BF}) {
        Mat A;
        ASSERT_EQ(encode_dense(raw_random(10, 20, type, 0.5, 9), MACKO_ORDER_ROW, 20, &A.A), MACKO_STATUS_SUCCESS);
        macko_layout_t l = MACKO_LAYOUT_ROWS;
        ASSERT_EQ(macko_mat_set_layout(A.A, MACKO_LAYOUT_TILES), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_get_layout(A.A, &l), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(l, MACKO_LAYOUT_TILES);
        EXPECT_EQ(A.A->layout, (int)MACKO_LAYOUT_TILES);
        ASSERT_EQ(macko_mat_set_layout(A.A, MACKO_LAYOUT_ROWS), MACKO_STATUS_SUCCESS);
        ASSERT_EQ(macko_mat_get_layout(A.A, &l), MACKO_STATUS_SUCCESS);
        EXPECT_EQ(l, MACKO_LAYOUT_ROWS);
        /* without a host copy too: the choice is about the next upload */
        macko_host_arrays_free(A.A);
        EXPECT_EQ(macko_mat_set_layout(A.A, MACKO_LAYOUT_TILES), MACKO_STATUS_SUCCESS);
    }
}

TEST(Layout, BadArguments)
{
    Mat A, S, D, Q;
    ASSERT_EQ(encode_dense(raw_random(10, 20, MACKO_R_16F, 0.5, 9), MACKO_ORDER_ROW, 20, &A.A), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(encode_dense(raw_random(10, 20, MACKO_R_32F, 0.5, 9), MACKO_ORDER_ROW, 20, &S.A), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(encode_dense(raw_random(10, 20, MACKO_R_64F, 0.5, 9), MACKO_ORDER_ROW, 20, &D.A), MACKO_STATUS_SUCCESS);
    std::vector<float> w(32 * 32, 0.5f);
    ASSERT_EQ(macko_mat_create_quant_dense_host(&Q.A, 32, 32, MACKO_R_32F, w.data(), 32, MACKO_ORDER_ROW, 3,
                                                MACKO_OUTLIERS_NONE, 0.0),
              MACKO_STATUS_SUCCESS);

    auto layout_of = [](macko_mat_t M) {
        macko_layout_t l = (macko_layout_t)7;
        EXPECT_EQ(macko_mat_get_layout(M, &l), MACKO_STATUS_SUCCESS);
        return l;
    };
    ba::Rules set{"macko_mat_set_layout", [&](const std::string &what) {
                      EXPECT_EQ(layout_of(A.A), MACKO_LAYOUT_ROWS) << what;
                      EXPECT_EQ(layout_of(S.A), MACKO_LAYOUT_ROWS) << what;
                      EXPECT_EQ(layout_of(D.A), MACKO_LAYOUT_ROWS) << what;
                      EXPECT_EQ(layout_of(Q.A), MACKO_LAYOUT_ROWS) << what;
                  }};
    ba::walk(set, macko_mat_set_layout, ba::Arg<macko_mat_t>{"A", A.A, {{nullptr, ba::kInvalid, "NULL"}}},
             ba::Arg<int>{"layout",
                          (int)MACKO_LAYOUT_TILES,
                          {{2, ba::kInvalid, "2"}, {-1, ba::kInvalid, "-1"}, {0x7FFFFFFF, ba::kInvalid, "INT_MAX"}}});
    EXPECT_EQ(macko_mat_set_layout(A.A, (macko_layout_t)2), ba::kInvalid);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_set_layout: argument 2: layout is 2; it must be "
                                                 "MACKO_LAYOUT_ROWS (0) or MACKO_LAYOUT_TILES (1)");
    /* NULL A with a bad layout too: the first argument wins */
    ba::refused(set, macko_mat_set_layout(nullptr, (macko_layout_t)1), ba::kInvalid, 1, "A", "A NULL (and TILES)");
    /* TILES on what it cannot hold: NOT_SUPPORTED at the layout, nothing changed */
    for (auto &c : {std::make_pair(S.A, "fp32"), std::make_pair(D.A, "fp64"), std::make_pair(Q.A, "QUANT")}) {
        ba::refused(set, macko_mat_set_layout(c.first, MACKO_LAYOUT_TILES), MACKO_STATUS_NOT_SUPPORTED, 2, "layout",
                    c.second);
        /* ROWS is every matrix's layout */
        EXPECT_EQ(macko_mat_set_layout(c.first, MACKO_LAYOUT_ROWS), MACKO_STATUS_SUCCESS) << c.second;
    }
    EXPECT_EQ(macko_mat_set_layout(Q.A, MACKO_LAYOUT_TILES), MACKO_STATUS_NOT_SUPPORTED);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("MACKO_KIND_QUANT"), std::string::npos);

    /* get: A NULL, layout NULL; the output untouched */
    macko_layout_t l = (macko_layout_t)1;
    ba::Rules get{"macko_mat_get_layout", [&](const std::string &what) { EXPECT_EQ((int)l, 1) << what; }};
    ba::walk(get, macko_mat_get_layout, ba::Arg<macko_mat_t>{"A", A.A, {{nullptr, ba::kInvalid, "NULL"}}},
             ba::Arg<macko_layout_t *>{"layout", &l, {{nullptr, ba::kInvalid, "NULL"}}});
    EXPECT_STREQ(macko_get_last_error_message(), "macko_mat_get_layout: argument 2: layout is NULL");
}
