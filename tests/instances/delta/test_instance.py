"""DELTA workloads: generator counts (spec 5.2), reduction exactness, replicas, file forms."""
from __future__ import annotations

import json

import numpy as np
import pytest

import instances
from heuristics.delta.sim import compile_full_dag, simulate
from instances.delta.instance import DeltaInstance, from_job
from instances.delta.dag import build_full_dag, stage_program
from instances.delta.reduce import reduce_dag
from instances.delta.archs import ARCHS
from instances.delta.models import TABLE_I, Job
from instances.errors import InstanceError


@pytest.mark.parametrize("name, billions", [("megatron-177b", 177.1), ("megatron-462b", 461.5),
                                            ("mixtral-8x22b", 141), ("deepseek-671b", 671)])
def test_architectures_have_the_stated_sizes(name, billions):
    assert ARCHS[name].total_params() / 1e9 == pytest.approx(billions, rel=0.005)


# spec 5.2: n_s, R, pods/replica, U_p, inter-pod PP tasks = 2 * boundaries * N, DP tasks
SPEC_5_2 = {
    "megatron-177b": dict(ns=8, R=8, pods=3, U=16, pp=192, dp=12, dp_flows=4),
    "mixtral-8x22b": dict(ns=8, R=2, pods=4, U=16, pp=384, dp=8, dp_flows=8),
    "megatron-462b": dict(ns=8, R=8, pods=4, U=32, pp=768, dp=32, dp_flows=4),
    "deepseek-671b": dict(ns=8, R=2, pods=4, U=32, pp=768, dp=16, dp_flows=8),
    "gpt-7b": dict(ns=2, R=2, pods=2, U=4, pp=8, dp=4, dp_flows=2),
}


@pytest.mark.parametrize("name", sorted(SPEC_5_2))
def test_generator_matches_spec_table(name):
    exp = SPEC_5_2[name]
    job = Job(**TABLE_I[name])
    assert (job.n_s, job.replicas_count) == (exp["ns"], exp["R"])
    inst = instances.load_instance(f"instances/delta/{name}.json")
    kinds = [t["kind"] for t in inst.tasks]
    assert kinds.count("pp") == exp["pp"] and kinds.count("dp") == exp["dp"]
    assert len(inst.pods) == exp["pods"] and set(inst.ports) == {exp["U"]}
    assert {t["flows"] for t in inst.tasks if t["kind"] == "dp"} == {exp["dp_flows"]}
    assert {t["flows"] for t in inst.tasks if t["kind"] == "pp"} == {exp["ns"]}


def test_1f1b_program_counts():
    P, N = 4, 6
    for s in range(P):
        prog = stage_program(s, P, N)
        assert [op[1] for op in prog if op[0] == "F"] == list(range(N))
        assert sorted(op[1] for op in prog if op[0] == "B") == list(range(N))
        sends = [k for op in prog if op[0] == "CALL" for k, _ in op[1] if k.startswith("send")]
        assert sends.count("send_fwd") == (N if s < P - 1 else 0)
        assert sends.count("send_bwd") == (N if s > 0 else 0)


@pytest.mark.parametrize("name, N", [("gpt-7b", 4), ("megatron-177b", 6), ("mixtral-8x22b", 5)])
@pytest.mark.parametrize("mode", ["megatron_blocking", "async"])
def test_reduced_dag_gives_the_full_dags_iteration_time(name, N, mode):
    job = dict(TABLE_I[name], micro_batches=N, p2p_mode=mode)
    inst = from_job(job)
    dag, _ = build_full_dag(Job(**job))
    full = compile_full_dag(dag, inst.bandwidth)
    for x in (1.0, 2.0, 3.0):
        xs = np.full(len(inst.links), x)
        assert simulate(inst, xs, trace=False).makespan == pytest.approx(
            simulate(full, xs, trace=False).makespan, rel=1e-12)
    assert simulate(inst, ideal=True, trace=False).makespan == pytest.approx(
        simulate(full, ideal=True, trace=False).makespan, rel=1e-12)


def test_pruning_keeps_the_semantics():
    job = Job(**dict(TABLE_I["megatron-177b"], micro_batches=8))
    dag, layout = build_full_dag(job)
    pruned, unpruned = reduce_dag(dag, prune=True), reduce_dag(dag, prune=False)
    assert len(pruned["deps"]) < len(unpruned["deps"])

    def inst(red):
        return DeltaInstance("t", job.bandwidth, layout.pods, layout.ports, layout.links, dag.tasks,
                             red["deps"], red["release"], red["tail"], red["q0"])

    for x in (1.0, 2.0, 5.0):
        xs = np.full(len(layout.links), x)
        assert simulate(inst(pruned), xs).makespan == pytest.approx(
            simulate(inst(unpruned), xs).makespan, rel=1e-12)


