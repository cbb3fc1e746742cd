"""Would exact re-splits of three or four OCSes close MDMCF's gap? (issue 17 item 2; a study
for whoever plans the work, not a method).

On the worst proven ring step of issue 17's quality set, 100 times the LNS's default work
still misses one group's optimum by 3 old circuits, while an exact re-split of one triple
of OCSes recovers 2 of them at once. This study measures that neighbourhood to its end:
for each ring-churn step of issue 17's sequences (benchmarks.lumos.reconfig_quality.SETS,
old = ITV-MCF's trajectory; not the wider generated set of results/lumos/lumos_reconfig_quality.md;
the ITV-ILP optima from the lumos-reconfig-quality cache, solved there if missing),
per group, itv-mdmcf's split with ``lns`` work units per OCS port (VARIANTS) and each LNS
seed of SEEDS, then exact re-splits of triples of even OCSes (heuristics.lumos.mdmcf.triple:
every triple whose bound leaves room, searched exactly up to NODES placements; a triple
re-split when it keeps one more old circuit) until no triple improves: a local optimum
for the three-OCS neighbourhood; then the same with quadruples (:func:`quad_local_opt`, on
groups of at most QUAD_OCS even OCSes). Reported per variant and seed: worst and mean
ratio to the proven optimum and steps above 1.03x before and after, the searches (and how
many hit NODES, so were not exact), and their time next to MDMCF's and ITV-MCF's.

Run: python solve.py reproduce lumos-resplit-study [--quick]
Writes results/lumos/lumos_resplit_study.md and .csv.
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, machine, main, md_table, reproduce_cmd, write_report
from toolkit.progress import track

VARIANTS = (20, 30)             # the LNS's work per OCS port before the re-splits (default 30)
SEEDS = tuple(range(6))         # LNS seeds (option lns_seed)
NODES = 1_000_000               # placements per search (exact unless reached)
QUAD_OCS = 16                   # quadruples only up to this many even OCSes (32: 35,960 per pass)
ALL = 1 << 30                   # triples per pass: every one with room


def quad_local_opt(X: np.ndarray, U: np.ndarray, nodes: int = NODES):
    """Exact re-splits of four even OCSes at a time (heuristics.lumos.mdmcf.triple.search with
    k = 4), the subsets with the largest bound gap first, until none improves: X (M, P, P)
    the split, U the old even OCSes. Returns (split, searches, searches that hit ``nodes``)."""
    from heuristics.lumos.mdmcf.triple import matrices_of, rows, search
    X = np.array(X)
    n = X.shape[1]
    old = rows(U)
    R = np.triu(U + U.transpose(0, 2, 1), 1)           # old circuits per OCS and Pod pair
    searches = at_limit = 0
    improved = True
    while improved:
        improved = False
        cand = []
        for S in map(list, itertools.combinations(range(len(X)), 4)):
            C = np.triu((X[S] + X[S].transpose(0, 2, 1)).sum(axis=0), 1)
            kept = int((X[S] * U[S]).sum())
            gap = int(np.minimum(C, R[S].sum(axis=0)).sum()) - kept
            if gap > 0:
                cand.append((-gap, S, C, kept))
        for _, S, C, kept in sorted(cand, key=lambda c: c[0]):
            a, b = np.nonzero(C)
            res = np.empty((4, n), np.int64)
            d = search(a.astype(np.int64), b.astype(np.int64), C[a, b].astype(np.int64),
                       old[S], n, kept + 1, nodes, res)
            searches += 1
            at_limit += -d >= nodes
            if d > 0:
                X[S] = matrices_of(res)
                improved = True
                break
    return X, searches, at_limit


def _steps(quick: bool) -> list:
    import benchmarks.lumos.reconfig_quality as Q
    sets = [s for s in (Q.SETS[::2] if quick else Q.SETS) if s[0] == "rings"]
    return [(P, H, K, seed, step, inst) for wl, P, H, K, churn, n, seeds in sets
            for seed in seeds for step, inst in Q._instances(wl, P, H, K, churn, n, seed)]


def study(quick: bool, out_dir: Path) -> pd.DataFrame:
    """One row per (variant, LNS seed, ring step)."""
    import benchmarks.lumos.reconfig_quality as Q
    from heuristics.lumos.mdmcf.eject import preload
    from heuristics.lumos.mdmcf.group_split import split_group
    from heuristics.lumos.mdmcf.reconfig import cross_config, itv_configure, old_even
    from heuristics.lumos.mdmcf.triple import resplit_triples
    from instances.lumos.check import check_config
    preload(lns=True)
    cache = out_dir / "lumos_runs" / "reconfig_quality"
    steps = _steps(quick)
    ilp = [Q.ilp_optimum(inst, itv_configure(inst), cache) for *_, inst in steps]
    runs = [(lns, seed) for lns in (VARIANTS[-1:] if quick else VARIANTS)
            for seed in (SEEDS[:2] if quick else SEEDS)]
    rows = []
    for lns, lseed in track(runs, unit="run"):
        for (P, H, K, seed, step, inst), opt in zip(steps, ilp):
            rec = {"lns": lns, "lns_seed": lseed, "pods": P, "groups": H, "k_spine": K,
                   "seed": seed, "step": step, "ilp_status": opt["ilp_status"],
                   "ilp_rewiring": opt["ilp_rewiring"], "mdmcf_rewiring": 0,
                   "resplit_rewiring": 0, "quad_rewiring": 0, "searches": 0,
                   "searches_at_limit": 0, "quad_searches": 0, "mdmcf_s": 0.0,
                   "resplit_s": 0.0, "quad_s": 0.0, "mcf_s": 0.0}
            splits = {"mdmcf": [], "resplit": [], "quad": []}
            for h in range(H):
                U, V = old_even(inst, h), old_even(inst, h, 1)
                X, t = Q._timed(split_group, inst.C[h], K, U, old_odd=V, lns=lns, lns_seed=lseed)
                (Y, st), tr = Q._timed(resplit_triples, X, U, ALL, NODES)
                _, tm = Q._timed(split_group, inst.C[h], K, U, aware=False)
                if K // 2 <= QUAD_OCS:
                    (Z, nq, lq), tq = Q._timed(quad_local_opt, np.array(Y), U)
                else:
                    Z, nq, lq, tq = Y, 0, 0, 0.0
                for name, parts in zip(splits, (X, Y, Z)):
                    splits[name].append(parts)
                rec["searches"] += int(st[1])
                rec["searches_at_limit"] += int(st[2]) + lq
                rec["quad_searches"] += nq
                rec["quad_s"] += tq
                rec["mdmcf_s"] += t
                rec["resplit_s"] += tr
                rec["mcf_s"] += tm
            for name, parts in splits.items():          # the independent checker
                bad, metrics = check_config(inst, cross_config(inst, parts))
                if bad:
                    raise AssertionError(f"{name}: checker rejected: {bad[:2]}")
                rec[f"{name}_rewiring"] = metrics["rewiring"]
            rows.append(rec)
    df = pd.DataFrame(rows)
    Q.vs_ilp(df, ("mdmcf", "resplit", "quad"))
    return df


def _above(ratios: pd.Series) -> int:
    """Steps above the issue's 1.03x."""
    return int((ratios > 1.03 + 1e-9).sum())


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    opt = df[df.ilp_status == "optimal"]
    by = opt.groupby(["lns", "lns_seed"]).agg(
        steps=("step", "size"), worst_mdmcf_vs_ilp=("mdmcf_vs_ilp", "max"),
        mdmcf_above_103=("mdmcf_vs_ilp", _above), worst_resplit_vs_ilp=("resplit_vs_ilp", "max"),
        mean_resplit_vs_ilp=("resplit_vs_ilp", "mean"), resplit_above_103=("resplit_vs_ilp", _above),
        worst_quad_vs_ilp=("quad_vs_ilp", "max"), quad_above_103=("quad_vs_ilp", _above),
        quad_searches=("quad_searches", "sum"), quad_s=("quad_s", "sum"),
        searches=("searches", "sum"), searches_at_limit=("searches_at_limit", "sum"),
        mdmcf_s=("mdmcf_s", "sum"), resplit_s=("resplit_s", "sum"),
        mcf_s=("mcf_s", "sum")).reset_index()
    by["resplit_vs_mcf_time"] = by.resplit_s / by.mcf_s
    by["quad_vs_mcf_time"] = by.quad_s / by.mcf_s
    by["mdmcf_vs_mcf_time"] = by.mdmcf_s / by.mcf_s
    return by


