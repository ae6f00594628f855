"""macko: sparse weight matrices (30-90 % sparsity) in the MACKO format and SpMV on NVIDIA GPUs.

A ctypes wrapper of libmacko (no compiled extension). The library is looked up in this order: the MACKO_LIBRARY
environment variable, next to this package, <prefix>/lib of this Python and of /usr/local and /usr, the dynamic
loader's path, then <repo>/build*/libmacko.so of the source checkout this package sits in.

    import numpy as np, macko
    A = macko.Matrix.from_dense(W.astype(np.float16))   # host encoding, no GPU needed
    A.save("w.macko"); print(A.storage.effective_density)
    with macko.Handle() as h:                            # needs a CUDA device
        A.upload(h)
        macko.spmv(h, A, x, y)                           # x, y: torch CUDA tensors / CuPy arrays

Value types: float16, float32, float64 (numpy), and bfloat16 (torch.bfloat16 tensors, or uint16 bit patterns with
dtype="bfloat16"; macko.bfloat16 is the dtype of such arrays). spmv/spmm also take float32 vectors with a float16 or
bfloat16 matrix (macko.SUPPORTED lists the combinations).

Quantized weights: ``Matrix.from_dense_quantized(W)`` makes a QUANT matrix (3-bit weights in 16 x 16 tiles plus fp16
outliers, FORMAT_QUANT.md; ``.quantization_error`` tells how far it is from W), ``Matrix.from_quant_arrays`` imports
its arrays, ``Matrix.from_spqr`` an SpQR checkpoint's; it computes through the same spmv/spmm with float16 vectors.

N:M sparsity: ``macko.prune_nm(W, n, m, v)`` prunes a weight by magnitude to n kept columns in every window of m,
shared by v rows; ``Matrix.from_dense_nm(W, n, m, v)`` makes an NM matrix (FORMAT_NM.md; the pattern detected where
n, m or v is 0), ``Matrix.from_nm_arrays`` imports its arrays; ``.nm_pattern`` and ``.nm_arrays()`` read them.

``macko.torch.MackoLinear`` (imported on first use; needs torch) replaces an ``nn.Linear``
(``MackoLinear.from_quantized`` for a QUANT weight, ``MackoLinear.from_nm`` for an N:M one).

Matrices pickle and copy through serialize()/deserialize() (each copy owns its memory); a Handle refuses both.
"""

from ._enums import (DataType, IndexBase, IndexType, Kind, Layout, Operation, Order, OutlierRule, PointerMode,
                     Status, bf16_from_float, bf16_to_float32, bfloat16)
from ._lib import MackoError, has_symbol, library_path, status_name, status_string
from ._nm import NMArrays, NMPattern, prune_nm
from ._quant import QuantArrays, quantization_error, spqr_arrays
from .compute import SUPPORTED, spmm, spmm_ex, spmv, spmv_ex
from .handle import WORKSPACE_MIN_BYTES, Handle, gpu_available
from .matrix import MackoArrays, Matrix, MatrixInfo, Storage

__version__ = "0.1.0"


def version():
    """(major, minor, patch) of the loaded libmacko (macko_get_version)."""
    import ctypes

    from . import _lib

    v = [ctypes.c_int(), ctypes.c_int(), ctypes.c_int()]
    _lib.call("macko_get_version", *(ctypes.byref(x) for x in v))
    return tuple(x.value for x in v)


def last_error():
    """(position, message) of this thread's last failed macko call (0, "") after a success."""
    from . import _lib

    return _lib.last_error()


def __getattr__(name):
    # torch is imported only when the torch helpers are asked for.
    if name in ("torch", "MackoLinear"):
        import importlib

        mod = importlib.import_module(".torch", __name__)
        return mod if name == "torch" else mod.MackoLinear
    raise AttributeError("module 'macko' has no attribute %r" % name)


__all__ = ["DataType", "IndexBase", "IndexType", "Kind", "Layout", "Operation", "Order", "OutlierRule", "PointerMode", "Status",
           "MackoError", "Matrix", "MatrixInfo", "Storage", "MackoArrays", "QuantArrays", "quantization_error",
           "spqr_arrays", "NMArrays", "NMPattern", "prune_nm", "Handle", "spmv", "spmm", "spmv_ex", "spmm_ex",
           "SUPPORTED", "WORKSPACE_MIN_BYTES", "bfloat16", "bf16_from_float", "bf16_to_float32", "version",
           "last_error", "gpu_available", "has_symbol", "library_path", "status_name", "status_string"]
