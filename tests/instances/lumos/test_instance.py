"""LumosCore fabric, wirings, files, checker, Table 1 and generators."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instances
from instances.errors import InstanceError
from instances.lumos.fabric import Fabric, make_wiring
from instances.lumos.instance import OcsConfig, ReconfigInstance, validate_topology
from instances.lumos.logical import LogicalInstance, validate_requirement
from instances.lumos.check import check_config
from instances.lumos.scale import table1
from instances.lumos.workloads import job_sequence, random_requirement, random_topology, \
    topology_sequence

TRIANGLE = np.array([[[0, 1, 1], [1, 0, 1], [1, 1, 0]]])


def tri_fabric():
    return Fabric(3, 2, 2, tau=2)          # one group (H = 1), K_spine = 2


def test_fabric_sizes_follow_spec_1_1():
    f = Fabric(128, 16, 16, 1)
    assert (f.H, f.leaves_per_pod, f.n_leaves, f.gpus) == (16, 16, 2048, 32768)
    f2 = Fabric(32, 16, 16, 2)
    assert (f2.H, f2.gpus) == (8, 4096)     # [002] Fig. 10: 4096 GPUs in 32 Pods
    with pytest.raises(InstanceError, match="even"):
        Fabric(4, 4, 3)
    with pytest.raises(InstanceError, match="k_ocs"):
        Fabric(600, 4, 4)
    with pytest.raises(InstanceError, match="dual"):
        make_wiring(Fabric(300, 4, 4), "dual")


def test_cross_wiring_port_map_is_the_papers():
    """[002] 3.1: ingress of port k+1 and egress of port k -> OCS k; ingress of port k and
    egress of port k+1 -> OCS k+1 (k even)."""
    w = make_wiring(Fabric(4, 4, 4), "cross")
    for i in range(4):
        for m in range(2):
            assert (w.tx_ocs[i, 2 * m], w.rx_ocs[i, 2 * m + 1]) == (2 * m, 2 * m)
            assert (w.tx_ocs[i, 2 * m + 1], w.rx_ocs[i, 2 * m]) == (2 * m + 1, 2 * m + 1)
            assert w.tx_port[i, 2 * m] == w.rx_port[i, 2 * m] == i
    for name in ("uniform", "cross", "dual"):       # every OCS port has at most one fibre
        w = make_wiring(Fabric(4, 4, 4), name)
        assert (w.in_owner >= 0).sum() == (w.out_owner >= 0).sum() == 16


def test_cross_mirror_pair_is_one_bidirectional_link():
    """Circuit i -> j in O_2m plus j -> i in O_2m+1 = a link between port 2m of spine i
    and port 2m+1 of spine j (spec 1.3, verified by hand)."""
    fab = tri_fabric()
    C = np.zeros((1, 3, 3), dtype=int)
    C[0, 0, 2] = C[0, 2, 0] = 1
    inst = ReconfigInstance(fab, C, "cross")
    cfg = OcsConfig.empty(fab, inst.wire)
    cfg.perm[0, 0, 0] = 2
    cfg.perm[0, 1, 2] = 0
    bad, m = check_config(inst, cfg)
    assert not bad and m["realized"] and m["links"] == 1
    cfg.perm[0, 1, 2] = -1                        # drop the mirror: unidirectional
    bad, _ = check_config(inst, cfg)
    assert any("L2" in b for b in bad)


def test_checker_rejects_broken_configurations():
    fab = Fabric(4, 2, 2, tau=2)
    C = np.zeros((1, 4, 4), dtype=int)
    C[0, 0, 1] = C[0, 1, 0] = 1
    for wiring in ("uniform", "cross"):
        inst = ReconfigInstance(fab, C, wiring)
        good = OcsConfig.empty(fab, inst.wire)
        if wiring == "uniform":
            good.perm[0, 0, 0], good.perm[0, 0, 1] = 1, 0
        else:
            good.perm[0, 0, 0], good.perm[0, 1, 1] = 1, 0
        assert check_config(inst, good)[0] == []
        dup = OcsConfig(good.perm.copy())
        dup.perm[0, 0, 2] = dup.perm[0, 0, 0]     # two inputs to one output
        assert any("partial permutation" in b for b in check_config(inst, dup)[0])
        selfc = OcsConfig(good.perm.copy())
        selfc.perm[0, 0, 3] = 3
        assert any("itself" in b for b in check_config(inst, selfc)[0])
        empty = OcsConfig.empty(fab, inst.wire)
        bad, m = check_config(inst, empty)
        assert m["shortfall"] == 1 and not m["realized"]
        assert bool(bad) == (wiring == "cross")   # a shortfall is a failure only under cross


def test_excess_links_are_rejected():
    fab = Fabric(4, 2, 2, tau=2)
    inst = ReconfigInstance(fab, np.zeros((1, 4, 4), dtype=int), "uniform")
    cfg = OcsConfig.empty(fab, inst.wire)
    cfg.perm[0, 0, 0], cfg.perm[0, 0, 1] = 1, 0
    assert any("beyond C" in b for b in check_config(inst, cfg)[0])


def test_rewiring_counts_eq7_against_the_old_configuration():
    fab = Fabric(4, 2, 2, tau=2)
    C = np.zeros((1, 4, 4), dtype=int)
    C[0, 0, 1] = C[0, 1, 0] = 1
    old = OcsConfig(np.full((1, 2, 4), -1, dtype=np.int32))
    old.perm[0, 0, 2], old.perm[0, 1, 3] = 3, 2     # link 2-3, no longer wanted
    inst = ReconfigInstance(fab, C, "cross", old)
    new = OcsConfig.empty(fab, inst.wire)
    new.perm[0, 0, 0], new.perm[0, 1, 1] = 1, 0
    bad, m = check_config(inst, new)
    assert not bad and m["rewiring"] == 4 and m["circuits_removed"] == 2 and m["links_removed"] == 1


@pytest.mark.parametrize("bad, msg", [
    ({"links": [[0, 0, 0, 1]]}, "itself"),
    ({"topology": [[[0, 1, 0], [0, 0, 0], [0, 0, 0]]], "links": None}, "symmetric"),
    ({"topology": [[[0, 1, 0], [1, 0, 0], [0, 0, 0]]]}, "not both"),
    ({"links": [[0, 0, 1, 2], [0, 0, 2, 1]]}, "k_spine"),
    ({"fabric": {"pods": 3, "k_leaf": 2, "k_spine": 3, "tau": 1}}, "even"),
    ({"wiring": "star"}, "wiring"),
    ({"old": {"circuits": [[0, 0, 0, 1], [0, 0, 1, 1]]}}, "partial"),
])
def test_bad_reconfig_files_give_one_line_errors(bad, msg):
    d = {"problem": "lumos-reconfig", "fabric": {"pods": 3, "k_leaf": 2, "k_spine": 2, "tau": 2},
         "links": [[0, 0, 1, 1]]}
    d.update(bad)
    d = {k: v for k, v in d.items() if v is not None}
    with pytest.raises(InstanceError, match=msg) as e:
        instances.from_dict(d, "x.json")
    assert "\n" not in str(e.value) and str(e.value).startswith("x.json")


def test_files_round_trip(tmp_path):
    fab = Fabric(8, 4, 4)
    from toolkit.registry import problem
    inst = problem("lumos-reconfig").generator.run(pods=8, seed=3)
    path = tmp_path / "r.json"
    instances.save_instance(inst, path)
    back = instances.load_instance(path)
    assert np.array_equal(back.C, inst.C) and np.array_equal(back.old.perm, inst.old.perm)
    L = LogicalInstance(fab, random_requirement(fab, 1))
    instances.save_instance(L, tmp_path / "l.json")
    assert np.array_equal(instances.load_instance(tmp_path / "l.json").L, L.L)
    assert json.loads((tmp_path / "l.json").read_text())["problem"] == "lumos-logical"


def test_shipped_examples_load():
    from pathlib import Path
    files = sorted(Path("instances/lumos").glob("*.json"))
    assert len(files) >= 8
    for f in files:
        instances.load_instance(f)


def test_table1_reproduces_all_60_cells():
    rows = table1()
    assert len(rows) == 60
    assert [r for r in rows if r["ours"] != r["paper"]] == []


@settings(max_examples=25, deadline=None)
@given(P=st.integers(2, 12), K=st.sampled_from([2, 4, 6]), kind=st.sampled_from(["rings", "matchings", "stubs"]),
       seed=st.integers(0, 10 ** 6), mult=st.integers(1, 3))
def test_random_topologies_are_admissible(P, K, kind, seed, mult):
    fab = Fabric(P, 2, K, 1)
    C = random_topology(fab, kind, seed, mult_max=mult)
    validate_topology(C, fab)
    if kind == "matchings" and P % 2 == 0:
        assert (C.sum(axis=2) == K).all()        # full utilization


@settings(max_examples=15, deadline=None)
@given(P=st.integers(3, 10), seed=st.integers(0, 10 ** 6), spread=st.sampled_from(["all", "random"]))
def test_sequences_are_admissible(P, seed, spread):
    fab = Fabric(P, 4, 4, 1)
    for C in topology_sequence(fab, 4, "rings", 0.3, seed) + job_sequence(fab, 6, seed, spread=spread):
        validate_topology(C, fab)


@settings(max_examples=15, deadline=None)
@given(P=st.integers(2, 6), tau=st.sampled_from([1, 2]), seed=st.integers(0, 10 ** 6),
       fill=st.floats(0.1, 1.0))
def test_random_requirements_are_valid(P, tau, seed, fill):
    fab = Fabric(P, 4, 4, tau)
    validate_requirement(random_requirement(fab, seed, fill=fill), fab)


def test_table1_report_claims_are_computed(tmp_path, monkeypatch):
    """Review item 6: the ratio and the Clos sizes in the report come from the table, so a
    changed formula changes the text (here: a doubled 3-tier Clos)."""
    import benchmarks.lumos.table1 as bt
    from instances.lumos import scale as lumos_scale
    md = (tmp_path / "a")
    report = bt.run(out_dir=md)
    text = (md / "lumos_table1.md").read_text()
    for row in ("| 8.53x |", " 800G ports (text) | 65,536 | 65,536 |",
                " 1.6T ports (text) | 8,192 | 8,192 |", "| 60 printed cells | 60 of 60 |"):
        assert row in text and row in report.headline      # the headline is the report's table
    orig = lumos_scale.clos3
    monkeypatch.setattr(lumos_scale, "clos3", lambda k: 2 * orig(k))
    report = bt.run(out_dir=tmp_path / "b")
    text = (tmp_path / "b" / "lumos_table1.md").read_text()
    assert " 800G ports (text) | 65,536 | 131,072 |" in text
    assert " 1.6T ports (text) | 8,192 | 16,384 |" in report.headline


def test_uniform_checker_rejects_a_unidirectional_circuit():
    """Under Uniform Wiring the L2 reverse path of circuit (i -> j) on OCS k is (j -> i) on
    the same OCS: dropping it must be flagged (review item 7)."""
    fab = Fabric(4, 2, 2, tau=2)
    C = np.zeros((1, 4, 4), dtype=int)
    C[0, 0, 1] = C[0, 1, 0] = 1
    inst = ReconfigInstance(fab, C, "uniform")
    cfg = OcsConfig.empty(fab, inst.wire)
    cfg.perm[0, 0, 0], cfg.perm[0, 0, 1] = 1, 0
    assert check_config(inst, cfg)[0] == []
    cfg.perm[0, 0, 1] = -1
    bad, _ = check_config(inst, cfg)
    assert any("L2" in b for b in bad)
