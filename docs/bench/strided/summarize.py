#!/usr/bin/env python3
"""Medians over repeated `kport-bench strided --format json` runs, as the
markdown tables of docs/PERFORMANCE.md ("Strided one-sided transfers").

    summarize.py run1.json run2.json run3.json

Per cell (op, pattern, shape, chunk bytes) and variant: the median over the
runs of each run's median time. auto/best: auto's median over the best
fixed method's median; "same" when auto ran that best method in every run
(then the ratio is run-to-run noise of one method: the column "noise" gives
that method's max/min over the runs). armci/auto > 1: kport's auto faster.
"""
import json
import statistics
import sys
from collections import defaultdict

FIXED = ("direct", "datatype", "pack")


def main(paths):
    cells = defaultdict(lambda: defaultdict(list))
    ran = defaultdict(set)
    bad = 0
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                r = json.loads(line)
                key = (r["op"], r["pattern"], r["shape"], r["chunk_bytes"], r["chunks"])
                cells[key][r["variant"]].append(r["median_us"])
                if r["variant"] == "auto":
                    ran[key].add(r["ran"])
                bad += r.get("errors", 0) + (r.get("status") != "ok") + (r.get("validated") is not True)
    groups = defaultdict(list)
    for key in cells:
        groups[key[:2]].append(key)
    worst = 0.0
    for (op, pat) in sorted(groups, key=lambda g: (("put", "get", "acc").index(g[0]), g[1])):
        print(f"\n{op}, pattern {pat} (medians of {len(paths)} runs, us):\n")
        print("| shape | chunk B | chunks | direct | datatype | pack | auto (ran) | ARMCI-MPI | auto/best | noise | ARMCI/auto |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for key in groups[(op, pat)]:
            v = cells[key]
            med = {k: statistics.median(x) for k, x in v.items()}
            best = min(FIXED, key=lambda m: med.get(m, float("inf")))
            r = "/".join(sorted(ran[key]))
            ratio = med["auto"] / med[best]
            same = ran[key] == {best}
            noise = max(v[best]) / min(v[best])
            if not same:
                worst = max(worst, ratio)
            armci = med.get("armci")
            chunk = key[3]
            cb = f"{chunk // 1024} KiB" if chunk >= 1024 and chunk % 1024 == 0 and chunk >= 65536 else str(chunk)
            if chunk >= 1 << 20:
                cb = f"{chunk >> 20} MiB"
            print(f"| {key[2]} | {cb} | {key[4]} | " + " | ".join(f"{med[m]:.2f}" for m in FIXED) +
                  f" | {med['auto']:.2f} ({r}) | " + (f"{armci:.2f}" if armci else "-") +
                  f" | {ratio:.2f}{' same' if same else ''} | {noise:.2f} | " +
                  (f"{armci / med['auto']:.2f}" if armci else "-") + " |")
    print(f"\nworst auto/best where auto ran another method than the best: {worst:.2f}; "
          f"validation problems: {bad}")


if __name__ == "__main__":
    main(sys.argv[1:])
