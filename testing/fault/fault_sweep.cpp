#include "fault_sweep.h"

#include "common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace ft {

const std::vector<std::string> kMustReport = {
    "malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "strdup",
    "cudaMalloc", "cudaMallocAsync", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged", "cudaMallocPitch",
    "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpy2DAsync", "cudaMemset", "cudaMemsetAsync",
    "cudaStreamSynchronize", "cudaDeviceSynchronize",
    "fwrite", "fread", "fflush", "fsync", "fdatasync", "rename"};

namespace {

/* A call with more fault points than this is taken for a loop that never ends. */
constexpr long kMaxPoints = 5000;

std::map<std::string, Tally> &totals()
{
    static std::map<std::string, Tally> t;
    return t;
}

std::string describe(const mf_ledger &l)
{
    std::ostringstream s;
    s << l.host << " host allocations (" << l.host_bytes << " bytes), " << l.device << " device allocations ("
      << l.device_bytes << " bytes), " << l.files << " streams, " << l.fds << " descriptors, "
      << l.foreign_releases << " foreign releases";
    return s.str();
}

bool same(const mf_ledger &a, const mf_ledger &b)
{
    return a.host == b.host && a.device == b.device && a.files == b.files && a.fds == b.fds &&
           a.host_bytes == b.host_bytes && a.device_bytes == b.device_bytes &&
           a.foreign_releases == b.foreign_releases;
}

/* The calls of the last armed run in order, the failed ones marked, for failure messages. */
std::string trace(long k, bool sticky)
{
    std::ostringstream s;
    long n = mf_points();
    s << (sticky ? "sticky from point " : "one-shot at point ") << k << "; failed:";
    for (int i = 0; i < mf_fired(); i++)
        s << " " << mf_fired_name(i);
    s << "; the run's calls:";
    for (long i = 0; i < n && i < 64; i++)
        s << " " << (i + 1 == k || (sticky && i + 1 > k) ? "*" : "") << mf_point_name(i);
    if (n > 64)
        s << " ...";
    return s.str();
}

void expected_for(const Expect &e, mf_category c, macko_status_t *st, int *pos)
{
    switch (c) {
    case MF_HOST_ALLOC: *st = e.host_alloc; *pos = e.host_alloc_pos; return;
    case MF_DEVICE_ALLOC: *st = e.device_alloc; *pos = e.device_alloc_pos; return;
    case MF_CUDA: *st = e.cuda; *pos = e.cuda_pos; return;
    default: *st = e.file; *pos = e.file_pos; return;
    }
}

} // namespace

/* MACKO_FAULT_VERBOSE=1: every run with an injected failure is printed with its outcome. */
bool verbose()
{
    static const bool v = std::getenv("MACKO_FAULT_VERBOSE") != nullptr && std::getenv("MACKO_FAULT_VERBOSE")[0] == '1';
    return v;
}

bool fired(const char *call_name)
{
    for (int i = 0; i < mf_fired(); i++)
        if (std::strcmp(mf_fired_name(i), call_name) == 0)
            return true;
    return false;
}

