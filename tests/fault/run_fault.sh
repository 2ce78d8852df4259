#!/usr/bin/env bash
# One fault at a time: kport's set-up refused by MPI or the OS (issue 35).
# "kport never turns a working program into a failing one."
#
# usage: run_fault.sh FAULT key=value... -- MPIEXEC [MPIEXEC_ARGS...]
#   FAULT  osc_shared  Open MPI with --mca osc pt2pt: MPI_Win_allocate_shared
#                      (kport's node segment, rma windows on one node) refused
#          osc_none    Open MPI with every osc component excluded: every window
#                      (MPI_Win_allocate_shared, _allocate, _create_dynamic) refused
#          small_shm   /dev/shm a tmpfs of shm_size (8M Open MPI, 16M MPICH) in a
#                      private mount namespace (unshare -m, propagation private;
#                      root only): MPI starts and runs, kport's segment for 4 MiB
#                      gather blocks (smp: 2 x 2 x 4 MiB) no longer fits
#          nocma       every rank under nocma (seccomp filter): process_vm_readv and
#                      process_vm_writev fail with EPERM. MPI is configured as on
#                      such a machine, not to use them itself: Open MPI's vader
#                      btl_vader_single_copy_mechanism=none (left at cma, its
#                      point-to-point prints "Read -1, expected N, errno = 1" and
#                      falls back, and its one-sided puts over osc/rdma spin on
#                      "Wrote -1" forever), MPICH UCX_TLS=self,posix (left at the
#                      default, and even with UCX_TLS=^cma, MPICH 4.0.2 with no
#                      kport in the process hangs in MPI_Finalize in about one
#                      run of five, and a native 1 MiB MPI_Put hangs in
#                      MPI_Win_free)
#   keys   nocma= fault_app= fault_kp= plain_app= pmpi= test_allgather= test_coll=
#          (paths), flavor=openmpi|mpich, np= (default 2), shm_size=,
#          mode=full (default) | leaks (sanitizer build: a few runs with
#          LeakSanitizer on, leaks through kport compared with MPI alone's)
#   MPIEXEC_ARGS go between MPIEXEC and "-n NP" (e.g. --oversubscribe).
#
# Steps (mode full), each one launch at P=2 under timeout (45 s; after two
# launches that timed out the rest are not run, failed), every byte checked
# by the program it runs (fault_app/fault_kp sizes 8 B-1 MiB per block, and
# 4 MiB under small_shm):
#   native_*     fault_app and plain_app without kport: the fault leaves MPI working
#   api_auto     fault_kp, kport's API, automatic choice, KPORT_VERBOSE=1, on the
#                world and two duplicates: every call succeeds, none runs what the
#                fault refuses (--forbid); for osc_* and small_shm KPORT_VERBOSE says
#                what was refused, at most once per communicator (1-3 lines)
#   ta, tg, tt   test_allgather / test_coll gather / alltoall (every case of
#                tests/mpi/cases.h, 8 back-to-back calls): auto passes, algorithms
#                the fault refuses are refused cleanly ("refused at P=2
#                (expected)": KP_ERR_UNSUPPORTED on every rank), the others pass.
#                Not test_coll barrier under osc_*: it checks its barriers through
#                a shared window of its own, which the fault refuses
#   forced_error the fault's algorithms forced (KPORT_<COLL>=...) with the default
#                KPORT_FALLBACK=error: kp_* returns KP_ERR_UNSUPPORTED (small_shm:
#                at 4 MiB, not at 4 KiB), receive buffer untouched, no abort
#   forced_warn  the same with KPORT_FALLBACK=warn: every call succeeds, warned
#   rma_warn     every collective forced over transport=rma, KPORT_FALLBACK=warn:
#                every call succeeds (small_shm, nocma: over rma)
#   rma_error    (osc_*) the same with KPORT_FALLBACK=error: osc_none refuses every
#                call, osc_shared runs over plain windows or refuses
#   pmpi_*       the drop-in (LD_PRELOAD of libkport-pmpi.so): plain_app (the same
#                pass count as natively, all four collectives served by kport),
#                fault_app, fault_app with the fault's algorithms forced (kport
#                refuses, PMPI_ runs), plain_app with rma forced under
#                KPORT_FALLBACK=warn
# osc_shared skips tt, forced_warn, pmpi_fault_app and pmpi_rma_warn (osc_none
# covers them, with every window refused) to stay within the CI budget.
# Mode leaks (osc_shared in the sanitizer build): native_fault_app, api_auto,
# forced_error, pmpi_fault_app with LeakSanitizer on; each kport run may leak
# at most 16 KiB more than MPI alone.
# Every step runs even when an earlier one failed; each failure is listed.
set -uo pipefail

