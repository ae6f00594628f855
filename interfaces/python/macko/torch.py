"""MackoLinear: an nn.Linear whose (pruned) weight lives on the GPU in the MACKO format.

Importing this module imports torch; ``import macko`` alone does not.
"""

import numpy as np
import torch
from torch import nn

from .compute import spmv
from .handle import Handle
from .matrix import Matrix

_NP = {torch.float16: np.float16, torch.float32: np.float32}


class MackoLinear(nn.Module):
    """y = x @ W.T + b with W (out_features x in_features) stored sparsely by macko.

    Build it with ``MackoLinear.from_linear(linear)`` or ``MackoLinear(weight, bias)``; zeros of the weight (a
    pruned layer) are what make it small. The matrix is encoded on the host in ``dtype`` (float16 by default, or
    float32) and uploaded to the weight's CUDA device (the current device when the weight is on the CPU). forward
    accepts x of shape [in_features] or [..., in_features] on that device and returns the result in x's dtype.

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
            self.matrix = Matrix.from_dense(w.to("cpu", dtype).contiguous().numpy())
            self.matrix.upload(self.handle)
            if not keep_host:
                self.matrix.release_host()
        self.register_buffer("bias", None if bias is None else bias.detach().to(self.device, dtype))

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
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features).to(self.device, self.dtype).contiguous()
        y2 = torch.empty(x2.shape[0], self.out_features, dtype=self.dtype, device=self.device)
        with torch.cuda.device(self.device):
            self._matmul(x2, y2)
        if self.bias is not None:
            y2 += self.bias
        return y2.reshape(*lead, self.out_features).to(x.dtype)

    def _matmul(self, x2, y2):
        """y2[i] = W @ x2[i] for every row i. One SpMV per vector for now: once the library has macko_Hspmm /
        macko_Sspmm this becomes a single call with B = x2 as a column-major in_features x n matrix
        (ldb = in_features) and C = y2 (ldc = out_features), which is exactly their row-major layout here."""
        for i in range(x2.shape[0]):
            spmv(self.handle, self.matrix, x2[i], y2[i])

    def extra_repr(self):
        return "in_features=%d, out_features=%d, bias=%s, dtype=%s" % (
            self.in_features, self.out_features, self.bias is not None, self.dtype)
