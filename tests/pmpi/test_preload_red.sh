#!/usr/bin/env bash
# The drop-in library with an unmodified MPI program (red_app, linked to
# MPI only) calling MPI_Bcast, MPI_Scatter, MPI_Reduce, MPI_Allreduce,
# MPI_Reduce_scatter_block and MPI_Reduce_scatter: it must pass without
# kport; with LD_PRELOAD=libkport-pmpi.so (KPORT_VERBOSE=1 must show kport
# serving all six with an algorithm, and the inter-communicator's calls and
# the user-defined operation on a type with gaps going to PMPI_); with
# emulated nodes (KPORT_NODE_SIZE=2); with KPORT_DISABLE=allreduce,bcast
# (those two to PMPI_, the others to kport); with KPORT_DISABLE=all (nothing
# served by kport).
#
# usage: test_preload_red.sh RED_APP LIBKPORT_PMPI NP MPIEXEC [MPIEXEC_ARGS...]
set -euo pipefail

. "$(dirname "$0")/preload_run.sh"
preload_init test_preload_red "$@"
colls="Bcast Scatter Reduce Allreduce Reduce_scatter_block Reduce_scatter"

# 1. MPI alone
run native KPORT_VERBOSE=1
mustnt native "kport-pmpi:"

# 2. through kport
run kport LD_PRELOAD="$preload" KPORT_VERBOSE=1
for c in $colls; do
    must kport "kport-pmpi: MPI_$c served by kport ("
    grep "kport-pmpi: MPI_$c served by kport (" "$tmp/kport.out" | grep -qv "(0 bytes" \
        || fail "kport: MPI_$c never ran a kport algorithm"
done
if [ "$np" -ge 2 ]; then
    must kport "kport-pmpi: MPI_Allreduce -> PMPI_Allreduce (inter-communicator)"
    must kport "kport-pmpi: MPI_Bcast -> PMPI_Bcast (inter-communicator)"
fi
# a user-defined operation on a type with gaps: kport refuses it before
# communicating, MPI serves it
must kport "kport-pmpi: MPI_Allreduce -> PMPI_Allreduce (KP_ERR_UNSUPPORTED"
grep "^kport-pmpi:" "$tmp/kport.out" | sort | uniq -c

# 3. emulated nodes of 2 ranks
run emulated_nodes LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_NODE_SIZE=2
for c in $colls; do
    must emulated_nodes "kport-pmpi: MPI_$c served by kport ("
done

# 4. two disabled
run disable_two LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_DISABLE=allreduce,MPI_Bcast
for c in Allreduce Bcast; do
    must disable_two "kport-pmpi: MPI_$c -> PMPI_$c (disabled by KPORT_DISABLE)"
    mustnt disable_two "kport-pmpi: MPI_$c served by kport"
done
for c in Scatter Reduce Reduce_scatter_block Reduce_scatter; do
    must disable_two "kport-pmpi: MPI_$c served by kport ("
done

# 5. everything disabled
run disable_all LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_DISABLE=all
mustnt disable_all "served by kport"
for c in $colls; do
    must disable_all "kport-pmpi: MPI_$c -> PMPI_$c (disabled by KPORT_DISABLE)"
done

echo "test_preload_red: PASS"
