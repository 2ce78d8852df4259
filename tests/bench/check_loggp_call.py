#!/usr/bin/env python3
"""kport-bench loggp's call record: the entry gap beside the skew.

    check_loggp_call.py -- mpiexec ... kport-bench loggp ... --format json

The command exits 0; its "op": "call" fit record carries fixed_ns and
skew_ns (finite, >= 0) and, the two ranks sharing a host (the start line in
shared memory, one clock), entry_gap_ns: how far apart the ranks left the
start line, finite, >= 0 and at most skew_ns + the flag's fixed_ns - per
call the late rank's post comes after its own start, so the slower rank's
post and wait take at least the gap, and so do their medians. A gap read
off two unrelated clocks would be far outside. With that start line (of
flags) skew_ns is post_wait_skew_ns capped at the flag: equal to it when
it is at most the flag, else the flag. Exit 0 when so, else a message.
"""
import json
import math
import subprocess
import sys


def num(r, k):
    v = r.get(k)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
        sys.exit("check_loggp_call: %s is %r, expected a finite number >= 0" % (k, v))
    return v


def main():
    cmd = sys.argv[1:]
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True, timeout=300)
    if p.returncode:
        sys.exit("check_loggp_call: exit status %d" % p.returncode)
    rec = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    call = [r for r in rec if r.get("kind") == "fit" and r.get("op") == "call"]
    flag = [r for r in rec if r.get("kind") == "fit" and r.get("op") == "flag"]
    if len(call) != 1 or len(flag) != 1:
        sys.exit("check_loggp_call: %d call and %d flag fit records, expected one each" % (len(call), len(flag)))
    num(call[0], "fixed_ns")
    skew, gap, fl = num(call[0], "skew_ns"), num(call[0], "entry_gap_ns"), num(flag[0], "fixed_ns")
    if gap > skew + fl + 1:
        sys.exit("check_loggp_call: entry_gap_ns %.1f above skew_ns + flag %.1f" % (gap, skew + fl))
    pw = num(call[0], "post_wait_skew_ns")
    want = min(pw, fl)
    if abs(skew - want) > 0.01:
        sys.exit("check_loggp_call: skew_ns %.3f, expected min(post_wait_skew_ns %.3f, flag %.3f) = %.3f"
                 % (skew, pw, fl, want))
    print("check_loggp_call: entry gap %.1f ns, skew %.1f ns (uncapped %.1f), flag %.1f ns" % (gap, skew, pw, fl))


if __name__ == "__main__":
    main()
