"""GPU tests of the Python wrapper: skip themselves unless torch with CUDA and a usable device are present."""

import numpy as np
import pytest

import macko
from macko import MackoError, Matrix

from test_host import random_dense

TOL = {np.float16: 2e-2, np.float32: 1e-5}


def rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape", [(512, 300), (37, 1000), (1, 17)])
def test_spmv_matches_torch_matmul(torch_cuda, handle, dtype, shape):
    torch = torch_cuda
    tdt = torch.float16 if dtype == np.float16 else torch.float32
    a = random_dense(*shape, 0.4, dtype, seed=21)
    A = Matrix.from_dense(a)
    A.upload(handle)
    W = torch.from_numpy(a).cuda()
    x = torch.empty(shape[1], device="cuda", dtype=tdt).uniform_(-1, 1)
    y = torch.full((shape[0],), float("nan"), device="cuda", dtype=tdt)  # beta = 0: y is never read
    macko.spmv(handle, A, x, y)
    want = (W.double() @ x.double()).cpu().numpy()
    torch.cuda.current_stream().synchronize()
    assert rel_err(y.cpu().numpy(), want) < TOL[dtype]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_spmv_strides_alpha_beta_and_transpose(torch_cuda, handle, dtype):
    torch = torch_cuda
    tdt = torch.float16 if dtype == np.float16 else torch.float32
    a = random_dense(200, 130, 0.3, dtype, seed=22)
    A = Matrix.from_dense(a)
    A.upload(handle)
    W = torch.from_numpy(a).cuda().double()
    xb = torch.empty(2 * 130, device="cuda", dtype=tdt).uniform_(-1, 1)
    yb = torch.empty(3 * 200, device="cuda", dtype=tdt).uniform_(-1, 1)
    x, y = xb[::2], yb[::3]
    y0 = y.double().clone()
    macko.spmv(handle, A, x, y, alpha=0.5, beta=-2.0)
    want = 0.5 * (W @ x.double()) - 2.0 * y0
    assert rel_err(y.cpu().numpy(), want.cpu().numpy()) < TOL[dtype]

    A.analysis(handle, "T")
    xt = torch.empty(200, device="cuda", dtype=tdt).uniform_(-1, 1)
    yt = torch.zeros(130, device="cuda", dtype=tdt)
    macko.spmv(handle, A, xt, yt, op="T")
    assert rel_err(yt.cpu().numpy(), (W.T @ xt.double()).cpu().numpy()) < TOL[dtype]


def test_spmv_device_pointer_mode_and_stream(torch_cuda, handle):
    torch = torch_cuda
    a = random_dense(64, 96, 0.5, np.float32, seed=23)
    A = Matrix.from_dense(a)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        A.upload(handle)  # on the handle's stream (the default one): ordered before s's work by the sync below
        torch.cuda.synchronize()
        handle.pointer_mode = macko.PointerMode.DEVICE
        alpha = torch.tensor([2.0], device="cuda")
        beta = torch.tensor([0.0], device="cuda")
        x = torch.rand(96, device="cuda")
        y = torch.empty(64, device="cuda")
        macko.spmv(handle, A, x, y, alpha=alpha, beta=beta)
        assert handle.stream == s.cuda_stream  # the handle follows torch's current stream
        with pytest.raises(ValueError):
            macko.spmv(handle, A, x, y, alpha=1.0, beta=0.0)  # numbers in device mode
    s.synchronize()
    want = 2.0 * (torch.from_numpy(a).cuda().double() @ x.double())
    assert rel_err(y.cpu().numpy(), want.cpu().numpy()) < 1e-5


def test_spmv_errors_from_the_library(torch_cuda, handle):
    torch = torch_cuda
    A = Matrix.from_dense(random_dense(8, 8, 0.5, np.float32, seed=24))
    x, y = torch.rand(8, device="cuda"), torch.zeros(8, device="cuda")
    with pytest.raises(MackoError) as e:  # not uploaded yet
        macko.spmv(handle, A, x, y)
    assert e.value.status_name == "MACKO_STATUS_NOT_INITIALIZED"
    with pytest.raises(ValueError):
        macko.spmv(handle, A, x.half(), y)


