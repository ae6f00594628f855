/* The argument checks of the public routines: one function per kind of check, each with one canonical message
 * (lapack_style_docs/README.md, "Argument checks", lists them). A check looks at one argument; when it fails it records
 * its message at the argument's 1-based position through macko_fail and returns the status, else it returns
 * MACKO_STATUS_SUCCESS and records nothing. A routine calls them in signature order through MACKO_CHECK, so the first
 * bad argument ends the call before anything is written. `fn` is always the public routine's name. */
#ifndef MACKO_CHECK_H
#define MACKO_CHECK_H

#include "macko_internal.h"

/* Returns the status of a failed check from the calling routine. */
#define MACKO_CHECK(call)                                                                                              \
    do {                                                                                                               \
        const macko_status_t macko_check_st_ = (call);                                                                 \
        if (macko_check_st_ != MACKO_STATUS_SUCCESS)                                                                   \
            return macko_check_st_;                                                                                    \
    } while (0)

/* ---- pointers */
/* "<name> is NULL" */
macko_status_t macko_check_ptr(const char *fn, int pos, const char *name, const void *p);
/* The handle is the first argument of every routine that takes one. */
static inline macko_status_t macko_check_handle(const char *fn, macko_handle_t handle)
{
    return macko_check_ptr(fn, 1, "handle", handle);
}
/* An array of size1 x size2 elements (size2_name NULL: size1 alone) is needed when both sizes are > 0; then it must
 * not be NULL ("<name> is NULL but <size1_name> = <size1>[ and <size2_name> = <size2>]") and, with align > 0, its
 * address must be a multiple of align ("<name> is not aligned to its element size <align>"). */
macko_status_t macko_check_array(const char *fn, int pos, const char *name, const void *p, const char *size1_name,
                                 int64_t size1, const char *size2_name, int64_t size2, size_t align);
/* The row_ptr array of rows + 1 entries that a routine reads (out = 0) or writes (out = 1):
 * "row_ptr is NULL (it holds|receives rows + 1 entries)". */
macko_status_t macko_check_row_ptr(const char *fn, int pos, const void *row_ptr, int out);

/* ---- enumerations: "<name> is <v>; it must be <FIRST> (<v1>) or <SECOND> (<v2>)", named as in the API; the value
 * types list all four: "... it must be MACKO_R_16F (2), MACKO_R_32F (0), MACKO_R_16BF (14) or MACKO_R_64F (1)" */
typedef enum {
    MACKO_ARG_OP,           /* op: macko_operation_t */
    MACKO_ARG_POINTER_MODE, /* mode: macko_pointer_mode_t */
    MACKO_ARG_ORDER,        /* order: macko_order_t */
    MACKO_ARG_INDEX_TYPE,   /* index_type: macko_indextype_t */
    MACKO_ARG_INDEX_BASE,   /* index_base: macko_index_base_t */
    MACKO_ARG_TYPE,         /* type: macko_datatype_t */
    MACKO_ARG_OUTLIER_RULE, /* rule: macko_outlier_rule_t */
    MACKO_ARG_LAYOUT        /* layout: macko_layout_t */
} macko_enum_arg;
macko_status_t macko_check_enum(const char *fn, int pos, macko_enum_arg which, int value);

/* ---- sizes and strides: "<name> is <v>; it must be ..." */
/* A size: in [0, 2^56] ("it must be in [0, 2^56]"). */
macko_status_t macko_check_size(const char *fn, int pos, const char *name, int64_t v);
/* An increment, stride or count: at least min ("it must be at least <min>"). */
macko_status_t macko_check_min(const char *fn, int pos, const char *name, int64_t v, int64_t min);
/* A leading dimension: at least max(1, dim) ("it must be at least max(1, <dim_name>) = <max(1, dim)>"). */
macko_status_t macko_check_ld(const char *fn, int pos, const char *name, int64_t ld, const char *dim_name,
                              int64_t dim);
/* The byte offset of the last element of count vectors of len elements of elem bytes, element i of vector j at
 * i*inc + j*stride, fits int64 (arguments non-negative; len or count 0: nothing is addressed): "<formula> overflows".
 */
macko_status_t macko_check_span(const char *fn, int pos, const char *formula, int64_t len, int64_t inc,
                                int64_t count, int64_t stride, size_t elem);

/* ---- matrices (always named A) */
/* A with a host copy: "A is NULL"; NOT_INITIALIZED "A has no host copy (...)". */
macko_status_t macko_check_host_mat(const char *fn, int pos, macko_mat_t A);
/* A (not NULL) of the kind the routine takes: NOT_SUPPORTED "A is a <KIND> matrix; this routine takes <KIND'> matrices
 * only" (the macko_kind_t enumerator names). */
macko_status_t macko_check_kind(const char *fn, int pos, macko_mat_t A, macko_kind_t kind);
/* The same for a routine that takes two kinds: "... this routine takes <KIND1> and <KIND2> matrices only". */
macko_status_t macko_check_kind2(const char *fn, int pos, macko_mat_t A, macko_kind_t kind1, macko_kind_t kind2);
/* The macko_kind_t enumerator's name ("MACKO_KIND_NM"); "?" for a number that is none. */
const char *macko_kind_name(int kind);
#define MACKO_ANY_TYPE (-1)
/* A as a device matrix this handle can use: not NULL; of value type `type` (the routine letter's; MACKO_ANY_TYPE: any);
 * on the device (else NOT_INITIALIZED); on the handle's device. With op_pos > 0, op (already checked, at op_pos) T
 * needs A's transposed encoding (else NOT_INITIALIZED at op_pos; a QUANT or NM matrix: NOT_SUPPORTED at op_pos).
 * *M (M may be NULL): the encoding op selects. */
