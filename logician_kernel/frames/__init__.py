"""The frame stack: open and close, pre-images, attribution, rewind plans, restore, undo,
resume, recovery, the store budget, and variables (capture, store, restore).

Uses `snapshots/`, `ledger/`, `durable/` and `types/`."""
