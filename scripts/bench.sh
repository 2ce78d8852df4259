#!/usr/bin/env bash
# make bench: run kport-bench at P = 2 with the Open MPI build, then with the
# MPICH build, and print one combined table with ratios to the better native;
# then the same collectives back to back (kport-bench --b2b) for native,
# kport's default and the memcpy reference, and the two pictures side by side.
#   BENCH_COLLS       collectives to run (default: allgather barrier gather alltoall)
#   BENCH_ARGS        extra kport-bench options (default: none = 1 B .. 1 MiB)
#   BENCH_B2B         calls per back-to-back batch (default 8; 0: isolated calls only)
#   BENCH_B2B_ALGS    algorithms of the back-to-back runs (default native,auto,memcpy;
#                     ignored when BENCH_ARGS has -a)
#   BENCH_NP          ranks (default 2; MPICH busy-polls, keep it <= cores)
#   BENCH_MPIS        builds to run (default: ompi mpich)
#   BENCH_BUILD_OMPI  Open MPI build directory (default build/ompi)
#   BENCH_BUILD_MPICH MPICH build directory (default build/mpich)
#   BENCH_OUT         directory for the JSON lines (default build/bench)
set -euo pipefail
cd "$(dirname "$0")/.."
np=${BENCH_NP:-2}
out=${BENCH_OUT:-build/bench}
colls=${BENCH_COLLS:-allgather barrier gather alltoall}
b2b=${BENCH_B2B:-8}
b2b_algs=${BENCH_B2B_ALGS:-native,auto,memcpy}
mpis=${BENCH_MPIS:-ompi mpich}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi_run=(mpirun.openmpi -np "$np" --oversubscribe --bind-to none)
mpich_run=(mpiexec.mpich -n "$np")
files=()
for coll in $colls; do
    for mpi in $mpis; do
        if [ "$mpi" = ompi ]; then
            run=("${ompi_run[@]}") bin=${BENCH_BUILD_OMPI:-build/ompi}/kport-bench
        else
            run=("${mpich_run[@]}") bin=${BENCH_BUILD_MPICH:-build/mpich}/kport-bench
        fi
        f="$out/$coll-$mpi-p$np.jsonl"
        echo "== $coll, $mpi, P=$np: ${run[*]} $bin $coll --format json ${BENCH_ARGS:-}" >&2
        # shellcheck disable=SC2086
        "${run[@]}" "$bin" "$coll" --format json ${BENCH_ARGS:-} > "$f"
        files+=("$f")
        if [ "$b2b" != 0 ]; then
            f="$out/$coll-$mpi-p$np-b2b$b2b.jsonl"
            algs=$b2b_algs
            [ "$coll" = barrier ] && algs=${algs//,memcpy/} # nothing to copy
            alist=(-a "$algs")
            case " ${BENCH_ARGS:-} " in *" -a"*) alist=() ;; esac # BENCH_ARGS chose the algorithms
            echo "== $coll, $mpi, P=$np: ${run[*]} $bin $coll --b2b $b2b ${alist[*]} --format json ${BENCH_ARGS:-}" >&2
            # shellcheck disable=SC2086
            "${run[@]}" "$bin" "$coll" --b2b "$b2b" "${alist[@]}" --format json ${BENCH_ARGS:-} > "$f"
            files+=("$f")
        fi
    done
done
echo
echo "# kport-bench at P=$np, $(date -u +%Y-%m-%d), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo "# median latency (us) per call, each cell 'median (ratio to the better native MPI of the same size)'"
python3 scripts/bench_report.py "${files[@]}"
