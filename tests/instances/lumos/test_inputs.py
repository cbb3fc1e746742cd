"""Bad LumosCore generator parameters and malformed files: exit 2, one line naming the field."""
from __future__ import annotations

import pytest

import instances
import solve
from instances.errors import InstanceError
from instances.lumos.fabric import Fabric


@pytest.mark.parametrize("problem, args, field", [
    ("lumos-reconfig", ["--kind", "bogus"], "kind"),
    ("lumos-reconfig", ["--churn", "2"], "churn"),
    ("lumos-reconfig", ["--churn", "-1"], "churn"),
    ("lumos-reconfig", ["--ring-max", "1"], "ring_max"),
    ("lumos-reconfig", ["--ring-max", "0"], "ring_max"),
    ("lumos-reconfig", ["--seed", "-1"], "seed"),
    ("lumos-reconfig", ["--k-leaf", "0"], "fabric.k_leaf"),
    ("lumos-reconfig", ["--k-leaf", "3"], "fabric.k_leaf"),
    ("lumos-reconfig", ["--k-spine", "0"], "fabric.k_spine"),
    ("lumos-reconfig", ["--tau", "0"], "fabric.tau"),
    ("lumos-reconfig", ["--wiring", "star"], "wiring"),
    ("lumos-logical", ["--tau", "0"], "fabric.tau"),
    ("lumos-logical", ["--per-leaf", "-1"], "per_leaf"),
    ("lumos-logical", ["--per-leaf", "99"], "per_leaf"),
    ("lumos-logical", ["--seed", "-3"], "seed"),
    ("lumos-logical", ["--fill", "2"], "fill"),
    ("lumos-logical", ["--fill", "-0.5"], "fill"),
    ("lumos-logical", ["--k-leaf", "0"], "fabric.k_leaf"),
    ("lumos-logical", ["--k-leaf", "3", "--tau", "1"], "fabric.k_leaf"),
])
def test_bad_generator_parameters_exit_2_naming_the_field(tmp_path, capsys, problem, args, field):
    out = tmp_path / "x.json"
    assert solve.main(["generate", problem, *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"field '{field}'" in err and "\n" not in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("kwargs, field", [
    (dict(pods=4, k_leaf=0, k_spine=4), "fabric.k_leaf"),
    (dict(pods=4, k_leaf=4, k_spine=-2), "fabric.k_spine"),
    (dict(pods=4, k_leaf=4, k_spine=4, tau=0), "fabric.tau"),
    (dict(pods=4, k_leaf=4, k_spine=4, k_ocs=0), "fabric.k_ocs"),
    (dict(pods=4, k_leaf=2.5, k_spine=4), "fabric.k_leaf"),
])
def test_fabric_constructor_checks_positivity(kwargs, field):
    with pytest.raises(InstanceError) as e:
        Fabric(**kwargs)
    assert e.value.field == field


RECONFIG = {"problem": "lumos-reconfig", "fabric": {"pods": 3, "k_leaf": 2, "k_spine": 2, "tau": 2},
            "links": [[0, 0, 1, 1]]}
LOGICAL = {"problem": "lumos-logical", "fabric": {"pods": 2, "k_leaf": 2, "k_spine": 2, "tau": 1},
           "pairs": [[0, 2, 1]]}


@pytest.mark.parametrize("base, bad, field", [
    (RECONFIG, {"links": [[0, 0, "x", 1]]}, "links[0][2]"),
    (RECONFIG, {"links": 5}, "links"),
    (RECONFIG, {"links": [[0, 0, 1], [0, 1, 2, 1]]}, "links[0]"),
    (RECONFIG, {"links": [[0, 0, 1, 2], [0, 0, 2, 1]]}, "links"),       # eq. 12 via sparse links
    (RECONFIG, {"old": {"circuits": 5}}, "old.circuits"),
    (RECONFIG, {"old": {"circuits": [[0, 0, "a", 1]]}}, "old.circuits[0][2]"),
    (RECONFIG, {"old": {"circuits": [[0, 0, 1]]}}, "old.circuits[0]"),
    (LOGICAL, {"pairs": [[0, "a", 1]]}, "pairs[0][1]"),
    (LOGICAL, {"pairs": [[0, 2], [1, 3, 1]]}, "pairs[0]"),
    (LOGICAL, {"pairs": None, "requirement": "x"}, "requirement"),
    (LOGICAL, {"pairs": None, "requirement": [[0, 1], [1]]}, "requirement"),
])
def test_malformed_files_name_the_field(base, bad, field):
    d = {**base, **bad}
    d = {k: v for k, v in d.items() if v is not None}
    with pytest.raises(InstanceError) as e:
        instances.from_dict(d, "x.json")
    assert e.value.field == field, str(e.value)
    assert "\n" not in str(e.value) and "ValueError" not in str(e.value)
