"""solve.py end to end: exit codes, formats, batch resume, workers, Dask, generate, reproduce."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.isolated import run_isolated

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


def _batch_dir(tmp_path):
    d = tmp_path / "inst"
    d.mkdir()
    for name in ("worked_example.json", "shifts_n6_s1.json", "bench_n32_m8_s2_d0.1.json"):  # spectra
        shutil.copy(EX / name, d / name)
    return d


def test_batch_skips_bad_file_and_solves_the_rest(tmp_path):
    d = _batch_dir(tmp_path)
    (d / "broken.json").write_text("{not json")
    out = tmp_path / "runs" / "records.csv"
    code, stdout, err = cli("batch", d, "--out", out.parent, "--no-progress")
    assert code == 2 and "broken.json" in err
    got = rows(out)
    assert len(got) == 3 and all(r["verified"] == "True" for r in got)
    assert not any("broken" in r["instance"] for r in got)
    assert "worked-example" in stdout


def test_batch_reports_broken_links_in_a_folder(tmp_path):
    """A ``*.json`` link in a folder that leads nowhere (or to itself) is bad input, as it is
    when named (it was skipped silently: exit 0); a link to a folder loops nowhere."""
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(EX / "worked_example.json", d)
    (d / "dangling.json").symlink_to("nowhere.json")
    (d / "self.json").symlink_to("self.json")
    (d / "loop").symlink_to(d)
    (d / "folder.json").mkdir()                     # a folder is searched, not read
    code, stdout, err = cli("batch", d, "--out", tmp_path / "runs", "--no-progress")
    assert code == 2 and "worked-example" in stdout, err
    assert "dangling.json: cannot read" in err and "self.json: cannot read" in err
    assert "folder.json" not in err and "1 ran" in err


def test_batch_of_a_folder_without_instances_is_bad_input(tmp_path):
    """A folder holding no *.json is a wrong path: exit 2 naming it (was "0 ran", exit 0);
    the other paths still run."""
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("no instances here")
    code, stdout, err = cli("batch", empty, "--out", tmp_path / "runs", "--no-progress")
    assert code == 2 and f"{empty}: no instance files" in err and not stdout.strip()
    d = _batch_dir(tmp_path)
    code, stdout, err = cli("batch", empty, d, "--out", tmp_path / "runs2", "--no-progress")
    assert code == 2 and len(rows(tmp_path / "runs2" / "records.csv")) == 3


def test_batch_resume_skips_finished_and_retries_errors(tmp_path):
    d = _batch_dir(tmp_path)
    out = tmp_path / "runs" / "records.csv"
    code, _, err = cli("batch", d, "--methods", "spectra,spectra-noeq", "--out", out.parent,
                       "--no-progress")
    assert code == 0, err
    first = rows(out)
    assert len(first) == 6
    # simulate a crash mid-way: drop the last row, mark another as error
    with open(out, newline="") as fh:
        header = next(csv.reader(fh))
    kept = first[:-1]
    kept[0]["status"] = "error"
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, header)
        w.writeheader()
        w.writerows(kept)
    code, _, err = cli("batch", d, "--methods", "spectra,spectra-noeq", "--out", out.parent,
                       "--no-progress")
    assert code == 0
    assert "2 ran, 4 already" in err
    again = rows(out)
    assert len(again) == 6 and len({(r["instance"], r["method"]) for r in again}) == 6
    assert all(r["status"] == "feasible" for r in again)


def test_batch_with_two_workers(tmp_path):
    d = _batch_dir(tmp_path)
    out = tmp_path / "runs"
    code, _, err = cli("batch", d, "--methods", "spectra,spectra-noeq", "--workers", 2,
                       "--out", out, "--no-progress")
    assert code == 0, err
    assert len(rows(out / "records.csv")) == 6


@pytest.mark.parametrize("n", [0, 100000])
def test_batch_workers_out_of_range_is_bad_input(tmp_path, n):
    code, stdout, err = cli("batch", _batch_dir(tmp_path), "--workers", n, "--no-progress")
    assert code == 2 and not stdout
    assert err.strip() == f"error: --workers must be in 1..256, got {n}"


def _dask_batch(d: Path, out: Path) -> list:
    """The batch on a LocalCluster of two worker processes (run isolated: Dask's threads stay
    out of pytest's process); the files it found bad."""
    import distributed

    from toolkit.batch import run_batch
    from toolkit.registry import RunConfig

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        return run_batch([d], ["spectra", "milp"], RunConfig(time_limit=20), out,
                         scheduler=cluster.scheduler_address, progress=False).bad_input


def test_batch_on_dask_local_cluster(tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "runs.csv"
    assert not run_isolated(_dask_batch, _batch_dir(tmp_path), out)
    got = rows(out)
    # milp declines the n=32 instance (too large): 3 spectra + 2 milp
    assert len(got) == 5 and all(r["verified"] == "True" for r in got)
    assert {r["method"] for r in got} == {"spectra", "milp"}


def test_gap_study(tmp_path):
    out = tmp_path / "gap"
    code, stdout, err = cli("gap", EX / "worked_example.json", EX / "shifts_n6_s1.json",
                            "--methods", "spectra,spectra-noeq,milp", "--out", out)
    assert code == 0, err
    got = rows(out / "gap.csv")
    assert len(got) == 6
    for r in got:
        assert float(r["objective"]) >= float(r["best_bound"]) - 1e-9
        assert float(r["vs_best"]) >= -1e-12


def test_generate_and_solve(tmp_path):
    f = tmp_path / "g.json"
    code, _, err = cli("generate", "spectra", "--workload", "benchmark", "--n", 20, "--m", 4,
                       "--switches", 3, "--seed", 9, "-o", f)
    assert code == 0, err
    code, out, _ = cli("solve", f, "--format", "csv")
    assert code == 0 and "True" in out
    bad = tmp_path / "bad.json"
    code, _, err = cli("generate", "spectra", "--switches", 0, "-o", bad)
    assert code == 2 and "switches" in err and not bad.exists()


def test_reproduce_worked_example(tmp_path):
    code, out, err = cli("reproduce", "spectra-example", "--out", tmp_path)
    assert code == 0, err
    text = (tmp_path / "spectra_example.md").read_text()
    for row in ("| Final makespan (Fig. 4b) | 0.525 | 0.525 |",
                "| Baseline makespan | not stated | 0.535 |",      # hand-checked in the tests
                "| Spectra (Eclipse) makespan | not stated | 0.525 |"):
        assert row in text and row in out           # the headline on stdout is the report's table
    assert f"--out {tmp_path.as_posix()}`" in text      # the command that wrote it there
    assert cli("reproduce", "nope")[0] == 2


@pytest.mark.parametrize("method", ["prop-alloc", "sqrt-alloc", "iter-halve"])
def test_delta_baselines_from_the_cli(method):
    code, out, err = cli("solve", ROOT / "instances/delta/gpt-7b.json",
                         ROOT / "instances/delta/megatron-177b-n12.json", "--method", method,
                         "--format", "json")
    assert code == 0, err
    for line in out.strip().splitlines():
        rec = json.loads(line)
        assert rec["problem"] == "delta" and rec["verified"] is True
        assert rec["nct"] >= 1 - 1e-9 and rec["objective"] >= rec["bound"] - 1e-6
        assert rec["port_ratio"] <= 1


def test_generate_delta_workload(tmp_path):
    f = tmp_path / "m.json"
    code, _, err = cli("generate", "delta", "--model", "megatron-177b", "--micro-batches", 6,
                       "--bandwidth-gbps", 800, "-o", f)
    assert code == 0, err
    d = json.loads(f.read_text())
    assert d["job"]["micro_batches"] == 6 and d["job"]["bandwidth_gbps"] == 800
    code, out, err = cli("solve", f, "--format", "json")
    assert code == 0 and json.loads(out)["verified"]
    code, _, err = cli("generate", "delta", "--model", "gpt-9", "-o", tmp_path / "bad.json")
    assert code == 2 and "model" in err and not (tmp_path / "bad.json").exists()


def test_batch_mixes_problems_and_skips_foreign_methods(tmp_path):
    out = tmp_path / "runs"
    code, _, err = cli("batch", EX / "worked_example.json", ROOT / "instances/delta/gpt-7b.json",
                       "--methods", "spectra,iter-halve", "--out", out, "--no-progress")
    assert code == 0, err
    got = {(Path(r["instance"]).name, r["method"]) for r in rows(out / "records.csv")}
    assert got == {("worked_example.json", "spectra"), ("gpt-7b.json", "iter-halve")}


def test_delta_milps_from_the_cli_on_the_hand_checked_case():
    expected = {"delta-joint": (3.0, 3.0), "delta-topo": (4.0, 4.0)}   # (milp objective, reported C)
    for method, (milp, C) in expected.items():
        code, out, err = cli("solve", ROOT / "instances/delta/t0-hand.json", "--method", method,
                             "--mip-gap", 0, "--format", "json")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["verified"] and rec["status"] == "optimal"
        assert rec["milp_objective"] == pytest.approx(milp, abs=1e-6)
        assert rec["objective"] == pytest.approx(C, abs=1e-6)


def test_delta_fast_and_hotstart_from_the_cli():
    for method in ("delta-fast", "delta-joint-hotstart"):
        code, out, err = cli("solve", ROOT / "instances/delta/t0-hand.json", "--method", method,
                             "--option", "stall=10", "--option", "pop=8", "--format", "json")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["verified"]
        assert rec["objective"] == pytest.approx(4.0 if method == "delta-fast" else 3.0, abs=1e-6)


def test_a2a_motivating_example_from_the_cli(tmp_path):
    f = tmp_path / "ex.json"
    code, _, err = cli("generate", "a2a", "--workload", "example", "-o", f)
    assert code == 0, err
    for method, expect in (("rdc", 30.0), ("static", 35.0), ("one-hop", 56.0), ("pmedian", 30.0)):
        code, out, err = cli("solve", f, "--method", method, "--format", "json")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["verified"] and rec["objective"] == expect and rec["lower_bound"] == 30.0


def test_a2a_bad_input_and_exact_model_decline(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"problem": "a2a", "n": 4, "k": 1, "R": 1, "traffic": {"uniform": -1}}))
    code, _, err = cli("solve", bad)
    assert code == 2 and "traffic.uniform" in err
    f = tmp_path / "z.json"
    code, _, err = cli("generate", "a2a", "--workload", "zipf", "--n", 8, "--k", 2, "-o", f)
    assert code == 0, err
    code, out, err = cli("solve", f, "--method", "exact-k1")
    assert code != 0 and "uniform" in err


