#!/usr/bin/env python3
"""macko's time in one value type against another on the same matrices, from two macko-bench CSVs: issue 17's
"bf16 within 3 % of fp16" check.

The runs must use the same seed, shapes, densities and n (macko-bench draws the same positions and random numbers for
every type: an fp16 and a bf16 run time the same pattern and byte count, the values rounded to each type). Rows are
matched on (rows, cols, density, n); rows that failed or were not timed in either run are listed and left out.

    python3 bench/compare_types.py fp16.csv bf16.csv [--limit 1.03] [--md out.md]

Prints, per row, both times and the ratio (second / first), then per (density, n) and over all rows: the geometric
mean and the largest ratio, and how many rows are within the limit. Exit status 0 whatever the ratios (a report, not
a test).
"""

import argparse
import csv
import math
import sys
from collections import defaultdict


def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def load(path):
    """{(rows, cols, density, n): (type, macko_us or None, status)} of one CSV."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (int(r["rows"]), int(r["cols"]), round(float(r["density"]), 6), int(r["n"]))
            us = float(r["macko_us"]) if r.get("macko_us") else None
            out[key] = (r["type"], us, r["status"])
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", help="the reference run's CSV (e.g. --type H)")
    ap.add_argument("second", help="the compared run's CSV (e.g. --type B)")
    ap.add_argument("--limit", type=float, default=1.03, help="ratio counted as within target (default 1.03)")
    ap.add_argument("--md", help="also write the report to this file")
    a = ap.parse_args(argv)
    first, second = load(a.first), load(a.second)
    t1 = {v[0] for v in first.values()}
    t2 = {v[0] for v in second.values()}
    name1, name2 = "/".join(sorted(t1)) or "?", "/".join(sorted(t2)) or "?"
    lines = ["# macko %s vs %s (second / first; target <= %.2fx)" % (name2, name1, a.limit), "",
             "- first: `%s`; second: `%s`" % (a.first, a.second), "",
             "| shape | density | n | %s µs | %s µs | ratio |" % (name1, name2), "|---|---|---|---|---|---|"]
    groups, left_out = defaultdict(list), []
    for key in sorted(first, key=lambda k: (k[0], k[1], -k[2], k[3])):
        if key not in second:
            continue
        (_, u1, s1), (_, u2, s2) = first[key], second[key]
        shape = "%dx%d" % key[:2]
        if not (u1 and u2 and s1.startswith("ok") and s2.startswith("ok")):
            left_out.append("%s d=%.2f n=%d (%s / %s)" % (shape, key[2], key[3], s1, s2))
            continue
        ratio = u2 / u1
        groups[(key[2], key[3])].append(ratio)
        lines.append("| %s | %.2f | %d | %.1f | %.1f | %.3fx%s |"
                     % (shape, key[2], key[3], u1, u2, ratio, "" if ratio <= a.limit else " **over**"))
    unmatched = len(set(first) ^ set(second))
    lines += ["", "| density | n | rows | geomean | max | within %.2fx |" % a.limit, "|---|---|---|---|---|---|"]
    every = []
    for (d, n) in sorted(groups, key=lambda k: (-k[0], k[1])):
        v = groups[(d, n)]
        every += v
        lines.append("| %.2f | %d | %d | %.3fx | %.3fx | %d/%d |"
                     % (d, n, len(v), gmean(v), max(v), sum(x <= a.limit for x in v), len(v)))
    if every:
        lines.append("| all | | %d | %.3fx | %.3fx | %d/%d |"
                     % (len(every), gmean(every), max(every), sum(x <= a.limit for x in every), len(every)))
    if left_out:
        lines += ["", "left out (failed or not timed): " + "; ".join(left_out)]
    if unmatched:
        lines += ["", "%d row(s) are in one CSV only (other shapes, densities or n)" % unmatched]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
