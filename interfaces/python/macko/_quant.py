"""Host-side helpers of the QUANT kind (lapack_style_docs/FORMAT_QUANT.md): argument normalisation for the quantizing
encoder and the array importer, and the relative Frobenius error of a matrix against the weight it came from."""

import collections
import math
import numbers

import numpy as np

from ._enums import OutlierRule, bf16_to_float32, bfloat16, is_bfloat16

QuantArrays = collections.namedtuple("QuantArrays", "bits words outlier_row_ptr outlier_entries")
QuantArrays.__doc__ = """The host arrays of a QUANT matrix (copies), laid out as FORMAT_QUANT.md says: bits (3),
words (uint64, 16 * ceil(rows/16) * ceil(cols/16) packed tile rows), outlier_row_ptr (int32, rows + 1) and
outlier_entries (uint32: the column in bits 0..15, the fp16 value in bits 16..31). Matrix.from_quant_arrays takes
them back."""


class _Default:
    """The default of `outliers`: a fraction of 0.01, unless `threshold` is given."""

    def __repr__(self):
        return "0.01"


DEFAULT_OUTLIERS = _Default()
_DEFAULT_FRACTION = 0.01


def _real(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a real number or None, not %r" % (name, value))
    return float(value)


def outlier_rule(outliers, threshold):
    """(OutlierRule, param) from from_dense_quantized's outliers= and threshold= (the library checks the ranges)."""
    if threshold is not None:
        if outliers is not DEFAULT_OUTLIERS and outliers is not None:
            raise ValueError("give outliers= (a fraction) or threshold= (an error bound), not both")
        return OutlierRule.THRESHOLD, _real(threshold, "threshold")
    if outliers is DEFAULT_OUTLIERS:
        return OutlierRule.FRACTION, _DEFAULT_FRACTION
    if outliers is None:
        return OutlierRule.NONE, 0.0
    return OutlierRule.FRACTION, _real(outliers, "outliers")


def c_int_arg(value, name):
    """value as a C int (an integer in int32's range; anything else would be truncated by ctypes)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an integer, not %r" % (name, value))
    v = int(value)
    if not -2**31 <= v < 2**31:
        raise ValueError("%s = %d is outside the range of a C int" % (name, v))
    return v


def c_int64_arg(value, name):
    """value as a C int64_t (an integer in its range)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an integer, not %r" % (name, value))
    v = int(value)
    if not -2**63 <= v < 2**63:
        raise ValueError("%s = %d is outside the range of int64" % (name, v))
    return v


def _integers(a, name, itemsize, want):
    """a (numpy array, CPU torch tensor or sequence) as a contiguous 1-D array of dtype `want`: integers of the same
    size are reinterpreted (an SpQR int64 word array as uint64, int32 entries as uint32), other integer arrays
    converted when every value fits."""
    mod = type(a).__module__ or ""
    if mod.startswith("torch") and hasattr(a, "detach"):
        a = a.detach().cpu().numpy()
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(0, want)
    if a.dtype.kind not in "iu":
        raise ValueError("%s must hold integers (%s), not %s" % (name, np.dtype(want).name, a.dtype))
    a = np.ascontiguousarray(a).reshape(-1)
    if a.dtype.itemsize == itemsize:
        return a.view(want)
    info = np.iinfo(want)
    if a.min() < info.min or a.max() > info.max:
        raise ValueError("%s holds values outside the range of %s" % (name, np.dtype(want).name))
    return a.astype(want)


def quant_inputs(rows, cols, words, outlier_row_ptr, outlier_entries):
    """The three arrays of macko_mat_create_quant_host, normalised and checked for length (the C routine takes no
    lengths: it reads as many elements as rows and cols imply)."""
    words = _integers(words, "words", 8, np.uint64)
    row_ptr = _integers(outlier_row_ptr, "outlier_row_ptr", 4, np.int32)
    entries = _integers(outlier_entries, "outlier_entries", 4, np.uint32)
    if rows >= 0 and cols >= 0:
        need = 16 * (-(-rows // 16)) * (-(-cols // 16))
        if words.shape[0] != need:
            raise ValueError("words has %d elements; a %dx%d QUANT matrix has 16 * ceil(rows/16) * ceil(cols/16) = "
                             "%d" % (words.shape[0], rows, cols, need))
        if row_ptr.shape[0] != rows + 1:
            raise ValueError("outlier_row_ptr has %d elements, not rows + 1 = %d" % (row_ptr.shape[0], rows + 1))
    return words, row_ptr, entries


def _as_float64(a):
    """Host values of any real type as float64 (bfloat16 bit patterns widened exactly)."""
    a = np.asarray(a)
    if is_bfloat16(a.dtype):
        a = bf16_to_float32(a)
    return a.astype(np.float64)


def host_values(a):
    """a (numpy array, sequence, or torch tensor on any device, brought to the host) as a numpy array; bfloat16 as
    macko.bfloat16 bit patterns."""
    mod = type(a).__module__ or ""
    if mod.startswith("torch") and hasattr(a, "detach"):
        t = a.detach().cpu()
        if is_bfloat16(t.dtype):
            import torch

            return t.view(torch.int16).numpy().view(bfloat16)
        return t.numpy()
    a = np.asarray(a)
    return a.view(bfloat16) if is_bfloat16(a.dtype) else a


def quantization_error(original, matrix):
    """The relative Frobenius error ||original - A||_F / ||original||_F in float64, A the matrix's dense export
    (Matrix.to_dense(): for a QUANT matrix the fp16 values of W + O). original: a 2-D array of the matrix's shape
    (numpy, or a torch tensor on any device; bfloat16 too). 0.0 when both are zero, inf when only the original is.
    Needs the matrix's host copy. Works for any kind (for a MACKO matrix it measures what pruning and rounding
    dropped)."""
    a = host_values(original)
    if a.dtype.kind not in "fiub" and not is_bfloat16(a.dtype):
        raise ValueError("original must hold real numbers, not %s" % a.dtype)
    rows, cols = matrix.shape
    if a.shape != (rows, cols):
        raise ValueError("original has shape %s, the matrix is %dx%d" % (tuple(a.shape), rows, cols))
    d = matrix.to_dense()
    step = max(1, (1 << 20) // max(1, cols))  # a few MiB of float64 at a time
    # Scaled by the largest magnitude so that the squares neither overflow nor underflow.
    scale = 0.0
    for r in range(0, rows, step):
        o, e = _as_float64(a[r:r + step]), _as_float64(d[r:r + step])
        with np.errstate(invalid="ignore"):
            scale = max(scale, float(np.max(np.abs(o), initial=0.0)), float(np.max(np.abs(e), initial=0.0)))
    if not math.isfinite(scale):
        return math.nan
    if scale == 0.0:
        return 0.0
    num = den = 0.0
    for r in range(0, rows, step):
        o, e = _as_float64(a[r:r + step]) / scale, _as_float64(d[r:r + step]) / scale
        num += float(np.sum(np.square(o - e)))
        den += float(np.sum(np.square(o)))
    if den == 0.0:
        return math.inf
    return math.sqrt(num) / math.sqrt(den)


# ---------------------------------------------------------------- SpQR checkpoints
def _weight_bit(k):
    """Bit of weight k's code in a QUANT word (FORMAT_QUANT.md's table)."""
    p = k // 2
    return (3 * p if p < 5 else 32 + 3 * (p - 5)) + 16 * (k % 2)


_U = np.uint64


def spqr_arrays(rows, cols, dense_weights, row_offsets, col_vals):
    """The QUANT arrays of an SpQR matrix (3 bits, beta1 = beta2 = 16; E. Crncevic's inference kernel, the
    ``inference_lib`` of SpQR), converted as FORMAT_QUANT.md, "Importing an SpQR checkpoint", says -> QuantArrays.

    rows, cols: SpQR's m and n. dense_weights: m's and n's ceil(/16) tiles of 16 int64 words (one per tile row: the
    scale and zero codes in bits 0..5, weight k's code in bits 6 + 3k .. 8 + 3k, a byte of the tile's second-order
    statistics in bits 54..61). row_offsets and col_vals (int32: the column in the low 16 bits, the fp16 value in
    the high 16 bits): CSR when row_offsets has m + 1 elements, PTCSR (a band's outliers interleaved row by row,
    padded to its longest row; row_offsets of ceil(m/16) + 1 slot counts) when it has ceil(m/16) + 1. Outliers of
    value +-0 (PTCSR's padding) are dropped and each row's columns sorted. The codes of rows past m and columns past n
    are set to 0 (they take no part in the product). SpQR's packer writes no statistics bytes into the tile rows past
    m, so when m is not a multiple of 16 the last band's statistics are those SpQR's own dequantization reads. The
    input permutation (in_perm) is not part of the matrix: permute the activations, x'[k] = x[in_perm[k]]."""
    rows, cols = c_int64_arg(rows, "rows"), c_int64_arg(cols, "cols")
    if rows < 0 or cols < 0:
        raise ValueError("rows and cols must be at least 0, not %d and %d" % (rows, cols))
    bands, tcols = -(-rows // 16), -(-cols // 16)
    dw = _integers(dense_weights, "dense_weights", 8, np.uint64)
    if dw.shape[0] != bands * tcols * 16:
        raise ValueError("dense_weights has %d elements; a %dx%d SpQR matrix has 16 * ceil(m/16) * ceil(n/16) = %d"
                         % (dw.shape[0], rows, cols, bands * tcols * 16))
    w = dw.reshape(bands, tcols, 16)
    # The tile statistics: byte j of S_spqr in tile rows 2j and 2j + 1 (OR: rows past m carry none).
    s_spqr = np.zeros((bands, tcols), _U)
    for i in range(16):
        s_spqr |= ((w[:, :, i] >> _U(54)) & _U(0xFF)) << _U(8 * (i // 2))
    mask16 = _U(0xFFFF)
    S = (s_spqr & mask16) | ((s_spqr >> _U(32)) & mask16) << _U(16) | ((s_spqr >> _U(16)) & mask16) << _U(32) | \
        (s_spqr >> _U(48)) << _U(48)
    out = (w & _U(7)) << _U(41) | ((w >> _U(3)) & _U(7)) << _U(57)
    for k in range(16):
        out |= ((w >> _U(6 + 3 * k)) & _U(7)) << _U(_weight_bit(k))
    if cols % 16:
        for k in range(cols % 16, 16):
            out[:, -1, :] &= ~(_U(7) << _U(_weight_bit(k)))
    if rows % 16:
        out[-1, :, rows % 16:] = 0
    for i in range(16):
        out[:, :, i] |= ((S >> _U(4 * i)) & _U(0xF)) << _U(44)
    words = out.reshape(-1)

    ro = _integers(row_offsets, "row_offsets", 4, np.int32).astype(np.int64)
    cv = _integers(col_vals, "col_vals", 4, np.uint32)
    if ro.shape[0] == 0 or ro[0] != 0 or np.any(np.diff(ro) < 0) or ro[-1] != cv.shape[0]:
        raise ValueError("row_offsets must rise from 0 to the number of col_vals (%d)" % cv.shape[0])
    if ro.shape[0] == rows + 1:
        row_of = np.repeat(np.arange(rows, dtype=np.int64), np.diff(ro))
    elif ro.shape[0] == bands + 1:
        counts = np.diff(ro)
        if np.any(counts % 16):
            raise ValueError("row_offsets (PTCSR) must count a multiple of 16 slots per band of 16 rows")
        band_of = np.repeat(np.arange(bands, dtype=np.int64), counts)
        slot = np.arange(cv.shape[0], dtype=np.int64) - ro[:-1][band_of]
        row_of = 16 * band_of + slot % 16
    else:
        raise ValueError("row_offsets has %d elements: neither m + 1 = %d (CSR) nor ceil(m/16) + 1 = %d (PTCSR)"
                         % (ro.shape[0], rows + 1, bands + 1))
    keep = ((cv >> np.uint32(16)) & np.uint32(0x7FFF)) != 0
    cv, row_of = cv[keep], row_of[keep]
    if np.any(row_of >= rows):
        raise ValueError("col_vals holds a nonzero outlier in a row past m = %d" % rows)
    order = np.lexsort((cv & np.uint32(0xFFFF), row_of))
    cv, row_of = cv[order], row_of[order]
    row_ptr = np.zeros(rows + 1, np.int64)
    np.cumsum(np.bincount(row_of, minlength=rows), out=row_ptr[1:])
    return QuantArrays(3, words, row_ptr.astype(np.int32), np.ascontiguousarray(cv))
