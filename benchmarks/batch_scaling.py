"""Batch scale-out (issue 29 item 4): wall, speedup, efficiency and per-task overhead of
``solve.py batch`` at 1, 2, 4, ... workers up to the machine's cores, on the local process
pool and on a local Dask cluster started as real ``dask scheduler`` / ``dask worker
--nworkers N --nthreads 1`` processes, with the objectives compared across every run.

Tasks: CPU-bound heuristics of two problem types, half each: ITV-MDMCF on generated
LumosCore reconfigurations (``generate lumos-reconfig --pods 64 --k-leaf 8 --k-spine 16
--seed 1..``, the issue's instances; ``workers=1``: its OCS groups in the task's process,
where at 1 batch worker it would run them on 2, the whole machine being its share) and
DELTA-Fast (``generations=10, pop=16``: a bounded GA, its result independent of the clock)
on the Megatron-177B job at a sweep of link bandwidths. 64 tasks, 3 repeats (median
reported; 2 repeats above 4 cores, where a repeat holds more worker counts, so that a
16-core run stays within 10 minutes); ``--quick``: 16 tasks, 1 repeat. The report is
written after each repeat.

Each batch runs in a fresh process (``python -c`` calling ``solve.main``, as ``solve.py
batch`` does after its imports), so every run pays its own start-up: ``wall_s`` is the
batch command from its arguments to its exit (planning, the pool's forkserver and workers
or the Dask workers' first imports, the kernels' loading, every record and solution file
written); ``process_s`` adds the interpreter and the command's imports. ``overhead_ms`` per
task = (workers x wall_s - sum of runtime_s) / tasks: at 1 worker, the wall the runs do
not account for (issue 29 item 3: at most 20 ms for sub-second tasks); ``steady_ms``: the
same for a second batch of the same tasks in the same process (imports, kernels and pool
server already there: the per-task cost alone). A Dask cluster is started before its
batch and stopped after it (not in any time).

Run: python solve.py reproduce batch-scaling [--quick]
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from benchmarks.common import main, md_table, run_script, table_report

ROOT = Path(__file__).resolve().parent.parent
# MDMCF's own group pool off (workers=1): one batch worker is then one process, as it is
# for DELTA-Fast (its default), so the speedup is the batch's alone
METHODS = "itv-mdmcf:workers=1,delta-fast:generations=10:pop=16"
TARGET_2 = 1.8          # speedup at 2 workers on 2 cores (issue 29)
TARGET_16 = 12.0        # speedup at 16 workers on 16 cores
OVERHEAD_MS = 20.0      # per task at 1 worker, sub-second tasks


def make_instances(folder: Path, n_each: int) -> list[Path]:
    """``n_each`` LumosCore reconfigurations (64 Pods, seeds 1..n) and ``n_each`` DELTA
    Megatron-177B jobs (bandwidth 200, 225, ... Gb/s) in ``folder``."""
    import instances
    from toolkit.registry import problem

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    gen = problem("lumos-reconfig").generator
    base = {k: v[1] for k, v in gen.params.items()}
    for s in range(1, n_each + 1):
        inst = gen.run(**{**base, "pods": 64, "k_leaf": 8, "k_spine": 16, "seed": s})
        out.append(folder / f"reconfig-s{s:03d}.json")
        instances.save_instance(inst, out[-1])
    gen = problem("delta").generator
    base = {k: v[1] for k, v in gen.params.items()}
    for i in range(n_each):
        inst = gen.run(**{**base, "model": "megatron-177b", "bandwidth_gbps": 200.0 + 25 * i})
        out.append(folder / f"delta-bw{200 + 25 * i}.json")
        instances.save_instance(inst, out[-1])
    return out


def worker_counts(cores: int) -> list[int]:
    """1, 2, 4, ... up to ``cores``, and ``cores`` itself."""
    out, w = [], 1
    while w < cores:
        out.append(w)
        w *= 2
    return out + [cores]


_DRIVE = """
import json, sys, time
from toolkit.threads import one_blas_thread
one_blas_thread()                   # as solve.py's entry point does
import solve
argv, outs = json.loads(sys.argv[1])
walls = []
for out in outs:                    # the same batch into each folder, in this one process
    t0 = time.perf_counter()
    code = solve.main([*argv, "--out", out])
    walls.append(time.perf_counter() - t0)
    assert code == 0, code
