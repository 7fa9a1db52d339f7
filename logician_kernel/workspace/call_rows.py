"""The tool calls of one frame as the Lab's *Rewind this call* buttons list them
(`frames.calls`): id, tool, a few words, the files the attribution credited to it, and
whether `rewind --call ID` can take it back now (and why not).

Must never: offer a call whose frame was rewound, one already rewound (and not undone), or
one that changed no file; read anything but the ledger (no file is touched).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..ledger import CallRewound, ProjectionItem, RestorableCall, RewindPlanned
from ..ledger.thread_ledger import ToolIntent, ToolOutcome

if TYPE_CHECKING:
    from ..frames.file_checkpoints import FileCheckpoints

WORDS = 80
"""Characters of a call's words at most."""

_SAYS = {"bash": "command", "python": "code", "write": "path", "edit": "path", "read": "path"}
"""The argument that says what a call of the tool does, for its words."""


@dataclass
class CallRow:
    call_id: str
    tool: str
    words: str
    files: list[str] = field(default_factory=list)
    undoable: bool = False
    why_not: str = ""
    rewound: bool = False

    def as_message(self) -> dict[str, Any]:
        return {
            "id": self.call_id,
            "tool": self.tool,
            "words": self.words,
            "files": self.files,
            "undoable": self.undoable,
            "why_not": self.why_not,
            "rewound": self.rewound,
        }


def words_of(tool: str, arguments: dict[str, Any], display: str = "") -> str:
    """One short line: the bash command, the python code's first line, the path written..."""
    key = _SAYS.get(tool)
    text = str(arguments.get(key, "")) if key else ""
    if not text:
        text = display or ", ".join(f"{k}={v}" for k, v in arguments.items())
    line = " ".join(text.strip().splitlines()[:1]) if text.strip() else ""
    return line if len(line) <= WORDS else line[: WORDS - 1] + "…"


def rewound_calls(entries: list[Any]) -> set[str]:
    """Calls a completed, not undone `rewind --call` took back."""
    plans = {e.seq: e.call_id for e in entries if isinstance(e, RewindPlanned) and e.call_id}
    undone = {e.undoes for e in entries if isinstance(e, ProjectionItem) and e.undoes}
    return {
        plans[e.plan]
        for e in entries
        if isinstance(e, ProjectionItem) and e.plan in plans and e.seq not in undone
    }


def frame_calls(checkpoints: FileCheckpoints, frame: int) -> list[CallRow]:
    """The calls of `frame`, in the order they ran."""
    view = checkpoints.frames().get(frame)
    if view is None:
        raise ValueError(f"no frame {frame}")
    entries = list(checkpoints.ledger.entries)
    display = {e.call_id: e.display for e in entries if isinstance(e, ToolOutcome)}
    done = rewound_calls(entries) | {e.call_id for e in entries if isinstance(e, CallRewound)}
    # A call a dead kernel cut off is credited nothing by its killed frame: its files are what
    # the restart offered it with (its pre-images, or what its watch recorded).
    offered = {e.call_id: e.paths for e in entries if isinstance(e, RestorableCall)}
    rows: list[CallRow] = []
    for e in entries:
        if not isinstance(e, ToolIntent) or e.frame != frame:
            continue
        files = sorted({c.path for c in view.changes if c.call_id == e.call_id and c.by == "tool"})
        files = files or sorted(offered.get(e.call_id, ()))
        row = CallRow(e.call_id, e.name, words_of(e.name, e.arguments, display.get(e.call_id, "")))
        row.files = files
        row.rewound = e.call_id in done
        if view.status != "active":
            row.why_not = f"frame {frame} is {view.status}"
        elif not files:
            row.why_not = "it changed no file"
        elif row.rewound:
            row.why_not = "already rewound (`%logician undo` takes that back)"
        row.undoable = not row.why_not
        rows.append(row)
    return rows


def frame_of_call(entries: list[Any], call_id: str) -> int | None:
    """The frame a call ran in (its newest intent, should an id repeat), or None."""
    found = [e.frame for e in entries if isinstance(e, ToolIntent) and e.call_id == call_id]
    return found[-1] if found else None
