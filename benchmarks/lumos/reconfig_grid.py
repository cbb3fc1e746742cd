"""The lumos-reconfig quality set (issue 28 item 7): generated steps and their ITV-ILP optima.

Every step is what ``solve.py generate lumos-reconfig --pods P --k-leaf H --k-spine K
--kind KIND --churn c --seed s`` writes (the problem's own generator, so the claims hold on
instances nobody here chose): C = the topology after one step of ring churn (a ``churn``
fraction of every group's rings replaced) or one job event (``kind jobs``: one job
arrival or departure after a warm-up to 80 % port load; the generator has no churn level
for it), old = ITV-MDMCF's realization of the topology before.

Grid (``GRID``): every (P, H, K) with P in {8, 16, 32} Pods, H in {4, 8, 16} OCS groups
(K_leaf = H, tau = 1), K in {16, 32, 64} spine ports; ring churn 0.1, 0.3, 0.5 and job
churn, seeds 0-4 each: 27 fabrics x 20 steps = 540 steps; and, up to 16 Pods, ring churn
0.3 and job churn from an old configuration that MDMCF did not choose (``--old mcf``:
one step of ITV-MCF's trajectory, as in issue 17's sequences; workloads ``rings-mcf``,
``jobs-mcf``): 18 fabrics x 10 steps = 180 steps. ``--quick``: ``QUICK``.

ITV-ILP (:func:`ilp_optimum`): the reduced model of models.lumos.ilp (what method
``itv-ilp`` solves), per group on HiGHS, 1 thread, MIP gap 0, ``ILP_GROUP_S`` per group,
MDMCF's configuration as MIP start. A step is proven when every group is; [DECISION] the
first group that is not proven ends the step's ILP (the others would cost the same limit
each, mostly at 32 Pods): the step keeps a valid bracket, sum of the groups' ILP bounds and,
for the groups not solved, of the LP bound (heuristics.lumos.mdmcf.exact.lp_bound) below, and of
the incumbents and MDMCF's own rewiring above. Wall-clock limit, so which 32-Pod steps get
proven depends on the machine's load: the results are cached per step in
``results/lumos/lumos_runs/reconfig_quality/`` (gitignored) and a rerun resumes from them.

Run alone (fills the cache): python -m benchmarks.lumos.reconfig_grid [--quick]
"""
from __future__ import annotations

import hashlib
import itertools
import json
import time
from pathlib import Path

import numpy as np

from instances.lumos.instance import OcsConfig, ReconfigInstance

ILP_GROUP_S = 30.0
PODS, GROUPS, PORTS = (8, 16, 32), (4, 8, 16), (16, 32, 64)
CHURN = (0.1, 0.3, 0.5)           # ring churn levels
SEEDS = tuple(range(5))
# (workload, P, H, K, churn, seed): rings at each churn level, then jobs (churn 0: unused)
GRID = [(wl, P, H, K, c, s) for P, H, K in itertools.product(PODS, GROUPS, PORTS)
        for wl, c in [("rings", c) for c in CHURN] + [("jobs", 0.0)] for s in SEEDS]
# old = one step of ITV-MCF's trajectory (``--old mcf``), up to 16 Pods: ring churn 0.3, jobs
GRID += [(wl, P, H, K, c, s) for P, H, K in itertools.product(PODS[:2], GROUPS, PORTS)
         for wl, c in (("rings-mcf", 0.3), ("jobs-mcf", 0.0)) for s in SEEDS]
QUICK = [(wl, P, H, K, c, s) for P in (8, 16) for H, K in ((4, 32), (16, 16))
         for wl, c in (("rings", 0.3), ("jobs", 0.0)) for s in (0, 1)]


def steps(quick: bool) -> list[tuple]:
    """The quality set, cheapest fabrics first (P, then H K), so that an interrupted run
    has cached the small ones."""
    return sorted(QUICK if quick else GRID, key=lambda t: (t[1], t[2] * t[3]))


def instance(workload: str, P: int, H: int, K: int, churn: float, seed: int) -> ReconfigInstance:
    """The step as ``solve.py generate lumos-reconfig`` writes it (:func:`command`);
    workload ``<kind>-mcf``: ``--kind <kind> --old mcf``."""
    import toolkit.methods.lumos_reconfig  # noqa: F401  (registers the problem)
    from toolkit.registry import problem
    kind, _, old = workload.partition("-")
    return problem("lumos-reconfig").generator.run(pods=P, k_leaf=H, k_spine=K, kind=kind,
                                                   churn=churn, seed=seed, old=old or "previous")


