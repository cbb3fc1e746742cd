"""Shared helpers for benchmark scripts: machine description and Markdown tables."""
from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy


def _more_versions() -> str:
    """numba and pandas, where installed (their versions move timings too)."""
    from importlib.metadata import PackageNotFoundError, version

    out = ""
    for pkg in ("numba", "pandas"):
        try:
            out += f", {pkg} {version(pkg)}"
        except PackageNotFoundError:
            pass
    return out


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import os

    try:     # timings are only comparable on a quiet machine: say how busy it was
        load = f"; load average {os.getloadavg()[0]:.1f} when the report was written"
    except OSError:
        load = ""
    from toolkit.versions import versions_text

    return (f"{cpu}, {os.cpu_count()} cores; Python {sys.version.split()[0]}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}{_more_versions()}; solvers: {versions_text()}{load}")


def md_table(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, row in df.iterrows():
        cells = [format(v, floatfmt) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


class Report(list):
    """What a reproduce target returns: the paths it wrote, in order (it is that list),
    and ``headline``, its summary table in Markdown with a title line: the paper's value
    beside ours wherever the paper gives one, built from the rows the run just computed.
    ``solve.py reproduce`` prints the headline on stdout and the paths on stderr."""

    def __init__(self, paths=(), headline: str = ""):
        super().__init__(paths)
        self.headline = headline


def headline(title: str, table, floatfmt: str = ".4g") -> str:
    """A headline: ``title``, a blank line, then ``table`` (a DataFrame, rendered by
    :func:`md_table`, or the lines of a Markdown table)."""
    body = md_table(table, floatfmt) if isinstance(table, pd.DataFrame) else "\n".join(table)
    return f"{title}\n\n{body}"


def reproduce_cmd(target: str, quick: bool, out_dir: Path) -> str:
    """The command that writes this report where it is: ``python solve.py reproduce
    TARGET [--quick] [--out DIR]``, ``--out`` only where DIR is not the run's default
    (results/<paper>/, or results/quick/<paper>/ with --quick)."""
    from toolkit.reproduce import default_out

    cmd = f"python solve.py reproduce {target}" + (" --quick" if quick else "")
    out_dir = Path(out_dir)
    return cmd if out_dir == default_out(quick, target) else f"{cmd} --out {out_dir.as_posix()}"


def write_report(out_dir: Path, name: str, md_lines: list[str], tables: dict,
                 head: str = "") -> Report:
    """Write ``<name>.md`` and one CSV per table (``{csv file name: DataFrame}``) atomically;
    the Report carries ``head`` (:func:`headline`)."""
    from toolkit.io import write_text_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.md"] + [out_dir / f for f in tables]
    for path, df in zip(paths[1:], tables.values()):
        write_text_atomic(path, df.to_csv(index=False))
    write_text_atomic(paths[0], "\n".join(md_lines))
    return Report(paths, head)



def table_report(out_dir: Path, quick: bool, target: str, title: str, cores: int,
                 intro: list[str], table: pd.DataFrame, more: list[str], tables: dict,
                 head: tuple[str, list[str]]) -> Report:
    """A report around one main table (the batch benchmarks'): ``# title``, the command of
    ``target``, the machine and its usable ``cores``, the lines ``intro``, ``table``, the
    lines ``more``; the CSVs ``tables`` ({file name: DataFrame}); the headline ``head``:
    its title and the columns of ``table`` it shows."""
    md = [f"# {title}", "", f"Command: `{reproduce_cmd(target, quick, out_dir)}`.", "",
          f"Machine: {machine()}; {cores} cores usable.", "", *intro, md_table(table, ".3g"),
          "", *more]
    return write_report(out_dir, target.replace("-", "_"), md, tables,
                        headline(head[0], table[head[1]]))


def run_script(script: str, arg, what: str):
    """Run ``script`` (Python source) in a fresh interpreter at the repository's root with
    ``arg`` as JSON in ``sys.argv[1]``; return the JSON of its last line of stdout.
    RuntimeError naming ``what``, with the end of its stderr, when it fails."""
    import json
    import subprocess

    p = subprocess.run([sys.executable, "-c", script, json.dumps(arg)],
                       cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout.splitlines()[-1])


def main(run, doc: str) -> None:
    """The command line every benchmark script shares: [--quick] [--out DIR], the same as
    ``solve.py reproduce TARGET`` (same default folders and refusals; headline on stdout,
    the files written on stderr)."""
    from toolkit.reproduce import ReproduceError, run_target, target_of

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", metavar="DIR",
                    help="folder (default results/<paper>/, with --quick results/quick/<paper>/)")
    a = ap.parse_args()
    target = target_of(sys.modules[run.__module__].__file__, run.__name__)
    if target is None:
        ap.error(f"{run.__name__} is no reproduce target")
    try:
        report = run_target(target, a.quick, None if a.out is None else Path(a.out))
    except ReproduceError as exc:
        ap.exit(2, f"error: {exc}\n")
    for p in report:
        print(f"wrote {p}", file=sys.stderr)
    print(report.headline)


def runs_solvers(df: pd.DataFrame) -> str:
    """Which solver versions produced a resumable report's raw runs (its ``versions``
    column; rows from before the lock have none)."""
    col = df["versions"] if "versions" in df else pd.Series([None] * len(df), dtype=object)
    counts = col.fillna("not recorded (runs made before the dependency lock)").value_counts()
    return "; ".join(f"{v} ({n} runs)" for v, n in counts.items())
