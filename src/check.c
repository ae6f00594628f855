/* The argument checks (check.h): every argument-error message of the library's checks is written here once. */
#include "check.h"

#include <inttypes.h>
#include <stdio.h>

macko_status_t macko_check_ptr(const char *fn, int pos, const char *name, const void *p)
{
    if (p == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is NULL", name);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_array(const char *fn, int pos, const char *name, const void *p, const char *size1_name,
                                 int64_t size1, const char *size2_name, int64_t size2, size_t align)
{
    if (size1 <= 0 || (size2_name != NULL && size2 <= 0))
        return MACKO_STATUS_SUCCESS;
    if (p == NULL && size2_name == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is NULL but %s = %" PRId64, name, size1_name,
                          size1);
    if (p == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is NULL but %s = %" PRId64 " and %s = %" PRId64,
                          name, size1_name, size1, size2_name, size2);
    if (align > 1 && (uintptr_t)p % align != 0)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is not aligned to its element size %zu", name,
                          align);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_row_ptr(const char *fn, int pos, const void *row_ptr, int out)
{
    if (row_ptr == NULL)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "row_ptr is NULL (it %s rows + 1 entries)",
                          out ? "receives" : "holds");
    return MACKO_STATUS_SUCCESS;
}

/* The values of every enumeration of the API, named as the enumerators are (at most 4: the value types). */
#define ENUM_MAX 4
#define ENUM_ARG(arg, n, a, b) {arg, n, {a, b}, {#a, #b}}
#define ENUM_ARG3(arg, a, b, c) {arg, 3, {a, b, c}, {#a, #b, #c}}
#define ENUM_ARG4(arg, a, b, c, d) {arg, 4, {a, b, c, d}, {#a, #b, #c, #d}}
static const struct {
    const char *arg; /* the argument's name in the API */
    int count;
    int value[ENUM_MAX];
    const char *name[ENUM_MAX];
} enum_args[] = {
    [MACKO_ARG_OP] = ENUM_ARG("op", 2, MACKO_OPERATION_NON_TRANSPOSE, MACKO_OPERATION_TRANSPOSE),
    [MACKO_ARG_POINTER_MODE] = ENUM_ARG("mode", 2, MACKO_POINTER_MODE_HOST, MACKO_POINTER_MODE_DEVICE),
    [MACKO_ARG_ORDER] = ENUM_ARG("order", 2, MACKO_ORDER_ROW, MACKO_ORDER_COL),
    [MACKO_ARG_INDEX_TYPE] = ENUM_ARG("index_type", 2, MACKO_INDEX_32I, MACKO_INDEX_64I),
    [MACKO_ARG_INDEX_BASE] = ENUM_ARG("index_base", 2, MACKO_INDEX_BASE_ZERO, MACKO_INDEX_BASE_ONE),
    [MACKO_ARG_TYPE] = ENUM_ARG4("type", MACKO_R_16F, MACKO_R_32F, MACKO_R_16BF, MACKO_R_64F),
    [MACKO_ARG_OUTLIER_RULE] =
        ENUM_ARG3("rule", MACKO_OUTLIERS_NONE, MACKO_OUTLIERS_FRACTION, MACKO_OUTLIERS_THRESHOLD),
    [MACKO_ARG_LAYOUT] = ENUM_ARG("layout", 2, MACKO_LAYOUT_ROWS, MACKO_LAYOUT_TILES),
};
#undef ENUM_ARG
#undef ENUM_ARG3
#undef ENUM_ARG4

/* macko_check_enum with the argument's own name (the generic routines' xtype, ytype, compute_type...). */
static macko_status_t check_enum_named(const char *fn, int pos, macko_enum_arg which, const char *name, int value);

macko_status_t macko_check_enum(const char *fn, int pos, macko_enum_arg which, int value)
{
    return check_enum_named(fn, pos, which, enum_args[which].arg, value);
}

