"""Copies and pickles of Matrix (through the library's serialization) and Handle's refusal. Host tests need numpy
only; the GPU tests at the end skip themselves without torch + CUDA."""

import copy
import gc
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import macko
from macko import MackoError, Matrix, Status

from conftest import ALL_TYPES
from test_host import random_dense


def same_matrix(a, b):
    """Equal encodings, compared through the serialized bytes (header, arrays and checksums) and the export."""
    assert a.serialize() == b.serialize()
    np.testing.assert_array_equal(a.to_dense(), b.to_dense())


# ---------------------------------------------------------------- pickle
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip(dtype, protocol):
    a = random_dense(37, 90, 0.3, dtype, seed=41)
    A = Matrix.from_dense(a)
    data = pickle.dumps(A, protocol=protocol)
    B = pickle.loads(data)
    assert type(B) is Matrix and B._ptr != A._ptr
    same_matrix(A, B)
    assert B.info == A.info and B.storage == A.storage and B.datatype == A.datatype
    assert B.has_host_copy and not B.on_device and B.handle is None
    A.close()
    np.testing.assert_array_equal(B.to_dense(), a)


def test_pickle_state_is_the_serialization():
    A = Matrix.from_dense(random_dense(10, 20, 0.5, np.float32, seed=42))
    assert A.__getstate__() == {"serialized": A.serialize()}


def test_pickle_empty_and_degenerate_shapes():
    for shape in [(0, 0), (0, 5), (4, 0), (1, 1)]:
        a = np.zeros(shape, np.float16)
        if a.size:
            a.flat[0] = 3
        B = pickle.loads(pickle.dumps(Matrix.from_dense(a)))
        assert B.shape == shape
        np.testing.assert_array_equal(B.to_dense(), a)


def test_pickle_in_other_processes(tmp_path):
    """A pickle read by a new process (where the parent's pointers mean nothing), and one written there."""
    a = random_dense(50, 70, 0.3, np.float16, seed=43)
    A = Matrix.from_dense(a)
    (tmp_path / "a.pkl").write_bytes(pickle.dumps(A))
    np.save(tmp_path / "a.npy", a)
    script = textwrap.dedent("""
        import pickle, sys
        import numpy as np
        import macko
        d = sys.argv[1]
        with open(d + "/a.pkl", "rb") as f:
            A = pickle.load(f)
        assert isinstance(A, macko.Matrix)
        assert np.array_equal(A.to_dense(), np.load(d + "/a.npy"))
        B = macko.Matrix.from_dense(np.load(d + "/a.npy") * 2)
        with open(d + "/b.pkl", "wb") as f:
            pickle.dump([B, A, B], f)
        print("child ok")
    """)
    env = dict(os.environ)
    env["MACKO_LIBRARY"] = macko.library_path()
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(macko.__file__)))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "child ok" in r.stdout, r.stdout + r.stderr
    B, A2, B2 = pickle.loads((tmp_path / "b.pkl").read_bytes())
    assert B is B2  # one object pickled twice comes back as one object
    same_matrix(A2, A)
    np.testing.assert_array_equal(B.to_dense(), a * 2)


needs_nm = pytest.mark.skipif(not macko.has_symbol("macko_mat_create_nm_dense_host"),
                              reason="this libmacko has no N:M kind yet")


@needs_nm
def test_nm_pickles_in_another_process(tmp_path):
    """N:M matrices of every value type pickled by this process, read by a new one and pickled back: same pattern and
    arrays bit for bit."""
    from nm_ref import random_nm

    mats = []
    for i, dtype in enumerate(t for t in (np.float16, "bfloat16", np.float32, np.float64)):
        try:
            mats.append(Matrix.from_dense_nm(random_nm(21, 45, 3, 8, 2, seed=60 + i, dtype=dtype, fill=0.8), 3, 8, 2))
        except MackoError:  # a library without this value type
            continue
    (tmp_path / "nm.pkl").write_bytes(pickle.dumps(mats))
    script = textwrap.dedent("""
        import pickle, sys
        import macko
        d = sys.argv[1]
        with open(d + "/nm.pkl", "rb") as f:
            mats = pickle.load(f)
        assert all(A.kind == macko.Kind.NM and A.nm_pattern == (3, 8, 2) for A in mats)
        with open(d + "/back.pkl", "wb") as f:
            pickle.dump([A.copy() for A in mats], f)
        print("child ok")
    """)
    env = dict(os.environ)
    env["MACKO_LIBRARY"] = macko.library_path()
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(macko.__file__)))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "child ok" in r.stdout, r.stdout + r.stderr
    back = pickle.loads((tmp_path / "back.pkl").read_bytes())
    assert len(back) == len(mats) >= 2
    for A, B in zip(mats, back):
        assert B.datatype == A.datatype and B.nm_pattern == A.nm_pattern
        for x, y in zip(A.nm_arrays(), B.nm_arrays()):
            np.testing.assert_array_equal(x.view(np.uint8), y.view(np.uint8))


