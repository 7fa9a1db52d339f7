"""What the `logician` comm asks of the rest of the kernel, as protocols: the frames (the
ledger and checkpoints: pages, previews, rewinds, undo, resume, files, diffs, calls, saves),
the model picker and the effective configuration. `comm.py` answers the frontend's requests
through them; `rewind_source.py`, `model_picker.py` and `config_view.py` implement them.

Must never: do I/O (declarations only).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from ..agent.model_connect import Connection


class FrameSource(Protocol):
    """What the frame messages read and do (the kernel's ledger and checkpoints)."""

    def page(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]: ...

    def preview_target(
        self,
        frame: int | None,
        cell_id: str | None,
        *,
        force: bool = False,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> dict[str, Any]: ...

    def preview_page(
        self,
        frame: int | None,
        cell_id: str | None,
        group: str,
        offset: int,
        limit: int,
        *,
        force: bool = False,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> dict[str, Any]: ...

    def rewind_target(
        self,
        frame: int | None,
        cell_id: str | None,
        mode: str,
        force: bool,
        *,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> dict[str, Any]: ...

    def note_save(
        self, path: str, at: str, notebook: str | None, server_root: str | None
    ) -> dict[str, Any]: ...

    def undo_target(self, force: bool) -> dict[str, Any]: ...

    def frame_files(self, frame: int, offset: int, limit: int) -> dict[str, Any]: ...

    def frame_diff(self, frame: int, path: str, page: int, *, preview: bool) -> dict[str, Any]: ...

    def resume_target(self, force: bool) -> dict[str, Any]: ...

    def frame_calls(self, frame: int) -> dict[str, Any]: ...

    def rewind_call(self, call_id: str, force: bool) -> dict[str, Any]: ...


class ModelSource(Protocol):
    """What the model picker's messages read and do (`model_picker.py`)."""

    def choices(self) -> dict[str, Any]: ...

    def use(self, name: str) -> dict[str, Any]: ...

    def make_default(self, name: str) -> dict[str, Any]: ...

    def connect(self, form: Connection) -> dict[str, Any]: ...


class ConfigSource(Protocol):
    """What the configuration section's messages read and do (`config_view.py`)."""

    def show(self) -> dict[str, Any]: ...

    def set(self, key: str, value: str, persist: Literal["session", "user"]) -> dict[str, Any]: ...