def test_device_encoding_equals_host_encoding(torch_cuda, handle):
    torch = torch_cuda
    a = random_dense(70, 150, 0.3, np.float16, seed=25)
    host = Matrix.from_dense(a)
    dev = Matrix.from_dense_device(handle, torch.from_numpy(a).cuda())
    dev.download(handle)
    for g, w in zip(dev.arrays(), host.arrays()):
        np.testing.assert_array_equal(g, w)
    indptr, indices, data = host.to_csr()
    dcsr = Matrix.from_csr_device(handle, torch.from_numpy(indptr).cuda(), torch.from_numpy(indices).cuda(),
                                  torch.from_numpy(data).cuda(), a.shape)
    dcsr.download(handle)
    np.testing.assert_array_equal(dcsr.to_dense(), a)


def test_release_host(torch_cuda, handle):
    A = Matrix.from_dense(random_dense(16, 40, 0.5, np.float16, seed=26))
    A.upload(handle)
    A.release_host()
    assert A.info.rows == 16  # info works on either copy
    with pytest.raises(MackoError) as e:
        A.to_dense()
    assert e.value.status_name == "MACKO_STATUS_NOT_INITIALIZED"


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype_name", ["float16", "float32"])
def test_macko_linear_matches_nn_linear(torch_cuda, bias, dtype_name):
    torch = torch_cuda
    from macko.torch import MackoLinear

    dt = getattr(torch, dtype_name)
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 384, bias=bias).cuda().to(dt)
    with torch.no_grad():  # prune half the weights
        lin.weight.mul_((torch.rand_like(lin.weight.float()) < 0.5).to(dt))
    m = MackoLinear.from_linear(lin, dtype=dt)
    assert m.storage.effective_density < 0.7  # half the weights pruned
    tol = 2e-2 if dt == torch.float16 else 1e-5
    for shape in [(256,), (8, 256), (2, 3, 256)]:
        x = torch.randn(*shape, device="cuda", dtype=dt)
        with torch.no_grad():
            want = torch.nn.functional.linear(x.double(), lin.weight.double(),
                                              None if lin.bias is None else lin.bias.double())
            got = m(x)
        assert got.shape == want.shape and got.dtype == x.dtype
        assert rel_err(got.cpu().numpy(), want.cpu().numpy()) < tol


def test_cupy_arrays(torch_cuda, handle):
    cp = pytest.importorskip("cupy")
    a = random_dense(50, 80, 0.4, np.float32, seed=27)
    A = Matrix.from_dense(a)
    A.upload(handle)
    x = cp.random.rand(80).astype(cp.float32)
    y = cp.zeros(50, cp.float32)
    macko.spmv(handle, A, x, y)
    cp.cuda.get_current_stream().synchronize()
    assert rel_err(cp.asnumpy(y), a.astype(np.float64) @ cp.asnumpy(x)) < 1e-5


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n", [1, 3, 8, 17])
def test_spmm_matches_torch_matmul(torch_cuda, handle, dtype, n):
    torch = torch_cuda
    tdt = torch.float16 if dtype == np.float16 else torch.float32
    a = random_dense(300, 200, 0.4, dtype, seed=31)
    A = Matrix.from_dense(a)
    A.upload(handle)
    A.analysis(handle, "T")
    W = torch.from_numpy(a).cuda().double()
    X = torch.empty(n, 200, device="cuda", dtype=tdt).uniform_(-1, 1)  # a row-major batch: B = X.T
    Y = torch.full((n, 300), float("nan"), device="cuda", dtype=tdt)
    macko.spmm(handle, A, X.T, Y.T)
    torch.cuda.current_stream().synchronize()
    assert rel_err(Y.cpu().numpy(), (X.double() @ W.T).cpu().numpy()) < TOL[dtype]
    Xt = torch.empty(n, 300, device="cuda", dtype=tdt).uniform_(-1, 1)
    Yt = torch.empty(n, 200, device="cuda", dtype=tdt).uniform_(-1, 1)
    want = 0.5 * (Xt.double() @ W) - 2.0 * Yt.double()
    macko.spmm(handle, A, Xt.T, Yt.T, alpha=0.5, beta=-2.0, op="T")
    torch.cuda.current_stream().synchronize()
    assert rel_err(Yt.cpu().numpy(), want.cpu().numpy()) < TOL[dtype]


