"""LumosCore staged (hitless) reconfiguration ([002] A.8, spec 2.11): instance and staging.

The OCS groups whose configuration changes are reconfigured in ``theta`` stages (a
partition of those groups); while a stage runs, the flows that cross its groups are
disrupted, and every leaf may lose at most a fraction ``iota`` of its flows per stage.

Data (decisions, see README "lumos-staging"):

* ``split`` L_abh, rows ``[a, b, h, count]`` (requirement a -> b routed via spine h),
  exactly a ``lumos-logical`` solution's ``entries``; repeated rows add up. The leaf-level
  requirement is L_ab = sum_h L_abh, checked like a ``lumos-logical`` requirement
  (symmetric, cross-Pod, at most K_leaf paths per leaf). No separate L field: one source.
* which groups change: the ``old`` and ``new`` configurations (``[h, k, in, out]``
  circuits, as in ``lumos-reconfig``; group h changes iff its circuits differ), or the
  list ``changed`` directly (then no configurations).
* the load of leaf a on group h is w_ah = sum_b (L_abh + L_bah): the paths of a through
  spine h in either direction (2 sum_b L_abh for a split symmetric per spine, as
  Heuristic-Decomposition and the greedy give; the spec's fraction is then unchanged).
  Its total is T_a = sum_h w_ah, over all groups (changed or not).
* a stage may affect at most ``budget_a = floor(iota * T_a + 1e-9)`` of leaf a's load,
  i.e. fraction <= iota (the spec's corrected model; its prose says < iota).
* [DECISION, singleton exemption] a group that alone exceeds some leaf's budget cannot
  share a stage with any other, and is staged alone; a stage of one group is always
  allowed. This keeps the spec's "theta = H (one group per stage) is always feasible",
  which the per-leaf constraint alone would break.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from instances.errors import InstanceError, known_fields, number, obj, per_instance, seq, text
from instances.lumos.fabric import Fabric, check_wiring_name, make_wiring
from instances.lumos.instance import OcsConfig, int_rows
from instances.lumos.logical import check_cross_pod, validate_requirement
from instances.lumos.size import guard_logical, guard_reconfig

DEFAULT_IOTA = 0.5      # spec 7.10: iota is unspecified in the paper
EPS = 1e-9              # slack of the budget floor (iota * T_a is a float)


def parse_split(rows, fabric: Fabric, field_name: str = "split") -> np.ndarray:
    """``[a, b, h, count]`` rows as an (n, 4) int64 array, checked (ranges, cross-Pod)."""
    n, H, K = fabric.n_leaves, fabric.H, fabric.k_leaf
    r = int_rows(rows, field_name, 4, "[a, b, h, count]")
    bad = np.flatnonzero(np.any((r[:, :2] < 0) | (r[:, :2] >= n), 1) | (r[:, 2] < 0)
                         | (r[:, 2] >= H) | (r[:, 3] < 0) | (r[:, 3] > K))
    if len(bad):
        b = int(bad[0])
        raise InstanceError(f"{field_name}[{b}]", f"{r[b].tolist()} out of range: need 0 <= a, b "
                            f"< {n} (leaves), 0 <= h < {H} (groups), 0 <= count <= k_leaf = {K}")
    check_cross_pod(r, fabric, field_name, "only cross-Pod paths cross an OCS group")
    return r


def changed_groups(old: OcsConfig, new: OcsConfig) -> np.ndarray:
    """Sorted indices h of the groups whose circuits differ."""
    diff = (old.perm != new.perm).reshape(old.perm.shape[0], -1).any(axis=1)
    return np.flatnonzero(diff).astype(np.int64)


@dataclass
class StagingInstance:
    """Partition the changed groups into the fewest stages under the per-leaf budget."""

    fabric: Fabric
    split: np.ndarray                  # (n, 4) rows [a, b, h, count]
    changed: np.ndarray                # sorted group indices
    iota: float = DEFAULT_IOTA
    wiring: str = "cross"
    old: OcsConfig | None = None       # both or neither (then ``changed`` is given)
    new: OcsConfig | None = None
    name: str = "lumos-staging"
    meta: dict = field(default_factory=dict)

    problem = "lumos-staging"
    FIELDS = ("fabric", "wiring", "split", "old", "new", "changed", "iota")

    def __post_init__(self):
        fab = self.fabric
        self.iota = number("iota", self.iota, lo=0.0, strict_lo=True, hi=1.0)
        self.split = np.asarray(self.split, dtype=np.int64).reshape(-1, 4)
        L = np.zeros((fab.n_leaves, fab.n_leaves), dtype=np.int64)
        np.add.at(L, (self.split[:, 0], self.split[:, 1]), self.split[:, 3])
        try:
            self.L = validate_requirement(L, fab, "pairs")
        except InstanceError as exc:       # name the split, not an L entry it has no index of
            raise InstanceError("split", f"L_ab = sum_h L_abh: {exc.msg}") from None
        self.changed = np.unique(np.asarray(self.changed, dtype=np.int64))
        if len(self.changed) and (self.changed[0] < 0 or self.changed[-1] >= fab.H):
            raise InstanceError("changed", f"group indices must be within [0, H = {fab.H})")

    @cached_property
    def load(self) -> np.ndarray:
        """w (n_leaves, H): paths of leaf a through spine h, either direction."""
        w = np.zeros((self.fabric.n_leaves, self.fabric.H), dtype=np.int64)
        a, b, h, c = self.split.T
        np.add.at(w, (a, h), c)
        np.add.at(w, (b, h), c)
        return w

    @cached_property
    def leaf_budget(self) -> np.ndarray:
        """budget_a = floor(iota * T_a + 1e-9): the load a stage may take from leaf a."""
        return np.floor(self.iota * self.load.sum(axis=1) + EPS).astype(np.int64)

    @cached_property
    def alone(self) -> np.ndarray:
        """Changed groups that alone exceed some leaf's budget (each staged alone)."""
        w = self.load[:, self.changed]
        return self.changed[(w > self.leaf_budget[:, None]).any(axis=0)]

    @cached_property
    def packable(self) -> np.ndarray:
        """Changed groups that fit a stage alone: the ones the models pack together."""
        return np.setdiff1d(self.changed, self.alone)

    @classmethod
    def from_dict(cls, d: dict) -> "StagingInstance":
        if "fabric" not in d:
            raise InstanceError("fabric", "missing")
        fab = Fabric.from_dict(d["fabric"])
        wiring = check_wiring_name(text("wiring", d.get("wiring", "cross")))
        guard_logical(fab)                        # before any array is built
        has_cfg = [k for k in ("old", "new") if k in d]
        if "changed" in d and has_cfg:
            raise InstanceError(has_cfg[0], "give either 'old' and 'new' or 'changed', not both")
        old = new = None
        if has_cfg:
            if len(has_cfg) == 1:
                other = "new" if has_cfg[0] == "old" else "old"
                raise InstanceError(other, f"missing (give both 'old' and 'new', or 'changed')")
            guard_reconfig(fab, wiring)
            w = make_wiring(fab, wiring)
            old, new = (_config(d, k, (fab.H, w.n_ocs, w.n_ports)) for k in ("old", "new"))
            changed = changed_groups(old, new)
        elif "changed" in d:
            changed = _changed(d["changed"], fab.H)
        else:
            raise InstanceError("changed", "missing (give 'old' and 'new' configurations, or "
                                "the list 'changed' of group indices)")
        if "split" not in d:
            raise InstanceError("split", "missing (give L_abh as [[a, b, h, count], ...], e.g. a "
                                "lumos-logical solution's entries)")
        split = parse_split(d["split"], fab)
        iota = number("iota", d.get("iota", DEFAULT_IOTA), lo=0.0, strict_lo=True, hi=1.0)
        return cls(fab, split, changed, iota, wiring, old, new, d.get("name", "lumos-staging"),
                   dict(d.get("meta", {})))

    def to_dict(self) -> dict:
        d = {"problem": self.problem, "format": 1, "name": self.name,
             "fabric": self.fabric.to_dict(), "wiring": self.wiring, "iota": self.iota}
        if self.old is not None:
            d["old"] = {"circuits": self.old.circuits().tolist()}
            d["new"] = {"circuits": self.new.circuits().tolist()}
        else:
            d["changed"] = self.changed.tolist()
        d["split"] = self.split.tolist()
        if self.meta:
            d["meta"] = self.meta
        return d


