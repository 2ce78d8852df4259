"""kport-plot: kport-sim's figures: the simulated scaling study per
collective and size, and the map of the fastest algorithm over (P, size)
(the manual: kport_plot/__init__.py)."""

import os

from .common import fmt_bytes, fmt_count, median_of, series, short_alg
from .records import SIZELESS, is_number, progress


class SimFigures:
    """kport-sim's figures (a part of Plotter, main.py)."""

    @staticmethod
    def sim_key(r):
        """The line a kport-sim record belongs to: its "label" (the spec a
        script asked for) or the algorithm as run without the clamping note,
        with the node size and rails when there are nodes."""
        a = r["label"] if isinstance(r.get("label"), str) else short_alg(r["algorithm"])
        extra = []
        if is_number(r.get("node_size")) and r["node_size"] > 1:
            extra.append("n=%d" % r["node_size"])
        if is_number(r.get("rails")) and r["rails"] > 1:
            extra.append("rails=%d" % r["rails"])
        return a + (" [%s]" % ", ".join(extra) if extra else "")

    @staticmethod
    def sim_bytes(r):
        return int(r["bytes"]) if is_number(r.get("bytes")) and r["coll"] not in SIZELESS else 0

    @staticmethod
    def sim_title(what, recs):
        ps = sorted({int(r["P"]) for r in recs})
        pstr = "P=%s..%s" % (fmt_count(ps[0]), fmt_count(ps[-1])) if len(ps) > 1 else "P=%s" % fmt_count(ps[0])
        files = sorted({os.path.basename(r["params"]["file"]) for r in recs
                        if isinstance(r.get("params"), dict) and isinstance(r["params"].get("file"), str)})
        pars = "parameters " + ", ".join(files) if files else "command-line LogGP parameters"
        dates = sorted({r["_date"] for r in recs})
        dstr = dates[0] if len(dates) == 1 else "%s..%s" % (dates[0], dates[-1])
        return "%s\nkport-sim, %s, %s, %s" % (what, pars, pstr, dstr)

    def p_axis(self, ax):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(self.ticker.FuncFormatter(lambda v, _p: fmt_count(v)))
        ax.xaxis.set_major_locator(self.ticker.LogLocator(base=4))
        ax.xaxis.set_minor_locator(self.ticker.NullLocator())
        ax.set_xlabel("P (ranks)")

    def sim(self, recs):
        by_coll = {}
        for r in recs:
            by_coll.setdefault(r["coll"], []).append(r)
        for coll in sorted(by_coll):
            g = by_coll[coll]
            by_size = {}
            for r in g:
                by_size.setdefault(self.sim_bytes(r), []).append(r)
            keys = []
            for r in g:
                if self.sim_key(r) not in keys:
                    keys.append(self.sim_key(r))
            color = dict(zip(keys, self.colors(len(keys))))
            for size in sorted(by_size):
                self.sim_scaling(coll, size, by_size[size], color)
            self.sim_winners(coll, g, color)
            self.flush()

    def sim_scaling(self, coll, size, g, color):
        base = "sim-%s-scaling" % coll if coll in SIZELESS else "sim-%s-%s-scaling" % (coll, fmt_bytes(size).replace(" ", ""))
        progress("drawing %s" % base)
        what = "%s%s: simulated completion time against P" % (
            coll, "" if coll in SIZELESS else ", %s per rank" % fmt_bytes(size))
        curves = series(g, self.sim_key, lambda r: int(r["P"]), lambda r: r["max_time_ns"] / 1000.0)
        fig, axes = self.new(base, 1, w=7.4, h=5.2)
        ax = axes[0][0]
        markers = "os^vD<>pPhX*"
        allv = [y for pts in curves.values() for _, y in pts]
        log = self.spans_decades(allv)
        for i, k in enumerate(sorted(curves, key=lambda k: list(color).index(k))):
            pts = self.drop_nonpositive(curves[k], log)
            if pts:
                ax.plot(*zip(*pts), color=color[k], marker=markers[i % len(markers)], ms=4, lw=1.2, label=k)
        self.p_axis(ax)
        self.value_axis(ax, allv, "completion time, max over ranks (us)")
        ax.grid(True, which="major", alpha=0.3)
        self.legend_below(ax, ncol=2)
        self.suptitle(fig, self.sim_title(what, g))

    def sim_winners(self, coll, g, color):
        """Heat map: the fastest algorithm per (P, size), among the lines
        simulated at that point; each cell says how much slower the
        runner-up is (x1.23) when the grid is small enough to read."""
        base = "sim-%s-winner" % coll
        progress("drawing %s" % base)
        best = {}
        for (k, P, size), t in self.sim_cells(g).items():
            cell = best.setdefault((P, size), [])
            cell.append((t, k))
        ps = sorted({P for P, _ in best})
        sizes = sorted({s for _, s in best})
        winners = [k for k in color if any(min(c)[1] == k for c in best.values())]
        idx = {k: i for i, k in enumerate(winners)}
        grid = [[float("nan")] * len(ps) for _ in sizes]
        for (P, size), cell in best.items():
            grid[sizes.index(size)][ps.index(P)] = idx[min(cell)[1]]
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Patch
        fig, axes = self.new(base, 1, w=max(6.4, 0.55 * len(ps) + 2.5), h=max(3.2, 0.42 * len(sizes) + 2.6))
        ax = axes[0][0]
        cmap = ListedColormap([color[k] for k in winners])
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(winners) - 0.5, aspect="auto", origin="lower",
                  interpolation="nearest")
        if len(ps) * len(sizes) <= 400:
            for (P, size), cell in best.items():
                cell = sorted(cell)
                note = "x%.2f" % (cell[1][0] / cell[0][0]) if len(cell) > 1 and cell[0][0] > 0 else "only"
                ax.text(ps.index(P), sizes.index(size), note, ha="center", va="center", fontsize=6, color="black")
        ax.set_xticks(range(len(ps)))
        ax.set_xticklabels([fmt_count(P) for P in ps], rotation=45)
        ax.set_xlabel("P (ranks)")
        ax.set_yticks(range(len(sizes)))
        ax.set_yticklabels(["-" if coll in SIZELESS else fmt_bytes(s) for s in sizes])
        ax.set_ylabel("" if coll in SIZELESS else "message size (bytes per rank)")
        ax.legend(handles=[Patch(color=color[k], label=k) for k in winners], loc="upper center",
                  bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize="x-small", frameon=False,
                  title="fastest (cell: runner-up's time over the winner's)", title_fontsize="x-small")
        self.suptitle(fig, self.sim_title("%s: the fastest algorithm per (P, size), simulated" % coll, g))

    def sim_cells(self, g):
        """{(line, P, size): max_time_ns}, the median where runs repeat."""
        acc = {}
        for r in g:
            acc.setdefault((self.sim_key(r), int(r["P"]), self.sim_bytes(r)), []).append(r["max_time_ns"])
        return {k: median_of(v) for k, v in acc.items()}