def test_unpickle_damaged_state():
    A = Matrix.from_dense(random_dense(23, 64, 0.35, np.float32, seed=44))
    state = A.__getstate__()
    bad = bytearray(state["serialized"])
    bad[-1] ^= 0x55
    data = pickle.dumps(A)
    damaged = data.replace(state["serialized"], bytes(bad))
    assert damaged != data
    with pytest.raises(MackoError) as e:
        pickle.loads(damaged)
    assert e.value.status == Status.FORMAT_ERROR
    M = Matrix.__new__(Matrix)
    with pytest.raises(ValueError):
        M.__setstate__({"pointer": 1})
    assert M.closed
    del M  # nothing to free: __del__ is quiet
    gc.collect()


def test_closed_matrix_cannot_be_pickled_or_copied():
    A = Matrix.from_dense(np.eye(3, dtype=np.float32))
    A.close()
    for f in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(ValueError, match="closed"):
            f(A)


def test_subclass_pickles_and_copies_as_itself():
    class Sub(Matrix):
        pass

    S = Sub.from_dense(np.eye(4, dtype=np.float16))
    assert type(S) is Sub
    for T in (copy.copy(S), copy.deepcopy(S)):
        assert type(T) is Sub
        same_matrix(S, T)


class PicklableSub(Matrix):
    pass


def test_module_level_subclass_pickles():  # pickle finds classes by name: this one is at module level
    S = PicklableSub.from_dense(np.eye(4, dtype=np.float32))
    T = pickle.loads(pickle.dumps(S))
    assert type(T) is PicklableSub
    same_matrix(S, T)


# ---------------------------------------------------------------- copy
@pytest.mark.parametrize("how", ["copy", "deepcopy", "method"])
def test_copy_owns_its_memory(how):
    a = random_dense(64, 100, 0.3, np.float32, seed=45)
    A = Matrix.from_dense(a)
    want = A.serialize()
    B = {"copy": copy.copy, "deepcopy": copy.deepcopy, "method": Matrix.copy}[how](A)
    assert type(B) is Matrix and B._ptr != A._ptr
    assert B.serialize() == want
    assert B.has_host_copy and not B.on_device
    A.close()  # the copy survives closing the original ...
    del A
    gc.collect()  # ... and its collection (no double free)
    assert B.serialize() == want
    np.testing.assert_array_equal(B.to_dense(), a)
    C = copy.copy(B)
    B.close()
    np.testing.assert_array_equal(C.to_dense(), a)


def test_deepcopy_keeps_sharing_inside_containers():
    A = Matrix.from_dense(np.eye(5, dtype=np.float16))
    box = {"a": A, "again": A, "list": [A]}
    c = copy.deepcopy(box)
    assert c["a"] is c["again"] is c["list"][0]
    assert c["a"] is not A
    same_matrix(c["a"], A)


def test_device_only_matrix_without_handle_refuses():
    """A device-only matrix whose handle is unknown cannot be copied or pickled; the error says what to do. (The
    state is set by hand: without a GPU no matrix can really be on the device.)"""
    A = Matrix.from_dense(np.eye(6, dtype=np.float32))
    A._has_host, A._on_device = False, True
    try:
        for f in (pickle.dumps, copy.copy, copy.deepcopy):
            with pytest.raises(ValueError, match=r"lives only on the device.*A\.download\(h\)"):
                f(A)
        # with its host copy but no open handle: pickles (host-only), but a copy would not be on the device
        A._has_host = True
        P = pickle.loads(pickle.dumps(A))
        assert not P.on_device
        np.testing.assert_array_equal(P.to_dense(), np.eye(6))
        for f in (copy.copy, copy.deepcopy):
            with pytest.raises(ValueError, match=r"handle it was uploaded with is unknown.*A\.copy\(handle=h\)"):
                f(A)
    finally:
        A._has_host, A._on_device = True, False


# ---------------------------------------------------------------- serialize(out=)
def test_serialize_into_a_buffer():
    A = Matrix.from_dense(random_dense(30, 40, 0.4, np.float16, seed=46))
    want = A.serialize()
    n = A.serialized_size()
    out = np.full(n + 5, 0xAB, np.uint8)
    assert A.serialize(out) == n
    assert out[:n].tobytes() == want and (out[n:] == 0xAB).all()  # bytes after the matrix untouched
    ba = bytearray(n)
    assert A.serialize(ba) == n and bytes(ba) == want
    with pytest.raises(ValueError, match="needs"):
        A.serialize(bytearray(n - 1))
    with pytest.raises(ValueError, match="writable"):
        A.serialize(bytes(n))
    with pytest.raises(ValueError, match="contiguous"):
        A.serialize(np.zeros(2 * n, np.uint8)[::2])


