#!/usr/bin/env python3
"""Session 36's check of the tile kernel's split rule (src/tiles_device.c macko_tiles_auto_splits) on shapes it was
not fitted on: reads bench/results/experiments/H100-2026-12-05-s36-tiles-splits-check.csv (rows 'unfitted': the rule
and forced counts 1..16 in one run; another CSV and run name as arguments, e.g. `-s36-tiles-splits-again.csv again`,
where cells without the old rule's count are left out of that ratio) and prints, per (shape, n), the rule's time against the old rule's count (one wave
of block slots, the rule before session 35) and the best count measured. Both rules are written out below for 132 SMs
and the tile kernel's occupancy (4 blocks an SM up to NT = 32, 2 at NT = 64), an ample workspace."""
import csv
import math
import sys


def ntile(n):
    return 8 if n <= 8 else 16 if n <= 16 else 32 if n <= 32 else 64


def geometry(rows, cols, n):
    nt = ntile(n)
    groups = -(-(-(-cols // 16)) // 8)          # 16-column tiles, 8 to a group
    blocks = -(-n // nt) * -(-rows // 128)       # 128 rows a block
    return nt, groups, blocks, (2 if nt == 64 else 4)


def old_rule(rows, cols, n, sms=132):
    nt, groups, blocks, occ = geometry(rows, cols, n)
    return max(1, min(sms * occ // blocks, groups // 4, 64))


def new_rule(rows, cols, n, sms=132):
    nt, groups, blocks, occ = geometry(rows, cols, n)
    ks = 1.5 if nt >= 64 else 2.0
    best, best_cost = 1, None
    for s in range(1, min(64, groups // 4) + 1):
        k = -(-(blocks * s) // sms)
        full, r = divmod(k, occ)
        last = 0.0 if r == 0 else max(r / ks, 1.0)
        cost = (1 + (nt / 8 if s > 1 else 0) + groups / s) * (full * max(occ / ks, 1.0) + last)
        if best_cost is None or cost < best_cost:
            best, best_cost = s, cost
    return best


def main(path, run):
    t = {}
    for r in csv.DictReader(open(path)):
        if r['run'] == run:
            t[(int(r['rows']), int(r['cols']), int(r['n']), r['splits'])] = float(r['macko_us'])
    vs_old, vs_best = [], []
    for rows, cols, n in sorted({k[:3] for k in t}):
        forced = {int(k[3]): v for k, v in t.items() if k[:3] == (rows, cols, n) and k[3] != 'auto'}
        auto = t[(rows, cols, n, 'auto')]
        o, b = old_rule(rows, cols, n), min(forced, key=forced.get)
        old = f'{forced[o]:.1f} us' if o in forced else 'not run'
        print(f'{rows}x{cols} n={n}: rule {new_rule(rows, cols, n)} splits {auto:.1f} us, old rule {o} splits {old}, '
              f'best {b} splits {forced[b]:.1f} us')
        if o in forced:
            vs_old.append(auto / forced[o])
        vs_best.append(auto / forced[b])
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    print(f'rule / old rule: geomean {g(vs_old):.3f}, max {max(vs_old):.3f}; rule / best: geomean {g(vs_best):.3f}, '
          f'max {max(vs_best):.3f} ({len(vs_old)} / {len(vs_best)} cells)')


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'bench/results/experiments/H100-2026-12-05-s36-tiles-splits-check.csv',
         sys.argv[2] if len(sys.argv) > 2 else 'unfitted')
