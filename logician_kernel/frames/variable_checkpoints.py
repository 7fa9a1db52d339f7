"""Variable checkpoints: per-frame manifests in the ledger, and the namespace half of a rewind.

The state after frame N is the state before frame N+1, so rewinding frame N gives every name
that frames N.. touched the value of its latest record before N (among frames whose variable
changes were not already taken back), removes names those frames created, and brings back
names they deleted. Names stored together come back from one read, sharing their objects.

Owns the `variables` ledger entries and the `.logician/variables` store of one thread; the
kernel hands it the namespace (a plain dict) and the frame boundaries.

Must never: raise into a cell at capture, or leave a name half-restored (a group is loaded
completely before any name of it is assigned).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..durable.blob_key import BlobKey
from ..ledger.thread_ledger import (
    FrameOpen,
    ProjectionItem,
    RestoredVariable,
    ThreadLedger,
    VariableRecord,
    VariablesCaptured,
)
from .variable_store import BlobRefused, VariableStore
from .variables import VariableCapture


@dataclass
class VariableStep:
    """What a rewind would do to one name."""

    name: str
    action: str
    """`restore`, `delete`, `not-restorable` or `not-live`."""
    record: VariableRecord | None = None
    detail: str = ""


@dataclass
class VariableHistory:
    """The variable manifests of one thread that still count, by frame, oldest first."""

    records: dict[int, list[VariableRecord]] = field(default_factory=dict)
    cells: dict[int, int | None] = field(default_factory=dict)
    """Frame id to its cell's execution count."""

    def cell(self, frame: int) -> str:
        count = self.cells.get(frame)
        return f"In [{count}]" if count is not None else f"frame {frame}"


def history(entries: Sequence[BaseModel]) -> VariableHistory:
    """Fold the ledger: manifests of frames whose variables no rewind took back (or whose
    rewind was undone: a `restore` item that `undoes` it gives its frames back)."""
    out = VariableHistory()
    taken: set[int] = set()
    for entry in entries:
        if isinstance(entry, FrameOpen):
            out.cells[entry.frame] = entry.execution_count
        elif isinstance(entry, VariablesCaptured):
            out.records.setdefault(entry.frame, []).extend(entry.records)
        elif isinstance(entry, ProjectionItem) and entry.undoes is not None:
            taken -= set(entry.variable_frames)
        elif isinstance(entry, ProjectionItem):
            taken |= set(entry.variable_frames)
    out.records = {f: r for f, r in out.records.items() if f not in taken}
    return out


def plan(entries: Sequence[BaseModel], frame_id: int, live: Iterable[str]) -> list[VariableStep]:
    """Per name, what rewinding to just before `frame_id` does to the namespace."""
    hist = history(entries)
    later = [f for f in sorted(hist.records) if f >= frame_id]
    earlier = [f for f in sorted(hist.records) if f < frame_id]
    touched: dict[str, int] = {}
    for f in later:
        for r in hist.records[f]:
            if r.action != "shared" and r.name != "*":
                touched.setdefault(r.name, f)
    latest: dict[str, tuple[int, VariableRecord]] = {}
    for f in earlier:
        for r in hist.records[f]:
            if r.name != "*":
                latest[r.name] = (f, r)
    live = set(live)
    steps: list[VariableStep] = []
    for name, first in sorted(touched.items()):
        if name not in latest:
            first_record = next(r for r in hist.records[first] if r.name == name)
            if first_record.action == "created":
                steps.append(VariableStep(name, "delete", detail=f"created by {hist.cell(first)}"))
            else:
                steps.append(
                    VariableStep(
                        name,
                        "not-restorable",
                        detail=(f"its value before {hist.cell(first)} was never captured"),
                    )
                )
            continue
        f, record = latest[name]
        if record.action == "deleted":
            steps.append(VariableStep(name, "delete", detail=f"deleted by {hist.cell(f)}"))
        elif record.blob is None:
            steps.append(
                VariableStep(
                    name,
                    "not-restorable",
                    record,
                    detail=(f"{record.not_captured}; re-run {hist.cell(f)} to get it back"),
                )
            )
        else:
            steps.append(VariableStep(name, "restore", record, detail=f"as {hist.cell(f)} left it"))
    for name, (f, record) in sorted(latest.items()):
        if name not in touched and name not in live and record.action != "deleted":
            steps.append(
                VariableStep(
                    name,
                    "not-live",
                    record,
                    detail=(
                        f"not in the live namespace (the kernel restarted?); {hist.cell(f)} made it"
                    ),
                )
            )
    return steps


