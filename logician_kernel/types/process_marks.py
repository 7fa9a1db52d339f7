"""The environment marks that let the kernel recognise its own processes after the fact.

A process inherits its parent's environment, `setsid`, `nohup` and double forks included, so a
write by a process that carries `TREE_MARK=<this kernel's token>` in its initial environment is
the kernel's process tree's (snapshots/tree_watch.py), even when its parent died and it was
re-parented to init. A tool server (a stdio MCP server) also carries `TOOL_SERVER_MARK`: its
writes belong to the tool call running when it made them, and to no one of ours between calls.
"""

TREE_MARK = "LOGICIAN_PROCESS_TREE"
"""Set in the kernel's own environment at start: every descendant inherits it."""

TOOL_SERVER_MARK = "LOGICIAN_TOOL_SERVER"
"""Set in a tool server's environment (its name): the server and its children are a server's."""
