"""Problem instances: dataclasses with validation, file I/O and generators.

``load_instance(path)`` reads any instance file and dispatches on its ``problem`` key.
"""
from __future__ import annotations

import gc
import importlib
import json
from contextlib import contextmanager
from pathlib import Path

from instances.errors import InstanceError, check_tree, int_rows_kept, known_fields, obj, text

FORMAT = 1
COMMON_FIELDS = ("problem", "format", "name", "meta")   # every type; each class adds FIELDS
# problem name -> "module:Class" (imported lazily so one problem's imports never slow another)
INSTANCE_TYPES = {
    "spectra": "instances.spectra.instance:SpectraInstance",
    "delta": "instances.delta.instance:DeltaInstance",
    "a2a": "instances.a2a.instance:A2AInstance",
    "lumos-reconfig": "instances.lumos.instance:ReconfigInstance",
    "lumos-logical": "instances.lumos.logical:LogicalInstance",
    "lumos-staging": "instances.lumos.staging:StagingInstance",
    "lumos-placement": "instances.lumos.placement:PlacementInstance",
    "lumos-sim": "instances.lumos.sim:SimInstance",
}


def instance_class(problem: str):
    if problem not in INSTANCE_TYPES:
        raise InstanceError("problem", f"unknown problem {problem!r} (known: "
                            f"{', '.join(sorted(INSTANCE_TYPES))})")
    mod, cls = INSTANCE_TYPES[problem].split(":")
    return getattr(importlib.import_module(mod), cls)


def from_dict(d, source: str | None = None):
    """Validate a parsed instance dict and build the instance object."""
    try:
        cls = instance_type(d)
        with int_rows_kept():           # integer tables: typed once (errors.int_rows_of)
            check_tree(d)
            known_fields("", d, COMMON_FIELDS + tuple(cls.FIELDS))
            try:
                return cls.from_dict(d)
            except (TypeError, ValueError, OverflowError, KeyError, AttributeError) as exc:
                if isinstance(exc, InstanceError):
                    raise
                raise InstanceError("", f"invalid instance ({type(exc).__name__}: {exc})")
    except InstanceError as exc:
        raise exc.with_source(source) if source else exc


def instance_type(d, source: str | None = None):
    """The instance class of a parsed instance dict, from its common fields only (problem,
    format, meta, name): cheap, where :func:`from_dict` checks and converts every value (a
    batch plans its tasks from this and builds the instances in its workers)."""
    try:
        if not isinstance(d, dict):
            raise InstanceError("", "top level must be a JSON object")
        if "problem" not in d:
            raise InstanceError("problem", "missing")
        if not isinstance(d["problem"], str):
            raise InstanceError("problem", f"must be a string, got {type(d['problem']).__name__}")
        fmt = d.get("format", FORMAT)
        if isinstance(fmt, bool) or fmt != FORMAT:
            raise InstanceError("format", f"unsupported format {fmt!r} (expected {FORMAT})")
        obj("meta", d.get("meta", {}))
        if "name" in d:
            text("name", d["name"])
        return instance_class(d["problem"])
    except InstanceError as exc:
        raise exc.with_source(source) if source else exc


def read_json(path: str | Path) -> dict:
    """Parse an instance file, with malformed JSON reported as a one-line InstanceError."""
    return parse_json(read_text(path), path)


def read_text(path: str | Path) -> str:
    """An instance file's text (UTF-8), its size guarded before it is read; a one-line
    InstanceError when it cannot be read."""
    from instances.limits import guard

    path = Path(path)
    try:
        # parsed JSON takes roughly ten times its text in Python objects
        guard("", 10 * path.stat().st_size, f"parsing this {path.stat().st_size}-byte file")
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InstanceError("", f"cannot read file ({exc.strerror})", str(path))
    except InstanceError as exc:
        raise exc.with_source(str(path)) from None
    except UnicodeDecodeError as exc:
        raise InstanceError("", f"not UTF-8 text (byte {exc.start})", str(path))


def parse_json(raw: str, path: str | Path) -> dict:
    """The JSON text ``raw`` of the file ``path`` parsed (duplicate keys refused), with
    malformed JSON reported as a one-line InstanceError naming ``path``."""
    try:
        with _no_collection():
            return json.loads(raw, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InstanceError("", f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                            str(path))
    except RecursionError:
        raise InstanceError("", "malformed JSON: nested too deeply", str(path)) from None
    except InstanceError as exc:
        raise exc.with_source(str(path)) from None
    except ValueError as exc:        # an integer of more digits than Python converts (4300)
        raise InstanceError("", f"malformed JSON: a number too long to read ({exc})".split(";")[0]
                            + ")", str(path)) from None


@contextmanager
def _no_collection():
    """The cyclic garbage collector paused: parsed JSON holds no reference cycles, and each
    of the tens of thousands of lists a file's arrays parse into counts towards a
    collection, which traverses every file a batch has parsed so far (issue 29 item 3: a
    64-Pod reconfiguration parsed in 2 ms instead of 10 beside 32 others)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _unique_keys(pairs: list) -> dict:
    """A JSON object as a dict; a key given twice is refused (toolkit decision: JSON
    leaves it open and Python would keep the last value silently)."""
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise InstanceError(key, "given twice in one JSON object")
    return d


def load_instance(path: str | Path):
    """Read, validate and build the instance stored in ``path``."""
    return from_dict(read_json(path), str(path))


def save_instance(instance, path: str | Path) -> None:
    """Write atomically (temp file + rename): a failed write leaves nothing behind."""
    from toolkit.io import dumps_instance, write_text_atomic

    write_text_atomic(path, dumps_instance(instance.to_dict()))


__all__ = ["InstanceError", "load_instance", "save_instance", "from_dict", "read_json",
           "instance_class", "INSTANCE_TYPES", "FORMAT"]
