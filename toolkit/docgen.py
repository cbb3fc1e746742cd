"""The generated parts of the documentation site (issue 30): what the code already declares,
written as Markdown when ``make docs`` builds the site, so that it cannot drift.

A page asks for a part with a marker line, ``<!-- gen: KIND ARG... -->`` (docs/hooks.py
replaces it):

* ``methods PROBLEM...`` - each problem type's methods and their ``--option``s (the registry);
* ``schema PROBLEM...`` - its instance format, a field table and the JSON Schema
  (toolkit.schema, derived from the loaders' checks);
* ``targets PREFIX...`` - the ``reproduce`` targets whose names start so (toolkit.reproduce);
* ``results NAME.md`` - a results summary (found anywhere under results/), headings demoted;
* ``cli`` - every subcommand's ``--help``, the generators' parameters and the targets.

The API reference is mkdocstrings' (docs/reference/api.md); the Sphinx roles of its
docstrings become links there (``sphinx_roles``, called by docs/griffe_roles.py).

``python -m toolkit.docgen KIND ARG...`` prints one part (to read it without a build).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import math
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(head: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# methods and options (toolkit.registry)
# --------------------------------------------------------------------------------------
def _range(o) -> str:
    lo, hi = o.minimum, None if o.maximum in (None, math.inf) else o.maximum
    num = lambda v: str(int(v)) if float(v).is_integer() and abs(v) < 1e6 else f"{v:g}"  # noqa: E731
    if o.choices:
        return ", ".join(f"`{c}`" for c in o.choices)
    return (f"{num(lo)} .. {num(hi)}" if lo is not None and hi is not None else
            f">= {num(lo)}" if lo is not None else f"<= {num(hi)}" if hi is not None else "")


def methods(*names: str) -> str:
    """Each problem type's methods (kind, summary, default, scope of the bound) and every
    method's options, from the registry."""
    from toolkit.budget import DEFAULT_TIME_LIMIT
    from toolkit.registry import problems

    probs = problems()
    out = []
    for name in names:
        p = probs[name]
        out.append(f"**`{p.name}`**: {p.summary}. Objective: `{p.objective}` ({p.sense}imized). "
                   f"Default method: `{p.default_method}`.\n")
        rows = []
        for m in p.methods.values():
            notes = [n for n, on in (("default", m.name == p.default_method),
                                     ("exact: its bound bounds the instance", m.exact),
                                     ("a relaxation: not ranked", m.relaxation)) if on]
            rows.append([f"`{m.name}`", m.kind, m.summary + (f" ({'; '.join(notes)})" if notes else "")])
        out += [_table(["method", "kind", "what"], rows), ""]
        shared: dict[tuple, list[str]] = {}          # methods that declare the same options
        for m in p.methods.values():
            if m.options:
                shared.setdefault(tuple(m.options), []).append(f"`{m.name}`")
        for opts, names in shared.items():
            out.append(f"Options of {', '.join(names)} (`--option NAME=VALUE`):\n")
            out.append(_table(["option", "type", "default", "values", "what"],
                              [[f"`{o.name}`", "bool" if o.kind is bool else o.kind.__name__,
                                f"`{int(o.default) if o.kind is bool else o.default}`",
                                _range(o), o.help] for o in opts]))
            out.append("")
    out.append(f"Model methods run with a budget of {DEFAULT_TIME_LIMIT:g} s unless `--time-limit` "
               f"says otherwise; heuristics have none (generated from `toolkit.registry`; "
               f"`solve.py list` prints the same).")
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# instance formats (toolkit.schema)
# --------------------------------------------------------------------------------------
def _rule(s: dict) -> tuple[str, str]:
    """(type, rule) of a schema node for the field table."""
    if "anyOf" in s:
        parts = [_rule(a) for a in s["anyOf"]]
        types = list(dict.fromkeys(p[0] for p in parts))
        objs = sum(a.get("type") == "object" for a in s["anyOf"])
        if objs > 1:
            types = [f"object ({objs} forms)" if t == "object" else t for t in types]
        return " or ".join(types), "; ".join(p[1] for p in parts if p[1])
    if "const" in s:
        return "constant", f"`{json.dumps(s['const'])}`"
    t = s.get("type", "any")
    rules = []
    if "enum" in s:
        rules.append("one of " + ", ".join(f"`{v}`" for v in s["enum"]))
    for word, sym in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<=")):
        if word in s:
            rules.append(f"{sym} {s[word]:g}" if isinstance(s[word], float) else f"{sym} {s[word]}")
    if "maxLength" in s:
        rules.append(f"at most {s['maxLength']} characters")
    if "maxItems" in s:
        rules.append(f"at most {s['maxItems']} entries")
    if t == "array":
        if "prefixItems" in s:
            t = "[" + ", ".join(_rule(i)[0] for i in s["prefixItems"]) + "]"
        elif isinstance(s.get("items"), dict) and s["items"].get("type") not in (None, "object"):
            inner, r = _rule(s["items"])
            nested = inner.startswith("list of")
            t, rules = f"list of {inner}", rules + ([r if nested else f"entries {r}"] if r else [])
        else:
            t = "list"
    return t, ", ".join(rules)


