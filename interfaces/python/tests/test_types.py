"""Host-side tests of the value types of issue 17: bfloat16 on the host (bit patterns, conversions, the ways a bf16
matrix comes in), float64, Matrix.astype, and which C routine spmv/spmm pick for each combination of types (checked
with a recording stand-in for the library call; the products themselves are test_gpu.py's). Need numpy and libmacko,
no GPU; the torch parts skip without torch."""

import ctypes

import numpy as np
import pytest

import macko
from macko import DataType, Matrix, PointerMode
from macko import compute as mc

from conftest import ALL_TYPES, as_float64, as_type, _lib_has_type
from test_host import FakeDeviceArray, random_dense

BF16, F64 = "bfloat16", np.float64
needs_bf16 = pytest.mark.skipif(not _lib_has_type(BF16), reason="this libmacko has no bfloat16 matrices")
needs_f64 = pytest.mark.skipif(not _lib_has_type(F64), reason="this libmacko has no float64 matrices")


def bits(*values):
    return np.array(values, np.uint16)


# ---------------------------------------------------------------- bfloat16 bit patterns (numpy only)
def test_bf16_from_float32_rounds_to_nearest_even():
    one = 0x3F800000
    f = np.array([one, one + 0x8000, one + 0x18000, one + 0x8001, one + 0x7FFF], np.uint32).view(np.float32)
    np.testing.assert_array_equal(macko.bf16_from_float(f), bits(0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x3F80))
    special = np.array([0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-45, -1e-45], np.float32)
    # the largest floats round up to Inf (as a hardware conversion does); float32 subnormals stay subnormal
    np.testing.assert_array_equal(macko.bf16_from_float(special),
                                  bits(0x0000, 0x8000, 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x0000, 0x8000))
    nan = macko.bf16_from_float(np.array([np.nan, -np.nan], np.float32))
    assert all((b & 0x7F80) == 0x7F80 and (b & 0x7F) != 0 for b in nan)  # still NaN, quiet
    assert macko.bf16_from_float(np.float32(1.0)).dtype == macko.bfloat16


def test_bf16_from_float64_rounds_once():
    # 1 + 2^-8 is halfway between the bf16 neighbours 1 and 1 + 2^-7; a double just above or below it would round to
    # that halfway float32 first and then to even, the wrong way half the time
    h = 1 + 2.0 ** -8
    d = np.array([h, h + 2.0 ** -40, h - 2.0 ** -40, 1 + 3 * 2.0 ** -8 - 2.0 ** -45, -(h + 2.0 ** -40)])
    np.testing.assert_array_equal(macko.bf16_from_float(d), bits(0x3F80, 0x3F81, 0x3F80, 0x3F81, 0xBF81))
    big = np.array([1e300, -1e300, 1e-300])
    np.testing.assert_array_equal(macko.bf16_from_float(big), bits(0x7F80, 0xFF80, 0x0000))


def test_bf16_every_pattern_round_trips():
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    f = macko.bf16_to_float32(every)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f.view(np.uint32), every.astype(np.uint32) << 16)  # exact: the upper half
    back = macko.bf16_from_float(f)
    keep = ~np.isnan(f)
    np.testing.assert_array_equal(back[keep], every[keep])
    with np.errstate(invalid="ignore"):  # signalling NaNs
        f64 = f.astype(np.float64)
    np.testing.assert_array_equal(macko.bf16_from_float(f64)[keep], every[keep])
    assert np.isnan(macko.bf16_to_float32(back[~keep])).all()


def test_bf16_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    scaled = (rng.standard_normal(20000) * 10.0 ** rng.integers(-40, 38, 20000)).astype(np.float32)
    raw = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    f = np.concatenate([scaled, raw[~np.isnan(raw)]])
    assert f.dtype == np.float32
    want = torch.from_numpy(f).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(macko.bf16_from_float(f), want)


