"""MackoLinear with a QUANT matrix: construction, state (state_dict, torch.save, pickle, deepcopy), dtype refusals on
any machine (layers kept on the CPU); forward against a float32 reference of W + O for n = 1..17, spmv/spmm, device
moves and checkpoints on the GPU (test_gpu_*, skipped without CUDA). Needs torch (skipped without it)."""

import copy
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import macko  # noqa: E402
from macko import Kind, MackoError, Matrix, Status  # noqa: E402
from macko.torch import MackoLinear  # noqa: E402

from conftest import check_gpu_state_round_trips  # noqa: E402
from quant_ref import decode_o, pack_spqr, pack_words, ptcsr, random_parts, random_quant  # noqa: E402


def linear(in_f, out_f, seed, bias=True):
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(in_f, out_f, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(out_f, in_f, generator=g))
        if bias:
            lin.bias.copy_(torch.randn(out_f, generator=g))
    return lin


def arrays_of(layer):
    """The layer's QUANT arrays, read from its state (downloaded when needed)."""
    st = layer.get_extra_state()
    return st["words"].numpy().view(np.uint64), st["outlier_row_ptr"].numpy(), st["outlier_entries"].numpy().view(
        np.uint32)


def same_layers(a, b):
    for x, y in zip(arrays_of(a), arrays_of(b)):
        np.testing.assert_array_equal(x, y)
    assert (a.bias is None) == (b.bias is None)
    if a.bias is not None:
        assert torch.equal(a.bias.cpu(), b.bias.cpu())
    assert a.quantization_error == b.quantization_error
    assert a.matrix is not b.matrix and a.matrix._ptr != b.matrix._ptr


# ---------------------------------------------------------------- on the CPU (host encoding only)
def test_from_quantized_cpu():
    lin = linear(70, 50, 1)
    m = MackoLinear.from_quantized(lin, device="cpu")
    assert m.kind == Kind.QUANT and m.dtype == torch.float16 and m.device.type == "cpu"
    assert (m.in_features, m.out_features) == (70, 50)
    assert torch.equal(m.bias, lin.bias.detach().half())
    ref = Matrix.from_dense_quantized(lin.weight.detach())
    for got, want in zip(arrays_of(m), ref.quant_arrays()[1:]):
        np.testing.assert_array_equal(got, want)
    assert m.quantization_error == ref.quantization_error == macko.quantization_error(lin.weight, m.matrix)
    assert 0.05 < m.quantization_error < 0.2
    assert "kind=QUANT, outliers=%d, quantization_error=" % m.storage.entries in repr(m)
    assert m.storage.entries == round(0.01 * 70 * 50)
    # the settings go through; a tensor weight without bias
    t = MackoLinear.from_quantized(lin.weight, outliers=None, device="cpu")
    assert t.bias is None and t.storage.entries == 0 and t.quantization_error > m.quantization_error
    h = MackoLinear.from_quantized(lin.weight.half(), bias=True, threshold=0.1, device="cpu")
    assert h.storage.entries > 0 and torch.equal(h.bias, torch.zeros(50, dtype=torch.float16))
    b = MackoLinear.from_quantized(lin.weight.to(torch.bfloat16), device="cpu")
    assert b.kind == Kind.QUANT and b.dtype == torch.float16
    with pytest.raises(MackoError) as e:
        MackoLinear.from_quantized(lin, bits=4, device="cpu")
    assert e.value.status == Status.NOT_SUPPORTED
    with pytest.raises(ValueError, match="2-D"):
        MackoLinear.from_quantized(lin.weight[0], device="cpu")


