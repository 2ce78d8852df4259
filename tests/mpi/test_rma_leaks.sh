#!/usr/bin/env bash
# The one-sided transport's windows under communicator churn, in a sanitizer
# build: churn_app (an MPI-only program) creates, uses and frees communicators
# (dup, split, create; several held at once, freed out of order), run as is and
# through the drop-in library with every collective forced over transport=rma
# (gather and all-to-all striped over 2 rails), so kport creates windows on
# pooled private duplicates and frees them with the pool. Passes when both runs
# pass their own checks, kport served the calls over rma, and LeakSanitizer
# counts no more bytes leaked through kport than by MPI alone (+16 KiB).
#
# usage: test_rma_leaks.sh CHURN_APP LIBKPORT_PMPI NP CYCLES MPIEXEC [MPIEXEC_ARGS...]
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
fail() { echo "test_rma_leaks: FAIL: $*" >&2; exit 1; }
ldd "$lib" | grep -q libasan || fail "$lib is not a sanitizer build (configure with -DKPORT_SANITIZE=ON)"
. "$(dirname "$0")/../pmpi/preload.sh"
preload=$(kport_preload "$lib")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-rma-leaks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
leakenv=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=exitcode=0)
run() {
    local name=$1
    shift
    if ! "$@" -n "$np" env "${leakenv[@]}" "${envs[@]}" "$app" -n "$cycles" --how all --coll mix -k 2 --hold 3 \
        >"$tmp/$name.out" 2>&1; then
        cat "$tmp/$name.out" >&2
        fail "$name: churn_app failed"
    fi
    grep -q "^churn_app: 1 passed, 0 failed" "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; fail "$name: no pass line"; }
}
leaked() { awk '/SUMMARY: AddressSanitizer: [0-9]+ byte\(s\) leaked/ {n += $3} END {print n + 0}' "$tmp/$1.out"; }
envs=()
run native "$@"
# all-gather and gather over the attach path (dynamic windows, receive buffers attached
# and detached with the communicator), all-to-all over staging
envs=(LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_COLD_CALLS=0 KPORT_ALLGATHER=ring:transport=rma,rma_path=attach
      KPORT_GATHER=binomial:transport=rma,rails=2,stripe_kb=1,rma_path=attach
      KPORT_ALLTOALL=pairwise:transport=rma,rails=2,stripe_kb=1,rma_path=staging
      KPORT_BARRIER=dissemination:transport=rma)
run kport "$@"
for f in MPI_Allgather MPI_Gather MPI_Alltoall MPI_Barrier; do
    grep -q "kport-pmpi: $f served by kport (.*transport=rma" "$tmp/kport.out" ||
        { cat "$tmp/kport.out" >&2; fail "kport: $f not served over transport=rma"; }
done
n=$(grep -c "transport=rma" "$tmp/kport.out" || true)
ln=$(leaked native)
lk=$(leaked kport)
echo "test_rma_leaks: $cycles cycles at P=$np, $n verbose lines naming transport=rma"
echo "test_rma_leaks: leaked at exit, all ranks: MPI alone $ln bytes, through kport over rma $lk bytes"
[ "$lk" -le $((ln + 16384)) ] || { grep -A12 "Direct leak" "$tmp/kport.out" | head -60 >&2; fail "kport over rma: $lk bytes leaked against $ln for MPI alone"; }
echo "test_rma_leaks: passed"
