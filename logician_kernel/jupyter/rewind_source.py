"""What the rewind control and the lab extension read and do, over one workspace's frames.

The widget (`RewindControl`) and the `logician` comm (`frames.*` messages) share this one
source, so a rewind from either says the same thing and announces itself the same way. The
rewinds themselves (and the "a cell is running" refusal, under one `frame_lock`) are the
`Workspace`'s; this module turns them into rows, one-line results and announcements.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ..workspace import (
    ProjectionItem,
    RewindError,
    RewindScope,
    Workspace,
    changed_files,
    diff_sides,
    interrupted_notice,
    launch_dir,
    map_lab_path,
)
from . import call_rewind, preview_groups, undo_view, variables_view
from . import display as render
from .comm import LogicianComms
from .notebook_bridge import NotebookBridge
from .plan_text import file_action
from .rewind_words import cell_steps, frame_row, headline, undo_words
from .widgets import FrameRow, RewindPreview


class LedgerRewindSource:
    """What the rewind control reads and does, over the session's frames and ledger."""

    def __init__(self, workspace: Workspace, comms: LogicianComms) -> None:
        self.workspace = workspace
        self.comms = comms
        self.notebook: NotebookBridge | None = None
        """Takes the agent's cell edits back with a rewind (and again with an undo)."""
        self._grouped: tuple[tuple[Any, ...], dict[str, preview_groups.Group]] | None = None
        """The last comm preview's groups, keyed by what it previewed and the ledger's length:
        the pages of one dialog cost no second plan."""
        self._undo_cached: tuple[tuple[Any, ...], str | None] | None = None

    # -- the widget --------------------------------------------------------------------------

    def rows(self) -> list[FrameRow]:
        checkpoints = self.workspace.checkpoints_if_on
        if checkpoints is None:
            return []
        active = checkpoints.active_frames()
        evicted = self.workspace.evicted(active)
        return [
            FrameRow(
                frame=f.frame,
                cell=f"In [{f.execution_count}]" if f.execution_count is not None else "-",
                time=render.local_time(f.opened_at),
                label=f.code[:80],
                outcome=f.outcome or "running",
                files=render.file_counts(f)
                + (" (large files evicted)" if f.frame in evicted else ""),
                tokens=f"{f.input_tokens:,}/{f.output_tokens:,}" if f.input_tokens else "-",
            )
            for f in active
        ]

    def preview(
        self,
        frame: int,
        *,
        include_external: bool = False,
        force: bool = False,
        keep_uncertain: bool = False,
    ) -> RewindPreview:
        data = self._preview(
            frame, force=force, include_external=include_external, keep_uncertain=keep_uncertain
        )
        return RewindPreview(
            files=[f"{a['action']} {a['path']}" for a in data["files"]]
            + [f"not restorable: {s['path']} ({s['detail']})" for s in data["skipped"]]
            + [f"left alone: {e['path']} ({e['detail']})" for e in data.get("external", [])]
            + [f"cell {c['id']}: {c['detail']}" for c in data.get("cells", [])],
            conflicts=[f"{c['path']}: {c['detail']}" for c in data["conflicts"]],
            messages_dropped=data["messages_dropped"],
            variables=[
                f"{v['action']} {v['name']}" + (f" ({v['detail']})" if v["detail"] else "")
                for v in data.get("variables", [])
            ],
            error=data.get("error", ""),
        )

    def rewind(
        self,
        frame: int,
        mode: str,
        *,
        include_external: bool = False,
        force: bool = False,
        keep_uncertain: bool = False,
    ) -> str:
        try:
            item = self._rewind(
                frame,
                RewindScope.from_mode(mode),
                force=force,
                frontend=False,
                include_external=include_external,
                keep_uncertain=keep_uncertain,
            )
        except RewindError as exc:
            raise ValueError(str(exc)) from None
        return variables_view.rewind_result(item).text.splitlines()[0]

    def undo(self) -> str:
        try:
            item = self._undo(force=False)
        except RewindError as exc:
            raise ValueError(str(exc)) from None
        return undo_view.undo_result(item).text.splitlines()[0]

    def resume(self) -> str:
        try:
            item = self._resume(force=False)
        except RewindError as exc:
            raise ValueError(str(exc)) from None
        return undo_view.resume_result(item).text.splitlines()[0]

    def interrupted(self) -> str:
        checkpoints = self.workspace.checkpoints_if_on
        if checkpoints is None:
            return ""
        return interrupted_notice(checkpoints.ledger) or ""

    # -- the comm (`frames.*` messages of the lab extension) -----------------------------------

    def page(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """A page of frames, newest first: the rows sent are bounded by `limit`."""
        page = self.workspace.page(offset, limit)
        return [frame_row(f, page.evicted.get(f.frame)) for f in page.frames], page.total

    def preview_target(
        self,
        frame: int | None,
        cell_id: str | None,
        *,
        force: bool = False,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> dict[str, Any]:
        frame_id = self._resolve(frame, cell_id)
        data = self._preview(
            frame_id,
            force=force,
            include_external=include_external,
            keep_uncertain=keep_uncertain,
        )
        groups = preview_groups.group_files(data["files"])
        self._grouped = (self._key(frame_id, force, include_external, keep_uncertain), groups)
        shown = preview_groups.DETAILS_SHOWN
        bounded = {
            f"{name}_total": len(data.get(name, []))
            for name in ("skipped", "conflicts", "external")
        }
        return {
            **data,
            "frame": frame_id,
            "files": data["files"][: preview_groups.FILES_PAGE],
            "files_total": len(data["files"]),
            "groups": [g.summary() for g in groups.values()],
            "cells": self._cells(data["frames"]),
            **{name: data.get(name, [])[:shown] for name in ("skipped", "conflicts", "external")},
            **bounded,
        }

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
    ) -> dict[str, Any]:
        """A page of one group's files, from the last preview when nothing changed since."""
        frame_id = self._resolve(frame, cell_id)
        key = self._key(frame_id, force, include_external, keep_uncertain)
        if self._grouped is None or self._grouped[0] != key:
            data = self._preview(
                frame_id,
                force=force,
                include_external=include_external,
                keep_uncertain=keep_uncertain,
            )
            self._grouped = (key, preview_groups.group_files(data["files"]))
        found = self._grouped[1].get(group)
        if found is None:
            raise ValueError(f"group: {group!r} is not a group of this rewind's preview")
        return {
            "frame": frame_id,
            "group": group,
            "rows": preview_groups.page(found, offset, limit),
            "total": len(found.files),
            "offset": offset,
        }

    def _headline(self, verb: str, item: ProjectionItem) -> str:
        """One line in the user's words: `Rewound In [2], In [3]: 20,000 files deleted`."""
        cells = ", ".join(
            f"In [{c['execution_count']}]" if c["execution_count"] is not None else "a cell"
            for c in self._cells(item.frames)
        )
        return headline(verb, cells or "the conversation", item)

    def undo_refused(self) -> str | None:
        """Why *Undo rewind* is off now, in the user's words (None: there is a rewind to undo);
        read again only when the ledger has grown (the status is pushed a few times a second)."""
        ledger = self.workspace.ledger
        key = (self.workspace.thread_id, len(ledger.entries) if ledger else 0)
        if self._undo_cached is None or self._undo_cached[0] != key:
            self._undo_cached = (key, undo_words(self.workspace.undo_refusal()))
        return self._undo_cached[1]

    def _key(
        self, frame_id: int, force: bool, include_external: bool, keep_uncertain: bool
    ) -> tuple[Any, ...]:
        ledger = self.workspace.ledger
        size = len(ledger.entries) if ledger else 0
        return (frame_id, force, include_external, keep_uncertain, size)

    def _cells(self, frames: list[int]) -> list[dict[str, Any]]:
        checkpoints = self.workspace.checkpoints_if_on
        views = checkpoints.frames() if checkpoints is not None else {}
        return [
            {"frame": f, "execution_count": getattr(views.get(f), "execution_count", None)}
            for f in frames
        ]

    def rewind_target(
        self,
        frame: int | None,
        cell_id: str | None,
        mode: str,
        force: bool,
        *,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> dict[str, Any]:
        frame_id = self._resolve(frame, cell_id)
        item = self._rewind(
            frame_id,
            RewindScope.from_mode(mode),
            force=force,
            frontend=True,
            include_external=include_external,
            keep_uncertain=keep_uncertain,
        )
        conflicts = [p.path for p in item.paths if p.action == "conflict"]
        return {
            "ok": True,
            "frame": frame_id,
            "frames": item.frames,
            "conflicts": conflicts,
            "external": [p.path for p in item.paths if p.action == "external"],
            "summary": variables_view.rewind_result(item).text,
            "headline": self._headline("Rewound", item),
        }

    def frame_files(self, frame: int, offset: int, limit: int) -> dict[str, Any]:
        return changed_files(self.workspace.checkpoints_if_on, frame, offset, limit)

    def frame_diff(self, frame: int, path: str, page: int, *, preview: bool) -> dict[str, Any]:
        checkpoints = self.workspace.checkpoints_if_on
        return diff_sides(checkpoints, self.workspace.root, frame, path, page, preview=preview)

    def undo_target(self, force: bool) -> dict[str, Any]:
        item = self._undo(force=force)
        return {
            "ok": True,
            "frames": item.frames,
            "undoes": item.undoes,
            "conflicts": [p.path for p in item.paths if p.action == "conflict"],
            "summary": undo_view.undo_result(item).text,
            "headline": self._headline("Undid the rewind of", item),
        }

    def resume_target(self, force: bool) -> dict[str, Any]:
        item = self._resume(force=force)
        return {
            "ok": True,
            "frames": item.frames,
            "conflicts": [p.path for p in item.paths if p.action == "conflict"],
            "summary": undo_view.resume_result(item).text,
            "headline": self._headline("Finished the rewind of", item),
        }

    def frame_calls(self, frame: int) -> dict[str, Any]:
        return call_rewind.calls_message(self, frame)

    def rewind_call(self, call_id: str, force: bool) -> dict[str, Any]:
        return call_rewind.rewind_call_message(self, call_id, force)

    def note_save(
        self, path: str, at: str, notebook: str | None, server_root: str | None
    ) -> dict[str, Any]:
        """JupyterLab saved `path` (server-relative): the open frame attributes it to the user.
        A path outside this kernel's workspace is not ours and is ignored."""
        checkpoints = self.workspace.checkpoints_if_on
        rel = map_lab_path(
            path,
            workspace=self.workspace.root,
            launch_dir=launch_dir(),
            notebook=notebook or os.environ.get("JPY_SESSION_NAME"),
            server_root=server_root,
        )
        if checkpoints is None or rel is None:
            return {"path": None, "recorded": False}
        return {"path": rel, "recorded": checkpoints.note_save(rel, at)}

    # -- shared ------------------------------------------------------------------------------

    def announce_undo(self, item: ProjectionItem, *, force: bool = False) -> None:
        """Tell every frontend which frames (and cells) an undo made active again, and put the
        agent's cell edits the rewind took back in the notebook again."""
        if self.notebook is not None:
            self.notebook.after(item, force=force)
        checkpoints = self.workspace.checkpoints_if_on
        frames = checkpoints.frames() if checkpoints is not None else {}
        cell_ids = sorted(
            {c for i in item.frames if (c := getattr(frames.get(i), "cell_id", None))}
        )
        self.comms.notify(
            "frames.undone",
            {
                "frames": item.frames,
                "cell_ids": cell_ids,
                "at": item.time,
                "by": item.seq,
                "undoes": item.undoes or 0,
            },
        )

    def _undo(self, *, force: bool) -> ProjectionItem:
        item = self.workspace.undo(force=force, refuse_if_running=True)
        self.announce_undo(item, force=force)
        return item

    def _resume(self, *, force: bool) -> ProjectionItem:
        item = self.workspace.resume(force=force, refuse_if_running=True)
        self.announce(item)
        return item

    def announce(self, item: ProjectionItem, *, force: bool = False) -> None:
        """Tell every frontend which frames (and cells) a rewind popped, and when, and take the
        agent's cell edits in those frames back (`force`: over the user's later edits too)."""
        if self.notebook is not None:
            self.notebook.after(item, force=force)
        checkpoints = self.workspace.checkpoints_if_on
        frames = checkpoints.frames() if checkpoints is not None else {}
        cell_ids = sorted(
            {c for i in item.frames if (c := getattr(frames.get(i), "cell_id", None))}
        )
        self.comms.notify(
            "frames.rewound",
            {"frames": item.frames, "cell_ids": cell_ids, "at": item.time, "by": item.seq},
        )

    def _resolve(self, frame: int | None, cell_id: str | None) -> int:
        return self.workspace.target(frame, cell_id)

    def _preview(
        self,
        frame: int,
        *,
        force: bool = False,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> dict[str, Any]:
        try:
            preview = self.workspace.preview(
                frame,
                force=force,
                include_external=include_external,
                keep_uncertain=keep_uncertain,
            )
        except (RewindError, ValueError) as exc:
            return {
                "files": [],
                "skipped": [],
                "conflicts": [],
                "external": [],
                "messages_dropped": 0,
                "frames": [],
                "error": str(exc),
            }
        plan = preview.plan
        assert plan is not None  # a whole rewind's preview plans the files
        return {
            "frames": plan.frames,
            "files": [{"path": p, "action": file_action(plan, p, t)} for p, t in plan.restore],
            "skipped": [{"path": s.path, "detail": s.detail} for s in plan.skipped],
            "conflicts": [{"path": c.path, "detail": c.detail} for c in plan.conflicts],
            "external": [{"path": e.path, "detail": e.detail} for e in plan.external],
            "messages_dropped": plan.messages_dropped,
            "variables": [
                {"name": s.name, "action": s.action, "detail": s.detail} for s in preview.variables
            ],
            "cell_edits": cell_steps(self.workspace.cell_edits(plan.frames)),
        }

    def _rewind(
        self,
        frame: int,
        scope: RewindScope,
        *,
        force: bool,
        frontend: bool,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> ProjectionItem:
        """`frontend`: asked over the comm, never by the running cell's own code. A widget
        click on the main thread while a frame is open comes from that cell (it pops only the
        closed frames, as before); from another thread, a cell is running concurrently."""
        concurrent = frontend or threading.current_thread() is not threading.main_thread()
        item = self.workspace.rewind(
            frame,
            scope,
            force=force,
            include_external=include_external,
            refuse_if_running=concurrent,
            keep_uncertain=keep_uncertain,
        )
        self.announce(item, force=force)
        return item
