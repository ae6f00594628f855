/* Checked size arithmetic: every byte count is computed here before anything is allocated. */
#include "macko_internal.h"

size_t macko_type_size(macko_datatype_t t)
{
    switch (t) {
    case MACKO_R_16F:
    case MACKO_R_16BF: return 2;
    case MACKO_R_32F: return 4;
    case MACKO_R_64F: return 8;
    }
    return 0;
}

int macko_type_valid(int t)
{
    return t == MACKO_R_16F || t == MACKO_R_32F || t == MACKO_R_16BF || t == MACKO_R_64F;
}

int macko_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0)
        return 0;
    if (a != 0 && b > INT64_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

int macko_add_i64(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || a > INT64_MAX - b)
        return 0;
    *out = a + b;
    return 1;
}

int64_t macko_values_bytes(macko_datatype_t t, int64_t entries_padded)
{
    int64_t r;
    if (!macko_mul_i64(entries_padded, (int64_t)macko_type_size(t), &r))
        return 0;
    return r;
}

int64_t macko_rowptr_bytes(int64_t rows, int rp64)
{
    int64_t r;
    if (!macko_mul_i64(rows + 1, rp64 ? 8 : 4, &r))
        return 0;
    return r;
}