macko_status_t macko_check_dev_mat(const char *fn, int pos, macko_mat_t A, macko_handle_t handle, int type,
                                   int op_pos, macko_operation_t op, const struct macko_mat_s **M);

/* ---- the type combination of a compute call (macko_combo, kernels/macko_kernels.h) */
/* The combination of a matrix of value type a with x (B) type x, y (C) type y and compute type c: the combo of a
 * supported row of macko.h's table. A type argument that is not a macko_datatype_t is INVALID_VALUE at its position;
 * a combination no row allows is NOT_SUPPORTED at the first type argument (x, then y, then c) that no row allows
 * given a and the arguments before it ("<name> is <T> with an <A> matrix; supported: ..."). */
macko_status_t macko_check_combo(const char *fn, macko_datatype_t a, int x_pos, const char *x_name, int x, int y_pos,
                                 const char *y_name, int y, int c_pos, int c, int *combo);
/* The combination of the BLAS-letter routines: A's type must be `type` (INVALID_VALUE at A's position otherwise,
 * as macko_check_dev_mat says); their x, y and compute types are the letter's. */
int macko_combo_of_type(macko_datatype_t type);
/* A QUANT matrix runs the fp16 combination only: NOT_SUPPORTED at pos (the first type argument) for any other. */
/* A TILES device copy (op N) takes the combinations H and B only (NOT_SUPPORTED at pos). */
macko_status_t macko_check_tiles_combo(const char *fn, int pos, const struct macko_mat_s *A, macko_operation_t op,
                                       int combo);
macko_status_t macko_check_quant_combo(const char *fn, int pos, const struct macko_mat_s *A, int combo);
/* An NM matrix runs its own type's combination only (H, B, S or D): NOT_SUPPORTED at pos (the first type argument)
 * for a mixed one (HS, BS). */
macko_status_t macko_check_nm_combo(const char *fn, int pos, const struct macko_mat_s *A, int combo);
/* Bytes of one x / y element of a combination. */
size_t macko_combo_xelem(int combo);

/* ---- the inputs of the encoders, shared by the host and device routines */
/* Input arrays that live on `device`: readable(p, device) says whether the device can read p. NULL: host input. */
typedef struct macko_device_data {
    int device;
    int (*readable)(const void *p, int device);
} macko_device_data;

/* A dense rows x cols array (total = rows*cols, checked) at values with leading dimension ld in order; values, ld and
 * order are at positions pos, pos + 1, pos + 2. Order is judged before ld, which needs it. */
macko_status_t macko_check_dense_array(const char *fn, int pos, int64_t rows, int64_t cols, int64_t total,
                                       const void *values, int64_t ld, macko_order_t order,
                                       const macko_device_data *dev);
/* The arguments (A, rows, cols, type, values, ld, order) of a dense encoder, A at position pos. */
macko_status_t macko_check_dense_input(const char *fn, int pos, const macko_mat_t *A, int64_t rows, int64_t cols,
                                       macko_datatype_t type, const void *values, int64_t ld, macko_order_t order,
                                       const macko_device_data *dev);
/* The arguments (A, rows, cols, nnz, row_ptr, col_ind, values, index_type, index_base, type) of a CSR encoder, A at
 * position pos; not the content of the arrays (see below). */
macko_status_t macko_check_csr_input(const char *fn, int pos, const macko_mat_t *A, int64_t rows, int64_t cols,
                                     int64_t nnz, const void *row_ptr, const void *col_ind, const void *values,
                                     macko_indextype_t index_type, macko_index_base_t index_base,
                                     macko_datatype_t type, const macko_device_data *dev);

/* CSR content, found on the host or on the device; the messages start with the row. Faults of row_ptr, in the order
 * the encoders look for them (the same numbers as kernels/convert.h's MACKO_CONV_RP_*). */
typedef enum {
    MACKO_CSR_RP_FIRST = 0,    /* row_ptr[0] = v is not index_base (row 0) */
    MACKO_CSR_RP_DECREASE = 1, /* row_ptr[r + 1] = v < row_ptr[r] = prev */
    MACKO_CSR_RP_EXCEED = 2,   /* row_ptr[r + 1] = v > nnz + index_base */
    MACKO_CSR_RP_LAST = 3      /* row_ptr[rows] = v is not nnz + index_base (r: the last row, 0 when none) */
} macko_csr_rp_fault;
macko_status_t macko_fail_csr_row_ptr(const char *fn, int pos, macko_csr_rp_fault fault, int64_t r, int64_t v,
                                      int64_t prev, int64_t nnz, int64_t base);
/* col_ind[k] = c of row r, after the row's previous column prev (0-based; -1 at the start of the row): inside
 * [base, cols + base) and above prev + base? */
static inline int macko_csr_col_ok(int64_t c, int64_t prev, int64_t base, int64_t cols)
{
    /* compared before removing the base: INT64_MIN - 1 would overflow */
    return c >= base && c - base < cols && c - base > prev;
}
/* Records the failure of a column that is not macko_csr_col_ok. */
macko_status_t macko_fail_csr_col(const char *fn, int pos, int64_t r, int64_t k, int64_t c, int64_t prev,
                                  int64_t base, int64_t cols);

#endif
