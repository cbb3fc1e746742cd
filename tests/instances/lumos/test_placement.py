"""The placement data type (spec 2.8): GPU geometry, validation, domains, round trip."""
from __future__ import annotations

import numpy as np
import pytest

from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster, Job, Placement

# 2 Pods x 2 leaves (k_spine 4, tau 2), k_leaf 8 GPUs per leaf, 2 servers of 4 GPUs per leaf
CL = Cluster(Fabric(2, 8, 4, 2), 4)


def test_geometry():
    assert (CL.servers_per_leaf, CL.gpus_per_pod, CL.n_gpus, CL.n_servers) == (2, 16, 32, 8)
    g = np.array([0, 3, 4, 8, 15, 16, 31])
    assert CL.server_of(g).tolist() == [0, 0, 1, 2, 3, 4, 7]
    assert CL.leaf_of(g).tolist() == [0, 0, 0, 1, 1, 2, 3]
    assert CL.pod_of(g).tolist() == [0, 0, 0, 0, 0, 1, 1]


def test_placement_domains():
    p = Placement(CL, Job(8, tp=2, pp=2, dp=2, ep=4), [13, 12, 4, 5, 16, 17, 18, 19])
    assert p.gpus.tolist() == [4, 5, 12, 13, 16, 17, 18, 19]
    assert p.pods().tolist() == [0, 1] and p.leaves().tolist() == [0, 1, 2]
    assert p.servers().tolist() == [1, 3, 4] and p.gpus_per_pod().tolist() == [4, 4]
    assert p.tp_groups().tolist() == [[4, 5], [12, 13], [16, 17], [18, 19]]
    assert p.ep_domains().tolist() == [[4, 5, 12, 13], [16, 17, 18, 19]]
    assert p.cross_pod_ep_domains() == 0
    q = Placement(CL, Job(8, tp=2, pp=2, dp=2, ep=8), p.gpus)
    assert q.cross_pod_ep_domains() == 1


def test_round_trip():
    p = Placement(CL, Job(4, tp=4, model="gpt"), [20, 21, 22, 23], {"method": "hand"})
    back = Placement.from_dict(p.to_dict(), Cluster.from_dict(CL.to_dict()))
    assert back.gpus.tolist() == p.gpus.tolist() and back.job == p.job and back.meta == p.meta


@pytest.mark.parametrize("job,gpus,field,words", [
    (Job(4, tp=4), [0, 1, 2, 32], "gpus", "does not exist"),
    (Job(4, tp=4), [0, 1, 2, -1], "gpus", "does not exist"),
    (Job(4, tp=2, dp=2), [0, 1, 1, 2], "gpus", "twice"),
    (Job(4, tp=2, dp=2), [0, 1, 2], "gpus", "needs 4"),
    (Job(4, tp=4), [2, 3, 4, 5], "gpus", "tp = 4"),            # TP split over servers 0, 1
    (Job(4, tp=2, dp=2), [0, 1, 2, 4], "gpus", "tp = 2"),            # server 0 holds 3
])
def test_invalid_placements(job, gpus, field, words):
    with pytest.raises(InstanceError) as e:
        Placement(CL, job, np.array(gpus))
    assert e.value.field == field and words in e.value.msg


@pytest.mark.parametrize("kw,field", [
    (dict(gpus=6, tp=2, pp=2, dp=2), "job.gpus"), (dict(gpus=8, tp=2, pp=2, dp=2, ep=3), "job.ep"),
    (dict(gpus=0), "job.gpus"), (dict(gpus=2, tp=True, pp=2), "job.tp"),
])
def test_invalid_jobs(kw, field):
    with pytest.raises(InstanceError) as e:
        Job(**kw)
    assert e.value.field == field


def test_bad_dicts_name_the_field():
    with pytest.raises(InstanceError, match="job.color"):
        Job.from_dict({"gpus": 1, "color": 2})
    with pytest.raises(InstanceError, match=r"gpus\[1\]"):
        Placement.from_dict({"job": {"gpus": 2, "tp": 2}, "gpus": [0, "1"]}, CL)
    with pytest.raises(InstanceError, match="gpus_per_server"):
        Cluster(Fabric(2, 8, 4, 2), 3)                      # does not divide k_leaf


def test_check_free():
    p = Placement(CL, Job(4, tp=4), [4, 5, 6, 7])
    busy = np.zeros(32, dtype=bool)
    p.check_free(busy)
    busy[6] = True
    with pytest.raises(InstanceError, match="GPU 6 is busy"):
        p.check_free(busy)
