"""Process pools (issue 29 item 2): forkserver workers, one share of the cores each, warm
once; equal objectives at any worker count."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import pool_probe
from tests.test_batch_resume import rows, two  # noqa: F401 - two: a fixture
from toolkit import batch, pools
from toolkit.batch import run_batch
from toolkit.registry import RunConfig
from toolkit.threads import LIB_VARS, thread_cap

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "instances" / "examples"


def test_thread_cap_rule():
    assert thread_cap(16, 16) == 1 and thread_cap(16, 4) == 4 and thread_cap(2, 3) == 1


@pytest.mark.parametrize("asked", [None, 16])
def test_batch_workers_cap_every_thread_pool_at_their_share(two, tmp_path, monkeypatch, asked):
    """2 workers on 8 cores: 4 each, read back inside each task: numba, the OpenMP/BLAS
    variables, the solvers' default and the --threads a task is given; the workers were
    forked by a forkserver that had no other thread, not by this process."""
    monkeypatch.setattr(batch, "_task", pool_probe.batch_task)
    monkeypatch.setattr(batch, "cores", lambda: 8)
    cfg = RunConfig(threads=asked)
    rep = run_batch([two], ["spectra"], cfg, tmp_path / "r.csv", workers=2, progress=False)
    got = rows(tmp_path / "r.csv")
    assert rep.threads == 4 and cfg.threads == asked and len(got) == 2   # caller's cfg kept
    for r in got:
        assert r["threads_given"] == "4" and r["share"] == "4" and r["solver_threads"] == "4"
        assert r["numba_config"] == "4" and r["numba_threads"] == "4"
        # OpenMP/BLAS: 1, as the forkserver loaded them (within the share)
        assert json.loads(r["env"]) == {**dict.fromkeys(LIB_VARS, "1"), "NUMBA_NUM_THREADS": "4"}
        assert r["server_threads"] == "1" and r["server_error"] == ""
        assert int(r["ppid"]) != os.getpid() and r["starts"] == "1"


def test_pools_start_from_a_forkserver_with_one_thread():
    with pools.pool(2, share=1) as ex:
        assert ex._mp_context.get_start_method() == "forkserver"
        seen = [f.result() for f in [ex.submit(pool_probe.readings) for _ in range(4)]]
    server = multiprocessing.forkserver._forkserver._forkserver_pid
    assert {r["ppid"] for r in seen} == {server} != {os.getpid()}
    assert {r["server_threads"] for r in seen} == {1}
    assert {r["share"] for r in seen} == {"1"} and {r["numba_threads"] for r in seen} == {1}


def test_the_roll_call_hears_every_worker_once():
    """benchmarks.pool_roll: each of w roll-call tasks waits for the others at a barrier, so
    all w workers answer (batch-scaling-size times its pool start until then), where w
    plain tasks may all go to the fastest worker."""
    from benchmarks import pool_roll

    for w in (2, 3):
        roll = multiprocessing.get_context(pools.START_METHOD).Barrier(w)
        with pools.pool(w, share=1, initializer=pool_roll.join, initargs=(roll,)) as ex:
            pids = [f.result() for f in [ex.submit(pool_roll.answer, 60.0) for _ in range(w)]]
        assert len(set(pids)) == w and os.getpid() not in pids


def test_workers_start_once_and_are_warm_before_their_first_task(tmp_path):
    """Each worker runs its start-up (caps, kernels) once, whatever number of tasks it
    takes; a batch's records carry no warm-up: no task paid for loading its kernels."""
    with pools.pool(2, kernels=("spectra",), share=1) as ex:
        seen = list(ex.map(pool_probe.pid_and_starts, range(8)))
    assert len({pid for pid, _ in seen}) <= 2 and {n for _, n in seen} == {1}
    d = tmp_path / "in"
    d.mkdir()
    for name in ("bench_n32_m8_s2_d0.1.json", "bench_n100_s4_d0.04.json"):
        shutil.copy(EX / name, d / name)    # instances whose Spectra runs compiled rounds
    rep = run_batch([d], ["spectra", "spectra-noeq"], RunConfig(), None, workers=2,
                    progress=False)
    assert len(rep.ran) == 4 and all(r["verified"] for r in rep.ran)
    assert [r.get("warmup_s") for r in rep.ran] == [None] * 4


