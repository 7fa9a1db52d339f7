"""`%logician mcp [restart NAME]`: renders the MCP servers' status; restarts one.

Presentation only: the servers belong to `AgentSession.mcp` (`logician_kernel/mcp/`).
"""

from __future__ import annotations

from IPython.core.error import UsageError

from ..agent import AgentSession
from ..mcp import report
from . import display as render


def handle_mcp(session: AgentSession, args: list[str]) -> render.Rendered:
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
    if args:
        raise UsageError("%logician mcp: takes nothing, or `restart NAME`")
    statuses = session.mcp.status()
    if not statuses:
        return render.preformatted(report.NO_SERVERS)
    text, table = render._table(report.HEADERS, report.rows(statuses))
    return render.Rendered(text, table)