SKIP=77
orig=("$@")
fault=${1:-}
[ -n "$fault" ] && shift
declare -A a=([np]=2 [mode]=full [flavor]=openmpi [shm_size]=)
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
    *=*) a[${1%%=*}]=${1#*=} ;;
    *) echo "run_fault: bad argument \"$1\"" >&2; exit 2 ;;
    esac
    shift
done
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { echo "usage: $0 FAULT key=value... -- MPIEXEC [MPIEXEC_ARGS...]" >&2; exit 2; }
mpiexec=("$@")
np=${a[np]}
flavor=${a[flavor]}
mode=${a[mode]}
say() { echo "run_fault[$fault]: $*"; }
skip() { say "SKIP: $*"; exit $SKIP; }

# ---- the fault ---------------------------------------------------------------
mpi_extra=() # MPI's own options for this fault (Open MPI: --mca ...)
wrap=()      # run every rank under this
case $fault in
osc_shared | osc_none)
    [ "$flavor" = openmpi ] || skip "$fault is an Open MPI fault"
    info=$(command -v ompi_info || true)
    [ -n "$info" ] || skip "no ompi_info"
    oscs=$("$info" --parsable 2>/dev/null | sed -n 's/^mca:osc:\([a-z0-9_]*\):version:mca:.*/\1/p' | sort -u | paste -sd, -)
    [ -n "$oscs" ] || oscs=$("$info" 2>/dev/null | sed -n 's/^ *MCA osc: \([a-z0-9_]*\) .*/\1/p' | paste -sd, -)
    case ",$oscs," in *,pt2pt,*) ;; *) skip "Open MPI has no osc pt2pt component (has: $oscs)" ;; esac
    if [ "$fault" = osc_shared ]; then
        mpi_extra=(--mca osc pt2pt)
    else
        mpi_extra=(--mca osc "^$oscs")
    fi
    ;;
small_shm)
    size=${a[shm_size]}
    [ -n "$size" ] || { [ "$flavor" = mpich ] && size=16M || size=8M; }
    if [ -z "${KPORT_FAULT_NS:-}" ]; then
        [ "$(id -u)" = 0 ] || skip "needs root (a tmpfs mounted over /dev/shm in a private mount namespace)"
        command -v unshare >/dev/null || skip "no unshare(1)"
        unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace (unshare -m)"
        # the rest runs in a private mount namespace: /dev/shm is replaced there only
        export KPORT_FAULT_NS=1
        exec unshare -m --propagation private bash "$0" "${orig[@]}"
    fi
    mount -t tmpfs -o "size=$size,mode=1777" kport-fault-shm /dev/shm || skip "cannot mount a tmpfs over /dev/shm"
    [ "$(findmnt -n -o SOURCE --mountpoint /dev/shm 2>/dev/null | tail -n 1)" = kport-fault-shm ] || skip "/dev/shm is not the private tmpfs"
    say "/dev/shm in this mount namespace: $(df -k --output=size,avail /dev/shm | tail -1 | awk '{print $1 " KiB, " $2 " KiB free"}')"
    ;;
nocma)
    [ -x "${a[nocma]:-}" ] || { echo "run_fault: no nocma program" >&2; exit 2; }
    chk=$("${a[nocma]}" --check 2>&1) || skip "$chk"
    say "$chk"
    wrap=("${a[nocma]}")
    if [ "$flavor" = openmpi ]; then
        mpi_extra=(--mca btl_vader_single_copy_mechanism none)
    else
        mpi_extra=(-genv UCX_TLS self,posix)
    fi
    ;;
