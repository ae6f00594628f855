"""N:M matrices (FORMAT_NM.md) from Python: macko.prune_nm (numpy, and torch where installed), then, where the library
has the N:M kind, the encoder against the numpy model of nm_ref.py byte for byte, detection, refusals with the
offending row and window, the importer's validation, copies, pickles and conversions, the wrapper's compute checks
without a GPU; on the GPU (test_gpu_*, skipped without torch + CUDA) the device encoder and spmv / spmm against a
float64 reference."""

import copy
import pickle

import numpy as np
import pytest

import macko
from macko import Kind, MackoError, Matrix, Status
from macko import compute as mc

from conftest import ALL_TYPES
from nm_ref import decode, detect, encode, need, nonzero, random_nm, union_counts

needs_nm = pytest.mark.skipif(not macko.has_symbol("macko_mat_create_nm_dense_host"),
                              reason="this libmacko has no N:M kind yet")

PATTERNS = [(2, 4, 1), (1, 4, 2), (4, 8, 4), (3, 8, 1), (8, 16, 2), (5, 16, 8), (16, 32, 32), (4, 32, 16),
            (32, 32, 1), (1, 32, 32)]
SHAPES = [(1, 1), (7, 11), (33, 70), (64, 64), (40, 97)]


def gaussian(rows, cols, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(dtype)


def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


def brute_force_prune(a, n, m, v):
    """prune_nm's rule, one group and window at a time, with float64 sums (random data has no near-ties)."""
    rows, cols = a.shape
    out = np.zeros_like(a)
    mag = np.abs(a.astype(np.float64))
    for r0 in range(0, rows, v):
        for c0 in range(0, cols, m):
            block = mag[r0:r0 + v, c0:c0 + m]
            score = np.where(np.isnan(block.sum(axis=0)), np.inf, block.sum(axis=0))
            keep = sorted(range(score.shape[0]), key=lambda p: (-score[p], p))[:n]
            for p in keep:
                out[r0:r0 + v, c0 + p] = a[r0:r0 + v, c0 + p]
    return out


# ---------------------------------------------------------------- prune_nm (no library needed)
@pytest.mark.parametrize("n,m,v", PATTERNS)
@pytest.mark.parametrize("shape", [(7, 11), (33, 70), (64, 96)])
def test_prune_against_brute_force(shape, n, m, v):
    a = gaussian(*shape, seed=n * 100 + m + v)
    p = macko.prune_nm(a, n, m, v)
    assert type(p) is np.ndarray and p.dtype == a.dtype and p.shape == a.shape
    np.testing.assert_array_equal(p, brute_force_prune(a, n, m, v))
    # it fits the pattern, keeps exactly min(n, valid columns) columns per window where a is dense, and is a fixpoint
    counts = union_counts(nonzero(p), m, v)
    valid = np.minimum(m, shape[1] - m * np.arange(counts.shape[1]))
    np.testing.assert_array_equal(counts, np.broadcast_to(np.minimum(n, valid), counts.shape))
    np.testing.assert_array_equal(macko.prune_nm(p, n, m, v), p)
    assert np.array_equal(a[p != 0], p[p != 0])  # kept weights unchanged


def test_prune_ties_nan_and_signs():
    a = np.ones((2, 8), np.float32)
    np.testing.assert_array_equal(macko.prune_nm(a, 2, 4), [[1, 1, 0, 0, 1, 1, 0, 0]] * 2)  # ties: lower column
    a[0, 3] = -1.0  # the magnitude counts, not the sign: still a tie
    np.testing.assert_array_equal(macko.prune_nm(a, 2, 4)[0, :4], [1, 1, 0, 0])
    a[1, 2] = np.nan  # a NaN ranks above every number
    a[1, 3] = 5.0
    p = macko.prune_nm(a, 2, 4)
    assert np.isnan(p[1, 2]) and p[1, 3] == 5.0 and p[1, 0] == 0 and p[1, 1] == 0
    a = np.array([[-1.0, -2.0, -3.0, -4.0]], np.float64)
    p = macko.prune_nm(a, 1, 4)
    np.testing.assert_array_equal(p, [[0, 0, 0, -4.0]])
    assert not np.signbit(p[0, :3]).any()  # dropped weights become +0
    # the group sums decide, not a single row: column 0 is large in one row, column 1 in sum
    g = np.array([[9.0, 5.0, 0, 0], [0.0, 5.0, 0, 0], [0.0, 5.0, 0, 0], [0.0, 5.0, 0, 0]], np.float32)
    np.testing.assert_array_equal(macko.prune_nm(g, 1, 4, 4), np.c_[np.zeros((4, 1)), np.full((4, 1), 5.0),
                                                                     np.zeros((4, 2))])
    # a partial window of fewer than n columns keeps them all; a partial group sums its own rows only
    w = np.arange(1.0, 19.0).reshape(3, 6)
    np.testing.assert_array_equal(macko.prune_nm(w, 3, 4, 2), [[0, 2, 3, 4, 5, 6], [0, 8, 9, 10, 11, 12],
                                                              [0, 14, 15, 16, 17, 18]])


@pytest.mark.parametrize("dtype", [np.float16, np.float64, "bfloat16"])
def test_prune_keeps_the_type(dtype):
    a = gaussian(9, 20, seed=1, dtype=np.float64)
    x = macko.bf16_from_float(a) if dtype == "bfloat16" else a.astype(dtype)
    before = x.copy()
    p = macko.prune_nm(x, 2, 8, 2)
    assert p.dtype == x.dtype and p is not x
    np.testing.assert_array_equal(x, before)  # the input is left alone
    if dtype == "bfloat16":
        assert p.dtype == macko.bfloat16 and macko._enums.is_bfloat16(p.dtype)
        keep = (p != 0)
        np.testing.assert_array_equal(keep, brute_force_prune(macko.bf16_to_float32(x), 2, 8, 2) != 0)
    else:
        np.testing.assert_array_equal(p, brute_force_prune(x, 2, 8, 2))


def test_prune_torch_matches_numpy():
    torch = pytest.importorskip("torch")
    a = gaussian(37, 70, seed=2)
    for n, m, v in PATTERNS:
        want = macko.prune_nm(a, n, m, v)
        t = torch.from_numpy(a).requires_grad_()
        got = macko.prune_nm(t, n, m, v)
        assert isinstance(got, torch.Tensor) and got.dtype == torch.float32 and not got.requires_grad
        np.testing.assert_array_equal(got.numpy(), want)
    for dt in (torch.float16, torch.bfloat16, torch.float64):
        t = torch.from_numpy(a).to(dt)
        got = macko.prune_nm(t, 4, 8, 2)
        assert got.dtype == dt and got.shape == t.shape
        ref = t.float().numpy() if dt != torch.float64 else t.numpy()
        np.testing.assert_array_equal((got != 0).numpy(), brute_force_prune(ref, 4, 8, 2) != 0)
        assert torch.equal(got[got != 0], t[got != 0])
    t = torch.tensor([[1.0, float("nan"), 1.0, 1.0]])
    assert torch.equal(torch.isnan(macko.prune_nm(t, 1, 4)), torch.tensor([[False, True, False, False]]))


def test_prune_refusals():
    a = np.ones((4, 8), np.float32)
    for n, m, v in ((2, 5, 1), (2, 4, 3), (0, 4, 1), (5, 4, 1), (2, 64, 1), (1, 4, 64)):
        with pytest.raises(ValueError, match="not an N:M pattern macko holds"):
            macko.prune_nm(a, n, m, v)
    with pytest.raises(TypeError, match="m must be an integer"):
        macko.prune_nm(a, 2, 4.0)
    with pytest.raises(ValueError, match="2-D"):
        macko.prune_nm(a[0], 2, 4)
    with pytest.raises(ValueError, match="float16, bfloat16"):
        macko.prune_nm(np.ones((4, 8), np.int32), 2, 4)
    with pytest.raises(ValueError, match="float16, bfloat16"):
        macko.prune_nm(np.ones((4, 8), np.uint16), 2, 4)  # bit patterns need the bfloat16 mark


def test_nm_ref_model():
    """The numpy model itself: encode then decode is the identity, and detection finds a planted pattern."""
    a = random_nm(33, 70, 3, 8, 4, seed=3, fill=0.7)
    vals, pos = encode(a, 3, 8, 4)
    np.testing.assert_array_equal(decode(33, 70, 3, 8, 4, vals, pos), a)
    assert need(nonzero(a), 8, 4) <= 3 and detect(nonzero(a), 0, 8, 4, 4)[0] == need(nonzero(a), 8, 4)
    with pytest.raises(AssertionError):
        encode(a, 2, 8, 4) if need(nonzero(a), 8, 4) == 3 else encode(np.ones((1, 8), np.float32), 2, 8, 1)


# ---------------------------------------------------------------- the encoder (needs the library's N:M kind)
def check_matrix(A, a, n, m, v):
    """A holds a's canonical encoding with pattern (n, m, v): arrays, pattern, export, counts."""
    rows, cols = a.shape
    want_v, want_p = encode(a, n, m, v)
    assert A.kind == Kind.NM and A.shape == (rows, cols) and A.nm_pattern == (n, m, v)
    got = A.nm_arrays()
    assert got.values.dtype == a.dtype and got.positions.dtype == np.uint8
    assert got.values.shape == want_v.shape and got.positions.shape == want_p.shape
    np.testing.assert_array_equal(got.values.view(np.uint8), want_v.view(np.uint8))  # bit for bit (+0 padding)
    np.testing.assert_array_equal(got.positions, want_p)
    np.testing.assert_array_equal(A.to_dense().view(np.uint8), np.where(nonzero(a), a, 0).astype(a.dtype).view(
        np.uint8))
    assert A.nnz == int(np.count_nonzero(nonzero(a)))
    st = A.storage
    assert st.entries == st.entries_padded == want_v.size
    assert st.bytes > 0 or rows * cols == 0


@needs_nm
@pytest.mark.parametrize("n,m,v", PATTERNS)
@pytest.mark.parametrize("shape", SHAPES)
def test_encode_round_trip(shape, n, m, v):
    rows, cols = shape
    a = random_nm(rows, cols, n, m, v, seed=rows * 7 + cols + n, fill=0.8)
    A = Matrix.from_dense_nm(a, n, m, v)
    check_matrix(A, a, n, m, v)
    assert repr(A) == "<macko.Matrix %dx%d NM %d:%d v=%d float32 nnz=%d>" % (rows, cols, n, m, v, A.nnz)
    # the arrays go back in, as numpy arrays of any shape, torch tensors or lists
    arr = A.nm_arrays()
    for vals, pos in ((arr.values, arr.positions), (arr.values.reshape(-1), arr.positions.reshape(-1).astype(int)),
                      (list(arr.values.reshape(-1)), list(arr.positions.reshape(-1)))):
        B = Matrix.from_nm_arrays(rows, cols, n, m, v, np.asarray(vals, np.float32), pos)
        check_matrix(B, a, n, m, v)
    # a copy of the arrays is the caller's
    arr.positions[:] = 0
    np.testing.assert_array_equal(A.nm_arrays().positions, encode(a, n, m, v)[1])


@needs_nm
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_encode_every_type(dtype):
    rows, cols, n, m, v = 20, 45, 2, 4, 2
    a = random_nm(rows, cols, n, m, v, seed=4, dtype=dtype, fill=0.9)
    A = Matrix.from_dense_nm(a, n, m, v)  # bf16: a macko.bfloat16 array, marked as such
    check_matrix(A, a, n, m, v)
    assert A.dtype == a.dtype
    B = Matrix.from_nm_arrays(rows, cols, n, m, v, *A.nm_arrays())  # bf16 arrays carry their mark
    assert B.datatype == A.datatype
    np.testing.assert_array_equal(B.nm_arrays().values, A.nm_arrays().values)


@needs_nm
def test_same_encoding_from_every_input():
    a = random_nm(37, 50, 4, 8, 2, seed=5, dtype=np.float16, fill=0.7)
    ref = Matrix.from_dense_nm(a, 4, 8, 2).nm_arrays()
    big = np.zeros((37, 64), np.float16)
    big[:, :50] = a
    inputs = [np.asfortranarray(a), big[:, :50], np.ascontiguousarray(a[::-1])[::-1], a.astype(np.float32)]
    torch = torch_or_none()
    if torch is not None:
        inputs += [torch.from_numpy(a), torch.from_numpy(a).t().contiguous().t()]
    for x in inputs:
        got = Matrix.from_dense_nm(x, 4, 8, 2, dtype=np.float16).nm_arrays()
        np.testing.assert_array_equal(got.values, ref.values)
        np.testing.assert_array_equal(got.positions, ref.positions)


@needs_nm
def test_special_values():
    """-0 is zero (stored as +0, its column not kept for it); NaN, Inf and subnormals are nonzero, kept bit for
    bit."""
    a = np.zeros((2, 8), np.float32)
    a[0, 1] = -0.0
    a[0, 2] = np.nan
    a[1, 5] = -np.inf
    a[1, 6] = np.float32(1e-45)  # subnormal
    A = Matrix.from_dense_nm(a, 2, 4, 1)
    arr = A.nm_arrays()
    np.testing.assert_array_equal(arr.positions, [[0, 2, 0, 1], [0, 1, 1, 2]])
    assert np.isnan(arr.values[0, 1]) and arr.values[1, 2] == -np.inf and arr.values[1, 3] == np.float32(1e-45)
    assert not np.signbit(arr.values[0, 0]) and A.nnz == 3


@needs_nm
def test_detection():
    cases = [random_nm(40, 96, 2, 4, 1, seed=6), random_nm(64, 64, 4, 8, 4, seed=7),
             random_nm(64, 128, 8, 32, 32, seed=8), random_nm(33, 70, 3, 16, 2, seed=9, fill=0.6),
             random_nm(32, 32, 1, 32, 32, seed=10, dtype=np.float16), np.zeros((5, 9), np.float32),
             gaussian(16, 24, seed=11)]
    for a in cases:
        nz = nonzero(a)
        for given in ((0, 0, 0), (0, 8, 0), (0, 0, 2), (0, 16, 4), (4, 0, 0), (8, 0, 1), (2, 4, 0)):
            want = detect(nz, *given, a.dtype.itemsize)
            if want is None:
                with pytest.raises(MackoError) as e:
                    Matrix.from_dense_nm(a, *given)
                assert e.value.status == Status.INVALID_VALUE and e.value.position == 5, e.value
                continue
            A = Matrix.from_dense_nm(a, *given)
            assert A.nm_pattern == want, (a.shape, given)
            check_matrix(A, a, *want)


@needs_nm
@pytest.mark.parametrize("v", [1, 4])
def test_refusal_names_row_and_window(v):
    a = np.zeros((12, 16), np.float32)
    a[4, 8] = 1.0          # group 1 (v = 4: rows 4..7), window 2: one column so far
    a[5, 9:11] = 2.0       # row 5 brings the union to 3 > n = 2 (the running union's row, not the group's first)
    if v == 1:
        a[5, 11] = 3.0     # row 5 alone: 3 columns
    with pytest.raises(MackoError) as e:
        Matrix.from_dense_nm(a, 2, 4, v)
    err = e.value
    assert (err.status, err.position, err.routine) == (Status.INVALID_VALUE, 5, "macko_mat_create_nm_dense_host")
    assert "row 5, window 2" in err.message, err.message
    # the first offence in order: an earlier group's wins over a later one, an earlier window over a later one
    a[9, 0:3] = 1.0
    a[5, 12:15] = 1.0
    with pytest.raises(MackoError, match="row 5, window 2"):
        Matrix.from_dense_nm(a, 2, 4, v)
    a[1, 13:16] = 1.0
    with pytest.raises(MackoError, match="row 1, window 3"):
        Matrix.from_dense_nm(a, 2, 4, v)
    Matrix.from_dense_nm(a, 3, 4, 1)  # fits with n = 3 row by row


@needs_nm
def test_bad_arguments():
    a = random_nm(8, 16, 2, 4, 1, seed=12)

    def fails(position, *pattern, x=a, statuses=(Status.INVALID_VALUE, Status.NOT_SUPPORTED)):
        with pytest.raises(MackoError) as e:
            Matrix.from_dense_nm(x, *pattern)
        assert e.value.status in statuses and e.value.position == position, e.value
        assert e.value.routine == "macko_mat_create_nm_dense_host"

    fails(9, 2, 5, 1)
    fails(9, 2, 64, 1)
    fails(9, 2, -4, 1, statuses=(Status.INVALID_VALUE,))
    fails(10, 2, 4, 3)
    fails(10, 2, 4, 64)
    fails(8, 5, 4, 1, statuses=(Status.INVALID_VALUE,))
    fails(8, -1, 4, 1, statuses=(Status.INVALID_VALUE,))
    macko.version()  # a success clears the thread's last error
    with pytest.raises(TypeError, match="n must be an integer"):
        Matrix.from_dense_nm(a, 2.0, 4, 1)
    with pytest.raises(ValueError, match="range of a C int"):
        Matrix.from_dense_nm(a, 2, 4 + 2**32, 1)  # not truncated to 4 by ctypes
    with pytest.raises(ValueError, match="2-D"):
        Matrix.from_dense_nm(a[0], 2, 4, 1)
    with pytest.raises(ValueError):
        Matrix.from_dense_nm(a.astype(np.int32), 2, 4, 1)
    assert macko.last_error() == (0, "")  # the wrapper's own refusals never reached the library


class FakeDeviceArray:
    def __init__(self, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0x1000, False),
                                         "strides": strides, "version": 3}


