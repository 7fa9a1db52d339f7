"""The approval vocabulary, declared once: what a user may answer and through which channel.

The gate, the ledger, the audit log, the comm protocol, the approval card and the stdin prompt
all take their choices from here (the comm's JSON schema and the lab extension's TypeScript
mirror it, and a test holds them to it).
"""

from __future__ import annotations

from typing import Literal, get_args

ApprovalChoice = Literal["allow_once", "allow_session", "always_allow", "deny", "deny_and_stop"]
"""The user's answer: run it; run it and allow such calls for the rest of the session; the
same, and also persist the rule in the user configuration; refuse it; refuse it and stop the
run."""

APPROVAL_CHOICES: tuple[ApprovalChoice, ...] = get_args(ApprovalChoice)
"""Every choice, in the order views offer them."""

ApprovalChannel = Literal["widget", "comm", "stdin", "headless", "callback"]
"""Where a decision was made: the card in the cell, a `logician` comm client (the sidebar),
an `input()` prompt, the headless policy (nobody could be asked), or a script's `approve`
callback (`AgentSession.run`)."""

APPROVAL_CHANNELS: tuple[ApprovalChannel, ...] = get_args(ApprovalChannel)
"""Every channel."""

PreviewKind = Literal["command", "diff", "code", "text"]
"""How an approval request's preview reads: a shell command, a unified diff, source code, or
prose."""

CHOICE_LABELS: dict[ApprovalChoice, str] = {
    "allow_once": "Allowed once",
    "allow_session": "Allowed for this session",
    "always_allow": "Always allowed",
    "deny": "Denied",
    "deny_and_stop": "Denied, and the run stopped",
}
"""How a decision reads once made (cards, stdin, listings)."""
