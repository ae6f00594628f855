"""The N:M kind (lapack_style_docs/FORMAT_NM.md) in Python: the Matrix methods that make and read N:M matrices (a
mixin of Matrix, kept here so that matrix.py stays readable), the checks of the importer's arrays, and
macko.prune_nm, which prunes a dense weight to an N:M pattern by magnitude."""

import collections
import ctypes
import numbers

import numpy as np

from . import _lib
from ._device import _is_torch_tensor
from ._enums import DataType, bf16_to_float32, datatype_of, is_bfloat16
from ._quant import _integers, c_int64_arg, c_int_arg

NMPattern = collections.namedtuple("NMPattern", "n m v")
NMPattern.__doc__ = """The pattern of an N:M matrix: n positions kept in every window of m consecutive columns, the
same positions for v consecutive rows."""
NMArrays = collections.namedtuple("NMArrays", "values positions")
NMArrays.__doc__ = """The host arrays of an N:M matrix (copies), as FORMAT_NM.md lays them out: values, shape (rows,
W * n) of the matrix's dtype (value j of window w of row r at values[r, w * n + j]), and positions, uint8 of shape
(G, W * n) (the kept position, 0..m-1 inside the window, of slot j of window w for row group g at
positions[g, w * n + j]; column w * m + position), with W = ceil(cols / m) windows and G = ceil(rows / v) row groups.
Matrix.from_nm_arrays takes them back."""

#: The patterns the library holds: M in SUPPORTED_M, V in SUPPORTED_V, 1 <= N <= M.
SUPPORTED_M = (4, 8, 16, 32)
SUPPORTED_V = (1, 2, 4, 8, 16, 32)

_I64 = ctypes.c_int64


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


def supported(n, m, v):
    """Whether (n, m, v) is a pattern the library holds."""
    return m in SUPPORTED_M and v in SUPPORTED_V and 1 <= n <= m


