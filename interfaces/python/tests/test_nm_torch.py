"""MackoLinear with an N:M matrix: from_nm (a pruned weight, or prune=True), from_nm_arrays, state (state_dict,
torch.save, pickle, deepcopy) and dtype conversions on any machine (layers kept on the CPU); forward against nn.Linear
on the pruned weight for batch sizes 1, 8, 64, 300 in every dtype, checkpoints, copies and moves on the GPU
(test_gpu_*, skipped without CUDA). Needs torch (skipped without it) and a libmacko with the N:M kind."""

import copy
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import macko  # noqa: E402
from macko import DataType, Kind, MackoError, Matrix, Status  # noqa: E402
from macko.torch import MackoLinear  # noqa: E402

from conftest import _lib_has_type, check_gpu_state_round_trips  # noqa: E402

pytestmark = pytest.mark.skipif(not macko.has_symbol("macko_mat_create_nm_dense_host"),
                                reason="this libmacko has no N:M kind yet")
needs_bf16 = pytest.mark.skipif(not _lib_has_type("bfloat16"), reason="this libmacko has no bfloat16 matrices")
needs_f64 = pytest.mark.skipif(not _lib_has_type(np.float64), reason="this libmacko has no float64 matrices")
TORCH_TYPES = [torch.float16, pytest.param(torch.bfloat16, marks=needs_bf16), torch.float32,
               pytest.param(torch.float64, marks=needs_f64)]


