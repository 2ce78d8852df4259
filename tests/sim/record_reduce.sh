#!/usr/bin/env bash
# Record LogGOPSim's per-rank times for the hand-built reduction schedules of
# tests/sim/test_reduce.c (the reference data of ctest sim_reduce, issue 37):
# test_reduce --goal writes every case's GOAL file (combines as
# `calc <bytes * gamma>`), LogGOPSim's txt2bin converts it, LogGOPSim runs it
# with the case's -L -o -g -G -O -S, and OUT (default
# tests/data/loggopsim_hand/reduce.txt) gets, per case, one header line
# `# case=.. P=.. m=.. set=.. gamma=.. L=.. ... | <commands>` and LogGOPSim's
# `Host r: t` lines as `rank r t`. Only LogGOPSim's printed numbers enter kport.
#
#   LOGGOPSIM=/path/to/LogGOPSim tests/sim/record_reduce.sh TEST_REDUCE [OUT]
#   TXT2BIN   its converter (default: txt2bin beside LOGGOPSIM)
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ] || [ -z "${LOGGOPSIM:-}" ] || [ ! -x "$LOGGOPSIM" ]; then
    echo "usage: LOGGOPSIM=/path/to/LogGOPSim record_reduce.sh TEST_REDUCE [OUT]" >&2
    echo "  (LogGOPSim from https://github.com/spcl/LogGOPSim: re2c, gengetopt, libgraphviz-dev)" >&2
    exit 2
fi
prog=$1
out=${2:-$(cd "$(dirname "$0")/../data" && pwd)/loggopsim_hand/reduce.txt}
txt2bin=${TXT2BIN:-$(dirname "$LOGGOPSIM")/txt2bin}
[ -x "$txt2bin" ] || { echo "record_reduce.sh: $txt2bin not found (set TXT2BIN)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" --goal "$tmp" >"$tmp/list"
mkdir -p "$(dirname "$out")"
: >"$tmp/out.txt"
n=0
while read -r goal cs P m set gamma opts; do
    "$txt2bin" -i "$goal" -o "$tmp/case.bin" >/dev/null
    # shellcheck disable=SC2086
    "$LOGGOPSIM" -f "$tmp/case.bin" $opts >"$tmp/run"
    hosts=$(grep -c '^Host [0-9]*: ' "$tmp/run" || true)
    if [ "$hosts" != "${P#P=}" ]; then
        echo "record_reduce.sh: ${goal##*/}: $hosts host lines for ${P}" >&2
        exit 1
    fi
    read -r -a o <<<"$opts"
    {
        echo "# $cs $P $m $set $gamma ${o[0]#-}=${o[1]} ${o[2]#-}=${o[3]} ${o[4]#-}=${o[5]} ${o[6]#-}=${o[7]}" \
             "${o[8]#-}=${o[9]} ${o[10]#-}=${o[11]} | test_reduce --goal DIR; txt2bin -i ${goal##*/} -o case.bin;" \
             "LogGOPSim -f case.bin $opts"
        sed -n 's/^Host \([0-9]*\): \([0-9]*\)$/rank \1 \2/p' "$tmp/run"
    } >>"$tmp/out.txt"
    n=$((n + 1))
done <"$tmp/list"
mv "$tmp/out.txt" "$out"
echo "record_reduce.sh: $n cases in $out"