# ---------------------------------------------------------------- the ways a bf16 matrix comes in
@needs_bf16
def test_bf16_inputs_agree():
    a32 = random_dense(19, 40, 0.4, np.float32, seed=51)
    b = macko.bf16_from_float(a32)
    ref = Matrix.from_dense(b)  # macko.bfloat16 arrays carry their type
    assert ref.datatype == DataType.R_16BF and ref.dtype == np.uint16 and ref.dtype.metadata == {"macko": "bfloat16"}
    forms = [Matrix.from_dense(b.view(np.uint16), dtype="bfloat16"),   # raw bit patterns + the type's name
             Matrix.from_dense(b.view(np.int16), dtype=macko.bfloat16),
             Matrix.from_dense(a32, dtype="bf16"),                      # float values, rounded to nearest even
             Matrix.from_dense(a32.astype(np.float64), dtype="bfloat16"),
             Matrix.from_dense(np.asfortranarray(b))]
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None:
        forms.append(Matrix.from_dense(torch.from_numpy(a32).to(torch.bfloat16)))
        forms.append(Matrix.from_dense(torch.from_numpy(a32), dtype=torch.bfloat16))
        forms.append(Matrix.from_dense(torch.from_numpy(a32).to(torch.bfloat16).t().contiguous().t()))
    for A in forms:
        assert A.datatype == DataType.R_16BF
        assert A.serialize() == ref.serialize()
    ip, ix, data = ref.to_csr()
    assert data.dtype.metadata == {"macko": "bfloat16"}
    assert Matrix.from_csr(ip, ix, data.view(np.uint16), a32.shape, dtype="bfloat16").serialize() == ref.serialize()
    assert Matrix.from_csr(ip, ix, macko.bf16_to_float32(data), a32.shape,
                           dtype="bfloat16").serialize() == ref.serialize()
    arr = ref.arrays()
    assert Matrix.from_macko(a32.shape, arr.values.view(np.uint16), arr.deltas, arr.row_ptr, arr.entries,
                             dtype="bfloat16").serialize() == ref.serialize()
    # exports: the bit patterns by default, exact float32 values on request
    np.testing.assert_array_equal(ref.to_dense(), b)
    np.testing.assert_array_equal(ref.to_dense(dtype=np.float32), macko.bf16_to_float32(b))
    np.testing.assert_array_equal(ref.to_csr(dtype=np.float64)[2], as_float64(data, BF16))
    assert repr(ref).startswith("<macko.Matrix 19x40 bfloat16 nnz=")


def test_bf16_input_errors():
    with pytest.raises(ValueError, match="bfloat16 bit patterns need dtype='bfloat16'"):
        Matrix.from_dense(np.ones((2, 2), np.uint16))
    with pytest.raises(ValueError, match="float16, bfloat16, float32 or float64"):
        Matrix.from_dense(np.ones((2, 2), np.float32), dtype=np.int8)
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match="from_dense_device"):
            Matrix.from_dense(torch.ones(2, 2, device="cuda"))


@needs_f64
def test_float64_matrix():
    a = random_dense(33, 70, 0.3, F64, seed=52)
    a[3, 5] = np.pi  # needs all 53 bits
    A = Matrix.from_dense(a)
    assert A.datatype == DataType.R_64F and A.dtype == np.float64
    np.testing.assert_array_equal(A.to_dense(), a)
    assert A.to_dense()[3, 5] == np.pi
    assert A.storage.bytes == A.storage.entries_padded * 8 + A.storage.entries_padded // 2 + 4 * 34


# ---------------------------------------------------------------- astype: other values, same positions
@pytest.mark.parametrize("src", ALL_TYPES)
@pytest.mark.parametrize("dst", ALL_TYPES)
def test_astype_keeps_positions(src, dst):
    a = random_dense(27, 90, 0.3, src, seed=53)
    A = Matrix.from_dense(a)
    B = A.astype(dst)
    assert B.datatype == macko._enums.datatype_of(dst) and B._ptr != A._ptr
    got, have = B.arrays(), A.arrays()
    np.testing.assert_array_equal(got.deltas, have.deltas)
    np.testing.assert_array_equal(got.row_ptr, have.row_ptr)
    assert (got.entries, got.entries_padded) == (have.entries, have.entries_padded)
    want = as_type(as_float64(have.values, src), dst)  # the values here are exact in float64 and round once
    np.testing.assert_array_equal(got.values, want)
    b_src, b_dst = a.dtype.itemsize, np.dtype(macko._enums.numpy_dtype(macko._enums.datatype_of(dst))).itemsize
    assert B.storage.bytes - A.storage.bytes == (b_dst - b_src) * have.entries_padded


