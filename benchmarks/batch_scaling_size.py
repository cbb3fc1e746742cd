"""Batch scale-out against batch size (issue 29 item 4): where the speedup of
``batch-scaling`` at many workers goes. The same two task types (ITV-MDMCF on 64-Pod
reconfigurations, DELTA-Fast on Megatron-177B; see :mod:`benchmarks.batch_scaling`) in
batches of 64 and 256 tasks, on the local process pool at 1 worker and at the machine's
cores, one repeat each; and the pool's start on its own: a fresh process that starts a pool
of ``w`` workers with the batch's modules and kernel sets and waits until every worker has
answered once, a roll call at a barrier (:mod:`benchmarks.pool_roll`): ``start_s``, the
forkserver's imports and kernel loading, then the forks.

A batch's wall at ``w`` workers is about ``start_s + runtime_sum_s(w) / w`` plus the
parent's planning and the last tasks' tail; ``bound`` is that sum without the tail and the
planning, ``speedup_bound`` = wall at 1 worker / ``bound``: what the batch could reach if
the pool's start were its only cost. Tasks run longer when many run at once (a shared
cache and memory bus, the cores' clock): ``slowdown`` = ``runtime_sum_s(w)`` /
``runtime_sum_s(1)``.

Run: python solve.py reproduce batch-scaling-size [--quick]
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from benchmarks.batch_scaling import METHODS, make_instances, run_batch
from benchmarks.common import main, run_script, table_report

_START = """
import json, sys, time
from toolkit.threads import one_blas_thread
one_blas_thread()
t0 = time.perf_counter()
from benchmarks import pool_roll
from toolkit.batch import kernel_sets, pool_modules
import multiprocessing
from toolkit.pools import START_METHOD, kill_pool, process_pool
from toolkit.registry import RunConfig, problem
from toolkit.variants import parse_variants
w, methods = json.loads(sys.argv[1])
runs = [(problem(p).methods[v.method], v.config(RunConfig())) for v in parse_variants(methods)
        for p in ("lumos-reconfig", "delta") if v.method in problem(p).methods]
modules, kernels = pool_modules([m for m, _ in runs]), kernel_sets(runs)
roll = multiprocessing.get_context(START_METHOD).Barrier(w)    # starts no server
t1 = time.perf_counter()
ex = process_pool(w, modules=modules, kernels=kernels, initializer=pool_roll.join,
                  initargs=(roll,))
pids = {f.result() for f in [ex.submit(pool_roll.answer) for _ in range(w)]}
t2 = time.perf_counter()
kill_pool(ex)
print(json.dumps([t2 - t1, len(pids)]))
"""


def pool_start(workers: int) -> float:
    """Seconds from asking for a pool of ``workers`` to every worker's first answer, in a
    fresh process (the forkserver started by that pool)."""
    secs, answered = run_script(_START, [workers, METHODS], "pool start")
    if answered != workers:
        raise RuntimeError(f"pool start: {answered} of {workers} workers answered")
    return secs


def subset(folder: Path, dest: Path, n_each: int) -> Path:
    """The first ``n_each`` instances of each type (the batch-scaling set's), linked."""
    dest.mkdir(parents=True, exist_ok=True)
    for pattern in ("reconfig-s*.json", "delta-bw*.json"):
        for f in sorted(folder.glob(pattern), key=lambda p: int("".join(
                c for c in p.stem if c.isdigit())))[:n_each]:
            os.link(f, dest / f.name)
    return dest


def run(quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    from toolkit.threads import cores as cpu_count

    cores = cpu_count()
    sizes = (8, 32) if quick else (32, 128)         # instances of each type
    workers = sorted({1, cores})
    tmp = Path(tempfile.mkdtemp(prefix="batch-size-"))
    rows, report = [], []
    try:
        make_instances(tmp / "all", sizes[-1])
        start = {w: pool_start(w) for w in workers}
        for n in sizes:
            folder = subset(tmp / "all", tmp / f"n{n}", n)
            for w in sorted(workers, reverse=True):     # the long 1-worker batch last
                r = run_batch(folder, tmp, w, None, False)
                recs = r["records"]
                rows.append(dict(tasks=len(recs), workers=w, wall_s=r["wall_s"],
                                 runtime_sum_s=recs.runtime_s.sum(), start_s=start[w],
                                 load=r["load"]))
                print(f"batch-scaling-size: {len(recs)} tasks x{w}: {r['wall_s']:.1f} s, "
                      f"load {r['load']:.1f}", file=sys.stderr, flush=True)
                report = _report(out_dir, quick, _derive(pd.DataFrame(rows)), cores)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report


def _derive(df: pd.DataFrame) -> pd.DataFrame:
    """speedup, slowdown, bound and speedup_bound against the same size's 1-worker batch
    (NaN until it has run)."""
    one = df[df.workers == 1].set_index("tasks")
    df["speedup"] = df.tasks.map(one.wall_s) / df.wall_s
    df["slowdown"] = df.runtime_sum_s / df.tasks.map(one.runtime_sum_s)
    df["bound"] = df.start_s + df.runtime_sum_s / df.workers
    df["speedup_bound"] = df.tasks.map(one.wall_s) / df.bound
    return df


def _report(out_dir: Path, quick: bool, df: pd.DataFrame, cores: int) -> list[Path]:
    cols = ["tasks", "workers", "wall_s", "speedup", "runtime_sum_s", "slowdown", "start_s",
            "bound", "speedup_bound", "load"]
    table = df[cols]
    intro = [f"Tasks: {METHODS.replace(',', ' and ')}, half each (the instances of "
             "`batch-scaling`, more of them), local process pool, 1 repeat. Columns: see the "
             "module docstring of `benchmarks/batch_scaling_size.py` (`start_s`: the pool's "
             "start alone; `bound` = start_s + runtime_sum_s / workers; `speedup_bound`: the "
             "speedup if the pool's start were the batch's only cost).", ""]
    return table_report(
        out_dir, quick, "batch-scaling-size", "Batch scale-out against batch size", cores,
        intro, table, [], {"batch_scaling_size.csv": df},
        (f"Batch speedup against batch size on {cores} cores (pool)",
         ["tasks", "workers", "wall_s", "speedup", "slowdown", "start_s", "speedup_bound"]))


if __name__ == "__main__":
    main(run, __doc__)
