"""Matrix: a macko_mat_t, built from numpy (dense, CSR, raw MACKO arrays, quantized), files or device data.

Value types: float16, float32, float64 as numpy arrays; bfloat16 as torch.bfloat16 CPU tensors, numpy arrays of uint16
bit patterns with dtype="bfloat16" (or macko.bfloat16 arrays, which carry the mark), or float values rounded to bf16
with dtype="bfloat16". A bf16 matrix hands out its values as macko.bfloat16 arrays (uint16 bit patterns)."""

import collections
import contextlib
import ctypes
import os
import threading

import numpy as np

from . import _lib, _nm, _quant
from ._device import device_array
from ._enums import (DataType, IndexBase, IndexType, Kind, Layout, Order, Status, bf16_from_float, bf16_to_float32,
                     bfloat16, convert_values, datatype_of, is_bfloat16, numpy_dtype, operation, type_name)
from ._enums import layout as _layout
from ._nm import NMArrays, NMMethods, NMPattern
from ._quant import DEFAULT_OUTLIERS, QuantArrays

MatrixInfo = collections.namedtuple("MatrixInfo", "rows cols nnz dtype")
Storage = collections.namedtuple("Storage", "bytes entries entries_padded effective_density")
MackoArrays = collections.namedtuple("MackoArrays", "values deltas row_ptr entries entries_padded")

_I64 = ctypes.c_int64


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


def _dense_layout(a):
    """(array, Order, ld) passing a 2-D numpy array to C without a copy when its strides allow it."""
    rows, cols = a.shape
    item = a.itemsize
    s0, s1 = a.strides
    if rows > 0 and cols > 0:
        if (s1 == item or cols == 1) and s0 > 0 and s0 % item == 0 and s0 // item >= cols:
            return a, Order.ROW, s0 // item
        if (s0 == item or rows == 1) and s1 > 0 and s1 % item == 0 and s1 // item >= rows:
            return a, Order.COL, s1 // item
    c = np.ascontiguousarray(a)
    return c, Order.ROW, max(1, cols)


def _host_array(a, name):
    """A numpy view of a (numpy array, CPU torch tensor -- bfloat16 as macko.bfloat16 bit patterns --, sequence)."""
    mod = type(a).__module__ or ""
    if mod.startswith("torch") and hasattr(a, "detach"):
        t = a.detach()
        if t.device.type != "cpu":
            raise ValueError("%s is a tensor on %s: the host routines take CPU tensors (or use from_dense_device / "
                             "from_csr_device for device data)" % (name, t.device))
        if is_bfloat16(t.dtype):
            import torch

            return t.view(torch.int16).numpy().view(bfloat16)
        return t.numpy()
    a = np.asarray(a)
    return a.view(bfloat16) if is_bfloat16(a.dtype) else a


def _as_values(a, dtype, name):
    """a as host values of one macko value type (dtype None: a's own type; else converted to dtype, where a bfloat16
    dtype takes 16-bit integer arrays as bit patterns and rounds float values) -> array (macko.bfloat16 for bf16)."""
    a = _host_array(a, name)
    if dtype is None:
        if a.dtype in (np.dtype(np.uint16), np.dtype(np.int16)) and not is_bfloat16(a.dtype):
            raise ValueError("%s holds %s: bfloat16 bit patterns need dtype='bfloat16' (macko stores float16, "
                             "bfloat16, float32 or float64 values)" % (name, a.dtype))
        datatype_of(a.dtype)  # ValueError unless a macko value type
        return a
    t = datatype_of(dtype)
    if t == DataType.R_16BF:
        if is_bfloat16(a.dtype) or a.dtype in (np.dtype(np.uint16), np.dtype(np.int16)):
            return a.view(bfloat16)
        if a.dtype.kind in "iub":
            a = a.astype(np.float64)
        return bf16_from_float(a)
    if is_bfloat16(a.dtype):
        a = bf16_to_float32(a)
    return a.astype(numpy_dtype(t), copy=False)


def _index_arrays(*arrays):
    """Both int32 when every input is int32, else all int64 -> (arrays, IndexType)."""
    arrs = [np.asarray(a) for a in arrays]
    for a in arrs:
        if a.size and a.dtype.kind not in "iu":
            raise ValueError("index arrays must hold integers, not %s" % a.dtype)
    if all(a.dtype == np.int32 for a in arrs):
        return [np.ascontiguousarray(a) for a in arrs], IndexType.INDEX_32I
    return [np.ascontiguousarray(a, dtype=np.int64) for a in arrs], IndexType.INDEX_64I


def _usable(handle):
    return handle is not None and not getattr(handle, "closed", False)


def _copy_out(p, n, dt):
    """A numpy copy of n elements of dtype dt at address p."""
    out = np.empty(n, dtype=dt)
    if out.nbytes:
        ctypes.memmove(out.ctypes.data, p, out.nbytes)
    return out


