"""solve.py end to end: listing, solve records, exit codes and one-line errors for bad
input, flags and output paths; the helpers the other CLI tests share (batch and gap:
tests/test_cli_batch.py; per problem: tests/test_cli_problems.py)."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "instances" / "examples"


def cli(*args, cwd=ROOT):
    p = subprocess.run([sys.executable, str(ROOT / "solve.py"), *map(str, args)], cwd=cwd,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_list_names_methods_and_backends():
    code, out, _ = cli("list")
    assert code == 0
    for word in ("spectra", "spectra-noeq", "spectra-lp", "milp", "gurobi", "highs", "auto",
                 "spectra-runtime"):
        assert word in out


def test_solve_json_record_is_verified(tmp_path):
    code, out, err = cli("solve", EX / "worked_example.json", "--format", "json", "--out", tmp_path)
    assert code == 0, err
    rec = json.loads(out.strip().splitlines()[0])
    for key in ("instance", "problem", "method", "backend", "status", "objective", "bound", "gap",
                "runtime_s", "n_vars", "n_constrs", "verified", "makespan", "lower_bound"):
        assert key in rec
    assert rec["verified"] is True and rec["objective"] == pytest.approx(0.525)
    from toolkit.outdir import solution_path

    sol = json.loads(solution_path(tmp_path, EX / "worked_example.json", "spectra").read_text())
    assert len(sol["solution"]["switches"]) == 2


def test_milp_same_objective_on_gurobi_and_highs():
    objs = {}
    for backend in ("gurobi", "highs"):
        code, out, err = cli("solve", EX / "worked_example.json", "--method", "milp",
                             "--backend", backend, "--mip-gap", 0, "--format", "json")
        if backend == "gurobi" and code != 0 and "Gurobi" in out + err:
            pytest.skip("no Gurobi")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["backend"] == backend and rec["status"] == "optimal" and rec["verified"]
        objs[backend] = rec["objective"]
    assert objs["gurobi"] == pytest.approx(objs["highs"], rel=1e-6)


BAD = {
    "nonsquare.json": ('{"problem": "spectra", "demand": [[1, 2]], "switches": 1, "delay": 0}',
                       "field 'demand': must be square"),
    "negative.json": ('{"problem": "spectra", "demand": [[0, -1], [1, 0]], "switches": 1, "delay": 0}',
                      "field 'demand': must be non-negative"),
    "s0.json": ('{"problem": "spectra", "demand": [[1]], "switches": 0, "delay": 0}',
                "field 'switches': must be >= 1"),
    "negdelay.json": ('{"problem": "spectra", "demand": [[1]], "switches": 1, "delay": -1}',
                      "field 'delay'"),
    "unknown.json": ('{"problem": "tsp", "cities": 3}', "field 'problem': unknown problem"),
    "broken.json": ('{"problem": "spectra", "demand": [[1, 2]', "malformed JSON"),
    "bigint.json": ('{"problem": "spectra", "demand": [[1]], "switches": ' + "9" * 5000
                    + ', "delay": 0}', "bigint.json"),
    "dupkey.json": ('{"problem": "spectra", "demand": [[1]], "switches": 1, "switches": 2, '
                    '"delay": 0}', "field 'switches': given twice"),
}


@pytest.mark.parametrize("fname", sorted(BAD))
def test_bad_input_exit_2_one_line_no_output(fname, tmp_path):
    text, words = BAD[fname]
    f = tmp_path / fname
    f.write_text(text)
    out_dir = tmp_path / "out"
    code, out, err = cli("solve", f, "--out", out_dir)
    assert code == 2
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and words in lines[0] and fname in lines[0]
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_log_dir_gets_one_solver_log_per_task(tmp_path):
    code, _, err = cli("solve", EX / "worked_example.json", "--method", "milp", "--backend", "highs",
                       "--log-dir", tmp_path)
    assert code == 0, err
    assert "Status" in (tmp_path / "worked_example.milp.log").read_text()


def test_bad_method_option_and_flags_exit_2():
    assert cli("solve", EX / "worked_example.json", "--method", "nope")[0] == 2
    assert cli("solve", EX / "worked_example.json", "--option", "refine=magic")[0] == 2
    assert cli("solve", EX / "worked_example.json", "--time-limit", "-1")[0] == 2
    code, _, err = cli("solve", EX / "bench_n100_s4_d0.04.json", "--method", "milp")
    assert code == 2 and "too large" in err


@pytest.mark.parametrize("args", [
    ("solve", EX / "worked_example.json", "--out", "{F}/sub"),
    ("batch", EX / "worked_example.json", "--out", "{F}/sub"),
    ("gap", EX / "worked_example.json", "--methods", "spectra", "--out", "{F}/sub"),
    ("solve", EX / "worked_example.json", "--method", "milp", "--log-dir", "{F}/sub"),
    ("solve", EX / "worked_example.json", "--method", "milp", "--write-model", "{F}/m.mps"),
    ("reproduce", "spectra-example", "--out", "{F}/sub"),
    ("generate", "spectra", "--workload", "random", "--n", 4, "-o", "{F}/g.json"),
], ids=["solve-out", "batch-out", "gap-out", "log-dir", "write-model", "reproduce", "generate"])
def test_output_path_under_a_file_is_one_line_exit_2(args, tmp_path):
    """An output folder that cannot be created (its parent is a file: no write permission
    or a read-only file system fail the same way) is bad input, named, before any run."""
    f = tmp_path / "afile"
    f.write_text("x")
    code, out, err = cli(*(str(a).replace("{F}", str(f)) for a in args))
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and str(f) in err, err


@pytest.mark.parametrize("args,flag", [
    (("solve", EX / "worked_example.json", "--out", ""), "--out"),
    (("batch", EX / "worked_example.json", "--out", ""), "--out"),
    (("gap", EX / "worked_example.json", "--methods", "spectra", "--out", ""), "--out"),
    (("solve", EX / "worked_example.json", "--method", "milp", "--log-dir", ""), "--log-dir"),
    (("reproduce", "spectra-example", "--out", ""), "--out"),
], ids=["solve-out", "batch-out", "gap-out", "log-dir", "reproduce"])
def test_empty_output_path_is_one_line_exit_2(args, flag, tmp_path):
    """An empty path was taken as "no folder" (solve, gap: nothing kept; batch: "results
    in " and "already in None") or as the current folder (reproduce wrote its report
    there; --log-dir its logs)."""
    code, out, err = cli(*args, cwd=tmp_path)
    assert code == 2 and out == "" and "Traceback" not in err, err
    line, = err.strip().splitlines()
    assert flag in line and "empty" in line, err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args", [
    ("solve", EX / "worked_example.json", "--threads", "x"),
    ("solve", EX / "worked_example.json", "--format", "xml"),
    ("solve", EX / "worked_example.json", "--format", "csv", "--format", "json"),
    ("solve",), ("bogus",), (), ("list", "extra"), ("-v", "-q", "list"),
    ("gap", EX / "worked_example.json"),
    ("generate", "spectra", "--n", "x", "-o", "x.json"),
], ids=["type", "choice", "repeated", "no-file", "command", "no-command", "extra", "v-and-q",
        "required", "generate"])
def test_bad_flag_is_one_line_exit_2(args):
    code, out, err = cli(*args)
    assert code == 2 and out == "" and "Traceback" not in err
    line, = err.strip().splitlines()
    assert "error:" in line and "--help" in line, err


@pytest.mark.parametrize("args,field", [
    (("spectra", "--workload", "random", "--n", 4, "--delay", "1e308"), "'delay'"),
    (("a2a", "--workload", "uniform", "--n", 4, "--k", 1, "--latency-s", "1e308"), "'link.latency_s'"),
    (("lumos-sim", "--rho", "1e308"), "'workload.rho'"),
])
def test_generate_never_writes_a_file_solve_refuses(tmp_path, args, field):
    f = tmp_path / "x.json"
    code, out, err = cli("generate", *args, "-o", f)
    assert code == 2 and out == "" and field in err and not f.exists(), err
    assert len(err.strip().splitlines()) == 1, err