def linear(in_f, out_f, seed, bias=True, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(in_f, out_f, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(out_f, in_f, generator=g))
        if bias:
            lin.bias.copy_(torch.randn(out_f, generator=g))
    return lin.to(dtype)


def dense_of(layer):
    """The layer's weight as a float64 CPU tensor, rebuilt from its state's N:M arrays."""
    st = layer.get_extra_state()
    A = Matrix.from_nm_arrays(st["rows"], st["cols"], st["n"], st["m"], st["v"], st["values"], st["positions"])
    return torch.from_numpy(A.to_dense(dtype=np.float64))


def same_layers(a, b):
    sa, sb = a.get_extra_state(), b.get_extra_state()
    assert sa.keys() == sb.keys()
    for k in sa:
        if isinstance(sa[k], torch.Tensor):
            assert sa[k].dtype == sb[k].dtype and torch.equal(sa[k], sb[k]), k
        else:
            assert sa[k] == sb[k], k
    assert (a.bias is None) == (b.bias is None)
    if a.bias is not None:
        assert torch.equal(a.bias.cpu(), b.bias.cpu())
    assert a.matrix is not b.matrix and a.matrix._ptr != b.matrix._ptr


# ---------------------------------------------------------------- on the CPU (host encoding only)
def test_from_nm_prune_cpu():
    lin = linear(70, 50, 1)
    m = MackoLinear.from_nm(lin, n=2, m=4, prune=True, device="cpu")
    assert m.kind == Kind.NM and m.nm_pattern == (2, 4, 1) and m.dtype == torch.float16 and m.device.type == "cpu"
    assert (m.in_features, m.out_features) == (70, 50)
    assert torch.equal(m.bias, lin.bias.detach().half())
    pruned = macko.prune_nm(lin.weight, 2, 4, 1)
    assert torch.equal(dense_of(m), pruned.half().double())
    assert "kind=NM, pattern=2:4, v=1" in repr(m)
    assert m.storage.entries == 50 * 18 * 2
    # the weight itself is left alone; v=0 with prune means 1; other dtypes; a tensor weight; bias=True
    assert torch.count_nonzero(lin.weight) == 70 * 50
    f = MackoLinear.from_nm(lin.weight, n=4, m=8, v=4, prune=True, dtype=torch.float32, device="cpu")
    assert f.bias is None and f.nm_pattern == (4, 8, 4) and f.matrix.datatype == DataType.R_32F
    assert torch.equal(dense_of(f), macko.prune_nm(lin.weight, 4, 8, 4).double())
    z = MackoLinear.from_nm(lin.weight, bias=True, n=1, m=4, prune=True, device="cpu")
    assert torch.equal(z.bias, torch.zeros(50, dtype=torch.float16)) and z.nm_pattern == (1, 4, 1)


def test_from_nm_of_a_pruned_weight_cpu():
    lin = linear(64, 48, 2)
    with torch.no_grad():
        lin.weight.copy_(macko.prune_nm(lin.weight, 8, 32, 16))
    m = MackoLinear.from_nm(lin, device="cpu")  # detected: the smallest encoding
    assert m.kind == Kind.NM and m.nm_pattern == Matrix.from_dense_nm(lin.weight.half()).nm_pattern
    g = MackoLinear.from_nm(lin, n=8, m=32, v=16, device="cpu")
    assert g.nm_pattern == (8, 32, 16) and torch.equal(dense_of(g), lin.weight.detach().half().double())
    with pytest.raises(MackoError) as e:
        MackoLinear.from_nm(lin, n=2, m=4, device="cpu")  # the weight is not 2:4
    assert e.value.status == Status.INVALID_VALUE and "row" in e.value.message and "window" in e.value.message
    with pytest.raises(ValueError, match="prune=True needs the pattern"):
        MackoLinear.from_nm(lin, m=4, prune=True, device="cpu")
    with pytest.raises(ValueError, match="not an N:M pattern"):
        MackoLinear.from_nm(lin, n=2, m=6, prune=True, device="cpu")
    with pytest.raises(ValueError, match="2-D"):
        MackoLinear.from_nm(lin.weight[0], n=2, m=4, device="cpu")


@needs_bf16
def test_from_nm_arrays_cpu():
    m = MackoLinear.from_nm(linear(40, 24, 3), n=2, m=8, v=2, prune=True, dtype=torch.bfloat16, device="cpu")
    st = m.get_extra_state()
    assert st["values"].dtype == torch.bfloat16 and st["positions"].dtype == torch.uint8
    a = MackoLinear.from_nm_arrays(40, 24, 2, 8, 2, st["values"], st["positions"], bias=m.bias, device="cpu")
    assert a.kind == Kind.NM and a.dtype == torch.bfloat16 and a.nm_pattern == (2, 8, 2)
    same_layers(m, a)
    with pytest.raises(ValueError, match="values has"):
        MackoLinear.from_nm_arrays(41, 24, 2, 8, 2, st["values"], st["positions"], device="cpu")


@pytest.mark.parametrize("dtype", TORCH_TYPES)
def test_state_dict_round_trip_cpu(tmp_path, dtype):
    m = MackoLinear.from_nm(linear(70, 50, 4), n=4, m=16, v=2, prune=True, dtype=dtype, device="cpu")
    sd = m.state_dict()
    assert list(sd) == ["bias", "_extra_state"]
    st = sd["_extra_state"]
    assert st["kind"] == "nm" and (st["rows"], st["cols"], st["n"], st["m"], st["v"]) == (50, 70, 4, 16, 2)
    assert st["values"].dtype == dtype and tuple(st["values"].shape) == (50, 5 * 4)
    assert st["positions"].dtype == torch.uint8 and tuple(st["positions"].shape) == (25, 5 * 4)
    for weights_only in (True, False):
        torch.save(sd, tmp_path / "nm.pt")
        e = MackoLinear.empty(70, 50, dtype=dtype, device="cpu")
        r = e.load_state_dict(torch.load(tmp_path / "nm.pt", weights_only=weights_only), strict=True)
        assert not r.missing_keys and not r.unexpected_keys
        assert e.kind == Kind.NM and e.nm_pattern == (4, 16, 2)
        same_layers(m, e)
    # a layer of another kind takes it too: the kind comes with the state
    k = MackoLinear.from_linear(linear(70, 50, 5, dtype=dtype), dtype=dtype, device="cpu")
    assert k.kind == Kind.MACKO and k.nm_pattern is None
    k.load_state_dict(sd)
    assert k.kind == Kind.NM
    same_layers(m, k)


def test_state_dict_errors_cpu():
    sd = MackoLinear.from_nm(linear(70, 50, 6), n=2, m=4, prune=True, device="cpu").state_dict()
    with pytest.raises(ValueError, match="50x70 float16; this MackoLinear is 51x70"):
        MackoLinear.empty(70, 51, bias=False, device="cpu").load_state_dict({"_extra_state": sd["_extra_state"]})
    with pytest.raises(ValueError, match="float16; this MackoLinear is 50x70 float32"):
        MackoLinear.empty(70, 50, dtype=torch.float32, device="cpu").load_state_dict(
            {"bias": sd["bias"].float(), "_extra_state": sd["_extra_state"]})
    bad = dict(sd["_extra_state"])
    bad["positions"] = bad["positions"].clone()
    bad["positions"][3, 0:2] = 2  # not strictly ascending
    with pytest.raises(MackoError) as e:
        MackoLinear.empty(70, 50, device="cpu").load_state_dict({"bias": sd["bias"], "_extra_state": bad})
    assert e.value.position == 9 and "group 3" in e.value.message
    lacking = {k: v for k, v in sd["_extra_state"].items() if k != "positions"}
    with pytest.raises(ValueError, match="N:M extra state lacks 'positions'"):
        MackoLinear.empty(70, 50, device="cpu").load_state_dict({"bias": sd["bias"], "_extra_state": lacking})
    with pytest.raises(ValueError, match="an NM matrix; this MackoLinear has layout='tiles'"):
        MackoLinear.empty(70, 50, device="cpu", layout="tiles").load_state_dict(sd)


def test_serialized_nm_state_cpu():
    """An N:M matrix's serialized bytes (file format v3) load as extra state too."""
    m = MackoLinear.from_nm(linear(70, 50, 15), n=4, m=8, prune=True, device="cpu")
    blob = torch.from_numpy(np.frombuffer(m.matrix.serialize(), np.uint8).copy())
    e = MackoLinear.empty(70, 50, device="cpu")
    e.load_state_dict({"bias": m.bias, "_extra_state": blob})
    assert e.kind == Kind.NM and e.nm_pattern == (4, 8, 1)
    same_layers(m, e)


def test_copies_and_pickles_cpu():
    model = torch.nn.Sequential(MackoLinear.from_nm(linear(70, 50, 7), n=2, m=4, prune=True, device="cpu"),
                                torch.nn.ReLU(),
                                MackoLinear.from_nm(linear(50, 20, 8, bias=False), n=8, m=32, v=8, prune=True,
                                                    dtype=torch.float32, device="cpu"))
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    for other in (copy.deepcopy(model), pickle.loads(pickle.dumps(model)), torch.load(buf, weights_only=False)):
        same_layers(model[0], other[0])
        same_layers(model[2], other[2])
        assert other[0].kind == other[2].kind == Kind.NM and other[2].nm_pattern == (8, 32, 8)


@pytest.mark.filterwarnings("ignore:Complex modules")
def test_dtype_conversions_cpu():
    m = MackoLinear.from_nm(linear(32, 16, 10), n=4, m=8, v=2, prune=True, device="cpu")
    st = m.get_extra_state()
    old = m.matrix
    assert m.half() is m and m.matrix is old  # its own dtype: a no-op
    m.float()
    assert m.dtype == torch.float32 and m.bias.dtype == torch.float32 and m.matrix.datatype == DataType.R_32F
    f = m.get_extra_state()
    assert torch.equal(f["positions"], st["positions"]) and torch.equal(f["values"], st["values"].float())
    assert m.kind == Kind.NM and m.nm_pattern == (4, 8, 2)
    m.half()
    assert torch.equal(m.get_extra_state()["values"], st["values"])  # widened exactly, rounded back
    with pytest.raises(TypeError, match="cannot be converted to complex64"):
        m.to(torch.complex64)
    if _lib_has_type("bfloat16"):
        m.bfloat16()
        b = m.get_extra_state()
        assert b["values"].dtype == torch.bfloat16 and torch.equal(b["values"], st["values"].to(torch.bfloat16))
    with pytest.raises(RuntimeError, match="CUDA device"):
        m(torch.randn(32))


# ---------------------------------------------------------------- on the GPU
@pytest.fixture
def cuda(torch_cuda):
    return torch_cuda


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


TOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-5, torch.float64: 1e-12}


