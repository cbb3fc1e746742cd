"""Batch runs: many (instance file, method) tasks, resumable, local processes or Dask.

Each finished task is appended to the CSV at once (flushed and fsynced), so an
interrupted batch loses nothing finished; a rerun skips every (instance, method) pair
already in the CSV with a solution, and retries the ones that ended in ``error``.

Ctrl-C stops the batch: running tasks are abandoned (their workers killed; in-process the
solve is interrupted) and never written, so the rerun does them again. Local worker
processes ignore Ctrl-C (the parent stops them) and die with their parent, even by
``kill -9`` and mid-solve (:func:`_worker_init`).
"""
from __future__ import annotations

import csv
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import instances
from instances.errors import InstanceError
from toolkit.io import write_text_atomic
from toolkit.registry import RunConfig, problem
from toolkit.run import CORE_FIELDS, NotApplicable, check_applicable, resolve_method, run_task

RETRY_STATUSES = ("error", "interrupted")


def instance_files(paths) -> list[Path]:
    """Files named, and ``*.json`` files under folders named (sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.json") if q.is_file()))
        else:
            out.append(p)
    return out


class CsvSink:
    """Append-only CSV of records with a header that grows when new columns appear."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.header: list[str] = []
        self.rows: list[dict] = []
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open(newline="") as fh:
                reader = csv.DictReader(fh)
                self.header = list(reader.fieldnames or [])
                self.rows = list(reader)

    def done_keys(self) -> set[tuple[str, str]]:
        return {(r["instance"], r["method"]) for r in self.rows
                if r.get("status") not in RETRY_STATUSES}

    def append(self, rec: dict) -> None:
        row = {k: ("" if v is None else v) for k, v in rec.items()
               if k not in ("solution", "traceback")}
        key = (row["instance"], row["method"])
        replaced = any((r["instance"], r["method"]) == key for r in self.rows)
        self.rows = [r for r in self.rows if (r["instance"], r["method"]) != key] + [row]
        new = [k for k in row if k not in self.header]
        if new or replaced or not self.path.exists():
            self.header = _order(self.header + new)
            self._rewrite()
            return
        with self.path.open("a", newline="") as fh:
            csv.DictWriter(fh, self.header, extrasaction="ignore").writerow(row)
            fh.flush()
            os.fsync(fh.fileno())

    def _rewrite(self) -> None:
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, self.header, extrasaction="ignore")
        w.writeheader()
        w.writerows(self.rows)
        write_text_atomic(self.path, buf.getvalue())


def _order(cols: list[str]) -> list[str]:
    core = [c for c in CORE_FIELDS if c in cols]
    return core + [c for c in cols if c not in core]


@dataclass
class BatchReport:
    ran: list[dict] = field(default_factory=list)
    skipped_done: int = 0
    bad_input: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    keys: list[tuple[str, str]] = field(default_factory=list)  # every task of this batch
    rows: list[dict] = field(default_factory=list)   # their CSV rows, in task order


def plan(paths, methods: list[str] | None, cfg: RunConfig, done: set, report: BatchReport):
    """Validate every file once and list the tasks still to run."""
    tasks = []
    for path in instance_files(paths):
        src = str(path)
        try:
            data = instances.read_json(path)
            inst = instances.from_dict(data, src)
        except InstanceError as exc:
            report.bad_input.append(str(exc))
            continue
        except Exception as exc:  # noqa: BLE001 - one bad file never stops a batch
            report.bad_input.append(f"{src}: {type(exc).__name__}: {exc}")
            continue
        prob = problem(inst.problem)
        names = [m for m in methods if m in prob.methods] if methods else [prob.default_method]
        if methods and not names:
            report.declined.append(f"{src}: none of the methods applies to problem {prob.name} "
                                   f"(its methods: {', '.join(prob.methods)})")
        for name in names:
            if (src, name) in done:
                report.keys.append((src, name))
                report.skipped_done += 1
                continue
            try:
                check_applicable(inst, resolve_method(prob, name), cfg, src)
            except NotApplicable as exc:
                report.declined.append(str(exc))
                continue
            except ValueError as exc:          # OptionError from the applicability check
                report.bad_input.append(f"{src}: field 'option': {exc}")
                continue
            report.keys.append((src, name))
            tasks.append((data, src, name))
    return tasks