@pytest.mark.parametrize("dst", [np.float16, pytest.param(BF16, marks=needs_bf16)])
def test_astype_underflow_stays_an_entry(dst):
    a = np.zeros((2, 40), np.float32)
    a[0, [1, 20, 39]] = [1.0, 1e-39, -3.0]  # 1e-39 flushes to zero in fp16; in bf16 it is a subnormal
    A = Matrix.from_dense(a)
    B = A.astype(dst)
    assert B.storage.entries == A.storage.entries
    np.testing.assert_array_equal(B.arrays().deltas, A.arrays().deltas)
    assert B.nnz == (2 if dst == np.float16 else 3)  # a stored zero is an entry, not a nonzero


# ---------------------------------------------------------------- which routine spmv / spmm call
class FakeHandle:
    def __init__(self, mode=PointerMode.HOST):
        self.pointer_mode = mode
        self.stream = None


@pytest.fixture
def calls(monkeypatch):
    """Records mc._lib.call's (routine, args) instead of calling the library."""
    seen = []
    real = mc._lib.call

    def record(name, *args):
        if "spm" not in name:  # the matrix's own queries (get_info) still reach the library
            return real(name, *args)
        seen.append((name, args))

    monkeypatch.setattr(mc._lib, "call", record)
    return seen


TYPESTR = {np.float16: "<f2", np.float32: "<f4", np.float64: "<f8"}


def host_matrix(dtype):
    return Matrix.from_dense(random_dense(6, 9, 0.5, dtype, seed=54))


def vec(n, typestr):
    return FakeDeviceArray(n, typestr)


@pytest.mark.parametrize("dtype,letter", [(np.float16, "H"), (np.float32, "S"),
                                          pytest.param(np.float64, "D", marks=needs_f64)])
def test_same_types_call_the_letter_routine(calls, dtype, letter):
    A = host_matrix(dtype)
    t = TYPESTR[dtype]
    macko.spmv(FakeHandle(), A, vec(9, t), vec(6, t), alpha=0.5, beta=2.0)
    name, args = calls[-1]
    assert name == "macko_%sspmv" % letter
    scalar = ctypes.c_double if dtype == np.float64 else ctypes.c_float
    assert isinstance(args[2]._obj, scalar) and args[2]._obj.value == 0.5 and args[6]._obj.value == 2.0
    macko.spmv_ex(FakeHandle(), A, vec(9, t), vec(6, t))
    name, args = calls[-1]
    compute = DataType.R_64F if dtype == np.float64 else DataType.R_32F
    assert name == "macko_spmv_ex" and args[5] == args[9] == int(A.datatype) and args[11] == int(compute)
    B = FakeDeviceArray(0, t, shape=(9, 3), strides=(np.dtype(dtype).itemsize, 9 * np.dtype(dtype).itemsize))
    C = FakeDeviceArray(0, t, shape=(6, 3), strides=(np.dtype(dtype).itemsize, 6 * np.dtype(dtype).itemsize))
    macko.spmm(FakeHandle(), A, B, C)
    assert calls[-1][0] == "macko_%sspmm" % letter
    macko.spmm_ex(FakeHandle(), A, B, C)
    name, args = calls[-1]
    assert name == "macko_spmm_ex" and args[6] == args[10] == int(A.datatype) and args[12] == int(compute)


@pytest.mark.parametrize("adt", [np.float16, pytest.param(BF16, marks=needs_bf16)])
def test_float32_vectors_with_a_16_bit_matrix(calls, adt):
    A = host_matrix(adt)
    macko.spmv(FakeHandle(), A, vec(9, "<f4"), vec(6, "<f4"), alpha=2.0)
    name, args = calls[-1]
    assert name == "macko_spmv_ex"
    assert (args[5], args[6].value, args[9], args[10].value, args[11]) == (0, 1, 0, 1, 0)  # 32F x, y, compute
    assert isinstance(args[2]._obj, ctypes.c_float) and args[2]._obj.value == 2.0
    B = FakeDeviceArray(0, "<f4", shape=(9, 2), strides=(4, 40))  # ldb 10
    C = FakeDeviceArray(0, "<f4", shape=(6, 2), strides=(4, 24))
    macko.spmm(FakeHandle(), A, B, C)
    name, args = calls[-1]
    assert name == "macko_spmm_ex" and args[2].value == 2 and (args[6], args[7].value, args[10]) == (0, 10, 0)


