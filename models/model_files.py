"""``--write-model FILE``: every model a method run solves, written before it is solved.

``toolkit.run.run_task`` calls :func:`begin` before the method runs and :func:`finish`
after; in between :func:`models.backend.solve` hands each model to :func:`write`. The
k-th model solved goes to ``FILE`` with ``.k`` before the suffix (``out.2.mps``); when
the run solved exactly one model, :func:`finish` renames ``out.1.mps`` to ``out.mps``.
So a one-model method writes FILE itself, and a method that solves several (lexicographic
stages, one model per OCS group or per d) writes FILE.1, FILE.2, ... in the order solved.
Gurobi writes the file (``Model.write``; the size-limited pip licence writes models of
any size), whichever backend then solves the model.
"""
from __future__ import annotations

from pathlib import Path

_TARGET: str | None = None
_WRITTEN: list[str] = []


def begin(path: str) -> None:
    """Write the models of the coming run to ``path`` (numbered, see the module doc)."""
    global _TARGET
    _TARGET = str(path)
    _WRITTEN.clear()


def numbered(path: str, k: int) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{k}{p.suffix}"))


def write(model) -> None:
    """Write ``model`` (a gurobipy model) when a run asked for it; else nothing."""
    if _TARGET is None:
        return
    target = numbered(_TARGET, len(_WRITTEN) + 1)
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    model.update()
    model.write(target)
    _WRITTEN.append(target)


def finish() -> list[str]:
    """Stop writing; the files written (one model: renamed to the path given)."""
    global _TARGET
    target, written = _TARGET, list(_WRITTEN)
    _TARGET = None
    _WRITTEN.clear()
    if target is not None and len(written) == 1:
        Path(written[0]).replace(target)
        written = [target]
    return written
