"""Closed-form cluster sizes of [002] Table 1 (spec 1.5).

Switch radix k = chip capacity / port bandwidth; K_leaf = K_spine = k/2; K_ocs = 512.
Clos 2-tier k^2/2, 3-tier k^3/4, 3-tier with 15:1 oversubscription (k^2/2) * floor(15k/16),
4-tier k^4/8 (used in [002] 6.4); LumosCore (k/2)^2 / tau * K_ocs.
"""
from __future__ import annotations

CHIPS_TBPS = (12.8, 25.6, 51.2)
PORTS_GBPS = (200, 400, 800, 1600)
ROWS = ("Clos(2-tier)", "Clos(3-tier)", "Clos(3-tier-15:1)", "LumosCore(tau=2)", "LumosCore(tau=1)")

# [002] Table 1 as printed, row by row, chips 12.8T/25.6T/51.2T x ports 200/400/800/1600G
PAPER_TABLE1 = {
    "Clos(2-tier)": "2.05k 0.51k 0.13k 0.03k 8.19k 2.05k 0.51k 0.13k 32.77k 8.19k 2.05k 0.51k",
    "Clos(3-tier)": "65.54k 8.19k 1.02k 0.13k 524.29k 65.54k 8.19k 1.02k 4194.3k 524.29k 65.54k 8.19k",
    "Clos(3-tier-15:1)": "122.88k 15.36k 1.92k 0.22k 983.04k 122.88k 15.36k 1.92k 7864.32k 983.04k "
                         "122.88k 15.36k",
    "LumosCore(tau=2)": "262.0k 65.0k 16.0k 4.0k 1048.0k 262.0k 65.0k 16.0k 4194.0k 1048.0k 262.0k 65.0k",
    "LumosCore(tau=1)": "524.29k 131.07k 32.77k 8.19k 2097.15k 524.29k 131.07k 32.77k 8388.61k "
                        "2097.15k 524.29k 131.07k",
}


def radix(chip_tbps: float, port_gbps: int) -> int:
    k = chip_tbps * 1000 / port_gbps
    if k != int(k):
        raise ValueError(f"{chip_tbps}T / {port_gbps}G is not an integer radix")
    return int(k)


def clos2(k: int) -> int:
    return k * k // 2


def clos3(k: int) -> int:
    return k ** 3 // 4


def clos3_oversub(k: int, ratio: int = 15) -> int:
    """3-tier Clos with ratio:1 oversubscription: k Pods x k/2 leaves x floor(ratio k / (ratio+1))
    host ports per leaf."""
    return (k * k // 2) * (ratio * k // (ratio + 1))


def clos4(k: int) -> int:
    return k ** 4 // 8


def lumoscore(k: int, tau: int, k_ocs: int = 512) -> int:
    """P = K_ocs Pods of (k/2) x (k/2) / tau GPUs (spec 1.1, GPUs per Pod = K_spine K_leaf / tau)."""
    return (k // 2) ** 2 // tau * k_ocs


def cluster_size(row: str, chip_tbps: float, port_gbps: int, k_ocs: int = 512) -> int:
    k = radix(chip_tbps, port_gbps)
    return {"Clos(2-tier)": clos2, "Clos(3-tier)": clos3, "Clos(3-tier-15:1)": clos3_oversub,
            "LumosCore(tau=2)": lambda k: lumoscore(k, 2, k_ocs),
            "LumosCore(tau=1)": lambda k: lumoscore(k, 1, k_ocs)}[row](k)


def paper_format(row: str, n: int) -> str:
    """The paper's printing: thousands with 2 decimals (a trailing 0 dropped); the tau = 2 row
    is printed truncated to whole thousands ("65.0k" for 65,536)."""
    if row == "LumosCore(tau=2)":
        return f"{n // 1000}.0k"
    text = f"{n / 1000:.2f}"
    if text.endswith("0"):
        text = text[:-1]
    return text + "k"


def table1(k_ocs: int = 512) -> list[dict]:
    """One dict per (row, chip, port): value, our printed cell, the paper's cell."""
    out = []
    for row in ROWS:
        paper = PAPER_TABLE1[row].split()
        for c, chip in enumerate(CHIPS_TBPS):
            for p, port in enumerate(PORTS_GBPS):
                n = cluster_size(row, chip, port, k_ocs)
                out.append({"architecture": row, "chip_tbps": chip, "port_gbps": port,
                            "radix": radix(chip, port), "gpus": n, "ours": paper_format(row, n),
                            "paper": paper[c * 4 + p]})
    return out
