"""The library API (issue 14, item 10): toolkit.api.solve / batch, the README's example,
and the ``ocs-opt`` console script."""
from __future__ import annotations

import dataclasses
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import instances
import solve as cli
from tests import cli_worker
from toolkit import api, config
from toolkit.registry import RunConfig, problem
from toolkit.run import CORE_FIELDS

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "instances" / "examples"
WORKED = str(EX / "worked_example.json")


def cli_records(argv) -> tuple[int, list[dict], str]:
    """solve.py in the tests' CLI helper process: (exit code, its JSON records, stderr)."""
    code, out, err = cli_worker.call(argv)
    return code, [json.loads(line) for line in out.splitlines() if line.strip()], err


# --------------------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------------------
def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- tests/test_api.py runs this block -->\s*```python\n(.*?)```", text, re.S)
    assert m, "README lost its library example (the marked ```python block)"
    return m.group(1)


def test_readme_example_runs(monkeypatch, capsys):
    code = readme_example()
    assert "from toolkit.api import solve, batch" in code
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    first, *table = out.splitlines()
    assert first.startswith("optimal 0.525 0.0 ")               # the worked example's optimum
    for method in ("spectra", "spectra-noeq", "sqrt-alloc"):
        assert any(method in line for line in table)


# --------------------------------------------------------------------------------------
# solve
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["spectra", "milp", "baseline"])
def test_solve_is_the_clis_record(method):
    rec = api.solve(WORKED, method=method, time_limit=30)
    code, (want,), _ = cli_records(["solve", WORKED, "--method", method, "--time-limit", "30",
                                    "--format", "json"])
    assert code == 0
    got = rec.to_dict()
    assert set(got) == set(want)
    for k in ("instance", "problem", "method", "backend", "status", "objective", "bound",
              "verified", "n_vars", "n_constrs", "makespan"):
        assert got[k] == pytest.approx(want[k]) if isinstance(want[k], float) else \
            got[k] == want[k], k
    assert rec.makespan == rec.metrics["makespan"] == rec.objective


def test_record_holds_the_checked_solution():
    rec = api.solve(WORKED)                          # the problem's default method
    inst = instances.load_instance(WORKED)
    prob = problem("spectra")
    assert rec.method == prob.default_method and rec.verified
    violations, metrics = prob.check(inst, rec.solution)
    assert not violations and metrics["makespan"] == rec.objective
    assert [f.name for f in dataclasses.fields(api.Record)][:len(CORE_FIELDS)] == \
        list(CORE_FIELDS)
    with pytest.raises(AttributeError, match="no field or metric 'nope'"):
        rec.nope


def test_dict_and_object_instances():
    data = instances.read_json(WORKED)
    by_path = api.solve(WORKED, method="milp")
    by_dict = api.solve(data, method="milp")
    by_obj = api.solve(instances.from_dict(data), method="milp")
    assert by_dict.objective == by_obj.objective == by_path.objective == 0.525
    assert by_dict.instance == "<dict>" and by_dict.name == by_path.name
    generated = problem("a2a").generator.run(n=6, k=1)       # a generator's instance object
    rec = api.solve(generated, method="rdc")
    assert rec.verified and rec.problem == "a2a"
    with pytest.raises(TypeError, match="instance_or_path"):
        api.solve(42)