static macko_status_t check_enum_named(const char *fn, int pos, macko_enum_arg which, const char *name, int value)
{
    char list[160];
    size_t used = 0;
    const int n = enum_args[which].count;
    int i;
    for (i = 0; i < n; i++)
        if (value == enum_args[which].value[i])
            return MACKO_STATUS_SUCCESS;
    list[0] = '\0';
    for (i = 0; i < n && used < sizeof list; i++) {
        const int w = snprintf(list + used, sizeof list - used, "%s%s (%d)", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                               enum_args[which].name[i], enum_args[which].value[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is %d; it must be %s", name, value, list);
}

macko_status_t macko_check_size(const char *fn, int pos, const char *name, int64_t v)
{
    if (v < 0 || v > MACKO_MAX_ELEMS)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is %" PRId64 "; it must be in [0, 2^56]", name, v);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_min(const char *fn, int pos, const char *name, int64_t v, int64_t min)
{
    if (v < min)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is %" PRId64 "; it must be at least %" PRId64,
                          name, v, min);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_ld(const char *fn, int pos, const char *name, int64_t ld, const char *dim_name,
                              int64_t dim)
{
    const int64_t least = dim > 1 ? dim : 1;
    if (ld < least)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos,
                          "%s is %" PRId64 "; it must be at least max(1, %s) = %" PRId64, name, ld, dim_name, least);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_span(const char *fn, int pos, const char *formula, int64_t len, int64_t inc,
                                int64_t count, int64_t stride, size_t elem)
{
    int64_t a, b;
    if (len <= 0 || count <= 0)
        return MACKO_STATUS_SUCCESS;
    if (macko_mul_i64(len - 1, inc, &a) && macko_mul_i64(count - 1, stride, &b) && macko_add_i64(a, b, &a) &&
        macko_mul_i64(a, (int64_t)elem, &a))
        return MACKO_STATUS_SUCCESS;
    return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s overflows", formula);
}

macko_status_t macko_check_host_mat(const char *fn, int pos, macko_mat_t A)
{
    MACKO_CHECK(macko_check_ptr(fn, pos, "A", A));
    if (!A->has_host)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, pos,
                          "A has no host copy (released or created on the device; see macko_mat_download)");
    return MACKO_STATUS_SUCCESS;
}

const char *macko_kind_name(int kind)
{
    switch (kind) {
    case MACKO_KIND_MACKO: return "MACKO_KIND_MACKO";
    case MACKO_KIND_QUANT: return "MACKO_KIND_QUANT";
    case MACKO_KIND_NM: return "MACKO_KIND_NM";
    default: return "?";
    }
}

macko_status_t macko_check_kind(const char *fn, int pos, macko_mat_t A, macko_kind_t kind)
{
    if (A->kind != (int)kind)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos, "A is a %s matrix; this routine takes %s matrices only",
                          macko_kind_name(A->kind), macko_kind_name((int)kind));
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_kind2(const char *fn, int pos, macko_mat_t A, macko_kind_t kind1, macko_kind_t kind2)
{
    if (A->kind != (int)kind1 && A->kind != (int)kind2)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos,
                          "A is a %s matrix; this routine takes %s and %s matrices only", macko_kind_name(A->kind),
                          macko_kind_name((int)kind1), macko_kind_name((int)kind2));
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_dev_mat(const char *fn, int pos, macko_mat_t A, macko_handle_t handle, int type,
                                   int op_pos, macko_operation_t op, const struct macko_mat_s **M)
{
    MACKO_CHECK(macko_check_ptr(fn, pos, "A", A));
    if (type != MACKO_ANY_TYPE && (int)A->type != type)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "A has value type %d, this routine needs %d",
                          (int)A->type, type);
    if (!A->has_device)
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, pos, "A is not on the device (see macko_mat_upload)");
    if (A->device != handle->device)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "A is on device %d, the handle on device %d",
                          A->device, handle->device);
    if (op_pos > 0 && op == MACKO_OPERATION_TRANSPOSE && A->kind == MACKO_KIND_QUANT)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, op_pos, "op T is not supported on a QUANT matrix");
    if (op_pos > 0 && op == MACKO_OPERATION_TRANSPOSE && A->kind == MACKO_KIND_NM)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, op_pos, "op T is not supported on an N:M matrix");
    if (op_pos > 0 && op == MACKO_OPERATION_TRANSPOSE && (A->trans == NULL || !A->trans->has_device))
        return macko_fail(MACKO_STATUS_NOT_INITIALIZED, fn, op_pos,
                          "op T needs the transposed encoding: call macko_analysis with op T first");
    if (M != NULL)
        *M = op == MACKO_OPERATION_TRANSPOSE ? A->trans : A;
    return MACKO_STATUS_SUCCESS;
}

