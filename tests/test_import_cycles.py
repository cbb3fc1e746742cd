"""The project's modules import each other without cycles (issue 30 item 1).

Read from the source (ast), not by importing: every ``import`` and ``from ... import`` of a
project module, at module level or inside a function (a function-local import is still a
dependency, only a later one); imports under ``if TYPE_CHECKING:`` are left out (never run).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("models", "heuristics", "instances", "toolkit", "benchmarks")


def project_modules() -> dict[str, Path]:
    out = {"solve": ROOT / "solve.py"}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path, known: set[str], package: str) -> set[str]:
    """The project modules ``path`` imports (``from a.b import c``: a.b.c where that is a
    module, else a.b)."""
    out: set[str] = set()
    todo = list(ast.parse(path.read_text(), str(path)).body)
    while todo:
        node = todo.pop()
        if _type_checking(node):
            todo += node.orelse
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in known:
                    out.add(sub)
                elif base in known:
                    out.add(base)
        todo += list(ast.iter_child_nodes(node))
    return out


def graph() -> dict[str, set[str]]:
    mods = project_modules()
    known = set(mods)
    g = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        g[name] = imports(path, known, package) - {name}
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(g) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_function_local_and_from_imports(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("from typing import TYPE_CHECKING\nfrom x import y, z\n"
                 "if TYPE_CHECKING:\n    import w\n"
                 "def f():\n    from x.q import r\n    import v\n")
    known = {"x", "x.y", "x.q", "v", "w"}
    assert imports(p, known, "") == {"x.y", "x", "x.q", "v"}


def test_no_import_cycles_between_project_modules():
    g = graph()
    assert "heuristics.lsap" in g and len(g) > 100          # the whole tree was read
    found = cycles(g)
    assert not found, "modules that import each other: " + "; ".join(" <-> ".join(c) for c in found)
