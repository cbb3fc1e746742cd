"""Small file helpers: atomic writes so that nothing half-written is ever left behind."""
from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class BackgroundSync:
    """fsync of one file in a thread, when asked: the writer does not wait on the disk (an
    fsync took 6-15 ms on the 2-core machine's ext4 virtual disk; a batch of sub-second
    tasks asks once a second, issue 29 item 3). :meth:`close` waits for the fsync asked
    last and raises its error, if any."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._wake = threading.Event()
        self._asked = self._closing = False
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._run, name="fsync", daemon=True)
        self._thread.start()

    def request(self) -> None:
        self._asked = True
        self._wake.set()

    def close(self) -> None:
        self._closing = True
        self._wake.set()
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            closing = self._closing         # read first: an fsync asked before it is done
            if self._asked:
                self._asked = False
                try:
                    fsync_path(self.path)
                except OSError as exc:
                    self._error = exc
            if closing:
                return


def fsync_path(path: str | Path) -> None:
    """fsync the file ``path`` (its data and size on disk)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def short_names(paths) -> dict[str, str]:
    """Each path's file name, for tables, when no two different paths share one; else each
    path as given (so two ``x.json`` in different folders stay apart)."""
    paths = set(map(str, paths))
    short = len({Path(p).name for p in paths}) == len(paths)
    return {p: Path(p).name if short else p for p in paths}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def dumps_instance(d: dict) -> str:
    """JSON with one top-level key per line and one matrix row per line (diff-friendly)."""
    def val(v):
        if isinstance(v, list) and v and all(isinstance(r, (list, dict)) for r in v):
            return "[\n" + ",\n".join("  " + json.dumps(r) for r in v) + "\n ]"
        return json.dumps(v)
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {val(v)}" for k, v in d.items()) + "\n}\n"
