"""The vocabulary of file checkpoints: what state a path was in, and how a frame changed it.

Pure data (pydantic, JSON round-trip exact) shared by the snapshotter, the frame stack and the
ledger entries that persist them. No I/O here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .field_docs import FIELD_DOCS

SkipReason = Literal[
    "too-large", "ignored", "nested-repository", "not-a-file", "unstable", "over-budget", "low-disk"
]
"""Why a path was seen but its content not captured."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class Fingerprint(BaseModel):
    """Enough of `lstat` to tell that an uncaptured path changed."""

    model_config = _FROZEN

    size: int
    """Size in bytes."""
    mtime_ns: int
    """Modification time, nanoseconds since the epoch."""
    mode: int
    """Full `st_mode` (type and permission bits)."""


class PathState(BaseModel):
    """One path at one moment: absent, a captured blob, or present but not captured."""

    model_config = _FROZEN

    kind: Literal["absent", "blob", "uncaptured", "large"]
    """Whether the path did not exist, was captured (in git, or as a large file in the side
    store), or existed without its content captured."""
    mode: str | None = None
    """Git file mode of a blob: 100644, 100755 (executable) or 120000 (symlink)."""
    sha: str | None = None
    """Git blob id of a captured path's content; for `large`, its side-store key."""
    reason: SkipReason | None = None
    """Why an uncaptured path was not captured."""
    fingerprint: Fingerprint | None = None
    """Stat fingerprint of an uncaptured path, or of a large one when it was stored."""
    perms: int | None = None
    """A file's permission bits (`st_mode & 0o7777`) when they are not what its git mode and
    the umask give (`chmod 600`); git keeps only the executable bit. Not part of `same_as`."""

    @classmethod
    def absent(cls) -> PathState:
        return cls(kind="absent")

    @classmethod
    def blob(cls, mode: str, sha: str) -> PathState:
        return cls(kind="blob", mode=mode, sha=sha)

    @classmethod
    def large(cls, mode: str, key: str | None, fingerprint: Fingerprint) -> PathState:
        """A large file; `key` None while its copy is still being made (after a frame)."""
        return cls(kind="large", mode=mode, sha=key, fingerprint=fingerprint)

    @classmethod
    def uncaptured(cls, reason: SkipReason, fingerprint: Fingerprint) -> PathState:
        return cls(kind="uncaptured", reason=reason, fingerprint=fingerprint)

    @property
    def exists(self) -> bool:
        return self.kind != "absent"

    def same_as(self, other: PathState) -> bool:
        """Equal content and mode (for blobs), or equal fingerprints (uncaptured)."""
        if self.kind != other.kind:
            return False
        if self.kind == "large" and (self.sha is None or other.sha is None):
            return (self.mode, self.fingerprint) == (other.mode, other.fingerprint)
        if self.kind in ("blob", "large"):
            return (self.mode, self.sha) == (other.mode, other.sha)
        if self.kind == "uncaptured":
            return self.fingerprint == other.fingerprint
        return True


class PathChange(BaseModel):
    """How one frame changed one path: its first pre-state and its final post-state."""

    model_config = _FROZEN

    path: str
    """Path relative to the workspace root, `/`-separated."""
    before: PathState
    """The state a rewind restores."""
    after: PathState
    """The state the frame left; a rewind checks the file still has it (else: conflict)."""
    by: Literal["cell", "tool", "external"] | None = None
    """Who made the change: the cell's code, an agent tool call, or someone outside this
    kernel (a JupyterLab save, another program or kernel). None: recorded before attribution
    existed, treated as the cell's."""
    call_id: str | None = None
    """The tool call that made it, when `by` is `tool`."""
    tool: str | None = None
    """That tool call's tool name (`bash`, `write`, ...)."""
    basis: str = ""
    """The evidence for `by`, in words (shown by `%logician diff` and rewinds)."""
    saved_at: str | None = None
    """When JupyterLab reported a save of this path during the frame (UTC, ISO 8601)."""
    outside_write: str = ""
    """Evidence that someone outside this kernel changed it too during the frame, after or
    beside the kernel's own change (a JupyterLab save, a modification time later than the
    kernel's last write); a rewind then calls it a conflict. "" when none was seen."""
    uncertain: str = ""
    """Why the writer could not be established: the change fell in a window where a process
    this kernel started ran, and nothing showed whether it or another program wrote it
    ("written while `make` ran; another program may have written it too"). A rewind reverts
    it unless asked to keep uncertain changes. "" when the writer is known."""

    @property
    def action(self) -> Literal["created", "deleted", "modified"]:
        if not self.before.exists:
            return "created"
        if not self.after.exists:
            return "deleted"
        return "modified"


class SkippedPath(BaseModel):
    """A path a frame saw change but could not capture - recorded so it is never silent."""

    model_config = _FROZEN

    path: str
    """Path relative to the workspace root; a trailing `/` stands for a whole directory."""
    reason: SkipReason
    """Why its content was not captured."""
    existed_before: bool
    """Whether it existed when the frame opened."""
    exists_after: bool
    """Whether it existed when the frame closed."""
