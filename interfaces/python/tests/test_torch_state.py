"""MackoLinear's state: state_dict / load_state_dict, torch.save / torch.load, copy.deepcopy, pickling of whole
modules, device moves and dtype conversions. Needs torch (the module is skipped without it). The first half runs on
any machine with layers kept on the CPU (host encoding only); the tests named test_gpu_* need CUDA."""

import copy
import gc
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import macko  # noqa: E402
from macko import DataType, Kind, MackoError, Matrix  # noqa: E402
from macko.torch import MackoLinear  # noqa: E402

from conftest import _lib_has_type, pruned_linear  # noqa: E402

needs_bf16 = pytest.mark.skipif(not _lib_has_type("bfloat16"), reason="this libmacko has no bfloat16 matrices")
needs_f64 = pytest.mark.skipif(not _lib_has_type(np.float64), reason="this libmacko has no float64 matrices")
TORCH_TYPES = [torch.float16, pytest.param(torch.bfloat16, marks=needs_bf16), torch.float32,
               pytest.param(torch.float64, marks=needs_f64)]


def two_layer(device, dtype=torch.float16, empty=False):
    """nn.Sequential(MackoLinear 96->128 with bias, ReLU, MackoLinear 128->64 without), or its empty skeleton."""
    if empty:
        return torch.nn.Sequential(MackoLinear.empty(96, 128, dtype=dtype, device=device), torch.nn.ReLU(),
                                   MackoLinear.empty(128, 64, bias=False, dtype=dtype, device=device))
    return torch.nn.Sequential(
        MackoLinear.from_linear(pruned_linear(96, 128, 1, dtype=dtype), dtype=dtype, device=device),
        torch.nn.ReLU(),
        MackoLinear.from_linear(pruned_linear(128, 64, 2, bias=False, dtype=dtype), dtype=dtype, device=device))


def weight_of(layer):
    """The layer's weight as a float64 CUDA tensor, read from its state (the matrix's serialization)."""
    A = Matrix.deserialize(layer.get_extra_state().numpy())
    return torch.from_numpy(A.to_dense(dtype=np.float64)).cuda()


def matrices(model):
    return [m.matrix for m in model.modules() if isinstance(m, MackoLinear)]


def same_weights(a, b):
    """Same matrices (compared through the serialized bytes, downloaded when needed) and same buffers."""
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sa:
        assert torch.equal(sa[k].cpu(), sb[k].cpu()), k
    for ma, mb in zip(matrices(a), matrices(b)):
        assert ma is not mb and ma._ptr != mb._ptr


# ---------------------------------------------------------------- on the CPU (host encoding only)
def test_state_dict_holds_the_serialized_matrix():
    lin = pruned_linear(96, 128, 1)
    m = MackoLinear.from_linear(lin, device="cpu")
    sd = m.state_dict()
    assert list(sd) == ["bias", "_extra_state"]
    blob = sd["_extra_state"]
    assert blob.dtype == torch.uint8 and blob.dim() == 1 and blob.device.type == "cpu"
    assert bytes(blob.numpy()) == m.matrix.serialize()
    A = Matrix.deserialize(blob.numpy())  # the library's own format: loads without torch
    np.testing.assert_array_equal(A.to_dense(), lin.weight.detach().numpy())


@pytest.mark.parametrize("dtype", TORCH_TYPES)
def test_load_state_dict_into_an_empty_layer(dtype):
    m = MackoLinear.from_linear(pruned_linear(96, 128, 1, dtype=dtype), dtype=dtype, device="cpu")
    e = MackoLinear.empty(96, 128, dtype=dtype, device="cpu")
    with pytest.raises(RuntimeError, match="no weights yet"):
        e(torch.randn(96))
    r = e.load_state_dict(m.state_dict(), strict=True)
    assert not r.missing_keys and not r.unexpected_keys
    same_weights(m, e)
    # the keyword form of the constructor is the same thing
    k = MackoLinear(in_features=96, out_features=128, bias=True, dtype=dtype, device="cpu")
    k.load_state_dict(m.state_dict())
    same_weights(m, k)