print(json.dumps(walls))
"""


def run_batch(folder: Path, runs: Path, workers: int, scheduler: str | None,
              twice: bool) -> dict:
    """One batch command in a fresh process; with ``twice`` a second, warm batch of the same
    tasks in that process. Returns walls, runtimes and objectives."""
    argv = ["batch", str(folder), "--methods", METHODS, "--workers", str(workers), "-q"]
    if scheduler:
        argv += ["--scheduler", scheduler]
    outs = [str(runs / f"r{i}") for i in range(2 if twice else 1)]
    for o in outs:
        shutil.rmtree(o, ignore_errors=True)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    walls = run_script(_DRIVE, [argv, outs], f"batch --workers {workers}")
    process_s = time.perf_counter() - t0
    recs = [pd.read_csv(Path(o) / "records.csv") for o in outs]
    return {"wall_s": walls[0], "process_s": process_s, "load": load, "records": recs[0],
            "steady": (walls[1], recs[1]) if twice else None}


class DaskCluster:
    """``dask scheduler`` and ``dask worker --nworkers N --nthreads 1`` as processes."""

    def __init__(self, workers: int, folder: Path):
        exe = Path(sys.executable).parent / "dask"
        if not exe.exists():        # an install beside the interpreter's (pip --target)
            exe = Path(shutil.which("dask") or exe)
        self.file = folder / "scheduler.json"
        self.file.unlink(missing_ok=True)
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        self.procs = [subprocess.Popen([str(exe), "scheduler", "--scheduler-file",
                                        str(self.file), "--port", "0", "--no-dashboard"],
                                       **quiet)]
        self.procs.append(subprocess.Popen(
            [str(exe), "worker", "--scheduler-file", str(self.file), "--nworkers", str(workers),
             "--nthreads", "1", "--no-dashboard"], **quiet))
        from distributed import Client

        end = time.monotonic() + 120
        while not self.file.exists():
            if time.monotonic() > end:
                raise RuntimeError("dask scheduler did not start")
            time.sleep(0.2)
        with Client(scheduler_file=str(self.file), timeout="60s") as client:
            client.wait_for_workers(workers, timeout=120)
            self.address = client.scheduler.address

    def close(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


_SPIN = "import sys\nx = 0\nfor i in range(int(sys.argv[1])): x += i * i"


def ceiling(workers: int, loops: int = 3_000_000) -> float:
    """The speedup that ``workers`` processes of pure Python arithmetic get on this machine
    now, beside whatever else runs: ``workers`` x (wall of one) / (wall of ``workers`` at
    once); the most a batch can reach at this load (``workers`` itself on idle cores)."""
    def wall(k: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _SPIN, str(loops)]) for _ in range(k)]
        for p in procs:
            p.wait()
        return time.perf_counter() - t0
    if workers == 1:
        return 1.0
    one = wall(1)
    return workers * one / wall(workers)


def measure(folder: Path, runs: Path, cores: int, repeats: int,
            first: int = 0) -> tuple[pd.DataFrame, list]:
    """Every (mode, workers, repeat): one row each; and the record tables."""
    rows, tables = [], []
    for rep in range(first, first + repeats):
        ceil = {w: ceiling(w) for w in worker_counts(cores)}
        for mode in ("pool", "dask"):
            for w in worker_counts(cores):
                cluster = DaskCluster(w, runs) if mode == "dask" else None
                try:
                    r = run_batch(folder, runs, w, cluster and cluster.address, w == 1)
                finally:
                    if cluster is not None:
                        cluster.close()
                recs = r["records"]
                row = dict(mode=mode, workers=w, repeat=rep, ceiling=ceil[w], wall_s=r["wall_s"],
                           process_s=r["process_s"], load=r["load"], tasks=len(recs),
                           runtime_sum_s=recs.runtime_s.sum(),
                           runtime_median_s=recs.runtime_s.median())
                if r["steady"]:
                    wall2, recs2 = r["steady"]
                    row["steady_ms"] = 1000 * (wall2 - recs2.runtime_s.sum()) / len(recs2)
                    tables.append(recs2)
                rows.append(row)
                tables.append(recs)
                print(f"batch-scaling: {mode} x{w} (repeat {rep + 1}): "
                      f"{r['wall_s']:.1f} s, load {r['load']:.1f}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows), tables


def objectives_equal(tables: list[pd.DataFrame]) -> tuple[int, int]:
    """(pairs whose objective is the same in every run, pairs): pairs = (instance, method)."""
    def key(df):
        return {(Path(i).name, m): o for i, m, o in zip(df.instance, df.method, df.objective)}
    ref = key(tables[0])
    same = sum(all(key(t).get(k) == v for t in tables) for k, v in ref.items())
    return same, len(ref)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Medians over the repeats, speedup and efficiency against the same mode's 1 worker."""
    agg = {c: "median" for c in ("wall_s", "process_s", "runtime_sum_s", "runtime_median_s",
                                 "load", "ceiling", "steady_ms") if c in df}
    s = df.groupby(["mode", "workers"], sort=False).agg({**agg, "tasks": "first"}).reset_index()
    one = s[s.workers == 1].set_index("mode").wall_s
    s["speedup"] = s["mode"].map(one) / s.wall_s
    s["efficiency"] = s.speedup / s.workers
    s["of_ceiling"] = s.speedup / s.ceiling
    s["overhead_ms"] = 1000 * (s.workers * s.wall_s - s.runtime_sum_s) / s.tasks
    return s


