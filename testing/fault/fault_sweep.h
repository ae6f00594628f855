/* The fault tests' driver: SQLite's malloc test for one representative call of a routine.
 *
 * sweep() fails the 1st, 2nd, ... fault point of the call in turn (fault_control.h), once each ("one-shot") and
 * then from that point on ("sticky"), until a run passes every point without a failure. After each run with an
 * injected failure it checks:
 *   - the call either failed with the status and position the routine documents for a failure of that category
 *     (Expect), with a message naming the routine, or succeeded with a correct result (Case::succeeded): a failure
 *     the library tolerates (a best-effort call, a cached query) is fine when nothing is wrong afterwards;
 *   - after a failure: the outputs are as before (Case::unchanged), the shim's ledger (host and device allocations,
 *     open streams and descriptors) is exactly as before the call, no CUDA error is left for the next call to find,
 *     and the same call right after, nothing injected, succeeds with a correct result.
 * Every run ends with the ledger where it was before Case::prepare. */
#pragma once

#include "fault_control.h"
#include "macko.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace ft {

/* The status and error position a routine documents for a failure of each category of fault point. */
struct Expect {
    macko_status_t host_alloc = MACKO_STATUS_ALLOC_FAILED;
    int host_alloc_pos = 0;
    macko_status_t device_alloc = MACKO_STATUS_ALLOC_FAILED;
    int device_alloc_pos = 0;
    macko_status_t cuda = MACKO_STATUS_EXECUTION_FAILED;
    int cuda_pos = 0;
    macko_status_t file = MACKO_STATUS_IO_ERROR;
    int file_pos = 2;
};

struct Case {
    std::string name;    /* for the summary: the routine and the variant */
    std::string routine; /* the failure message must start with "<routine>: " */
    Expect expect;
    std::function<void()> prepare = [] {};   /* fresh inputs for one run (nothing armed) */
    std::function<macko_status_t()> call;    /* the call under test (armed) */
    std::function<void()> unchanged = [] {}; /* after a failure: the outputs are as prepare left them */
    std::function<void()> succeeded = [] {}; /* after a success: the result is right */
    std::function<void()> cleanup = [] {};   /* after each run: undo what prepare and call made */
    /* A run may end in a success despite a failed call only where the routine can do without that call. Never
     * for an allocation, a copy, a synchronisation or a file write, read or rename (kMustReport), nor for the calls
     * in must_report; and when tolerable is not empty, only for the calls it lists. Checked also where the result
     * would look right: an ignored fsync, or a launch failure injected after a kernel that ran. */
    std::vector<std::string> tolerable;
    std::vector<std::string> must_report;
};

extern const std::vector<std::string> kMustReport;

/* Case::tolerable of a routine that must report every failure. */
inline const std::vector<std::string> kNothingTolerable = {""};

inline Case tolerating(std::vector<std::string> calls, Case c)
{
    c.tolerable = std::move(calls);
    return c;
}

struct Tally {
    long points = 0;    /* fault points of the call (a run without any failure) */
    long runs = 0;      /* runs with an injected failure, one-shot and sticky */
    long reported = 0;  /* ... that ended in the documented failure status */
    long tolerated = 0; /* ... that ended in a correct success */
};

Tally sweep(const Case &c);

/* The running totals, printed at the end of the program (one line per case and a total). */
void print_summary();

/* The failed calls of the last armed run, for the cases' own checks ("fchmod" fired: the mode may differ). */
bool fired(const char *call_name);

} // namespace ft
