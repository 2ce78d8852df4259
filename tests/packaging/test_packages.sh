#!/usr/bin/env bash
# Build the Debian packages of a kport build (cpack into a temporary
# directory) and check them without installing anything into the machine:
#   - one package per component, named after the build's MPI:
#       libkport0-<mpi> (runtime), libkport-<mpi>-dev, kport-<mpi>-tools
#   - each holds exactly its files (dpkg-deb -c), together exactly what
#     `cmake --install` installs
#   - metadata (dpkg-deb -f): version, architecture, and dependencies on the
#     packages that really provide the build's MPI, found here independently
#     with ldd and `dpkg -S`: the MPI library's package (runtime, tools), the
#     mpi.h and compiler wrapper packages (dev), the launcher (tools,
#     Recommends); nothing of the other MPI; the runtime package's shlibs file
#   - unpacked (dpkg-deb -x) into a temporary root: kport-check runs, and the
#     example compiled with mpicc + the packaged kport.pc runs on NP ranks.
# Exits 77 (skipped) where dpkg-deb or cpack is missing (not Debian).
#
# usage: test_packages.sh BUILD_DIR MPICC NP MPIEXEC [MPIEXEC_ARGS...]
set -euo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 BUILD_DIR MPICC NP MPIEXEC [MPIEXEC_ARGS...]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
mpicc=$2
np=$3
shift 3
mpiexec=("$@")

fail() { echo "test_packages: FAIL: $*" >&2; exit 1; }
step() { echo "test_packages: $*"; }

for t in cpack dpkg-deb dpkg; do
    command -v "$t" >/dev/null || { echo "test_packages: SKIP: $t not found"; exit 77; }
done
[ -f "$build/CPackConfig.cmake" ] || fail "$build has no CPackConfig.cmake (configured with KPORT_INSTALL=OFF?)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-packages.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
src=$(cache kport_SOURCE_DIR)
libdir=$(cache CMAKE_INSTALL_LIBDIR)
shared=$(cache BUILD_SHARED_LIBS)
version=$(sed -n 's/^project(kport VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$libdir" ] && [ -n "$version" ] || fail "cannot read CMAKE_INSTALL_LIBDIR / the version"
arch=$(dpkg --print-architecture)

# the Debian package owning a file (or its symlink target); a bare program
# name (MPI_C_COMPILER=mpicc.openmpi, as the Makefile passes it) is looked up
# on PATH first: `dpkg -S name` alone matches any path containing the name
owner() {
    local f p=$1
    case "$p" in /*) ;; *) p=$(command -v "$p") || fail "$1 is not on PATH" ;; esac
    for f in "$p" "$(readlink -f "$p")"; do
        dpkg -S "$f" 2>/dev/null | sed -n '1s/^\([^:, ]*\).*/\1/p' | grep . && return 0
    done
    fail "no Debian package owns $1"
}
mpi_lib=$(ldd "$build/libkport-pmpi.so" | awk '/libmpi/ {print $3; exit}')
[ -n "$mpi_lib" ] || fail "libkport-pmpi.so loads no libmpi*"
mpi_runtime=$(owner "$mpi_lib")                                      # libopenmpi3 / libmpich12
mpi_dev=$(owner "$(cache MPI_C_HEADER_DIR)/mpi.h")                   # libopenmpi-dev / libmpich-dev
mpi_cc=$(owner "$(cache MPI_C_COMPILER)")                            # openmpi-bin / mpich
mpi_launcher=$(owner "$(cache MPIEXEC_EXECUTABLE)")                  # openmpi-bin / mpich
case "$mpi_runtime" in
    *openmpi*) flavour=openmpi other=mpich ;;
    *mpich*) flavour=mpich other=openmpi ;;
    *) fail "unknown MPI package $mpi_runtime" ;;
esac
step "MPI: $flavour ($mpi_runtime, $mpi_dev, $mpi_cc, $mpi_launcher)"

# --- build the packages -------------------------------------------------------------
step "cpack --config $build/CPackConfig.cmake -B $tmp/out"
(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -B "$tmp/out") >"$tmp/cpack.log" 2>&1 \
    || { cat "$tmp/cpack.log" >&2; fail "cpack failed"; }
if grep -i "warning" "$tmp/cpack.log" >&2; then fail "cpack printed warnings"; fi

runtime=libkport${version%%.*}-$flavour
dev=libkport-$flavour-dev
tools=kport-$flavour-tools
pkgs=("$dev" "$tools")
[ "$shared" = "OFF" ] || pkgs=("$runtime" "${pkgs[@]}")
deb() { echo "$tmp/out/${1}_$version-1_$arch.deb"; }
for p in "${pkgs[@]}"; do
    [ -f "$(deb "$p")" ] || fail "no package $(basename "$(deb "$p")"); built: $(cd "$tmp/out" && ls ./*.deb)"