def _config(d: dict, key: str, shape: tuple) -> OcsConfig:
    o = obj(key, d[key])
    known_fields(key, o, ("circuits", "meta"))
    if "circuits" not in o:
        raise InstanceError(f"{key}.circuits", "missing (give [[h, k, in, out], ...])")
    obj(f"{key}.meta", o.get("meta", {}))
    return OcsConfig.from_circuits(o["circuits"], shape, f"{key}.circuits")


def _changed(value, H: int) -> np.ndarray:
    items = seq("changed", value, max_len=per_instance(H))
    out = [number(f"changed[{i}]", v, integer=True, lo=0, hi=per_instance(H - 1))
           for i, v in enumerate(items)]
    if len(set(out)) != len(out):
        i = next(i for i, v in enumerate(out) if v in out[:i])
        raise InstanceError(f"changed[{i}]", f"group {out[i]} listed twice")
    return np.array(sorted(out), dtype=np.int64)


# ----------------------------------------------------------------------------------------
# solution and checker
# ----------------------------------------------------------------------------------------
@dataclass
class Staging:
    """``stages[s]`` = the groups reconfigured together in stage s (in order)."""

    stages: list[list[int]]
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {"stages": [[int(h) for h in s] for s in self.stages]}
        if self.meta:
            d["meta"] = self.meta
        return d


