"""Batch runs: many (instance file, method) tasks, resumable, local processes or Dask.

Each finished task is appended to the CSV at once (flushed: an interrupted or killed batch
loses nothing finished; fsynced at most once a second, in a thread the batch does not wait
for, and at the end, so that a machine crash loses at most the last second's rows, where
an fsync per row cost each task a few ms, issue 29 item 3). Each row carries its ``run_key``
(:mod:`toolkit.run_keys`): a hash of the resolved file path, the file's content, the method
(its variant label, :mod:`toolkit.variants`) and every setting that changes a result
(backend, time limit, MIP gap, ``--param``, and the ``--option`` values the method
declares; not ``--threads``, which changes speed, not the problem). A rerun skips the tasks
whose key has a finished row (also under the key it had before only declared options
entered keys), runs the others, and retries the ones that ended in ``error`` or ``interrupted`` (their
row is replaced). A changed setting adds a row beside the old one (the CSV keeps both,
told apart by ``run_key`` and ``settings``); the batch's table shows the rows of this run.
Rows written before run keys existed match nothing (rerun), unless the caller passes
``keyless="keep"`` (the reproduction targets, whose raw runs predate the keys).

Ctrl-C stops the batch: running tasks are abandoned (their workers killed; in-process the
solve is interrupted) and never written, so the rerun does them again. Local worker
processes ignore Ctrl-C (the parent stops them) and die with their parent, even by
``kill -9`` and mid-solve (:func:`toolkit.pools.worker_init`); the Dask path is
:mod:`toolkit.batch_dask`.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import instances
from instances.errors import InstanceError
from toolkit.batch_dask import SchedulerError  # noqa: F401 - bad --scheduler (solve.py)
from toolkit.batch_dask import dask_client, dask_thread_cap, run_dask
from toolkit.batch_pool import cores, run_pool, thread_cap
from toolkit.heap import heap_frozen
from toolkit.outdir import RecordsError  # noqa: F401 - a bad records CSV (solve.py)
from toolkit.records_csv import CsvSink, path_method
from toolkit.registry import RunConfig, problem
from toolkit.run import NotApplicable, check_applicable, run_task
from toolkit.run_keys import KEY_FIELDS, done_key, file_digest, run_key, shown_path  # noqa: F401
from toolkit.variants import Variant, label, parse_variants

def instance_files(paths) -> list[Path]:
    """Files named, and ``*.json`` files under folders named (sorted); a link there that
    leads nowhere is listed too, so that reading it reports it (it was skipped silently)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.json")
                              if q.is_file() or (q.is_symlink() and not q.is_dir())))
        else:
            out.append(p)
    return out


@dataclass
class BatchReport:
    ran: list[dict] = field(default_factory=list)
    skipped_done: int = 0
    bad_input: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    keys: list = field(default_factory=list)       # every task of this batch: its row's key
    rows: list[dict] = field(default_factory=list)   # their CSV rows, in task order
    files: list = field(default_factory=list)        # (path column, resolved path) per file
    # the CSV's rows of these files, one per (file, method row): this batch's, else the
    # newest (what ``gap`` ranks: earlier runs of other methods and variants too)
    file_rows: list[dict] = field(default_factory=list)
    other_rows: int = 0     # rows in the CSV for this batch's (file, method) pairs, other settings
    threads: int | None = None      # solver threads per task (workers x threads <= cores)


