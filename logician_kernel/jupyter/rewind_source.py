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
    CellEdit,
    FrameView,
    ProjectionItem,
    RewindError,
    RewindScope,
    Workspace,
    interrupted_notice,
    launch_dir,
    map_lab_path,
)
from . import display as render
from . import undo_view, variables_view
from .comm import LogicianComms
from .notebook_bridge import NotebookBridge
from .widgets import FrameRow, RewindPreview

CODE_SHOWN = 240
"""Characters of a frame's code sent per row: rows stay small however long a cell is."""

EVICTED_SHOWN = 20
"""Evicted paths sent per row: the row says "large files evicted" and names the first few."""


class LedgerRewindSource:
    """What the rewind control reads and does, over the session's frames and ledger."""

    def __init__(self, workspace: Workspace, comms: LogicianComms) -> None:
        self.workspace = workspace
        self.comms = comms
        self.notebook: NotebookBridge | None = None
        """Takes the agent's cell edits back with a rewind (and again with an undo)."""

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
        return [_row(f, page.evicted.get(f.frame)) for f in page.frames], page.total

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
        return {
            "frame": frame_id,
            **self._preview(
                frame_id,
                force=force,
                include_external=include_external,
                keep_uncertain=keep_uncertain,
            ),
        }

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
        }

    def undo_target(self, force: bool) -> dict[str, Any]:
        item = self._undo(force=force)
        return {
            "ok": True,
            "frames": item.frames,
            "undoes": item.undoes,
            "conflicts": [p.path for p in item.paths if p.action == "conflict"],
            "summary": undo_view.undo_result(item).text,
        }

    def resume_target(self, force: bool) -> dict[str, Any]:
        item = self._resume(force=force)
        return {
            "ok": True,
            "frames": item.frames,
            "conflicts": [p.path for p in item.paths if p.action == "conflict"],
            "summary": undo_view.resume_result(item).text,
        }

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
            "files": [
                {"path": p, "action": "delete" if t.kind == "absent" else "restore"}
                for p, t in plan.restore
            ],
            "skipped": [{"path": s.path, "detail": s.detail} for s in plan.skipped],
            "conflicts": [{"path": c.path, "detail": c.detail} for c in plan.conflicts],
            "external": [{"path": e.path, "detail": e.detail} for e in plan.external],
            "messages_dropped": plan.messages_dropped,
            "variables": [
                {"name": s.name, "action": s.action, "detail": s.detail} for s in preview.variables
            ],
            "cells": cell_steps(self.workspace.cell_edits(plan.frames)),
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


_CELL_STEP = {
    "insert": ("remove", "inserted by the agent → removed"),
    "replace": ("restore", "replaced by the agent → its source restored"),
    "delete": ("re-insert", "deleted by the agent → inserted again"),
}


def cell_steps(edits: list[CellEdit]) -> list[dict[str, Any]]:
    """What a rewind would do to the notebook's cells, newest edit first (a cell the user
    edited since is found a conflict only when the notebook's frontend applies it)."""
    steps = []
    for edit in reversed(edits):
        cell = edit.after or edit.before
        action, detail = _CELL_STEP[edit.mode]
        steps.append({"id": cell.id if cell else "?", "action": action, "detail": detail})
    return steps


def _row(f: FrameView, evicted: list[str] | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "frame": f.frame,
        "execution_count": f.execution_count,
        "cell_id": f.cell_id,
        "code": f.code[:CODE_SHOWN],
        "time": f.opened_at,
        "outcome": f.outcome,
        "status": f.status,
        "rewound_at": f.rewound_at,
        "rewound_by": f.rewound_by,
        "files": len(f.changes),
        "skipped": len(f.skipped),
        "input_tokens": f.input_tokens,
        "output_tokens": f.output_tokens,
    }
    if f.incomplete:
        # Optional too: "rewind incomplete: N path(s) failed" (the sidebar offers Resume).
        row["incomplete"] = f.incomplete
    if evicted:
        # Optional, so an older extension (and frames with nothing evicted) see the same row.
        row["evicted"] = evicted[:EVICTED_SHOWN]
    return row
