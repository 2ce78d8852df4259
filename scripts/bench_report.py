#!/usr/bin/env python3
"""Combine kport-bench JSON-lines results into one table.

    mpirun.openmpi -np 2 kport-bench allgather --format json > ompi.jsonl
    mpiexec.mpich  -n 2 kport-bench allgather --format json > mpich.jsonl
    scripts/bench_report.py ompi.jsonl mpich.jsonl              # text
    scripts/bench_report.py --markdown ompi.jsonl mpich.jsonl   # for docs/PERFORMANCE.md

    for c in allgather barrier gather alltoall; do ... done   # any mix of collectives

One table per (collective, P, mode) (per root too for gather). Rows are message
sizes (bytes per rank; per rank pair for alltoall; barrier has no size and
a single row, size 0); columns are the
native collective of every MPI build ("ompi:native", "mpich:native") and
every kport algorithm per build ("ompi:bruck:k=2"). Each cell is the median
latency in microseconds (per iteration, the maximum over ranks); a kport
cell also shows its ratio to the better (smaller) native median of the same
size, over all builds: below 1.00x kport is faster. A final section lists,
per size, the best kport algorithm and its ratio.

Modes: records of `kport-bench --b2b N` ("mode": "b2b") get tables of their
own, titled "back-to-back (N calls per batch)", whose cells are the time
per call with the send buffer rewritten before each call (the rewrite
measured alone and subtracted). Where one run has both an isolated and a
back-to-back table of the same collective and P, a final section puts
kport's default and the better native of the two pictures side by side.

--predicted [--min B] [--max B]: only measured beside predicted (records
of kport-bench --predict), one table per MPI build, a column per kport
algorithm, with each algorithm's median error and worst cell.

Records of kport-bench fanout get a table of their own: RTT(P)/P beside
the LogP prediction per build, run, P and size, oversubscribed rows marked.

Records whose status is not "ok" (n/a, error, invalid) are shown as such
and never used for ratios. If several records share (build, algorithm,
P, size), e.g. repeated runs, the median of their medians is used.

Python 3 standard library only.
"""

import argparse
import os
import re
import statistics
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from kport_tools import jsonl  # noqa: E402 (tools/kport_tools)
from kport_tools.mpi import mpi_tag  # noqa: E402

STATUS_CELL = {"n/a": "n/a", "error": "ERROR", "invalid": "INVALID"}

# What a record's "size" means, per collective (kport-bench's "# Size:").
SIZE_NOTE = {
    "allgather": "size: bytes per rank (each rank receives P*size)",
    "gather": "size: bytes per rank (the root receives P*size)",
    "alltoall": "size: bytes per rank pair (each rank sends and receives P*size)",
    "barrier": "no message size: one row (size 0)",
    "bcast": "size: bytes of the message",
    "scatter": "size: bytes per rank (the root sends P*size)",
    "reduce": "size: bytes of the vector (double, sum unless the records say otherwise)",
    "allreduce": "size: bytes of the vector (double, sum unless the records say otherwise); bw_limit: "
                 "the memory-bandwidth limit measured in the same run",
    "reduce_scatter_block": "size: bytes of each rank's result block",
    "reduce_scatter": "size: bytes of the whole vector (uneven counts per rank)",
}
# Collectives without message sizes: one row, no per-size wording.
SIZELESS = {"barrier"}


def mpi_version(mpi):
    m = re.search(r"\d+(?:\.\d+)+", mpi)
    return m.group(0) if m else ""


