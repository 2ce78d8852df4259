#!/usr/bin/env bash
# Record LogGOPSim's per-rank completion times for kport's flat schedules, the
# reference data of tests/sim/agree_loggopsim.sh (docs/SIMULATOR.md, issue 9).
#
#   LOGGOPSIM=/path/to/LogGOPSim scripts/loggopsim_record.sh [OUTDIR]
#
# For every case: kport-check --goal exports the schedule, LogGOPSim's txt2bin
# (next to the LogGOPSim binary, or $TXT2BIN) converts it, LogGOPSim runs it
# with -L -o -g -G -O -S, and OUTDIR/<case>.txt (default tests/data/loggopsim)
# gets one header line (the parameters and the exact command lines) and one
# `rank <r> <ns>` line per rank (LogGOPSim's `Host <r>: <t>`).
#
# LogGOPSim prints every host's time only for P <= 16; for larger P give a
# binary built with that condition removed from its final print (nothing else
# changed); the script refuses output with fewer host lines than ranks.
#   LOGGOPSIM    the simulator binary (required)
#   TXT2BIN      its converter (default: txt2bin beside LOGGOPSIM)
#   KPORT_CHECK  kport-check (default: build/ompi/kport-check)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${LOGGOPSIM:-}" ] || [ ! -x "${LOGGOPSIM}" ]; then
    echo "loggopsim_record.sh: set LOGGOPSIM=/path/to/LogGOPSim (an executable; got '${LOGGOPSIM:-}')" >&2
    echo "  build it from https://github.com/spcl/LogGOPSim (re2c, gengetopt, libgraphviz-dev)" >&2
    exit 2
fi
txt2bin=${TXT2BIN:-$(dirname "$LOGGOPSIM")/txt2bin}
check=${KPORT_CHECK:-build/ompi/kport-check}
for t in "$txt2bin" "$check"; do
    [ -x "$t" ] || { echo "loggopsim_record.sh: $t not found (set TXT2BIN / KPORT_CHECK)" >&2; exit 2; }
done
out=${1:-tests/data/loggopsim}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# parameter sets: name and LogGOPSim options. Set a: 64 KiB == S is still eager
# (LogGOPSim: s <= S eager); set b: 64 KiB > S is rendezvous.
sets=("a:-L 2000 -o 300 -g 500 -G 1 -O 0 -S 65536" "b:-L 1500 -o 700 -g 200 -G 3 -O 1 -S 1024")

# cases: collective, algorithm, ranks, sizes, extra options (commas for spaces). The
# reductions combine 8-byte elements (both tools' default), each combine exported as
# `calc <bytes>` (1 ns per byte: kport-sim's default --gamma); reduce_scatter's
# --uneven is kport-sim's name for the split kport-check --goal uses (not passed to it).
# bruck:k=8 at P=64 frees up to 64 operations of a rank at once (LogGOPSim
# orders them by type with an unstable sort above 16)
cases=(
    "barrier dissemination 2,3,5,8,16,64 0"
    "barrier nway_dissemination:n=1 2,3,5,8,16,64 0"
    "barrier nway_dissemination:n=2 2,3,5,8,16,64 0"
    "barrier nway_dissemination:n=3 2,3,5,8,16,64 0"
    "barrier nway_dissemination:n=7 3,5,8,16,64 0"
    "allgather ring 2,3,5,8,16,64 8,65536"
    "allgather ring 3,8 8 --inplace"
    "allgather bruck:k=1 2,3,5,8,16,64 8,65536"
    "allgather bruck:k=1 5 8 --inplace"
    "allgather bruck:k=2 3,5,8,16,64 8,65536"
    "allgather bruck:k=3 5,8,16,64 8,65536"
    "allgather bruck:k=8 64 8,65536"
    "allgather recursive_doubling 2,8,16,64 8,65536"
    "allgather direct:k=1 2,3,5,8,16 8,65536"
    "allgather direct:k=4 5,8,16,64 8,65536"
    "allgather standard_exchange:k=1 2,3,5,8,16,64 8,65536"
    "allgather standard_exchange:k=2 5,8,16 8,65536"
    "allgather concurrent_exchange:C=1 2,8,16,64 8,65536"
    "allgather concurrent_exchange:C=2 4,8,16,64 8,65536"
    "allgather concurrent_exchange_split:C=2 2,8,16,64 8,65536"
    "gather binomial 2,3,5,8,16,64 8,65536"
    "gather binomial 5 8 --root 3"
    "gather binomial 5 8 --inplace"
    "gather direct:k=1 2,3,5,8,16,64 8,65536"
    "gather direct:k=4 5,8,16,64 8,65536"
    "alltoall pairwise 2,3,5,8,16,64 8,65536"
    "alltoall direct:k=1 2,3,5,8,16 8,65536"
    "alltoall direct:k=4 5,8,16,64 8,65536"
    "alltoall bruck:k=1 2,3,5,8,16,64 8,65536"
    "alltoall bruck:k=2 3,5,8,16 8,65536"
    "alltoall bruck:k=8 16,64 8,65536"
    "allreduce recursive_doubling 2,3,5,8,16 8,65536"
    "allreduce recursive_doubling 5 64 --noncommutative"
    "allreduce recursive_doubling 6 64 --inplace"
    "allreduce recursive_multiplying:k=2 5,9,16 8,65536"
    "allreduce rabenseifner:k=1 5,8 64,65536"
    "allreduce rabenseifner:k=2 7 64,65536"
    "allreduce ring 3,5,8 64,65536"
    "reduce knomial:k=1 5,8,16 8,65536"
    "reduce knomial:k=2 7 64 --root,3"
    "reduce knomial:k=1 6 64 --root,2,--noncommutative"
    "reduce rabenseifner 5,8 64,65536"
    "reduce_scatter_block pairwise 3,5,8 8,65536"
    "reduce_scatter_block recursive_halving 5,8 8,65536"
    "reduce_scatter_block kport:k=2 5,8 8,65536"
    "reduce_scatter pairwise 5,7 64,65536 --uneven"
    "bcast binomial 5,8,16 8,65536"
    "bcast knomial:k=2 7,16 8,65536 --root,3"
    "bcast scatter_allgather:k=1 5,8 64,65536"
    "bcast scatter_ring 5 64,65536"
    "bcast chain 5 64,65536"
    "scatter binomial 5,8,16 8,65536"
    "scatter direct:k=2 5,8 8,65536 --root,2"
)

