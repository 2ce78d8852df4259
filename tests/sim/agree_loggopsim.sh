#!/usr/bin/env bash
# Agreement of kport-sim with LogGOPSim (issue 9, item 2): for every recorded
# case in DATADIR (tests/data/loggopsim, written by scripts/loggopsim_record.sh),
# run kport-sim on the same collective, algorithm, P, bytes and -L -o -g -G -O -S
# with --per-rank, and compare every rank's completion time with LogGOPSim's.
# Any difference above 1% (of LogGOPSim's time) fails, with a line naming the
# case, the rank and both times.
#
#   tests/sim/agree_loggopsim.sh KPORT_SIM DATADIR [CASE_GLOB]
#   tests/sim/agree_loggopsim.sh --perturb CASE KPORT_SIM DATADIR
# The second form proves the test can fail: it compares against a copy of
# DATADIR/CASE.txt whose times are 2% larger, and must print FAIL lines.
# --sim-arg ARG (repeatable) passes ARG to every kport-sim run, e.g.
# --loggopsim-zero-bytes, with which every case agrees to the nanosecond.
#
# Exit 0: every rank of every case agrees; 1: some disagreement or a missing
# rank; 2: usage or an unreadable recorded file.
set -uo pipefail
perturb= simargs=()
while [ $# -ge 2 ]; do
    case $1 in
        --perturb) perturb=$2 ;;
        --sim-arg) simargs+=("$2") ;;
        *) break ;;
    esac
    shift 2
done
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -d "$2" ]; then
    echo "usage: agree_loggopsim.sh [--perturb CASE] [--sim-arg ARG]... KPORT_SIM DATADIR [CASE_GLOB]" >&2
    exit 2
fi
sim=$1 dir=$2 glob=${3:-*.txt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$perturb" ]; then
    if [ ! -f "$dir/$perturb.txt" ]; then
        echo "agree_loggopsim.sh: no recorded case $dir/$perturb.txt" >&2
        exit 2
    fi
    mkdir "$tmp/perturbed"
    awk '$1 == "rank" { printf "rank %d %d\n", $2, $3 * 1.02; next } { print }' "$dir/$perturb.txt" \
        >"$tmp/perturbed/$perturb.txt"
    dir=$tmp/perturbed glob=$perturb.txt
fi

cases=0 ranks=0 bad=0 worst=0.000000 worst_case=-
for f in "$dir"/$glob; do
    [ -f "$f" ] || continue
    # header: # coll=.. algo=.. P=.. m=.. extra=.. L=.. o=.. g=.. G=.. O=.. S=.. | commands
    hdr=$(head -1 "$f")
    declare -A h=()
    for kv in ${hdr%%|*}; do
        case $kv in *=*) h[${kv%%=*}]=${kv#*=} ;; esac
    done
    for k in coll algo P m L o g G O S; do
        if [ -z "${h[$k]:-}" ]; then
            echo "agree_loggopsim.sh: $f: header lacks $k=" >&2
            exit 2
        fi
    done
    args=("${h[coll]}" -a "${h[algo]}" -P "${h[P]}")
    [ "${h[coll]}" = barrier ] || args+=(-m "${h[m]}")
    # shellcheck disable=SC2206
    [ -z "${h[extra]:-}" ] || args+=(${h[extra]//,/ })
    args+=(-L "${h[L]}" -o "${h[o]}" -g "${h[g]}" -G "${h[G]}" -O "${h[O]}" -S "${h[S]}" --per-rank -q "${simargs[@]}")
    name=${f##*/}
    name=${name%.txt}
    if ! "$sim" "${args[@]}" >"$tmp/out" 2>"$tmp/err"; then
        echo "FAIL $name: kport-sim ${args[*]} exited with an error: $(head -1 "$tmp/err")"
        bad=$((bad + 1))
        continue
    fi
    cases=$((cases + 1))
    # compare: recorded `rank r t` lines against kport-sim's `rank r t` lines
    awk -v name="$name" -v sum="$tmp/sum" '
        FNR == NR { if ($1 == "rank") { ref[$2] = $3; if ($2 + 0 > maxr) maxr = $2 + 0 } next }
        $1 == "rank" { got[$2] = $3 }
        END {
            bad = 0; n = 0; worst = 0
            for (r = 0; r <= maxr; r++) {
                if (!(r in ref)) continue
                n++
                if (!(r in got)) { printf "FAIL %s rank %d: loggopsim %d ns, kport-sim printed no time\n", name, r, ref[r]; bad++; continue }
                d = got[r] - ref[r]; if (d < 0) d = -d
                rel = ref[r] > 0 ? d / ref[r] : (d > 0 ? 1 : 0)
                if (rel > worst) worst = rel
                if (rel > 0.01) {
                    printf "FAIL %s rank %d: loggopsim %d ns, kport-sim %d ns (%+.3f%%)\n", name, r, ref[r], got[r], 100 * (got[r] - ref[r]) / (ref[r] > 0 ? ref[r] : 1)
                    bad++
                }
            }
            printf "%d %d %.6f\n", n, bad, worst > sum
        }' "$f" "$tmp/out"
    read -r n b w <"$tmp/sum"
    if [ "$n" = 0 ]; then
        echo "agree_loggopsim.sh: $f: no rank lines" >&2
        exit 2
    fi
    ranks=$((ranks + n))
    [ "$b" = 0 ] || bad=$((bad + 1))
    if ((10#${w/./} > 10#${worst/./})); then worst=$w worst_case=$name; fi
    unset h
done
if [ "$cases" = 0 ] && [ "$bad" = 0 ]; then
    echo "agree_loggopsim.sh: no recorded cases in $dir matching $glob" >&2
    exit 2
fi
printf '%d cases (%d ranks) compared, %d disagree; largest difference %.4f%% (%s)\n' \
    "$cases" "$ranks" "$bad" "$(awk -v w="$worst" 'BEGIN { print 100 * w }')" "$worst_case"
[ "$bad" = 0 ]
