#!/usr/bin/env bash
# scripts/cluster.sh - a real cluster on one machine (issue 40).
#
# Each host is a set of Linux namespaces (network, UTS for its own hostname,
# IPC, mount) owned by one long-lived process; the hosts are joined by veth
# pairs to a bridge that lives in a namespace of its own, on a private /24
# that exists only inside those namespaces. MPI launches into the hosts
# through a generated rsh agent (nsenter into the host, then `sh -c "$*"`
# as sshd would) instead of ssh, so MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
# gives one communicator per host and messages between hosts go over TCP.
# Nothing is created in the machine's own network namespace, nothing is
# mounted outside the hosts' private mount namespaces, /etc is never written
# (each host sees its own /etc/hosts and /etc/nsswitch.conf by a bind mount
# inside its mount namespace). Root only.
#
# usage: cluster.sh [--name NAME] COMMAND ...
#   up N              create hosts <prefix>h0 .. h(N-1) (prefix "kp-" for the
#                     default cluster, "NAME-" otherwise); idempotent: an
#                     existing healthy cluster of N hosts is kept, anything
#                     else of this name (a killed run's leftovers) is removed
#                     first, as are the leftovers of clusters whose owner
#                     (--owner PID) has died
#   down              stop every process inside the hosts, remove everything
#   status            hosts, addresses, holder processes; exit 1 when not up
#   exec HOST CMD...  run CMD inside host HOST (0, 1, ... or its name), as ssh
#   agent             print the path of the generated rsh agent
#   options [-p SLOTS] [--mpi openmpi|mpich]
#                     print the launcher options `run` adds (one per line)
#   run [-p SLOTS] [-t SECONDS] [-d REGEX [-g SECONDS]] [--mpi openmpi|mpich]
#       [--] LAUNCHER ARGS...
#                     run an mpirun / mpiexec command from host 0 across the
#                     hosts: the options for its MPI go right after LAUNCHER.
#                     SLOTS: ranks per host, one number for every host
#                     ("2", default 1) or one per host ("1,2,2": the first 3
#                     hosts); ranks fill the hosts in order (block). The MPI
#                     is known from LAUNCHER's name (*openmpi*, orterun,
#                     mpirun: Open MPI; *mpich*, *hydra*: MPICH) unless
#                     --mpi says. The command is given -t seconds (default
#                     600; then it and every process it started, on every
#                     host, are killed, exit code 124; `timeout` is the
#                     backstop) and its exit code is returned. -d REGEX: once
#                     a line of its output matches REGEX (the program's last
#                     words before MPI_Finalize), it has -g seconds (default 5)
#                     to end; if it does not, it is killed and counted as a
#                     success, with a note (MPICH's finalize hang, below);
#                     KPORT_CLUSTER_DONE=REGEX is the default of -d.
#   subnet            print the subnet `up` would use (or uses)
# Options: --name NAME (or KPORT_CLUSTER=NAME; default "kp"), --owner PID
# (with up: the cluster is removed by the next `up` of any cluster once PID
# has died, e.g. a test killed by its timeout).
# Environment: KPORT_CLUSTER_SUBNET=a.b.c.0/24 forces the subnet (else the
# first of SUBNETS below that collides with no address or route of the
# machine); KPORT_CLUSTER_DIR (default /run/kport-cluster) holds the state.
#
# Open MPI (run): --host h0:S,h1:S,... --mca plm_rsh_agent AGENT
#   --mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include SUBNET
#   --mca btl_tcp_if_include SUBNET --mca btl tcp,self,vader, and
#   --mca mpi_yield_when_idle 1 when the ranks outnumber the machine's cores
#   (each host declares its slots, so Open MPI would busy-poll: ~8 ms a call).
#   Open MPI's default one-sided components make no window over TCP; add
#   --mca osc sm,pt2pt to ARGS for MPI_Win_allocate across hosts.
# MPICH (run): -launcher rsh -launcher-exec AGENT -hosts h0:S,h1:S,...
#   -iface kp0, and UCX_NET_DEVICES=kp0 (UCX sees every host's own interface:
#   /sys is remounted in each host; each host's IPC namespace keeps UCX from
#   taking the hosts for one machine). MPICH 4.0.2 + UCX 1.13 over TCP can
#   hang in MPI_Finalize (an upstream bug): run such commands under a short -t.
set -euo pipefail

