"""perf_cluster.py: docs/PERFORMANCE.md's section on real hosts (issue 40), from docs/bench/cluster/.

Called by scripts/perf_report.py (generate(bench, pr), pr being perf_report
itself for its table helpers); the files are those scripts/bench-cluster.sh
(make bench-cluster) writes, per layout L (HOSTSxRANKS, e.g. 2x2):
  <coll>-ompi-<L>.jsonl          every algorithm beside native, with --predict
  sim-<coll>-ompi-<L>.jsonl      kport-sim's time of every kport cell
  params-ompi-<L>.json           the parameter file loggp measured there
  <coll>-ompi-<L>-tuned.jsonl    native and auto under tuning-ompi.json
  allgather-ompi-2x2-quiet.jsonl an all-gather of a quieter moment (optional)
Returns the values of the TEMPLATE's cluster markers ({{cluster}}): with no
such directory, one sentence saying so. Python 3 standard library only.
"""

import os
import statistics
from collections import OrderedDict

# paper 000 (Qian and Afsahi, section 7, 16 processes on four 4-way nodes):
# the fastest all-gather per size band
PAPER_BANDS = ((0, 256, "SMP-aware Gather and Broadcast (smp_gather_bcast)"),
               (512, 8192, "SMP-aware Bruck (smp_bruck)"),
               (16384, 1 << 20, "flat Direct (direct), over two rails"))
REFS = ("native", "auto", "memcpy", "sendrecv", "tuned")
KEYS = ("cluster", "cluster_wins", "cluster_native", "cluster_quiet", "cluster_order", "cluster_predict",
        "cluster_detail", "cluster_params")


def smp(alg):
    """an SMP-aware algorithm: shared memory inside a host, messages between hosts' leaders"""
    return alg.startswith("smp")


def layouts(d):
    out = set()
    for f in os.listdir(d):
        if f.startswith("params-ompi-") and f.endswith(".json"):
            out.add(f[len("params-ompi-"):-len(".json")])
    return sorted(out, key=lambda l: tuple(int(x) for x in l.split("x")))


def colls_of(d, L):
    suf = "-ompi-%s.jsonl" % L
    return sorted(f[:-len(suf)] for f in os.listdir(d) if f.endswith(suf) and not f.startswith(("sim-", "loggp-")))


def medians(pr, path):
    """(column, size) -> median, and (size) -> the algorithm auto ran"""
    v, ran = {}, {}
    if not os.path.exists(path):
        return v, ran
    for r in pr.jsonl(path):
        if r.get("status") != "ok" or r.get("median_us") is None:
            continue
        c = pr.column(r)
        v[(c, r.get("size", 0))] = r["median_us"]
        if c == "auto" and r.get("ran"):
            ran[r.get("size", 0)] = pr.base(r["ran"][5:-1] if r["ran"].startswith("auto(") else r["ran"])
    return v, ran


def best(v, size, keep):
    xs = [(t, c) for (c, s), t in v.items() if s == size and c not in REFS and keep(c)]
    return min(xs) if xs else (None, None)


def hier_table(pr, d, L, coll, suffix=""):
    v, ran = medians(pr, os.path.join(d, "%s-ompi-%s%s.jsonl" % (coll, L, suffix)))
    tv, _ = medians(pr, os.path.join(d, "%s-ompi-%s-tuned.jsonl" % (coll, L)))
    sizes = sorted(set(s for _, s in v))
    rows, wins, vs = [], [], {"auto": [0, 0], "tuned": [0, 0]}
    for s in sizes:
        nat = v.get(("native", s))
        fb, fa = best(v, s, lambda c: not smp(c))
        sb, sa = best(v, s, smp)
        a = v.get(("auto", s))
        tu = tv.get(("auto", s))
        tn = tv.get(("native", s))
        if fb and sb:
            wins.append((s, fb / sb))
        for k, x, n in (("auto", a, nat), ("tuned", tu, tn)):
            if x and n:
                vs[k][0] += x <= n * 1.005
                vs[k][1] += 1
        rows.append([pr.size_name(s) if s else "-", pr.us(nat), "%s %s" % (pr.us(fb), fa or ""),
                     "%s %s" % (pr.us(sb), sa or ""), pr.ratio(fb / sb, False) if fb and sb else "-",
                     "%s %s" % (pr.us(a), ran.get(s, "")), pr.ratio(a / nat if a and nat else None),
                     pr.ratio(tu / tn if tu and tn else None)])
    h = ["Size", "native (us)", "best flat kport (us, algorithm)", "best SMP-aware (us, algorithm)",
         "flat / SMP", "auto (us, ran)", "auto / native", "tuned auto / native (own run)"]
    return pr.table(h, rows), wins, vs


