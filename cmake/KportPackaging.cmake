# Debian packages of kport with CPack, one per install component:
#
#   libkport0-<mpi>      runtime   libkport.so.0*
#   libkport-<mpi>-dev   dev       kport.h, libkport.so, libkport.a, kport.pc, CMake package
#   kport-<mpi>-tools    tools     kport-bench, kport-check, libkport-pmpi.so (+ kport::pmpi)
#
# <mpi> is the MPI the build uses (openmpi or mpich): Open MPI and MPICH are
# not ABI compatible, so each flavour has its own packages, which install the
# same files and conflict with the other flavour's. Dependencies:
#   runtime, tools  dpkg-shlibdeps (libc6, libopenmpi3 / libmpich12, versioned)
#   dev             the runtime package (= this version), the MPI's -dev package
#                   (mpi.h) and the package of the MPI compiler wrapper
#                   (kport.pc and kportConfig.cmake name it)
#   tools           recommends the package of the MPI launcher (mpirun/mpiexec)
# Package names come from `dpkg -S` on the files the build found, so they
# follow the machine's MPI.
#
#   cmake -S . -B build/pkg -DCMAKE_INSTALL_PREFIX=/usr [MPI options]
#   cmake --build build/pkg && (cd build/pkg && cpack)     # or: make package
#
# Configure with -DCMAKE_INSTALL_PREFIX=/usr to get Debian's multiarch library
# directory (/usr/lib/<triplet>); with another prefix GNUInstallDirs picks
# lib/, which the packages then install under /usr.

# --- which MPI ------------------------------------------------------------------
set(KPORT_PACKAGE_MPI "")
foreach(dir ${MPI_C_HEADER_DIR} ${MPI_C_INCLUDE_DIRS})
  if(NOT KPORT_PACKAGE_MPI AND EXISTS "${dir}/mpi.h")
    set(KPORT_MPI_H "${dir}/mpi.h")
    file(STRINGS "${dir}/mpi.h" kport_ompi REGEX "^#define OPEN_MPI ")
    file(STRINGS "${dir}/mpi.h" kport_mpich REGEX "^#define MPICH_VERSION ")
    if(kport_ompi)
      set(KPORT_PACKAGE_MPI openmpi)
    elseif(kport_mpich)
      set(KPORT_PACKAGE_MPI mpich)
    endif()
  endif()
endforeach()
if(NOT KPORT_PACKAGE_MPI)
  set(KPORT_PACKAGE_MPI "${KPORT_MPI_FLAVOR}")
endif()
set(KPORT_PACKAGE_FLAVOURS openmpi mpich)

# the Debian package that owns FILE (or the file a symlink points to), or ""
find_program(KPORT_DPKG dpkg)
mark_as_advanced(KPORT_DPKG)
function(kport_deb_owner file outvar)
  set(owner "")
  if(file AND NOT IS_ABSOLUTE "${file}")  # a bare program name (MPI_C_COMPILER=mpicc.openmpi): on PATH
    unset(KPORT_DEB_OWNER_PROG CACHE)
    find_program(KPORT_DEB_OWNER_PROG NAMES "${file}")
    set(file "${KPORT_DEB_OWNER_PROG}")
    unset(KPORT_DEB_OWNER_PROG CACHE)
  endif()
  if(KPORT_DPKG AND file AND EXISTS "${file}")
    get_filename_component(real "${file}" REALPATH)
    foreach(f "${file}" "${real}")
      if(NOT owner)
        execute_process(COMMAND ${KPORT_DPKG} -S "${f}" OUTPUT_VARIABLE out ERROR_QUIET RESULT_VARIABLE rc)
        if(rc EQUAL 0 AND out MATCHES "^([^:, ]+)")  # "libopenmpi-dev:amd64: /usr/..."
          set(owner "${CMAKE_MATCH_1}")
        endif()
      endif()
    endforeach()
  endif()
  set(${outvar} "${owner}" PARENT_SCOPE)
endfunction()

# --- package names ----------------------------------------------------------------
function(kport_package_names flavour runtime dev tools)
  set(${runtime} "libkport${PROJECT_VERSION_MAJOR}-${flavour}" PARENT_SCOPE)
  set(${dev} "libkport-${flavour}-dev" PARENT_SCOPE)
  set(${tools} "kport-${flavour}-tools" PARENT_SCOPE)
endfunction()
kport_package_names(${KPORT_PACKAGE_MPI} KPORT_PKG_RUNTIME KPORT_PKG_DEV KPORT_PKG_TOOLS)
set(KPORT_CONFLICTS_RUNTIME "")
set(KPORT_CONFLICTS_DEV "")
set(KPORT_CONFLICTS_TOOLS "")
foreach(f ${KPORT_PACKAGE_FLAVOURS})
  if(NOT f STREQUAL KPORT_PACKAGE_MPI)
    kport_package_names(${f} r d t)
    list(APPEND KPORT_CONFLICTS_RUNTIME ${r})
    list(APPEND KPORT_CONFLICTS_DEV ${d})
    list(APPEND KPORT_CONFLICTS_TOOLS ${t})
  endif()
endforeach()

set(KPORT_PACKAGE_CONTACT "kport developers <kport@invalid>" CACHE STRING
  "Maintainer field of the Debian packages")
set(KPORT_PACKAGE_RELEASE 1 CACHE STRING "Debian revision of the packages (version ${PROJECT_VERSION}-N)")
mark_as_advanced(KPORT_PACKAGE_CONTACT KPORT_PACKAGE_RELEASE)

