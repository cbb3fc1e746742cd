"""JSON Schemas of the instance files, derived from the loaders' own checks (issue 30).

Nothing here is written by hand per problem: the schema of a problem type is what its
loader checks, recorded while it loads a corpus (every shipped instance file of that type,
``instances/**/*.json``):

* ``instances.errors`` records each call of its check helpers while tracing: the fields an
  object may hold (``known_fields``: ``properties``, ``additionalProperties: false``), JSON
  objects and lists (``obj``, ``seq``, with ``maxItems``), strings (``text``, with
  ``maxLength``), numbers and integers with their bounds (``number``) and matrices
  (``as_matrix``); the loaders' bulk fast paths take their per-entry walk meanwhile;
* a check counts where its field exists in the file (a loader also checks values it
  derived, e.g. the DAG a DELTA job generates);
* ``required``: the fields present in every occurrence of their object in the corpus whose
  removal the loader refuses (the field is removed from up to three files and each loaded);
  ``null`` is allowed where the loader accepts it (the same probe).

[DECISION] Where the corpus disagrees the schema keeps the looser rule. A bound is kept only when every check of the field in the corpus used the
same one (a bound that depends on the instance, e.g. a Pod index below the instance's Pod
count, differs between files and is dropped); integer where every check asked an integer;
an object's shapes (different ``known_fields`` sets, e.g. a2a's two ``link`` forms) and a
field's JSON types (a matrix or ``{"uniform": S}``) become ``anyOf``. Rules across fields
(a matrix's size matching ``n``, ids below a count, sums) stay the loader's: a file the
schema accepts may still be refused, with one line naming the field. The corpus limits what
is seen: a form no shipped file uses is not in the schema (tests/test_schema.py checks that
every declared field occurs and that generated files of other sizes and forms validate),
and a field the loader requires only beside another one (a DELTA task's ``dir`` with its
``link``) shows as required when every shipped file has both.

``python -m toolkit.schema [PROBLEM ...] [--out DIR]`` prints the schemas (or writes
``DIR/<problem>.schema.json``); :func:`validate` checks a document against the subset of
JSON Schema (2020-12) these schemas use.
"""
from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path

import instances
from instances import errors

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SHIPPED = Path(instances.__file__).parent          # the corpus: every instance file shipped
_TOKEN = re.compile(r"\[(\d+)\]|([^.\[\]]+)")
_ANY = "*"                                         # a list index in a normalized path
_DELETE = object()
PROBES = 3          # files probed per field: a field required in one form may be optional in another


def corpus(problem: str, root: Path = SHIPPED) -> list[tuple[Path, dict]]:
    """The shipped instance files of ``problem``, parsed, smallest first."""
    out = []
    for path in sorted(root.rglob("*.json"), key=lambda p: (p.stat().st_size, str(p))):
        try:
            d = instances.read_json(path)
        except instances.InstanceError:
            continue
        if isinstance(d, dict) and d.get("problem") == problem:
            out.append((path, d))
    return out


def _tokens(field: str) -> tuple | None:
    out = []
    for m in _TOKEN.finditer(field):
        out.append(int(m.group(1)) if m.group(1) is not None else m.group(2))
    return tuple(out)


def _resolve(doc, toks):
    """The value at ``toks`` in ``doc`` (KeyError/IndexError/TypeError when absent)."""
    for t in toks:
        if isinstance(t, int):
            if not isinstance(doc, list):
                raise TypeError(t)
        elif not isinstance(doc, dict):
            raise TypeError(t)
        doc = doc[t]
    return doc


def _norm(toks) -> tuple:
    return tuple(_ANY if isinstance(t, int) else t for t in toks)


