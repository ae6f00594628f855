"""The compute routines: y = alpha*op(A)*x + beta*y on device vectors."""

import ctypes
import numbers

import numpy as np

from . import _lib
from ._device import device_array, device_vector
from ._enums import DataType, Operation, PointerMode, datatype_of, operation

_ROUTINE = {DataType.R_16F: "macko_Hspmv", DataType.R_32F: "macko_Sspmv"}


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
