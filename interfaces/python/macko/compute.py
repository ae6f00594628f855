"""The compute routines: y = alpha*op(A)*x + beta*y on device vectors, C = alpha*op(A)*B + beta*C on device
matrices.

spmv/spmm call the BLAS-letter routine of the matrix's type (macko_Hspmv, _Sspmv, _Dspmv, ...) when x and y have
that type, and the generic macko_spmv_ex / macko_spmm_ex otherwise (bf16 matrices, or x/y of another type than A);
spmv_ex/spmm_ex always call the generic routine. The combinations are macko.h's (SUPPORTED); a QUANT matrix takes
float16 vectors only, an N:M matrix vectors of its own type only."""

import ctypes
import numbers

import numpy as np

from . import _lib
from ._device import device_array, device_vector
from ._enums import (DataType, Kind, Operation, PointerMode, datatype_of, is_bfloat16, numpy_dtype, operation,
                     type_name)

_F16, _BF16, _F32, _F64 = DataType.R_16F, DataType.R_16BF, DataType.R_32F, DataType.R_64F

# (A, x, y) -> compute type: every combination macko_spmv_ex / macko_spmm_ex take (macko.h lists the same).
SUPPORTED = {
    (_F16, _F16, _F16): _F32,
    (_BF16, _BF16, _BF16): _F32,
    (_F32, _F32, _F32): _F32,
    (_F64, _F64, _F64): _F64,
    (_F16, _F32, _F32): _F32,
    (_BF16, _F32, _F32): _F32,
}
_LETTER = {_F16: "H", _F32: "S", _F64: "D"}


def _operand_type(dtype, name, given):
    """The value type of a device operand of numpy dtype `dtype`: its own, or `given` (xtype=, ytype=), which must
    fit it (bfloat16: macko.bfloat16 or 16-bit integers holding the bit patterns)."""
    if given is None:
        try:
            return datatype_of(dtype)
        except ValueError:
            raise ValueError("%s holds %s, not a macko value type (float16, bfloat16, float32, float64; bf16 bit "
                             "patterns in 16-bit integers need %stype='bfloat16')" % (name, dtype, name[0].lower()))
    t = datatype_of(given)
    if t == _BF16:
        ok = is_bfloat16(dtype) or dtype in (np.dtype(np.uint16), np.dtype(np.int16))
    else:
        ok = dtype == numpy_dtype(t) and not is_bfloat16(dtype)
    if not ok:
        raise ValueError("%s holds %s, not %s values" % (name, dtype, type_name(t)))
    return t


def _combination(A, at, xt, yt, compute_type, x_name, y_name):
    """The compute type of (A, x, y): ValueError naming the supported combinations when there is none."""
    if A.kind == Kind.QUANT and (xt, yt) != (_F16, _F16):
        raise ValueError("%s %s and %s %s with a QUANT matrix: it computes with float16 %s and %s only (fp32 "
                         "accumulation)" % (x_name, type_name(xt), y_name, type_name(yt), x_name, y_name))
    if A.kind == Kind.NM and (xt, yt) != (at, at):
        raise ValueError("%s %s and %s %s with an N:M %s matrix: it computes with %s and %s of its own type only "
                         "(%s)" % (x_name, type_name(xt), y_name, type_name(yt), type_name(at), x_name, y_name,
                                   type_name(at)))
    want = SUPPORTED.get((at, xt, yt))
    if want is None:
        ok = ["%s/%s" % (type_name(k[1]), type_name(k[2])) for k in SUPPORTED if k[0] == at]
        raise ValueError("%s %s and %s %s with a %s matrix: not a combination macko supports (%s/%s for a %s "
                         "matrix: %s)" % (x_name, type_name(xt), y_name, type_name(yt), type_name(at), x_name, y_name,
                                          type_name(at), ", ".join(ok)))
    if compute_type is not None and datatype_of(compute_type) != want:
        raise ValueError("compute_type %s: a %s matrix with %s %s and %s %s computes in %s"
                         % (type_name(datatype_of(compute_type)), type_name(at), x_name, type_name(xt), y_name,
                            type_name(yt), type_name(want)))
    return want


