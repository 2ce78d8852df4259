#!/usr/bin/env bash
# make bench: run kport-bench at P = 2 with the Open MPI build, then with the
# MPICH build, and print one combined table with ratios to the better native;
# then the same collectives back to back (kport-bench --b2b) for native,
# kport's default and the memcpy reference, and the two pictures side by side.
# First, per build, kport-bench loggp measures the machine (P = 2) and writes
# $BENCH_OUT/params-<mpi>.json; every isolated collective run then predicts
# each kport cell from it (--predict), and the 1:n n:1 fan-out runs beside
# its LogP prediction (--params) at P = 2 and, with Open MPI, at P = 2..8
# (oversubscribed above the core count, reported as such). Last, the fan-out
# table and kport-plot's figures ($BENCH_OUT/*.png, *.pdf).
#   BENCH_COLLS       collectives to run (default: allgather barrier gather alltoall
#                     bcast scatter reduce allreduce reduce_scatter_block reduce_scatter;
#                     the reductions in double with MPI_SUM, allreduce with its bw_limit)
#   BENCH_ARGS        extra kport-bench options (default: none = 1 B .. 1 MiB)
#   BENCH_B2B         calls per back-to-back batch (default 8; 0: isolated calls only)
#   BENCH_B2B_COLLS   collectives also run back to back (default: allgather barrier gather
#                     alltoall bcast allreduce; the other new ones isolated only, to keep
#                     make bench short)
#   BENCH_B2B_ALGS    algorithms of the back-to-back runs (default native,auto,memcpy;
#                     ignored when BENCH_ARGS has -a)
#   BENCH_NP          ranks (default 2; MPICH busy-polls, keep it <= cores)
#   BENCH_MPIS        builds to run (default: ompi mpich)
#   BENCH_BUILD_OMPI  Open MPI build directory (default build/ompi)
#   BENCH_BUILD_MPICH MPICH build directory (default build/mpich)
#   BENCH_OUT         directory for the JSON lines, parameter files and figures (default build/bench)
#   BENCH_LOGGP_ARGS  extra kport-bench loggp options (default: none = 1 B .. 1 MiB)
#   BENCH_FANOUT_NP   ranks of the Open MPI fan-out run beyond P = 2 (default 8; 2: none)
#   BENCH_FANOUT_ARGS kport-bench fanout options (default: -m 8,1K,64K)
#   BENCH_PLOT        0: no figures (default 1; kport-plot needs python3-matplotlib)
#   BENCH_RECHECK     0: do not measure the machine again after the all-gather
#                     (default 1: loggp again right after each build's isolated
#                     all-gather; when flag, copy, p2p one-way or exchange costs
#                     moved by more than 25 %, the parameters and the all-gather are measured again)
#   BENCH_RETRIES     further attempts when the machine moved (default 2); the
#                     moved attempts stay in $BENCH_OUT/moved-N/, and a warning
#                     when the last one moved too
set -euo pipefail
cd "$(dirname "$0")/.."
np=${BENCH_NP:-2}
out=${BENCH_OUT:-build/bench}
colls=${BENCH_COLLS:-allgather barrier gather alltoall bcast scatter reduce allreduce reduce_scatter_block reduce_scatter}
b2b=${BENCH_B2B:-8}
b2b_colls=${BENCH_B2B_COLLS:-allgather barrier gather alltoall bcast allreduce}
b2b_algs=${BENCH_B2B_ALGS:-native,auto,memcpy}
mpis=${BENCH_MPIS:-ompi mpich}
mkdir -p "$out"
rm -rf "$out"/moved-* # attempts of an earlier run
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
files=() plots=()
# Measure the machine first: LogGP and shared-memory costs per build, P = 2.
# With the all-gather (the collective whose predictions are judged), each
# build's isolated all-gather runs right after its parameters and is followed
# by a second loggp: on a virtual machine whose cores change speed for
# minutes at a time, parameters measured in one phase predict medians
# measured in another 2-3x off (docs/PERFORMANCE.md, "Predicted against
# measured"). When the two measurements disagree by more than 25 % (flag,
# copy, point-to-point one-way, exchanges of 512 B, 4 KiB, 64 KiB), the run
# says so and measures all three again, BENCH_RETRIES times at most.
params() { echo "$out/params-$1.json"; }
runner() { # sets run and bin for build $1 at $2 ranks
    if [ "$1" = ompi ]; then
        run=(mpirun.openmpi -np "$2" --oversubscribe --bind-to none) bin=${BENCH_BUILD_OMPI:-build/ompi}/kport-bench
    else
        run=(mpiexec.mpich -n "$2") bin=${BENCH_BUILD_MPICH:-build/mpich}/kport-bench
    fi
}
loggp() { # build, parameter file, JSON lines (or /dev/null)
    runner "$1" 2
    echo "== loggp, $1, P=2: ${run[*]} $bin loggp -o $2 --format json ${BENCH_LOGGP_ARGS:-}" >&2
    # shellcheck disable=SC2086
    "${run[@]}" "$bin" loggp -o "$2" --format json ${BENCH_LOGGP_ARGS:-} > "$3"
}
isolated() { # collective, build: the isolated run with predictions
    runner "$2" "$np"
    local f="$out/$1-$2-p$np.jsonl" pr=(--predict "$(params "$2")")
    # the all-gather's judged run carries the exchange loggp fits as a reference column (moved())
    [ "$1" = allgather ] && pr+=(--sendrecv)
    echo "== $1, $2, P=$np: ${run[*]} $bin $1 ${pr[*]} --format json ${BENCH_ARGS:-}" >&2
    # shellcheck disable=SC2086
    "${run[@]}" "$bin" "$1" "${pr[@]}" --format json ${BENCH_ARGS:-} > "$f"
}
moved() { # before, after, build, all-gather JSON lines: prints what moved; true when something did
    python3 - "$1" "$2" "$3" "$4" <<'PY'
import json, statistics, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
def one_way(p):  # the smallest message: o_s + L + o_r of the first intra piece
    x = p["p2p"]["intra"]["pieces"][0]
    return x["o_s"] + x["L"] + x["o_r"]
def exchange(s):  # two ranks sending each other s bytes: X + XG*s of its piece
    def f(p):
        for x in p["p2p"]["intra"]["pieces"]:
            if x["max_bytes"] < 0 or s <= x["max_bytes"]:
                return x.get("X", 0) + x.get("XG", 0) * s
        return 0
    return f
keys = [("flag", lambda p: p["shm"]["flag"]["fixed"]),
        ("copy_in per byte", lambda p: p["shm"]["copy_in"]["per_byte"]),
        ("p2p one-way", one_way)]
# the exchange drives every point-to-point cell; MPICH's measured at
# 512 B-8 KiB 1.3x apart in the two runs around one all-gather. Every
# size the predictions are judged at (8 B-64 KiB): session 33's first run
# fitted MPICH's 8 KiB exchange 1.36x apart before and after (4 KiB 1.19x,
# 512 B and 64 KiB 1.00x), and its five point-to-point cells at 8 KiB came
# out 1.39x predicted with the parameters from before, 1.0x with those from
# after; none of the other recorded pairs trips at the sizes added
keys += [("p2p exchange %d B" % (1 << e), exchange(1 << e)) for e in range(3, 17)]
bad = []
for name, f in keys:
    x, y = f(a), f(b)
    if min(x, y) > 0 and max(x, y) / min(x, y) > 1.25:
        bad.append("%s %.4g -> %.4g" % (name, x, y))
# The all-gather run's own reference column, a memcpy of the receive
# buffer, against the memcpy fit of the parameters it is judged by, on
# copies of 32-128 KiB (where the fit holds: 0.87-1.07x in every
# normal-state run since the fit got its second slope). Parameters
# measured alike before and after can still bracket a run made in another
# state: session 32's second run copied 1.9-2.2x slower in its Open MPI
# all-gather than both loggp runs around it said, and every cell of it
# came out 0.65x predicted.
def lin(c, s):
    lf = c.get("large_from", 0)
    if lf > 0 and s > lf:
        return c["fixed"] + c["per_byte"] * lf + c["large_per_byte"] * (s - lf)
    return c["fixed"] + c["per_byte"] * s
# The same for the network: the run's sendrecv column (the exchange loggp
# fits, Irecv/Isend/Waitall with the partner, timed like the collectives)
# against the exchange fit X + XG*s, 8 B-64 KiB. Session 33's second run:
# both loggp runs gave Open MPI's one-way 258 ns and its exchange at 1 KiB
# 0.76 us, while the all-gather between them ran its point-to-point
# algorithms 0.71-0.75x predicted (88 misses). In the normal state the
# column's median ratio was 1.03-1.09 (MPICH, Open MPI).
r, rx = [], []
for line in open(sys.argv[4]):
    try:
        x = json.loads(line)
    except ValueError:
        continue
    if x.get("algorithm") == "memcpy" and x.get("median_us") and 32768 <= x["P"] * x["size"] <= 131072:
        r.append(x["median_us"] * 1e3 / lin(a["shm"]["memcpy"], x["P"] * x["size"]))
    if x.get("algorithm") == "sendrecv" and x.get("median_us") and 8 <= x["size"] <= 65536:
        fit = exchange(x["size"])(a)
        if fit > 0:
            rx.append(x["median_us"] * 1e3 / fit)
if r:
    q = statistics.median(r)
    if q > 1.5 or q < 1 / 1.5:
        bad.append("the all-gather run's memcpy of 32-128 KiB %.2fx the memcpy fit" % q)
if rx:
    q = statistics.median(rx)
    if q > 1.25 or q < 1 / 1.25:
        bad.append("the all-gather run's exchange of 8 B-64 KiB %.2fx the exchange fit" % q)
if bad:
    print("%s: the machine's parameters moved during the all-gather (%s)" % (sys.argv[3], ", ".join(bad)))
sys.exit(0 if bad else 1)
PY
}
recheck=0
[[ " $colls " == *" allgather "* ]] && [ "${BENCH_RECHECK:-1}" != 0 ] && recheck=1
warnings=()
for mpi in $mpis; do
    f="$out/loggp-$mpi-p2.jsonl"
    plots+=("$f")
    tries=$((${BENCH_RETRIES:-2} + 1))
    for ((attempt = 1; ; attempt++)); do
        loggp "$mpi" "$(params "$mpi")" "$f"
        [ "$recheck" = 1 ] || break
        isolated allgather "$mpi"
        after="$out/params-$mpi-after.json"
        loggp "$mpi" "$after" /dev/null
        if ! why=$(moved "$(params "$mpi")" "$after" "$mpi" "$out/allgather-$mpi-p$np.jsonl"); then
            break
        fi
        if [ "$attempt" -ge "$tries" ]; then
            warnings+=("bench: $why, in all $tries attempts: the predictions below compare one machine state with another")
            break
        fi
        mkdir -p "$out/moved-$attempt"
        cp "$(params "$mpi")" "$after" "$f" "$out/allgather-$mpi-p$np.jsonl" "$out/moved-$attempt/"
        echo "bench: $why; measuring it again (attempt $((attempt + 1)) of $tries; this attempt kept in $out/moved-$attempt/)" >&2
        warnings+=("bench: $why in attempt $attempt (kept in $out/moved-$attempt/); measured again")
    done
