"""The thread ledger: its entries (one closed union), projection and projection
checkpoints, repair, run records, branches, and the pure folds over it (frames, rewinds).

Uses `durable/` and `types/`."""