def trace(doc: dict) -> list:
    """The checks the loader makes on ``doc`` that concern its own fields:
    (kind, concrete tokens, rules) per check."""
    errors._TRACE = calls = []
    try:
        instances.from_dict(copy.deepcopy(doc))
    finally:
        errors._TRACE = None
    out = []
    for kind, field, rules in calls:
        toks = _tokens(field)
        try:
            _resolve(doc, toks)
        except (KeyError, IndexError, TypeError):
            continue                    # a value the loader derived, not one of the file's
        if kind == "matrix":            # an array of arrays of numbers
            leaf = ("integer" if rules["integral"] else "number",
                    {"lo": 0 if rules["nonneg"] else None, "hi": None, "strict_lo": False})
            out += [("array", toks, {"max_len": None})]
            for i, row in enumerate(_resolve(doc, toks)):
                out.append(("array", toks + (i,), {"max_len": None}))
                out += [(leaf[0], toks + (i, j), leaf[1]) for j in range(len(row))]
        else:
            out.append((kind, toks, rules))
    return out


class _Corpus:
    """The traced checks of one problem's corpus, by normalized path."""

    def __init__(self, problem: str, docs: list[tuple[Path, dict]]):
        path, first = docs[0]           # and the common fields' checks on the smallest file
        docs = docs + [(path, {**first, "name": first.get("name", "x"),
                               "meta": first.get("meta") or {"source": "x"}})]
        self.problem, self.docs = problem, docs
        self.checks: dict[tuple, list] = {}          # norm path -> [(doc index, toks, kind, rules)]
        self.shapes: dict[tuple, dict] = {}          # norm path -> {allowed: [(doc index, toks)]}
        for n, (_, doc) in enumerate(docs):
            for kind, toks, rules in trace(doc):
                key = _norm(toks)
                if kind == "fields":
                    self.shapes.setdefault(key, {}).setdefault(rules["allowed"], []).append((n, toks))
                self.checks.setdefault(key, []).append((n, toks, kind, rules))
        self.nodes = {k[:i] for k in self.checks for i in range(len(k) + 1)}

    def schema(self) -> dict:
        s = self.node(())
        props = s.setdefault("properties", {})
        props["problem"] = {"const": self.problem}
        props["format"] = {"const": instances.FORMAT}
        return {"$schema": DIALECT, "$id": f"{self.problem}.schema.json",
                "title": f"{self.problem} instance file (format {instances.FORMAT})",
                "description": _DESCRIPTION, **s}

    def node(self, key: tuple) -> dict:
        checks = self.checks.get(key, [])
        kinds = {c[2] for c in checks}
        kids = {k[len(key)] for k in self.nodes if len(k) == len(key) + 1 and k[:len(key)] == key}
        parts = []
        if kinds & {"object", "fields"} or any(k != _ANY for k in kids):
            parts += self.objects(key, {k for k in kids if k != _ANY})
        if "array" in kinds or _ANY in kids:
            parts.append(self.array(key, checks))
        if kinds & {"number", "integer"}:
            parts.append(_leaf(checks))
        if "string" in kinds:
            s = {"type": "string"}
            strings = [c for c in checks if c[2] == "string"]
            _stable(s, "enum", strings, "enum")
            _stable(s, "maxLength", strings, "max_len")
            parts.append(s)
        if "boolean" in kinds:
            parts.append({"type": "boolean"})
        return parts[0] if len(parts) == 1 else {"anyOf": parts} if parts else {}

    def objects(self, key: tuple, kids: set) -> list[dict]:
        shapes = self.shapes.get(key)
        if not shapes:                  # a free object (meta), or one keyed by names (incidence)
            s = {"type": "object"}
            if kids:
                s["additionalProperties"] = _merge([self.node(key + (k,)) for k in sorted(kids)])
            return [s]
        out = []
        for allowed, where in shapes.items():
            props = {}
            for k in allowed:
                props[k] = self.node(key + (k,))
                if props[k] and self.accepts(where, k, None):    # "old": null is no old
                    props[k] = _merge(props[k].get("anyOf", [props[k]]) + [{"type": "null"}])
            out.append({"type": "object", "properties": props, "additionalProperties": False,
                        "required": [k for k in allowed if self.required(where, k)]})
        return out

    def required(self, where: list, k: str) -> bool:
        """``k`` is present in every occurrence and the loader refuses the file without it
        (probed on the first occurrence in each of the PROBES smallest files)."""
        if not all(k in _resolve(self.docs[n][1], toks) for n, toks in where):
            return False
        return not self.accepts(where, k, _DELETE)

    def accepts(self, where: list, k: str, value) -> bool:
        """Whether the loader accepts one of the PROBES smallest files holding field ``k``
        of this object with ``k`` set to ``value`` (or removed), at its first occurrence."""
        first = {}
        for n, toks in where:
            if k in _resolve(self.docs[n][1], toks):
                first.setdefault(n, toks)
        return any(self._accepts(n, toks, k, value) for n, toks in list(first.items())[:PROBES])

    def _accepts(self, n: int, toks: tuple, k: str, value) -> bool:
        doc = copy.deepcopy(self.docs[n][1])
        parent = _resolve(doc, toks)
        if value is _DELETE:
            del parent[k]
        else:
            parent[k] = value
        try:
            instances.from_dict(doc)
        except Exception:               # noqa: BLE001 - refused, whatever the reason
            return False
        return True

    def array(self, key: tuple, checks: list) -> dict:
        s = {"type": "array"}
        _stable(s, "maxItems", [c for c in checks if c[2] == "array"], "max_len")
        item = key + (_ANY,)
        if item not in self.nodes:
            return s
        inner = self.checks.get(item, [])
        leafs = [c for c in inner if c[2] in ("number", "integer")]
        deeper = any(k[:len(item)] == item and len(k) > len(item) for k in self.nodes)
        kinds_at = {}
        for c in leafs:
            kinds_at.setdefault(c[1][len(key)], set()).add(c[2])
        types = {i: "integer" if k == {"integer"} else "number" for i, k in kinds_at.items()}
        if leafs and not deeper and len(set(types.values())) > 1:   # a record: [t, n, ...]
            whole = _leaf(leafs)
            s["prefixItems"] = [{**whole, "type": types.get(i, "number")}
                                for i in range(max(types) + 1)]
        else:
            s["items"] = self.node(item)
        return s