def test_objectives_are_equal_at_every_worker_count(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for src in (EX / "worked_example.json", EX / "bench_n32_m8_s2_d0.1.json",
                ROOT / "instances" / "lumos" / "cross-rings-P8.json"):
        shutil.copy(src, d / src.name)
    methods = ["spectra", "itv-mdmcf", "itv-mcf"]
    got = {}
    for w in (1, 2, 3):
        rep = run_batch([d], methods, RunConfig(), None, workers=w, progress=False)
        got[w] = {(Path(r["instance"]).name, r["method"]): r["objective"] for r in rep.ran}
    assert len(got[1]) == 4 and got[1] == got[2] == got[3]


def test_a_dask_worker_process_takes_its_share_once(tmp_path):
    """toolkit.batch_dask.on_worker in a process that is not the batch's: caps at the
    share before the first task, not again for the next."""
    code = ("import json, os\n"
            "from toolkit.batch_dask import on_worker\n"
            "from tests.pool_probe import readings\n"
            "task = lambda write: readings()\n"
            "a = on_worker(task, (0, 3, ()))\n"
            "os.environ['OCS_CORE_SHARE'] = '7'\n"
            "b = on_worker(task, (0, 3, ()))\n"
            "print(json.dumps([a, b]))\n")
    env = {k: v for k, v in os.environ.items() if k not in LIB_VARS}
    env["OMP_NUM_THREADS"] = "2"            # set lower than the share: kept
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    a, b = json.loads(p.stdout)
    assert a["share"] == "3" and a["numba_threads"] == 3 and a["solver_threads"] == 3
    assert a["env"] == {**dict.fromkeys((*LIB_VARS, "NUMBA_NUM_THREADS"), "3"),
                        "OMP_NUM_THREADS": "2"}
    assert b["share"] == "7"            # applied once: the second task changed nothing


UNGUARDED = """
import sys
sys.path.insert(0, sys.argv[1])
from toolkit.pools import pool
print("top level ran", flush=True)
with pool(2, share=1) as ex:
    print(sorted(set(ex.map(abs, [-1, -2, -3]))), flush=True)
"""


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """The workers do not import the owner's __main__, so an unguarded script that calls a
    method with its own pool is not run again in each worker (spawn's requirement)."""
    script = tmp_path / "s.py"
    script.write_text(UNGUARDED)
    p = subprocess.run([sys.executable, str(script), str(ROOT)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.splitlines() == ["top level ran", "[1, 2, 3]"]


NESTED = """
import sys
sys.path.insert(0, sys.argv[1])
from tests.pool_probe import with_inner_pool
from toolkit.pools import pool

with pool(1, share=1) as ex:
    list(ex.map(with_inner_pool, [0]))
"""


def test_kill_9_of_the_owner_ends_both_levels_of_pools(tmp_path):
    """Workers and forkservers of a pool and of a pool inside its worker: all gone soon
    after the owner is killed by SIGKILL (each worker closes its copy of its server's
    alive pipe, the server then exits and PR_SET_PDEATHSIG kills its workers)."""
    psutil = pytest.importorskip("psutil")
    script = tmp_path / "nested.py"
    script.write_text(NESTED)
    proc = subprocess.Popen([sys.executable, str(script), str(ROOT)], cwd=tmp_path)
    tree: list = []
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end:     # owner -> server -> worker -> server -> worker
            tree = psutil.Process(proc.pid).children(recursive=True)
            if sum("forkserver" in " ".join(p.cmdline()) for p in tree) >= 4:
                break
            assert proc.poll() is None, "the script ended early"
            time.sleep(0.2)
        else:
            pytest.fail("the nested pool did not start")
        proc.kill()
        proc.wait(10)
        _, alive = psutil.wait_procs(tree, timeout=15)
        assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
    finally:
        for p in tree:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