done
for coll in $colls; do
    for mpi in $mpis; do
        runner "$mpi" "$np"
        [ "$coll" = allgather ] && [ "$recheck" = 1 ] || isolated "$coll" "$mpi"
        files+=("$out/$coll-$mpi-p$np.jsonl")
        if [ "$b2b" != 0 ] && [[ " $b2b_colls " == *" $coll "* ]]; then
            f="$out/$coll-$mpi-p$np-b2b$b2b.jsonl"
            algs=$b2b_algs
            [ "$coll" = barrier ] && algs=${algs//,memcpy/} # nothing to copy
            [ "$coll" = allreduce ] && algs+=,bw_limit       # the memory-bandwidth limit beside them
            alist=(-a "$algs")
            case " ${BENCH_ARGS:-} " in *" -a"*) alist=() ;; esac # BENCH_ARGS chose the algorithms
            echo "== $coll, $mpi, P=$np: ${run[*]} $bin $coll --b2b $b2b ${alist[*]} --format json ${BENCH_ARGS:-}" >&2
            # shellcheck disable=SC2086
            "${run[@]}" "$bin" "$coll" --b2b "$b2b" "${alist[@]}" --format json ${BENCH_ARGS:-} > "$f"
            files+=("$f")
        fi
    done
done
# The 1:n n:1 fan-out beside its LogP prediction: P = 2 per build, and
# P = 2..BENCH_FANOUT_NP with Open MPI (oversubscribed above the cores)
fan=()
fanout_np=${BENCH_FANOUT_NP:-8}
for mpi in $mpis; do
    nps=(2)
    [ "$mpi" = ompi ] && [ "$fanout_np" -gt 2 ] && nps+=("$fanout_np")
    for fnp in "${nps[@]}"; do
        runner "$mpi" "$fnp"
        f="$out/fanout-$mpi-p$fnp.jsonl"
        # shellcheck disable=SC2206
        fargs=(${BENCH_FANOUT_ARGS:--m 8,1K,64K})
        echo "== fanout, $mpi, P=$([ "$fnp" = 2 ] || echo 2..)$fnp: ${run[*]} $bin fanout ${fargs[*]} --params $(params "$mpi") --format json" >&2
        "${run[@]}" "$bin" fanout "${fargs[@]}" --params "$(params "$mpi")" --format json > "$f"
        fan+=("$f")
    done