def test_spectra_ai_workloads_and_comparators_from_the_cli(tmp_path):
    for wl, n, k in (("gpt", 32, 4), ("moe", 64, 63)):
        f = tmp_path / f"{wl}.json"
        code, _, err = cli("generate", "spectra", "--workload", wl, "--switches", 2, "--delay", 0.04,
                           "--seed", 3, "-o", f)
        assert code == 0, err
        data = json.loads(f.read_text())
        assert len(data["demand"]) == n and data["meta"]["workload"] == wl
    code, out, err = cli("gap", tmp_path / "gpt.json", "--methods",
                         "spectra,spectra-eclipse,baseline,baseline-milp", "--backend", "highs",
                         "--format", "json")
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert {r["method"] for r in recs} == {"spectra", "spectra-eclipse", "baseline", "baseline-milp"}
    for r in recs:
        assert r["verified"] and r["objective"] >= r["lower_bound"] - 1e-9 and r["degree"] == 4
    code, _, err = cli("generate", "spectra", "--workload", "gpt", "--n", 20, "-o", tmp_path / "x.json")
    assert code == 2 and "'n'" in err
    code, _, err = cli("solve", tmp_path / "gpt.json", "--method", "spectra-eclipse",
                       "--option", "alpha_search=bogus")
    assert code == 2 and "alpha_search" in err