def _group(checks: list) -> dict:
    """Checks by (file, concrete field): one value may be checked several times."""
    out = {}
    for n, toks, kind, rules in checks:
        out.setdefault((n, toks), []).append((kind, rules))
    return out


def _stable(s: dict, word: str, checks: list, rule: str) -> None:
    """Set ``s[word]`` to the rule's value when every check of the field used the same."""
    vals = {min((r[rule] for _, r in g if r.get(rule) is not None), default=None)
            for g in _group(checks).values()}
    if len(vals) == 1 and None not in vals:
        v = vals.pop()
        s[word] = list(v) if isinstance(v, tuple) else v


def _leaf(checks: list) -> dict:
    """A number or integer, with the bounds every file's checks agree on (each value's
    tightest, when it is checked more than once)."""
    groups = _group([c for c in checks if c[2] in ("number", "integer")]).values()
    integer = all(any(k == "integer" for k, _ in g) for g in groups)
    lows, highs = set(), set()
    for g in groups:
        lo = max(((r["lo"], r["strict_lo"]) for _, r in g if r["lo"] is not None), default=None)
        lows.add(lo)
        highs.add(min((r["hi"] for _, r in g if r["hi"] is not None), default=None))
    s = {"type": "integer" if integer else "number"}
    if len(lows) == 1 and None not in lows:
        lo, strict = lows.pop()
        s["exclusiveMinimum" if strict else "minimum"] = _num(lo)
    if len(highs) == 1 and None not in highs:
        s["maximum"] = _num(highs.pop())
    return s


def _num(v):
    return int(v) if float(v).is_integer() and abs(v) < 2**53 else float(v)


def _merge(schemas: list[dict]) -> dict:
    uniq = []
    for s in schemas:
        if s not in uniq:
            uniq.append(s)
    return uniq[0] if len(uniq) == 1 else {"anyOf": uniq}


_DESCRIPTION = (
    "Generated by toolkit.schema from the loader's checks (never edit by hand). Beyond it, "
    "the loader refuses any number of magnitude over 1e18, integers beyond 64 bits, "
    "NaN/Infinity, a key given twice, nesting deeper than 16 levels, and the rules across "
    "fields that a schema cannot state; each refusal is one line naming the file and field.")


def schema(problem: str, root: Path = SHIPPED) -> dict:
    """The JSON Schema of ``problem``'s instance files, derived from its corpus."""
    instances.instance_class(problem)           # an unknown problem: InstanceError
    docs = corpus(problem, root)
    if not docs:
        raise ValueError(f"no shipped instance of {problem!r} to derive its schema from")
    return _Corpus(problem, docs).schema()


