#!/usr/bin/env python3
"""A parameter file written by kport-bench loggp carries the combine's cost.

    check_params_reduce.py PARAMS.json

compute.reduce has fixed and per_byte (gamma, ns per byte), finite and >= 0,
per_byte > 0 (a combine of many bytes takes time), a second slope only with
both large_from (a positive integer) and large_per_byte; compute.kernel says
what was timed (kport's own kernel of MPI_SUM on MPI_DOUBLE). Exit 0 when so,
else a message naming the field.
"""
import json
import math
import sys


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def main():
    with open(sys.argv[1]) as f:
        m = json.load(f)
    c = m.get("compute")
    if not isinstance(c, dict) or not isinstance(c.get("reduce"), dict):
        sys.exit("compute.reduce: missing")
    r = c["reduce"]
    for k in ("fixed", "per_byte"):
        if not num(r.get(k)):
            sys.exit(f"compute.reduce.{k}: {r.get(k)!r}, expected a finite number >= 0")
    if r["per_byte"] <= 0:
        sys.exit(f"compute.reduce.per_byte: {r['per_byte']}, expected > 0")
    if ("large_from" in r) != ("large_per_byte" in r):
        sys.exit("compute.reduce: large_from and large_per_byte go together")
    if "large_from" in r and not (isinstance(r["large_from"], int) and r["large_from"] > 0 and num(r["large_per_byte"])):
        sys.exit(f"compute.reduce: bad second slope {r['large_from']!r}, {r['large_per_byte']!r}")
    k = c.get("kernel", "")
    if "MPI_SUM on MPI_DOUBLE" not in k:
        sys.exit(f"compute.kernel: {k!r}, expected what was timed (MPI_SUM on MPI_DOUBLE ...)")
    print(f"compute.reduce: {r['fixed']:.3g} ns + {r['per_byte']:.4g} ns/B ({k})")


if __name__ == "__main__":
    main()
