"""MackoLinear: an nn.Linear whose (pruned) weight lives on the GPU in the MACKO format.

Importing this module imports torch; ``import macko`` alone does not.

torch.compile: MackoLinear's forward is, while dynamo traces it, one call of the custom operator ``macko::linear``
(torch.library.custom_op, torch >= 2.4) that compiled code calls like any other op; so a model with MackoLinear
layers compiles with fullgraph=True, and the elementwise work around the layers is fused by inductor. The operator
finds its layer through a key held in a CPU int64 tensor (a graph input, not a constant), so that replacing the
layers of a compiled model by new ones of the same shapes does not recompile it.

State: the matrix is the module's extra state (``get_extra_state``): a uint8 CPU tensor holding the library's
versioned serialization (a MACKO matrix), or a dict of the QUANT arrays as CPU tensors (a QUANT matrix), next to the
``bias`` buffer. So ``state_dict``/``load_state_dict(strict=True)``, ``torch.save``/``torch.load(weights_only=True)``
and ``copy.deepcopy`` carry the weights, and a checkpoint loads into ``MackoLinear.empty(in_features, out_features)``
without the dense weight.

Device layout: ``layout="tiles"`` (float16 and bfloat16 layers) holds the matrix on the GPU as 16 x 16 bitmap tiles
(macko_mat_set_layout, MACKO_LAYOUT_TILES) instead of the MACKO rows (``layout="rows"``, the default), so that every
batch size runs on the tensor cores from the tiles: the better choice from about 8 rows of input per call on at
density 0.5, a little later for sparser weights (batched decoding, prefill), the rows for one to four (decoding a
single sequence). The layout is the layer's, like its dtype: it is not in the state dict (the library's file format
does not record it), so a checkpoint loads into a layer of either layout; pickles, copies and dtype conversions keep
it.

Quantized weights: ``MackoLinear.from_quantized(weight, bits=3, outliers=0.01)`` holds a QUANT matrix (3-bit weights
in 16 x 16 tiles plus fp16 outliers, lapack_style_docs/FORMAT_QUANT.md) made from a dense weight,
``MackoLinear.from_quant_arrays`` one imported from its arrays (e.g. an SpQR checkpoint's); such a layer computes in
float16 only and reports ``quantization_error``.

N:M weights: ``MackoLinear.from_nm(weight, n=2, m=4, v=1, prune=True)`` holds an N:M matrix
(lapack_style_docs/FORMAT_NM.md: n kept columns in every window of m, shared by v rows) of a weight pruned by
magnitude (macko.prune_nm), or of a weight already in the pattern (prune=False; a 0 in n, m or v is detected);
``MackoLinear.from_nm_arrays`` one imported from its arrays. Such a layer holds any of the four dtypes and converts
between them like a MACKO layer; its state dict holds the N:M arrays.
"""

import copy
import ctypes
import itertools
import threading
import weakref

import numpy as np
import torch
from torch import nn

from . import _lib
from ._enums import DataType, Kind, Layout, PointerMode, type_name
from ._enums import layout as _layout_of
from ._nm import prune_nm
from ._quant import DEFAULT_OUTLIERS
from .compute import spmm
from .handle import Handle
from .matrix import Matrix

# the layer's dtype -> the matrix's value type, and back
_TYPES = {torch.float16: DataType.R_16F, torch.bfloat16: DataType.R_16BF, torch.float32: DataType.R_32F,
          torch.float64: DataType.R_64F}
_DTYPES = {v: k for k, v in _TYPES.items()}
# the layer's layout name -> the matrix's device layout
_LAYOUTS = {"rows": Layout.ROWS, "tiles": Layout.TILES}

# key -> weak reference to the live MackoLinear that macko::linear calls for that key
_LAYERS = {}
_KEYS = itertools.count(1)


# the handles MackoLinear layers share (shared_handle): per thread, {device index: Handle}
_THREAD = threading.local()
# handles a CUDA graph was captured with (id -> Handle): kept for the life of the process, since the graph may be
# replayed after the thread that made the handle has ended
_CAPTURED = {}


def shared_handle(device=None):
    """The macko.Handle that MackoLinear layers built without ``handle=`` use on the calling thread for CUDA device
    `device` (a torch.device, index or string; default: the current device). There is one per thread and device,
    made on first use, so that all the layers of a model share one handle and its one workspace (64 MiB, the
    handle's own; cuBLAS's handles are shared the same way) instead of holding one each. Give it a larger workspace
    for every layer at once with ``shared_handle().set_workspace(buf)``.

    Like every handle it serves one thread, and its workspace one stream at a time: layers that run concurrently
    on several streams of one thread need handles of their own (``handle=``)."""
    if device is None:
        index = torch.cuda.current_device()
    else:
        d = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
        if d.type != "cuda":
            raise ValueError("shared_handle is for a CUDA device, not %s" % d)
        index = d.index if d.index is not None else torch.cuda.current_device()
    handles = _THREAD.__dict__.setdefault("handles", {})
    h = handles.get(index)
    if h is None or h.closed:
        with torch.cuda.device(index):
            h = Handle()
        handles[index] = h
    return h


