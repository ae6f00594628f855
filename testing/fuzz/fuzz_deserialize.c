/* libFuzzer target: macko_mat_deserialize and macko_mat_load on arbitrary bytes.
 *
 * Every input goes through both routines (load reads it from an in-memory file, memfd), which must agree: both
 * accept it, or both reject it with FORMAT_ERROR at argument 2, leaving the poisoned out-parameter untouched. An
 * accepted input must serialize back to exactly the same bytes, and pass fz_check_matrix. All three format versions
 * are fuzzed (seeds of MACKO, QUANT and N:M matrices).
 *
 * Both checksums would stop almost every mutation at the first check, so the custom mutator below recomputes them
 * after 7 of 8 mutations (they sit at bytes 88 and 92 in every version): the fuzzer then explores the header fields
 * and the payload validation behind them. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_common.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

static macko_mat_t const kPoison = (macko_mat_t)(uintptr_t)0x5A5A0;

static int memfd = -1;
static char memfd_path[64];

/* Loads the bytes through a file: an in-memory one when memfd_create works, else a file in /tmp. */
static macko_status_t load_bytes(const uint8_t *data, size_t size, macko_mat_t *A)
{
    if (memfd < 0) {
        memfd = memfd_create("macko_fuzz", 0);
        if (memfd >= 0) {
            snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
        } else {
            snprintf(memfd_path, sizeof memfd_path, "/tmp/macko_fuzz_%ld.bin", (long)getpid());
            memfd = open(memfd_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
            if (memfd < 0)
                FZ_ABORT("cannot create a file for macko_mat_load");
        }
    }
    if (ftruncate(memfd, 0) != 0 || (size > 0 && pwrite(memfd, data, size, 0) != (ssize_t)size))
        FZ_ABORT("cannot write the file for macko_mat_load");
    return macko_mat_load(A, memfd_path);
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static void put_crc(uint8_t *p, uLong crc)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(crc >> (8 * i));
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    size = LLVMFuzzerMutate(data, size, max_size);
    if ((seed & 7) != 0 && size >= 96) {
        put_crc(data + 88, crc32(0, data + 96, (uInt)(size - 96))); /* payload */
        put_crc(data + 92, crc32(0, data, 92));                      /* header, bytes 0..91 */
    }
    return size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    macko_mat_t A = kPoison, B = kPoison;
    macko_status_t st = macko_mat_deserialize(&A, data, (int64_t)size);
    macko_status_t st2;
    if (st != MACKO_STATUS_SUCCESS) {
        if (st != MACKO_STATUS_FORMAT_ERROR || macko_get_last_error_position() != 2 || A != kPoison)
            FZ_ABORT("deserialize: status %s, position %d", macko_get_status_name(st), macko_get_last_error_position());
    }
    st2 = load_bytes(data, size, &B);
    if (st2 != st)
        FZ_ABORT("load says %s, deserialize %s", macko_get_status_name(st2), macko_get_status_name(st));
    if (st2 != MACKO_STATUS_SUCCESS) {
        if (macko_get_last_error_position() != 2 || B != kPoison)
            FZ_ABORT("load: position %d", macko_get_last_error_position());
        return 0;
    }
    {
        uint8_t *a, *b;
        int64_t na = fz_serialize(A, &a), nb = fz_serialize(B, &b);
        if (na != (int64_t)size || memcmp(a, data, size) != 0)
            FZ_ABORT("an accepted buffer does not serialize back to itself");
        if (nb != na || memcmp(a, b, (size_t)na) != 0)
            FZ_ABORT("load and deserialize built different matrices");
        free(a);
        free(b);
    }
    fz_check_matrix(A);
    macko_mat_destroy(A);
    macko_mat_destroy(B);
    return 0;
}
