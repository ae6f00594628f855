/* Compiled with -std=c99 -pedantic -Werror and no CUDA include path: the public header must stand alone. */
#include "macko.h"

int macko_header_c99_probe(void);
int macko_header_c99_probe(void) { return MACKO_VERSION_MAJOR + (int)MACKO_STATUS_FORMAT_ERROR; }