# ---------------------------------------------------------------- Handle
def test_handle_refuses_pickle_and_copy():
    # An object of the class without macko_create (no GPU needed): refusing is a property of the type.
    h = macko.Handle.__new__(macko.Handle)
    with pytest.raises(TypeError, match="cannot pickle 'macko.Handle'"):
        pickle.dumps(h)
    with pytest.raises(TypeError, match="cannot copy 'macko.Handle'"):
        copy.copy(h)
    with pytest.raises(TypeError, match="cannot deepcopy 'macko.Handle'"):
        copy.deepcopy(h)
    with pytest.raises(TypeError, match="cannot pickle 'macko.Handle'"):
        pickle.dumps([1, h])
    del h
    gc.collect()


# ---------------------------------------------------------------- GPU: copies of matrices on the device
def test_gpu_handle_refuses_pickle_and_copy(handle):
    for f in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="macko.Handle"):
            f(handle)
    assert not handle.closed


def _spmv(torch, handle, A, x):
    tdt = torch.float16 if A.dtype == np.float16 else torch.float32
    y = torch.empty(A.shape[0], device="cuda", dtype=tdt)
    macko.spmv(handle, A, x, y)
    torch.cuda.current_stream().synchronize()
    return y


@pytest.mark.parametrize("release", [False, True])
def test_gpu_copy_of_uploaded_matrix_stays_on_the_device(torch_cuda, handle, release):
    torch = torch_cuda
    a = random_dense(300, 257, 0.3, np.float16, seed=47)
    A = Matrix.from_dense(a)
    want = A.serialize()
    A.upload(handle)
    if release:
        A.release_host()
    x = torch.empty(257, device="cuda", dtype=torch.float16).uniform_(-1, 1)
    y = _spmv(torch, handle, A, x)
    for B in (copy.copy(A), copy.deepcopy(A), A.copy()):
        assert B._ptr != A._ptr and B.on_device and B.handle is handle
        assert B.has_host_copy == (not release)  # the copy is where the original is
        assert torch.equal(_spmv(torch, handle, B, x), y)
        if release:
            with pytest.raises(MackoError):
                B.serialize()
            B.download(handle)
        assert B.serialize() == want
    # the original is as it was: a released host copy stays released
    assert A.has_host_copy == (not release)
    if release:
        with pytest.raises(MackoError) as e:
            A.to_dense()
        assert e.value.status == Status.NOT_INITIALIZED
    # a pickle is host-only, downloaded through the handle when needed
    P = pickle.loads(pickle.dumps(A))
    assert P.has_host_copy and not P.on_device and P.serialize() == want
    B = copy.deepcopy(A)
    A.close()
    del A
    gc.collect()
    assert torch.equal(_spmv(torch, handle, B, x), y)


def test_gpu_device_only_matrix_with_closed_handle(torch_cuda):
    torch = torch_cuda
    a = random_dense(40, 60, 0.4, np.float16, seed=48)
    with macko.Handle() as h:
        A = Matrix.from_dense_device(h, torch.from_numpy(a).cuda())
        assert A.on_device and not A.has_host_copy and A.handle is h
        P = pickle.loads(pickle.dumps(A))  # downloaded through h for the pickle
        np.testing.assert_array_equal(P.to_dense(), a)
        assert not A.has_host_copy
    for f in (pickle.dumps, copy.deepcopy):
        with pytest.raises(ValueError, match=r"download"):
            f(A)
    with macko.Handle() as h2:
        B = A.copy(handle=h2)
        assert B.on_device and B.handle is h2 and not B.has_host_copy
        B.download(h2)
        np.testing.assert_array_equal(B.to_dense(), a)
        A.download(h2)
        pickle.dumps(A)


@needs_nm
@pytest.mark.parametrize("release", [False, True])
def test_gpu_nm_copies_and_pickles_of_a_device_matrix(torch_cuda, handle, release):
    """An N:M matrix on the GPU: its copies stay there (device-only when it is) and compute bitwise the same; its
    pattern stays readable after release_host; a pickle of it is host-only with the same arrays."""
    torch = torch_cuda
    A = Matrix.from_dense_nm(macko.prune_nm(random_dense(300, 257, 1.0, np.float16, seed=48), 2, 4), 2, 4, 1)
    want = A.nm_arrays()
    A.upload(handle)
    if release:
        A.release_host()
    assert A.nm_pattern == (2, 4, 1)
    x = torch.empty(257, device="cuda", dtype=torch.float16).uniform_(-1, 1)
    y = _spmv(torch, handle, A, x)
    for B in (copy.copy(A), copy.deepcopy(A), A.copy()):
        assert B._ptr != A._ptr and B.on_device and B.handle is handle and B.kind == macko.Kind.NM
        assert B.has_host_copy == (not release)
        assert torch.equal(_spmv(torch, handle, B, x), y)
    P = pickle.loads(pickle.dumps(A))
    assert P.has_host_copy and not P.on_device and A.has_host_copy == (not release)
    for got, w in zip(P.nm_arrays(), want):
        np.testing.assert_array_equal(got, w)