@needs_bf16
def test_bf16_vectors(calls):
    A = host_matrix(BF16)
    with pytest.raises(ValueError, match="xtype='bfloat16'"):  # uint16 is not bf16 unless said so
        macko.spmv(FakeHandle(), A, vec(9, "<u2"), vec(6, "<u2"))
    macko.spmv(FakeHandle(), A, vec(9, "<u2"), vec(6, "<i2"), xtype="bfloat16", ytype=macko.bfloat16,
               compute_type=DataType.R_32F)
    name, args = calls[-1]
    assert name == "macko_spmv_ex" and (args[5], args[9], args[11]) == (14, 14, 0)
    with pytest.raises(ValueError, match="computes in float32"):
        macko.spmv(FakeHandle(), A, vec(9, "<f4"), vec(6, "<f4"), compute_type="float64")
    with pytest.raises(ValueError, match="not float16 values"):
        macko.spmv(FakeHandle(), A, vec(9, "<f4"), vec(6, "<f4"), xtype=np.float16)


@pytest.mark.parametrize("adt,x,y", [(np.float16, "<f4", "<f2"), (np.float16, "<f2", "<f4"), (np.float32, "<f2", "<f2"),
                                     (np.float32, "<f8", "<f8"), pytest.param(F64, "<f4", "<f4", marks=needs_f64),
                                     pytest.param(BF16, "<f2", "<f2", marks=needs_bf16),
                                     pytest.param(BF16, "<f4", "<f2", marks=needs_bf16)])
def test_unsupported_combinations_refused_before_the_library(calls, adt, x, y):
    A = host_matrix(adt)
    with pytest.raises(ValueError, match="not a combination macko supports"):
        macko.spmv(FakeHandle(), A, vec(9, x), vec(6, y))
    assert not calls


@needs_f64
def test_float64_device_scalars(calls):
    A = host_matrix(F64)
    h = FakeHandle(PointerMode.DEVICE)
    a64, a32 = FakeDeviceArray(1, "<f8"), FakeDeviceArray(1, "<f4")
    with pytest.raises(ValueError, match="float64 device array"):
        macko.spmv(h, A, vec(9, "<f8"), vec(6, "<f8"), alpha=a32, beta=a64)
    macko.spmv(h, A, vec(9, "<f8"), vec(6, "<f8"), alpha=a64, beta=a64)
    assert calls[-1][0] == "macko_Dspmv"
    with pytest.raises(ValueError, match="float32 device array"):  # a 16-bit matrix computes in float32
        macko.spmv(h, host_matrix(np.float16), vec(9, "<f4"), vec(6, "<f4"), alpha=a64, beta=a32)


def test_supported_table_matches_the_header():
    """macko.SUPPORTED lists the combinations of macko.h's comment above macko_spmv_ex."""
    import os
    import re

    from conftest import REPO

    header = os.path.join(REPO, "include", "macko.h")
    if not os.path.exists(header):
        pytest.skip("no source tree")
    text = open(header).read()
    block = text[text.index("Supported (A, x, y, compute):"):text.index("MACKO_API macko_status_t macko_spmv_ex")]
    names = {"16F": DataType.R_16F, "16BF": DataType.R_16BF, "32F": DataType.R_32F, "64F": DataType.R_64F}
    combos = re.findall(r"(16BF|16F|32F|64F)\s+(16BF|16F|32F|64F)\s+(16BF|16F|32F|64F)\s+(16BF|16F|32F|64F)", block)
    table = {tuple(names[t] for t in c[:3]): names[c[3]] for c in combos}
    assert table == macko.SUPPORTED


def test_new_symbols_exported():
    for name in ("macko_Dspmv", "macko_Dspmm", "macko_Dspmv_strided_batched", "macko_spmv_ex", "macko_spmm_ex"):
        assert macko.has_symbol(name)


def test_torch_custom_op_bf16_without_gpu():
    torch = pytest.importorskip("torch")
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    import macko.torch  # noqa: F401  (registers macko::linear)
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        y = torch.ops.macko.linear(torch.empty(4, 64, dtype=torch.bfloat16), torch.tensor(7), 32)
    assert tuple(y.shape) == (4, 32) and y.dtype == torch.bfloat16
