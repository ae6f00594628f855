"""MackoLinear's layout argument (layout="tiles": the matrix held on the GPU as bitmap tiles, MACKO_LAYOUT_TILES):
what it accepts and refuses, and that the layout survives state_dict loading, torch.save, pickles, deepcopy, dtype
conversions and moves, on any machine (layers kept on the CPU); on the GPU (test_gpu_*, skipped without CUDA) that
the device really holds the tiles and that a tiles layer computes what nn.Linear does for batch sizes 1, 8, 64 and
300. Needs torch (skipped without it)."""

import copy
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from macko import Kind, Layout  # noqa: E402
from macko.torch import MackoLinear  # noqa: E402

from conftest import _lib_has_type, pruned_linear as _pruned_linear  # noqa: E402

needs_bf16 = pytest.mark.skipif(not _lib_has_type("bfloat16"), reason="this libmacko has no bfloat16 matrices")
TILE_TYPES = [torch.float16, pytest.param(torch.bfloat16, marks=needs_bf16)]


def pruned_linear(in_f, out_f, seed, bias=True, dtype=torch.float16, density=0.5):
    return _pruned_linear(in_f, out_f, seed, bias=bias, dtype=dtype, density=density)


def tiles_layer(device="cpu", dtype=torch.float16, **kw):
    return MackoLinear.from_linear(pruned_linear(96, 80, 1, dtype=dtype), dtype=dtype, device=device, layout="tiles",
                                   **kw)


def assert_tiles(layer):
    assert layer.layout == "tiles"
    assert layer.matrix.layout == Layout.TILES
    assert "layout=tiles" in repr(layer)


def same_matrix(a, b):
    assert torch.equal(a.get_extra_state(), b.get_extra_state())
    assert a.matrix is not b.matrix


# ---------------------------------------------------------------- on the CPU (host encoding only)
@pytest.mark.parametrize("dtype", TILE_TYPES)
def test_layout_argument(dtype):
    lin = pruned_linear(96, 80, 1, dtype=dtype)
    rows = MackoLinear.from_linear(lin, dtype=dtype, device="cpu")
    assert rows.layout == "rows" and rows.matrix.layout == Layout.ROWS and "layout" not in repr(rows)
    for given in ("tiles", "TILES", " Tiles ", Layout.TILES, 1):
        t = MackoLinear.from_linear(lin, dtype=dtype, device="cpu", layout=given)
        assert_tiles(t)
        same_matrix(t, rows)  # the same weights: the layout is not part of the encoding
    assert MackoLinear(lin.weight, lin.bias, dtype=dtype, device="cpu", layout="rows").layout == "rows"
    e = MackoLinear.empty(96, 80, dtype=dtype, device="cpu", layout="tiles")
    assert e.layout == "tiles" and e.matrix is None and "empty, layout=tiles" in repr(e)


def test_layout_refusals():
    lin = pruned_linear(32, 16, 2)
    for dtype in (torch.float32, torch.float64):
        with pytest.raises(ValueError, match="layout='tiles' holds float16 and bfloat16 matrices only"):
            MackoLinear.from_linear(lin, dtype=dtype, device="cpu", layout="tiles")
        with pytest.raises(ValueError, match="this MackoLinear is float"):
            MackoLinear.empty(32, 16, dtype=dtype, device="cpu", layout="tiles")
    for bad in ("cols", "", None, 2, -1):
        with pytest.raises(ValueError, match="layout must be 'rows' or 'tiles'"):
            MackoLinear.from_linear(lin, device="cpu", layout=bad)
    with pytest.raises(AttributeError):
        MackoLinear.from_linear(lin, device="cpu").layout = "tiles"  # read-only: the constructor's choice