def command(workload: str, P: int, H: int, K: int, churn: float, seed: int) -> str:
    """The command line that writes the step to a file."""
    kind, _, old = workload.partition("-")
    ch = f" --churn {churn:g}" if kind == "rings" else ""
    return (f"python solve.py generate lumos-reconfig --pods {P} --k-leaf {H} --k-spine {K} "
            f"--kind {kind}{ch}{f' --old {old}' if old else ''} --seed {seed} -o step.json")


def _key(inst: ReconfigInstance) -> str:
    h = hashlib.sha1(np.asarray(inst.C.shape).tobytes() + inst.C.tobytes()
                     + inst.old.perm.tobytes())
    return h.hexdigest()[:16]


def group_rewiring(inst: ReconfigInstance, conf: OcsConfig, h: int) -> int:
    """Eq. (7) of group h of ``conf`` against the old configuration."""
    return int(sum(np.abs(conf.matrix(h, k) - inst.old.matrix(h, k)).sum()
                   for k in range(inst.fabric.k_spine)))


def ilp_optimum(inst: ReconfigInstance, start: OcsConfig, cache: Path) -> dict:
    """ITV-ILP per group (module docstring), cached by instance: ``ilp_rewiring`` (the
    optimum when ``ilp_status`` is optimal, else an upper bound), ``ilp_bound`` (a lower
    bound), ``ilp_time_s``, ``ilp_groups`` (groups solved), ``ilp_status``."""
    path = cache / f"{_key(inst)}_{ILP_GROUP_S:g}s_gap0.json"
    if path.exists():
        return json.loads(path.read_text())
    from heuristics.lumos.mdmcf.exact import lp_bound
    from heuristics.lumos.mdmcf.reconfig import old_even
    from models.backend import solve
    from models.lumos.ilp import build_itv, itv_start
    from toolkit.io import write_text_atomic
    fab = inst.fabric
    obj = bnd = secs = 0.0
    solved, proven = 0, True
    for h in range(fab.H):
        if not proven:              # [DECISION] the step is unproven: bracket the rest
            obj += group_rewiring(inst, start, h)
            bnd += lp_bound(inst.C[h], old_even(inst, h), old_even(inst, h, 1))
            continue
        u = np.array([inst.old.matrix(h, k) for k in range(fab.k_spine)])
        model, hd = build_itv(inst.C[h], u)
        t0 = time.perf_counter()
        res = solve(model, backend="highs", time_limit=ILP_GROUP_S, threads=1, mip_gap=0.0,
                    start=itv_start(hd, [start.matrix(h, k) for k in range(fab.k_spine)]))
        secs += time.perf_counter() - t0
        model.dispose()
        solved += 1
        proven = res.status == "optimal"
        obj += res.objective if res.objective is not None else group_rewiring(inst, start, h)
        bnd += np.ceil(res.bound - 1e-6) if res.bound is not None else 0.0
    rec = {"ilp_rewiring": round(obj), "ilp_bound": round(bnd), "ilp_time_s": secs,
           "ilp_groups": solved, "ilp_status": "optimal" if proven else "feasible"}
    cache.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(rec))
    return rec


def fill_cache(quick: bool = False, out_dir: Path = Path("results/lumos"), first: int = 0,
               reverse: bool = False, workloads: tuple = ()) -> None:
    """Solve (or load) the ITV-ILP of every step from the ``first``-th on (``reverse``: from
    the last one back to it, so that a second process can fill the far end of the set
    while the study runs), of the ``workloads`` only if given; progress on stderr."""
    import sys

    from heuristics.lumos.mdmcf.reconfig import itv_configure
    cache = out_dir / "lumos_runs" / "reconfig_quality"
    t0 = time.perf_counter()
    order = list(enumerate(steps(quick)))[first:]
    for i, st in (order[::-1] if reverse else order):
        if workloads and st[0] not in workloads:
            continue
        inst = instance(*st)
        rec = ilp_optimum(inst, itv_configure(inst), cache)
        print(f"[{i + 1}] {st} {rec['ilp_status']} {rec['ilp_rewiring']} >= {rec['ilp_bound']} "
              f"({rec['ilp_time_s']:.1f} s; {time.perf_counter() - t0:.0f} s)", file=sys.stderr,
              flush=True)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out-dir", default="results/lumos")
    ap.add_argument("--first", type=int, default=0, help="start at this step (0-based)")
    ap.add_argument("--reverse", action="store_true", help="from the last step back to --first")
    ap.add_argument("--workloads", default="", help="comma-separated, e.g. rings-mcf,jobs-mcf")
    a = ap.parse_args()
    fill_cache(a.quick, Path(a.out_dir), a.first, a.reverse,
               tuple(w for w in a.workloads.split(",") if w))