Tally sweep(const Case &c)
{
    Tally t;
    mf_clear_pending_cuda_error();
    for (int sticky = 0; sticky < 2; sticky++) {
        for (long k = 1;; k++) {
            if (k > kMaxPoints) {
                ADD_FAILURE() << c.name << ": more than " << kMaxPoints << " fault points";
                break;
            }
            const mf_ledger base = mf_ledger_now();
            c.prepare();
            const mf_ledger before = mf_ledger_now();
            /* After every run: the case's cleanup leaves the ledger as before prepare(), and no CUDA error waits. */
            const auto cleanup_and_check = [&] {
                c.cleanup();
                EXPECT_TRUE(same(mf_ledger_now(), base)) << "after the run: " << describe(mf_ledger_now())
                                                         << "; before it: " << describe(base);
                EXPECT_EQ(mf_pending_cuda_error(), 0) << "a CUDA error is left for the next call";
                mf_clear_pending_cuda_error();
            };
            mf_arm(k, sticky);
            const macko_status_t st = c.call();
            const long points = mf_points();
            mf_disarm(); /* keeps the list of failed calls for fired() */
            const std::string what = c.name + ", " + trace(k, sticky != 0);
            SCOPED_TRACE(what);
            const std::string msg = macko_get_last_error_message();
            const int pos = macko_get_last_error_position();
            if (mf_fired() == 0) {
                EXPECT_EQ(st, MACKO_STATUS_SUCCESS) << macko_get_status_name(st) << ": " << msg;
                if (st == MACKO_STATUS_SUCCESS)
                    c.succeeded();
                cleanup_and_check();
                if (!sticky)
                    t.points = points;
                break;
            }
            t.runs++;
            if (verbose())
                std::printf("  %s -> %s%s%s\n", what.c_str(), macko_get_status_name(st), msg.empty() ? "" : ": ",
                            msg.c_str());
            if (st == MACKO_STATUS_SUCCESS) {
                t.tolerated++;
                for (int i = 0; i < mf_fired(); i++) {
                    const std::string f = mf_fired_name(i);
                    const bool listed = std::find(c.tolerable.begin(), c.tolerable.end(), f) != c.tolerable.end();
                    const bool must = std::find(kMustReport.begin(), kMustReport.end(), f) != kMustReport.end() ||
                                      std::find(c.must_report.begin(), c.must_report.end(), f) != c.must_report.end();
                    EXPECT_TRUE(!must && (c.tolerable.empty() || listed))
                        << "the failure of " << f << " must be reported, the call succeeded";
                }
                EXPECT_EQ(pos, 0);
                EXPECT_EQ(msg, "");
                c.succeeded();
            } else {
                t.reported++;
                bool documented = false;
                std::string want;
                for (int i = 0; i < mf_fired(); i++) {
                    macko_status_t ws;
                    int wp;
                    expected_for(c.expect, mf_fired_category(i), &ws, &wp);
                    documented = documented || (st == ws && pos == wp);
                    want += std::string(" ") + macko_get_status_name(ws) + " at " + std::to_string(wp) + " (" +
                            mf_fired_name(i) + ")";
                }
                EXPECT_TRUE(documented) << "got " << macko_get_status_name(st) << " at " << pos << " (" << msg
                                        << "); documented:" << want;
                EXPECT_EQ(msg.rfind(c.routine + ": ", 0), 0u) << msg;
                c.unchanged();
                EXPECT_TRUE(same(mf_ledger_now(), before)) << "after the failed call: " << describe(mf_ledger_now())
                                                           << "; before it: " << describe(before);
                EXPECT_EQ(mf_pending_cuda_error(), 0) << "the failed call left a CUDA error for the next call";
                mf_clear_pending_cuda_error();
                /* The same call again, on the same handle and matrix, nothing injected. */
                const macko_status_t again = c.call();
                EXPECT_EQ(again, MACKO_STATUS_SUCCESS) << "the call after the failure: " << macko_get_status_name(again)
                                                       << ": " << macko_get_last_error_message();
                if (again == MACKO_STATUS_SUCCESS)
                    c.succeeded();
            }
            cleanup_and_check();
            if (::testing::Test::HasFatalFailure())
                return t;
        }
    }
    Tally &sum = totals()[c.name];
    sum.points += t.points;
    sum.runs += t.runs;
    sum.reported += t.reported;
    sum.tolerated += t.tolerated;
    return t;
}

void print_summary()
{
    Tally all;
    std::printf("fault injection (%s):\n", mf_fake_device() ? "fake devices" : mt::gpu_available() ? "GPU" : "no GPU");
    std::printf("  %-58s %6s %6s %8s %9s\n", "routine (case)", "points", "runs", "reported", "succeeded");
    for (const auto &kv : totals()) {
        const Tally &t = kv.second;
        std::printf("  %-58s %6ld %6ld %8ld %9ld\n", kv.first.c_str(), t.points, t.runs, t.reported, t.tolerated);
        all.points += t.points;
        all.runs += t.runs;
        all.reported += t.reported;
        all.tolerated += t.tolerated;
    }
    std::set<std::string> routines;
    for (const auto &kv : totals())
        routines.insert(kv.first.substr(0, kv.first.find(" (")));
    std::printf("fault injection: %zu routines in %zu cases, %ld fault points, %ld runs with injected failures "
                "(one-shot + sticky): %ld reported the documented status, %ld succeeded correctly\n",
                routines.size(), totals().size(), all.points, all.runs, all.reported, all.tolerated);
}

namespace {

/* Without a GPU the device routines run on the shim's fake devices, two of them, so that a handle can live on
 * another device than the caller's current one. Never with a GPU: the kernels' launches (not wrapped) would run
 * there on host memory. */
class Environment : public ::testing::Environment {
  public:
    void SetUp() override { mf_set_fake_device(mt::gpu_available() ? 0 : 2); }
    void TearDown() override { print_summary(); }
};

const ::testing::Environment *const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment);

} // namespace

} // namespace ft
