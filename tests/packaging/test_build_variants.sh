#!/usr/bin/env bash
# The library builds the ways a user builds it, with the library's default
# options (KPORT_WERROR off) and without a single compiler warning:
#   release  -DCMAKE_BUILD_TYPE=Release (-O3): libkport.so, libkport.a, libkport-pmpi.so
#   static   -DBUILD_SHARED_LIBS=OFF: libkport.a only (kport::kport is static),
#            libkport-pmpi.so still built; installed, the example project links
#            kport::kport and kport::kport_static to it and runs on NP ranks.
# Library targets only (KPORT_BUILD_TESTS/TOOLS=OFF), into a temporary
# directory, -j2.
#
# usage: test_build_variants.sh SOURCE_DIR MPICC NP MPIEXEC [MPIEXEC_ARGS...]
set -euo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 SOURCE_DIR MPICC NP MPIEXEC [MPIEXEC_ARGS...]" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
mpicc=$2
np=$3
shift 3
mpiexec=("$@")

fail() { echo "test_build_variants: FAIL: $*" >&2; exit 1; }
step() { echo "test_build_variants: $*"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-variants.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# build NAME CMAKE_ARGS...: configure + build, no warnings; the build is $tmp/NAME
build() {
    local name=$1
    shift
    local b=$tmp/$name log=$tmp/$name.log
    step "$name: cmake -S $src -B $b $*"
    cmake -S "$src" -B "$b" -DMPI_C_COMPILER="$mpicc" -DKPORT_BUILD_TESTS=OFF -DKPORT_BUILD_TOOLS=OFF \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "$name: configure failed"; }
    cmake --build "$b" -j 2 >>"$log" 2>&1 || { cat "$log" >&2; fail "$name: build failed"; }
    if grep -in "warning" "$log" >&2; then
        fail "$name: the build printed warnings"
    fi
    grep -q "^KPORT_WERROR:BOOL=OFF$" "$b/CMakeCache.txt" || fail "$name: KPORT_WERROR is not OFF by default"
    ! grep -q -- "-Werror" "$b/compile_commands.json" || fail "$name: -Werror used although KPORT_WERROR is OFF"
    [ ! -e "$b/kport-bench" ] && [ ! -d "$b/tests" ] || fail "$name: tools or tests built with KPORT_BUILD_TOOLS/TESTS=OFF"
}
# defines SYMBOL in FILE (nm; -D for shared objects)
defines() { nm "${@:3}" "$1" 2>/dev/null | grep -E " T $2\$" >/dev/null; }

# --- Release ---------------------------------------------------------------------
build release -DCMAKE_BUILD_TYPE=Release
b=$tmp/release
grep -q "^CMAKE_BUILD_TYPE:STRING=Release$" "$b/CMakeCache.txt" || fail "release: build type is not Release"
grep -q -- " -O3 " "$b/compile_commands.json" || fail "release: sources not compiled with -O3"
for f in libkport.so libkport.so.0 libkport.a libkport-pmpi.so; do
    [ -e "$b/$f" ] || fail "release: $f not built"
done
defines "$b/libkport.so" kp_allgather -D || fail "release: libkport.so does not define kp_allgather"
defines "$b/libkport.a" kp_allgather || fail "release: libkport.a does not define kp_allgather"
defines "$b/libkport-pmpi.so" MPI_Allgather -D || fail "release: libkport-pmpi.so does not define MPI_Allgather"
step "release: $(cd "$b" && ls libkport* | tr '\n' ' ')"

# --- BUILD_SHARED_LIBS=OFF ---------------------------------------------------------
build static -DBUILD_SHARED_LIBS=OFF
b=$tmp/static
[ -f "$b/libkport.a" ] || fail "static: libkport.a not built"
defines "$b/libkport.a" kp_allgather || fail "static: libkport.a does not define kp_allgather"
! ls "$b"/libkport.so* >/dev/null 2>&1 || fail "static: a shared libkport.so was built: $(ls "$b"/libkport.so*)"
[ -f "$b/libkport-pmpi.so" ] || fail "static: libkport-pmpi.so (always shared) not built"
step "static: $(cd "$b" && ls libkport* | tr '\n' ' ')"

prefix=$tmp/prefix
cmake --install "$b" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "static: install failed"; }
! find "$prefix" -name 'libkport.so*' | grep . >/dev/null || fail "static: libkport.so installed"
find "$prefix" -name libkport.a | grep . >/dev/null || fail "static: libkport.a not installed"
cmake -S "$src/examples" -B "$tmp/ex" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/ex.log" 2>&1 \
    || { cat "$tmp/ex.log" >&2; fail "static: configuring the example against the installed static kport failed"; }
cmake --build "$tmp/ex" >>"$tmp/ex.log" 2>&1 || { cat "$tmp/ex.log" >&2; fail "static: building the example failed"; }
for exe in allgather_example allgather_example_static; do
    ! ldd "$tmp/ex/$exe" | grep libkport >/dev/null || fail "static: $exe loads a shared libkport"
    step "static: run ${mpiexec[*]} -n $np $exe"
    "${mpiexec[@]}" -n "$np" "$tmp/ex/$exe" >"$tmp/$exe.out" 2>&1 || { cat "$tmp/$exe.out" >&2; fail "static: $exe failed"; }
    grep -q "allgather_example: OK" "$tmp/$exe.out" || { cat "$tmp/$exe.out" >&2; fail "static: $exe did not report OK"; }
done

step "PASS"
