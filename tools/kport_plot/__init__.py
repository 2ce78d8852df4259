"""kport-plot: draw the JSON lines of kport-bench and kport-sim as PNG and PDF figures.

    kport-plot [-o DIR] [--prefix NAME] [--formats png,pdf] [-q] FILE...

    mpirun.openmpi -np 2 kport-bench loggp -o params.json
    mpirun.openmpi -np 2 kport-bench allgather --predict params.json --format json > ag-ompi.jsonl
    mpiexec.mpich  -n 2  kport-bench allgather --predict params.json --format json > ag-mpich.jsonl
    kport-plot -o plots ag-ompi.jsonl ag-mpich.jsonl     # one figure set for both MPIs

    scripts/sim_sweep.sh -o sweep           # kport-sim over algorithms x P x sizes
    kport-plot -o plots sweep/sim.jsonl      # scaling study and winner heat map

FILE is a file of JSON lines written by any kport-bench subcommand with
--format json, or by kport-sim --format json (one object per run),
("-" reads standard input); blank lines and lines starting with '#' are
skipped. A file whose text starts with '[' is read as one JSON array of
such objects instead. Records of several files (the Open MPI and the MPICH
run, several subcommands) are drawn together: every figure below is drawn
once per group of records that belong together, with one panel per MPI
build where a figure compares algorithms. Files written (NAME = what the
figure shows, each as DIR/PREFIXNAME.png and .pdf):

  collectives (allgather, barrier, gather, alltoall, bcast, scatter,
  reduce, allreduce, reduce_scatter_block, reduce_scatter; one set per
  collective, P, reduction type and op, mode - isolated calls or
  back-to-back batches - and root):
    COLL-pP[-TYPE-OP][-b2bN][-rootR]-latency    median latency (us per
        call) against the message size per kport algorithm, with the native
        collective of every MPI build as black lines in every panel, the
        memcpy reference dotted and allreduce's bw_limit dashed (grey);
        TYPE-OP only for reductions other than double and sum; barrier (no
        size): bars per algorithm, the prediction (when present) a black
        dash on each bar
    ...-ratio     each median over the better native median of the same size
        (all builds, as scripts/bench_report.py computes it); below 1 kport
        is faster
    ...-predicted  (records with "predicted_us", kport-bench --predict) per
        algorithm the measured median (solid) and the cost model's
        prediction (dashed) against the size
    ...-scatter    predicted against measured, every (build, algorithm,
        size) one point, the line y = x and the band of +-25%; the legend
        gives each build's median error |predicted/measured - 1| and how
        many points lie in the band
    ...-limit      (records with "bw_limit_us", kport-bench allreduce) every
        kport algorithm's and the native median over the memory-bandwidth
        limit measured in the same run, against the size, one panel per
        build; lines at 1 (the limit) and 1.2
  fanout-pP... -> fanout                  RTT(P)/P measured (solid, from
        "rtt_per_p_us") and LogP-predicted (dashed, "predicted_per_p_us",
        kport-bench fanout --params) against P, one line per size, one panel
        per build; oversubscribed points (more ranks than cores) hollow, and
        runs that were oversubscribed at all ("run_oversubscribed": MPI then
        waits by yielding, even at small P) dotted lines of their own
  churn-COLLECTIVE                        time per cycle (create, calls,
        free) against the calls per communicator, native dashed and kport
        solid, one panel per way of creating the communicator
  concurrency-pP      per build: T_all(k) and T_first(k) against the size
        per k; shared-memory against MPI point to point; k concurrent
        memcpy operations
  strided-PATTERN-pP  strided one-sided operations: median against the bytes
        moved per variant (colour) and shape (line style), one panel per op
  loggp-pP            per build: RTT/2 of MPI point to point per channel
        with the fitted LogGP time of one message per piece (and the load
        average loggp saw, from its "load" record); the measured gap and
        overheads; kport's shared-memory operations with their fits

  kport-sim records (a collective's "coll" with "max_time_ns" and no
  "median_us"; each needs "algorithm", "P", "max_time_ns"; "bytes",
  "node_size", "rails" and "label" are read when present). A line is an
  optional "label" (the spec a script asked for, e.g. "bruck:k=2") or else
  the algorithm as run without its clamping note, plus "[n=16, rails=2]"
  when node_size / rails are above 1:
    sim-COLL-SIZE-scaling   (sim-barrier-scaling) the simulated completion
        time (max over ranks, us) against P on log-log axes, one line per
        algorithm; one figure per collective and message size
    sim-COLL-winner         heat map over (P, size) of the fastest line,
        categorical colours (the same as in the scaling figures) with a
        legend; each cell gives the runner-up's time over the winner's
        (x1.23; "only" where one line was simulated at that point) when the
        grid has at most 400 cells. The winner is among the lines simulated
        at that (P, size): a line run only to P=16384 (ring, direct) takes
        no part above it.

Records of other kinds, and records whose status is not "ok" (n/a, error),
are skipped and counted in a message on stderr. If several records share
one point (repeated runs), the median of their medians is drawn.

Scales: message sizes on a log2 axis labelled in B / KiB / MiB (size 0 is
left out, with a message); a value axis
is logarithmic when its values span more than a decade (non-positive values,
e.g. copies below the clock's resolution, are then left out). Titles name the
collective, the MPI libraries and versions, P and the date: a record's
"date" field if it has one, else the date of its file (its modification
time).

Output: the names of the files written, one per line on stdout (-q: none);
progress on stderr, only when stderr is a terminal.

Exit status: 0 figures written; 2 bad usage or bad input - a file that
cannot be read, a line that is not JSON or not a JSON object, a record of a
known kind that lacks a field the figures need or has a wrong type, no
record of any kind kport-plot draws (the message names file and line); 3
matplotlib is missing (Debian: apt-get install python3-matplotlib, which
scripts/install-deps.sh does); 1 a figure could not be written.

Interpreter: when `python3` on the PATH lacks matplotlib (a pyenv or venv
interpreter) and /usr/bin/python3 has it (Debian's python3-matplotlib),
kport-plot runs itself under /usr/bin/python3.

Python 3 and matplotlib only (numpy comes with matplotlib and is not used).
"""

# The package (tools/kport-plot is its entry point; an installed kport-plot
# is one zip of it, tools/kport_tools/bundle.py):
#   records.py      reading: which records there are, what each needs
#   common.py       helpers of every figure: names, sizes, medians, titles
#   axes.py         Axes: the figures' axes, colours, legends, writing
#   collectives.py  CollectiveFigures: latency, ratio, predicted, scatter
#   machine.py      MachineFigures: fanout, churn, concurrency, strided, loggp
#   sim.py          SimFigures: kport-sim's scaling study and winner map
#   main.py         the command line and main()
