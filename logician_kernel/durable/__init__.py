"""The ground floor of everything durable: the journal (append, fsync, torn-tail scan),
redaction, private file modes, fsync and the durable-write choke point, the state key.

Imports only `types/` (and nothing of ours above it)."""
