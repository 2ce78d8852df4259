#!/usr/bin/env python3
"""Run a kport-bench command with --format json and check what it printed.

    check_bench_json.py [--expect KEY=VALUE ...] [--records N] [--keys K1,K2] -- mpiexec ... kport-bench ...

Passes when the command exits 0 and every stdout line is a JSON object with
"status": "ok", "validated": true and "errors": 0, that carries every KEY
with VALUE (compared as JSON: --expect calls_per_batch=4, --expect mode=b2b)
and every key of --keys, whose numbers are finite, and when there are at
least N records (default 1). Prints what is wrong, exit status 1.
"""
import argparse
import json
import math
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--expect", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--keys", default="", help="comma-separated keys every record must have")
    ap.add_argument("--records", type=int, default=1)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command")
    expect = {}
    for e in args.expect:
        k, _, v = e.partition("=")
        try:
            expect[k] = json.loads(v)
        except ValueError:
            expect[k] = v
    keys = [k for k in args.keys.split(",") if k]

    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    sys.stderr.write(p.stderr)
    errors = []
    if p.returncode != 0:
        errors.append("exit status %d" % p.returncode)
    records = 0
    for n, line in enumerate(p.stdout.splitlines(), 1):
        try:
            r = json.loads(line)
        except ValueError:
            errors.append("line %d is not JSON: %s" % (n, line[:200]))
            continue
        records += 1
        want = {"status": "ok", "validated": True, "errors": 0}
        want.update(expect)
        for k, v in want.items():
            if r.get(k) != v:
                errors.append("line %d: %s is %r, expected %r" % (n, k, r.get(k), v))
        for k in keys:
            v = r.get(k)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                errors.append("line %d: %s is %r, expected a number" % (n, k, v))
    if records < args.records:
        errors.append("%d records, expected at least %d" % (records, args.records))
    for e in errors[:20]:
        print("check_bench_json: " + e)
    if not errors:
        print("check_bench_json: %d records ok" % records)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