# --- dependencies ---------------------------------------------------------------------
kport_deb_owner("${KPORT_MPI_H}" KPORT_DEB_MPI_DEV)             # libopenmpi-dev
kport_deb_owner("${MPI_C_COMPILER}" KPORT_DEB_MPI_CC)           # openmpi-bin
kport_deb_owner("${MPIEXEC_EXECUTABLE}" KPORT_DEB_MPI_LAUNCHER) # openmpi-bin / mpich
set(KPORT_MPI_RUNTIME_LIB "")
foreach(lib ${MPI_C_LIBRARIES})
  if(NOT KPORT_MPI_RUNTIME_LIB AND lib MATCHES "/lib(mpi|mpich)\\.so")
    set(KPORT_MPI_RUNTIME_LIB "${lib}")
  endif()
endforeach()
kport_deb_owner("${KPORT_MPI_RUNTIME_LIB}" KPORT_DEB_MPI_RUNTIME)  # libopenmpi3 (the .so.N)

find_program(KPORT_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(KPORT_DPKG_SHLIBDEPS)
set(KPORT_RUNTIME_DEPENDS "")
if(KPORT_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
elseif(KPORT_DEB_MPI_RUNTIME)
  # without dpkg-dev: name the MPI library's package ourselves
  set(KPORT_RUNTIME_DEPENDS ${KPORT_DEB_MPI_RUNTIME})
  message(STATUS "kport packages: dpkg-shlibdeps not found (dpkg-dev); runtime dependency: ${KPORT_DEB_MPI_RUNTIME}")
endif()

set(KPORT_DEV_DEPENDS "")
if(KPORT_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
  list(APPEND KPORT_DEV_DEPENDS "${KPORT_PKG_RUNTIME} (= ${PROJECT_VERSION}-${KPORT_PACKAGE_RELEASE})")
endif()
list(APPEND KPORT_DEV_DEPENDS ${KPORT_DEB_MPI_DEV} ${KPORT_DEB_MPI_CC})
list(REMOVE_DUPLICATES KPORT_DEV_DEPENDS)

# --- CPack ---------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kport)
set(CPACK_PACKAGE_VENDOR "kport")
set(CPACK_PACKAGE_CONTACT "${KPORT_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${KPORT_PACKAGE_RELEASE})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SECTION science)

set(CPACK_COMPONENTS_ALL "")
if(KPORT_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
  list(APPEND CPACK_COMPONENTS_ALL runtime)
endif()
list(APPEND CPACK_COMPONENTS_ALL dev)
if(KPORT_BUILD_TOOLS OR TARGET kport-pmpi)
  list(APPEND CPACK_COMPONENTS_ALL tools)
endif()

string(REPLACE ";" ", " kport_conflicts_runtime "${KPORT_CONFLICTS_RUNTIME}")
string(REPLACE ";" ", " kport_conflicts_dev "${KPORT_CONFLICTS_DEV}")
string(REPLACE ";" ", " kport_conflicts_tools "${KPORT_CONFLICTS_TOOLS}")
string(REPLACE ";" ", " kport_runtime_depends "${KPORT_RUNTIME_DEPENDS}")
string(REPLACE ";" ", " kport_dev_depends "${KPORT_DEV_DEPENDS}")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${KPORT_PKG_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${kport_runtime_depends}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONFLICTS "${kport_conflicts_runtime}")
# shlibs: packages linking libkport.so.N depend on this one (CPack adds the
# ldconfig calls to postinst/postrm itself)
file(WRITE ${PROJECT_BINARY_DIR}/deb-runtime/shlibs
  "libkport ${PROJECT_VERSION_MAJOR} ${KPORT_PKG_RUNTIME} (>= ${PROJECT_VERSION})\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/deb-runtime/shlibs)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
  "k-port, concurrent and hierarchical MPI collectives (${KPORT_PACKAGE_MPI})
kport implements MPI all-gather, gather, all-to-all and barrier with k-port,
concurrent and SMP-aware (shared-memory) algorithms on top of MPI. This
package holds the shared library libkport.so.${PROJECT_VERSION_MAJOR}, built against ${KPORT_PACKAGE_MPI}.")

set(kport_dev_libs "the static library libkport.a")
if(KPORT_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
  set(kport_dev_libs "libkport.so, the static library libkport.a")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${KPORT_PKG_DEV})
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${kport_dev_depends}")
set(CPACK_DEBIAN_DEV_PACKAGE_CONFLICTS "${kport_conflicts_dev}")
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)   # headers and an archive: no ELF objects to scan
set(CPACK_DEBIAN_DEV_DESCRIPTION
  "kport MPI collectives - development files (${KPORT_PACKAGE_MPI})
The header kport.h, ${kport_dev_libs},
the pkg-config file kport.pc and the CMake package (find_package(kport),
kport::kport) of kport built against ${KPORT_PACKAGE_MPI}. Compile with ${KPORT_PC_MPICC}.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME ${KPORT_PKG_TOOLS})
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${kport_runtime_depends}")
# kport-plot (a tool of this package) needs Python 3 with matplotlib
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "${KPORT_DEB_MPI_LAUNCHER}, python3-matplotlib")
set(CPACK_DEBIAN_TOOLS_PACKAGE_CONFLICTS "${kport_conflicts_tools}")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION
  "kport MPI collectives - tools and drop-in library (${KPORT_PACKAGE_MPI})
kport-bench (benchmark against the native MPI collectives), kport-check (the
schedule checker and GOAL export), kport-tune (writes the tuning file
KPORT_TUNING_FILE from kport-bench's measurements) and libkport-pmpi.so, which runs an
unmodified MPI program's MPI_Allgather, MPI_Gather, MPI_Alltoall and
MPI_Barrier through kport under LD_PRELOAD. Built against ${KPORT_PACKAGE_MPI}.")

include(CPack)
