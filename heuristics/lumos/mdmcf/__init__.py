"""ITV-MDMCF, LumosCore's polynomial OCS reconfiguration ([001] 4, spec 2.6), and its parts:
min-cost-flow decompositions, ejection chains, LNS, exact steps."""
