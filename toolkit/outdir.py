"""The ``--out`` folder of ``solve``, ``batch`` and ``gap``: its layout and its files.

    DIR/records.csv                         the records, one row per run (the batch CSV)
    DIR/<stem>-<hash>.<method>.json         one run's record with its solution
    DIR/<stem>-<hash>.<method>.iis.ilp      the IIS of an infeasible model (Gurobi)

``<stem>`` is the instance file's name without ``.json``; ``<hash>`` is the first 8 hex
digits of the SHA-256 of its resolved path, so two files of the same name in different
folders never share a solution file, and a rerun of the same file and method replaces
its own. ``<method>`` is the method, or its variant label with ``:`` written ``+``
(``milp+slots=2``, :mod:`toolkit.variants`; other characters that a file name should not
hold as ``_``). ``gap`` adds its report (see :mod:`toolkit.gap_report`).
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
from pathlib import Path

RECORDS_CSV = "records.csv"
# columns kept as text when a row is read back (names, paths, keys that may look numeric)
TEXT_FIELDS = ("instance", "name", "problem", "method", "backend", "status", "message",
               "backend_reason", "versions", "run_key", "path", "settings", "iis_file",
               "variant", "bound_scope")


class OutDirError(ValueError):
    """``--out`` names something that is not a folder."""


class RecordsError(ValueError):
    """A records CSV to resume from that is not one (one line naming the file and line)."""


REQUIRED_COLUMNS = ("instance", "method", "status")
NUMBER_COLUMNS = ("objective", "bound", "gap", "runtime_s", "n_vars", "n_int_vars", "n_constrs",
                  "problem_bound")                     # empty or a number ("nan" included)


def _bad_cell(row: dict) -> str | None:
    """The first core cell of a records-CSV row that no run writes, as "column 'value'"."""
    for c in NUMBER_COLUMNS:
        v = row.get(c, "")
        try:
            v == "" or float(v)
        except ValueError:
            return f"{c} {v[:40]!r} is not a number"
    if row.get("verified", "") not in ("", "True", "False"):
        return f"verified {row['verified'][:40]!r} is not True or False"
    return None


def read_records(path: str | Path) -> tuple[list[str], list[dict], bool]:
    """The records CSV ``path`` as (header, rows, clean); RecordsError when it is not one.

    [DECISION] A last row with fewer fields and no final newline is a write cut short (a
    kill mid-line): it is dropped with a warning, so its task reruns. Anything else that
    is not this toolkit's CSV (not UTF-8, a NUL byte, a header without instance, method
    and status, a row whose field count is not the header's) is refused, not repaired:
    the file is the user's record of finished runs. ``clean`` is False when the file does
    not end in a newline (the next write must rewrite it, not append to it).
    """
    import csv
    import io
    import logging

    p = Path(path)
    if p.is_dir():
        raise RecordsError(f"{p}: is a folder, not a records CSV")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise RecordsError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RecordsError(f"{p}: line {line}: not UTF-8 text (byte {raw[exc.start]:#04x}); "
                           f"not a records CSV (move it away to start afresh)") from None
    if "\0" in text:
        raise RecordsError(f"{p}: line {text.count(chr(10), 0, text.index(chr(0))) + 1}: "
                           f"a NUL byte; not a records CSV (move it away to start afresh)")
    if not text.strip():
        return [], [], True
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing or len(set(header)) != len(header):
            what = f"lacks column(s) {', '.join(missing)}" if missing else "repeats a column"
            raise RecordsError(f"{p}: line 1: the header {what}; not a records CSV written "
                               f"by solve/batch/gap --out (move it away to start afresh)")
        rows = []
        for cells in reader:
            if not cells:
                continue
            if len(cells) != len(header):
                if len(cells) < len(header) and reader.line_num == text.count("\n") + 1 \
                        and not text.endswith("\n"):
                    logging.getLogger(__name__).warning(
                        "%s: line %d: a row cut short (%d of %d fields, no final newline) "
                        "is dropped; its run is redone", p, reader.line_num, len(cells),
                        len(header))
                    continue
                raise RecordsError(f"{p}: line {reader.line_num}: {len(cells)} fields, the "
                                   f"header has {len(header)}; not a records CSV (move it "
                                   f"away to start afresh)")
            row = dict(zip(header, cells))
            bad = _bad_cell(row)
            if bad:
                raise RecordsError(f"{p}: line {reader.line_num}: {bad}; not a records CSV "
                                   f"(move it away to start afresh)")
            rows.append(row)
    except csv.Error as exc:
        raise RecordsError(f"{p}: line {reader.line_num}: {exc}") from None
    return header, rows, text.endswith("\n")


def out_dir(path: str | Path, flag: str = "--out") -> Path:
    """``path`` as the ``--out`` folder (created); OutDirError when it is an existing file,
    or a ``.csv`` name (``--out`` used to be a CSV file: the records go to DIR/records.csv)."""
    if str(path) == "":                 # Path("") is ".": it was the current folder
        raise OutDirError(f"{flag}: an empty path; {flag} names a folder")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutDirError(f"{flag} {path}: is a file; {flag} names a folder "
                          f"(records go to DIR/{RECORDS_CSV})")
    if not p.exists() and p.suffix.lower() == ".csv":
        raise OutDirError(f"{flag} {path}: {flag} names a folder, not a CSV file "
                          f"(records go to DIR/{RECORDS_CSV})")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:      # a parent is a file, no permission, a read-only file system
        raise OutDirError(f"{flag} {path}: cannot create the folder ({exc.strerror or exc})") from None
    return p


def run_name(instance: str | Path, method: str) -> str:
    """``<stem>-<hash of the resolved path>.<method>``: one run's file name without suffix
    (``method``: a method name or a variant label)."""
    import re

    p = Path(instance)
    digest = hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:8]
    return f"{p.stem}-{digest}." + re.sub(r"[^\w.,=+-]", "_", method.replace(":", "+"))


def solution_path(folder: str | Path, instance: str | Path, method: str) -> Path:
    return Path(folder) / f"{run_name(instance, method)}.json"


def iis_path(folder: str | Path, instance: str | Path, method: str) -> Path:
    return Path(folder) / f"{run_name(instance, method)}.iis.ilp"


def json_safe(rec: dict) -> dict:
    """The record with every non-finite number replaced by null (JSON has no NaN or
    Infinity; ``json.loads`` of another language would fail), and the fields so replaced
    named in ``message``."""
    hit: list[str] = []
    out_ = null_nonfinite(rec, "", hit)
    if hit:
        note = "non-finite values written as null: " + ", ".join(hit[:5]) + \
            (f" and {len(hit) - 5} more" if len(hit) > 5 else "")
        out_["message"] = f"{out_['message']}; {note}" if out_.get("message") else note
    return out_


def null_nonfinite(v, path: str = "", hit: list | None = None):
    """``v`` with every non-finite float as None, numpy values as Python ones and dict keys
    as text (JSON and CSV cells alike); ``hit`` gets ``path=value`` of each replaced one."""
    if hasattr(v, "tolist"):            # numpy scalar or array
        v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        if hit is not None:
            hit.append(f"{path}={v!r}")
        return None
    if isinstance(v, dict):
        return {str(k): null_nonfinite(x, f"{path}.{k}" if path else str(k), hit)
                for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [null_nonfinite(x, f"{path}[{i}]", hit) for i, x in enumerate(v)]
    return v


def json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def write_solution(folder: str | Path, rec: dict, name: str | None = None) -> Path | None:
    """Write the record (with its ``solution``) to its solution file; None without one.
    ``name``: its :func:`run_name`, when the caller made it already."""
    from toolkit.io import write_text_atomic

    if rec.get("solution") is None:
        return None
    name = name or run_name(rec["instance"], rec.get("variant") or rec["method"])
    path = Path(folder) / f"{name}.json"
    write_text_atomic(path, record_json(rec) + "\n")
    return path


def record_json(rec: dict) -> str:
    """``rec`` as JSON text, one field a line, each value compact. The common case goes
    straight to json's C encoder (a solution of 10^5 numbers in milliseconds, where the
    indented encoder and :func:`json_safe`'s walk took 0.3 s, issue 29 item 3), without
    its check for reference cycles (a record has none; the check's bookkeeping per list
    was a third of a 64-Pod configuration's 3 ms; a cycle would end in RecursionError
    here as in :func:`json_safe`); a numpy integer array, in a field or in a field's
    object (a solution as ``Problem.solution_to_file`` gives it), is written by
    :func:`int_array_json`, the same text; a record holding a non-finite number or a key
    JSON cannot write goes through :func:`json_safe`."""
    enc = json.JSONEncoder(allow_nan=False, default=json_default, separators=(",", ":"),
                           check_circular=False)

    def value(v) -> str:
        if _int_array(v):
            return int_array_json(v)
        if isinstance(v, dict) and any(map(_int_array, v.values())):
            return "{" + ",".join(f"{json.dumps(str(k))}:{value(x)}" for k, x in v.items()) + "}"
        return enc.encode(v)

    def text(r: dict) -> str:
        return "{\n" + ",\n".join(f" {json.dumps(str(k))}: {value(v)}" for k, v in r.items()) \
            + "\n}"
    try:
        return text(rec)
    except (ValueError, TypeError):
        return text(json_safe(rec))


def _int_array(v) -> bool:
    return type(v).__name__ == "ndarray" and v.dtype.kind in "iu" and v.ndim in (1, 2)


def int_array_json(a) -> str:
    """``json.dumps(a.tolist(), separators=(",", ":"))`` of a 1-D or 2-D integer array,
    composed with numpy where its numbers have at most 4 digits (a 64-Pod configuration's
    33,000 numbers in about 0.5 ms, where the list and json's encoder took 3 ms, issue 29
    item 3): each number gets 8 bytes, what precedes it ("[[", ",", "],[" or "[" and
    ","), its sign and its digits, unused bytes 0, and their nonzero bytes are the text."""
    import numpy as np

    rows = a.reshape(1, -1) if a.ndim == 1 else a
    if not rows.size or rows.min() <= -10_000 or rows.max() >= 10_000:
        return json.dumps(a.tolist(), separators=(",", ":"))
    v = rows.astype(np.int32)
    lead = np.full(v.shape, ord(","), dtype="<u4")          # bytes 0-2: what precedes it
    lead[:, 0] = (ord("]") | ord(",") << 8 | ord("[") << 16) if a.ndim == 2 else ord(",")
    lead[0, 0] = ord("[") | ord("[") << 8 if a.ndim == 2 else ord("[")
    lead[v < 0] |= ord("-") << 24                           # byte 3: the sign
    cell = np.empty(v.shape + (2,), dtype="<u4")
    cell[..., 0] = lead
    cell[..., 1] = _digits()[np.abs(v)]                    # bytes 4-7: the digits
    text = cell.view(np.uint8).ravel()
    return (text[text > 0].tobytes() + (b"]]" if a.ndim == 2 else b"]")).decode("ascii")


@functools.lru_cache(maxsize=None)
def _digits():
    """The digits of 0..9999 as 4 bytes each (little-endian 32-bit words), right-aligned
    after zero bytes."""
    import numpy as np

    n = np.arange(10_000)
    out = np.zeros((10_000, 4), dtype=np.uint8)
    for d in range(4):                          # byte 3 - d: digit d, if the number has it
        out[:, 3 - d] = np.where((n >= 10 ** d) | (d == 0), n // 10 ** d % 10 + 48, 0)
    return out.view("<u4").ravel()


def from_cell(field: str, v):
    """A records-CSV cell as the record's value (the inverse of ``batch.csv_cell``): empty
    is None, True/False are bools, numbers are int or float, JSON arrays and objects are
    decoded; TEXT_FIELDS stay text. Values that are not text are returned as they are."""
    if not isinstance(v, str) or field in TEXT_FIELDS:
        return None if v == "" else v
    if v == "":
        return None
    if v in ("True", "False"):
        return v == "True"
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    if v[0] in "[{":
        try:
            return json.loads(v)
        except ValueError:
            pass
    return v


def from_row(row: dict) -> dict:
    """A records-CSV row (text, or values as the sink keeps them) as a record."""
    return {k: from_cell(k, v) for k, v in row.items()}
