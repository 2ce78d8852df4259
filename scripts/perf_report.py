#!/usr/bin/env python3
"""perf_report.py: write docs/PERFORMANCE.md from the raw results in docs/bench/.

    python3 scripts/perf_report.py            # (re)writes docs/PERFORMANCE.md   (make report)
    python3 scripts/perf_report.py --check    # exit 1 when docs/PERFORMANCE.md differs from what it would write
    python3 scripts/perf_report.py -o -       # to standard output

Every table is computed here from the files under docs/bench/ (their layout,
commands and commits: docs/bench/README.md); the prose is the TEMPLATE below,
whose {{name}} markers are replaced by generated tables and numbers. To
refresh a set of results, replace its files under docs/bench/ (same names),
update docs/bench/README.md and the prose that quotes the machine's state,
and run `make report`. The output depends only on those files: running it
twice gives the same document.

Uses scripts/predict_report.py (the cost model's errors) and tools/kport-tune
(the decision file); Python 3 standard library only.

Over 1,000 lines because of the TEMPLATE: its 650 lines are the report's
prose, one document kept in one place; the code above it is about 700
(the section on real hosts has its code in scripts/perf_cluster.py, the
one on broadcast, scatter and the reductions in scripts/perf_reductions.py).
"""

import argparse
import importlib.util
import json
import math
import os
import re
import statistics
import subprocess
import sys
from collections import OrderedDict, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from kport_tools.jsonl import load_objects as jsonl  # noqa: E402 (tools/kport_tools: the shared JSON-lines reader)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [1 << i for i in range(21)]
MPIS = (("ompi", "Open MPI"), ("mpich", "MPICH"))
REFS = ("native", "memcpy", "sendrecv", "bw_limit")
# the sizes of the shorter tables (back to back, oversubscribed)
SHOWN = (1, 8, 64, 256, 1024, 4096, 8192, 16384, 65536, 262144, 1 << 20)


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def size_name(s):
    if s >= 1 << 20 and s % (1 << 20) == 0:
        return "%d MiB" % (s >> 20)
    if s >= 1024 and s % 1024 == 0:
        return "%d KiB" % (s >> 10)
    return "%d B" % s


def us(v):
    if v is None:
        return "-"
    return "%.2f" % v if v < 1000 else "%.0f" % v


def ratio(v, lose_mark=True):
    if v is None:
        return "-"
    t = "%.2fx" % v
    return "**%s**" % t if lose_mark and v > 1.005 else t


def table(headers, rows, left=1):
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join(":---" if i < left else "---:" for i in range(len(headers))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)


def base(alg):
    """'direct:k=1 (k=2 clamped: P=2)' -> 'direct:k=1'"""
    return alg.split(" (")[0]


def column(r):
    return "auto" if r.get("requested") == "auto" else base(r["algorithm"])


def tag(mpi):
    return "ompi" if mpi.lower().startswith("open mpi") else "mpich"


class Runs:
    """Medians of kport-bench records: (mpi tag, column, size) -> median of the runs' medians."""

    def __init__(self, paths, mode="isolated"):
        self.v = defaultdict(list)
        self.ran = defaultdict(set)
        self.cols = OrderedDict()
        self.sizes = set()
        for p in paths:
            for r in jsonl(p):
                if r.get("status") != "ok" or r.get("median_us") is None:
                    continue
                if (r.get("mode") or "isolated") != mode:
                    continue
                t, c = tag(r["mpi"]), column(r)
                self.v[(t, c, r["size"])].append(r["median_us"])
                if c == "auto" and r.get("ran"):
                    self.ran[(t, r["size"])].add(r["ran"])
                self.cols.setdefault((t, c), None)
                self.sizes.add(r["size"])

    def get(self, t, c, s):
        x = self.v.get((t, c, s))
        return statistics.median(x) if x else None

    def best_native(self, s, tags=("ompi", "mpich")):
        xs = [self.get(t, "native", s) for t in tags]
        xs = [x for x in xs if x is not None]
        return min(xs) if xs else None

    def algs(self, t):
        return [c for (tt, c) in self.cols if tt == t and c not in REFS and c != "auto"]


def rel(path):
    return os.path.relpath(path, ROOT)


# ---------------------------------------------------------------- collectives

def algorithm_table(R, tags, memcpy=True):
    """every algorithm of each build, the fastest kport one of each size in bold, then per build kport's
    default over the better native (of both builds) and the memcpy reference"""
    names = dict(MPIS)
    cols = []
    for t in tags:
        cols += [(t, "native")] + [(t, a) for a in R.algs(t)] + [(t, "auto")]
    pre = lambda t: ("%s " % names[t]) if len(tags) > 1 else ""  # noqa: E731
    h = ["Size"] + [pre(t) + c for t, c in cols] + ["%sauto / best native" % pre(t) for t in tags]
    memcpy = memcpy and any(R.get(tags[0], "memcpy", s) is not None for s in R.sizes)
    if memcpy:
        h.append("memcpy")
    rows = []
    for s in sorted(R.sizes):
        best = {}
        for t in tags:
            xs = [(R.get(t, a, s), a) for a in R.algs(t) if R.get(t, a, s) is not None]
            best[t] = min(xs)[1] if xs else None
        row = [size_name(s) if s else "-"]
        for t, c in cols:
            x = us(R.get(t, c, s))
            row.append("**%s**" % x if c == best[t] else x)
        b = R.best_native(s)
        for t in tags:
            a = R.get(t, "auto", s)
            row.append(ratio(a / b if a is not None and b else None))
        if memcpy:
            row.append(us(R.get(tags[0], "memcpy", s)))
        rows.append(row)
    return table(h, rows)


def bands(R, t, bands_=((1, 1024), (2048, 65536), (131072, 1 << 20))):
    out = []
    for lo, hi in bands_:
        rs = [R.get(t, "auto", s) / R.best_native(s) for s in sorted(R.sizes)
              if lo <= s <= hi and R.get(t, "auto", s) is not None and R.best_native(s)]
        out.append(rs)
    return out


def summary_table(sets):
    h = ["Collective (P = 2)", "MPI build", "sizes faster than the better native", "1 B-1 KiB", "2-64 KiB",
         "128 KiB-1 MiB", "worst size"]
    rows = []
    for name, R in sets:
        for t, mname in MPIS:
            if not any(R.get(t, "auto", s) for s in R.sizes):
                continue
            rs = {s: R.get(t, "auto", s) / R.best_native(s) for s in sorted(R.sizes)
                  if R.get(t, "auto", s) is not None and R.best_native(s)}
            faster = sum(1 for v in rs.values() if v < 1)
            if 0 in rs:  # the barrier: one row
                rows.append([name, mname, "%d of 1" % faster, ratio(rs[0]), "", "", ""])
                continue
            cells = []
            for rr in bands(R, t):
                cells.append("%.2f-%.2fx" % (min(rr), max(rr)) if rr else "-")
            w = max(rs, key=lambda s: rs[s])
            rows.append([name, mname, "%d of %d" % (faster, len(rs))] + cells +
                        ["%s (%s)" % (size_name(w), ratio(rs[w]))])
    return table(h, rows, left=2)


def pair_table(pairs, colls, tags):
    """back to back beside isolated: cells 'iso / b2b' of kport's default over the better native of the
    same picture"""
    names = dict(MPIS)
    h = ["Size"] + ["%s %s" % (c, names[t]) for c in colls for t in tags]
    sizes = [x for x in sorted(set().union(*(pairs[c][0].sizes for c in colls))) if x in SHOWN or not x]
    rows = []
    for s in sizes:
        row = [size_name(s)]
        for c in colls:
            iso, b2b = pairs[c]
            for t in tags:
                vals = []
                for R in (iso, b2b):
                    a, b = R.get(t, "auto", s), R.best_native(s, tags)
                    vals.append("%.2f" % (a / b) if a is not None and b else "-")
                row.append(" / ".join(vals))
        rows.append(row)
    return table(h, rows)


# ---------------------------------------------------------------- predictions

