"""Plain-text and HTML renderings of frames, diffs and rewinds for `%logician` output.

Pure formatting: takes views, returns mime bundles. Every piece of HTML is built by
`safe_html` (escaped, in a MathJax-ignored block), the agent's answer by `markdown_html`;
the plain text is what terminals, `nbval` and `logician run` see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..workspace import FileDiff, FrameView, ProjectionItem, RewindPlan
from .plan_text import file_action, result_lines, rewind_plan_lines
from .safe_html import MATH_IGNORE, Markup, inert, join, tag


@dataclass(frozen=True)
class Rendered:
    text: str
    html: Markup
    """Built by `safe_html` (or `markdown_html`): never a plain string with outside text."""

    def bundle(self) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": self.html}


def answer_bundle(text: str) -> dict[str, str]:
    """The agent's answer: its Markdown rendered to inert HTML here (never `text/markdown`,
    whose raw HTML a frontend that trusts the output would run; see `markdown_html`), and the
    text itself as `text/plain` for consoles, nbconvert's text exports and papermill logs."""
    from .markdown_html import render_markdown  # markdown-it: loaded by the first answer

    return {"text/html": render_markdown(text), "text/plain": text}


def preformatted(text: str) -> Rendered:
    return Rendered(text, inert(tag("pre", text)))


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[str, Markup]:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    text_rows = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    text = "\n".join([line.rstrip(), *text_rows])
    left = "text-align:left"
    head = tag("tr", *(tag("th", h, style=left) for h in headers))
    body = join(tag("tr", *(tag("td", c, style=left) for c in r)) for r in rows)
    return text, tag("table", tag("thead", head), tag("tbody", body))


def _counts(changes: Iterable[str]) -> str:
    tally: dict[str, int] = {}
    for action in changes:
        tally[action] = tally.get(action, 0) + 1
    return ", ".join(f"{n} {a}" for a, n in sorted(tally.items())) or "-"


def frames_table(
    frames: Sequence[FrameView],
    *,
    thread: str,
    evicted: Mapping[int, list[str]] | None = None,
    evicted_variables: Mapping[int, list[str]] | None = None,
) -> Rendered:
    if not frames:
        msg = f"No frames yet in thread {thread}: every cell that does work becomes one."
        return Rendered(msg, inert(tag("p", msg)))
    rows = []
    for f in frames:
        files = file_counts(f)
        if evicted and f.frame in evicted:
            files += " (large files evicted)"
        if evicted_variables and f.frame in evicted_variables:
            names = evicted_variables[f.frame]
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            files += f" (variables evicted: {', '.join(names[:3])}{more})"
        outcome = f.outcome or "running"
        if f.status == "rewound":
            outcome += " (rewound)"
        if f.incomplete:
            outcome += f" ({f.incomplete})"
        rows.append(
            [
                str(f.frame),
                f"In [{f.execution_count}]" if f.execution_count is not None else "-",
                local_time(f.opened_at),
                outcome,
                files,
                f"{f.input_tokens:,}/{f.output_tokens:,}" if f.input_tokens else "-",
                f.code[:60],
            ]
        )
    headers = ["frame", "cell", "time", "outcome", "files changed", "tokens in/out", "code"]
    text, table = _table(headers, rows)
    return Rendered(text, inert(table))


def _size(n: int | None) -> str:
    return "-" if n is None else f"{n:,} B"


def frame_diff(view: FrameView, diffs: Sequence[FileDiff]) -> Rendered:
    title = f"Frame {view.frame} (In [{view.execution_count}], {view.outcome or 'running'})"
    if view.status == "rewound":
        title += f", rewound at {view.rewound_at}"
    if view.capture_error:
        title += f"\nfile changes were not captured: {view.capture_error}"
    if not diffs:
        return preformatted(f"{title}\nno file changes")
    parts_text = [title]
    parts_html = [tag("p", tag("b", title))]
    apart = False
    for d in diffs:
        if d.uncertain and not apart:
            apart = True
            line = (
                "Uncertain - the writer could not be established (a rewind reverts these; "
                "`--keep-uncertain` leaves them alone):"
            )
            parts_text.append(line)
            parts_html.append(tag("p", tag("b", line)))
        head = f"{d.action:<12} {d.path}  ({_size(d.before_size)} -> {_size(d.after_size)})"
        if d.by:
            head += f"  by {d.by}"
        if d.note:
            head += f"  [{d.note}]"
        if d.uncertain:
            head += f"  [uncertain: {d.uncertain}]"
        parts_text.append(head)
        parts_html.append(tag("div", tag("code", head)))
        if d.diff:
            parts_text.append(d.diff.rstrip("\n"))
            parts_html.append(tag("pre", d.diff))
    return Rendered("\n".join(parts_text), inert(*parts_html))


