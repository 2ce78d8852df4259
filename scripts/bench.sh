#!/usr/bin/env bash
# make bench: run kport-bench at P = 2 with the Open MPI build, then with the
# MPICH build, and print one combined table with ratios to the better native.
#   BENCH_COLLS   collectives to run (default: allgather barrier gather alltoall)
#   BENCH_ARGS    extra kport-bench options (default: none = 1 B .. 1 MiB)
#   BENCH_NP      ranks (default 2; MPICH busy-polls, keep it <= cores)
#   BENCH_OUT     directory for the JSON lines (default build/bench)
set -euo pipefail
cd "$(dirname "$0")/.."
np=${BENCH_NP:-2}
out=${BENCH_OUT:-build/bench}
colls=${BENCH_COLLS:-allgather barrier gather alltoall}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi_run=(mpirun.openmpi -np "$np" --oversubscribe --bind-to none)
mpich_run=(mpiexec.mpich -n "$np")
files=()
for coll in $colls; do
    for mpi in ompi mpich; do
        f="$out/$coll-$mpi-p$np.jsonl"
        if [ "$mpi" = ompi ]; then run=("${ompi_run[@]}"); else run=("${mpich_run[@]}"); fi
        echo "== $coll, $mpi, P=$np: ${run[*]} build/$mpi/kport-bench $coll --format json ${BENCH_ARGS:-}" >&2
        # shellcheck disable=SC2086
        "${run[@]}" "build/$mpi/kport-bench" "$coll" --format json ${BENCH_ARGS:-} > "$f"
        files+=("$f")
    done
done
echo
echo "# kport-bench at P=$np, $(date -u +%Y-%m-%d), $(nproc) cores: median latency (us) per call,"
echo "# each cell 'median (ratio to the better native MPI of the same size)'"
python3 scripts/bench_report.py "${files[@]}"
