#!/usr/bin/env bash
# kport-bench strided --calibrate at P = 2 writes the "rma" object into an
# existing parameter file, keeping its other members, with every one of the
# cost model's 20 fields a finite number >= 0, the two fixed costs and the
# per-byte costs above 0; auto then runs under it (test_strided --quick with
# KPORT_PARAMS pointing at the file, every byte compared).
#
# usage: test_strided_calibrate.sh KPORT_BENCH TEST_STRIDED MPIEXEC [MPIEXEC_ARGS...]
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 KPORT_BENCH TEST_STRIDED MPIEXEC [MPIEXEC_ARGS...]" >&2
    exit 2
fi
bench=$1 strided=$2
shift 2
fail() { echo "test_strided_calibrate: FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-strided-cal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '{"kport_params": 1, "call": {"fixed": 60, "skew": 160}, "rma": {"t0": 1}}\n' >"$tmp/p.json"
"$@" -n 2 "$bench" strided --calibrate -o "$tmp/p.json" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "--calibrate failed"; }
grep -q "wrote the \"rma\" object into" "$tmp/out" || { cat "$tmp/out" >&2; fail "no line saying the file was written"; }
python3 - "$tmp/p.json" <<'PY' || fail "the written file"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d.get("kport_params") == 1 and d.get("call") == {"fixed": 60, "skew": 160}, "other members lost: %s" % d
r = d["rma"]
names = "t0 ts tn tm tc tp td0 td1 ta0 tsa tna tda0 tda1 tdn tdna tdnb tpn tpg tpgn tpc".split()
assert sorted(r) == sorted(names), "fields %s" % sorted(r)
for k in names:
    assert isinstance(r[k], (int, float)) and math.isfinite(r[k]) and r[k] >= 0, "%s = %r" % (k, r[k])
for k in "t0 td0 ta0 tda0 tn tna tdn tdna tp tpg".split():
    assert r[k] > 0, "%s = %r, a cost every call pays" % (k, r[k])
assert r["t0"] != 1, "t0 still the file's old value"
print("calibrated:", r)
PY
KPORT_PARAMS="$tmp/p.json" "$@" -n 2 "$strided" --quick --methods auto >"$tmp/run" 2>&1 || { cat "$tmp/run" >&2; fail "test_strided under the calibrated file"; }
echo "test_strided_calibrate: passed"
