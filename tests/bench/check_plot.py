#!/usr/bin/env python3
"""Run tools/kport-plot and check what it wrote, or how it refused.

    check_plot.py KPORT_PLOT --expect NAME[,NAME...] [--min-colors N] FILE...
    check_plot.py KPORT_PLOT --bad REGEX FILE...

First form: kport-plot writes PNGs of FILE... into a fresh directory; the
check passes when it exits 0, lists the files it wrote on stdout, wrote
every NAME.png of --expect, and every PNG it wrote starts with the PNG
signature, holds more than 10 KB, is at least 300 x 200 pixels and has more
than N (default 40) distinct colours (read back with matplotlib's image
reader: a blank or nearly blank image fails). Exit 77 (ctest's
SKIP_RETURN_CODE) when matplotlib is missing from this interpreter and from
/usr/bin/python3: nothing else skips.

Second form (no matplotlib needed): kport-plot must exit with status 2,
print a message matching REGEX on stderr, write nothing to stdout and
print no Python traceback.

Prints what is wrong; exit status 1.
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SKIP = 77


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=240)


def check_bad(args):
    p = run([args.kport_plot] + args.files)
    errors = []
    if p.returncode != 2:
        errors.append("exit status %d, expected 2" % p.returncode)
    if "Traceback" in p.stderr:
        errors.append("a Python traceback on stderr")
    if not re.search(args.bad, p.stderr):
        errors.append("stderr does not match %r" % args.bad)
    if p.stdout.strip():
        errors.append("stdout is not empty: %r" % p.stdout[:200])
    sys.stderr.write(p.stderr)
    return errors


def need_matplotlib():
    """Returns when matplotlib can be imported here; else re-runs this
    script under /usr/bin/python3 if that one has it, else exits 77."""
    if importlib.util.find_spec("matplotlib") is not None:
        return
    system = "/usr/bin/python3"
    if (os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system)
            and not os.environ.get("KPORT_CHECK_PLOT_REEXEC")):
        os.environ["KPORT_CHECK_PLOT_REEXEC"] = "1"
        os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
    print("check_plot: SKIP: matplotlib is missing (scripts/install-deps.sh installs python3-matplotlib)")
    sys.exit(SKIP)


def check_png(path, min_colors):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import numpy as np
    errors = []
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(PNG_SIGNATURE):
        return ["%s: no PNG signature" % path]
    if len(data) <= 10000:
        errors.append("%s: only %d bytes" % (path, len(data)))
    img = mpimg.imread(path)
    h, w = img.shape[:2]
    if w < 300 or h < 200:
        errors.append("%s: %d x %d pixels" % (path, w, h))
    pixels = img.reshape(-1, img.shape[2]) if img.ndim == 3 else img.reshape(-1, 1)
    colors = len(np.unique(pixels, axis=0))
    if colors <= min_colors:
        errors.append("%s: %d distinct colours (blank?), expected more than %d" % (path, colors, min_colors))
    print("check_plot: %s: %d bytes, %d x %d, %d colours" % (os.path.basename(path), len(data), w, h, colors))
    return errors


def check_good(args):
    need_matplotlib()
    errors = []
    with tempfile.TemporaryDirectory(prefix="kport-plot-") as out:
        p = run([args.kport_plot, "-o", out, "--formats", "png"] + args.files)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            return ["kport-plot exited with status %d" % p.returncode]
        if "Traceback" in p.stderr:
            errors.append("a Python traceback on stderr")
        listed = [line for line in p.stdout.splitlines() if line.strip()]
        written = sorted(f for f in os.listdir(out))
        if sorted(os.path.basename(f) for f in listed) != written:
            errors.append("stdout lists %s, the directory holds %s" % (listed, written))
        for name in [n for e in args.expect for n in e.split(",") if n]:
            if name + ".png" not in written:
                errors.append("%s.png not written (wrote %s)" % (name, ", ".join(written)))
        if not written:
            errors.append("nothing written")
        for f in written:
            if not f.endswith(".png"):
                errors.append("%s: not a PNG name (--formats png)" % f)
                continue
            errors += check_png(os.path.join(out, f), args.min_colors)
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kport_plot")
    ap.add_argument("--expect", action="append", default=[], metavar="NAME[,NAME...]")
    ap.add_argument("--min-colors", type=int, default=40)
    ap.add_argument("--bad", metavar="REGEX")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    errors = check_bad(args) if args.bad is not None else check_good(args)
    for e in errors:
        print("check_plot: FAIL: " + e)
    if not errors:
        print("check_plot: OK")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
