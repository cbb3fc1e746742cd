"""What a batch does around its tasks (issue 29 item 3): the records CSV appends without
scanning its rows yet replaces what it must, the garbage collector's state is the
caller's again after a batch and after a file is parsed, and glibc's allocator keeps freed
memory."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

import instances
from instances.errors import InstanceError
from toolkit.records_csv import CsvSink
from toolkit.heap import heap_frozen
from toolkit.outdir import read_records

ROOT = Path(__file__).resolve().parent.parent


def _row(key, status="feasible", path="/x/a.json", method="m"):
    return {"instance": path, "path": path, "method": method, "status": status,
            "run_key": key, "objective": 1.0}


def test_the_records_csv_replaces_the_same_key_and_a_retried_task(tmp_path):
    csv_path = tmp_path / "records.csv"
    sink = CsvSink(csv_path)
    sink.append(_row("k1"))
    sink.append(_row("k2", status="error", path="/x/b.json"))
    sink.append(_row("k3", path="/x/c.json"))
    sink.append(_row("k1"))                                 # the same key: replaced
    sink.append(_row("k4", path="/x/b.json"))               # b's error row: replaced
    sink.append(_row("k5", status="interrupted", path="/x/d.json"))
    sink = CsvSink(csv_path)                                # a resumed batch's index
    sink.append(_row("k6", path="/x/d.json"))               # d's interrupted row: replaced
    sink.append(_row("k7", path="/x/e.json"))
    want = ["k3", "k1", "k4", "k6", "k7"]
    assert [r["run_key"] for r in sink.rows] == want
    assert [r["run_key"] for r in read_records(csv_path)[1]] == want


@pytest.mark.parametrize("frozen_before", [False, True])
def test_a_frozen_heap_is_the_callers_again_after_the_block(frozen_before):
    gc.collect()
    if frozen_before:
        gc.freeze()
    before = gc.get_freeze_count()
    try:
        with heap_frozen() as freeze:
            kept = [[i] for i in range(1000)]
            freeze()
            assert gc.get_freeze_count() >= before + (0 if frozen_before else 1000)
        assert gc.get_freeze_count() == before
        assert kept[-1] == [999]
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("enabled", [True, False])
def test_parsing_a_file_leaves_the_collector_as_it_was(tmp_path, enabled):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"problem": "delta", "x": [[1, 2]] * 10}))
    bad.write_text('{"problem": "delta", "x": [1, 2')
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert instances.read_json(good)["x"][0] == [1, 2]
        assert gc.isenabled() is enabled
        with pytest.raises(InstanceError, match="malformed JSON"):
            instances.read_json(bad)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_an_integer_array_is_written_as_json_writes_its_list():
    import numpy as np

    from toolkit.outdir import int_array_json

    rng = np.random.default_rng(5)
    cases = [np.array([[0, 0, 28, 1]]), np.array([7]), np.array([-9999, 0, 9999]),
             np.array([[10_000, -3]]), np.array([-10_000]), np.zeros((3, 1), np.int64),
             np.zeros((0, 4), np.int64), np.zeros((2, 0), np.int64), np.array([], np.int32),
             np.array([[2**62, -2**63]]), np.array([2**64 - 1], np.uint64),
             np.array([[1, 200], [3, 4]], np.uint8), np.array([[-7]], np.int16)]
    for _ in range(200):
        shape = (int(rng.integers(1, 30)),) + ((int(rng.integers(1, 6)),) if rng.random() < .7 else ())
        high = int(rng.choice([10, 100, 10_000, 10**12]))
        cases.append(rng.integers(-high, high, size=shape))
    for a in cases:
        assert int_array_json(a) == json.dumps(a.tolist(), separators=(",", ":")), a


def test_a_solution_file_from_arrays_is_the_file_from_lists(tmp_path):
    """A reconfiguration's solution as its file writer takes it (arrays) gives the same
    solution file, byte for byte, as the lists solution_to_dict gives."""
    from toolkit.outdir import record_json
    from toolkit.registry import RunConfig, problem
    from toolkit.run import run_task

    f = "instances/lumos/cross-rings-P8.json"
    prob = problem("lumos-reconfig")
    rec = run_task(instances.load_instance(f), f, "itv-mcf", RunConfig(), want_solution="object")
    conf = rec.pop("solution")
    listed = dict(rec, solution=prob.solution_to_dict(conf))
    filed = dict(rec, solution=prob.solution_to_file(conf))
    assert type(filed["solution"]["circuits"]).__name__ == "ndarray"
    assert filed["solution"]["circuits"].tolist() == listed["solution"]["circuits"]
    assert record_json(filed) == record_json(listed)
    assert json.loads(record_json(filed))["solution"] == listed["solution"]


def test_the_records_csv_is_fsynced_in_a_thread_and_at_the_end(tmp_path, monkeypatch):
    """Once a second the CSV's fsync is asked of a thread (the batch does not wait on the
    disk); the batch's end waits for it and fsyncs what came after; nothing is lost."""
    import os

    import toolkit.records_csv as tb
    import toolkit.io as tio

    synced = []
    monkeypatch.setattr(tio.os, "fsync", lambda fd: synced.append(os.fstat(fd).st_size))
    clock = [0.0]
    monkeypatch.setattr(tb.time, "monotonic", lambda: clock[0])
    sink = CsvSink(tmp_path / "records.csv")
    sink.append(_row("k1"))                          # the header: a rewrite, no fsync
    sink.append(_row("k2", path="/x/b.json"))        # within the second: none asked
    clock[0] = 1.5
    sink.append(_row("k3", path="/x/c.json"))        # asked of the thread
    sink._syncer.close()                             # (its fsync done)
    sink._syncer = None
    assert len(synced) == 1
    clock[0] = 1.7
    sink.append(_row("k4", path="/x/d.json"))
    sink.sync()                                      # the end: the rest
    size = (tmp_path / "records.csv").stat().st_size
    assert synced[-1] == size and len(synced) == 2
    sink.sync()                                      # nothing new: no fsync
    assert len(synced) == 2
    assert [r["run_key"] for r in read_records(tmp_path / "records.csv")[1]] == ["k1", "k2", "k3", "k4"]


