#!/usr/bin/env python3
"""The house drawn from the includes: every directory of src/ is a layer, and
a file may include only headers of its own layer or of layers below it
(docs/DESIGN.md, "Layers"). Reads the #include "dir/file.h" lines of every
.c and .h file under src/ and fails, naming the file and the line, when one
climbs, when a directory has no layer, or when a quoted include names no
file. Also fails on a source file over MAX_LINES lines that does not say at
its top why it is that long (a comment line containing "over 1,000 lines").

usage: check_layers.py [SRC_DIR]
"""
import os
import re
import sys

# lowest first; directories on one line share a layer and may include each
# other's headers
LAYERS = [
    ["util"],            # JSON, environment, errors, clock, copies, spinning
    ["sched"],           # the schedule IR, its checker, the GOAL export
    ["algo"],            # builders and the registry (the algorithm table)
    ["params"],          # the machine's parameters (the parameter file)
    ["timing"],          # the one timing engine (cost model and simulator)
    ["model", "sim"],    # the cost model's and kport-sim's front ends
    ["state"],           # a communicator's state, read by the runtime layers
    ["topo"],            # layouts, private duplicate, node tier, segment, calibration
    ["exec"],            # the executor and the one-sided transport
    ["plan"],            # plans: built with what they need
    ["select"],          # which algorithm: forcing, tuning file, rules, the model's pick
    ["core"],            # the API: entry points, arguments, a communicator's life
    ["pmpi"],            # the drop-in library
    ["strided"],         # the strided one-sided API
]
MAX_LINES = 1000
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def level_of(d):
    for i, group in enumerate(LAYERS):
        if d in group:
            return i
    return None


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "src")
    src = os.path.normpath(src)
    problems = []
    files = 0
    for root, _, names in sorted(os.walk(src)):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            top = rel.split(os.sep)[0]
            mine = level_of(top)
            if mine is None:
                problems.append("%s: directory src/%s has no layer (add it to LAYERS)" % (rel, top))
                continue
            files += 1
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
            if len(lines) > MAX_LINES and not any("over 1,000 lines" in l for l in lines[:40]):
                problems.append("%s: %d lines, and no reason at its top (\"over 1,000 lines\")" % (rel, len(lines)))
            for n, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if "/" not in inc:
                    if inc != "kport.h" and not os.path.exists(os.path.join(root, inc)):
                        problems.append("%s:%d: includes \"%s\", which is not beside it" % (rel, n, inc))
                    continue
                if not os.path.exists(os.path.join(src, inc)):
                    problems.append("%s:%d: includes \"%s\", no such file under src/" % (rel, n, inc))
                    continue
                theirs = level_of(inc.split("/")[0])
                if theirs is None or theirs > mine:
                    problems.append("%s:%d: includes \"%s\": %s is above %s" %
                                    (rel, n, inc, inc.split("/")[0], top))
    for p in problems:
        print("check_layers: " + p)
    print("check_layers: %d files, %d layers, %d problems" % (files, len(LAYERS), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
