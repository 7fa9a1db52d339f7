"""Small programs the tour notebooks use, shipped so they run from any folder after a plain
install: `python -m logician_kernel.examples.notes_server` (needs the `[mcp]` extra)."""
