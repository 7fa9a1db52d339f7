"""How the workspace is seen: the private git store, in-process trees, change detection
(inotify or a scan), the first snapshot, the large-file store, the walk beneath the root,
the write audit, and the trust of `.logician/` itself.

Uses `durable/` and `types/`, never anything above. `__all__` is what the other packages use
(`tests/unit/snapshots/test_snapshots_surface.py` holds it to that)."""

from .beneath import Beneath, Conflict, PathRefused
from .change_detection import ChangeDetection
from .first_snapshot_wait import Deferred, FirstSnapshotWait
from .git_snapshot import GitSnapshotter, Snapshot
from .git_store import SnapshotError
from .idle_look import IdleLook
from .large_files import LargeFiles, LargeLimits
from .large_store import LargeFileStore
from .perms import current_perms, remove_debris, with_perms
from .state_trust import UntrustedStateError, check_state_dir
from .write_audit import AUDIT, CELL, FrameEvidence, WriteAudit, open_in_process

__all__ = [
    "AUDIT",
    "CELL",
    "Beneath",
    "ChangeDetection",
    "Conflict",
    "Deferred",
    "FirstSnapshotWait",
    "FrameEvidence",
    "GitSnapshotter",
    "IdleLook",
    "LargeFileStore",
    "LargeFiles",
    "LargeLimits",
    "PathRefused",
    "Snapshot",
    "SnapshotError",
    "UntrustedStateError",
    "WriteAudit",
    "check_state_dir",
    "current_perms",
    "open_in_process",
    "remove_debris",
    "with_perms",
]
