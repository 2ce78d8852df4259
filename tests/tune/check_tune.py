#!/usr/bin/env python3
"""The tuning file end to end: kport-tune writes it, kport follows it.

    check_tune.py CASE --tune tools/kport-tune --run test_tuning_run --np 2 \
        --data tests/data/tune/allgather-ompi-p2-p3.jsonl -- MPIEXEC [FLAGS]

CASE:
  roundtrip   kport-tune --from-bench on the recorded kport-bench file (the
              shared-memory algorithms excluded with -x, so its choice
              differs from the built-in one); the file it writes is checked
              against the records (every measured size's rule names the
              fastest algorithm there; ranges cover 0..unbounded without gaps);
              then test_tuning_run without the file (the built-in choice)
              and with KPORT_TUNING_FILE + KPORT_VERBOSE=1: at every size
              kp_last_algorithm is what the file's first matching rule says
              (this script's own reading of the file), rank 0 printed
              "kport: allgather runs P=NP bytes=S: ALG (tuning file F rule
              N, line L)" naming that rule and its line, every byte was
              right, and at least one size runs something else than without
              the file (the issue's acceptance test)
  fallthrough a file whose first rule cannot apply at NP (concurrent_exchange:
              C=2 at NP = 3): the second rule runs, KPORT_VERBOSE says rule 1
              cannot apply
  malformed   a file with an inverted byte range, and a file that does not
              exist: the same algorithms as without a file (KPORT_CALIBRATE=0
              in both runs: the calibrated choice varies between runs), the
              error (file, line, field) printed once, verbose or not
  forced      KPORT_ALLGATHER=ring with the file: ring at every size
  run         kport-tune --run (--bench kport-bench; all-gather at 8 and
              4096 B, the barrier) writes rules at P = NP that kport follows
  sim         kport-tune --sim (--sim kport-sim; P = 16, 32 in nodes of 4):
              every rule names the fastest simulated algorithm at its sizes,
              and kport loads the file
Exit 0 when every check passed; each failure is printed.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

SIZES = [1, 4, 16, 64, 256, 1000, 1024, 4096, 16384, 40000, 65536]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)
    return cond


def run(mpi, np, prog, env_extra, sizes):
    env = dict(os.environ)
    for k in ("KPORT_TUNING_FILE", "KPORT_ALLGATHER", "KPORT_VERBOSE", "KPORT_CALIBRATE"):
        env.pop(k, None)
    env.update(env_extra)
    cmd = mpi[:1] + ["-np", str(np)] + mpi[1:] + [prog, "-m", ",".join(str(s) for s in sizes)]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    names = {}
    for ln in p.stdout.splitlines():
        m = re.match(r"size (\d+): (.*)$", ln)
        if m:
            names[int(m.group(1))] = m.group(2)
    check(p.returncode == 0, "%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-500:]))
    check(" 0 failed" in p.stdout, "test_tuning_run reported failures: %s" % p.stdout[-300:])
    check(sorted(names) == sorted(sizes), "names for sizes %s, expected %s" % (sorted(names), sizes))
    return names, p.stderr


def inside(rng, x):
    if rng is None or rng == "any":
        return True
    if isinstance(rng, int):
        return x == rng
    return rng[0] <= x and (rng[1] is None or x <= rng[1])


def first_rule(doc, P, nodes, ppn, size):
    """index of the first rule for allgather at (P, 1 node of P ranks, size)"""
    for i, r in enumerate(doc["rules"]):
        if (r["collective"] == "allgather" and inside(r.get("P"), P) and inside(r.get("nodes"), nodes) and
                inside(r.get("ppn"), ppn) and inside(r.get("bytes"), size)):
            return i
    return None


def rule_lines(path):
    """line of each rule (kport-tune writes one rule a line)"""
    lines = []
    with open(path) as f:
        for n, ln in enumerate(f, 1):
            if ln.strip().startswith('{"collective"'):
                lines.append(n)
    return lines


def case_roundtrip(a, mpi, tmp):
    out = os.path.join(tmp, "tuned.json")
    p = subprocess.run([sys.executable, a.tune, "--from-bench", a.data, "-x", "shm_flat,shm_single_copy", "-o", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not check(p.returncode == 0 and os.path.exists(out), "kport-tune failed: %s" % p.stderr):
        return
    doc = json.load(open(out))
    check(doc.get("version") == 1 and isinstance(doc.get("rules"), list) and doc["rules"], "file has version 1, rules")
    # against the records: the fastest kport algorithm at every measured size
    best = {}
    for ln in open(a.data):
        r = json.loads(ln)
        if r["status"] != "ok" or r["requested"] in ("native", "auto", "memcpy", "sendrecv", "shm_flat", "shm_single_copy"):
            continue
        key = (r["P"], r["size"])
        alg = r["algorithm"].split(" (")[0]
        if key not in best or r["median_us"] < best[key][1]:
            best[key] = ({alg}, r["median_us"])
        elif r["median_us"] == best[key][1]:  # a tie: either may win
            best[key][0].add(alg)
    for (P, size), (algs, _) in sorted(best.items()):
        i = first_rule(doc, P, 1, P, size)
        check(i is not None and doc["rules"][i]["algorithm"] in algs,
              "P=%d %d B: the file says %s, the records' fastest is %s" %
              (P, size, i is not None and doc["rules"][i]["algorithm"], " or ".join(sorted(algs))))
    for P in sorted(set(k[0] for k in best)):
        rs = [r for r in doc["rules"] if r["P"] == [P, P]]
        check(rs and rs[0]["bytes"][0] == 0 and rs[-1]["bytes"][1] is None and
              all(rs[j]["bytes"][1] + 1 == rs[j + 1]["bytes"][0] for j in range(len(rs) - 1)),
              "P=%d: byte ranges from 0, contiguous, the last unbounded: %s" % (P, [r["bytes"] for r in rs]))
    lines = rule_lines(out)
    check(len(lines) == len(doc["rules"]), "one rule a line")
    base, _ = run(mpi, a.np, a.prog, {}, SIZES)
    names, err = run(mpi, a.np, a.prog, {"KPORT_TUNING_FILE": out, "KPORT_VERBOSE": "1"}, SIZES)
    differs = 0
    for s in SIZES:
        i = first_rule(doc, a.np, 1, a.np, s)
        if not check(i is not None, "P=%d %d B: no rule of the file matches" % (a.np, s)):
            continue
        want = doc["rules"][i]["algorithm"]
        check(names.get(s) == want, "%d B: ran %s, the file's rule %d says %s" % (s, names.get(s), i + 1, want))
        line = "kport: allgather runs P=%d bytes=%d: %s (tuning file %s rule %d, line %d)" % (
            a.np, s, want, out, i + 1, lines[i])
        check(line in err, "verbose line missing: %r" % line)
        differs += names.get(s) != base.get(s)
        print("  %6d B: %-28s (without the file: %s)" % (s, names.get(s), base.get(s)))
    check(differs > 0, "the file changed nothing kp_allgather runs")
    check("kport: tuning file %s: %d rules" % (out, len(doc["rules"])) in err, "verbose names the file and its rules")


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def case_fallthrough(a, mpi, tmp):
    path = write(tmp, "fall.json", '{"version": 1,\n "rules": [\n'
                 '  {"collective": "allgather", "algorithm": "concurrent_exchange:C=2"},\n'
                 '  {"collective": "allgather", "algorithm": "bruck:k=1"}\n ]}\n')
    sizes = [8, 4096]
    names, err = run(mpi, a.np, a.prog, {"KPORT_TUNING_FILE": path, "KPORT_VERBOSE": "1"}, sizes)
    refused = a.np % 2 != 0
    want = "bruck:k=1" if refused else "concurrent_exchange:C=2"
    for s in sizes:
        check(names.get(s) == want, "%d B: ran %s, expected %s" % (s, names.get(s), want))
        if refused:
            check(re.search(r"kport: allgather P=%d bytes=%d: tuning file %s rule 1, line 3: "
                            r"concurrent_exchange:C=2 cannot apply \(.+\); next rule" % (a.np, s, re.escape(path)), err),
                  "%d B: verbose does not say rule 1 cannot apply: %s" % (s, err[-400:]))
            check("bytes=%d: bruck:k=1 (tuning file %s rule 2, line 4)" % (s, path) in err, "rule 2 announced")


def case_malformed(a, mpi, tmp):
    # KPORT_CALIBRATE=0: the built-in choice from fixed costs, the same in every run
    base, _ = run(mpi, a.np, a.prog, {"KPORT_CALIBRATE": "0"}, SIZES)
    bad = write(tmp, "bad.json", '{"version": 1,\n "rules": [\n'
                '  {"collective": "allgather", "algorithm": "ring"},\n'
                '  {"collective": "allgather", "bytes": [64, 8],\n   "algorithm": "bruck:k=1"}\n ]}\n')
    for path, what in ((bad, "%s, line 4: rule 2: \"bytes\": min 64 is above max 8" % bad),
                       (os.path.join(tmp, "none.json"), "%s: cannot open: No such file" % os.path.join(tmp, "none.json"))):
        for verbose in ("0", "1"):
            names, err = run(mpi, a.np, a.prog, {"KPORT_TUNING_FILE": path, "KPORT_VERBOSE": verbose,
                                                 "KPORT_CALIBRATE": "0"}, SIZES)
            check(names == base, "%s: runs %s, without the file %s" % (path, names, base))
            msg = "kport: KPORT_TUNING_FILE ignored, the built-in rules stay in force: " + what
            check(err.count(msg) == 1, "%s (verbose %s): the error printed %d times, expected once: %s" %
                  (path, verbose, err.count(msg), err[-400:]))
            check(err.count("KPORT_TUNING_FILE") == 1, "other mentions of the file: %s" % err[-400:])
            check("tuning file" not in err, "a rule announced from a bad file")
    print("  a malformed or missing file: the built-in choice at every size, the error once")


def case_forced(a, mpi, tmp):
    path = write(tmp, "all.json", '{"version": 1, "rules": [\n {"collective": "allgather", "algorithm": "bruck:k=1"}]}\n')
    names, err = run(mpi, a.np, a.prog, {"KPORT_TUNING_FILE": path, "KPORT_ALLGATHER": "ring", "KPORT_VERBOSE": "1"},
                     SIZES)
    for s in SIZES:
        check(names.get(s) == "ring", "%d B: ran %s, KPORT_ALLGATHER=ring forced" % (s, names.get(s)))
    check("(forced by KPORT_ALLGATHER)" in err and "(tuning file" not in err, "verbose: forced, not the file")
    names, _ = run(mpi, a.np, a.prog, {"KPORT_TUNING_FILE": path}, SIZES)
    check(all(names.get(s) == "bruck:k=1" for s in SIZES), "without the forced one the file's bruck:k=1: %s" % names)


def case_run(a, mpi, tmp):
    out = os.path.join(tmp, "run.json")
    cmd = [sys.executable, a.tune, "--run", "--bench", a.bench, "--mpirun", " ".join(mpi), "--np", str(a.np),
           "--colls", "allgather,barrier", "--sizes", "8:4096", "--iters", "5", "--warmup", "1", "-o", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if not check(p.returncode == 0, "kport-tune --run failed: %s" % p.stderr[-500:]):
        return
    doc = json.load(open(out))
    colls = sorted(set(r["collective"] for r in doc["rules"]))
    check(colls == ["allgather", "barrier"], "rules for %s, expected allgather and barrier" % colls)
    check(all(r["P"] == [a.np, a.np] for r in doc["rules"]), "every rule at P=%d" % a.np)
    names, _ = run(mpi, a.np, a.prog, {"KPORT_TUNING_FILE": out}, [8, 4096])
    for s in (8, 4096):
        i = first_rule(doc, a.np, 1, a.np, s)
        check(i is not None and names.get(s) == doc["rules"][i]["algorithm"],
              "%d B: ran %s, the file says %s" % (s, names.get(s), i is not None and doc["rules"][i]["algorithm"]))
    print("  kport-tune --run: %d rules, followed" % len(doc["rules"]))


def case_sim(a, mpi, tmp):
    out, raw = os.path.join(tmp, "sim.json"), os.path.join(tmp, "sim.jsonl")
    cmd = [sys.executable, a.tune, "--sim", "--sim-cmd", a.sim, "--P", "16,32", "--node-size", "4",
           "--colls", "allgather,barrier", "--sizes", "8,512,32768", "-a", "ring,bruck,recursive_doubling,smp_bruck,"
           "smp_direct,dissemination,smp", "--save", raw, "-o", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    if not check(p.returncode == 0, "kport-tune --sim failed: %s" % p.stderr[-500:]):
        return
    doc = json.load(open(out))
    best = {}
    for ln in open(raw):
        r = json.loads(ln)
        key = (r["coll"], r["P"], r.get("bytes", 0) if r["coll"] != "barrier" else 0)
        alg = r["algorithm"].split(" (")[0]
        t = r["max_time_ns"]
        if key not in best or t < best[key][1]:
            best[key] = ({alg}, t)
        elif t == best[key][1]:
            best[key][0].add(alg)
    for (coll, P, size), (algs, _) in sorted(best.items()):
        rs = [r for r in doc["rules"] if r["collective"] == coll and inside(r["P"], P) and inside(r["nodes"], P // 4)
              and inside(r["ppn"], 4) and inside(r.get("bytes"), size)]
        check(rs and rs[0]["algorithm"] in algs, "%s P=%d %d B: the file says %s, kport-sim's fastest is %s" %
              (coll, P, size, rs and rs[0]["algorithm"], " or ".join(sorted(algs))))
    check(len(best) == 2 * 4, "simulated points: %d, expected 8" % len(best))
    # kport loads the file without complaint
    names, err = run(mpi, 2, a.prog, {"KPORT_TUNING_FILE": out, "KPORT_VERBOSE": "1"}, [8])
    check("kport: tuning file %s: %d rules" % (out, len(doc["rules"])) in err, "kport did not load it: %s" % err[-300:])
    print("  kport-tune --sim: %d rules, each the fastest simulated" % len(doc["rules"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=("roundtrip", "fallthrough", "malformed", "forced", "run", "sim"))
    ap.add_argument("--bench", help="kport-bench (case run)")
    ap.add_argument("--sim", help="kport-sim (case sim)")
    ap.add_argument("--tune", required=True)
    ap.add_argument("--run", dest="prog", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--data", required=True)
    ap.add_argument("mpi", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kport_tune_") as tmp:
        {"roundtrip": case_roundtrip, "fallthrough": case_fallthrough, "malformed": case_malformed,
         "forced": case_forced, "run": case_run, "sim": case_sim}[a.case](a, a.mpi, tmp)
    print("%s: %s" % (a.case, "%d failed" % len(failures) if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