@pytest.mark.parametrize("weights_only", [True, False])
def test_torch_save_load_sequential(tmp_path, weights_only):
    model = two_layer("cpu")
    torch.save(model.state_dict(), tmp_path / "ckpt.pt")
    sd = torch.load(tmp_path / "ckpt.pt", weights_only=weights_only)
    assert sorted(sd) == ["0._extra_state", "0.bias", "2._extra_state"]
    fresh = two_layer("cpu", empty=True)
    fresh.load_state_dict(sd, strict=True)
    same_weights(model, fresh)


def test_strict_load_errors():
    model = two_layer("cpu")
    sd = model.state_dict()
    missing = {k: v for k, v in sd.items() if k != "2._extra_state"}
    with pytest.raises(RuntimeError, match="Missing key.*2._extra_state"):
        two_layer("cpu", empty=True).load_state_dict(missing, strict=True)
    with pytest.raises(ValueError, match="128x96 float16; this MackoLinear is 127x96"):
        MackoLinear.empty(96, 127, device="cpu").load_state_dict({"bias": sd["0.bias"][:127],
                                                                   "_extra_state": sd["0._extra_state"]})
    with pytest.raises(ValueError, match="float16; this MackoLinear is 128x96 float32"):
        MackoLinear.empty(96, 128, dtype=torch.float32, device="cpu").load_state_dict(
            {"bias": sd["0.bias"].float(), "_extra_state": sd["0._extra_state"]})
    bad = sd["0._extra_state"].clone()
    bad[-1] ^= 0x55
    with pytest.raises(MackoError, match="FORMAT_ERROR"):
        MackoLinear.empty(96, 128, device="cpu").load_state_dict({"bias": sd["0.bias"], "_extra_state": bad})
    with pytest.raises(ValueError, match="uint8"):
        MackoLinear.empty(96, 128, device="cpu").load_state_dict({"bias": sd["0.bias"], "_extra_state": b"x"})


def test_empty_layer_state_round_trip():
    e = MackoLinear.empty(8, 4, bias=False, device="cpu")
    sd = e.state_dict()
    assert sd["_extra_state"].numel() == 0
    f = MackoLinear.empty(8, 4, bias=False, device="cpu")
    f.load_state_dict(sd)
    assert f.matrix is None


def test_deepcopy_cpu():
    model = two_layer("cpu")
    c = copy.deepcopy(model)
    same_weights(model, c)
    keys = [m._op_key.item() for m in model.modules() if isinstance(m, MackoLinear)]
    ckeys = [m._op_key.item() for m in c.modules() if isinstance(m, MackoLinear)]
    assert not set(keys) & set(ckeys)  # each copy is found by macko::linear under its own key
    want = {k: v.clone() for k, v in c.state_dict().items()}
    del model
    gc.collect()
    for k, v in c.state_dict().items():
        assert torch.equal(v, want[k])


def test_pickle_whole_module_cpu():
    model = two_layer("cpu")
    buf = io.BytesIO()
    torch.save(model, buf)  # the module object itself, not a state dict
    buf.seek(0)
    back = torch.load(buf, weights_only=False)
    same_weights(model, back)
    same_weights(model, pickle.loads(pickle.dumps(model)))


@pytest.mark.filterwarnings("ignore:Complex modules")
def test_dtype_no_ops_and_refusals_cpu():
    m16 = MackoLinear.from_linear(pruned_linear(32, 16, 3), device="cpu")
    want = m16.matrix.serialize()
    old = m16.matrix
    assert m16.half() is m16 and m16.to(torch.float16) is m16  # no-ops for a float16 matrix
    assert m16.matrix is old and m16.matrix.serialize() == want and m16.bias.dtype == torch.float16
    with pytest.raises(TypeError, match="float16 macko matrix and cannot be converted to complex64"):
        m16.to(torch.complex64)
    assert m16.matrix is old and m16.bias.dtype == torch.float16  # nothing was converted
    with pytest.raises(ValueError, match="dtype must be"):
        MackoLinear.empty(8, 4, dtype=torch.int8)


