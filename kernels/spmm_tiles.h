/* Internal interface of the tile-layout SpMM (kernels/spmm_tiles.cu): C = alpha*M*B + beta*C for a matrix held on the
 * device in the tile layout (MACKO_LAYOUT_TILES, lapack_style_docs/FORMAT.md "Tile layout"), B and C of M's 16-bit
 * type (fp16 or bf16), fp32 accumulation with mma.sync m16n8k16 (sm_80 and newer). Not installed.
 *
 * Each warp owns one band of 16 rows; a block of MACKO_TILES_WARPS warps walks a range of K-groups (MACKO_TILES_KG
 * tiles, 128 columns, or MACKO_TILES_KG_WIDE at n <= 16 where the upload chose them) of its bands, staging the
 * groups' records (on sm_90 by bulk copies, else cp.async) and the matching rows of B (cp.async) in shared memory, two
 * stages. A lane finds each of its eight A-fragment values with one popcount into the subtile's bitmap, so a tile
 * costs the same few instructions whatever its density. Split-K over blocks through the handle's workspace, partials
 * summed in split order by the last block to arrive: bitwise reproducible, no allocation. */
#ifndef MACKO_SPMM_TILES_H
#define MACKO_SPMM_TILES_H

#include "macko_kernels.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MACKO_TILES_WARPS 8 /* bands per block */
#define MACKO_TILES_KG 8    /* tiles per staged group (128 columns) */
/* Groups of 16 tiles (256 columns): the kernels for column tiles 8 and 16 (n <= 16) also exist in this width, chosen
 * per matrix at upload (macko_tiles_kg): per warp they do a group's work faster (half the block barriers and staging
 * passes per tile), but their group buffers are twice as large, so fewer blocks fit an SM (bench/NOTES.md, session
 * 45). Those for column tiles 24 and 32 exist too (session 50). The rule (macko_tiles_kg) takes them at 3 blocks an
 * SM for n <= 16, and at 2 for n <= 32 where a model of the launch says they are no slower (session 51). */
#define MACKO_TILES_KG_WIDE 16
#define MACKO_TILES_WIDE_NT 4 /* column tiles (8, 16, 24, 32) built with wide groups too */
#define MACKO_TILES_ROWS (16 * MACKO_TILES_WARPS)
#define MACKO_TILES_HEADER 40 /* bytes of a record's header: 8 bitmap words, 8 start bytes */
#define MACKO_TILES_NTILES 5  /* column tiles the kernels are built for: 8, 16, 24, 32, 64 */

/* One launch's arguments. k carries the B/C pointers, their strides, n, the scalars and the stream (macko_kernels.h;
 * its values/deltas/row_ptr are unused). */
typedef struct macko_tiles_args {
    macko_kargs k;
    int bf16;              /* 0: fp16, 1: bf16 */
    int64_t bands, tcols;  /* ceil(rows / 16), ceil(cols / 16) */
    const uint32_t *offs;  /* bands * tcols + 1 record starts, 16-byte words */
    const void *stream;    /* the records, 16-byte aligned */
    int kg;                /* tiles per group: MACKO_TILES_KG, or MACKO_TILES_KG_WIDE where n <= 16 (32 forced) */
    int bulk;              /* 1: the tile kernel stages records by bulk copies where built for sm_90 (else cp.async) */
    int abuf;              /* bytes of the largest group of kg consecutive records of a band */
    int splits;            /* blocks along K (>= 1) */
    int wg_bn;             /* the fused wgmma product's C-tile width: 64, 128 or 256 (macko_tiles_wg_bn) */
    int stream_blocks;     /* the fused product: > 0 stream-K over this many blocks (splits unused; ws holds
                              macko_tiles_wg_stream_ws_floats(), counters one per tile); 0: `splits` blocks per tile */
    int tail_splits;       /* the fused product without stream-K: > 1 the tail split (macko_tiles_wg_tail): tiles from
                              tail_tile0 on in a second launch of tail_splits blocks along K (ws holds
                              macko_tiles_wg_tail_ws_floats(), counters one per tile of it), those before one block each;
                              splits unused */
    int64_t tail_tile0;
    int wg_pairs;          /* test: split K in clusters of 2 wherever the splits are even (else where a tile's splits do
                              not fit one cluster) */
    const int *wg_ccap;    /* the fused product: the device's clusters of 2 .. 8 blocks at this width (macko_tiles_wg_
                              cluster_caps); split K takes clusters where its tiles fit them. NULL: the workspace */
    float *ws;             /* splits > 1: macko_tiles_ws_floats() floats */
    int *counters;         /* splits > 1: macko_tiles_counters() ints, zero between calls */
} macko_tiles_args;