class VariableCheckpoints:
    """One thread's variable capture and restore, over a namespace the kernel binds."""

    def __init__(
        self,
        ledger: ThreadLedger,
        state_dir: Path,
        *,
        enabled: bool = True,
        max_bytes: int = 256 * 1024 * 1024,
        ignore: Iterable[str] = (),
        key: BlobKey,
    ) -> None:
        self.ledger = ledger
        self.enabled = enabled
        self.store = VariableStore(Path(state_dir) / "variables", key)
        self.capture = VariableCapture(self.store, max_bytes=max_bytes, ignore=ignore)
        self.namespace: MutableMapping[str, Any] | None = None
        self.after_store: Callable[[], object] | None = None
        """Called once a frame's values are stored (the disk budget evicts what no longer
        fits); set by whoever opens the thread."""

    def bind(self, namespace: MutableMapping[str, Any], hidden: Mapping[str, Any] | None) -> None:
        """The namespace of the kernel's shell, and the names it hides (`In`, `Out`, ...)."""
        self.namespace = namespace
        self.capture.hidden = hidden

    def configure(self, *, enabled: bool, max_bytes: int, ignore: Iterable[str]) -> None:
        self.enabled = enabled
        self.capture.configure(max_bytes=max_bytes, ignore=ignore)

    def open(self, frame: int | None, code: str) -> None:
        if self.enabled and frame is not None and self.namespace is not None:
            self.capture.open(frame, self.namespace, code)

    def add_code(self, code: str) -> None:
        self.capture.add_code(code)

    def close(self) -> VariablesCaptured | None:
        """Store what the frame changed and append its manifest (none when nothing changed)."""
        if self.namespace is None or not self.capture.is_open:
            return None
        result = self.capture.close(self.namespace)
        if result is None or not result[1]:
            return None
        frame, records, ms = result
        entry: VariablesCaptured = self.ledger.append(
            VariablesCaptured, frame=frame, records=records, duration_ms=round(ms, 3)
        )
        if self.after_store is not None and any(r.blob for r in records):
            try:
                self.after_store()
            except OSError:  # an eviction that failed leaves the store over budget, not the cell
                pass
        return entry

    def records(self, frame: int) -> list[VariableRecord]:
        out: list[VariableRecord] = []
        for entry in self.ledger.entries:
            if isinstance(entry, VariablesCaptured) and entry.frame == frame:
                out.extend(entry.records)
        return out

    def plan(self, frame_id: int) -> list[VariableStep]:
        """The steps of a rewind to before `frame_id`; a value the disk budget evicted is
        named as not restorable, in a dry run too."""
        live = self.namespace.keys() if self.namespace is not None else ()
        steps = plan(self.ledger.entries, frame_id, live)
        for i, step in enumerate(steps):
            blob = step.record.blob if step.record is not None else None
            if step.action == "restore" and blob and not self._present(blob):
                reason = self.store.missing_reason(blob)
                steps[i] = VariableStep(step.name, "not-restorable", step.record, detail=reason)
        return steps

    def _present(self, blob: str) -> bool:
        try:
            return self.store.has(blob)
        except BlobRefused:  # an invalid name: the load refuses it, with its reason
            return True

    def rewind(self, frame_id: int) -> tuple[list[RestoredVariable], list[int]]:
        """Bring the namespace back to just before `frame_id`; the frames taken back."""
        if self.namespace is None:
            return [], []
        hist = history(self.ledger.entries)
        taken = [f for f in sorted(hist.records) if f >= frame_id]
        groups: dict[str, dict[str, Any] | str] = {}
        results: list[RestoredVariable] = []
        for step in self.plan(frame_id):
            if step.action == "delete":
                gone = self.namespace.pop(step.name, _MISSING) is _MISSING
                hidden = self.capture.hidden or {}
                if step.name in hidden:  # a shell name the user rebound: the shell's again
                    self.namespace[step.name] = hidden[step.name]
                self.capture.forget(step.name)
                results.append(
                    RestoredVariable(
                        name=step.name,
                        action="deleted",
                        detail=step.detail + ("; was already gone" if gone else ""),
                    )
                )
            elif step.action == "restore" and step.record is not None:
                blob = step.record.blob or ""
                if blob not in groups:  # refused (failed its check) or loaded, never both
                    groups[blob] = self.store.load(blob, self.namespace)
                group = groups[blob]
                if isinstance(group, str) or step.name not in group:
                    reason = group if isinstance(group, str) else "missing from its stored group"
                    results.append(
                        RestoredVariable(name=step.name, action="not-restored", detail=reason)
                    )
                    continue
                self.namespace[step.name] = group[step.name]
                self.capture.restored(step.name, group[step.name], step.record.digest)
                results.append(
                    RestoredVariable(name=step.name, action="restored", detail=step.detail)
                )
            else:
                results.append(
                    RestoredVariable(
                        name=step.name,
                        action="not-live" if step.action == "not-live" else "not-restored",
                        detail=step.detail,
                    )
                )
        return results, taken


_MISSING = object()
