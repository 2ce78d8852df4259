"""perf_reductions.py: docs/PERFORMANCE.md's sections on broadcast, scatter and the reductions (issue 37).

Called by scripts/perf_report.py (generate(bench, pr), pr being perf_report
itself for its table helpers and its Runs class) on docs/bench/bcast-reductions-p2/:
one directory per `make bench` run (run1, run2, ...), each holding the
files scripts/bench.sh writes for these collectives at P = 2:
  <coll>-<mpi>-p2.jsonl       every algorithm, auto, native, memcpy (allreduce: and bw_limit)
  <coll>-<mpi>-p2-b2b8.jsonl  native, auto, memcpy (allreduce: and bw_limit) back to back
  load.txt                    the commit measured and the load average before and after the run
A cell is the median over the runs of each run's median (perf_report's
Runs). Returns the values of the TEMPLATE's markers {{bcast_reductions}}
(the section), {{bcast_reductions_loses}} (bullets for "Where kport loses"),
{{bcast_reductions_how}} (the run sentence) and Runs sets for the summary
and calibrated-default tables. Python 3 standard library only.
"""

import json
import os
import re
import statistics

DIR = "bcast-reductions-p2"
COLLS = (("bcast", "Broadcast (root 0)", "broadcast (root 0)", "the message"),
         ("scatter", "Scatter (root 0)", "scatter (root 0)", "the block per rank"),
         ("reduce", "Reduce (root 0)", "reduce (root 0)", "the vector"),
         ("allreduce", "Allreduce", "allreduce", "the vector"),
         ("reduce_scatter_block", "Reduce-scatter with equal blocks", "reduce-scatter-block", "the result block per rank"),
         ("reduce_scatter", "Reduce-scatter (counts per rank, equal here)", "reduce-scatter", "the vector"))
NOT_ALGS = ("native", "auto", "memcpy", "sendrecv", "bw_limit")
LO, HI = 8, 1 << 20
WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}
LOSE = 1.005  # perf_report's bold mark: a ratio above it is a loss


def run_dirs(d):
    if not os.path.isdir(d):
        return []
    return sorted((os.path.join(d, x) for x in os.listdir(d) if re.match(r"run\d+$", x)),
                  key=lambda p: int(os.path.basename(p)[3:]))


def files(dirs, coll, b2b=False, mpis=("ompi", "mpich")):
    suf = "-b2b8" if b2b else ""
    out = [os.path.join(r, "%s-%s-p2%s.jsonl" % (coll, t, suf)) for r in dirs for t in mpis]
    return [p for p in out if os.path.exists(p)]


def load_info(dirs):
    """per run: the commit built, the start 'YYYY-MM-DD HH:MM:SS', the 1-minute load average at the start,
    at the end and the highest sampled during the run (load.txt, written beside the run's files)"""
    out = []
    for r in dirs:
        p = os.path.join(r, "load.txt")
        info = {"commit": "?", "start": "?", "l0": None, "l1": None, "max": None}
        if os.path.exists(p):
            for line in open(p):
                w = line.split()
                if not w:
                    continue
                if w[0] == "commit":
                    info["commit"] = w[1][:7]
                elif w[0] == "max1":
                    info["max"] = float(w[1])
                elif w[0] in ("start", "end") and "load" in w:
                    i = w.index("load")
                    info["l0" if w[0] == "start" else "l1"] = float(w[i + 1])
                    if w[0] == "start":
                        info["start"] = " ".join(w[1:3])
        info["flag"] = []
        for t in ("ompi", "mpich"):
            q = os.path.join(r, "params-%s.json" % t)
            if os.path.exists(q):
                info["flag"].append(json.load(open(q))["shm"]["flag"]["fixed"])
        out.append(info)
    return out


def sizes(R):
    return [s for s in sorted(R.sizes) if LO <= s <= HI]


def ran(pr, R, t, s):
    xs = sorted(pr.base(x[5:-1] if x.startswith("auto(") else x) for x in R.ran.get((t, s), ()))
    return "/".join(xs) or "?"