def rewind_plan(plan: RewindPlan) -> Rendered:
    """The dry run: a few paths one by one, thousands by directory (plan_text.py)."""
    return preformatted("\n".join(rewind_plan_lines(plan, _span(plan.frames))))


def rewind_result(item: ProjectionItem) -> Rendered:
    tally = _counts(
        p.action for p in item.paths if p.action in ("restored", "deleted", "recreated")
    )
    only = item.scope.single if item.scope is not None else None
    if only == "conversation":
        lines = [
            f"Rewound the conversation ({len(item.messages)} message(s) remain); "
            "files and frames untouched."
        ]
    else:
        lines = [
            f"Rewound frame(s) {_span(item.frames)}: "
            f"{tally if tally != '-' else 'no files to restore'}"
            + (" (conversation kept)" if only == "files" else "")
        ]
    lines += result_lines(item.paths)  # thousands: counted by directory (plan_text.py)
    conflicts = [p for p in item.paths if p.action == "conflict"]
    if conflicts:
        lines.append(
            f"{len(conflicts)} conflicting file(s) were left alone; "
            "`%logician rewind ... --force` overwrites them."
        )
    kept = [p for p in item.paths if p.action == "external" and "--keep-uncertain" in p.detail]
    external = [p for p in item.paths if p.action == "external" and p not in kept]
    if kept:
        lines.append(
            f"{len(kept)} file(s) whose writer was uncertain were left alone (--keep-uncertain)."
        )
    if external:
        lines.append(
            f"{len(external)} file(s) changed outside this kernel were left alone; "
            "`%logician rewind ... --include-external` reverts them."
        )
    return preformatted("\n".join(lines))


def call_rewind_plan(call_id: str, plan: RewindPlan) -> Rendered:
    """`rewind --call ID --dry-run`: what restoring one call's changes would do."""
    lines = [f"Dry run: rewinding call {call_id} would (its frame stays)"]
    lines += [f"  {file_action(plan, p, t)} {p}" for p, t in plan.restore]
    lines += [f"  conflict: {c.path}: {c.detail}" for c in plan.conflicts]
    lines += [f"  not restorable: {s.path}: {s.detail}" for s in plan.skipped]
    return preformatted("\n".join(lines))


def call_rewind_result(item: ProjectionItem) -> Rendered:
    """`rewind --call ID` of a closed frame's call: what happened to each of its paths."""
    call = item.note.split("--call ", 1)[1].split()[0] if "--call " in item.note else "?"
    lines = [f"Rewound call {call}: {_counts(p.action for p in item.paths)}; frames stay"]
    lines += [
        f"  {p.action:<9} {p.path}" + (f" ({p.detail})" if p.detail else "") for p in item.paths
    ]
    lines.append("`%logician undo` takes it back.")
    return preformatted("\n".join(lines))


def _span(frames: Sequence[int]) -> str:
    if not frames:
        return "-"
    if list(frames) == list(range(frames[0], frames[-1] + 1)) and len(frames) > 2:
        return f"{frames[0]}..{frames[-1]}"
    return ", ".join(map(str, frames))


def file_counts(frame: FrameView) -> str:
    """ "2 created, 1 modified (+1 not captured)" - or "capture failed"."""
    if frame.capture_error:
        return "capture failed"
    text = _counts(c.action for c in frame.changes)
    return text + (f" (+{len(frame.skipped)} not captured)" if frame.skipped else "")


