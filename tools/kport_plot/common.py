"""kport-plot: helpers every figure uses - the builds of a group of records,
algorithm names, byte and count labels, the series of a figure (the median
where records repeat) and titles."""

import statistics


def builds(recs):
    """The MPI library strings of recs, in order of appearance."""
    seen = []
    for r in recs:
        if r["mpi"] not in seen:
            seen.append(r["mpi"])
    return seen


def short_alg(a):
    """"bruck:k=1 (k=2 clamped: P=2)" -> "bruck:k=1"."""
    return a.split(" (")[0]


def fmt_bytes(v, _pos=None):
    if v <= 0:
        return "0"
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= scale:
            q = v / scale
            return ("%g %s" % (q, unit))
    return "%g B" % v


def fmt_count(v):
    """16 -> "16", 65536 -> "64Ki", 1048576 -> "1Mi" (powers of two exact)."""
    v = int(round(v))
    for unit, scale in (("Mi", 1 << 20), ("Ki", 1 << 10)):
        if v >= scale and v % scale == 0:
            return "%d%s" % (v // scale, unit)
    return str(v)


def median_of(values):
    return statistics.median(values)


def series(recs, key, x, y):
    """{key(r): sorted [(x, y)]}, the median of y where several share x."""
    acc = {}
    for r in recs:
        yv = y(r) if callable(y) else r.get(y)
        if yv is None:
            continue
        acc.setdefault(key(r), {}).setdefault(x(r) if callable(x) else r[x], []).append(yv)
    return {k: sorted((xv, median_of(ys)) for xv, ys in pts.items()) for k, pts in acc.items()}


def title(what, recs):
    mpis = ", ".join(builds(recs))
    ps = sorted({int(r["P"]) for r in recs})
    pstr = "P=" + ",".join(str(p) for p in ps) if len(ps) <= 4 else "P=%d..%d" % (ps[0], ps[-1])
    dates = sorted({r["_date"] for r in recs})
    dstr = dates[0] if len(dates) == 1 else "%s..%s" % (dates[0], dates[-1])
    return "%s\n%s, %s, %s" % (what, mpis, pstr, dstr)
