"""Renderings of variable checkpoints: `%logician vars N`, and the variables part of a rewind
report and a dry run (a cell's not-captured line is the frame bracket's, `workspace/frame.py`).
Pure formatting over the workspace's views."""

from __future__ import annotations

from collections.abc import Sequence

from ..workspace import (
    FileCheckpoints,
    FrameView,
    ProjectionItem,
    RewindError,
    RewindPlan,
    VariableCheckpoints,
    VariableRecord,
    VariableStep,
)
from . import display as render
from .safe_html import inert, tag

_STEP_TEXT = {
    "restore": "would restore",
    "delete": "would delete",
    "not-restorable": "cannot restore",
    "not-live": "not live",
}


def size_text(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def vars_report(
    checkpoints: FileCheckpoints, variables: VariableCheckpoints | None, spec: str
) -> render.Rendered:
    """`%logician vars N | --last`, or a one-line RewindError saying why not."""
    if variables is None:
        raise RewindError("%logician vars: the thread ledger is unavailable for this session")
    frames = checkpoints.frames()
    if spec in ("--last", "last"):
        active = checkpoints.active_frames()
        if not active:
            raise RewindError("%logician vars: no frame of this notebook is recorded yet")
        view = active[-1]
    elif spec.isdigit() and int(spec) in frames:
        view = frames[int(spec)]
    else:
        raise RewindError(f"%logician vars: there is no frame {spec!r}; see `%logician frames`")
    return vars_table(view, variables.records(view.frame))


def vars_table(view: FrameView, records: Sequence[VariableRecord]) -> render.Rendered:
    title = f"Frame {view.frame} (In [{view.execution_count}])"
    if view.status == "rewound":
        title += " - rewound"
    if not records:
        return render.preformatted(f"{title}: no user variable created, changed or deleted.")
    rows = [
        [
            r.name,
            r.action,
            r.type or "-",
            size_text(r.size) if r.blob else "-",
            _note(r),
        ]
        for r in records
    ]
    text, table = render._table(["variable", "action", "type", "size", "note"], rows)
    missed = [r.name for r in records if r.not_captured]
    foot = (
        (
            f"\nNot captured ({', '.join(missed)}): a rewind past this frame cannot restore "
            f"them; re-run In [{view.execution_count}] instead."
        )
        if missed
        else ""
    )
    # names are the user's (or a model's) text: escaped by `safe_html`, here and on every replay
    # of this frame's records from the ledger
    markup = inert(tag("p", title), table, tag("p", foot.strip()) if foot else "")
    return render.Rendered(f"{title}\n{text}{foot}", markup)


def _note(r: VariableRecord) -> str:
    if r.not_captured:
        return f"not captured: {r.not_captured}"
    if r.action == "shared":
        return "stored with the names sharing its objects"
    if r.blob and (r.type or "").startswith("module "):
        return "stored as a binding (a rewind never unloads the module)"
    return "stored" if r.blob else ""


def dry_run(plan: RewindPlan | None, steps: Sequence[VariableStep], frame: int) -> render.Rendered:
    lines = (
        render.rewind_plan(plan).text.splitlines()
        if plan is not None
        else [f"Dry run: rewinding the variables to just before frame {frame}"]
    )
    if steps:
        lines += [
            f"  {_STEP_TEXT[s.action]} variable {s.name}" + (f" ({s.detail})" if s.detail else "")
            for s in steps
        ]
    else:
        lines.append("  no variable to restore")
    return render.preformatted("\n".join(lines))


def rewind_result(item: ProjectionItem) -> render.Rendered:
    """The rewind report: files (as before), then what happened to each variable."""
    variables = item.variables
    tally = render._counts(v.action for v in variables) if variables else "none to restore"
    if item.scope is not None and item.scope.single == "variables":
        lines = [f"Rewound the variables ({tally}); files, frames and conversation untouched."]
    else:
        lines = render.rewind_result(item).text.splitlines()
        if item.variable_frames or variables:
            lines[0] += f"; variables: {tally}"
    for v in variables:
        lines.append(f"  {v.action:<9} variable {v.name}" + (f" ({v.detail})" if v.detail else ""))
    lost = [v.name for v in variables if v.action == "not-restored"]
    if lost:
        lines.append(
            f"{len(lost)} variable(s) could not be restored ({', '.join(lost)}): "
            "re-run the cells named above to get them back."
        )
    return render.preformatted("\n".join(lines))
