"""a2a figure pipelines on toy settings (the real runs are the reproduce targets)."""
from __future__ import annotations

import numpy as np

import benchmarks.a2a.figs as figs
from heuristics.a2a.bounds import lower_bound_curve
from instances.a2a.workloads import generate


def test_fig11_pipeline_on_toy_settings():
    df = figs._grid([(6, 1, "uniform", 8.0), (6, 2, "random", 8.0)], [0], sim=True)
    summ = figs._summary(df, ["n", "k", "workload"])
    assert len(summ) == 2 and set(df.method) >= {"ours", "fast", "topoopt"}
    assert "mixnet" not in set(df[df.workload == "uniform"].method)       # as in the paper
    for (n, k, wl), g in df.groupby(["n", "k", "workload"]):
        ours = g[g.method == "ours"].iloc[0]
        inst = generate(wl, n=n, k=k, R=ours.R, size_mb=8.0, seed=0)
        assert ours.cost >= lower_bound_curve(inst)[int(ours.d) - 1] - 1e-12
        best = g[g.method != "ours"].cost.min()
        red = summ[(summ.n == n) & (summ.k == k) & (summ.workload == wl)].reduction.iloc[0]
        assert np.isclose(red, 1 - ours.cost / best)
        assert (g.sim > 0).all()


def test_R_star_maximizes_the_relative_gain():
    inst = generate("uniform", n=8, k=1, R=0.0, size_mb=4.0)
    ev = figs.evaluate(inst)
    R = figs.best_R(ev)
    gain = lambda R: 1 - figs.at_R(ev, R)[0] / min(d * R + t for d, t, _ in ev["base"].values())
    assert all(gain(R) >= gain(r) - 1e-12 for r in figs.R_GRID)