def test_macko_linear_under_torch_compile(torch_cuda):
    """MackoLinear inside torch.compile(fullgraph=True): the layer is the custom op macko::linear, bitwise equal
    to eager; a layer swapped for a new one (other weights, same shape) is used without recompiling stale data;
    the compiled function can be captured in a CUDA graph."""
    torch = torch_cuda
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    import torch._dynamo
    from macko.torch import MackoLinear

    def pruned(seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        w = torch.randn(384, 256, device="cuda", generator=g).half()
        return w * (torch.rand(w.shape, device="cuda", generator=g) < 0.4).half()

    class Net(torch.nn.Module):
        def __init__(self, lin):
            super().__init__()
            self.lin = lin

        def forward(self, x):
            return self.lin(x)

    torch._dynamo.reset()
    net = Net(MackoLinear(pruned(1)))
    f = torch.compile(net, fullgraph=True, dynamic=False)
    x = torch.randn(1, 256, device="cuda").half()
    with torch.no_grad():
        want = net(x)
        got = f(x)
        assert got.shape == (1, 384) and got.dtype == torch.float16
        assert torch.equal(got, want)
        net.lin = MackoLinear(pruned(2))  # new weights: the compiled net must use them
        want2 = net(x)
        assert not torch.equal(want2, want)
        assert torch.equal(f(x), want2)
        # a CUDA graph of the compiled call replays the layer with new x
        xs = x.clone()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            f(xs)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = f(xs)
        x3 = torch.randn(1, 256, device="cuda").half()
        xs.copy_(x3)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, net(x3))


def test_macko_linear_under_torch_compile_reduce_overhead(torch_cuda):
    """torch.compile(mode="reduce-overhead"): inductor's own CUDA graphs (cudagraph trees) record macko::linear and
    replay it with new inputs; results equal eager bitwise."""
    torch = torch_cuda
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    import torch._dynamo
    from macko.torch import MackoLinear

    torch._dynamo.reset()
    g = torch.Generator(device="cuda").manual_seed(5)
    w = torch.randn(512, 320, device="cuda", generator=g).half()
    w = w * (torch.rand(w.shape, device="cuda", generator=g) < 0.3).half()
    lin = MackoLinear(w)
    f = torch.compile(lambda x: lin(x) * 0.5, mode="reduce-overhead", fullgraph=True, dynamic=False)
    with torch.no_grad():
        for i in range(5):  # warm-up runs, recording, then replays
            x = torch.randn(3, 320, device="cuda", generator=g).half()
            got = f(x).clone()
            assert torch.equal(got, lin(x) * 0.5), "call %d" % i


# ---------------------------------------------------------------- issue 17: bfloat16, float64, mixed vectors
def _types_gpu():
    from conftest import ALL_TYPES

    return ALL_TYPES


# (A, x/y) -> tolerance of the relative error against a float64 product of the same (rounded) values
_MIXED = [(np.float16, np.float16, 2e-2), ("bfloat16", "bfloat16", 2e-2), (np.float32, np.float32, 1e-5),
          (np.float64, np.float64, 1e-13), (np.float16, np.float32, 1e-5), ("bfloat16", np.float32, 1e-5)]


def _torch_dtype(torch, t):
    return {np.float16: torch.float16, "bfloat16": torch.bfloat16, np.float32: torch.float32,
            np.float64: torch.float64}[t]


def _mixed_params():
    from conftest import _lib_has_type

    out = []
    for a, v, tol in _MIXED:
        ok = _lib_has_type(a)
        out.append(pytest.param(a, v, tol, marks=() if ok else pytest.mark.skip(reason="no %s matrices" % (a,))))
    return out


