"""How the workspace is seen: the private git store, in-process trees, change detection
(inotify or a scan), the first snapshot, the large-file store, the walk beneath the root,
the write audit, and the trust of `.logician/` itself.

Uses `ledger/`, `durable/` and `types/`."""