def _thread_handle(index):
    """This thread's shared handle for device index, or None if it has none (yet)."""
    h = getattr(_THREAD, "handles", {}).get(index)
    return None if h is None or h.closed else h


def _layer(key):
    ref = _LAYERS.get(int(key))
    mod = ref() if ref is not None else None
    if mod is None:
        raise RuntimeError("macko::linear: no live MackoLinear with key %d" % int(key))
    return mod


_custom_op = getattr(getattr(torch, "library", None), "custom_op", None)
if _custom_op is not None:

    @_custom_op("macko::linear", mutates_args=(), device_types="cuda")
    def _linear_op(x: torch.Tensor, key: torch.Tensor, out_features: int) -> torch.Tensor:
        """x @ W.T (+ b) of the MackoLinear registered under key (a CPU int64 scalar tensor)."""
        return _layer(key.item())._forward_eager(x)

    @_linear_op.register_fake
    def _linear_fake(x, key, out_features):
        return x.new_empty(*x.shape[:-1], out_features)


def _compiling():
    f = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return bool(f()) if f is not None else False


class MackoLinear(nn.Module):
    """y = x @ W.T + b with W (out_features x in_features) stored sparsely by macko.

    Build it with ``MackoLinear.from_linear(linear)`` or ``MackoLinear(weight, bias)``; zeros of the weight (a
    pruned layer) are what make it small. ``MackoLinear.empty(in_features, out_features, bias=True)`` (or
    ``MackoLinear(in_features=..., out_features=...)``) builds one without weights, to load a state dict into.

    The matrix is encoded on the host in ``dtype`` (float16 by default, bfloat16, float32 or float64) and lives on
    ``device``: by
    default the weight's CUDA device, else the current CUDA device, else (no CUDA) the CPU, where the module holds
    the host encoding only and can be saved, loaded and copied but not run. A CUDA weight is encoded on its GPU
    (macko_mat_create_dense_device), a CPU weight on the host then uploaded; the host copy is freed unless
    keep_host. forward accepts x of shape [in_features] or [..., in_features] on that device and returns the result
    in x's dtype. forward only launches kernels on torch's current stream (no host sync, no allocation outside
    torch's allocator), so it can be captured in a CUDA graph (torch.cuda.graph).

    The weight is frozen (no gradient). ``.to(device)``/``.cuda()``/``.cpu()`` move the matrix (through the host;
    a move to the CPU keeps the host encoding only). ``.to(dtype)``, ``.half()``, ``.bfloat16()``, ``.float()``,
    ``.double()`` convert it as they convert an nn.Linear: the values are rounded to the new type (to nearest even)
    at the same positions (Matrix.astype), so a converted fp16 model moved with ``.to(torch.bfloat16)`` runs in
    bf16 end to end; naming the matrix's own dtype is a no-op. The input may have any floating dtype: it is cast
    to the layer's dtype and the result cast back.

    ``handle``: a macko.Handle of the layer's own. Without one (the usual case) the layer's calls use the calling
    thread's shared handle for its device (``shared_handle``), so that the layers of a model share one handle and
    its one workspace; ``layer.handle`` reads the handle used on this thread.

    ``layout`` is the matrix's device layout: ``"rows"`` (the default: the MACKO rows, fastest for one to four input
    rows per call) or ``"tiles"`` (16 x 16 bitmap tiles read by the tensor-core kernels, faster from about 8
    rows on: batched decoding and prefill); ``"tiles"`` takes float16 and bfloat16 layers only (ValueError for
    float32 / float64). It is applied to the matrix before every upload, kept by pickles, copies, moves and
    conversions between float16 and bfloat16 (converting a tiles layer to float32 or float64 raises TypeError), and
    readable as ``layer.layout``. The state dict does not hold it: a checkpoint loads into a layer of either layout.

    ``MackoLinear.from_quantized(weight, bits=3, outliers=0.01)`` and ``MackoLinear.from_quant_arrays(...)`` build a
    layer holding a QUANT matrix (3-bit weights plus fp16 outliers, ``kind`` is Kind.QUANT) instead: it lives,
    moves, copies and saves as above, but computes in float16 only (other input dtypes and dtype conversions raise
    TypeError), and ``quantization_error`` tells how far the quantized weight is from the dense one.

    ``MackoLinear.from_nm(weight, n, m, v, prune=...)`` and ``MackoLinear.from_nm_arrays(...)`` build a layer holding
    an N:M matrix (``kind`` is Kind.NM, ``nm_pattern`` its (n, m, v)): it lives, moves, copies, saves and converts
    its dtype as a MACKO layer does; its layout is "rows" (the device holds the N:M encoding itself), and its input
    is cast to the layer's dtype as for every layer.
    """

    def __init__(self, weight=None, bias=None, *, dtype=torch.float16, handle=None, keep_host=False, device=None,
                 in_features=None, out_features=None, layout="rows"):
        super().__init__()
        if dtype not in _TYPES:
            raise ValueError("dtype must be torch.float16, torch.bfloat16, torch.float32 or torch.float64")
        self._layout = _layout_name(layout, dtype)
        self.dtype = dtype
        self.keep_host = bool(keep_host)
        self._given_handle = None  # handle= (or layer.handle = h): used instead of the thread's shared handle
        self._built_handle = None  # the handle the matrix was last uploaded or made with (see _forward_handle)
        self.matrix = None
        w = None
        if weight is not None:
            w = weight.detach()
            if w.dim() != 2:
                raise ValueError("weight must be 2-D [out_features, in_features]")
            for given, have, name in ((out_features, w.shape[0], "out_features"), (in_features, w.shape[1],
                                                                                   "in_features")):
                if given is not None and int(given) != int(have):
                    raise ValueError("%s=%d does not match the weight's shape %s" % (name, given, tuple(w.shape)))
            out_features, in_features = w.shape
        elif in_features is None or out_features is None:
            raise ValueError("MackoLinear needs a weight, or in_features and out_features (then load a state dict)")
        self.out_features, self.in_features = int(out_features), int(in_features)
        self.device = _target_device(device, w)
        if w is not None:
            self._encode(w, handle)
        elif handle is not None:
            self.handle = handle
        if bias is None or bias is False:
            b = None
        elif bias is True:
            b = torch.zeros(self.out_features, dtype=dtype, device=self.device)
        else:
            b = bias.detach().to(self.device, dtype)
            if tuple(b.shape) != (self.out_features,):
                raise ValueError("bias must have shape (%d,), not %s" % (self.out_features, tuple(b.shape)))
        self.register_buffer("bias", b)
        self._register_key()

    @property
    def handle(self):
        """The handle this layer's calls use on the calling thread: the one given with ``handle=`` (or assigned to
        ``layer.handle``), else the thread's shared handle for the layer's device (``shared_handle``, made on first
        use); None for a layer on the CPU. Assigning None goes back to the shared handle."""
        h = self._own_handle()
        if h is not None:
            return h
        if self.device.type != "cuda":
            return None
        return shared_handle(self.device)

    @handle.setter
    def handle(self, h):
        if h is not None and not isinstance(h, Handle):
            raise TypeError("a MackoLinear's handle is a macko.Handle or None (the shared one), not %s"
                            % type(h).__name__)
        self._given_handle = h

    def _own_handle(self):
        """The handle given to this layer, or None (none given, or it was closed)."""
        h = self.__dict__.get("_given_handle")
        return h if h is not None and not h.closed else None

    def _device_handle(self):
        """The handle for work other than forward on the layer's CUDA device (encode, upload, conversion, copy),
        its stream set to torch's current stream there; remembered for _forward_handle. Call inside
        torch.cuda.device(self.device)."""
        h = self.handle
        h.stream = torch.cuda.current_stream(self.device)
        self._built_handle = h
        return h

    def _forward_handle(self):
        """The handle of a forward call: the layer's own, else this thread's shared one. A thread's first forward
        inside a CUDA graph capture cannot make a handle (macko_create allocates), so it takes the handle the layer
        was built with; a shared handle a graph is captured with is kept for the life of the process."""
        h = self._own_handle()
        if h is not None:
            return h
        capturing = torch.cuda.is_current_stream_capturing()
        h = _thread_handle(self.device.index)
        if h is None and capturing:
            h = self._built_handle
            if h is None or h.closed:
                raise RuntimeError("MackoLinear: this thread has no macko handle for %s and none can be made while a "
                                   "CUDA graph is captured: run the layer once before capturing, or call "
                                   "macko.torch.shared_handle() first" % self.device)
        elif h is None:
            h = shared_handle(self.device)
        if capturing:
            _CAPTURED.setdefault(id(h), h)
        return h

    @classmethod
    def empty(cls, in_features, out_features, bias=True, **kwargs):
        """A layer of this shape without weights (like nn.Linear's uninitialised one): forward raises until a state
        dict is loaded. kwargs: dtype, device, handle, keep_host, layout as for the constructor."""
        return cls(None, bias, in_features=in_features, out_features=out_features, **kwargs)

    @classmethod
    def from_linear(cls, linear, **kwargs):
        """A MackoLinear computing what `linear` (an nn.Linear) computes. kwargs: dtype, device, handle, keep_host,
        layout as for the constructor."""
        return cls(linear.weight, linear.bias, **kwargs)

    @classmethod
    def from_quantized(cls, weight, bias=None, bits=3, outliers=DEFAULT_OUTLIERS, threshold=None, *, device=None,
                       handle=None, keep_host=False):
        """A layer holding a QUANT matrix: `weight` ([out_features, in_features] tensor of any floating dtype on any
        device, or an nn.Linear, whose bias is taken unless bias= is given) quantized on the host by
        Matrix.from_dense_quantized (bits, outliers, threshold as there: by default the 1 % of weights that
        quantize worst are kept as fp16 outliers). float16 only: the input must be float16 and the layer cannot be
        converted to another dtype; layout "rows" only (the tile layout holds MACKO matrices).
        ``quantization_error`` gives the relative Frobenius error of the quantized weight. device: as for the
        constructor (by default the weight's CUDA device, else the current one, else the CPU)."""
        if isinstance(weight, nn.Linear):
            if bias is None:
                bias = weight.bias
            weight = weight.weight
        w = weight.detach()
        if w.dim() != 2:
            raise ValueError("weight must be 2-D [out_features, in_features]")
        dev = _target_device(device, w)
        m = Matrix.from_dense_quantized(w, bits=bits, outliers=outliers, threshold=threshold)
        return cls._with_matrix(m, bias, dev, handle, keep_host)

    @classmethod
    def from_quant_arrays(cls, in_features, out_features, words, outlier_row_ptr, outlier_entries, bias=None,
                          bits=3, *, device=None, handle=None, keep_host=False):
        """A layer holding the QUANT matrix of these arrays (Matrix.from_quant_arrays: rows = out_features, cols =
        in_features; FORMAT_QUANT.md says how an SpQR checkpoint maps onto them). float16 only, as
        from_quantized; quantization_error is None (there is no original weight to compare with)."""
        m = Matrix.from_quant_arrays(out_features, in_features, words, outlier_row_ptr, outlier_entries, bits=bits)
        return cls._with_matrix(m, bias, _target_device(device, None), handle, keep_host)

    @classmethod
    def from_spqr(cls, in_features, out_features, dense_weights, row_offsets, col_vals, bias=None, *, device=None,
                  handle=None, keep_host=False):
        """A QUANT layer from an SpQR matrix's arrays (Matrix.from_spqr; SpQR's m = out_features, n = in_features).
        An SpQR input permutation (in_perm) is the caller's: permute the activations before the layer."""
        m = Matrix.from_spqr(out_features, in_features, dense_weights, row_offsets, col_vals)
        return cls._with_matrix(m, bias, _target_device(device, None), handle, keep_host)

    @classmethod
    def from_nm(cls, weight, bias=None, n=0, m=0, v=0, *, prune=False, dtype=torch.float16, device=None, handle=None,
                keep_host=False):
        """A layer holding an N:M matrix (Matrix.from_dense_nm, FORMAT_NM.md) of `weight` ([out_features,
        in_features] tensor of any floating dtype on any device, or an nn.Linear, whose bias is taken unless bias= is
        given), in `dtype` (float16 by default, bfloat16, float32, float64).

        prune=True first prunes the weight by magnitude to the pattern (n, m, v) (macko.prune_nm: in every window of
        m columns the n of largest summed |w| over each group of v rows are kept; on the weight's device, in its
        dtype); then n and m must be given and v = 0 means 1. prune=False takes a weight that is already N:M: with
        (n, m, v) given it must fit them (MackoError INVALID_VALUE naming the first row and window that does not),
        and a 0 in any of them is detected (the smallest encoding). The weight is converted to dtype after pruning.

        device: as for the constructor. A CUDA weight on the layer's device is encoded through
        macko_mat_create_nm_dense_device (copied to the host on torch's current stream and encoded there, then
        the host copy freed unless keep_host); a CPU weight on the host, then uploaded."""
        if isinstance(weight, nn.Linear):
            if bias is None:
                bias = weight.bias
            weight = weight.weight
        w = weight.detach()
        if w.dim() != 2:
            raise ValueError("weight must be 2-D [out_features, in_features]")
        if prune:
            if not n or not m:
                raise ValueError("prune=True needs the pattern to prune to: n and m (v defaults to 1), not n=%r, m=%r"
                                 % (n, m))
            v = v or 1
            w = prune_nm(w, n, m, v)
        dev = _target_device(device, w)
        rows, cols = w.shape
        layer = cls(None, bias, in_features=cols, out_features=rows, dtype=dtype, device=dev, handle=handle,
                    keep_host=keep_host)
        w = w.to(dtype)
        if dev.type == "cuda" and w.is_cuda and w.device == dev:
            with torch.cuda.device(dev):
                mat = Matrix.from_dense_nm(w.contiguous(), n, m, v, handle=layer._device_handle())
                if not keep_host:
                    try:
                        mat.release_host()
                    except BaseException:
                        mat.close()
                        raise
        else:
            mat = Matrix.from_dense_nm(w.cpu().contiguous(), n, m, v)
            if dev.type == "cuda":
                try:
                    layer._upload(mat)
                except BaseException:
                    mat.close()
                    raise
        layer.matrix = mat
        return layer

    @classmethod
    def from_nm_arrays(cls, in_features, out_features, n, m, v, values, positions, bias=None, *, device=None,
                       handle=None, keep_host=False):
        """A layer holding the N:M matrix of these arrays (Matrix.from_nm_arrays: rows = out_features, cols =
        in_features; values a tensor or numpy array of the layer's dtype, which it gives: torch.bfloat16 tensors for
        bf16; tensors on any device). device, handle, keep_host as for from_nm."""
        values, positions = (a.detach().cpu() if isinstance(a, torch.Tensor) else a for a in (values, positions))
        mat = Matrix.from_nm_arrays(out_features, in_features, n, m, v, values, positions)
        return cls._with_matrix(mat, bias, _target_device(device, None), handle, keep_host)

    @classmethod
    def _with_matrix(cls, m, bias, device, handle, keep_host):
        """A layer of host matrix m's shape on device that takes ownership of m (closed if this fails)."""
        try:
            rows, cols = m.shape
            layer = cls(None, bias, in_features=cols, out_features=rows, dtype=_DTYPES[m.datatype], device=device,
                        handle=handle, keep_host=keep_host)
            if layer.device.type == "cuda":
                layer._upload(m)
        except BaseException:
            m.close()
            raise
        layer.matrix = m
        return layer

    def _encode(self, w, handle):
        if self.device.type == "cpu":
            self.matrix = Matrix.from_dense(w.to("cpu", self.dtype).contiguous())
            self._apply_layout(self.matrix)  # for the upload of a later move to a GPU, and for pickles
            return
        with torch.cuda.device(self.device):
            self._given_handle = handle
            # The upload runs on torch's current stream, so later kernels on it see the matrix.
            h = self._device_handle()
            if w.is_cuda:
                # Encoded on the GPU from the weight where it lies (macko_mat_create_dense_device): no host round
                # trip, byte-identical to the host encoding. keep_host downloads the encoding afterwards.
                self.matrix = Matrix.from_dense_device(h, w.to(self.device, self.dtype).contiguous())
                if self.keep_host or self._layout != "rows":
                    self.matrix.download(h)
                if self._layout != "rows":
                    # the tiles are built from the host copy: uploading again replaces the device-encoded rows
                    self._upload(self.matrix)
            else:
                self.matrix = Matrix.from_dense(w.to("cpu", self.dtype).contiguous())
                self._upload(self.matrix)

    def _upload(self, m):
        """Uploads host-only matrix m to self.device through the module's handle (the thread's shared one unless it
        has its own)."""
        with torch.cuda.device(self.device):
            h = self._device_handle()
            self._apply_layout(m)
            m.upload(h)
            if not self.keep_host:
                m.release_host()

    def _apply_layout(self, m):
        """Records the layer's layout on matrix m (host-only calls; the next upload makes it)."""
        want = _LAYOUTS[self._layout]
        if m.layout != want:
            m.set_layout(want)

    def _register_key(self):
        # the key through which macko::linear finds this layer (a plain attribute: .to()/.cuda() leave it on the CPU)
        key = next(_KEYS)
        self._op_key = torch.tensor(key, dtype=torch.int64)
        _LAYERS[key] = weakref.ref(self)
        weakref.finalize(self, _LAYERS.pop, key, None)

    @property
    def layout(self):
        """The matrix's device layout, "rows" or "tiles" (the constructor's ``layout``); read-only."""
        return self._layout

    @property
    def storage(self):
        """The macko matrix's storage (bytes, entries, entries_padded, effective_density)."""
        return self._matrix().storage

    @property
    def kind(self):
        """The matrix's Kind (MACKO, QUANT or NM); None for a layer without weights."""
        return None if self.matrix is None else self.matrix.kind

    @property
    def nm_pattern(self):
        """NMPattern(n, m, v) of an N:M layer's matrix; None for another kind or a layer without weights."""
        m = self.matrix
        return m.nm_pattern if m is not None and m.kind == Kind.NM else None

    @property
    def quantization_error(self):
        """For a QUANT layer made from a dense weight: the relative Frobenius error of the quantized weight (W + O)
        against it, in float64 (Matrix.quantization_error; kept by state_dict, copies and pickles); otherwise
        None."""
        return None if self.matrix is None else self.matrix.quantization_error

    def _matrix(self):
        if self.matrix is None:
            raise RuntimeError("this MackoLinear has no weights yet: load a state dict into it (load_state_dict) or "
                               "build it from a weight")
        return self.matrix

    # ------------------------------------------------------------------ state: state_dict, pickle, deepcopy
    def get_extra_state(self):
        """The matrix for state_dict. A MACKO matrix: a 1-D uint8 CPU tensor with the bytes of Matrix.serialize()
        (the library's versioned format, which names the matrix's kind and dtype); empty for a layer without
        weights. A QUANT matrix: a dict {"kind": "quant", "rows", "cols", "bits", "words" (int64 tensor: the uint64
        words' bits), "outlier_row_ptr" (int32), "outlier_entries" (int32: the uint32 entries' bits),
        "quantization_error" (float; left out when unknown)}, CPU tensors. An N:M matrix: a dict {"kind": "nm",
        "rows", "cols", "n", "m", "v", "values" (a tensor of the matrix's dtype, shape (rows, ceil(cols/m) * n)),
        "positions" (uint8, shape (ceil(rows/v), ceil(cols/m) * n))}, the arrays of Matrix.nm_arrays(). A
        device-only matrix is downloaded through the module's handle for it (synchronous) and its host copy released
        again."""
        m = self.matrix
        if m is None:
            return torch.empty(0, dtype=torch.uint8)
        with m._host_copy(self.handle, "save"):
            if m.kind == Kind.NM:
                rows, cols = m.shape
                p, a = m.nm_pattern, m.nm_arrays()
                values = torch.from_numpy(a.values.view(np.int16)).view(torch.bfloat16) \
                    if m.datatype == DataType.R_16BF else torch.from_numpy(a.values)
                return {"kind": "nm", "rows": rows, "cols": cols, "n": p.n, "m": p.m, "v": p.v, "values": values,
                        "positions": torch.from_numpy(a.positions)}
            if m.kind == Kind.QUANT:
                rows, cols = m.shape
                q = m.quant_arrays()
                state = {"kind": "quant", "rows": rows, "cols": cols, "bits": q.bits,
                         "words": torch.from_numpy(q.words.view(np.int64)),
                         "outlier_row_ptr": torch.from_numpy(q.outlier_row_ptr),
                         "outlier_entries": torch.from_numpy(q.outlier_entries.view(np.int32))}
                if m.quantization_error is not None:
                    state["quantization_error"] = float(m.quantization_error)
                return state
            t = torch.empty(m.serialized_size(), dtype=torch.uint8)
            m.serialize(t.numpy())
        return t

    @staticmethod
    def _matrix_of_state(state):
        """The host matrix of an extra state (None for an empty one); ValueError for something else."""
        if isinstance(state, dict) and state.get("kind") == "nm":
            try:
                arrays = [state[k].detach().cpu() if isinstance(state[k], torch.Tensor) else state[k]
                          for k in ("values", "positions")]
                return Matrix.from_nm_arrays(state["rows"], state["cols"], state["n"], state["m"], state["v"],
                                             *arrays)
            except KeyError as e:
                raise ValueError("MackoLinear's N:M extra state lacks %s" % e) from None
        if isinstance(state, dict) and state.get("kind") == "quant":
            try:
                arrays = [state[k].detach().cpu() if isinstance(state[k], torch.Tensor) else state[k]
                          for k in ("words", "outlier_row_ptr", "outlier_entries")]
                new = Matrix.from_quant_arrays(state["rows"], state["cols"], *arrays, bits=state["bits"])
            except KeyError as e:
                raise ValueError("MackoLinear's QUANT extra state lacks %s" % e) from None
            err = state.get("quantization_error")
            new.quantization_error = None if err is None else float(err)
            return new
        if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 or state.dim() != 1:
            raise ValueError("MackoLinear's extra state must be a 1-D uint8 tensor holding a serialized macko "
                             "matrix, or a dict of the QUANT arrays or of the N:M arrays, not %r"
                             % (type(state).__name__,))
        if not state.numel():
            return None
        return Matrix.deserialize(state.detach().cpu().contiguous().numpy())

    def set_extra_state(self, state):
        """Loads the matrix of a state dict (either form of get_extra_state): checks its shape and dtype against
        the layer, then uploads it to the layer's device at once (a CPU layer keeps the host encoding). The old
        matrix is freed."""
        new = self._matrix_of_state(state)
        if new is not None:
            rows, cols, _, _ = new.info
            if (rows, cols) != (self.out_features, self.in_features) or new.datatype != _TYPES[self.dtype]:
                got = "%dx%d %s" % (rows, cols, type_name(new.datatype))
                new.close()
                raise ValueError("the state dict's macko matrix is %s; this MackoLinear is %dx%d %s (build it with "
                                 "the matching in_features, out_features and dtype)"
                                 % (got, self.out_features, self.in_features, str(self.dtype).replace("torch.", "")))
            if self._layout != "rows" and new.kind != Kind.MACKO:
                kind = new.kind.name
                new.close()
                raise ValueError("the state dict holds a%s %s matrix; this MackoLinear has layout=%r, which holds "
                                 "MACKO matrices only (build it with layout='rows')"
                                 % ("n" if kind == "NM" else "", kind, self._layout))
            try:
                self._apply_layout(new)
            except BaseException:
                new.close()
                raise
            if self.device.type == "cuda":
                try:
                    self._upload(new)
                except BaseException:
                    new.close()
                    raise
        self._replace_matrix(new)

    def _replace_matrix(self, new):
        old, self.matrix = self.matrix, new
        if old is not None:
            if old.on_device and self.device.type == "cuda":
                torch.cuda.current_stream(self.device).synchronize()  # kernels queued with the old one may run
            old.close()

    def __getstate__(self):
        # Pickling the whole module (torch.save(model)): the handle stays behind, the matrix goes as its extra state.
        state = super().__getstate__()
        for k in ("_given_handle", "_built_handle", "matrix", "_op_key"):
            state.pop(k, None)
        state["_macko_serialized"] = self.get_extra_state()
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("_macko_serialized")
        state.setdefault("_layout", "rows")  # a module pickled before layers had a layout
        super().__setstate__(state)
        self._given_handle, self._built_handle, self.matrix = None, None, None
        # torch.load's map_location has moved the bias: follow it; without CUDA the layer comes back on the CPU.
        if self.bias is not None:
            self.device = self.bias.device
        elif self.device.type == "cuda" and not torch.cuda.is_available():
            self.device = torch.device("cpu")
        self._register_key()
        self.set_extra_state(data)

    def __deepcopy__(self, memo):
        # The default deepcopy would copy the handle (which refuses) and share the op key. The copy gets its own
        # key, the thread's shared handle (not a handle= of the original's), and a copy of the matrix in the same
        # place (on the GPU when this layer is there).
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        skip = ("_given_handle", "_built_handle", "matrix", "_op_key")
        state = {k: v for k, v in self.__dict__.items() if k not in skip}
        new.__dict__.update(copy.deepcopy(state, memo))
        new._given_handle, new._built_handle, new.matrix = None, None, None
        new._register_key()
        if self.matrix is not None:
            h = None
            if self.device.type == "cuda":
                with torch.cuda.device(self.device):
                    h = new._device_handle()
            new.matrix = self.matrix.copy(handle=h)
        return new

    # ------------------------------------------------------------------ .to(), .cuda(), .half(), ...
    def _apply(self, fn, *args, **kwargs):
        # Module.to() and friends call fn on every tensor; fn on an empty probe tells what it does to a tensor of
        # the matrix's dtype on its device, before anything changes.
        probe_dev = self.device
        if probe_dev.type == "cuda" and not torch.cuda.is_available():
            probe_dev = torch.device("cpu")
        probe = fn(torch.empty(0, dtype=self.dtype, device=probe_dev))
        if isinstance(probe, torch.Tensor):
            if probe.dtype != self.dtype and self.kind == Kind.QUANT:
                raise TypeError("MackoLinear holds a QUANT matrix (3-bit weights, fp16 statistics and outliers), "
                                "which computes in float16 only: it cannot be converted to %s" % _name(probe.dtype))
            if probe.dtype != self.dtype and probe.dtype not in _TYPES:
                raise TypeError("MackoLinear holds a %s macko matrix and cannot be converted to %s: macko stores "
                                "float16, bfloat16, float32 or float64 values"
                                % (_name(self.dtype), _name(probe.dtype)))
            if probe.dtype != self.dtype and self._layout == "tiles" and probe.dtype not in _TILE_DTYPES:
                raise TypeError("this MackoLinear has layout='tiles', which holds float16 and bfloat16 matrices "
                                "only: it cannot be converted to %s (build a layout='rows' layer for that)"
                                % _name(probe.dtype))
            if probe.dtype != self.dtype:
                self._convert(probe.dtype)  # where the matrix is now; a move follows
            dev = _target_device(probe.device, None)
            if probe_dev == self.device and dev != self.device:
                self._move(dev)
        return super()._apply(fn, *args, **kwargs)

    def _convert(self, dtype):
        """Re-encodes the matrix's values in dtype at the same positions (Matrix.astype), in place of the old one:
        on the device through the module's handle (a device-only matrix is downloaded for it and stays
        device-only), on the host for a CPU layer."""
        m = self.matrix
        if m is not None:
            if self.device.type == "cuda":
                with torch.cuda.device(self.device):
                    new = m.astype(_TYPES[dtype], handle=self._device_handle())
            else:
                new = m.astype(_TYPES[dtype])
            self._replace_matrix(new)
        self.dtype = dtype

    def _move(self, dev):
        m, old_handle = self.matrix, self.handle
        if m is not None and m.on_device:
            torch.cuda.synchronize(self.device)  # the old device copy is freed below: no kernel may still use it
        if dev.type == "cuda":
            with torch.cuda.device(dev):
                h = shared_handle(dev)
                h.stream = torch.cuda.current_stream(dev)
            if m is not None:
                if not m.has_host_copy:
                    m.download(old_handle)
                self._apply_layout(m)
                m.upload(h)  # moves the device copy to h's device
                if not self.keep_host:
                    m.release_host()
            self._given_handle, self._built_handle = None, h
        else:
            if m is not None and m.on_device:  # a host-only copy replaces it, which frees the device memory
                with m._host_copy(old_handle, "move"):
                    state = m._host_state()
                new = Matrix.__new__(Matrix)
                new._from_state(state)
                self._apply_layout(new)
                self.matrix = new
                m.close()
            self._given_handle, self._built_handle = None, None
        self.device = dev

    # ------------------------------------------------------------------ compute
    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError("x has %d features, the layer takes %d" % (x.shape[-1], self.in_features))
        if _custom_op is not None and _compiling():
            # nothing else here: what dynamo reads of the layer it guards on (the op checks at run time)
            return torch.ops.macko.linear(x, self._op_key, self.out_features)
        return self._forward_eager(x)

    def _forward_eager(self, x):
        if self._matrix().kind == Kind.QUANT and x.dtype != torch.float16:
            raise TypeError("this MackoLinear holds a QUANT matrix, which takes float16 input only, not %s: cast it "
                            "with x.half() (and the result back)" % _name(x.dtype))
        if self.device.type != "cuda":
            raise RuntimeError("MackoLinear computes on a CUDA device; this one is on %s: move it with .cuda() or "
                               ".to('cuda')" % self.device)
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features).to(self.device, self.dtype).contiguous()
        y2 = torch.empty(x2.shape[0], self.out_features, dtype=self.dtype, device=self.device)
        with torch.cuda.device(self.device):
            self._matmul(x2, y2)
        if self.bias is not None:
            y2 += self.bias
        return y2.reshape(*lead, self.out_features).to(x.dtype)

    def _matmul(self, x2, y2):
        """y2[i] = W @ x2[i] for every row i, in one macko_Hspmm / _Sspmm / _Dspmm call (macko_spmm_ex for bf16):
        the row-major [n, in_features] batch x2 is the column-major in_features x n matrix B (ldb = in_features),
        and y2 the out_features x n matrix C (ldc = out_features). x2 and y2 are contiguous tensors of the layer's
        dtype on its device (_forward_eager makes them so), so the C routine is called straight, without compute.spmm's
        checks of arbitrary operands; the handle's stream is set to torch's current stream first, as spmm does."""
        n = x2.shape[0]
        if n == 0:
            return
        h = self._forward_handle()
        m = self.matrix
        direct = _direct_call(m) if not (h.closed or m.closed) else None
        if direct is None or _pointer_mode(h) != PointerMode.HOST:
            spmm(h, m, x2.t(), y2.t())  # it raises what it raises for these (a closed object, device scalars)
            return
        fn, name, ex, alpha, beta = direct
        L = _lib.lib()
        st = L.macko_set_stream(h, torch.cuda.current_stream(self.device).cuda_stream)
        if st != 0:
            name = "macko_set_stream"
        elif ex:
            st = fn(h, 0, n, alpha, m, x2.data_ptr(), ex, self.in_features, beta, y2.data_ptr(), ex, self.out_features,
                    int(DataType.R_32F))
        else:
            st = fn(h, 0, n, alpha, m, x2.data_ptr(), self.in_features, beta, y2.data_ptr(), self.out_features)
        if st != 0:
            pos, msg = _lib.last_error()
            raise _lib.MackoError(st, _lib.status_name(st), pos, msg, name)

    def extra_repr(self):
        more = ", empty" if self.matrix is None else ""
        if self._layout != "rows":
            more += ", layout=%s" % self._layout
        if self.kind == Kind.NM:
            p = self.nm_pattern
            more += ", kind=NM, pattern=%d:%d, v=%d" % (p.n, p.m, p.v)
        if self.kind == Kind.QUANT:
            err = self.quantization_error
            more = ", kind=QUANT, outliers=%d%s" % (self.matrix.storage.entries,
                                                    "" if err is None else ", quantization_error=%.4g" % err)
        return "in_features=%d, out_features=%d, bias=%s, dtype=%s, device=%s%s" % (
            self.in_features, self.out_features, self.bias is not None, self.dtype, self.device, more)


