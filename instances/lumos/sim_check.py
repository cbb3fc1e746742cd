"""Independent checker of a ``lumos-sim`` solution (spec 2.12, 4.2 [DECISION]; issue 16).

It reads only the solution's job records (``job``, ``admitted_s``, ``start_s``,
``finish_s``, ``jrt_s``, ``jwt_s``, ``jct_s``; ``cl_ar`` / ``cl_a2a`` for the metrics) and
reconfiguration records (``wall_s``), and the instance's job list; nothing of the
simulator. ``admitted_s`` is when a job's GPUs were allocated; its start may follow by the
OCS algorithm's time ([001]: JWT includes it). Records without ``admitted_s`` are read as
admitted at their start (then the rules below hold for the starts). Rules:

1. every job of the instance finished exactly once (no unknown ids);
2. arrival <= admitted <= start; admitted == start on an architecture without OCS;
3. strict FIFO ([002] A.11): in (arrival, id) order neither the admissions nor the starts
   decrease (admissions pass the OCS controller in order, heuristics.lumos.sim.engine);
4. the GPUs held (admission to finish) never exceed the cluster: a sweep over the events,
   finishes first at equal times;
5. JRT >= T: the contention level ([002] eq. 10) is at least 1 (Best, an ideal switch at
   the 1.6 Tb/s NIC, is the fastest any job runs), so a job never runs faster than its
   trace time; this implies the weaker JRT >= (1 - z_ar - z_a2a) T (contention never
   speeds a job below its compute share). On ``best``: JRT == T;
6. the recorded JRT = finish - start, JWT = start - arrival and JCT = JWT + JRT;
7. no reconfiguration records on an architecture without OCS (``best``, Clos).
Times compare within 1e-6 s + 1e-9 x |t|.

Metrics (recomputed from start / finish and the instance, not read from the records):
``avg_jct_s`` (the objective, Avg.JCT), ``avg_jrt_s``, ``avg_jwt_s``, ``p99_jct_s``
(numpy's linear percentile), ``makespan_s`` (last finish - first arrival),
``mean_slowdown`` (mean JRT / T); read from the records: ``mean_cl_ar``, ``mean_cl_a2a``
(job means of the time-averaged contention levels), ``reconfigurations``,
``reconfig_s_mean``, ``reconfig_s_max`` (the measured algorithm time per
reconfiguration); ``jobs``.
"""
from __future__ import annotations

import numpy as np

from instances.lumos.sim import SimInstance

TIMES = ("start_s", "finish_s", "jrt_s", "jwt_s", "jct_s")


def _tol(x) -> np.ndarray:
    return 1e-6 + 1e-9 * np.abs(x)


def _numbers(recs: list, key: str, what: str) -> tuple[np.ndarray | None, str | None]:
    """Column ``key`` of the records as a float array, or an error naming the first bad one."""
    vals = []
    for k, r in enumerate(recs):
        v = r.get(key) if isinstance(r, dict) else None
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not np.isfinite(v):
            return None, f"{what} record {k}: {key} must be a finite number, got {v!r}"
        vals.append(float(v))
    return np.array(vals, dtype=float), None


def _identity(ids_raw: np.ndarray, n: int) -> list[str]:
    bad = []
    if np.any(ids_raw != np.round(ids_raw)) or np.any((ids_raw < 0) | (ids_raw >= n)):
        k = int(np.flatnonzero((ids_raw != np.round(ids_raw)) | (ids_raw < 0) | (ids_raw >= n))[0])
        return [f"job record {k}: job {ids_raw[k]:g} is not a job of the instance (ids 0..{n - 1})"]
    cnt = np.bincount(ids_raw.astype(np.int64), minlength=n)
    if (cnt == 0).any():
        miss = np.flatnonzero(cnt == 0)
        bad.append(f"{len(miss)} jobs never finished (first: job {miss[0]})")
    if (cnt > 1).any():
        bad.append(f"job {np.flatnonzero(cnt > 1)[0]} finished {cnt[cnt > 1][0]} times")
    return bad