@pytest.mark.parametrize("dtype", TORCH_TYPES)
@pytest.mark.parametrize("pattern", [(2, 4, 1), (1, 4, 1), (4, 8, 4), (8, 32, 32), (16, 32, 32), (3, 16, 2)])
@pytest.mark.parametrize("on_gpu", [True, False], ids=["cuda-weight", "cpu-weight"])
def test_gpu_forward_matches_nn_linear(cuda, dtype, pattern, on_gpu):
    """The layer computes nn.Linear's product on the pruned weight (double reference) for batch sizes 1, 8, 64 and
    300 and a 3-D input, bitwise repeatably; a CUDA weight is encoded through the device routine, a CPU one on the
    host, to the same arrays."""
    n, m, v = pattern
    lin = linear(1000, 700, 11, dtype=dtype)
    layer = MackoLinear.from_nm(lin.cuda() if on_gpu else lin, n=n, m=m, v=v, prune=True, dtype=dtype,
                                device="cuda")
    assert layer.matrix.on_device and not layer.matrix.has_host_copy and layer.nm_pattern == pattern
    ref_layer = MackoLinear.from_nm(lin.cpu(), n=n, m=m, v=v, prune=True, dtype=dtype, device="cpu")
    same_layers(layer, ref_layer)
    w = macko.prune_nm(lin.weight.detach().cpu(), n, m, v).to(dtype).cuda().double()
    b = lin.bias.detach().cuda().double()
    for shape in [(1, 1000), (8, 1000), (64, 1000), (300, 1000), (1000,), (3, 100, 1000)]:
        x = torch.randn(*shape, device="cuda").to(dtype)
        with torch.no_grad():
            got = layer(x)
            assert torch.equal(layer(x), got)
        want = torch.nn.functional.linear(x.double(), w, b)
        assert got.shape == want.shape and got.dtype == dtype
        assert rel_err(got, want) < TOL[dtype], shape


