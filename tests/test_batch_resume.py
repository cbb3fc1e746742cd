"""Batch resume by run key (issue 14 item 3), the IIS folder, the Dask scheduler address and
the solver-thread cap of batch workers (item 11)."""
from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests import cli_worker
from tests.conftest import needs_gurobi
from tests.isolated import run_isolated
from toolkit import batch
from toolkit.batch import run_batch
from toolkit.registry import RunConfig

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "instances" / "examples"


def rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def run(*args):
    """solve.py in the tests' CLI helper process: (exit code, stdout, stderr)."""
    return cli_worker.call(args)


@pytest.fixture
def two(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for name in ("worked_example.json", "shifts_n6_s1.json"):
        shutil.copy(EX / name, d / name)
    return d


def batch_args(d, out, *more):
    """``out``: the records CSV; ``--out`` is its folder."""
    return ("batch", d, "--methods", "spectra", "--out", Path(out).parent, "--no-progress", *more)


# --------------------------------------------------------------------------------------
# resume by run key
# --------------------------------------------------------------------------------------
def test_unchanged_rerun_skips_every_task(two, tmp_path):
    out = tmp_path / "runs" / "records.csv"
    code, _, err = run(*batch_args(two, out, "--time-limit", 5))
    assert code == 0 and "2 ran, 0 already" in err, err
    first = rows(out)
    assert len(first) == 2 and all(r["run_key"] and r["settings"] for r in first)
    assert {r["path"] for r in first} == {str(p.resolve()) for p in two.iterdir()}
    code, _, err = run(*batch_args(two, out, "--time-limit", 5.0))  # 5 == 5.0
    assert code == 0 and "0 ran, 2 already" in err, err
    assert rows(out) == first
    assert "other settings" not in err


@pytest.mark.parametrize("change", [("--time-limit", 9), ("--option", "refine=lp"),
                                    ("--mip-gap", 0.1), ("--backend", "highs"),
                                    ("--param", "Seed=3")])
def test_a_changed_setting_reruns_and_keeps_both_rows(two, tmp_path, change):
    out = tmp_path / "runs" / "records.csv"
    assert run(*batch_args(two, out, "--time-limit", 5))[0] == 0
    same = () if change[0] == "--time-limit" else ("--time-limit", 5)   # given once
    code, table, err = run(*batch_args(two, out, *same, *change))
    assert code == 0 and "2 ran, 0 already" in err, err
    got = rows(out)
    assert len(got) == 4 and len({r["run_key"] for r in got}) == 4
    # both rows of each file stay, told apart; the user is told, and the table is this run's
    assert "also holds 2 row(s)" in err
    assert table.count("worked-example") == 1 and table.count("shifts-n6-s1") == 1
    flag, value = change
    new = got[2:]
    if flag == "--option":
        assert all('"refine":"lp"' in r["settings"] for r in new)
    elif flag == "--time-limit":
        assert all('"time_limit":9.0' in r["settings"] for r in new)
    # and the changed setting, rerun again, is skipped
    code, _, err = run(*batch_args(two, out, *same, *change))
    assert "0 ran, 2 already" in err and len(rows(out)) == 4


def test_threads_do_not_change_the_key(two, tmp_path):
    out = tmp_path / "runs" / "records.csv"
    run(*batch_args(two, out))
    code, _, err = run(*batch_args(two, out, "--threads", 1))
    assert "0 ran, 2 already" in err


def test_a_file_named_twice_runs_once(two, tmp_path, monkeypatch):
    """The same file named again (the same path, another spelling of it, or inside a folder
    also named) is one task: it ran once per mention, and the table listed each run."""
    monkeypatch.chdir(two)
    out = tmp_path / "runs" / "records.csv"
    code, stdout, err = run("batch", "worked_example.json", "./worked_example.json",
                            two / "worked_example.json", two, "--methods", "spectra",
                            "--out", out.parent, "--no-progress")
    assert code == 0 and "2 ran" in err, err
    assert stdout.count("worked-example") == 1 and len(rows(out)) == 2


def test_same_file_by_two_relative_paths_is_one_key(two, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs" / "records.csv"
    run(*batch_args("in/worked_example.json", out))
    monkeypatch.chdir(two)
    code, _, err = run(*batch_args("../in/./worked_example.json", out))
    assert code == 0 and "0 ran, 1 already" in err, err
    assert len(rows(out)) == 1


def test_an_edited_file_reruns(two, tmp_path):
    out = tmp_path / "runs" / "records.csv"
    run(*batch_args(two, out))
    f = two / "worked_example.json"
    f.write_text(f.read_text().replace('"worked-example"', '"edited"'))
    code, _, err = run(*batch_args(two, out))
    assert "1 ran, 1 already" in err, err
    assert [r["name"] for r in rows(out)][-1] == "edited"


def test_error_and_interrupted_rows_are_retried_and_replaced(two, tmp_path):
    out = tmp_path / "runs" / "records.csv"
    run(*batch_args(two, out))
    got = rows(out)
    got[0]["status"], got[1]["status"] = "error", "interrupted"
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, list(got[0]))
        w.writeheader()
        w.writerows(got)
    code, _, err = run(*batch_args(two, out))
    assert code == 0 and "2 ran, 0 already" in err, err
    again = rows(out)
    assert len(again) == 2 and all(r["status"] == "feasible" for r in again)


def _old_csv(two, out, cwd):
    """A CSV as written before run keys: relative instance paths, no key columns."""
    rep = run_batch([two], ["spectra"], RunConfig(), out, progress=False)
    old = [{k: v for k, v in r.items() if k not in batch.KEY_FIELDS} for r in rows(out)]
    for r in old:
        r["instance"] = str(Path(r["instance"]).relative_to(cwd))
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, list(old[0]))
        w.writeheader()
        w.writerows(old)
    assert len(rep.ran) == 2
    return old


