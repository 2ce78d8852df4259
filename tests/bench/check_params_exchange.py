#!/usr/bin/env python3
"""A parameter file written by kport-bench loggp carries the measured exchange.

    check_params_exchange.py PARAMS.json

Every piece of p2p.intra and p2p.inter has X and XG, and X2 and X2G (what a
second exchange with the same peer at once adds; docs/PARAMETERS.md), each
finite and >= 0, and the first piece's X is positive (an exchange of a few
bytes takes time). Exit 0 when so, else a message naming the piece.
"""
import json
import math
import sys


def main():
    with open(sys.argv[1]) as f:
        m = json.load(f)
    for ch in ("intra", "inter"):
        for i, p in enumerate(m["p2p"][ch]["pieces"]):
            for k in ("X", "XG", "X2", "X2G"):
                v = p.get(k)
                if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    sys.exit(f"p2p.{ch}.pieces[{i}].{k}: {v!r}, expected a finite number >= 0")
        x0 = m["p2p"][ch]["pieces"][0]["X"]
        if x0 <= 0:
            sys.exit(f"p2p.{ch}.pieces[0].X: {x0}, expected > 0")
    print("exchange: X, XG, X2, X2G in every piece")


if __name__ == "__main__":
    main()