@pytest.mark.parametrize("adt,vdt,tol", _mixed_params())
@pytest.mark.parametrize("generic", [False, True])
def test_every_combination_spmv_spmm(torch_cuda, handle, adt, vdt, tol, generic):
    """Every combination of macko.SUPPORTED through spmv/spmm (the letter routine where there is one) and
    spmv_ex/spmm_ex, ops N and T, alpha/beta, against a float64 product of the matrix's own values."""
    torch = torch_cuda
    from conftest import as_float64

    mv, mm = (macko.spmv_ex, macko.spmm_ex) if generic else (macko.spmv, macko.spmm)
    tv = _torch_dtype(torch, vdt)
    a = random_dense(300, 190, 0.4, adt, seed=61)
    A = Matrix.from_dense(a)
    A.upload(handle)
    A.analysis(handle, "T")
    W = torch.from_numpy(as_float64(a, adt)).cuda()
    for op, k, m in (("N", 190, 300), ("T", 300, 190)):
        Wop = W if op == "N" else W.T
        x = torch.empty(k, device="cuda", dtype=tv).uniform_(-1, 1)
        y = torch.empty(m, device="cuda", dtype=tv).uniform_(-1, 1)
        want = 0.5 * (Wop @ x.double()) - 2.0 * y.double()
        mv(handle, A, x, y, alpha=0.5, beta=-2.0, op=op)
        torch.cuda.current_stream().synchronize()
        assert rel_err(y.double().cpu().numpy(), want.cpu().numpy()) < tol, op
        for n in (1, 5, 16):
            X = torch.empty(n, k, device="cuda", dtype=tv).uniform_(-1, 1)
            Y = torch.full((n, m), float("nan"), device="cuda", dtype=tv)
            mm(handle, A, X.T, Y.T, op=op)
            torch.cuda.current_stream().synchronize()
            assert rel_err(Y.double().cpu().numpy(), (X.double() @ Wop.T).cpu().numpy()) < tol, (op, n)


@pytest.mark.parametrize("adt", [np.float16, np.float32, np.float64])
def test_generic_equals_letter_routine(torch_cuda, handle, adt):
    """spmv_ex/spmm_ex give the bytes of macko_Hspmv/_Sspmv/_Dspmv (and the spmm ones) where both exist."""
    torch = torch_cuda
    from conftest import _lib_has_type

    if not _lib_has_type(adt):
        pytest.skip("no %s matrices" % np.dtype(adt).name)
    vdt = adt
    tv = _torch_dtype(torch, vdt)
    A = Matrix.from_dense(random_dense(257, 333, 0.3, adt, seed=62))
    A.upload(handle)
    x = torch.empty(333, device="cuda", dtype=tv).uniform_(-1, 1)
    y1, y2 = (torch.empty(257, device="cuda", dtype=tv) for _ in range(2))
    macko.spmv(handle, A, x, y1)
    macko.spmv_ex(handle, A, x, y2)
    X = torch.empty(7, 333, device="cuda", dtype=tv).uniform_(-1, 1)
    C1, C2 = (torch.empty(7, 257, device="cuda", dtype=tv) for _ in range(2))
    macko.spmm(handle, A, X.T, C1.T)
    macko.spmm_ex(handle, A, X.T, C2.T)
    torch.cuda.current_stream().synchronize()
    assert torch.equal(y1, y2) and torch.equal(C1, C2)


def test_float64_device_pointer_mode(torch_cuda, handle):
    torch = torch_cuda
    from conftest import _lib_has_type

    if not _lib_has_type(np.float64):
        pytest.skip("no float64 matrices")
    a = random_dense(64, 96, 0.5, np.float64, seed=63)
    A = Matrix.from_dense(a)
    A.upload(handle)
    handle.pointer_mode = macko.PointerMode.DEVICE
    alpha = torch.tensor([1.0 / 3.0], device="cuda", dtype=torch.float64)  # not a float32 number
    beta = torch.tensor([0.0], device="cuda", dtype=torch.float64)
    x = torch.rand(96, device="cuda", dtype=torch.float64)
    y = torch.empty(64, device="cuda", dtype=torch.float64)
    macko.spmv(handle, A, x, y, alpha=alpha, beta=beta)
    torch.cuda.current_stream().synchronize()
    want = (torch.from_numpy(a).cuda() @ x) / 3.0
    assert rel_err(y.cpu().numpy(), want.cpu().numpy()) < 1e-13


