#!/usr/bin/env bash
# Node layouts across real hosts against emulation (issue 40), run by
# tests/cluster/cluster_test.sh (KPORT_CLUSTER_RUN, KPORT_LOCAL_RUN):
#
# usage: compare_layout.sh TEST_LAYOUT NP MAP
#   MAP: the node of every world rank that the cluster's placement gives
#   (cluster.sh run -p 2 on 2 hosts: 0,0,1,1; -p 1,2,2: 0,1,1,2,2)
#
# test_layout prints a "layout" line: kp_node_info's node, local index and
# node size of every rank of the world, of the world reversed, of the odd
# and of the even ranks. Runs, each checked by test_layout itself (kport's
# world layout is MPI_Comm_split_type's when nothing is emulated, node ids
# numbered by lowest rank, local indices and sizes consistent, --expect):
#   real      across the hosts, nothing emulated: the nodes are MAP
#   emulated  one machine, KPORT_NODE_MAP=MAP: the same layout line as real
#   both      across the hosts with KPORT_NODE_MAP=MAP (emulation that agrees
#             with the real nodes): the same line again
#   single    KPORT_NODE_SIZE=1 across the hosts and on one machine: one node
#             per rank both ways, the same line
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: compare_layout.sh TEST_LAYOUT NP MAP" >&2; exit 2; }
prog=$1 np=$2 map=$3
read -r -a crun <<<"$KPORT_CLUSTER_RUN"
read -r -a lrun <<<"$KPORT_LOCAL_RUN"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-layout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "compare_layout: FAIL: $*" >&2; exit 1; }

# run NAME cluster|local [VAR=value...] -- ARGS...: the layout line into $tmp/NAME
run() {
    local name=$1 where=$2 envs=()
    shift 2
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local launch=("${crun[@]}")
    [ "$where" = local ] && launch=(timeout -k 5 120 "${lrun[@]}")
    echo "compare_layout: $name: ${launch[*]} -n $np env ${envs[*]} $prog $*"
    # env -u: the variables must not leak in from the caller's environment
    if ! "${launch[@]}" -n "$np" env -u KPORT_NODE_SIZE -u KPORT_NODE_MAP "${envs[@]}" "$prog" "$@" >"$tmp/$name.out" 2>&1; then
        cat "$tmp/$name.out" >&2
        fail "$name: test_layout failed"
    fi
    grep -E '^(hosts|mpi|layout|kp_win_create|test_layout):' "$tmp/$name.out" | sed "s/^/  $name: /"
    grep -q '^test_layout: [0-9]* passed, 0 failed' "$tmp/$name.out" || fail "$name: no pass line"
    grep '^layout ' "$tmp/$name.out" >"$tmp/$name.layout" || fail "$name: no layout line"
}
same() {
    cmp -s "$tmp/$1.layout" "$tmp/$2.layout" || fail "$1 and $2 differ: $(cat "$tmp/$1.layout") / $(cat "$tmp/$2.layout")"
    echo "compare_layout: $1 = $2"
}

run real cluster -- --hosts-are-nodes --expect "$map"
run emulated local KPORT_NODE_MAP="$map" -- --expect "$map"
same real emulated
run both cluster KPORT_NODE_MAP="$map" -- --hosts-are-nodes --expect "$map"
same real both
ones=$(seq -s, 0 $((np - 1)))
run single cluster KPORT_NODE_SIZE=1 -- --hosts-are-nodes --expect "$ones"
run single_emulated local KPORT_NODE_SIZE=1 -- --expect "$ones"
same single single_emulated
echo "compare_layout: PASS"