*)
    echo "run_fault: unknown fault \"$fault\" (osc_shared, osc_none, small_shm, nocma)" >&2
    exit 2
    ;;
esac

for k in fault_app fault_kp plain_app pmpi test_allgather test_coll; do
    [ -e "${a[$k]:-}" ] || { echo "run_fault: no $k (${a[$k]:-unset})" >&2; exit 2; }
done
lib=$(cd "$(dirname "${a[pmpi]}")" && pwd)/$(basename "${a[pmpi]}")
. "$(dirname "$0")/../pmpi/preload.sh"
preload=$(kport_preload "$lib")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-fault.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=()
t_start=$SECONDS

# run NAME PROGRAM ARGS...: one launch with the variables of envs[] on every rank.
# After two launches that timed out, the rest are not run (failed), so that a
# hanging fault cannot take the whole ctest timeout.
envs=()
timeouts=0
run() {
    local name=$1 t0=$SECONDS rc
    shift
    if [ $timeouts -ge 2 ]; then
        echo "(not run: two launches timed out before)" >"$tmp/$name.out"
        echo 125 >"$tmp/$name.rc"
        say "$name: not run (two launches timed out before)"
        return 0
    fi
    timeout -k 5 45 "${mpiexec[@]}" "${mpi_extra[@]}" -n "$np" "${wrap[@]}" env "${envs[@]}" "$@" \
        >"$tmp/$name.out" 2>&1
    rc=$?
    echo "$rc" >"$tmp/$name.rc"
    say "$name: exit $rc, $((SECONDS - t0)) s: ${wrap[*]} env ${envs[*]} $(basename "$1") ${*:2}"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "(timed out)" >>"$tmp/$name.out"
        timeouts=$((timeouts + 1))
    fi
    return 0
}
# a failed check: recorded for the summary, the step's output shown once
declare -A shown=()
bad() {
    local name=$1
    shift
    failures+=("$name: $*")
    say "FAIL $name: $*"
    if [ -z "${shown[$name]:-}" ]; then
        shown[$name]=1
        grep -avE "^(\[[^]]*\] (Read|Wrote) -1|    [a-zA-Z0-9_ ,()=-]+ +-> [0-9])" "$tmp/$name.out" | tail -n 25 | sed 's/^/    | /'
    fi
}
rc_is() { [ "$(cat "$tmp/$1.rc")" = "$2" ] || bad "$1" "exit code $(cat "$tmp/$1.rc"), expected $2"; }
must() { grep -aqE -- "$2" "$tmp/$1.out" || bad "$1" "no line matching \"$2\""; }
mustnt() { if grep -aqE -- "$2" "$tmp/$1.out"; then bad "$1" "unexpected \"$(grep -am1 -E -- "$2" "$tmp/$1.out")\""; fi; }
# an MPI abort or a crash: never acceptable; the first line that says which call
aborted() {
    grep -aqE "MPI_ERRORS_ARE_FATAL|MPI_ABORT was invoked|BAD TERMINATION|Bus error|Segmentation fault|ERROR: AddressSanitizer|runtime error:|kport-pmpi: .*MPI_Abort|\(timed out\)|^\(not run:" "$tmp/$1.out"
}
why_abort() {
    grep -aE -m2 "An error occurred in|MPI_ERR_|Bus error|Segmentation|AddressSanitizer|runtime error|MPI_Abort|timed out|Caught signal|ORTE_ERROR_LOG|not run:" "$tmp/$1.out" |
        sed 's/^\[[^]]*\] *//' | paste -sd' ' -
}
ok_run() { # NAME PASS_REGEX: exit 0, the pass line, no abort (one failure line if not)
    local rc why
    rc=$(cat "$tmp/$1.rc")
    if aborted "$1" || [ "$rc" != 0 ]; then
        why=$(why_abort "$1")
        bad "$1" "exit $rc${why:+, aborted: $why}"
        return 1
    fi
    must "$1" "$2"
}
ran() { ! aborted "$1" && [ "$(cat "$tmp/$1.rc")" = 0 ]; } # further checks only on a clean run
# the lines KPORT_VERBOSE=1 gives about what could not be set up (rank 0 only)
refusal_re="^kport: .*(fail|refus|cannot|could not|not available|unavailable|not permitted|no shared-memory|instead)"
# (not the lines that announce what a plan runs, which say why: "... instead")
announce_re="^kport: (allgather|gather|alltoall|barrier) runs "
refusal_lines() { grep -aE "$refusal_re" "$tmp/$1.out" | grep -avE "$announce_re"; }
show_refusals() {
    refusal_lines "$1" | sort | uniq -c | sed 's/^/    /' | head -n 20
}
# said, and said once per communicator set up, not per call: 1..MAX lines
refusals_said() {
    local n
    n=$(refusal_lines "$1" | wc -l)
    [ "$n" -ge 1 ] || { bad "$1" "KPORT_VERBOSE=1 printed no line about the refused set-up (/$refusal_re/)"; return; }
    [ "$n" -le "$2" ] || bad "$1" "KPORT_VERBOSE=1 printed $n lines about the refused set-up, more than once per communicator ($2)"
}

