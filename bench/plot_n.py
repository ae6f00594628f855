#!/usr/bin/env python3
"""macko's speedup over cuBLAS against n (the right-hand sides), from macko-bench CSVs run with --n LIST.

For every density: one figure, PREFIX-n-d<density>.png, with one line per shape (speedup = cuBLAS's GEMM time with
the same N in the same run / macko's time, log scales) and the geometric mean over the shapes in black. The GEMM is
the CSV's cublas_gemm_us: cublasGemmEx (fp16; n = 1 too, with N = 1) or cublasSgemm (fp32); fp32 rows at n = 1
have no GEMM time and use cublas_us (cublasSgemv). Prints the geometric means as a Markdown table (density x n),
also written to --md.

With --cliffs [TOL]: also lists every (shape, density, n) that took less time than a smaller n of the same shape
and density by more than TOL (default 0.05: issue 16's "no cliff"), a later CSV's row replacing an earlier one's.

usage: plot_n.py results.csv [more.csv ...] [--out PREFIX] [--md table.md] [--no-png] [--cliffs [TOL]]
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict


def load(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                if not r["status"].startswith("ok") or not r["macko_us"]:
                    continue
                base = r.get("cublas_gemm_us") or r["cublas_us"]
                if not base:
                    continue
                rows.append({"shape": "%sx%s" % (r["rows"], r["cols"]), "size": int(r["rows"]) * int(r["cols"]),
                             "density": float(r["density"]), "n": int(r["n"]), "type": r["type"],
                             "speedup": float(base) / float(r["macko_us"]), "us": float(r["macko_us"])})
    return rows


def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def title(gemm):
    """The first line of every table of geometric means (plot_n.py, plot_layouts.py)."""
    return ("Geometric mean over the shapes of macko's speedup over %s with the same N (in parentheses: the number "
            "of shapes)\n\n" % gemm)


def emit(table, md):
    """Prints the table and, with --md, writes it."""
    print(table)
    if md:
        with open(md, "w") as f:
            f.write(table + "\n")


def cliffs(rows, tol):
    """Steps down in time: for each (density, shape) and n, the slowest smaller n where macko took more than
    1 / (1 - tol) times as long (issue 16: a larger n never takes less time than a smaller one by more than 5 %).
    A later row of the same (shape, density, n) replaces an earlier one. Returns text lines."""
    t = {}
    for r in rows:
        t[(r["density"], r["size"], r["shape"], r["n"])] = r["us"]
    by = defaultdict(dict)
    for (d, size, shape, n), us in t.items():
        by[(d, size, shape)][n] = us
    out = []
    for (d, _, shape) in sorted(by, key=lambda k: (-k[0], k[1], k[2])):
        ts = by[(d, _, shape)]
        ns = sorted(ts)
        for i, nb in enumerate(ns):
            if i == 0:
                continue
            na = max(ns[:i], key=lambda x: ts[x])
            if ts[nb] < (1.0 - tol) * ts[na]:
                out.append("- %s, d = %.2f: n = %d takes %.1f us, n = %d %.1f us (%.2fx the time)" % (
                    shape, d, na, ts[na], nb, ts[nb], ts[nb] / ts[na]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+", help="CSV file(s) written by macko-bench --csv")
    ap.add_argument("--out", help="output prefix (default: the first CSV's path without .csv)")
    ap.add_argument("--md", help="also write the table of geometric means to this Markdown file")
    ap.add_argument("--no-png", action="store_true", help="only the table (no matplotlib needed)")
    ap.add_argument("--cliffs", type=float, nargs="?", const=0.05, metavar="TOL",
                    help="also list every n that takes less time than a smaller n by more than TOL (default 0.05)")
    a = ap.parse_args()
    rows = load(a.csv)
    if not rows:
        sys.exit("plot_n.py: no rows with status ok (or 'ok (...)') and a macko time in the input")
    prefix = a.out or os.path.splitext(a.csv[0])[0]
    types = sorted({r["type"] for r in rows})
    gemm = "cublasGemmEx" if types == ["H"] else "cublasSgemm" if types == ["S"] else "cuBLAS GEMM"

    by = defaultdict(lambda: defaultdict(dict))  # density -> shape -> n -> speedup
    for r in rows:
        by[r["density"]][r["shape"]][r["n"]] = r["speedup"]
    ns = sorted({r["n"] for r in rows})
    size = {r["shape"]: r["size"] for r in rows}

    lines = ["| density | " + " | ".join("n = %d" % n for n in ns) + " |", "|---|" + "---|" * len(ns)]
    geo = {}
    for d in sorted(by, reverse=True):
        cells = []
        for n in ns:
            v = [s[n] for s in by[d].values() if n in s]
            geo[(d, n)] = gmean(v) if v else None
            cells.append("%.2fx (%d)" % (geo[(d, n)], len(v)) if v else "–")
        lines.append("| %.2f | %s |" % (d, " | ".join(cells)))
    table = title(gemm) + "\n".join(lines)
    if a.cliffs is not None:
        c = cliffs(rows, a.cliffs)
        table += ("\n\nSteps down in time (a larger n taking less than %g times a smaller n's time): %s" % (
            1.0 - a.cliffs, "none" if not c else "%d\n\n%s" % (len(c), "\n".join(c))))
    emit(table, a.md)
    if a.no_png:
        return 0

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    written = []
    for d in sorted(by, reverse=True):
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        for s in sorted(by[d], key=lambda s: (size[s], s)):
            pts = sorted(by[d][s].items())
            ax.plot([n for n, _ in pts], [v for _, v in pts], "o-", ms=3, lw=1, label=s)
        gn = [n for n in ns if geo.get((d, n))]
        ax.plot(gn, [geo[(d, n)] for n in gn], "k-", lw=2.5, label="geomean")
        ax.axhline(1.0, color="gray", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%gx" % v))
        ax.set_xticks(ns)
        lo, hi = ax.get_ylim()
        ax.set_yticks([t for t in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1, 1.25, 1.5, 2, 3, 4, 6, 8) if lo <= t <= hi])
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set_xlabel("n (right-hand sides: batch / tokens)")
        ax.set_ylabel("macko speedup over %s (same N)" % gemm)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        ax.set_title("macko %s, density %.2f" % ("SpMV/SpMM" if types != ["S"] else "Sspmv/Sspmm", d))
        fig.tight_layout()
        path = "%s-n-d%.2f.png" % (prefix, d)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    print("wrote " + ", ".join(written), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
