#include <macko.h>
#include <stdio.h>

int main(void)
{
    const macko_half a[2 * 3] = {0x3C00, 0, 0x4000, 0, 0, 0x4200}; /* [[1, 0, 2], [0, 0, 3]] */
    macko_mat_t A = NULL;
    int64_t nnz = 0;
    int major, minor, patch;
    if (macko_get_version(&major, &minor, &patch) != MACKO_STATUS_SUCCESS)
        return 1;
    if (macko_mat_create_dense_host(&A, 2, 3, MACKO_R_16F, a, 3, MACKO_ORDER_ROW) != MACKO_STATUS_SUCCESS)
        return 1;
    macko_mat_get_info(A, NULL, NULL, &nnz, NULL);
    macko_mat_destroy(A);
    printf("macko %d.%d.%d via find_package: nnz = %lld\n", major, minor, patch, (long long)nnz);
    return nnz == 3 ? 0 : 1;
}
