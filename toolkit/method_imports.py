"""What a method's run imports, so ``toolkit.registry.preload`` imports it before the clock
and nothing else (issue 29 item 1: a new process pays for what its method needs, e.g. no
networkx for ITV-MDMCF, whose problem module also binds Helios).

Read from the code, not by running it: the :func:`toolkit.registry.lazy` bindings the
method's function reaches (the globals its code names, nested functions included, and its
closure), followed through the helpers in the modules that bind lazies; the modules its
code imports inside a function; then, in the heuristics (and for a model method the models)
modules so found, their function-local imports, transitively. [DECISION] Kernel modules
(toolkit.kernel_cache.SOURCES) are left to the kernel warm-ups, which import them (and
numba) only where the run declares their kernel set; a function without a code object gets
every module its problem module binds.

The modules found are remembered per method function (:data:`_FOUND`): reading the byte
code costs 5-9 ms a method, which a batch paid on every task (issue 29 item 3); a later
call imports the same modules again (a dictionary look-up each when they are loaded).
"""
from __future__ import annotations

import dis
import functools
import importlib
import types

ROOTS = ("heuristics", "models")
_FOUND: dict = {}       # (id(fn), kind, lazy bindings) -> (fn, the modules import_modules found)


def import_modules(method, lazy_modules: dict[str, set[str]]) -> list[str]:
    """Import the modules a run of ``method`` calls into (module docstring); returns them.
    ``lazy_modules``: binding module -> the modules it binds (toolkit.registry._LAZY)."""
    key = (id(method.fn), method.kind, sum(map(len, lazy_modules.values())))
    hit = _FOUND.get(key)
    if hit is not None and hit[0] is method.fn:
        for name in hit[1]:
            importlib.import_module(name)
        return list(hit[1])
    done = _find(method, lazy_modules)
    _FOUND[key] = (method.fn, tuple(done))
    return done


def _roots(method) -> tuple[str, ...]:
    return ROOTS if method.kind == "model" else ("heuristics",)


def _kernel_modules() -> set[str]:
    from toolkit.kernel_cache import SOURCES

    return {s[:-3].replace("/", ".") for s in SOURCES}


def entry_modules(method, lazy_modules: dict[str, set[str]]) -> list[str]:
    """The modules a run of ``method`` reaches first, without importing them (kernel
    modules left to the warm-ups): what :func:`import_modules` starts from."""
    roots, kernels = _roots(method), _kernel_modules()
    return sorted(m for m in reached(method.fn, lazy_modules)
                  if m.split(".")[0] in roots and m not in kernels)


def _find(method, lazy_modules: dict[str, set[str]]) -> list[str]:
    roots, kernels = _roots(method), _kernel_modules()
    todo = entry_modules(method, lazy_modules)
    done: list[str] = []
    while todo:
        name = todo.pop(0)
        if name in done or name in kernels:
            continue
        done.append(name)
        mod = importlib.import_module(name)
        todo += sorted(m for m in local_imports(mod) if m.split(".")[0] in roots)
    return done


def reached(fn, lazy_modules: dict[str, set[str]]) -> set[str]:
    """The modules of the lazy bindings ``fn`` reaches and of its function-local imports."""
    out, seen, todo = set(), set(), [fn]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if isinstance(getattr(f, "target", None), tuple):       # a lazy binding
            out.add(f.target[0])
            continue
        if isinstance(f, functools.partial):
            todo += [f.func, *f.args, *f.keywords.values()]
            continue
        code = getattr(f, "__code__", None)
        if code is None or getattr(f, "__module__", None) not in lazy_modules:
            if f is fn:     # not a plain function of a binding module: all its bindings
                out |= lazy_modules.get(getattr(f, "__module__", ""), set())
            continue
        names = set()
        for co in _codes(code):
            names.update(co.co_names)
            out |= _imported(co)
        todo += [f.__globals__[n] for n in names if n in f.__globals__]
        todo += [c.cell_contents for c in f.__closure__ or () if _filled(c)]
    return out


def local_imports(mod) -> set[str]:
    """The heuristics and models modules that the functions (and methods) defined in
    ``mod`` import inside their bodies."""
    out = set()
    for obj in vars(mod).values():
        fns = vars(obj).values() if isinstance(obj, type) else (obj,)
        for f in fns:
            if isinstance(f, types.FunctionType) and f.__module__ == mod.__name__:
                for co in _codes(f.__code__):
                    out |= _imported(co)
    return out


def _codes(code):
    """``code`` and the code objects nested in it."""
    todo = [code]
    while todo:
        co = todo.pop()
        yield co
        todo += [c for c in co.co_consts if isinstance(c, types.CodeType)]


def _imported(co) -> set[str]:
    """Modules of ``heuristics``/``models`` an IMPORT_NAME of ``co`` imports (``from
    heuristics import x`` counts as ``heuristics.x``)."""
    out, ins = set(), list(dis.get_instructions(co))
    for k, i in enumerate(ins):
        if i.opname != "IMPORT_NAME" or i.argval.split(".")[0] not in ROOTS:
            continue
        if "." in i.argval:
            out.add(i.argval)
        for j in ins[k + 1:]:           # from heuristics import a, b
            if j.opname != "IMPORT_FROM":
                if j.opname not in ("STORE_NAME", "STORE_FAST", "STORE_GLOBAL", "STORE_DEREF"):
                    break
                continue
            if "." not in i.argval:
                out.add(f"{i.argval}.{j.argval}")
    return out


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:              # an empty cell (a name bound later)
        return False
    return True
