"""The compute routines: y = alpha*op(A)*x + beta*y on device vectors, C = alpha*op(A)*B + beta*C on device
matrices."""

import ctypes
import numbers

import numpy as np

from . import _lib
from ._device import device_array, device_vector
from ._enums import DataType, Operation, PointerMode, datatype_of, operation

_ROUTINE = {DataType.R_16F: "macko_Hspmv", DataType.R_32F: "macko_Sspmv"}
_MM_ROUTINE = {DataType.R_16F: "macko_Hspmm", DataType.R_32F: "macko_Sspmm"}


def _scalar(value, name, mode):
    """alpha/beta as the C routine wants it in this pointer mode -> (ctypes argument, keep-alive)."""
    if mode == PointerMode.HOST:
        if not isinstance(value, numbers.Real) and not (isinstance(value, np.ndarray) and value.size == 1):
            raise ValueError("%s must be a real number in PointerMode.HOST, not %s" % (name, type(value).__name__))
        f = ctypes.c_float(float(value))
        return ctypes.byref(f), f
    if isinstance(value, numbers.Number):
        raise ValueError("%s must be a float32 device scalar in PointerMode.DEVICE, not a Python number" % name)
    d = device_array(value, name)
    if d.dtype != np.float32 or int(np.prod(d.shape)) < 1:
        raise ValueError("%s must be a float32 device array with at least one element" % name)
    return ctypes.c_void_p(d.ptr), value


def spmv(handle, A, x, y, alpha=1.0, beta=0.0, op="N"):
    """y = alpha*op(A)*x + beta*y on the GPU (macko_Hspmv for a float16 matrix, macko_Sspmv for float32).

    x and y: 1-D device vectors of the matrix's dtype -- torch CUDA tensors or objects exposing
    __cuda_array_interface__ (CuPy, Numba), any positive stride. For torch tensors and CuPy arrays the handle's
    stream is set to the producer's current stream, so the call is ordered with the surrounding work; for other
    objects the handle's stream is used as it is. alpha/beta: numbers in PointerMode.HOST, float32 device scalars
    in PointerMode.DEVICE. op: 'N' or 'T' ('T' needs A.analysis(handle, 'T') first). Returns y.

    Wrong dtypes, lengths or shapes raise ValueError before the library is called; the library's own failures raise
    MackoError. The call is asynchronous: synchronise the stream before reading y on the host.
    """
    opv = operation(op)
    rows, cols, _, dt = A.info
    n_in, n_out = (cols, rows) if opv == Operation.NON_TRANSPOSE else (rows, cols)
    xp, incx, xs = device_vector(x, "x", n_in, dt)
    yp, incy, ys = device_vector(y, "y", n_out, dt, writable=True)
    mode = handle.pointer_mode
    a_arg, a_keep = _scalar(alpha, "alpha", mode)
    b_arg, b_keep = _scalar(beta, "beta", mode)
    stream = ys if ys is not None else xs
    if stream is not None:
        handle.stream = stream
    _lib.call(_ROUTINE[datatype_of(dt)], handle, int(opv), a_arg, A, ctypes.c_void_p(xp), ctypes.c_int64(incx),
              b_arg, ctypes.c_void_p(yp), ctypes.c_int64(incy))
    del a_keep, b_keep
    return y


def _device_matrix(obj, name, rows, cols, dtype, writable=False):
    """A column-major rows x cols device matrix of dtype -> (ptr, ld, stream); ValueError otherwise."""
    arr = device_array(obj, name)
    if len(arr.shape) != 2:
        raise ValueError("%s must be 2-D, got shape %s" % (name, arr.shape))
    if arr.dtype != np.dtype(dtype):
        raise ValueError("%s must hold %s values to match the matrix, not %s"
                         % (name, np.dtype(dtype).name, arr.dtype.name))
    if tuple(arr.shape) != (rows, cols):
        raise ValueError("%s has shape %s, the operation needs (%d, %d)" % (name, tuple(arr.shape), rows, cols))
    if rows > 1 and cols > 0 and arr.strides[0] != 1:
        raise ValueError("%s must be column-major (stride 1 along its first dimension), got strides %s; for a "
                         "row-major batch X of shape (n, %d) pass X.T" % (name, arr.strides, rows))
    ld = arr.strides[1] if cols > 1 else max(rows, 1)
    if ld < max(rows, 1):
        raise ValueError("%s: its columns overlap (stride %d along the second dimension, %d rows)" % (name, ld, rows))
    if writable and arr.readonly:
        raise ValueError("%s is read-only" % name)
    return arr.ptr, ld, arr.stream


def spmm(handle, A, B, C, alpha=1.0, beta=0.0, op="N"):
    """C = alpha*op(A)@B + beta*C on the GPU for n columns (macko_Hspmm for a float16 matrix, macko_Sspmm for
    float32); one call for a whole batch of vectors, fast for n = 1..16.

    B (k x n) and C (m x n), k and m the columns and rows of op(A): 2-D column-major device matrices of the matrix's
    dtype (stride 1 along the first dimension, any leading dimension >= the rows). A row-major torch batch X of
    shape (n, k) (one vector per row, e.g. activations) is passed as X.T. C must not overlap B. alpha/beta and op as
    in spmv; streams as in spmv (the handle's stream is set to the producer's current stream). Returns C.
    """
    opv = operation(op)
    rows, cols, _, dt = A.info
    k, m = (cols, rows) if opv == Operation.NON_TRANSPOSE else (rows, cols)
    barr = device_array(B, "B")
    n = int(barr.shape[1]) if len(barr.shape) == 2 else -1
    bp, ldb, bs = _device_matrix(B, "B", k, n, dt)
    cp, ldc, cs = _device_matrix(C, "C", m, n, dt, writable=True)
    mode = handle.pointer_mode
    a_arg, a_keep = _scalar(alpha, "alpha", mode)
    b_arg, b_keep = _scalar(beta, "beta", mode)
    stream = cs if cs is not None else bs
    if stream is not None:
        handle.stream = stream
    _lib.call(_MM_ROUTINE[datatype_of(dt)], handle, int(opv), ctypes.c_int64(n), a_arg, A, ctypes.c_void_p(bp),
              ctypes.c_int64(ldb), b_arg, ctypes.c_void_p(cp), ctypes.c_int64(ldc))
    del a_keep, b_keep
    return C
