#!/usr/bin/env bash
# Install a kport build into a temporary prefix and use it the two ways a
# user would: a CMake project (find_package(kport) + kport::kport, and
# kport::kport_static) and a plain mpicc command line with pkg-config.
# Every example program is run on NP ranks and must exit 0.
#
# usage: test_install.sh BUILD_DIR SOURCE_DIR MPICC NP MPIEXEC [MPIEXEC_ARGS...]
#   MPIEXEC_ARGS go between MPIEXEC and "-n NP" (e.g. --oversubscribe).
set -euo pipefail

if [ $# -lt 5 ]; then
    echo "usage: $0 BUILD_DIR SOURCE_DIR MPICC NP MPIEXEC [MPIEXEC_ARGS...]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
mpicc=$3
np=$4
shift 4
mpiexec=("$@")

fail() { echo "test_install: FAIL: $*" >&2; exit 1; }
step() { echo "test_install: $*"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

# --- install --------------------------------------------------------------------
step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install failed"; }

# lib, lib64 or lib/<multiarch>, depending on GNUInstallDirs
libdir=$(dirname "$(find "$prefix" -name 'libkport.so' | head -n 1)")
[ -n "$libdir" ] && [ -d "$libdir" ] || fail "no libkport.so under $prefix"
for f in "$prefix/include/kport.h" "$libdir/libkport.a" "$libdir/libkport-pmpi.so" \
         "$prefix/bin/kport-bench" "$prefix/bin/kport-check" "$libdir/pkgconfig/kport.pc" \
         "$libdir/cmake/kport/kportConfig.cmake" "$libdir/cmake/kport/kportConfigVersion.cmake" \
         "$libdir/cmake/kport/kportTargets.cmake" "$libdir/cmake/kport/kportPmpiTargets.cmake"; do
    [ -e "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
ls "$libdir"/libkport.so.* >/dev/null 2>&1 || fail "no versioned libkport.so.N"
step "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
[ -x "$prefix/bin/kport-bench" ] || fail "installed kport-bench is not executable"
"$prefix/bin/kport-check" allgather -a ring -P 4 -b 8 >/dev/null || fail "installed kport-check does not run"

# the MPI library a binary loads (Open MPI: libmpi.so.40, MPICH: libmpich.so.12)
mpilib() { ldd "$1" | awk '/libmpi/ {print $3}' | sort -u | tr '\n' ' '; }
want_mpi=$(mpilib "$libdir/libkport.so")
[ -n "$want_mpi" ] || fail "libkport.so does not load an MPI library"

run() { # name program
    [ "$(mpilib "$2")" = "$want_mpi" ] || fail "$1 loads MPI '$(mpilib "$2")', kport was built with '$want_mpi'"
    step "run $1: ${mpiexec[*]} -n $np $2"
    "${mpiexec[@]}" -n "$np" "$2" >"$tmp/$1.out" 2>&1 || { cat "$tmp/$1.out" >&2; fail "$1 failed"; }
    cat "$tmp/$1.out"
    grep -q "allgather_example: OK" "$tmp/$1.out" || fail "$1 did not report OK"
}

# --- CMake: find_package(kport) ------------------------------------------------------
# No MPI hint here: kportConfig.cmake must pick the MPI kport was built with.
step "CMake project with -DCMAKE_PREFIX_PATH=$prefix"
cmake -S "$src/examples" -B "$tmp/ex-cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    >"$tmp/ex-cmake.log" 2>&1 || { cat "$tmp/ex-cmake.log" >&2; fail "configuring the example failed"; }
cmake --build "$tmp/ex-cmake" >>"$tmp/ex-cmake.log" 2>&1 || { cat "$tmp/ex-cmake.log" >&2; fail "building the example failed"; }
grep -q "kport::kport" "$libdir/cmake/kport/kportTargets.cmake" || fail "kportTargets.cmake lacks kport::kport"
grep -q "kport::pmpi" "$libdir/cmake/kport/kportPmpiTargets.cmake" || fail "kportPmpiTargets.cmake lacks kport::pmpi"
run cmake-shared "$tmp/ex-cmake/allgather_example"
run cmake-static "$tmp/ex-cmake/allgather_example_static"

# --- pkg-config + mpicc ----------------------------------------------------------------
command -v pkg-config >/dev/null || fail "pkg-config not found (apt-get install pkgconf)"
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs kport) || fail "pkg-config --cflags --libs kport failed"
step "pkg-config --cflags --libs kport: $flags"
[ "$(pkg-config --modversion kport)" != "" ] || fail "no version in kport.pc"
incdir=$(pkg-config --variable=includedir kport)
[ -f "$incdir/kport.h" ] || fail "kport.pc includedir $incdir has no kport.h"
[ -f "$(pkg-config --variable=pmpi_library kport)" ] || fail "kport.pc pmpi_library does not exist"
# shellcheck disable=SC2086
"$mpicc" "$src/examples/allgather_example.c" $flags -Wl,-rpath,"$libdir" -o "$tmp/ex-pkgconfig" \
    || fail "mpicc with pkg-config flags failed"
run pkgconfig "$tmp/ex-pkgconfig"

step "PASS"