def _device_dense(handle, a):
    """(DeviceArray, rows, cols, Order, ld) of a 2-D row- or column-major device array; the handle's stream set to
    the producer's current stream where it says."""
    d = device_array(a, "a")
    if len(d.shape) != 2:
        raise ValueError("a must be 2-D, got shape %s" % (d.shape,))
    rows, cols = d.shape
    s0, s1 = d.strides
    if (s1 == 1 or cols <= 1) and s0 >= max(1, cols):
        order, ld = Order.ROW, s0
    elif (s0 == 1 or rows <= 1) and s1 >= max(1, rows):
        order, ld = Order.COL, s1
    else:
        raise ValueError("a must be row- or column-major (strides %s)" % (d.strides,))
    if d.stream is not None:
        handle.stream = d.stream
    return d, rows, cols, order, ld


def _unpickle(cls, state):
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj


class Matrix(NMMethods):
    """A weight matrix of one of macko's kinds (``kind``): MACKO, a sparse matrix in the MACKO format, QUANT, 3-bit
    weights in 16 x 16 tiles plus fp16 outliers, or NM, vector-wise N:M sparsity. Build one with a classmethod
    (from_dense, from_csr, from_macko, from_dense_quantized, from_quant_arrays, from_dense_nm, from_nm_arrays, load,
    deserialize, from_dense_device, from_csr_device, from_dense_nm_device); free it with close() or a with-block (or
    let it be collected).

    Copies and pickles own their memory (see copy() and __getstate__)."""

    # Defaults for objects whose construction failed half-way, so that __del__ has nothing to free.
    _ptr = None
    _handle = None
    _has_host = False
    _on_device = False
    _kind = None
    _lock = threading.RLock()  # replaced by the object's own in _adopt
    #: For a matrix made by from_dense_quantized: the relative Frobenius error of its dense export against the weight
    #: (macko.quantization_error); None for matrices made otherwise. Copies and pickles keep it.
    quantization_error = None

    def __init__(self, _ptr):
        if not isinstance(_ptr, int) or not _ptr:
            raise TypeError("use Matrix.from_dense, from_csr, from_macko, load or deserialize")
        self._adopt(_ptr)

    def _adopt(self, ptr, handle=None):
        # The library cannot be asked where a matrix's copies are, so the wrapper tracks it: a host copy after host
        # construction and download, a device copy (and the handle that made it) after upload and device
        # construction. Copies and pickles need this to download a device-only matrix and to upload the copy.
        self._ptr = ptr
        self._kind = None
        self._nm_pattern = None
        self._lock = threading.RLock()
        self._handle = handle
        self._has_host = handle is None
        self._on_device = handle is not None

    @classmethod
    def _create(cls, routine, *args, handle=None):
        out = ctypes.c_void_p()
        if handle is None:
            _lib.call(routine, ctypes.byref(out), *args)
        else:
            _lib.call(routine, handle, ctypes.byref(out), *args)
        obj = cls.__new__(cls)
        obj._adopt(out.value, handle)
        return obj

    # ------------------------------------------------------------------ construction on the host
    @classmethod
    def from_dense(cls, a, dtype=None):
        """Encodes a 2-D numpy array of float16, float32 or float64, or a CPU torch tensor (bfloat16 too); dtype=
        converts first (dtype="bfloat16" takes uint16 arrays as bit patterns and rounds float values to nearest
        even). Row- and column-major arrays and views with a larger leading dimension are passed without a copy;
        other strides are copied first."""
        a = _as_values(a, dtype, "a")
        if a.ndim != 2:
            raise ValueError("a must be 2-D, got %d dimensions" % a.ndim)
        arr, order, ld = _dense_layout(a)
        rows, cols = arr.shape
        return cls._create("macko_mat_create_dense_host", _I64(rows), _I64(cols), int(datatype_of(arr.dtype)),
                           _ptr(arr), _I64(ld), int(order))

    @classmethod
    def from_csr(cls, indptr, indices=None, data=None, shape=None, *, index_base=0, dtype=None):
        """Encodes a CSR matrix: from_csr(indptr, indices, data, shape) or from_csr(scipy_csr_matrix). Columns must
        be strictly increasing within each row; every stored entry is kept, explicit zeros included (their value is
        stored as a zero, as FORMAT.md says for CSR input). data's types and dtype= as for from_dense."""
        if indices is None and hasattr(indptr, "indptr"):
            m = indptr.tocsr() if hasattr(indptr, "tocsr") else indptr
            if hasattr(m, "sorted_indices"):
                m = m.sorted_indices()
            indptr, indices, data, shape = m.indptr, m.indices, m.data, m.shape
        if indices is None or data is None or shape is None:
            raise ValueError("from_csr needs indptr, indices, data and shape (or a scipy CSR matrix)")
        rows, cols = (int(s) for s in shape)
        data = np.ascontiguousarray(_as_values(data, dtype, "data")).reshape(-1)
        (indptr, indices), itype = _index_arrays(indptr, indices)
        indptr, indices = indptr.reshape(-1), indices.reshape(-1)
        if rows < 0 or indptr.shape[0] != rows + 1:
            raise ValueError("indptr must have rows + 1 = %d elements, not %d" % (rows + 1, indptr.shape[0]))
        if indices.shape[0] != data.shape[0]:
            raise ValueError("indices (%d) and data (%d) differ in length" % (indices.shape[0], data.shape[0]))
        nnz = data.shape[0]
        return cls._create("macko_mat_create_csr_host", _I64(rows), _I64(cols), _I64(nnz), _ptr(indptr),
                           _ptr(indices), _ptr(data), int(itype), int(IndexBase(index_base)),
                           int(datatype_of(data.dtype)))

    @classmethod
    def from_macko(cls, shape, values, deltas, row_ptr, entries=None, dtype=None):
        """Imports raw MACKO arrays exactly as FORMAT.md lays them out (validated, copied): values (any value type,
        dtype= as for from_dense; at least entries rounded up to 8), deltas (uint8, half that many bytes), row_ptr
        (rows + 1)."""
        rows, cols = (int(s) for s in shape)
        values = np.ascontiguousarray(_as_values(values, dtype, "values")).reshape(-1)
        deltas = np.ascontiguousarray(deltas, dtype=np.uint8).reshape(-1)
        row_ptr = np.asarray(row_ptr).reshape(-1)
        if row_ptr.shape[0] != rows + 1:
            raise ValueError("row_ptr must have rows + 1 = %d elements, not %d" % (rows + 1, row_ptr.shape[0]))
        if entries is None:
            entries = int(row_ptr[-1])
        entries = int(entries)
        padded = (entries + 7) // 8 * 8
        if values.shape[0] < padded or deltas.shape[0] < padded // 2:
            raise ValueError("values needs %d and deltas %d elements for %d entries" % (padded, padded // 2, entries))
        row_ptr = np.ascontiguousarray(row_ptr, dtype=np.int32 if entries < 2**31 else np.int64)
        return cls._create("macko_mat_create_macko_host", _I64(rows), _I64(cols), int(datatype_of(values.dtype)),
                           _I64(entries), _ptr(values), _ptr(deltas), _ptr(row_ptr))

    @classmethod
    def from_dense_quantized(cls, a, bits=3, outliers=DEFAULT_OUTLIERS, threshold=None):
        """Quantizes a dense weight to a QUANT matrix (macko_mat_create_quant_dense_host, FORMAT_QUANT.md): 3-bit
        weights in 16 x 16 tiles with bi-level statistics, round to nearest, plus fp16 outliers. a: a 2-D float16,
        float32 or float64 numpy array, or a torch tensor (bfloat16 too; a CUDA tensor is copied to the host, where
        the encoder runs), finite values of at most 65504 in magnitude; cols <= 65536.

        The outliers (weights kept in fp16 beside the 3-bit part) are picked by the quantization error of a first
        pass: ``outliers=f`` (default 0.01) keeps the round(f * rows * cols) weights of largest error
        (OutlierRule.FRACTION); ``threshold=t`` every weight whose error exceeds t (OutlierRule.THRESHOLD; give
        outliers=None or leave it out); ``outliers=None`` without threshold keeps none (OutlierRule.NONE).

        The result has value type float16 and a host copy only. Its ``quantization_error`` attribute is the relative
        Frobenius error ||a - A||_F / ||a||_F of its dense export A = W + O (float64; macko.quantization_error)."""
        rule, param = _quant.outlier_rule(outliers, threshold)
        bits = _quant.c_int_arg(bits, "bits")
        a = _as_values(_quant.host_values(a), None, "a")
        if a.ndim != 2:
            raise ValueError("a must be 2-D, got %d dimensions" % a.ndim)
        arr, order, ld = _dense_layout(a)
        rows, cols = arr.shape
        obj = cls._create("macko_mat_create_quant_dense_host", _I64(rows), _I64(cols), int(datatype_of(arr.dtype)),
                          _ptr(arr), _I64(ld), int(order), bits, int(rule), ctypes.c_double(param))
        try:
            obj.quantization_error = _quant.quantization_error(arr, obj)
        except BaseException:
            obj.close()
            raise
        return obj

    @classmethod
    def from_quant_arrays(cls, rows, cols, words, outlier_row_ptr, outlier_entries, bits=3):
        """Imports the arrays of a QUANT matrix exactly as FORMAT_QUANT.md lays them out (macko_mat_create_quant_host;
        validated, copied): words (uint64, or int64 reinterpreted: 16 * ceil(rows/16) * ceil(cols/16) packed tile
        rows, tile by tile, tiles band by band), outlier_row_ptr (rows + 1 row pointers; int32, or any integers that
        fit) and outlier_entries (uint32, or int32 reinterpreted: the column in bits 0..15, the fp16 value in bits
        16..31). numpy arrays, CPU torch tensors or sequences, any shape (read in C order). An SpQR checkpoint maps
        onto them as FORMAT_QUANT.md, "Importing an SpQR checkpoint", says. quant_arrays() gives them back."""
        rows, cols = _quant.c_int64_arg(rows, "rows"), _quant.c_int64_arg(cols, "cols")
        bits = _quant.c_int_arg(bits, "bits")
        words, row_ptr, entries = _quant.quant_inputs(rows, cols, words, outlier_row_ptr, outlier_entries)
        return cls._create("macko_mat_create_quant_host", _I64(rows), _I64(cols), bits, _ptr(words),
                           _I64(entries.shape[0]), _ptr(row_ptr), _ptr(entries))

    @classmethod
    def from_spqr(cls, rows, cols, dense_weights, row_offsets, col_vals):
        """Imports an SpQR matrix (3 bits, 16 x 16 tiles: dense_weights, row_offsets, col_vals of SpQR's
        inference_lib, CSR or PTCSR) as a QUANT matrix: macko.spqr_arrays converts, from_quant_arrays imports."""
        q = _quant.spqr_arrays(rows, cols, dense_weights, row_offsets, col_vals)
        return cls.from_quant_arrays(rows, cols, q.words, q.outlier_row_ptr, q.outlier_entries, bits=q.bits)

    @classmethod
    def deserialize(cls, buffer):
        """A matrix from bytes written by serialize() (validated: MackoError FORMAT_ERROR when corrupted)."""
        buf = np.frombuffer(memoryview(buffer).cast("B"), dtype=np.uint8)
        return cls._create("macko_mat_deserialize", _ptr(buf), _I64(buf.shape[0]))

    @classmethod
    def load(cls, path):
        return cls._create("macko_mat_load", os.fsencode(os.fspath(path)))

    # ------------------------------------------------------------------ construction on the device
    @classmethod
    def from_dense_device(cls, handle, a):
        """Encodes on the GPU a 2-D device array (torch CUDA tensor -- bfloat16 too -- or __cuda_array_interface__)
        of a macko value type; the matrix lives on the device only."""
        d, rows, cols, order, ld = _device_dense(handle, a)
        return cls._create("macko_mat_create_dense_device", _I64(rows), _I64(cols), int(datatype_of(d.dtype)),
                           ctypes.c_void_p(d.ptr), _I64(ld), int(order), handle=handle)

    @classmethod
    def from_csr_device(cls, handle, indptr, indices, data, shape, *, index_base=0):
        """Encodes on the GPU a CSR matrix whose three arrays are device arrays."""
        rows, cols = (int(s) for s in shape)
        p, i, v = (device_array(x, n) for x, n in ((indptr, "indptr"), (indices, "indices"), (data, "data")))
        for arr, n in ((p, "indptr"), (i, "indices"), (v, "data")):
            if len(arr.shape) != 1 or (arr.shape[0] > 1 and arr.strides[0] != 1):
                raise ValueError("%s must be a contiguous 1-D array" % n)
        if p.dtype != i.dtype or p.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise ValueError("indptr and indices must both be int32 or both int64")
        if p.shape[0] != rows + 1 or i.shape[0] != v.shape[0]:
            raise ValueError("indptr needs rows + 1 elements and indices as many as data")
        itype = IndexType.INDEX_32I if p.dtype == np.int32 else IndexType.INDEX_64I
        if v.stream is not None:
            handle.stream = v.stream
        return cls._create("macko_mat_create_csr_device", _I64(rows), _I64(cols), _I64(v.shape[0]),
                           ctypes.c_void_p(p.ptr), ctypes.c_void_p(i.ptr), ctypes.c_void_p(v.ptr), int(itype),
                           int(IndexBase(index_base)), int(datatype_of(v.dtype)), handle=handle)

    # ------------------------------------------------------------------ lifetime
    @property
    def _as_parameter_(self):
        if self._ptr is None:
            raise ValueError("the matrix is closed")
        return ctypes.c_void_p(self._ptr)

    @property
    def closed(self):
        return self._ptr is None

    def close(self):
        """macko_mat_destroy (host and device copies); safe to call twice."""
        if self._ptr is not None:
            with self._lock:
                ptr, self._ptr = self._ptr, None
                self._handle, self._has_host, self._on_device, self._kind = None, False, False, None
                self._nm_pattern = None
                _lib.call("macko_mat_destroy", ctypes.c_void_p(ptr))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ inspection
    @property
    def info(self):
        rows, cols, nnz, t = _I64(), _I64(), _I64(), ctypes.c_int()
        _lib.call("macko_mat_get_info", self, ctypes.byref(rows), ctypes.byref(cols), ctypes.byref(nnz),
                  ctypes.byref(t))
        return MatrixInfo(rows.value, cols.value, nnz.value, numpy_dtype(t.value))

    @property
    def shape(self):
        i = self.info
        return (i.rows, i.cols)

    @property
    def dtype(self):
        """The numpy dtype of the matrix's host values: float16, float32, float64, or macko.bfloat16 (uint16 bit
        patterns that compare equal to np.uint16) for a bf16 matrix."""
        return self.info.dtype

    @property
    def datatype(self):
        """The value type as a DataType (R_16F, R_16BF, R_32F, R_64F)."""
        t = ctypes.c_int()
        _lib.call("macko_mat_get_info", self, None, None, None, ctypes.byref(t))
        return DataType(t.value)

    @property
    def nnz(self):
        return self.info.nnz

    @property
    def kind(self):
        """The encoding the matrix holds (macko_mat_get_kind): Kind.MACKO, Kind.QUANT or Kind.NM. A matrix keeps its
        kind for its whole life; a library without the routine has MACKO matrices only."""
        k = self._kind
        if k is None:
            if _lib.has_symbol("macko_mat_get_kind"):
                c = ctypes.c_int()
                _lib.call("macko_mat_get_kind", self, ctypes.byref(c))
                k = Kind(c.value)
            else:
                k = Kind.MACKO
            self._kind = k
        return k

    def _macko_only(self, what, instead):
        """Raises MackoError NOT_SUPPORTED (the C routines' status for a matrix of another kind) for a method that
        only a MACKO matrix has; instead: what to use, by kind name."""
        if self.kind != Kind.MACKO:
            msg = "Matrix.%s: this is a%s %s matrix; %s" % (what, "n" if self.kind == Kind.NM else "", self.kind.name,
                                                           instead.get(self.kind.name, "see its kind's page"))
            raise _lib.MackoError(Status.NOT_SUPPORTED, _lib.status_name(Status.NOT_SUPPORTED), 1, msg, None)

    @property
    def storage(self):
        b, e, ep, d = _I64(), _I64(), _I64(), ctypes.c_double()
        _lib.call("macko_mat_get_storage", self, ctypes.byref(b), ctypes.byref(e), ctypes.byref(ep), ctypes.byref(d))
        return Storage(b.value, e.value, ep.value, d.value)

    def arrays(self):
        """Copies of the three host MACKO arrays (values, deltas, row_ptr) plus entries and entries_padded. A MACKO
        matrix's; another kind raises MackoError NOT_SUPPORTED (its arrays: quant_arrays(), nm_arrays())."""
        self._macko_only("arrays()", {k: "its arrays are %s() (%s); arrays() gives the MACKO arrays of a MACKO matrix"
                                      % a for k, a in (("QUANT", ("quant_arrays", "FORMAT_QUANT.md")),
                                                       ("NM", ("nm_arrays", "FORMAT_NM.md")))})
        v, d, r = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        rt, e, ep = ctypes.c_int(), _I64(), _I64()
        _lib.call("macko_mat_get_macko_host", self, ctypes.byref(v), ctypes.byref(d), ctypes.byref(r),
                  ctypes.byref(rt), ctypes.byref(e), ctypes.byref(ep))
        info = self.info
        rdt = np.dtype(np.int32) if rt.value == IndexType.INDEX_32I else np.dtype(np.int64)
        return MackoArrays(_copy_out(v.value, ep.value, info.dtype), _copy_out(d.value, ep.value // 2, np.uint8),
                           _copy_out(r.value, info.rows + 1, rdt), e.value, ep.value)

    def quant_arrays(self):
        """Copies of a QUANT matrix's host arrays (macko_mat_get_quant_host) as QuantArrays(bits, words,
        outlier_row_ptr, outlier_entries): uint64, int32 and uint32 numpy arrays laid out as FORMAT_QUANT.md says,
        what from_quant_arrays takes. A MACKO matrix raises MackoError NOT_SUPPORTED."""
        b, w, wc, no = ctypes.c_int(), ctypes.c_void_p(), _I64(), _I64()
        rp, ent = ctypes.c_void_p(), ctypes.c_void_p()
        _lib.call("macko_mat_get_quant_host", self, ctypes.byref(b), ctypes.byref(w), ctypes.byref(wc),
                  ctypes.byref(no), ctypes.byref(rp), ctypes.byref(ent))
        rows = self.info.rows
        return QuantArrays(b.value, _copy_out(w.value, wc.value, np.uint64), _copy_out(rp.value, rows + 1, np.int32),
                           _copy_out(ent.value, no.value, np.uint32))

    def to_dense(self, order="C", dtype=None):
        """The matrix as a dense numpy array of its dtype (bf16: macko.bfloat16 bit patterns), C (row-major) or F
        (column-major) ordered; dtype= converts the result (bf16 to float32 is exact). A QUANT matrix gives float16:
        each element its decoded weight plus its outlier, the exact sum rounded once (FORMAT_QUANT.md); an N:M
        matrix its kept values at their columns and zeros elsewhere."""
        rows, cols, _, dt = self.info
        order = order.upper()
        if order not in ("C", "F"):
            raise ValueError("order must be 'C' or 'F'")
        out = np.empty((rows, cols), dtype=dt, order=order)
        if order == "C":
            _lib.call("macko_mat_export_dense_host", self, _ptr(out), _I64(max(1, cols)), int(Order.ROW))
        else:
            _lib.call("macko_mat_export_dense_host", self, _ptr(out), _I64(max(1, rows)), int(Order.COL))
        return out if dtype is None else _convert(out, dt, dtype)

    def to_csr(self, index_dtype=np.int32, index_base=0, dtype=None):
        """(indptr, indices, data) of the stored nonzeros (padding and zero values left out), columns sorted; data
        as to_dense's values. A MACKO matrix's; another kind raises MackoError NOT_SUPPORTED."""
        self._macko_only("to_csr()", {"QUANT": "to_dense() gives its values (W + O), quant_arrays() its arrays",
                                      "NM": "to_dense() gives its values, nm_arrays() its arrays"})
        rows, _, nnz, dt = self.info
        idt = np.dtype(index_dtype)
        if idt == np.int32:
            itype = IndexType.INDEX_32I
        elif idt == np.int64:
            itype = IndexType.INDEX_64I
        else:
            raise ValueError("index_dtype must be int32 or int64")
        indptr = np.empty(rows + 1, dtype=idt)
        indices = np.empty(nnz, dtype=idt)
        data = np.empty(nnz, dtype=dt)
        _lib.call("macko_mat_export_csr_host", self, _ptr(indptr), _ptr(indices), _ptr(data), int(itype),
                  int(IndexBase(index_base)))
        return indptr, indices, data if dtype is None else _convert(data, dt, dtype)

    # ------------------------------------------------------------------ persistence
    def serialized_size(self):
        n = _I64()
        _lib.call("macko_mat_serialized_size", self, ctypes.byref(n))
        return n.value

    def serialize(self, out=None):
        """The matrix as bytes (versioned, checksummed; see lapack_style_docs/file_format.md). Needs the host copy.

        out: a writable, C-contiguous buffer of at least serialized_size() bytes (a numpy array, a bytearray, a CPU
        torch tensor's .numpy()) to write into instead; then the number of bytes written is returned."""
        n = self.serialized_size()
        if out is None:
            buf = bytearray(n)
            self.serialize(buf)
            return bytes(buf)
        view = memoryview(out)
        if view.readonly or not view.c_contiguous:
            raise ValueError("out must be a writable, C-contiguous buffer")
        if view.nbytes < n:
            raise ValueError("out holds %d bytes, the matrix needs %d" % (view.nbytes, n))
        dst = np.frombuffer(view.cast("B"), dtype=np.uint8)
        _lib.call("macko_mat_serialize", self, _ptr(dst), _I64(n))
        return n

    def save(self, path):
        _lib.call("macko_mat_save", self, os.fsencode(os.fspath(path)))

    # ------------------------------------------------------------------ GPU
    def upload(self, handle):
        """Copies the host encoding to the handle's device (asynchronous on the handle's stream). The matrix keeps
        a reference to the handle: copies and pickles download and upload through it."""
        with self._lock:
            _lib.call("macko_mat_upload", handle, self)
            self._handle, self._on_device = handle, True

    def download(self, handle):
        """Copies the device encoding back to the host (synchronous)."""
        with self._lock:
            _lib.call("macko_mat_download", handle, self)
            self._handle, self._has_host = handle, True

    def release_host(self):
        """Frees the host arrays of a matrix that is on the device."""
        with self._lock:
            if self._has_host and self.kind == Kind.NM:
                self.nm_pattern  # read from the host arrays: remembered for later
            _lib.call("macko_mat_release_host", self)
            self._has_host = False

    def analysis(self, handle, op="N"):
        """One-time work for later compute calls with op (op 'T' builds the transposed encoding)."""
        _lib.call("macko_analysis", handle, int(operation(op)), self)

    @property
    def layout(self):
        """The device layout the next upload makes (macko_mat_get_layout): Layout.ROWS (the default) or Layout.TILES.
        A device copy already present keeps the layout it was uploaded with. Settable, as set_layout."""
        if not _lib.has_symbol("macko_mat_get_layout"):
            return Layout.ROWS
        c = ctypes.c_int()
        _lib.call("macko_mat_get_layout", self, ctypes.byref(c))
        return Layout(c.value)

    @layout.setter
    def layout(self, value):
        self.set_layout(value)

    def set_layout(self, layout):
        """Chooses the device layout of the next upload (macko_mat_set_layout): 'rows' (the MACKO rows, the default)
        or 'tiles' (16 x 16 bitmap tiles for the tensor cores; float16 and bfloat16 MACKO matrices only, MackoError
        NOT_SUPPORTED otherwise), or a Layout. The device holds one of them, never both; a matrix held in tiles
        downloads as the canonical encoding of its nonzeros (stored zeros are not kept). Nothing is built or copied
        here, and a device copy already present keeps its layout until the next upload."""
        _lib.call("macko_mat_set_layout", self, int(_layout(layout)))

    @property
    def on_device(self):
        """Whether the matrix has a device copy (uploaded or created on the device)."""
        return self._on_device

    @property
    def has_host_copy(self):
        """Whether the matrix has a host copy (false after release_host and for matrices made on the device)."""
        return self._has_host

    @property
    def handle(self):
        """The Handle the matrix was last uploaded, created or downloaded with (None for a host-only matrix)."""
        return self._handle

    # ------------------------------------------------------------------ copies and pickling
    @contextlib.contextmanager
    def _host_copy(self, handle, action):
        """Holds the matrix's lock with a host copy present; a device-only matrix is downloaded through `handle`
        (default: its own) for the duration and its host copy released again afterwards."""
        with self._lock:
            if self._ptr is None:
                raise ValueError("cannot %s a closed macko.Matrix" % action)
            if self._has_host:
                yield
                return
            h = handle if handle is not None else self._handle
            if not self._on_device or not _usable(h):
                raise ValueError(
                    "cannot %s this macko.Matrix: it lives only on the device (its host copy was released, or it "
                    "was created there) and the handle it was uploaded with is %s; download it first with "
                    "A.download(h), h a macko.Handle on its device%s"
                    % (action, "closed" if h is not None else "unknown",
                       ", or copy it with A.copy(handle=h)" if action == "copy" else ""))
            _lib.call("macko_mat_download", h, self)
            self._has_host = True
            try:
                yield
            finally:
                self._has_host = False
                _lib.call("macko_mat_release_host", self)

    def _host_state(self):
        """The picklable state of a matrix with a host copy: {"serialized": bytes} for a MACKO matrix (the library's
        versioned, checksummed format); for a QUANT matrix {"quant": its shape and arrays, "quantization_error":
        ...}, which the importer validates completely on the way back; for an N:M matrix {"nm": its shape, pattern,
        value type and arrays} (NMMethods._nm_state). The caller holds the lock."""
        if self.kind == Kind.NM:
            return self._nm_state()
        if self.kind == Kind.QUANT:
            rows, cols = self.shape
            q = self.quant_arrays()
            return {"quant": {"rows": rows, "cols": cols, "bits": q.bits, "words": q.words,
                              "outlier_row_ptr": q.outlier_row_ptr, "outlier_entries": q.outlier_entries},
                    "quantization_error": self.quantization_error}
        state = {"serialized": self.serialize()}
        layout = self.layout
        if layout != Layout.ROWS:  # not part of the serialized format: carried beside it
            state["layout"] = int(layout)
        return state

    def _from_state(self, state):
        """Makes this (fresh) object the host-only matrix of a _host_state dict."""
        if not isinstance(state, dict) or not ("serialized" in state or "quant" in state or "nm" in state):
            raise ValueError("not a pickled macko.Matrix state")
        out = ctypes.c_void_p()
        if "nm" in state:
            out.value = _nm.create_from_state(state["nm"])
        elif "quant" in state:
            q = state["quant"]
            rows, cols = int(q["rows"]), int(q["cols"])
            words, row_ptr, entries = _quant.quant_inputs(rows, cols, q["words"], q["outlier_row_ptr"],
                                                          q["outlier_entries"])
            _lib.call("macko_mat_create_quant_host", ctypes.byref(out), _I64(rows), _I64(cols),
                      _quant.c_int_arg(q["bits"], "bits"), _ptr(words), _I64(entries.shape[0]), _ptr(row_ptr),
                      _ptr(entries))
        else:
            buf = np.frombuffer(memoryview(state["serialized"]).cast("B"), dtype=np.uint8)
            _lib.call("macko_mat_deserialize", ctypes.byref(out), _ptr(buf), _I64(buf.shape[0]))
        self._adopt(out.value)
        if state.get("layout"):
            self.set_layout(state["layout"])
        err = state.get("quantization_error")
        if err is not None:
            self.quantization_error = float(err)

    def copy(self, handle=None):
        """An independent copy that owns its memory (a MACKO matrix through serialize/deserialize, a QUANT matrix
        through its arrays), in the same place as this matrix: host-only stays host-only; a matrix on the device is
        copied onto the device, uploaded through the same handle (asynchronous on its stream), and when this matrix
        has no host copy, neither has the copy.

        A device-only matrix is downloaded for the copy (synchronous) and its host copy released again. handle:
        the Handle to download and upload through (default: the one the matrix was uploaded or created with; a
        handle is used by one thread at a time). ValueError when a handle is needed and none is open.
        copy.copy(A) and copy.deepcopy(A) call A.copy(); a host-only copy of a MACKO matrix is
        Matrix.deserialize(A.serialize()) after A has a host copy."""
        with self._lock:
            h = handle if handle is not None else self._handle
            if self._ptr is not None and self._on_device and self._has_host and not _usable(h):
                # (a device-only matrix gets _host_copy's message, which also says how to download it)
                raise ValueError("cannot copy this macko.Matrix: it is on the device and the handle it was uploaded "
                                 "with is %s; pass an open macko.Handle of its device: A.copy(handle=h)"
                                 % ("closed" if h is not None else "unknown"))
            with self._host_copy(h, "copy"):
                state = self._host_state()
            new = type(self).__new__(type(self))
            new._from_state(state)
            return self._placed_like_self(new, h)

    def _placed_like_self(self, new, h):
        """new (a host matrix made from this one) uploaded with h when this one is on the device, its host copy
        released when this one has none; new is closed if that fails."""
        if self._on_device:
            try:
                new.upload(h)
                if not self._has_host:
                    new.release_host()
            except BaseException:
                new.close()
                raise
        return new

    def astype(self, dtype, handle=None):
        """A new matrix with the values converted to dtype (float16, bfloat16, float32, float64; rounding to nearest
        even) at the same positions: the deltas and row pointers are this matrix's, so a value that rounds to zero
        stays an entry (a stored zero) and the storage changes only by the values' size. It lives where this one
        does, as copy() says (handle: as for copy()). An N:M matrix keeps its pattern and kept positions (a value
        rounding to zero stays in its slot). A QUANT matrix holds float16 only: astype(float16) is copy(), another
        type raises MackoError NOT_SUPPORTED."""
        t = datatype_of(dtype)
        kind = self.kind
        if kind == Kind.QUANT and t == DataType.R_16F:
            return self.copy(handle)
        if kind == Kind.QUANT:
            self._macko_only("astype(%s)" % type_name(t),
                             {"QUANT": "it holds float16 values only (3-bit codes with fp16 statistics and outliers); "
                                       "to_dense(dtype=...) gives them in another type"})
        with self._lock:
            h = handle if handle is not None else self._handle
            if self._ptr is not None and self._on_device and self._has_host and not _usable(h):
                raise ValueError("cannot convert this macko.Matrix: it is on the device and the handle it was "
                                 "uploaded with is %s; pass an open macko.Handle of its device: A.astype(dtype, "
                                 "handle=h)" % ("closed" if h is not None else "unknown"))
            with self._host_copy(h, "convert"):
                rows, cols, _, _ = self.info
                src = self.datatype
                arr = self.nm_arrays() if kind == Kind.NM else self.arrays()
            values = convert_values(arr.values, src, t)
            if kind == Kind.NM:
                new = type(self).from_nm_arrays(rows, cols, *self.nm_pattern, values, arr.positions, dtype=t)
                return self._placed_like_self(new, h)
            new = type(self).from_macko((rows, cols), values, arr.deltas, arr.row_ptr, arr.entries,
                                        dtype=numpy_dtype(t))
            if t in (DataType.R_16F, DataType.R_16BF) and self.layout == Layout.TILES:
                new.set_layout(Layout.TILES)  # float32 and float64 have the rows only
            return self._placed_like_self(new, h)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        # The handle is shared, not copied (a Handle cannot be copied).
        new = self.copy()
        memo[id(self)] = new
        return new

    def __getstate__(self):
        """Pickled state: {"serialized": bytes of serialize()}, the library's versioned, checksummed format, for a
        MACKO matrix (plus "layout": 1 when its layout is Layout.TILES, which the format does not record); {"quant":
        {rows, cols, bits, words, outlier_row_ptr, outlier_entries}, "quantization_error": float or None} for a
        QUANT matrix (validated by macko_mat_create_quant_host when unpickled); {"nm": {rows, cols, n, m, v, type
        (the DataType's number), values (bf16 as uint16 bits), positions}} for an N:M matrix (validated by
        macko_mat_create_nm_host). The unpickled
        matrix is host-only (no handle crosses a process); a device-only matrix is downloaded through its handle
        for the pickle, or pickling raises ValueError saying how to download it."""
        with self._host_copy(None, "pickle"):
            return self._host_state()

    def __setstate__(self, state):
        self._from_state(state)

    def __reduce__(self):
        # copyreg's default would call __getstate__ too; the explicit form works for every protocol and subclass.
        return (_unpickle, (type(self), self.__getstate__()))

    def __repr__(self):
        if self._ptr is None:
            return "<macko.Matrix closed>"
        i = self.info
        if self.kind == Kind.NM:
            p = self.nm_pattern
            return "<macko.Matrix %dx%d NM %d:%d v=%d %s nnz=%d>" % (i.rows, i.cols, p.n, p.m, p.v,
                                                                   type_name(self.datatype), i.nnz)
        if self.kind == Kind.QUANT:
            return "<macko.Matrix %dx%d QUANT %s nnz=%d outliers=%d>" % (i.rows, i.cols, type_name(self.datatype),
                                                                        i.nnz, self.storage.entries)
        return "<macko.Matrix %dx%d %s nnz=%d>" % (i.rows, i.cols, type_name(self.datatype), i.nnz)


def _convert(values, have, dtype):
    """values (host values of numpy dtype have) as dtype (a macko value type)."""
    return convert_values(values, datatype_of(have), datatype_of(dtype))


__all__ = ["Matrix", "MatrixInfo", "Storage", "MackoArrays", "QuantArrays", "NMArrays", "NMPattern", "DataType",
           "Kind", "Layout"]
