"""Flow-level, event-driven LumosCore cluster simulator (spec lumoscore.md 4.2, issue 16)."""
