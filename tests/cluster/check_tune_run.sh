#!/usr/bin/env bash
# kport-tune run on the cluster, its choices confirmed by a second cluster
# run (issue 40, point 4); run by tests/cluster/cluster_test.sh
# (KPORT_CLUSTER_RUN).
#
# usage: check_tune_run.sh KPORT_TUNE KPORT_BENCH NP SIZES ALGORITHMS [SLACK]
#
# 1. kport-tune --run --mpirun "$KPORT_CLUSTER_RUN" --np NP --colls allgather
#    --sizes SIZES -a ALGORITHMS: kport-bench's sweep across the hosts, the
#    fastest algorithm per size written to a tuning file (with the layout:
#    "nodes" and "ppn" from the records' hosts);
# 2. kport-bench allgather -a ALGORITHMS,auto across the hosts again with
#    KPORT_TUNING_FILE set (every byte checked, -c): per size, auto must run
#    the file's algorithm (the rule matched the real layout), and that
#    algorithm's median in this second run must be within SLACK (default
#    1.5) of the fastest candidate's: the choice holds in a run of its own.
#    Shared 2-core machine: a second run moves medians by tens of per cent,
#    so SLACK bounds a wrong choice, not noise; the ratios are printed.
set -uo pipefail
[ $# -ge 5 ] || { echo "usage: check_tune_run.sh KPORT_TUNE KPORT_BENCH NP SIZES ALGORITHMS [SLACK]" >&2; exit 2; }
tune=$1 bench=$2 np=$3 sizes=$4 algs=$5 slack=${6:-1.5}
[ -n "${KPORT_CLUSTER_RUN:-}" ] || { echo "check_tune_run: run me from cluster_test.sh (KPORT_CLUSTER_RUN)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-tune-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_tune_run: FAIL: $*" >&2; exit 1; }
read -r -a crun <<<"$KPORT_CLUSTER_RUN"

echo "check_tune_run: python3 $tune --run --mpirun \"$KPORT_CLUSTER_RUN\" --np $np --colls allgather --sizes $sizes -a $algs"
python3 "$tune" --run --mpirun "$KPORT_CLUSTER_RUN" --np "$np" --bench "$bench" --colls allgather --sizes "$sizes" \
    -a "$algs" --iters 30 --warmup 5 --save "$tmp/sweep.jsonl" -o "$tmp/tuning.json" -q || fail "kport-tune --run failed"
cat "$tmp/tuning.json"
"${crun[@]}" -np "$np" env KPORT_TUNING_FILE="$tmp/tuning.json" "$bench" allgather -c -m "$sizes" -i 30 -x 5 \
    -a "$algs,auto" --format json >"$tmp/confirm.jsonl" || fail "the confirming run failed"
python3 - "$tmp/tuning.json" "$tmp/confirm.jsonl" "$np" "$slack" <<'PY' || exit 1
import json, sys
tun, runs, np_, slack = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
rules = [r for r in tun["rules"] if r.get("collective") == "allgather"]
recs = [json.loads(l) for l in open(runs) if l.startswith("{")]
bad = [r for r in recs if r.get("status") != "ok"]
if bad:
    sys.exit("check_tune_run: FAIL: %d records not ok (first: %s)" % (len(bad), bad[0]))
hosts = {r.get("hosts") for r in recs}
if hosts == {1}:
    sys.exit("check_tune_run: FAIL: the confirming run saw one host")
def chosen(size):
    for r in rules:
        lo, hi = r.get("bytes", [0, None])
        if lo <= size and (hi is None or size <= hi):
            return r["algorithm"]
    return None
fails = 0
for s in sorted({r["size"] for r in recs}):
    at = {r["algorithm"].split(" (")[0]: r for r in recs if r["size"] == s}
    want = chosen(s)
    auto = at.get("auto")
    ran = auto.get("ran", "") if auto else ""
    ran = ran[5:-1] if ran.startswith("auto(") else ran
    cands = {a: r["median_us"] for a, r in at.items() if a not in ("auto", "native", "memcpy")}
    best = min(cands, key=cands.get)
    mine = cands.get(want)
    q = mine / cands[best] if mine else float("inf")
    ok = want is not None and ran.split(" (")[0] == want and q <= slack
    fails += not ok
    print("check_tune_run: %7d B: file %-28s auto ran %-28s %8.2f us, fastest %s %.2f us: %.2fx%s"
          % (s, want, ran, mine or -1, best, cands[best], q, "" if ok else "  <- FAIL"))
if fails:
    sys.exit("check_tune_run: FAIL: %d sizes not confirmed (slack %.2fx)" % (fails, slack))
print("check_tune_run: PASS")
PY
