"""Method variants: one method with options of its own, run as its own method (issue 28).

    solve.py gap FILES --methods milp,milp:slots=2,milp:slots=4:symmetry=0,spectra

An entry of ``--methods`` (``batch``, ``gap``; ``toolkit.api.batch``) is a method name or a
variant ``NAME:OPT=VALUE[:OPT=VALUE...]``: method NAME with these ``--option`` values.
Each variant is its own method row: its records carry its label as ``variant`` (the field
is absent for a plain method), the gap report ranks and plots it as a method of its own,
and its label is part of its run key (a rerun resumes it; ``milp`` and ``milp:slots=2``
never share a row).

[DECISION] ``:`` separates the options because ``,`` already separates the methods and
``=`` reads as in ``--option NAME=VALUE``; no shell quoting is needed. A value holding ``:``
or ``,`` can only be given with ``--option``. The label is canonical: options sorted by
name, each value as its option reads it (booleans 1/0, integers as digits, floats as Python
prints them), so ``milp:symmetry=no:slots=2.0`` is ``milp:slots=2:symmetry=0``. A variant's
options override ``--option`` for that variant; ``--option`` still goes to every selected
method that declares it. An unknown method, a piece that is not ``OPT=VALUE``, an option
given twice, an option the method does not declare or a bad value is bad input (one line).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from toolkit.options import OptionError, declared_names

SEP = ":"


class VariantError(OptionError):
    """A bad ``--methods`` entry (one line; exit 2)."""


@dataclass(frozen=True)
class Variant:
    method: str                     # the registry's method name
    options: tuple = ()             # ((name, canonical text), ...) sorted by name

    @property
    def label(self) -> str:
        return SEP.join([self.method, *(f"{k}={v}" for k, v in self.options)])

    def config(self, cfg):
        """``cfg`` with this variant's options over the shared ``--option`` values."""
        return replace(cfg, options={**cfg.options, **dict(self.options)}) if self.options else cfg


def label(rec: dict) -> str:
    """A record's method row: its ``variant`` label, else its method."""
    return rec.get("variant") or rec["method"]


def _text(opt, value) -> str:
    if opt.kind is bool:
        return "1" if value else "0"
    return repr(value) if opt.kind is float else str(value)


def parse_variant(entry: str) -> Variant:
    """One ``--methods`` entry as a Variant; VariantError for anything else."""
    from toolkit.registry import known_methods, problems

    name, *pieces = [p.strip() for p in str(entry).split(SEP)]
    if name not in known_methods():
        raise VariantError(f"unknown method {name!r} in {entry!r} "
                           f"(see `solve.py list`)")
    methods = [p.methods[name] for p in problems().values() if name in p.methods]
    opts: dict = {}
    for piece in pieces:
        key, eq, raw = piece.partition("=")
        key = key.strip()
        if not eq or not key:
            raise VariantError(f"{entry!r}: expected METHOD{SEP}OPTION=VALUE"
                               f"[{SEP}OPTION=VALUE...], got {piece!r}")
        if key in opts:
            raise VariantError(f"{entry!r}: option {key} given twice")
        owners = [o for m in methods for o in m.options if o.name == key]
        if not owners:
            raise VariantError(f"{entry!r}: option {key}: not an option of method {name}; "
                               f"valid: {declared_names(methods[0].options)}")
        try:
            opts[key] = _text(owners[0], owners[0].parse(raw.strip()))
            for o in owners[1:]:
                o.parse(raw.strip())
        except OptionError as exc:
            raise VariantError(f"{entry!r}: {exc}") from None
    return Variant(name, tuple(sorted(opts.items())))


def parse_variants(names) -> list[Variant]:
    """``names`` (a comma-separated string or a list of entries) as Variants, each once."""
    if isinstance(names, str):
        names = [m for m in names.split(",") if m.strip()]
    out: dict = {}
    for n in names:
        v = parse_variant(n)
        out.setdefault(v.label, v)
    if not out:
        raise VariantError("no method given (see `solve.py list`)")
    return list(out.values())