/* Device input only: p (needed) must be memory the device can read. */
static macko_status_t check_readable(const char *fn, int pos, const char *name, const void *p,
                                     const macko_device_data *dev)
{
    if (dev != NULL && !dev->readable(p, dev->device))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos, "%s is host memory the device cannot read", name);
    return MACKO_STATUS_SUCCESS;
}

/* An input array of `size` elements (host input is not checked for alignment: it is read bytewise). */
static macko_status_t check_input(const char *fn, int pos, const char *name, const void *p, const char *size_name,
                                  int64_t size, const macko_device_data *dev)
{
    MACKO_CHECK(macko_check_array(fn, pos, name, p, size_name, size, NULL, 0, 0));
    return size > 0 ? check_readable(fn, pos, name, p, dev) : MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_dense_array(const char *fn, int pos, int64_t rows, int64_t cols, int64_t total,
                                       const void *values, int64_t ld, macko_order_t order,
                                       const macko_device_data *dev)
{
    int64_t inner, outer, need;
    MACKO_CHECK(check_input(fn, pos, "values", values, "rows*cols", total, dev));
    MACKO_CHECK(macko_check_enum(fn, pos + 2, MACKO_ARG_ORDER, (int)order));
    inner = order == MACKO_ORDER_ROW ? cols : rows;
    outer = order == MACKO_ORDER_ROW ? rows : cols;
    MACKO_CHECK(macko_check_ld(fn, pos + 1, "ld", ld, order == MACKO_ORDER_ROW ? "cols" : "rows", inner));
    if (total > 0 &&
        (!macko_mul_i64(outer - 1, ld, &need) || !macko_add_i64(need, inner, &need) || need > MACKO_MAX_ELEMS))
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos + 1,
                          "ld is %" PRId64 "; the array it describes exceeds the 2^56 element limit", ld);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_dense_input(const char *fn, int pos, const macko_mat_t *A, int64_t rows, int64_t cols,
                                       macko_datatype_t type, const void *values, int64_t ld, macko_order_t order,
                                       const macko_device_data *dev)
{
    int64_t total;
    MACKO_CHECK(macko_check_ptr(fn, pos, "A", A));
    MACKO_CHECK(macko_check_size(fn, pos + 1, "rows", rows));
    MACKO_CHECK(macko_check_size(fn, pos + 2, "cols", cols));
    if (!macko_mul_i64(rows, cols, &total) || total > MACKO_MAX_ELEMS)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos + 2,
                          "rows*cols (%" PRId64 " x %" PRId64 ") exceeds the 2^56 element limit", rows, cols);
    MACKO_CHECK(macko_check_enum(fn, pos + 3, MACKO_ARG_TYPE, (int)type));
    return macko_check_dense_array(fn, pos + 4, rows, cols, total, values, ld, order, dev);
}

