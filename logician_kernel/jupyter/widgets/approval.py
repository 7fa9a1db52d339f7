"""The approval card: one pending permission request (the gate's own `ApprovalRequest`, seen as
its `ApprovalPrompt`), shown inline where the agent asked.

A thin view: stock `ipywidgets` controls composed in a `VBox`, one callback out
(`on_decide(choice, note)`), called at most once. A decision made elsewhere (the sidebar,
stdin, the headless policy) reaches the card through `resolve()`, which changes the display the
same way without calling back. Every string from the request reaches the page as text (the
HTML is built by `safe_html`, in blocks MathJax leaves alone), and previews are bounded so that
a huge diff or command cannot flood the notebook.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w
from traitlets import Unicode

from ...agent.approvals import ApprovalPrompt
from ...types.approvals import APPROVAL_CHOICES, CHOICE_LABELS, ApprovalChoice, PreviewKind
from ..safe_html import Markup, inert, join, tag
from . import colours
from ._plain import PlainText

Choice = ApprovalChoice
"""What the user decided about one request (declared once, in `types.approvals`)."""

CHOICES: tuple[Choice, ...] = APPROVAL_CHOICES
"""Every choice, in the order the card's buttons show them."""

MAX_PREVIEW_LINES = 40
"""Preview lines shown; the rest are counted in a "… N more lines" note."""

MAX_LINE_CHARS = 400
"""Characters shown of one preview line; longer lines end in "…"."""

_OUTCOME_LABELS: dict[ApprovalChoice, str] = CHOICE_LABELS
_DENIALS = ("deny", "deny_and_stop")

_VIA_PHRASES: dict[str, str] = {
    "sidebar": "in the sidebar",
    "comm": "in the sidebar",
    "stdin": "at the terminal prompt",
    "policy": "by the policy",
    "headless": "by the headless policy",
}

_MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 0.9em;"
_PRE = f"margin: 0; padding: 4px 6px; white-space: pre-wrap; word-break: break-all; {_MONO}"
_DIFF_COLOURS = (
    ("+++", "font-weight: bold;"),
    ("---", "font-weight: bold;"),
    ("@@", f"color: {colours.ACCENT};"),
    ("+", f"color: {colours.TEXT}; background: {colours.ADDED_BACKGROUND};"),
    ("-", f"color: {colours.TEXT}; background: {colours.REMOVED_BACKGROUND};"),
)


def bounded_lines(text: str, max_lines: int = MAX_PREVIEW_LINES) -> tuple[list[str], int]:
    """The first `max_lines` lines of `text`, each cut to `MAX_LINE_CHARS`, and how many more."""
    lines = text.splitlines() or [""]
    shown = [
        line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
        for line in lines[:max_lines]
    ]
    return shown, max(len(lines) - max_lines, 0)


def preview_html(text: str, kind: PreviewKind, *, max_lines: int = MAX_PREVIEW_LINES) -> Markup:
    """`text` as escaped, bounded HTML: monospace for commands and code, coloured for diffs."""
    shown, more = bounded_lines(text, max_lines)
    if kind == "diff":
        body = join((_diff_line(line) for line in shown), "\n")
    elif kind == "command":
        prompt = tag("span", "$ ", style="user-select: none; opacity: 0.6;")
        body = join([prompt, "\n".join(shown)])
    else:
        body = join(["\n".join(shown)])
    style = _PRE if kind != "text" else "margin: 0; white-space: pre-wrap;"
    tail = ""
    if more:
        noun = "line" if more == 1 else "lines"
        tail = tag("div", f"… {more} more {noun}", style="opacity: 0.7; font-style: italic;")
    return inert(tag("pre", body, class_=f"lk-approval-preview lk-{kind}", style=style), tail)


def _diff_line(line: str) -> Markup:
    for prefix, style in _DIFF_COLOURS:
        if line.startswith(prefix):
            return tag("span", line, style=style)
    return join([line])


def decision_text(choice: Choice, note: str = "", rule: str = "", via: str = "") -> str:
    """A plain sentence for a decision, e.g. "Denied: use rg instead (decided in the sidebar)"."""
    text = _OUTCOME_LABELS[choice]
    if choice == "always_allow" and rule:
        text += f" ({rule})"
    if note.strip():
        text += f": {note.strip()}" if choice in _DENIALS else f" — note: {note.strip()}"
    if via:
        text += f" (decided {_VIA_PHRASES.get(via, via)})"
    return text


