"""lumos-staging instances, generator and checker: configurations -> changed groups, the
split -> leaf loads and budgets, round trips, and a checker that rejects every corrupted
staging (a group missing, twice, unchanged, an empty stage, a stage over iota)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instances
from instances.lumos.fabric import Fabric
from instances.lumos.staging import Staging, StagingInstance, check_staging
from instances.lumos.workloads import churn_requirement, random_requirement
from toolkit.registry import RunConfig, problem

PROB = problem("lumos-staging")


@pytest.fixture(scope="module")
def generated():
    return PROB.generator.run(pods=6, k_leaf=8, k_spine=4, tau=1, fill=0.7, seed=3)


def test_changed_groups_are_the_groups_whose_circuits_differ(generated):
    inst = generated
    H = inst.fabric.H
    diff = [h for h in range(H) if not np.array_equal(inst.old.perm[h], inst.new.perm[h])]
    assert inst.changed.tolist() == diff and 0 < len(diff)
    # the split is a valid requirement's and w counts both orientations
    w = np.zeros((inst.fabric.n_leaves, H), dtype=int)
    for a, b, h, c in inst.split:
        w[a, h] += c
        w[b, h] += c
    assert np.array_equal(inst.load, w)
    assert np.array_equal(inst.load.sum(axis=1), 2 * inst.L.sum(axis=1))


def test_round_trip_with_configurations_and_with_changed(generated):
    back = instances.from_dict(generated.to_dict())
    assert np.array_equal(back.changed, generated.changed)
    assert np.array_equal(back.L, generated.L) and back.iota == generated.iota
    d = generated.to_dict()
    del d["old"], d["new"]
    d["changed"] = generated.changed.tolist()
    short = instances.from_dict(d)
    assert np.array_equal(short.changed, generated.changed) and short.old is None
    assert instances.from_dict(short.to_dict()).changed.tolist() == d["changed"]


def test_repeated_split_rows_add_up():
    fab = Fabric(2, 4, 2, 1)
    one = StagingInstance(fab, [[0, 2, 1, 2], [2, 0, 1, 2]], [1])
    two = StagingInstance(fab, [[0, 2, 1, 1], [0, 2, 1, 1], [2, 0, 1, 2]], [1])
    assert np.array_equal(one.load, two.load) and np.array_equal(one.L, two.L)


def test_shipped_examples_solve_to_their_documented_optimum():
    for name, stages in (("staging-hand-alone", 4), ("staging-P8-tau1", 4), ("staging-P8-tau2", 4)):
        inst = instances.load_instance(f"instances/lumos/{name}.json")
        out = PROB.methods["staging-ilp"].run(inst, RunConfig())
        bad, m = check_staging(inst, out.solution)
        assert not bad and m["stages"] == stages and out.solver.status == "optimal"


def _corrupt_cases(inst: StagingInstance, good: Staging):
    st_ = [list(s) for s in good.stages]
    multi = next(i for i, s in enumerate(st_) if len(s) > 1)
    unchanged = next(h for h in range(inst.fabric.H) if h not in set(inst.changed.tolist()))
    yield "missing", Staging([s[1:] if i == multi else s for i, s in enumerate(st_)]), "in no stage"
    yield "twice", Staging(st_ + [[st_[multi][0]]]), f"group {st_[multi][0]} is in stages"
    yield "unchanged", Staging(st_ + [[unchanged]]), "does not change"
    yield "empty", Staging(st_ + [[]]), "is empty"
    yield "range", Staging(st_ + [[inst.fabric.H]]), "not a group index"
    yield "merged", Staging([sum(st_, [])]), "> iota"


def test_checker_rejects_corrupted_stagings():
    """2 Pods x 2 leaves, H = 4, groups 0, 2, 3 change; leaf 0 <-> 2 on every spine
    (budget 4 of 8 at iota 0.5: two groups per stage), leaf 1 <-> 3 on spines 0, 1."""
    rows = [[0, 2, h, 1] for h in range(4)] + [[2, 0, h, 1] for h in range(4)]
    rows += [[1, 3, 0, 1], [3, 1, 0, 1], [1, 3, 1, 1], [3, 1, 1, 1]]
    inst = StagingInstance(Fabric(2, 4, 2, 1), rows, [0, 2, 3], 0.5)
    good = PROB.methods["staging-ilp"].run(inst, RunConfig()).solution
    assert not check_staging(inst, good)[0] and len(good.stages) == 2
    for what, bad_sol, words in _corrupt_cases(inst, good):
        bad, _ = check_staging(inst, bad_sol)
        assert bad and any(words in b for b in bad), (what, bad)


def test_checker_rejects_corrupted_stagings_every_group_changing():
    inst = instances.load_instance("instances/lumos/staging-P8-tau1.json")
    good = PROB.methods["staging-greedy"].run(inst, RunConfig()).solution
    st_ = [list(s) for s in good.stages]
    # move one group of a stage into another stage until some leaf exceeds iota
    for i in range(len(st_)):
        for j in range(len(st_)):
            if i == j:
                continue
            moved = [list(s) for s in st_]
            moved[j] = moved[j] + moved[i]
            moved.pop(i)
            bad, m = check_staging(inst, Staging(moved))
            if bad:
                assert "> iota = 0.5" in bad[0] and m["max_affected_fraction"] > 0.5
                return
    pytest.fail("no merge of two stages exceeds iota")


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), churn=st.floats(0, 1), pods=st.integers(2, 6))
def test_churned_requirement_stays_valid(seed, churn, pods):
    from instances.lumos.logical import validate_requirement
    fab = Fabric(pods, 6, 4, 1)
    L = random_requirement(fab, seed, None, 0.8)
    M = churn_requirement(fab, L, churn, seed + 1)
    validate_requirement(M, fab)
    assert (M.sum(axis=1) <= L.sum(axis=1)).all()
    if churn == 0:
        assert np.array_equal(M, L)


@pytest.mark.parametrize("kw", [dict(pods=4), dict(pods=6, k_leaf=12, k_spine=4, iota=0.3),
                                dict(pods=8, k_leaf=8, k_spine=8, tau=2, fill=1.0, churn=0.1)])
def test_generator_instances_solve_and_verify(kw):
    inst = PROB.generator.run(**kw)
    for method in ("staging-greedy", "staging-ilp"):
        out = PROB.methods[method].run(inst, RunConfig())
        assert not check_staging(inst, out.solution)[0]


def test_checker_refuses_non_integer_group_names():
    inst = StagingInstance(Fabric(2, 4, 2, 1), [[0, 2, 1, 1], [2, 0, 1, 1]], [1], 1.0)
    assert not check_staging(inst, Staging([[1]]))[0]
    for bad_h in (True, 1.0, "1", None):
        assert check_staging(inst, Staging([[bad_h]]))[0]


def test_list_and_generate_help_name_the_type_its_methods_and_params(capsys, tmp_path):
    import solve
    assert solve.main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("lumos-staging", "staging-greedy", "staging-ilp", "mode (loop|direct, default loop)"):
        assert word in out
    assert solve.main(["generate", "lumos-staging", "--help"]) == 0
    out = capsys.readouterr().out
    for word in ("--pods", "--k-leaf", "--fill", "--churn", "--iota", "--seed"):
        assert word in out
    f = tmp_path / "s.json"
    assert solve.main(["generate", "lumos-staging", "--iota", "0.4", "-o", str(f)]) == 0
    assert instances.load_instance(f).iota == 0.4
    assert solve.main(["generate", "lumos-staging", "--iota", "0", "-o", str(f)]) == 2
    assert "iota" in capsys.readouterr().err
