"""`%logician notices [--all]` and the notices line of `%logician status`.

The notices themselves are kept by the workspace's `NoticeBoard` (`workspace/notices.py`),
which decides where each one goes (`ui.notices`); this module only renders them as the answer
to the user's command, which is the one place a notice is written into a cell by default.

Must never: print a notice anywhere but in the output of the command that asked for it.
"""

from __future__ import annotations

from ..workspace import Notice, NoticeBoard
from . import display as render
from .magic_words import ArgParser


def handle(board: NoticeBoard, args: list[str]) -> render.Rendered:
    """`%logician notices`: the unread ones, then marked read; `--all`: every one this session."""
    parser = ArgParser(prog="notices", add_help=False)
    parser.add_argument("--all", action="store_true", help="every notice of this session")
    opts = parser.parse_args(args)
    shown = board.all() if opts.all else board.unread()
    board.mark_read()
    if not shown:
        said = len(board.all())
        return render.preformatted(
            "No notices this session."
            if not said
            else f"No unread notices ({said} this session: `%logician notices --all`)."
        )
    head = (
        f"{len(shown)} notice(s) this session, newest first:"
        if opts.all
        else f"{len(shown)} unread notice(s), newest first (now marked read):"
    )
    lines = [head, *(_line(n) for n in reversed(shown))]
    return render.preformatted("\n".join(lines))


def _line(notice: Notice) -> str:
    mark = "!" if notice.critical else "-"
    return f"{mark} {notice.time} ({notice.where}) {notice.text}"


def status_line(board: NoticeBoard) -> tuple[str, list[str]]:
    """(the `notices` row of `%logician status`, the unread critical notices in full)."""
    unread = board.unread()
    critical = [n.text for n in unread if n.critical]
    count = f"{len(unread)} unread" + (f" ({len(critical)} critical)" if critical else "")
    where = (
        "in cells"
        if board.in_cells
        else "in the sidebar"
        if board.mode == "sidebar"
        else "in the kernel log only"
    )
    return f"{count}, shown {where}; `%logician notices` lists them", critical
