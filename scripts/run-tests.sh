#!/usr/bin/env bash
# Run every test suite: Open MPI build, MPICH build, and the Open MPI build
# under AddressSanitizer + UndefinedBehaviorSanitizer. Prints one summary
# line "N passed, M failed" and exits nonzero when anything failed.
set -u
cd "$(dirname "$0")/.."
total_pass=0
total_fail=0
status=0
for b in ompi mpich asan; do
    echo "=== ctest: build/$b ==="
    log=$(mktemp)
    (cd "build/$b" && ctest --output-on-failure --timeout 900 "$@") 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" | tail -1)
    if [ -n "$line" ]; then
        failed=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
        total=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/')
        total_pass=$((total_pass + total - failed))
        total_fail=$((total_fail + failed))
    else
        total_fail=$((total_fail + 1))
    fi
    [ "$rc" -eq 0 ] || status=1
    rm -f "$log"
done
echo "tests: $total_pass passed, $total_fail failed"
exit $status
