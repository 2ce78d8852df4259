# kport quick start:  make bench   |   make test
# Both install what is missing (scripts/install-deps.sh), configure and build.
#   build/ompi   the library, tools and tests against Open MPI
#   build/mpich  the same against MPICH
#   build/asan   Open MPI build with AddressSanitizer + UndefinedBehaviorSanitizer
# These are the project's own builds: warnings are errors (KPORT_WERROR=ON;
# the library's default is OFF).
# make package: Debian packages (runtime, -dev, tools) for Open MPI and MPICH,
#   built in build/pkg-ompi and build/pkg-mpich (prefix /usr, no tests).

JOBS ?= 2
PREFIX ?= /usr/local
OMPI_CMAKE  = -DMPI_C_COMPILER=mpicc.openmpi -DMPIEXEC_EXECUTABLE=$(shell command -v mpirun.openmpi) -DKPORT_MPI_FLAVOR=openmpi
MPICH_CMAKE = -DMPI_C_COMPILER=mpicc.mpich -DMPIEXEC_EXECUTABLE=$(shell command -v mpiexec.mpich) -DKPORT_MPI_FLAVOR=mpich
PKG_CMAKE   = -DCMAKE_INSTALL_PREFIX=/usr -DKPORT_BUILD_TESTS=OFF

.PHONY: all deps build build-ompi build-mpich build-asan test bench report install package clean

all: build

deps:
	@bash scripts/install-deps.sh

build: build-ompi build-mpich

build-ompi: deps
	@cmake -S . -B build/ompi $(OMPI_CMAKE) -DKPORT_WERROR=ON >/dev/null
	@cmake --build build/ompi -j $(JOBS)

build-mpich: deps
	@cmake -S . -B build/mpich $(MPICH_CMAKE) -DKPORT_WERROR=ON >/dev/null
	@cmake --build build/mpich -j $(JOBS)

build-asan: deps
	@cmake -S . -B build/asan $(OMPI_CMAKE) -DKPORT_WERROR=ON -DKPORT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build build/asan -j $(JOBS)

test: build build-asan
	@bash scripts/run-tests.sh

bench: build
	@bash scripts/bench.sh

# every collective across real hosts on this machine, 2 x 2 and 3 x 2 (root;
# scripts/cluster.sh's namespaces): raw results in docs/bench/cluster/
.PHONY: bench-cluster
bench-cluster: build-ompi
	@bash scripts/bench-cluster.sh

# docs/PERFORMANCE.md from the raw results in docs/bench/ (no build, no MPI)
report:
	@python3 scripts/perf_report.py

install: build-ompi
	cmake --install build/ompi --prefix $(PREFIX)

package: deps
	@cmake -S . -B build/pkg-ompi $(OMPI_CMAKE) $(PKG_CMAKE) >/dev/null
	@cmake --build build/pkg-ompi -j $(JOBS)
	@cd build/pkg-ompi && cpack
	@cmake -S . -B build/pkg-mpich $(MPICH_CMAKE) $(PKG_CMAKE) >/dev/null
	@cmake --build build/pkg-mpich -j $(JOBS)
	@cd build/pkg-mpich && cpack
	@ls -1 build/pkg-ompi/*.deb build/pkg-mpich/*.deb

clean:
	rm -rf build
