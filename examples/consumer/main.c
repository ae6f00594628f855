/* What every C consumer of examples/consumer runs: a host part (encode a 2x3 matrix), then, where a GPU is present,
 * a round trip of the encoding through the device. Without a GPU it says so and exits 0 after the host part. */
#include <macko.h>
#include <stdio.h>

#ifndef MACKO_CONSUMER
#define MACKO_CONSUMER "find_package"
#endif

int main(void)
{
    const macko_half a[2 * 3] = {0x3C00, 0, 0x4000, 0, 0, 0x4200}; /* [[1, 0, 2], [0, 0, 3]] */
    macko_half back[2 * 3] = {0};
    macko_mat_t A = NULL, A2 = NULL;
    macko_handle_t h = NULL;
    int64_t nnz = 0;
    int major, minor, patch, ok = 1, i;
    if (macko_get_version(&major, &minor, &patch) != MACKO_STATUS_SUCCESS)
        return 1;
    if (macko_mat_create_dense_host(&A, 2, 3, MACKO_R_16F, a, 3, MACKO_ORDER_ROW) != MACKO_STATUS_SUCCESS)
        return 1;
    macko_mat_get_info(A, NULL, NULL, &nnz, NULL);
    printf("macko %d.%d.%d via %s: nnz = %lld\n", major, minor, patch, MACKO_CONSUMER, (long long)nnz);
    ok = nnz == 3;
    /* A bad call to every compute family: links the kernels' objects, which a static consumer must be able to. */
    ok = ok && macko_Hspmv(NULL, MACKO_OPERATION_NON_TRANSPOSE, NULL, A, NULL, 1, NULL, NULL, 1) ==
                   MACKO_STATUS_INVALID_VALUE;
    ok = ok && macko_Hspmm(NULL, MACKO_OPERATION_NON_TRANSPOSE, 1, NULL, A, NULL, 3, NULL, NULL, 2) ==
                   MACKO_STATUS_INVALID_VALUE;
    ok = ok && macko_mat_create_dense_device(NULL, &A2, 2, 3, MACKO_R_16F, NULL, 3, MACKO_ORDER_ROW) ==
                   MACKO_STATUS_INVALID_VALUE;

    if (macko_create(&h) != MACKO_STATUS_SUCCESS) {
        printf("GPU part skipped: %s\n", macko_get_last_error_message());
    } else {
        /* upload, drop the host copy, download: the matrix must come back unchanged */
        ok = ok && macko_mat_upload(h, A) == MACKO_STATUS_SUCCESS &&
             macko_mat_release_host(A) == MACKO_STATUS_SUCCESS && macko_mat_download(h, A) == MACKO_STATUS_SUCCESS &&
             macko_mat_export_dense_host(A, back, 3, MACKO_ORDER_ROW) == MACKO_STATUS_SUCCESS;
        for (i = 0; ok && i < 6; i++)
            ok = back[i] == a[i];
        printf("GPU round trip: %s\n", ok ? "ok" : macko_get_last_error_message());
        macko_destroy(h);
    }
    macko_mat_destroy(A);
    return ok ? 0 : 1;
}
