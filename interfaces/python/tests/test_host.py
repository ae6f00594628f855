"""Host-side tests of the Python wrapper: need numpy and libmacko, no GPU."""

import os
import re

import numpy as np
import pytest

import macko
from macko import MackoError, Matrix, Status
from macko import _lib
from macko.matrix import _dense_layout

from conftest import ALL_TYPES, REPO, as_float64, as_type

DTYPES = [np.float16, np.float32]


def random_dense(rows, cols, density, dtype, seed):
    """Random values in [-1, 1] (never zero) at about density*rows*cols positions; row 1 empty, row 2 holding only
    its first and last column (a gap > 16, so padding entries appear). dtype "bfloat16": macko.bfloat16 bits."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(0.05, 1.0, (rows, cols)) * rng.choice([-1.0, 1.0], (rows, cols))
    a = np.where(rng.random((rows, cols)) < density, v, 0.0)
    if rows > 2 and cols > 1:
        a[1, :] = 0
        a[2, :] = 0
        a[2, 0], a[2, -1] = 1.5, -2.5
    return as_type(a, dtype)


def np_dtype(dtype):
    return macko.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


def format_example(dtype=np.float32):
    """FORMAT.md's example (row 0) plus an empty row and a row with a gap of exactly 16 columns."""
    a = np.zeros((3, 47), dtype=dtype)
    a[0, [2, 36, 46]] = [1, 2, 3]
    a[2, [0, 16]] = [4, 5]
    return a


# ---------------------------------------------------------------- library, version, status names
def test_library_found():
    path = macko.library_path()
    assert path
    if os.environ.get("MACKO_LIBRARY"):
        assert path == os.environ["MACKO_LIBRARY"]


def test_version_matches_header():
    v = macko.version()
    assert len(v) == 3 and all(isinstance(x, int) for x in v)
    header = os.path.join(REPO, "include", "macko.h")
    if os.path.exists(header):
        text = open(header).read()
        want = tuple(int(re.search(r"#define MACKO_VERSION_%s (\d+)" % k, text).group(1))
                     for k in ("MAJOR", "MINOR", "PATCH"))
        assert v == want
    assert macko.last_error() == (0, "")


def test_status_names_and_strings():
    for s in Status:
        assert macko.status_name(s) == "MACKO_STATUS_" + s.name
        assert len(macko.status_string(s)) > 0
    assert macko.status_name(5) == "MACKO_STATUS_<unknown>"
    assert Status.FORMAT_ERROR == 100 and macko.DataType.R_16F == 2 and macko.Order.COL == 1


