"""kport-plot: reading. Which kinds of records kport-plot draws, the fields
each needs, and load(): every file's records checked, or BadInput naming
the file and line (the manual: kport_plot/__init__.py)."""

import datetime
import json
import math
import os
import sys

from kport_tools import jsonl

EXIT_IO = 1
EXIT_BAD = 2
EXIT_NO_MATPLOTLIB = 3

COLLECTIVES = ("allgather", "barrier", "gather", "alltoall", "bcast", "scatter", "reduce", "allreduce",
               "reduce_scatter_block", "reduce_scatter")
SIZELESS = ("barrier",)
# columns that are not kport algorithms: the native MPI and kport-bench's references
NOT_KPORT = ("native", "memcpy", "sendrecv", "bw_limit")
# what a record's "size" is, per collective (the size axis' label)
SIZE_LABEL = {"alltoall": "message size (bytes per rank pair)", "bcast": "message size (bytes)",
              "reduce": "vector size (bytes)", "allreduce": "vector size (bytes)",
              "reduce_scatter_block": "result block size (bytes per rank)",
              "reduce_scatter": "vector size (bytes; uneven blocks)"}

NUMBER = "number"
TEXT = "text"
# Fields each kind of record needs (checked on records with status "ok").
REQUIRED = {
    "collective": {"algorithm": TEXT, "mpi": TEXT, "P": NUMBER, "size": NUMBER, "median_us": NUMBER},
    "fanout": {"mpi": TEXT, "P": NUMBER, "size": NUMBER, "rtt_per_p_us": NUMBER},
    "churn": {"mpi": TEXT, "P": NUMBER, "collective": TEXT, "how": TEXT, "calls": NUMBER,
              "variant": TEXT, "median_us": NUMBER},
    "concurrency": {"mpi": TEXT, "P": NUMBER, "test": TEXT, "k": NUMBER, "size": NUMBER,
                    "median_us": NUMBER},
    "strided": {"mpi": TEXT, "P": NUMBER, "op": TEXT, "pattern": TEXT, "shape": TEXT,
                "bytes": NUMBER, "variant": TEXT, "median_us": NUMBER},
    "loggp": {"mpi": TEXT, "P": NUMBER, "kind": TEXT},
    "sim": {"algorithm": TEXT, "P": NUMBER, "max_time_ns": NUMBER},
}
LOGGP_REQUIRED = {
    "p2p": {"channel": TEXT, "size": NUMBER, "rtt_half_us": NUMBER, "gap_us": NUMBER,
            "o_s_us": NUMBER, "o_r_us": NUMBER},
    "shm": {"op": TEXT, "size": NUMBER, "time_us": NUMBER},
}
LOGGP_FIT_P2P = {"channel": TEXT, "piece": NUMBER, "max_bytes": NUMBER, "L_ns": NUMBER,
                 "o_s_ns": NUMBER, "o_r_ns": NUMBER, "G_ns_per_byte": NUMBER, "O_ns_per_byte": NUMBER}
LOGGP_FIT_SHM = {"op": TEXT, "fixed_ns": NUMBER}  # "per_byte_ns" when the op has sizes


class BadInput(Exception):
    pass


class CannotWrite(Exception):
    pass


def say(msg):
    print("kport-plot: " + msg, file=sys.stderr)


PROGRESS = sys.stderr.isatty()


