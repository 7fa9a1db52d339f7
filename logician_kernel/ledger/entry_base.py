"""What every thread-ledger entry is built on: the common fields (sequence, parent, time), the
models' configuration, and the literals several kinds share. The kinds themselves are in
`frame_entries.py` and `conversation_entries.py`; `entries.py` unites them.

Must never: do I/O, or grow a field without a docstring.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..types.field_docs import FIELD_DOCS

ProjectionReason = Literal[
    "restore", "rewind", "branch-discard", "branch-merge", "compaction", "clear", "run-commit"
]
"""Why a projection item replaced the conversation (the seed's typed reasons)."""


FrameOutcome = Literal["ok", "error", "interrupted", "killed", "failed"]
"""How a cell ended; `killed` is recorded on reopen for a frame whose kernel died, `failed` by
the next cell for a frame whose close could not be written (the ledger failed; its reason is
the close's `capture_error`)."""


_MODEL = ConfigDict(
    frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, defer_build=True
)
"""`defer_build`: a kind's validator is built the first time one is read or appended, so a
start builds those of the few kinds it meets, not the thirty it imports."""


class _Entry(BaseModel):
    model_config = _MODEL

    seq: int
    """1-based position in the ledger; assigned by `ThreadLedger.append`."""
    parent: int | None
    """Sequence number of the entry before this one (None for the first)."""
    time: str
    """UTC time of the append, ISO 8601."""