def test_a2a_input_validation_and_declines_exit_2(tmp_path):
    code, _, err = cli("generate", "a2a", "--workload", "zipf", "--seed", -3, "-o", tmp_path / "z.json")
    assert code == 2 and "seed" in err and "Traceback" not in err
    code, _, err = cli("generate", "a2a", "--T", -1, "-o", tmp_path / "t.json")
    assert code == 2 and "'T'" in err
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"problem": "a2a", "n": 4, "k": 1, "R": 1, "traffic": {"uniform": 1},
                                 "bogus": 3}))
    code, _, err = cli("solve", extra)
    assert code == 2 and "bogus" in err
    n6k3 = tmp_path / "n6k3.json"
    n6k3.write_text(json.dumps({"problem": "a2a", "n": 6, "k": 3, "R": 1, "traffic": {"uniform": 1}}))
    code, _, err = cli("solve", n6k3, "--method", "topoopt")
    assert code == 2 and "coprime" in err and "Traceback" not in err


@pytest.mark.parametrize("args, field", [
    (("--workload", "benchmark", "--seed", -1), "'seed'"),
    (("--workload", "moe", "--pop-sigma", "nan"), "'pop_sigma'"),
    (("--workload", "moe", "--pop-sigma", "inf"), "'pop_sigma'"),
    (("--workload", "gpt", "--tp", 1, "--pp", 1, "--dp", 1), "'tp*pp*dp'"),
    (("--workload", "moe", "--n", 1, "--top-k", 1), "'n'"),
    (("--workload", "benchmark", "--n", 100000), "'n'"),
    # a parameter of another workload (was silently ignored, whatever its value)
    (("--density", "nan"), "'density': applies only to --workload random"),
    (("--workload", "moe", "--tp", 8), "'tp': applies only to --workload gpt"),
    (("--workload", "gpt", "--m", 4), "'m': applies only to --workload benchmark"),
    (("--workload", "random", "--top-k", 0), "'top_k': applies only to --workload moe"),
])
def test_spectra_generate_bad_parameter_is_one_line_exit_2(tmp_path, args, field):
    f = tmp_path / "x.json"
    code, _, err = cli("generate", "spectra", *args, "-o", f)
    assert code == 2 and field in err and "Traceback" not in err and not f.exists()
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args, field", [
    (("--workload", "example", "--n", 5000), "'n': does not apply to --workload example"),
    (("--workload", "example", "--k", 3), "'k': does not apply to --workload example"),
    (("--T", 1, "--bandwidth-gbps", -5), "'bandwidth_gbps': does not apply with --T > 0"),
    (("--T", 1, "--chunk-mb", 0), "'chunk_mb': does not apply with --T > 0"),
])
def test_a2a_generate_parameter_that_does_not_apply_is_one_line_exit_2(tmp_path, args, field):
    """They were ignored silently, whatever their value (the example is the paper's fixed
    instance; T-unit mode has no bandwidth, latency or chunk size)."""
    f = tmp_path / "x.json"
    code, _, err = cli("generate", "a2a", *args, "-o", f)
    assert code == 2 and field in err and not f.exists(), err
    assert len(err.strip().splitlines()) == 1


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
