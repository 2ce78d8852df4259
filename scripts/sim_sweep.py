#!/usr/bin/env python3
"""sim_sweep.py: a simulated scaling study - kport-sim over algorithms x P x
sizes, its JSON lines in one file, then kport-plot's figures of it.

    scripts/sim_sweep.py [--sim PATH] [-o DIR] [-P LIST] [-m SIZES] [-a LINE]...
                         [--params FILE] [--budget SECONDS] [--no-plot] [-n]

    scripts/sim_sweep.py --sim build/ompi/kport-sim             # the default study below
    scripts/sim_sweep.py -P 16:4096 -m 8,1K,64K -a "allgather bruck:k=1" \\
                         -a "allgather smp_bruck:k=1 n=16" --params params.json

  --sim PATH      kport-sim (default: $KPORT_SIM, else build/ompi/kport-sim,
                  else the first build/*/kport-sim)
  -o DIR          output directory (default build/sim-sweep): DIR/sim.jsonl (one
                  kport-sim --format json object per run, with "label" added:
                  the spec asked for) and the figures DIR/sim-*.png, .pdf
  -P LIST         communicator sizes: MIN:MAX (the powers of two in between,
                  both included when powers of two) or a comma list; 2^N is
                  accepted (default 2^4:2^20)
  -m SIZES        bytes per rank, comma list, K/M suffixes (default 8,4K);
                  sizeless collectives (barrier) run once per P
  -a LINE         "COLL SPEC [max=P] [n=NODE_SIZE] [rails=R]": one line of the
                  study (repeat; replaces the default set). max= skips larger
                  P (O(P^2) algorithms), n= passes --node-size, rails= --rails
  --params FILE   machine parameter file (docs/PARAMETERS.md), passed to every run;
                  without it kport-sim's own defaults / -L -o -g -G -O -S apply
  --sim-args ARGS extra kport-sim options, one string (e.g. "-L 2000 -o 300")
  --budget S      once a run of a line takes more than S seconds of wall time,
                  skip that line's larger P (default: no limit)
  --timeout S     kill a run after S seconds (default 600) and go on
  --no-plot       do not call kport-plot
  -n              print the runs without running them

The default study (issue 9): all-gather bruck k=1 and k=2, recursive_doubling,
ring and direct (both only to P = 16384: O(P^2) messages), smp_bruck on nodes
of 16 ranks; barrier dissemination and nway_dissemination n=2 and n=4;
P = 2^4 .. 2^20; 8 B and 4 KiB. It is a benchmark, not a test: it takes
minutes. A run that fails (exit status, no JSON) is reported on stderr and
left out of the file; the exit status is then 1 (after the figures).
Progress (run i of n, the spec, P, size, wall time) on stderr only when
stderr is a terminal.
"""
import argparse
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZELESS = ("barrier",)

DEFAULT_LINES = [
    "allgather bruck:k=1",
    "allgather bruck:k=2",
    "allgather recursive_doubling",
    "allgather ring max=16384",
    "allgather direct max=16384",
    "allgather smp_bruck n=16",
    "barrier dissemination",
    "barrier nway_dissemination:n=2",
    "barrier nway_dissemination:n=4",
]


def fail(msg):
    print("sim_sweep: " + msg, file=sys.stderr)
    sys.exit(2)


def number(s, what):
    m = re.fullmatch(r"\s*(?:2\^(\d+)|(\d+)\s*([kKmM]?)i?[bB]?)\s*", s)
    if not m:
        fail("bad %s \"%s\" (an integer, 2^N, or with K / M)" % (what, s))
    if m.group(1):
        return 1 << int(m.group(1))
    return int(m.group(2)) * {"": 1, "k": 1 << 10, "m": 1 << 20}[m.group(3).lower()]


def p_list(s):
    if ":" in s:
        lo, hi = (number(x, "P") for x in s.split(":", 1))
        if lo < 1 or hi < lo:
            fail("bad -P \"%s\" (MIN:MAX with 1 <= MIN <= MAX)" % s)
        ps, p = [lo], 1
        while p <= hi:
            if p > lo:
                ps.append(p)
            p *= 2
        if hi not in ps:
            ps.append(hi)
        return ps
    ps = sorted({number(x, "P") for x in s.split(",") if x.strip()})
    if not ps or ps[0] < 1:
        fail("bad -P \"%s\"" % s)
    return ps


def parse_line(s):
    words = s.split()
    if len(words) < 2:
        fail("bad -a \"%s\" (\"COLL SPEC [max=P] [n=NODE_SIZE] [rails=R]\")" % s)
    line = {"coll": words[0], "spec": words[1], "max": None, "n": None, "rails": None}
    for w in words[2:]:
        k, _, v = w.partition("=")
        if k not in ("max", "n", "rails") or not v:
            fail("bad -a \"%s\": \"%s\" (max=P, n=NODE_SIZE or rails=R)" % (s, w))
        line[k] = number(v, k)
    return line