def _task(data, src, name, cfg):
    try:
        return run_task(data, src, name, cfg)
    except (InstanceError, NotApplicable) as exc:
        return {"instance": src, "method": name, "status": "bad_input", "message": str(exc)}


def run_batch(paths, methods, cfg: RunConfig, out: str | Path, workers: int = 1,
              scheduler: str | None = None, progress: bool = True) -> BatchReport:
    sink = CsvSink(out)
    report = BatchReport()
    tasks = plan(paths, methods, cfg, sink.done_keys(), report)
    if workers > 1 and cfg.threads is None:
        cfg.threads = max(1, (os.cpu_count() or 1) // workers)
    bar = _bar(len(tasks), progress)

    def collect(rec):
        if rec.get("status") == "bad_input":
            report.bad_input.append(rec["message"])
        else:
            sink.append(rec)
            report.ran.append(rec)
        bar.update(1)

    try:
        if scheduler:
            _run_dask(tasks, cfg, scheduler, collect)
        elif workers > 1 and len(tasks) > 1:
            pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init,
                                       initargs=(os.getpid(),))
            try:
                futs = [pool.submit(_task, d, s, m, cfg) for d, s, m in tasks]
                for f in as_completed(futs):
                    collect(f.result())
            except BaseException:       # Ctrl-C (or a failure here): stop, do not wait
                _kill_pool(pool)
                raise
            pool.shutdown()
        else:
            for d, s, m in tasks:
                collect(_task(d, s, m, cfg))
    finally:
        bar.close()
    by_key = {(r["instance"], r["method"]): r for r in sink.rows}
    report.rows = [by_key[k] for k in report.keys if k in by_key]
    return report


def _worker_init(parent: int) -> None:
    """In each local worker: leave Ctrl-C to the parent, and die with it.

    Linux: the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``), whatever
    the worker is doing, and the same holds for processes the worker forks (a method's own
    process pool) with respect to the worker. Elsewhere a thread checks once a second
    whether the worker was orphaned (its parent process changed or ``parent`` is gone).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ppid = os.getppid()
    linux = _kill_me_with_parent()
    if _orphaned(ppid, parent):     # the parent died before prctl took effect
        os._exit(1)
    if linux:
        os.register_at_fork(after_in_child=_kill_me_with_parent)
    else:
        threading.Thread(target=_watch_parent, args=(ppid, parent), daemon=True,
                         name="watch-parent").start()


def _kill_me_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0) == 0   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _orphaned(ppid: int, parent: int) -> bool:
    if os.getppid() != ppid:
        return True
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return False


def _watch_parent(ppid: int, parent: int) -> None:
    while not _orphaned(ppid, parent):
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a process pool now: cancel queued tasks, kill the workers, reap them."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.kill()
        except (OSError, ValueError):
            pass
    for p in procs:
        p.join(5)


def _run_dask(tasks, cfg, address, collect):
    try:
        from distributed import Client, as_completed as dask_completed
    except ImportError:
        raise RuntimeError("--scheduler needs the 'distributed' extra: pip install -e '.[distributed]'")
    with Client(address, timeout="30s") as client:
        futs = [client.submit(_task, d, s, m, cfg, pure=False) for d, s, m in tasks]
        try:
            for f in dask_completed(futs):
                collect(f.result())
        except KeyboardInterrupt:       # Ctrl-C: queued tasks are not started
            client.cancel(futs)
            raise


def _bar(total, enabled):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled or total == 0, unit="task", file=sys.stderr,
                dynamic_ncols=True)