def ordering_table(pr, d, Ls):
    """the fastest all-gather per size, SMP-aware and flat alike, against paper 000's winners"""
    Ls = list(Ls)
    per = {L: medians(pr, os.path.join(d, "allgather-ompi-%s.jsonl" % L))[0] for L in Ls}
    if os.path.exists(os.path.join(d, "allgather-ompi-2x2-quiet.jsonl")):
        Ls.append("2x2, quieter run")
        per[Ls[-1]] = medians(pr, os.path.join(d, "allgather-ompi-2x2-quiet.jsonl"))[0]
    h = ["Sizes", "paper 000's fastest"] + ["%s: fastest here (sizes won)" % L for L in Ls]
    rows = []
    for lo, hi, name in PAPER_BANDS:
        row = ["%s-%s" % (pr.size_name(max(lo, 8)), pr.size_name(hi)), name]
        for L in Ls:
            cnt = OrderedDict()
            for s in sorted(set(s for _, s in per[L])):
                if lo <= s <= hi:
                    t, a = best(per[L], s, lambda c: True)
                    if a:
                        cnt[pr.base(a).split(":")[0]] = cnt.get(pr.base(a).split(":")[0], 0) + 1
            row.append(", ".join("%s (%d)" % kv for kv in sorted(cnt.items(), key=lambda kv: -kv[1])) or "-")
        rows.append(row)
    return pr.table(h, rows, left=2)


def sim_cells(pr, path):
    out = {}
    if os.path.exists(path):
        for r in pr.jsonl(path):
            if r.get("simulated_us") is not None:
                out[(r["algorithm"], r["size"])] = r["simulated_us"]
    return out


def err_summary(pairs):
    """pairs of (measured, predicted): median |pred/meas - 1|, cells off by more than 25 %"""
    e = [abs(p / m - 1) for m, p in pairs if m and p]
    return (statistics.median(e), len(e), sum(1 for x in e if x > 0.25)) if e else (None, 0, 0)


def fmt_err(x):
    return "-" if x[0] is None else "%.1f %% (%d cells, %d > 25 %%)" % (100 * x[0], x[1], x[2])


def predict_table(pr, d, Ls):
    """the cost model (--predict) and kport-sim against the medians, per layout and collective"""
    h = ["Layout", "Collective", "cost model 8 B-64 KiB", "kport-sim 8 B-64 KiB", "cost model, all sizes",
         "kport-sim, all sizes"]
    rows, detail = [], {}
    runs = [(L, c, "") for L in Ls for c in colls_of(d, L)]
    if os.path.exists(os.path.join(d, "sim-allgather-ompi-2x2-quiet.jsonl")):
        runs.append(("2x2", "allgather", "-quiet"))
    for L, c, suf in runs:
        model, sim = {"small": [], "all": []}, {"small": [], "all": []}
        simv = sim_cells(pr, os.path.join(d, "sim-%s-ompi-%s%s.jsonl" % (c, L, suf)))
        for r in pr.jsonl(os.path.join(d, "%s-ompi-%s%s.jsonl" % (c, L, suf))):
            a = pr.base(r.get("algorithm", ""))
            if r.get("status") != "ok" or r.get("median_us") is None or a in REFS:
                continue
            m, s = r["median_us"], r.get("size", 0)
            for k in ("small", "all"):
                if k == "all" or 8 <= s <= 65536 or c == "barrier":
                    if r.get("predicted_us") is not None:
                        model[k].append((m, r["predicted_us"]))
                    if (a, s) in simv:
                        sim[k].append((m, simv[(a, s)]))
            if c == "allgather" and not suf:
                detail.setdefault(L, {})[(a, s)] = (m, r.get("predicted_us"), simv.get((a, s)))
        rows.append([L + (" (quieter run)" if suf else ""), c] +
                    [fmt_err(err_summary(x[k])) for k in ("small", "all") for x in (model, sim)])
    return pr.table(h, rows, left=2), detail


