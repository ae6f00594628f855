"""The enumerations of macko.h, same numbers."""

import enum

import numpy as np


class Status(enum.IntEnum):
    SUCCESS = 0
    NOT_INITIALIZED = 1
    ALLOC_FAILED = 2
    INVALID_VALUE = 3
    ARCH_MISMATCH = 4
    EXECUTION_FAILED = 6
    INTERNAL_ERROR = 7
    NOT_SUPPORTED = 10
    INSUFFICIENT_RESOURCES = 11
    IO_ERROR = 12
    FORMAT_ERROR = 100


class DataType(enum.IntEnum):
    R_32F = 0
    R_64F = 1
    R_16F = 2
    R_16BF = 14


class IndexType(enum.IntEnum):
    INDEX_32I = 2
    INDEX_64I = 3


class IndexBase(enum.IntEnum):
    ZERO = 0
    ONE = 1


class Order(enum.IntEnum):
    COL = 1
    ROW = 2


class Operation(enum.IntEnum):
    NON_TRANSPOSE = 0
    TRANSPOSE = 1


class PointerMode(enum.IntEnum):
    HOST = 0
    DEVICE = 1


class Kind(enum.IntEnum):
    """The encoding a matrix holds (macko_kind_t): MACKO (values + 4-bit column deltas, FORMAT.md), QUANT (3-bit
    weights in 16 x 16 tiles plus fp16 outliers, FORMAT_QUANT.md) or NM (vector-wise N:M sparsity: N kept positions
    in every window of M columns, shared by V consecutive rows, FORMAT_NM.md)."""
    MACKO = 0
    QUANT = 1
    NM = 2


class Layout(enum.IntEnum):
    """The device layout of the next upload (macko_layout_t): ROWS (the MACKO rows, the default) or TILES (16 x 16
    bitmap tiles for the tensor cores; float16 and bfloat16 MACKO matrices only; FORMAT.md, "Tile layout")."""
    ROWS = 0
    TILES = 1


class OutlierRule(enum.IntEnum):
    """How macko_mat_create_quant_dense_host picks the outliers (macko_outlier_rule_t)."""
    NONE = 0
    FRACTION = 1
    THRESHOLD = 2


# numpy has no bfloat16: bf16 values live on the host as their uint16 bit patterns (the upper half of a float32).
# The arrays macko hands out for a bf16 matrix carry this dtype, a uint16 marked in its metadata, so that they go
# back in without a dtype= argument; it compares equal to np.uint16.
bfloat16 = np.dtype(np.uint16, metadata={"macko": "bfloat16"})

_NP_TO_TYPE = {np.dtype(np.float16): DataType.R_16F, np.dtype(np.float32): DataType.R_32F,
               np.dtype(np.float64): DataType.R_64F}
_TYPE_TO_NP = {v: k for k, v in _NP_TO_TYPE.items()}
_TYPE_TO_NP[DataType.R_16BF] = bfloat16
_NAMES = {DataType.R_16F: "float16", DataType.R_32F: "float32", DataType.R_64F: "float64",
          DataType.R_16BF: "bfloat16"}
_BF16_NAMES = ("bfloat16", "bf16", "torch.bfloat16")


def is_bfloat16(dtype):
    """Whether dtype names bfloat16: "bfloat16"/"bf16", macko.bfloat16, torch.bfloat16, or a numpy dtype called
    bfloat16 (ml_dtypes)."""
    if isinstance(dtype, str):
        return dtype.strip().lower() in _BF16_NAMES
    if isinstance(dtype, np.dtype):
        return dtype.name == "bfloat16" or (dtype.metadata or {}).get("macko") == "bfloat16"
    if type(dtype).__module__.startswith("torch"):
        return str(dtype) == "torch.bfloat16"
    return getattr(dtype, "__name__", None) == "bfloat16"  # a numpy scalar type such as ml_dtypes.bfloat16