/* The column tile (8, 16, 32, 64) a launch for n columns uses, and its index 0..3. */
int macko_tiles_ntile(int64_t n);
int macko_tiles_ntile_index(int64_t n);
/* Dynamic shared memory of one block for column tile nt, groups of kg tiles and group buffer abuf. */
size_t macko_tiles_smem(int nt, int kg, int abuf);
/* Workspace floats and counters of a launch (0 when splits == 1). */
int64_t macko_tiles_ws_floats(int64_t rows, int64_t n, int splits);
int64_t macko_tiles_counters(int64_t rows, int64_t n, int splits);
/* Raises the kernels' shared-memory limits on the current device to all it allows (max_smem_optin: its opt-in
 * limit per block; one limit for every matrix) and reports, per column tile, the blocks of a matrix with group buffer
 * abuf one SM holds (occ[4]; 0 when the group buffer does not fit the device). Called when a tile layout is
 * uploaded, never at a call. Returns the cudaError_t of a failed call (cleared), 0 otherwise. */
int macko_tiles_prepare(int bf16, int abuf, int max_smem_optin, int occ[MACKO_TILES_NTILES]);
/* The same for the kernels with groups of MACKO_TILES_KG_WIDE tiles (column tiles 8 and 16; abuf: their group
 * buffer). */
int macko_tiles_prepare_wide(int bf16, int abuf, int max_smem_optin, int occ[MACKO_TILES_WIDE_NT]);
/* Launches the product. Returns the cudaError_t of the launch (0 = success). */
int macko_tiles_spmm(const macko_tiles_args *a);
/* Writes rows [row0, row0 + prow) (row0 a multiple of 16) densely to panel (prow x ldp values of the type, ldp >= cols
 * and a multiple of 8), for the panel GEMM of spmm_panel.cu. Returns the cudaError_t of the launch. */
int macko_tiles_decode_dense(int bf16, const void *stream, const uint32_t *offs, int64_t tcols, int64_t row0,
                             int64_t prow, void *panel, int64_t ldp, macko_stream_t st);
/* Columns from which the automatic rule multiplies a TILES matrix by decoding panels of it densely into the handle's
 * workspace and running the panel GEMM (spmm_panel.cu) instead of the tile kernel (measured, bench/NOTES.md). */
#define MACKO_TILES_PANEL_N 2048
/* ... the same where the panel GEMM is wgmma (spmm_panel_wg.cu, compute capability 9.0): below it the fused wgmma
 * product (spmm_tiles_wg.cu) takes n >= MACKO_TILES_WG_N. Both paths' times are steps of 256 columns (the fused
 * product's C tiles are 256 wide; the panel GEMM's waves), so the switch sits just past a step, where the panels'
 * time at n is about the fused product's at n - 1 or above it. Measured (bench/NOTES.md, session 39, H100, 6 quick
 * shapes, d = 0.5; panels' time over the fused product's, geomean): n = 1024 1.13, 1280 1.03, 1536 0.96, 2047 0.87,
 * so the panels from n = 1281; there time(1281) / time(1280) was 0.92-1.20 at d = 0.1-0.7 (one cell of 24 below
 * 0.95). With 2048, as before session 39, n = 2047 took ~1.15x the time of 2048. */
#define MACKO_TILES_PANEL_N_WG 1281

/* The fused wgmma product (spmm_tiles_wg.cu, sm_90a; compute capability 9.0 only): each block decodes the records it
 * needs straight into the register operand of wgmma (128 x BN tiles of C, BN = 64, 128 or 256; K-slices of 64 columns),
 * no dense panel in memory. Needs B with unit element stride, 16-byte aligned, ldb a multiple of 8 (a tensor map), and
 * C with unit element stride. Uses a->k (B, C, n, scalars, stream), bands / tcols / offs / stream, wg_bn, splits
 * (blocks along K; splits > 1 needs ws / counters of the sizes below), stream_blocks (stream-K, widths 128 and 256: ws
 * / counters of macko_tiles_wg_stream_ws_floats and one per tile; splits unused). prepare: sets the shared-memory sizes
 * of its kernels on the current device (at upload); ready: 1 when the driver's tensor-map encoder was found. */
int macko_tiles_wg_prepare(int bf16);
int macko_tiles_wg_ready(void);
int macko_tiles_wg_spmm(const macko_tiles_args *a);
/* The blocks of a C-tile width one SM holds (its launch bounds and shared memory). A width other than 64 or 128
 * counts as 256 in these functions. */
int macko_tiles_wg_blocks_per_sm(int bn);
/* The blocks of that width one SM of the current device holds by the occupancy calculator, after
 * macko_tiles_wg_prepare (-1 on a CUDA error; for tests: it must equal macko_tiles_wg_blocks_per_sm). */
int macko_tiles_wg_occupancy(int bf16, int bn);
/* Split K of the fused product in thread-block clusters (a tile's splits as one cluster, summed through distributed
 * shared memory; no workspace; widths 128 and 256): caps[w][z - 2] is how many clusters of z = 2 .. 8 blocks along K
 * the device holds at once at width 64, 128, 256 (w = 0, 1, 2; 0 where it cannot run them, and always at width 64).
 * Called when a tile layout is uploaded (after macko_tiles_wg_prepare), never at a call; a launch takes clusters
 * where all of its clusters fit at once. */
