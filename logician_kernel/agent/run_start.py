"""Wiring one agent run: from the session's workspace, configuration and collaborators to a
harness started on its worker loop.

Owns what a run is built from - the conversation so far, the secrets to mask, the run store
in the open frame, the tool context, the controller and gate, the tools (with the todo list
and the MCP servers'), the hooks, bundled as the harness's `HarnessDeps` - so that
`AgentSession` keeps only what lasts across runs.

Must never: import IPython, ipykernel, ipywidgets or comm; print; or consume the run's queue
(the kernel and `script.consume` do).
"""

from __future__ import annotations

import queue
from typing import TYPE_CHECKING

from ..ledger.run_store import LedgerRunStore
from ..loop.deps import HarnessDeps
from ..loop.todo import TodoCapability
from ..tools import NOTEBOOK_TOOLS, NotebookAccess, default_tools
from ..types import MESSAGE_ADAPTER
from .errors import AgentError
from .hooks_setup import build_hooks
from .policy import RunOptions, build_controller, build_gate, prompt_for
from .run import AgentRun, RunItem, build_harness, tool_context

if TYPE_CHECKING:
    from .session import AgentSession


def start_run(
    session: AgentSession,
    prompt: str,
    options: RunOptions,
    *,
    can_ask: bool,
    python: bool,
    notebook: NotebookAccess | None = None,
    context: str = "",
) -> AgentRun:
    """Wire one run in the open frame and start it on its worker loop (`AgentRun`). The
    notebook tools are offered only with a `notebook` to answer them."""
    workspace = session.workspace
    ledger = session.ledger
    settings = session.settings
    history = [MESSAGE_ADAPTER.validate_python(m) for m in ledger.messages()]
    session.mcp.apply(settings.mcp)  # a changed `[mcp]` reconnects in the background
    secrets = session.secrets()
    checkpoints = workspace.checkpoints
    frame = checkpoints.current_frame
    store = LedgerRunStore(ledger, frame, secrets=secrets)
    items: queue.Queue[RunItem] = queue.Queue()
    ctx = tool_context(workspace, items, python=python, secrets=secrets, notebook=notebook)
    policy = session.permission_policy()
    policy.cwd = ctx.cwd  # the gate reads paths where the tools resolve them
    try:
        controller = build_controller(workspace, options)
        gate = build_gate(
            workspace,
            options,
            policy=policy,
            broker=session.broker,
            requests=items,
            frame=frame,
            headless=not can_ask,
            secrets=secrets,
        )
    except ValueError as exc:
        raise AgentError(str(exc)) from None
    tools = default_tools()
    if notebook is None:
        for name in NOTEBOOK_TOOLS:
            del tools[name]
    todo = TodoCapability()
    todo.restore(history)
    todo_tool = todo.tool()
    tools[todo_tool.name] = todo_tool
    provider = session.provider()
    deps = HarnessDeps(
        provider,
        tools,
        ctx,
        store,
        hooks=build_hooks(
            workspace, requests=items, frame=frame, log=session.hook_log, secrets=secrets
        ),
        gate=gate,
        controller=controller,
        audit=workspace.write_audit,  # what the process writes during a call is that call's
        more_tools=session.mcp.tools,
    )
    harness = build_harness(deps, settings, ledger, prompt_for(policy))
    run = AgentRun(requests=items, controller=controller, todo=todo, frame=frame)
    session.budget = controller.budget
    run.start(harness.run(prompt, history, context=context), release=provider.aclose)
    return run