def local_time(iso: str) -> str:
    """Ledger times are UTC; people read their own clock."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return iso


def status(  # type: ignore[no-untyped-def]
    state,
    *,
    thread: str,
    workspace: str,
    frames: int,
    messages: int,
    model: str,
    notices: str = "",
    critical: Sequence[str] = (),
    attribution: str = "",
    extra: Sequence[Sequence[str]] = (),
) -> Rendered:
    """The status table; `notices` is its notices row, `critical` the unread critical
    notices, said in full under it (frames off must be learnt without the sidebar); `extra`
    rows (label, value) come last (the notebook and its tools)."""
    outcome = state.last_outcome
    last = f"{outcome.status}{': ' + outcome.detail if outcome.detail else ''}" if outcome else "-"
    rows = [
        ["phase", state.phase + (" (streaming)" if state.streaming else "")],
        ["model", state.model or model],
        ["thread", thread],
        ["workspace", workspace],
        ["frames", str(frames)],
        *([["attribution", attribution]] if attribution else []),
        ["conversation", f"{messages} message(s)"],
        ["last run", last],
        [
            "last run tokens",
            f"{state.input_tokens:,} in / {state.output_tokens:,} out"
            + (" (estimate: the server reports no usage)" if state.usage_estimated else ""),
        ],
        ["context", _context(state)],
        ["tool calls", f"{state.tool_calls} answered, {state.pending_count} pending"],
        ["retries", str(state.retries)],
    ]
    if notices:
        rows.append(["notices", notices])
    rows.extend([str(label), str(value)] for label, value in extra)
    text, table = _table(["", ""], rows)
    if not critical:
        return Rendered(text, inert(table))
    said = "\n".join(f"! {line}" for line in critical)
    return Rendered(f"{text}\n{said}", inert(table, tag("pre", said)))


THINKING_PREVIEW = 120
"""Characters of the latest reasoning shown in the plain-text (collapsed) thinking line."""


def thinking(text: str) -> Rendered:
    """The model's reasoning, collapsed: HTML frontends get a closed `<details>`; plain text
    gets one line with its size and its latest words, since a terminal cannot expand."""
    flat = " ".join(text.split())
    tail = flat if len(flat) <= THINKING_PREVIEW else "…" + flat[-THINKING_PREVIEW:]
    summary = f"thinking ({len(text):,} characters)"
    plain = f"▸ {summary}: {tail}" if tail else f"▸ {summary}"
    markup = tag(
        "details",
        tag("summary", summary),
        tag("pre", text, style="white-space:pre-wrap"),
        class_=f"lk-thinking lk-inert {MATH_IGNORE}",
    )
    return Rendered(plain, markup)


def _context(state) -> str:  # type: ignore[no-untyped-def]
    if not state.context_window:
        return "-"
    used = state.context_tokens / state.context_window
    return f"{used:.0%} of {state.context_window:,} tokens at the last reply"


def help_text() -> Rendered:
    return preformatted(
        "Logician: every cell that does work is a checkpoint frame.\n"
        "  %logician frames [--all]         frames of this notebook (--all: rewound too)\n"
        "  %logician diff N | --last        what frame N changed, per file\n"
        "  %logician rewind N [--force]     restore files and variables to just before frame N\n"
        "  %logician rewind --cell N        the same, naming the cell by its In [N] number\n"
        "  %logician rewind --last          undo the most recent frame\n"
        "  %logician rewind N --dry-run     show what a rewind would do\n"
        "  %logician rewind N --include-external  also revert changes made outside this kernel\n"
        "  %logician rewind N --files-only | --variables-only | --conversation-only\n"
        "  %logician rewind N --keep-uncertain  leave changes whose writer is uncertain alone\n"
        "  %logician rewind --call ID [--dry-run]  restore what one tool call changed (undoable)\n"
        "  %logician undo [--force]         take back the most recent rewind exactly\n"
        "  %logician rewind --resume        complete an interrupted or incomplete rewind\n"
        "  %logician rewind --skip-failed   finish an incomplete rewind without its failed paths\n"
        "  %logician undo --skip-failed     finish an incomplete undo without its failed paths\n"
        "  %logician rewind --skip-cells    give up cell edits a rewind could not take back yet\n"
        "  %logician vars N | --last        variables frame N created, changed, deleted\n"
        "  %logician config [get K | set K V [--persist user|project] | schema]\n"
        "  %logician trust                  trust this workspace's .logician/config.toml\n"
        "  %logician clear                  start the agent's conversation afresh\n"
        "  %logician status                 the agent's status, thread, workspace, notebook tools\n"
        "  %logician context                what the next prompt carries of the notebook\n"
        "  %logician fix [NOTE]             ask the agent to explain and fix the last error\n"
        "  %logician notices [--all]        what Logician said outside the cells (unread)\n"
        "  %logician audit [-n N]           the recent permission decisions\n"
        "  %logician hooks                  [hooks] commands, their layer and last result\n"
        "  %logician mcp [--wait] [restart N] MCP servers: state, tools, last error; restart one\n"
        "  %logician ledger                 check this thread's ledger for damaged records\n"
        "  %logician threads                the workspace's threads: notebook, frames, last use\n"
        "  %logician thread use ID | new N  switch this kernel to another thread (or a new one)\n"
        "  %logician branches               what rewinds discarded; branch merge|discard ID\n"
        "  %logician storage                what .logician/ holds, by kind and by frame\n"
        "  %logician gc [--keep N]          free large pre-images outside the N newest frames\n"
        "  %logician compact [focus]        summarise older turns into one message\n"
        "  %%logician [--max-turns N]       the rest of the cell is a prompt for the agent\n"
        "  %%logician --profile NAME        ... run with [profiles.NAME] for this cell only\n"
        "  %logician ask PROMPT             one-line prompt ({name} inserts a variable's repr);\n"
        "                                   several words not starting with a command work too"
    )