#define MACKO_TILES_WG_CLUSTERS 7
void macko_tiles_wg_cluster_caps(int bf16, int caps[3][MACKO_TILES_WG_CLUSTERS]);
/* The index w of caps for C-tile width bn (64, 128, other: 0, 1, 2). */
static inline int macko_tiles_wg_width_index(int bn) { return bn == 64 ? 0 : bn == 128 ? 1 : 2; }
int64_t macko_tiles_wg_ws_floats(int64_t rows, int64_t n, int splits, int bn);
int64_t macko_tiles_wg_counters(int64_t rows, int64_t n, int splits, int bn);
/* Blocks along K of the automatic rule: as many as one wave of blocks takes (SMs x blocks per SM), each split at least
 * 8 K-slices, within the workspace (ws_floats floats, counters ints); width 64 takes 4 where that leaves more than 5 %
 * of the wave empty or runs up to a quarter of a wave past it, or puts two blocks of fewer than 16 slices on an SM
 * where 4 splits give each block one of its own (measured, spmm_tiles_wg.cu). */
int macko_tiles_wg_splits(int64_t rows, int64_t tcols, int64_t n, int bn, int sm_count, int64_t ws_floats,
                          int64_t counters);
/* Stream-K (macko_tiles_args.stream_blocks): the blocks of the automatic rule, one wave (SMs x blocks per SM) where
 * a model of the waves says split K leaves enough of the GPU idle, else 0; and the workspace floats of `blocks`
 * stream-K blocks (two partial tiles each; counters: one per tile). */
int macko_tiles_wg_stream(int64_t rows, int64_t tcols, int64_t n, int bn, int sm_count, int64_t ws_floats,
                          int64_t counters);
int64_t macko_tiles_wg_stream_ws_floats(int blocks, int bn);
/* The tail split of the fused product (widths 128 and 256): where the tiles fill whole waves and part of one more,
 * the whole waves one block per tile and the rest (from macko_tiles_wg_tail_tile0: the tiles of the whole waves) in a
 * second launch split along K. The rule gives the blocks along K of that launch, or 0 where it does not apply or its
 * model prefers split K or stream-K; the workspace floats of s such blocks per tile. */
int macko_tiles_wg_tail(int64_t rows, int64_t tcols, int64_t n, int bn, int sm_count, int64_t ws_floats,
                        int64_t counters);
int64_t macko_tiles_wg_tail_tile0(int64_t rows, int64_t n, int bn, int sm_count);
int64_t macko_tiles_wg_tail_ws_floats(int64_t rows, int64_t n, int bn, int sm_count, int splits);
/* The C-tile width of the automatic rule: 64 up to n = 64, 128 up to 128, 256 beyond (measured, bench/NOTES.md,
 * session 13: width 64 runs two blocks per SM, 0.82x of cuBLAS at n = 64 against 0.65x for width 128; at n = 128
 * width 64 decodes every K-slice twice). */
int macko_tiles_wg_bn(int64_t n);
/* Columns from which the automatic rule takes the fused product on a device whose panel GEMM is wgmma, up to
 * MACKO_TILES_PANEL_N_WG. Measured (bench/NOTES.md, session 13, H100, 6 quick shapes, d = 0.5): at n = 32 the fused
 * product of width 64 is 0.73-1.04x of cuBLAS against the tile kernel's 0.54-1.00x, ahead on all six shapes. At
 * n = 16 the tile kernel with session 35's split rule is ahead on all 8 quick and 7B shapes (session 36, H100, d =
 * 0.5: the fused product takes 1.03-1.29x its time; in session 13, against the old split rule, the fused product was
 * ahead at n = 16 where its blocks filled a wave, so the rule took it there): the 16-column tile does a quarter of
 * the MMAs of the fused product's 64-column one; from n = 17 the tile kernel needs its 32-column tile. */
#define MACKO_TILES_WG_N 17
/* ... except from n = 17 to 24 on matrices of at least MACKO_TILES_N24_ELEMS elements (rows x cols), which take the
 * tile kernel's 24-column tile (three n8 MMAs a tile against the 32-column tile's four). Measured (bench/NOTES.md,
 * session 50, H100, 6 quick shapes, n = 17 / 20 / 24, d = 0.5 and 0.3): the 24-column tile against the fused product
 * took 0.85-0.98x the time on the three shapes of 151M elements and more (12288^2, 28672 x 8192, 36864 x 12288), and
 * 1.00-1.12x on the three of 45M and fewer (4096^2, 4096 x 11008, 11008 x 4096). The bound, 2^26 = 8192^2, is
 * about where the ratio, taken as linear in the log of the size between 45M (1.068, geomean) and 151M (0.899),
 * crosses 1 (71M). */
#define MACKO_TILES_N24_ELEMS (INT64_C(1) << 26)

#ifdef __cplusplus
}
#endif

#endif