@pytest.mark.parametrize("setting,value,words", [
    ("time_limit", -1, "must be > 0, got -1"),
    ("time_limit", "10", "must be a finite number"),
    ("mip_gap", -0.1, "must be >= 0"),
    ("threads", 0, "must be >= 1"),
    ("threads", 1.5, "must be an integer"),
    ("threads", 10**6, "must be <= 1024, got 1000000"),
    ("time_limit", 1e300, "must be <= 1e+07 s, got 1e+300"),
    ("backend", "cplex", "must be one of auto, gurobi, highs"),
    ("params", ["TimeLimit"], "must be a dict"),
    ("params", {"MIPFocuss": 1}, "name MIPFocuss: not a Gurobi parameter; did you mean MIPFocus"),
    ("write_model", "m.txt", "ending in .mps or .lp"),
    ("log_dir", "", "is an empty path"),                # was the current folder
    ("timelimit", 5, "is not a setting (known: backend, time_limit"),
])
def test_bad_setting_names_the_field(setting, value, words):
    with pytest.raises(ValueError) as exc:
        api.solve(WORKED, **{setting: value})
    assert isinstance(exc.value, api.ConfigError) and exc.value.field == setting
    assert str(exc.value).startswith(f"{setting} ") and words in str(exc.value)


@pytest.mark.parametrize("flag,value,words", [
    ("--time-limit", "-1", "--time-limit must be > 0, got -1.0"),
    ("--mip-gap", "-0.1", "--mip-gap must be >= 0, got -0.1"),
    ("--threads", "0", "--threads must be >= 1, got 0"),
    ("--threads", "1000000", "--threads must be <= 1024, got 1000000"),
    ("--time-limit", "1e300", "--time-limit must be <= 1e+07 s, got 1e+300"),
])
def test_cli_has_the_same_rules(flag, value, words):
    code, recs, err = cli_records(["solve", WORKED, flag, value])
    assert code == 2 and not recs and err.strip() == f"error: {words}"


def test_bad_input_raises_value_errors():
    with pytest.raises(instances.InstanceError, match="unknown method 'nope'"):
        api.solve(WORKED, method="nope")
    with pytest.raises(instances.InstanceError, match="field 'switches'"):
        api.solve({**instances.read_json(WORKED), "switches": 0})
    with pytest.raises(instances.InstanceError, match="spectra is a heuristic, not a model") \
            as exc:
        api.solve(WORKED, method="spectra", write_model="m.mps")
    assert exc.value.field == "write_model"


def test_ctrl_c_propagates_with_the_record(monkeypatch):
    prob = problem("spectra")

    def ctrl_c(inst, cfg):
        raise KeyboardInterrupt

    monkeypatch.setitem(prob.methods, "spectra",
                        dataclasses.replace(prob.methods["spectra"], fn=ctrl_c))
    with pytest.raises(KeyboardInterrupt) as exc:
        api.solve(WORKED, method="spectra")
    assert isinstance(exc.value, api.Interrupted)
    assert exc.value.record["status"] == "interrupted" and exc.value.record["method"] == "spectra"


def test_config_rules_cover_run_config():
    from models.backend import BACKENDS

    assert config.BACKENDS == BACKENDS
    # every RunConfig field is a setting or one the run sets per method: a new field must
    # be placed on one side (and, if a path, type-checked in check_config)
    user = {"backend", "time_limit", "mip_gap", "threads", "params", "options", "log_dir",
            "iis_path", "write_model"}
    per_run = {"log", "options_shared", "declared", "budget"}
    assert set(config.config_fields()) == user
    assert {f.name for f in dataclasses.fields(RunConfig)} == user | per_run
    cfg = config.make_config(time_limit=5, options={"slots": 3}, log_dir=Path("logs"))
    assert cfg.time_limit == 5 and cfg.options == {"slots": 3} and cfg.log_dir == "logs"


# --------------------------------------------------------------------------------------
# batch
# --------------------------------------------------------------------------------------
FILES = [str(EX / "worked_example.json"), str(EX / "tiny_random_n4_s2.json"),
         str(EX / "delta_gpt-7b.json")]