macko_status_t macko_check_csr_input(const char *fn, int pos, const macko_mat_t *A, int64_t rows, int64_t cols,
                                     int64_t nnz, const void *row_ptr, const void *col_ind, const void *values,
                                     macko_indextype_t index_type, macko_index_base_t index_base,
                                     macko_datatype_t type, const macko_device_data *dev)
{
    MACKO_CHECK(macko_check_ptr(fn, pos, "A", A));
    MACKO_CHECK(macko_check_size(fn, pos + 1, "rows", rows));
    MACKO_CHECK(macko_check_size(fn, pos + 2, "cols", cols));
    MACKO_CHECK(macko_check_size(fn, pos + 3, "nnz", nnz));
    MACKO_CHECK(macko_check_row_ptr(fn, pos + 4, row_ptr, 0));
    MACKO_CHECK(check_readable(fn, pos + 4, "row_ptr", row_ptr, dev));
    MACKO_CHECK(check_input(fn, pos + 5, "col_ind", col_ind, "nnz", nnz, dev));
    MACKO_CHECK(check_input(fn, pos + 6, "values", values, "nnz", nnz, dev));
    MACKO_CHECK(macko_check_enum(fn, pos + 7, MACKO_ARG_INDEX_TYPE, (int)index_type));
    MACKO_CHECK(macko_check_enum(fn, pos + 8, MACKO_ARG_INDEX_BASE, (int)index_base));
    MACKO_CHECK(macko_check_enum(fn, pos + 9, MACKO_ARG_TYPE, (int)type));
    if (index_type == MACKO_INDEX_32I && nnz > INT32_MAX)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos + 3,
                          "nnz is %" PRId64 "; 32-bit indices hold at most 2^31 - 1 entries", nnz);
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_fail_csr_row_ptr(const char *fn, int pos, macko_csr_rp_fault fault, int64_t r, int64_t v,
                                      int64_t prev, int64_t nnz, int64_t base)
{
    switch (fault) {
    case MACKO_CSR_RP_FIRST:
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos,
                          "row 0: row_ptr[0] is %" PRId64 "; it must be index_base = %" PRId64, v, base);
    case MACKO_CSR_RP_DECREASE:
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos,
                          "row %" PRId64 ": row_ptr decreases (row_ptr[%" PRId64 "] = %" PRId64 " < row_ptr[%" PRId64
                          "] = %" PRId64 ")",
                          r, r + 1, v, r, prev);
    case MACKO_CSR_RP_EXCEED:
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos,
                          "row %" PRId64 ": row_ptr[%" PRId64 "] = %" PRId64 " exceeds nnz + index_base = %" PRId64, r,
                          r + 1, v, nnz + base);
    case MACKO_CSR_RP_LAST:
        break;
    }
    return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos,
                      "row %" PRId64 ": row_ptr[rows] is %" PRId64 "; it must be nnz + index_base = %" PRId64, r, v,
                      nnz + base);
}

macko_status_t macko_fail_csr_col(const char *fn, int pos, int64_t r, int64_t k, int64_t c, int64_t prev,
                                  int64_t base, int64_t cols)
{
    if (c < base || c - base >= cols)
        return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos,
                          "row %" PRId64 ": col_ind[%" PRId64 "] = %" PRId64 " is outside [%" PRId64 ", %" PRId64 ")",
                          r, k, c, base, cols + base);
    return macko_fail(MACKO_STATUS_INVALID_VALUE, fn, pos,
                      "row %" PRId64 ": columns not strictly increasing (col_ind[%" PRId64 "] = %" PRId64
                      " after %" PRId64 ")",
                      r, k, c, prev + base);
}

/* macko.h's table of supported combinations (A, x, y, compute), one row per macko_combo. */
static const struct {
    macko_datatype_t a, x, y, c;
} combos[MACKO_COMBOS] = {
    [MACKO_COMBO_H] = {MACKO_R_16F, MACKO_R_16F, MACKO_R_16F, MACKO_R_32F},
    [MACKO_COMBO_S] = {MACKO_R_32F, MACKO_R_32F, MACKO_R_32F, MACKO_R_32F},
    [MACKO_COMBO_B] = {MACKO_R_16BF, MACKO_R_16BF, MACKO_R_16BF, MACKO_R_32F},
    [MACKO_COMBO_D] = {MACKO_R_64F, MACKO_R_64F, MACKO_R_64F, MACKO_R_64F},
    [MACKO_COMBO_HS] = {MACKO_R_16F, MACKO_R_32F, MACKO_R_32F, MACKO_R_32F},
    [MACKO_COMBO_BS] = {MACKO_R_16BF, MACKO_R_32F, MACKO_R_32F, MACKO_R_32F},
};

static const char *type_name(int t)
{
    switch (t) {
    case MACKO_R_16F: return "MACKO_R_16F";
    case MACKO_R_16BF: return "MACKO_R_16BF";
    case MACKO_R_32F: return "MACKO_R_32F";
    case MACKO_R_64F: return "MACKO_R_64F";
    default: return "?";
    }
}

/* The rows matching a, and x / y / c where given (-1: any). */
static int combo_match(macko_datatype_t a, int x, int y, int c)
{
    int i;
    for (i = 0; i < MACKO_COMBOS; i++)
        if (combos[i].a == a && (x < 0 || (int)combos[i].x == x) && (y < 0 || (int)combos[i].y == y) &&
            (c < 0 || (int)combos[i].c == c))
            return i;
    return -1;
}