def progress(msg):
    if PROGRESS:
        print("kport-plot: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

def kind_of(r):
    coll = r.get("coll")
    if coll in COLLECTIVES and "max_time_ns" in r and "median_us" not in r:
        return "sim"  # kport-sim --format json
    if coll in COLLECTIVES:
        return "collective"
    if coll in REQUIRED:
        return coll
    return None


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_fields(r, fields, where, kind):
    for name, typ in fields.items():
        if name not in r:
            raise BadInput('%s: %s record lacks the field "%s"' % (where, kind, name))
        v = r[name]
        if typ == NUMBER and not is_number(v):
            raise BadInput('%s: %s record: "%s" is %s, not a number' % (where, kind, name, json.dumps(v)))
        if typ == TEXT and not isinstance(v, str):
            raise BadInput('%s: %s record: "%s" is %s, not a string' % (where, kind, name, json.dumps(v)))


def status_ok(r):
    s = r.get("status", "ok")
    return s == "ok" or s == 0  # kport-bench strided writes 0


def entries(name, lines):
    """(where, record) of a file's text: JSON lines (blank lines and lines
    starting with '#' skipped), or one JSON array of objects (kport-sim
    records collected by a script) when the text starts with '['."""
    text = "".join(lines)
    if text.lstrip().startswith("["):
        try:
            arr = json.loads(text)
        except ValueError as e:
            raise BadInput("%s: not a JSON array (%s)" % (name, e))
        if not isinstance(arr, list):
            raise BadInput("%s: not a JSON array" % name)
        for i, r in enumerate(arr):
            if not isinstance(r, dict):
                raise BadInput("%s: element %d: not a JSON object" % (name, i))
            yield "%s: element %d" % (name, i), r
        return
    for lineno, r, e in jsonl.parse(lines):
        where = "%s:%d" % (name, lineno)
        if e is not None:
            raise BadInput("%s: not JSON (%s); kport-plot reads kport-bench or kport-sim --format json output"
                           % (where, e))
        if not isinstance(r, dict):
            raise BadInput("%s: not a JSON object; kport-plot reads kport-bench or kport-sim --format json output"
                           % where)
        yield where, r


def load(paths):
    """Known records (each with "_kind", "_date") and counts of skipped ones."""
    records, unknown, not_ok = [], {}, 0
    for path in paths:
        if path == "-":
            f, date = sys.stdin, datetime.date.today().isoformat()
        else:
            try:
                f = open(path, encoding="utf-8")
                date = datetime.date.fromtimestamp(os.path.getmtime(path)).isoformat()
            except OSError as e:
                raise BadInput("%s: cannot read: %s" % (path, e.strerror or e))
        name = "standard input" if path == "-" else path
        with f:
            try:
                lines = list(f)
            except (OSError, UnicodeDecodeError) as e:
                raise BadInput("%s: cannot read: %s" % (name, e))
        for where, r in entries(name, lines):
            kind = kind_of(r)
            if kind is None:
                label = r.get("coll") if isinstance(r.get("coll"), str) else "(no \"coll\" field)"
                unknown[label] = unknown.get(label, 0) + 1
                continue
            if not status_ok(r):
                not_ok += 1
                continue
            check_fields(r, REQUIRED[kind], where, "kport-sim " + r["coll"] if kind == "sim" else r["coll"])
            if kind == "loggp":
                k = r["kind"]
                if k == "fit" and ("op" in r or "channel" in r):
                    check_fields(r, LOGGP_FIT_SHM if "op" in r else LOGGP_FIT_P2P, where, "loggp fit")
                    if r.get("per_byte_ns") is not None and not is_number(r["per_byte_ns"]):
                        raise BadInput('%s: loggp fit record: "per_byte_ns" is not a number' % where)
                elif k in LOGGP_REQUIRED:
                    check_fields(r, LOGGP_REQUIRED[k], where, "loggp " + k)
                elif k == "load":  # the machine's load while loggp measured: named in the title
                    pass
                else:
                    unknown["loggp/" + str(k)] = unknown.get("loggp/" + str(k), 0) + 1
                    continue
            if kind == "collective":
                for opt in ("predicted_us", "calls_per_batch", "root", "bw_limit_us"):
                    if r.get(opt) is not None and not is_number(r[opt]):
                        raise BadInput('%s: %s record: "%s" is %s, not a number'
                                       % (where, r["coll"], opt, json.dumps(r[opt])))
                for opt in ("type", "op"):
                    if r.get(opt) is not None and not isinstance(r[opt], str):
                        raise BadInput('%s: %s record: "%s" is %s, not a string'
                                       % (where, r["coll"], opt, json.dumps(r[opt])))
            if kind == "sim":
                for opt in ("bytes", "node_size", "rails"):
                    if r.get(opt) is not None and not is_number(r[opt]):
                        raise BadInput('%s: kport-sim record: "%s" is %s, not a number'
                                       % (where, opt, json.dumps(r[opt])))
                if r.get("label") is not None and not isinstance(r["label"], str):
                    raise BadInput('%s: kport-sim record: "label" is %s, not a string' % (where, json.dumps(r["label"])))
            if kind == "fanout" and r.get("predicted_per_p_us") is not None \
                    and not is_number(r["predicted_per_p_us"]):
                raise BadInput('%s: fanout record: "predicted_per_p_us" is not a number' % where)
            d = r.get("date")
            r["_date"] = d[:10] if isinstance(d, str) and d else date
            r["_kind"] = kind
            records.append(r)
    return records, unknown, not_ok