def test_from_quant_arrays_cpu():
    m = MackoLinear.from_quantized(linear(40, 24, 2), device="cpu")
    a = MackoLinear.from_quant_arrays(40, 24, *arrays_of(m), bias=m.bias, device="cpu")
    assert a.kind == Kind.QUANT and a.quantization_error is None
    for x, y in zip(arrays_of(a), arrays_of(m)):
        np.testing.assert_array_equal(x, y)
    # SpQR's dtypes (int64 words, int32 entries) as tensors
    w, rp, en = arrays_of(m)
    s = MackoLinear.from_quant_arrays(40, 24, torch.from_numpy(w.view(np.int64)), torch.from_numpy(rp),
                                      torch.from_numpy(en.view(np.int32)), device="cpu")
    np.testing.assert_array_equal(arrays_of(s)[0], w)
    with pytest.raises(ValueError, match="words has"):
        MackoLinear.from_quant_arrays(49, 24, w, rp, en, device="cpu")  # 4 tile columns, not 3


def test_from_spqr_cpu():
    """SpQR's QuantizedLinear holds m x n = out_features x in_features as int64 dense_weights and int32 row_offsets
    and col_vals (here in PTCSR); the layer holds the converted matrix."""
    rows, cols = 32, 40
    parts = random_parts(rows, cols, np.random.default_rng(9))
    _, rp, en = random_quant(rows, cols, seed=9)
    ro, cv = ptcsr(rows, rp, en)
    m = MackoLinear.from_spqr(cols, rows, torch.from_numpy(pack_spqr(rows, cols, *parts).view(np.int64)),
                              torch.from_numpy(ro), torch.from_numpy(cv.view(np.int32)), bias=True, device="cpu")
    assert m.kind == Kind.QUANT and (m.in_features, m.out_features) == (cols, rows) and m.quantization_error is None
    w, got_rp, got_en = arrays_of(m)
    np.testing.assert_array_equal(w, pack_words(rows, cols, *parts))
    np.testing.assert_array_equal(got_rp, rp)
    np.testing.assert_array_equal(got_en, en)


def test_state_dict_round_trip_cpu(tmp_path):
    m = MackoLinear.from_quantized(linear(70, 50, 3), device="cpu")
    sd = m.state_dict()
    assert list(sd) == ["bias", "_extra_state"]
    st = sd["_extra_state"]
    assert st["kind"] == "quant" and (st["rows"], st["cols"], st["bits"]) == (50, 70, 3)
    assert st["words"].dtype == torch.int64 and st["outlier_entries"].dtype == torch.int32
    assert st["quantization_error"] == m.quantization_error
    for weights_only in (True, False):
        torch.save(sd, tmp_path / "q.pt")
        e = MackoLinear.empty(70, 50, device="cpu")
        r = e.load_state_dict(torch.load(tmp_path / "q.pt", weights_only=weights_only), strict=True)
        assert not r.missing_keys and not r.unexpected_keys
        assert e.kind == Kind.QUANT
        same_layers(m, e)
    # a layer of the other kind takes it too: the kind comes with the state
    k = MackoLinear.from_linear(linear(70, 50, 4), device="cpu")
    assert k.kind == Kind.MACKO
    k.load_state_dict(sd)
    assert k.kind == Kind.QUANT
    same_layers(m, k)


def test_state_dict_errors_cpu():
    sd = MackoLinear.from_quantized(linear(70, 50, 5), device="cpu").state_dict()
    with pytest.raises(ValueError, match="50x70 float16; this MackoLinear is 51x70"):
        MackoLinear.empty(70, 51, bias=False, device="cpu").load_state_dict({"_extra_state": sd["_extra_state"]})
    with pytest.raises(ValueError, match="float16; this MackoLinear is 50x70 float32"):
        MackoLinear.empty(70, 50, dtype=torch.float32, device="cpu").load_state_dict(
            {"bias": sd["bias"].float(), "_extra_state": sd["_extra_state"]})
    bad = dict(sd["_extra_state"])
    bad["words"] = bad["words"].clone()
    bad["words"][3] |= 1 << 15  # a bit that must be zero
    with pytest.raises(MackoError) as e:
        MackoLinear.empty(70, 50, device="cpu").load_state_dict({"bias": sd["bias"], "_extra_state": bad})
    assert e.value.position == 5 and "word 3" in e.value.message
    lacking = {k: v for k, v in sd["_extra_state"].items() if k != "outlier_entries"}
    with pytest.raises(ValueError, match="outlier_entries"):
        MackoLinear.empty(70, 50, device="cpu").load_state_dict({"bias": sd["bias"], "_extra_state": lacking})
    with pytest.raises(ValueError, match="dict of the QUANT arrays"):
        MackoLinear.empty(70, 50, device="cpu").load_state_dict({"bias": sd["bias"], "_extra_state": {"kind": "x"}})