sizes=8,4096,65536,1m # 1 MiB: above shm_flat's whole-block limit (512 KiB), pipelined
case $fault in
osc_shared | osc_none)
    # everything that needs the node's segment, and single copy (its addresses travel in the segment)
    # (osc_shared, a subset of osc_none for the segment, skips a few steps to save time: see below)
    forbid=(--forbid shm_ --forbid smp)
    ag_specs=auto,shm_flat,shm_single_copy,smp_bruck,ring:transport=rma,bruck:k=2,transport=rma
    ga_specs=auto,smp,shm_single_copy,binomial:transport=rma
    aa_specs=auto,shm_flat,shm_single_copy,pairwise:transport=rma
    ba_specs=auto,shm_flat,smp,dissemination:transport=rma
    refused_specs=(ta:shm_flat ta:shm_single_copy ta:smp_bruck tg:smp tg:shm_single_copy tt:shm_flat tt:shm_single_copy tb:shm_flat tb:smp)
    forced=(KPORT_ALLGATHER=shm_flat KPORT_GATHER=smp KPORT_ALLTOALL=shm_flat KPORT_BARRIER=shm_flat)
    forced_sizes=$sizes
    forced_colls=allgather,gather,alltoall,barrier
    forced_expect=refused
    # (not test_coll barrier: it checks its barriers through an MPI_Win_allocate_shared
    # window of its own, which this fault refuses; plain_app's barrier runs below)
    progs="ta tg tt"
    [ "$fault" = osc_shared ] && progs="ta tg"
    ;;
small_shm)
    forbid=()
    ag_specs=auto,shm_flat,smp_bruck
    ga_specs=auto,smp
    aa_specs=auto,shm_flat
    ba_specs=auto,shm_flat
    refused_specs=()
    # smp gather: a segment of 2 x (2 ranks x 4 MiB): fits at 4 KiB, not at 4 MiB
    forced=(KPORT_GATHER=smp)
    forced_sizes=4096,4m
    forced_colls=gather
    forced_expect=either
    progs="ta tg"
    sizes=8,65536,1m,4m # 4 MiB gather blocks: smp's segment (16 MiB) does not fit
    ;;
nocma)
    forbid=(--forbid shm_single_copy)
    ag_specs=auto,shm_flat,shm_single_copy
    ga_specs=auto,smp,shm_single_copy
    aa_specs=auto,shm_flat,shm_single_copy
    ba_specs=auto,shm_flat
    refused_specs=(ta:shm_single_copy tg:shm_single_copy tt:shm_single_copy)
    forced=(KPORT_ALLGATHER=shm_single_copy KPORT_GATHER=shm_single_copy KPORT_ALLTOALL=shm_single_copy)
    forced_sizes=$sizes
    forced_colls=allgather,gather,alltoall
    forced_expect=refused
    progs="ta tg tt"
    ;;