def converted_values(m, dtype):
    """The layer's matrix values converted as Matrix.astype does, for comparing."""
    return m.matrix.astype(dtype).arrays().values


@needs_bf16
def test_to_bfloat16_cpu():
    """A converted fp16 layer moved with .to(torch.bfloat16): the values re-encoded in bf16 at the same positions,
    the bias converted, and the result round-trips through state_dict and pickle into bf16 layers."""
    lin = pruned_linear(32, 16, 3)
    m = MackoLinear.from_linear(lin, device="cpu")
    before = m.matrix.arrays()
    want_values = converted_values(m, "bfloat16")
    model = torch.nn.Sequential(torch.nn.LayerNorm(32), m)
    assert model.to(torch.bfloat16) is model
    assert m.dtype == torch.bfloat16 and m.bias.dtype == torch.bfloat16
    assert m.matrix.datatype == DataType.R_16BF
    after = m.matrix.arrays()
    np.testing.assert_array_equal(after.deltas, before.deltas)
    np.testing.assert_array_equal(after.row_ptr, before.row_ptr)
    np.testing.assert_array_equal(after.values, want_values)
    # the same rounding as torch's
    w_bf16 = lin.weight.detach().to(torch.bfloat16)
    dense = torch.from_numpy(m.matrix.to_dense().view(np.int16)).view(torch.bfloat16)
    assert torch.equal(dense, w_bf16)
    assert "dtype=torch.bfloat16" in repr(m)
    # state_dict into an empty bf16 layer; a fp16 layer refuses it
    e = MackoLinear.empty(32, 16, dtype=torch.bfloat16, device="cpu")
    e.load_state_dict(m.state_dict(), strict=True)
    same_weights(m, e)
    with pytest.raises(ValueError, match="16x32 bfloat16; this MackoLinear is 16x32 float16"):
        MackoLinear.empty(32, 16, device="cpu").load_state_dict(m.state_dict())
    back = pickle.loads(pickle.dumps(model))
    same_weights(model, back)
    assert back[1].dtype == torch.bfloat16 and back[1].matrix.datatype == DataType.R_16BF
    # and on to the other types (.float() widens exactly, .half() rounds back)
    m.float()
    assert m.matrix.datatype == DataType.R_32F and m.bias.dtype == torch.float32
    assert torch.equal(torch.from_numpy(m.matrix.to_dense()), w_bf16.float())


@needs_bf16
def test_bf16_layer_from_weights_cpu():
    lin = pruned_linear(40, 24, 4, dtype=torch.float32)
    m = MackoLinear.from_linear(lin, dtype=torch.bfloat16, device="cpu")
    assert m.matrix.datatype == DataType.R_16BF and m.bias.dtype == torch.bfloat16
    dense = torch.from_numpy(m.matrix.to_dense().view(np.int16)).view(torch.bfloat16)
    assert torch.equal(dense, lin.weight.detach().to(torch.bfloat16))  # torch's rounding, bit for bit
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    e = MackoLinear.empty(40, 24, dtype=torch.bfloat16, device="cpu")
    e.load_state_dict(torch.load(buf, weights_only=True))
    same_weights(m, e)


@needs_f64
def test_double_cpu():
    m = MackoLinear.from_linear(pruned_linear(32, 16, 3), device="cpu")
    m.double()
    assert m.matrix.datatype == DataType.R_64F and m.bias.dtype == torch.float64
    m.half()
    assert m.matrix.datatype == DataType.R_16F and m.bias.dtype == torch.float16


