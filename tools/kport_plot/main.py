"""kport-plot: the command line (the manual: kport_plot/__init__.py)."""

import argparse
import os
import re
import sys

import kport_plot

from .axes import Axes
from .collectives import CollectiveFigures
from .machine import MachineFigures
from .records import (COLLECTIVES, EXIT_BAD, EXIT_IO, EXIT_NO_MATPLOTLIB, REQUIRED, BadInput, CannotWrite, load,
                      progress, say)
from .sim import SimFigures


class Plotter(Axes, CollectiveFigures, MachineFigures, SimFigures):
    """Figures on matplotlib (imported by main after the input is read)."""


def system_python_instead(argv):
    """Run under /usr/bin/python3 (Debian's python3-matplotlib) when this
    interpreter lacks matplotlib and that one is another; returns if not."""
    import importlib.util
    system = "/usr/bin/python3"
    if importlib.util.find_spec("matplotlib") is not None or os.environ.get("KPORT_PLOT_REEXEC"):
        return
    if not os.path.exists(system) or os.path.realpath(sys.executable) == os.path.realpath(system):
        return
    os.environ["KPORT_PLOT_REEXEC"] = "1"
    try:
        os.execv(system, [system, os.path.abspath(sys.argv[0])] + argv)
    except OSError:
        pass


def main(argv):
    system_python_instead(argv)
    ap = argparse.ArgumentParser(
        prog="kport-plot", description="Draw kport-bench and kport-sim JSON (--format json) as PNG and PDF figures.",
        epilog="The manual is the header of this file: figures, names, scales, exit status.")
    ap.add_argument("files", nargs="+", metavar="FILE", help="JSON lines of kport-bench or kport-sim (- for stdin)")
    ap.add_argument("-o", "--outdir", default=".", help="directory for the figures (default: .)")
    ap.add_argument("--prefix", default="", help="prefix of every file name")
    ap.add_argument("--formats", default="png,pdf", help="comma-separated, of png, pdf, svg (default png,pdf)")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not list the files written")
    if len(argv) == 0 or argv[0] in ("-h", "--help"):
        if len(argv) == 0:
            ap.print_usage(sys.stderr)
            say("no input files (kport-plot -h for the manual)")
            return EXIT_BAD
        print(kport_plot.__doc__)
        return 0
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_BAD if e.code else 0
    formats = [f.strip().lower() for f in args.formats.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("png", "pdf", "svg")]
    if bad or not formats:
        say("bad --formats \"%s\": use png, pdf or svg" % args.formats)
        return EXIT_BAD
    if re.search(r"[/\\]", args.prefix):
        say("bad --prefix \"%s\": no directories (use -o)" % args.prefix)
        return EXIT_BAD

    try:
        records, unknown, not_ok = load(args.files)
    except BadInput as e:
        say(str(e))
        return EXIT_BAD
    for label, n in sorted(unknown.items()):
        say("skipped %d record%s of kind \"%s\" (not drawn)" % (n, "" if n == 1 else "s", label))
    if not_ok:
        say("skipped %d record%s whose status is not ok (n/a, error)" % (not_ok, "" if not_ok == 1 else "s"))
    if not records:
        say("no records kport-plot draws in %s (expected kport-sim or kport-bench --format json output of: %s)"
            % (", ".join(args.files),
               ", ".join(COLLECTIVES + tuple(k for k in REQUIRED if k not in ("collective", "sim")))))
        return EXIT_BAD

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker as ticker
    except ImportError:
        say("matplotlib is missing (Debian: apt-get install python3-matplotlib; scripts/install-deps.sh does it)")
        return EXIT_NO_MATPLOTLIB

    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 110, "font.size": 9,
                         "pdf.fonttype": 42, "svg.hashsalt": "kport"})
    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        say("cannot create %s: %s" % (args.outdir, e.strerror or e))
        return EXIT_IO
    written = []

    def save(name, fig):
        for fmt in formats:
            path = os.path.join(args.outdir, "%s%s.%s" % (args.prefix, name, fmt))
            progress("writing %s" % path)
            try:
                fig.savefig(path, format=fmt, bbox_inches="tight",
                            metadata={"Creator": "kport-plot"} if fmt == "png" else None)
            except (OSError, ValueError) as e:
                raise CannotWrite("cannot write %s: %s" % (path, getattr(e, "strerror", None) or e))
            written.append(path)

    p = Plotter(plt, ticker, save)
    by = {}
    for r in records:
        by.setdefault(r["_kind"], []).append(r)
    draw = (("collective", p.collectives), ("fanout", p.fanout), ("churn", p.churn),
            ("concurrency", p.concurrency), ("strided", p.strided), ("loggp", p.loggp), ("sim", p.sim))
    try:
        for kind, fn in draw:
            if kind in by:
                fn(by[kind])
                p.flush()
    except CannotWrite as e:
        say(str(e))
        return EXIT_IO
    if not args.quiet:
        for path in written:
            print(path)
    return 0
