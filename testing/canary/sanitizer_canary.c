/* Shows that the sanitizers of .ci/reliability.sh are live on the machine that runs it: each mode commits one
 * defect that its sanitizer must report. The script builds this with the same compiler and flags as the sanitized
 * suites and expects every mode to fail with the sanitizer's report, so a silently disabled check (LeakSanitizer
 * without ptrace, say) fails CI instead of passing it. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;
static int racy;

static void *bump(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++)
        racy++; /* unsynchronised from two threads */
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (strcmp(argv[1], "leak") == 0) { /* LeakSanitizer: "detected memory leaks" */
        sink = malloc(48);
        sink = NULL;
        return 0;
    }
    if (strcmp(argv[1], "overflow") == 0) { /* AddressSanitizer: "heap-buffer-overflow" */
        volatile char *p = (volatile char *)malloc(8);
        volatile int i = 8;
        p[i] = 1; /* one past the end; volatile, so not optimised away */
        free((void *)p);
        return 0;
    }
    if (strcmp(argv[1], "ub") == 0) { /* UndefinedBehaviorSanitizer: "signed integer overflow" */
        volatile int64_t x = INT64_MIN;
        volatile int64_t y = x - 1;
        printf("%lld\n", (long long)y);
        return 0;
    }
    if (strcmp(argv[1], "race") == 0) { /* ThreadSanitizer: "data race" */
        pthread_t a, b;
        pthread_create(&a, NULL, bump, NULL);
        pthread_create(&b, NULL, bump, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        printf("%d\n", racy);
        return 0;
    }
    return 2;
}
