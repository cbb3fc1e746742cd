"""Where the command line's records go (``OUT``, stdout alone) and how they are printed:
an aligned table, JSON lines or CSV (contract: DESIGN.md; docs/guide/command-line.md)."""
from __future__ import annotations

import json
import math
import sys

from toolkit.outdir import json_default as _json_default
from toolkit.outdir import json_safe

TABLE_COLS = ("file", "name", "method", "backend", "status", "objective", "bound", "gap", "runtime_s",
              "verified")

# Where records go. ``solve.main`` sets it to the stdout it was given; run as a program, that
# is a private copy of file descriptor 1, and descriptor 1 itself (and Python's sys.stdout) is
# pointed at stderr, so nothing but records can reach the real stdout: not a solver banner
# printed from C, not a library's print(), not a warning (see ``records_only_stdout``).
OUT = sys.stdout


def out(text: str = "") -> None:
    print(text, file=OUT)


def records_only_stdout():
    """Give fd 1 to stderr and return a stream on the original stdout for the records."""
    import os

    sys.stdout.flush()
    try:
        fd = os.dup(1)
        os.dup2(2, 1)
    except OSError:              # no fd 1 (closed): records go wherever sys.stdout goes
        return sys.stdout
    stream = os.fdopen(fd, "w", encoding=sys.stdout.encoding or "utf-8",
                       errors=sys.stdout.errors or "strict", newline=None, buffering=1)
    sys.stdout = sys.stderr
    return stream


def _fmt(v):
    if v is None or (isinstance(v, str) and v == ""):
        return "-"
    if hasattr(v, "tolist"):            # numpy scalar or array
        v = v.tolist()
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, separators=(",", ":"), default=str)
    if isinstance(v, str):
        try:
            v = float(v) if v.lower() not in ("nan", "true", "false") else v
        except ValueError:
            return v
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.6g}"
    return str(v)


def print_records(recs: list[dict], fmt: str, extra: list[str] | None = None, stream=None):
    """Print records as an aligned table, JSON lines, or CSV."""
    stream = stream or OUT
    if fmt == "json":
        for r in recs:
            print(json.dumps(json_safe({k: v for k, v in r.items() if k != "solution"}),
                             default=_json_default, allow_nan=False), file=stream)
        return
    if not recs:
        return
    if fmt == "csv":                # the batch CSV's columns: core fields, then the rest
        from toolkit.records_csv import write_csv

        write_csv(recs, stream)
        return
    cols = list(TABLE_COLS) + [c for c in (extra or []) if c not in TABLE_COLS]
    recs = _with_file(recs)
    cells = [[_fmt(r.get(c)) for c in cols] for r in recs]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)), file=stream)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)), file=stream)


def _with_file(recs: list[dict]) -> list[dict]:
    """The records with a ``file`` field for the table: the instance file's name when no
    two different paths share it, else the path as given; ``method`` shows a variant's label
    (``milp:slots=2``, toolkit.variants)."""
    from toolkit.io import short_names

    names = short_names(str(r.get("instance") or "") for r in recs)
    return [{**r, "file": names[str(r.get("instance") or "")],
             "method": r.get("variant") or r.get("method")} for r in recs]


def print_by_problem(recs: list[dict]) -> None:
    """One table per problem, each with that problem's metric columns."""
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(r.get("problem") or "?", []).append(r)
    for i, (prob, rs) in enumerate(groups.items()):
        if len(groups) > 1:
            out(("\n" if i else "") + f"== {prob} ==")
        print_records(rs, "table", metric_cols(rs))


def metric_cols(recs) -> list[str]:
    """The metric columns of the records' problems that some record fills (first seen first)."""
    from toolkit.registry import problems

    cols = []
    for r in recs:
        p = problems().get(r.get("problem") or "")
        for c in (p.metrics if p else ()):
            if c not in cols and r.get(c) not in (None, ""):
                cols.append(c)
    return cols
