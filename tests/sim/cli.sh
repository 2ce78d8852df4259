#!/usr/bin/env bash
# kport-sim's command line: JSON validity and fields, determinism (two runs
# give the same JSON apart from wall-clock fields), --per-rank, a barrier
# whose time is known in closed form at P = 65536, parameter files (with a
# measured exchange and --no-exchange), reductions (the combine's cost,
# --gamma, --elem, --uneven), and bad input (exit 2 and a message naming
# the problem, never a crash).
#   tests/sim/cli.sh KPORT_SIM
set -uo pipefail
sim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --- JSON: one valid object with the contract's fields -----------------------
"$sim" allgather -a bruck:k=2 -P 37 -m 64 --format json --per-rank >"$tmp/a.json" || fail "json run exited $?"
python3 -m json.tool "$tmp/a.json" >/dev/null || fail "json output is not valid JSON"
python3 - "$tmp/a.json" <<'PY' || fail "json fields"
import json, sys
d = json.load(open(sys.argv[1]))
need = ["coll", "algorithm", "P", "node_size", "rails", "ports", "bytes", "max_time_ns", "slowest_rank",
        "min_time_ns", "median_time_ns", "messages", "msg_bytes", "events", "events_per_s", "wall_s",
        "critical_path", "params", "rank_ns"]
missing = [k for k in need if k not in d]
assert not missing, missing
assert d["coll"] == "allgather" and d["algorithm"] == "bruck:k=2" and d["P"] == 37 and d["bytes"] == 64
assert len(d["rank_ns"]) == 37 and max(d["rank_ns"]) == d["max_time_ns"]
assert d["rank_ns"][d["slowest_rank"]] == d["max_time_ns"]
assert d["min_time_ns"] == min(d["rank_ns"])
# bruck k=2 on 37 ranks: 4 steps (3^3 = 27 < 37), every rank receives 36 blocks of 64 B
assert d["msg_bytes"] == 37 * 36 * 64, d["msg_bytes"]
cp = d["critical_path"]
parts = sum(v for k, v in cp.items() if k.endswith("_ns") and k != "length_ns")
assert abs(parts - cp["length_ns"]) < 1e-3 * cp["length_ns"], (parts, cp)
# the chain ends at the slowest rank, in time order, with one send per message on the path
ch = cp["chain"]
assert cp["hops"] == len(ch) and ch[-1]["rank"] == d["slowest_rank"], cp
assert all(a["t_ns"] <= b["t_ns"] for a, b in zip(ch, ch[1:])), ch
assert sum(h["op"] == "send" for h in ch) == cp["messages"], cp
assert d["params"] == {"L": 2500, "o": 1500, "g": 1000, "G": 6, "O": 0, "S": 65535}, d["params"]
PY

# --- determinism -------------------------------------------------------------
strip() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k) for k in ("wall_s","build_s","sim_s","events_per_s")]; print(json.dumps(d, sort_keys=True))' "$1"; }
for args in "alltoall -a pairwise -P 33 -m 100" "gather -a smp -P 24 --node-size 6 -m 8 --root 5" \
            "allgather -a smp_bruck:k=3 -P 64 --node-size 4 -m 4096 --rails 2 --ports 2" \
            "barrier -a nway_dissemination:n=3 -P 100"; do
    # shellcheck disable=SC2086
    "$sim" $args --format json --per-rank >"$tmp/r1.json" && "$sim" $args --format json --per-rank >"$tmp/r2.json" \
        || fail "$args exited with an error"
    [ "$(strip "$tmp/r1.json")" = "$(strip "$tmp/r2.json")" ] || fail "two runs of $args differ"
done

# --- text output and --per-rank -----------------------------------------------
"$sim" allgather -a ring -P 5 -m 8 --per-rank >"$tmp/t.txt" || fail "text run"
[ "$(grep -c '^rank [0-9]* [0-9.e+]*$' "$tmp/t.txt")" = 5 ] || fail "--per-rank: not 5 'rank r ns' lines"
for w in '^time ' '^messages ' '^critical path ' '^events ' 'events/s'; do
    grep -q "$w" "$tmp/t.txt" || fail "text output lacks '$w'"
done

# --- closed form at scale: dissemination barrier, 16 rounds of o + L + o -----
out=$("$sim" barrier -a dissemination -P 65536 -L 2000 -o 300 -g 500 -G 0 --format json) || fail "P=65536 run"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["max_time_ns"] == d["min_time_ns"] == 16*2600, d["max_time_ns"]; assert d["messages"] == 16*65536' \
    || fail "dissemination P=65536: expected 16 * 2600 ns on every rank"

