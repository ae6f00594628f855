"""A numpy model of lapack_style_docs/FORMAT_QUANT.md for the tests: packing tile rows into words, and decoding them
with the page's fp16 arithmetic (every step computed exactly in float64, then rounded once to fp16)."""

import numpy as np


def _base(p):
    return 3 * p if p < 5 else 32 + 3 * (p - 5)


# bit of weight k's code in its word (the page's table)
WEIGHT_BIT = [_base(k // 2) + 16 * (k % 2) for k in range(16)]
SQ_BIT, PIECE_BIT, ZQ_BIT = 41, 44, 57


def f16(x):
    """float64 values (exact results of one operation on fp16 numbers) rounded once to fp16."""
    return np.asarray(x, np.float64).astype(np.float16)


def tiles(rows, cols):
    return -(-rows // 16), -(-cols // 16)


def stats_word(stats):
    """(..., 4) fp16 statistics s_s, z_s, s_z, z_z -> (...) uint64 S = s_s | z_s << 16 | s_z << 32 | z_z << 48."""
    b = np.asarray(stats, np.float16).view(np.uint16).astype(np.uint64)
    return b[..., 0] | b[..., 1] << np.uint64(16) | b[..., 2] << np.uint64(32) | b[..., 3] << np.uint64(48)


def pack_words(rows, cols, codes, sq, zq, stats):
    """The words of a QUANT matrix: codes (bands*16 x tcols*16 ints 0..7, the padded matrix), sq and zq
    (bands*16 x tcols ints 0..7), stats (bands x tcols x 4 fp16). Storage order: tile by tile, band by band."""
    bands, tcols = tiles(rows, cols)
    c = np.asarray(codes, np.uint64).reshape(bands, 16, tcols, 16).transpose(0, 2, 1, 3)
    w = np.zeros((bands, tcols, 16), np.uint64)
    for k in range(16):
        w |= c[..., k] << np.uint64(WEIGHT_BIT[k])
    w |= np.asarray(sq, np.uint64).reshape(bands, 16, tcols).transpose(0, 2, 1) << np.uint64(SQ_BIT)
    w |= np.asarray(zq, np.uint64).reshape(bands, 16, tcols).transpose(0, 2, 1) << np.uint64(ZQ_BIT)
    S = stats_word(stats)
    for i in range(16):
        w[:, :, i] |= ((S >> np.uint64(4 * i)) & np.uint64(0xF)) << np.uint64(PIECE_BIT)
    return w.reshape(-1)


def entry(col, value):
    """One outlier entry: the column in bits 0..15, the fp16 value's bits in bits 16..31."""
    return np.uint32(int(col) | int(np.float16(value).view(np.uint16)) << 16)


def decode_w(rows, cols, words):
    """W, the dequantized part, as a rows x cols fp16 array."""
    bands, tcols = tiles(rows, cols)
    w = np.asarray(words, np.uint64).reshape(bands, tcols, 16)
    pieces = (w >> np.uint64(PIECE_BIT)) & np.uint64(0xF)
    S = np.zeros((bands, tcols), np.uint64)
    for i in range(16):
        S |= pieces[:, :, i] << np.uint64(4 * i)
    st = [((S >> np.uint64(16 * j)) & np.uint64(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
          for j in range(4)]
    s_s, z_s, s_z, z_z = (x[:, :, None] for x in st)
    sq = ((w >> np.uint64(SQ_BIT)) & np.uint64(7)).astype(np.float64)
    zq = ((w >> np.uint64(ZQ_BIT)) & np.uint64(7)).astype(np.float64)
    s = f16(f16(sq - z_s).astype(np.float64) * s_s).astype(np.float64)      # s = (sq - z_s) * s_s
    z = f16(f16(zq - z_z).astype(np.float64) * s_z).astype(np.float64)      # z = (zq - z_z) * s_z
    m = f16(z * s).astype(np.float64)                                       # m = z * s
    out = np.zeros((bands, tcols, 16, 16), np.float16)
    for k in range(16):
        q = ((w >> np.uint64(WEIGHT_BIT[k])) & np.uint64(7)).astype(np.float64)
        out[..., k] = f16(q * s - m)                                        # fma(q, s, -m): exact, rounded once
    dense = out.transpose(0, 2, 1, 3).reshape(bands * 16, tcols * 16)
    return dense[:rows, :cols]


def decode_o(rows, cols, row_ptr, entries):
    """O, the outliers, as a dense rows x cols float64 array (exact fp16 values)."""
    o = np.zeros((rows, cols), np.float64)
    e = np.asarray(entries, np.uint32)
    for r in range(rows):
        seg = e[row_ptr[r]:row_ptr[r + 1]]
        cols_r = (seg & np.uint32(0xFFFF)).astype(np.int64)
        o[r, cols_r] = (seg >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
    return o


def decode(rows, cols, words, row_ptr, entries):
    """A = W + O, the exact sum rounded once to fp16 (what macko_mat_export_dense_host writes)."""
    return f16(decode_w(rows, cols, words).astype(np.float64) + decode_o(rows, cols, row_ptr, entries))


def random_parts(rows, cols, rng):
    """Random codes, sq, zq (zero in the padding) and statistics that keep every decoded value finite, as
    pack_words takes them."""
    bands, tcols = tiles(rows, cols)
    codes = rng.integers(0, 8, (bands * 16, tcols * 16))
    codes[rows:, :] = 0
    codes[:, cols:] = 0
    sq = rng.integers(0, 8, (bands * 16, tcols))
    zq = rng.integers(0, 8, (bands * 16, tcols))
    sq[rows:], zq[rows:] = 0, 0
    stats = np.stack([rng.uniform(0.005, 0.05, (bands, tcols)), -rng.uniform(0, 4, (bands, tcols)),
                      rng.uniform(0.1, 1.0, (bands, tcols)), -rng.uniform(0, 2, (bands, tcols))], -1)
    return codes, sq, zq, stats.astype(np.float16)


def random_quant(rows, cols, seed, outlier_density=0.05, outlier_rows=()):
    """Valid random QUANT arrays (words, outlier_row_ptr, outlier_entries): random_parts packed; outliers at about
    outlier_density of the positions, every position of the rows in outlier_rows."""
    rng = np.random.default_rng(seed)
    words = pack_words(rows, cols, *random_parts(rows, cols, rng))
    row_ptr, entries = [0], []
    for r in range(rows):
        cs = np.arange(cols) if r in outlier_rows else np.flatnonzero(rng.random(cols) < outlier_density)
        for c in cs:
            entries.append(entry(c, rng.uniform(0.25, 4.0) * rng.choice([-1.0, 1.0])))
        row_ptr.append(len(entries))
    return words, np.array(row_ptr, np.int32), np.array(entries, np.uint32)


# ---------------------------------------------------------------- SpQR's layout (FORMAT_QUANT.md, "Importing an SpQR
# checkpoint"), as SpQR's packer writes it
def pack_spqr(rows, cols, codes, sq, zq, stats):
    """SpQR's dense_weights (uint64) for the parts pack_words takes: sq in bits 0..2, zq in 3..5, weight k's code in
    6 + 3k, byte j of S_spqr = W_s_s | W_z_s << 16 | W_s_z << 32 | W_z_z << 48 in bits 54..61 of tile rows 2j and
    2j + 1; rows past `rows` are all zero (SpQR pushes them without a statistics byte). Our (s_s, z_s, s_z, z_z) are
    SpQR's (W_s_s, W_s_z, W_z_s, W_z_z)."""
    bands, tcols = tiles(rows, cols)
    st = np.asarray(stats, np.float16)
    s_spqr = stats_word(st[..., [0, 2, 1, 3]])
    c = np.asarray(codes, np.uint64).reshape(bands, 16, tcols, 16).transpose(0, 2, 1, 3)
    w = np.asarray(sq, np.uint64).reshape(bands, 16, tcols).transpose(0, 2, 1)
    w = w | np.asarray(zq, np.uint64).reshape(bands, 16, tcols).transpose(0, 2, 1) << np.uint64(3)
    for k in range(16):
        w |= c[..., k] << np.uint64(6 + 3 * k)
    for i in range(16):
        w[:, :, i] |= ((s_spqr >> np.uint64(8 * (i // 2))) & np.uint64(0xFF)) << np.uint64(54)
    if rows % 16:
        w[-1, :, rows % 16:] = 0
    return w.reshape(-1)


def ptcsr(rows, row_ptr, entries):
    """SpQR's PTCSR of a CSR outlier matrix: band by band, slot 16j + i holds the j-th outlier of row 16b + i, the
    band padded with zero slots to its longest row -> (row_offsets counting slots, col_vals)."""
    bands = -(-rows // 16)
    offsets, out = [0], []
    for b in range(bands):
        lens = [row_ptr[r + 1] - row_ptr[r] if r < rows else 0 for r in range(16 * b, 16 * b + 16)]
        slots = np.zeros(16 * max(lens), np.uint32)
        for i in range(16):
            r = 16 * b + i
            if r < rows:
                slots[i::16][:lens[i]] = entries[row_ptr[r]:row_ptr[r + 1]]
        out.append(slots)
        offsets.append(offsets[-1] + slots.shape[0])
    return np.array(offsets, np.int32), np.concatenate(out) if out else np.zeros(0, np.uint32)


def spqr_decode(rows, cols, codes, sq, zq, stats):
    """SpQR's own dequantization of W: scale = W_s_s * (sq - W_s_z), zero = W_z_s * (zq - W_z_z), w = scale *
    (q - zero), each step rounded to fp16 -> rows x cols float64."""
    bands, tcols = tiles(rows, cols)
    st = np.asarray(stats, np.float16).astype(np.float64)
    per_row = np.repeat(np.repeat(st, 16, axis=0), 16, axis=1)  # (bands*16, tcols*16, 4)
    sqr = np.repeat(np.asarray(sq, np.float64), 16, axis=1)
    zqr = np.repeat(np.asarray(zq, np.float64), 16, axis=1)
    s_s, z_s, s_z, z_z = (per_row[..., j] for j in range(4))
    scale = f16(s_s * f16(sqr - z_s).astype(np.float64)).astype(np.float64)
    zero = f16(s_z * f16(zqr - z_z).astype(np.float64)).astype(np.float64)
    w = f16(scale * f16(np.asarray(codes, np.float64) - zero).astype(np.float64))
    return w[:rows, :cols].astype(np.float64)
