"""`%logician undo` and `%logician rewind --resume`: their parsing and their reports, and the
one-line results the rewind control and the sidebar show (split out of `magics.py`)."""

from __future__ import annotations

from ..workspace import ProjectionItem, Workspace
from . import display as render
from . import variables_view
from .magic_words import ArgParser
from .plan_text import result_lines


def run_undo(runtime: Workspace, args: list[str]) -> ProjectionItem:
    """`%logician undo [--force]`: take back the most recent rewind."""
    parser = ArgParser(prog="undo", add_help=False)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--skip-failed", action="store_true")
    opts = parser.parse_args(args)
    return runtime.undo(force=opts.force, skip_failed=opts.skip_failed)


def undo_result(item: ProjectionItem) -> render.Rendered:
    """The undo report: every path and variable it brought back, and what it left alone."""
    tally = render._counts(
        p.action for p in item.paths if p.action in ("restored", "deleted", "recreated")
    )
    frames = ", ".join(map(str, item.frames)) or "-"
    lines = [
        f"Undid the rewind (ledger entry {item.undoes}): "
        + (f"frame(s) {frames} active again; " if item.frames else "")
        + f"files: {tally if tally != '-' else 'none to bring back'}; conversation: "
        f"{len(item.messages)} message(s)"
    ]
    lines += result_lines(item.paths)  # thousands: counted by directory (plan_text.py)
    for v in item.variables:
        lines.append(f"  {v.action:<9} variable {v.name}" + (f" ({v.detail})" if v.detail else ""))
    return render.preformatted("\n".join(lines))


def resume_result(item: ProjectionItem) -> render.Rendered:
    """The resumed rewind's report: the rewind's own, saying it was resumed."""
    text = variables_view.rewind_result(item).text
    already = sum(1 for p in item.paths if "before the interruption" in p.detail)
    given = [p.path for p in item.paths if p.action == "failed"]
    head = f"Resumed the interrupted rewind ({already} path(s) were already restored). "
    if given:  # a finished rewind names failed paths only when they were given up on purpose
        head = (
            f"Finished the incomplete rewind without {len(given)} failed path(s), given up "
            f"on purpose: {', '.join(given) or '-'}. "
        )
    return render.preformatted(head + text)