def test_device_input_needs_a_handle():
    with pytest.raises(ValueError, match="handle="):
        Matrix.from_dense_nm(FakeDeviceArray((4, 8), "<f2"), 2, 4, 1)
    with pytest.raises(ValueError, match="dtype= converts host arrays only"):
        Matrix.from_dense_nm(FakeDeviceArray((4, 8), "<f2"), 2, 4, 1, handle=object(), dtype=np.float32)


@needs_nm
def test_import_validation():
    rows, cols, n, m, v = 10, 22, 2, 8, 2  # a last window of 6 columns, a last group of 2 rows
    a = random_nm(rows, cols, n, m, v, seed=13)
    vals, pos = encode(a, n, m, v)

    def fails(position, values=vals, positions=pos, pattern=(n, m, v), **kw):
        with pytest.raises(MackoError) as e:
            Matrix.from_nm_arrays(kw.get("rows", rows), cols, *pattern, values, positions)
        assert e.value.position == position and e.value.routine == "macko_mat_create_nm_host", e.value
        assert e.value.status in (Status.INVALID_VALUE, Status.NOT_SUPPORTED)
        return e.value

    p = pos.copy()
    p[3, 2:4] = [5, 5]  # group 3, window 1: not strictly ascending
    assert "group 3 (rows 6..7), window 1" in fails(9, positions=p).message
    p = pos.copy()
    p[0, 0] = 8  # >= m
    fails(9, positions=p)
    # a nonzero value at a column >= cols (the last window holds columns 16..21; positions 6, 7 are past cols)
    p, vv = pos.copy(), vals.copy()
    p[0, 4:6] = [0, 7]
    vv[0:2, 4:6] = [[0.5, 0.0], [1.0, 2.0]]
    assert "row 1, window 2" in fails(8, values=vv, positions=p).message
    vv[1, 5] = 0.0
    Matrix.from_nm_arrays(rows, cols, n, m, v, vv, p)  # a zero there is padding: fine
    fails(6, pattern=(n, 12, v))  # an unsupported m: refused before the arrays are read
    fails(7, pattern=(n, m, 3))
    fails(2, rows=-1)
    with pytest.raises(ValueError, match="values has 59 elements"):
        Matrix.from_nm_arrays(rows, cols, n, m, v, vals.reshape(-1)[:-1], pos)
    with pytest.raises(ValueError, match="positions has 29 elements"):
        Matrix.from_nm_arrays(rows, cols, n, m, v, vals, pos.reshape(-1)[:-1])
    with pytest.raises(ValueError, match="integers"):
        Matrix.from_nm_arrays(rows, cols, n, m, v, vals, pos.astype(np.float32))
    with pytest.raises(ValueError, match="range of uint8"):
        Matrix.from_nm_arrays(rows, cols, n, m, v, vals, pos.astype(np.int64) + 256)


