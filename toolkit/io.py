"""Small file helpers: atomic writes so that nothing half-written is ever left behind."""
from __future__ import annotations

import json
import os
import tempfile
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