def plan(paths, methods: list[Variant] | None, cfg: RunConfig, done: dict, report: BatchReport,
         keyless: str = "rerun", base: Path | None = None, kept=None, text: bool = False):
    """List the tasks still to run: each file read once, its problem from its common fields
    (instances.instance_type); the instance is built, checked and asked whether the method
    takes it by the task (:func:`_task`), in the worker, so that the parent's work per
    task stays small however many workers there are (issue 29 item 3).

    ``done`` is :meth:`CsvSink.done`; with ``keyless="keep"`` a finished row without a run
    key counts as done for its (file, method), whatever the settings. ``kept()``, when
    given, is called after each file is parsed and kept parsed
    (:func:`toolkit.heap.heap_frozen`'s freeze; not with ``text``: the parsed file is dropped).

    A task is (file's content, file as named, variant, run key, problem): the content parsed,
    or with ``text`` its JSON text as read, for tasks that go to other processes: a pickled
    text is a copy of one string where a parsed file is tens of thousands of objects to
    pickle and unpickle (2.3 + 4.3 ms for a 64-Pod reconfiguration), and the worker parses
    it (3.8 ms) before it builds the instance, as it would the file. The parent then keeps
    the text, not the parsed file.
    """
    if keyless not in ("rerun", "keep"):
        raise ValueError(f"keyless must be 'rerun' or 'keep', got {keyless!r}")
    tasks, files, seen = [], [], set()
    base = None if base is None else Path(base).resolve()
    for p in map(Path, paths):
        found = instance_files([p])
        if p.is_dir() and not found:    # a folder without instances: a wrong path, not "0 ran"
            report.bad_input.append(f"{p}: no instance files (*.json) in this folder")
        for f in found:                 # a file named twice (or also in a folder): once
            real = os.path.realpath(f)          # (Path.resolve raises on a link loop)
            if real not in seen:
                seen.add(real)
                files.append((f, Path(real)))
    for path, real in files:            # each file resolved once (a resolve is 30-60 us)
        src = str(path)
        try:
            raw = instances.read_text(path)
            data = instances.parse_json(raw, path)
            instances.instance_type(data, src)
            kind = data["problem"]
            if text:
                data = raw
            elif kept is not None:
                kept()
            digest = file_digest(path)
        except InstanceError as exc:
            report.bad_input.append(str(exc))
            continue
        except Exception as exc:  # noqa: BLE001 - one bad file never stops a batch
            report.bad_input.append(f"{src}: {type(exc).__name__}: {exc}")
            continue
        prob = problem(kind)
        shown = shown_path(real, base, resolved=True)
        report.files.append((shown, str(real)))
        names = [v for v in methods if v.method in prob.methods] if methods else \
            [Variant(prob.default_method)]
        if methods and not names:
            report.declined.append(f"{src}: none of the methods applies to problem {prob.name} "
                                   f"(its methods: {', '.join(prob.methods)})")
        for v in names:
            method, vcfg = prob.methods[v.method], v.config(cfg)
            key = run_key(path, digest, v.label, vcfg, base, {o.name for o in method.options},
                          shown)
            found = done_key(done, v.label, key["run_key"],
                              lambda: run_key(path, digest, v.label, vcfg, shown=shown)["run_key"])
            legacy = ("keyless", str(real), v.label)
            if found or (keyless == "keep" and legacy in done):
                report.keys.append(found or legacy)
                report.skipped_done += 1
                continue
            report.keys.append(key["run_key"])
            tasks.append((data, src, v, key, prob.name))
    return tasks