@pytest.mark.parametrize("dtype", _types_gpu())
def test_device_encoding_equals_host_encoding_all_types(torch_cuda, handle, dtype):
    torch = torch_cuda
    a = random_dense(70, 150, 0.3, dtype, seed=64)
    host = Matrix.from_dense(a)
    t = torch.from_numpy(a.view(np.int16) if dtype == "bfloat16" else a)
    t = t.view(torch.bfloat16) if dtype == "bfloat16" else t
    dev = Matrix.from_dense_device(handle, t.cuda())
    assert dev.datatype == host.datatype
    dev.download(handle)
    assert dev.serialize() == host.serialize()


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float64"])
def test_macko_linear_bf16_f64_matches_nn_linear(torch_cuda, dtype_name):
    torch = torch_cuda
    from conftest import _lib_has_type
    from macko.torch import MackoLinear

    if not _lib_has_type(dtype_name if dtype_name == "bfloat16" else np.float64):
        pytest.skip("no %s matrices" % dtype_name)
    dt = getattr(torch, dtype_name)
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 384).cuda().to(dt)
    with torch.no_grad():
        lin.weight.mul_((torch.rand_like(lin.weight.float()) < 0.5).to(dt))
    m = MackoLinear.from_linear(lin, dtype=dt)
    tol = 2e-2 if dt == torch.bfloat16 else 1e-13
    for shape in [(256,), (8, 256), (2, 3, 256)]:
        x = torch.randn(*shape, device="cuda", dtype=dt)
        with torch.no_grad():
            want = torch.nn.functional.linear(x.double(), lin.weight.double(), lin.bias.double())
            got = m(x)
        assert got.shape == want.shape and got.dtype == dt
        assert rel_err(got.double().cpu().numpy(), want.cpu().numpy()) < tol