# --- parameter files ---------------------------------------------------------
cat >"$tmp/p.json" <<'J'
{"kport_params": 1,
 "p2p": {"intra": {"pieces": [{"max_bytes": -1, "L": 100, "o_s": 10, "o_r": 12, "g": 20, "G": 0.01, "O": 0}]},
         "inter": {"pieces": [{"max_bytes": -1, "L": 1000, "o_s": 50, "o_r": 60, "g": 100, "G": 0.1, "O": 0}]}},
 "shm": {"flag": {"fixed": 90}, "copy_in": {"fixed": 20, "per_byte": 0.06}, "copy_out": {"fixed": 20, "per_byte": 0.06},
         "memcpy": {"fixed": 10, "per_byte": 0.05}, "peer_read": {"fixed": 700, "per_byte": 0.07},
         "peer_write": {"fixed": 700, "per_byte": 0.07}},
 "hockney": {"intra": {"alpha": 100, "beta": 0.01}, "inter": {"alpha": 1000, "beta": 0.1}}}
J
if out=$("$sim" barrier -a dissemination -P 2 --params "$tmp/p.json" --format json 2>"$tmp/err"); then
    echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["max_time_ns"] == 50+1000+60, d' \
        || fail "--params: inter-node barrier P=2 should take 1110 ns"
    echo "$("$sim" barrier -a dissemination -P 2 --params "$tmp/p.json" --node-size 2 --format json)" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["max_time_ns"] == 10+100+12, d' \
        || fail "--params: intra-node barrier P=2 should take 122 ns"
    echo "$("$sim" barrier -a dissemination -P 2 --params "$tmp/p.json" -L 5000 --format json)" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["max_time_ns"] == 50+5000+60, d' \
        || fail "-L overrides the file's L"
    # a measured exchange (X 2000, XG 0.5 inter): ring P = 2, 8 B: send 0..50, copy 50..60.4, the
    # message in at 1050 + 60 + 7*0.1 = 1110.7 (LogGP); the exchange: 60.4 + 2000 + 4 - 50 = 2014.4
    sed 's/"O": 0}]}}/"O": 0, "X": 2000, "XG": 0.5}]}}/' "$tmp/p.json" >"$tmp/px.json"
    for x in "2014.4" "1110.7 --no-exchange"; do
        set -- $x
        echo "$("$sim" allgather -a ring -P 2 -m 8 --params "$tmp/px.json" ${2:-} --format json)" |
            python3 -c 'import json,sys; d=json.load(sys.stdin); want=float(sys.argv[1]); p=d["params"]["inter"]
