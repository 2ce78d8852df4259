#!/usr/bin/env python3
"""predict_report.py's text and --json outputs agree (issue 9's bar is read
from them): on a recorded make bench run with kport-sim beside the cost
model, the JSON parses as one object; its counts of cells and of cells off
by more than 25 % equal the text's summary line and kport-sim's "all cells"
row; every cell's ratio is its prediction over its measured median; the
cells off listed in the text are the JSON's.

usage: check_predict_report.py PREDICT_REPORT KPORT_SIM RUN_DIR
"""
import json
import re
import subprocess
import sys


def main():
    script, sim, d = sys.argv[1:4]
    common = [sys.executable, script, "--coll", "allgather", "--min", "8", "--max", "65536", "--sim", sim,
              "--sim-params", f"ompi={d}/params-ompi.json", "--sim-params", f"mpich={d}/params-mpich.json",
              f"{d}/allgather-ompi-p2.jsonl", f"{d}/allgather-mpich-p2.jsonl"]
    text = subprocess.run(common, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    js = json.loads(subprocess.run(common + ["--json"], check=True, stdout=subprocess.PIPE,
                                   universal_newlines=True).stdout)
    bad = []

    def check(cond, what):
        if not cond:
            bad.append(what)

    m = re.search(r"^# all: (\d+) cells, median error [\d.]+%, .*?, (\d+) off by > 25%, (\d+) off by > 2x; "
                  r"bar \(median <= 15%, none > 2x\): (met|NOT met); bar \(none > 25%\): (met|NOT met)$",
                  text, re.M)
    check(m is not None, "the text's summary line")
    s = re.search(r"^all\s+all cells\s+(\d+)\s+[\d.]+%.*?\s(\d+)\s+(\d+)$", text, re.M)
    check(s is not None, "kport-sim's 'all cells' row")
    if m and s:
        check(int(m.group(1)) == js["cells"], f"cells: text {m.group(1)}, json {js['cells']}")
        check(int(m.group(2)) == js["over25"], f"over25: text {m.group(2)}, json {js['over25']}")
        check(int(m.group(3)) == js["over2x"], f"over2x: text {m.group(3)}, json {js['over2x']}")
        check((m.group(5) == "met") == (js["over25"] == 0), "issue 9's bar against the count")
        check(int(s.group(1)) == js["sim"]["cells"], f"sim cells: text {s.group(1)}, json {js['sim']['cells']}")
        check(int(s.group(2)) == js["sim"]["over25"], f"sim over25: text {s.group(2)}, json {js['sim']['over25']}")
    check(len(js["cells_list"]) == js["cells"] and len(js["sim"]["cells_list"]) == js["sim"]["cells"],
          "cell lists against their counts")
    for c in js["cells_list"]:
        check(abs(c["predicted_us"] / c["measured_us"] - c["ratio"]) < 1e-9, f"model ratio of {c}")
    for c in js["sim"]["cells_list"]:
        check(abs(c["simulated_us"] / c["measured_us"] - c["ratio"]) < 1e-9, f"sim ratio of {c}")
    check(sum(abs(c["ratio"] - 1) > 0.25 for c in js["cells_list"]) == js["over25"], "model over25 from the cells")
    check(sum(abs(c["ratio"] - 1) > 0.25 for c in js["sim"]["cells_list"]) == js["sim"]["over25"],
          "sim over25 from the cells")
    listed = re.findall(r"^(?:Open MPI|MPICH)\S*\s.*?\s(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$",
                        text.split("# cells off by more than 25%")[-1], re.M) if js["over25"] else []
    check(len(listed) == js["over25"], f"cells listed off: {len(listed)}, json {js['over25']}")
    for e in bad:
        print("check_predict_report: " + e, file=sys.stderr)
    print(f"check_predict_report: {js['cells']} model cells ({js['over25']} off by > 25%), "
          f"{js['sim']['cells']} simulated ({js['sim']['over25']} off)" + (": FAILED" if bad else ": ok"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