def parse_sim(path):
    """kport-sim's per-algorithm rows of a predict_report.py --sim text output (fixed columns)."""
    out = {}
    insim = False
    with open(path) as f:
        for line in f:
            if line.startswith("# kport-sim"):
                insim = True
                continue
            if insim and not line.strip():
                break
            if insim and not line.startswith("#"):
                m = re.match(r"(.{16})(.{28})(.{3})\s*(\d+)\s+([\d.]+)%\s+(\d+): ([\d.]+)/([\d.]+) = ([\d.]+)x\s+(\d+)\s+(\d+)",
                             line.rstrip("\n"))
                if m:
                    out[(m.group(1).strip(), m.group(2).strip())] = {
                        "cells": int(m.group(4)), "err": float(m.group(5)) / 100, "size": int(m.group(6)),
                        "ratio": float(m.group(9)), "over25": int(m.group(10)), "over2x": int(m.group(11))}
    return out


def prediction_table(files, simtxt):
    pr = load_module("predict_report", os.path.join(ROOT, "scripts", "predict_report.py"))
    cells = pr.load(files, 8, 65536, "allgather")
    sim = parse_sim(simtxt)
    groups = OrderedDict()
    for c in cells:
        groups.setdefault((tag(c[0][0]), base(c[0][3])), []).append(c)
    algs = list(OrderedDict.fromkeys(a for _, a in groups))
    h = ["Algorithm"]
    for _, m in MPIS:
        h += ["%s model: median error, worst" % m, "%s kport-sim" % m]
    rows = []
    for a in algs:
        row = [a]
        for t, m in MPIS:
            g = groups.get((t, a))
            if not g:
                row += ["-", "-"]
                continue
            s = pr.summary(g)
            w = s["worst"]
            row.append("%.1f %%, %.2fx at %s" % (100 * s["median_error"], w[3], size_name(w[0][4])))
            full = g[0][0][0]
            sm = next((v for (mm, aa), v in sim.items() if mm == full[:15].strip() and
                       (g[0][0][3][:27].strip() == aa)), None)
            row.append("%.1f %%, %.2fx at %s" % (100 * sm["err"], sm["ratio"], size_name(sm["size"]))
                       if sm else "- (no schedule)")
        rows.append(row)
    tot = pr.summary(cells)
    simall = sim.get(("all", "all cells"))
    line = ("All cells: the cost model %d cells, median error %.1f %%, %d off by more than 25 %%, %d by more than 2x"
            % (tot["cells"], 100 * tot["median_error"], tot["over25"], tot["over2x"]))
    if simall:
        line += "; kport-sim %d cells, median error %.1f %%, %d off by more than 25 %%, %d by more than 2x" % (
            simall["cells"], 100 * simall["err"], simall["over25"], simall["over2x"])
    return table(h, rows), line + "."


# ---------------------------------------------------------------- the machine

def params_tables(pfiles):
    h = ["MPI", "piece (bytes)", "L", "o_s", "o_r", "g", "G", "O", "X", "XG"]
    rows = []
    for t, m in MPIS:
        p = json.load(open(pfiles[t]))
        lo = 1
        for i, x in enumerate(p["p2p"]["intra"]["pieces"]):
            hi = x["max_bytes"]
            rng = "%s-%s" % (size_name(lo), size_name(hi)) if hi > 0 else "above %s" % size_name(lo - 1)
            rows.append([m if i == 0 else "", rng] + ["%.0f" % x[k] for k in ("L", "o_s", "o_r", "g")] +
                        ["%.3f" % x[k] for k in ("G", "O")] + ["%.0f" % x.get("X", 0), "%.3f" % x.get("XG", 0)])
            lo = hi + 1 if hi > 0 else lo
    t1 = table(h, rows, left=2)
    h = ["MPI", "flag", "copy in", "copy out", "memcpy", "single-copy read", "single-copy write", "data line",
         "call", "skew"]
    rows = []
    for t, m in MPIS:
        p = json.load(open(pfiles[t]))
        s = p["shm"]

        def lin(c):
            return "%.0f + %.3f/B" % (c["fixed"], c["per_byte"])
        mc = s["memcpy"]
        mtxt = lin(mc) + (" (%.3f/B above %s)" % (mc["large_per_byte"], size_name(mc["large_from"]))
                          if mc.get("large_from") else "")
        rows.append([m, "%.0f" % s["flag"]["fixed"], lin(s["copy_in"]), lin(s["copy_out"]), mtxt,
                     lin(s["peer_read"]), lin(s["peer_write"]), "%.0f" % s["data_line"]["fixed"],
                     "%.0f" % p["call"]["fixed"], "%.0f" % p["call"]["skew"]])
    return t1, table(h, rows)


def steady_line(pfiles, afiles):
    parts = []
    for t, m in MPIS:
        a, b = json.load(open(pfiles[t])), json.load(open(afiles[t]))

        def ow(p):
            x = p["p2p"]["intra"]["pieces"][0]
            return x["o_s"] + x["L"] + x["o_r"]
        parts.append("%s flag %.0f -> %.0f ns, one-way 1 B message %.0f -> %.0f ns" % (
            m, a["shm"]["flag"]["fixed"], b["shm"]["flag"]["fixed"], ow(a), ow(b)))
    return "; ".join(parts)


def fanout_table(p2files, p8file):
    rows = []
    recs = defaultdict(list)
    for p in p2files:
        for r in jsonl(p):
            recs[(tag(r["mpi"]), "P = 2 run (3 runs)", r["P"], r["size"])].append(r)
    for r in jsonl(p8file):
        recs[(tag(r["mpi"]), "P = 8 run, oversubscribed", r["P"], r["size"])].append(r)
    keys = sorted(set(k[:3] for k in recs), key=lambda k: (k[1], k[0] != "ompi", k[2]))
    names = dict(MPIS)
    for k in keys:
        row = [names[k[0]], k[1], str(k[2])]
        for s in (8, 1024, 65536):
            rs = recs.get(k + (s,), [])
            if not rs:
                row.append("-")
                continue
            me = statistics.median(r["rtt_per_p_us"] for r in rs)
            pr = statistics.median(r["predicted_per_p_us"] for r in rs)
            row.append("%.3f / %.3f" % (me, pr))
        rows.append(row)
    return table(["MPI", "run", "P", "8 B: measured / predicted", "1 KiB", "64 KiB"], rows, left=2)


# ---------------------------------------------------------------- defaults, thresholds, tuning

def near(a, b):
    # auto_report.py's bar: within 10 % or 0.05 us of the best kport algorithm (in 0.001 us units)
    return round(a * 1000) <= round(b * 1100) or round((a - b) * 1000) <= 50


def auto_table(sets):
    h = ["Collective", "MPI build", "runs", "sizes", "auto near the best kport algorithm in every run",
         "median auto at or below the better native", "misses (size: auto / best, run)"]
    rows = []
    for name, paths in sets:
        per = defaultdict(list)
        for p in paths:
            per[os.path.basename(p).split("-")[1]].append(Runs([p]))
        allr = Runs(paths)
        for t, m in MPIS:
            runs = per.get(t, [])
            if not runs:
                continue
            sizes = sorted(allr.sizes)
            nearc = below = 0
            miss = []
            for s in sizes:
                ok = True
                for i, R in enumerate(runs):
                    a = R.get(t, "auto", s)
                    xs = [(R.get(t, c, s), c) for c in R.algs(t) if R.get(t, c, s) is not None]
                    if a is None or not xs:
                        continue
                    b, c = min(xs)
                    if not near(a, b):
                        ok = False
                        miss.append("%s: %.2f / %.2f %s, %d" % (size_name(s) if s else "-", a, b, c, i + 1))
                nearc += ok
                a = allr.get(t, "auto", s)
                nb = allr.best_native(s)
                below += a is not None and nb is not None and a <= nb
            rows.append([name, m, str(len(runs)), str(len(sizes)), str(nearc), str(below), "; ".join(miss) or "none"])
    return table(h, rows, left=2)


def threshold_table(sets):
    names = dict(MPIS)
    h = ["Size"]
    cols = []
    for name, R, two in sets:
        for t, m in MPIS:
            h.append("%s %s: %s / single copy (auto ran)" % (name, m, two))
            cols.append((R, two, t))
    rows = []
    for s in [1 << i for i in range(10, 18)]:
        row = [size_name(s)]
        for R, two, t in cols:
            a, b = R.get(t, two, s), R.get(t, "shm_single_copy", s)
            ran = sorted(R.ran.get((t, s), []))
            which = "/".join("single" if "single" in x else "two" for x in ran) or "?"
            row.append("%s / %s (%s)" % (us(a), us(b), which))
        rows.append(row)
    del names
    return table(h, rows)