# ---------------------------------------------------------------- a workspace of the caller's (macko_set_workspace)
def test_set_workspace(torch_cuda, handle):
    """Handle.set_workspace: None, a 64 MiB torch buffer held by the handle (and let go when replaced or closed), and
    the refusals, which leave the handle's workspace as it was."""
    import gc
    import weakref

    torch = torch_cuda
    assert handle.workspace is None
    handle.set_workspace(None)
    assert handle.workspace is None
    ws = torch.empty(macko.WORKSPACE_MIN_BYTES, dtype=torch.uint8, device="cuda")
    handle.set_workspace(ws)
    assert handle.workspace is ws
    with pytest.raises(MackoError) as e:  # 1 MiB: below MACKO_WORKSPACE_MIN_BYTES
        handle.set_workspace(torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))
    assert e.value.status == macko.Status.INVALID_VALUE and e.value.position == 3
    assert e.value.routine == "macko_set_workspace"
    assert handle.workspace is ws
    with pytest.raises(MackoError) as e:  # not 256-byte aligned
        handle.set_workspace(ws[16:])
    assert e.value.status == macko.Status.INVALID_VALUE and e.value.position == 2
    with pytest.raises(TypeError):  # host memory
        handle.set_workspace(np.empty(macko.WORKSPACE_MIN_BYTES, np.uint8))
    with pytest.raises(ValueError):  # a CPU tensor
        handle.set_workspace(torch.empty(16, dtype=torch.uint8))
    with pytest.raises(ValueError):  # not contiguous
        handle.set_workspace(ws.view(2, -1)[:, : ws.numel() // 4])
    with pytest.raises(ValueError):  # empty
        handle.set_workspace(torch.empty(0, dtype=torch.uint8, device="cuda"))
    assert handle.workspace is ws
    # any dtype: its size in bytes counts; the handle keeps the buffer alive until it is replaced
    f32 = torch.empty(macko.WORKSPACE_MIN_BYTES // 4, dtype=torch.float32, device="cuda")
    held = weakref.ref(f32)
    handle.set_workspace(f32)
    del f32
    gc.collect()
    assert held() is not None and handle.workspace is held()
    handle.set_workspace(None)
    gc.collect()
    assert handle.workspace is None and held() is None
    # close() lets go of it, after macko_destroy
    handle.set_workspace(ws)
    handle.close()
    assert handle.workspace is None
    with pytest.raises(ValueError):
        handle.set_workspace(ws)


def test_set_workspace_cupy(torch_cuda, handle):
    cp = pytest.importorskip("cupy")
    buf = cp.empty(macko.WORKSPACE_MIN_BYTES, cp.uint8)
    handle.set_workspace(buf)
    assert handle.workspace is buf
    handle.set_workspace(buf.data)  # a cupy.cuda.MemoryPointer
    assert handle.workspace is buf.data
    with pytest.raises(MackoError) as e:
        handle.set_workspace(cp.empty(1 << 20, cp.uint8))
    assert e.value.position == 3 and handle.workspace is buf.data
    handle.set_workspace(None)


@pytest.mark.parametrize("layout", ["rows", "tiles"])
def test_workspace_product_matches(torch_cuda, handle, layout):
    """An fp16 product of n = 128 columns (where a larger workspace allows taller dense panels) gives the result of
    the handle's own workspace, within the fp16 tolerance, with a 128 MiB one and after going back to its own."""
    torch = torch_cuda
    a = random_dense(1024, 768, 0.4, np.float16, seed=71)
    A = Matrix.from_dense(a)
    A.set_layout(layout)
    A.upload(handle)
    W = torch.from_numpy(a).cuda().double()
    X = torch.empty(128, 768, device="cuda", dtype=torch.float16).uniform_(-1, 1)  # B = X.T
    want = (X.double() @ W.T).cpu().numpy()
    got = []
    for ws in (None, torch.empty(2 * macko.WORKSPACE_MIN_BYTES, dtype=torch.uint8, device="cuda"), None):
        handle.set_workspace(ws)
        Y = torch.full((128, 1024), float("nan"), device="cuda", dtype=torch.float16)
        macko.spmm(handle, A, X.T, Y.T)
        got.append(Y)
    torch.cuda.current_stream().synchronize()
    for Y in got:
        assert rel_err(Y.cpu().numpy(), want) < TOL[np.float16]
    assert rel_err(got[1].cpu().numpy(), got[0].cpu().numpy()) < TOL[np.float16]
    assert rel_err(got[2].cpu().numpy(), got[0].cpu().numpy()) < TOL[np.float16]


# ---------------------------------------------------------------- MackoLinear's shared handle
def _pruned_weight(torch, rows, cols, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(rows, cols, device="cuda", generator=g).half()
    return w * (torch.rand(w.shape, device="cuda", generator=g) < 0.5).half()


def test_macko_linear_layers_share_one_handle(torch_cuda, handle):
    """Layers built without handle= share the thread's handle (one 64 MiB workspace for the model, not one per
    layer): building 12 more layers takes no more than their matrices from the GPU; handle= still gives a layer its
    own; every layer computes what it computed with a handle of its own."""
    torch = torch_cuda
    from macko.torch import MackoLinear, shared_handle

    h = shared_handle()
    assert h is shared_handle(torch.cuda.current_device()) is shared_handle("cuda") and not h.closed
    ws = macko.WORKSPACE_MIN_BYTES
    weights = [_pruned_weight(torch, 256, 512, s) for s in range(12)]
    torch.cuda.synchronize()
    free0 = torch.cuda.mem_get_info()[0]
    layers = [MackoLinear(w) for w in weights]
    torch.cuda.synchronize()
    used = free0 - torch.cuda.mem_get_info()[0]
    matrix_bytes = sum(lay.storage.bytes for lay in layers)
    # before: one 64 MiB handle per layer (768 MiB for these 12); now their matrices (~0.2 MiB each) and the
    # allocators' rounding
    assert used < 4 * ws, "12 layers took %d bytes of GPU memory (matrices: %d)" % (used, matrix_bytes)
    assert all(lay.handle is h for lay in layers)
    own = MackoLinear(weights[0], handle=handle)
    assert own.handle is handle
    x = torch.randn(5, 512, device="cuda").half()
    with torch.no_grad():
        assert torch.equal(own(x), layers[0](x))
        for w, lay in zip(weights, layers):
            want = (x.double() @ w.double().t())
            assert rel_err(lay(x).cpu().numpy(), want.cpu().numpy()) < 2e-2
    own.handle = None  # back to the shared one
    assert own.handle is h
    with pytest.raises(TypeError):
        own.handle = "not a handle"


def test_macko_linear_shared_handle_per_thread(torch_cuda):
    """A forward call uses the calling thread's shared handle: two threads running the same layers at once give the
    results of one thread, bitwise, and each thread has its own handle."""
    import threading

    torch = torch_cuda
    from macko.torch import MackoLinear, shared_handle

    layers = [MackoLinear(_pruned_weight(torch, 384, 256, s)) for s in range(3)]
    x = torch.randn(96, 256, device="cuda").half()  # n = 96: a path that uses the workspace (TC or PANEL)
    with torch.no_grad():
        want = [lay(x) for lay in layers]
    torch.cuda.synchronize()
    out, handles, errors = {}, {}, []

    def run(i):
        try:
            with torch.cuda.stream(torch.cuda.Stream()), torch.no_grad():
                got = []
                for _ in range(20):
                    got = [lay(x) for lay in layers]
                torch.cuda.current_stream().synchronize()
            out[i] = got
            handles[i] = shared_handle()
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert handles[0] is not handles[1] and shared_handle() not in (handles[0], handles[1])
    for i in range(2):
        for g, w in zip(out[i], want):
            assert torch.equal(g, w)


def test_macko_linear_graph_in_a_new_thread(torch_cuda):
    """A thread whose first forward is inside a CUDA graph capture (no handle can be made then) uses the handle the
    layer was built with; the graph replays correctly after that thread has ended."""
    import threading

    torch = torch_cuda
    from macko.torch import MackoLinear

    lay = MackoLinear(_pruned_weight(torch, 320, 192, 7))
    x = torch.randn(4, 192, device="cuda").half()
    with torch.no_grad():
        want = lay(x)
    torch.cuda.synchronize()
    state, errors = {}, []

    def capture():
        try:
            s = torch.cuda.Stream()
            g = torch.cuda.CUDAGraph()
            with torch.no_grad(), torch.cuda.graph(g, stream=s):
                y = lay(x)
            state.update(graph=g, y=y)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=capture)
    t.start()
    t.join()
    assert not errors, errors
    state["y"].fill_(float("nan"))
    state["graph"].replay()
    torch.cuda.synchronize()
    assert torch.equal(state["y"], want)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16", "float32", "float64"])
def test_macko_linear_direct_call(torch_cuda, handle, dtype_name):
    """MackoLinear's forward calls the C routine straight (no compute.spmm checks): bitwise what macko.spmm gives for
    the same operands, at n = 1, 9 and 70 (three paths), every output written (C poisoned with NaN), on torch's
    current stream (the handle's stream is set to it); a handle in the device pointer mode still gets spmm's
    ValueError; with the layer's own handle closed, the thread's shared one computes the same bits."""
    torch = torch_cuda
    from macko.torch import MackoLinear

    dt = getattr(torch, dtype_name)
    w = _pruned_weight(torch, 200, 300, 7).to(dt)
    lay = MackoLinear(w, dtype=dt, handle=handle)
    for n in (1, 9, 70):
        x = torch.randn(n, 300, device="cuda").to(dt)
        want = torch.full((n, 200), float("nan"), device="cuda", dtype=dt)
        macko.spmm(handle, lay.matrix, x.t(), want.t())
        with torch.no_grad():
            got = lay(x)
        torch.cuda.synchronize()
        assert not torch.isnan(got).any()
        assert torch.equal(got, want), "n = %d" % n
    side = torch.cuda.Stream()
    x = torch.randn(33, 300, device="cuda").to(dt)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        got = lay(x)
        assert handle.stream == side.cuda_stream
    side.synchronize()
    with torch.no_grad():
        assert torch.equal(got, lay(x))
    handle.pointer_mode = "device"
    try:
        with pytest.raises(ValueError):
            lay(x)
    finally:
        handle.pointer_mode = "host"
    other = macko.Handle()
    lay.handle = other
    other.close()
    with torch.no_grad():  # a closed handle of the layer's: the thread's shared one takes over
        assert torch.equal(lay(x), got)