def best(R, t, s):
    """kport's fastest algorithm of build t at size s (median over the runs), as (median, name)"""
    xs = [(R.get(t, a, s), a) for a in R.algs(t) if a not in NOT_ALGS and R.get(t, a, s) is not None]
    return min(xs) if xs else (None, None)


def native(R, s):
    """the better native median of size s and the build it came from"""
    xs = [(R.get(t, "native", s), t) for t in ("ompi", "mpich") if time(R.get(t, "native", s))]
    return min(xs) if xs else (None, None)


def coll_table(pr, R, limit):
    names = dict(pr.MPIS)
    h = ["Size", "better native"]
    for t, m in pr.MPIS:
        h += ["%s auto (ran)" % m, "auto / better native", "%s best kport" % m]
        if limit:
            h += ["%s bw_limit" % m, "auto / bw_limit"]
    rows = []
    for s in sizes(R):
        nb, nt = native(R, s)
        row = [pr.size_name(s), "%s (%s)" % (pr.us(nb), names[nt]) if nb is not None else "-"]
        for t, _ in pr.MPIS:
            a = R.get(t, "auto", s)
            b, alg = best(R, t, s)
            row += ["%s `%s`" % (pr.us(a), ran(pr, R, t, s)) if a is not None else "-",
                    pr.ratio(a / nb if a is not None and nb else None),
                    "%s `%s`" % (pr.us(b), alg) if b is not None else "-"]
            if limit:
                lim = R.get(t, "bw_limit", s)
                row += [pr.us(lim), pr.ratio(a / lim if a is not None and lim else None, lose_mark=False)]
        rows.append(row)
    return pr.table(h, rows)


def time(x):
    """a back-to-back median is the batch's minus the rewrite's: at or below 0 it is not a time"""
    return x is not None and x > 0


def rewrites(pr, paths):
    """(build, size) -> the rewrite of the send buffers per call in a back-to-back batch (rewrite_us /
    calls_per_batch, timed alone and subtracted from every column), median over the runs"""
    v = {}
    for p in paths:
        for r in pr.jsonl(p):
            if r.get("rewrite_us") is not None and r.get("calls_per_batch"):
                v.setdefault((pr.tag(r["mpi"]), r["size"]), {})[p] = r["rewrite_us"] / r["calls_per_batch"]
    return {k: statistics.median(x.values()) for k, x in v.items()}


def b2b_valid(iso, B, t, s):
    """a back-to-back cell is a time when the rewrite subtracted from it takes at most half the isolated
    call (auto, same build and size) and every run's median of native and auto is positive. Above that
    the rewrite's own variation is as large as what is left (allreduce from 32 KiB: negative medians in
    one run, 3-10x the isolated ones in another)"""
    a, rw = iso.get(t, "auto", s), B.rewrite.get((t, s))
    if a is None or rw is None or rw > a / 2:
        return False
    return all(B.v.get((t, c, s)) and min(B.v[(t, c, s)]) > 0 for c in ("native", "auto"))


def b2b_rows(pr, iso, B):
    """per size: the better native of the builds whose cells are times, its build, and per build
    (auto, bw_limit) or None where the build's cells are not"""
    out = []
    for s in sizes(B):
        ok = {t: b2b_valid(iso, B, t, s) for t, _ in pr.MPIS}
        xs = [(B.get(t, "native", s), t) for t, _ in pr.MPIS if ok[t] and time(B.get(t, "native", s))]
        nb, nt = min(xs) if xs else (None, None)
        out.append((s, nb, nt, {t: (B.get(t, "auto", s), B.get(t, "bw_limit", s)) if ok[t] else None
                                for t, _ in pr.MPIS}))
    return out


