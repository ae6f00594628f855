/* The N:M kind on the GPU: upload (device layouts GEN and SP24), download and the products. */
#include "device_common.h"

int macko_nm_pattern_ok(int n, int m, int v)
{
    return (m == 4 || m == 8 || m == 16 || m == 32) && n >= 1 && n <= m &&
           (v == 1 || v == 2 || v == 4 || v == 8 || v == 16 || v == 32);
}

int macko_nm_auto_layout(int n, int m, int v, macko_datatype_t type)
{
    (void)v;
    return m == 4 && n <= 2 && (type == MACKO_R_16F || type == MACKO_R_16BF) ? MACKO_NMDEV_SP24 : MACKO_NMDEV_GEN;
}

void macko_nm_device_bytes(int64_t rows, int64_t cols, int n, int m, int v, macko_datatype_t type, int layout,
                           int64_t *values_bytes, int64_t *meta_bytes)
{
    if (layout == MACKO_NMDEV_SP24) {
        const int64_t units = ((rows + 15) / 16) * ((cols + 31) / 32);
        *values_bytes = units * 512;
        *meta_bytes = units * 64;
    } else {
        const int64_t kept = (cols + m - 1) / m * n;
        *values_bytes = rows * kept * (int64_t)macko_type_size(type);
        *meta_bytes = (rows + v - 1) / v * kept;
    }
}

macko_status_t macko_nm_upload(const char *fn, macko_handle_t handle, macko_mat_t A)
{
    (void)handle;
    (void)A;
    return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2, "N:M upload: under construction");
}

macko_status_t macko_nm_download(const char *fn, macko_handle_t handle, macko_mat_t A)
{
    (void)handle;
    (void)A;
    return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 2, "N:M download: under construction");
}

void macko_nm_device_free(struct macko_mat_s *m)
{
    cudaFree(m->nm.dvalues);
    cudaFree(m->nm.dmeta);
    m->nm.dvalues = m->nm.dmeta = NULL;
}

macko_status_t macko_nm_compute(const char *fn, macko_handle_t handle, const struct macko_mat_s *M, int combo,
                                const void *alpha, const void *b, int64_t incb, int64_t ldb, const void *beta,
                                void *c, int64_t incc, int64_t ldc, int64_t n)
{
    (void)handle; (void)M; (void)combo; (void)alpha; (void)b; (void)incb; (void)ldb; (void)beta; (void)c;
    (void)incc; (void)ldc; (void)n;
    return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, 0, "N:M products: under construction");
}
