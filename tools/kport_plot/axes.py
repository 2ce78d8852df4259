"""kport-plot: the figures' axes (sizes on log2 axes, values on a log axis
when they span a decade), colours, legends, and writing the figures drawn;
the base of Plotter (main.py)."""

from .common import fmt_bytes

class Axes:
    """Figures on matplotlib (imported by main after the input is read): the
    parts every figure shares."""

    def __init__(self, plt, ticker, save):
        self.plt = plt
        self.ticker = ticker
        self.save = save   # save(name, figure): writes the figure's files
        self.figures = []  # (name, figure) drawn, not yet written

    def flush(self):
        """Write and close the figures drawn so far."""
        for name, fig in self.figures:
            self.save(name, fig)
            self.plt.close(fig)
        self.figures = []

    # --- axes ---------------------------------------------------------------
    @staticmethod
    def suptitle(fig, text):
        fig.suptitle(text, y=1.0, va="bottom")

    def size_axis(self, ax, label="message size (bytes per rank)"):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(self.ticker.FuncFormatter(fmt_bytes))
        ax.xaxis.set_major_locator(self.ticker.LogLocator(base=4))
        ax.xaxis.set_minor_locator(self.ticker.NullLocator())
        ax.set_xlabel(label)
        for t in ax.get_xticklabels():
            t.set_rotation(30)

    @staticmethod
    def spans_decades(values):
        pos = [v for v in values if v > 0]
        return len(pos) >= 2 and max(pos) / min(pos) > 10

    def value_axis(self, ax, values, label):
        ax.set_ylabel(label)
        if self.spans_decades(values):
            ax.set_yscale("log")
            return True
        ax.set_ylim(bottom=0)
        return False

    def colors(self, n):
        cmap = self.plt.get_cmap("tab10" if n <= 10 else "tab20")
        return [cmap(i % cmap.N) for i in range(n)]

    def new(self, name, ncols, nrows=1, w=6.4, h=4.6, sharey=True):
        fig, axes = self.plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False,
                                      sharey=sharey)
        self.figures.append((name, fig))
        return fig, axes

    def legend_below(self, ax, ncol=3, **kw):
        h, l = ax.get_legend_handles_labels()
        if h:
            ax.legend(h, l, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=ncol,
                      fontsize="x-small", frameon=False, **kw)

    @staticmethod
    def drop_nonpositive(pts, log):
        return [(x, y) for x, y in pts if y > 0] if log else pts
