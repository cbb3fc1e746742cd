"""The records CSV of batches, gap studies and ``solve --out`` (toolkit.batch): an
append-only file keyed by run key whose header grows with new columns (:class:`CsvSink`),
and records as CSV cells and tables (:func:`csv_cell`, :func:`csv_columns`,
:func:`write_csv`)."""
from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from toolkit.io import BackgroundSync, fsync_path, write_text_atomic
from toolkit.outdir import null_nonfinite, read_records
from toolkit.run import CORE_FIELDS
from toolkit.variants import label

RETRY_STATUSES = ("error", "interrupted")
SYNC_S = 1.0            # the records CSV is fsynced at most this often (and at the end)


def path_method(row: dict) -> tuple[str, str]:
    """A row's (file, method row: its variant label); rows without a ``path`` resolve their
    ``instance``."""
    return (row.get("path") or str(Path(row["instance"]).resolve()), label(row))


class CsvSink:
    """Append-only CSV of records with a header that grows when new columns appear.

    A row is identified by its ``run_key``; appending a row replaces the row of the same
    key and any ``error``/``interrupted`` row of the same (file, method), nothing else.
    With ``path=None`` the rows are kept in memory only.
    """

    def __init__(self, path: str | Path | None):
        self.path = None if path is None else Path(path)
        self.header: list[str] = []
        self.rows: list[dict] = []
        self.clean = True               # False: the file must be rewritten, not appended to
        self._synced = time.monotonic()   # the last fsync asked of appended rows
        self._unsynced = False            # rows appended since
        self._syncer = None               # toolkit.io.BackgroundSync, from the first ask
        if self.path is not None and (self.path.exists() or self.path.is_symlink()):
            self.header, self.rows, self.clean = read_records(self.path)   # RecordsError
        self._index()

    def _index(self) -> None:
        """The rows' run keys, and the (file, method) of the rows to retry: a row that
        matches neither replaces nothing, and is appended without a scan of the rows (a
        resumed CSV of 10,000 rows cost each task 2 ms, issue 29 item 3)."""
        self._keys = {r.get("run_key") for r in self.rows} - {None, ""}
        self._retry = {path_method(r) for r in self.rows if r.get("status") in RETRY_STATUSES}

    def done(self) -> dict:
        """Finished rows by run key, and keyless finished rows by (resolved file, method)."""
        out: dict = {}
        for r in self.rows:
            if r.get("status") not in RETRY_STATUSES:
                out[r.get("run_key") or ("keyless", *path_method(r))] = r
        return out

    def append(self, rec: dict) -> None:
        row = {k: csv_cell(v) for k, v in rec.items() if k not in NOT_IN_CSV}
        key, pm = row.get("run_key"), path_method(row)

        def stale(r):
            return (key and r.get("run_key") == key) or (
                r.get("status") in RETRY_STATUSES and path_method(r) == pm)
        replaced = bool(key and key in self._keys) or pm in self._retry
        if replaced:
            self.rows = [r for r in self.rows if not stale(r)] + [row]
            self._index()
        else:
            self.rows.append(row)
            if key:
                self._keys.add(key)
            if row.get("status") in RETRY_STATUSES:
                self._retry.add(pm)
        new = [k for k in row if k not in self.header]
        if self.path is None:
            self.header = _order(self.header + new)
            return
        if new or replaced or not self.clean or not self.path.exists():
            self.header = _order(self.header + new)
            self._rewrite()
            return
        with self.path.open("a", newline="") as fh:
            csv.DictWriter(fh, self.header, extrasaction="ignore").writerow(row)
        self._unsynced = True
        if time.monotonic() - self._synced >= SYNC_S:
            if self._syncer is None:
                self._syncer = BackgroundSync(self.path)
            self._syncer.request()          # done in its thread: the batch goes on
            self._synced, self._unsynced = time.monotonic(), False

    def sync(self) -> None:
        """Wait for the fsync asked last, and fsync the rows appended since (the batch's
        end)."""
        syncer, self._syncer = self._syncer, None
        if syncer is not None:
            syncer.close()
        if self._unsynced and self.path is not None and self.path.exists():
            fsync_path(self.path)
        self._unsynced = False

    def _rewrite(self) -> None:
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, self.header, extrasaction="ignore")
        w.writeheader()
        w.writerows(self.rows)
        write_text_atomic(self.path, buf.getvalue())
        self.clean = True


def _order(cols: list[str]) -> list[str]:
    core = [c for c in CORE_FIELDS if c in cols]
    return core + [c for c in cols if c not in core]


NOT_IN_CSV = ("solution", "traceback")


def csv_columns(recs: list[dict]) -> list[str]:
    """The columns of a CSV of records (the batch CSV, ``solve``/``gap --format csv``):
    CORE_FIELDS, then every other field in order of first appearance (metrics, ranks)."""
    seen: dict = {}
    for r in recs:
        seen.update((k, None) for k in r if k not in NOT_IN_CSV)
    return _order(list(CORE_FIELDS) + list(seen))


def csv_cell(v):
    """One CSV cell: None is empty; numpy scalars are Python numbers (an int stays an int);
    lists, tuples, arrays and dicts are one JSON string (non-finite numbers as null)."""
    if v is None:
        return ""
    if hasattr(v, "tolist"):            # numpy scalar or array
        v = v.tolist()
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(null_nonfinite(v), separators=(",", ":"), allow_nan=False)
    return v


def write_csv(recs: list[dict], stream, cols=None) -> None:
    """``recs`` as CSV on ``stream``, cells by :func:`csv_cell`; the columns ``cols``, by
    default :func:`csv_columns`."""
    w = csv.DictWriter(stream, list(cols or csv_columns(recs)), extrasaction="ignore")
    w.writeheader()
    w.writerows({k: csv_cell(v) for k, v in r.items()} for r in recs)
