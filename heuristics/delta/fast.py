"""DELTA-Fast: a genetic algorithm over topologies with the simulator as fitness.

Ye et al. 2026, Section IV-B and Appendices C-D; delta spec 3.4. Algorithms:
  4 CalTaskTimeWindows    - earliest start / latest completion per task (longest paths);
  2 XUpperBoundEstimation - circuits beyond the largest antichain of concurrently possible
                            flows on a link are useless (NICs cap each flow at B);
  5 FeasibleRandomInit    - random topology within budgets, one port reserved per later link;
  6 RepairTopo            - clip to [1, X-bar], then remove circuits from overloaded Pods;
  3 the GA                - elitism, tournament, uniform crossover, mutation, repair.
Fitness is lexicographic (simulated makespan C, ports used), memoized per topology.
Parameters (not in the paper) are the spec's defaults; everything is seeded.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from heuristics.delta.sim import SimulationInterrupted, compile_graph, simulate
from instances.dag import max_weight_antichain, topological_order
from instances.delta.instance import DeltaInstance, x_max


# ------------------------------------------------------------------------------------------
# Algorithm 4 and Algorithm 2
# ------------------------------------------------------------------------------------------
def task_windows(inst: DeltaInstance, t_hat: float) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 4: EST from releases forward, LCT from T_hat minus tails backward, with minimum
    durations tau_m = V_m / (F_m B)."""
    tau = inst.volume / (inst.flows * inst.bandwidth)
    est = inst.release.astype(float).copy()
    lct = t_hat - inst.tail
    pre, suc, dl = inst.deps[:, 0].astype(int), inst.deps[:, 1].astype(int), inst.deps[:, 2]
    order = topological_order(inst.n_tasks, pre, suc)
    out_e = [[] for _ in range(inst.n_tasks)]
    in_e = [[] for _ in range(inst.n_tasks)]
    for i, (a, b) in enumerate(zip(pre, suc)):
        out_e[a].append(i)
        in_e[b].append(i)
    for u in order:
        for i in out_e[u]:
            est[suc[i]] = max(est[suc[i]], est[u] + tau[u] + dl[i])
    for v in order[::-1]:
        for i in in_e[v]:
            lct[pre[i]] = min(lct[pre[i]], lct[v] - tau[v] - dl[i])
    return est, lct


def transitive_closure(inst: DeltaInstance) -> np.ndarray:
    """Boolean reachability between tasks (bitset rows in reverse topological order)."""
    M = inst.n_tasks
    R = np.zeros((M, M), dtype=bool)
    pre, suc = inst.deps[:, 0].astype(int), inst.deps[:, 1].astype(int)
    succ = [[] for _ in range(M)]
    for a, b in zip(pre, suc):
        succ[a].append(b)
    for v in topological_order(M, pre, suc)[::-1]:
        for w in succ[v]:
            R[v, w] = True
            R[v] |= R[w]
    return R


def _active(inst: DeltaInstance) -> np.ndarray:
    """Links with traffic (the GA's genes, spec 3.4.3); a listed link no task uses keeps x = 0."""
    active = np.zeros(len(inst.links), bool)
    active[inst.link_of] = True
    return active