@pytest.mark.skipif(not macko.has_symbol("macko_mat_create_nm_dense_host"), reason="this libmacko has no N:M kind")
def test_every_kind_loads_into_empty_layers(tmp_path):
    """A model of a MACKO, a QUANT and an N:M layer: its checkpoint loads into a skeleton of empty layers, each layer
    taking the kind its state names, and the whole module pickles and deep-copies with every kind."""
    lin = pruned_linear(64, 64, 9, dtype=torch.float32, density=1.0)
    model = torch.nn.Sequential(MackoLinear.from_linear(lin, device="cpu"),
                                MackoLinear.from_quantized(lin, device="cpu"),
                                MackoLinear.from_nm(lin, n=2, m=4, prune=True, device="cpu"))
    torch.save(model.state_dict(), tmp_path / "mixed.pt")
    fresh = torch.nn.Sequential(*[MackoLinear.empty(64, 64, device="cpu") for _ in range(3)])
    fresh.load_state_dict(torch.load(tmp_path / "mixed.pt", weights_only=True), strict=True)
    assert [layer.kind for layer in fresh] == [Kind.MACKO, Kind.QUANT, Kind.NM]
    assert fresh[2].nm_pattern == (2, 4, 1)
    for other in (fresh, copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        for a, b in zip(model, other):
            assert a.kind == b.kind and a.matrix._ptr != b.matrix._ptr
            np.testing.assert_array_equal(a.matrix.to_dense(), b.matrix.to_dense())


def test_cpu_layer_does_not_compute():
    m = MackoLinear.from_linear(pruned_linear(32, 16, 3), device="cpu")
    with pytest.raises(RuntimeError, match=r"CUDA device.*\.cuda\(\)"):
        m(torch.randn(32, dtype=torch.float16))


# ---------------------------------------------------------------- on the GPU
@pytest.fixture
def cuda(torch_cuda):
    return torch_cuda


def outputs(model, seed=7):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(5, 96, device="cuda", generator=g).half()
    with torch.no_grad():
        return model(x), model(x[0])


def test_gpu_checkpoint_loads_into_a_fresh_model(cuda, tmp_path):
    model = two_layer("cuda")
    y, y1 = outputs(model)
    for m in matrices(model):
        assert m.on_device and not m.has_host_copy  # the default: no host copy
    sd = model.state_dict()
    assert all(v.device.type == "cpu" for k, v in sd.items() if k.endswith("_extra_state"))
    for m in matrices(model):
        assert not m.has_host_copy  # state_dict downloaded for the bytes and released again
    torch.save(sd, tmp_path / "ckpt.pt")
    for weights_only in (True, False):
        fresh = two_layer("cuda", empty=True)
        fresh.load_state_dict(torch.load(tmp_path / "ckpt.pt", weights_only=weights_only), strict=True)
        for m in matrices(fresh):
            assert m.on_device and not m.has_host_copy  # uploaded at load time
        fy, fy1 = outputs(fresh)
        assert torch.equal(fy, y) and torch.equal(fy1, y1)  # bitwise the same outputs
    # loaded with map_location="cuda": the bytes pass through the GPU once, the layer still gets them right
    fresh = two_layer("cuda", empty=True)
    fresh.load_state_dict(torch.load(tmp_path / "ckpt.pt", map_location="cuda", weights_only=True))
    assert torch.equal(outputs(fresh)[0], y)


def test_gpu_checkpoint_into_a_cpu_skeleton_then_cuda(cuda):
    model = two_layer("cuda")
    y, _ = outputs(model)
    fresh = two_layer("cpu", empty=True)
    fresh.load_state_dict(model.state_dict())
    for m in matrices(fresh):
        assert not m.on_device and m.has_host_copy
    fresh.cuda()
    for m in matrices(fresh):
        assert m.on_device and not m.has_host_copy
    assert torch.equal(outputs(fresh)[0], y)


def test_gpu_deepcopy_stays_on_the_gpu(cuda):
    model = two_layer("cuda")
    y, y1 = outputs(model)
    c = copy.deepcopy(model)
    for m, mc in zip(matrices(model), matrices(c)):
        assert mc.on_device and not mc.has_host_copy and mc._ptr != m._ptr
        assert not m.has_host_copy  # the original keeps its state
    for a, b in zip(model, c):
        if isinstance(a, MackoLinear):  # both on the thread's shared handle
            assert b.handle is a.handle is macko.torch.shared_handle(a.device) and b.device == a.device
    del model
    gc.collect()
    cy, cy1 = outputs(c)
    assert torch.equal(cy, y) and torch.equal(cy1, y1)


def test_gpu_pickle_whole_module(cuda):
    model = two_layer("cuda")
    y, _ = outputs(model)
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=False)
    assert torch.equal(outputs(back)[0], y)
    buf.seek(0)
    host = torch.load(buf, map_location="cpu", weights_only=False)  # follows map_location: host encoding only
    assert all(not m.on_device for m in matrices(host[:1]))
    assert torch.equal(outputs(host.cuda())[0], y)