esac
rma=(KPORT_ALLGATHER=ring:transport=rma KPORT_GATHER=binomial:transport=rma
     KPORT_ALLTOALL=pairwise:transport=rma,rails=2,stripe_kb=64 KPORT_BARRIER=dissemination:transport=rma)
fa_pass="^fault_app: [1-9][0-9]* passed, 0 failed, 0 refused"
fk_pass="^fault_kp: [1-9][0-9]* passed, 0 failed, 0 refused"
pa_pass="^plain_app: [1-9][0-9]* passed, 0 failed"
t_pass="^[1-9][0-9]* passed, 0 failed"

if [ "$mode" = leaks ]; then
    # ---- sanitizer build: one refusal path, leaks counted ----------------------
    case "$(ldd "$lib")" in *libasan*) ;; *) echo "run_fault: mode=leaks needs a sanitizer build" >&2; exit 2 ;; esac
    leakenv=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=exitcode=0)
    leaked() { awk '/SUMMARY: AddressSanitizer: [0-9]+ byte\(s\) leaked/ {n += $3} END {print n + 0}' "$tmp/$1.out"; }
    lsizes=8,4096,65536,1m
    envs=("${leakenv[@]}")
    run native_fault_app "${a[fault_app]}" -s $lsizes -r 1
    ok_run native_fault_app "$fa_pass"
    envs=("${leakenv[@]}" KPORT_VERBOSE=1)
    run api_auto "${a[fault_kp]}" -s $lsizes -r 1 "${forbid[@]}"
    ok_run api_auto "$fk_pass"
    envs=("${leakenv[@]}" "${forced[@]}")
    run forced_error "${a[fault_kp]}" -s $lsizes -r 1 -c "$forced_colls" --expect "$forced_expect"
    ok_run forced_error "^fault_kp: [0-9]+ passed, 0 failed, [1-9][0-9]* refused"
    envs=("${leakenv[@]}" LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_COLD_CALLS=0)
    run pmpi_fault_app "${a[fault_app]}" -s $lsizes -r 1
    ok_run pmpi_fault_app "$fa_pass"
    ln=$(leaked native_fault_app)
    for s in api_auto forced_error pmpi_fault_app; do
        lk=$(leaked $s)
        say "$s: LeakSanitizer counts $lk bytes leaked (all ranks); MPI alone (native_fault_app) $ln"
        [ "$lk" -le $((ln + 16384)) ] || bad $s "$lk bytes leaked against $ln for MPI alone"
    done
    show_refusals api_auto
