/* Fault injection, host routines (no GPU needed): every allocation and file call of one representative call of each
 * routine fails in turn (fault_sweep.h). Routines without any fault point are swept too: their run proves there is
 * none (0 points in the summary). */
#include "fault_util.h"
#include "tiles.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>

namespace {

using namespace ft;
namespace fs = std::filesystem;

constexpr int64_t kRows = 40, kCols = 70;

struct HostFixture : ::testing::Test {
    Source h = make_source(kRows, kCols, MACKO_R_16F, 11);
    Source s = make_source(kRows, kCols, MACKO_R_32F, 12);
    Arrays h_arrays = encoded_arrays(h);
    macko_mat_t out = nullptr;
};

/* The output is untouched after a failure; a success made the same encoding as the reference. */
Case create_case(const char *name, const char *routine, macko_mat_t &out, const Arrays &ref,
                 std::function<macko_status_t()> call)
{
    return matrix_case(name, routine, out, [&ref](macko_mat_t m) { EXPECT_TRUE(host_arrays(m) == ref); },
                       std::move(call));
}

TEST_F(HostFixture, CreateDenseHost)
{
    sweep(create_case("macko_mat_create_dense_host (fp16, row-major)", "macko_mat_create_dense_host", out, h_arrays,
                      [&] {
                          return macko_mat_create_dense_host(&out, kRows, kCols, MACKO_R_16F, h.row_major.data(), kCols,
                                                             MACKO_ORDER_ROW);
                      }));
    const Arrays s_arrays = encoded_arrays(s);
    const Bytes col_major = mt::to_bytes(s.m, MACKO_R_32F, MACKO_ORDER_COL, kRows + 3);
    sweep(create_case("macko_mat_create_dense_host (fp32, column-major)", "macko_mat_create_dense_host", out,
                      s_arrays, [&] {
                          return macko_mat_create_dense_host(&out, kRows, kCols, MACKO_R_32F, col_major.data(),
                                                             kRows + 3, MACKO_ORDER_COL);
                      }));
}

TEST_F(HostFixture, CreateCsrHost)
{
    const mt::Csr csr = mt::to_csr(h.m);
    const std::vector<int32_t> rp(csr.row_ptr.begin(), csr.row_ptr.end()), ci(csr.col_ind.begin(), csr.col_ind.end());
    const Bytes vals = mt::values_bytes(csr.val, MACKO_R_16F);
    const int64_t nnz = (int64_t)ci.size();
    sweep(create_case("macko_mat_create_csr_host (int32, base 0, fp16)", "macko_mat_create_csr_host", out, h_arrays,
                      [&] {
                          return macko_mat_create_csr_host(&out, kRows, kCols, nnz, rp.data(), ci.data(), vals.data(),
                                                           MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, MACKO_R_16F);
                      }));
}

TEST_F(HostFixture, CreateMackoHost)
{
    macko_mat_t ref = encode(h);
    ASSERT_NE(ref, nullptr);
    sweep(create_case("macko_mat_create_macko_host", "macko_mat_create_macko_host", out, h_arrays, [&] {
        return macko_mat_create_macko_host(&out, kRows, kCols, MACKO_R_16F, ref->entries, ref->host.values,
                                           ref->host.deltas, ref->host.row_ptr);
    }));
    macko_mat_destroy(ref);
}

TEST_F(HostFixture, DeserializeAndTheRoutinesWithoutFaultPoints)
{
    macko_mat_t A = encode(h);
    ASSERT_NE(A, nullptr);
    const Bytes ser = serialized(A);
    sweep(create_case("macko_mat_deserialize", "macko_mat_deserialize", out, h_arrays,
                      [&] { return macko_mat_deserialize(&out, ser.data(), (int64_t)ser.size()); }));

    /* The routines that only read the host arrays: their sweep is one run that meets no fault point. */
    Bytes buf(ser.size());
    std::vector<int64_t> rp(kRows + 1), ci(kRows * kCols);
    std::vector<uint16_t> vals(kRows * kCols), dense(kRows * kCols);
    const void *v = nullptr;
    Case c;
    c.routine = "-";
    c.name = "macko_mat_serialized_size";
    c.call = [&] {
        int64_t n = 0;
        return macko_mat_serialized_size(A, &n);
    };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_serialize";
    c.call = [&] { return macko_mat_serialize(A, buf.data(), (int64_t)buf.size()); };
    c.succeeded = [&] { EXPECT_EQ(buf, ser); };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_get_macko_host";
    c.call = [&] { return macko_mat_get_macko_host(A, &v, nullptr, nullptr, nullptr, nullptr, nullptr); };
    c.succeeded = [&] { EXPECT_EQ(v, A->host.values); };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_export_csr_host";
    c.call = [&] {
        return macko_mat_export_csr_host(A, rp.data(), ci.data(), vals.data(), MACKO_INDEX_64I, MACKO_INDEX_BASE_ZERO);
    };
    c.succeeded = [] {};
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_export_dense_host";
    c.call = [&] { return macko_mat_export_dense_host(A, dense.data(), kCols, MACKO_ORDER_ROW); };
    c.succeeded = [&] { EXPECT_EQ(std::memcmp(dense.data(), h.row_major.data(), h.row_major.size()), 0); };
    EXPECT_EQ(sweep(c).points, 0);
    macko_mat_destroy(A);

    /* Destroying a host matrix: no fault point, and the ledger (checked after every run) is back where it was. */
    macko_mat_t D = nullptr;
    c.name = "macko_mat_destroy (host matrix)";
    c.prepare = [&] { D = encode(s); };
    c.call = [&] { return macko_mat_destroy(D); };
    c.succeeded = [] {};
    EXPECT_EQ(sweep(c).points, 0);
}

/* ---------------------------------------------------------------- the tile layout (src/tiles.h) */

/* The internal builder and its reverse, as upload and download call them (their errors name those routines). */
TEST_F(HostFixture, TileLayout)
{
    macko_mat_t A = encode(h);
    ASSERT_NE(A, nullptr);
    macko_tiles ref{};
    ASSERT_EQ(macko_tiles_build_host("-", A, &ref), MACKO_STATUS_SUCCESS);
    const Bytes ref_offs = host_bytes(ref.offs, (size_t)(ref.bands * ref.tcols + 1) * 4);
    const Bytes ref_stream = host_bytes(ref.stream, (size_t)ref.words * 16);

    macko_tiles t{};
    uint32_t *const kPoisonOffs = poison<uint32_t *>();
    Case c;
    c.name = "macko_tiles_build_host (fp16, for upload)";
    c.routine = "macko_mat_upload";
    c.tolerable = kNothingTolerable;
    c.prepare = [&] {
        t = macko_tiles{};
        t.offs = kPoisonOffs;
    };
    c.call = [&] { return macko_tiles_build_host("macko_mat_upload", A, &t); };
    c.unchanged = [&] { EXPECT_EQ(t.offs, kPoisonOffs); };
    c.succeeded = [&] {
        ASSERT_NE(t.offs, kPoisonOffs);
        EXPECT_EQ(t.words, ref.words);
        EXPECT_EQ(host_bytes(t.offs, ref_offs.size()), ref_offs);
        EXPECT_EQ(host_bytes(t.stream, ref_stream.size()), ref_stream);
    };
    c.cleanup = [&] {
        if (t.offs != kPoisonOffs)
            macko_tiles_free(&t);
        t = macko_tiles{};
    };
    sweep(c);

    /* The reverse replaces the host arrays of a matrix that has them: a failure must leave the old ones in place. */
    macko_mat_t B = nullptr;
    MatState before;
    Case r;
    r.name = "macko_tiles_to_macko_host (fp16, for download)";
    r.routine = "macko_mat_download";
    r.tolerable = kNothingTolerable;
    r.prepare = [&] {
        B = encode(h);
        before = mat_state(B);
    };
    r.call = [&] { return macko_tiles_to_macko_host("macko_mat_download", &ref, B); };
    r.unchanged = [&] { expect_same_state(B, before); };
    r.succeeded = [&] {
        EXPECT_TRUE(host_arrays(B) == h_arrays);
        EXPECT_EQ(B->nnz, A->nnz);
    };
    r.cleanup = [&] {
        macko_mat_destroy(B);
        B = nullptr;
    };
    sweep(r);

    /* The layout choice is a field: no fault point. */
    macko_layout_t l = MACKO_LAYOUT_ROWS;
    Case z;
    z.routine = "-";
    z.name = "macko_mat_set_layout";
    z.call = [&] { return macko_mat_set_layout(A, MACKO_LAYOUT_TILES); };
    EXPECT_EQ(sweep(z).points, 0);
    z.name = "macko_mat_get_layout";
    z.call = [&] { return macko_mat_get_layout(A, &l); };
    z.succeeded = [&] { EXPECT_EQ(l, MACKO_LAYOUT_TILES); };
    EXPECT_EQ(sweep(z).points, 0);
    macko_tiles_free(&ref);
    macko_mat_destroy(A);
}

/* ---------------------------------------------------------------- the QUANT kind */

/* The three host arrays of a QUANT matrix, as bytes. */
struct QuantArrays {
    Bytes words, optr, oent;
    bool operator==(const QuantArrays &o) const { return words == o.words && optr == o.optr && oent == o.oent; }
};

QuantArrays quant_arrays(const macko_mat_s *m)
{
    return {host_bytes(m->q.host.words, (size_t)m->q.words_count * 8),
            host_bytes(m->q.host.optr, ((size_t)m->rows + 1) * 4),
            host_bytes(m->q.host.oent, (size_t)m->q.outliers * 4)};
}

/* Like create_case, for a QUANT matrix. */
Case quant_case(const std::string &name, const char *routine, macko_mat_t &out, const QuantArrays &ref,
                std::function<macko_status_t()> call)
{
    return matrix_case(name, routine, out,
                       [&ref](macko_mat_t m) {
                           EXPECT_EQ(m->kind, (int)MACKO_KIND_QUANT);
                           EXPECT_TRUE(quant_arrays(m) == ref);
                       },
                       std::move(call));
}

/* The QUANT encoding of src with `rule` (made with nothing armed). */
macko_mat_t quant_encode(const Source &src, macko_outlier_rule_t rule, double param)
{
    macko_mat_t A = nullptr;
    EXPECT_EQ(macko_mat_create_quant_dense_host(&A, src.m.rows, src.m.cols, src.type, src.row_major.data(),
                                                src.m.cols, MACKO_ORDER_ROW, 3, rule, param),
              MACKO_STATUS_SUCCESS)
        << macko_get_last_error_message();
    return A;
}

TEST_F(HostFixture, CreateQuantDenseHost)
{
    Source full; /* every value nonzero: THRESHOLD 0 marks most of them */
    full.m = mt::random_dense(kRows, kCols, 1.0, 13, true);
    full.type = MACKO_R_16F;
    full.row_major = mt::to_bytes(full.m, MACKO_R_16F, MACKO_ORDER_ROW, kCols);
    struct Variant {
        const char *name;
        const Source *src;
        macko_order_t order;
        macko_outlier_rule_t rule;
        double param;
    } variants[] = {
        {"fp16, row-major, NONE", &h, MACKO_ORDER_ROW, MACKO_OUTLIERS_NONE, 0},
        {"fp32, column-major, FRACTION 0.05", &s, MACKO_ORDER_COL, MACKO_OUTLIERS_FRACTION, 0.05},
        {"fp16, row-major, THRESHOLD 0 (the outlier buffer grows twice)", &full, MACKO_ORDER_ROW,
         MACKO_OUTLIERS_THRESHOLD, 0},
    };
    for (const Variant &v : variants) {
        macko_mat_t R = quant_encode(*v.src, v.rule, v.param);
        ASSERT_NE(R, nullptr);
        const QuantArrays ref = quant_arrays(R);
        if (v.rule == MACKO_OUTLIERS_THRESHOLD) {
            EXPECT_GT(R->q.outliers, 1024);
        }
        macko_mat_destroy(R);
        const int64_t ld = v.order == MACKO_ORDER_ROW ? kCols : kRows + 3;
        const Bytes in = mt::to_bytes(v.src->m, v.src->type, v.order, ld);
        sweep(quant_case(std::string("macko_mat_create_quant_dense_host (") + v.name + ")",
                         "macko_mat_create_quant_dense_host", out, ref, [&] {
                             return macko_mat_create_quant_dense_host(&out, kRows, kCols, v.src->type, in.data(), ld,
                                                                      v.order, 3, v.rule, v.param);
                         }));
    }
}

TEST_F(HostFixture, CreateQuantHostAndTheQuantRoutinesWithoutFaultPoints)
{
    macko_mat_t Q = quant_encode(h, MACKO_OUTLIERS_FRACTION, 0.05);
    ASSERT_NE(Q, nullptr);
    const QuantArrays ref = quant_arrays(Q);
    sweep(quant_case("macko_mat_create_quant_host", "macko_mat_create_quant_host", out, ref, [&] {
        return macko_mat_create_quant_host(&out, kRows, kCols, 3, Q->q.host.words, Q->q.outliers, Q->q.host.optr,
                                           Q->q.host.oent);
    }));

    std::vector<uint16_t> dense(kRows * kCols), want(kRows * kCols);
    ASSERT_EQ(macko_mat_export_dense_host(Q, want.data(), kCols, MACKO_ORDER_ROW), MACKO_STATUS_SUCCESS);
    const uint64_t *w = nullptr;
    Case c;
    c.routine = "-";
    c.name = "macko_mat_get_quant_host";
    c.call = [&] { return macko_mat_get_quant_host(Q, nullptr, &w, nullptr, nullptr, nullptr, nullptr); };
    c.succeeded = [&] { EXPECT_EQ(w, Q->q.host.words); };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_export_dense_host (QUANT)";
    c.call = [&] { return macko_mat_export_dense_host(Q, dense.data(), kCols, MACKO_ORDER_ROW); };
    c.succeeded = [&] { EXPECT_EQ(dense, want); };
    EXPECT_EQ(sweep(c).points, 0);
    c.name = "macko_mat_get_storage, macko_mat_get_kind, macko_mat_get_info (QUANT)";
    c.call = [&] {
        int64_t b = 0;
        macko_kind_t k;
        macko_status_t st = macko_mat_get_storage(Q, &b, nullptr, nullptr, nullptr);
        if (st == MACKO_STATUS_SUCCESS)
            st = macko_mat_get_kind(Q, &k);
        return st == MACKO_STATUS_SUCCESS ? macko_mat_get_info(Q, nullptr, nullptr, nullptr, nullptr) : st;
    };
    c.succeeded = [] {};
    EXPECT_EQ(sweep(c).points, 0);

    /* Persistence of the QUANT kind (format version 2): deserialize allocates the three arrays and the matrix;
     * serialize and serialized_size meet no fault point. */
    const Bytes ser = serialized(Q);
    Bytes buf(ser.size());
    sweep(quant_case("macko_mat_deserialize (QUANT)", "macko_mat_deserialize", out, ref,
                     [&] { return macko_mat_deserialize(&out, ser.data(), (int64_t)ser.size()); }));
    c.name = "macko_mat_serialized_size, macko_mat_serialize (QUANT)";
    c.call = [&] {
        int64_t n = 0;
        macko_status_t st = macko_mat_serialized_size(Q, &n);
        return st == MACKO_STATUS_SUCCESS ? macko_mat_serialize(Q, buf.data(), n) : st;
    };
    c.succeeded = [&] { EXPECT_EQ(buf, ser); };
    EXPECT_EQ(sweep(c).points, 0);
    c.succeeded = [] {};
    macko_mat_destroy(Q);

    macko_mat_t D = nullptr;
    c.name = "macko_mat_destroy (QUANT host matrix)";
    c.prepare = [&] { D = quant_encode(s, MACKO_OUTLIERS_THRESHOLD, 0.01); };
    c.call = [&] { return macko_mat_destroy(D); };
    EXPECT_EQ(sweep(c).points, 0);
}

/* ---------------------------------------------------------------- save and load */

using mt::read_file;
using mt::write_file;

std::vector<std::string> listing(const fs::path &dir)
{
    std::vector<std::string> v;
    for (const auto &e : fs::directory_iterator(dir))
        v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
}

struct stat stat_of(const fs::path &p)
{
    struct stat sb;
    std::memset(&sb, 0, sizeof sb);
    EXPECT_EQ(::stat(p.c_str(), &sb), 0) << p;
    return sb;
}

struct SaveFixture : HostFixture {
    fs::path dir;
    void SetUp() override
    {
        std::random_device rd;
        dir = fs::temp_directory_path() / ("macko_fault_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
        fs::create_directories(dir);
    }
    void TearDown() override
    {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    void clear()
    {
        for (const auto &e : fs::directory_iterator(dir))
            fs::remove(e.path());
    }
};

/* What is at the path before the save. */
enum class Before { Nothing, RegularFile, SymlinkToFile };

/* A failed save leaves the directory exactly as it was (the old file byte for byte, no temporary file); a
 * successful one leaves the new bytes under the name, in a new file (renamed over the old one: proof that it was not
 * written in place), with the old file's permissions, the symbolic link still a link to it, and nothing else. */
Case save_case(SaveFixture &f, macko_mat_t A, Before before, const Bytes &old_bytes, const Bytes &new_bytes,
               std::shared_ptr<ino_t> old_inode)
{
    static const char *names[] = {"new file", "existing file", "symbolic link to an existing file"};
    const fs::path path = f.dir / (before == Before::SymlinkToFile ? "link.macko" : "m.macko");
    const fs::path target = f.dir / "m.macko";
    std::vector<std::string> expect_names;
    if (before == Before::SymlinkToFile)
        expect_names = {"link.macko", "m.macko"};
    else
        expect_names = {"m.macko"};
    Case c;
    c.name = std::string("macko_mat_save (") + names[(int)before] + ")";
    c.routine = "macko_mat_save";
    c.tolerable = {"fchmod"};
    c.prepare = [&f, before, old_bytes, target, path, old_inode] {
        f.clear();
        if (before == Before::Nothing)
            return;
        write_file(target, old_bytes);
        ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
        *old_inode = stat_of(target).st_ino;
        if (before == Before::SymlinkToFile)
            fs::create_symlink("m.macko", path);
    };
    c.call = [A, path] { return macko_mat_save(A, path.c_str()); };
    c.unchanged = [&f, before, old_bytes, target, path] {
        if (before == Before::Nothing) {
            EXPECT_TRUE(listing(f.dir).empty()) << "left behind: " << ::testing::PrintToString(listing(f.dir));
            return;
        }
        std::vector<std::string> want = {"m.macko"};
        if (before == Before::SymlinkToFile)
            want.insert(want.begin(), "link.macko");
        EXPECT_EQ(listing(f.dir), want);
        EXPECT_EQ(read_file(target), old_bytes) << "the old file changed";
        if (before == Before::SymlinkToFile) {
            EXPECT_TRUE(fs::is_symlink(path));
        }
    };
    c.succeeded = [&f, before, new_bytes, target, path, expect_names, old_inode] {
        EXPECT_EQ(listing(f.dir), expect_names);
        EXPECT_EQ(read_file(path), new_bytes);
        if (before == Before::Nothing)
            return;
        const struct stat sb = stat_of(target);
        EXPECT_NE(sb.st_ino, *old_inode) << "the file was written in place, not replaced";
        if (!fired("fchmod")) { /* best effort (src/serialize.c): a failed fchmod keeps the new file's default mode */
            EXPECT_EQ(sb.st_mode & 07777, 0640u) << "the old file's permissions were not kept";
        }
        if (before == Before::SymlinkToFile) {
            EXPECT_TRUE(fs::is_symlink(path)) << "the link was replaced";
            EXPECT_EQ(read_file(target), new_bytes);
        }
    };
    c.cleanup = [&f] { f.clear(); };
    return c;
}

TEST_F(SaveFixture, SaveUnderEveryFailureKeepsTheOldFile)
{
    macko_mat_t A = encode(h), B = encode(s);
    ASSERT_NE(A, nullptr);
    ASSERT_NE(B, nullptr);
    const Bytes new_bytes = serialized(A), old_bytes = serialized(B);
    auto inode = std::make_shared<ino_t>(0);
    for (Before b : {Before::Nothing, Before::RegularFile, Before::SymlinkToFile}) {
        const Tally t = sweep(save_case(*this, A, b, old_bytes, new_bytes, inode));
        EXPECT_GE(t.points, 8) << "save makes fewer file calls than expected: is the shim in the path?";
    }
    macko_mat_destroy(A);
    macko_mat_destroy(B);
}

/* c, a macko_mat_load of path (the only file in dir, holding ser): fclose of the stream read from may fail unreported
 * (everything was read), and after a failure the file and the folder are as they were. */
Case load_case(Case c, const fs::path &dir, const fs::path &path, const Bytes &ser)
{
    c.tolerable = {"fclose"};
    const auto unchanged = c.unchanged;
    c.unchanged = [dir, path, ser, unchanged] {
        unchanged();
        EXPECT_EQ(read_file(path), ser);
        EXPECT_EQ(listing(dir), std::vector<std::string>{path.filename().string()});
    };
    return c;
}

TEST_F(SaveFixture, Load)
{
    macko_mat_t A = encode(h);
    ASSERT_NE(A, nullptr);
    const Bytes ser = serialized(A);
    macko_mat_destroy(A);
    const fs::path path = dir / "m.macko";
    write_file(path, ser);
    sweep(load_case(create_case("macko_mat_load", "macko_mat_load", out, h_arrays,
                                [&] { return macko_mat_load(&out, path.c_str()); }),
                    dir, path, ser));
}

TEST_F(SaveFixture, LoadQuant)
{
    macko_mat_t Q = quant_encode(h, MACKO_OUTLIERS_FRACTION, 0.05);
    ASSERT_NE(Q, nullptr);
    const QuantArrays ref = quant_arrays(Q);
    const Bytes ser = serialized(Q);
    macko_mat_destroy(Q);
    const fs::path path = dir / "q.macko";
    write_file(path, ser);
    sweep(load_case(quant_case("macko_mat_load (QUANT)", "macko_mat_load", out, ref,
                               [&] { return macko_mat_load(&out, path.c_str()); }),
                    dir, path, ser));
}

TEST_F(SaveFixture, SaveQuantUnderEveryFailureKeepsTheOldFile)
{
    macko_mat_t Q = quant_encode(h, MACKO_OUTLIERS_FRACTION, 0.05), B = encode(s);
    ASSERT_NE(Q, nullptr);
    ASSERT_NE(B, nullptr);
    const Bytes new_bytes = serialized(Q), old_bytes = serialized(B);
    auto inode = std::make_shared<ino_t>(0);
    Case c = save_case(*this, Q, Before::RegularFile, old_bytes, new_bytes, inode);
    c.name = "macko_mat_save (QUANT, over a MACKO file)";
    const Tally t = sweep(c);
    EXPECT_GE(t.points, 8);
    macko_mat_destroy(Q);
    macko_mat_destroy(B);
}

} // namespace
