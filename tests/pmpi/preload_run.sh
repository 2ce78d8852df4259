# Sourced by the drop-in tests that run one unmodified MPI program in several
# settings (test_preload.sh: plain_app; test_preload_red.sh: red_app).
#
#   preload_init SCRIPT_NAME APP LIBKPORT_PMPI NP MPIEXEC [MPIEXEC_ARGS...]
# checks the arguments (APP must not be linked to kport) and sets app, np,
# mpiexec, preload (the LD_PRELOAD list, preload.sh) and tmp (removed at
# exit). Then:
#   run NAME [VAR=value...]  runs APP on NP ranks with the environment given
#                            through env(1) on every rank; it must exit 0 and
#                            print "<app>: N passed, 0 failed"
#   must / mustnt NAME TEXT  that run's output has / has not TEXT
#   fail TEXT                fails the test
. "$(dirname "${BASH_SOURCE[0]}")/preload.sh"

preload_init() {
    prog=$1
    shift
    if [ $# -lt 4 ]; then
        echo "usage: $prog APP LIBKPORT_PMPI NP MPIEXEC [MPIEXEC_ARGS...]" >&2
        exit 2
    fi
    app=$1
    lib=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    np=$3
    shift 3
    mpiexec=("$@")
    [ -x "$app" ] || fail "no program $app"
    [ -f "$lib" ] || fail "no library $lib"
    if ldd "$app" | grep -q libkport; then fail "$app must not be linked to kport"; fi
    appname=$(basename "$app")
    preload=$(kport_preload "$lib")
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-$prog.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
}

fail() { echo "$prog: FAIL: $*" >&2; exit 1; }

run() {
    local name=$1
    shift
    echo "$prog: $name: ${mpiexec[*]} -n $np env $* $app"
    if ! "${mpiexec[@]}" -n "$np" env "$@" "$app" >"$tmp/$name.out" 2>&1; then
        cat "$tmp/$name.out" >&2
        fail "$name: $appname failed"
    fi
    grep -q "^$appname: [0-9]* passed, 0 failed" "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; fail "$name: no pass line"; }
    grep "^$appname:" "$tmp/$name.out"
}
has() { grep -qF -- "$2" "$tmp/$1.out"; }
must() { has "$1" "$2" || { cat "$tmp/$1.out" >&2; fail "$1: expected \"$2\""; }; }
mustnt() { if has "$1" "$2"; then cat "$tmp/$1.out" >&2; fail "$1: unexpected \"$2\""; fi; }
