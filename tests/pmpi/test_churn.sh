#!/usr/bin/env bash
# Communicator churn through the drop-in library, with an unmodified MPI
# program (churn_app, linked to MPI only): communicators created by dup,
# split (reordered ranks, two colours) and create, one or a few calls of
# every collective on each, freed in another order than created, thousands
# of times. Every int received is checked by the program. Checked here:
#   - it passes without kport and through kport (KPORT_VERBOSE=1 shows
#     kport serving all four collectives);
#   - kport keeps a bounded number of shared segments however many
#     communicators come and go (KPORT_SETUP_STATS=1: "segments allocated"),
#     has none left at MPI_Finalize, and the resident memory does not grow
#     with the number of cycles (sanitizer builds: kport leaks no more than
#     MPI alone, by LeakSanitizer's count);
#   - the cold-communicator policy (KPORT_COLD_CALLS) sends the first calls
#     of a fresh communicator to MPI, and results stay right.
#
# usage: test_churn.sh CHURN_APP LIBKPORT_PMPI NP CYCLES MPIEXEC [MPIEXEC_ARGS...]
set -euo pipefail

if [ $# -lt 5 ]; then
    echo "usage: $0 CHURN_APP LIBKPORT_PMPI NP CYCLES MPIEXEC [MPIEXEC_ARGS...]" >&2
    exit 2
fi
app=$1
lib=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
np=$3
cycles=$4
shift 4
mpiexec=("$@")

fail() { echo "test_churn: FAIL: $*" >&2; exit 1; }
[ -x "$app" ] || fail "no program $app"
[ -f "$lib" ] || fail "no library $lib"
if ldd "$app" | grep -q libkport; then fail "$app must not be linked to kport"; fi

. "$(dirname "$0")/preload.sh"
preload=$(kport_preload "$lib")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-churn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run NAME ARGS -- VAR=value...: app arguments, then the environment
run() {
    local name=$1 args=()
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    echo "test_churn: $name: ${mpiexec[*]} -n $np env $* $app ${args[*]}"
    if ! "${mpiexec[@]}" -n "$np" env "$@" "$app" "${args[@]}" >"$tmp/$name.out" 2>&1; then
        cat "$tmp/$name.out" >&2
        fail "$name: churn_app failed"
    fi
    grep -q "^churn_app: 1 passed, 0 failed" "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; fail "$name: no pass line"; }
    grep "^churn_app:" "$tmp/$name.out"
}
must() { grep -qF -- "$2" "$tmp/$1.out" || { cat "$tmp/$1.out" >&2; fail "$1: expected \"$2\""; }; }
stat_of() { awk -v k="$2" '$0 ~ "kport: +"k" " {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) {print $i; exit}}' "$tmp/$1.out"; }

many=(-n "$cycles" --how all --coll mix -k 2 --hold 3)
# Under the sanitizers resident memory says nothing (ASan's quarantine keeps
# what is freed); LeakSanitizer counts what was never freed instead, and
# MPI leaks a little per communicator itself, so kport's run must leak no
# more than MPI's own run of the same program.
sanitized=
leakenv=()
if ldd "$lib" | grep -q libasan; then
    sanitized=1
    leakenv=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=exitcode=0)
fi
leaked() { awk '/SUMMARY: AddressSanitizer: [0-9]+ byte\(s\) leaked/ {n += $3} END {print n + 0}' "$tmp/$1.out"; }

# 1. MPI alone
run native "${many[@]}" -- "${leakenv[@]}"

# 2. through kport, every communicator served from its first call
run kport "${many[@]}" -- "${leakenv[@]}" LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_SETUP_STATS=1 KPORT_COLD_CALLS=0
for f in MPI_Allgather MPI_Alltoall MPI_Gather MPI_Barrier; do
    must kport "kport-pmpi: $f served by kport"
done
states=$(stat_of kport "communicator states")
segs=$(stat_of kport "segments allocated")
echo "test_churn: $states communicator states, $segs segments allocated"
[ -n "$states" ] && [ "$states" -ge "$cycles" ] || fail "kport: expected at least $cycles communicator states, got '$states'"
# the world, a few rank orders of the full set, the two colours, growth of
# a segment to larger halves: a handful, not one per communicator
[ -n "$segs" ] && [ "$segs" -le 16 ] || fail "kport: $segs segments allocated for $cycles cycles (bound 16)"
must kport "segments live at exit 0"
if [ -n "$sanitized" ]; then
    ln=$(leaked native)
    lk=$(leaked kport)
    echo "test_churn: leaked at exit, all ranks: MPI alone $ln bytes, through kport $lk bytes"
    [ "$lk" -le $((ln + 16384)) ] || fail "kport: $lk bytes leaked against $ln for MPI alone"
else
    # resident memory: measured after warm-up and after the cycles
    rss=$(sed -n 's/^churn_app: growth: .*rss_kb=\([0-9]*\)->\([0-9]*\).*/\1 \2/p' "$tmp/kport.out")
    read -r r0 r1 <<<"$rss"
    [ $((r1 - r0)) -le 4096 ] || fail "kport: resident memory grew by $((r1 - r0)) KiB over $cycles cycles"
fi

# 3. the cold-communicator policy: fresh communicators (rank orders
# rotating, each new one set up once) start on MPI, the world is served by kport at once
run cold -n 200 --how create -k 3 -- LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_COLD_CALLS=2
must cold "cold communicator"
must cold "kport-pmpi: MPI_Barrier served by kport"
echo "test_churn: passed"