@needs_nm
def test_empty_shapes():
    for rows, cols in ((0, 0), (0, 5), (5, 0)):
        A = Matrix.from_dense_nm(np.zeros((rows, cols), np.float32), 2, 4, 1)
        assert A.shape == (rows, cols) and A.nnz == 0 and A.kind == Kind.NM and A.to_dense().shape == (rows, cols)
        arr = A.nm_arrays()
        assert arr.values.size == rows * (-(-cols // 4)) * 2
        B = Matrix.from_nm_arrays(rows, cols, 2, 4, 1, *arr)
        assert B.shape == (rows, cols)


@needs_nm
def test_macko_only_methods_refuse_an_nm_matrix():
    A = Matrix.from_dense_nm(random_nm(8, 16, 2, 4, 1, seed=14), 2, 4, 1)
    for call, hint in ((A.arrays, "nm_arrays"), (A.to_csr, "nm_arrays")):
        with pytest.raises(MackoError, match=hint) as e:
            call()
        assert e.value.status == Status.NOT_SUPPORTED and "an NM matrix" in e.value.message
    with pytest.raises(MackoError) as e:
        A.set_layout("tiles")
    assert e.value.status == Status.NOT_SUPPORTED
    assert A.layout == macko.Layout.ROWS
    M = Matrix.from_dense(np.eye(4, dtype=np.float16))
    with pytest.raises(MackoError) as e:
        M.nm_arrays()
    assert (e.value.status, e.value.position) == (Status.NOT_SUPPORTED, 1)
    with pytest.raises(MackoError):
        M.nm_pattern
    assert A.nm_pattern == (2, 4, 1)
    A.close()
    with pytest.raises(ValueError, match="closed"):
        A.nm_pattern  # not the pattern remembered from before


@needs_nm
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_astype_keeps_the_pattern(dtype):
    a = random_nm(24, 40, 3, 8, 4, seed=15, dtype=np.float64, fill=0.8)
    a[0, np.flatnonzero(a[0])[0]] = 1e-300  # rounds to zero below float64: its slot stays
    A = Matrix.from_dense_nm(a, 3, 8, 4)
    B = A.astype(dtype)
    assert B.kind == Kind.NM and B.nm_pattern == (3, 8, 4) and not B.on_device and B.has_host_copy
    np.testing.assert_array_equal(B.nm_arrays().positions, A.nm_arrays().positions)
    want = macko._enums.convert_values(A.nm_arrays().values, macko.DataType.R_64F, macko._enums.datatype_of(dtype))
    np.testing.assert_array_equal(B.nm_arrays().values, want)


@needs_nm
def test_copies_and_pickles():
    a = random_nm(30, 50, 4, 16, 2, seed=16, dtype=np.float16, fill=0.8)
    A = Matrix.from_dense_nm(a, 4, 16, 2)
    want = A.nm_arrays()
    copies = [pickle.loads(pickle.dumps(A, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    copies += [A.copy(), copy.copy(A), copy.deepcopy(A)]
    state = A.__getstate__()
    assert sorted(state) == ["nm"] and sorted(state["nm"]) == ["cols", "m", "n", "positions", "rows", "type", "v",
                                                               "values"]
    A.close()
    for C in copies:
        assert C.kind == Kind.NM and not C.on_device and C.has_host_copy and C.nm_pattern == (4, 16, 2)
        got = C.nm_arrays()
        np.testing.assert_array_equal(got.values, want.values)
        np.testing.assert_array_equal(got.positions, want.positions)
    # a damaged state is refused by the importer
    state["nm"]["positions"] = state["nm"]["positions"].copy()
    state["nm"]["positions"][0, :2] = [3, 3]
    with pytest.raises(MackoError) as e:
        Matrix.__new__(Matrix).__setstate__(state)
    assert (e.value.status, e.value.position) == (Status.INVALID_VALUE, 9)


@needs_nm
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_serialize_save_load(tmp_path, dtype):
    """N:M matrices in the library's file format (version 3): the same pattern and arrays back, bit for bit."""
    A = Matrix.from_dense_nm(random_nm(21, 45, 3, 8, 2, seed=20, dtype=dtype, fill=0.8), 3, 8, 2)
    A.save(tmp_path / "nm.macko")
    for B in (Matrix.deserialize(A.serialize()), Matrix.load(tmp_path / "nm.macko")):
        assert B.kind == Kind.NM and B.nm_pattern == (3, 8, 2) and B.datatype == A.datatype
        for x, y in zip(B.nm_arrays(), A.nm_arrays()):
            np.testing.assert_array_equal(x.view(np.uint8), y.view(np.uint8))
    bad = bytearray(A.serialize())
    bad[-1] ^= 0x55
    with pytest.raises(MackoError) as e:
        Matrix.deserialize(bytes(bad))
    assert e.value.status == Status.FORMAT_ERROR


@needs_nm
def test_bf16_pickle():
    a = random_nm(8, 12, 2, 4, 1, seed=17, dtype="bfloat16")
    A = Matrix.from_dense_nm(a, 2, 4, 1)
    B = pickle.loads(pickle.dumps(A))
    assert B.datatype == macko.DataType.R_16BF
    np.testing.assert_array_equal(B.nm_arrays().values.view(np.uint16), A.nm_arrays().values.view(np.uint16))


@needs_nm
def test_prune_then_encode():
    """What prune_nm makes always encodes with its pattern; the detection finds no larger n for it."""
    a = gaussian(45, 77, seed=18)
    for n, m, v in PATTERNS:
        p = macko.prune_nm(a, n, m, v)
        A = Matrix.from_dense_nm(p, n, m, v)
        check_matrix(A, p, n, m, v)
        assert Matrix.from_dense_nm(p, 0, m, v).nm_pattern == (n, m, v)
    with pytest.raises(MackoError, match="row 0, window 0"):
        Matrix.from_dense_nm(a, 2, 4, 1)  # an unpruned dense weight


# ---------------------------------------------------------------- compute: the wrapper's checks, no GPU
class FakeHandle:
    pointer_mode = macko.PointerMode.HOST
    stream = None


@needs_nm
def test_compute_takes_the_matrix_type_only(monkeypatch):
    A = Matrix.from_dense_nm(random_nm(6, 8, 2, 4, 1, seed=19, dtype=np.float16), 2, 4, 1)
    with pytest.raises(ValueError, match="N:M float16 matrix: it computes with x and y of its own type only"):
        macko.spmv(FakeHandle(), A, FakeDeviceArray((8,), "<f4"), FakeDeviceArray((6,), "<f4"))
    with pytest.raises(ValueError, match="B and C of its own type only"):
        macko.spmm_ex(FakeHandle(), A, FakeDeviceArray((8, 2), "<f4", (4, 32)), FakeDeviceArray((6, 2), "<f4", (4, 24)))
    seen, real = [], mc._lib.call
    monkeypatch.setattr(mc._lib, "call", lambda name, *args: seen.append(name) if "spm" in name else real(name, *args))
    macko.spmv(FakeHandle(), A, FakeDeviceArray((8,), "<f2"), FakeDeviceArray((6,), "<f2"))
    macko.spmm(FakeHandle(), A, FakeDeviceArray((8, 3), "<f2", (2, 16)), FakeDeviceArray((6, 3), "<f2", (2, 12)))
    macko.spmm_ex(FakeHandle(), A, FakeDeviceArray((8, 3), "<f2", (2, 16)), FakeDeviceArray((6, 3), "<f2", (2, 12)))
    assert seen == ["macko_Hspmv", "macko_Hspmm", "macko_spmm_ex"]


# ---------------------------------------------------------------- on the GPU
@needs_nm
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_gpu_device_encoder_equals_the_host_one(torch_cuda, handle, dtype):
    torch = torch_cuda
    tdt = getattr(torch, dtype)
    w = macko.prune_nm(torch.randn(70, 100, device="cuda").to(tdt), 4, 8, 2)
    A = Matrix.from_dense_nm(w, 0, 0, 0, handle=handle)
    assert A.on_device and A.has_host_copy and A.handle is handle and A.kind == Kind.NM
    B = Matrix.from_dense_nm(w.cpu(), 0, 0, 0)
    assert A.nm_pattern == B.nm_pattern
    for x, y in zip(A.nm_arrays(), B.nm_arrays()):
        np.testing.assert_array_equal(x.view(np.uint8), y.view(np.uint8))
    C = Matrix.from_dense_nm_device(handle, w.t().contiguous().t(), 4, 8, 2)  # column-major
    np.testing.assert_array_equal(C.nm_arrays().positions, B.nm_arrays().positions)
    with pytest.raises(MackoError, match="row"):
        Matrix.from_dense_nm(torch.ones(8, 8, device="cuda", dtype=tdt), 2, 4, 1, handle=handle)


@needs_nm
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n,m,v", [(2, 4, 1), (4, 8, 4), (16, 32, 32), (3, 16, 2)])
def test_gpu_spmv_spmm(torch_cuda, handle, dtype, n, m, v):
    torch = torch_cuda
    tdt = getattr(torch, dtype)
    rows, cols = 150, 333
    w = macko.prune_nm(torch.randn(rows, cols, device="cuda", dtype=torch.float64), n, m, v).to(tdt)
    A = Matrix.from_dense_nm(w.cpu(), n, m, v)
    A.upload(handle)
    ref_w = w.double()
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 3e-5, "float64": 1e-12}[dtype]
    for k in (1, 2, 3, 8, 17, 64, 300):
        B = torch.randn(k, cols, device="cuda").to(tdt)
        C = torch.randn(k, rows, device="cuda").to(tdt)
        C0 = C.clone()
        macko.spmm(handle, A, B.T, C.T, alpha=0.5, beta=-1.0)
        want = 0.5 * B.double() @ ref_w.T - C0.double()
        scale = (B.double().abs() @ ref_w.abs().T + C0.double().abs()).max().item()
        assert (C.double() - want).abs().max().item() <= tol * scale, k
    x = torch.randn(2 * cols, device="cuda").to(tdt)[::2]
    y = torch.zeros(rows, device="cuda").to(tdt)
    macko.spmv(handle, A, x, y)
    want = ref_w @ x.double()
    assert (y.double() - want).abs().max().item() <= tol * (ref_w.abs() @ x.double().abs()).max().item()
    with pytest.raises(MackoError) as e:
        macko.spmv(handle, A, torch.zeros(rows, device="cuda").to(tdt), torch.zeros(cols, device="cuda").to(tdt),
                   op="T")
    assert e.value.status == Status.NOT_SUPPORTED