_STAGES = """
import gc, json, sys, time
from pathlib import Path
from toolkit.threads import apply_share, one_blas_thread
one_blas_thread()
apply_share(1)                      # a pool worker's share: MDMCF's groups in this process
from toolkit.heap import keep_freed_memory
keep_freed_memory()                 # as a batch and its workers do
import instances
from toolkit.records_csv import CsvSink
from toolkit.outdir import write_solution
from toolkit.registry import RunConfig, problem
from toolkit.run import check_applicable, run_task
from toolkit.run_keys import file_digest, run_key
from toolkit.variants import parse_variants
files, methods, out = json.loads(sys.argv[1])
rows = []

def clock(fn):
    c0, t0 = time.thread_time(), time.perf_counter()
    r = fn()
    return r, time.thread_time() - c0, time.perf_counter() - t0
for rep in range(2):                # the first pass warms the process; the second is kept
    sink = CsvSink(Path(out) / f"records{rep}.csv")     # new rows, as a batch appends them
    gc.freeze()                     # what is loaded and kept, as a batch does (toolkit.heap)
    for f in files:
        for v in parse_variants(methods):
            data, c1, w1 = clock(lambda: instances.read_json(f))
            prob = problem(data["problem"])
            if v.method not in prob.methods:
                continue
            cfg = v.config(RunConfig())
            key, c1b, w1b = clock(lambda: instances.instance_type(data, f) and run_key(
                Path(f), file_digest(Path(f)), v.label, cfg))
            inst, c2, w2 = clock(lambda: instances.from_dict(data, f))
            method = prob.methods[v.method]
            _, c2b, w2b = clock(lambda: check_applicable(inst, method, cfg, f))
            rec = run_task(inst, f, v.method, cfg, want_solution="object")
            sol = rec.pop("solution")
            _, c3, w3 = clock(lambda: (prob.check(inst, sol), prob.bound and prob.bound(inst)))
            rec.update(key)
            to_file = prob.solution_to_file or prob.solution_to_dict     # as the batch does
            _, c4, w4 = clock(lambda: write_solution(out, dict(rec, solution=to_file(sol))))
            _, c5, w5 = clock(lambda: sink.append(rec))
            if rep:
                rows.append(dict(problem=prob.name, runtime_s=rec["runtime_s"],
                                 read=c1 + c1b, build=c2 + c2b, check=c3, solution=c4, row=c5,
                                 wall=w1 + w1b + w2 + w2b + w3 + w4 + w5))
print(json.dumps(rows))
"""


def stages(folder: Path, runs: Path) -> pd.DataFrame:
    """Where a task's overhead goes, in CPU seconds of one warm process (load-independent,
    where wall times on a shared machine are not): reading the file and its run key,
    building and checking the instance, the independent checker (and the bound), the
    solution file, the CSV row. One row per task."""
    files = sorted(str(p) for p in folder.glob("*.json"))
    out = runs / "stages"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return pd.DataFrame(run_script(_STAGES, [files, METHODS.split(","), str(out)],
                                   "stage profile"))