def b2b_table(pr, iso, B, limit):
    """back to back: the medians of native and auto per build, auto over the better native of the same
    picture, and for allreduce the limit (median minus the rewrite); 'noise' where b2b_valid says so"""
    h = ["Size", "better native"]
    for t, m in pr.MPIS:
        h += ["%s auto" % m, "auto / better native"]
        if limit:
            h += ["%s bw_limit" % m, "auto / bw_limit"]
    names = dict(pr.MPIS)
    rows = []
    for s, nb, nt, cells in b2b_rows(pr, iso, B):
        row = [pr.size_name(s), "%s (%s)" % (pr.us(nb), names[nt]) if nb else "-"]
        for t, _ in pr.MPIS:
            if cells[t] is None:
                row += ["noise", "-"] + (["noise", "-"] if limit else [])
                continue
            a, lim = cells[t]
            row += [pr.us(a) if time(a) else "-", pr.ratio(a / nb if time(a) and nb else None)]
            if limit:
                row += [pr.us(lim) if time(lim) else "-",
                        pr.ratio(a / lim if time(a) and time(lim) else None, lose_mark=False)]
        rows.append(row)
    return pr.table(h, rows)


FENCE = {"bcast": " kport's node fence: a call's root leaves only once the reader has entered (its post, one"
                  " cache-line transfer from the other core; algo/bcast/bcast_common.h), while the native"
                  " root sends a small message eagerly and returns, so native calls overlap"}


def b2b_bullet(pr, iso, title, coll, m, xs):
    """the back-to-back losses of one collective and build, with the isolated medians beside them"""
    names = dict(pr.MPIS)
    t = xs[0][1]
    nat = "/".join(sorted(set(names[x[4]] for x in xs)))
    return ("- **%s back to back, %s build, %s** (auto / better native %s): auto %s us against %s's native %s"
            " us; isolated the same calls take %s us (auto) and %s us (that native).%s" % (
                title, m, spans(pr, [x[0] for x in xs]), range_of([x[2] / x[3] for x in xs]),
                us_range(pr, [x[2] for x in xs]), nat, us_range(pr, [x[3] for x in xs]),
                us_range(pr, [iso.get(t, "auto", x[0]) for x in xs]),
                us_range(pr, [iso.get(x[4], "native", x[0]) for x in xs]), FENCE.get(coll, "") + "."))


def b2b_losses(pr, iso, B):
    """(size, build, auto, better native, its build) where auto is above it back to back"""
    return [(s, t, c[0], nb, nt) for s, nb, nt, cells in b2b_rows(pr, iso, B) for t, c in cells.items()
            if c is not None and nb and time(c[0]) and c[0] > nb * LOSE]


def losses(pr, R):
    """(size, build, auto, better native, native's build, best kport median, its name, what auto ran)
    of every size where auto is above the better native"""
    out = []
    for s in sizes(R):
        nb, nt = native(R, s)
        for t, _ in pr.MPIS:
            a = R.get(t, "auto", s)
            if a is None or nb is None or a <= nb * LOSE:
                continue
            b, alg = best(R, t, s)
            out.append((s, t, a, nb, nt, b, alg, ran(pr, R, t, s)))
    return out


def kind(coll, R, x):
    """why auto is above the better native at this size, from the same runs' columns: 'tick' (by one
    or two steps of the timer), 'state' (at or below its own build's native, measured in the same run:
    only the other build's native, from another run, is faster), 'choice' (another kport algorithm was
    at or below native), 'limit' (allreduce from 64 KiB: every byte through the segment), 'fixed' (up
    to 4 KiB, every kport algorithm above native: the fixed cost of a call), 'copies' (above 4 KiB)"""
    s, t, a, nb, nt, b, alg, rn = x
    own = R.get(t, "native", s)
    if (a - nb) * 1000 <= 20.5:
        return "tick"
    if nt != t and own is not None and a <= own * LOSE:
        return "state"
    if b is not None and b <= nb * LOSE and alg != rn:
        return "choice"
    if coll == "allreduce" and s >= 65536:
        return "limit"
    return "fixed" if s <= 4096 else "copies"


def us_range(pr, vals):
    lo, hi = min(vals), max(vals)
    return pr.us(lo) if pr.us(lo) == pr.us(hi) else "%s-%s" % (pr.us(lo), pr.us(hi))