def _scalar(value, name, mode, compute):
    """alpha/beta as the C routine wants it in this pointer mode (a float, or a double when the compute type is
    float64) -> (ctypes argument, keep-alive)."""
    ctype, npt = (ctypes.c_double, np.float64) if compute == _F64 else (ctypes.c_float, np.float32)
    if mode == PointerMode.HOST:
        if not isinstance(value, numbers.Real) and not (isinstance(value, np.ndarray) and value.size == 1):
            raise ValueError("%s must be a real number in PointerMode.HOST, not %s" % (name, type(value).__name__))
        f = ctype(float(value))
        return ctypes.byref(f), f
    if isinstance(value, numbers.Number):
        raise ValueError("%s must be a %s device scalar in PointerMode.DEVICE, not a Python number"
                         % (name, np.dtype(npt).name))
    d = device_array(value, name)
    if d.dtype != npt or is_bfloat16(d.dtype) or int(np.prod(d.shape)) < 1:
        raise ValueError("%s must be a %s device array with at least one element (the compute type's)"
                         % (name, np.dtype(npt).name))
    return ctypes.c_void_p(d.ptr), value


def _spmv(handle, A, x, y, alpha, beta, op, xtype, ytype, compute_type, generic):
    opv = operation(op)
    rows, cols, _, _ = A.info
    at = A.datatype
    n_in, n_out = (cols, rows) if opv == Operation.NON_TRANSPOSE else (rows, cols)
    xt = _operand_type(device_array(x, "x").dtype, "x", xtype)
    yt = _operand_type(device_array(y, "y").dtype, "y", ytype)
    compute = _combination(A, at, xt, yt, compute_type, "x", "y")
    xp, incx, xs = device_vector(x, "x", n_in, None)
    yp, incy, ys = device_vector(y, "y", n_out, None, writable=True)
    mode = handle.pointer_mode
    a_arg, a_keep = _scalar(alpha, "alpha", mode, compute)
    b_arg, b_keep = _scalar(beta, "beta", mode, compute)
    stream = ys if ys is not None else xs
    if stream is not None:
        handle.stream = stream
    if not generic and xt == at and yt == at and at in _LETTER:
        _lib.call("macko_%sspmv" % _LETTER[at], handle, int(opv), a_arg, A, ctypes.c_void_p(xp),
                  ctypes.c_int64(incx), b_arg, ctypes.c_void_p(yp), ctypes.c_int64(incy))
    else:
        _lib.call("macko_spmv_ex", handle, int(opv), a_arg, A, ctypes.c_void_p(xp), int(xt), ctypes.c_int64(incx),
                  b_arg, ctypes.c_void_p(yp), int(yt), ctypes.c_int64(incy), int(compute))
    del a_keep, b_keep
    return y


def spmv(handle, A, x, y, alpha=1.0, beta=0.0, op="N", *, xtype=None, ytype=None, compute_type=None):
    """y = alpha*op(A)*x + beta*y on the GPU: macko_Hspmv / _Sspmv / _Dspmv when x and y have the matrix's type,
    macko_spmv_ex otherwise (a bfloat16 matrix; float32 x and y with a float16 or bfloat16 matrix).

    x and y: 1-D device vectors -- torch CUDA tensors (bfloat16 too) or objects exposing __cuda_array_interface__
    (CuPy, Numba), any positive stride -- of one of the combinations in SUPPORTED (A, x, y): each of float16,
    bfloat16, float32, float64 with itself, and float32 x and y with a float16 or bfloat16 matrix. xtype/ytype name
    the type where the dtype cannot (bf16 bit patterns in a uint16 array: xtype="bfloat16"). compute_type: None or
    the combination's own (float64 for float64, else float32). For torch tensors and CuPy arrays the handle's stream
    is set to the producer's current stream, so the call is ordered with the surrounding work; for other objects
    the handle's stream is used as it is. alpha/beta: numbers in PointerMode.HOST; in PointerMode.DEVICE device
    scalars of the compute type (float32, or float64 for a float64 matrix). op: 'N' or 'T' ('T' needs
    A.analysis(handle, 'T') first). A QUANT matrix (A.kind) takes float16 x and y and op 'N' only; an N:M matrix x
    and y of its own type and op 'N' only. Returns y.

    Wrong dtypes, combinations, lengths or shapes raise ValueError before the library is called; the library's own
    failures raise MackoError. The call is asynchronous: synchronise the stream before reading y on the host.
    """
    return _spmv(handle, A, x, y, alpha, beta, op, xtype, ytype, compute_type, False)


