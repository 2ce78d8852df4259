#!/usr/bin/env python3
"""Run kport-bench COLL --transports ... --format json and check the pairing.

    check_bench_transports.py --algorithms A1,A2 --transports p2p,rma[,rma/2] [--sizes N]
                              -- mpiexec ... kport-bench COLL ... --format json

Passes when the command exits 0, every line is a JSON record with "status"
"ok", "validated" true and 0 errors, and every algorithm of --algorithms
(a kport name as kp_last_algorithm starts it: "ring", "bruck:k=1") has, at
each of the N sizes (default: the sizes of the native rows), exactly one
record per transport of --transports (p2p, rma = one rail, rma/R = R rails):
"transport", "rails" and "algorithm" (kp_last_algorithm's name, which names
the rma transport) agreeing. Prints what is wrong, exit status 1.
"""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--algorithms", required=True)
    ap.add_argument("--transports", required=True)
    ap.add_argument("--sizes", type=int, default=0)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    algs = [a for a in args.algorithms.split(",") if a]
    transports = [t for t in args.transports.split(",") if t]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    sys.stderr.write(p.stderr)
    errors = []
    if p.returncode != 0:
        errors.append("exit status %d" % p.returncode)
    seen = {}  # (algorithm, transport, size) -> records
    sizes = set()
    for n, line in enumerate(p.stdout.splitlines(), 1):
        try:
            r = json.loads(line)
        except ValueError:
            errors.append("line %d is not JSON: %s" % (n, line[:200]))
            continue
        for k, v in (("status", "ok"), ("validated", True), ("errors", 0)):
            if r.get(k) != v:
                errors.append("line %d (%s): %s is %r, expected %r" % (n, r.get("algorithm"), k, r.get(k), v))
        name = r.get("algorithm", "")
        if r.get("transport") is None:
            sizes.add(r.get("size"))
            continue
        tr = r["transport"]
        if tr == "rma":
            if "transport=rma" not in name:
                errors.append("line %d: transport rma but algorithm %r does not name it" % (n, name))
            if r.get("rails", 1) != 1:
                tr = "rma/%d" % r["rails"]
        elif "transport=rma" in name:
            errors.append("line %d: transport %r but algorithm %r names rma" % (n, tr, name))
        base = name.split(" ")[0].replace(",transport=", ":transport=").split(":transport=")[0]
        key = (base, tr, r.get("size"))
        seen[key] = seen.get(key, 0) + 1
    if args.sizes and len(sizes) != args.sizes:
        errors.append("%d sizes in the native rows, expected %d" % (len(sizes), args.sizes))
    for a in algs:
        for t in transports:
            for s in sorted(sizes):
                c = seen.get((a, t, s), 0)
                if c != 1:
                    errors.append("%s over %s at size %s: %d records, expected 1" % (a, t, s, c))
    if errors:
        for e in errors[:40]:
            print("check_bench_transports: " + e)
        print("check_bench_transports: FAILED (%d problems)" % len(errors))
        return 1
    print("check_bench_transports: %d algorithms x %d transports x %d sizes: passed" % (len(algs), len(transports),
                                                                                        len(sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