else
    # ---- 1. MPI alone under the fault ---------------------------------------------
    envs=()
    run native_fault_app "${a[fault_app]}" -s $sizes -r 1
    ok_run native_fault_app "$fa_pass"
    run native_plain_app "${a[plain_app]}"
    ok_run native_plain_app "$pa_pass"
    native_count=$(sed -n 's/^plain_app: \([0-9]*\) passed, 0 failed.*/\1/p' "$tmp/native_plain_app.out")

    # ---- 2. kport's API: automatic choice ---------------------------------------------
    envs=(KPORT_VERBOSE=1)
    run api_auto "${a[fault_kp]}" -s $sizes -r 2 "${forbid[@]}"
    ok_run api_auto "$fk_pass"
    say "api_auto: what KPORT_VERBOSE=1 said about the set-up:"
    show_refusals api_auto
    # three communicators set up: the world and two duplicates (the second pooled)
    case $fault in osc_* | small_shm) ran api_auto && refusals_said api_auto 3 ;; esac

    # ---- 3. the MPI test programs --------------------------------------------------
    envs=()
    for p in $progs; do
        case $p in
        ta) run ta "${a[test_allgather]}" -a "$ag_specs" -n 8 ;;
        tg) run tg "${a[test_coll]}" gather -a "$ga_specs" -n 8 ;;
        tt) run tt "${a[test_coll]}" alltoall -a "$aa_specs" -n 8 ;;
        tb) run tb "${a[test_coll]}" barrier -a "$ba_specs" -n 50 ;;
        esac
        ok_run $p "$t_pass" && must $p "^  auto +ok: [1-9][0-9]* checks passed, 0 failed"
    done
    for rs in "${refused_specs[@]}"; do
        case " $progs " in *" ${rs%%:*} "*) ;; *) continue ;; esac
        ran "${rs%%:*}" || continue
        must "${rs%%:*}" "^  ${rs#*:} +(ok: )?refused at P=$np \(expected\)"
    done

    # ---- 4. forced algorithms the fault refuses; forced rma -------------------------
    envs=("${forced[@]}")
    run forced_error "${a[fault_kp]}" -s "$forced_sizes" -r 1 -c "$forced_colls" --expect "$forced_expect" -v
    ok_run forced_error "^fault_kp: [0-9]+ passed, 0 failed, [1-9][0-9]* refused" &&
        if [ "$fault" = nocma ]; then must forced_error "refused: .*cross-memory attach"; fi
    if [ "$fault" != osc_shared ]; then
    envs=("${forced[@]}" KPORT_FALLBACK=warn)
    run forced_warn "${a[fault_kp]}" -s "$forced_sizes" -r 1 -c "$forced_colls" "${forbid[@]}"
    ok_run forced_warn "$fk_pass" && must forced_warn "^kport: warning: .*cannot apply"
    fi
    envs=("${rma[@]}" KPORT_FALLBACK=warn)
    run rma_warn "${a[fault_kp]}" -s $sizes -r 1 -v
    ok_run rma_warn "$fk_pass"
    case $fault in
    osc_none) # no window at all: every forced rma call refused, KP_ERR_UNSUPPORTED
        envs=("${rma[@]}")
        run rma_error "${a[fault_kp]}" -s 8,65536,1m -r 1 --expect refused
        ok_run rma_error "^fault_kp: 0 passed, 0 failed, [1-9][0-9]* refused"
        ;;
    osc_shared) # MPI_Win_allocate remains: over rma, or refused as a whole
        envs=("${rma[@]}")
        run rma_error "${a[fault_kp]}" -s 8,65536,1m -r 1 --expect either
        ok_run rma_error "^fault_kp: [0-9]+ passed, 0 failed, [0-9]+ refused"
        ;;
    *) # windows are not what this fault refuses: the calls ran over rma
        ran rma_warn && must rma_warn "^fault_kp: .* rc 0 ran .*transport=rma"
        ;;
    esac

    # ---- 5. the drop-in: unmodified programs ----------------------------------------
    envs=(LD_PRELOAD="$preload" KPORT_VERBOSE=1)
    run pmpi_plain_app "${a[plain_app]}"
    ok_run pmpi_plain_app "^plain_app: $native_count passed, 0 failed" && for c in Allgather Gather Alltoall Barrier; do
        must pmpi_plain_app "kport-pmpi: MPI_$c served by kport \("
    done
    if [ "$fault" != osc_shared ]; then
    envs=(LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_COLD_CALLS=0)
    run pmpi_fault_app "${a[fault_app]}" -s $sizes -r 1
    ok_run pmpi_fault_app "$fa_pass" && for c in Allgather Gather Alltoall Barrier; do
        must pmpi_fault_app "kport-pmpi: MPI_$c served by kport \("
    done
    fi
    envs=(LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_COLD_CALLS=0 "${forced[@]}")
    run pmpi_forced_error "${a[fault_app]}" -s "$forced_sizes" -r 1 -c "$forced_colls"
    ok_run pmpi_forced_error "$fa_pass" && must pmpi_forced_error "kport-pmpi: MPI_[A-Za-z]+ -> PMPI_[A-Za-z]+ \("
    if [ "$fault" != osc_shared ]; then
    envs=(LD_PRELOAD="$preload" KPORT_VERBOSE=1 "${rma[@]}" KPORT_FALLBACK=warn)
    run pmpi_rma_warn "${a[plain_app]}"
    ok_run pmpi_rma_warn "^plain_app: $native_count passed, 0 failed"
    fi
fi

say "$((SECONDS - t_start)) s in all"
if [ ${#failures[@]} -gt 0 ]; then
    say "${#failures[@]} checks failed (above)"
    exit 1
fi
say "PASS"
