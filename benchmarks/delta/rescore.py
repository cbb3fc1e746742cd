"""NCT of cached DELTA runs, rescored from their iteration time (issue 18, item 3).

The NCT (heuristics/delta/nct.py) is an affine function of a run's iteration time C fixed
by the instance's ideal reference: NCT = (C - NC*) / (C* - NC*). The raw runs in
``results/delta/delta_runs/`` were partly written under the older backward-chain definition, so
the reports never read their ``nct`` column: they rescore every row from ``iteration_time``
and the instance file, and a cached row cannot show a stale definition.

[D] A row without ``nct_chain`` predates the new NCT: its recorded ``nct`` was the spec 4.4
backward chain, kept as the diagnostic ``nct_chain``. ``nct_recorded`` keeps the cell as
written; ``ideal_shift`` is the relative change of the ideal iteration time against the
recorded one (the simulator changed since some runs: it should be round-off).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from heuristics.delta.nct import ideal_reference, nct_metrics
from instances import load_instance


def rescore_nct(df: pd.DataFrame, base: Path | None = None) -> pd.DataFrame:
    """``df`` (batch rows of delta runs) with ``nct`` and ``nct_exposed`` recomputed from
    ``iteration_time`` and each row's instance file: its ``path`` under ``base`` (the runs
    CSV's folder) when given, else its ``instance`` as written."""
    out = df.copy().reset_index(drop=True)
    files = out["instance"].astype(str)
    if base is not None and "path" in out:
        files = files.where(out["path"].isna(), [str(Path(base) / p) for p in out["path"].fillna("")])
    for col in ("nct", "nct_chain", "nct_exposed", "ideal_iteration_time"):
        if col not in out:
            out[col] = np.nan
    out["nct_recorded"] = out["nct"]
    old = out["nct_chain"].isna() & out["nct"].notna()
    out.loc[old, "nct_chain"] = out.loc[old, "nct"]
    recorded_ideal = out["ideal_iteration_time"].astype(float)
    nct = np.full(len(out), np.nan)
    exposed, ideal = nct.copy(), nct.copy()
    for path, idx in out.groupby(files).groups.items():
        inst = load_instance(path)
        for i in idx:
            C = float(out.at[i, "iteration_time"])
            if np.isfinite(C):
                m = nct_metrics(inst, C)
                nct[i], exposed[i] = m["nct"], m["nct_exposed"]
            ideal[i] = ideal_reference(inst)["ideal_iteration_time"]
    out["nct"], out["nct_exposed"], out["ideal_iteration_time"] = nct, exposed, ideal
    out["ideal_shift"] = (ideal - recorded_ideal) / ideal
    return out


def ideal_shift_note(df: pd.DataFrame) -> str:
    """Report sentences: where the NCT differs from the backward chain, and how far the
    recomputed ideal iteration times moved."""
    s = df["ideal_shift"].abs().max() if "ideal_shift" in df else np.nan
    diff = (df["nct"] - df["nct_chain"]).abs() > 1e-6 * df["nct"].abs()
    imported = df["name"].astype(str).str.startswith("simai-") if "name" in df else diff & False
    parts = []
    for label, sel in (("reconstructed", ~imported), ("imported (`simai-*`)", imported)):
        if sel.any():
            moved = df[sel & diff]
            parts.append(f"{label}: {len(moved)} of {int(sel.sum())} runs" + (
                " (" + ", ".join(f"{r['name']} {r['method']} {r['nct_chain']:.3g} -> {r['nct']:.3g}"
                                 for _, r in moved.head(6).iterrows())
                + (", ..." if len(moved) > 6 else "") + ")" if len(moved) else ""))
    return ("NCT rescored from each run's iteration time and its instance's ideal reference "
            "(benchmarks/delta/rescore.py; heuristics/delta/nct.py); `nct_chain` = the spec 4.4 "
            "backward-chain value, a diagnostic (as recorded for runs made before issue 18). "
            "NCT differs from `nct_chain` on " + "; ".join(parts) + ". "
            + (f"The recomputed ideal iteration times differ from the recorded ones by at most "
               f"{s:.1e} (relative)." if np.isfinite(s) else ""))
