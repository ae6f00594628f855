/* bench/experiments/s42-cl.sh's macko-caps (session 42): the clusters of 2..8 blocks of the fused tile product the
 * device holds at once, per C-tile width and type (macko_tiles_wg_prepare, then macko_tiles_wg_cluster_caps). Built
 * against the static library of a 90-real build B:
 *   gcc -O2 s42-caps.c B/libmacko.a -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -lpthread -ldl -lrt -lm \
 *       -o macko-caps */
#include <stdio.h>
int macko_tiles_wg_prepare(int bf16);
void macko_tiles_wg_cluster_caps(int bf16, int caps[3][7]);
int main(void)
{
    for (int bf = 0; bf < 2; bf++) {
        int caps[3][7];
        int e = macko_tiles_wg_prepare(bf);
        macko_tiles_wg_cluster_caps(bf, caps);
        for (int w = 0; w < 3; w++) {
            printf("%s prepare %d width %d clusters of 2..8:", bf ? "bf16" : "fp16", e, 64 << w);
            for (int z = 0; z < 7; z++)
                printf(" %d", caps[w][z]);
            printf("\n");
        }
    }
    return 0;
}
