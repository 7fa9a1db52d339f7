"""The public surface of `logician_kernel.snapshots`: the store, change detection, the walk beneath
the root, large files, the write audit and state trust. A name joins `__all__` when another
package needs it; the others import it from here."""

from __future__ import annotations

import inspect

import logician_kernel.snapshots as snapshots_pkg

SNAPSHOTS_API = {
    "AUDIT",
    "Beneath",
    "CELL",
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
}


def test_exported_names_are_what_we_mean_to_export() -> None:
    assert set(snapshots_pkg.__all__) == SNAPSHOTS_API
    assert len(snapshots_pkg.__all__) == len(SNAPSHOTS_API)  # no name listed twice


def test_every_exported_name_is_defined_in_the_package() -> None:
    for name in snapshots_pkg.__all__:
        value = getattr(snapshots_pkg, name)
        home = getattr(value, "__module__", None)
        # constants (AUDIT, MASK) and Literal aliases carry no home module
        if inspect.isclass(value) or inspect.isfunction(value):
            assert home is not None and home.startswith("logician_kernel.snapshots."), (name, home)
