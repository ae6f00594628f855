#!/usr/bin/env python3
"""What a perfect SpMV kernel could reach under BENCH.md's method, from a macko-bench CSV (fp16 or fp32, n = 1).

For every row: macko's bytes (values + deltas + row pointers + x + y, the CSV's macko_bytes) read at the copy
bandwidth measured in the same run give a floor time; the best speedups any kernel on this format could show are
cuBLAS / floor and cuSPARSE / floor. Two models, per density:

  * "copy, no fixed cost": time = bytes / copy bandwidth (the bound of the issue's "limit" column, per shape);
  * "copy + cuBLAS's fixed cost": time = t0 + bytes / copy bandwidth, where t0 is the intercept of a least-squares
    line through cuBLAS's own times against its dense bytes (every shape of the CSV): the per-launch cost (launch,
    first DRAM round trips, ramp, reduction, write) that cuBLAS itself pays and that a kernel of this format, which
    needs one more dependent round trip (row pointers before values), does not avoid.

Also: the % of copy bandwidth macko would need on each row to be `--vs-cusparse` times faster than cuSPARSE
(above 100 % is impossible under this method's ceiling).

    python3 bench/bounds.py bench/results/H100-2026-11-21-quick-H-rotate.csv [more.csv ...] [--vs-cusparse 2.5]
                            [--md out.md]
"""

import argparse
import csv
import math
import sys
from collections import defaultdict


def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def fit_line(xs, ys):
    """Least squares y = a + b x; returns (a, b)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    return my - b * mx, b


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("csv", nargs="+", help="macko-bench CSV file(s) of one device (e.g. the parts of a long run)")
    p.add_argument("--vs-cusparse", type=float, default=2.5)
    p.add_argument("--md", help="also write the tables to this Markdown file")
    a = p.parse_args()
    rows = []
    for path in a.csv:
        with open(path, newline="") as f:
            rows += [r for r in csv.DictReader(f) if r.get("n", "1") == "1" and r["status"].startswith("ok")]
    if not rows:
        sys.exit("no usable rows in %s" % ", ".join(a.csv))
    esz = 2 if rows[0]["type"] == "H" else 4

    # cuBLAS's fixed cost: intercept of time against dense bytes (A + x + y), one point per distinct shape
    pts = {}
    for r in rows:
        R, C = int(r["rows"]), int(r["cols"])
        pts.setdefault((R, C), []).append(float(r["cublas_us"]))
    xs = [(R * C + R + C) * esz / 1e6 for (R, C) in pts]
    ys = [sorted(v)[len(v) // 2] for v in pts.values()]
    t0, us_per_mb = fit_line(xs, ys) if len(pts) >= 2 else (0.0, 0.0)

    out = ["# What a perfect SpMV kernel of this format could reach under BENCH.md's method", "",
           "Command: `python3 bench/bounds.py %s --vs-cusparse %g` (the model: see the script's docstring). Per row: "
           "macko's bytes at the copy bandwidth of its run (floor), the speedups that floor would give over the "
           "run's cuBLAS and cuSPARSE, and the %% of copy bandwidth macko would need to be %g times faster than "
           "cuSPARSE." % (" ".join(a.csv), a.vs_cusparse, a.vs_cusparse), ""]
    out.append("Source: %s (%d rows). cuBLAS fit over %d shapes: t = %.2f us + bytes / %.0f GB/s." % (
        ", ".join("`%s`" % c for c in a.csv), len(rows), len(pts), t0, 1e3 / us_per_mb if us_per_mb > 0 else float("nan")))
    out.append("")
    out.append("| shape | density | macko us | floor us (copy) | macko %% of floor | max vs cuBLAS (copy / copy + t0) "
               "| measured vs cuBLAS | max vs cuSPARSE (copy) | %% copy needed for %.2gx cuSPARSE |" % a.vs_cusparse)
    out.append("|---|---|---|---|---|---|---|---|---|")
    per_d = defaultdict(lambda: defaultdict(list))
    for r in rows:
        d = float(r["density"])
        floor = float(r["macko_bytes"]) / (float(r["copy_gbps"]) * 1e3)
        cb, cs, mk = float(r["cublas_us"]), float(r["cusparse_us"]), float(r["macko_us"])
        need = 100.0 * floor / (cs / a.vs_cusparse)
        per_d[d]["copy"].append(cb / floor)
        per_d[d]["copy_t0"].append(cb / (floor + t0))
        per_d[d]["meas"].append(cb / mk)
        per_d[d]["cs_copy"].append(cs / floor)
        per_d[d]["need"].append(need)
        out.append("| %sx%s | %.2f | %.1f | %.1f | %.0f%% | %.2fx / %.2fx | %.2fx | %.2fx | %.0f%%%s |" % (
            r["rows"], r["cols"], d, mk, floor, 100 * floor / mk, cb / floor, cb / (floor + t0), cb / mk,
            cs / floor, need, " (impossible)" if need > 100 else ""))
    out.append("")
    out.append("| density | shapes | geomean vs cuBLAS: measured | at copy bandwidth | at copy bandwidth + cuBLAS's fixed "
               "cost | min over shapes of max vs cuSPARSE | shapes needing > 100 %% copy for %.2gx cuSPARSE |"
               % a.vs_cusparse)
    out.append("|---|---|---|---|---|---|---|")
    for d in sorted(per_d, reverse=True):
        v = per_d[d]
        out.append("| %.2f | %d | %.2fx | %.2fx | %.2fx | %.2fx | %d |" % (
            d, len(v["meas"]), gmean(v["meas"]), gmean(v["copy"]), gmean(v["copy_t0"]), min(v["cs_copy"]),
            sum(1 for x in v["need"] if x > 100)))
    text = "\n".join(out)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
