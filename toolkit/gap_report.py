"""The report of a gap study: records in, a gap table (markdown, CSV) and a plot out.

    write_report(records, folder)  ->  gap.md, gap.csv, gap-summary.csv, gap.png

The records are those of ``run_task``/``run_batch`` (any problems, any methods); they are
ranked per instance with :func:`toolkit.rank.rank_records`. The table has one row per
run: objective, the instance's best objective and best bound (the tightest bound any
method proved for it), ``vs_best_bound`` (the relative gap of the objective to that bound)
and ``vs_best``, ``rank``. The summary has one row per method: instances of its problem in
the study, solved (verified solutions), optimal (solver status optimal, or objective equal
to the best bound), mean and worst ``vs_best_bound`` over its solved instances, and wins
(instances where it is best, ties included).

Performance profile (Dolan and More 2002): for method m on instance i the ratio is
r = objective / best for a minimization, best / objective for a maximization (best: the
best objective of the study's methods on i), 1 when objective = best; where objectives
are not positive, so that a factor means nothing, r = 1 + |objective - best| / |best|
(inf when best = 0).
rho_m(tau) is the fraction of the instances of m's problem with r <= tau. A failure (no
record because the method declined, an error, no verified solution) counts as r = inf:
it lowers rho at every tau. Relaxations (not solutions of the problem) are left out.
"""
from __future__ import annotations

import io
import math
from pathlib import Path

from toolkit.rank import rank_records, relaxation

TABLE_COLS = ("instance", "name", "problem", "method", "status", "verified", "objective",
              "best_objective", "best_bound", "vs_best_bound", "vs_best", "rank")
SUMMARY_COLS = ("problem", "method", "instances", "solved", "optimal", "mean_gap",
                "worst_gap", "wins")
FILES = ("gap.md", "gap.csv", "gap-summary.csv", "gap.png")


def instance_key(rec: dict) -> str:
    """The instance a record is of: its resolved path."""
    return rec.get("path") or str(Path(str(rec["instance"])).resolve())


def rank_by_instance(recs: list[dict]) -> list[dict]:
    """Rank the records of each instance among themselves (in place; returns ``recs``)."""
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(instance_key(r), []).append(r)
    for group in groups.values():
        rank_records(group)
    return recs


def gap_rows(recs: list[dict]) -> list[dict]:
    """One row of TABLE_COLS per (ranked) record."""
    return [{c: r.get(c) for c in TABLE_COLS} for r in recs]


def _instances_by_problem(recs: list[dict]) -> dict[str, set]:
    out: dict[str, set] = {}
    for r in recs:
        out.setdefault(r["problem"], set()).add(instance_key(r))
    return out


def _methods(recs: list[dict]) -> list[tuple[str, str]]:
    """(problem, method) pairs in order of first appearance."""
    return list(dict.fromkeys((r["problem"], r["method"]) for r in recs))


def _optimal(rec: dict) -> bool:
    return bool(rec.get("verified")) and (rec.get("status") == "optimal"
                                          or rec.get("vs_best_bound") == 0)


def method_summary(recs: list[dict]) -> list[dict]:
    """One row of SUMMARY_COLS per (problem, method) of the ranked records."""
    n_inst = _instances_by_problem(recs)
    rows = []
    for prob, meth in _methods(recs):
        mine = [r for r in recs if (r["problem"], r["method"]) == (prob, meth)]
        solved = [r for r in mine if r.get("verified") and r.get("objective") is not None]
        gaps = [r["vs_best_bound"] for r in solved if r.get("vs_best_bound") is not None]
        rows.append(dict(problem=prob, method=meth, instances=len(n_inst[prob]),
                         solved=len(solved), optimal=sum(map(_optimal, mine)),
                         mean_gap=sum(gaps) / len(gaps) if gaps else None,
                         worst_gap=max(gaps) if gaps else None,
                         wins=sum(1 for r in mine if r.get("rank") == 1)))
    return rows


def ratio(obj: float, best: float, sense: str) -> float:
    """The performance ratio (>= 1) of ``obj`` to the best objective ``best``."""
    if obj == best:
        return 1.0
    if sense == "min" and best > 0 and obj > 0:
        return obj / best
    if sense == "max" and best > 0 and obj > 0:
        return best / obj
    return 1.0 + abs(obj - best) / abs(best) if best else math.inf


def profile_ratios(recs: list[dict]) -> dict[tuple[str, str], list[float]]:
    """Per (problem, method) that is not a relaxation: its ratio on every instance of its
    problem in the study (inf where it has no ranked solution), in sorted order."""
    from toolkit.registry import problem

    n_inst = _instances_by_problem(recs)
    out = {}
    for prob, meth in _methods(recs):
        if any(relaxation(r) for r in recs if (r["problem"], r["method"]) == (prob, meth)):
            continue
        sense = problem(prob).sense
        got = {instance_key(r): ratio(r["objective"], r["best_objective"], sense)
               for r in recs if (r["problem"], r["method"]) == (prob, meth)
               and r.get("rank") is not None}
        out[(prob, meth)] = sorted(got.get(i, math.inf) for i in n_inst[prob])
    return out