def run(quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    from toolkit.threads import cores as cpu_count

    cores = cpu_count()
    n_each, repeats = (8, 1) if quick else (32, 3 if cores <= 4 else 2)
    tmp = Path(tempfile.mkdtemp(prefix="batch-scaling-"))
    try:
        folder = tmp / "instances"
        make_instances(folder, n_each)
        dfs, tables, parts = [], [], None
        for rep in range(repeats):  # the report after each repeat: a cut-off run keeps some
            df, more = measure(folder, tmp, cores, 1, first=rep)
            dfs.append(df)
            tables += more
            if parts is None:
                parts = stage_table(stages(folder, tmp))
            same, pairs = objectives_equal(tables)
            s = summarize(pd.concat(dfs, ignore_index=True))
            s["objectives_equal"] = f"{same}/{pairs}"
            report = _report(out_dir, quick, s, pd.concat(dfs, ignore_index=True), cores,
                             2 * n_each, rep + 1, same == pairs, parts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report


STAGE_COLS = ("read", "build", "check", "solution", "row")


def stage_table(parts: pd.DataFrame) -> pd.DataFrame:
    """Median ms per task and problem type: each stage's CPU, their sum, and the wall of
    those stages and of the run (``runtime_s``)."""
    t = parts.groupby("problem").median(numeric_only=True) * 1000
    t["overhead_cpu"] = t[list(STAGE_COLS)].sum(axis=1)
    t = t.rename(columns={"wall": "overhead_wall", "runtime_s": "runtime"}).reset_index()
    return t[["problem", *STAGE_COLS, "overhead_cpu", "overhead_wall", "runtime"]]


def _autogroup() -> str:
    try:
        return "on" if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() \
            == "1" else "off"
    except OSError:
        return "unknown"


def _report(out_dir, quick, s, df, cores, tasks, repeats, equal, parts) -> list[Path]:
    cols = ["mode", "workers", "wall_s", "speedup", "ceiling", "of_ceiling", "efficiency",
            "overhead_ms",
            "steady_ms", "process_s", "runtime_sum_s", "runtime_median_s", "load",
            "objectives_equal"]
    table = s[[c for c in cols if c in s]]
    two = s[(s.workers == 2)].set_index("mode").speedup.to_dict()
    one = s[s.workers == 1].set_index("mode")
    load = (df.load.min(), df.load.median(), df.load.max())
    verdict = [
        f"- {TARGET_2:g}x at 2 workers on 2 cores: " + (
            ", ".join(f"{m} {v:.2f}x" for m, v in two.items()) + f" on {cores} cores"
            if two else f"not measured ({cores} core(s))"),
        f"- {TARGET_16:g}x at 16 workers on 16 cores: " + (
            ", ".join(f"{m} {v:.2f}x" for m, v in s[s.workers == 16].set_index("mode")
                      .speedup.items())
            if cores >= 16 else f"not measured: no 16-core machine here ({cores} cores)"),
        f"- at most {OVERHEAD_MS:g} ms per task at 1 worker: all-in " + ", ".join(
            f"{m} {v:.0f} ms" for m, v in one.overhead_ms.items()) + "; steady " + ", ".join(
            f"{m} {v:.0f} ms" for m, v in one.steady_ms.items()) + " (wall, at this load); "
        "CPU per task (below): " + ", ".join(
            f"{p} {v:.0f} ms" for p, v in zip(parts.problem, parts.overhead_cpu)),
        f"- objectives equal in every run: {'yes' if equal else 'NO'} "
        f"({s.objectives_equal.iloc[0]} (instance, method) pairs)"]
    intro = [f"Load average (1 min) before each batch: min {load[0]:.1f}, median "
             f"{load[1]:.1f}, max {load[2]:.1f}: other processes share the cores. `ceiling`: "
             "the speedup that as many processes of pure Python arithmetic got beside them "
             "just before (`ceiling()` in the module; the worker count on idle cores), the most "
             "a batch could reach at that load; `of_ceiling` = speedup / ceiling. Where Linux "
             f"groups processes by session (autogroup: {_autogroup()}), the busy sessions share "
             "the cores evenly and all of a batch's processes share its session's part, however "
             "many there are.",
             "", f"{tasks} tasks ({METHODS.replace(',', ' and ')}; {tasks // 2} instances "
             f"each), {repeats} repeat(s), medians; see the module docstring of "
             "`benchmarks/batch_scaling.py` for what each column measures.", ""]
    more = ["Targets (issue 29):", "", *verdict, "", "## Where a task's overhead goes", "",
            "Milliseconds per task, median over the tasks of each problem type, in one warm "
            "process at a pool worker's share (`stages()` in the module: the batch's own calls, "
            "timed one by one): CPU time of this thread, which the machine's load does not "
            "stretch, for `read` (the file parsed, its problem and run key: the parent's part), "
            "`build` (the instance built and validated, and the method asked whether it takes "
            "it), `check` (the independent checker and the analytic bound), `solution` (the "
            "solution as JSON data, then its file) and `row` (the CSV row, appended to a "
            "fresh CSV); `overhead_wall` is the wall time of the same stages, `runtime` the "
            "runs' `runtime_s`.", "", md_table(parts, ".3g"), ""]
    return table_report(
        out_dir, quick, "batch-scaling", "Batch scale-out: process pool and Dask", cores, intro,
        table, more, {"batch_scaling.csv": df, "batch_scaling_stages.csv": parts},
        (f"Batch scale-out on {cores} cores ({tasks} tasks; the papers give none)",
         ["mode", "workers", "wall_s", "speedup", "ceiling", "of_ceiling", "overhead_ms",
          "steady_ms", "objectives_equal"]))


if __name__ == "__main__":
    main(run, __doc__)