def _full_x(full: DeltaInstance, canon: DeltaInstance, xc: np.ndarray) -> np.ndarray:
    """Expand per-orbit circuits (canonical) to per-pod-pair circuits (full)."""
    idx = {l["name"]: e for e, l in enumerate(canon.links)}
    out = []
    for l in full.links:
        (ra, ba), (rb, bb) = [(int(p[1:p.index("b")]), int(p[p.index("b") + 1:])) for p in l["ends"]]
        out.append(xc[idx[f"PP{min(ba, bb)}" if ra == rb else f"DP{ba}"]])
    return np.array(out)


@pytest.mark.parametrize("name, N", [("gpt-7b", 4), ("megatron-177b", 4), ("mixtral-8x22b", 4)])
def test_replica_isomorphism_gives_the_same_iteration_time(name, N):
    canon = from_job(dict(TABLE_I[name], micro_batches=N, replicas="canonical"))
    full = from_job(dict(TABLE_I[name], micro_batches=N, replicas="full"))
    assert full.n_tasks == canon.n_tasks * Job(**TABLE_I[name]).replicas_count
    rng = np.random.default_rng(0)
    for _ in range(3):
        xc = rng.integers(1, 4, len(canon.links)).astype(float)
        a = simulate(canon, xc, trace=False).makespan
        b = simulate(full, _full_x(full, canon, xc), trace=False).makespan
        assert a == pytest.approx(b, rel=1e-12)
    # orbit port multiplicities: a Pod of an R>=3 ring uses 2 ports per DP circuit
    R = Job(**TABLE_I[name]).replicas_count
    dp = [l for l in canon.links if l["name"].startswith("DP")]
    assert all(list(l["incidence"].values()) == [2 if R > 2 else 1] for l in dp)


def test_derived_form_round_trip(tmp_path):
    inst = instances.load_instance("instances/delta/gpt-7b.json")
    d = inst.to_dict(derived=True)
    p = tmp_path / "d.json"
    p.write_text(json.dumps(d))
    back = instances.load_instance(p)
    assert back.n_tasks == inst.n_tasks and len(back.deps) == len(inst.deps)
    x = np.full(len(inst.links), 2.0)
    assert simulate(back, x).makespan == pytest.approx(simulate(inst, x).makespan)


def test_derived_form_without_links_builds_pod_pairs():
    d = {"problem": "delta", "bandwidth": 1.0, "pods": [{"name": "A", "ports": 2}, {"name": "B", "ports": 2}],
         "tasks": [{"src_pod": "A", "dst_pod": "B", "flows": 1, "volume": 1, "src_gpus": [0], "dst_gpus": [1]},
                   {"src_pod": "B", "dst_pod": "A", "flows": 1, "volume": 2, "src_gpus": [1], "dst_gpus": [0]}],
         "deps": [[0, 1, 0.5]]}
    inst = instances.from_dict(d)
    assert len(inst.links) == 1 and list(inst.dir_of) == [0, 1]
    assert simulate(inst, [1]).makespan == pytest.approx(1 + 0.5 + 2)


@pytest.mark.parametrize("patch, field", [
    ({"job": {"model": "gpt-9000", "tp": 1, "pp": 1, "gpus": 1, "gpus_per_pod_per_replica": 1,
              "micro_batches": 1}}, "job.model"),
    ({"job": dict(TABLE_I["gpt-7b"], tp=0)}, "job.tp"),
    ({"job": dict(TABLE_I["gpt-7b"], gpus=15)}, "job.gpus"),
    ({"job": dict(TABLE_I["gpt-7b"], pp=5, gpus=20)}, "job.pp"),      # 36 layers / 5 stages
    ({"job": dict(TABLE_I["gpt-7b"], p2p_mode="magic")}, "job.p2p_mode"),
    ({"job": dict(TABLE_I["gpt-7b"], warp=9)}, "job"),
    ({"job": {"model": "gpt-7b"}}, "job.tp"),
])
def test_bad_jobs_are_named(patch, field):
    d = {"problem": "delta", "format": 1, **patch}
    with pytest.raises(InstanceError, match=f"field '{field}"):
        instances.from_dict(d)


def test_bad_derived_instances_are_named():
    base = {"problem": "delta", "bandwidth": 1.0, "pods": [{"name": "A", "ports": 2}, {"name": "B", "ports": 2}],
            "tasks": [{"src_pod": "A", "dst_pod": "B", "flows": 1, "volume": 1, "src_gpus": [0], "dst_gpus": [1]}]}
    with pytest.raises(InstanceError, match="'bandwidth'"):
        instances.from_dict(dict(base, bandwidth=0))
    with pytest.raises(InstanceError, match="volume"):
        instances.from_dict(dict(base, tasks=[dict(base["tasks"][0], volume=-1)]))
    with pytest.raises(InstanceError, match="'deps'"):
        instances.from_dict(dict(base, tasks=base["tasks"] * 2, deps=[[0, 1, 0], [1, 0, 0]]))
    with pytest.raises(InstanceError, match=r"'pods\[0\].ports'"):
        instances.from_dict(dict(base, pods=[{"name": "A", "ports": -1}, {"name": "B", "ports": 2}]))