def load(paths, fanout=None):
    """Records from JSON-lines files (blank and '#' lines skipped); records
    of kport-bench fanout go to the list `fanout` when one is given."""
    records = []
    for path in paths:
        try:
            f = jsonl.open_input(path)
        except OSError as e:
            sys.exit("bench_report: %s" % e)
        with f:
            for lineno, r, e in jsonl.parse(f):
                if e is not None:
                    print("bench_report: %s:%d: not JSON (%s), skipped" % (path, lineno, e), file=sys.stderr)
                    continue
                if fanout is not None and isinstance(r, dict) and r.get("coll") == "fanout" and \
                        all(k in r for k in ("mpi", "P", "size", "rtt_per_p_us")):
                    r["_file"] = path
                    fanout.append(r)
                    continue
                if not isinstance(r, dict) or not all(k in r for k in ("algorithm", "mpi", "P", "size")):
                    print("bench_report: %s:%d: not a kport-bench record, skipped" % (path, lineno),
                          file=sys.stderr)
                    continue
                r["_file"] = path
                records.append(r)
    return records


def assign_tags(records):
    """Map each MPI library string to a column prefix, unique per string."""
    strings = list(OrderedDict.fromkeys(r["mpi"] for r in records))
    by_tag = OrderedDict()
    for s in strings:
        by_tag.setdefault(mpi_tag(s), []).append(s)
    tags = {}
    for tag, group in by_tag.items():
        if len(group) == 1:
            tags[group[0]] = tag
            continue
        for i, s in enumerate(group):
            v = mpi_version(s)
            tags[s] = "%s-%s" % (tag, v) if v else "%s%d" % (tag, i + 1)
        if len(set(tags[s] for s in group)) < len(group):  # same version twice
            for i, s in enumerate(group):
                tags[s] = "%s%d" % (tag, i + 1)
    return tags


def status_of(r):
    st = r.get("status")
    if st is None:
        st = "ok" if r.get("median_us") is not None else "n/a"
    return st


class Table:
    """Results of one (collective, P, root, calls per back-to-back batch);
    root is None unless rooted, b2b is 0 for isolated calls."""

    def __init__(self, coll, P, root=None, b2b=0):
        self.coll, self.P, self.root, self.b2b = coll, P, root, b2b
        self.columns = OrderedDict()  # name -> (tag, algorithm, is_native)
        self.values = {}              # (column, size) -> list of medians
        self.status = {}              # (column, size) -> non-ok status
        self.why = {}                 # column -> first error / refusal message
        self.sizes = set()
        self.sources = OrderedDict()  # tag -> (mpi string, hosts, files)

    def add(self, tag, r):
        # kport's default choice ("auto") gets a column of its own, whatever
        # algorithm it picked at each size
        alg = "auto" if r.get("requested") == "auto" else r["algorithm"]
        native = alg == "native"
        name = "%s:%s" % (tag, alg)
        self.columns.setdefault(name, (tag, alg, native))
        size = int(r["size"])
        self.sizes.add(size)
        src = self.sources.setdefault(tag, [r["mpi"], r.get("hosts"), []])
        if r["_file"] not in src[2]:
            src[2].append(r["_file"])
        st = status_of(r)
        if st == "ok" and r.get("median_us") is not None:
            self.values.setdefault((name, size), []).append(float(r["median_us"]))
        else:
            self.status.setdefault((name, size), st)
            if r.get("error"):
                self.why.setdefault(name, r["error"])

    def ordered_columns(self):
        """Native and kport columns in build order; columns that are n/a at
        every size are returned separately (listed, not tabulated)."""
        tags = list(self.sources)
        cols = [c for t in tags for c, (ct, _, _) in self.columns.items() if ct == t]
        never = [c for c in cols
                 if not any((c, s) in self.values for s in self.sizes)
                 and set(self.status.get((c, s)) for s in self.sizes) - {None} == {"n/a"}]
        natives = [c for c in cols if self.columns[c][2] and c not in never]
        kports = [c for c in cols if not self.columns[c][2] and c not in never]
        # the memcpy and bw_limit references are neither native nor kport: shown,
        # never "best"; the sendrecv reference (bench.sh's moved check reads it)
        # is not tabulated
        self.refs = [c for c in kports if self.columns[c][1] in ("memcpy", "bw_limit")]
        kports = [c for c in kports if c not in self.refs and self.columns[c][1] != "sendrecv"]
        return natives, kports, never

    def median(self, col, size):
        v = self.values.get((col, size))
        return statistics.median(v) if v else None

    def best_native(self, size, natives):
        best = None
        for c in natives:
            m = self.median(c, size)
            if m is not None and (best is None or m < best[1]):
                best = (c, m)
        return best

    def cell(self, col, size, native_best):
        m = self.median(col, size)
        if m is None:
            return STATUS_CELL.get(self.status.get((col, size)), "-")
        text = fmt_us(m)
        if not self.columns[col][2]:
            text += " (%s)" % fmt_ratio(m, native_best)
        return text


