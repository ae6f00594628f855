#!/usr/bin/env python3
"""python_linear: the macko Python wrapper in a few lines.

Prunes a weight matrix with numpy and encodes it (no GPU needed), prints its storage, saves and loads it; then, when
torch with CUDA is available, puts the same weight in an nn.Linear, replaces the layer by macko.torch.MackoLinear and
compares the two. Without torch + CUDA the GPU part is skipped.

    MACKO_LIBRARY=build/libmacko.so PYTHONPATH=interfaces/python python3 examples/python_linear.py
"""

import os
import sys
import tempfile

import numpy as np

import macko


def prune(w, density):
    """Magnitude pruning: keeps the `density` fraction of entries largest in magnitude and zeros the others."""
    cut = np.quantile(np.abs(w).astype(np.float32), 1.0 - density)
    return np.where(np.abs(w) >= cut, w, np.zeros_like(w))


out_features, in_features, density = 1024, 4096, 0.5
rng = np.random.default_rng(0)
W = prune(rng.uniform(-1, 1, (out_features, in_features)).astype(np.float16), density)

# Host side: encode, inspect, save, load.
A = macko.Matrix.from_dense(W)
s = A.storage
print("W: %d x %d %s, nnz %d; storage: dense %d bytes, MACKO %d bytes (effective density %.3f)"
      % (A.shape + (A.dtype.name, A.nnz, W.nbytes, s.bytes, s.effective_density)))
assert np.array_equal(A.to_dense(), W)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "w.macko")
    A.save(path)
    size = os.path.getsize(path)
    with macko.Matrix.load(path) as B:
        assert np.array_equal(B.to_dense(), W) and B.serialize() == A.serialize()
print("save/load round trip: OK (%d bytes on disk)" % size)

# GPU side: MackoLinear in place of a pruned nn.Linear.
try:
    import torch
except ImportError:
    torch = None
if torch is None or not torch.cuda.is_available() or not macko.gpu_available():
    print("torch with CUDA is not available: the GPU part (MackoLinear vs nn.Linear) is skipped")
    sys.exit(0)

from macko.torch import MackoLinear  # noqa: E402  (imports torch, so only here)

dense = torch.nn.Linear(in_features, out_features, dtype=torch.float16, device="cuda")
with torch.no_grad():
    dense.weight.copy_(torch.from_numpy(W))  # the pruned weight
sparse = MackoLinear.from_linear(dense)      # encodes on the GPU, keeps the bias
x = torch.randn(8, in_features, dtype=torch.float16, device="cuda")  # a batch of 8 activation vectors
with torch.no_grad():
    y_ref, y = dense(x).float(), sparse(x).float()
err = ((y - y_ref).norm() / y_ref.norm()).item()
print("MackoLinear vs nn.Linear: relative L2 difference %.2e (must be < 1e-2); %d bytes instead of %d"
      % (err, sparse.storage.bytes, dense.weight.numel() * dense.weight.element_size()))
sys.exit(0 if err < 1e-2 else 1)
