"""A hypothesis draw of random delta instances (DAGs of inter-Pod tasks), shared by the
simulator, termination and NCT tests; each passes its own ranges."""
from __future__ import annotations

from hypothesis import strategies as st

import instances


def delta_dag(draw, *, pods=(2, 4), tasks=(1, 10), flows=(1, 3), gpus=5, volume=(0.1, 10),
              delay=(0, 3), dep_one_in=4, bandwidth=st.floats(0.5, 4),
              ports=lambda n: st.just(3 * n), release=(0, 2), tail=(0, 2)):
    """An instance whose tasks join random Pod pairs with ``flows`` GPU pairs each, a
    dependency i -> j (i < j) with probability 1 / ``dep_one_in`` and a delay in ``delay``;
    ``ports(n_pods)`` draws each Pod's port count."""
    n_pods = draw(st.integers(*pods))
    n_tasks = draw(st.integers(*tasks))
    names = [f"P{i}" for i in range(n_pods)]
    out = []
    for _ in range(n_tasks):
        a = draw(st.integers(0, n_pods - 1))
        b = draw(st.integers(0, n_pods - 2))
        b = b + 1 if b >= a else b
        f = draw(st.integers(*flows))
        g = draw(st.lists(st.integers(0, gpus), min_size=f, max_size=f, unique=True))
        out.append({"src_pod": names[a], "dst_pod": names[b], "flows": f,
                    "volume": draw(st.floats(*volume)), "src_gpus": [100 * a + x for x in g],
                    "dst_gpus": [100 * b + 50 + x for x in g]})
    deps = [[i, j, draw(st.floats(*delay))] for i in range(n_tasks)
            for j in range(i + 1, n_tasks) if draw(st.integers(0, dep_one_in - 1)) == 0]
    return instances.from_dict({
        "problem": "delta", "bandwidth": draw(bandwidth),
        "pods": [{"name": p, "ports": draw(ports(n_pods))} for p in names], "tasks": out,
        "deps": deps, "release": [draw(st.floats(*release)) for _ in out],
        "tail": [draw(st.floats(*tail)) for _ in out]})
