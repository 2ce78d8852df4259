"""kport-plot: the machine's figures: kport-bench fanout, churn,
concurrency, strided and loggp (the manual: kport_plot/__init__.py)."""

from .common import builds, fmt_bytes, series, title
from .records import SIZELESS, is_number, progress


class MachineFigures:
    """The figures of the machine's measurements (a part of Plotter, main.py)."""

    def fanout(self, recs):
        mpis = builds(recs)
        progress("drawing fanout")
        fig, axes = self.new("fanout", len(mpis), sharey=False)
        sizes = sorted({r["size"] for r in recs})
        color = dict(zip(sizes, self.colors(len(sizes))))
        vals = [r["rtt_per_p_us"] for r in recs] + [r["predicted_per_p_us"] for r in recs
                                                    if is_number(r.get("predicted_per_p_us"))]
        for ax, m in zip(axes[0], mpis):
            mine = [r for r in recs if r["mpi"] == m]
            # runs with more ranks than cores (run_oversubscribed) are their own
            # lines: MPI then waits by yielding, even at small P
            meas = series(mine, lambda r: (r["size"], bool(r.get("run_oversubscribed"))), "P", "rtt_per_p_us")
            prd = series(mine, lambda r: r["size"], "P",
                         lambda r: r["predicted_per_p_us"] if is_number(r.get("predicted_per_p_us")) else None)
            over = {(r["size"], r["P"]) for r in mine if r.get("oversubscribed")}
            for s in sizes:
                for run_over in (False, True):
                    pts = meas.get((s, run_over))
                    if not pts:
                        continue
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, color=color[s], lw=1.4, ls=":" if run_over else "-",
                            label="%s measured%s" % (fmt_bytes(s), ", oversubscribed run" if run_over else ""))
                    full = [(x, y) for x, y in pts if (s, x) not in over]
                    hollow = [(x, y) for x, y in pts if (s, x) in over]
                    if full:
                        ax.plot(*zip(*full), ls="none", marker="o", color=color[s])
                    if hollow:
                        ax.plot(*zip(*hollow), ls="none", marker="o", mfc="white", color=color[s])
                if prd.get(s):
                    ax.plot(*zip(*prd[s]), color=color[s], ls="--", lw=1.2, marker="x", ms=6,
                            label="%s LogP prediction" % fmt_bytes(s))
            if over:
                ax.plot([], [], ls="none", marker="o", mfc="white", color="black",
                        label="oversubscribed (ranks > cores)")
            ps = sorted({int(r["P"]) for r in mine})
            ax.set_xticks(ps)
            ax.set_xlabel("P (root and P-1 peers)")
            self.value_axis(ax, vals, "RTT(P)/P (us)")
            ax.set_title(m, fontsize="medium")
            ax.grid(True, alpha=0.3)
            self.legend_below(ax, ncol=2)
        self.suptitle(fig, title("1:n n:1 fan-out: RTT(P)/P measured and predicted", recs))

    # --- churn --------------------------------------------------------------
    def churn(self, recs):
        groups = {}
        for r in recs:
            groups.setdefault((r["collective"], r.get("size"), int(r["P"])), []).append(r)
        for (coll, size, P), g in sorted(groups.items(), key=lambda kv: str(kv[0])):
            progress("drawing churn %s" % coll)
            hows = []
            for r in g:
                if r["how"] not in hows:
                    hows.append(r["how"])
            mpis = builds(g)
            cols = self.colors(max(len(mpis), 1))
            fig, axes = self.new("churn-%s-p%d" % (coll, P), len(hows))
            vals = [r["median_us"] for r in g]
            for ax, how in zip(axes[0], hows):
                for i, m in enumerate(mpis):
                    for variant, ls in (("native", "--"), ("kport", "-")):
                        pts = series([r for r in g if r["how"] == how and r["mpi"] == m and r["variant"] == variant],
                                     lambda r: 0, "calls", "median_us").get(0)
                        if pts:
                            ax.plot(*zip(*pts), color=cols[i], ls=ls, marker="o", ms=4,
                                    label="%s %s" % (variant, m))
                ax.set_xscale("symlog", linthresh=1)
                ax.set_xlabel("collective calls per communicator")
                self.value_axis(ax, vals, "median time per cycle (us)")
                ax.set_title("MPI_Comm_%s" % how, fontsize="medium")
                ax.grid(True, alpha=0.3)
                self.legend_below(ax, ncol=2)
            sz = "" if coll in SIZELESS or size is None else ", %s" % fmt_bytes(size)
            self.suptitle(fig, title("communicator churn: create, %s%s calls, free" % (coll, sz), g))

    # --- concurrency --------------------------------------------------------
    def concurrency(self, recs):
        for P in sorted({int(r["P"]) for r in recs}):
            g = [r for r in recs if int(r["P"]) == P]
            progress("drawing concurrency P=%d" % P)
            mpis = builds(g)
            fig, axes = self.new("concurrency-p%d" % P, 3, nrows=len(mpis), sharey=False)
            for i_row, (row, m) in enumerate(zip(axes, mpis)):
                last_row = i_row == len(mpis) - 1  # legends below the last row only
                mine = [r for r in g if r["mpi"] == m]
                ks = sorted({int(r["k"]) for r in mine})
                kc = dict(zip(ks, self.colors(len(ks))))
                ax = row[0]
                for test, ls in (("all", "-"), ("first", "--")):
                    cur = series([r for r in mine if r["test"] == test], lambda r: int(r["k"]), "size", "median_us")
                    for k in ks:
                        if cur.get(k):
                            ax.plot(*zip(*cur[k]), color=kc[k], ls=ls, marker="o", ms=3,
                                    label="T_%s(k=%d)" % (test, k))
                ax.set_title("%s: k concurrent transfers from rank 0" % m, fontsize="small")
                ax = row[1]
                cur = series([r for r in mine if r["test"] in ("shm_p2p", "mpi_p2p")], lambda r: r["test"],
                             "size", "median_us")
                for i, t in enumerate(("shm_p2p", "mpi_p2p")):
                    if cur.get(t):
                        ax.plot(*zip(*cur[t]), marker="o", ms=3, color=self.colors(2)[i],
                                label={"shm_p2p": "shared segment + flag", "mpi_p2p": "MPI_Send/Recv"}[t])
                ax.set_title("%s: one message inside a node (RTT/2)" % m, fontsize="small")
                ax = row[2]
                cur = series([r for r in mine if r["test"] == "memcpy"], lambda r: int(r["k"]), "size", "median_us")
                for k in ks + [max(ks + [0]) + 1]:
                    if cur.get(k):
                        pts = [(x, y) for x, y in cur[k] if y > 0]
                        if pts:
                            ax.plot(*zip(*pts), marker="o", ms=3, label="%d concurrent memcpy" % k)
                ax.set_title("%s: k ranks copy at once (max over ranks)" % m, fontsize="small")
                for ax in row:
                    vals = [y for line in ax.get_lines() for y in line.get_ydata()]
                    self.size_axis(ax, "message size (bytes)")
                    self.value_axis(ax, vals, "median time (us)")
                    if ax.get_yscale() == "log":
                        for line in ax.get_lines():  # nothing <= 0 on a log axis
                            xs, ys = line.get_xdata(), line.get_ydata()
                            keep = [(x, y) for x, y in zip(xs, ys) if y > 0]
                            line.set_data([x for x, _ in keep], [y for _, y in keep])
                    ax.grid(True, alpha=0.3)
                    if last_row:
                        self.legend_below(ax, ncol=2)
            fig.subplots_adjust(hspace=0.4)
            if any(r.get("oversubscribed") for r in g):
                what = "concurrency and overhead (oversubscribed: more ranks than cores)"
            else:
                what = "concurrency and overhead"
            self.suptitle(fig, title(what, g))

    # --- strided ------------------------------------------------------------
    def strided(self, recs):
        groups = {}
        for r in recs:
            groups.setdefault((r["pattern"], int(r["P"])), []).append(r)
        for (pattern, P), g in sorted(groups.items()):
            progress("drawing strided %s" % pattern)
            ops = []
            for r in g:
                if r["op"] not in ops:
                    ops.append(r["op"])
            variants, shapes = [], []
            for r in g:
                if r["variant"] not in variants:
                    variants.append(r["variant"])
                if r["shape"] not in shapes:
                    shapes.append(r["shape"])
            vc = dict(zip(variants, self.colors(len(variants))))
            styles = dict(zip(shapes, ["-", "--", ":", "-."] * 4))
            mpis = builds(g)
            mk = dict(zip(mpis, "os^D"))
            fig, axes = self.new("strided-%s-p%d" % (pattern, P), len(ops))
            vals = [r["median_us"] for r in g]
            for ax, op in zip(axes[0], ops):
                for m in mpis:
                    cur = series([r for r in g if r["op"] == op and r["mpi"] == m],
                                 lambda r: (r["variant"], r["shape"]), "bytes", "median_us")
                    for (v, s), pts in cur.items():
                        pts = self.drop_nonpositive(pts, True)
                        if pts:
                            ax.plot(*zip(*pts), color=vc[v], ls=styles[s], marker=mk[m], ms=3)
                for v in variants:
                    ax.plot([], [], color=vc[v], label=v)
                for s in shapes:
                    ax.plot([], [], color="black", ls=styles[s], label="shape %s" % s)
                if len(mpis) > 1:
                    for m in mpis:
                        ax.plot([], [], color="black", ls="none", marker=mk[m], label=m)
                self.size_axis(ax, "bytes moved per operation")
                self.value_axis(ax, vals, "median time per operation (us)")
                ax.set_title(op, fontsize="medium")
                ax.grid(True, alpha=0.3)
                self.legend_below(ax, ncol=3)
            self.suptitle(fig, title("strided one-sided operations, pattern \"%s\"" % pattern, g))

    # --- loggp --------------------------------------------------------------
    def loggp(self, recs):
        for P in sorted({int(r["P"]) for r in recs}):
            g = [r for r in recs if int(r["P"]) == P]
            progress("drawing loggp P=%d" % P)
            mpis = builds(g)
            fig, axes = self.new("loggp-p%d" % P, 3, nrows=len(mpis), sharey=False)
            for i_row, (row, m) in enumerate(zip(axes, mpis)):
                last_row = i_row == len(mpis) - 1  # legends below the last row only
                mine = [r for r in g if r["mpi"] == m]
                p2p = [r for r in mine if r["kind"] == "p2p"]
                chans = []
                for r in p2p:
                    if r["channel"] not in chans:
                        chans.append(r["channel"])
                cc = dict(zip(chans, self.colors(len(chans))))
                ax = row[0]
                for ch in chans:
                    pts = series([r for r in p2p if r["channel"] == ch], lambda r: 0, "size", "rtt_half_us")[0]
                    ax.plot(*zip(*pts), ls="none", marker="o", ms=4, color=cc[ch], label="RTT/2, %s" % ch)
                    fits = [r for r in mine if r["kind"] == "fit" and r.get("channel") == ch]
                    first = True
                    for f in sorted(fits, key=lambda r: r["piece"]):
                        xs = sorted({r["size"] for r in p2p if r["channel"] == ch and r.get("piece") == f["piece"]})
                        if not xs:
                            continue
                        ys = [(f["o_s_ns"] + f["O_ns_per_byte"] * s + f["L_ns"] + (s - 1) * f["G_ns_per_byte"]
                               + f["o_r_ns"]) / 1000.0 for s in xs]
                        ax.plot(xs, ys, color=cc[ch], lw=1.2,
                                label="LogGP fit, %s (per piece)" % ch if first else None)
                        first = False
                load = [r for r in mine if r["kind"] == "load" and is_number(r.get("load_average_start"))]
                loadtxt = ""
                if load:
                    la = [load[-1]["load_average_start"], load[-1].get("load_average_end")]
                    loadtxt = "\nload average %s during the run" % " -> ".join(
                        "%.2f" % v for v in la if is_number(v))
                    if is_number(load[-1].get("cores")):
                        loadtxt += " on %d cores" % load[-1]["cores"]
                ax.set_title("%s: one message (MPI point to point)%s" % (m, loadtxt), fontsize="small")
                ax = row[1]
                if p2p:
                    ch = chans[0]
                    sel = [r for r in p2p if r["channel"] == ch]
                    for i, (field, lab) in enumerate((("gap_us", "g(s), gap"), ("o_s_us", "o_s(s), send overhead"),
                                                      ("o_r_us", "o_r(s), receive overhead"))):
                        pts = series(sel, lambda r: 0, "size", field)[0]
                        ax.plot(*zip(*pts), marker="o", ms=3, color=self.colors(3)[i], label=lab)
                    ax.set_title("%s: gap and overheads (%s)" % (m, ch), fontsize="small")
                ax = row[2]
                shm = [r for r in mine if r["kind"] == "shm"]
                ops = []
                for r in shm:
                    if r["op"] not in ops:
                        ops.append(r["op"])
                oc = dict(zip(ops, self.colors(len(ops))))
                for op in ops:
                    pts = [(x, y) for x, y in series([r for r in shm if r["op"] == op], lambda r: 0, "size",
                                                     "time_us")[0] if y > 0]
                    if not pts:
                        continue
                    ax.plot(*zip(*pts), ls="none", marker="o", ms=3, color=oc[op], label=op)
                    fit = [r for r in mine if r["kind"] == "fit" and r.get("op") == op]
                    if fit and len(pts) > 1:
                        f = fit[-1]
                        xs = [x for x, _ in pts]
                        ax.plot(xs, [(f["fixed_ns"] + f.get("per_byte_ns", 0) * s) / 1000.0 for s in xs], color=oc[op],
                                lw=1)
                ax.set_title("%s: kport's shared-memory operations (lines: fits)" % m, fontsize="small")
                for ax in row:
                    vals = [y for line in ax.get_lines() for y in line.get_ydata()]
                    self.size_axis(ax, "message size (bytes)")
                    self.value_axis(ax, vals, "time (us)")
                    ax.grid(True, alpha=0.3)
                    if last_row:
                        self.legend_below(ax, ncol=2)
            fig.subplots_adjust(hspace=0.4)
            self.suptitle(fig, title("LogGP parameters and shared-memory costs (kport-bench loggp)", g))