def schemas(root: Path = SHIPPED) -> dict[str, dict]:
    """Every problem type's schema, by problem name."""
    return {p: schema(p, root) for p in instances.INSTANCE_TYPES}


# --------------------------------------------------------------------------------------
# a validator of the subset used above (the lock has no jsonschema package)
# --------------------------------------------------------------------------------------
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def validate(doc, s: dict, path: str = "") -> list[str]:
    """The places where ``doc`` breaks schema ``s`` (empty: valid), as ``path: what``.
    Knows type, const, properties, required, additionalProperties, items, prefixItems,
    anyOf, minimum, exclusiveMinimum, maximum, maxItems, maxLength (and ignores the
    annotations)."""
    where = path or "(top)"
    if "anyOf" in s:
        alts = [validate(doc, alt, path) for alt in s["anyOf"]]
        if all(alts):
            return [f"{where}: matches none of {len(alts)} forms ({'; '.join(a[0] for a in alts)})"]
        return []
    if "const" in s and doc != s["const"]:
        return [f"{where}: must be {s['const']!r}"]
    if "enum" in s and doc not in s["enum"]:
        return [f"{where}: must be one of {', '.join(map(str, s['enum']))}"]
    t = s.get("type")
    if t in _TYPES and not isinstance(doc, _TYPES[t]):
        return [f"{where}: must be {t}"]
    if t in ("number", "integer"):
        if isinstance(doc, bool) or not isinstance(doc, (int, float)):
            return [f"{where}: must be {t}"]
        if t == "integer" and not float(doc).is_integer():
            return [f"{where}: must be an integer"]
        if "minimum" in s and doc < s["minimum"]:
            return [f"{where}: must be >= {s['minimum']}"]
        if "exclusiveMinimum" in s and doc <= s["exclusiveMinimum"]:
            return [f"{where}: must be > {s['exclusiveMinimum']}"]
        if "maximum" in s and doc > s["maximum"]:
            return [f"{where}: must be <= {s['maximum']}"]
    out = []
    if isinstance(doc, str) and len(doc) > s.get("maxLength", len(doc)):
        out.append(f"{where}: longer than {s['maxLength']}")
    if isinstance(doc, dict):
        out += [f"{where}: missing {k!r}" for k in s.get("required", []) if k not in doc]
        props, extra = s.get("properties", {}), s.get("additionalProperties", True)
        for k, v in doc.items():
            sub = f"{path}.{k}" if path else k
            if k in props:
                out += validate(v, props[k], sub)
            elif extra is False:
                out.append(f"{sub}: unknown field")
            elif isinstance(extra, dict):
                out += validate(v, extra, sub)
    if isinstance(doc, list):
        if len(doc) > s.get("maxItems", len(doc)):
            out.append(f"{where}: more than {s['maxItems']} entries")
        prefix = s.get("prefixItems", [])
        for i, v in enumerate(doc):
            sub = s["items"] if i >= len(prefix) and "items" in s else \
                prefix[i] if i < len(prefix) else None
            if sub is not None:
                out += validate(v, sub, f"{path}[{i}]")
                if len(out) > 20:
                    break
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m toolkit.schema",
                                 description="JSON Schemas of the instance files, derived from "
                                             "the loaders' checks on the shipped instances")
    ap.add_argument("problems", nargs="*", metavar="PROBLEM",
                    help=f"default: all ({', '.join(instances.INSTANCE_TYPES)})")
    ap.add_argument("--out", metavar="DIR", help="write DIR/<problem>.schema.json instead")
    args = ap.parse_args(argv)
    for p in args.problems:
        if p not in instances.INSTANCE_TYPES:
            ap.exit(2, f"unknown problem {p!r} (known: {', '.join(instances.INSTANCE_TYPES)})\n")
    for p in args.problems or list(instances.INSTANCE_TYPES):
        text = json.dumps(schema(p), indent=2) + "\n"
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            (Path(args.out) / f"{p}.schema.json").write_text(text)
        else:
            sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
