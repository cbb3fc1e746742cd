"""Shared harness for the bad-input property tests (issue 13, item 5).

``mutants(valid)`` is a hypothesis strategy of instance dicts made from a valid one by
one to three mutations at random places of its JSON tree: delete a key, change a value's
type, flip its sign or scale it, reshape a list (drop, repeat or truncate), nest or
un-nest a value, put a non-finite or out-of-range number in, add an unknown key.
``run_cli(tmp_path, data, method)`` writes the dict as a file and runs ``solve.py solve`` on
it in the tests' CLI helper process (tests/cli_worker.py: a crash fails the test, not pytest),
or in-process for a test that spies on what runs; ``assert_contract`` checks the outcome:
either a verified record (exit 0, one JSON line on stdout, nothing that is not a record) or
exit 2 with exactly one stderr line naming the file and a field. Tracebacks fail the test, and
so does a run still going after cli_worker.HANG_S (a hang guard, not a speed target).
"""
from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import signal
from pathlib import Path

from hypothesis import HealthCheck, settings, strategies as st

import solve
from tests import cli_worker

# one profile for every problem's fuzz test: derandomized so CI is repeatable
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

ODD_VALUES = [None, True, False, "1", "x", "", 0, -1, 0.5, -0.5, 1.5, 2**63, -(2**64), 1e308,
              -1e308, 1e-320, math.nan, math.inf, -math.inf, [], {}, [[]], [1, "a"], {"a": 1},
              10**6, 4e9]


def _paths(tree, prefix=()):
    """Every path (tuple of keys/indices) in a JSON tree, the root excluded."""
    out = []
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(tree, list):
        for i, v in enumerate(tree[:6]):        # a few entries of each list are enough
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,)))
    return out


def _get(tree, path):
    for p in path:
        tree = tree[p]
    return tree


def _mutate(tree, path, op, val):
    parent = _get(tree, path[:-1])
    key = path[-1]
    cur = parent[key]
    if op == "delete":
        del parent[key]
    elif op == "replace":
        parent[key] = copy.deepcopy(val)
    elif op == "scale" and isinstance(cur, (int, float)) and not isinstance(cur, bool):
        parent[key] = cur * val
    elif op == "nest":
        parent[key] = [cur]
    elif op == "unnest" and isinstance(cur, list) and cur:
        parent[key] = cur[0]
    elif op == "stringify":
        parent[key] = json.dumps(cur)
    elif op == "reshape" and isinstance(cur, list):
        parent[key] = cur[:-1] if val == "drop" else cur + cur[-1:] if val == "repeat" and cur \
            else cur[: max(0, len(cur) // 2)]
    elif op == "unknown" and isinstance(cur, dict):
        cur["swtiches"] = 1
    else:
        parent[key] = copy.deepcopy(val)


@st.composite
def mutants(draw, valid: dict, keep=("problem",)):
    data = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p[0] not in keep]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["delete", "replace", "replace", "replace", "scale", "nest",
                                   "unnest", "stringify", "reshape", "unknown"]))
        val = draw(st.sampled_from(ODD_VALUES + ["drop", "repeat", "half", -1, 1e6, 1e-9, 0]))
        if op == "scale":
            val = draw(st.sampled_from([-1, 0, 1e-9, 1e6, 1e12, 2.5]))
        try:
            _mutate(data, path, op, val)
        except (KeyError, IndexError, TypeError):
            pass
    if draw(st.booleans()) and draw(st.booleans()):
        data["swtiches"] = 2              # a misspelt top-level field
    return data


class Hang(BaseException):      # not an Exception: run_task must not swallow it
    pass


def _alarm(signum, frame):
    raise Hang(f"run still going after {cli_worker.HANG_S:.0f} s")