def fmt_us(v):
    return "%.2f" % v if v < 100000 else "%.0f" % v


def fmt_ratio(m, native_best):
    if native_best is None or native_best[1] <= 0:
        return "-"
    return "%.2fx" % (m / native_best[1])


def root_of(r):
    """The root of a rooted collective's record (gather: 0 if absent), else None."""
    if "root" in r and r["root"] is not None:
        return int(r["root"])
    return 0 if r.get("coll") == "gather" else None


def b2b_of(r):
    """Calls per back-to-back batch of a record, 0 for isolated calls."""
    if r.get("mode") == "b2b":
        return int(r.get("calls_per_batch") or 1)
    return 0


def mode_title(b2b):
    return "back-to-back (%d calls per batch)" % b2b if b2b else ""


def build_tables(records):
    tags = assign_tags(records)
    tables = OrderedDict()
    for r in records:
        key = (r.get("coll", "?"), int(r["P"]), root_of(r), b2b_of(r))
        if key not in tables:
            tables[key] = Table(*key)
        tables[key].add(tags[r["mpi"]], r)
    return tables


def render_text(headers, rows, left=(0,)):
    """Aligned plain-text table; columns in `left` are left-aligned."""
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(widths[i]) if i in left else c.rjust(widths[i])
                         for i, c in enumerate(cells)).rstrip()

    return [line(headers)] + [line(row) for row in rows]


def render_markdown(headers, rows, left=(0,)):
    def esc(s):
        return s.replace("|", "\\|")
    out = ["| " + " | ".join(esc(h) for h in headers) + " |",
           "|" + "|".join(":---" if i in left else "---:" for i in range(len(headers))) + "|"]
    for row in rows:
        out.append("| " + " | ".join(esc(c) for c in row) + " |")
    return out


