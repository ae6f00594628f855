"""MackoLinear: an nn.Linear whose (pruned) weight lives on the GPU in the MACKO format.

Importing this module imports torch; ``import macko`` alone does not.

torch.compile: MackoLinear's forward is, while dynamo traces it, one call of the custom operator ``macko::linear``
(torch.library.custom_op, torch >= 2.4) that compiled code calls like any other op; so a model with MackoLinear
layers compiles with fullgraph=True, and the elementwise work around the layers is fused by inductor. The operator
finds its layer through a key held in a CPU int64 tensor (a graph input, not a constant), so that replacing the
layers of a compiled model by new ones of the same shapes does not recompile it.
"""

import itertools
import weakref

import numpy as np
import torch
from torch import nn

from .compute import spmm
from .handle import Handle
from .matrix import Matrix

_NP = {torch.float16: np.float16, torch.float32: np.float32}

# key -> weak reference to the live MackoLinear that macko::linear calls for that key
_LAYERS = {}
_KEYS = itertools.count(1)


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
    pruned layer) are what make it small. The matrix is encoded on the host in ``dtype`` (float16 by default, or
    float32) and uploaded to the weight's CUDA device (the current device when the weight is on the CPU). forward
    accepts x of shape [in_features] or [..., in_features] on that device and returns the result in x's dtype.

    A CUDA weight is encoded on its GPU (macko_mat_create_dense_device), a CPU weight on the host then uploaded.
    forward only launches kernels on torch's current stream (no host sync, no allocation outside torch's
    allocator), so it can be captured in a CUDA graph (torch.cuda.graph).

    The weight is frozen (no gradient), and ``.to()``/``.cuda()`` do not move the macko matrix: build the module on
    the device it will run on.
    """

    def __init__(self, weight, bias=None, *, dtype=torch.float16, handle=None, keep_host=False):
        super().__init__()
        if dtype not in _NP:
            raise ValueError("dtype must be torch.float16 or torch.float32")
        w = weight.detach()
        if w.dim() != 2:
            raise ValueError("weight must be 2-D [out_features, in_features]")
        self.out_features, self.in_features = (int(s) for s in w.shape)
        self.dtype = dtype
        self.device = w.device if w.is_cuda else torch.device("cuda", torch.cuda.current_device())
        with torch.cuda.device(self.device):
            self.handle = handle if handle is not None else Handle()
            # The upload runs on torch's current stream, so later kernels on it see the matrix.
            self.handle.stream = torch.cuda.current_stream(self.device)
            if w.is_cuda:
                # Encoded on the GPU from the weight where it lies (macko_mat_create_dense_device): no host round
                # trip, byte-identical to the host encoding. keep_host downloads the encoding afterwards.
                self.matrix = Matrix.from_dense_device(self.handle, w.to(self.device, dtype).contiguous())
                if keep_host:
                    self.matrix.download(self.handle)
            else:
                self.matrix = Matrix.from_dense(w.to("cpu", dtype).contiguous().numpy())
                self.matrix.upload(self.handle)
                if not keep_host:
                    self.matrix.release_host()
        self.register_buffer("bias", None if bias is None else bias.detach().to(self.device, dtype))
        # the key through which macko::linear finds this layer (a plain attribute: .to()/.cuda() leave it on the CPU)
        key = next(_KEYS)
        self._op_key = torch.tensor(key, dtype=torch.int64)
        _LAYERS[key] = weakref.ref(self)
        weakref.finalize(self, _LAYERS.pop, key, None)

    @classmethod
    def from_linear(cls, linear, **kwargs):
        """A MackoLinear computing what `linear` (an nn.Linear) computes."""
        return cls(linear.weight, linear.bias, **kwargs)

    @property
    def storage(self):
        """The macko matrix's storage (bytes, entries, entries_padded, effective_density)."""
        return self.matrix.storage

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError("x has %d features, the layer takes %d" % (x.shape[-1], self.in_features))
        if _custom_op is not None and _compiling():
            return torch.ops.macko.linear(x, self._op_key, self.out_features)
        return self._forward_eager(x)

    def _forward_eager(self, x):
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features).to(self.device, self.dtype).contiguous()
        y2 = torch.empty(x2.shape[0], self.out_features, dtype=self.dtype, device=self.device)
        with torch.cuda.device(self.device):
            self._matmul(x2, y2)
        if self.bias is not None:
            y2 += self.bias
        return y2.reshape(*lead, self.out_features).to(x.dtype)

    def _matmul(self, x2, y2):
        """y2[i] = W @ x2[i] for every row i, in one macko_Hspmm / macko_Sspmm call: the row-major
        [n, in_features] batch x2 is the column-major in_features x n matrix B (ldb = in_features), and y2 the
        out_features x n matrix C (ldc = out_features)."""
        if x2.shape[0] > 0:
            spmm(self.handle, self.matrix, x2.t(), y2.t())

    def extra_repr(self):
        return "in_features=%d, out_features=%d, bias=%s, dtype=%s" % (
            self.in_features, self.out_features, self.bias is not None, self.dtype)
