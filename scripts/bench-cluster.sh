#!/usr/bin/env bash
# make bench-cluster: kport across real hosts on one machine (issue 40).
#
# scripts/cluster.sh makes the hosts (Linux namespaces joined by a bridge;
# TCP between hosts, shared memory within one); this script runs, under Open
# MPI, at every layout of CLUSTER_LAYOUTS (HOSTSxRANKS, default 2x2 and 3x2):
#   1. kport-bench loggp across the hosts: p2p.intra between two ranks of
#      host 0, p2p.inter between rank 0 and a rank of another host (real TCP
#      messages), the shared-memory costs on host 0 -> params-ompi-<L>.json
#      (the cluster's parameter file) and loggp-ompi-<L>.jsonl
#   2. every collective kport-bench serves (its --help's "Collectives:" line),
#      native Open MPI beside every kport algorithm (flat and SMP-aware) and
#      auto, isolated calls, with the cost model's prediction from step 1
#      (--predict) -> <coll>-ompi-<L>.jsonl
#   3. kport-sim's prediction of every kport cell of step 2 with the same
#      parameter file and the layout's ranks per node -> sim-ompi-<L>.jsonl
#      (one JSON line per cell: coll, algorithm, P, node_size, size,
#      simulated_us)
# then
#   4. kport-tune --from-bench over every layout's runs -> tuning-ompi.json,
#      and per layout and collective native and auto with that tuning file
#      (KPORT_TUNING_FILE) in one run -> <coll>-ompi-<L>-tuned.jsonl
# The raw results go to CLUSTER_OUT (default docs/bench/cluster); make report
# turns them into docs/PERFORMANCE.md's cluster section (scripts/perf_report.py).
# Root only (the namespaces); the machine's own network and /etc untouched.
#
# The machine has 2 cores: 2 ranks per host on 2 hosts are 4 ranks, so MPI
# yields when idle (cluster.sh adds --mca mpi_yield_when_idle 1) and kport's
# shared-memory waits yield after 1 us (src/exec/run.c, kp_shm_wait).
#   CLUSTER_LAYOUTS  layouts (default "2x2 3x2")
#   CLUSTER_COLLS    collectives (default: every one kport-bench serves)
#   CLUSTER_ARGS     kport-bench options of step 2 (default -m 8:1M -i 80 -x 8 --rounds 4)
#   CLUSTER_LOGGP    kport-bench loggp options (default -m 1:1M -i 10)
#   CLUSTER_BUILD    the Open MPI build (default build/ompi)
#   CLUSTER_OUT      output directory (default docs/bench/cluster)
#   CLUSTER_TUNE     0: skip step 4 (default 1)
#   CLUSTER_TIMEOUT  seconds one MPI run may take (default 900)
set -euo pipefail
cd "$(dirname "$0")/.."
layouts=${CLUSTER_LAYOUTS:-2x2 3x2}
build=${CLUSTER_BUILD:-build/ompi}
out=${CLUSTER_OUT:-docs/bench/cluster}
args=${CLUSTER_ARGS:--m 8:1M -i 80 -x 8 --rounds 4}
lgargs=${CLUSTER_LOGGP:--m 1:1M -i 10}
tmo=${CLUSTER_TIMEOUT:-900}
bench=$build/kport-bench sim=$build/kport-sim
[ "$(id -u)" -eq 0 ] || { echo "bench-cluster: needs root (the hosts are Linux namespaces)" >&2; exit 1; }
[ -x "$bench" ] && [ -x "$sim" ] || { echo "bench-cluster: no $bench or $sim (make build-ompi)" >&2; exit 1; }
colls=${CLUSTER_COLLS:-$("$bench" allgather --help 2>&1 | sed -n 's/^Collectives: //p')}
[ -n "$colls" ] || { echo "bench-cluster: cannot read the collectives from $bench --help" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cluster=(bash scripts/cluster.sh --name kpbench)
maxhosts=1
for l in $layouts; do
    [[ $l =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || { echo "bench-cluster: bad layout \"$l\" (HOSTSxRANKS)" >&2; exit 1; }
    [ "${BASH_REMATCH[1]}" -gt $maxhosts ] && maxhosts=${BASH_REMATCH[1]}
done
mkdir -p "$out"
trap '"${cluster[@]}" down >/dev/null 2>&1 || true' EXIT
"${cluster[@]}" --owner $$ up "$maxhosts"

launch() { # layout -> the words that start an Open MPI run across its hosts
    local h=${1%x*} r=${1#*x} slots="" i
    for ((i = 0; i < h; i++)); do slots+="${slots:+,}$r"; done
    [ "$h" -gt 1 ] || slots=$r
    run=("${cluster[@]}" run -p "$slots" -t "$tmo" mpirun.openmpi -np $((h * r)))
}
# kport-sim of every kport cell of a run (P ranks, node size r, one parameter file)
simulate() { # jsonl params node_size -> JSON lines on stdout
    python3 - "$sim" "$1" "$2" "$3" <<'PY'
import json, subprocess, sys
sim, path, params, ns = sys.argv[1:5]
seen = set()
for line in open(path):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    alg = (r.get("algorithm") or "").split(" (")[0]
    if r.get("status") != "ok" or alg in ("", "native", "auto", "memcpy", "sendrecv", "tuned") or alg.startswith("auto("):
        continue
    key = (r["coll"], alg, r["P"], r.get("size", 0))
    if key in seen:
        continue
    seen.add(key)
    cmd = [sim, r["coll"], "-a", alg, "-P", str(r["P"]), "-m", str(r.get("size", 0)), "--node-size", ns,
           "--params", params, "--format", "json", "-q"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    rec = {"coll": r["coll"], "algorithm": alg, "P": r["P"], "node_size": int(ns), "size": r.get("size", 0)}
    if p.returncode:
        rec["error"] = p.stderr.strip()[:200]
    else:
        rec["simulated_us"] = json.loads(p.stdout)["max_time_ns"] / 1e3
    print(json.dumps(rec, sort_keys=True))
PY
}

for l in $layouts; do
    launch "$l"
    p=$out/params-ompi-$l.json
    echo "== loggp, $l: ${run[*]} $bench loggp -o $p --format json $lgargs" >&2
    # shellcheck disable=SC2086
    "${run[@]}" "$bench" loggp -o "$p" --format json $lgargs >"$out/loggp-ompi-$l.jsonl"
    for c in $colls; do
        f=$out/$c-ompi-$l.jsonl
        echo "== $c, $l: ${run[*]} $bench $c --predict $p --format json $args" >&2
        # shellcheck disable=SC2086
        "${run[@]}" "$bench" "$c" --predict "$p" --format json $args >"$f"
        simulate "$f" "$p" "${l#*x}" >"$out/sim-$c-ompi-$l.jsonl"
    done
done
[ "${CLUSTER_TUNE:-1}" = 0 ] && exit 0
tun=$out/tuning-ompi.json
files=()
for l in $layouts; do for c in $colls; do files+=("$out/$c-ompi-$l.jsonl"); done; done
echo "== kport-tune --from-bench ${files[*]} -o $tun" >&2
python3 tools/kport-tune --from-bench "${files[@]}" -o "$tun"
for l in $layouts; do
    launch "$l"
    for c in $colls; do
        f=$out/$c-ompi-$l-tuned.jsonl
        echo "== $c, $l, tuned: ${run[*]} env KPORT_TUNING_FILE=$tun $bench $c -a native,auto --format json $args" >&2
        # shellcheck disable=SC2086
        "${run[@]}" env KPORT_TUNING_FILE="$PWD/$tun" "$bench" "$c" -a native,auto --format json $args >"$f"
    done
done
