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
    R_16F = 2


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


_NP_TO_TYPE = {np.dtype(np.float16): DataType.R_16F, np.dtype(np.float32): DataType.R_32F}
_TYPE_TO_NP = {v: k for k, v in _NP_TO_TYPE.items()}


def datatype_of(dtype):
    """DataType for a numpy dtype (float16 or float32); ValueError for anything else."""
    try:
        return _NP_TO_TYPE[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise ValueError("macko stores float16 or float32 values, not %s" % (dtype,)) from None


def numpy_dtype(datatype):
    return _TYPE_TO_NP[DataType(datatype)]


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
