"""kport-plot: the collectives' figures (kport-bench allgather, barrier,
gather, alltoall, bcast, scatter and the reductions): latency against size
per algorithm with the native collectives, the ratio to the better native,
measured against predicted, the scatter of predicted against measured, and
for allreduce the ratio to its memory-bandwidth limit (the manual:
kport_plot/__init__.py)."""

import re

from kport_tools.mpi import mpi_tag

from .common import builds, fmt_bytes, median_of, series, short_alg, title
from .records import NOT_KPORT, SIZE_LABEL, SIZELESS, is_number, progress, say


class CollectiveFigures:
    """The collectives' figures (a part of Plotter, main.py)."""

    def collectives(self, recs):
        groups = {}
        for r in recs:
            mode = r.get("mode", "isolated")
            calls = int(r["calls_per_batch"]) if mode == "b2b" and is_number(r.get("calls_per_batch")) else 0
            root = int(r["root"]) if is_number(r.get("root")) else None
            red = (r.get("type") or "double", r.get("op") or "sum") if "type" in r or "op" in r else None
            groups.setdefault((r["coll"], int(r["P"]), mode, calls, root, red), []).append(r)
        for (coll, P, mode, calls, root, red), g in sorted(groups.items(), key=lambda kv: str(kv[0])):
            base = "%s-p%d" % (coll, P)
            what = coll
            if red is not None:  # a reduction: its type and op, named in files unless double and sum
                if red != ("double", "sum"):
                    base += "-%s-%s" % (re.sub(r"[^A-Za-z0-9]+", "_", red[0]), re.sub(r"[^A-Za-z0-9]+", "_", red[1]))
                what += " (%s, %s)" % red
            if mode == "b2b":
                base += "-b2b%d" % calls
                what += ", back to back (%d calls per batch)" % calls
            elif mode != "isolated":
                base += "-" + re.sub(r"[^A-Za-z0-9]+", "_", mode)
                what += ", " + mode
            if root is not None:
                base += "-root%d" % root
                what += ", root %d" % root
            progress("drawing %s" % base)
            if coll in SIZELESS or len({r["size"] for r in g}) == 1:
                self.coll_bars(base, what, g)
            else:
                self.coll_curves(base, what, g)
            if any(is_number(r.get("predicted_us")) for r in g):
                self.scatter(base + "-scatter", "%s: predicted against measured" % what, g)
            if any(is_number(r.get("bw_limit_us")) and r["size"] > 0 for r in g):
                self.limit_curves(base + "-limit", what, g)
            self.flush()

    def alg_key(self, r):
        return short_alg(r["algorithm"])

    def native_best(self, g):
        """{size: the better native median over all builds}."""
        best = {}
        for r in g:
            if r["algorithm"] == "native":
                s = r["size"]
                best.setdefault(s, []).append(r["median_us"])
        return {s: min(v) for s, v in best.items()}

    def coll_curves(self, base, what, g):
        if any(r["size"] <= 0 for r in g):
            say("%s: size 0 not drawn (the size axis is logarithmic)" % base)
            g = [r for r in g if r["size"] > 0]
        mpis = builds(g)
        natives = series([r for r in g if r["algorithm"] == "native"], lambda r: r["mpi"], "size", "median_us")
        best = self.native_best(g)
        kport = [r for r in g if r["algorithm"] not in NOT_KPORT]
        algs = []
        for r in kport:
            if self.alg_key(r) not in algs:
                algs.append(self.alg_key(r))
        color = dict(zip(algs, self.colors(len(algs))))
        markers = "os^vD<>pPhX*"
        marker = {a: markers[i % len(markers)] for i, a in enumerate(algs)}
        size_label = SIZE_LABEL.get(g[0]["coll"], "message size (bytes per rank)")
        unit = "us per call" if g[0].get("mode") == "b2b" else "us"
        ylab = "median latency (%s)" % unit
        native_styles = ["-", "--", "-.", ":"]

        def draw_natives(ax, transform):
            for i, m in enumerate(mpis):
                pts = [(x, transform(x, y)) for x, y in natives.get(m, [])]
                pts = [(x, y) for x, y in pts if y is not None]
                if pts:
                    ax.plot(*zip(*pts), color="black", lw=2.2, ls=native_styles[i % 4],
                            label="native %s" % m, zorder=3)

        # latency
        fig, axes = self.new(base + "-latency", len(mpis))
        allv = [r["median_us"] for r in g]
        for ax, m in zip(axes[0], mpis):
            mine = [r for r in g if r["mpi"] == m]
            curves = series([r for r in mine if r["algorithm"] not in NOT_KPORT],
                            self.alg_key, "size", "median_us")
            log = self.spans_decades(allv)
            for a in algs:
                pts = self.drop_nonpositive(curves.get(a, []), log)
                if pts:
                    ax.plot(*zip(*pts), color=color[a], marker=marker[a], ms=4, lw=1.2, label=a)
            draw_natives(ax, lambda x, y: y)
            for ref_alg, ls, label in (("memcpy", ":", "memcpy (reference)"),
                                       ("bw_limit", "--", "bw_limit (memory-bandwidth limit)")):
                ref = series([r for r in mine if r["algorithm"] == ref_alg], lambda r: 0, "size", "median_us")
                pts = self.drop_nonpositive(ref.get(0, []), log)
                if pts:
                    ax.plot(*zip(*pts), color="grey", ls=ls, lw=1.5, label=label)
            self.size_axis(ax, size_label)
            self.value_axis(ax, allv, ylab)
            ax.set_title("kport on %s" % m, fontsize="medium")
            ax.grid(True, which="major", alpha=0.3)
            self.legend_below(ax)
        self.suptitle(fig, title("%s: latency against message size" % what, g))

        # ratio to the better native
        if best:
            fig, axes = self.new(base + "-ratio", len(mpis))
            ratios = []
            for ax, m in zip(axes[0], mpis):
                mine = [r for r in g if r["mpi"] == m and r["algorithm"] not in NOT_KPORT]
                curves = series(mine, self.alg_key, "size",
                                lambda r: r["median_us"] / best[r["size"]]
                                if best.get(r["size"], 0) > 0 else None)
                for a in algs:
                    pts = curves.get(a, [])
                    ratios += [y for _, y in pts]
                    if pts:
                        ax.plot(*zip(*pts), color=color[a], marker=marker[a], ms=4, lw=1.2, label=a)
                draw_natives(ax, lambda x, y: y / best[x] if best.get(x, 0) > 0 else None)
                ax.axhline(1.0, color="black", lw=0.8)
                self.size_axis(ax, size_label)
                ax.set_title("kport on %s" % m, fontsize="medium")
                ax.grid(True, which="major", alpha=0.3)
                self.legend_below(ax)
            for ax in axes[0]:
                if ratios and max(ratios) / max(min(ratios), 1e-9) > 4:
                    ax.set_yscale("log", base=2)
                    ax.yaxis.set_major_formatter(self.ticker.FormatStrFormatter("%g"))
                else:
                    ax.set_ylim(bottom=0)
            axes[0][0].set_ylabel("median / better native median (below 1: kport faster)")
            self.suptitle(fig, title("%s: ratio to the better native MPI" % what, g))

        # predicted against measured, as curves
        pred = [r for r in kport if is_number(r.get("predicted_us"))]
        if pred:
            pmpis = builds(pred)
            fig, axes = self.new(base + "-predicted", len(pmpis))
            vals = [r["median_us"] for r in pred] + [r["predicted_us"] for r in pred]
            for ax, m in zip(axes[0], pmpis):
                mine = [r for r in pred if r["mpi"] == m]
                meas = series(mine, self.alg_key, "size", "median_us")
                prd = series(mine, self.alg_key, "size", "predicted_us")
                log = self.spans_decades(vals)
                for a in algs:
                    if a in meas:
                        ax.plot(*zip(*self.drop_nonpositive(meas[a], log)), color=color[a], marker=marker[a],
                                ms=4, lw=1.2, label=a)
                        pts = self.drop_nonpositive(prd.get(a, []), log)
                        if pts:
                            ax.plot(*zip(*pts), color=color[a], ls="--", lw=1.2)
                ax.plot([], [], color="black", lw=1.2, label="measured median (solid)")
                ax.plot([], [], color="black", lw=1.2, ls="--", label="predicted, LogGP (dashed)")
                self.size_axis(ax, size_label)
                self.value_axis(ax, vals, "latency (us)")
                ax.set_title("kport on %s" % m, fontsize="medium")
                ax.grid(True, which="major", alpha=0.3)
                self.legend_below(ax)
            self.suptitle(fig, title("%s: predicted (cost model) and measured latency" % what, g))

    def coll_bars(self, base, what, g):
        mpis = builds(g)
        algs = []
        for r in g:
            if self.alg_key(r) not in algs:
                algs.append(self.alg_key(r))
        best = self.native_best(g)
        cols = self.colors(max(len(mpis), 1))
        width = 0.8 / max(len(mpis), 1)
        med = series(g, lambda r: (r["mpi"], self.alg_key(r)), lambda r: 0, "median_us")
        prd = series(g, lambda r: (r["mpi"], self.alg_key(r)), lambda r: 0, "predicted_us")
        size = g[0]["size"]
        sub = "" if g[0]["coll"] in SIZELESS else ", %s per rank" % fmt_bytes(size)
        panels = [("latency", "median latency (us)", lambda m, a: med.get((m, a), [(0, None)])[0][1])]
        if best:
            panels.append(("ratio", "median / better native median",
                           lambda m, a: (med[(m, a)][0][1] / min(best.values()))
                           if (m, a) in med and min(best.values()) > 0 else None))
        for name, ylab, value in panels:
            fig, axes = self.new("%s-%s" % (base, name), 1, w=max(6.4, 0.55 * len(algs) + 2))
            ax = axes[0][0]
            for i, m in enumerate(mpis):
                xs, ys = [], []
                for j, a in enumerate(algs):
                    v = value(m, a)
                    if v is not None:
                        xs.append(j + (i - (len(mpis) - 1) / 2) * width)
                        ys.append(v)
                ax.bar(xs, ys, width=width, color=cols[i], label=m)
                if name == "latency":
                    pxs, pys = [], []
                    for j, a in enumerate(algs):
                        p = prd.get((m, a))
                        if p and p[0][1] is not None:
                            pxs.append(j + (i - (len(mpis) - 1) / 2) * width)
                            pys.append(p[0][1])
                    if pxs:
                        ax.scatter(pxs, pys, marker="_", s=200, color="black", zorder=3,
                                   label="predicted (%s)" % mpi_tag(m))
            if name == "ratio":
                ax.axhline(1.0, color="black", lw=0.8)
            ax.set_xticks(range(len(algs)))
            ax.set_xticklabels(algs, rotation=40, ha="right", fontsize="small")
            ax.set_xlabel("algorithm")
            ax.set_ylabel(ylab)
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize="x-small")
            self.suptitle(fig, title("%s%s: %s" % (what, sub, name), g))

    def scatter(self, name, what, g):
        pts = [r for r in g if is_number(r.get("predicted_us")) and r["algorithm"] not in NOT_KPORT
               and r["median_us"] > 0 and r["predicted_us"] > 0]
        if not pts:
            return
        fig, axes = self.new(name, 1, w=7.5, h=6.4)
        ax = axes[0][0]
        algs = []
        for r in pts:
            if self.alg_key(r) not in algs:
                algs.append(self.alg_key(r))
        color = dict(zip(algs, self.colors(len(algs))))
        mpis = builds(pts)
        markers = "os^Dv"
        lo = min(min(r["median_us"], r["predicted_us"]) for r in pts) / 1.5
        hi = max(max(r["median_us"], r["predicted_us"]) for r in pts) * 1.5
        line = [lo, hi]
        ax.fill_between(line, [v * 0.75 for v in line], [v * 1.25 for v in line], color="green", alpha=0.12,
                        label="within +-25%")
        ax.plot(line, line, color="black", lw=1, label="predicted = measured")
        for i, m in enumerate(mpis):
            mine = [r for r in pts if r["mpi"] == m]
            errs = [abs(r["predicted_us"] / r["median_us"] - 1) for r in mine]
            inband = sum(1 for e in errs if e <= 0.25)
            for a in algs:
                sel = [r for r in mine if self.alg_key(r) == a]
                if sel:
                    ax.scatter([r["median_us"] for r in sel], [r["predicted_us"] for r in sel], s=22,
                               marker=markers[i % len(markers)], color=color[a], alpha=0.85,
                               edgecolors="none")
            ax.scatter([], [], marker=markers[i % len(markers)], color="grey",
                       label="%s: median error %.0f%%, %d of %d within 25%%"
                       % (m, 100 * median_of(errs), inband, len(errs)))
        for a in algs:
            ax.scatter([], [], marker="s", color=color[a], label=a)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.set_xlabel("measured median (us)")
        ax.set_ylabel("predicted by the cost model (us)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="x-small", frameon=False)
        self.suptitle(fig, title(what, g))

    def limit_curves(self, base, what, g):
        """Every median over the bw_limit of its build and size (kport-bench
        allreduce's "bw_limit_us"), one panel per build: 1 is the limit, the
        dotted line 1.2 the issue's target from 64 KiB up."""
        g = [r for r in g if is_number(r.get("bw_limit_us")) and r["bw_limit_us"] > 0 and r["size"] > 0
             and r["algorithm"] != "bw_limit"]
        if not g:
            return
        mpis = builds(g)
        algs = []
        for r in g:
            if r["algorithm"] not in ("memcpy", "sendrecv") and self.alg_key(r) not in algs:
                algs.append(self.alg_key(r))
        color = dict(zip(algs, self.colors(len(algs))))
        fig, axes = self.new(base, len(mpis))
        ratios = [r["median_us"] / r["bw_limit_us"] for r in g]
        for ax, m in zip(axes[0], mpis):
            curves = series([r for r in g if r["mpi"] == m], self.alg_key, "size",
                            lambda r: r["median_us"] / r["bw_limit_us"])
            for a in algs:
                if a in curves:
                    native = a == "native"
                    ax.plot(*zip(*curves[a]), color="black" if native else color[a], lw=2.2 if native else 1.2,
                            marker=None if native else "o", ms=3, label="native %s" % m if native else a)
            ax.axhline(1.0, color="grey", lw=1.0, ls="--", label="bw_limit")
            ax.axhline(1.2, color="grey", lw=0.8, ls=":", label="1.2 x bw_limit")
            self.size_axis(ax, SIZE_LABEL.get(g[0]["coll"], "message size (bytes)"))
            if max(ratios) / max(min(ratios), 1e-9) > 10:
                ax.set_yscale("log", base=2)
                ax.yaxis.set_major_formatter(self.ticker.FormatStrFormatter("%g"))
            else:
                ax.set_ylim(bottom=0)
            ax.set_title("kport on %s" % m, fontsize="medium")
            ax.grid(True, which="major", alpha=0.3)
            self.legend_below(ax)
        axes[0][0].set_ylabel("median / bw_limit (1: the memory-bandwidth limit)")
        self.suptitle(fig, title("%s: against the memory-bandwidth limit" % what, g))
