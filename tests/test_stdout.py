"""stdout carries only the records the user asked for (issue 13, item 2).

Every problem type is solved by one of its model methods on HiGHS and on Gurobi (small
models: the pip licence accepts them) in a separate process, as a user pipes it: the
JSON lines must parse with ``json.loads`` and the CSV with ``pandas.read_csv``, with no
banner, log or warning in between. A C-level write to file descriptor 1 (what a solver
banner is) must land on stderr, not among the records.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import needs_gurobi

ROOT = Path(__file__).resolve().parents[1]

# (problem, shipped or generated file, a model method that runs on both backends)
CASES = [
    ("spectra", "instances/examples/worked_example.json", "spectra-lp"),
    ("delta", "instances/delta/t0-hand.json", "delta-joint"),
    ("a2a", None, "pmedian"),
    ("lumos-reconfig", "instances/lumos/three-pod-full-mesh-cross.json", "itv-ilp"),
    ("lumos-logical", "instances/lumos/logical-leaf-triangle-tau1.json", "logical-ilp-min"),
    ("lumos-staging", "instances/lumos/staging-P8-tau1.json", "staging-ilp"),
    ("lumos-placement", "instances/lumos/placement-bestfit-48.json", "placement-ilp"),
    ("lumos-sim", "instances/lumos/sim-lumos-256.json", "sim-itv-ilp"),
]
BACKENDS = ["highs", pytest.param("gurobi", marks=needs_gurobi)]


def run(*args):
    p = subprocess.run([sys.executable, str(ROOT / "solve.py"), *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def a2a_file(tmp_path_factory):
    f = tmp_path_factory.mktemp("a2a") / "example.json"
    code, out, err = run("generate", "a2a", "--workload", "example", "-o", f)
    assert code == 0 and out == "", (out, err)
    return f


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("problem,path,method", CASES, ids=[c[0] for c in CASES])
def test_json_and_csv_pipe_into_parsers(problem, path, method, backend, a2a_file):
    f = a2a_file if path is None else ROOT / path
    code, out, err = run("solve", f, "--method", method, "--backend", backend, "--format", "json",
                         "--time-limit", 20)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 1, out
    rec = json.loads(lines[0])
    assert rec["problem"] == problem and rec["backend"] == backend and rec["verified"] is True
    assert all(f"{pkg} " in rec["versions"] for pkg in ("gurobipy", "highspy", "ortools"))
    code, out, err = run("solve", f, "--method", method, "--backend", backend, "--format", "csv",
                         "--time-limit", 20)
    assert code == 0, err
    df = pd.read_csv(io.StringIO(out))
    assert len(df) == 1 and df.loc[0, "backend"] == backend and bool(df.loc[0, "verified"])


def test_list_prints_only_its_listing():
    code, out, err = run("list")
    assert code == 0, err
    assert "Running HiGHS" not in out and "license" not in out.lower()
    assert out.splitlines()[0] == "problems and methods:"


def test_c_level_writes_to_fd1_go_to_stderr():
    """What a solver banner does (printf from C) never reaches the record stream."""
    code = ("import ctypes, sys, solve\n"
            "rec = solve._records_only_stdout()\n"
            "ctypes.CDLL(None).printf(b'Running HiGHS x.y.z banner\\n')\n"
            "ctypes.CDLL(None).fflush(None)\n"
            "print('a library print')\n"
            "rec.write('{\"record\": 1}\\n')\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout == '{"record": 1}\n'
    assert "Running HiGHS" in p.stderr and "a library print" in p.stderr


def test_non_finite_values_are_null_in_json():
    import solve

    buf = io.StringIO()
    solve.print_records([{"objective": float("inf"), "gap": float("nan"), "message": "",
                          "loads": [1.0, float("-inf")]}], "json", stream=buf)
    rec = json.loads(buf.getvalue())
    assert rec["objective"] is None and rec["gap"] is None and rec["loads"] == [1.0, None]
    assert "objective=inf" in rec["message"] and "gap=nan" in rec["message"]


def test_a_declining_method_is_one_line_naming_the_file(a2a_file):
    code, out, err = run("solve", a2a_file, "--method", "exact-te")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {a2a_file}: method exact-te declines")


def test_a_decline_names_the_methods_that_take_the_instance(tmp_path):
    f = tmp_path / "a2a_n1024.json"              # generate's own file: rdc (the default) declines
    assert run("generate", "a2a", "--n", "1024", "-o", f)[0] == 0
    code, out, err = run("solve", f)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "method rdc declines" in err and "; methods that take it: " in err, err
    takers = err.strip().split("; methods that take it: ")[1].split(", ")
    assert "rdc" not in takers and "one-hop" in takers, takers
    code, out, err = run("solve", f, "--method", takers[0], "--format", "json")
    assert code == 0 and json.loads(out)["verified"] is True, err


def _piped_into_head(*args, lines=1):
    """``solve.py ARGS | head -LINES`` with the reader closing its end early: the exit code
    and stderr of solve.py, and what the reader got."""
    w = subprocess.Popen([sys.executable, str(ROOT / "solve.py"), *map(str, args)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = [w.stdout.readline() for _ in range(lines)]
    w.stdout.close()                       # the reader is done: the pipe closes
    err = w.stderr.read()
    return w.wait(timeout=600), got, err


@pytest.mark.parametrize("args", [
    ("solve", *sorted(map(str, (ROOT / "instances/examples").glob("*.json"))), "--format", "csv"),
    ("list",),
    ("gap", "instances/examples/worked_example.json", "instances/examples/tiny_random_n4_s2.json",
     "--methods", "spectra,spectra-noeq", "--format", "csv", "-q"),
], ids=["solve-csv", "list", "gap-csv"])
def test_closed_pipe_is_not_an_error(args):
    code, got, err = _piped_into_head(*args)
    assert got[0].strip(), got                   # the reader got its line
    assert "Traceback" not in err and "Broken pipe" not in err, err
    assert code == 0, err


def test_closed_pipe_keeps_the_exit_code_of_a_bad_file_before_it(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"problem": "spectra", "demand": [[0, 1], [1, 0]]}')
    good = ["instances/examples/tiny_random_n4_s2.json"] * 40     # a record a file
    code, got, err = _piped_into_head("solve", bad, *good, "--format", "json")
    assert got[0].startswith("{"), got
    assert "Traceback" not in err and "Broken pipe" not in err, err
    assert code == 2, err                       # the bad file, not 0 for the closed pipe
    assert err.strip().splitlines() == [f"error: {bad}: field 'switches': missing"], err


def test_full_disk_on_stdout_is_one_line_exit_1():
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, str(ROOT / "solve.py"), "solve",
                            "instances/examples/worked_example.json"], cwd=ROOT, stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=600)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "stdout" in p.stderr, p.stderr