def spmv_ex(handle, A, x, y, alpha=1.0, beta=0.0, op="N", *, xtype=None, ytype=None, compute_type=None):
    """spmv through the generic macko_spmv_ex whatever the types (the same results as the BLAS-letter routine where
    both exist)."""
    return _spmv(handle, A, x, y, alpha, beta, op, xtype, ytype, compute_type, True)


def _device_matrix(obj, name, rows, cols, writable=False):
    """A column-major rows x cols device matrix -> (ptr, ld, stream); ValueError otherwise."""
    arr = device_array(obj, name)
    if len(arr.shape) != 2:
        raise ValueError("%s must be 2-D, got shape %s" % (name, arr.shape))
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


def _spmm(handle, A, B, C, alpha, beta, op, btype, ctype, compute_type, generic):
    opv = operation(op)
    rows, cols, _, _ = A.info
    at = A.datatype
    k, m = (cols, rows) if opv == Operation.NON_TRANSPOSE else (rows, cols)
    barr = device_array(B, "B")
    carr = device_array(C, "C")
    for arr, name in ((barr, "B"), (carr, "C")):
        if len(arr.shape) != 2:
            raise ValueError("%s must be 2-D, got shape %s" % (name, arr.shape))
    bt = _operand_type(barr.dtype, "B", btype)
    ct = _operand_type(carr.dtype, "C", ctype)
    compute = _combination(A, at, bt, ct, compute_type, "B", "C")
    n = int(barr.shape[1])
    bp, ldb, bs = _device_matrix(B, "B", k, n)
    cp, ldc, cs = _device_matrix(C, "C", m, n, writable=True)
    mode = handle.pointer_mode
    a_arg, a_keep = _scalar(alpha, "alpha", mode, compute)
    b_arg, b_keep = _scalar(beta, "beta", mode, compute)
    stream = cs if cs is not None else bs
    if stream is not None:
        handle.stream = stream
    if not generic and bt == at and ct == at and at in _LETTER:
        _lib.call("macko_%sspmm" % _LETTER[at], handle, int(opv), ctypes.c_int64(n), a_arg, A, ctypes.c_void_p(bp),
                  ctypes.c_int64(ldb), b_arg, ctypes.c_void_p(cp), ctypes.c_int64(ldc))
    else:
        _lib.call("macko_spmm_ex", handle, int(opv), ctypes.c_int64(n), a_arg, A, ctypes.c_void_p(bp), int(bt),
                  ctypes.c_int64(ldb), b_arg, ctypes.c_void_p(cp), int(ct), ctypes.c_int64(ldc), int(compute))
    del a_keep, b_keep
    return C


def spmm(handle, A, B, C, alpha=1.0, beta=0.0, op="N", *, btype=None, ctype=None, compute_type=None):
    """C = alpha*op(A)@B + beta*C on the GPU for n columns (macko_Hspmm / _Sspmm / _Dspmm when B and C have the
    matrix's type, macko_spmm_ex otherwise); one call for a whole batch of vectors, fast for n = 1..16.

    B (k x n) and C (m x n), k and m the columns and rows of op(A): 2-D column-major device matrices (stride 1 along
    the first dimension, any leading dimension >= the rows) of a combination in SUPPORTED, as spmv's x and y
    (btype/ctype as spmv's xtype/ytype). A row-major torch batch X of shape (n, k) (one vector per row, e.g.
    activations) is passed as X.T. C must not overlap B. alpha/beta, op and compute_type as in spmv; streams as in
    spmv (the handle's stream is set to the producer's current stream). Returns C.
    """
    return _spmm(handle, A, B, C, alpha, beta, op, btype, ctype, compute_type, False)


def spmm_ex(handle, A, B, C, alpha=1.0, beta=0.0, op="N", *, btype=None, ctype=None, compute_type=None):
    """spmm through the generic macko_spmm_ex whatever the types."""
    return _spmm(handle, A, B, C, alpha, beta, op, btype, ctype, compute_type, True)
