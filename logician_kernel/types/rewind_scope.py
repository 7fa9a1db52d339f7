"""What a rewind restores: the one declaration of a rewind's scope.

A rewind (from `%logician rewind`, the rewind control, the sidebar or a script) restores the
files, the conversation and the variables of the frames it pops, or a part of them. The scope
travels typed from the request to the ledger's records and back to the report; free text
(`ProjectionItem.note`) is for people only and is never parsed back.

Must never: do I/O or import anything of ours.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

RewindPart = Literal["files", "conversation", "variables"]
"""One part of the state a rewind can restore."""

RewindMode = Literal["both", "files", "conversation", "variables"]
"""How the rewind control and the sidebar name a scope: everything, or one part only."""


RestoreOperation = Literal["rewind", "undo", "resume", "first_snapshot", "capture", "large_capture"]
"""What restores (or, `first_snapshot` and `capture`, reads; `large_capture`, copies) paths
and reports progress: `capture` is a later full scan reading a cell's thousands of new files."""


class RewindScope(BaseModel):
    """Which parts of the popped frames' state a rewind restores (all of them by default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: bool = True
    """Restore the workspace files the frames changed."""
    conversation: bool = True
    """Restore the conversation to what it was when the first popped frame opened."""
    variables: bool = True
    """Restore the user variables the frames created, changed or deleted."""

    @model_validator(mode="after")
    def _something(self) -> RewindScope:
        if not (self.files or self.conversation or self.variables):
            raise ValueError(
                "scope: a rewind restores at least one of files, conversation, variables"
            )
        return self

    @classmethod
    def only(cls, part: RewindPart) -> RewindScope:
        """A rewind of one part only (`--files-only`, `--conversation-only`, `--variables-only`)."""
        return cls(**{name: name == part for name in ("files", "conversation", "variables")})

    @classmethod
    def from_mode(cls, mode: str) -> RewindScope:
        """The scope a frontend names (`both` or one part); a clear error for anything else."""
        if mode == "both":
            return cls()
        if mode in ("files", "conversation", "variables"):
            return cls.only(mode)  # type: ignore[arg-type]
        raise ValueError(
            f"mode: {mode!r} is not a rewind scope; use both, files, conversation or variables"
        )

    @property
    def parts(self) -> tuple[RewindPart, ...]:
        """The parts restored, in the order a rewind restores them."""
        order: tuple[RewindPart, ...] = ("files", "variables", "conversation")
        return tuple(p for p in order if getattr(self, p))

    @property
    def single(self) -> RewindPart | None:
        """The one part restored, or None when the rewind restores more than one."""
        parts = self.parts
        return parts[0] if len(parts) == 1 else None
