"""A batch's Dask scheduler address (one line and exit 2 when wrong, a bounded connect) and
the solver-thread cap of batch workers (issue 14 item 11)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.isolated import run_isolated
from tests.test_batch_resume import ROOT, rows, two  # noqa: F401 - two: a fixture
from toolkit import batch
from toolkit.batch import run_batch
from toolkit.registry import RunConfig


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
