"""Run keys of batch rows (:mod:`toolkit.batch`): what makes two runs the same run.

A row's ``run_key`` is a hash of the file's ``path`` (:func:`shown_path`), its content, the
method (or variant label, :mod:`toolkit.variants`) and ``settings``: every setting that
changes a result (backend, time limit, MIP gap, ``--param``, the ``--option`` values the
method declares; not ``--threads``). Keys made before only declared options entered them
(issue 28) still find their rows (:func:`done_key`).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from toolkit.registry import RunConfig
from toolkit.variants import label

KEY_FIELDS = ("run_key", "path", "settings")


def settings(cfg: RunConfig, declared=None) -> dict:
    """The settings that change a result, normalized (60 == 60.0, option 2 == "2"); of the
    options, those named in ``declared`` (the method's; None: all, as keys were before)."""
    num = (lambda v: None if v is None else float(v))
    opts = {str(k): str(v) for k, v in sorted(cfg.options.items())
            if declared is None or k in declared}
    return {"backend": cfg.backend, "time_limit": num(cfg.time_limit), "mip_gap": num(cfg.mip_gap),
            "params": {str(k): str(v) for k, v in sorted(cfg.params.items())}, "options": opts}


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shown_path(path: Path, base: Path | None = None, resolved: bool = False) -> str:
    """A file's ``path`` column: resolved, and relative to ``base`` (the CSV's folder) when
    the file is inside it: a results folder kept with its instances (``results/delta/delta_runs/``)
    then resumes in any clone, wherever it is checked out. ``resolved``: both paths are
    resolved already (a batch resolves each file once)."""
    if not resolved:
        path, base = path.resolve(), None if base is None else Path(base).resolve()
    if base is not None:
        try:
            return path.relative_to(base).as_posix()
        except ValueError:              # outside the CSV's folder: the absolute path
            pass
    return path.as_posix()


def run_key(path: Path, digest: str, method: str, cfg: RunConfig,
            base: Path | None = None, declared=None, shown: str | None = None) -> dict:
    """The key columns of one task: ``run_key``, the file's ``path`` (:func:`shown_path`;
    ``shown``: that column, already made), ``settings`` (JSON). ``method`` is the method's
    name or variant label; ``declared`` the names of its options (only those enter the key;
    None: every option, the old rule)."""
    shown = shown_path(path, base) if shown is None else shown
    sets = json.dumps(settings(cfg, declared), sort_keys=True, separators=(",", ":"))
    blob = json.dumps([shown, digest, method, sets])
    return {"run_key": hashlib.sha256(blob.encode()).hexdigest()[:16], "path": shown,
            "settings": sets}


def done_key(done: dict, name: str, key: str, old_key) -> str | None:
    """The run key under which ``done`` holds this task's finished row: ``key``, else the
    key it had before only declared options entered keys (``old_key()``); the row must be
    of this method row (``name``: not an edited row). ``old_key`` is called only when
    ``done`` has rows and none under ``key``."""
    if not done:
        return None
    for k in (key, None):
        k = old_key() if k is None else k
        row = done.get(k)
        if row is not None and label(row) == name:
            return k
    return None
