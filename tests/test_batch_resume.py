"""Batch resume by run key (issue 14 item 3): unchanged, changed and edited runs, old CSVs,
a moved folder, a damaged records.csv (the IIS folder: tests/test_iis_folder.py; the Dask
scheduler address and the solver-thread cap: tests/test_batch_dask.py)."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tests import cli_worker
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