def test_layout_is_the_layers_not_the_state_dicts():
    t = tiles_layer()
    sd = t.state_dict()
    assert list(sd) == ["bias", "_extra_state"]
    rows = MackoLinear.from_linear(pruned_linear(96, 80, 1), device="cpu")
    assert bytes(sd["_extra_state"].numpy()) == rows.matrix.serialize()  # the library's format: no layout in it
    e = MackoLinear.empty(96, 80, device="cpu", layout="tiles")
    e.load_state_dict(sd, strict=True)
    assert_tiles(e)
    same_matrix(e, t)
    r = MackoLinear.empty(96, 80, device="cpu")
    r.load_state_dict(sd, strict=True)
    assert r.layout == "rows" and r.matrix.layout == Layout.ROWS
    # and the other way: a rows layer's checkpoint into a tiles layer
    e2 = MackoLinear.empty(96, 80, device="cpu", layout="tiles")
    e2.load_state_dict(r.state_dict(), strict=True)
    assert_tiles(e2)
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    e3 = MackoLinear.empty(96, 80, device="cpu", layout="tiles")
    e3.load_state_dict(torch.load(buf, weights_only=True))
    assert_tiles(e3)
    same_matrix(e3, t)


def test_layout_survives_pickles_and_copies():
    model = torch.nn.Sequential(tiles_layer(), torch.nn.ReLU(),
                                MackoLinear.from_linear(pruned_linear(80, 40, 2, bias=False), device="cpu"))
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    for back in (torch.load(buf, weights_only=False), pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        assert_tiles(back[0])
        same_matrix(back[0], model[0])
        assert back[2].layout == "rows" and back[2].matrix.layout == Layout.ROWS


def test_module_pickled_before_layouts_loads_as_rows():
    t = tiles_layer()
    state = t.__getstate__()
    del state["_layout"]  # what a layer pickled by an older macko holds
    old = MackoLinear.__new__(MackoLinear)
    old.__setstate__(state)
    assert old.layout == "rows" and old.matrix.layout == Layout.ROWS
    same_matrix(old, t)


@needs_bf16
def test_layout_survives_conversions_between_16_bit_types():
    t = tiles_layer()
    want = t.matrix.astype("bfloat16").arrays().values
    t.to(torch.bfloat16)
    assert t.dtype == torch.bfloat16
    assert_tiles(t)
    np.testing.assert_array_equal(t.matrix.arrays().values, want)
    t.half()
    assert t.dtype == torch.float16
    assert_tiles(t)


def test_tiles_layer_refuses_wide_types():
    t = tiles_layer()
    old, blob = t.matrix, t.get_extra_state()
    for conv in (lambda m: m.float(), lambda m: m.double(), lambda m: m.to(torch.float32)):
        with pytest.raises(TypeError, match="layout='tiles'.*cannot be converted to float"):
            conv(t)
        assert t.matrix is old and t.dtype == torch.float16 and t.bias.dtype == torch.float16  # nothing changed
        assert torch.equal(t.get_extra_state(), blob)
    e = MackoLinear.empty(8, 4, device="cpu", layout="tiles")
    with pytest.raises(TypeError, match="layout='tiles'"):
        e.float()


def test_quant_layers_have_the_rows_layout():
    lin = pruned_linear(64, 48, 3, density=1.0)
    q = MackoLinear.from_quantized(lin, device="cpu")
    assert q.kind == Kind.QUANT and q.layout == "rows" and "layout" not in repr(q)
    with pytest.raises(ValueError, match="QUANT matrix; this MackoLinear has layout='tiles'"):
        MackoLinear.empty(64, 48, device="cpu", layout="tiles").load_state_dict(q.state_dict())


# ---------------------------------------------------------------- on the GPU
def tile_bytes(w):
    """The bytes of the tile layout of dense weight w (FORMAT.md, "Tile layout", "Size"): per 16 x 16 tile a
    40-byte header and 2 bytes per nonzero, rounded up to 16 bytes, plus a 4-byte offset per tile and one more."""
    r, c = w.shape
    pad = torch.zeros((r + 15) // 16 * 16, (c + 15) // 16 * 16, dtype=torch.int64)
    pad[:r, :c] = (w.detach().cpu().float() != 0).long()
    per_tile = pad.reshape(pad.shape[0] // 16, 16, pad.shape[1] // 16, 16).sum(dim=(1, 3))
    return int(((40 + 2 * per_tile + 15) // 16 * 16).sum()) + 4 * (per_tile.numel() + 1)


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


@pytest.mark.parametrize("dtype", TILE_TYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("on_gpu", [True, False], ids=["cuda-weight", "cpu-weight"])
def test_gpu_tiles_layer_matches_nn_linear(torch_cuda, dtype, bias, on_gpu):
    """The device holds the tiles (storage counts them) whether the weight was encoded on the GPU or on the host, and
    the layer computes nn.Linear's product (double reference) for batch sizes 1, 8, 64 and 300 and a 3-D input."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(1000, 700, bias=bias)
    with torch.no_grad():
        lin.weight.mul_(torch.rand_like(lin.weight) < 0.5)
    lin = lin.to(dtype)
    m = MackoLinear.from_linear(lin.cuda() if on_gpu else lin, dtype=dtype, device="cuda", layout="tiles")
    assert_tiles(m)
    assert m.matrix.on_device and not m.matrix.has_host_copy
    assert m.storage.bytes == tile_bytes(lin.weight)
    w, b = lin.weight.cuda().double(), None if lin.bias is None else lin.bias.cuda().double()
    for shape in [(1, 1000), (8, 1000), (64, 1000), (300, 1000), (1000,), (3, 100, 1000)]:
        x = torch.randn(*shape, device="cuda").to(dtype)
        with torch.no_grad():
            got = m(x)
        want = torch.nn.functional.linear(x.double(), w, b)
        assert got.shape == want.shape and got.dtype == dtype
        assert rel_err(got, want) < 2e-2, shape


@pytest.mark.parametrize("dtype", TILE_TYPES)
def test_gpu_tiles_and_rows_layers_agree(torch_cuda, dtype):
    """The same weights in either layout give the same products up to fp32-accumulation rounding, and a tiles layer
    with keep_host keeps its host copy (the MACKO rows) beside the tiles."""
    lin = pruned_linear(512, 384, 5, dtype=dtype).cuda()
    rows = MackoLinear.from_linear(lin, dtype=dtype)
    tiles = MackoLinear.from_linear(lin, dtype=dtype, layout="tiles", keep_host=True)
    assert tiles.matrix.has_host_copy and tiles.matrix.on_device
    assert tiles.storage.bytes == tile_bytes(lin.weight) != rows.storage.bytes
    for n in (1, 8, 64, 300):
        x = torch.randn(n, 512, device="cuda").to(dtype)
        with torch.no_grad():
            a, b = rows(x), tiles(x)
        assert rel_err(b, a) < 1e-2, n


def outputs(model, dtype=torch.float16, seed=7):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(64, 96, device="cuda", generator=g).to(dtype)
    with torch.no_grad():
        return model(x), model(x[0])


def test_gpu_tiles_layer_state_and_copies(torch_cuda):
    """state_dict into an empty tiles layer, torch.save of the module, deepcopy, a move to the CPU and back: the
    layout stays, the device holds the tiles again, and the outputs are bitwise the same."""
    t = tiles_layer("cuda")
    want_bytes = t.storage.bytes
    y, y1 = outputs(t)
    e = MackoLinear.empty(96, 80, device="cuda", layout="tiles")
    e.load_state_dict(t.state_dict(), strict=True)
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=False)
    c = copy.deepcopy(t)
    moved = copy.deepcopy(t)
    moved.cpu()
    assert_tiles(moved)
    assert not moved.matrix.on_device
    moved.cuda()
    for other in (e, back, c, moved):
        assert_tiles(other)
        assert other.matrix.on_device and other.storage.bytes == want_bytes
        oy, oy1 = outputs(other)
        assert torch.equal(oy, y) and torch.equal(oy1, y1)


@needs_bf16
def test_gpu_tiles_layer_to_bfloat16(torch_cuda):
    """A tiles layer converted with .to(torch.bfloat16) stays in tiles and computes bitwise what a tiles layer built
    in bf16 from the bf16-rounded weight computes."""
    lin = pruned_linear(96, 80, 1)
    t = MackoLinear.from_linear(lin, device="cuda", layout="tiles")
    ref = MackoLinear.from_linear(lin.to(torch.bfloat16), dtype=torch.bfloat16, device="cuda", layout="tiles")
    t.to(torch.bfloat16)
    assert_tiles(t)
    assert t.matrix.on_device and not t.matrix.has_host_copy
    y, y1 = outputs(t, torch.bfloat16)
    r, r1 = outputs(ref, torch.bfloat16)
    assert torch.equal(y, r) and torch.equal(y1, r1)