def x_upper_bound(inst: DeltaInstance, t_hat: float) -> np.ndarray:
    """Alg. 2: X-bar per link = the most flows that can be concurrent on either direction
    (0 on a link without traffic)."""
    est, lct = task_windows(inst, t_hat)
    R = transitive_closure(inst)
    res = inst.res_of
    xbar = np.zeros(len(inst.links))
    cache: dict[tuple, float] = {}
    for r in np.unique(res):
        tasks = np.flatnonzero(res == r)
        T = np.unique(np.concatenate([est[tasks], lct[tasks]]))
        for k in range(len(T) - 1):
            mid = (T[k] + T[k + 1]) / 2
            act = tuple(tasks[(est[tasks] <= mid) & (mid < lct[tasks])])
            if not act:
                continue
            if act not in cache:
                idx = np.array(act)
                # the most flows of tasks no dependency orders (instances.dag: exact)
                cache[act] = max_weight_antichain(inst.flows[idx], R[np.ix_(idx, idx)])
            xbar[r // 2] = max(xbar[r // 2], cache[act])
    return np.where(_active(inst), np.maximum(1.0, np.minimum(xbar, x_max(inst))), 0.0)


# ------------------------------------------------------------------------------------------
# Algorithms 5 and 6
# ------------------------------------------------------------------------------------------
def feasible_random_init(inst: DeltaInstance, xbar: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Alg. 5 with orbit multiplicities: random circuits, one port reserved per later link
    (links without traffic are not in E: they stay at 0)."""
    A, U = inst.incidence, inst.ports
    active = _active(inst)
    used = np.zeros(len(U))
    future = A[:, active].sum(axis=1)        # ports still reserved for unprocessed links
    x = np.zeros(len(inst.links))
    for e in rng.permutation(np.flatnonzero(active)):
        ends = np.flatnonzero(A[:, e] > 0)
        future[ends] -= A[ends, e]
        spare = U[ends] - used[ends] - future[ends]
        limit = int(min(np.min(np.floor(spare / A[ends, e])), xbar[e]))
        limit = max(1, limit)
        x[e] = rng.integers(1, limit + 1)
        used[ends] += A[ends, e] * x[e]
    return x


def repair_topo(x: np.ndarray, inst: DeltaInstance, xbar: np.ndarray,
                rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Alg. 6: clip to [1, X-bar] (to 0 on a link without traffic), then drop circuits at
    random overloaded Pods."""
    A, U = inst.incidence, inst.ports
    active = _active(inst)
    x = np.where(active, np.clip(np.round(x), 1, np.maximum(1, xbar)), 0.0)
    while True:
        over = np.flatnonzero(A @ x > U + 1e-9)
        if not over.size:
            return x, True
        p = rng.choice(over)
        cand = np.flatnonzero((A[p] > 0) & (x > 1))
        if not cand.size:
            return x, False
        x[rng.choice(cand)] -= 1


# ------------------------------------------------------------------------------------------
# Algorithm 3
# ------------------------------------------------------------------------------------------
@dataclass
class GAResult:
    x: np.ndarray
    makespan: float
    ports: float
    generations: int
    evaluations: int
    runtime_s: float
    history: list = field(default_factory=list)   # (generation, seconds, best C)
    stop: str = "stall"       # why it stopped: stall, generations or time_limit


_WORKER: dict = {}


def _worker_init(data: dict, policy: str) -> None:
    import instances

    inst = instances.from_dict(data)
    _WORKER.update(graph=compile_graph(inst), policy=policy)


def _worker_eval(job) -> float:
    x, deadline = job
    return _fitness(_WORKER["graph"], x, _WORKER["policy"], deadline)


def _fitness(g, x, policy: str, deadline: float | None) -> float:
    """Simulated makespan of ``x``; SimulationInterrupted once ``deadline`` has passed
    (checked before the simulation and, every 64 events, inside it)."""
    if deadline is not None and time.monotonic() > deadline:
        raise SimulationInterrupted("deadline passed between simulations")
    return simulate(g, np.asarray(x, float), policy=policy, trace=False, deadline=deadline).makespan


def delta_fast(inst: DeltaInstance, pop: int = 64, generations: int = 5000, stall: int = 200,
               time_limit: float = float("inf"), seed: int = 0, xbar: np.ndarray | None = None,
               seeds: list | None = None, policy: str = "maxmin", check=None,
               workers: int = 1) -> GAResult:
    """Alg. 3 SimBasedDomainAdaptedGA. Stops after ``stall`` generations without a better
    (C, ports), after ``generations``, or at ``time_limit`` seconds: the limit is a deadline
    that every simulation checks (issue 18), so the GA returns its best simulated topology
    soon after it, whatever the simulator is doing (``stop`` = "time_limit"); the default,
    an infinite limit, never reads the clock for control, so the result depends only on
    the arguments (the CLI passes the user's time limit, as ``solve.py`` does). ``seeds`` are initial
    topologies (e.g. the baselines, repaired); ``check(x)`` is called on every individual.
    ``workers`` > 1 simulates each generation's new topologies in a process pool (same
    results: the fitness is deterministic and memoized per topology)."""
    if workers <= 1:
        return _ga(inst, pop, generations, stall, time_limit, seed, xbar, seeds, policy, check,
                   None)
    from toolkit.pools import pool
    from toolkit.threads import share

    # workers from the forkserver (toolkit.pools), this process's share of the cores split
    with pool(workers, modules=("heuristics.delta.fast",), share=share() // workers,
              initializer=_worker_init, initargs=(inst.to_dict(derived=True), policy)) as ex:
        return _ga(inst, pop, generations, stall, time_limit, seed, xbar, seeds, policy, check,
                   ex)


def _ga(inst, pop, generations, stall, time_limit, seed, xbar, seeds, policy, check, pool):
    t0 = time.perf_counter()
    deadline = time.monotonic() + time_limit if np.isfinite(time_limit) else None
    g = compile_graph(inst)
    mult = inst.incidence.sum(axis=0)
    memo: dict[tuple, tuple[float, float]] = {}
    state = {"history": [], "gen": 0}
    try:
        return _ga_loop(inst, g, pop, generations, stall, seed, xbar, seeds, policy, check, pool,
                        t0, deadline, mult, memo, state)
    except SimulationInterrupted:
        pass
    # the deadline passed: the best topology simulated so far (else a seed or baseline)
    if memo:
        k = min(memo, key=lambda k: memo[k])
        x, (c, ports) = np.array(k, float), memo[k]
    else:
        from heuristics.delta.baselines import BASELINES

        x = np.asarray(seeds[0] if seeds else next(iter(BASELINES.values()))(inst), float)
        c, ports = np.nan, float(mult @ x)
    return GAResult(x, c, ports, state["gen"], len(memo), time.perf_counter() - t0,
                    state["history"], stop="time_limit")


def _ga_loop(inst, g, pop, generations, stall, seed, xbar, seeds, policy, check, pool,
             t0, deadline, mult, memo, state):
    rng = np.random.default_rng(seed)
    if xbar is None:
        from heuristics.delta.baselines import BASELINES

        t_hat = min(_fitness(g, fn(inst), "maxmin", deadline) for fn in BASELINES.values())
        xbar = x_upper_bound(inst, t_hat)

    def evaluate_all(xs):
        """Fitness of a generation; new topologies are simulated (in parallel with a pool)."""
        keys = [tuple(int(v) for v in x) for x in xs]
        new = list(dict.fromkeys(k for k in keys if k not in memo))
        for k in new:
            if check is not None:
                check(np.array(k, float))
        if pool is not None and len(new) > 1:
            spans = pool.map(_worker_eval, [(k, deadline) for k in new],
                             chunksize=max(1, len(new) // 8))
        else:
            spans = (_fitness(g, k, policy, deadline) for k in new)
        for k, c in zip(new, spans):      # memo grows one simulation at a time
            memo[k] = (c, float(mult @ np.array(k, float)))
        return [memo[k] for k in keys]

    def better(a, b):     # lexicographic with a relative tolerance on C
        if a[0] < b[0] * (1 - 1e-9):
            return True
        return abs(a[0] - b[0]) <= 1e-9 * max(1.0, b[0]) and a[1] < b[1]

    population = []
    for s0 in (seeds or [])[:pop]:
        x, ok = repair_topo(np.asarray(s0, float), inst, xbar, rng)
        population.append(x if ok else feasible_random_init(inst, xbar, rng))
    while len(population) < pop:
        population.append(feasible_random_init(inst, xbar, rng))
    fit = evaluate_all(population)
    best_i = min(range(pop), key=lambda i: (fit[i][0], fit[i][1]))
    best_x, best_f = population[best_i].copy(), fit[best_i]
    history = state["history"]
    history.append((0, time.perf_counter() - t0, best_f[0]))
    n_elite = max(2, int(np.ceil(0.05 * pop)))
    p_m = max(1.0 / max(1, len(xbar)), 0.05)
    since, gen, stop = 0, 0, "generations"
    for gen in range(1, generations + 1):
        state["gen"] = gen - 1
        order = sorted(range(pop), key=lambda i: (fit[i][0], fit[i][1]))
        new = [population[i].copy() for i in order[:n_elite]]
        while len(new) < pop:
            p1 = _tournament(population, fit, rng)
            p2 = _tournament(population, fit, rng)
            if rng.random() < 0.9:
                child = np.where(rng.random(len(p1)) < 0.5, p1, p2).astype(float)
            else:
                child = p1.copy()
            for e in np.flatnonzero(rng.random(len(child)) < p_m):
                if rng.random() < 0.5:
                    child[e] += rng.choice([-2, -1, 1, 2])
                else:
                    child[e] = rng.integers(1, max(1, int(xbar[e])) + 1)
            child, ok = repair_topo(child, inst, xbar, rng)
            new.append(child if ok else feasible_random_init(inst, xbar, rng))
        population = new
        fit = evaluate_all(population)
        i = min(range(pop), key=lambda j: (fit[j][0], fit[j][1]))
        if better(fit[i], best_f):
            best_x, best_f, since = population[i].copy(), fit[i], 0
            history.append((gen, time.perf_counter() - t0, best_f[0]))
        else:
            since += 1
        if since >= stall:
            stop = "stall"
            break
        if deadline is not None and time.monotonic() > deadline:
            stop = "time_limit"
            break
    return GAResult(best_x, best_f[0], best_f[1], gen, len(memo), time.perf_counter() - t0, history,
                    stop=stop)


def _tournament(population, fit, rng, size: int = 3) -> np.ndarray:
    idx = rng.choice(len(population), size=size, replace=False)
    best = min(idx, key=lambda i: (fit[i][0], fit[i][1]))
    return population[best]