def detail_table(pr, detail, Ls, algs=("smp_gather_bcast:tree=1", "smp_bruck:k=1", "smp_direct:k=1", "ring")):
    """measured beside kport-sim's and the cost model's time for a few all-gathers"""
    sizes = (8, 1024, 8192, 65536, 1 << 20)
    h = ["Layout", "Algorithm"] + ["%s: measured / sim / model (us)" % pr.size_name(s) for s in sizes]
    rows = []
    for L in Ls:
        have = sorted(set(a for a, _ in detail.get(L, {})))
        for want in algs:
            a = next((x for x in have if x == want or x.split(":")[0] == want.split(":")[0]), None)
            if not a:
                continue
            row = [L, a]
            for s in sizes:
                m, p, q = detail[L].get((a, s), (None, None, None))
                row.append("%s / %s / %s" % (pr.us(m), pr.us(q), pr.us(p)))
            rows.append(row)
    return pr.table(h, rows, left=2)


def params_line(pr, d, L):
    import json
    p = json.load(open(os.path.join(d, "params-ompi-%s.json" % L)))

    def one_way(ch):
        x = p["p2p"][ch]["pieces"][0]
        return (x["o_s"] + x["L"] + x["o_r"]) / 1e3

    def xchg(ch, s):
        for x in p["p2p"][ch]["pieces"]:
            if x["max_bytes"] < 0 or s <= x["max_bytes"]:
                return (x.get("X", 0) + x.get("XG", 0) * s) / 1e3
        return 0
    return ("%s: one-way small message intra %.1f us, inter %.1f us; exchange of 8 KiB intra %.1f us, inter "
            "%.1f us; a shared-memory flag %.2f us" % (L, one_way("intra"), one_way("inter"), xchg("intra", 8192),
                                                       xchg("inter", 8192), p["shm"]["flag"]["fixed"] / 1e3))


def generate(bench, pr):
    d = os.path.join(bench, "cluster")
    if not os.path.isdir(d) or not layouts(d):
        none = "No results across hosts in `docs/bench/cluster/` (run `make bench-cluster` as root)."
        return {k: none for k in KEYS}
    Ls = layouts(d)
    parts, native_lines = [], []
    allwins = []
    for L in Ls:
        for c in colls_of(d, L):
            t, wins, vs = hier_table(pr, d, L, c)
            allwins += [(L, c, s, w) for s, w in wins]
            native_lines.append("- %s %s: auto at or below native at %d of %d sizes; under the tuning file %s"
                                % (L, c, vs["auto"][0], vs["auto"][1],
                                   "%d of %d" % tuple(vs["tuned"]) if vs["tuned"][1] else "not run"))
            parts.append("#### %s, %s hosts x %s ranks\n\n%s" % (c, L.split("x")[0], L.split("x")[1], t))
    quiet = ""
    if os.path.exists(os.path.join(d, "allgather-ompi-2x2-quiet.jsonl")):
        quiet = hier_table(pr, d, "2x2", "allgather", "-quiet")[0]
    ptab, detail = predict_table(pr, d, Ls)
    won = [w for w in allwins if w[3] > 1.005]
    lines = []
    for L in Ls:
        for c in OrderedDict.fromkeys(x[1] for x in allwins if x[0] == L):
            ws = [w for w in allwins if w[0] == L and w[1] == c]
            wn = [w for w in ws if w[3] > 1.005]
            if ws:
                top = max(ws, key=lambda w: w[3])
                lines.append("- %s %s: the SMP-aware algorithm is the faster at %d of %d sizes, by up to %.2fx (%s)"
                             % (L, c, len(wn), len(ws), top[3], pr.size_name(top[2])))
    return {
        "cluster": "\n\n".join(parts),
        "cluster_wins": "\n".join(lines) + "\n\nIn all, %d of %d (layout, collective, size) cells." % (
            len(won), len(allwins)),
        "cluster_native": "\n".join(native_lines),
        "cluster_quiet": quiet or "(no such run in docs/bench/cluster/)",
        "cluster_order": ordering_table(pr, d, Ls),
        "cluster_predict": ptab,
        "cluster_detail": detail_table(pr, detail, Ls),
        "cluster_params": "\n".join("- " + params_line(pr, d, L) for L in Ls),
    }
