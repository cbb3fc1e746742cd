"""The report of a gap study: records in, a gap table (markdown, CSV) and a plot out.

    toolkit.gap_write.write_report(records, folder)  ->  gap.md, gap.csv, gap-summary.csv, gap.png

The records are those of ``run_task``/``run_batch`` (any problems, any methods); they are
ranked per instance with :func:`toolkit.rank.rank_records`. A method row is a method, or a
variant of one (``milp:slots=2``, :mod:`toolkit.variants`): the tables' ``method`` column
and the plot show its label. The table has one row per run: its objective, its own bound
and ``bound_scope`` (instance, or model: a bound of the method's restricted model only),
the instance's best objective and best bound (the tightest bound valid for the instance,
:mod:`toolkit.rank`), ``vs_best_bound`` (the relative gap of the objective to that bound)
and ``vs_best``, ``rank``. The summary has one row per method row: instances of its
problem in the study, solved (verified solutions), optimal (proven for the instance:
:func:`toolkit.rank.proven_optimal`, or the objective ties the instance's best bound; a
model proven optimal only for its restricted model is not), mean and worst
``vs_best_bound`` over its solved instances, and wins (instances where it is best, ties
within :data:`models.gap.TIE_RTOL` included).

Performance profile (Dolan and More 2002): for method m on instance i the ratio is
r = objective / best for a minimization, best / objective for a maximization (best: the
best objective of the study's methods on i), 1 when objective ties best; where objectives
are not positive, so that a factor means nothing, r = 1 + |objective - best| / |best|
(inf when best = 0).
rho_m(tau) is the fraction of the instances of m's problem with r <= tau. A failure (no
record because the method declined, an error, no verified solution) counts as r = inf:
it lowers rho at every tau. Relaxations (not solutions of the problem) are left out.
"""
from __future__ import annotations

import math
from pathlib import Path

from models.gap import MIP_RTOL, TIE_RTOL, tied
from toolkit.rank import bound_scope, proven_optimal, rank_records, rankable, relaxation
from toolkit.variants import label

TABLE_COLS = ("instance", "name", "problem", "method", "status", "verified", "objective",
              "bound", "bound_scope", "best_objective", "best_bound", "vs_best_bound",
              "vs_best", "rank")
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
    """One row of TABLE_COLS per (ranked) record; ``method`` is its method row's label."""
    return [{**{c: r.get(c) for c in TABLE_COLS}, "method": label(r),
             "bound_scope": bound_scope(r)} for r in recs]


def _instances_by_problem(recs: list[dict]) -> dict[str, set]:
    out: dict[str, set] = {}
    for r in recs:
        out.setdefault(r["problem"], set()).add(instance_key(r))
    return out


def key_of(rec: dict) -> tuple[str, str]:
    """A record's (problem, method row label)."""
    return rec["problem"], label(rec)


def method_keys(recs: list[dict]) -> list[tuple[str, str]]:
    """(problem, method row) pairs, problem by problem, in order of first appearance."""
    keys = list(dict.fromkeys(map(key_of, recs)))
    probs = list(dict.fromkeys(p for p, _ in keys))
    return sorted(keys, key=lambda k: probs.index(k[0]))


def _optimal(rec: dict) -> bool:
    """Optimal for the instance: proven so, or the objective ties the instance's best bound."""
    return rankable(rec) and (proven_optimal(rec) or rec.get("vs_best_bound") == 0)


def method_summary(recs: list[dict]) -> list[dict]:
    """One row of SUMMARY_COLS per (problem, method row) of the ranked records."""
    n_inst = _instances_by_problem(recs)
    rows = []
    for prob, meth in method_keys(recs):
        mine = [r for r in recs if key_of(r) == (prob, meth)]
        solved = [r for r in mine if r.get("verified") and r.get("objective") is not None]
        gaps = [r["vs_best_bound"] for r in solved if r.get("vs_best_bound") is not None]
        rows.append(dict(problem=prob, method=meth, instances=len(n_inst[prob]),
                         solved=len(solved), optimal=sum(map(_optimal, mine)),
                         mean_gap=sum(gaps) / len(gaps) if gaps else None,
                         worst_gap=max(gaps) if gaps else None,
                         wins=sum(1 for r in mine if r.get("rank") == 1)))
    return rows


def ratio(obj: float, best: float, sense: str) -> float:
    """The performance ratio (>= 1) of ``obj`` to the best objective ``best`` (1 for a tie)."""
    if tied(obj, best):
        return 1.0
    if sense == "min" and best > 0 and obj > 0:
        return obj / best
    if sense == "max" and best > 0 and obj > 0:
        return best / obj
    return 1.0 + abs(obj - best) / abs(best) if best else math.inf


def profile_ratios(recs: list[dict]) -> dict[tuple[str, str], list[float]]:
    """Per (problem, method row) that is not a relaxation: its ratio on every instance of its
    problem in the study (inf where it has no ranked solution), in sorted order."""
    from toolkit.registry import problem

    n_inst = _instances_by_problem(recs)
    out = {}
    for key in method_keys(recs):
        prob = key[0]
        if any(relaxation(r) for r in recs if key_of(r) == key):
            continue
        sense = problem(prob).sense
        got = {instance_key(r): ratio(r["objective"], r["best_objective"], sense)
               for r in recs if key_of(r) == key and r.get("rank") is not None}
        out[key] = sorted(got.get(i, math.inf) for i in n_inst[prob])
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
        "bound: the run's own bound; bound_scope: instance (it bounds the instance's optimum) "
        "or model (only the method's restricted model, e.g. spectra milp's T slots). "
        "vs_best_bound: |objective - best_bound| / |objective|, best_bound the tightest bound "
        "valid for the instance (any method's instance-scope bound, or a solver-proven "
        "optimum that ties the best objective); vs_best: relative distance to the best "
        f"objective found; rank 1 is the best. Objectives within {TIE_RTOL:g} relative tie: they "
        "share a rank, and vs_best is 0 for a tie with the best.", "",
        "## Per method", "",
        *_md_table(summary, SUMMARY_COLS), "",
        "solved: verified solutions; optimal: proven optimal for the instance (status "
        f"optimal with an instance-scope bound within the solver's {MIP_RTOL:g} gap) or objective "
        "tied with the instance's best bound (optimal only for a restricted model does not "
        "count); mean/worst gap: vs_best_bound over the solved instances; wins: instances "
        "where the method is best (ties included).", ""])