done
echo
echo "# kport-bench at P=$np, $(date -u +%Y-%m-%d), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo "# median latency (us) per call, each cell 'median (ratio to the better native MPI of the same size)'"
python3 scripts/bench_report.py "${files[@]}" "${fan[@]}"
# What the second measurement of the machine found (above, after each
# build's isolated all-gather)
for w in "${warnings[@]}"; do
    echo "$w"
done
if [ -f scripts/predict_report.py ] && [[ " $colls " == *" allgather "* ]]; then
    # the cost model against this run's all-gather medians, 8 B .. 64 KiB
    # (parameters measured above, in the same run)
    echo
    echo "# predicted (cost model, $out/params-*.json) against measured: allgather, 8 B .. 64 KiB"
    python3 scripts/predict_report.py --coll allgather --min 8 --max 65536 "${files[@]}" ||
        echo "bench: scripts/predict_report.py failed" >&2
fi
if [ "${BENCH_PLOT:-1}" != 0 ]; then
    echo
    rm -f "$out"/*.png "$out"/*.pdf # figures of an earlier run
    if tools/kport-plot -q -o "$out" "${plots[@]}" "${files[@]}" "${fan[@]}"; then
        echo "# figures: $out/*.png and *.pdf (kport-plot; $(ls "$out"/*.png | wc -l) PNG files)"
    else
        echo "bench: kport-plot failed (python3-matplotlib missing?); the tables above are complete" >&2
    fi
fi
