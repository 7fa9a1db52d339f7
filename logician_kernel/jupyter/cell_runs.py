"""The cells the agent asked to run (`notebook_run`): queued while the agent's cell runs, and
sent to the frontend holding the notebook when that cell ends, each to execute as its own
cell (its own frame, its own `In [n]`, its outputs in that cell).

Why not run it through the `python` tool with the outputs copied into the cell: the code
would then belong to the agent's frame (one rewind would take back both, and the cell could
never be rewound on its own), its outputs would be a copy a widget or a display update could
not follow, and its `In [n]` would not be its own. The price: the model does not see the
outputs in the turn that asked (it can read the cell in a later turn).

The rules, one `CellRunQueue` per kernel:

- a run names one code cell by id, with the source it holds when asked (`expect`);
- refused: the agent's own cell and any `%%logician` cell (running one would start the agent
  again), a non-code cell, and more than `MAX_RUNS` runs in one agent cell;
- asking again for a queued cell keeps one run, placed where it was last asked;
- an agent edit of a queued cell makes the new source the one expected; an agent delete drops
  the run (said);
- the queue goes to the frontend only when the agent's cell ended `ok`; interrupted or failed,
  the runs are dropped (said), and so when no frontend holds the notebook then;
- the frontend runs a cell only if it still holds `expect` (else the user edited it: not run,
  a conflict) and still exists (else missing).

The queue lives in memory only: a kernel that dies before the agent's cell ends runs nothing,
which is why queueing needs no recovery of its own (the edit's `cell_edit` entry is the record).

Must never: run a cell itself (the frontend does), or keep a run past the agent's cell that
asked for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

MAX_RUNS = 10
"""Runs one agent cell may queue."""


class RunRefused(ValueError):
    """Why a cell cannot be queued (the tool's error)."""


@dataclass(frozen=True)
class QueuedRun:
    cell_id: str
    expect: str
    """The source the cell must still hold when its turn comes."""
    call_id: str | None


class CellRunQueue:
    """The runs the agent's current cell asked for (thread-safe: tools queue from the run's
    worker thread, the kernel sends from its main thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: list[QueuedRun] = []
        self._agent_cell: str | None = None
        self.notices: list[str] = []
        """What happened to runs that will not be sent (read and cleared by `take_notices`)."""

    def begin(self, cell_id: str | None) -> None:
        """A cell starts executing: runs left by an earlier cell are gone (said)."""
        with self._lock:
            self._agent_cell = cell_id
            left = self._runs
            self._runs = []
        if left:
            self._say(left, "were dropped: the cell that asked for them never ended")

    def queue(self, cell_id: str, source: str, cell_type: str, call_id: str | None) -> int:
        """Queue one run; its position (1-based). `RunRefused` says why not."""
        if cell_type != "code":
            raise RunRefused(f"cell {cell_id} is a {cell_type} cell; only code cells run")
        if cell_id == self._agent_cell:
            raise RunRefused(f"cell {cell_id} is the agent's own cell; it cannot run itself")
        if source.lstrip().startswith("%%logician"):
            raise RunRefused(
                f"cell {cell_id} is a %%logician cell; the agent does not start agent cells"
            )
        with self._lock:
            kept = [r for r in self._runs if r.cell_id != cell_id]
            if len(kept) >= MAX_RUNS:
                raise RunRefused(
                    f"{MAX_RUNS} runs are queued already; one agent cell may queue at most "
                    f"{MAX_RUNS}"
                )
            kept.append(QueuedRun(cell_id, source, call_id))
            self._runs = kept
            return len(kept)

    def edited(self, before: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
        """The agent edited a cell: a queued run of it expects the new source, or is dropped
        with the deleted cell."""
        gone: list[QueuedRun] = []
        with self._lock:
            runs = []
            for run in self._runs:
                if after is not None and after.get("id") == run.cell_id:
                    runs.append(QueuedRun(run.cell_id, str(after.get("source", "")), run.call_id))
                elif after is None and before is not None and before.get("id") == run.cell_id:
                    gone.append(run)
                else:
                    runs.append(run)
            self._runs = runs
        if gone:
            self._say(gone, "will not run: the agent deleted it")

    def take(self, outcome: str, *, unavailable: str = "") -> list[QueuedRun]:
        """The agent's cell ended with `outcome`: the runs to send now (none unless `ok`, and
        none when `unavailable` says why no frontend can run them); the queue is empty
        afterwards."""
        with self._lock:
            runs, self._runs = self._runs, []
            self._agent_cell = None
        if not runs:
            return []
        if outcome != "ok":
            word = "was interrupted" if outcome == "interrupted" else "failed"
            self._say(runs, f"will not run: the agent's cell {word}")
            return []
        if unavailable:
            self._say(runs, f"will not run: {unavailable}")
            return []
        return runs

    def pending(self) -> list[QueuedRun]:
        with self._lock:
            return list(self._runs)

    def take_notices(self) -> list[str]:
        with self._lock:
            said, self.notices = self.notices, []
        return said

    def _say(self, runs: list[QueuedRun], what: str) -> None:
        ids = ", ".join(r.cell_id for r in runs)
        plural = "s" if len(runs) != 1 else ""
        with self._lock:
            self.notices.append(
                f"Logician: the run{plural} the agent queued (cell{plural} {ids}) {what}."
            )


def settled_text(started: list[str], conflicts: list[str], missing: list[str]) -> str | None:
    """The notice for the frontend's answer to a `run` request; None when all started."""
    parts = []
    if conflicts:
        parts.append(f"not run, edited by you since the agent asked: {', '.join(conflicts)}")
    if missing:
        parts.append(f"not run, no longer in the notebook: {', '.join(missing)}")
    if not parts:
        return None
    ran = f"{len(started)} cell(s) run" if started else "no cell run"
    return f"Logician: the agent's queued runs: {ran}; " + "; ".join(parts) + "."
