"""Shared harness for the bad-input property tests (issue 13, item 5).

``mutants(valid)`` is a hypothesis strategy of instance dicts made from a valid one by
one to three mutations at random places of its JSON tree: delete a key, change a value's
type, flip its sign or scale it, reshape a list (drop, repeat or truncate), nest or
un-nest a value, put a non-finite or out-of-range number in, add an unknown key.
``run_cli(tmp_path, data, method)`` writes the dict as a file and runs ``solve.py solve``
in-process on it under a wall-clock alarm; ``assert_contract`` checks the outcome: either a
verified record (exit 0, one JSON line on stdout, nothing that is not a record) or exit 2
with exactly one stderr line naming the file and a field. Tracebacks fail the test (the
exception escapes), and so does a run that outlives the alarm (a hang).
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

# one profile for every problem's fuzz test: derandomized so CI is repeatable
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
ALARM_S = 20     # a run past this is a hang

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
    raise Hang(f"run exceeded {ALARM_S} s")


def run_cli(tmp_path: Path, data, method: str | None = None, extra=()) -> tuple[int, str, str, Path]:
    """Write ``data`` (dict, or raw text) to a file and run ``solve.py solve`` on it."""
    path = tmp_path / "fuzz.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, allow_nan=True))
    argv = ["solve", str(path), "--format", "json", *(["--method", method] if method else []),
            *extra]
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(ALARM_S)
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


def expect_bad(tmp_path: Path, data, method: str, field: str, *words: str) -> str:
    """Run the CLI on ``data``: exit 2 with one line naming the file and ``field`` (and each
    of ``words``); returns that line."""
    code, out, err, path = run_cli(tmp_path, data, method)
    assert_contract(code, out, err, path)
    assert code == 2, f"accepted: {out!r}"
    line = err.strip()
    assert f"field '{field}'" in line, line
    for w in words:
        assert w in line, line
    return line


def check_mutants(tmp_path: Path, base: dict, method: str, budget_s: float = 10.0) -> None:
    """The FUZZ property over ``mutants(base)`` solved by ``method``, whole run within
    ``budget_s`` (a bound against hangs, not a speed target)."""
    import time

    from hypothesis import given

    t0 = time.perf_counter()

    @FUZZ
    @given(data=mutants(base))
    def check(data):
        assert_contract(*run_cli(tmp_path, data, method))

    check()
    assert time.perf_counter() - t0 < budget_s
