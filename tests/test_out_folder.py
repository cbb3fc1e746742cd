"""``--out DIR`` is one folder for solve, batch and gap (DIR/records.csv plus one solution
JSON per run); ``gap`` is a batch with a report (issue 14 items 2 and 4)."""
from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from tests import cli_worker
from toolkit.outdir import RECORDS_CSV, solution_path

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "instances" / "examples"
SMALL, BIG = EX / "worked_example.json", EX / "bench_n32_m8_s2_d0.1.json"   # milp declines BIG


def run(*args):
    """solve.py in the tests' CLI helper process (tests/cli_worker.py)."""
    return cli_worker.call(args)


def rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def twins(tmp_path):
    """Two different instances with the same file name in different folders."""
    paths = []
    for d, src in (("a", SMALL), ("b", EX / "shifts_n6_s1.json")):
        (tmp_path / d).mkdir()
        paths.append(tmp_path / d / "x.json")
        shutil.copy(src, paths[-1])
    return paths


@pytest.mark.parametrize("cmd", ["solve", "batch", "gap"])
def test_same_stem_files_get_their_own_solution_file(cmd, twins, tmp_path):
    out = tmp_path / "out"
    meth = ["--method", "spectra"] if cmd == "solve" else ["--methods", "spectra"]
    code, _, err = run(cmd, *twins, *meth, "--out", out)
    assert code == 0, err
    sols = [solution_path(out, p, "spectra") for p in twins]
    assert sols[0] != sols[1] and all(s.exists() for s in sols)
    names = [json.loads(s.read_text())["name"] for s in sols]
    assert names == ["worked-example", "shifts-n6-s1"]
    assert all(len(json.loads(s.read_text())["solution"]) for s in sols)
    got = rows(out / RECORDS_CSV)
    assert sorted(r["name"] for r in got) == sorted(names) and all(r["run_key"] for r in got)


def test_batch_out_folder_and_existing_file(tmp_path):
    out = tmp_path / "runs"
    code, stdout, err = run("batch", SMALL, "--methods", "spectra,spectra-noeq", "--out", out,
                            "--no-progress")
    assert code == 0 and "Traceback" not in err, err
    assert len(rows(out / RECORDS_CSV)) == 2
    assert {p.name.split(".")[1] for p in out.glob("*.json")} == {"spectra", "spectra-noeq"}
    for bad in (out / RECORDS_CSV, tmp_path / "new.csv"):     # a file; a CSV file's name
        code, stdout, err = run("batch", SMALL, "--out", bad, "--no-progress")
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "--out" in lines[0] and "folder" in lines[0]
        assert stdout == "" and not (tmp_path / "new.csv").exists()
    for cmd in (["solve", SMALL], ["gap", SMALL, "--methods", "spectra"]):
        code, _, err = run(*cmd, "--out", out / RECORDS_CSV)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "folder" in err


def test_a_solve_into_the_folder_is_a_done_batch_run(tmp_path):
    out = tmp_path / "o"
    assert run("solve", SMALL, "--out", out)[0] == 0
    code, _, err = run("batch", SMALL, "--out", out, "--no-progress")
    assert code == 0 and "0 ran, 1 already" in err, err


def test_gap_keeps_the_results_of_a_file_when_one_method_declines(tmp_path):
    code, out, err = run("gap", SMALL, BIG, "--methods", "spectra,milp", "--format", "json",
                         "--out", tmp_path / "g")
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert [(Path(r["instance"]).name, r["method"]) for r in recs] == [
        (SMALL.name, "spectra"), (SMALL.name, "milp"), (BIG.name, "spectra")]
    assert "milp declines" in err and BIG.name in err
    big = recs[-1]
    assert big["verified"] and big["rank"] == 1 and big["vs_best"] == 0
    assert not any(k in r for r in recs for k in ("run_key", "settings"))   # records as solve's
    table = rows(tmp_path / "g" / "gap.csv")
    assert [(Path(r["instance"]).name, r["method"]) for r in table] == \
        [(Path(r["instance"]).name, r["method"]) for r in recs]
    for t, r in zip(table, recs):
        assert float(t["objective"]) == r["objective"] and float(t["best_bound"]) == r["best_bound"]
        assert float(t["vs_best_bound"]) == pytest.approx(r["vs_best_bound"])
    summary = {r["method"]: r for r in rows(tmp_path / "g" / "gap-summary.csv")}
    assert summary["milp"]["instances"] == "2" and summary["milp"]["solved"] == "1"
    assert (tmp_path / "g" / "gap.png").stat().st_size > 10_000


def test_a_resumed_gap_skips_done_runs(tmp_path):
    args = ("gap", SMALL, EX / "shifts_n6_s1.json", "--methods", "spectra,spectra-noeq",
            "--format", "csv", "--out", tmp_path / "g")
    code, first, err = run(*args)
    assert code == 0 and "4 ran" in err, err
    recs = rows(tmp_path / "g" / RECORDS_CSV)
    recs[-1]["status"] = "error"                     # a crashed run is redone
    with open(tmp_path / "g" / RECORDS_CSV, "w", newline="") as fh:
        w = csv.DictWriter(fh, list(recs[0]))
        w.writeheader()
        w.writerows(recs)
    code, again, err = run(*args)
    assert code == 0 and "1 ran, 3 already" in err, err
    timed = ("runtime_s", "elapsed_s")
    strip = lambda t: [{k: v for k, v in r.items() if k not in timed}    # noqa: E731
                       for r in csv.DictReader(io.StringIO(t))]
    assert strip(again)[:3] == strip(first)[:3]       # the same ranked records, from the CSV
    assert len(rows(tmp_path / "g" / RECORDS_CSV)) == 4


def test_gap_with_workers_matches_one_worker(tmp_path):
    args = ("gap", SMALL, EX / "shifts_n6_s1.json", "--methods", "spectra,spectra-noeq",
            "--format", "json")
    one = [json.loads(x) for x in run(*args)[1].splitlines()]
    code, out, err = run(*args, "--workers", 2)
    assert code == 0, err
    two = [json.loads(x) for x in out.splitlines()]
    key = lambda r: (r["instance"], r["method"], r["objective"], r["rank"])   # noqa: E731
    assert list(map(key, two)) == list(map(key, one)) and len(one) == 4


def test_no_iis_for_the_infeasible_submodels_of_an_enumeration(tmp_path):
    """exact-k1 solves one model per d and cycle type, and some are infeasible by design:
    the run is optimal, so --out holds no IIS file (an IIS is for an infeasible instance)."""
    a2a = ROOT / "instances" / "a2a" / "uniform_n4_k1.json"
    code, out, err = run("solve", a2a, "--method", "exact-k1", "--out", tmp_path,
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)["status"] == "optimal"
    assert not list(tmp_path.glob("*.iis.ilp"))