def _fields(s: dict, path: str, required: bool, rows: list) -> None:
    t, rule = _rule(s)
    if path:
        rows.append([f"`{path}`", t, required if isinstance(required, str) else
                     "yes" if required else "", rule])
    objs = [a for a in s.get("anyOf", [s]) if a.get("type") == "object"]
    if s.get("type") == "array" and isinstance(s.get("items"), dict):
        objs = [a for a in s["items"].get("anyOf", [s["items"]]) if a.get("type") == "object"]
        path += "[]"
    for i, o in enumerate(objs):
        for k, v in o.get("properties", {}).items():
            req = k in o.get("required", [])
            _fields(v, f"{path}.{k}" if path else k, f"yes (form {i + 1})" if req and len(objs) > 1
                    else req, rows)
        if isinstance(o.get("additionalProperties"), dict):
            _fields(o["additionalProperties"], f"{path}.<name>", False, rows)


@functools.lru_cache(maxsize=None)
def derived_schema(problem: str) -> dict:
    """toolkit.schema's schema of ``problem``, derived once per process (do not modify)."""
    from toolkit.schema import schema as derive

    return derive(problem)


def schema(*names: str) -> str:
    """Per problem type: its fields (path, type, required, rule) and the JSON Schema."""
    out = []
    for name in names:
        s = derived_schema(name)
        rows: list = []
        _fields(s, "", True, rows)
        out += [f"**`{name}`** instance files ([JSON Schema](../schemas/{name}.schema.json), "
                f"`python -m toolkit.schema {name}`):\n", _table(["field", "type", "required", "rule"],
                                                                rows), "",
                f'??? note "JSON Schema of `{name}`"', "    ```json",
                *("    " + line for line in json.dumps(s, indent=2).splitlines()), "    ```", ""]
    out.append("The schemas are derived from the loaders' checks on the shipped instances "
               "(`toolkit.schema`); rules across fields stay the loader's, which names the "
               "file and field of the first one a file breaks.")
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# reproduce targets and results
# --------------------------------------------------------------------------------------
def targets(*prefixes: str) -> str:
    """The reproduce targets whose names start with one of ``prefixes`` (all: none given)."""
    from toolkit.reproduce import TARGETS

    rows = [[f"`{n}`", t.doc, t.time_text("full"), t.time_text("quick")]
            for n, t in TARGETS.items() if not prefixes or n.startswith(prefixes)]
    return _table(["target (`solve.py reproduce TARGET`)", "what", "full run, 2 cores",
                   "`--quick`"], rows)


def find_result(name: str) -> Path:
    """``results/**/NAME``: the one results file of that name, wherever it lives (a NAME
    with a folder, ``a2a/README.md``, is that file under results/)."""
    found = [RESULTS / name] if "/" in name and (RESULTS / name).is_file() else \
        sorted(RESULTS.rglob(name)) if "/" not in name else []
    if len(found) != 1:
        raise FileNotFoundError(f"results/**/{name}: {len(found)} files")
    return found[0]


def site_files() -> dict[str, Path]:
    """Files of the repository the site shows as they are: {site path: file}."""
    return {"results/demo/gap.png": find_result("gap.png")}


