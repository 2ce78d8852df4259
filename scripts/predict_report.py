#!/usr/bin/env python3
"""How well the cost model predicts: per-cell errors of kport-bench --predict.

    mpirun.openmpi -np 2 kport-bench loggp -o p.json
    mpirun.openmpi -np 2 kport-bench allgather --predict p.json -m 8:65536 --format json > run1.jsonl
    scripts/predict_report.py run1.jsonl [run2.jsonl ...] [--markdown] [--min 8] [--max 65536]

A cell is one (MPI, collective, P, algorithm, size) record with both
"median_us" (measured) and "predicted_us" (the model's LogGP time). With
several files (repeated runs, each with its own parameter file or not), a
cell's measured and predicted times are the medians over the runs.

For every cell: ratio = predicted / measured; error = |ratio - 1|
("off by more than 25%": error > 0.25); "off by more than 2x": ratio > 2 or
ratio < 0.5. Per algorithm and over all cells: the median error, the worst
cell (largest max(ratio, 1/ratio)), and how many cells are off by more than
25% and more than 2x; then every cell off by more than 25%, worst first.

The bars: issue 8's, median error <= 15% over all cells and no cell off
by more than 2x; issue 9's, no cell off by more than 25% (for the
all-gather at P = 2, 8 B-64 KiB: --coll allgather --min 8 --max 65536).
The script says whether each is met (exit status 0 either way; 1 only for
unreadable input or no cells).

Python 3 standard library only.
"""

import argparse
import json
import os
import statistics
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from kport_tools import jsonl  # noqa: E402 (tools/kport_tools)


def load(paths, lo, hi, coll):
    cells = OrderedDict()
    for path in paths:
        try:
            f = jsonl.open_input(path)
        except OSError as e:
            sys.exit(f"predict_report: {path}: {e.strerror}")
        with f:
            for n, r, e in jsonl.parse(f, only_objects=True):
                if e is not None:
                    sys.exit(f"predict_report: {path}:{n}: not JSON: {e}")
                if r.get("status") != "ok" or r.get("predicted_us") is None or r.get("median_us") is None:
                    continue
                if coll and r.get("coll") != coll:
                    continue
                size = r.get("size", 0)
                if size < lo or (hi is not None and size > hi):
                    continue
                key = (r.get("mpi", "?"), r.get("coll", "?"), r.get("P", 0), r.get("algorithm", "?"), size)
                c = cells.setdefault(key, ([], []))
                c[0].append(float(r["median_us"]))
                c[1].append(float(r["predicted_us"]))
    out = []
    for key, (meas, pred) in cells.items():
        m, p = statistics.median(meas), statistics.median(pred)
        if m <= 0:
            continue
        out.append((key, m, p, p / m))
    return out


def off(ratio):
    """how far off, as a factor >= 1"""
    return max(ratio, 1 / ratio) if ratio > 0 else float("inf")


def summary(cells):
    errs = [abs(c[3] - 1) for c in cells]
    worst = max(cells, key=lambda c: off(c[3]))
    return {
        "cells": len(cells),
        "median_error": statistics.median(errs),
        "worst": worst,
        "over25": sum(e > 0.25 for e in errs),
        "over2x": sum(c[3] > 2 or c[3] < 0.5 for c in cells),
    }