def test_batch_one_row_per_file_and_method():
    with pytest.warns(api.BatchWarning, match="delta_gpt-7b.json: none of the methods"):
        df = api.batch(FILES, methods=["spectra", "spectra-noeq"])
    assert len(df) == 4
    assert set(zip(df["instance"], df["method"])) == {
        (f, m) for f in FILES[:2] for m in ("spectra", "spectra-noeq")}
    assert df["verified"].all() and len(df.attrs["skipped"]) == 1
    one = api.solve(FILES[1], method="spectra-noeq")
    row = df[(df["instance"] == FILES[1]) & (df["method"] == "spectra-noeq")].iloc[0]
    assert row["objective"] == pytest.approx(one.objective)
    assert set(df.groupby("method")["gap"].mean().index) == {"spectra", "spectra-noeq"}
    # text columns stay text: heuristics have no backend (""), not a float NaN
    assert df["backend"].map(type).eq(str).all() and df["message"].map(type).eq(str).all()
    assert df["gap"].dtype.kind == "f"


def test_batch_default_methods_and_resume(tmp_path):
    out = tmp_path / "runs.csv"
    df = api.batch(FILES, out=out)                  # each problem's default method
    assert list(df["method"]) == [problem("spectra").default_method] * 2 + \
        [problem("delta").default_method]
    again = api.batch(FILES, out=out)               # resumed: the same rows, nothing rerun
    assert list(again["run_key"]) == list(df["run_key"])
    assert list(again["runtime_s"]) == list(df["runtime_s"])


def test_batch_bad_settings():
    with pytest.raises(api.ConfigError, match="methods has unknown method"):
        api.batch(FILES, methods="spectra,nope")
    with pytest.raises(api.ConfigError) as exc:
        api.batch(FILES, time_limit=0)
    assert exc.value.field == "time_limit"
    with pytest.raises(api.ConfigError, match="write_model"):
        api.batch(FILES, write_model="m.mps")
    for bad in (0, 10**6, 2.0):
        with pytest.raises(api.ConfigError, match=r"workers must be an integer in 1\.\.256"):
            api.batch(FILES, workers=bad)


# --------------------------------------------------------------------------------------
# the console script
# --------------------------------------------------------------------------------------
def scripts() -> dict:
    try:
        import tomllib
    except ImportError:                 # Python 3.10: the lock's tomli
        import tomli as tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "solve" in meta["tool"]["setuptools"]["py-modules"]     # installed as a module
    return meta["project"]["scripts"]


def test_console_script_is_solve_cli():
    module, _, func = scripts()["ocs-opt"].partition(":")
    assert getattr(importlib.import_module(module), func) is cli.cli


@pytest.mark.parametrize("argv", [["list"], ["solve", WORKED, "--format", "json"],
                                  ["solve", WORKED, "--time-limit", "-1"]])