def tune_table(files):
    cmd = [sys.executable, os.path.join(ROOT, "tools", "kport-tune"), "--from-bench"] + files + ["-q"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=True)
    rules = json.loads(out.stdout)["rules"]
    rows = []
    for r in rules:
        lo, hi = r.get("bytes", (None, None))
        rng = "any" if lo is None else ("%d-%d" % (lo, hi) if hi is not None else "%d and above" % lo)
        rows.append([r["collective"], rng, "`%s`" % r["algorithm"], r.get("comment", "")])
    return table(["Collective", "bytes per rank", "algorithm", "kport-tune's comment"], rows, left=3)


# ---------------------------------------------------------------- strided

def strided(paths):
    cells = defaultdict(lambda: defaultdict(list))
    ran = defaultdict(set)
    nruns = defaultdict(set)
    bad = 0
    for p in paths:
        for r in jsonl(p):
            key = (tag(r["mpi"]), r["op"], r["pattern"], r["shape"], r["chunk_bytes"], r["chunks"])
            cells[key][r["variant"]].append(r["median_us"])
            nruns[key[0]].add(p)
            if r["variant"] == "auto":
                ran[key].add(r["ran"])
            bad += r.get("errors", 0) + (r.get("status") != "ok") + (r.get("validated") is not True)
    return cells, ran, {k: len(v) for k, v in nruns.items()}, bad


def strided_tables(paths):
    cells, ran, nruns, bad = strided(paths)
    out = {}
    for t, m in MPIS:
        keys = [k for k in cells if k[0] == t and k[2] == "one"]
        shapes = list(OrderedDict.fromkeys(k[3:] for k in keys))
        rows = []
        for sh in shapes:
            row = [sh[0], "%s x %d" % (size_name(sh[1]), sh[2])]
            for op in ("put", "get", "acc"):
                k = (t, op, "one") + sh
                if k not in cells:
                    row += ["-", "-"]
                    continue
                v = {x: statistics.median(y) for x, y in cells[k].items()}
                row.append("%s (%s)" % (us(v["auto"]), "/".join(sorted(ran[k]))))
                row.append(ratio(v["armci"] / v["auto"], lose_mark=False) if v.get("armci") else "-")
            rows.append(row)
        out["strided_" + t] = table(["shape", "chunk x chunks", "put: auto (ran)", "ARMCI-MPI / auto",
                                     "get: auto (ran)", "ARMCI-MPI / auto", "acc: auto (ran)", "ARMCI-MPI / auto"],
                                    rows, left=2)
        # over every cell of both patterns: auto against the best fixed method, ARMCI-MPI against auto
        worst, wk, low, lk = 0, None, 1e9, None
        for k, vv in cells.items():
            if k[0] != t:
                continue
            v = {x: statistics.median(y) for x, y in vv.items()}
            bestm = min(("direct", "datatype", "pack"), key=lambda x: v.get(x, 1e18))
            r = v["auto"] / v[bestm]
            if ran[k] != {bestm} and r > worst:
                worst, wk = r, k
            if v.get("armci") and v["armci"] / v["auto"] < low:
                low, lk = v["armci"] / v["auto"], k
        out["strided_%s_runs" % t] = str(nruns.get(t, 0))
        out["strided_%s_worst" % t] = (
            "at most %.2fx the best fixed method where it ran another one (%s %s, %s %s x %d)" % (
                worst, wk[1], wk[2], wk[3], size_name(wk[4]), wk[5]) if wk else
            "the fastest fixed method in every cell")
        out["strided_%s_armci_min" % t] = "%.2fx (%s %s, %s %s x %d)" % (low, lk[1], lk[2], lk[3], size_name(lk[4]),
                                                                        lk[5])
    out["strided_bad"] = str(bad)
    return out


def srumma(path):
    t = defaultdict(list)
    for line in open(path):
        m = re.search(r"method=(\w+) time_ms=([\d.]+)", line)
        if m:
            t[m.group(1)].append(float(m.group(2)))
    return "%.1f ms against %.1f ms (medians of %d runs each)" % (
        statistics.median(t["auto"]), statistics.median(t["armci"]), len(t["auto"]))


# ---------------------------------------------------------------- one-sided transport

def rma_tables(tfiles, nfiles):
    out = {}
    for t, m in MPIS:
        R = defaultdict(list)
        for p in tfiles:
            if "-%s-" % t not in os.path.basename(p):
                continue
            for r in jsonl(p):
                if r.get("status") != "ok" or r.get("median_us") is None:
                    continue
                a = r["algorithm"]
                tr = "rma" if "transport=rma" in a else "p2p"
                b = re.sub(r",?transport=rma,rails=1,stripe_kb=64", "", base(a)).rstrip(":")
                R[(b, tr, r["size"])].append(r["median_us"])
        med = {k: statistics.median(v) for k, v in R.items()}
        algs = list(OrderedDict.fromkeys(k[0] for k in R if k[0] not in ("native", "memcpy", "auto")))
        sizes = sorted(set(k[2] for k in R))
        show = [8, 1024, 16384, 65536, 1 << 20]
        rows = [["native"] + [us(med.get(("native", "p2p", s))) for s in show] + [""]]
        for a in algs:
            row = [a]
            logs = []
            for s in sizes:
                x, y = med.get((a, "p2p", s)), med.get((a, "rma", s))
                if x and y:
                    logs.append(math.log(y / x))
            for s in show:
                x, y = med.get((a, "p2p", s)), med.get((a, "rma", s))
                row.append("%s / %s (%.2f)" % (us(x), us(y), y / x) if x and y else "-")
            row.append("%.2f" % math.exp(sum(logs) / len(logs)) if logs else "-")
            rows.append(row)
        out["rma_" + t] = table(["algorithm"] + [size_name(s) for s in show] + ["geo. mean rma / p2p"], rows)
        # the transport's own costs (kport-bench rma)
        N = defaultdict(list)
        for p in nfiles:
            if "-%s-" % t not in os.path.basename(p):
                continue
            for r in jsonl(p):
                if r.get("status") != "ok":
                    continue
                N[(r["what"], r.get("notify"), r["size"])].append(r["median_us"])
        kinds = sorted(set((w, n) for (w, n, _) in N if w in ("put", "message", "p2p")),
                       key=lambda x: (("put", "message", "p2p").index(x[0]), x[1] or ""))
        hdr = ["size"] + ["%s%s" % (w, " (%s)" % n if n else "") for w, n in kinds]
        rows = []
        for s in sorted(set(k[2] for k in N if k[0] != "notify") & {8, 64, 512, 4096, 16384, 65536}):
            rows.append([size_name(s)] + [us(statistics.median(N[(w, n, s)])) if N.get((w, n, s)) else "-"
                                          for w, n in kinds])
        out["rmacost_" + t] = table(hdr, rows)
        out["notify_" + t] = ", ".join("%s %.2f us" % (n, statistics.median(v)) for (w, n, s), v in sorted(N.items())
                                       if w == "notify")
    return out


# ---------------------------------------------------------------- simulator

def sim_table(path):
    recs = jsonl(path)
    best = {}
    for r in recs:
        k = (r["coll"], base(r["algorithm"]), r["bytes"])
        if k not in best or r["P"] > best[k]["P"]:
            best[k] = r
    rows = []
    for k in sorted(best):
        r = best[k]
        if r["P"] < 1024:  # the SMP lines' clamped small-P runs
            continue
        rows.append([k[0], "`%s`" % k[1], size_name(k[2]) if k[2] else "-", str(r["node_size"]),
                     "{:,}".format(r["P"]), us(r["max_time_ns"] / 1e3), "{:,}".format(r["events"]),
                     "%.1f" % r["wall_s"], "%.1f" % (r["events_per_s"] / 1e6)])
    return table(["collective", "algorithm", "size", "ranks per node", "largest P run", "simulated time (us)",
                  "events", "wall time (s)", "M events/s"], rows, left=3), len(recs)