def sim_report(a, cells):
    """The same cells predicted by kport-sim (--params, all ranks on one
    node as kport-bench runs them): per algorithm the median error and the
    worst cell, then the total; printed before the cost model's tables
    (with --json, not printed: the cells, (key, measured, simulated,
    ratio), are returned for the JSON object)."""
    import subprocess
    files = dict(x.split("=", 1) if "=" in x else ("", x) for x in a.sim_params)
    out, skipped = [], 0
    for key, m, _p, _r in cells:
        mpi, coll, P, alg, size = key
        if alg.split(" (")[0] in ("auto", "native", "memcpy", "sendrecv"):  # run-time choices, references: nothing to simulate
            skipped += 1
            continue
        tag = "ompi" if mpi.lower().startswith("open mpi") else mpi.split()[0].lower() if mpi else ""
        pf = files.get(tag, files.get(""))
        cmd = [a.sim, coll, "-a", alg.split(" (")[0], "-P", str(P), "-m", str(size), "--node-size", str(P),
               "--format", "json", "-q"] + (["--params", pf] if pf else [])
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if r.returncode:
            print(f"# kport-sim: {alg} {size} B: {r.stderr.strip()[:200]}", file=sys.stderr if a.json else sys.stdout)
            continue
        ps = json.loads(r.stdout)["max_time_ns"] / 1e3
        out.append((key, m, ps, ps / m))
    if not out or a.json:
        return out
    groups = OrderedDict()
    for c in out:
        groups.setdefault(c[0][:4], []).append(c)
    print(f"# kport-sim ({a.sim}) on the same cells ({skipped} cells of auto, native, memcpy left out)\n{'# MPI':<16}{'algorithm':<28}{'P':>3}{'cells':>6}"
          f"{'median err':>11}  {'worst cell (size B: sim/meas us = ratio)':<44}{'>25%':>6}{'>2x':>5}")
    for k, g in list(groups.items()) + [(("all", "", "", "all cells"), out)]:
        s = summary(g)
        w = s["worst"]
        wd = f"{w[0][4]}: {w[2]:.3f}/{w[1]:.3f} = {w[3]:.2f}x"
        print(f"{k[0][:15]:<16}{k[3][:27]:<28}{k[2]:>3}{s['cells']:>6}{100 * s['median_error']:>10.1f}%  "
              f"{wd:<44}{s['over25']:>6}{s['over2x']:>5}")
    print()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="kport-bench --format json output (- for stdin)")
    ap.add_argument("--min", type=int, default=0, help="smallest size in bytes (default: all)")
    ap.add_argument("--max", type=int, default=None, help="largest size in bytes (default: all)")
    ap.add_argument("--coll", default=None, help="only this collective")
    ap.add_argument("--markdown", action="store_true", help="markdown tables")
    ap.add_argument("--json", action="store_true", help="one JSON object with the summary and every cell")
    ap.add_argument("--sim", help="kport-sim: predict every cell with it too (a second table)")
    ap.add_argument("--sim-params", action="append", default=[], metavar="[MPI=]FILE",
                    help="parameter file for kport-sim --params; MPI= (ompi, mpich) picks the cells of one build")
    a = ap.parse_args()
    cells = load(a.files, a.min, a.max, a.coll)
    if not cells:
        sys.exit("predict_report: no cell has both a measured median and a prediction")
    sim = sim_report(a, cells) if a.sim else None
    groups = OrderedDict()
    for c in cells:
        groups.setdefault(c[0][:4], []).append(c)
    total = summary(cells)
    if a.json:
        extra = {}
        if sim is not None:
            st = summary(sim) if sim else {"median_error": None, "cells": 0, "over25": 0, "over2x": 0}
            extra["sim"] = {"median_error": st["median_error"], "cells": st["cells"], "over25": st["over25"],
                            "over2x": st["over2x"],
                            "cells_list": [{"mpi": k[0], "coll": k[1], "P": k[2], "algorithm": k[3], "size": k[4],
                                            "measured_us": m, "simulated_us": p, "ratio": r}
                                           for k, m, p, r in sim]}
        print(json.dumps({
            "median_error": total["median_error"], "cells": total["cells"], "over25": total["over25"],
            "over2x": total["over2x"],
            "algorithms": [{"mpi": k[0], "coll": k[1], "P": k[2], "algorithm": k[3], **{
                x: (v if x != "worst" else {"size": v[0][4], "measured_us": v[1], "predicted_us": v[2],
                                             "ratio": v[3]}) for x, v in summary(g).items()}}
                           for k, g in groups.items()],
            "cells_list": [{"mpi": k[0], "coll": k[1], "P": k[2], "algorithm": k[3], "size": k[4],
                            "measured_us": m, "predicted_us": p, "ratio": r} for k, m, p, r in cells],
            **extra,
        }, indent=1))
        return
    md = a.markdown
    if md:
        print("| MPI | algorithm | P | cells | median error | worst cell (size: pred / meas) | > 25% | > 2x |")
        print("|---|---|---|---|---|---|---|---|")
    else:
        print(f"{'# MPI':<16}{'algorithm':<28}{'P':>3}{'cells':>6}{'median err':>11}  "
              f"{'worst cell (size B: pred/meas us = ratio)':<44}{'>25%':>6}{'>2x':>5}")
    for k, g in groups.items():
        s = summary(g)
        w = s["worst"]
        wd = f"{w[0][4]}: {w[2]:.3f}/{w[1]:.3f} = {w[3]:.2f}x"
        if md:
            print(f"| {k[0]} | {k[3]} | {k[2]} | {s['cells']} | {100 * s['median_error']:.1f}% | {wd} | "
                  f"{s['over25']} | {s['over2x']} |")
        else:
            print(f"{k[0][:15]:<16}{k[3][:27]:<28}{k[2]:>3}{s['cells']:>6}{100 * s['median_error']:>10.1f}%  "
                  f"{wd:<44}{s['over25']:>6}{s['over2x']:>5}")
    w = total["worst"]
    met = total["median_error"] <= 0.15 and total["over2x"] == 0
    line = (f"all: {total['cells']} cells, median error {100 * total['median_error']:.1f}%, worst "
            f"{w[0][3]} {w[0][4]} B ({w[3]:.2f}x), {total['over25']} off by > 25%, {total['over2x']} off by > 2x; "
            f"bar (median <= 15%, none > 2x): {'met' if met else 'NOT met'}; "
            f"bar (none > 25%): {'NOT met' if total['over25'] else 'met'}")
    print(("\n" if md else "# ") + line)
    bad = sorted((c for c in cells if abs(c[3] - 1) > 0.25), key=lambda c: -off(c[3]))
    if bad:
        if md:
            print("\n| MPI | algorithm | size (B) | measured (us) | predicted (us) | ratio |")
            print("|---|---|---|---|---|---|")
        else:
            print(f"# cells off by more than 25% (worst first)\n{'# MPI':<16}{'algorithm':<28}{'size':>8}"
                  f"{'meas us':>10}{'pred us':>10}{'ratio':>8}")
        for k, m, p, r in bad:
            if md:
                print(f"| {k[0]} | {k[3]} | {k[4]} | {m:.3f} | {p:.3f} | {r:.2f} |")
            else:
                print(f"{k[0][:15]:<16}{k[3][:27]:<28}{k[4]:>8}{m:>10.3f}{p:>10.3f}{r:>8.2f}")


if __name__ == "__main__":
    main()