def test_console_script_behaves_like_solve_py(argv):
    """The entry point, called as the installed ``ocs-opt`` wrapper calls it, prints what
    ``python solve.py`` prints and exits with its code."""
    module, _, func = scripts()["ocs-opt"].partition(":")
    wrapper = (f"import sys, importlib; sys.argv[0] = 'ocs-opt'; "
               f"sys.exit(getattr(importlib.import_module({module!r}), {func!r})())")
    via_script = subprocess.run([sys.executable, "-c", wrapper, *argv], cwd=ROOT,
                                capture_output=True, text=True, timeout=300)
    via_file = subprocess.run([sys.executable, "solve.py", *argv], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    assert via_script.returncode == via_file.returncode
    if argv[0] == "list":
        assert via_script.stdout == via_file.stdout and "problems and methods:" in via_script.stdout
    else:                                   # records: equal but for the measured times
        strip = (lambda s: re.sub(r'"(runtime_s|solver_runtime_s|elapsed_s)": [0-9.e-]+', "", s))
        assert strip(via_script.stdout) == strip(via_file.stdout)
        assert via_script.stderr == via_file.stderr


@pytest.mark.parametrize("call,field", [
    (lambda f: api.solve(WORKED, method="milp", log_dir=str(f / "logs")), "log_dir"),
    (lambda f: api.solve(WORKED, method="milp", write_model=str(f / "m.mps")), "write_model"),
    (lambda f: api.batch(WORKED, out=f / "runs.csv"), "out"),
], ids=["log_dir", "write_model", "batch-out"])
def test_output_path_under_a_file_is_a_config_error(call, field, tmp_path):
    """A folder that cannot be created (here its parent is a file) is a ConfigError naming
    the setting and the path, before any run (was an OSError deep inside, or a failed run)."""
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(api.ConfigError) as exc:
        call(f)
    assert exc.value.field == field and str(f) in str(exc.value)


@pytest.mark.parametrize("demand", [np.eye(3), ((0.0, 1.0), (1.0, 0.0))])
def test_non_json_data_is_named_in_one_line(demand):
    """A numpy array or a tuple where the instance wants a JSON list: the error names the
    type and the way out, on one line (it said "got a number", with the array's newlines)."""
    with pytest.raises(instances.InstanceError) as err:
        api.solve({"problem": "spectra", "name": "x", "demand": demand, "switches": 2,
                   "delay": 0.1})
    msg = str(err.value)
    assert "\n" not in msg and "'demand'" in msg and type(demand).__name__ in msg
    assert "a number" not in msg and "tolist()" in msg


# --------------------------------------------------------------------------------------
# wrong argument types (probe 2): a ValueError naming the argument, not a TypeError or
# an OSError from deep inside, and no silent acceptance
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", [["milp"], "", ("milp",)])
def test_solve_bad_method_names_the_field(method):
    """A list was a TypeError (unhashable); "" silently ran the default method."""
    with pytest.raises(instances.InstanceError) as exc:
        api.solve(WORKED, method=method)
    assert exc.value.field == "method" and "\n" not in str(exc.value)


def test_cli_empty_method_is_bad_input():
    code, recs, err = cli_records(["solve", WORKED, "--method", ""])
    assert code == 2 and not recs and "unknown method ''" in err and len(err.splitlines()) == 1


def test_numpy_integers_are_integers():
    """``threads=np.int64(2)`` was refused as not an integer (np.float64 time limits and
    option values were accepted); it is an integer, and stored as a Python int."""
    cfg = config.make_config(threads=np.int64(2), time_limit=np.float64(5))
    assert cfg.threads == 2 and type(cfg.threads) is int and cfg.time_limit == 5.0
    df = api.batch(WORKED, workers=np.int64(1))
    assert list(df["verified"]) == [True]


@pytest.mark.parametrize("kw,field", [
    ({"paths": None}, "paths"), ({"paths": 5}, "paths"),
    ({"paths": {"problem": "spectra"}}, "paths"), ({"paths": [{"problem": "spectra"}]}, "paths"),
    ({"paths": []}, "paths"),
    ({"methods": 5}, "methods"), ({"methods": ["spectra", 5]}, "methods"),
    ({"workers": True}, "workers"), ({"progress": "yes"}, "progress"),
    ({"out": 5}, "out"), ({"scheduler": 5}, "scheduler"), ({"scheduler": ""}, "scheduler"),
], ids=lambda v: repr(v)[:30])
def test_batch_bad_argument_names_it(kw, field, tmp_path):
    """Each was a TypeError from inside (``'int' object is not iterable``, ``expected str``),
    or a silently empty DataFrame (a dict's keys taken as file names, no paths at all)."""
    kw = {"paths": WORKED, **kw}
    with pytest.raises(api.ConfigError) as exc:
        api.batch(kw.pop("paths"), **kw)
    assert exc.value.field == field and "\n" not in str(exc.value)


def test_batch_out_that_is_a_folder_is_a_config_error(tmp_path):
    """``out`` is the records CSV: a folder there was an IsADirectoryError."""
    with pytest.raises(api.ConfigError) as exc:
        api.batch(WORKED, out=tmp_path)
    assert exc.value.field == "out" and str(tmp_path) in str(exc.value)