def report(tables, markdown, compare_only=False):
    if compare_only:
        return "\n".join(compare_modes(tables, markdown)).rstrip("\n") + "\n"
    out = []
    render = render_markdown if markdown else render_text
    for (coll, P, root, b2b), t in tables.items():
        natives, kports, never = t.ordered_columns()
        sizes = sorted(t.sizes)
        sizeless = coll in SIZELESS
        hosts = sorted(set(str(s[1]) for s in t.sources.values() if s[1] is not None))
        title = "%s%s, P = %d%s%s" % (coll, " (root %d)" % root if root is not None else "", P,
                                      (", %s host(s)" % "/".join(hosts)) if hosts else "",
                                      ", " + mode_title(b2b) if b2b else "")
        legend = ("median latency in us (per iteration: maximum over ranks); "
                  "kport cells: (ratio to the better native%s; < 1.00x: kport is faster)"
                  % ("" if sizeless else " of the same size"))
        if b2b:
            legend = ("latency per call in us: median over batches of %d back-to-back calls (maximum over "
                      "ranks), the send buffer rewritten before each call, the rewrite timed alone and "
                      "subtracted; kport cells: (ratio to the better native%s; < 1.00x: kport is faster)"
                      % (b2b, "" if sizeless else " of the same size"))
        note = SIZE_NOTE.get(coll)
        if markdown:
            out.append("### %s" % title)
            out.append("")
            for tag, (mpi, _, files) in t.sources.items():
                out.append("- `%s`: %s (%s)" % (tag, mpi, ", ".join(files)))
            out.append("")
            out.append(legend[0].upper() + legend[1:] + ".")
            if note:
                out.append(note[0].upper() + note[1:] + ".")
            out.append("")
        else:
            out.append("# %s" % title)
            for tag, (mpi, _, files) in t.sources.items():
                out.append("# %s = %s (%s)" % (tag, mpi, ", ".join(files)))
            out.append("# " + legend)
            if note:
                out.append("# " + note)
        for c in never:
            note = "%s: n/a: %s" % (c, t.why.get(c, "refused at every size"))
            out.append(("- " + note) if markdown else ("# " + note))
        if never and markdown:
            out.append("")

        headers = ["Size"] + natives + t.refs + kports
        rows = []
        for s in sizes:
            nb = t.best_native(s, natives)
            rows.append([str(s)] + [t.cell(c, s, nb) for c in natives + t.refs + kports])
        out.extend(render(headers, rows))

        # Best kport algorithm per size (barrier: the one row).
        out.append("")
        what = "Best kport algorithm" + ("" if sizeless else " per size")
        if markdown:
            out.append(what + ":")
            out.append("")
        else:
            out.append("# %s (ratio = its median / the better native median)" % what)
        headers = ["Size", "Best kport", "Median(us)", "Best native", "Median(us)", "Ratio"]
        rows = []
        for s in sizes:
            nb = t.best_native(s, natives)
            best = None
            for c in kports:
                m = t.median(c, s)
                if m is not None and (best is None or m < best[1]):
                    best = (c, m)
            rows.append([str(s),
                         best[0] if best else "-",
                         fmt_us(best[1]) if best else "-",
                         nb[0] if nb else "-",
                         fmt_us(nb[1]) if nb else "-",
                         fmt_ratio(best[1], nb) if best else "-"])
        out.extend(render(headers, rows, left=(0, 1, 3)))
        out.append("")

        # kport's default (auto) against the better native, per MPI build
        autos = [c for c in kports if t.columns[c][1] == "auto"]
        if autos:
            what = "kport default (auto)" + ("" if sizeless else " per size")
            if markdown:
                out.append(what + ":")
                out.append("")
            else:
                out.append("# %s: its median / the better native median" % what)
            # one reference of each kind (the first build's): memcpy, bw_limit
            refs = [[c for c in t.refs if t.columns[c][1] == k][:1] for k in ("memcpy", "bw_limit")]
            refs = [c for one in refs for c in one]
            headers = ["Size"] + ["%s (us)" % c for c in autos] + ["Best native", "Median(us)"] + \
                ["%s ratio" % c for c in autos]
            for c in refs:
                headers += ["%s (us)" % t.columns[c][1], "auto / %s" % t.columns[c][1]]
            rows = []
            for s in sizes:
                nb = t.best_native(s, natives)
                ms = [t.median(c, s) for c in autos]
                row = [str(s)] + [fmt_us(m) if m is not None else "-" for m in ms] + \
                      [nb[0] if nb else "-", fmt_us(nb[1]) if nb else "-"] + \
                      [fmt_ratio(m, nb) if m is not None else "-" for m in ms]
                for c in refs:
                    mc = t.median(c, s)
                    best_auto = min([m for m in ms if m is not None], default=None)
                    row += [fmt_us(mc) if mc is not None else "-",
                            fmt_ratio(best_auto, (t.columns[c][1], mc)) if mc and best_auto is not None else "-"]
                rows.append(row)
            out.extend(render(headers, rows, left=(0, len(autos) + 1)))
            out.append("")
    out.extend(compare_modes(tables, markdown))
    return "\n".join(out).rstrip("\n") + "\n"


