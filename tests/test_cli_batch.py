"""solve.py batch and gap end to end: bad and missing files, resume, process workers, Dask,
mixed problems, the gap study (the CLI helpers: tests/test_cli.py)."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tests.isolated import run_isolated
from tests.test_cli import EX, ROOT, cli, rows


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


def test_batch_mixes_problems_and_skips_foreign_methods(tmp_path):
    out = tmp_path / "runs"
    code, _, err = cli("batch", EX / "worked_example.json", ROOT / "instances/delta/gpt-7b.json",
                       "--methods", "spectra,iter-halve", "--out", out, "--no-progress")
    assert code == 0, err
    got = {(Path(r["instance"]).name, r["method"]) for r in rows(out / "records.csv")}
    assert got == {("worked_example.json", "spectra"), ("gpt-7b.json", "iter-halve")}


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
