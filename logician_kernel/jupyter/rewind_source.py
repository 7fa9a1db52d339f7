"""What the rewind control reads and does, over one session's frames and ledger."""

from __future__ import annotations

from ..runtime import LogicianRuntime
from ..session.file_checkpoints import RewindError
from . import display as render
from .comm import LogicianComms
from .widgets import FrameRow, RewindPreview


class LedgerRewindSource:
    """What the rewind control reads and does, over the session's frames and ledger."""

    def __init__(self, runtime: LogicianRuntime, comms: LogicianComms) -> None:
        self.runtime = runtime
        self.comms = comms

    def rows(self) -> list[FrameRow]:
        if self.runtime.session.checkpoints is None:
            return []
        return [
            FrameRow(
                frame=f.frame,
                cell=f"In [{f.execution_count}]" if f.execution_count is not None else "-",
                time=render.local_time(f.opened_at),
                label=f.code[:80],
                outcome=f.outcome or "running",
                files=render.file_counts(f),
                tokens=f"{f.input_tokens:,}/{f.output_tokens:,}" if f.input_tokens else "-",
            )
            for f in self.runtime.checkpoints.active_frames()
        ]

    def preview(self, frame: int) -> RewindPreview:
        try:
            plan = self.runtime.checkpoints.plan_rewind(frame)
        except (RewindError, ValueError) as exc:
            return RewindPreview(files=[], conflicts=[], messages_dropped=0, error=str(exc))
        files = [f"{'delete' if t.kind == 'absent' else 'restore'} {p}" for p, t in plan.restore]
        files += [f"not restorable: {s.path} ({s.detail})" for s in plan.skipped]
        conflicts = [f"{c.path}: {c.detail}" for c in plan.conflicts]
        return RewindPreview(
            files=files, conflicts=conflicts, messages_dropped=plan.messages_dropped
        )

    def rewind(self, frame: int, mode: str) -> str:
        try:
            item = self.runtime.rewind(str(frame), files=mode != "conversation",
                                       conversation=mode != "files")  # fmt: skip
        except RewindError as exc:
            raise ValueError(str(exc)) from None
        self.comms.notify("frames.rewound", {"frames": item.frames, "at": item.time,
                                                    "by": item.seq})  # fmt: skip
        return render.rewind_result(item).text.splitlines()[0]