def compare_modes(tables, markdown):
    """kport's default and the better native, isolated beside back-to-back,
    for every (collective, P, root) measured both ways."""
    out = []
    render = render_markdown if markdown else render_text
    for (coll, P, root, b2b), tb in tables.items():
        ti = tables.get((coll, P, root, 0))
        if not b2b or ti is None:
            continue
        title = "%s%s, P = %d: isolated calls beside %s" % (
            coll, " (root %d)" % root if root is not None else "", P, mode_title(b2b))
        legend = ("median us per call; auto cells: (ratio to the better native of the same picture); "
                  "last columns: the back-to-back ratio over the isolated one (< 1: kport gains back to back)")
        if markdown:
            out += ["### " + title, "", legend[0].upper() + legend[1:] + ".", ""]
        else:
            out += ["# " + title, "# " + legend]
        ni, ki, _ = ti.ordered_columns()
        nb, kb, _ = tb.ordered_columns()
        autos = [c for c in ki if ti.columns[c][1] == "auto" and c in kb]
        headers = ["Size", "native iso", "native b2b"]
        for c in autos:
            headers += ["%s iso" % c, "%s b2b" % c]
        headers += ["%s ratio b2b/iso" % c for c in autos]
        rows = []
        for s in sorted(ti.sizes & tb.sizes):
            bi, bb = ti.best_native(s, ni), tb.best_native(s, nb)
            row = [str(s), ("%s %s" % (fmt_us(bi[1]), bi[0].split(":")[0])) if bi else "-",
                   ("%s %s" % (fmt_us(bb[1]), bb[0].split(":")[0])) if bb else "-"]
            moves = []
            for c in autos:
                mi, mb = ti.median(c, s), tb.median(c, s)
                row += [ti.cell(c, s, bi), tb.cell(c, s, bb)]
                if mi is not None and mb is not None and bi and bb and bi[1] > 0 and bb[1] > 0 and mi > 0:
                    moves.append("%.2f" % ((mb / bb[1]) / (mi / bi[1])))
                else:
                    moves.append("-")
            rows.append(row + moves)
        out.extend(render(headers, rows))
        out.append("")
    return out


def predicted_report(records, markdown, lo=0, hi=None):
    """Measured beside predicted (kport-bench --predict): per (MPI,
    collective, P, root) one table, rows the sizes in [lo, hi], a column per
    kport algorithm (clamp notes dropped; auto left out: it is one of the
    others at every size), cells "measured / predicted (predicted/measured)"
    in us; then per algorithm the median error |ratio - 1| and the worst
    cell (largest max(ratio, 1/ratio))."""
    render = render_markdown if markdown else render_text
    groups = OrderedDict()
    for r in records:
        p = r.get("predicted_us")
        if status_of(r) != "ok" or b2b_of(r) or r.get("requested") == "auto" or \
                not isinstance(p, (int, float)) or not isinstance(r.get("median_us"), (int, float)):
            continue
        size = int(r["size"])
        if size < lo or (hi is not None and size > hi):
            continue
        g = groups.setdefault((r["mpi"], r.get("coll", "?"), int(r["P"]), root_of(r)), OrderedDict())
        cell = g.setdefault(r["algorithm"].split(" (")[0], {}).setdefault(size, ([], []))
        cell[0].append(float(r["median_us"]))
        cell[1].append(float(p))
    out = []
    for (mpi, coll, P, root), g in groups.items():
        title = "%s%s, P = %d, %s: measured / predicted median (us) and predicted/measured" % (
            coll, " (root %d)" % root if root is not None else "", P, mpi)
        out += (["### " + title, ""] if markdown else ["# " + title])
        algs = list(g)
        sizes = sorted({s for a in algs for s in g[a]})
        med = {(a, s): (statistics.median(v[0]), statistics.median(v[1])) for a in algs for s, v in g[a].items()}
        rows = []
        for s in sizes:
            row = [str(s)]
            for a in algs:
                if (a, s) in med and med[(a, s)][0] > 0:
                    m, p = med[(a, s)]
                    row.append("%s / %s (%.2f)" % (fmt_us(m), fmt_us(p), p / m))
                else:
                    row.append("-")
            rows.append(row)
        errs, worst = ["median error"], ["worst"]
        for a in algs:
            cells = [(s, med[(a, s)][1] / med[(a, s)][0]) for s in sizes if (a, s) in med and med[(a, s)][0] > 0]
            if cells:
                errs.append("%.0f%%" % (100 * statistics.median(abs(r - 1) for _, r in cells)))
                s, r = max(cells, key=lambda c: max(c[1], 1 / c[1]) if c[1] > 0 else float("inf"))
                worst.append("%.2f at %d" % (r, s))
            else:
                errs.append("-")
                worst.append("-")
        out.extend(render(["Size"] + algs, rows + [errs, worst]))
        out.append("")
    if not out:
        return "bench_report: no records with predicted_us (kport-bench --predict)\n"
    return "\n".join(out)