def test_gpu_state_copies_and_moves(cuda, tmp_path):
    model = torch.nn.Sequential(MackoLinear.from_nm(linear(96, 128, 12), n=2, m=4, prune=True, device="cuda"),
                                torch.nn.ReLU(),
                                MackoLinear.from_nm(linear(128, 64, 13, bias=False), n=8, m=32, v=32, prune=True,
                                                    device="cuda"))
    x = torch.randn(5, 96, device="cuda").half()
    y, others = check_gpu_state_round_trips(model, x, tmp_path / "nm.pt")
    with torch.no_grad():
        model.float()
        assert rel_err(model(x.float()), y) < 2e-3
    keep = MackoLinear.from_nm(linear(96, 128, 12).cuda(), n=2, m=4, prune=True, keep_host=True)
    assert keep.matrix.on_device and keep.matrix.has_host_copy
    with torch.no_grad():
        assert torch.equal(keep(x), others[0][0](x))


def test_gpu_under_torch_compile_and_graphs(cuda):
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    from torch import _dynamo

    _dynamo.reset()
    model = torch.nn.Sequential(MackoLinear.from_nm(linear(96, 128, 14), n=2, m=4, prune=True), torch.nn.ReLU())
    f = torch.compile(model, fullgraph=True, dynamic=False)
    x = torch.randn(3, 96, device="cuda").half()
    with torch.no_grad():
        want = model(x)
        assert torch.equal(f(x), want)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            model(x)  # warm-up outside the capture
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = model(x)
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, want)