# ---------------------------------------------------------------- the document

def generate(bench):
    B = lambda *p: os.path.join(bench, *p)  # noqa: E731
    v = {}
    ag = Runs([B("allgather-p2", "allgather-%s-p2.jsonl" % t) for t, _ in MPIS])
    coll = {c: Runs([B("collectives-p2", "%s-%s-p2-run%d.jsonl" % (c, t, i)) for t, _ in MPIS for i in (1, 2, 3)])
            for c in ("gather", "alltoall", "barrier")}
    v["allgather_algs_ompi"] = algorithm_table(ag, ("ompi",))
    v["allgather_algs_mpich"] = algorithm_table(ag, ("mpich",))
    for c in ("gather", "alltoall"):
        v[c + "_algs"] = algorithm_table(coll[c], ("ompi", "mpich"))
    v["barrier_algs"] = algorithm_table(coll["barrier"], ("ompi", "mpich"))
    # back to back
    bb = {}
    for c in ("allgather", "gather", "alltoall", "barrier"):
        files = [B("backtoback-p2", "%s-%s-p2.jsonl" % (c, t)) for t, _ in MPIS]
        bfiles = [B("backtoback-p2", "%s-%s-p2-b2b8.jsonl" % (c, t)) for t, _ in MPIS]
        bb[c] = (Runs(files), Runs(bfiles, mode="b2b"))
    v["b2b_p2"] = pair_table(bb, ("allgather", "gather", "alltoall"), ("ompi", "mpich"))
    v["b2b_p2_barrier"] = pair_table(bb, ("barrier",), ("ompi", "mpich")).split("\n")[-1].split("|")
    v["b2b_p2_barrier"] = "Open MPI %s, MPICH %s" % (v["b2b_p2_barrier"][2].strip(), v["b2b_p2_barrier"][3].strip())
    p4 = {}
    for c in ("allgather", "gather", "alltoall", "barrier"):
        p4[c] = (Runs([B("oversubscribed-p4", "%s-ompi-p4.jsonl" % c)]),
                 Runs([B("oversubscribed-p4", "%s-ompi-p4-b2b8.jsonl" % c)], mode="b2b"))
    v["p4"] = pair_table(p4, ("allgather", "gather", "alltoall"), ("ompi",))
    last = pair_table(p4, ("barrier",), ("ompi",)).split("\n")[-1].split("|")
    v["p4_barrier"] = last[2].strip()
    _p4_native = table(["Size"] + ["%s native (us)" % c for c in ("allgather", "gather", "alltoall")] +
                           ["%s kport (us)" % c for c in ("allgather", "gather", "alltoall")],
                           [[size_name(s)] + [us(p4[c][0].get("ompi", "native", s)) for c in ("allgather", "gather", "alltoall")] +
                            [us(p4[c][0].get("ompi", "auto", s)) for c in ("allgather", "gather", "alltoall")]
                            for s in (1, 1024, 65536, 1 << 20)])
    # predictions
    v["predict"], v["predict_all"] = prediction_table(
        [B("allgather-p2", "allgather-%s-p2.jsonl" % t) for t, _ in MPIS], B("allgather-p2", "predict.txt"))
    # the machine
    pf = {t: B("allgather-p2", "params-%s.json" % t) for t, _ in MPIS}
    v["loggp"], v["shm"] = params_tables(pf)
    v["steady"] = steady_line(pf, {t: B("allgather-p2", "params-%s-after.json" % t) for t, _ in MPIS})
    v["fanout"] = fanout_table([B("collectives-p2", "fanout-%s-p2-run%d.jsonl" % (t, i)) for t, _ in MPIS
                                for i in (1, 2, 3)], B("fanout", "fanout-ompi-p8.jsonl"))
    # defaults (the table of auto against the best algorithm: below, with the new collectives)
    v["thresholds"] = threshold_table([("all-gather", ag, "shm_flat:chunk_kb=0"), ("gather", coll["gather"], "smp"),
                                       ("all-to-all", coll["alltoall"], "shm_flat:chunk_kb=0")])
    v["tune"] = tune_table([B("allgather-p2", "allgather-ompi-p2.jsonl")] +
                           [B("collectives-p2", "%s-ompi-p2-run%d.jsonl" % (c, i)) for c in ("gather", "alltoall", "barrier")
                            for i in (1, 2, 3)])
    # strided
    v.update(strided_tables([B("strided", f) for f in sorted(os.listdir(B("strided"))) if f.startswith("final-")]))
    v["srumma_ompi"] = srumma(B("strided", "srumma-ompi.txt"))
    v["srumma_mpich"] = srumma(B("strided", "srumma-mpich.txt"))
    # one-sided transport
    v.update(rma_tables([B("rma", f) for f in sorted(os.listdir(B("rma"))) if f.startswith("table-")],
                        [B("rma", f) for f in sorted(os.listdir(B("rma"))) if f.startswith("notify-")]))
    # broadcast, scatter and the reductions (issue 37): scripts/perf_reductions.py
    red, red_sets = load_module("perf_reductions", os.path.join(ROOT, "scripts", "perf_reductions.py")).generate(
        bench, sys.modules[__name__])
    v.update(red)
    v["summary"] = summary_table([("all-gather", ag), ("gather (root 0)", coll["gather"]),
                                  ("all-to-all", coll["alltoall"]), ("barrier", coll["barrier"])] +
                                 [(n, R) for n, R, _ in red_sets])
    v["auto"] = auto_table([("all-gather", [B("allgather-p2", "allgather-%s-p2.jsonl" % t) for t, _ in MPIS])] +
                           [(n, [B("collectives-p2", "%s-%s-p2-run%d.jsonl" % (c, t, i)) for t, _ in MPIS
                                 for i in (1, 2, 3)])
                            for c, n in (("gather", "gather"), ("alltoall", "all-to-all"), ("barrier", "barrier"))] +
                           [(n, paths) for n, _, paths in red_sets])
    # across real hosts (issue 40): scripts/perf_cluster.py
    v.update(load_module("perf_cluster", os.path.join(ROOT, "scripts", "perf_cluster.py")).generate(
        bench, sys.modules[__name__]))
    # simulator
    v["sim"], v["sim_runs"] = sim_table(B("sim", "sim.jsonl"))
    v["sim_runs"] = str(v["sim_runs"])
    # numbers quoted in the prose
    v["ag8_ompi"] = us(ag.get("ompi", "auto", 8))
    v["ag8_mpich"] = us(ag.get("mpich", "auto", 8))
    v["ag8_native"] = us(ag.best_native(8))
    v["ag1m"] = us(ag.get("ompi", "auto", 1 << 20))
    v["ag1m_native"] = us(ag.best_native(1 << 20))
    v["ag1m_memcpy"] = us(ag.get("ompi", "memcpy", 1 << 20))
    v["bar_ompi"] = us(coll["barrier"].get("ompi", "auto", 0))
    v["bar_native"] = us(coll["barrier"].best_native(0))
    rs = [ag.get(t, "smp_bruck:k=1", s) / ag.get(t, "shm_flat:chunk_kb=0", s) for t, _ in MPIS
          for s in (262144, 524288, 1 << 20)]
    v["smp_vs_flat"] = "%.2f-%.2fx" % (min(rs), max(rs))
    v["ag1m_smp"] = us(ag.get("ompi", "smp_bruck:k=1", 1 << 20))
    v["ag1m_flat"] = us(ag.get("ompi", "shm_flat:chunk_kb=0", 1 << 20))
    v["gather_ompi_native_2k"] = us(coll["gather"].get("ompi", "native", 2048))
    v["gather_ompi_native_4k"] = us(coll["gather"].get("ompi", "native", 4096))
    v["ag4k_ompi_native"] = us(ag.get("ompi", "native", 4096))
    v["ag4k_mpich_native"] = us(ag.get("mpich", "native", 4096))

    def sub(m):
        key = m.group(1)
        if key not in v:
            raise KeyError("perf_report: no value for {{%s}}" % key)
        return v[key]
    text = re.sub(r"\{\{(\w+)\}\}", sub, TEMPLATE.lstrip("\n"))
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "docs", "bench"), help="the raw results (docs/bench)")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "docs", "PERFORMANCE.md"),
                    help="the document to write ('-': standard output)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when the output file differs")
    a = ap.parse_args()
    text = generate(a.bench)
    if a.check:
        try:
            old = open(a.output, encoding="utf-8").read()
        except OSError as e:
            sys.exit("perf_report: %s" % e)
        if old != text:
            import difflib
            d = list(difflib.unified_diff(old.splitlines(), text.splitlines(), rel(a.output), "generated", lineterm=""))
            sys.stdout.write("\n".join(d[:60]) + "\n")
            print("perf_report: %s is not what scripts/perf_report.py writes from %s (run make report)"
                  % (rel(a.output), rel(a.bench)), file=sys.stderr)
            return 1
        print("perf_report: %s matches %s" % (rel(a.output), rel(a.bench)))
        return 0
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