def fanout_report(recs, markdown):
    """kport-bench fanout: RTT(P)/P beside its LogP prediction, per build,
    run, P and size; rows of oversubscribed P (more ranks than cores) and of
    runs that were oversubscribed at all (MPI then yields) are marked."""
    if not recs:
        return ""
    render = render_markdown if markdown else render_text
    out = []
    title = "fanout (1:n n:1): RTT(P)/P measured beside the LogP prediction (us)"
    legend = ("P-1 messages from the root and P-1 replies; predicted = (4o + 2L + (P-1) max{g, o}) / P "
              "from the run's parameter file; ratio = predicted / measured")
    if markdown:
        out += ["### " + title, "", legend[0].upper() + legend[1:] + ".", ""]
    else:
        out += ["# " + title, "# " + legend]
    headers = ["MPI", "run", "P", "Size", "RTT min", "RTT median", "RTT/P", "predicted RTT/P", "ratio", "note"]
    rows = []
    runs = OrderedDict()
    for r in recs:
        runs.setdefault((r["mpi"], r.get("_file", "")), []).append(r)
    for (mpi, _), rs in runs.items():
        run_p = max(int(r["P"]) for r in rs)
        run = "P=2..%d" % run_p if run_p > 2 else "P=2"
        for r in sorted(rs, key=lambda r: (r["size"], r["P"])):
            pred = r.get("predicted_per_p_us")
            meas = r["rtt_per_p_us"]
            note = "oversubscribed" if r.get("oversubscribed") else \
                ("run oversubscribed" if r.get("run_oversubscribed") else "")
            if r.get("status", "ok") != "ok":
                note = str(r.get("status"))
            rows.append([mpi, run, str(r["P"]), str(r["size"]),
                         fmt_us(r["rtt_min_us"]) if isinstance(r.get("rtt_min_us"), (int, float)) else "-",
                         fmt_us(r["rtt_median_us"]) if isinstance(r.get("rtt_median_us"), (int, float)) else "-",
                         fmt_us(meas) if isinstance(meas, (int, float)) else "-",
                         fmt_us(pred) if isinstance(pred, (int, float)) else "-",
                         "%.2f" % (pred / meas) if isinstance(pred, (int, float)) and
                         isinstance(meas, (int, float)) and meas > 0 else "-",
                         note])
    out.extend(render(headers, rows, left=(0, 1, 9)))
    out.append("")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Combine kport-bench --format json outputs (one or more MPI builds) into one table.")
    ap.add_argument("files", nargs="+", metavar="FILE", help="JSON-lines file from kport-bench ('-': stdin)")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables (docs/PERFORMANCE.md)")
    ap.add_argument("--compare-only", action="store_true",
                    help="only the isolated-beside-back-to-back tables (needs both kinds of records)")
    ap.add_argument("--predicted", action="store_true",
                    help="only measured beside predicted (records of kport-bench --predict), per algorithm and size")
    ap.add_argument("--min", type=int, default=0, help="--predicted: smallest size (bytes)")
    ap.add_argument("--max", type=int, default=None, help="--predicted: largest size (bytes)")
    args = ap.parse_args(argv)

    fanout = []
    records = load(args.files, fanout)
    if not records and not fanout:
        sys.exit("bench_report: no kport-bench records in %s" % ", ".join(args.files))
    if args.predicted:
        sys.stdout.write(predicted_report(records, args.markdown, args.min, args.max))
        return 0
    if records:
        sys.stdout.write(report(build_tables(records), args.markdown, args.compare_only))
    if fanout:
        sys.stdout.write(("\n" if records else "") + fanout_report(fanout, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
