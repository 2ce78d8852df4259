#!/usr/bin/env python3
"""Score the strided cost model (src/rma/auto.c's formulas) against recorded
`kport-bench strided --format json` runs, offline.

    score.py A B [run.json ...]

A and B name parameter sets: "old" (the built-in defaults before session
24), "new" (after it), or mpich:FILE / ompi:FILE, a calibration's output or
parameter file taken under that MPI (its "rma" object over the old
defaults of that MPI; the other MPI keeps "new").
Without run files: every *.json under docs/bench/strided. For each cell
(run, MPI, op, pattern, chunk bytes, chunks) with direct, datatype and pack
measured, each set's model picks a method; the score is that method's
measured median over the fastest one's. Prints, per set and MPI, the cells,
the worst score and the count above 1.10, and the cells whose pick differs
between A and B.
"""
import glob
import json
import math
import os
import sys
from collections import defaultdict

OLD = {
    "MPICH": dict(t0=872, ts=126, tn=0.0503, tm=0.0375, tc=2.66, tp=4708, td0=1641, td1=4.13, ta0=999, tsa=282,
                  tna=0.203, tda0=1476, tda1=13.2, tdn=0.557, tdna=0.224, tdnb=1.29, tpn=0.0759, tpg=6222,
                  tpgn=0.0703),
    "Open ": dict(t0=251, ts=29.6, tn=0.036, tm=0.0438, tc=2.63, tp=991, td0=348, td1=2.84, ta0=330, tsa=69.9,
                  tna=0.0699, tda0=548, tda1=12.6, tdn=0.0261, tdna=0.0678, tdnb=0.0214, tpn=0.0438, tpg=1302,
                  tpgn=0.0359),
}
NEW = {
    "MPICH": dict(OLD["MPICH"], td0=1650, td1=2.65, tdn=0.864, tpc=7.09, tpn=0.0774, tpgn=0.0700,
                  ta0=981, tsa=282, tna=0.187, tda0=1455, tda1=13.5, tdna=0.210, tdnb=1.24),
    "Open ": dict(OLD["Open "], td0=357, td1=2.86, tdn=0.0240, tpc=6.46, tpn=0.0427, tpgn=0.0357,
                  ta0=321, tsa=69.4, tna=0.0545, tda0=547, tda1=12.9, tdna=0.0513, tdnb=0.0219),
}
KNEE, SLOT = 1 << 20, 65536
METHODS = ("direct", "datatype", "pack")


def cost(p, m, kind, k, n_bytes):
    """auto.c's kp_rma_cost_par; without tpc (before session 24) pack pays 2 tc a chunk."""
    n = math.ceil(n_bytes / SLOT)
    acc = kind == "acc"
    tn = p["tna"] if acc else p["tn"]
    if m == "direct":
        return (p["ta0"] + (k - 1) * p["tsa"] if acc else p["t0"] + (k - 1) * p["ts"]) + tn * n_bytes
    if m == "datatype":
        if acc:
            return p["tda0"] + (k - 1) * p["tda1"] + p["tdna"] * n_bytes + p["tdnb"] * max(0, n_bytes - KNEE)
        return p["td0"] + (k - 1) * p["td1"] + p["tdn"] * n_bytes
    pc = p.get("tpc", 2 * p["tc"])
    if kind == "put":
        return n * p["tp"] + p["tpn"] * n_bytes + pc * k
    if kind == "get":
        return n * p["tpg"] + p["tpgn"] * n_bytes + pc * k
    return n * p["tp"] + tn * n_bytes + 2 * (p["tm"] * n_bytes + p["tc"] * k) + k * p["tsa"]


def param_set(name):
    if name == "old":
        return OLD
    if name == "new":
        return NEW
    which, path = name.split(":", 1)
    mpi = {"mpich": "MPICH", "ompi": "Open "}[which]
    text = open(path).read()
    if text.lstrip().startswith("{"):
        rma = json.loads(text)["rma"]
    else:
        rma = json.loads(text.split('"rma": ', 1)[1].splitlines()[0])
    return dict(NEW, **{mpi: dict(OLD[mpi], **rma)})


def load(paths):
    cells = defaultdict(dict)
    for path in paths:
        for line in open(path):
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("coll") != "strided" or r["variant"] not in METHODS:
                continue
            key = (path, r["mpi"][:5], r["op"], r["pattern"], r["chunk_bytes"], r["chunks"])
            cells[key][r["variant"]] = r["median_us"]
    return {k: v for k, v in cells.items() if len(v) == 3 and k[5] > 1}


def score(name, sets, cells):
    picks, worst, over, n = {}, defaultdict(float), defaultdict(int), defaultdict(int)
    for key, v in cells.items():
        _, mpi, op, _, c, k = key
        p = sets[mpi]
        pick = min(METHODS, key=lambda m: cost(p, m, op, k, c * k))
        picks[key] = pick
        r = v[pick] / min(v.values())
        n[mpi] += 1
        worst[mpi] = max(worst[mpi], r)
        over[mpi] += r > 1.10
    for mpi in sorted(n):
        print("%s %s: %d cells, worst %.2f, %d above 1.10" % (name, mpi.strip(), n[mpi], worst[mpi], over[mpi]))
    return picks


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    runs = argv[2:] or [f for f in glob.glob(os.path.join(os.path.dirname(__file__), "..", "**", "*.json"),
                                             recursive=True) if "params" not in os.path.basename(f)]
    cells = load(runs)
    a = score(argv[0], param_set(argv[0]), cells)
    b = score(argv[1], param_set(argv[1]), cells)
    changed = sorted({(k[1].strip(), k[2], k[4], k[5], a[k], b[k]) for k in cells if a[k] != b[k]})
    print("picks that differ (mpi, op, chunk bytes, chunks, %s, %s): %s" % (argv[0], argv[1], changed or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
