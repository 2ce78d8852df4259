#!/usr/bin/env bash
# sim_paper000.sh: paper 000's experiment (section 7, Figure 5) on its cluster's
# parameters: every kport all-gather algorithm that runs on 4 nodes of 4 ranks
# (with the k and C variants the paper uses: k = 1 and k = 2, two rails), 8 B
# .. 1 MiB per rank, P = 16, node size 4, two rails, priced with
# tests/data/params/paper000.json (docs/SIMULATOR-paper000.md says where each
# value comes from). Prints per size the ranking (the five fastest with their
# times), the winner and the paper's winner for that size:
#   SMP-aware Gather+Bcast up to 256 B, SMP-aware Bruck 512 B - 8 KB, Direct 16 KB - 1 MB.
# "yes" when the fastest of the paper's algorithms - as the paper runs them, k = 2
# ports (one per rail), Gather+Bcast with either inter-node gather - is the
# paper's winner; kport's own algorithms (ring, recursive doubling, concurrent
# exchange) and the k = 1 variants are ranked too, outside that comparison.
# RAILS=r (default 2) sets kport-sim's --rails.
#
#   scripts/sim_paper000.sh [--sim PATH] [--check PATH] [--model] [--params FILE]
#
#   --sim PATH    kport-sim (default $KPORT_SIM, else build/ompi/kport-sim, else
#                 the first build/*/kport-sim); used when present
#   --check PATH  kport-check (default build/ompi/kport-check, else the first
#                 build/*/kport-check): the cost model, kport-check --predict
#   --model       the cost model only, even when kport-sim exists
# Without kport-sim the table is the cost model's (it has no rails: the
# parameter file's inter-node pieces above 1 KiB carry the striped bandwidth).
# Both at once: one table each. A few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
sim=${KPORT_SIM:-} check="" model_only=0 params=tests/data/params/paper000.json
while [ $# -gt 0 ]; do
    case $1 in
    --sim) sim=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    --model) model_only=1; shift ;;
    --params) params=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "sim_paper000: unknown option $1 (--sim, --check, --model, --params)" >&2; exit 2 ;;
    esac
done
first() { for f in "$@"; do [ -x "$f" ] && { echo "$f"; return; }; done; echo ""; }
[ -n "$sim" ] || sim=$(first build/ompi/kport-sim build/*/kport-sim)
[ -n "$check" ] || check=$(first build/ompi/kport-check build/*/kport-check)
[ -f "$params" ] || { echo "sim_paper000: $params: no such file" >&2; exit 2; }

P=16 NODE=4 RAILS=${RAILS:-2}
algs="smp_gather_bcast:tree=1 smp_gather_bcast:tree=2 smp_bruck:k=1 smp_bruck:k=2 smp_direct:k=1 smp_direct:k=2
      direct:k=1 direct:k=2 bruck:k=1 bruck:k=2 standard_exchange:k=1 standard_exchange:k=2
      ring recursive_doubling concurrent_exchange:C=2 concurrent_exchange:C=4 concurrent_exchange_split"
sizes=""
for ((s = 8; s <= 1048576; s *= 2)); do sizes="$sizes $s"; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one line per (algorithm, bytes): "alg bytes time_us" into $tmp/<tool>
run_model() {
    [ -n "$check" ] || { echo "sim_paper000: kport-check not found (build it; --check PATH)" >&2; exit 2; }
    local half1 half2 # kport-check takes at most 16 sizes per run
    half1=$(echo $sizes | tr ' ' '\n' | head -9 | paste -sd,) half2=$(echo $sizes | tr ' ' '\n' | tail -n +10 | paste -sd,)
    for a in $algs; do
        for b in "$half1" "$half2"; do
            "$check" allgather -a "$a" -P $P -b "$b" --node-size $NODE --no-cma \
                --predict "$params" | awk -v a="$a" 'NR > 2 && $4 ~ /^[0-9.]+$/ { print a, $3, $4 }'
        done
    done > "$tmp/model"
}
run_sim() {
    for a in $algs; do
        for s in $sizes; do
            out=$("$sim" allgather -a "$a" -P $P -m "$s" --node-size $NODE --rails $RAILS --params "$params" \
                --format json -q 2> "$tmp/err") || { echo "sim_paper000: kport-sim $a $s B: $(cat "$tmp/err")" >&2; continue; }
            echo "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(sys.argv[1], sys.argv[2], r["max_time_ns"]/1e3)' "$a" "$s"
        done
    done > "$tmp/sim"
}

paper_winner() { # the paper's best algorithm class at $1 bytes
    if [ "$1" -le 256 ]; then echo smp_gather_bcast; elif [ "$1" -le 8192 ]; then echo smp_bruck; else echo direct; fi
}
class() { # the paper's class of a kport algorithm as the paper runs it (k = 2 ports, one per rail;
    # Gather+Bcast with a tree or direct gather), "-" for the rest (kport's own, and k = 1)
    case $1 in
    smp_gather_bcast*) echo smp_gather_bcast ;; smp_bruck:k=2) echo smp_bruck ;; smp_direct:k=2) echo smp_direct ;;
    direct:k=2) echo direct ;; bruck:k=2) echo bruck ;; standard_exchange:k=2) echo standard_exchange ;; *) echo - ;;
    esac
}
fmt_size() { if [ "$1" -ge 1048576 ]; then echo "$(($1 / 1048576)) MiB"; elif [ "$1" -ge 1024 ]; then echo "$(($1 / 1024)) KiB"; else echo "$1 B"; fi; }

table() { # $1: tool name, $2: file of "alg bytes us"
    echo "== $1: all-gather, P=$P, $NODE ranks per node, $RAILS rails, $params"
    printf '%-8s %-17s %-32s %-4s %s\n' size paper "fastest of paper's (us)" same "ranking, us (fastest five)"
    local agree=0 n=0
    for s in $sizes; do
        sorted=$(awk -v s="$s" '$2 == s { print $3, $1 }' "$2" | sort -g)
        [ -n "$sorted" ] || continue
        pw=$(paper_winner "$s")
        best="" bestc=""
        while read -r t a; do
            c=$(class "$a")
            if [ "$c" != - ]; then best="$a $(printf %.1f "$t")" bestc=$c; break; fi
        done <<< "$sorted"
        same=no
        [ "$bestc" = "$pw" ] && { same=yes; agree=$((agree + 1)); }
        n=$((n + 1))
        rank=$(echo "$sorted" | head -5 | awk '{ printf "%s%s %.1f", (NR > 1 ? ", " : ""), $2, $1 }')
        printf '%-8s %-17s %-32s %-4s %s\n' "$(fmt_size "$s")" "$pw" "$best" "$same" "$rank"
    done
    echo "== $1: the paper's winner reproduced at $agree of $n sizes"
}

if [ -x "$sim" ] && [ "$model_only" = 0 ]; then
    run_sim
    table "kport-sim ($sim)" "$tmp/sim"
    echo
fi
run_model
table "cost model (kport-check --predict, no rails)" "$tmp/model"
