#!/usr/bin/env bash
# kport-sim runs the collectives of issue 37 at a million ranks (ctest
# sim_million): every one of bcast, scatter, reduce, allreduce,
# reduce_scatter_block and reduce_scatter, with what is known of each in
# closed form:
#  - allreduce recursive_doubling at P = 2^20, 8 B (one double), LogGOPSim's
#    default parameters (L=2500 o=1500 G=6 O=0) and --gamma 3: every rank
#    takes log2 P steps of o + L + o + 7*G (the message) + 8*3 (the combine)
#    = 5566 ns, 111,320 ns in all; 20*P messages and 20*P combines;
#  - reduce knomial at P = 10^6: P - 1 messages and P - 1 combines (every
#    rank's vector joins the root's result once), the leaves done after
#    their send's o = 1500 ns;
#  - bcast binomial and scatter binomial at P = 10^6: P - 1 messages;
#  - reduce_scatter_block recursive_halving at P = 2^20: log2 P halving
#    steps on every rank alike: 20*P messages, 20*P combines, every rank the
#    same time;
#  - reduce_scatter recursive_halving at P = 10^6 (a vector of 8*10^6 B:
#    one double per rank): completes, one combine per message received.
#
#   tests/sim/million.sh KPORT_SIM [LOG2P PN]   (default 20 1000000; the
#   sanitizer build runs 16 65536)
set -uo pipefail
sim=${1:?usage: million.sh KPORT_SIM [LOG2P PN]}
lg=${2:-20} pn=${3:-1000000}
p2=$((1 << lg))
fails=0
run() { # name, expected (python expression over d), kport-sim arguments
    local name=$1 cond=$2
    shift 2
    local out
    if ! out=$("$sim" "$@" -q --format json 2>&1); then
        echo "FAIL $name: kport-sim $* exited with an error: $(echo "$out" | head -2)"
        fails=$((fails + 1))
        return
    fi
    if echo "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
P = d['P']
ok = $cond
print('%-22s P=%-8d %12.3f us max, %12.3f us min, %10d messages, %10s combines, %5.1f s, %4d MiB: %s' % (
    '$name', P, d['max_time_ns'] / 1e3, d['min_time_ns'] / 1e3, d['messages'], d.get('combines', '-'),
    d['wall_s'], d['mem_bytes'] >> 20, 'ok' if ok else 'FAIL: ' + '''$cond'''))
sys.exit(0 if ok else 1)"; then :; else
        fails=$((fails + 1))
    fi
}
run allreduce "d['max_time_ns'] == d['min_time_ns'] == $lg * 5566 and d['messages'] == d['combines'] == $lg * P" \
    allreduce -a recursive_doubling -P "$p2" -m 8 --elem 8 --gamma 3
run reduce "d['messages'] == d['combines'] == P - 1 and d['min_time_ns'] == 1500 and d['max_time_ns'] > 1500" \
    reduce -a knomial -P "$pn" -m 8 --elem 8
run bcast "d['messages'] == P - 1 and d['max_time_ns'] > 0" bcast -a binomial -P "$pn" -m 8
run scatter "d['messages'] == P - 1 and d['max_time_ns'] > 0" scatter -a binomial -P "$pn" -m 8
run reduce_scatter_block "d['messages'] == d['combines'] == $lg * P and d['max_time_ns'] == d['min_time_ns'] > 0" \
    reduce_scatter_block -a recursive_halving -P "$p2" -m 8 --elem 8
run reduce_scatter "d['combines'] > 0 and d['max_time_ns'] > 0" \
    reduce_scatter -a recursive_halving -P "$pn" -m $((8 * pn)) --elem 8
if [ "$fails" = 0 ]; then
    echo "million.sh: all 6 collectives ran at up to $pn / $p2 ranks"
else
    echo "million.sh: $fails failed"
fi
[ "$fails" = 0 ]
