#!/usr/bin/env bash
# kport inside another CMake project, the two ways projects consume it:
#   subdir  the project vendors kport (kport/ beside its sources) and says
#           add_subdirectory(kport); BUILD_SHARED_LIBS unset (kport is static)
#   fetch   the project finds MPI itself, then FetchContent_Declare(kport URL
#           file://...tar.gz) of this source tree (no network) and
#           FetchContent_MakeAvailable(kport), with BUILD_SHARED_LIBS=ON
# Each links kport::kport and nothing else of kport, builds
# examples/allgather_example.c and runs it on NP ranks. Also checked: the
# aliases kport::kport_static and kport::pmpi exist and the drop-in library is
# built, kport's tools and tests are not, kport adds no unprefixed cache entry
# (BUILD_TESTING, BUILD_SHARED_LIBS), and its warning flags stay in its own
# directories.
#
# usage: test_embed.sh SOURCE_DIR MPICC NP MPIEXEC [MPIEXEC_ARGS...]
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

fail() { echo "test_embed: FAIL: $*" >&2; exit 1; }
step() { echo "test_embed: $*"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-embed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# checks appended to both projects' CMakeLists.txt, after the user's lines
checks='
foreach(t kport::kport kport::kport_static kport::pmpi)
  if(NOT TARGET ${t})
    message(FATAL_ERROR "embed check: no target ${t}")
  endif()
endforeach()
foreach(t kport-bench kport-check test_allgather unit_sched)
  if(TARGET ${t})
    message(FATAL_ERROR "embed check: kport built its tools/tests (${t}) as a subproject")
  endif()
endforeach()
foreach(v BUILD_TESTING BUILD_SHARED_LIBS)
  if(DEFINED CACHE{${v}})
    message(FATAL_ERROR "embed check: kport set the cache entry ${v}")
  endif()
endforeach()
get_directory_property(opts COMPILE_OPTIONS)
if(opts MATCHES "-W")
  message(FATAL_ERROR "embed check: kport changed the project'"'"'s compile options: ${opts}")
endif()
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/embed_check.txt CONTENT
  "pmpi=$<TARGET_FILE:kport::pmpi>\nkport_type=$<TARGET_PROPERTY:kport::kport,TYPE>\n")
'

# project DIR: configure (CMAKE_ARGS...), build, check, run
project() {
    local name=$1
    shift
    local p=$tmp/$name b=$tmp/$name-build log=$tmp/$name.log
    step "$name: cmake -S $p -B $b $*"
    cmake -S "$p" -B "$b" -DMPI_C_COMPILER="$mpicc" "$@" >"$log" 2>&1 \
        || { cat "$log" >&2; fail "$name: configuring the project failed"; }
    cmake --build "$b" -j 2 >>"$log" 2>&1 || { cat "$log" >&2; fail "$name: building the project failed"; }
    [ -x "$b/app" ] || fail "$name: no app built"
    pmpi=$(sed -n 's/^pmpi=//p' "$b/embed_check.txt")
    [ -f "$pmpi" ] || fail "$name: kport::pmpi ($pmpi) was not built"
    ! find "$b" -name kport-bench | grep . >/dev/null || fail "$name: kport-bench built"
    step "$name: run ${mpiexec[*]} -n $np app"
    "${mpiexec[@]}" -n "$np" "$b/app" >"$tmp/$name.out" 2>&1 || { cat "$tmp/$name.out" >&2; fail "$name: app failed"; }
    cat "$tmp/$name.out"
    grep -q "allgather_example: OK" "$tmp/$name.out" || fail "$name: app did not report OK"
}

# --- add_subdirectory(kport), kport vendored as kport/ -----------------------------
mkdir -p "$tmp/subdir"
ln -s "$src" "$tmp/subdir/kport"
cp "$src/examples/allgather_example.c" "$tmp/subdir/app.c"
cat >"$tmp/subdir/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(embed_subdir LANGUAGES C)
add_subdirectory(kport)
add_executable(app app.c)
target_link_libraries(app PRIVATE kport::kport)
EOF
echo "$checks" >>"$tmp/subdir/CMakeLists.txt"
project subdir
grep -q "^kport_type=STATIC_LIBRARY" "$tmp/subdir-build/embed_check.txt" \
    || fail "subdir: kport::kport is not static with BUILD_SHARED_LIBS unset"
! ldd "$tmp/subdir-build/app" | grep libkport >/dev/null || fail "subdir: app loads a shared libkport"

# --- FetchContent from a tarball of this tree ---------------------------------------
# the working tree as it is (uncommitted changes too), without builds and VCS data
tar -C "$src" --exclude=./build --exclude=./.git -czf "$tmp/kport-src.tar.gz" .
mkdir -p "$tmp/fetch"
cp "$src/examples/allgather_example.c" "$tmp/fetch/app.c"
cat >"$tmp/fetch/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(embed_fetch LANGUAGES C)
if(POLICY CMP0135)
  cmake_policy(SET CMP0135 NEW)
endif()
find_package(MPI REQUIRED COMPONENTS C)
include(FetchContent)
FetchContent_Declare(kport URL file://$tmp/kport-src.tar.gz)
FetchContent_MakeAvailable(kport)
add_executable(app app.c)
target_link_libraries(app PRIVATE MPI::MPI_C kport::kport)
EOF
echo "$checks" | sed 's/BUILD_TESTING BUILD_SHARED_LIBS/BUILD_TESTING/' >>"$tmp/fetch/CMakeLists.txt"
project fetch -DBUILD_SHARED_LIBS=ON
grep -q "^kport_type=SHARED_LIBRARY" "$tmp/fetch-build/embed_check.txt" \
    || fail "fetch: kport::kport is not shared with BUILD_SHARED_LIBS=ON"
[ -d "$tmp/fetch-build/_deps/kport-src" ] || fail "fetch: FetchContent did not unpack kport into _deps"
ldd "$tmp/fetch-build/app" | grep "$tmp/fetch-build/_deps/kport-build/libkport.so" >/dev/null \
    || fail "fetch: app does not load libkport.so from the build tree: $(ldd "$tmp/fetch-build/app" | grep kport)"

step "PASS"