def _no_solve(*a, **k):
    raise AssertionError("a task ran that the CSV already holds")


def test_rows_of_an_old_csv_rerun_by_default(two, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs" / "records.csv"
    _old_csv(two, out, tmp_path)
    code, _, err = run(*batch_args("in", out))
    assert code == 0 and "2 ran, 0 already" in err, err
    assert "also holds 2 row(s)" in err
    got = rows(out)
    assert len(got) == 4 and [bool(r["run_key"]) for r in got] == [False, False, True, True]


def test_rows_of_an_old_csv_are_kept_with_keyless_keep(two, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs" / "records.csv"
    old = _old_csv(two, out, tmp_path)
    monkeypatch.setattr(batch, "run_task", _no_solve)
    rep = run_batch([Path("in")], ["spectra"], RunConfig(time_limit=7), out, progress=False,
                    keyless="keep")
    assert rep.skipped_done == 2 and not rep.ran and rep.other_rows == 0
    assert [r["instance"] for r in rep.rows] == [r["instance"] for r in old]
    # a keyless row is matched on its file resolved from here, not the text of its path
    rep = run_batch([Path("./in/../in")], ["spectra"], RunConfig(), out, progress=False,
                    keyless="keep")
    assert rep.skipped_done == 2 and not rep.ran


def test_delta_reproduction_resumes_its_committed_raw_runs(tmp_path, monkeypatch):
    """benchmarks/delta/figs.py reads results/delta/delta_runs/*.csv made before run keys: it
    must not rerun them (hours of solver time)."""
    from benchmarks.delta import figs as delta_figs

    committed = ROOT / "results" / "delta" / "delta_runs" / "fig9_quick.csv"
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "results" / "delta_runs"
    runs.mkdir(parents=True)
    shutil.copy(committed, runs / "fig9_quick.csv")
    monkeypatch.setattr(batch, "run_task", _no_solve)
    df = delta_figs._port_runs(True, Path("results"))
    assert len(df) == len(rows(committed)) == 12
    assert (runs / "fig9_quick.csv").read_bytes() == committed.read_bytes()


# --------------------------------------------------------------------------------------
# IIS on first use
# --------------------------------------------------------------------------------------
@needs_gurobi
def test_iis_is_written_into_a_folder_that_does_not_exist_yet(tmp_path):
    import models.backend as B
    from gurobipy import GRB

    m = B.new_model()
    a = m.addVars(2, vtype=GRB.BINARY)
    m.addConstr(a.sum() >= 3, name="three_of_two")
    m.update()
    iis = tmp_path / "not" / "yet" / "m.ilp"
    res = B.solve(m, backend="gurobi", iis_path=str(iis))
    assert res.status == "infeasible" and res.iis_file == str(iis)
    assert "three_of_two" in iis.read_text()


def _leaf_triangle(path: Path) -> Path:
    """[002] Fig. 12: with tau = 1 the feasibility model (5)(6)(8) is infeasible."""
    import instances
    from instances.lumos.fabric import Fabric
    from instances.lumos.logical import LogicalInstance

    L = np.zeros((6, 6), dtype=int)
    for a, b in ((0, 2), (2, 4), (0, 4)):
        L[a, b] = L[b, a] = 1
    instances.save_instance(LogicalInstance(Fabric(3, 2, 2, 1), L), path)
    return path


@needs_gurobi
def test_solve_out_writes_the_iis_into_a_new_folder(tmp_path):
    f = _leaf_triangle(tmp_path / "tri.json")
    dest = tmp_path / "new" / "out"
    code, out, err = run("solve", f, "--method", "logical-ilp", "--backend", "gurobi",
                         "--out", dest, "--format", "json")
    assert code == 1 and '"status": "infeasible"' in out, err
    from toolkit.outdir import iis_path

    iis = iis_path(dest, f, "logical-ilp")
    assert iis.exists() and "Subject To" in iis.read_text()
    assert f'"iis_file": "{iis}"' in out


# --------------------------------------------------------------------------------------
# Dask scheduler address; solver threads per worker
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", "no-port-here", "tcp://[::1:x", ""])
def test_bad_scheduler_address_is_one_line_exit_2(two, tmp_path, address):
    """(The 300 s is a hang guard; how long a refusal takes is the connect timeout's, below.)"""
    pytest.importorskip("distributed")
    p = subprocess.run([sys.executable, str(ROOT / "solve.py"), "batch", str(two), "--out",
                        str(tmp_path / "r"), "--scheduler", address, "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"error: --scheduler {address}"[:19])
    assert p.stdout == "" and not (tmp_path / "r" / "records.csv").exists()


def test_scheduler_connection_is_bounded_by_a_timeout(monkeypatch):
    """The client is asked to give up after DASK_CONNECT_S (the bound on a refusal is the
    connect timeout given to Dask, not a clock in this test), and an empty address is refused
    before any client is made."""
    distributed = pytest.importorskip("distributed")
    from toolkit import batch_dask

    asked = []

    def client(address, **kw):
        asked.append((address, kw))
        raise OSError("nothing listening")

    monkeypatch.setattr(distributed, "Client", client)
    with pytest.raises(batch_dask.SchedulerError, match="no Dask scheduler there"):
        batch_dask.dask_client("tcp://127.0.0.1:1")
    assert asked == [("tcp://127.0.0.1:1", {"timeout": f"{batch_dask.DASK_CONNECT_S}s"})]
    assert 0 < batch_dask.DASK_CONNECT_S <= 30
    with pytest.raises(batch_dask.SchedulerError, match="must be an address"):
        batch_dask.dask_client(" ")
    assert len(asked) == 1


def _threads_seen(data, src, name, cfg, want_solution=False):
    """run_task's stand-in: a record of the solver threads the task was given."""
    return {"instance": src, "method": name, "status": "feasible", "verified": True,
            "threads_given": cfg.threads}


def test_thread_cap_rule():
    assert batch.thread_cap(8, 2) == 4 and batch.thread_cap(8, 3) == 2
    assert batch.thread_cap(2, 4) == 1 and batch.thread_cap(2, 1) == 2


# process workers: tests/test_pools.py (their workers start from a forkserver, which a
# monkeypatch of this process does not reach)


def _dask_threads(two: Path, out: Path) -> int:
    """The solver threads of a batch on an in-process LocalCluster, tasks stood in for by
    _threads_seen, on 8 cores (run isolated: a process of its own to patch, and Dask's
    threads stay out of pytest's)."""
    import distributed

    batch.run_task, batch.cores = _threads_seen, lambda: 8
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        return run_batch([two], ["spectra"], RunConfig(), out,
                         scheduler=cluster.scheduler_address, progress=False).threads


def test_dask_workers_times_threads_within_cores(two, tmp_path):
    pytest.importorskip("distributed")
    # one host, 2 workers x 2 threads = 4 tasks at once on 8 cores: 2 solver threads each
    assert run_isolated(_dask_threads, two, tmp_path / "r.csv") == 2
    assert [r["threads_given"] for r in rows(tmp_path / "r.csv")] == ["2", "2"]


def test_a_folder_moved_with_its_instances_resumes(tmp_path):
    """Instances inside the CSV's folder are keyed by their path relative to it (as the
    committed results/delta/delta_runs/ are), so the folder resumes wherever it is copied; files
    outside it keep their absolute path."""
    a = tmp_path / "a"
    (a / "inst").mkdir(parents=True)
    shutil.copy(EX / "worked_example.json", a / "inst" / "w.json")
    code, _, err = run("batch", a / "inst", EX / "shifts_n6_s1.json", "--methods", "spectra",
                       "--out", a, "--no-progress")
    assert code == 0, err
    paths = {r["path"] for r in rows(a / "records.csv")}
    assert paths == {"inst/w.json", str((EX / "shifts_n6_s1.json").resolve())}
    b = tmp_path / "elsewhere" / "b"
    shutil.copytree(a, b)
    code, _, err = run("batch", b / "inst", "--methods", "spectra", "--out", b, "--no-progress")
    assert code == 0 and "0 ran, 1 already" in err, err


# --------------------------------------------------------------------------------------
# a damaged records.csv in the --out folder (probe 2)
# --------------------------------------------------------------------------------------
@pytest.fixture
def done(two, tmp_path):
    """A finished batch of ``two``: (its records CSV, its text)."""
    out = tmp_path / "runs" / "records.csv"
    code, _, _ = run(*batch_args(two, out))
    assert code == 0
    return out, out.read_bytes().decode()


@pytest.mark.parametrize("damage,words", [
    (lambda t: "a,b,c\r\n" + t.split("\r\n", 1)[1], "header lacks column(s) instance, "
     "method, status"),
    (lambda t: t.encode() + b"\xff\xfe junk\r\n", "line 4: not UTF-8 text"),
    (lambda t: t + "x,y\0z\r\n", "line 4: a NUL byte"),
    (lambda t: t + "only,three,fields\r\n", "line 4: 3 fields, the header has"),
    (lambda t: t.replace(",feasible,0.525,", ",feasible,abc,", 1),
     "line 3: objective 'abc' is not a number"),    # worked_example: 2nd row
    (lambda t: t.replace(",True,", ",maybe,", 1), "line 2: verified 'maybe' is not True or False"),
    (lambda t: bytes(range(256)) * 3, "line 2: not UTF-8 text (byte 0x80)"),   # after b"\n"
], ids=["wrong-header", "binary-tail", "nul", "short-row", "text-objective", "verified",
        "binary"])
def test_a_damaged_records_csv_is_one_line_exit_2(done, two, damage, words):
    """Resuming into a folder whose records.csv is not one (was a traceback and exit 1:
    KeyError, UnicodeDecodeError, ValueError): exit 2, one line naming the file and the
    line, before any run; the file is left as it was."""
    out, text = done
    bad = damage(text)
    out.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
    before = out.read_bytes()
    for cmd in (batch_args(two, out), ("gap", two, "--methods", "spectra", "--out", out.parent),
                ("solve", two / "worked_example.json", "--out", out.parent)):
        code, stdout, err = run(*cmd)
        assert code == 2 and stdout == "", (cmd[0], err)
        assert err.strip().splitlines() == [err.strip()] and str(out) in err and words in err, err
        assert out.read_bytes() == before


def test_records_csv_that_is_a_folder_is_one_line_exit_2(two, tmp_path):
    out = tmp_path / "runs" / "records.csv"
    out.mkdir(parents=True)
    code, stdout, err = run(*batch_args(two, out))
    assert code == 2 and stdout == "" and "is a folder" in err and len(err.splitlines()) == 1


def test_a_truncated_last_row_is_dropped_and_rerun(done, two):
    """A row cut short (a write killed mid-line, no final newline) is dropped with a warning
    and its task rerun; the next row no longer glues onto it (it did: the rerun's row was
    appended inside the cut row's open quote, and the CSV lost it)."""
    out, text = done
    first, second = rows(out)
    out.write_bytes(text[:len(text) - len(text.split("\r\n")[-2]) // 2 - 2].encode())  # half a row
    code, _, err = run(*batch_args(two, out))
    assert code == 0 and "1 ran, 1 already" in err, err
    assert "line 3: a row cut short" in err                   # a warning
    got = rows(out)
    assert [r["run_key"] for r in got] == [first["run_key"], second["run_key"]]
    assert got[1]["versions"] == second["versions"] and out.read_bytes().endswith(b"\r\n")
    code, _, err = run(*batch_args(two, out))
    assert code == 0 and "0 ran, 2 already" in err and "cut short" not in err


def test_a_row_whose_method_was_edited_is_not_this_runs(done, two):
    """A row whose run key is a task's but whose method column is another (an edited or
    foreign row) is not that task's result: the task reruns and replaces it (the table
    showed the row, method 'nosuch', as the spectra run)."""
    out, text = done
    out.write_bytes(text.replace(",spectra,spectra,", ",spectra,nosuch,", 1).encode())
    code, stdout, err = run(*batch_args(two, out))
    assert code == 0 and "1 ran, 1 already" in err and "nosuch" not in stdout, err
    assert [r["method"] for r in rows(out)] == ["spectra", "spectra"]