def stage_fractions(inst: StagingInstance, groups) -> np.ndarray:
    """Affected fraction of every leaf's flows when ``groups`` are reconfigured together
    (0 for leaves without flows)."""
    T = inst.load.sum(axis=1)
    hit = inst.load[:, np.asarray(groups, dtype=np.int64)].sum(axis=1)
    return np.divide(hit, T, out=np.zeros(len(T)), where=T > 0)


def _index(h, H: int) -> bool:
    return isinstance(h, (int, np.integer)) and not isinstance(h, bool) and 0 <= h < H


def check_staging(inst: StagingInstance, sol: Staging) -> tuple[list[str], dict]:
    """Independent verifier: the stages partition the changed groups; in every stage of two
    or more groups each leaf loses at most iota of its flows (a stage of one group is
    always allowed: the singleton exemption). Metrics: stages (the objective), the largest
    affected fraction, groups changed, groups staged alone."""
    bad: list[str] = []
    H, changed = inst.fabric.H, set(inst.changed.tolist())
    seen: dict[int, int] = {}
    T = inst.load.sum(axis=1)
    worst = 0.0
    for s, stage in enumerate(sol.stages):
        if len(stage) == 0:
            bad.append(f"stage {s} is empty")
            continue
        for h in stage:
            if not _index(h, H):
                bad.append(f"stage {s}: {h!r} is not a group index in [0, {H})")
            elif int(h) not in changed:
                bad.append(f"stage {s}: group {h} does not change")
            elif int(h) in seen:
                bad.append(f"group {h} is in stages {seen[int(h)]} and {s}")
            else:
                seen[int(h)] = s
        valid = [int(h) for h in stage if _index(h, H)]
        hit = inst.load[:, valid].sum(axis=1)
        frac = np.divide(hit, T, out=np.zeros(len(T)), where=T > 0)
        worst = max(worst, float(frac.max(initial=0.0)))
        over = np.flatnonzero(frac > inst.iota + EPS)
        if len(stage) > 1 and len(over):
            a = int(over[0])
            bad.append(f"stage {s} (groups {sorted(valid)}): leaf {a} loses {hit[a]}/{T[a]} = "
                       f"{frac[a]:.4g} of its flows > iota = {inst.iota:g}")
    missing = sorted(changed - set(seen))
    if missing:
        bad.append(f"changed groups {missing[:10]} are in no stage")
    m = {"stages": len(sol.stages), "max_affected_fraction": worst,
         "groups_changed": len(changed), "groups_alone": len(inst.alone), "iota": inst.iota}
    return bad, m