def datatype_of(dtype):
    """DataType for float16, float32, float64 (numpy dtypes or names) or bfloat16 (see is_bfloat16); ValueError for
    anything else (a plain uint16 is not bfloat16 unless said so)."""
    if isinstance(dtype, DataType):
        return dtype
    if is_bfloat16(dtype):
        return DataType.R_16BF
    try:
        return _NP_TO_TYPE[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise ValueError("macko stores float16, bfloat16, float32 or float64 values, not %s" % (dtype,)) from None


def numpy_dtype(datatype):
    """The numpy dtype of a value type's host arrays (macko.bfloat16, uint16 bit patterns, for R_16BF)."""
    return _TYPE_TO_NP[DataType(datatype)]


def type_name(datatype):
    return _NAMES[DataType(datatype)]


# ---------------------------------------------------------------- bfloat16 on the host
def bf16_from_float(a):
    """bfloat16 bit patterns (macko.bfloat16 array) of float values, rounded to nearest even; NaN stays NaN (quiet),
    overflow gives Inf, as a hardware conversion does. float64 input is rounded once (not through float32 twice)."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        raise ValueError("bfloat16 conversion takes float16/32/64 values, not %s" % a.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        f = a.astype(np.float32)
    u = f.view(np.uint32)
    rne = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    if a.dtype == np.float64:
        # Rounding to float32 first can land exactly on a bf16 halfway point that the double was not on: then the
        # double's side of the halfway point decides (away from zero when it was beyond it).
        with np.errstate(invalid="ignore", over="ignore"):
            tie = ((u & np.uint32(0xFFFF)) == np.uint32(0x8000)) & (a != f) & np.isfinite(f)
            beyond = np.abs(a) > np.abs(f.astype(np.float64))
        trunc = u >> np.uint32(16)
        rne = np.where(tie, np.where(beyond, trunc + np.uint32(1), trunc), rne)
    nan = np.isnan(f)
    out = np.where(nan, (u >> np.uint32(16)) | np.uint32(0x0040), rne).astype(np.uint16)
    return out.view(bfloat16) if out.ndim else np.asarray(out, dtype=bfloat16)


def bf16_to_float32(bits):
    """float32 values of bfloat16 bit patterns (exact)."""
    b = np.asarray(bits)
    if b.dtype.itemsize != 2 or (b.dtype.kind not in "ui" and b.dtype.name != "bfloat16"):
        raise ValueError("bfloat16 bit patterns are 16-bit, not %s" % b.dtype)
    return (b.view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def convert_values(values, src, dst):
    """values (host array of value type src) as value type dst: numpy's rounding for float16/32/64, bf16_from_float
    for bfloat16; bfloat16 sources are widened exactly first."""
    src, dst = DataType(src), DataType(dst)
    v = np.asarray(values)
    if src == dst:
        return v.view(numpy_dtype(dst)) if dst == DataType.R_16BF else v.astype(numpy_dtype(dst), copy=True)
    if src == DataType.R_16BF:
        v = bf16_to_float32(v)
    if dst == DataType.R_16BF:
        return bf16_from_float(v)
    with np.errstate(over="ignore"):
        return v.astype(numpy_dtype(dst))


def layout(value):
    """'rows'/'tiles' (any case), a Layout, or its number -> Layout."""
    if isinstance(value, str):
        key = value.strip().upper()
        if key in Layout.__members__:
            return Layout[key]
        raise ValueError("layout must be 'rows' or 'tiles', not %r" % (value,))
    try:
        return Layout(int(value))
    except (ValueError, TypeError):
        raise ValueError("layout must be 'rows' or 'tiles', not %r" % (value,)) from None


def operation(op):
    """'N'/'T' (any case), an Operation, or its number -> Operation."""
    if isinstance(op, str):
        key = op.strip().upper()
        if key in ("N", "NON_TRANSPOSE"):
            return Operation.NON_TRANSPOSE
        if key in ("T", "TRANSPOSE"):
            return Operation.TRANSPOSE
        raise ValueError("op must be 'N' or 'T', not %r" % (op,))
    try:
        return Operation(int(op))
    except (ValueError, TypeError):
        raise ValueError("op must be 'N' or 'T', not %r" % (op,)) from None