TEMPLATE = r"""
<!-- Generated by scripts/perf_report.py from the raw results in docs/bench/ (make report). Do not edit by hand: change the script's TEMPLATE or the data, then run make report. -->
# kport performance

How fast kport's collectives and tools are on the project's machine, how
each number was produced, and where kport loses and why. Every table below
is computed by `scripts/perf_report.py` from the raw results under
`docs/bench/`, which `docs/bench/README.md` lists file by file with the
command, the commit and the machine that produced it; `make report`
regenerates this file and `python3 scripts/perf_report.py --check` says
whether it is current. How the numbers moved over time is in `git log`,
not here.

**The machine.** A 2-core virtual machine (`/proc/cpuinfo`: AMD EPYC, one
NUMA node), Debian 12, Open MPI 4.1.4 and MPICH 4.0.2 from Debian's
packages, builds as `make build` makes them (`RelWithDebInfo`). Other
engineers' builds and tests share the two cores, and the VM changes state
for minutes at a time (in its slow state a shared-memory flag takes several
times what the parameter files below record). A second run moves medians by
several per cent: compare ratios within one table, not absolute times
across tables. P = 2
means both ranks on one node, so kport's shared-memory algorithms are the
ones that run by default.

## How the numbers are made

`make bench` (`scripts/bench.sh`) runs, per MPI build,
`kport-bench loggp` (the machine's parameters), then every collective:

```sh
mpirun.openmpi -np 2 --oversubscribe --bind-to none build/ompi/kport-bench allgather --predict params-ompi.json --sendrecv --format json
mpiexec.mpich -n 2 build/mpich/kport-bench allgather --predict params-mpich.json --sendrecv --format json
# ... and gather, alltoall, barrier, bcast, scatter, reduce, allreduce, reduce_scatter_block,
# reduce_scatter (the reductions in double with MPI_SUM; allreduce with its bw_limit column);
# then the back-to-back runs (--b2b 8) and the fan-out
python3 scripts/bench_report.py build/bench/*.jsonl        # the combined tables
```

Each timed call starts from a start line (a barrier of shared-memory flags
when the ranks share a host, the same code in both builds), then `t0`, one
call, `t1`; an iteration's time is the maximum over ranks, a cell is the
median over 1000 iterations (100 above 64 KiB). The algorithms and sizes
take turns in 10 rounds, so a slow phase of the machine falls on every
column alike. `native` is the MPI's own collective, `auto` kport's default
choice, `memcpy` a reference: every rank copies as many bytes as its
receive buffer holds. A ratio is kport's median over the better (smaller)
of the two native medians of the same size, whichever build it came from;
below 1.00x kport is faster, and ratios above 1.00x are in bold.

The all-gather's predictions are judged, so `make bench` measures the
machine again right after each build's all-gather and measures both again
(at most twice) when the flag, the copy, the one-way message or the
exchange at any power of two of 8 B-64 KiB moved by more than 25 %, or when
the all-gather's own `memcpy` column (1.5x) or `sendrecv` column (the
exchange `loggp` fits, 1.25x) disagrees with the parameter file: a run in
which the machine changed state says so instead of reporting predictions
that compare one state with another. The all-gather below passed these checks on the first
attempt ({{steady}}).

## Summary: kport's default against the better native MPI

kport's default (`auto`) over the better native median, P = 2, per size
band (the range over the sizes of the band):

{{summary}}

The all-gather is one `make bench` run of the current code; gather,
all-to-all and barrier are the medians of three `make bench` runs of an
earlier version whose collectives behave as today's (docs/bench/README.md
lists what changed since); broadcast, scatter and the reductions are
{{bcast_reductions_runs}}. In these isolated calls kport's all-gather,
gather, all-to-all and barrier are faster than both native collectives at
every size; {{bcast_reductions_summary}}. Where kport loses (isolated, back to back,
oversubscribed, one-sided): "Where kport loses, and why" below.

## All-gather, P = 2

`docs/bench/allgather-p2/`. Median latency in us per call of every
algorithm, the fastest kport algorithm of each size in bold (at P = 2
every `k` clamps to 1), then kport's default (`auto`) over the better
native of both builds and the `memcpy` reference; size is bytes per rank
(each rank receives 2 x size). Open MPI build:

{{allgather_algs_ompi}}

MPICH build:

{{allgather_algs_mpich}}

At 8 B kport's default takes {{ag8_ompi}} us (Open MPI build) and
{{ag8_mpich}} us (MPICH build) against {{ag8_native}} us for the better
native all-gather: a block of up to 248 bytes travels in the writer's flag
line, so an 8-byte all-gather is one cache-line exchange between the two
cores. At 1 MiB it takes {{ag1m}} us against {{ag1m_native}}: both
libraries are bound by the memory bandwidth there (the bench's `memcpy` of
the whole 2 MiB receive buffer, both ranks copying at once, takes
{{ag1m_memcpy}} us). Open MPI's native all-gather jumps at 4 KiB
({{ag4k_ompi_native}} us against MPICH's {{ag4k_mpich_native}}): its
shared-memory transport's eager limit is 4096 bytes including the header,
so 4 KiB messages already go by single copy (`cma`), a system call each.

The message-passing algorithms are one exchange at P = 2 and take what the
MPI's point-to-point takes; `bruck` and `concurrent_exchange_split` pay a
copy out of scratch, which shows from 16 KiB. From 256 KiB the
SMP schedules (`smp_*`, which copy the rank's own block while they wait
for the peer's flag) take {{smp_vs_flat}} of `shm_flat`, which copies it
after: at 1 MiB {{ag1m_smp}} against {{ag1m_flat}} us (Open MPI). On one
node `auto` chooses between `shm_flat` and `shm_single_copy` only, so it
does not take that gain.

## Gather (root 0), P = 2

`docs/bench/collectives-p2/`, each cell the median of three runs' medians;
columns as for the all-gather, both builds in one table:

{{gather_algs}}

At P = 2 the shared-memory gather (`smp`) has the root's node-mate post on
entry and blocks of up to 248 bytes ride in its flag line, so the mate
leaves one flag transfer after the root enters. The native gathers pay an
MPI message, eager below the transport's limit: Open MPI's native gather
steps from {{gather_ompi_native_2k}} to {{gather_ompi_native_4k}} us
between 2 and 4 KiB where its messages switch to single copy.

## All-to-all, P = 2

`docs/bench/collectives-p2/`, medians of three runs. Size is bytes per
rank pair.

{{alltoall_algs}}

## Barrier, P = 2

`docs/bench/collectives-p2/`, medians of three runs:

{{barrier_algs}}

kport's barrier on one node is a flag round trip through the shared
segment: {{bar_ompi}} us against {{bar_native}} for the better native
barrier.

## Broadcast, scatter and the reductions, P = 2

`docs/bench/bcast-reductions-p2/`: {{bcast_reductions_how}}. Each cell is
the median over the runs of each run's median, timed as above (the start
line, one call, the maximum over ranks). The reductions combine doubles
with `MPI_SUM`. A ratio is kport's default over the better of the two
native medians of the same size; ratios above 1.00x are in bold.

**The memory-bandwidth limit** (allreduce's `bw_limit` column,
`tools/bench/allreduce.c`): in the same run, every rank combines its half
of the two inputs (P - 1 combines over its slice of size / P bytes, a
plain loop) and copies the other half (P - 1 copies), all in its own
buffers, timed like the algorithms. It counts each transferred byte once
and never waits for the other rank, so it is a floor, not a prediction.

**The machine's state.** Each build's collective runs on its own, so a
ratio to the better native compares two moments. The VM alternates, for
minutes at a time, between its normal state (a shared-memory flag between
the cores about 50-60 ns, as in the all-gather's parameter files, "The
machine's parameters") and a slow one
(about 240 ns: every synchronisation, native and kport alike, 2-3x slower;
copies unchanged). These runs are consecutive runs whose `loggp` found
the normal state in both builds (the flags above); earlier attempts in the
slow state are left out (docs/bench/README.md says how many). A loss
that comes from the state rather than the algorithm shows as such below:
kport's default at or below its own build's native of the same run.

{{bcast_reductions}}

## Back-to-back calls, P = 2

Applications call collectives back to back, on data they have just
written. `kport-bench --b2b 8` times batches of 8 calls, the send buffer
rewritten with a pattern unique to each call before it (the rewrite timed
alone and subtracted). Each cell: kport's default over the better native
*of the same picture*, isolated / back to back (`docs/bench/backtoback-p2/`,
one `make bench` of an earlier version on a quiet machine; its isolated
calls were timed from `MPI_Barrier`, before the flag start line, which is
why MPICH's small all-to-all reads 2x there: MPICH's barrier left the ranks
apart and every isolated call paid that distance):

{{b2b_p2}}

Barrier: {{b2b_p2_barrier}}.

- **Small all-gather, all-to-all and barrier gain back to back**: kport's
  two halves of flag lines alternate between calls, so a rank posts call
  i+1 while its peer still reads call i and the ranks pipeline. The native
  collectives gain nothing: their per-call software path is their cost.
- **The small gather does not** (2-256 B, 1.0-1.2x back to back): a native
  gather's non-root ranks send eagerly and return, so back-to-back gathers
  overlap, while kport's shared-memory gather keeps the node fence (no rank
  leaves a data-carrying shared-memory call before it has heard from every
  rank of its node: docs/DESIGN.md) and synchronises the node every call.
  Root-owned slots released by the root's next post would lift the fence
  for non-root ranks; not done.
- **Single copy just above its threshold loses back to back** (all-to-all
  4-8 KiB): the reader pulls the freshly rewritten send buffer from the
  other core's cache inside the call. The thresholds and the calibration
  are chosen from isolated calls.

## Four ranks on two cores (Open MPI)

With four ranks on two cores every wait is a context switch, so these
times measure the scheduler as much as the algorithms; MPICH busy-polls and
is not run oversubscribed. `docs/bench/oversubscribed-p4/` (native, `auto`
and `memcpy`, an earlier version, timed from `MPI_Barrier`; the machine
was loaded and cells above 64 KiB were often preempted). kport's default over the better native, isolated / back to
back:

{{p4}}

Barrier: {{p4_barrier}}. Back to back kport's all-gather, all-to-all and barrier keep or improve
their ratio (each isolated call pays four processes' wake-up after the
barrier). The small gather loses back to back (3-4x) for the node fence
described above, each fence a context switch here. kport's all-to-all loses
at 64 KiB-1 MiB (`shm_flat` moves every row through the segment, and with
four ranks on two cores the copies of the ranks that are not running wait
a time slice); single copy is never chosen with more ranks than cores,
because each of its two waits becomes a context switch.

## Across hosts (2 x 2 and 3 x 2, Open MPI)

Real hosts on the same machine (`scripts/cluster.sh`, README: each host a
set of Linux namespaces, TCP between hosts over a bridge, shared memory
within one): `MPI_Comm_split_type` gives one node per host, so kport's
SMP-aware algorithms keep their messages between hosts' leaders on TCP and
the rest in shared memory, while the flat ones send every block over MPI.
`make bench-cluster` (`scripts/bench-cluster.sh`, root) runs, per layout,
`kport-bench loggp` across the hosts (p2p.inter from rank 0 to a rank of
another host: real TCP messages; p2p.intra and the shared-memory costs on
host 0), then every collective with every algorithm beside native Open MPI
(`--predict` with that layout's parameter file), kport-sim on every kport
cell with the same file and the layout's ranks per node, kport-tune on
the records, and native/auto again with and without the tuning file.
Raw results: `docs/bench/cluster/`. The machine has 2 cores, so 4 or 6
ranks are oversubscribed (`mpi_yield_when_idle 1`; kport's shared-memory
waits yield after 1 us) and every time includes the scheduler's; the
machine was shared with other builds and tests (loggp's recorded load
average), so compare within a table.

The parameter files measured across the hosts:

{{cluster_params}}

**Where the hierarchy wins.** Per layout and collective, the best flat
kport algorithm over the best SMP-aware one of the same run (above 1: the
SMP-aware one is faster):

{{cluster_wins}}

**kport's default against native Open MPI** (within 0.5 %; "tuning
file": auto under `tuning-ompi.json`, native of that same run):

{{cluster_native}}

**Paper 000's ordering.** The paper (16 processes on four 4-way nodes,
QsNetII with two rails) found SMP-aware Gather and Broadcast fastest up to
256 B, SMP-aware Bruck at 512 B-8 KiB and the flat Direct from 16 KiB (its
large messages striped over two rails). The fastest all-gather of each
size here, by band (how many sizes each won):

{{cluster_order}}

Up to 8 KiB the quieter run reproduces the paper's first band and merges
its second into it: with two nodes the leaders' Bruck is one exchange,
the same as the gather-and-broadcast's, so nothing favours Bruck until
there are more nodes (the paper had four); under the recorded run's load
the winners of small sizes are decided by scheduling. Why the order
differs from the paper's at large sizes: its flat Direct
won from 16 KiB by striping every message over two QsNetII rails, while
here every host reaches the others through one TCP path over the same two
cores that run the ranks, so a flat algorithm's extra inter-host messages
(each rank's block to every rank of another host) cost TCP copies and
wake-ups on the cores the leaders need, and the SMP-aware schedules, which
send one chunk per host pair, stay ahead at large blocks as well.

Per collective and layout, the run of `make bench-cluster` (medians of 60
calls in 3 rounds; the cells where other work took the cores show as
outliers of several hundred microseconds or more, which the row's other
columns do not share):

{{cluster}}

The same 2 x 2 all-gather at a quieter moment of the machine
(`allgather-ompi-2x2-quiet.jsonl`: 100 calls in 3 rounds, load average
about 6 where the runs above had about 20; no predictions):

{{cluster_quiet}}

**Predicted across hosts.** The cost model (`--predict`) and kport-sim
(`sim-*.jsonl`: `kport-sim COLL -a ALG -P P -m SIZE --node-size R --params
params-ompi-L.json`) against the measured medians, by the one-node measure
(the median over cells of |predicted / measured - 1|; cells off by more
than 25 %):

{{cluster_predict}}

A few all-gathers, measured / kport-sim / cost model (us):

{{cluster_detail}}

Across these hosts neither engine comes near its one-node accuracy (median
error at most 15 % there): the bar is not met, and the measurements say
why. The parameter file prices a message, a flag and a copy as `loggp`
measured them, two ranks active and the others asleep; in a collective 4
or 6 ranks share the 2 cores (with other work), so nearly every wait ends
in a context switch (`mpi_yield_when_idle`, kport's yielding waits), a cost
neither engine has a term for. Against the quieter run the predictions are
2-4x low (smp_bruck at 8 B: 13 us predicted, 50 measured), and under the
load of the recorded run the measured medians are mostly scheduling. A
fair test needs hosts with a core per rank, or a per-wait wake-up cost in
the parameter file measured with all ranks active.

## Where kport loses, and why

In isolated calls at P = 2 kport's all-gather, gather, all-to-all and
barrier are ahead of both native MPIs at every size measured (the summary
above). {{bcast_reductions_lead}}

{{bcast_reductions_loses}}

The others lose:

- **Back to back**: small gathers (the node fence), and single copy just
  above its threshold (the reader pulls the freshly written buffer from the
  other core). See "Back-to-back calls, P = 2".
- **Oversubscribed**: the all-to-all from 64 KiB and the large gather at
  P = 4 on 2 cores; every wait of a shared-memory algorithm becomes a
  context switch. See "Four ranks on two cores".
- **Against its own best algorithm**: in these runs the all-gather's
  default at 1 MiB moved the block through `shm_flat`'s 128 KiB chunks,
  which the SMP schedules (the block whole) beat by 1.17-1.21x ("All-gather,
  P = 2"); the calibrated choice now offers `shm_flat` with whole blocks up
  to 1 MiB (`src/select/calibrate.c`), which these runs predate.
- **One-sided paths under MPICH**: every message of `transport=rma` pays
  MPICH's atomics (about 2.4 us per notification), 3-4x point-to-point
  ("One-sided transport"); the automatic choice never picks rma.
- **Strided transfers of a few large rows** tie with ARMCI-MPI: both
  libraries make the same copies ("Strided one-sided transfers").
- **Across hosts** the hierarchical (`smp_*`) defaults are measured on
  namespaces of this 2-core machine ("Across hosts"): oversubscribed, with
  TCP between hosts; at scale they come from kport-sim.

## Predicted against measured (all-gather, P = 2)

The cost model (`src/model/`, used by `kport-bench --predict`) and kport-sim
(docs/SIMULATOR.md) price every all-gather algorithm at 8 B-64 KiB with the
parameters `loggp` measured just before the same all-gather
(`docs/bench/allgather-p2/`; the kport-sim column is that run's
`predict.txt`):

```sh
python3 scripts/predict_report.py --coll allgather --min 8 --max 65536 \
    --sim build/ompi/kport-sim --sim-params ompi=docs/bench/allgather-p2/params-ompi.json \
    --sim-params mpich=docs/bench/allgather-p2/params-mpich.json docs/bench/allgather-p2/allgather-*-p2.jsonl
```

Per algorithm, the median of |predicted / measured - 1| over the 14 sizes
and the worst cell (predicted / measured):

{{predict}}

{{predict_all}}

The MPICH point-to-point columns have the largest errors: MPICH's
exchanges vary from one `loggp` run to the next (after large messages its
2-16 KiB exchanges run slower for some hundreds of exchanges). In the
machine's slow phase the parameters of one minute mispredict the next; the
checks of `make bench` flag such runs.

## The machine's parameters

### LogGP and shared-memory costs

`kport-bench loggp -o params.json` (docs/PARAMETERS.md explains every
field), both builds, the run of the all-gather above. Messages as kport's
executor sends them; ns and ns per byte, pieces split where the protocol
changes. L is negative or 0 where the overheads already hold the whole
message: between two ranks of one node the "wire" is a copy done by the
CPUs. X, XG: the exchange (both ranks sending to each other at once).

{{loggp}}

kport's shared-memory operations (ns, ns per byte):

{{shm}}

### The 1:n n:1 fan-out

`kport-bench fanout -m 8,1K,64K --params params.json`: the root sends one
message to each of P - 1 peers and waits for every reply; RTT(P)/P in us
beside the LogP prediction (4o + 2L + (P-1) max{g, o})/P
(`docs/bench/collectives-p2/fanout-*`, and P = 2..8 in one oversubscribed
run, `docs/bench/fanout/`):

{{fanout}}

With one rank per core the prediction is 1.2-1.6x the measurement: the
formula adds one max{g, o} to the round trip, a gap the root does not pay
with a single peer. Oversubscribed, RTT(P)/P stays flat for small
messages: every rank in the chain waits for a time slice, which LogP does
not model, so the prediction falls with P while the measurement does not.

## Calibrated defaults

On one node kport's default is the cost model's choice between the
two-copy (`shm_flat`; `smp` for the gather) and the single-copy algorithm,
priced with costs measured on the node when a process first uses shared
memory (`src/select/calibrate.c`, 1-1.5 ms once per process, agreed by
every rank), and checked in the running program (`src/select/verify.c`:
from the 17th call of a size moving at least 8 KiB in all, then every 64
to 4096 calls, both candidates timed in a block and a change only when a
second trial agrees). `auto` against the best kport algorithm of the same
run ("near": within 10 % or 0.05 us, as `scripts/auto_report.py` judges)
and against the better native:

{{auto}}

The misses at 4 KiB are one run's noise around the threshold (the two
candidates are within 0.1-0.2 us there); the all-gather at 1 MiB is the
SMP schedules' own-block copy that `auto` does not consider (above).

### Thresholds and why they are what they are

Two-copy against single copy around the threshold, us (`auto ran`: which
of the two the default ran, in each run):

{{thresholds}}

Single copy costs two flag round trips and a system call per peer but
copies each byte once: the all-gather's measured slower at every size here,
the gather's and the all-to-all's win from 4-64 KiB, where the runs differ.
Without calibration (`KPORT_CALIBRATE=0` or `KPORT_SINGLE_COPY_MIN`) the
thresholds are 8 KiB (all-gather) and 4 KiB; with more ranks than cores
single copy is never chosen. `shm_flat` pipelines in 128 KiB chunks above
512 KiB per block (`kport-bench allgather|alltoall -m 256K:1M -a
shm_flat,shm_flat:chunk_kb=4096,shm_flat:chunk_kb=256 -i 100`, Open MPI,
2026-11-22: all-to-all of 1 MiB 140-141 us whole against 91.6-92.6 in
chunks). With several nodes the SMP-aware algorithms run (`smp_bruck`
up to 8 KiB per block, `smp_direct` above; `smp` barrier and gather),
chosen on emulated nodes: defaults to re-tune on a real cluster.

### kport-tune on the same records

`tools/kport-tune --from-bench docs/bench/allgather-p2/allgather-ompi-p2.jsonl
docs/bench/collectives-p2/{gather,alltoall,barrier}-ompi-p2-run*.jsonl`
writes the decision file below (docs/TUNING.md): per collective and size
the fastest kport algorithm of these records, adjacent sizes merged. On
this machine its choices are the shared-memory algorithms `auto` already
picks or ties with (the SMP schedules match `shm_flat` to the nanosecond
at small sizes); a file is worth writing where the built-in rules are
guesses, such as several nodes.

{{tune}}

## Communicator set-up

Not in `docs/bench/`: measured on 2026-11-22 with the library of 66a5d50
and printed by the commands given. A loop of `MPI_Comm_dup`, one 8-byte
`MPI_Allgather`, `MPI_Comm_free`, through the C API (`kport-bench churn`;
native and kport cycles alternating; median over cycles of the max over
ranks):

```sh
mpirun.openmpi -np 2 --oversubscribe --bind-to none build/ompi/kport-bench churn -c -i 200 -x 20
mpirun.openmpi -np 4 --oversubscribe --bind-to none build/ompi/kport-bench churn -c -i 100 -x 10 --calls 0,1,8
mpiexec.mpich -n 2 build/mpich/kport-bench churn -c -i 200 -x 20 --calls 0,1,8,64
```

| create + calls + free, 8 B all-gather | native (us) | kport (us) | kport / native |
| --- | --- | --- | --- |
| Open MPI, P = 2, dup, 1 call | 9.87 | 10.26 | 1.04x |
| Open MPI, P = 2, dup, 8 calls | 13.24 | 12.32 | 0.93x |
| Open MPI, P = 2, dup, 64 calls | 42.27 | 30.44 | 0.72x |
| Open MPI, P = 4 oversubscribed, dup, 1 call | 164.05 | 170.30 | 1.04x |
| MPICH, P = 2, dup, 1 call | 6.50 | 6.63 | 1.02x |
| MPICH, P = 2, dup, 64 calls | 51.90 | 27.37 | 0.53x |

kport's extra time at one call is 0.1-1 us at P = 2; it pays back after
1-5 calls. A fresh group of ranks pays the set-up once
(`mpirun.openmpi -np 2 env LD_PRELOAD=.../libkport-pmpi.so
KPORT_COLD_CALLS=0 KPORT_SETUP_STATS=1 tests/churn_app -n 1000 --how
dup`, rank 0): the node layout 65 us, the node communicator 16, the shared
segment 96, the cross-memory-attach probe 6; later communicators of the
same ranks take them from the pool (0.33 us each; without the pool,
`KPORT_COMM_POOL=0`, 20.5 + 49 + 4.2 us each). The drop-in library leaves
a new group's first 16 calls to MPI (`KPORT_COLD_CALLS`). docs/DESIGN.md,
"Communicator set-up", describes the tiers.

## Strided one-sided transfers

ARMCI's strided put, get and accumulate (`kp_put_strided` and friends) on a
kport window, 2 ranks of one node, against ARMCI-MPI 0.3.1 (Debian
`libarmci-mpi-dev`, linked into the same binary) in the same run;
`docs/bench/strided/`:

```sh
mpirun.openmpi -np 2 --mca btl self,vader build/ompi/kport-bench strided -c --pattern one,pairs --format json
mpiexec.mpich -n 2 build/mpich/kport-bench strided -c --pattern one,pairs --format json
build/ompi/tests/srumma -n 512 -r 5            # under mpirun, auto and ARMCI-MPI
```

Pattern one (rank 0 to rank 1), us per operation including its fence,
medians over the runs (Open MPI {{strided_ompi_runs}} runs, MPICH
{{strided_mpich_runs}}); `auto (ran)` names the method auto chose;
ARMCI-MPI / auto above 1 means kport is faster. Every byte of every variant
was checked (`-c`; validation problems: {{strided_bad}}).

Open MPI:

{{strided_ompi}}

MPICH:

{{strided_mpich}}

Over both patterns (one and pairs) and the three operations, `auto` was
{{strided_ompi_worst}} under Open MPI and {{strided_mpich_worst}} under
MPICH; ARMCI-MPI / auto was at least {{strided_ompi_armci_min}} under Open
MPI and at least {{strided_mpich_armci_min}} under MPICH. SRUMMA (`N = 512`,
1 x 2 grid, every product checked), kport against ARMCI-MPI:
{{srumma_ompi}} in `srumma-ompi.txt`, {{srumma_mpich}} in
`srumma-mpich.txt`.

Why the methods win where they do:

- On one machine `kp_win_create`'s window is shared
  (`MPI_Win_allocate_shared`) and the direct method's puts, gets and
  accumulates are copies and adds by load/store into the peer's mapped
  memory between two `MPI_Win_sync` (accumulates under a per-rank lock of
  kport's own, so every kport accumulate into a rank stays element-wise
  atomic whatever its method). That is why kport is far ahead on the small
  and tall shapes: ARMCI-MPI makes one MPI operation per contiguous piece.
- Rows longer than 64 B are copied in 2 KiB pieces: glibc 2.36's memcpy on
  this AMD EPYC runs copies of 4 KiB-512 KiB whose destination lies a few
  bytes past the source modulo 4096 many times slower (`rep movsb`), which
  strided rows meet often; the pieces avoid that path.
- **Ties on a few large rows** (wide put): both libraries make the same
  four copies on the same kind of window; the ratio is run-to-run noise
  (the bench runs the variants in blocks: interleaved, the order alone
  moved it by up to 1.5x).
- The pack method (bounce buffers to a target-side slot pool) never wins on
  one machine: its floor is two copies of every chunk.
- MPICH's datatype accumulate faults its temporary buffers in per call
  beyond glibc's dynamic mmap threshold, so its speed depends on what the
  process freed before (the cost model's `tdnb`); `auto` runs the
  load/store direct method instead.
- The cost model's defaults (`src/strided/auto.c`) are the medians of five
  `kport-bench strided --calibrate` runs per MPI (`strided/cal-*.txt`).

## One-sided transport

`transport=rma` (docs/DESIGN.md, "One-sided transport") moves a
collective's messages as `MPI_Put` into the receiver's memory plus a
notification, instead of point-to-point. Open MPI: windows from
`MPI_Win_allocate_shared` (osc/sm), the notification a put polled in
memory, the data attached to the receive buffer from 16 KiB
(`rma_path=auto`); MPICH: `MPI_Win_allocate`, atomic counters, staging.

### Every all-gather algorithm over both transports, P = 2

`kport-bench allgather -m 8:1M -i 200 -x 20 --transports p2p,rma --format
json`, three runs per MPI alternating (`docs/bench/rma/table-*.jsonl`,
load average 2.4-2.8, so times are higher than in the tables above);
cells: point-to-point / rma (rma / p2p), us, medians of the three runs; the
last column is the geometric mean of rma / p2p over the 18 sizes.

Open MPI:

{{rma_ompi}}

MPICH:

{{rma_mpich}}

- The shared-memory algorithms send no messages at P = 2 on one node, so
  the transport changes nothing for them.
- Under Open MPI from 16 KiB, where the data goes straight into the receive
  buffer, the message-passing algorithms are faster over rma (one copy,
  against the shared-memory transport's two and its fragment pipeline).
  `bruck` and `concurrent_exchange_split`, which receive into kport's
  scratch and copy again, lose with the attach path (`rma_path=staging` is
  the better choice for them; a per-algorithm default is open).
- **Under MPICH the one-sided transport is 3-4x slower**: MPICH's
  accumulate and fetch-and-op cost about 2.4 us each way through its RMA
  progress, so every message pays microseconds of atomics.
- The automatic choice never picks rma: where it wins under Open MPI,
  `shm_single_copy` and the calibrated choice already beat point-to-point,
  and choosing rma would need the selection's cost model to know the
  transport.

### The transport's own costs

`kport-bench rma -m 8:64K -R 1 -c --notify acc,put,fao,accl --format json`
(MPICH: `--notify acc,fao`) between ranks 0 and 1
(`docs/bench/rma/notify-*.jsonl`, three runs, medians; load 6.5-12.6): put +
flush at the origin; one message one way as the transport moves it (the
put, the flush, the notification by each variant, the receiver's poll,
copy out and credit); point-to-point one way. us:

Open MPI:

{{rmacost_ompi}}

MPICH:

{{rmacost_mpich}}

The notification alone: Open MPI {{notify_ompi}}; MPICH {{notify_mpich}}.
On one node striping over several rails gains nothing (every rail's window
is the same memory and every put a memcpy by the one origin process); the
`rails` parameter is for multi-rail machines and is tested for correctness
here. Under MPICH, shared windows make large puts an order of magnitude
slower than `MPI_Win_allocate`'s (`kport-bench rma -m 64K:1M -R 1,2
--flavour shared` against `--flavour allocate`), so kport uses shared
windows under Open MPI only (`KPORT_RMA_SHARED`).

## Simulator

`kport-sim` (docs/SIMULATOR.md) runs kport's own schedules under LogGP.

- **Agreement with LogGOPSim** (built from its public source outside
  kport): 464 recorded cases in `tests/data/loggopsim/` (every flat
  all-gather, gather, all-to-all and barrier algorithm, P = 2-64, 8 B and
  64 KiB, two parameter sets), every rank equal to the nanosecond but the
  barriers (within 0.15 %: LogGOPSim computes a 0-byte message's size - 1
  unsigned; with `--loggopsim-zero-bytes` all 464 agree exactly). Tests
  `sim_agree_loggopsim*` check it on every `make test`.
- **Speed**: Bruck all-gather, k = 1, 8 B, P = 65,536, LogGOPSim's
  parameter set a (`kport-sim allgather -a bruck:k=1 -P 65536 -m 8 -L 2000
  -o 300 -g 500 -G 1 -O 0 -S 65536`, and LogGOPSim on kport-check's
  `--goal` export of the same schedule; medians of 3): kport-sim 0.31 s of CPU
  against LogGOPSim's 3.10 s for the same 4,390,911 events, and 3.24 s
  more for its `txt2bin` of kport-check's 153 MB GOAL export; both give
  1,090,152 ns.
- **Scale**: `scripts/sim_sweep.py --sim build/ompi/kport-sim -o
  /tmp/simsweep --budget 40 --timeout 120` (kport-sim's default LogGP
  parameters, one core; {{sim_runs}} runs in `docs/bench/sim/sim.jsonl`),
  the largest P each line reached within the 40 s budget (the O(P^2) lines
  stop at P = 8,192; wall times are each run's own, on the shared
  machine):

{{sim}}

![simulated all-gather, 8 B per rank, time against P](bench/sim/sim-allgather-8B-scaling.png)

![the fastest all-gather per P and size](bench/sim/sim-allgather-winner.png)

kport-sim against this machine: "Predicted against measured" above; on
paper 000's cluster: docs/SIMULATOR-paper000.md.
"""

if __name__ == "__main__":
    sys.exit(main())
