"""QUANT matrices on the host (numpy and libmacko, no GPU): the quantizing encoder, the array importer and exporter,
the dense export against a numpy decode of FORMAT_QUANT.md, the quantization error, bad input, copies and pickles."""

import copy
import math
import os
import pickle
import re

import numpy as np
import pytest

import macko
from macko import Kind, MackoError, Matrix, OutlierRule, Status
from macko import compute as mc

from conftest import REPO
from quant_ref import (decode, decode_o, decode_w, entry, pack_spqr, pack_words, ptcsr, random_parts, random_quant,
                       spqr_decode, stats_word)

SHAPES = [(16, 16), (50, 70), (17, 33), (1, 1), (33, 1), (1, 200), (40, 16 * 4 + 15)]


def gaussian(rows, cols, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(dtype)


def rel_frobenius(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.linalg.norm(a - b) / np.linalg.norm(a)


def worked_example():
    """FORMAT_QUANT.md's worked example: one tile, statistics (0.25, -2, 0.5, 0), row 2 with sq = 2, zq = 5 and
    codes k mod 8; the other rows have every code 0."""
    codes = np.zeros((16, 16), int)
    codes[2] = np.arange(16) % 8
    sq, zq = np.zeros((16, 1), int), np.zeros((16, 1), int)
    sq[2], zq[2] = 2, 5
    stats = np.array([[[0.25, -2.0, 0.5, 0.0]]], np.float16)
    return pack_words(16, 16, codes, sq, zq, stats), stats


# ---------------------------------------------------------------- enumerations
def test_enums_match_header():
    text = open(os.path.join(REPO, "include", "macko.h")).read()
    kinds = dict(re.findall(r"MACKO_KIND_(\w+) = (\d+)", text))
    rules = dict(re.findall(r"MACKO_OUTLIERS_(\w+) = (\d+)", text))
    assert kinds and rules
    assert {k: int(v) for k, v in kinds.items()} == {k.name: k.value for k in Kind}
    assert {k: int(v) for k, v in rules.items()} == {r.name: r.value for r in OutlierRule}


def test_kind_of_each_matrix():
    M = Matrix.from_dense(np.eye(4, dtype=np.float16))
    Q = Matrix.from_dense_quantized(np.eye(4))
    assert M.kind == Kind.MACKO and Q.kind == Kind.QUANT and isinstance(Q.kind, Kind)
    assert Q.datatype == macko.DataType.R_16F and Q.dtype == np.float16
    assert M.quantization_error is None
    assert repr(Q) == "<macko.Matrix 4x4 QUANT float16 nnz=%d outliers=%d>" % (Q.nnz, Q.storage.entries)
    Q.close()
    with pytest.raises(ValueError, match="closed"):
        Q.kind


# ---------------------------------------------------------------- the format, bit for bit
def test_worked_example_word():
    words, stats = worked_example()
    assert int(stats_word(stats)[0, 0]) == 0x0000_3800_C000_3400
    assert int(words[2]) == 0x0BEB_45A2_1F59_0D10
    A = Matrix.from_quant_arrays(16, 16, words, np.zeros(17, np.int32), [])
    want = np.tile(np.arange(8) - 2.5, 2)
    np.testing.assert_array_equal(A.to_dense()[2], want)
    np.testing.assert_array_equal(decode_w(16, 16, words)[2], want)
    assert A.nnz == 16 + int(np.count_nonzero(A.to_dense()[np.arange(16) != 2]))


@pytest.mark.parametrize("shape", SHAPES)
def test_import_export_round_trip(shape):
    rows, cols = shape
    words, row_ptr, entries = random_quant(rows, cols, seed=rows * 1000 + cols, outlier_rows=(rows // 2,))
    A = Matrix.from_quant_arrays(rows, cols, words, row_ptr, entries)
    assert A.kind == Kind.QUANT and A.shape == shape
    q = A.quant_arrays()
    assert q.bits == 3
    assert q.words.dtype == np.uint64 and q.outlier_row_ptr.dtype == np.int32 and q.outlier_entries.dtype == np.uint32
    np.testing.assert_array_equal(q.words, words)
    np.testing.assert_array_equal(q.outlier_row_ptr, row_ptr)
    np.testing.assert_array_equal(q.outlier_entries, entries)
    # the dense export against the numpy decode, bit for bit (fp16 after every step; W + O rounded once)
    want = decode(rows, cols, words, row_ptr, entries)
    got = A.to_dense()
    assert got.dtype == np.float16 and got.flags.c_contiguous
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(A.to_dense("F"), want)
    assert A.to_dense("F").flags.f_contiguous
    np.testing.assert_array_equal(A.to_dense(dtype=np.float32), want.astype(np.float32))
    assert A.nnz == np.count_nonzero(want)
    st = A.storage
    assert st.entries == st.entries_padded == entries.shape[0]
    assert st.bytes == words.nbytes + row_ptr.nbytes + entries.nbytes
    assert st.effective_density == pytest.approx(st.bytes / (rows * cols * 2))
    # the copies are the caller's: changing them leaves the matrix alone
    q.words[:] = 0
    np.testing.assert_array_equal(A.quant_arrays().words, words)
    # and they go back in
    B = Matrix.from_quant_arrays(rows, cols, *A.quant_arrays()[1:], bits=A.quant_arrays().bits)
    np.testing.assert_array_equal(B.to_dense(), got)


def test_import_reinterprets_spqr_dtypes():
    """An SpQR checkpoint holds int64 words and int32 entries: same-size integers are reinterpreted; row pointers of
    any integer type that fit are converted; torch tensors and lists go in too."""
    rows, cols = 40, 50
    words, row_ptr, entries = random_quant(rows, cols, seed=5)
    A = Matrix.from_quant_arrays(rows, cols, words, row_ptr, entries)
    B = Matrix.from_quant_arrays(rows, cols, words.view(np.int64).reshape(-1, 16), row_ptr.astype(np.int64),
                                 entries.view(np.int32))
    C = Matrix.from_quant_arrays(rows, cols, list(words), list(row_ptr), list(entries))
    for M in (B, C):
        np.testing.assert_array_equal(M.quant_arrays().words, words)
        np.testing.assert_array_equal(M.to_dense(), A.to_dense())
    torch = pytest.importorskip("torch")
    T = Matrix.from_quant_arrays(rows, cols, torch.from_numpy(words.view(np.int64)), torch.from_numpy(row_ptr),
                                 torch.from_numpy(entries.view(np.int32)))
    np.testing.assert_array_equal(T.quant_arrays().outlier_entries, entries)


@pytest.mark.parametrize("shape", [(32, 50), (16, 16), (48, 7)])
def test_spqr_import(shape):
    """An SpQR matrix (dense_weights, row_offsets, col_vals) converts to the words pack_words makes of the same
    codes and statistics, bit for bit, in CSR and PTCSR; its decode is SpQR's own up to fp16 rounding."""
    rows, cols = shape
    parts = random_parts(rows, cols, np.random.default_rng(rows + cols))
    _, row_ptr, entries = random_quant(rows, cols, seed=cols, outlier_rows=(1,))
    dw = pack_spqr(rows, cols, *parts).view(np.int64)  # SpQR keeps them as int64
    for ro, cv in ((row_ptr, entries.view(np.int32)), ptcsr(rows, row_ptr, entries)):
        q = macko.spqr_arrays(rows, cols, dw, ro, cv)
        assert q.bits == 3
        np.testing.assert_array_equal(q.words, pack_words(rows, cols, *parts))
        np.testing.assert_array_equal(q.outlier_row_ptr, row_ptr)
        np.testing.assert_array_equal(q.outlier_entries, entries)
        A = Matrix.from_spqr(rows, cols, dw, ro, cv)
        np.testing.assert_array_equal(A.to_dense(), decode(rows, cols, q.words, row_ptr, entries))
    # the same numbers: the decode agrees with SpQR's scale * (q - zero) up to a few fp16 roundings
    w_ours = decode_w(rows, cols, q.words).astype(np.float64)
    w_spqr = spqr_decode(rows, cols, *parts)
    assert np.max(np.abs(w_ours - w_spqr)) <= 4e-3 * np.max(np.abs(w_spqr))
    assert np.max(np.abs(w_ours - w_spqr)) > 0 or rows * cols < 300  # not one formula twice


def test_spqr_import_padding_and_errors():
    rows, cols = 40, 20  # a last band of 8 rows and a last tile column of 4 columns
    parts = random_parts(rows, cols, np.random.default_rng(3))
    dw = pack_spqr(rows, cols, *parts)
    ro, cv = np.zeros(rows + 1, np.int32), np.zeros(0, np.int32)
    q = macko.spqr_arrays(rows, cols, dw, ro, cv)
    full = pack_words(rows, cols, *parts)
    tcols = 2
    np.testing.assert_array_equal(q.words[:2 * tcols * 16], full[:2 * tcols * 16])  # the two full bands
    junk = dw.copy().reshape(3, tcols, 16)
    junk[:, -1, :] |= np.uint64(7) << np.uint64(6 + 3 * 15)  # a code in column 16 + 15, past cols
    junk[-1, :, 12] |= np.uint64(0x3F)                        # sq and zq of row 44, past rows
    np.testing.assert_array_equal(macko.spqr_arrays(rows, cols, junk.reshape(-1), ro, cv).words, q.words)
    # zero outliers (PTCSR's padding) are dropped, columns sorted within a row
    cv2 = np.array([entry(5, 1.0), entry(3, -2.0), entry(9, 0.0)], np.uint32).view(np.int32)
    ro2 = np.zeros(rows + 1, np.int32)
    ro2[1:] = 3
    q2 = macko.spqr_arrays(rows, cols, dw, ro2, cv2)
    np.testing.assert_array_equal(q2.outlier_entries, [entry(3, -2.0), entry(5, 1.0)])
    np.testing.assert_array_equal(q2.outlier_row_ptr, np.r_[0, np.full(rows, 2)])
    with pytest.raises(ValueError, match="dense_weights has"):
        macko.spqr_arrays(rows, cols, dw[:-1], ro, cv)
    with pytest.raises(ValueError, match="neither"):
        macko.spqr_arrays(rows, cols, dw, ro[:-1], cv)
    with pytest.raises(ValueError, match="multiple of 16"):
        macko.spqr_arrays(rows, cols, dw, np.array([0, 3, 3, 3], np.int32), cv2)
    with pytest.raises(ValueError, match="rise from 0"):
        macko.spqr_arrays(rows, cols, dw, ro2, cv2[:2])
    with pytest.raises(ValueError, match="past m"):  # a PTCSR slot of row 47 (the last band has rows 32..39)
        macko.spqr_arrays(rows, cols, dw, np.array([0, 0, 0, 16], np.int32),
                          np.r_[np.zeros(15, np.uint32), entry(1, 1.0)].view(np.int32))


def test_empty_shapes():
    for rows, cols in ((0, 0), (0, 5), (5, 0)):
        A = Matrix.from_quant_arrays(rows, cols, np.zeros(0, np.uint64), np.zeros(rows + 1, np.int32), [])
        assert A.shape == (rows, cols) and A.nnz == 0 and A.to_dense().shape == (rows, cols)
        q = A.quant_arrays()
        assert q.words.shape == (0,) and q.outlier_row_ptr.shape == (rows + 1,)
        D = Matrix.from_dense_quantized(np.zeros((rows, cols), np.float32))
        assert D.shape == (rows, cols) and D.quantization_error == 0.0


# ---------------------------------------------------------------- the quantizing encoder
@pytest.mark.parametrize("outliers,threshold", [(None, None), (0.01, None), (0.1, None), (None, 0.3)])
def test_dense_quantized_against_the_decode(outliers, threshold):
    rows, cols = 45, 83
    a = gaussian(rows, cols, seed=11)
    A = Matrix.from_dense_quantized(a, outliers=outliers, threshold=threshold)
    q = A.quant_arrays()
    want = decode(rows, cols, q.words, q.outlier_row_ptr, q.outlier_entries)
    np.testing.assert_array_equal(A.to_dense().view(np.uint16), want.view(np.uint16))
    assert A.quantization_error == pytest.approx(rel_frobenius(a, want), rel=1e-12)
    assert A.quantization_error == macko.quantization_error(a, A)
    # the outliers are where pass 1 (the encoding without outliers) erred most: e = |v - w| in double, rounded to
    # fp32; FRACTION: among the K largest e (ties: the earlier position), THRESHOLD: e > threshold
    n = q.outlier_entries.shape[0]
    at = np.flatnonzero(decode_o(rows, cols, q.outlier_row_ptr, q.outlier_entries).reshape(-1))
    assert at.shape[0] == n
    w1 = Matrix.from_dense_quantized(a, outliers=None).to_dense().astype(np.float64)
    e = np.abs(a.astype(np.float64) - w1).astype(np.float32).reshape(-1)
    if outliers is None and threshold is None:
        assert n == 0
    elif threshold is None:
        k = round(outliers * rows * cols)
        top = np.argsort(-e, kind="stable")[:k]
        assert 0.9 * k <= n <= k and set(at) <= set(top)
    else:
        picked = np.flatnonzero(e > threshold)
        assert 0.9 * picked.shape[0] <= n and set(at) <= set(picked)
    # with outliers, the decode without them is worse at their positions
    if n:
        w_only = decode_w(rows, cols, q.words).astype(np.float64)
        assert rel_frobenius(a, w_only) > A.quantization_error


def test_quantization_error_decreases_with_more_outliers():
    a = gaussian(64, 96, seed=12)
    by_fraction = [Matrix.from_dense_quantized(a, outliers=f).quantization_error
                   for f in (None, 0.01, 0.05, 0.2, 1.0)]
    assert all(x > y for x, y in zip(by_fraction, by_fraction[1:])), by_fraction
    assert 0.12 < by_fraction[0] < 0.16  # FORMAT_QUANT.md: about 0.14 on Gaussian weights without outliers
    assert by_fraction[-1] < 1e-3        # every weight an outlier: only fp16 rounding is left
    by_threshold = [Matrix.from_dense_quantized(a, threshold=t).quantization_error for t in (1.0, 0.3, 0.1, 0.0)]
    assert all(x > y for x, y in zip(by_threshold, by_threshold[1:])), by_threshold
    assert by_threshold[0] <= by_fraction[0]


def test_outlier_counts():
    a = gaussian(64, 96, seed=13)
    counts = [Matrix.from_dense_quantized(a, outliers=f).storage.entries for f in (0.0, 0.01, 0.05)]
    assert counts[0] == 0
    assert 0 < counts[1] <= round(0.01 * a.size) and counts[1] < counts[2] <= round(0.05 * a.size)
    assert Matrix.from_dense_quantized(a).storage.entries == counts[1]  # the default is 0.01
    big = Matrix.from_dense_quantized(a, threshold=1e9)
    assert big.storage.entries == 0 and big.quantization_error == Matrix.from_dense_quantized(
        a, outliers=None).quantization_error


def test_same_matrix_from_every_input():
    """FORMAT_QUANT.md: the same values give the same arrays whatever the type, order and leading dimension."""
    a16 = gaussian(37, 50, seed=14, dtype=np.float16)
    ref = Matrix.from_dense_quantized(a16).quant_arrays()
    big = np.zeros((37, 64), np.float32)
    big[:, :50] = a16
    inputs = [a16.astype(np.float32), a16.astype(np.float64), np.asfortranarray(a16), big[:, :50],
              np.ascontiguousarray(a16[::-1])[::-1]]
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None:
        inputs += [torch.from_numpy(a16.astype(np.float32)), torch.from_numpy(a16).t().contiguous().t()]
    for x in inputs:
        q = Matrix.from_dense_quantized(x).quant_arrays()
        for got, want in zip(q, ref):
            np.testing.assert_array_equal(got, want)
    if torch is not None:
        bf = torch.from_numpy(a16.astype(np.float32)).to(torch.bfloat16)
        A = Matrix.from_dense_quantized(bf)
        assert A.quantization_error == macko.quantization_error(bf, A)
        np.testing.assert_array_equal(A.quant_arrays().words,
                                      Matrix.from_dense_quantized(bf.float().numpy()).quant_arrays().words)


def test_equal_and_zero_tiles_decode_exactly():
    a = np.zeros((32, 48), np.float32)
    a[:16, :16] = 0.875           # c and c/7 = 0.125 are fp16 numbers
    a[16:, 16:32] = -3.5
    A = Matrix.from_dense_quantized(a, outliers=None)
    np.testing.assert_array_equal(A.to_dense(), a)
    assert A.quantization_error == 0.0 and A.nnz == np.count_nonzero(a)


# ---------------------------------------------------------------- bad input
def test_dense_quantized_bad_input():
    a = gaussian(20, 30, seed=15)

    def fails(status, position, **kw):
        with pytest.raises(MackoError) as e:
            Matrix.from_dense_quantized(kw.pop("x", a), **kw)
        assert (e.value.status, e.value.position) == (status, position), e.value
        assert e.value.routine == "macko_mat_create_quant_dense_host"
        return e.value

    fails(Status.NOT_SUPPORTED, 8, bits=4)
    fails(Status.INVALID_VALUE, 10, outliers=1.5)
    fails(Status.INVALID_VALUE, 10, outliers=-0.1)
    fails(Status.INVALID_VALUE, 10, outliers=math.nan)
    fails(Status.INVALID_VALUE, 10, outliers=None, threshold=-1.0)
    fails(Status.INVALID_VALUE, 10, outliers=None, threshold=math.inf)
    bad = a.copy()
    bad[7, 25] = np.inf
    assert "(7, 25)" in fails(Status.INVALID_VALUE, 5, x=bad).message
    bad[7, 25] = 70000.0
    fails(Status.INVALID_VALUE, 5, x=bad)
    fails(Status.NOT_SUPPORTED, 3, x=np.zeros((1, 65537), np.float16))
    macko.version()  # a success clears the thread's last error
    with pytest.raises(ValueError, match="not both"):
        Matrix.from_dense_quantized(a, outliers=0.01, threshold=0.1)
    with pytest.raises(TypeError, match="outliers"):
        Matrix.from_dense_quantized(a, outliers=True)
    with pytest.raises(TypeError, match="threshold"):
        Matrix.from_dense_quantized(a, threshold="0.1")
    with pytest.raises(TypeError, match="bits"):
        Matrix.from_dense_quantized(a, bits=3.0)
    with pytest.raises(ValueError, match="bits"):
        Matrix.from_dense_quantized(a, bits=2**32 + 3)  # not truncated to 3 by ctypes
    with pytest.raises(ValueError, match="2-D"):
        Matrix.from_dense_quantized(a[0])
    with pytest.raises(ValueError):
        Matrix.from_dense_quantized(np.ones((4, 4), np.int32))
    assert macko.last_error() == (0, "")  # the wrapper's own refusals never reached the library


def test_import_bad_input():
    rows, cols = 20, 33
    words, row_ptr, entries = random_quant(rows, cols, seed=16)

    def fails(position, status=Status.INVALID_VALUE, w=words, rp=row_ptr, en=entries, **kw):
        with pytest.raises(MackoError) as e:
            Matrix.from_quant_arrays(kw.pop("rows", rows), kw.pop("cols", cols), w, rp, en, **kw)
        assert (e.value.status, e.value.position) == (status, position), e.value
        assert e.value.routine == "macko_mat_create_quant_host"
        return e.value

    fails(4, Status.NOT_SUPPORTED, bits=2)
    fails(2, rows=-1)
    w = words.copy()
    w[80] |= np.uint64(1) << np.uint64(15)  # a bit that must be zero
    assert "word 80" in fails(5, w=w).message
    w = words.copy()
    w[34] |= np.uint64(5) << np.uint64(16)  # weight 1 of tile row 2 of tile column 2: column 33, past cols
    fails(5, w=w)
    rp = row_ptr.copy()
    rp[0] = 1
    fails(7, rp=rp)
    en = entries.copy()
    en[0] = entry(cols, 1.0)  # a column past cols
    fails(8, en=en)
    en[0] = entry(0, 0.0)     # a zero outlier
    fails(8, en=en)
    with pytest.raises(ValueError, match="words has 95 elements"):
        Matrix.from_quant_arrays(rows, cols, words[:-1], row_ptr, entries)
    with pytest.raises(ValueError, match="rows \\+ 1 = 21"):
        Matrix.from_quant_arrays(rows, cols, words, row_ptr[:-1], entries)
    with pytest.raises(ValueError, match="integers"):
        Matrix.from_quant_arrays(rows, cols, words.astype(np.float64), row_ptr, entries)
    with pytest.raises(ValueError, match="range of int32"):
        Matrix.from_quant_arrays(rows, cols, words, row_ptr.astype(np.int64) + 2**40, entries)
    with pytest.raises(TypeError, match="rows"):
        Matrix.from_quant_arrays(20.0, cols, words, row_ptr, entries)


def test_macko_only_methods_refuse_a_quant_matrix():
    A = Matrix.from_dense_quantized(gaussian(20, 30, seed=17))
    for call, hint in ((A.arrays, "quant_arrays"), (A.to_csr, "to_dense"),
                       (lambda: A.astype(np.float32), "float16 values only")):
        with pytest.raises(MackoError, match=hint) as e:
            call()
        assert e.value.status == Status.NOT_SUPPORTED and e.value.status_name == "MACKO_STATUS_NOT_SUPPORTED"
    B = A.astype(np.float16)  # its own type: a copy
    assert B.kind == Kind.QUANT and B._ptr != A._ptr
    np.testing.assert_array_equal(B.to_dense(), A.to_dense())
    M = Matrix.from_dense(np.eye(3, dtype=np.float16))
    with pytest.raises(MackoError) as e:
        M.quant_arrays()
    assert (e.value.status, e.value.position) == (Status.NOT_SUPPORTED, 1)
    assert "MACKO_KIND_QUANT matrices only" in e.value.message


# ---------------------------------------------------------------- the quantization error
def test_quantization_error_function():
    a = gaussian(30, 40, seed=18, dtype=np.float64)
    A = Matrix.from_dense_quantized(a)
    assert macko.quantization_error(a, A) == pytest.approx(rel_frobenius(a, A.to_dense()), rel=1e-12)
    assert macko.quantization_error(a * 1e-30, Matrix.from_dense_quantized(a * 1e-30)) == pytest.approx(1.0)
    M = Matrix.from_dense(a.astype(np.float32))  # any kind: here only the rounding to float32
    assert 0 < macko.quantization_error(a, M) < 1e-7
    assert macko.quantization_error(np.zeros((2, 3)), Matrix.from_dense(np.zeros((2, 3), np.float16))) == 0.0
    assert macko.quantization_error(np.zeros((2, 3)), Matrix.from_dense(np.ones((2, 3), np.float16))) == math.inf
    with pytest.raises(ValueError, match="shape"):
        macko.quantization_error(a[:, :-1], A)


# ---------------------------------------------------------------- copies and pickles
def test_copies_and_pickles():
    a = gaussian(50, 70, seed=19)
    A = Matrix.from_dense_quantized(a, outliers=0.05)
    want = A.to_dense()
    copies = [pickle.loads(pickle.dumps(A, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    copies += [A.copy(), copy.copy(A), copy.deepcopy(A)]
    imported = Matrix.from_quant_arrays(50, 70, *A.quant_arrays()[1:])
    assert imported.quantization_error is None
    copies.append(pickle.loads(pickle.dumps(imported)))
    A.close()
    for C in copies:
        assert C.kind == Kind.QUANT and not C.on_device and C.has_host_copy
        np.testing.assert_array_equal(C.to_dense(), want)
    assert all(C.quantization_error == copies[0].quantization_error for C in copies[:-1])
    assert copies[0].quantization_error == pytest.approx(rel_frobenius(a, want))
    assert copies[-1].quantization_error is None
    state = copies[0].__getstate__()
    assert sorted(state) == ["quant", "quantization_error"]
    state["quant"]["words"] = state["quant"]["words"].copy()
    state["quant"]["words"][0] |= np.uint64(1) << np.uint64(63)  # a bit that must be zero
    with pytest.raises(MackoError) as e:
        Matrix.__new__(Matrix).__setstate__(state)
    assert (e.value.status, e.value.position) == (Status.INVALID_VALUE, 5)


def test_serialize_save_load(quant_serialize, tmp_path):
    """QUANT matrices in the library's file format (v2): needs the serialization of QUANT matrices."""
    A = Matrix.from_dense_quantized(gaussian(40, 50, seed=20), outliers=0.02)
    B = Matrix.deserialize(A.serialize())
    A.save(tmp_path / "q.macko")
    C = Matrix.load(tmp_path / "q.macko")
    for M in (B, C):
        assert M.kind == Kind.QUANT and M.quantization_error is None
        for got, want in zip(M.quant_arrays(), A.quant_arrays()):
            np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- compute: the wrapper's checks, no GPU
class FakeDeviceArray:
    def __init__(self, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0x1000, False),
                                         "strides": strides, "version": 3}


class FakeHandle:
    pointer_mode = macko.PointerMode.HOST
    stream = None


def test_compute_takes_float16_vectors_only(monkeypatch):
    A = Matrix.from_dense_quantized(gaussian(6, 9, seed=21))
    for typestr in ("<f4", "<f8"):
        with pytest.raises(ValueError, match="QUANT matrix: it computes with float16 x and y only"):
            macko.spmv(FakeHandle(), A, FakeDeviceArray((9,), typestr), FakeDeviceArray((6,), typestr))
        with pytest.raises(ValueError, match="float16 B and C only"):
            macko.spmm_ex(FakeHandle(), A, FakeDeviceArray((9, 2), typestr, (int(typestr[-1]), 9 * int(typestr[-1]))),
                          FakeDeviceArray((6, 2), typestr, (int(typestr[-1]), 6 * int(typestr[-1]))))
    seen, real = [], mc._lib.call
    monkeypatch.setattr(mc._lib, "call", lambda name, *args: seen.append(name) if "spm" in name else real(name, *args))
    macko.spmv(FakeHandle(), A, FakeDeviceArray((9,), "<f2"), FakeDeviceArray((6,), "<f2"))
    macko.spmm(FakeHandle(), A, FakeDeviceArray((9, 3), "<f2", (2, 18)), FakeDeviceArray((6, 3), "<f2", (2, 12)))
    macko.spmv_ex(FakeHandle(), A, FakeDeviceArray((9,), "<f2"), FakeDeviceArray((6,), "<f2"))
    assert seen == ["macko_Hspmv", "macko_Hspmm", "macko_spmv_ex"]