def check_sim(inst: SimInstance, sol) -> tuple[list[str], dict]:
    """(violations, metrics) of ``sol`` (a ``SimSolution``, or anything with ``jobs`` and
    ``reconfigs`` record lists) for ``inst`` (module docstring)."""
    recs, rcf = getattr(sol, "jobs", None), getattr(sol, "reconfigs", None)
    if not isinstance(recs, list) or not isinstance(rcf, list):
        return ["the solution must hold lists of job and reconfiguration records"], {}
    n = len(inst.jobs)
    ids_raw, err = _numbers(recs, "job", "job")
    if err:
        return [err], {}
    bad = _identity(ids_raw, n)
    if bad:
        return bad, {}
    cols = {}
    for key in TIMES:
        cols[key], err = _numbers(recs, key, "job")
        if err:
            return [err], {}
    ids = ids_raw.astype(np.int64)
    inv = np.empty(n, dtype=np.int64)
    inv[ids] = np.arange(n)                      # record row of job id
    c = {k: v[inv] for k, v in cols.items()}     # indexed by job id
    a = inst.arrays()
    arr, T, g = a["arrival_s"], a["duration_s"], a["gpus"]
    start, finish = c["start_s"], c["finish_s"]
    adm = start
    if any(isinstance(r, dict) and "admitted_s" in r for r in recs):
        adm, err = _numbers(recs, "admitted_s", "job")
        if err:
            return [err], {}
        adm = adm[inv]
    jrt, jwt, jct = finish - start, start - arr, finish - arr
    # 2. arrival <= admitted <= start (== start without OCS)
    for j_bad, what in ((np.flatnonzero(adm < arr - _tol(arr)), "is admitted at {a:.6g} s, "
                         "before its arrival at {r:.6g} s"),
                        (np.flatnonzero(start < adm - _tol(adm)), "starts at {s:.6g} s, before "
                         "its admission at {a:.6g} s"),
                        (np.flatnonzero(np.abs(start - adm) > _tol(adm)) if not inst.is_ocs
                         else [], "starts at {s:.6g} s, not at its admission at {a:.6g} s "
                         "(no OCS algorithm to wait for)")):
        if len(j_bad):
            j = j_bad[0]
            bad.append(f"job {j} " + what.format(a=adm[j], r=arr[j], s=start[j]))
    # 3. strict FIFO: admissions and starts in (arrival, id) order
    order = np.lexsort((np.arange(n), arr))
    for times, verb in ((adm, "is admitted"), (start, "starts")):
        s = times[order]
        back = np.flatnonzero(s[1:] < s[:-1] - _tol(s[:-1]))
        if len(back):
            i, j = order[back[0]], order[back[0] + 1]
            bad.append(f"not FIFO: job {j} (arrival {arr[j]:.6g} s) {verb} at {times[j]:.6g} s, "
                       f"before job {i} (arrival {arr[i]:.6g} s) at {times[i]:.6g} s")
            break
    # 4. GPUs held never exceed the cluster (finishes first at equal times)
    t = np.concatenate([finish, adm])
    d = np.concatenate([-g, g])
    ev = np.lexsort((d, t))
    use = np.cumsum(d[ev])
    peak = int(np.argmax(use))
    if use[peak] > inst.cluster.n_gpus:
        bad.append(f"{use[peak]} GPUs held at t = {t[ev][peak]:.6g} s, the cluster has "
                   f"{inst.cluster.n_gpus}")
    # 5. JRT >= T (contention level >= 1); == T on Best
    slow = np.flatnonzero(jrt < T - _tol(T))
    if len(slow):
        j = slow[0]
        bad.append(f"job {j} runs {jrt[j]:.6g} s, less than its trace time T = {T[j]:.6g} s "
                   f"(contention level below 1)")
    if inst.arch == "best":
        off = np.flatnonzero(np.abs(jrt - T) > _tol(T))
        if len(off):
            j = off[0]
            bad.append(f"job {j} runs {jrt[j]:.6g} s on best, not its trace time {T[j]:.6g} s")
    # 6. the recorded JRT, JWT, JCT
    for key, val in (("jrt_s", jrt), ("jwt_s", jwt), ("jct_s", c["jwt_s"] + c["jrt_s"]),
                     ("jct_s", jct)):
        off = np.flatnonzero(np.abs(c[key] - val) > _tol(val))
        if len(off):
            j = off[0]
            bad.append(f"job {j}: recorded {key} = {c[key][j]:.6g}, expected {val[j]:.6g}"
                       + (" (JCT = JWT + JRT)" if key == "jct_s" else ""))
            break
    # 7. no OCS, no reconfiguration
    if rcf and not inst.is_ocs:
        bad.append(f"{len(rcf)} reconfiguration records on {inst.arch}, which has no OCS")
    m = {"avg_jct_s": float(jct.mean()), "avg_jrt_s": float(jrt.mean()),
         "avg_jwt_s": float(jwt.mean()), "p99_jct_s": float(np.percentile(jct, 99)),
         "makespan_s": float(finish.max() - arr.min()),
         "mean_slowdown": float(np.mean(jrt / T)), "jobs": n}
    for key in ("cl_ar", "cl_a2a"):
        v, err = _numbers(recs, key, "job")
        m[f"mean_{key}"] = None if err else float(v.mean())
    wall, err = _numbers(rcf, "wall_s", "reconfiguration")
    if err and rcf:
        bad.append(err)
    m["reconfigurations"] = len(rcf)
    m["reconfig_s_mean"] = float(wall.mean()) if rcf and not err else None
    m["reconfig_s_max"] = float(wall.max()) if rcf and not err else None
    return bad, m
