#!/usr/bin/env python3
"""Same-run A/B of two macko-bench CSVs (session 37 on): `ab-compare.py DIR A.csv:B.csv[:LA:LB] ...` prints, per
(density, n, shape) present in both, macko's time in A and B, their ratio B / A and B's speedup over cuBLAS, then per
(density, n) the geomeans of B / A and of both speedups. LA / LB name the two sides (default old / new)."""
import csv
import math
import sys


def load(path):
    try:
        with open(path) as f:
            return {(r['rows'], r['cols'], r['density'], r['n']): r for r in csv.DictReader(f)}
    except (OSError, KeyError) as e:
        print(path, e)
        return {}


def compare(d, spec):
    parts = spec.split(':')
    fa, fb = parts[0], parts[1]
    la, lb = (parts[2], parts[3]) if len(parts) >= 4 else ('old', 'new')
    A, B = load(f"{d}/{fa}"), load(f"{d}/{fb}")
    groups = {}
    for k in sorted(B, key=lambda k: (k[2], int(k[3]), int(k[0]), int(k[1]))):
        if k not in A:
            continue
        ta, tb = float(A[k]['macko_us']), float(B[k]['macko_us'])
        ca, cb = float(A[k]['cublas_us']), float(B[k]['cublas_us'])
        print(k[2], k[3], k[0], k[1], f"{la} {ta:.1f} {lb} {tb:.1f} ratio {tb / ta:.3f} cublas {cb:.1f} "
              f"{lb}-speedup {cb / tb:.3f}", B[k]['status'])
        groups.setdefault((k[2], k[3]), []).append((tb / ta, cb / tb, ca / ta))
    for (dens, n), v in groups.items():
        g = [math.exp(sum(math.log(x[i]) for x in v) / len(v)) for i in range(3)]
        print(f"d {dens} n {n}: {lb}/{la} time {g[0]:.3f}, speedup {lb} {g[1]:.3f} {la} {g[2]:.3f}")


if __name__ == '__main__':
    for spec in sys.argv[2:]:
        compare(sys.argv[1], spec)
