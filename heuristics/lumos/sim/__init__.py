"""LumosCore flow-level, event-driven cluster simulator (spec 4.2, issue 16)."""