def why(pr, coll, R, k, xs):
    """one reason for the sizes xs (all of kind k), with the numbers of the runs"""
    names = dict(pr.MPIS)
    nat = "/".join(sorted(set(names[x[4]] for x in xs)))
    gaps = [round((x[2] - x[3]) * 1000) for x in xs]
    gap = "%d" % gaps[0] if min(gaps) == max(gaps) else "%d-%d" % (min(gaps), max(gaps))
    if k == "tick":
        return ("%s ns over %s's native, one or two steps of the timer (the medians here come in steps of"
                " about 10 ns)" % (gap, nat))
    if k == "state":
        t = xs[0][1]
        own = [R.get(t, "native", x[0]) for x in xs]
        return ("the runs' machine state, not the algorithm: against its own build's native, timed in the same"
                " runs, auto is %s (that native %s us, %s's %s us)" %
                (range_of([x[2] / o for x, o in zip(xs, own)]), us_range(pr, own), nat,
                 us_range(pr, [x[3] for x in xs])))
    if k == "choice":
        return "the choice: " + "; ".join(
            "at %s auto ran `%s` (%s us) where `%s` took %s us, at or below native's %s" %
            (pr.size_name(x[0]), x[7], pr.us(x[2]), x[6], pr.us(x[5]), pr.us(x[3])) for x in xs)
    if k == "limit":
        t = xs[0][1]
        lim = [x[2] / R.get(t, "bw_limit", x[0]) for x in xs if R.get(t, "bw_limit", x[0])]
        return ("every kport algorithm above native (best %s us against %s's %s us); auto at %s bw_limit:"
                " the copies through the segment (the bullet on the limit below)" %
                (us_range(pr, [x[5] for x in xs]), nat, us_range(pr, [x[3] for x in xs]), range_of(lim)))
    what = ("the fixed cost of a call: auto %s us against %s's %s us (%s ns more)" if k == "fixed" else
            "the data movement: auto %s us against %s's %s us (%s ns more)") % (
        us_range(pr, [x[2] for x in xs]), nat, us_range(pr, [x[3] for x in xs]), gap)
    best = [x for x in xs if x[5] is not None]
    if best:
        algs = sorted(set(x[6] for x in best))
        what += ", and no kport algorithm reaches native (the best, %s, %s us)" % (
            "/".join("`%s`" % a for a in algs), us_range(pr, [x[5] for x in best]))
    if k == "copies":
        t = xs[0][1]
        mc = [R.get(t, "memcpy", x[0]) for x in xs if R.get(t, "memcpy", x[0])]
        if mc:
            what += "; a memcpy of the receive buffer takes %s us" % us_range(pr, mc)
    return what


def reasons(pr, coll, R, xs):
    """the losses of one build grouped by kind, in size order: '8 B-1 KiB: reason; 2 MiB: reason'"""
    groups = []
    for x in xs:
        k = kind(coll, R, x)
        if groups and groups[-1][0] == k:
            groups[-1][1].append(x)
        else:
            groups.append((k, [x]))
    return "; ".join("%s: %s" % (spans(pr, [x[0] for x in g]), why(pr, coll, R, k, g)) for k, g in groups)


def own_misses(pr, dirs, coll, R, t):
    """sizes where auto was not near kport's best algorithm (perf_report's near(): within 10 % or 50 ns)
    in every run: (size, auto, best, its name, what auto ran), medians over the runs"""
    per = [pr.Runs(files([d], coll, mpis=(t,))) for d in dirs]
    out = []
    for s in sizes(R):
        miss = True
        for Q in per:
            a, (b, _) = Q.get(t, "auto", s), best(Q, t, s)
            miss = miss and a is not None and b is not None and not pr.near(a, b)
        if miss:
            b, alg = best(R, t, s)
            out.append((s, R.get(t, "auto", s), b, alg, ran(pr, R, t, s)))
    return out


def spans(pr, xs):
    """'8 B-64 B, 1 KiB' of a sorted list of sizes (consecutive powers of two joined)"""
    out, run = [], []
    for s in xs:
        if run and s != run[-1] * 2:
            out.append(run)
            run = []
        run.append(s)
    if run:
        out.append(run)
    return ", ".join(pr.size_name(r[0]) if len(r) == 1 else "%s-%s" % (pr.size_name(r[0]), pr.size_name(r[-1]))
                     for r in out)


