#!/usr/bin/env bash
# kport-bench strided --calibrate at P = 2 writes the "rma" object into an
# existing parameter file, keeping its other members, with every one of the
# cost model's fields a finite number >= 0 (26 on kport's shared window, the
# load/store direct's tl0, tls, tln and its accumulate's tla0, tlas, tlan
# included; 20 with KPORT_STRIDED_SHARED=0, an MPI_Win_allocate window), the
# fixed costs and the per-byte costs above 0, the datatype put's, the pack
# method's and the load/store direct's fits (put and accumulate) as the
# printed timings give them; auto then runs under it (test_strided
# --quick with KPORT_PARAMS pointing at the file, every byte compared).
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
for sh in 1 0; do
printf '{"kport_params": 1, "call": {"fixed": 60, "skew": 160}, "rma": {"t0": 1}}\n' >"$tmp/p$sh.json"
KPORT_STRIDED_SHARED=$sh "$@" -n 2 "$bench" strided --calibrate -o "$tmp/p$sh.json" >"$tmp/out$sh" 2>&1 || { cat "$tmp/out$sh" >&2; fail "--calibrate failed"; }
grep -q "wrote the \"rma\" object into" "$tmp/out$sh" || { cat "$tmp/out$sh" >&2; fail "no line saying the file was written"; }
python3 - "$tmp/p$sh.json" "$sh" <<'PY' || fail "the written file"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d.get("kport_params") == 1 and d.get("call") == {"fixed": 60, "skew": 160}, "other members lost: %s" % d
r = d["rma"]
names = "t0 ts tn tm tc tp td0 td1 ta0 tsa tna tda0 tda1 tdn tdna tdnb tpn tpg tpgn tpc".split()
shared = sys.argv[2] == "1"
if shared:
    names += ["tl0", "tls", "tln", "tla0", "tlas", "tlan"]
assert sorted(r) == sorted(names), "fields %s" % sorted(r)
for k in names:
    assert isinstance(r[k], (int, float)) and math.isfinite(r[k]) and r[k] >= 0, "%s = %r" % (k, r[k])
for k in "t0 td0 ta0 tda0 tn tna tdn tdna tp tpg".split() + (["tl0", "tln", "tla0", "tlan"] if shared else []):
    assert r[k] > 0, "%s = %r, a cost every call pays" % (k, r[k])
assert r["t0"] != 1, "t0 still the file's old value"
print("calibrated:", r)
PY
# the fits, recomputed here from the printed timings (docs/PARAMETERS.md,
# "rma"): the datatype put's three and the pack method's per byte and per
# chunk, solved as the documentation says (slots of 64 KiB)
python3 - "$tmp/out$sh" "$tmp/p$sh.json" "$sh" <<'PY' || fail "the fitted values do not follow from the printed timings"
import json, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("# strided calibration"))
raw = [float(x.rsplit(" ", 1)[1]) for x in line.split("): ", 1)[1].split(", ")]
shared = sys.argv[3] == "1"
assert len(raw) == (26 if shared else 20), "%d timings printed" % len(raw)
D1, P1, A1, A2, A3, G1, P2, G2, P3 = (raw[i] for i in (0, 5, 6, 7, 8, 16, 17, 18, 19))
r = json.load(open(sys.argv[2]))["rma"]
def near(name, want):
    got = r[name]
    assert abs(got - want) <= 0.01 * abs(want) + 0.01, "%s = %r, the timings give %r" % (name, got, want)
tp = max(P1, D1)
tpg = max(G1, tp)
near("tp", tp)
near("tpg", tpg)
# pack puts: 256 x 1 KiB in 4 slots, 4096 x 8 B in one
r2, r3 = P2 - 4 * tp, P3 - tp
det = 262144 * 4096 - 32768 * 256
tpc = max(0.0, (262144 * r3 - 32768 * r2) / det)
tpn = max(0.0, (r2 - 256 * tpc) / 262144)
near("tpc", tpc)
near("tpn", tpn)
near("tpgn", max(0.0, (G2 - 4 * tpg - 256 * tpc) / 262144))
# the datatype put: 2 x 8 B, 4096 x 8 B, 256 x 1 KiB, exact when both slopes come out positive
k1, n1, d1 = 4094, 32768 - 16, A2 - A1
k2, n2, d2 = 254, 262144 - 16, A3 - A1
det = k1 * n2 - k2 * n1
a, b = (d1 * n2 - d2 * n1) / det, (k1 * d2 - k2 * d1) / det
if a > 0 and b > 0:
    near("td1", a)
    near("tdn", b)
    near("td0", max(0.0, A1 - a - 16 * b))
# the load/store direct, put and accumulate: 1 x 8 B, 1 x 1 MiB, 4096 x 8 B
if shared:
    for first, (t0, ts, tn) in ((20, ("tl0", "tls", "tln")), (23, ("tla0", "tlas", "tlan"))):
        L1, L2, L3 = raw[first:first + 3]
        bn = (L2 - L1) / (1048576 - 8)
        bs = (L3 - L1 - bn * (32768 - 8)) / 4095
        # 1 MiB copies in tens of us, 4096 rows in several: both slopes
        # are well above 0 (the kb_fit_cost3 clamps never apply)
        assert bn > 0 and bs > 0, "%s timings %r give slopes %r, %r" % (tn, (L1, L2, L3), bn, bs)
        near(tn, bn)
        near(ts, bs)
        near(t0, max(0.0, L1 - 8 * bn))
print("fits recomputed: tp %.0f tpc %.3f tpn %.5f tdn %.4f%s" % (tp, tpc, tpn, r["tdn"],
      " tl0 %.0f tls %.2f tln %.4f tla0 %.0f tlas %.2f tlan %.4f" % tuple(r[k] for k in
      ("tl0", "tls", "tln", "tla0", "tlas", "tlan")) if shared else ""))
PY
KPORT_STRIDED_SHARED=$sh KPORT_PARAMS="$tmp/p$sh.json" "$@" -n 2 "$strided" --quick --methods auto >"$tmp/run$sh" 2>&1 || { cat "$tmp/run$sh" >&2; fail "test_strided under the calibrated file"; }
done
echo "test_strided_calibrate: passed"