def _task(data, src, variant, cfg, key, solutions=None, write=True):
    """One run of ``variant`` (a Variant, or a method name) on the parsed file ``data`` (or
    its JSON text, parsed here):
    the instance built and checked, the method asked whether it takes it (a record of
    status ``bad_input`` or ``declined`` with the message, no run, when not), then run. With
    a ``solutions`` folder an infeasible model's IIS goes to that folder and the record's
    solution file is written there (``write``: by the process that ran it, so a pool's
    workers write in parallel; else the record carries its solution for the caller to
    write: a Dask worker on another host; names: :mod:`toolkit.outdir`)."""
    v = variant if isinstance(variant, Variant) else Variant(variant)
    cfg = v.config(cfg)

    def refused(status, message):
        return {"instance": src, "method": v.method, "status": status, "message": message}
    try:
        if isinstance(data, str):           # the file's text (plan's text): parsed here
            data = instances.parse_json(data, src)
        inst = instances.from_dict(data, src)
        check_applicable(inst, problem(inst.problem).methods[v.method], cfg, src)
    except InstanceError as exc:
        return refused("bad_input", str(exc))
    except NotApplicable as exc:
        return refused("declined", str(exc))
    except ValueError as exc:          # OptionError from the applicability check
        return refused("bad_input", f"{src}: field 'option': {exc}")
    except Exception as exc:  # noqa: BLE001 - one bad file never stops a batch
        return refused("bad_input", f"{src}: {type(exc).__name__}: {exc}")
    if solutions is not None:
        from dataclasses import replace

        from toolkit.outdir import run_name

        name = run_name(src, v.label)          # the files' names, once
        cfg = replace(cfg, iis_path=str(Path(solutions) / f"{name}.iis.ilp"))
    try:
        rec = run_task(inst, src, v.method, cfg, want_solution=solutions is not None and "file")
    except (InstanceError, NotApplicable) as exc:
        return refused("bad_input", str(exc))
    if v.options:
        rec["variant"] = v.label
    rec.update(key)
    if solutions is not None and write:
        from toolkit.outdir import write_solution

        write_solution(solutions, rec, name)
        rec.pop("solution", None)
    return rec


def _cap_threads(cfg: RunConfig, cap: int) -> None:
    cfg.threads = cap if cfg.threads is None else min(cfg.threads, cap)


def run_batch(paths, methods, cfg: RunConfig, out: str | Path | None, workers: int = 1,
              scheduler: str | None = None, progress: bool = True,
              keyless: str = "rerun", solutions: str | Path | None = None) -> BatchReport:
    """Run every (file, method) task not yet in the CSV ``out``; see the module docstring.

    ``methods``: names or variants (``milp:slots=2``, :mod:`toolkit.variants`; a bad one
    is a VariantError, an OptionError), None for each problem's default method.
    ``out=None`` keeps the rows in memory (nothing to resume). ``keyless="keep"`` honours
    finished rows written before run keys existed (matched on their file and method); the
    default reruns them. With a ``solutions`` folder each run's record and solution is
    written there as JSON, and IIS files too (:mod:`toolkit.outdir`); the CLI's ``--out
    DIR`` is ``out=DIR/records.csv, solutions=DIR``.
    """
    from dataclasses import replace

    from toolkit.options import check_shared
    from toolkit.registry import selected_methods

    # the thread cap below is this batch's, not the caller's; each method takes the options
    # it declares, and one that no selected method declares is bad input (OptionError)
    cfg = replace(cfg, options_shared=True)
    variants = parse_variants(methods) if methods is not None else None
    check_shared(cfg.options, selected_methods(
        None if variants is None else list(dict.fromkeys(v.method for v in variants))))
    client = dask_client(scheduler) if scheduler is not None else None   # "": refused
    try:
        with heap_frozen() as freeze:   # the parsed files and records: kept, not traversed
            sink = CsvSink(out)
            report = BatchReport()
            base = None if out is None else Path(out).resolve().parent
            tasks = plan(paths, variants, cfg, sink.done(), report, keyless, base, freeze,
                         text=client is not None or workers > 1)
            if client is not None:
                _cap_threads(cfg, dask_thread_cap(client, cores))
            elif workers > 1 and len(tasks) > 1:
                _cap_threads(cfg, thread_cap(cores(), min(workers, len(tasks))))
            report.threads = cfg.threads
            try:
                _run(tasks, cfg, workers, client, sink, report, progress, solutions, freeze)
            finally:
                sink.sync()
    finally:
        if client is not None:
            client.close()
    by_key = {r.get("run_key") or ("keyless", *path_method(r)): r for r in sink.rows}
    report.rows = [by_key[k] for k in report.keys if k in by_key]
    mine = {path_method(r) for r in report.rows}
    report.other_rows = sum(1 for r in sink.rows if path_method(r) in mine) - len(report.rows)
    report.file_rows = _file_rows(sink.rows, report)
    return report