def range_of(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return "%.2fx" % vals[0] if len(vals) == 1 else "%.2f-%.2fx" % (min(vals), max(vals))


def generate(bench, pr):
    d = os.path.join(bench, DIR)
    dirs = run_dirs(d)
    if not dirs:
        none = "No results of broadcast, scatter and the reductions in `docs/bench/%s/`." % DIR
        return {"bcast_reductions": none, "bcast_reductions_loses": "- " + none, "bcast_reductions_how": none,
                "bcast_reductions_runs": "not measured", "bcast_reductions_summary": none,
                "bcast_reductions_lead": none}, []
    info = load_info(dirs)
    n = len(dirs)
    commits = sorted(set(i["commit"] for i in info))
    loads = ", ".join("%.1f" % i["l0"] if i["l0"] is not None else "?" for i in info)
    loads_max = ", ".join("%.1f" % i["max"] if i["max"] is not None else "?" for i in info)
    quiet = all(i["l0"] is not None and i["l0"] < 3 for i in info)
    flags = "; ".join("/".join("%.0f" % f for f in i["flag"]) for i in info if i["flag"])
    how = ("%s `make bench` run%s of these collectives, library at %s, from %s UTC; the 1-minute load"
           " average %s at the start of each run, at most %s during it (its own two busy ranks included)%s" %
           ("one" if n == 1 else "the median of %s" % WORDS.get(n, str(n)), "" if n == 1 else "s",
            ", ".join(commits), info[0]["start"], loads, loads_max,
            "" if quiet else " (taken under other jobs' load: the ratios within a table hold, the absolute"
                             " times are slower than on a quiet machine)"))
    if flags:
        how += ("; the shared-memory flag `kport-bench loggp` measured before each run (Open MPI/MPICH build)"
                " %s ns" % flags)
    parts, loses, sets, b2b_lose = [], [], [], []
    cells = lost = 0
    allr = {}
    for coll, title, short, what in COLLS:
        R = pr.Runs(files(dirs, coll))
        if not R.sizes:
            continue
        allr[coll] = R
        sets.append((short, R, files(dirs, coll)))
        limit = coll == "allreduce"
        text = ["### %s, P = 2" % title, "",
                "Size: %s (%s). `auto (ran)`: kport's default and the algorithm it ran; `best kport`: the"
                " fastest kport algorithm of the same runs%s." %
                (what, "bytes" if coll in ("bcast", "scatter") else "doubles summed with `MPI_SUM`",
                 "; `bw_limit`: the memory-bandwidth limit measured in the same run (below)" if limit else ""),
                "", coll_table(pr, R, limit)]
        L = losses(pr, R)
        total = len(sizes(R)) * sum(1 for t, _ in pr.MPIS if any(R.get(t, "auto", s) for s in R.sizes))
        cells, lost = cells + total, lost + len(L)
        text += ["", "kport's default is at or below the better native at %d of %d cells (size and build)%s."
                 % (total - len(L), total, "" if not L else ": the others in \"Where kport loses, and why\"")]
        bfiles = files(dirs, coll, b2b=True)
        if bfiles:
            B = pr.Runs(bfiles, mode="b2b")
            B.rewrite = rewrites(pr, bfiles)
            text += ["", "Back to back (`--b2b 8`: batches of 8 calls, the send buffer rewritten before each"
                         " call and the rewrites, timed alone, subtracted; ratios to the better native of the"
                         " back-to-back runs). `noise` where the rewrite subtracted per call takes more than half"
                         " the isolated call, or a run's median of native or auto is not positive: what is"
                         " left is within the rewrite's own variation%s:" %
                     ("; `-` where the limit minus the rewrites is not a time" if limit else ""), "",
                     b2b_table(pr, R, B, limit)]
            bl = b2b_losses(pr, R, B)
            for t, m in pr.MPIS:
                mine = [x for x in bl if x[1] == t]
                if mine:
                    b2b_lose.append((title.split(" (")[0], coll, m, mine))
        parts.append("\n".join(text))
        for t, m in pr.MPIS:
            om = own_misses(pr, dirs, coll, R, t)
            if om:
                loses.append("- **%s against kport's own best algorithm, %s build, %s** (in every run): %s." % (
                    title.split(" (")[0], m, spans(pr, [x[0] for x in om]), "; ".join(
                        "at %s auto ran `%s` (%s us) where `%s` took %s us" % (pr.size_name(x[0]), x[4], pr.us(x[1]),
                                                                             x[3], pr.us(x[2])) for x in om)))
            mine = [x for x in L if x[1] == t]
            if not mine:
                continue
            loses.append("- **%s, %s build, %s** (auto / better native %s): %s." % (
                title.split(" (")[0], m, spans(pr, [x[0] for x in mine]),
                range_of([x[2] / x[3] for x in mine]),
                reasons(pr, coll, R, mine)))
    for title, coll, m, xs in b2b_lose:
        loses.append(b2b_bullet(pr, allr[coll], title, coll, m, xs))
    if lost:
        summ = ("broadcast, scatter and the reductions are at or below the better native at %d of %d sizes and"
                " builds (8 B-1 MiB)" % (cells - lost, cells))
        lead = ("Broadcast, scatter and the reductions are at or below the better native at %d of %d sizes and"
                " builds in isolated calls; each size where the default is above it, with the reason the same"
                " runs show, and where they lose otherwise:" % (cells - lost, cells))
    else:
        summ = ("broadcast, scatter and the reductions are at or below the better native at every size from 8 B"
                " to 1 MiB in both builds (%d cells)" % cells)
        lead = ("Broadcast, scatter and the reductions are at or below the better native at every size from 8 B"
                " to 1 MiB in isolated calls, in both builds (%d cells). They lose:" % cells)
    v = {"bcast_reductions": "\n\n".join(parts), "bcast_reductions_how": how,
         "bcast_reductions_summary": summ, "bcast_reductions_lead": lead,
         "bcast_reductions_runs": "%s `make bench` run%s, library at %s" %
         ("one" if n == 1 else "the medians of %s" % WORDS.get(n, str(n)), "" if n == 1 else "s",
          ", ".join(commits))}
    # the limit of allreduce and why the shared segment stays above it
    if "allreduce" in allr:
        R = allr["allreduce"]
        big = [s for s in sizes(R) if s >= 65536]
        rs = {t: [R.get(t, "auto", s) / R.get(t, "bw_limit", s) for s in big
                  if R.get(t, "auto", s) and R.get(t, "bw_limit", s)] for t, _ in pr.MPIS}
        v["ar_limit"] = "; ".join("%s %s" % (m, range_of(rs[t])) for t, m in pr.MPIS)
        ok = all(r and max(r) <= 1.2 for r in rs.values())
        bc = allr.get("bcast")
        cma = ""
        if bc is not None:
            xs = ["%s %s against %s us" % (pr.size_name(s), pr.us(bc.get("ompi", "shm_single_copy", s)),
                                           pr.us(bc.get("ompi", "shm_flat:chunk_kb=0", s)))
                  for s in (65536, 1 << 20) if bc.get("ompi", "shm_single_copy", s)]
            if xs:
                cma = (" In the same runs the broadcast's cross-memory-attach algorithm (`shm_single_copy`, the"
                       " reader copies straight from the root's buffer) against `shm_flat` (two copies through"
                       " the segment), Open MPI build: %s." % "; ".join(xs))
        loses.append("- **Allreduce against the memory-bandwidth limit** from 64 KiB: auto / bw_limit %s (%s"
                     " the issue's 1.2x). `shm_flat` at P = 2 moves four half-vectors per rank (its input's"
                     " other half into the segment, the combine of its half reading the peer's copy, its own"
                     " result half and the peer's out of the segment), two of them from the other core's"
                     " cache; bw_limit counts two (a combine and a copy), all in the rank's own buffers. Only"
                     " single-copy reads (cross-memory attach) could approach one copy per transferred byte,"
                     " and they measure slower than two copies through the segment on this machine.%s"
                     % (v["ar_limit"], "within" if ok else "not within", cma))
    v["bcast_reductions_loses"] = "\n".join(loses) if loses else \
        "- Broadcast, scatter and the reductions: no size where the default is above the better native."
    return v, sets
