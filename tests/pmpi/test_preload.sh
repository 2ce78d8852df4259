#!/usr/bin/env bash
# The drop-in library with an unmodified MPI program (plain_app, linked to
# MPI only): it must pass without kport, with LD_PRELOAD=libkport-pmpi.so
# (and KPORT_VERBOSE=1 must show kport serving all four collectives), the
# same with emulated nodes (KPORT_NODE_SIZE=2), with KPORT_DISABLE=alltoall
# (MPI_Alltoall must go to PMPI_Alltoall, the others still to kport), and
# with KPORT_DISABLE=all (nothing served by kport).
#
# usage: test_preload.sh PLAIN_APP LIBKPORT_PMPI NP MPIEXEC [MPIEXEC_ARGS...]
#   MPIEXEC_ARGS go between MPIEXEC and "-n NP" (e.g. --oversubscribe).
set -euo pipefail

. "$(dirname "$0")/preload_run.sh"
preload_init test_preload "$@"

# 1. MPI alone
run native KPORT_VERBOSE=1
mustnt native "kport-pmpi:"

# 2. through kport
run kport LD_PRELOAD="$preload" KPORT_VERBOSE=1
for c in Allgather Gather Alltoall Barrier; do
    must kport "kport-pmpi: MPI_$c served by kport ("
    # some call moved data through a real algorithm, not only the 0-byte shortcut
    grep "kport-pmpi: MPI_$c served by kport (" "$tmp/kport.out" | grep -qv "(0 bytes" \
        || fail "kport: MPI_$c never ran a kport algorithm"
    must kport "kport-pmpi: MPI_$c -> PMPI_$c (inter-communicator)"
done
grep "^kport-pmpi:" "$tmp/kport.out" | sort | uniq -c

# 3. emulated nodes of 2 ranks: kport's node-aware set-up runs inside the
#    wrapped calls (nested MPI_ collectives must not recurse into kport)
run emulated_nodes LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_NODE_SIZE=2
for c in Allgather Gather Alltoall Barrier; do
    must emulated_nodes "kport-pmpi: MPI_$c served by kport ("
done

# 4. all-to-all disabled
run disable_alltoall LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_DISABLE=alltoall
must disable_alltoall "kport-pmpi: MPI_Alltoall -> PMPI_Alltoall (disabled by KPORT_DISABLE)"
mustnt disable_alltoall "kport-pmpi: MPI_Alltoall served by kport"
for c in Allgather Gather Barrier; do
    must disable_alltoall "kport-pmpi: MPI_$c served by kport ("
done

# 5. everything disabled
run disable_all LD_PRELOAD="$preload" KPORT_VERBOSE=1 KPORT_DISABLE=all
mustnt disable_all "served by kport"
for c in Allgather Gather Alltoall Barrier; do
    must disable_all "kport-pmpi: MPI_$c -> PMPI_$c (disabled by KPORT_DISABLE)"
done

echo "test_preload: PASS"