# ---------------------------------------------------------------- encoding
def test_format_example_byte_exact():
    A = Matrix.from_dense(format_example())
    assert A.info == (3, 47, 5, np.dtype(np.float32))
    arr = A.arrays()
    assert arr.entries == 7 and arr.entries_padded == 8
    np.testing.assert_array_equal(arr.values, np.array([1, 0, 0, 2, 3, 4, 5, 0], np.float32))
    # entry k's delta sits in byte k // 2, low nibble when k is even: deltas 2,15,15,1,9,0,15,(0)
    np.testing.assert_array_equal(arr.deltas, np.array([0xF2, 0x1F, 0x09, 0x0F], np.uint8))
    assert arr.row_ptr.dtype == np.int32
    np.testing.assert_array_equal(arr.row_ptr, [0, 5, 5, 7])
    st = A.storage
    assert st == (8 * 4 + 4 + 4 * 4, 7, 8, pytest.approx(52 / (3 * 47 * 4)))


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("layout", ["C", "F", "row-view", "col-view", "strided", "transposed", "reversed"])
def test_encode_layouts(dtype, layout):
    rows, cols = 37, 53
    a = random_dense(rows, cols, 0.3, dtype, seed=7)
    dtype = a.dtype  # bfloat16: macko.bfloat16 (np.full/np.zeros below keep its mark)
    if layout == "C":
        src = np.ascontiguousarray(a)
    elif layout == "F":
        src = np.asfortranarray(a)
    elif layout == "row-view":  # leading dimension 61 > cols, junk in the gap
        big = np.full((rows, 61), 0x7F80 if dtype == macko.bfloat16 else np.inf, dtype)
        big[:, :cols] = a
        src = big[:, :cols]
    elif layout == "col-view":  # column-major, leading dimension 45 > rows
        big = np.full((45, cols), 0x7FC0 if dtype == macko.bfloat16 else np.nan, dtype, order="F")
        big[:rows, :] = a
        src = big[:rows, :]
    elif layout == "strided":
        big = np.zeros((2 * rows, 3 * cols), dtype)
        big[::2, ::3] = a
        src = big[::2, ::3]
    elif layout == "transposed":
        src = np.ascontiguousarray(a.T).T
    else:
        src = np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]
    np.testing.assert_array_equal(src, a)
    A = Matrix.from_dense(src)
    ref = Matrix.from_dense(np.ascontiguousarray(a))
    assert A.info == (rows, cols, int(np.count_nonzero(a)), np.dtype(dtype))
    assert A.info.dtype.metadata == dtype.metadata  # a bf16 matrix's arrays say so
    np.testing.assert_array_equal(A.to_dense(), a)
    np.testing.assert_array_equal(A.to_dense("F"), a)
    assert A.to_dense("F").flags.f_contiguous
    got, want = A.arrays(), ref.arrays()
    for g, w in zip(got, want):  # the encoding does not depend on the input layout
        np.testing.assert_array_equal(g, w)


def test_layout_choice_avoids_copies():
    a = np.zeros((5, 7), np.float32)
    arr, order, ld = _dense_layout(a)
    assert arr is a and order == macko.Order.ROW and ld == 7
    f = np.asfortranarray(a)
    arr, order, ld = _dense_layout(f)
    assert arr is f and order == macko.Order.COL and ld == 5
    big = np.zeros((5, 11), np.float32)
    arr, order, ld = _dense_layout(big[:, :7])
    assert np.shares_memory(arr, big) and order == macko.Order.ROW and ld == 11
    bigf = np.zeros((9, 7), np.float32, order="F")
    arr, order, ld = _dense_layout(bigf[:5, :])
    assert np.shares_memory(arr, bigf) and order == macko.Order.COL and ld == 9
    arr, order, ld = _dense_layout(big[:, ::2])
    assert not np.shares_memory(arr, big) and order == macko.Order.ROW and ld == 6


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_signed_zero_nan_inf(dtype):
    a = np.zeros((2, 40))
    a[0, 3] = -0.0
    a[0, 5] = np.nan
    a[1, 0] = np.inf
    a[1, 39] = -np.inf
    a = as_type(a, dtype)
    A = Matrix.from_dense(a)
    assert A.nnz == 3  # -0 is a zero; NaN and Inf are stored
    d = as_float64(A.to_dense(), dtype)
    assert np.isnan(d[0, 5]) and d[1, 0] == np.inf and d[1, 39] == -np.inf
    assert d[0, 3] == 0
    assert np.count_nonzero(d) == 3  # NaN counts as nonzero here too


@pytest.mark.parametrize("density", [0.1, 0.3, 0.5])
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_storage_and_effective_density(density, dtype):
    rows = cols = 256
    a = random_dense(rows, cols, density, dtype, seed=11)
    b = a.dtype.itemsize  # bytes per value
    A = Matrix.from_dense(a)
    st = A.storage
    assert st.entries_padded % 8 == 0 and 0 <= st.entries_padded - st.entries < 8
    assert st.entries >= A.nnz == np.count_nonzero(a)
    assert st.bytes == st.entries_padded * b + st.entries_padded // 2 + 4 * (rows + 1)
    assert st.effective_density == pytest.approx(st.bytes / (rows * cols * b), rel=1e-12)
    z = (1 - density) ** 16  # FORMAT.md's expectation for uniform patterns, plus the row pointers
    expect = density * (1 + z / (1 - z)) * (1 + 0.5 / b) + 4 * (rows + 1) / (rows * cols * b)
    assert st.effective_density == pytest.approx(expect, abs=0.03)