def results(name: str) -> str:
    """A results summary with its headings one level down (it sits under a page's heading)."""
    path = find_result(name)
    lines = path.read_text().splitlines()
    out = [f"From `{path.relative_to(ROOT)}` (each section names the command that regenerates "
           f"its numbers).", ""]
    fence = False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        out.append("##" + line if line.startswith("#") and not fence else line)
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# the API reference: Sphinx roles in docstrings
# --------------------------------------------------------------------------------------
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):`([^`]+)`")


def sphinx_roles(text: str, resolve=lambda name: None) -> str:
    """Each Sphinx cross-reference role of a docstring (``:func:`name```, ``:class:`~a.B```,
    ``:mod:`a.b```, ``title <target>``, ``!name``), which mkdocstrings would print as it
    stands, as an optional mkdocs-autorefs reference: a link where the site documents the
    target, else the name as code (never a build warning). ``resolve(first)`` gives the full
    path of a name's first dotted part in the docstring's scope, or None (then the name
    stands as written); ``~`` shows the last part only, ``!`` no link, as in Sphinx."""
    def one(m: re.Match) -> str:
        body = m.group(1).strip()
        title, target = (body.rsplit("<", 1)[0].strip(), body.rsplit("<", 1)[1].rstrip(">").strip()) \
            if body.endswith(">") and "<" in body else (None, body)
        link = not target.startswith("!")
        target = target.lstrip("!")
        short = target.startswith("~")
        target = target.lstrip("~").lstrip(".")
        shown = title or (target.rsplit(".", 1)[-1] if short else target)
        code = f"<code>{shown}</code>"
        if not link:
            return code
        first, _, rest = target.partition(".")
        full = resolve(first)
        ident = f"{full}.{rest}" if full and rest else full or target
        return f'<autoref identifier="{ident}" optional>{code}</autoref>'

    return ROLE.sub(one, text)


# --------------------------------------------------------------------------------------
# command line (the argparse parser)
# --------------------------------------------------------------------------------------
def _parser():
    import solve
    from toolkit.cli_args import method_help, parser

    return parser(method_help(["solve", "--help"]), solve.__doc__.split("\n\n")[0])


def _help(argv: list[str]) -> str:
    """What ``solve.py ARGV`` prints (its --help), at 100 columns."""
    buf = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        with contextlib.redirect_stdout(buf):
            try:
                _parser().parse_args(argv)
            except SystemExit:
                pass
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return buf.getvalue()


def cli() -> str:
    """Every subcommand's --help, the generators' parameters and the reproduce targets."""
    from toolkit.registry import problems

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    out = ["`python solve.py` and the installed `ocs-opt` are one program. Generated from its "
           "argument parser (`toolkit/cli_args.py`) and registries.", "", "## `solve.py`", "",
           "```text", _help(["--help"]).rstrip(), "```", ""]
    for name in sub.choices:
        if name == "generate":
            continue
        out += [f"## `solve.py {name}`", "", "```text", _help([name, "--help"]).rstrip(), "```", ""]
    out += ["## `solve.py generate`", "",
            "`solve.py generate PROBLEM [--PARAM VALUE ...] -o FILE` writes a generated instance "
            "(checked by the loader before it is written); `generate PROBLEM --help` lists the "
            "parameters below.", ""]
    for p in problems().values():
        if p.generator is None:
            continue
        out += [f"### `generate {p.name}`", "",
                _table(["parameter", "type", "default", "what"],
                       [[f"`--{k.replace('_', '-')}`", t.__name__, f"`{d!r}`", h]
                        for k, (t, d, h) in p.generator.params.items()]), ""]
    out += ["## Reproduce targets", "", targets(), ""]
    return "\n".join(out)


PARTS = {"methods": methods, "schema": schema, "targets": targets, "results": results, "cli": cli}


def part(kind: str, *args: str) -> str:
    if kind not in PARTS:
        raise ValueError(f"unknown generated part {kind!r} (known: {', '.join(PARTS)})")
    return PARTS[kind](*args)


if __name__ == "__main__":
    print(part(*sys.argv[1:]))