def test_a_failed_background_fsync_is_raised_at_the_end(tmp_path, monkeypatch):
    import toolkit.io as tio

    def broken(fd):
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(tio.os, "fsync", broken)
    (tmp_path / "f").write_text("x")
    syncer = tio.BackgroundSync(tmp_path / "f")
    syncer.request()
    with pytest.raises(OSError, match="Input/output"):
        syncer.close()


_FAULTS = """
import json, resource, sys
from toolkit.heap import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory() and keep_freed_memory()      # once per process
import instances
job = json.load(open("instances/delta/megatron-177b.json"))["job"]     # 204 tasks
builds = []
for bw in (200.0, 225.0, 250.0, 275.0, 300.0):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    instances.from_dict({"problem": "delta", "format": 1, "job": dict(job, bandwidth_gbps=bw)})
    builds.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
print(sum(builds[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_a_process_that_keeps_freed_memory_builds_instances_on_the_pages_it_has():
    """toolkit.heap.keep_freed_memory: glibc no longer hands each DELTA DAG reduction's
    arrays fresh pages (a page fault each), as it does by default (hundreds to 2,000 a build)."""
    faults = {mode: int(subprocess.run([sys.executable, "-c", _FAULTS, mode], cwd=ROOT,
                                       capture_output=True, text=True, check=True).stdout)
              for mode in ("keep", "default")}
    assert faults["keep"] * 5 < faults["default"], faults


_API_BATCH = """
import glob
import toolkit.heap as heap
from toolkit.api import batch
df = batch(["instances/examples/tiny_random_n4_s2.json"], methods=["spectra"])
assert len(df) == 1, df
print(heap._KEPT)
"""


def test_an_api_batch_leaves_the_callers_allocator_as_it_is():
    """keep_freed_memory holds for the process's lifetime: the library's batch must not set
    it in an API caller's process (only the CLI's own process and the workers do)."""
    out = subprocess.run([sys.executable, "-c", _API_BATCH], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[-1] == "False"


def test_tasks_for_other_processes_carry_the_files_text_and_run_alike(tmp_path):
    """plan(text=True), as for a pool or a Dask cluster: each task holds the file's text
    (one string to pickle, not the parsed file) and its problem; the task parses it and
    its record is the record of the parsed file's task; a text that does not parse is a
    bad_input record naming the file, not an exception."""
    from toolkit.batch import BatchReport, _task, plan
    from toolkit.registry import RunConfig
    from toolkit.variants import parse_variants

    ex = ROOT / "instances" / "examples"
    files = sorted(ex.glob("*.json"))[:6]
    variants = None
    parsed = plan(files, variants, RunConfig(), {}, BatchReport())
    text = plan(files, variants, RunConfig(), {}, BatchReport(), text=True)
    assert len(parsed) == len(text) == 6
    for p, t in zip(parsed, text):
        assert isinstance(t[0], str) and json.loads(t[0]) == p[0]
        assert t[4] == p[4] == p[0]["problem"] and t[1:4] == p[1:4]
        a, b = (_task(*x[:3], RunConfig(), x[3]) for x in (p, t))
        keep = ("instance", "method", "status", "objective", "verified")
        assert {k: a.get(k) for k in keep} == {k: b.get(k) for k in keep}
    bad = _task("{not json", "x.json", parse_variants("spectra")[0], RunConfig(), {})
    assert bad["status"] == "bad_input" and bad["message"].startswith("x.json")
