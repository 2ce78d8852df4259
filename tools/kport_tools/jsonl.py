"""The one reader of JSON lines in kport's Python tools.

kport-bench and kport-sim with --format json write one JSON object per
line; files collected from runs hold blank lines, '#' comments and
sometimes a launcher's text. Every tool reads them through parse() (one
file's lines), or load() (a file, strict):

    for lineno, rec, err in jsonl.parse(f):      # err: the ValueError of a bad line
        ...
    recs = jsonl.load(path)                      # JsonlError on the first bad line

What a tool does with a bad line (refuse the file, skip it with a warning,
exit) stays the tool's own, with its own message; which lines count is
the same everywhere: blank lines and lines starting with '#' are skipped,
and with only_objects=True every line not starting with '{' (the text a
launcher or a table printed around the records)."""

import json
import sys


class JsonlError(ValueError):
    """A line of a JSON-lines file that is not JSON, or not a JSON object."""

    def __init__(self, path, lineno, cause):
        self.path, self.lineno, self.cause = path, lineno, cause
        super().__init__("%s:%d: %s" % (path, lineno, cause))


def open_input(path):
    """The text file at path, standard input for "-"; OSError as open raises it."""
    return sys.stdin if path == "-" else open(path, encoding="utf-8")


def parse(lines, only_objects=False):
    """(lineno, value, error) per JSON line of lines (an iterable of str,
    numbered from 1): value the parsed JSON (any type) and error None, or
    value None and error the ValueError json raised. Blank lines, lines
    starting with '#' and, with only_objects, lines not starting with '{'
    are skipped."""
    for lineno, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#") or (only_objects and not line.startswith("{")):
            continue
        try:
            yield lineno, json.loads(line), None
        except ValueError as e:
            yield lineno, None, e


def load(path, only_objects=False):
    """The records (JSON objects) of the file at path ("-": standard input);
    raises OSError, or JsonlError at the first line that is not JSON
    (cause: json's ValueError) or not an object (cause: "not a JSON
    object")."""
    out = []
    with open_input(path) as f:
        for lineno, rec, err in parse(f, only_objects):
            if err is not None:
                raise JsonlError(path, lineno, err)
            if not isinstance(rec, dict):
                raise JsonlError(path, lineno, "not a JSON object")
            out.append(rec)
    return out


def load_objects(path):
    """load(path, only_objects=True): the records of a file that may hold other text."""
    return load(path, only_objects=True)