def test_empty_and_degenerate_shapes():
    for shape in [(0, 0), (0, 5), (4, 0), (1, 1), (1, 100), (100, 1)]:
        a = np.zeros(shape, np.float32)
        if a.size:
            a.flat[-1] = 2.0
        A = Matrix.from_dense(a)
        assert A.shape == shape and A.nnz == np.count_nonzero(a)
        np.testing.assert_array_equal(A.to_dense(), a)


# ---------------------------------------------------------------- CSR
@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("base", [0, 1])
def test_csr_round_trip(dtype, index_dtype, base):
    a = random_dense(29, 70, 0.4, dtype, seed=3)
    rows_nz, cols_nz = np.nonzero(a)
    want_ptr = np.concatenate([[0], np.cumsum(np.bincount(rows_nz, minlength=a.shape[0]))]) + base
    A = Matrix.from_dense(a)
    indptr, indices, data = A.to_csr(index_dtype, base)
    assert indptr.dtype == index_dtype and indices.dtype == index_dtype and data.dtype == np_dtype(dtype)
    assert data.dtype.metadata == a.dtype.metadata
    np.testing.assert_array_equal(indptr, want_ptr)
    np.testing.assert_array_equal(indices, cols_nz + base)
    np.testing.assert_array_equal(data, a[rows_nz, cols_nz])
    B = Matrix.from_csr(indptr, indices, data, a.shape, index_base=base)
    np.testing.assert_array_equal(B.to_dense(), a)
    for g, w in zip(B.arrays(), A.arrays()):
        np.testing.assert_array_equal(g, w)


def test_csr_exact_and_explicit_zeros():
    A = Matrix.from_dense(format_example())
    indptr, indices, data = A.to_csr()
    np.testing.assert_array_equal(indptr, [0, 3, 3, 5])
    np.testing.assert_array_equal(indices, [2, 36, 46, 0, 16])
    np.testing.assert_array_equal(data, [1, 2, 3, 4, 5])
    # An explicit zero in CSR input is an entry, but not a nonzero, and not exported.
    B = Matrix.from_csr([0, 2], [1, 5], np.array([0.0, 7.0], np.float32), (1, 6))
    assert B.nnz == 1 and B.storage.entries == 2
    indptr, indices, data = B.to_csr()
    np.testing.assert_array_equal(indices, [5])
    np.testing.assert_array_equal(data, [7.0])


def test_csr_from_scipy():
    sp = pytest.importorskip("scipy.sparse")
    a = random_dense(20, 33, 0.3, np.float32, seed=5)
    A = Matrix.from_csr(sp.csr_matrix(a))
    np.testing.assert_array_equal(A.to_dense(), a)


# ---------------------------------------------------------------- raw MACKO arrays
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_macko_arrays_import(dtype):
    a = random_dense(41, 90, 0.25, dtype, seed=9)
    A = Matrix.from_dense(a)
    arr = A.arrays()
    B = Matrix.from_macko(a.shape, arr.values, arr.deltas, arr.row_ptr, arr.entries)
    np.testing.assert_array_equal(B.to_dense(), a)
    for g, w in zip(B.arrays(), arr):
        np.testing.assert_array_equal(g, w)
    # the arrays are copies: changing them does not change A
    arr.values[:] = 0
    np.testing.assert_array_equal(A.to_dense(), a)


def test_macko_import_rejects_bad_column():
    arr = Matrix.from_dense(format_example()).arrays()
    deltas = arr.deltas.copy()
    deltas[2] = 0x0F  # entry 4 (column 46) gets delta 15: column 52 >= 47
    with pytest.raises(MackoError) as e:
        Matrix.from_macko((3, 47), arr.values, deltas, arr.row_ptr, arr.entries)
    assert e.value.status_name == "MACKO_STATUS_INVALID_VALUE"
    assert e.value.routine == "macko_mat_create_macko_host"


