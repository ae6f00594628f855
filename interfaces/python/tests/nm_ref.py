"""A numpy model of lapack_style_docs/FORMAT_NM.md, written from the format's rules (not from the library): the
canonical encoding of a dense matrix, the detection of a pattern, the decoding of the arrays, and an N:M weight
maker. Slow and simple: loops over row groups and windows, for the tests' small matrices."""

import numpy as np

import macko

M_VALUES = (4, 8, 16, 32)
V_VALUES = (1, 2, 4, 8, 16, 32)


def nonzero(a):
    """The nonzero mask of host values a (macko.bfloat16 bit patterns too): +0 and -0 are zero, NaN, Inf and
    subnormals are not."""
    if a.dtype.itemsize == 2 and a.dtype.kind == "u":
        return (a.view(np.uint16) & np.uint16(0x7FFF)) != 0
    return a != 0  # NaN != 0


def sizes(rows, cols, n, m, v):
    w, g = -(-cols // m), -(-rows // v)
    return w, g, w * n


def union_counts(nz, m, v):
    """(G, W) counts of the columns holding a nonzero in some row of each row group and window."""
    rows, cols = nz.shape
    w, g, _ = sizes(rows, cols, 1, m, v)
    p = np.zeros((g * v, w * m), bool)
    p[:rows, :cols] = nz
    return p.reshape(g, v, w, m).any(axis=1).sum(axis=-1)


def need(nz, m, v):
    """The smallest n that holds every window of pattern (., m, v) (0 for a matrix without nonzeros)."""
    c = union_counts(nz, m, v)
    return int(c.max()) if c.size else 0


def detect(nz, n, m, v, itemsize):
    """The (n, m, v) from_dense_nm chooses where n, m or v is 0: the fewest host bytes rows*K'*itemsize + G*K', ties
    to the larger m, then the larger v; None when no supported pattern holds the matrix with the given values."""
    rows, cols = nz.shape
    best = None
    for mm in sorted(M_VALUES, reverse=True):
        if (m and mm != m) or n > mm:
            continue
        for vv in sorted(V_VALUES, reverse=True):
            if v and vv != v:
                continue
            k = need(nz, mm, vv)
            nn = n if n else max(1, k)
            if k > nn:
                continue
            _, g, kept = sizes(rows, cols, nn, mm, vv)
            b = rows * kept * itemsize + g * kept
            if best is None or b < best[0]:
                best = (b, (nn, mm, vv))
    return None if best is None else best[1]


def encode(a, n, m, v):
    """(values (rows, K'), positions (G, K')) of the canonical encoding of host array a (a's dtype; every zero
    stored as +0); AssertionError when a window holds more than n nonzero columns."""
    rows, cols = a.shape
    nz = nonzero(a)
    w_count, g_count, kept = sizes(rows, cols, n, m, v)
    values = np.zeros((rows, kept), a.dtype)
    positions = np.zeros((g_count, kept), np.uint8)
    for g in range(g_count):
        r0, r1 = g * v, min(rows, g * v + v)
        for w in range(w_count):
            c0 = w * m
            used = [p for p in range(m) if c0 + p < cols and nz[r0:r1, c0 + p].any()]
            assert len(used) <= n, (g, w, used)
            fill = [p for p in range(m) if p not in used][:n - len(used)]
            ps = sorted(used + fill)
            positions[g, w * n:(w + 1) * n] = ps
            for j, p in enumerate(ps):
                c = c0 + p
                if c < cols:
                    keep = nz[r0:r1, c]
                    values[r0:r1, w * n + j][keep] = a[r0:r1, c][keep]
    return values, positions


def decode(rows, cols, n, m, v, values, positions):
    """The dense rows x cols matrix of N:M arrays (values' dtype; +0 where nothing is kept)."""
    values = np.asarray(values).reshape(rows, -1)
    positions = np.asarray(positions).reshape(-(-rows // v) if v else 0, -1)
    w_count, _, _ = sizes(rows, cols, n, m, v)
    out = np.zeros((rows, cols), values.dtype)
    for r in range(rows):
        for w in range(w_count):
            for j in range(n):
                c = w * m + int(positions[r // v, w * n + j])
                if c < cols:
                    out[r, c] = values[r, w * n + j]
    return out


def random_nm(rows, cols, n, m, v, seed, dtype=np.float32, fill=1.0):
    """A random rows x cols weight of pattern (n, m, v): in each group and window n random columns (fewer in a
    partial window), each of their values nonzero with probability `fill` (so some windows are padded)."""
    rng = np.random.default_rng(seed)
    w_count, g_count, _ = sizes(rows, cols, n, m, v)
    a = np.zeros((rows, cols), np.float64)
    for g in range(g_count):
        r0, r1 = g * v, min(rows, g * v + v)
        for w in range(w_count):
            valid = min(m, cols - w * m)
            cs = w * m + rng.choice(valid, size=min(n, valid), replace=False)
            block = rng.standard_normal((r1 - r0, cs.shape[0])) + 0.1
            block[rng.random(block.shape) >= fill] = 0.0
            a[r0:r1, cs] = block
    if dtype == "bfloat16":
        return macko.bf16_from_float(a)
    return a.astype(dtype)