def sizes(rows, cols, n, m, v):
    """(windows W, row groups G, kept values per row W * n) of a rows x cols matrix with pattern (n, m, v)."""
    w, g = -(-cols // m), -(-rows // v)
    return w, g, w * n


def _pattern_args(n, m, v):
    return c_int_arg(n, "n"), c_int_arg(m, "m"), c_int_arg(v, "v")


def _is_device_array(a):
    if _is_torch_tensor(a):
        return bool(a.is_cuda)
    return hasattr(a, "__cuda_array_interface__")


def import_args(rows, cols, n, m, v, values, positions, dtype):
    """The arguments of macko_mat_create_nm_host after A: normalised, and checked for length where the pattern is
    one the library holds (the C routine takes no lengths: it reads as many elements as the pattern implies; an
    unsupported pattern is refused by the library before it reads anything)."""
    from .matrix import _as_values

    rows, cols = c_int64_arg(rows, "rows"), c_int64_arg(cols, "cols")
    n, m, v = _pattern_args(n, m, v)
    values = np.ascontiguousarray(_as_values(values, dtype, "values")).reshape(-1)
    positions = _integers(positions, "positions", 1, np.uint8)
    if rows >= 0 and cols >= 0 and supported(n, m, v):
        _, g, kept = sizes(rows, cols, n, m, v)
        if values.shape[0] != rows * kept:
            raise ValueError("values has %d elements; a %dx%d N:M matrix with n = %d, m = %d has rows * ceil(cols/m) "
                             "* n = %d" % (values.shape[0], rows, cols, n, m, rows * kept))
        if positions.shape[0] != g * kept:
            raise ValueError("positions has %d elements; a %dx%d N:M matrix with n = %d, m = %d, v = %d has "
                             "ceil(rows/v) * ceil(cols/m) * n = %d" % (positions.shape[0], rows, cols, n, m, v,
                                                                       g * kept))
    return (_I64(rows), _I64(cols), int(datatype_of(values.dtype)), n, m, v, _ptr(values), _ptr(positions)), \
        (values, positions)


class NMMethods:
    """The N:M methods of macko.Matrix."""

    _nm_pattern = None

    @classmethod
    def from_dense_nm(cls, a, n=0, m=0, v=0, *, dtype=None, handle=None):
        """Encodes a dense weight as an N:M matrix (FORMAT_NM.md) with the pattern (n, m, v): in every window of m
        consecutive columns at most n columns hold a nonzero, the same columns for each group of v consecutive rows.
        Supported: m in 4, 8, 16, 32; 1 <= n <= m; v in 1, 2, 4, 8, 16, 32; any value type. Any of n, m, v may be 0:
        the library then detects it, choosing the value that makes the encoding smallest (ties: the larger m, then
        the larger v); n = 0 alone finds the smallest n that holds every window. A weight that breaks the pattern
        is refused (MackoError INVALID_VALUE; the message names the first offending row and window);
        macko.prune_nm makes a weight fit first.

        a: as for from_dense (a 2-D numpy array, a CPU torch tensor, bfloat16 too; dtype= converts first), macko_
        mat_create_nm_dense_host; or a device array (a CUDA torch tensor or an object exposing
        __cuda_array_interface__, e.g. CuPy) with handle= a Handle of its device: macko_mat_create_nm_dense_device
        copies it to the host and encodes it there, and the matrix holds both the host and a device copy (as
        from_dense_nm_device). The encoding is canonical: the same weight gives the same arrays, byte for byte."""
        if _is_device_array(a):
            if handle is None:
                raise ValueError("a is a device array: pass handle=, a macko.Handle of its device (the encoder "
                                 "copies it to the host through the handle's stream)")
            if dtype is not None:
                raise ValueError("dtype= converts host arrays only: convert the device array first")
            return cls.from_dense_nm_device(handle, a, n, m, v)
        from .matrix import _as_values, _dense_layout

        n, m, v = _pattern_args(n, m, v)
        a = _as_values(a, dtype, "a")
        if a.ndim != 2:
            raise ValueError("a must be 2-D, got %d dimensions" % a.ndim)
        arr, order, ld = _dense_layout(a)
        rows, cols = arr.shape
        return cls._create("macko_mat_create_nm_dense_host", _I64(rows), _I64(cols), int(datatype_of(arr.dtype)),
                           _ptr(arr), _I64(ld), int(order), n, m, v)

    @classmethod
    def from_dense_nm_device(cls, handle, a, n=0, m=0, v=0):
        """from_dense_nm of a 2-D device array (CUDA torch tensor, bfloat16 too, or __cuda_array_interface__; row- or
        column-major with any leading dimension) through macko_mat_create_nm_dense_device: copied to the host on the
        handle's stream (set to the producer's current stream for torch and CuPy) and encoded there; synchronous.
        The matrix holds the host encoding and a device copy."""
        from .matrix import _device_dense

        n, m, v = _pattern_args(n, m, v)
        d, rows, cols, order, ld = _device_dense(handle, a)
        obj = cls._create("macko_mat_create_nm_dense_device", _I64(rows), _I64(cols), int(datatype_of(d.dtype)),
                          ctypes.c_void_p(d.ptr), _I64(ld), int(order), n, m, v, handle=handle)
        obj._has_host = True
        return obj

    @classmethod
    def from_nm_arrays(cls, rows, cols, n, m, v, values, positions, *, dtype=None):
        """Imports the arrays of an N:M matrix exactly as FORMAT_NM.md lays them out (macko_mat_create_nm_host;
        validated completely, copied): values, rows * ceil(cols/m) * n values of a macko value type (dtype= as for
        from_dense), row by row, window by window; positions, ceil(rows/v) * ceil(cols/m) * n kept positions (0..m-1
        inside their window, strictly ascending within it; uint8, or integers that fit), row group by row group.
        A kept position at a column >= cols must hold zero in every row of its group. numpy arrays, CPU torch
        tensors or sequences, any shape (read in C order); nm_arrays() gives them back."""
        args, keep = import_args(rows, cols, n, m, v, values, positions, dtype)
        obj = cls._create("macko_mat_create_nm_host", *args)
        del keep
        return obj

    @property
    def nm_pattern(self):
        """NMPattern(n, m, v) of an N:M matrix (macko_mat_get_nm_host; remembered, so it stays readable after
        release_host). MackoError NOT_SUPPORTED for another kind."""
        p = self._nm_pattern
        if p is None:
            n, m, v = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            _lib.call("macko_mat_get_nm_host", self, ctypes.byref(n), ctypes.byref(m), ctypes.byref(v), None, None)
            p = self._nm_pattern = NMPattern(n.value, m.value, v.value)
        return p

    def nm_arrays(self):
        """Copies of an N:M matrix's host arrays (macko_mat_get_nm_host) as NMArrays(values, positions): values of
        the matrix's dtype, shape (rows, ceil(cols/m) * n); positions uint8, shape (ceil(rows/v), ceil(cols/m) * n).
        Needs the host copy. MackoError NOT_SUPPORTED for another kind."""
        from .matrix import _copy_out

        n, m, v = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        vals, pos = ctypes.c_void_p(), ctypes.c_void_p()
        _lib.call("macko_mat_get_nm_host", self, ctypes.byref(n), ctypes.byref(m), ctypes.byref(v),
                  ctypes.byref(vals), ctypes.byref(pos))
        self._nm_pattern = NMPattern(n.value, m.value, v.value)
        rows, cols, _, dt = self.info
        _, g, kept = sizes(rows, cols, n.value, m.value, v.value)
        return NMArrays(_copy_out(vals.value, rows * kept, dt).reshape(rows, kept),
                        _copy_out(pos.value, g * kept, np.uint8).reshape(g, kept))

    def _nm_state(self):
        """The picklable state of an N:M matrix with a host copy (the caller holds the lock)."""
        rows, cols = self.shape
        p = self.nm_pattern
        a = self.nm_arrays()
        t = self.datatype
        values = a.values.view(np.uint16) if t == DataType.R_16BF else a.values  # a plain dtype pickles everywhere
        return {"nm": {"rows": rows, "cols": cols, "n": p.n, "m": p.m, "v": p.v, "type": int(t), "values": values,
                       "positions": a.positions}}


def create_from_state(q):
    """The raw pointer of the host matrix of an {"nm": ...} pickled state (validated by the library)."""
    args, keep = import_args(q["rows"], q["cols"], q["n"], q["m"], q["v"], q["values"], q["positions"],
                             DataType(int(q["type"])))
    out = ctypes.c_void_p()
    _lib.call("macko_mat_create_nm_host", ctypes.byref(out), *args)
    del keep
    return out.value


# ---------------------------------------------------------------- pruning
def _check_pattern(n, m, v):
    for value, name in ((n, "n"), (m, "m"), (v, "v")):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TypeError("%s must be an integer, not %r" % (name, value))
    n, m, v = int(n), int(m), int(v)
    if not supported(n, m, v):
        raise ValueError("(n, m, v) = (%d, %d, %d) is not an N:M pattern macko holds: m in %s, 1 <= n <= m, v in %s"
                         % (n, m, v, SUPPORTED_M, SUPPORTED_V))
    return n, m, v


def _keep_numpy(mag, n, m, v):
    """The (rows, cols) mask of the kept weights, mag the weights' magnitudes (float32 or float64)."""
    rows, cols = mag.shape
    w, g, _ = sizes(rows, cols, n, m, v)
    padded = np.zeros((g * v, w * m), mag.dtype)  # zero padding: never chosen before a real column (ties: lower)
    padded[:rows, :cols] = mag
    p = padded.reshape(g, v, w, m)
    score = p[:, 0].copy()
    for i in range(1, v):  # in row order, one rounding per row: the same sums as the torch path
        score += p[:, i]
    score[np.isnan(score)] = np.inf
    top = np.argsort(-score, axis=-1, kind="stable")[..., :n]
    keep = np.zeros((g, w, m), bool)
    np.put_along_axis(keep, top, True, axis=-1)
    return np.broadcast_to(keep[:, None], (g, v, w, m)).reshape(g * v, w * m)[:rows, :cols]


def _prune_torch(t, n, m, v):
    import torch

    if not t.dtype.is_floating_point:
        raise ValueError("weight must hold floating-point values, not %s" % t.dtype)
    w0 = t.detach()
    rows, cols = w0.shape
    w, g, _ = sizes(rows, cols, n, m, v)
    acc = torch.float64 if w0.dtype == torch.float64 else torch.float32
    with torch.no_grad():
        padded = torch.zeros(g * v, w * m, dtype=acc, device=w0.device)
        padded[:rows, :cols] = w0.abs().to(acc)
        p = padded.view(g, v, w, m)
        score = p[:, 0].clone()
        for i in range(1, v):
            score += p[:, i]
        score[torch.isnan(score)] = float("inf")
        top = torch.sort(-score, dim=-1, stable=True).indices[..., :n]
        keep = torch.zeros(g, w, m, dtype=torch.bool, device=w0.device)
        keep.scatter_(-1, top, True)
        keep = keep[:, None].expand(g, v, w, m).reshape(g * v, w * m)[:rows, :cols]
        return torch.where(keep, w0, torch.zeros((), dtype=w0.dtype, device=w0.device))


def prune_nm(weight, n, m, v=1):
    """weight pruned to the N:M pattern (n, m, v) by magnitude: for each group of v consecutive rows and each window
    of m consecutive columns, the n columns of largest summed magnitude over the group's rows are kept (ties: the
    lower column; a NaN ranks above every number) and every other weight of the group's rows in the window is set
    to +0. The last row group and window may be partial (rows and cols need not be multiples of v and m); a window
    of fewer than n columns keeps them all. The sums are taken in float32 (float64 for a float64 weight), row by
    row in order, so the numpy and torch paths choose the same columns.

    weight: a 2-D float16 / float32 / float64 numpy array (or macko.bfloat16 bit patterns), or a torch tensor of a
    floating dtype on any device (pruned there, without gradient). Returns a new array of the same type, dtype,
    shape (and device); the weight is not changed. (n, m, v) must be a pattern macko holds (m in 4, 8, 16, 32;
    1 <= n <= m; v in 1, 2, 4, 8, 16, 32), so Matrix.from_dense_nm(prune_nm(w, n, m, v), n, m, v) always works."""
    n, m, v = _check_pattern(n, m, v)
    if _is_torch_tensor(weight):
        if weight.dim() != 2:
            raise ValueError("weight must be 2-D, got %d dimensions" % weight.dim())
        return _prune_torch(weight, n, m, v)
    a = np.asarray(weight)
    if a.ndim != 2:
        raise ValueError("weight must be 2-D, got %d dimensions" % a.ndim)
    if is_bfloat16(a.dtype):
        mag = np.abs(bf16_to_float32(a))
    elif a.dtype.kind == "f" and a.dtype.itemsize in (2, 4, 8):
        mag = np.abs(a.astype(np.float64 if a.dtype == np.float64 else np.float32))
    else:
        raise ValueError("weight must hold float16, bfloat16 (bit patterns), float32 or float64 values, not %s"
                         % a.dtype)
    out = a.copy()
    out[~_keep_numpy(mag, n, m, v)] = 0
    return out