def run(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    load0 = os.getloadavg()[0]
    df = study(quick, out_dir)
    by = _summary(df)
    cmd = reproduce_cmd("lumos-resplit-study", quick, out_dir)
    worst = by.groupby("lns").agg(
        before=("worst_mdmcf_vs_ilp", "max"), after=("worst_resplit_vs_ilp", "max"),
        quad=("worst_quad_vs_ilp", "max"),
        seeds_above=("resplit_above_103", lambda s: int((s > 0).sum())),
        quad_seeds_above=("quad_above_103", lambda s: int((s > 0).sum())),
        seeds=("lns_seed", "size"))
    verdict = "; ".join(
        f"lns {lns:g}: worst {r.before:.4f}x, after triples {r.after:.4f}x "
        f"({int(r.seeds_above)} of {int(r.seeds)} seeds with a step above 1.03x), after "
        f"quadruples {r.quad:.4f}x ({int(r.quad_seeds_above)} of {int(r.seeds)})"
        for lns, r in worst.iterrows())
    verdict += (
        f". The triple searches took {by.resplit_vs_mcf_time.min():.1f}-"
        f"{by.resplit_vs_mcf_time.max():.1f}x ITV-MCF's time and the quadruple searches "
        f"{by.quad_vs_mcf_time.min():.0f}-{by.quad_vs_mcf_time.max():.0f}x, on top of "
        f"MDMCF's {by.mdmcf_vs_mcf_time.min():.1f}-{by.mdmcf_vs_mcf_time.max():.1f}x")
    lines = [
        "# MDMCF plus exact re-splits of three and four OCSes (issue 17 item 2: a study)", "",
        f"Regenerate: `{cmd}` (the ITV-ILP optima come from the lumos-reconfig-quality "
        f"cache, {(out_dir / 'lumos_runs' / 'reconfig_quality').as_posix()}/, solved there if "
        "missing). Machine: "
        f"{machine()}; load average {load0:.1f} at the start.", "",
        "Per group: itv-mdmcf with `lns` work units per OCS port (30 is the default) and "
        "LNS seed `lns_seed`, then exact re-splits of triples of even OCSes "
        "(heuristics.lumos.mdmcf.triple, a compiled exact-cover search checked against the "
        "sub-group's ITV-ILP on HiGHS) until no triple improves (`resplit`), then of "
        "quadruples until none improves (`quad`; groups of at most "
        f"{QUAD_OCS} even OCSes, the K = 64 groups keep their triple result): local optima of "
        f"those neighbourhoods (a search is exact unless it reaches {NODES:,} placements: "
        "`searches_at_limit`). Ring-churn steps of issue 17's sequences "
        "(benchmarks.lumos.reconfig_quality.SETS; "
        f"{df.groupby(['lns', 'lns_seed']).size().max()} steps, those the ITV-ILP proved; "
        "job churn is optimal there already). Times: one run each, summed over the steps' "
        "groups (`resplit_s`, `quad_s`: the searches; `mcf_s`: ITV-MCF on the same groups).",
        "", f"Verdict: {verdict}.", "",
        md_table(by, ".4g"), "",
        f"Load average at the end: {os.getloadavg()[0]:.1f}.", "",
        "## Per step", "", md_table(df, ".4g"), ""]
    head = worst.reset_index().rename(columns={
        "before": "worst_mdmcf_vs_ilp", "after": "worst_after_triples",
        "quad": "worst_after_quadruples", "seeds_above": "seeds_above_1.03_after_triples",
        "quad_seeds_above": "seeds_above_1.03_after_quadruples"})
    return write_report(out_dir, "lumos_resplit_study", lines, {"lumos_resplit_study.csv": df},
                        headline("MDMCF plus exact re-splits vs the proven ITV-ILP optimum, "
                                 "worst ring step over the LNS seeds (a study: no paper value)",
                                 head))


if __name__ == "__main__":
    main(run, __doc__)