# ---------------------------------------------------------------- persistence
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_serialize_round_trip(dtype):
    a = random_dense(23, 64, 0.35, dtype, seed=13)
    A = Matrix.from_dense(a)
    buf = A.serialize()
    assert isinstance(buf, bytes) and len(buf) == A.serialized_size()
    B = Matrix.deserialize(buf)
    np.testing.assert_array_equal(B.to_dense(), a)
    assert B.info == A.info and B.storage == A.storage and B.datatype == A.datatype
    C = Matrix.deserialize(bytearray(buf))  # any bytes-like object
    np.testing.assert_array_equal(C.to_dense(), a)


def test_deserialize_rejects_damage():
    buf = Matrix.from_dense(random_dense(23, 64, 0.35, np.float32, seed=13)).serialize()
    for bad in (buf[:-1], buf[: len(buf) // 2], b"", b"\0" * len(buf)):
        with pytest.raises(MackoError) as e:
            Matrix.deserialize(bad)
        assert e.value.status == Status.FORMAT_ERROR
    flipped = bytearray(buf)
    flipped[-1] ^= 0xFF
    with pytest.raises(MackoError) as e:
        Matrix.deserialize(bytes(flipped))
    assert e.value.status_name == "MACKO_STATUS_FORMAT_ERROR"


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_save_load(tmp_path, dtype):
    a = random_dense(30, 45, 0.3, dtype, seed=17)
    A = Matrix.from_dense(a)
    p = tmp_path / "w.macko"
    A.save(p)
    assert p.stat().st_size == A.serialized_size()
    B = Matrix.load(str(p))
    np.testing.assert_array_equal(B.to_dense(), a)
    assert B.arrays().deltas.tobytes() == A.arrays().deltas.tobytes()
    with pytest.raises(MackoError) as e:
        Matrix.load(tmp_path / "missing" / "x.macko")
    assert e.value.status == Status.IO_ERROR


# ---------------------------------------------------------------- errors
def test_error_carries_status_position_message():
    with pytest.raises(MackoError) as e:
        Matrix.from_csr([0, 3, 3, 5], [36, 2, 46, 0, 16], np.ones(5, np.float32), (3, 47))  # unsorted row 0
    err = e.value
    assert err.status == 3 and err.status_name == "MACKO_STATUS_INVALID_VALUE"
    assert err.position == 6  # col_ind in macko_mat_create_csr_host's signature
    assert "macko_mat_create_csr_host" in err.message and "argument 6" in err.message
    assert "MACKO_STATUS_INVALID_VALUE" in str(err)
    assert macko.last_error() == (6, err.message)


def test_bad_leading_dimension_position():
    a = np.ones((5, 6), np.float32)
    import ctypes

    out = ctypes.c_void_p(12345)
    with pytest.raises(MackoError) as e:
        _lib.call("macko_mat_create_dense_host", ctypes.byref(out), ctypes.c_int64(5), ctypes.c_int64(6),
                  int(macko.DataType.R_32F), ctypes.c_void_p(a.ctypes.data), ctypes.c_int64(5), int(macko.Order.ROW))
    assert e.value.position == 6 and e.value.status == Status.INVALID_VALUE
    assert out.value == 12345  # untouched on error


def test_python_side_argument_errors():
    with pytest.raises(ValueError, match="int64"):
        Matrix.from_dense(np.ones((3, 3), np.int64))  # integers need dtype=
    with pytest.raises(ValueError, match="bfloat16 bit patterns need dtype='bfloat16'"):
        Matrix.from_dense(np.ones((3, 3), np.uint16))  # a plain uint16 array is not taken for bf16 bits
    np.testing.assert_array_equal(Matrix.from_dense(np.eye(3), dtype=np.float32).to_dense(), np.eye(3))
    with pytest.raises(ValueError):
        Matrix.from_dense(np.ones(3, np.float32))
    with pytest.raises(ValueError):
        Matrix.from_csr([0, 1], [0], np.ones(2, np.float32), (1, 3))
    with pytest.raises(ValueError):
        Matrix.from_csr([0, 1, 1], [0], np.ones(1, np.float32), (1, 3))
    with pytest.raises(ValueError):
        Matrix.from_dense(np.ones((2, 2), np.float32)).to_csr(np.int16)


def test_closed_matrix():
    with Matrix.from_dense(np.eye(4, dtype=np.float32)) as A:
        assert A.nnz == 4
    assert A.closed
    with pytest.raises(ValueError):
        A.info
    A.close()  # twice is fine


def test_handle_without_gpu():
    if macko.gpu_available():
        with macko.Handle() as h:
            assert h.stream == 0 and h.pointer_mode == macko.PointerMode.HOST
            h.pointer_mode = "device"
            assert h.pointer_mode == macko.PointerMode.DEVICE
    else:
        with pytest.raises(MackoError) as e:
            macko.Handle()
        assert e.value.status == Status.NOT_INITIALIZED


# ---------------------------------------------------------------- the caller's workspace (macko_set_workspace)
def test_workspace_min_bytes_matches_header():
    assert macko.WORKSPACE_MIN_BYTES == 64 << 20 and "WORKSPACE_MIN_BYTES" in macko.__all__
    header = os.path.join(REPO, "include", "macko.h")
    if os.path.exists(header):
        m = re.search(r"#define MACKO_WORKSPACE_MIN_BYTES \(\(size_t\)(\d+) << (\d+)\)", open(header).read())
        assert m and int(m.group(1)) << int(m.group(2)) == macko.WORKSPACE_MIN_BYTES


def test_set_workspace_null_handle():
    assert macko.has_symbol("macko_set_workspace")
    for ws, nbytes in ((None, 0), (None, 1), (0x1000, macko.WORKSPACE_MIN_BYTES)):  # the handle is checked first
        with pytest.raises(MackoError) as e:
            _lib.call("macko_set_workspace", None, ws, nbytes)
        assert e.value.position == 1 and e.value.status == Status.INVALID_VALUE
        assert e.value.routine == "macko_set_workspace"


class FakeMemoryPointer:
    """cupy.cuda.MemoryPointer's shape: .ptr into .mem, which has .ptr and .size."""

    class Mem:
        def __init__(self, ptr, size):
            self.ptr, self.size = ptr, size

    def __init__(self, base, size, offset):
        self.mem = self.Mem(base, size)
        self.ptr = base + offset


def test_workspace_buffer_checks():
    """What Handle.set_workspace passes for each kind of buffer, and what it refuses before the library is called."""
    from macko._device import device_buffer

    n = macko.WORKSPACE_MIN_BYTES
    assert device_buffer(FakeDeviceArray(n, "|u1"), "workspace") == (0x1000, n)
    assert device_buffer(FakeDeviceArray(n // 4, "<f4"), "workspace") == (0x1000, n)
    assert device_buffer(FakeDeviceArray(0, "<f2", shape=(64, 32), strides=(64, 2)), "workspace") == (0x1000, 4096)
    assert device_buffer(FakeDeviceArray(0, "<f2", shape=(64, 32), strides=(2, 128)), "workspace") == (0x1000, 4096)
    assert device_buffer(FakeMemoryPointer(0x10000, n + 512, 512), "workspace") == (0x10200, n)
    for bad in (FakeDeviceArray(0, "<f2", shape=(64, 32), strides=(128, 2)),  # every other row
                FakeDeviceArray(n, "|u1", strides=(2,)),
                FakeDeviceArray(n, "|u1", strides=(-1,)),
                FakeMemoryPointer(0x10000, 512, 1024)):                   # past the end of its memory
        with pytest.raises(ValueError, match="workspace"):
            device_buffer(bad, "workspace")
    with pytest.raises(TypeError, match="workspace"):
        device_buffer(np.empty(n, np.uint8), "workspace")  # host memory
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(ValueError, match="workspace must be a CUDA tensor"):
        device_buffer(torch.empty(16, dtype=torch.uint8), "workspace")


# ---------------------------------------------------------------- spmv's checks before the library is called
class FakeDeviceArray:
    """Something exposing __cuda_array_interface__; its pointer is never dereferenced by these tests."""

    def __init__(self, n, typestr, readonly=False, shape=None, strides=None):
        self.__cuda_array_interface__ = {"shape": shape or (n,), "typestr": typestr, "data": (0x1000, readonly),
                                         "strides": strides, "version": 3}


@pytest.mark.parametrize("dtype,typestr,wrong", [(np.float16, "<f2", "<f4"), (np.float32, "<f4", "<f2")])
def test_spmv_checks_arguments(dtype, typestr, wrong):
    A = Matrix.from_dense(random_dense(6, 9, 0.5, dtype, seed=1))
    x, y = FakeDeviceArray(9, typestr), FakeDeviceArray(6, typestr)
    bad = [
        (FakeDeviceArray(9, wrong), y),                        # x dtype
        (x, FakeDeviceArray(6, wrong)),                        # y dtype
        (FakeDeviceArray(8, typestr), y),                      # x length
        (x, FakeDeviceArray(7, typestr)),                      # y length
        (FakeDeviceArray(6, typestr), FakeDeviceArray(9, typestr)),  # lengths of op T given for op N
        (FakeDeviceArray(9, typestr, shape=(3, 3)), y),        # 2-D x
        (x, FakeDeviceArray(6, typestr, readonly=True)),       # read-only y
        (FakeDeviceArray(9, typestr, strides=(-2,)), y),       # negative stride
    ]
    for bx, by in bad:
        with pytest.raises(ValueError):
            macko.spmv(None, A, bx, by)
    with pytest.raises(TypeError):
        macko.spmv(None, A, np.zeros(9, dtype), y)  # host arrays are not device vectors
    with pytest.raises(ValueError):
        macko.spmv(None, A, x, y, op="X")
    with pytest.raises(ValueError):  # for op T, x has rows elements and y cols
        macko.spmv(None, A, x, y, op="T")


# ---------------------------------------------------------------- spmm's checks before the library is called
@pytest.mark.parametrize("dtype,typestr,wrong", [(np.float16, "<f2", "<f4"), (np.float32, "<f4", "<f2")])
def test_spmm_checks_arguments(dtype, typestr, wrong):
    A = Matrix.from_dense(random_dense(6, 9, 0.5, dtype, seed=1))
    isz = np.dtype(dtype).itemsize
    # column-major 9 x 3 and 6 x 3 (strides in bytes)
    B = FakeDeviceArray(0, typestr, shape=(9, 3), strides=(isz, 9 * isz))
    C = FakeDeviceArray(0, typestr, shape=(6, 3), strides=(isz, 6 * isz))
    bad = [
        (FakeDeviceArray(0, wrong, shape=(9, 3)), C),                                        # B dtype
        (B, FakeDeviceArray(0, wrong, shape=(6, 3))),                                        # C dtype
        (FakeDeviceArray(0, typestr, shape=(8, 3), strides=(isz, 9 * isz)), C),              # B rows
        (B, FakeDeviceArray(0, typestr, shape=(6, 2), strides=(isz, 6 * isz))),              # C columns != B's
        (FakeDeviceArray(27, typestr), C),                                                   # 1-D B
        (FakeDeviceArray(0, typestr, shape=(9, 3)), C),                                      # row-major B
        (B, FakeDeviceArray(0, typestr, shape=(6, 3), strides=(isz, 5 * isz))),              # overlapping columns
        (B, FakeDeviceArray(0, typestr, shape=(6, 3), strides=(isz, 6 * isz), readonly=True)),  # read-only C
    ]
    for bb, cc in bad:
        with pytest.raises(ValueError):
            macko.spmm(None, A, bb, cc)
    with pytest.raises(TypeError):
        macko.spmm(None, A, np.zeros((9, 3), dtype, order="F"), C)  # host arrays are not device matrices
    with pytest.raises(ValueError):
        macko.spmm(None, A, B, C, op="X")
    with pytest.raises(ValueError):  # for op T, B has rows rows and C cols
        macko.spmm(None, A, B, C, op="T")


def test_new_routines_exported():
    for name in ("macko_Hspmm", "macko_Sspmm", "macko_Hspmv_strided_batched", "macko_Sspmv_strided_batched"):
        assert macko.has_symbol(name)
    with pytest.raises(MackoError) as e:  # NULL handle: position 1, before anything else
        _lib.call("macko_Sspmv_strided_batched", None, 0, None, None, None, 1, 0, None, None, 1, 1, 2)
    assert e.value.position == 1 and e.value.status == Status.INVALID_VALUE


def test_torch_custom_op_shape_without_gpu():
    """macko::linear (MackoLinear's op under torch.compile) is registered with a fake implementation that gives
    the output's shape and dtype without a GPU, and it names a missing layer in its error."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    import macko.torch as mt
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        y = torch.ops.macko.linear(torch.empty(2, 3, 64, dtype=torch.float16), torch.tensor(7), 96)
    assert tuple(y.shape) == (2, 3, 96) and y.dtype == torch.float16
    with pytest.raises(RuntimeError, match="no live MackoLinear with key 123456789"):
        mt._layer(123456789)


# ---------------------------------------------------------------- the device layout of the next upload
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_layout_set_and_get(dtype):
    A = Matrix.from_dense(random_dense(20, 40, 0.5, dtype, 5), dtype=None if dtype != "bfloat16" else "bfloat16")
    assert A.layout == macko.Layout.ROWS and isinstance(A.layout, macko.Layout)
    A.set_layout("tiles")
    assert A.layout == macko.Layout.TILES
    A.layout = "Rows"
    assert A.layout == macko.Layout.ROWS
    A.layout = macko.Layout.TILES
    assert A.layout == macko.Layout.TILES
    # copies and pickles keep the choice (the serialized format does not record it)
    import copy
    import pickle
    assert A.copy().layout == macko.Layout.TILES
    assert copy.deepcopy(A).layout == macko.Layout.TILES
    assert pickle.loads(pickle.dumps(A)).layout == macko.Layout.TILES
    assert Matrix.deserialize(A.serialize()).layout == macko.Layout.ROWS
    assert A.astype(np.float32).layout == macko.Layout.ROWS  # float32 has the rows only
    assert A.astype("bfloat16" if dtype == np.float16 else np.float16).layout == macko.Layout.TILES


def test_layout_refusals():
    S = Matrix.from_dense(random_dense(20, 40, 0.5, np.float32, 6))
    with pytest.raises(MackoError) as e:
        S.set_layout("tiles")
    assert e.value.status == Status.NOT_SUPPORTED and e.value.position == 2
    assert S.layout == macko.Layout.ROWS
    S.set_layout("rows")  # every matrix takes the rows
    Q = Matrix.from_dense_quantized(np.ones((32, 32), np.float32))
    with pytest.raises(MackoError) as e:
        Q.layout = "tiles"
    assert e.value.status == Status.NOT_SUPPORTED and e.value.position == 2 and "QUANT" in e.value.message
    H = Matrix.from_dense(random_dense(20, 40, 0.5, np.float16, 7))
    for bad in ("columns", "", 2, -1, None):
        with pytest.raises(ValueError):
            H.set_layout(bad)
    assert H.layout == macko.Layout.ROWS
    with pytest.raises(MackoError) as e:  # the library's own check of the number
        _lib.call("macko_mat_set_layout", H, 5)
    assert e.value.status == Status.INVALID_VALUE and e.value.position == 2
    assert "MACKO_LAYOUT_TILES (1)" in e.value.message