n=0 skipped=0
for c in "${cases[@]}"; do
    read -r coll algo Ps sizes extra <<<"$c"
    extra=${extra//,/ }
    kextra=${extra//--uneven/}
    for P in ${Ps//,/ }; do
        for m in ${sizes//,/ }; do
            tagx=$(echo "${extra:-}" | tr -d ' -')
            base="${coll}_$(echo "$algo" | tr ':,=' '_.-')_P${P}_m${m}${tagx:+_$tagx}"
            kc="kport-check $coll -a $algo -P $P -b $m${kextra:+ $kextra} --goal case.goal"
            # shellcheck disable=SC2086
            if ! "$check" "$coll" -a "$algo" -P "$P" -b "$m" ${kextra:-} --goal "$tmp/$base.goal" >"$tmp/err" 2>&1; then
                echo "skip $base: $(head -1 "$tmp/err")" >&2
                skipped=$((skipped + 1))
                continue
            fi
            "$txt2bin" -i "$tmp/$base.goal" -o "$tmp/$base.bin" >/dev/null
            for s in "${sets[@]}"; do
                name=${s%%:*} opts=${s#*:}
                # shellcheck disable=SC2086
                "$LOGGOPSIM" -f "$tmp/$base.bin" $opts >"$tmp/out"
                hosts=$(grep -c '^Host [0-9]*: ' "$tmp/out" || true)
                if [ "$hosts" != "$P" ]; then
                    echo "loggopsim_record.sh: $base set $name: $hosts host lines for P=$P" \
                         "(unmatched messages, or a LogGOPSim that prints only the maximum above P=16)" >&2
                    exit 1
                fi
                f="$out/${base}_$name.txt"
                {
                    read -r -a o <<<"$opts"
                    echo "# coll=$coll algo=$algo P=$P m=$m extra=${extra// /,} ${o[0]#-}=${o[1]} ${o[2]#-}=${o[3]}" \
                         "${o[4]#-}=${o[5]} ${o[6]#-}=${o[7]} ${o[8]#-}=${o[9]} ${o[10]#-}=${o[11]} |" \
                         "$kc; txt2bin -i case.goal -o case.bin; LogGOPSim -f case.bin $opts"
                    sed -n 's/^Host \([0-9]*\): \([0-9]*\)$/rank \1 \2/p' "$tmp/out"
                } >"$f"
                n=$((n + 1))
            done
        done
    done
done
echo "loggopsim_record.sh: $n files in $out ($skipped refused combinations skipped)"