def _name(dtype):
    return str(dtype).replace("torch.", "")


def _direct_call(m):
    """(routine, its name, the bf16 type code for macko_spmm_ex or 0, alpha = 1, beta = 0 by reference) for calling the
    product of matrix m (any kind) with B and C of its own type; kept on the matrix (its type never changes)."""
    d = getattr(m, "_torch_direct", None)
    if d is None:
        t = m.datatype
        name = "macko_spmm_ex" if t == DataType.R_16BF else "macko_%sspmm" % {
            DataType.R_16F: "H", DataType.R_32F: "S", DataType.R_64F: "D"}[t]
        fn = getattr(_lib.lib(), name, None)
        if fn is None:
            return None
        scalar = ctypes.c_double if t == DataType.R_64F else ctypes.c_float
        one, zero = scalar(1.0), scalar(0.0)
        d = (fn, name, int(t) if t == DataType.R_16BF else 0, ctypes.byref(one), ctypes.byref(zero))
        m._torch_direct = d
    return d


def _pointer_mode(h):
    mode = ctypes.c_int()
    st = _lib.lib().macko_get_pointer_mode(h, ctypes.byref(mode))
    return PointerMode(mode.value) if st == 0 else None


_TILE_DTYPES = (torch.float16, torch.bfloat16)


def _layout_name(layout, dtype):
    """The layout name ("rows" or "tiles") of a layer of dtype; ValueError for anything else, and for "tiles" with a
    dtype the tile layout does not hold."""
    name = _layout_of(layout).name.lower()
    if name == "tiles" and dtype not in _TILE_DTYPES:
        raise ValueError("layout='tiles' holds float16 and bfloat16 matrices only (the tensor-core tile kernels); "
                         "this MackoLinear is %s: use layout='rows'" % _name(dtype))
    return name


def _target_device(device, weight):
    """The device a layer lives on: `device` if given, else the weight's CUDA device, else the current CUDA
    device, else the CPU. A bare "cuda" gets the current device's index."""
    if device is not None:
        d = torch.device(device)
    elif weight is not None and weight.is_cuda:
        d = weight.device
    elif torch.cuda.is_available():
        d = torch.device("cuda")
    else:
        d = torch.device("cpu")
    if d.type == "cuda" and d.index is None:
        d = torch.device("cuda", torch.cuda.current_device())
    if d.type not in ("cuda", "cpu"):
        raise ValueError("MackoLinear lives on a CUDA device (or, holding only the host encoding, on the CPU), "
                         "not on %s" % d)
    return d