class ApprovalCard(PlainText, w.VBox):
    """One permission request with its four choices and an optional note for the agent.

    `on_decide(choice, note)` is called once, on the first click; afterwards (or after
    `resolve()`) the card shows the decision and every control is disabled.
    """

    decision = Unicode(
        "",
        help="The choice made (allow_once, allow_session, always_allow, deny, deny_and_stop); '' while pending.",
    )
    decided_via = Unicode(
        "", help="Where a decision made outside the card came from ('' when clicked here)."
    )

    def __init__(self, request: ApprovalPrompt, on_decide: Callable[[str, str], None]):
        self.request = request
        """The request shown (the gate's `ApprovalRequest`, or any `ApprovalPrompt`)."""
        self._on_decide = on_decide
        rule = self.rule_offered
        reason = tag("span", f" — {request.reason}", style="opacity: 0.75;")
        self.header = w.HTML(
            inert(
                tag("b", f"Approve {request.tool}?"),
                reason if request.reason else "",
                tag("div", request.description) if request.description.strip() else "",
            )
        )
        self.preview = w.HTML(preview_html(request.preview, request.preview_kind))
        self.buttons: dict[Choice, w.Button] = {
            "allow_once": w.Button(
                description="Allow once", button_style="success", tooltip="Allow this call only"
            ),
            "allow_session": w.Button(
                description="Allow for this session",
                tooltip="Allow calls like this one until the kernel restarts",
            ),
            "always_allow": w.Button(
                description="Always allow",
                tooltip=f"Always allow: saves the rule {rule}" if rule else "No rule to save",
                disabled=not rule,
            ),
            "deny": w.Button(
                description="Deny",
                button_style="danger",
                tooltip="Deny; the note goes to the agent",
            ),
            "deny_and_stop": w.Button(
                description="Deny and stop",
                button_style="danger",
                tooltip="Deny and stop the run; the note goes to the agent",
            ),
        }
        for choice, button in self.buttons.items():
            button.on_click(self._clicked(choice))
        self.rule = w.HTML(
            inert(tag("small", "Always allow saves the rule ", tag("code", rule))) if rule else ""
        )
        self.note = w.Textarea(
            placeholder="Note for the agent (sent with a denial)",
            layout=w.Layout(width="100%", height="3.5em"),
        )
        self.outcome = w.HTML("")
        super().__init__(
            [
                self.header,
                self.preview,
                w.HBox(list(self.buttons.values())),
                self.rule,
                self.note,
                self.outcome,
            ],
            layout=w.Layout(border=f"1px solid {colours.BORDER}", padding="6px"),
        )
        self.add_class("lk-approval-card")

    @property
    def rule_offered(self) -> str:
        """The rule *Always allow* persists, e.g. `bash(git status:*)`; '' when none is offered."""
        return self.request.suggested_rule or ""

    def plain_text(self) -> str:
        """The question, the bounded preview, the choices, and the decision once made."""
        request = self.request
        lines = [f"Approve {request.tool}?" + (f" ({request.reason})" if request.reason else "")]
        if request.description.strip():
            lines.append(request.description.strip())
        if request.preview.strip() and request.preview.strip() != request.description.strip():
            shown, more = bounded_lines(request.preview, max_lines=20)
            prompt = "$ " if request.preview_kind == "command" else ""
            lines += [f"  {prompt if i == 0 else ''}{line}" for i, line in enumerate(shown)]
            if more:
                lines.append(f"  … {more} more line{'s' if more > 1 else ''}")
        rule = self.rule_offered
        choices = [
            b.description + (f" ({rule})" if c == "always_allow" else "")
            for c, b in self.buttons.items()
            if not (c == "always_allow" and not rule)
        ]
        lines.append("Choices: " + " · ".join(choices))
        if self.decided:
            lines.append(
                decision_text(
                    self.decision,  # type: ignore[arg-type]
                    self.note.value,
                    rule,
                    self.decided_via,
                )
            )
        return "\n".join(lines)

    @property
    def decided(self) -> bool:
        """Whether the request has been decided, here or elsewhere."""
        return bool(self.decision)

    def resolve(self, choice: str, note: str = "", via: str = "") -> bool:
        """Show a decision made elsewhere, without calling `on_decide`.

        `via` names where: "sidebar", "stdin", "policy", "headless", or any phrase ("in the
        sidebar"). Returns False (and changes nothing) if the card was already decided.
        """
        return self._decide(_checked(choice), note, via)

    def _clicked(self, choice: Choice) -> Callable[[w.Button], None]:
        def clicked(_button: w.Button) -> None:
            note = self.note.value
            if self._decide(choice, note, ""):
                self._on_decide(choice, note)

        return clicked

    def _decide(self, choice: Choice, note: str, via: str) -> bool:
        if self.decided:
            return False
        self.decided_via = via
        self.decision = choice
        for button in self.buttons.values():
            button.disabled = True
        self.note.disabled = True
        if note and not self.note.value:
            self.note.value = note
        colour = colours.ERROR if choice in _DENIALS else colours.OK
        text = decision_text(choice, note, self.rule_offered, via)
        self.outcome.value = inert(tag("b", text, style=f"color: {colour};"))
        return True


def _checked(choice: str) -> Choice:
    if choice not in CHOICES:
        raise ValueError(f"unknown approval choice {choice!r}; expected one of {CHOICES}")
    return choice  # type: ignore[return-value]
