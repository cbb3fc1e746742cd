"""The lumos-reconfig-quality pipeline on a toy grid: the generator's steps, report, CSVs,
resume from the cached ITV-ILP optima, and the bracket of an unproven step."""
from __future__ import annotations

import io
import shlex

import numpy as np
import pandas as pd

import benchmarks.lumos.reconfig_grid as G
import benchmarks.lumos.reconfig_quality as Q
from heuristics.lumos.mdmcf.exact import lp_bound
from heuristics.lumos.mdmcf.reconfig import itv_configure, old_even
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.workloads import job_sequence
from models.backend import Result

TOY = [("rings", 5, 2, 4, 0.5, 1), ("jobs", 5, 2, 4, 0.0, 2), ("jobs-mcf", 5, 2, 4, 0.0, 3)]


def test_a_step_is_what_the_generator_command_writes(tmp_path, monkeypatch):
    import solve as cli
    from instances import load_instance
    monkeypatch.chdir(tmp_path)
    for st in TOY:
        args = shlex.split(G.command(*st))[2:]               # after "python solve.py"
        assert cli.main(args, out_stream=io.StringIO()) == 0
        got, want = load_instance(tmp_path / "step.json"), G.instance(*st)
        assert np.array_equal(got.C, want.C) and np.array_equal(got.old.perm, want.old.perm)
    # --old mcf: one step of ITV-MCF's trajectory before (the issue-17 sequences' old state)
    fab, mcf = Fabric(5, 2, 4, 1), G.instance("jobs-mcf", 5, 2, 4, 0.0, 2)
    seq = job_sequence(fab, 2, seed=2)
    first = itv_configure(ReconfigInstance(fab, seq[0], "cross"), aware=False)
    prev = itv_configure(ReconfigInstance(fab, seq[1], "cross", first), aware=False)
    assert np.array_equal(mcf.C, seq[2]) and np.array_equal(mcf.old.perm, prev.perm)


def test_quality_pipeline_on_a_toy_and_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(G, "GRID", TOY)
    monkeypatch.setattr(Q, "RESTARTS", (0,))
    monkeypatch.setattr(Q, "LNS", (20,))
    monkeypatch.setattr(Q, "EXACT_WORK", (5, 0))
    monkeypatch.setattr(Q, "LNS_SEEDS", (0, 1, 2))
    paths = Q.run(quick=False, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_reconfig_quality.csv")
    assert len(df) == 3 and (df.ilp_status == "optimal").all()
    for m in ("mdmcf", "mdmcf_lp", "mcf"):                        # the ILP proved optimality
        assert (df[f"{m}_rewiring"] >= df.ilp_rewiring).all() and (df[f"{m}_vs_ilp"] >= 1).all()
    assert (df.ilp_rewiring == df.ilp_bound).all()
    assert (df.ilp_rewiring >= df.lp_bound).all() and (df.lp_bound >= df.group_bound).all()
    tr = pd.read_csv(tmp_path / "lumos_reconfig_quality_variants.csv")
    # default, lp default, lp 5, lp 0, lp no lns, restarts 0, lns 20: x 3 workloads
    assert len(tr) == 3 * 7 and (tr.worst_vs_ilp >= 1).all() and (tr.time_vs_mcf_max > 0).all()
    sd = pd.read_csv(tmp_path / "lumos_reconfig_quality_seeds.csv")
    assert sorted(sd.lns_seed.unique()) == [0, 1, 2] and (sd.worst_vs_ilp >= 1).all()
    assert (sd.lost_vs_ilp >= 0).all()
    seed0 = sd[(sd.lns_seed == 0) & (sd.workload == "rings")].worst_vs_ilp.item()
    assert seed0 == tr[tr.variant.str.startswith("itv-mdmcf (default")
                       & (tr.workload == "rings")].worst_vs_ilp.item()    # seed 0 = default
    md = (tmp_path / "lumos_reconfig_quality.md").read_text()
    assert "reproduce lumos-reconfig-quality" in md and "## Worst cases" in md
    assert "over 3 proven steps" in md and "generate lumos-reconfig --pods 5" in md
    assert all(p.exists() for p in paths)
    import models.backend as backend                  # a rerun resumes: the cache answers

    def no_solve(*a, **k):
        raise AssertionError("the ILP was solved again")
    monkeypatch.setattr(backend, "solve", no_solve)
    Q.run(quick=False, out_dir=tmp_path)
    again = pd.read_csv(tmp_path / "lumos_reconfig_quality.csv")
    assert again.ilp_rewiring.tolist() == df.ilp_rewiring.tolist()
    assert again.mdmcf_rewiring.tolist() == df.mdmcf_rewiring.tolist()


def test_an_unproven_group_ends_the_steps_ilp_with_a_valid_bracket(tmp_path, monkeypatch):
    """The first group not proven stops the step: its ILP bound and incumbent, the other
    groups' LP bound and MDMCF's own rewiring."""
    import models.backend as backend
    inst = G.instance("rings", 6, 4, 4, 0.5, 0)
    start = itv_configure(inst)
    mine = [G.group_rewiring(inst, start, h) for h in range(4)]
    monkeypatch.setattr(backend, "solve", lambda *a, **k: Result("feasible", objective=mine[0],
                                                                  bound=1.2))
    rec = G.ilp_optimum(inst, start, tmp_path)
    assert rec["ilp_status"] == "feasible" and rec["ilp_groups"] == 1
    assert rec["ilp_rewiring"] == sum(mine)
    assert rec["ilp_bound"] == 2 + sum(lp_bound(inst.C[h], old_even(inst, h), old_even(inst, h, 1))
                                       for h in (1, 2, 3))
