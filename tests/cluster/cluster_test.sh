#!/usr/bin/env bash
# One ctest test across real hosts (tests/cluster/tests.cmake, issue 40):
# brings up a cluster of namespaces with scripts/cluster.sh, runs COMMAND,
# takes the cluster down again (also when COMMAND fails or this script is
# interrupted; a run killed harder is cleaned up by the next `up`).
#
# usage: cluster_test.sh --cluster CLUSTER_SH --name NAME --hosts N --slots S
#          --launcher MPIEXEC [--timeout SECONDS] [--local WORD]... -- COMMAND ARGS...
#
# In COMMAND ARGS the word @RUN@ becomes the words that launch across the
# hosts ("bash CLUSTER_SH --name NAME run -p S -t SECONDS MPIEXEC": follow
# it with -n NP and the program) and @LOCAL@ the --local words (the launcher
# and flags of the build's single-machine runs); both are also exported as
# KPORT_CLUSTER_RUN and KPORT_LOCAL_RUN (space-separated words) for scripts.
# Under MPICH, KPORT_CLUSTER_DONE is exported for `cluster.sh run -d`: the
# summary line every kport test program prints last before MPI_Finalize, so
# that MPICH 4.0.2 + UCX 1.13's occasional hang in MPI_Finalize over TCP
# costs a few seconds and is reported, instead of failing the test.
#
# Exit code: COMMAND's; 77 (ctest's SKIP_RETURN_CODE) when not root or when
# this machine cannot create network, UTS, IPC and mount namespaces.
set -uo pipefail

cluster="" name="" hosts="" slots="" launcher="" tmo=120 local_words=()
while [ $# -gt 0 ]; do
    case $1 in
        --cluster) cluster=$2; shift 2 ;;
        --name) name=$2; shift 2 ;;
        --hosts) hosts=$2; shift 2 ;;
        --slots) slots=$2; shift 2 ;;
        --launcher) launcher=$2; shift 2 ;;
        --timeout) tmo=$2; shift 2 ;;
        --local) local_words+=("$2"); shift 2 ;;
        --) shift; break ;;
        *) echo "cluster_test: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$cluster" ] && [ -n "$name" ] && [ -n "$hosts" ] && [ -n "$slots" ] && [ -n "$launcher" ] && [ $# -ge 1 ] || {
    echo "usage: cluster_test.sh --cluster SH --name NAME --hosts N --slots S --launcher MPIEXEC [--timeout T] [--local WORD]... -- COMMAND..." >&2
    exit 2
}

skip() { echo "cluster_test: SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (the hosts are Linux namespaces)"
for t in unshare nsenter ip ping timeout flock; do
    command -v $t >/dev/null 2>&1 || skip "needs $t (scripts/install-deps.sh installs it)"
done
unshare --net --uts --ipc --mount true 2>/dev/null || skip "cannot create network, UTS, IPC and mount namespaces here"

run_words=(bash "$cluster" --name "$name" run -p "$slots" -t "$tmo" "$launcher")
export KPORT_CLUSTER_RUN="${run_words[*]}"
export KPORT_LOCAL_RUN="${local_words[*]}"
case $(basename "$launcher") in
    *mpich*|*hydra*) export KPORT_CLUSTER_DONE='^([a-z_]+: )?[0-9]+ passed, 0 failed$' ;;
esac

down() { bash "$cluster" --name "$name" down >/dev/null 2>&1 || true; }
trap down EXIT
trap 'exit 143' TERM INT HUP
# a fresh cluster every test: down first (a healthy leftover of this name could hold a killed run's processes)
down
bash "$cluster" --name "$name" --owner $$ up "$hosts" || { echo "cluster_test: FAIL: cluster.sh up $hosts" >&2; exit 1; }

cmd=()
for w in "$@"; do
    case $w in
        @RUN@) cmd+=("${run_words[@]}") ;;
        @LOCAL@) cmd+=("${local_words[@]}") ;;
        *) cmd+=("$w") ;;
    esac
done
echo "cluster_test: $hosts hosts, slots $slots: ${cmd[*]}"
start=$SECONDS
"${cmd[@]}"
rc=$?
echo "cluster_test: exit code $rc after $((SECONDS - start)) s"
exit $rc
