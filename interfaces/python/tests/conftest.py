"""Test setup: import the package from this source tree (or, with MACKO_TEST_INSTALLED=1, the installed one, as
.ci/run does after installing the wheel); fixtures for GPU tests."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if not os.environ.get("MACKO_TEST_INSTALLED"):
    sys.path.insert(0, os.path.dirname(HERE))  # interfaces/python: the package under test, not an installed one

import macko  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def _lib_has_type(dtype):
    """Whether libmacko encodes matrices of dtype. Only a library that refuses the type argument itself (position 4
    of macko_mat_create_dense_host) lacks it: one from before issue 17 (bfloat16, float64); any other failure is the
    test's to report."""
    try:
        macko.Matrix.from_dense(np.ones((1, 1), np.float32), dtype=dtype).close()
        return True
    except macko.MackoError as e:
        if e.position == 4 and e.routine == "macko_mat_create_dense_host":
            return False
        raise


def _typed(dtype):
    if _lib_has_type(dtype):
        return dtype
    name = macko._enums.type_name(macko._enums.datatype_of(dtype))
    return pytest.param(dtype, marks=pytest.mark.skip(reason="this libmacko has no %s matrices" % name))


# The four value types, as parameters: "bfloat16" for bf16 (see as_type); skipped where the library lacks the type.
ALL_TYPES = [_typed(t) for t in (np.float16, "bfloat16", np.float32, np.float64)]


def as_type(a, dtype):
    """Float values a as host values of dtype: macko.bfloat16 bit patterns (rounded to nearest even) for bfloat16."""
    if dtype == "bfloat16":
        return macko.bf16_from_float(np.asarray(a, np.float64))
    return np.asarray(a).astype(dtype)


def as_float64(a, dtype):
    """The values of host array a of dtype, exactly, as float64."""
    if dtype == "bfloat16":
        return macko.bf16_to_float32(a).astype(np.float64)
    return np.asarray(a, np.float64)


def pruned_linear(in_f, out_f, seed, bias=True, dtype=None, density=0.4):
    """An nn.Linear(in_f, out_f) with random weights of which about `density` are kept (the rest zero), in dtype
    (default float16); torch tests only."""
    import torch

    dtype = torch.float16 if dtype is None else dtype
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(in_f, out_f, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(out_f, in_f, generator=g) * (torch.rand(out_f, in_f, generator=g) < density))
        if bias:
            lin.bias.copy_(torch.randn(out_f, generator=g))
    return lin.to(dtype)


def check_gpu_state_round_trips(model, x, path):
    """model: a Sequential of MackoLinear(96 -> 128), ReLU, MackoLinear(128 -> 64, no bias) on the GPU. Its state dict
    saved to path and loaded into empty layers (device arrays only), a deep copy and a pickled copy give model(x) bit
    for bit; model moved to the host and back gives it again. Returns model(x) and the three copies. Torch tests."""
    import copy
    import io

    import torch
    from macko.torch import MackoLinear

    with torch.no_grad():
        y = model(x)
    torch.save(model.state_dict(), path)
    fresh = torch.nn.Sequential(MackoLinear.empty(96, 128), torch.nn.ReLU(), MackoLinear.empty(128, 64, bias=False))
    fresh.load_state_dict(torch.load(path, map_location="cuda", weights_only=True), strict=True)
    assert fresh[0].matrix.on_device and not fresh[0].matrix.has_host_copy
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    others = [fresh, copy.deepcopy(model), torch.load(buf, weights_only=False)]
    with torch.no_grad():
        for other in others:
            assert torch.equal(other(x), y)
        model.cpu()
        assert not model[0].matrix.on_device and model[0].matrix.has_host_copy
        model.cuda()
        assert torch.equal(model(x), y)
    return y, others


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if not torch.cuda.is_available():
        return None, "torch sees no CUDA device"
    if not macko.gpu_available():
        return None, "macko_create found no usable CUDA device"
    return torch, None


@pytest.fixture(scope="session")
def torch_cuda():
    """The torch module when torch, a CUDA device and macko_create all work; skips the test otherwise."""
    t, why = _torch_cuda()
    if t is None:
        pytest.skip("GPU test: " + why)
    return t


@pytest.fixture
def handle(torch_cuda):
    with macko.Handle() as h:
        yield h


_QUANT_SERIALIZE_PROBE = """
import numpy as np, macko
A = macko.Matrix.from_dense_quantized(np.linspace(-1, 1, 40 * 24).reshape(40, 24), outliers=0.05)
B = macko.Matrix.deserialize(A.serialize())
assert B.kind == macko.Kind.QUANT and np.array_equal(B.to_dense(), A.to_dense())
"""
_quant_serialize = {}


def quant_serialize_works():
    """Whether this libmacko serializes QUANT matrices (file format v2). Asked in a child process: a library from
    before that reads a QUANT matrix as a MACKO one when serializing, which may crash."""
    if "ok" not in _quant_serialize:
        import subprocess

        r = subprocess.run([sys.executable, "-c", _QUANT_SERIALIZE_PROBE], capture_output=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)))
        _quant_serialize["ok"] = r.returncode == 0
    return _quant_serialize["ok"]


@pytest.fixture
def quant_serialize():
    """Skips the test unless this libmacko serializes QUANT matrices."""
    if not quant_serialize_works():
        pytest.skip("this libmacko does not serialize QUANT matrices yet (file format v2)")
