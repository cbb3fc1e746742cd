"""The instance files' JSON Schemas (issue 30 item 2): derived from the loaders' checks
(toolkit.schema), valid for every shipped instance and for generated ones the derivation
never saw, and rejecting what the loader rejects."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import instances
from instances import errors
from toolkit import schema as S
from toolkit.registry import problem

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def schemas():
    return S.schemas()


def shipped():
    out = []
    for path in sorted((ROOT / "instances").rglob("*.json")):
        d = instances.read_json(path)
        out.append((path.relative_to(ROOT), d))
    return out


def test_every_shipped_instance_is_valid(schemas):
    files = shipped()
    assert len(files) > 50
    bad = {str(p): S.validate(d, schemas[d["problem"]])[:3] for p, d in files}
    assert not {p: e for p, e in bad.items() if e}
    assert {d["problem"] for _, d in files} == set(instances.INSTANCE_TYPES)
    assert errors._TRACE is None          # the trace is off again


def _unexercised(s, path, out):
    if s == {}:
        out.append(path)
    for k, v in s.get("properties", {}).items():
        _unexercised(v, f"{path}.{k}", out)
    for i, v in enumerate(s.get("anyOf", [])):
        _unexercised(v, path, out)
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), dict):
            _unexercised(s[key], f"{path}[]" if key == "items" else f"{path}.*", out)
    return out


def test_every_declared_field_has_a_checked_type(schemas):
    """Each field a loader allows (known_fields) occurs in a shipped file, so the schema
    states its type: a new field needs an example instance."""
    for name, s in schemas.items():
        assert _unexercised(s, name, []) == []
        assert set(s["properties"]) == {"problem", "format", "name", "meta"} | \
            set(instances.instance_class(name).FIELDS)
        assert s["additionalProperties"] is False and "problem" in s["required"]


def test_what_the_schemas_state(schemas):
    sp = schemas["spectra"]["properties"]
    assert sp["switches"] == {"type": "integer", "minimum": 1}
    assert sp["demand"]["items"]["items"] == {"type": "number", "minimum": 0}
    assert set(schemas["spectra"]["required"]) == {"problem", "demand", "switches", "delay"}
    link = schemas["a2a"]["properties"]["link"]["anyOf"]          # {"T"} or the bandwidth form
    assert {tuple(v["properties"]) for v in link} == {("T",), ("bandwidth_gbps", "latency_s",
                                                               "chunk_bytes")}
    assert schemas["lumos-sim"]["properties"]["workload"]["properties"]["kind"]["enum"] == \
        ["helios", "trace"]
    jobs = schemas["lumos-sim"]["properties"]["jobs"]["items"]["prefixItems"]
    assert [j["type"] for j in jobs][:3] == ["number", "number", "integer"]
    # a bound that depends on the instance (a group index below H) is left out
    changed = schemas["lumos-staging"]["properties"]["changed"]
    assert "maximum" not in changed["items"] and "maxItems" not in changed
    assert {"type": "null"} in schemas["lumos-reconfig"]["properties"]["old"]["anyOf"]


# generated files the schemas were not derived from: other sizes, forms and seeds
HELD_OUT = [
    ("spectra", dict(workload="random", n=7, switches=3, seed=5)),
    ("spectra", dict(workload="moe", switches=2, seed=2)),
    ("a2a", dict(workload="zipf", n=9, k=3, seed=4)),
    ("a2a", dict(workload="random", n=5, k=2, T=2.0, seed=1)),
    ("delta", dict(model="megatron-177b", form="derived")),
    ("delta", dict(model="mixtral-8x22b", micro_batches=8)),
    ("lumos-reconfig", dict(pods=12, k_leaf=8, k_spine=8, tau=2, wiring="uniform", seed=3)),
    ("lumos-reconfig", dict(pods=6, k_leaf=4, k_spine=8, wiring="dual", kind="matchings", seed=1)),
    ("lumos-logical", dict(pods=6, tau=1, seed=2, fill=0.5)),
    ("lumos-staging", dict(pods=8, k_leaf=8, k_spine=8, tau=2, seed=4, iota=0.3)),
    ("lumos-placement", dict(gpus=2048, state="random", load=0.5, seed=2)),
    ("lumos-sim", dict(arch="uniform-25.6T-tau1", gpus=128, jobs=5, explicit=1, seed=3)),
    ("lumos-sim", dict(arch="best", gpus=256, jobs=7, workload="trace", seed=1)),
]


@pytest.mark.parametrize("name, over", HELD_OUT, ids=[f"{p}-{i}" for i, (p, _) in enumerate(HELD_OUT)])
def test_generated_instances_are_valid(schemas, name, over):
    gen = problem(name).generator
    params = {k: dflt for k, (_, dflt, _h) in gen.params.items()} | over
    d = json.loads(json.dumps(gen.run(**params).to_dict()))
    instances.from_dict(d)
    assert S.validate(d, schemas[name]) == []


SPECTRA = {"problem": "spectra", "format": 1, "name": "x", "demand": [[0, 1], [1, 0]],
           "switches": 2, "delay": 0.1}


@pytest.mark.parametrize("path, value, words", [
    (("switches",), 0, ">= 1"),
    (("switches",), 1.5, "integer"),
    (("switches",), True, "integer"),
    (("delay",), "0.1", "number"),
    (("demand", 0, 1), -1, ">= 0"),
    (("swtiches",), 2, "unknown field"),
    (("format",), 2, "must be 1"),
    (("meta",), [], "must be object"),
])
def test_the_schema_refuses_what_the_loader_refuses(schemas, path, value, words):
    d = copy.deepcopy(SPECTRA)
    S._resolve(d, path[:-1])[path[-1]] = value
    with pytest.raises(instances.InstanceError):
        instances.from_dict(d)
    errs = S.validate(d, schemas["spectra"])
    assert errs and words in errs[0], errs


def test_nested_refusals(schemas):
    sim = instances.read_json(ROOT / "instances/lumos/sim-clos-128-explicit.json")
    for mutate, words in [(lambda d: d["jobs"][0].__setitem__(2, 1.5), "jobs[0][2]: must be an integer"),
                          (lambda d: d.__setitem__("ecmp", "hashed"), "ecmp: must be one of"),
                          (lambda d: d.pop("arch"), "missing 'arch'")]:
        d = copy.deepcopy(sim)
        mutate(d)
        with pytest.raises(instances.InstanceError):
            instances.from_dict(d)
        assert any(words in e for e in S.validate(d, schemas["lumos-sim"])), words
    a2a = {"problem": "a2a", "n": 4, "k": 1, "R": 1, "link": {"T": 1, "latency_s": 0},
           "traffic": {"uniform": 1}}
    assert "matches none of 2 forms" in S.validate(a2a, schemas["a2a"])[0]


def test_command_writes_one_schema_per_problem(tmp_path, capsys):
    assert S.main(["spectra", "a2a", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a2a.schema.json", "spectra.schema.json"]
    assert json.loads((tmp_path / "a2a.schema.json").read_text())["title"].startswith("a2a")
    with pytest.raises(SystemExit) as exc:
        S.main(["nosuch"])
    assert exc.value.code == 2 and "unknown problem 'nosuch'" in capsys.readouterr().err