def test_serialized_quant_state_cpu(quant_serialize):
    """A QUANT matrix's serialized bytes (file format v2) load as extra state too: needs QUANT serialization."""
    m = MackoLinear.from_quantized(linear(70, 50, 6), device="cpu")
    blob = torch.from_numpy(np.frombuffer(m.matrix.serialize(), np.uint8).copy())
    e = MackoLinear.empty(70, 50, device="cpu")
    e.load_state_dict({"bias": m.bias, "_extra_state": blob})
    assert e.kind == Kind.QUANT and e.quantization_error is None
    for x, y in zip(arrays_of(e), arrays_of(m)):
        np.testing.assert_array_equal(x, y)


def test_copies_and_pickles_cpu():
    model = torch.nn.Sequential(MackoLinear.from_quantized(linear(70, 50, 7), device="cpu"), torch.nn.ReLU(),
                                MackoLinear.from_quantized(linear(50, 20, 8, bias=False), outliers=0.05,
                                                           device="cpu"))
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    for other in (copy.deepcopy(model), pickle.loads(pickle.dumps(model)), torch.load(buf, weights_only=False)):
        same_layers(model[0], other[0])
        same_layers(model[2], other[2])
        assert other[0].kind == other[2].kind == Kind.QUANT


def test_dtype_refusals_and_forward_cpu():
    m = MackoLinear.from_quantized(linear(32, 16, 9), device="cpu")
    old = m.matrix
    assert m.half() is m and m.to(torch.float16) is m and m.matrix is old
    for conv in (lambda: m.float(), lambda: m.bfloat16(), lambda: m.double(), lambda: m.to(torch.float32)):
        with pytest.raises(TypeError, match="QUANT matrix.*float16 only"):
            conv()
        assert m.matrix is old and m.dtype == torch.float16 and m.bias.dtype == torch.float16
    for dt in (torch.float32, torch.bfloat16):
        with pytest.raises(TypeError, match="float16 input only"):
            m(torch.randn(32).to(dt))
    with pytest.raises(RuntimeError, match="CUDA device"):
        m(torch.randn(32).half())


# ---------------------------------------------------------------- on the GPU
@pytest.fixture
def cuda(torch_cuda):
    return torch_cuda


def reference(layer, x):
    """(x @ (W + O).T + b, the same before the bias, x @ |W + O|.T + |b|) in float32: W from the layer's words
    (exported without outliers), O its outliers."""
    words, rp, en = arrays_of(layer)
    rows, cols = layer.out_features, layer.in_features
    w = Matrix.from_quant_arrays(rows, cols, words, np.zeros(rows + 1, np.int32), []).to_dense()
    a = torch.from_numpy(w.astype(np.float32) + decode_o(rows, cols, rp, en).astype(np.float32)).cuda()
    pre = x.float() @ a.T
    bound = x.float().abs() @ a.abs().T
    y = pre
    if layer.bias is not None:
        y = pre + layer.bias.float()
        bound += layer.bias.float().abs()
    return y, pre, bound


