"""gap.png of a gap study (:mod:`toolkit.gap_report`): one block of panels per problem type
(two blocks side by side when there are more than two problem types).

Each block: (a) every run's gap to the best bound valid for its instance, per instance;
(b) the performance profile of the problem's methods over the problem's instances only;
the legend of the block's methods beside them, outside both axes. Each method row (a method,
or a variant ``milp:slots=2``) keeps one colour and one marker in both panels, and no two
method rows of the study share both (issue 28: :func:`styles`).
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

from models.gap import MIP_RTOL, TIE_RTOL

# tab10's colours and 12 markers: method j gets colour j % 10 and marker j % 12, so no two
# of the first lcm(10, 12) = 60 method rows share both, and a problem's (consecutive) method
# rows have distinct colours up to 10 of them
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "<", ">", "p", "h")
ROW_IN = 2.7            # inches per row of problem blocks

CAPTION = ("(a) relative gap of each run's objective to the best bound valid for its instance "
           "(the tightest bound any method proved for the instance, or a solver-proven optimum "
           f"that ties the best objective); 0 = optimal (within the solver's {MIP_RTOL:g} "
           "optimality gap when the bound is a proven optimum). A bound of a restricted model "
           "only (spectra milp's T slots) is not used. (b) performance profile: the fraction of "
           "the problem's instances where the method's objective is within a factor tau of the "
           f"best method's (objectives within {TIE_RTOL:g} relative tie; a failure or a decline "
           "is never within any tau).")


def styles(keys) -> dict:
    """(colour, marker) per key, in order: no two of the first 60 keys share both."""
    return {k: (PALETTE[j % len(PALETTE)], MARKERS[j % len(MARKERS)]) for j, k in enumerate(keys)}


def plot(recs: list[dict], path: Path) -> None:
    """Write gap.png of the ranked records ``recs`` to ``path``."""
    import matplotlib.pyplot as plt

    fig = figure(recs)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def figure(recs: list[dict]):
    """The matplotlib Figure of gap.png (ranked records ``recs``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from toolkit.gap_report import instance_key, method_keys, profile_ratios

    keys = method_keys(recs)
    probs = list(dict.fromkeys(p for p, _ in keys))
    style = styles(keys)
    ratios = profile_ratios(recs)
    cols = 2 if len(probs) > 2 else 1           # problem blocks side by side
    rows = -(-len(probs) // cols)
    tilt = max(len({instance_key(r) for r in recs if r["problem"] == p}) for p in probs) > 3
    label_in = 0.9 if tilt else 0.0             # room for slanted instance names
    height = 1.4 + label_in + (ROW_IN + label_in) * rows
    fig = plt.figure(figsize=(8.2 * cols if cols > 1 or not tilt else 11.0, height))
    outer = fig.add_gridspec(rows, cols, wspace=0.12, hspace=0.62 + (0.55 if tilt else 0.0),
                             top=1 - 0.35 / height, bottom=(1.15 + label_in) / height,
                             left=0.09 / cols, right=0.99)
    for b, prob in enumerate(probs):
        grid = outer[b // cols, b % cols].subgridspec(1, 3, width_ratios=(2.5, 2.3, 1.65),
                                                       wspace=0.42)
        mine = [k for k in keys if k[0] == prob]
        recs_p = [r for r in recs if r["problem"] == prob]
        insts = list(dict.fromkeys(instance_key(r) for r in recs_p))
        ax_gap, ax_prof = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        _gap_panel(ax_gap, prob, mine, recs_p, insts, style)
        _profile_panel(ax_prof, mine, ratios, style, len(insts))
        ax_leg = fig.add_subplot(grid[0, 2])
        ax_leg.axis("off")
        handles = [plt.Line2D([], [], color=style[k][0], marker=style[k][1], lw=1.5, ms=7)
                   for k in mine]
        leg = ax_leg.legend(handles, [k[1] for k in mine], loc="center left", fontsize=8,
                            title=prob, title_fontsize=9, frameon=False, borderaxespad=0)
        leg.get_title().set_fontweight("bold")
    wide = fig.get_figwidth() / 8.2
    fig.text(0.09 / wide, 0.12 / height, textwrap.fill(CAPTION, int(120 * wide)), fontsize=8,
             va="bottom")
    return fig


def _gap_panel(ax, prob, keys, recs, insts, style) -> None:
    from toolkit.gap_report import instance_key, key_of

    names = {instance_key(r): Path(str(r["instance"])).stem for r in recs}
    ys = []
    for j, key in enumerate(keys):
        dx = (j - (len(keys) - 1) / 2) * 0.5 / max(1, len(keys))   # side by side
        pts = [(insts.index(instance_key(r)) + dx, 100 * r["vs_best_bound"]) for r in recs
               if key_of(r) == key and r.get("vs_best_bound") is not None]
        if pts:
            x, y = zip(*pts)
            ys += y
            ax.scatter(x, y, color=style[key][0], marker=style[key][1], s=42, zorder=3,
                       edgecolors="black", linewidths=0.4, clip_on=False)
    top = max([y for y in ys if math.isfinite(y)], default=0.0)
    ax.set_ylim(-0.06 * max(top, 1.0), 1.12 * max(top, 1.0))
    ax.axhline(0, color="black", lw=0.6, zorder=1)
    if not ys:
        ax.text(0.5, 0.5, "no bound valid for these instances", transform=ax.transAxes,
                ha="center", va="center", fontsize=8, color="0.4")
    ax.set_xlim(-0.6, len(insts) - 0.4)
    rot = 0 if len(insts) <= 3 else 35
    ax.set_xticks(range(len(insts)), [names[i] for i in insts], rotation=rot,
                  ha="right" if rot else "center", rotation_mode="anchor", fontsize=7)
    ax.set_ylabel("gap to best bound (%)", fontsize=8)
    ax.set_title(f"{prob}: (a) gap to the best bound", fontsize=9, loc="left")
    ax.tick_params(which="both", labelsize=7)
    ax.grid(alpha=0.3)


def _profile_panel(ax, keys, ratios, style, n_inst: int) -> None:
    import matplotlib.ticker

    from toolkit.gap_report import performance_profile

    mine = [k for k in keys if k in ratios]
    fin = [r for k in mine for r in ratios[k] if math.isfinite(r)]
    top = max(2.0, 1.05 * max(fin, default=1.0))
    taus = sorted({1.0, top, *[r for r in fin if r <= top]})
    for j, key in enumerate(mine):
        # drawn widest first: a line another method's covers stays visible around it
        wide = (len(mine) - 1 - j) / max(1, len(mine) - 1)
        lw, ms = 1.2 + 2.6 * wide, 5 + 5 * wide
        rho = performance_profile(ratios[key], taus)
        ax.step(taus, rho, where="post", color=style[key][0], lw=lw, alpha=0.85)
        jumps = sorted({r for r in ratios[key] if math.isfinite(r) and r <= top})
        ax.plot(jumps, performance_profile(ratios[key], jumps), ls="none", color=style[key][0],
                marker=style[key][1], ms=ms, mec="black", mew=0.4, zorder=3, clip_on=False)
    ax.set_xscale("log")
    ax.set_xlim(1.0, top)
    for axis in (ax.xaxis.set_major_formatter, ax.xaxis.set_minor_formatter):
        axis(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:.3g}"))
    ax.set_ylim(-0.04, 1.06)
    ax.set_xlabel("tau (objective within factor tau of the best)", fontsize=8)
    ax.set_ylabel(f"fraction of {n_inst} instance{'s' * (n_inst != 1)}", fontsize=8)
    ax.set_title("(b) performance profile", fontsize=9, loc="left")
    ax.tick_params(which="both", labelsize=7)
    ax.grid(alpha=0.3, which="both")