/* NOT_SUPPORTED for argument `name` = t at pos: the values the supported rows allow there, given what is fixed. */
static macko_status_t combo_fail(const char *fn, int pos, const char *name, int t, macko_datatype_t a, int x, int y,
                                 int which)
{
    char list[160];
    size_t used = 0;
    int i;
    list[0] = '\0';
    for (i = 0; i < MACKO_COMBOS; i++) {
        int v, w, j, seen = 0;
        if (combos[i].a != a || (which > 0 && (int)combos[i].x != x) || (which > 1 && (int)combos[i].y != y))
            continue;
        v = which == 0 ? (int)combos[i].x : which == 1 ? (int)combos[i].y : (int)combos[i].c;
        for (j = 0; j < i; j++)
            if (combos[j].a == a && (which < 1 || (int)combos[j].x == x) && (which < 2 || (int)combos[j].y == y) &&
                (which == 0 ? (int)combos[j].x : which == 1 ? (int)combos[j].y : (int)combos[j].c) == v)
                seen = 1;
        if (seen)
            continue;
        w = snprintf(list + used, sizeof list - used, "%s%s", used > 0 ? ", " : "", type_name(v));
        if (w < 0 || (size_t)w >= sizeof list - used)
            break;
        used += (size_t)w;
    }
    return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos, "%s is %s with an %s matrix; supported: %s", name,
                      type_name(t), type_name(a), list);
}

macko_status_t macko_check_combo(const char *fn, macko_datatype_t a, int x_pos, const char *x_name, int x, int y_pos,
                                 const char *y_name, int y, int c_pos, int c, int *combo)
{
    MACKO_CHECK(check_enum_named(fn, x_pos, MACKO_ARG_TYPE, x_name, x));
    if (combo_match(a, x, -1, -1) < 0)
        return combo_fail(fn, x_pos, x_name, x, a, x, y, 0);
    MACKO_CHECK(check_enum_named(fn, y_pos, MACKO_ARG_TYPE, y_name, y));
    if (combo_match(a, x, y, -1) < 0)
        return combo_fail(fn, y_pos, y_name, y, a, x, y, 1);
    MACKO_CHECK(check_enum_named(fn, c_pos, MACKO_ARG_TYPE, "compute_type", c));
    *combo = combo_match(a, x, y, c);
    if (*combo < 0)
        return combo_fail(fn, c_pos, "compute_type", c, a, x, y, 2);
    return MACKO_STATUS_SUCCESS;
}

int macko_combo_of_type(macko_datatype_t type) { return combo_match(type, (int)type, (int)type, -1); }

size_t macko_combo_xelem(int combo) { return macko_type_size(combos[combo].x); }

macko_status_t macko_check_tiles_combo(const char *fn, int pos, const struct macko_mat_s *A, macko_operation_t op,
                                       int combo)
{
    if (A->kind == MACKO_KIND_MACKO && A->has_device && A->dev_layout == MACKO_LAYOUT_TILES &&
        op == MACKO_OPERATION_NON_TRANSPOSE &&
        combo != MACKO_COMBO_H && combo != MACKO_COMBO_B)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos,
                          "A is on the device in the tile layout, which takes vectors of A's own type only");
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_quant_combo(const char *fn, int pos, const struct macko_mat_s *A, int combo)
{
    if (A->kind == MACKO_KIND_QUANT && combo != MACKO_COMBO_H)
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos,
                          "A is a QUANT matrix, which takes fp16 vectors with fp32 compute only");
    return MACKO_STATUS_SUCCESS;
}

macko_status_t macko_check_nm_combo(const char *fn, int pos, const struct macko_mat_s *A, int combo)
{
    if (A->kind == MACKO_KIND_NM && combo != macko_combo_of_type(A->type))
        return macko_fail(MACKO_STATUS_NOT_SUPPORTED, fn, pos,
                          "A is an N:M matrix, which takes vectors of its own type %s only", type_name((int)A->type));
    return MACKO_STATUS_SUCCESS;
}