def check_close(y, ref, pre, bound):
    """y (fp16) is ref up to the rounding of the result to fp16 and of the fp16 bias addition (half an ulp each,
    allowed twice over), plus half an fp16 ulp of every product (a kernel may round w*x to fp16 before it
    accumulates in fp32; the fp32 accumulation error is far below that). A wrong decode misses by a whole step of
    a tile row's scale times |x|."""
    assert y.dtype == torch.float16
    err = (y.float() - ref).abs()
    tol = 2.0**-10 * (ref.abs() + pre.abs()) + 2.0**-11 * bound + 1e-6
    assert bool((err <= tol).all()), (err - tol).max().item()


@pytest.mark.parametrize("shape,kw", [((70, 50), {}), ((96, 128), {"outliers": None}),
                                      ((33, 17), {"threshold": 0.2}), ((256, 64), {"outliers": 0.05})])
def test_gpu_forward_n_1_to_17(cuda, shape, kw):
    in_f, out_f = shape
    layer = MackoLinear.from_quantized(linear(in_f, out_f, 10).cuda(), **kw)
    assert layer.device.type == "cuda" and layer.matrix.on_device and not layer.matrix.has_host_copy
    g = torch.Generator(device="cuda").manual_seed(11)
    for n in range(1, 18):
        x = torch.randn(n, in_f, device="cuda", generator=g).half()
        with torch.no_grad():
            y = layer(x)
            assert torch.equal(layer(x), y)  # bitwise deterministic
        check_close(y, *reference(layer, x))
    with torch.no_grad():
        assert torch.equal(layer(x[0]), layer(x[:1])[0])


def test_gpu_spmv_spmm_alpha_beta(cuda, handle):
    layer = MackoLinear.from_quantized(linear(70, 50, 12), bias=False, device="cpu")
    A = layer.matrix.copy()
    A.upload(handle)
    xb = torch.randn(2 * 70, device="cuda").half()
    y0 = torch.randn(3 * 50, device="cuda").half()
    x, y = xb[::2], y0.clone()[::3]
    macko.spmv(handle, A, x, y, alpha=0.5, beta=-2.0)
    ref, _, bound = reference(layer, x[None])
    want = 0.5 * ref[0] - 2.0 * y0[::3].float()
    check_close(y, want, want, 0.5 * bound[0] + 2.0 * y0[::3].float().abs())
    B = torch.randn(5, 70, device="cuda").half()
    C1 = torch.empty(5, 50, device="cuda").half()
    C2 = torch.empty(5, 50, device="cuda").half()
    macko.spmm(handle, A, B.T, C1.T)
    macko.spmm_ex(handle, A, B.T, C2.T)
    assert torch.equal(C1, C2)
    check_close(C1, *reference(layer, B))
    with pytest.raises(ValueError, match="float16 x and y only"):
        macko.spmv(handle, A, x.float(), y.float())
    with pytest.raises(MackoError) as e:
        macko.spmv(handle, A, torch.zeros(50, device="cuda").half(), torch.zeros(70, device="cuda").half(), op="T")
    assert e.value.status == Status.NOT_SUPPORTED


def test_gpu_state_moves_and_copies(cuda, tmp_path):
    model = torch.nn.Sequential(MackoLinear.from_quantized(linear(96, 128, 13), device="cuda"), torch.nn.ReLU(),
                                MackoLinear.from_quantized(linear(128, 64, 14, bias=False), device="cuda"))
    x = torch.randn(5, 96, device="cuda").half()
    check_gpu_state_round_trips(model, x, tmp_path / "q.pt")
    keep = MackoLinear.from_quantized(linear(96, 128, 13), keep_host=True)
    assert keep.matrix.on_device and keep.matrix.has_host_copy
    with torch.no_grad():
        assert torch.equal(keep(x), model[0](x))


def test_gpu_under_torch_compile(cuda):
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    from torch import _dynamo

    _dynamo.reset()
    model = torch.nn.Sequential(MackoLinear.from_quantized(linear(96, 128, 15)), torch.nn.ReLU())
    f = torch.compile(model, fullgraph=True, dynamic=False)
    x = torch.randn(3, 96, device="cuda").half()
    with torch.no_grad():
        assert torch.equal(f(x), model(x))
