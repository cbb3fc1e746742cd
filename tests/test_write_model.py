"""--write-model (issue 14, item 10): every model method writes the model(s) it solves; the
file read back has the record's size; a heuristic is exit 2 naming it."""
from __future__ import annotations

import json
from pathlib import Path

import gurobipy as gp
import pytest

import instances
from models import model_files
from tests import cli_worker
from toolkit.registry import problem

ROOT = Path(__file__).resolve().parents[1]


def run_cli(argv):
    """solve.py in the tests' CLI helper process: (exit code, its JSON records)."""
    code, out, _ = cli_worker.call(argv)
    return code, [json.loads(line) for line in out.splitlines() if line.strip()]


def size(path: str) -> tuple[int, int]:
    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 0)
    env.start()
    try:
        m = gp.read(path, env=env)
        return m.NumVars, m.NumConstrs
    finally:
        env.dispose()


@pytest.fixture
def a2a_file(tmp_path):
    path = tmp_path / "a2a_n6.json"
    instances.save_instance(problem("a2a").generator.run(n=6, k=1), path)
    return str(path)


# (instance file, model method, suffix, models solved)
ONE_MODEL = [
    ("instances/examples/worked_example.json", "milp", ".mps"),
    ("instances/delta/t0-hand.json", "delta-joint", ".lp"),
    ("instances/lumos/logical-leaf-triangle-tau1.json", "logical-ilp-min", ".mps"),
]


@pytest.mark.parametrize("file,method,suffix", ONE_MODEL)
def test_one_model_file_has_the_records_size(tmp_path, file, method, suffix):
    target = str(tmp_path / "sub" / f"model{suffix}")       # the folder is created
    code, (rec,) = run_cli(["solve", str(ROOT / file), "--method", method, "--time-limit", "30",
                            "--write-model", target, "--format", "json"])
    assert code == 0 and rec["verified"]
    assert rec["model_files"] == [target]
    assert size(target) == (rec["n_vars"], rec["n_constrs"])
    assert not list((tmp_path / "sub").glob("model.1*"))      # renamed, not copied


def test_lexicographic_stages_are_numbered(tmp_path):
    """uniform-ilp solves unmet demand, then rewiring: two stage models, the second with the
    stage-1 optimum as one more constraint; the record's size is the last stage's."""
    target = str(tmp_path / "m.lp")
    code, (rec,) = run_cli(["solve", str(ROOT / "instances/lumos/three-pod-full-mesh-uniform.json"),
                            "--method", "uniform-ilp", "--write-model", target,
                            "--format", "json"])
    assert code == 0 and rec["verified"]
    assert rec["model_files"] == [str(tmp_path / "m.1.lp"), str(tmp_path / "m.2.lp")]
    (v1, c1), (v2, c2) = map(size, rec["model_files"])
    assert v1 == v2 and c2 == c1 + 1
    assert (v2, c2) == (rec["n_vars"], rec["n_constrs"])
    assert not (tmp_path / "m.lp").exists()


def test_per_d_models_are_numbered(tmp_path, a2a_file):
    """pmedian solves one model per d; the record reports the chosen d's model."""
    target = str(tmp_path / "p.mps")
    code, (rec,) = run_cli(["solve", a2a_file, "--method", "pmedian", "--write-model", target,
                            "--format", "json"])
    assert code == 0 and rec["verified"]
    files = rec["model_files"]
    assert len(files) > 1 and files == [model_files.numbered(target, k)
                                        for k in range(1, len(files) + 1)]
    assert (rec["n_vars"], rec["n_constrs"]) in {size(f) for f in files}


def test_heuristic_is_exit_2_naming_the_method(tmp_path):
    target = tmp_path / "h.mps"
    code, out, err = cli_worker.call(["solve", ROOT / "instances/examples/worked_example.json",
                                      "--method", "spectra", "--write-model", target])
    assert code == 2 and not out and not target.exists()
    assert len(err.strip().splitlines()) == 1
    assert "spectra is a heuristic, not a model method" in err and "milp" in err


@pytest.mark.parametrize("files,target,needle", [
    (["worked_example.json"], "m.txt", "--write-model must be a file name ending in .mps or .lp"),
    (["worked_example.json", "tiny_random_n4_s2.json"], "m.mps", "give one FILE, got 2"),
])
def test_bad_write_model_is_exit_2(files, target, needle):
    paths = [str(ROOT / "instances/examples" / f) for f in files]
    code, _, err = cli_worker.call(["solve", *paths, "--method", "milp", "--write-model", target])
    assert code == 2 and needle in err


def test_no_write_without_the_flag(tmp_path, monkeypatch):
    """Outside a --write-model run, solving writes nothing (the writer is off)."""
    monkeypatch.chdir(tmp_path)
    code, (rec,) = run_cli(["solve", str(ROOT / "instances/examples/worked_example.json"),
                            "--method", "milp", "--format", "json"])
    assert code == 0 and "model_files" not in rec and not list(tmp_path.iterdir())