def performance_profile(ratios: list[float], taus) -> list[float]:
    """rho(tau) for each tau: the fraction of ``ratios`` that are <= tau."""
    n = len(ratios)
    return [sum(1 for r in ratios if r <= t) / n if n else 0.0 for t in taus]


def _num(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.6g}"
    return str(v)


def _md_table(rows: list[dict], cols) -> list[str]:
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(_num(r.get(c)) for c in cols) + " |" for r in rows]
    return lines


def _short(rows: list[dict]) -> list[dict]:
    """Rows with ``instance`` as the file name when no two paths share one."""
    from toolkit.io import short_names

    names = short_names(r["instance"] for r in rows)
    return [{**r, "instance": names[str(r["instance"])]} for r in rows]


def markdown(rows: list[dict], summary: list[dict]) -> str:
    return "\n".join([
        "# Gap study", "",
        *_md_table(_short(rows), TABLE_COLS), "",
        "vs_best_bound: |objective - best_bound| / |objective|, best_bound the tightest bound "
        "any method proved for the instance; vs_best: relative distance to the best "
        "objective found; rank 1 is the best (ties share it).", "",
        "## Per method", "",
        *_md_table(summary, SUMMARY_COLS), "",
        "solved: verified solutions; optimal: solver status optimal or objective = best "
        "bound; mean/worst gap: vs_best_bound over the solved instances; wins: instances "
        "where the method is best (ties included).", ""])


def write_table_csv(rows: list[dict], cols, path: Path) -> None:
    from toolkit.batch import write_csv
    from toolkit.io import write_text_atomic

    buf = io.StringIO()
    write_csv(rows, buf, cols)
    write_text_atomic(path, buf.getvalue())


def _label(key: tuple[str, str], several: bool) -> str:
    return f"{key[0]}: {key[1]}" if several else key[1]


def plot(recs: list[dict], path: Path) -> None:
    """(a) each run's gap to the instance's best bound; (b) the performance profiles."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    pairs = _methods(recs)
    several = len({p for p, _ in pairs}) > 1
    insts = list(dict.fromkeys(instance_key(r) for r in recs))
    names = {instance_key(r): Path(str(r["instance"])).name for r in recs}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    markers = "osD^v<>pPX*h"
    for j, key in enumerate(pairs):
        dx = (j - (len(pairs) - 1) / 2) * 0.6 / len(pairs)    # side by side, not on top
        pts = [(insts.index(instance_key(r)) + dx, 100 * r["vs_best_bound"]) for r in recs
               if (r["problem"], r["method"]) == key and r.get("vs_best_bound") is not None]
        if pts:
            x, y = zip(*pts)
            ax1.scatter(x, y, marker=markers[j % len(markers)], label=_label(key, several))
    ax1.set_xticks(range(len(insts)), [names[i] for i in insts], rotation=30, ha="right",
                   fontsize=7)
    ax1.set_ylabel("gap to best bound (%)")
    ax1.set_title("(a) objective vs best bound (0 = proven optimal)")
    ratios = profile_ratios(recs)
    finite = [r for rs in ratios.values() for r in rs if math.isfinite(r)]
    top = max(2.0, 1.05 * max(finite, default=1.0))
    taus = sorted({1.0, top, *[r for r in finite if r <= top]})
    for key, rs in ratios.items():
        ax2.step(taus, performance_profile(rs, taus), where="post", label=_label(key, several))
    ax2.set_xscale("log")
    ax2.set_xlim(1.0, top)
    for axis in (ax2.xaxis.set_major_formatter, ax2.xaxis.set_minor_formatter):
        axis(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_xlabel("tau (objective within factor tau of the best)")
    ax2.set_ylabel("fraction of instances")
    ax2.set_title("(b) performance profile (a failure is never within tau)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(recs: list[dict], folder: str | Path) -> list[Path]:
    """Rank ``recs`` per instance and write FILES into ``folder``; return their paths."""
    from toolkit.io import write_text_atomic

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rank_by_instance(recs)
    rows, summary = gap_rows(recs), method_summary(recs)
    md, tab, summ, png = (folder / f for f in FILES)
    write_text_atomic(md, markdown(rows, summary))
    write_table_csv(rows, TABLE_COLS, tab)
    write_table_csv(summary, SUMMARY_COLS, summ)
    plot(recs, png)
    return [md, tab, summ, png]
