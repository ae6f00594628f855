#!/usr/bin/env python3
"""Plots of macko-bench CSV output (one or more files, e.g. one per part of a long run).

Writes three PNGs:
  PREFIX-speedup.png   per shape: macko's speedup over cuBLAS and over cuSPARSE against sparsity, with the byte limit
                       1 / effective density (what a kernel at cuBLAS's bandwidth would reach) for reference
  PREFIX-pct-copy.png  macko's achieved bandwidth as % of the measured device-to-device copy bandwidth, per shape
  PREFIX-geomean.png   geometric mean speedup over the shapes against sparsity, one line per baseline
and prints the geometric means as a Markdown table.

usage: plot.py results.csv [more.csv ...] [--out PREFIX] [--n N]
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict


def load(paths, n):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                # "ok", or "ok (write flush)": a --flush rotate row that fell back to the write flush
                if int(r["n"]) != n or not r["status"].startswith("ok") or not r["macko_us"]:
                    continue
                rows.append({
                    "shape": f'{r["rows"]}x{r["cols"]}',
                    "rows": int(r["rows"]),
                    "cols": int(r["cols"]),
                    "density": float(r["density"]),
                    "vs_cublas": float(r["speedup_vs_cublas"]),
                    "vs_cusparse": float(r["speedup_vs_cusparse"]),
                    "pct_copy": float(r["macko_pct_copy"]),
                    "effd": float(r["effective_density"]),
                    "type": r["type"],
                })
    return rows


def geomeans(rows):
    by_d = defaultdict(list)
    for r in rows:
        by_d[r["density"]].append(r)
    out = []
    for d in sorted(by_d, reverse=True):
        g = by_d[d]
        out.append((d, len(g),
                    math.exp(sum(math.log(r["vs_cublas"]) for r in g) / len(g)),
                    math.exp(sum(math.log(r["vs_cusparse"]) for r in g) / len(g)),
                    math.exp(sum(math.log(1.0 / r["effd"]) for r in g) / len(g))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+", help="CSV file(s) written by macko-bench --csv")
    ap.add_argument("--out", help="output prefix (default: the first CSV's path without .csv)")
    ap.add_argument("--n", type=int, default=1, help="right-hand-side count to plot (default 1)")
    args = ap.parse_args()

    rows = load(args.csv, args.n)
    if not rows:
        sys.exit("plot.py: no rows with status ok (or 'ok (...)') and a macko time in the input")
    prefix = args.out or os.path.splitext(args.csv[0])[0]
    types = sorted({r["type"] for r in rows})
    label_type = "fp16" if types == ["H"] else "fp32" if types == ["S"] else "/".join(types)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    times = FuncFormatter(lambda v, _: f"{v:g}x")

    shapes = sorted({r["shape"] for r in rows}, key=lambda s: (int(s.split("x")[0]) * int(s.split("x")[1]), s))
    by_shape = defaultdict(list)
    for r in rows:
        by_shape[r["shape"]].append(r)
    for s in shapes:
        by_shape[s].sort(key=lambda r: r["density"], reverse=True)

    def sparsity(rs):
        return [100.0 * (1.0 - r["density"]) for r in rs]

    # 1. speedup per shape
    ncol = min(4, len(shapes))
    nrow = (len(shapes) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.3 * nrow), squeeze=False, sharex=True)
    for i, s in enumerate(shapes):
        ax = axes[i // ncol][i % ncol]
        rs = by_shape[s]
        x = sparsity(rs)
        ax.plot(x, [r["vs_cublas"] for r in rs], "o-", label="vs cuBLAS")
        ax.plot(x, [r["vs_cusparse"] for r in rs], "s-", label="vs cuSPARSE")
        ax.plot(x, [1.0 / r["effd"] for r in rs], ":", color="gray", label="1 / eff. density")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(times)
        ax.set_title(s, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        if i % ncol == 0:
            ax.set_ylabel("macko speedup")
        if i // ncol == nrow - 1:
            ax.set_xlabel("sparsity %")
    for j in range(len(shapes), nrow * ncol):
        axes[j // ncol][j % ncol].axis("off")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"macko SpMV ({label_type}) speedup, n = {args.n}")
    fig.tight_layout()
    fig.savefig(prefix + "-speedup.png", dpi=120)
    plt.close(fig)

    # 2. % of copy bandwidth
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in shapes:
        rs = by_shape[s]
        ax.plot(sparsity(rs), [r["pct_copy"] for r in rs], "o-", ms=3, label=s)
    ax.set_xlabel("sparsity %")
    ax.set_ylabel("% of device-to-device copy bandwidth")
    ax.set_ylim(0, 100)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"macko SpMV ({label_type}) achieved bandwidth (values + deltas + row_ptr + x + y)")
    fig.tight_layout()
    fig.savefig(prefix + "-pct-copy.png", dpi=120)
    plt.close(fig)

    # 3. geometric means
    geo = geomeans(rows)
    fig, ax = plt.subplots(figsize=(6, 4))
    x = [100.0 * (1.0 - g[0]) for g in geo]
    ax.plot(x, [g[2] for g in geo], "o-", label="vs cuBLAS")
    ax.plot(x, [g[3] for g in geo], "s-", label="vs cuSPARSE")
    ax.plot(x, [g[4] for g in geo], ":", color="gray", label="1 / eff. density")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(times)
    ax.set_xlabel("sparsity %")
    ax.set_ylabel("geometric mean speedup")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(f"macko SpMV ({label_type}), geomean over {len(shapes)} shape(s)")
    fig.tight_layout()
    fig.savefig(prefix + "-geomean.png", dpi=120)
    plt.close(fig)

    print("| density | shapes | vs cuBLAS | vs cuSPARSE | 1 / eff. density |")
    print("|---|---|---|---|---|")
    for d, cnt, gb, gs, gl in geo:
        print(f"| {d:.2f} | {cnt} | {gb:.2f}x | {gs:.2f}x | {gl:.2f}x |")
    print(f"wrote {prefix}-speedup.png, {prefix}-pct-copy.png, {prefix}-geomean.png", file=sys.stderr)


if __name__ == "__main__":
    main()