assert abs(d["max_time_ns"] - want) < 1e-6 and d["min_time_ns"] == d["max_time_ns"], d["max_time_ns"]
assert (p["X"], p["XG"]) == (2000, 0.5) if want > 2000 else "X" not in p, p' "$1" \
            || fail "measured exchange ${2:-}: ring P=2 8 B should take $1 ns"
    done
    "$sim" allgather -a ring -P 2 -m 8 --params "$tmp/px.json" | grep -q 'X=2000 XG=0.5' || fail "text: X, XG not shown"
    # the combine's cost from the file: recursive doubling P = 2, 16 B, inter: the message taken in at
    # 50 + 1000 + 60 + 15*0.1 = 1111.5, then one combine. Without compute.reduce (this file): memcpy's
    # 10 + 0.05 * 1.5 * 16 = 11.2 and a note; with compute.reduce 3 + 0.5/B: 11; --gamma 2: 32 (no fixed)
    sed 's/"hockney"/"compute": {"reduce": {"fixed": 3, "per_byte": 0.5}}, "hockney"/' "$tmp/p.json" >"$tmp/pc.json"
    for x in "1122.7 p.json" "1122.5 pc.json" "1143.5 p.json --gamma,2"; do
        set -- $x
        opts=${3:-}
        d=$("$sim" allreduce -a recursive_doubling -P 2 -m 16 --params "$tmp/$2" ${opts//,/ } --format json 2>"$tmp/err")
        echo "$d" | python3 -c 'import json,sys; d=json.load(sys.stdin); want=float(sys.argv[1])
assert abs(d["max_time_ns"] - want) < 1e-9 and d["min_time_ns"] == d["max_time_ns"], d["max_time_ns"]' "$1" ||
            fail "allreduce P=2 16 B with $2 ${3:-}: expected $1 ns"
        if [ "$2 ${3:-}" = "p.json " ]; then
            grep -q "has no compute.reduce; combines cost its shm.memcpy x 1.5" "$tmp/err" || fail "no note: $(cat "$tmp/err")"
        else
            [ ! -s "$tmp/err" ] || fail "unexpected note with $2 ${3:-}: $(cat "$tmp/err")"
        fi
    done
else
    fail "--params run: $(cat "$tmp/err")"
fi

# --- bad input: exit 2 and a message ------------------------------------------
bad() { # expected-message-regex args...
    local want=$1
    shift
    "$sim" "$@" >"$tmp/o" 2>"$tmp/e"
    local rc=$?
    [ $rc = 2 ] || fail "kport-sim $* exited $rc, expected 2"
    grep -Eq -e "$want" "$tmp/e" || fail "kport-sim $*: stderr lacks /$want/: $(head -2 "$tmp/e")"
}
bad 'unknown collective "scan"' scan -a ring -P 4
bad 'unknown algorithm "nosuch"' allgather -a nosuch -P 4
bad '-P "0"' allgather -a ring -P 0
bad '-P "abc"' allgather -a ring -P abc
bad '-m "12x"' allgather -a ring -P 4 -m 12x
bad '-G "-1"' allgather -a ring -P 4 -G -1
bad '-S "1.5"' allgather -a ring -P 4 -S 1.5
bad 'unknown option "--bogus"' allgather -a ring -P 4 --bogus
bad '-a NAME is required' allgather -P 4
bad '--root must be below P' gather -a binomial -P 4 --root 4
bad '--format "xml"' allgather -a ring -P 4 --format xml
bad 'refused' allgather -a concurrent_exchange:C=3 -P 4
bad 'nonexistent.json' allgather -a ring -P 4 --params "$tmp/nonexistent.json"
echo '{"kport_params": 1, "p2p": ' >"$tmp/bad.json"
bad 'bad.json' allgather -a ring -P 4 --params "$tmp/bad.json"
bad 'needs a value' allgather -a ring -P
bad '--rules "bogus"' allgather -a ring -P 4 --rules bogus
bad "LogGOPSim's rules only" allgather -a ring -P 4 --rules executor --ports 2

# --- --rules executor: the cost model's rules, no critical path --------------------
"$sim" allgather -a bruck:k=2 -P 13 -m 100 --rules executor --format json >"$tmp/x.json" || fail "--rules executor failed"
grep -q '"rules": "executor", "critical_path": null' "$tmp/x.json" || fail "--rules executor: no rules/critical_path fields"
"$sim" allgather -a bruck:k=2 -P 13 -m 100 --rules loggopsim >"$tmp/l.txt" && "$sim" allgather -a bruck:k=2 -P 13 -m 100 >"$tmp/d.txt" &&
    cmp -s <(grep '^time' "$tmp/l.txt") <(grep '^time' "$tmp/d.txt") || fail "--rules loggopsim is not the default"

# --- reductions (issue 37): elements, gamma, the critical path's compute ------------
# recursive doubling at P = 4, 16 B (2 doubles): 2 steps of 1500 + 2500 + 1500 + 15*6 + 16*gamma;
# --gamma 3 adds 2 * 16 * 2 = 64 ns to every rank, all of it in "compute"
for g in 1 3; do
    "$sim" allreduce -a recursive_doubling -P 4 -m 16 --gamma $g --format json >"$tmp/r$g.json" ||
        fail "allreduce --gamma $g exited $?"
done
python3 - "$tmp/r1.json" "$tmp/r3.json" <<'PY' || fail "allreduce recursive_doubling: closed form, --gamma"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d, g in ((a, 1), (b, 3)):
    assert d["max_time_ns"] == d["min_time_ns"] == 2 * (5590 + 16 * g), d["max_time_ns"]
    assert d["elem"] == 8 and d["commutative"] is True and d["combines"] == 8 and d["combine_bytes"] == 128, d
    assert d["critical_path"]["compute_ns"] == 2 * 16 * g, d["critical_path"]
    assert d["reduce_ns_per_byte"] == g
assert sum(h["op"] == "combine" for h in b["critical_path"]["chain"]) == 2, b["critical_path"]["chain"]
PY
"$sim" reduce_scatter -a pairwise -P 5 -m 64 --uneven --noncommutative --format json >"$tmp/rs.json" ||
    fail "reduce_scatter --uneven --noncommutative exited $?"
grep -q '"commutative": false' "$tmp/rs.json" || fail "reduce_scatter: not reported non-commutative"
bad 'are for reductions' allgather -a ring -P 4 --elem 4
bad 'are for reductions' bcast -a binomial -P 4 --gamma 2
bad '-m 60 is not a whole number of 8-byte elements' allreduce -a ring -P 4 -m 60
bad "--uneven is reduce_scatter's" allreduce -a ring -P 4 --uneven
bad '--gamma "-1"' allreduce -a ring -P 4 --gamma -1
bad '--elem "0"' reduce -a knomial -P 4 --elem 0

[ $fails = 0 ] && echo "cli.sh: all checks passed"
exit $((fails != 0))