def find_sim(arg):
    for c in [arg, os.environ.get("KPORT_SIM"), os.path.join(ROOT, "build/ompi/kport-sim")] + \
            sorted(glob.glob(os.path.join(ROOT, "build/*/kport-sim"))):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
        if c and c == arg:
            fail("--sim %s: not an executable file" % arg)
    fail("kport-sim not found: build it (cmake --build BUILD --target kport-sim) and pass --sim PATH")


def main(argv):
    ap = argparse.ArgumentParser(prog="sim_sweep.py", add_help=False)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("--sim")
    ap.add_argument("-o", dest="out", default=os.path.join(ROOT, "build/sim-sweep"))
    ap.add_argument("-P", dest="P", default="2^4:2^20")
    ap.add_argument("-m", dest="sizes", default="8,4K")
    ap.add_argument("-a", dest="lines", action="append")
    ap.add_argument("--params")
    ap.add_argument("--sim-args", default="")
    ap.add_argument("--budget", type=float)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("-n", dest="dry", action="store_true")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if a.help:
        print(__doc__)
        return 0
    ps = p_list(a.P)
    sizes = sorted({number(x, "size") for x in a.sizes.split(",") if x.strip()})
    lines = [parse_line(s) for s in (a.lines or DEFAULT_LINES)]
    if a.params and not os.path.isfile(a.params):
        fail("--params %s: no such file" % a.params)
    sim = "kport-sim" if a.dry and not a.sim else find_sim(a.sim)
    runs = []
    for P in ps:
        for ln in lines:
            if ln["max"] is not None and P > ln["max"]:
                continue
            for size in ([0] if ln["coll"] in SIZELESS else sizes):
                cmd = [sim, ln["coll"], "-a", ln["spec"], "-P", str(P), "--format", "json", "-q"]
                if ln["coll"] not in SIZELESS:
                    cmd += ["-m", str(size)]
                if ln["n"]:
                    cmd += ["--node-size", str(ln["n"])]
                if ln["rails"]:
                    cmd += ["--rails", str(ln["rails"])]
                if a.params:
                    cmd += ["--params", a.params]
                cmd += shlex.split(a.sim_args)
                runs.append((ln, P, size, cmd))
    if a.dry:
        for _, _, _, cmd in runs:
            print(" ".join(shlex.quote(c) for c in cmd))
        return 0
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "sim.jsonl")
    tty = sys.stderr.isatty()
    failed, over = 0, set()
    t_all = time.time()
    with open(path, "w") as f:
        for i, (ln, P, size, cmd) in enumerate(runs, 1):
            key = (ln["coll"], ln["spec"], ln["n"], ln["rails"])
            if key in over:
                continue
            if tty:
                print("\r\033[K[%d/%d] %s %s P=%d%s ..." % (i, len(runs), ln["coll"], ln["spec"], P,
                                                           "" if ln["coll"] in SIZELESS else " %d B" % size),
                      end="", file=sys.stderr, flush=True)
            t0 = time.time()
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                   timeout=a.timeout)
                out, err, rc = p.stdout, p.stderr, p.returncode
            except subprocess.TimeoutExpired:
                out, err, rc = "", "timed out after %g s" % a.timeout, -1
            wall = time.time() - t0
            rec = None
            if rc == 0:
                try:
                    rec = json.loads(out)
                except ValueError:
                    err = "not one JSON object on stdout: %r" % out[:200]
            if not isinstance(rec, dict):
                failed += 1
                print("%ssim_sweep: failed (%s): %s\n  %s" % ("\n" if tty else "", rc,
                      " ".join(shlex.quote(c) for c in cmd), err.strip()[:500]), file=sys.stderr)
                continue
            rec["label"] = ln["spec"]
            f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.flush()
            if a.budget is not None and wall > a.budget:
                over.add(key)
                print("%ssim_sweep: %s %s took %.1f s at P=%d (> --budget %g): larger P skipped"
                      % ("\n" if tty else "", ln["coll"], ln["spec"], wall, P, a.budget), file=sys.stderr)
    if tty:
        print("\r\033[K", end="", file=sys.stderr)
    print("sim_sweep: %d runs in %.0f s, %d failed: %s" % (len(runs), time.time() - t_all, failed, path),
          file=sys.stderr)
    rc = 1 if failed else 0
    if not a.no_plot:
        p = subprocess.run([os.path.join(ROOT, "tools/kport-plot"), "-o", a.out, path])
        if p.returncode:
            rc = p.returncode
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
