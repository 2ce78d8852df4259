#!/usr/bin/env bash
# Install what kport needs to build, test, benchmark and package, if it is
# missing: a C compiler, make, cmake (with cpack), Open MPI and MPICH (with
# their development files), python3 (for the benchmark report) and
# python3-matplotlib (kport-plot's figures), pkg-config,
# ARMCI-MPI (libarmci-mpi-dev, kport-bench strided's comparison),
# and for the Debian packages dpkg-dev (dpkg-shlibdeps) and file (cpack
# uses both to compute the packages' library dependencies), and for
# scripts/cluster.sh (hosts as namespaces, the cluster_* tests) iproute2
# (ip), util-linux (unshare, nsenter) and iputils-ping (ping). Idempotent: does
# nothing when everything is there. Debian / Ubuntu (apt-get); run as root or
# with sudo.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have cc || have gcc || need+=(gcc)
have make || need+=(make)
have cmake || need+=(cmake)
have mpicc.openmpi || need+=(openmpi-bin libopenmpi-dev)
have mpirun.openmpi || need+=(openmpi-bin)
have mpicc.mpich || need+=(mpich libmpich-dev)
have mpiexec.mpich || need+=(mpich)
have python3 || need+=(python3)
# kport-plot (make bench's figures, the plot_* tests): matplotlib for the
# python3 on the PATH or for Debian's /usr/bin/python3 (kport-plot runs
# itself under the latter when the former lacks it)
py_has() { for py in python3 /usr/bin/python3; do "$py" -c "import $1" >/dev/null 2>&1 && return 0; done; return 1; }
py_has matplotlib || need+=(python3-matplotlib)
have pkg-config || need+=(pkgconf)
have dpkg-shlibdeps || need+=(dpkg-dev)
have file || need+=(file)
# scripts/cluster.sh: namespaces, veth pairs and a bridge, a reachability check
have ip || need+=(iproute2)
have nsenter || need+=(util-linux)
have ping || need+=(iputils-ping)
# ARMCI-MPI, the library kport-bench strided and examples/srumma compare with
[ -e /usr/include/armci.h ] || need+=(libarmci-mpi-dev)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
echo "install-deps: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if have sudo; then SUDO=sudo; else
        echo "install-deps: need root (or sudo) to install: ${need[*]}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2068
$SUDO apt-get install -y -qq --no-install-recommends ${need[@]} >/dev/null
