"""Issue 14 item 6: feedback on long work.

-v streams the solvers' logs to stderr (solve, batch, gap; Gurobi and HiGHS), -q leaves
stderr silent but for errors, progress never writes carriage returns into a file or pipe,
and every reproduce target states its --quick variant and duration.
"""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from toolkit import progress
from toolkit.reproduce import TARGETS, Target

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "instances" / "examples"
TINY = EX / "tiny_random_n4_s2.json"        # spectra milp: 177 vars, 252 constrs (pip licence)
BANNER = {"highs": "Running HiGHS", "gurobi": "Gurobi Optimizer version"}


def cli(*args):
    p = subprocess.run([sys.executable, str(ROOT / "solve.py"), *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def _skip_without_gurobi(backend, code, out, err):
    if backend == "gurobi" and code != 0 and "Gurobi" in out + err:
        pytest.skip("no Gurobi")


@pytest.mark.parametrize("backend", ["highs", "gurobi"])
def test_verbose_solve_streams_the_solver_log_to_stderr_only(backend):
    code, out, err = cli("-v", "solve", TINY, "--method", "milp", "--backend", backend,
                         "--format", "json")
    _skip_without_gurobi(backend, code, out, err)
    assert code == 0, err
    assert BANNER[backend] in err and BANNER[backend] not in out
    assert len(err.splitlines()) > 10                      # the log itself, not one line
    rec = json.loads(out)                                 # stdout: the record alone
    assert rec["backend"] == backend and rec["verified"] is True
    # the flag also after the subcommand; CSV records parse
    code, out, err = cli("solve", TINY, "--method", "milp", "--backend", backend,
                         "--format", "csv", "--verbose")
    assert code == 0, err
    assert BANNER[backend] in err
    df = pd.read_csv(io.StringIO(out))
    assert list(df["backend"]) == [backend] and bool(df["verified"][0])


@pytest.mark.parametrize("backend", ["highs", "gurobi"])
def test_without_verbose_the_solvers_stay_silent(backend):
    code, out, err = cli("solve", TINY, "--method", "milp", "--backend", backend, "--format", "json")
    _skip_without_gurobi(backend, code, out, err)
    assert code == 0, err
    assert BANNER[backend] not in err + out
    json.loads(out)


@pytest.mark.parametrize("backend", ["highs", "gurobi"])
def test_verbose_keeps_log_dir_files(tmp_path, backend):
    logs = tmp_path / "logs"
    code, out, err = cli("solve", TINY, "--method", "milp", "--backend", backend, "-v",
                         "--log-dir", logs, "--format", "json")
    _skip_without_gurobi(backend, code, out, err)
    assert code == 0, err
    assert BANNER[backend] in err
    (log,) = logs.glob("*.log")
    assert BANNER[backend] in log.read_text()
    json.loads(out)


def test_verbose_batch_with_workers_and_gap_stream_solver_logs(tmp_path):
    files = [tmp_path / "a.json", tmp_path / "b.json"]       # two files, one small model
    for f in files:
        shutil.copy(TINY, f)
    code, out, err = cli("-v", "batch", *files, "--methods", "milp", "--backend", "highs",
                         "--workers", 2, "--out", tmp_path / "runs")
    assert code == 0, err
    assert err.count(BANNER["highs"]) >= 2                 # from both worker processes
    assert len(pd.read_csv(tmp_path / "runs" / "records.csv")) == 2
    code, out, err = cli("gap", TINY, "--methods", "spectra,milp", "--backend", "highs",
                         "--format", "csv", "-v")
    assert code == 0, err
    assert BANNER["highs"] in err
    assert set(pd.read_csv(io.StringIO(out))["method"]) == {"spectra", "milp"}


def test_quiet_leaves_stderr_empty_on_success(tmp_path):
    code, out, err = cli("-q", "solve", TINY, "--method", "milp", "--backend", "highs",
                         "--format", "json")
    assert (code, err) == (0, "")
    json.loads(out)
    # batch: no progress, no summary note; generate: no "wrote" note
    code, out, err = cli("batch", TINY, EX / "worked_example.json", "--out", tmp_path / "r",
                         "--quiet")
    assert (code, err) == (0, ""), err
    assert "spectra" in out
    code, _, err = cli("-q", "generate", "spectra", "-o", tmp_path / "g.json")
    assert (code, err) == (0, "") and (tmp_path / "g.json").exists()


def test_quiet_still_prints_the_error_of_a_nonzero_exit(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    code, out, err = cli("-q", "solve", bad)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and str(bad) in err
    code, _, err = cli("-q", "solve", TINY, "--time-limit", "-1")
    assert code == 2 and len(err.splitlines()) == 1 and "--time-limit" in err


@pytest.mark.parametrize("argv", [["-v", "-q", "list"], ["-v", "list", "-q"],
                                  ["solve", str(TINY), "-q", "--verbose"]])
def test_verbose_and_quiet_exclude_each_other(argv):
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert "-q/--quiet" in err and "-v/--verbose" in err


def test_batch_progress_into_a_pipe_is_plain_lines(tmp_path):
    files = [TINY, EX / "tiny_random_n4_s3.json", EX / "worked_example.json"]   # heuristic
    code, out, err = cli("batch", *files, "--out", tmp_path / "runs")   # stderr is a pipe
    assert code == 0, err
    assert "\r" not in err
    assert "progress: 3/3 tasks (100%)" in err
    log = tmp_path / "err.log"                                # and into a file (2>log)
    with log.open("w") as fh:
        p = subprocess.run([sys.executable, str(ROOT / "solve.py"), "batch", *map(str, files),
                            "--out", str(tmp_path / "again")], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=fh, timeout=300)
    assert p.returncode == 0
    text = log.read_bytes()
    assert b"\r" not in text and b"progress: 3/3 tasks" in text


def test_lines_print_once_per_tenth():
    buf = io.StringIO()
    bar = progress.Lines(25, "task", buf)
    for _ in range(25):
        bar.update()
    lines = buf.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("progress: 25/25 tasks (100%)")
    done = [int(re.match(r"progress: (\d+)/25", ln).group(1)) for ln in lines]
    assert done == sorted(done) and all(10 * d // 25 > 10 * (d - 1) // 25 for d in done)


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_bar_is_tqdm_on_a_terminal_lines_elsewhere_silent_when_quiet(monkeypatch):
    from tqdm import tqdm

    monkeypatch.setattr(tqdm, "monitor_interval", 0)    # no monitor thread left in pytest
    monkeypatch.setattr(sys, "stderr", _Tty())
    b = progress.bar(3)
    assert isinstance(b, tqdm)
    b.close()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert isinstance(progress.bar(3), progress.Lines)
    assert not isinstance(progress.bar(3, enabled=False), (tqdm, progress.Lines))
    with progress.verbosity(progress.QUIET):
        b = progress.bar(3)
        b.update(3)
        progress.note("hidden")
    assert sys.stderr.getvalue() == ""
    assert progress.level() == progress.NORMAL            # restored


def test_verbosity_restores_the_solver_switch():
    from models.solver_log import solver_output

    assert not solver_output()
    with progress.verbosity(progress.VERBOSE):
        assert solver_output()
    assert not solver_output()


def test_every_reproduce_target_states_quick_and_duration():
    dur = re.compile(r"^~\d+(\.\d+)? (s|min|h)$")
    for name, t in TARGETS.items():
        assert isinstance(t, Target)
        assert dur.match(t.full), name
        assert t.quick is None or dur.match(t.quick), name
        assert t.estimated in ("", "full", "quick", "both"), name
        assert t.quick is not None or t.estimated not in ("quick", "both"), name
    code, out, _ = cli("list")
    assert code == 0
    listed = out[out.index("reproduce targets"):]
    for name, t in TARGETS.items():
        row = next(ln for ln in listed.splitlines() if ln.split()[:1] == [name])
        assert t.full in row and (t.quick or " - ") in row


def test_quick_on_a_target_without_it_runs_in_full_and_says_so(tmp_path):
    assert TARGETS["spectra-example"].quick is None
    code, out, err = cli("reproduce", "spectra-example", "--quick", "--out", tmp_path)
    assert code == 0, err
    assert "no --quick variant" in err
    assert (tmp_path / "spectra_example.md").exists() and "wrote " in err


def test_track_reports_a_loop_as_plain_lines_off_a_terminal(capsys):
    """Targets that loop over their runs themselves (delta-milp, spectra-gap,
    lumos-reconfig) show the same progress as a batch: plain lines, no carriage return."""
    from toolkit.progress import track

    assert list(track(range(20), unit="solve")) == list(range(20))
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.count("progress:") == 10 and "20/20 solves (100%)" in err