done
[ "$(ls "$tmp/out"/*.deb | wc -l)" -eq ${#pkgs[@]} ] || fail "unexpected packages: $(ls "$tmp/out"/*.deb)"

# --- contents --------------------------------------------------------------------------
# files and symlinks of a package, "path" or "path -> target", config-specific
# export files as kport*Targets-CONFIG.cmake
contents() {
    dpkg-deb -c "$(deb "$1")" | awk '$1 !~ /^d/ {s = $6; for (i = 7; i <= NF; i++) s = s " " $i; print s}' \
        | sed -e 's|^\./||' -e 's|\(kport[A-Za-z]*Targets\)-[a-z]*\.cmake$|\1-CONFIG.cmake|' | sort
}
expect() { printf '%s\n' "$@" | sort; }
L=usr/$libdir
C=$L/cmake/kport
if [ "$shared" = "OFF" ]; then
    want_dev=$(expect usr/include/kport.h $L/libkport.a $L/pkgconfig/kport.pc $C/kportConfig.cmake \
        $C/kportConfigVersion.cmake $C/kportTargets.cmake $C/kportTargets-CONFIG.cmake)
else
    want_runtime=$(expect "$L/libkport.so.0 -> libkport.so.$version" "$L/libkport.so.$version")
    [ "$(contents "$runtime")" = "$want_runtime" ] || fail "$runtime holds:
$(contents "$runtime")
expected:
$want_runtime"
    want_dev=$(expect usr/include/kport.h "$L/libkport.so -> libkport.so.0" $L/libkport.a $L/pkgconfig/kport.pc \
        $C/kportConfig.cmake $C/kportConfigVersion.cmake $C/kportTargets.cmake $C/kportTargets-CONFIG.cmake)
fi
[ "$(contents "$dev")" = "$want_dev" ] || fail "$dev holds:
$(contents "$dev")
expected:
$want_dev"
want_tools=$(expect usr/bin/kport-bench usr/bin/kport-check usr/bin/kport-plot usr/bin/kport-sim usr/bin/kport-tune $L/libkport-pmpi.so \
    $C/kportPmpiTargets.cmake $C/kportPmpiTargets-CONFIG.cmake)
[ "$(contents "$tools")" = "$want_tools" ] || fail "$tools holds:
$(contents "$tools")
expected:
$want_tools"

# together: exactly what cmake --install installs
DESTDIR=$tmp/inst cmake --install "$build" --prefix /usr >"$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
installed=$(cd "$tmp/inst" && find . ! -type d | sed -e 's|^\./||' \
    -e 's|\(kport[A-Za-z]*Targets\)-[a-z]*\.cmake$|\1-CONFIG.cmake|' | sort)
packaged=$(for p in "${pkgs[@]}"; do contents "$p"; done | sed 's/ -> .*//' | sort)
[ "$installed" = "$packaged" ] || fail "packages and cmake --install differ:
$(diff <(echo "$installed") <(echo "$packaged"))"
step "contents: $(echo "$packaged" | wc -l) files in ${#pkgs[@]} packages"

# --- metadata ------------------------------------------------------------------------
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
has() { # PACKAGE FIELD ENTRY: ENTRY is one of the field's items, with or without a version
    field "$1" "$2" | tr ',' '\n' | sed -e 's/^ *//' -e 's/ *$//' \
        | awk -v e="$3" '$0 == e || index($0, e " (") == 1 { f = 1 } END { exit !f }' \
        || fail "$1: $2 lacks $3 (has: $(field "$1" "$2"))"
}
for p in "${pkgs[@]}"; do
    [ "$(field "$p" Package)" = "$p" ] || fail "$p: Package field $(field "$p" Package)"
    [ "$(field "$p" Version)" = "$version-1" ] || fail "$p: Version $(field "$p" Version), expected $version-1"
    [ "$(field "$p" Architecture)" = "$arch" ] || fail "$p: Architecture $(field "$p" Architecture)"
    [ -n "$(field "$p" Maintainer)" ] && [ -n "$(field "$p" Description)" ] || fail "$p: no Maintainer/Description"
    ! field "$p" Depends | grep -i "$other" >/dev/null || fail "$p depends on $other: $(field "$p" Depends)"
    has "$p" Conflicts "${p/$flavour/$other}"
    step "$p: Depends: $(field "$p" Depends)$(field "$p" Recommends | sed 's/^./; Recommends: &/')"
done
if [ "$shared" != "OFF" ]; then
    has "$runtime" Depends "$mpi_runtime"
    has "$runtime" Depends libc6
    [ "$(field "$runtime" Section)" = libs ] || fail "$runtime: Section $(field "$runtime" Section)"
    shlibs=$(dpkg-deb -I "$(deb "$runtime")" shlibs) || fail "$runtime has no shlibs file"
    [ "$shlibs" = "libkport 0 $runtime (>= $version)" ] || fail "$runtime shlibs: $shlibs"
    has "$dev" Depends "$runtime (= $version-1)"
fi
has "$dev" Depends "$mpi_dev"
has "$dev" Depends "$mpi_cc"
has "$tools" Depends "$mpi_runtime"
has "$tools" Recommends "$mpi_launcher"
has "$tools" Recommends python3-matplotlib

# --- unpacked into a temporary root ----------------------------------------------------
root=$tmp/root
for p in "${pkgs[@]}"; do dpkg-deb -x "$(deb "$p")" "$root"; done
file -L "$root/$L/libkport-pmpi.so" | grep ", stripped" >/dev/null || fail "libkport-pmpi.so is not stripped"
"$root/usr/bin/kport-check" allgather -a ring -P 4 -b 8 >/dev/null || fail "the packaged kport-check does not run"
export PKG_CONFIG_PATH=$root/$L/pkgconfig
flags=$(pkg-config --cflags --libs kport) || fail "pkg-config fails on the packaged kport.pc"
# shellcheck disable=SC2086
"$mpicc" "$src/examples/allgather_example.c" $flags -Wl,-rpath,"$root/$L" -o "$tmp/example" \
    || fail "compiling the example against the packages failed"
step "run ${mpiexec[*]} -n $np example (kport from the unpacked packages)"
ldd "$tmp/example" | grep "$root" >/dev/null || [ "$shared" = "OFF" ] || fail "the example does not load the packaged libkport.so"
"${mpiexec[@]}" -n "$np" "$tmp/example" >"$tmp/example.out" 2>&1 || { cat "$tmp/example.out" >&2; fail "example failed"; }
grep -q "allgather_example: OK" "$tmp/example.out" || { cat "$tmp/example.out" >&2; fail "example did not report OK"; }

step "PASS"