def _file_rows(rows: list[dict], report: BatchReport) -> list[dict]:
    """:attr:`BatchReport.file_rows`: file by file, this batch's rows, then the newest row
    of each other method row of the file in the CSV (in the CSV's order)."""
    which = {}
    for i, (shown, real) in enumerate(report.files):
        which[shown] = which[real] = i
    mine = [{label(r): r for r in report.rows if which.get(path_method(r)[0]) == i}
            for i in range(len(report.files))]
    other: list[dict] = [{} for _ in report.files]
    for r in rows:                           # the CSV's order: the newest last
        i = which.get(path_method(r)[0])
        if i is not None and label(r) not in mine[i]:
            other[i].pop(label(r), None)
            other[i][label(r)] = r
    return [r for i in range(len(report.files)) for r in [*mine[i].values(), *other[i].values()]]


def _run(tasks, cfg, workers, client, sink, report, progress, solutions=None,
         freeze=None) -> None:
    bar = _bar(len(tasks), progress)
    order = {}
    for i, t in enumerate(tasks):
        order.setdefault((t[1], t[2].method), i)
    refused: list = []          # (task order, status, message) of the tasks that did not run

    def collect(rec):
        if rec.get("status") in ("bad_input", "declined"):
            refused.append((order.get((rec["instance"], rec["method"]), len(tasks)),
                            rec["status"], rec["message"]))
        else:
            if solutions is not None and "solution" in rec:     # a Dask worker's
                from toolkit.outdir import write_solution

                write_solution(solutions, rec)
                rec.pop("solution", None)
            sink.append(rec)
            report.ran.append(rec)
        bar.update(1)

    try:
        if client is not None:
            run_dask(_task, tasks, cfg, client, collect, solutions, cfg.threads or 1,
                     _kernels(tasks, cfg))
        elif workers > 1 and len(tasks) > 1:
            n = min(workers, len(tasks))
            run_pool(_task, tasks, cfg, n, collect, solutions, pool_modules(_methods(tasks)),
                     _kernels(tasks, cfg), thread_cap(cores(), n))
        else:
            loaded = -1
            for t in tasks:
                collect(_task(*t[:3], cfg, t[3], solutions))
                if freeze is not None and len(sys.modules) != loaded:
                    freeze()            # the modules and kernels a task loaded (the first
                    loaded = len(sys.modules)   # of each method): kept, not traversed
    finally:
        bar.close()
        for _, status, msg in sorted(refused, key=lambda r: r[0]):   # in task order, once
            to = report.bad_input if status == "bad_input" else report.declined
            if msg not in to:
                to.append(msg)


def _methods(tasks) -> list:
    """The Method of each task (a task's variant names one), once each."""
    return list({(t[4], t[2].method): problem(t[4]).methods[t[2].method]
                 for t in tasks}.values())


def pool_modules(methods) -> list[str]:
    """What a pool's workers import once (:func:`toolkit.registry.preload_modules`)."""
    from toolkit.registry import preload_modules

    return sorted({mod for m in methods for mod in preload_modules(m)})


def kernel_sets(runs) -> list[str]:
    """The compiled kernel sets that ``runs``, (Method, RunConfig) pairs, use with their
    options on any instance (``Method.kernels``), once each, in order: what a worker warms
    once. A bad --option value is left to its task to report."""
    out: dict = {}
    for method, cfg in runs:
        try:
            out.update(dict.fromkeys(method.kernel_sets(None, method.configure(cfg))))
        except ValueError:          # a bad --option value: the task reports it
            pass
    return list(out)


def _kernels(tasks, cfg) -> list[str]:
    """:func:`kernel_sets` of the tasks' methods and variants."""
    return kernel_sets((problem(kind).methods[v.method], v.config(cfg))
                       for _, _, v, _, kind in tasks)


def _bar(total, enabled):
    from toolkit.progress import bar

    return bar(total, enabled)