def test_gpu_dtype_no_op(cuda):
    model = two_layer("cuda")
    y, _ = outputs(model)
    model.half()
    model.to("cuda", torch.float16)
    assert torch.equal(outputs(model)[0], y)


@needs_bf16
def test_gpu_to_bfloat16(cuda):
    """A converted fp16 model moved with .to(torch.bfloat16) runs in bf16 end to end: its output equals that of the
    same model built in bf16 from the bf16-rounded weights, bitwise; state_dict and deepcopy keep it."""
    model = two_layer("cuda")
    ref = torch.nn.Sequential(
        MackoLinear.from_linear(pruned_linear(96, 128, 1).to(torch.bfloat16), dtype=torch.bfloat16, device="cuda"),
        torch.nn.ReLU(),
        MackoLinear.from_linear(pruned_linear(128, 64, 2, bias=False).to(torch.bfloat16), dtype=torch.bfloat16,
                                device="cuda"))
    model.to(torch.bfloat16)
    for m in matrices(model):
        assert m.datatype == DataType.R_16BF and m.on_device and not m.has_host_copy
    g = torch.Generator(device="cuda").manual_seed(7)
    x = torch.randn(5, 96, device="cuda", generator=g).to(torch.bfloat16)
    with torch.no_grad():
        y = model(x)
        assert y.dtype == torch.bfloat16
        assert torch.equal(y, ref(x))
        h = torch.relu(torch.nn.functional.linear(x.double(), weight_of(model[0]), model[0].bias.double()))
        dense = torch.nn.functional.linear(h, weight_of(model[2]))
    assert ((y.double() - dense).norm() / dense.norm()).item() < 2e-2
    fresh = two_layer("cuda", dtype=torch.bfloat16, empty=True)
    fresh.load_state_dict(model.state_dict(), strict=True)
    c = copy.deepcopy(model)
    with torch.no_grad():
        assert torch.equal(fresh(x), y) and torch.equal(c(x), y)


@needs_bf16
def test_gpu_bf16_under_torch_compile(cuda):
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    from torch import _dynamo  # (import torch._dynamo would make torch a local name of this function)

    _dynamo.reset()
    model = two_layer("cuda").to(torch.bfloat16)
    f = torch.compile(model, fullgraph=True, dynamic=False)
    x = torch.randn(3, 96, device="cuda").to(torch.bfloat16)
    with torch.no_grad():
        got = f(x)
        assert got.dtype == torch.bfloat16 and torch.equal(got, model(x))


def test_gpu_move_to_cpu_and_back(cuda):
    model = two_layer("cuda")
    y, _ = outputs(model)
    model.cpu()
    for m in matrices(model):
        assert not m.on_device and m.has_host_copy
    model.to("cuda")
    assert torch.equal(outputs(model)[0], y)


def test_gpu_keep_host_survives_state_round_trip(cuda):
    lin = pruned_linear(96, 128, 1)
    m = MackoLinear.from_linear(lin.cuda(), keep_host=True)
    assert m.matrix.has_host_copy and m.matrix.on_device
    e = MackoLinear.empty(96, 128, keep_host=True)
    e.load_state_dict(m.state_dict())
    assert e.matrix.has_host_copy and e.matrix.on_device
    c = copy.deepcopy(m)
    assert c.matrix.has_host_copy and c.matrix.on_device
    x = torch.randn(3, 96, device="cuda").half()
    with torch.no_grad():
        assert torch.equal(e(x), m(x)) and torch.equal(c(x), m(x))
