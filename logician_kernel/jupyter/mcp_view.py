"""`%logician mcp [--wait [SECONDS]] [restart NAME]`: renders the MCP servers' status (after
waiting until none is connecting, with `--wait`); restarts one.

Presentation only: the servers belong to `AgentSession.mcp` (`logician_kernel/mcp/`).
"""

from __future__ import annotations

from IPython.core.error import UsageError

from ..agent import AgentSession
from ..agent.ui import mcp_report as report
from . import display as render


def handle_mcp(session: AgentSession, args: list[str]) -> render.Rendered:
    session.mcp.apply(session.settings.mcp)  # a `config set` since the last run applies now
    if args and args[0] == "restart":
        if len(args) != 2:
            raise UsageError("%logician mcp restart: name one server, e.g. `mcp restart files`")
        try:
            session.mcp.restart(args[1])
        except KeyError as exc:
            raise UsageError(f"%logician mcp restart: {exc.args[0]}") from None
        return render.preformatted(
            f"Restarting the MCP server {args[1]!r} in the background; "
            "`%logician mcp` shows when it is ready."
        )
    if args and args[0] == "--wait":
        try:
            seconds = float(args[1]) if len(args) > 1 else 30.0
        except ValueError:
            raise UsageError(
                f"%logician mcp --wait: {args[1]!r} is not a number of seconds"
            ) from None
        session.mcp.wait(seconds)
        args = args[2:] if len(args) > 1 else []
    if args:
        raise UsageError("%logician mcp: takes nothing, `--wait [SECONDS]` or `restart NAME`")
    statuses = session.mcp.status()
    if not statuses:
        return render.preformatted(report.NO_SERVERS)
    text, table = render._table(report.HEADERS, report.rows(statuses))
    return render.Rendered(text, table)
