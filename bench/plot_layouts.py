#!/usr/bin/env python3
"""Several configurations of macko side by side against n: the geometric mean over the shapes of the speedup over
cuBLAS with the same N, one line per (configuration, density), in one figure.

Each argument is LABEL=CSV[,CSV...]: the macko-bench CSVs (run with --n LIST) of one configuration, say the rows
layout or the tile layout. Where two CSVs of one label hold the same (shape, density, n), the later one wins, so a
rerun of a few n can be laid over a full table (the note of the figure should then say so). Speedups are those of
plot_n.py (the CSV's cublas_gemm_us over macko_us). Prints the table (one row per label and density, one column
per n; "–" where a label has no row), also written to --md, and draws PREFIX.png unless --no-png.

usage: plot_layouts.py rows=a.csv,b.csv tiles=c.csv [--densities 0.5,0.3] [--out PREFIX] [--md table.md]
                       [--title TEXT] [--no-png]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_n import emit, gmean, load, title  # noqa: E402


def parse_config(arg):
    label, sep, files = arg.partition("=")
    if not sep or not label or not files:
        raise argparse.ArgumentTypeError("expected LABEL=CSV[,CSV...], not %r" % arg)
    return label, files.split(",")


def merged(paths):
    """(density, n) -> [speedup per shape], later files replacing earlier ones for the same shape, density and n."""
    cell = {}
    for p in paths:
        for r in load([p]):
            cell[(r["shape"], r["density"], r["n"])] = (r["speedup"], r["type"])
    by = {}
    for (shape, d, n), (s, t) in cell.items():
        by.setdefault((d, n), []).append(s)
    return by, {t for _, t in cell.values()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config", nargs="+", type=parse_config, help="LABEL=CSV[,CSV...]")
    ap.add_argument("--densities", help="comma-separated densities to keep (default: all in the CSVs)")
    ap.add_argument("--out", help="output prefix of the figure (default: the first CSV's path without .csv)")
    ap.add_argument("--md", help="also write the table to this Markdown file")
    ap.add_argument("--title", default="", help="the figure's title (device, date, what was merged)")
    ap.add_argument("--no-png", action="store_true", help="only the table (no matplotlib needed)")
    a = ap.parse_args()
    keep = {float(x) for x in a.densities.split(",")} if a.densities else None

    geo, types = {}, set()
    for label, paths in a.config:
        by, t = merged(paths)
        types |= t
        for (d, n), v in by.items():
            if keep is None or any(abs(d - k) < 1e-9 for k in keep):
                geo[(label, d, n)] = (gmean(v), len(v))
    if not geo:
        sys.exit("plot_layouts.py: no rows with status ok (or 'ok (...)') and a macko time in the input")
    gemm = "cublasGemmEx" if types == {"H"} else "cublasSgemm" if types == {"S"} else "cuBLAS GEMM"
    ns = sorted({n for _, _, n in geo})
    order = [(label, d) for label, _ in a.config for d in sorted({d for l2, d, _ in geo if l2 == label}, reverse=True)]

    lines = ["| configuration | density | " + " | ".join("n = %d" % n for n in ns) + " |",
             "|---|---|" + "---|" * len(ns)]
    for label, d in order:
        cells = ["%.2fx (%d)" % geo[(label, d, n)] if (label, d, n) in geo else "–" for n in ns]
        lines.append("| %s | %.2f | %s |" % (label, d, " | ".join(cells)))
    emit(title(gemm) + "\n".join(lines), a.md)
    if a.no_png:
        return 0

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(8, 5))
    styles = ["-", "--", ":", "-."]
    labels = [label for label, _ in a.config]
    dens = sorted({d for _, d in order}, reverse=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for label, d in order:
        pts = [(n, geo[(label, d, n)][0]) for n in ns if (label, d, n) in geo]
        ax.plot([n for n, _ in pts], [v for _, v in pts], "o", ls=styles[labels.index(label) % len(styles)], ms=4,
                lw=2, color=colors[dens.index(d) % len(colors)], label="%s, d = %.2f" % (label, d))
    ax.axhline(1.0, color="gray", lw=1, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%gx" % v))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xticks([n for n in ns if n & (n - 1) == 0] or ns)  # powers of two: other n crowd the labels
    lo, hi = ax.get_ylim()
    ax.set_yticks([t for t in (0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.25, 1.5, 2, 3, 4) if lo <= t <= hi])
    ax.set_xlabel("n (right-hand sides: batch / tokens)")
    ax.set_ylabel("speedup over %s, same N (geomean)" % gemm)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    if a.title:
        ax.set_title(a.title, fontsize=10)
    fig.tight_layout()
    path = (a.out or os.path.splitext(a.config[0][1][0])[0]) + ".png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print("wrote " + path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
