#!/usr/bin/env bash
# The tuning file across real hosts (issue 40), run by
# tests/cluster/cluster_test.sh (KPORT_CLUSTER_RUN, KPORT_LOCAL_RUN):
#
# usage: check_tuning.sh TEST_TUNING_RUN TUNING_FILE NP MAP SIZE=ALGORITHM...
#
# tests/cluster/tuning.json has rules by node count and ranks per node.
# test_tuning_run (tests/tune) runs kp_allgather at each SIZE, every byte
# checked, and prints "size N: ALGORITHM" for what ran. Across the hosts,
# every SIZE must run its ALGORITHM (the rule the real layout matches), and
# KPORT_VERBOSE=1 must name the tuning file as the reason; on one machine
# with KPORT_NODE_MAP=MAP (the same layout, emulated) the same algorithms.
set -uo pipefail
[ $# -ge 5 ] || { echo "usage: check_tuning.sh TEST_TUNING_RUN TUNING_FILE NP MAP SIZE=ALGORITHM..." >&2; exit 2; }
prog=$1 file=$2 np=$3 map=$4
shift 4
read -r -a crun <<<"$KPORT_CLUSTER_RUN"
read -r -a lrun <<<"$KPORT_LOCAL_RUN"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-tuning.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_tuning: FAIL: $*" >&2; exit 1; }
sizes=""
for e in "$@"; do sizes+="${sizes:+,}${e%%=*}"; done

run() { # NAME cluster|local VAR=value...
    local name=$1 where=$2
    shift 2
    local launch=("${crun[@]}")
    [ "$where" = local ] && launch=(timeout -k 5 120 "${lrun[@]}")
    echo "check_tuning: $name: ${launch[*]} -n $np env $* $prog -m $sizes"
    if ! "${launch[@]}" -n "$np" env -u KPORT_NODE_SIZE -u KPORT_NODE_MAP -u KPORT_ALLGATHER \
        KPORT_TUNING_FILE="$file" KPORT_VERBOSE=1 "$@" "$prog" -m "$sizes" >"$tmp/$name.out" 2>&1; then
        cat "$tmp/$name.out" >&2
        fail "$name: test_tuning_run failed"
    fi
    grep -q '^[0-9]* passed, 0 failed' "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; fail "$name: no pass line"; }
    grep '^size ' "$tmp/$name.out" | tee "$tmp/$name.sizes"
}
run cluster cluster
for e in "$@"; do
    s=${e%%=*} a=${e#*=}
    grep -qxF "size $s: $a" "$tmp/cluster.sizes" || fail "size $s ran $(grep "^size $s:" "$tmp/cluster.sizes"), expected $a"
    grep -qE "kport: allgather runs P=$np bytes=$s: .*\(tuning file .*rule [0-9]+" "$tmp/cluster.out" ||
        { grep '^kport:' "$tmp/cluster.out" >&2; fail "size $s: KPORT_VERBOSE names no rule of the tuning file"; }
done
run emulated local KPORT_NODE_MAP="$map"
cmp -s "$tmp/cluster.sizes" "$tmp/emulated.sizes" || fail "the emulated layout ran other algorithms"
echo "check_tuning: PASS"
