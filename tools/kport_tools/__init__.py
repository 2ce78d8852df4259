"""What kport's Python tools share (tools/kport-plot, tools/kport-tune,
scripts/*.py): jsonl.py reads the JSON lines kport-bench and kport-sim write
(--format json); mpi.py names MPI builds; bundle.py makes an installed tool
one executable file (a zip application of the tool and these packages).

Standard library only. The scripts find this package by putting tools/ on
sys.path; an installed tool carries it inside its zip."""