def run_cli(tmp_path: Path, data, method: str | None = None, extra=(),
            in_process: bool = False) -> tuple[int, str, str, Path]:
    """Write ``data`` (dict, or raw text) to a file and run ``solve.py solve`` on it, in the
    CLI helper process, or with ``in_process`` in this one (for a test's spy or stand-in)."""
    path = tmp_path / "fuzz.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, allow_nan=True))
    argv = ["solve", str(path), "--format", "json", *(["--method", method] if method else []),
            *extra]
    if not in_process:
        return (*cli_worker.call(argv), path)
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(cli_worker.HANG_S))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = solve.main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue(), path


def assert_contract(code: int, out: str, err: str, path: Path) -> None:
    """Exit 0 with verified JSON records only, or exit 2 with one line naming file and field."""
    if code == 0:
        lines = out.splitlines()
        assert lines, f"exit 0 without a record; stderr: {err!r}"
        for line in lines:
            rec = json.loads(line)
            assert rec["verified"] is True, rec
        return
    assert code == 2, f"exit {code} (expected 0 or 2); stderr: {err!r}"
    assert out == "", f"bad input printed on stdout: {out!r}"
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one stderr line, got: {err!r}"
    assert str(path) in lines[0], f"the error does not name the file: {lines[0]!r}"
    assert "field '" in lines[0] or "malformed JSON" in lines[0] or " declines instance " in lines[0], \
        f"the error does not name a field: {lines[0]!r}"


def patched(base: dict, **fields) -> dict:
    """A deep copy of ``base`` with top-level ``fields`` replaced."""
    d = copy.deepcopy(base)
    d.update(fields)
    return d


def expect_bad(tmp_path: Path, data, method: str, field: str, *words: str,
               refused_early=None) -> str:
    """Run the CLI on ``data``: exit 2 with one line naming the file and ``field`` (and each
    of ``words``); returns that line. With ``refused_early`` (the test's monkeypatch), also
    refused before any method runs or anything large is allocated (refused_before_solving)."""
    if refused_early is not None:
        code, out, err, path = refused_before_solving(tmp_path, refused_early, data, method)
    else:
        code, out, err, path = run_cli(tmp_path, data, method)
        assert_contract(code, out, err, path)
        assert code == 2, f"accepted: {out!r}"
    line = err.strip()
    assert f"field '{field}'" in line, line
    for w in words:
        assert w in line, line
    return line


def check_mutants(tmp_path: Path, base: dict, method: str) -> None:
    """The FUZZ property over ``mutants(base)`` solved by ``method`` (each run in the CLI
    helper, under its hang guard)."""
    from hypothesis import given

    @FUZZ
    @given(data=mutants(base))
    def check(data):
        assert_contract(*run_cli(tmp_path, data, method))

    check()


REFUSAL_MIB = 16    # traced while refusing a file whose arrays would need GiB to TiB


def refused_before_solving(tmp_path: Path, monkeypatch, data, method: str | None = None,
                           extra=()) -> tuple[int, str, str, Path]:
    """``run_cli`` in this process with every method a tripwire (no kernel warmed): the file
    is refused (exit 2, the contract's one line) before any method runs, and at most
    REFUSAL_MIB are allocated while refusing it (tracemalloc, which numpy reports to; a first
    run has done the imports): refused from its header, before anything of the size it names
    is built. A property of the work done, not of the time it takes."""
    import dataclasses
    import tracemalloc

    from toolkit.registry import problems

    def tripwire(inst, cfg):
        raise AssertionError("a method ran on a file that should have been refused")

    for prob in problems().values():
        for name, m in list(prob.methods.items()):
            monkeypatch.setitem(prob.methods, name, dataclasses.replace(m, fn=tripwire, kernels=()))
    run_cli(tmp_path, data, method, extra, in_process=True)
    tracemalloc.start()
    try:
        code, out, err, path = run_cli(tmp_path, data, method, extra, in_process=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_contract(code, out, err, path)
    assert code == 2, f"accepted: {out!r}"
    assert peak < REFUSAL_MIB * 2**20, f"{peak / 2**20:.1f} MiB allocated while refusing"
    return code, out, err, path
