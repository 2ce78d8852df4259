#!/usr/bin/env python3
"""The sentinel file `kport-bench <coll> --sentinel FILE` writes.

    check_sentinel.py FILE ROUNDS

One JSON object: "kind" "sentinel", "P" 2, "sizes" [512, 4096, 65536],
"xchg_ns" three finite positive medians that grow with the size (an
exchange of 64 KiB takes longer than one of 512 B), "samples" 3 per round.
Exit 0 when so, else a message naming the field.
"""
import json
import math
import sys


def main():
    with open(sys.argv[1]) as f:
        s = json.load(f)
    rounds = int(sys.argv[2])
    if s.get("kind") != "sentinel" or s.get("P") != 2:
        sys.exit(f"kind/P: {s.get('kind')!r}/{s.get('P')!r}, expected sentinel/2")
    if s.get("sizes") != [512, 4096, 65536]:
        sys.exit(f"sizes: {s.get('sizes')!r}")
    x = s.get("xchg_ns")
    if not isinstance(x, list) or len(x) != 3 or not all(
            isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in x):
        sys.exit(f"xchg_ns: {x!r}, expected three finite positive numbers")
    if not x[0] < x[2]:
        sys.exit(f"xchg_ns: {x!r}: 64 KiB not slower than 512 B")
    if s.get("samples") != 3 * rounds:
        sys.exit(f"samples: {s.get('samples')!r}, expected {3 * rounds}")
    print("sentinel: %s ns" % ", ".join("%.0f" % v for v in x))


if __name__ == "__main__":
    main()