SUBNETS="10.240.40.0/24 172.31.240.0/24 192.168.240.0/24"
ROOT=${KPORT_CLUSTER_DIR:-/run/kport-cluster}
NAME=${KPORT_CLUSTER:-kp}
OWNER=""
IFACE=kp0 # every host's interface on the subnet

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { echo "cluster.sh: $*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
        --name) NAME=$2; shift 2 ;;
        --name=*) NAME=${1#--name=}; shift ;;
        --owner) OWNER=$2; shift 2 ;;
        --owner=*) OWNER=${1#--owner=}; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || die "usage: cluster.sh [--name NAME] up N | down | status | exec HOST CMD... | run [-p SLOTS] LAUNCHER ARGS... (--help)"
[[ $NAME =~ ^[a-z][a-z0-9]{0,15}$ ]] || die "bad cluster name \"$NAME\" (a lower-case letter, then up to 15 letters or digits)"
CMD=$1
shift
DIR=$ROOT/$NAME
PREFIX=$NAME-
hostname_of() { echo "${PREFIX}h$1"; }

need_root() {
    [ "$(id -u)" -eq 0 ] || die "needs root (network, UTS, IPC and mount namespaces)"
    local t
    for t in unshare nsenter ip flock timeout; do
        command -v $t >/dev/null 2>&1 || die "needs $t (util-linux, iproute2, coreutils)"
    done
}

# ---- the subnet -----------------------------------------------------------------
ip2int() { local IFS=.; set -- $1; echo $(( ($1 << 24) | ($2 << 16) | ($3 << 8) | $4 )); }
# overlap A/a B/b: do the two prefixes share an address?
overlaps() {
    local a=${1%/*} al=${1#*/} b=${2%/*} bl=${2#*/} l m
    [ "$al" = "$1" ] && al=32
    [ "$bl" = "$2" ] && bl=32
    l=$(( al < bl ? al : bl ))
    m=$(( l == 0 ? 0 : (0xffffffff << (32 - l)) & 0xffffffff ))
    [ $(( $(ip2int "$a") & m )) -eq $(( $(ip2int "$b") & m )) ]
}
# every IPv4 prefix the machine's own network namespace has (addresses and
# routes of every table; read only)
machine_prefixes() {
    ip -o -4 addr show 2>/dev/null | awk '{print $4}'
    ip -4 route show table all 2>/dev/null | awk '{ d = $1; if (d == "local" || d == "broadcast" || d == "unicast" || d == "multicast") d = $2; if (d != "default") print d }'
}
pick_subnet() {
    local cands=${KPORT_CLUSTER_SUBNET:-$SUBNETS} s p bad
    local mine
    mine=$(machine_prefixes)
    for s in $cands; do
        [[ $s =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.0/24$ ]] || die "bad subnet \"$s\" (a.b.c.0/24)"
        bad=""
        for p in $mine; do
            [[ $p =~ ^[0-9.]+(/[0-9]+)?$ ]] || continue
            if overlaps "$s" "$p"; then bad=$p; break; fi
        done
        if [ -z "$bad" ]; then echo "$s"; return 0; fi
        say "subnet $s collides with the machine's $bad"
    done
    die "no free subnet among: $cands (set KPORT_CLUSTER_SUBNET=a.b.c.0/24)"
}
addr_of() { local s=${SUBNET%.0/24}; echo "$s.$(( $1 + 1 ))"; }

# ---- holder processes -----------------------------------------------------------
# state file $DIR/pids: "role pid starttime netns-inode" per holder
starttime() { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null; }
alive() { [ -n "$2" ] && [ "$(starttime "$1")" = "$2" ]; }
netns_of() { readlink "/proc/$1/ns/net" 2>/dev/null | sed 's/^net:\[\(.*\)\]$/\1/'; }

# kill every process whose network namespace is one of the given inodes
kill_netns() {
    [ $# -gt 0 ] || return 0
    local sig pass p n i victims
    for pass in 1 2 3 4 5 6 7 8 9 10 11; do
        victims=()
        for p in /proc/[0-9]*; do
            p=${p#/proc/}
            [ "$p" = "$$" ] && continue
            n=$(netns_of "$p") || continue
            [ -n "$n" ] || continue
            for i in "$@"; do
                if [ "$n" = "$i" ]; then victims+=("$p"); break; fi
            done
        done
        [ ${#victims[@]} -gt 0 ] || return 0
        sig=TERM
        [ $pass -gt 5 ] && sig=KILL
        kill -s $sig "${victims[@]}" 2>/dev/null || true
        sleep 0.2
    done
    say "processes left in the hosts' namespaces: ${victims[*]}"
}

# remove cluster state directory $1 and everything its holders own
teardown() {
    local d=$1 role pid st ns inodes=()
    if [ -f "$d/pids" ]; then
        while read -r role pid st ns; do
            [ -n "$ns" ] && inodes+=("$ns")
            # the inode alone could in theory be reused after the namespace died:
            # trust it only while a holder (same pid and start time) or another
            # process of ours still has it; kill_netns only looks at live ones
            : "$role" "$pid" "$st"
        done <"$d/pids"
    fi
    if [ ${#inodes[@]} -gt 0 ]; then kill_netns "${inodes[@]}"; fi
    rm -rf "$d"
}

# the leftovers of clusters whose owner has died (a test killed by its timeout)
reap_orphans() {
    local d o st
    for d in "$ROOT"/*/; do
        d=${d%/}
        [ -f "$d/owner" ] || continue
        read -r o st <"$d/owner" || continue
        if ! alive "$o" "$st"; then
            say "removing cluster $(basename "$d") (its owner $o has died)"
            teardown "$d" || true
        fi
    done
}

healthy() { # the cluster of $DIR is up with N=$1 hosts
    local role pid st ns count=0
    [ -f "$DIR/pids" ] && [ -f "$DIR/n" ] && [ "$(cat "$DIR/n")" = "$1" ] || return 1
    while read -r role pid st ns; do
        alive "$pid" "$st" || return 1
        [ "$(netns_of "$pid")" = "$ns" ] || return 1
        count=$((count + 1))
    done <"$DIR/pids"
    [ $count -eq $(( $1 + 1 )) ]
}

# start a holder: a process in fresh namespaces that sleeps until killed
# (SIGHUP ignored, so closing the terminal of `up` keeps the cluster)
start_holder() {
    local role=$1 pid st ns
    shift
    # fd 8 (the lock) is closed in the holder, else it would keep the lock
    unshare "$@" sh -c 'trap "" HUP; exec sleep infinity' </dev/null >/dev/null 2>&1 8>&- &
    pid=$!
    local mine
    mine=$(netns_of $$)
    for _ in $(seq 100); do
        ns=$(netns_of $pid)
        # the namespaces exist once unshare has made them
        if [ -n "$ns" ] && [ "$ns" != "$mine" ]; then break; fi
        ns=""
        sleep 0.02
    done
    st=$(starttime $pid)
    [ -n "$st" ] && [ -n "$ns" ] || die "could not create namespaces (unshare $*)"
    echo "$role $pid $st $ns" >>"$DIR/pids"
    disown $pid 2>/dev/null || true
    echo $pid
}

# one lock (on the state directory itself) for every up and down
lock() {
    mkdir -p "$ROOT"
    exec 8<"$ROOT"
    flock -w 120 8 || die "another cluster.sh holds $ROOT for over 2 minutes"
}

in_ns() { local pid=$1; shift; nsenter -t "$pid" -n -u -i -m "$@"; }

cmd_up() {
    local n=${1:-}
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "up N: N from 1 to 64"
    need_root
    lock
    reap_orphans
    if healthy "$n"; then
        SUBNET=$(cat "$DIR/subnet")
        if [ -n "$OWNER" ]; then echo "$OWNER $(starttime "$OWNER")" >"$DIR/owner"; fi
        say "cluster $NAME: $n hosts already up on $SUBNET"
        return 0
    fi
    [ -d "$DIR" ] && say "cluster $NAME: removing what is there (not $n healthy hosts)"
    teardown "$DIR"
    SUBNET=$(pick_subnet)
    mkdir -p "$DIR"
    echo "$SUBNET" >"$DIR/subnet"
    echo "$n" >"$DIR/n"
    : >"$DIR/pids"
    if [ -n "$OWNER" ]; then
        alive "$OWNER" "$(starttime "$OWNER")" || die "--owner $OWNER: no such process"
        echo "$OWNER $(starttime "$OWNER")" >"$DIR/owner"
    fi
    UP_OK=0
    trap 'if [ "$UP_OK" != 1 ]; then say "up failed: removing cluster $NAME"; teardown "$DIR"; fi' EXIT
    # name lookups inside the hosts: this file only, never DNS
    {
        echo "127.0.0.1 localhost"
        for ((i = 0; i < n; i++)); do echo "$(addr_of $i) $(hostname_of $i)"; done
    } >"$DIR/hosts"
    printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nservices: files\nprotocols: files\n' >"$DIR/nsswitch.conf"

    # the switch: a network namespace with one bridge
    local sw pids=() i h
    sw=$(start_holder switch --net --uts)
    nsenter -t "$sw" -n -u sh -c "hostname ${PREFIX}switch; ip link set lo up; ip link add br0 type bridge; ip link set br0 up"
    for ((i = 0; i < n; i++)); do
        h=$(start_holder "host$i" --net --uts --ipc --mount --propagation private)
        pids+=("$h")
        # the veth pair is made inside the switch: one end never exists outside
        nsenter -t "$sw" -n ip link add "v$i" type veth peer name $IFACE netns "$h"
        nsenter -t "$sw" -n sh -c "ip link set v$i master br0 && ip link set v$i up"
        in_ns "$h" sh -c "
            set -e
            hostname $(hostname_of $i)
            mount -t sysfs sysfs /sys
            mount -t tmpfs -o mode=1777 tmpfs /dev/shm
            mount --bind '$DIR/hosts' /etc/hosts
            mount --bind '$DIR/nsswitch.conf' /etc/nsswitch.conf
            ip link set lo up
            ip addr add $(addr_of $i)/24 dev $IFACE
            ip link set $IFACE up"
    done
    # the rsh agent: `agent [options] HOST COMMAND...` -> COMMAND inside HOST
    {
        echo '#!/bin/sh'
        echo "# rsh agent of cluster $NAME (generated by scripts/cluster.sh up; $SUBNET)"
        echo 'while [ $# -gt 0 ]; do case $1 in -l|-p|-o|-i) shift 2 ;; -*) shift ;; *) break ;; esac; done'
        echo 'host=$1; shift'
        echo 'case $host in'
        for ((i = 0; i < n; i++)); do
            echo "  $(hostname_of $i)|$(addr_of $i)) pid=${pids[$i]} ;;"
        done
        echo '  *) echo "cluster agent: unknown host $host" >&2; exit 255 ;;'
        echo 'esac'
        echo 'exec nsenter -t $pid -n -u -i -m --wd="$(pwd)" sh -c "$*"'
    } >"$DIR/agent"
    chmod 755 "$DIR/agent"
    # every host reaches every other one
    for ((i = 1; i < n; i++)); do
        in_ns "${pids[0]}" ping -c 1 -W 2 "$(hostname_of $i)" >/dev/null ||
            die "host $(hostname_of $i) does not answer from $(hostname_of 0)"
    done
    UP_OK=1
    say "cluster $NAME: $n hosts $(hostname_of 0)..$(hostname_of $((n - 1))) on $SUBNET (interface $IFACE), state in $DIR"
}

cmd_down() {
    need_root
    lock
    if [ -d "$DIR" ]; then
        teardown "$DIR"
        say "cluster $NAME: down"
    fi
}

load() {
    [ -f "$DIR/pids" ] && [ -f "$DIR/n" ] || die "cluster $NAME is not up (cluster.sh up N)"
    N=$(cat "$DIR/n")
    SUBNET=$(cat "$DIR/subnet")
    healthy "$N" || die "cluster $NAME is broken (a host died): cluster.sh up $N recreates it"
    HOSTPIDS=()
    local role pid st ns
    while read -r role pid st ns; do
        case $role in host*) HOSTPIDS+=("$pid") ;; esac
    done <"$DIR/pids"
}

host_pid() { # HOST as an index or a name -> its holder's pid
    local h=$1 i
    for ((i = 0; i < N; i++)); do
        if [ "$h" = "$i" ] || [ "$h" = "$(hostname_of $i)" ] || [ "$h" = "$(addr_of $i)" ]; then
            echo "${HOSTPIDS[$i]}"
            return 0
        fi
    done
    die "no host \"$h\" in cluster $NAME ($N hosts)"
}

cmd_status() {
    if ! [ -f "$DIR/pids" ]; then echo "cluster $NAME: down"; exit 1; fi
    load
    echo "cluster $NAME: $N hosts on $SUBNET, agent $DIR/agent"
    local i
    for ((i = 0; i < N; i++)); do
        echo "  $(hostname_of $i) $(addr_of $i) pid ${HOSTPIDS[$i]}"
    done
}

# flavour of a launcher
flavour_of() {
    local l b
    l=$1
    b=$(basename "$l")
    case $b in
        *openmpi*|orterun*|mpirun) echo openmpi; return ;;
        *mpich*|*hydra*) echo mpich; return ;;
    esac
    if "$l" --version 2>&1 | grep -q "Open MPI"; then echo openmpi
    elif "$l" --version 2>&1 | grep -qi "hydra"; then echo mpich
    else die "cannot tell the MPI of \"$l\" (--mpi openmpi|mpich)"; fi
}

# SLOTS -> the array SL (one count per used host)
parse_slots() {
    local s=$1 i
    SL=()
    if [[ $s =~ ^[0-9]+$ ]]; then
        for ((i = 0; i < N; i++)); do SL+=("$s"); done
    elif [[ $s =~ ^[0-9]+(,[0-9]+)+$ ]]; then
        IFS=, read -r -a SL <<<"$s"
        [ ${#SL[@]} -le "$N" ] || die "-p $s: ${#SL[@]} hosts, the cluster has $N"
    else
        die "bad -p \"$s\" (ranks per host: 2, or one per host: 1,2,2)"
    fi
    for i in "${SL[@]}"; do [ "$i" -ge 1 ] || die "bad -p \"$s\": every host at least 1 slot"; done
}

# the options for MPI $1 with slots SL -> array OPTS (and ENVS for MPICH)
make_options() {
    local mpi=$1 hl="" i total=0
    for ((i = 0; i < ${#SL[@]}; i++)); do
        hl+="${hl:+,}$(hostname_of $i):${SL[$i]}"
        total=$((total + SL[i]))
    done
    OPTS=()
    if [ "$mpi" = openmpi ]; then
        OPTS=(--host "$hl" --mca plm_rsh_agent "$DIR/agent" --mca plm_rsh_no_tree_spawn 1
            --mca oob_tcp_if_include "$SUBNET" --mca btl_tcp_if_include "$SUBNET" --mca btl tcp,self,vader)
        if [ "$total" -gt "$(nproc)" ]; then OPTS+=(--mca mpi_yield_when_idle 1); fi
    else
        OPTS=(-launcher rsh -launcher-exec "$DIR/agent" -hosts "$hl" -iface $IFACE -genv UCX_NET_DEVICES $IFACE)
    fi
}

cmd_options() {
    local slots=1 mpi=openmpi
    while [ $# -gt 0 ]; do
        case $1 in
            -p) slots=$2; shift 2 ;;
            --mpi) mpi=$2; shift 2 ;;
            *) die "options: unknown argument \"$1\"" ;;
        esac
    done
    load
    parse_slots "$slots"
    make_options "$mpi"
    printf '%s\n' "${OPTS[@]}"
}

# every descendant of process $1 (before it dies: orphans lose the link)
descendants() {
    ps -e -o pid=,ppid= | awk -v root="$1" '
        { kids[$2] = kids[$2] " " $1 }
        END { n = split(kids[root], q, " "); for (i = 1; i <= n; i++) { print q[i]; m = split(kids[q[i]], k, " "); for (j = 1; j <= m; j++) q[++n] = k[j] } }'
}
killtree() {
    local victims
    victims=$(descendants "$1"; echo "$1")
    # shellcheck disable=SC2086
    kill -s TERM $victims 2>/dev/null || true
    sleep 0.5
    # shellcheck disable=SC2086
    kill -s KILL $victims 2>/dev/null || true
}

cmd_run() {
    local slots=1 mpi="" tmo=600 done_re=${KPORT_CLUSTER_DONE:-} grace=5
    while [ $# -gt 0 ]; do
        case $1 in
            -p) slots=$2; shift 2 ;;
            -t) tmo=$2; shift 2 ;;
            -d) done_re=$2; shift 2 ;;
            -g) grace=$2; shift 2 ;;
            --mpi) mpi=$2; shift 2 ;;
            --) shift; break ;;
            *) break ;;
        esac
    done
    [ $# -ge 1 ] || die "run: no launcher (cluster.sh run [-p SLOTS] mpirun.openmpi -np 4 ./app)"
    [[ $tmo =~ ^[0-9]+$ ]] && [[ $grace =~ ^[0-9]+$ ]] || die "run: -t and -g take whole seconds"
    need_root
    load
    local launcher=$1
    shift
    [ -n "$mpi" ] || mpi=$(flavour_of "$launcher")
    case $mpi in openmpi|mpich) ;; *) die "--mpi $mpi: openmpi or mpich" ;; esac
    parse_slots "$slots"
    make_options "$mpi"
    local path
    path=$(command -v "$launcher") || die "no launcher $launcher"
    # From host 0, as from a cluster's login node, in the current directory.
    # Watched here: at the deadline (or GRACE seconds after a line matching
    # -d's REGEX, the program's last words before MPI_Finalize) the launcher
    # and every process it started, on every host, are killed; `timeout`
    # stays as a backstop.
    local out pid rc start=$SECONDS seen="" why=""
    out=$(mktemp "${TMPDIR:-/tmp}/kport-cluster-run.XXXXXX")
    timeout -k 5 $((tmo + 30)) nsenter -t "${HOSTPIDS[0]}" -n -u -i -m --wd="$PWD" "$path" "${OPTS[@]}" "$@" \
        > >(tee "$out") &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
        if [ -n "$done_re" ] && [ -z "$seen" ] && grep -Eq -- "$done_re" "$out"; then seen=$SECONDS; fi
        if ((SECONDS - start >= tmo)); then why=timeout; break; fi
        if [ -n "$seen" ] && ((SECONDS - seen >= grace)); then why=finalize; break; fi
        sleep 0.1
    done
    [ -n "$why" ] && killtree $pid
    wait $pid && rc=0 || rc=$?
    rm -f "$out"
    case $why in
        timeout) say "run: timed out after $tmo s: killed $launcher and its processes on every host"; rc=124 ;;
        finalize)
            say "run: still running $grace s after the program's last line (\"$done_re\"): killed;" \
                "counted as success (MPICH 4.0.2 + UCX 1.13 can hang in MPI_Finalize over TCP)"
            rc=0 ;;
    esac
    return $rc
}

cmd_exec() {
    [ $# -ge 2 ] || die "exec HOST CMD..."
    need_root
    load
    local pid
    pid=$(host_pid "$1")
    shift
    nsenter -t "$pid" -n -u -i -m --wd="$PWD" "$@"
}

case $CMD in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    exec) cmd_exec "$@" ;;
    agent) load; echo "$DIR/agent" ;;
    options) cmd_options "$@" ;;
    run) cmd_run "$@" ;;
    subnet) if [ -f "$DIR/subnet" ]; then cat "$DIR/subnet"; else pick_subnet; fi ;;
    *) die "unknown command \"$CMD\" (up N | down | status | exec | agent | options | run | subnet)" ;;
esac
