"""The public surface of `logician_kernel.frames`: the frame stack, its rewinds and recovery,
attribution notices, the store budget and variables. A name joins `__all__` when another package
needs it; the others import it from here."""

from __future__ import annotations

import inspect

import logician_kernel.frames as frames_pkg

FRAMES_API = {
    "CallRewindError",
    "CaptureHeal",
    "FileCheckpoints",
    "FileDiff",
    "FrameUsage",
    "RewindError",
    "RewindPlan",
    "VariableCheckpoints",
    "VariableStep",
    "collect_garbage",
    "describe_call_rewind",
    "external_notice",
    "changed_files",
    "diff_sides",
    "frame_diff",
    "heal_state_dir",
    "interrupted_notice",
    "launch_dir",
    "map_lab_path",
    "rewind_call",
    "storage_text",
    "store_usage",
}


def test_exported_names_are_what_we_mean_to_export() -> None:
    assert set(frames_pkg.__all__) == FRAMES_API
    assert len(frames_pkg.__all__) == len(FRAMES_API)  # no name listed twice


def test_every_exported_name_is_defined_in_the_package() -> None:
    for name in frames_pkg.__all__:
        value = getattr(frames_pkg, name)
        home = getattr(value, "__module__", None)
        # constants (AUDIT, MASK) and Literal aliases carry no home module
        if inspect.isclass(value) or inspect.isfunction(value):
            assert home is not None and home.startswith("logician_kernel.frames."), (name, home)
