"""Flow-level, event-driven LumosCore cluster simulator (issue 16; spec 4.2)."""
