"""Names of MPI builds, as kport-bench writes them in "mpi" ("Open MPI
4.1.4", "MPICH 4.0.2"): the short tag the reports and figures use."""

import re


def mpi_tag(mpi):
    """Short name of an MPI library string: "Open MPI 4.1.4" -> "ompi"."""
    low = mpi.strip().lower()
    for prefix, tag in (("open mpi", "ompi"), ("mvapich", "mvapich"), ("mpich", "mpich"),
                        ("intel", "impi"), ("cray", "cray"), ("spectrum", "smpi")):
        if low.startswith(prefix):
            return tag
    words = re.findall(r"[a-z0-9]+", low)
    return words[0] if words else "mpi"
