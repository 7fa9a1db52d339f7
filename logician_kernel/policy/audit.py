"""The permission audit log: `<workspace>/.logician/audit.jsonl`, one JSON line per decision.

Every decision is appended - routine automatic allows included, with the rule and the
configuration layer that decided - and fsynced before the call it decides may run, so the
log never misses an action that happened. Routine allows are kept out of the transcript and
the cell output; this log is where they live.

Must never: hold a secret (string arguments are masked with `session.redact`, credential-named
arguments dropped to `****`, long values bounded), rewrite a line, or let a torn last line
(a crash mid-append) corrupt the next entry or the reading of the others.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .._durable import append_line
from ..session.redact import MASK, redact
from .permissions import PermissionDecision

AUDIT_FILE = Path(".logician") / "audit.jsonl"
"""Where the audit log lives, relative to the workspace root."""

MAX_ARGUMENT_CHARS = 2_000
"""String arguments longer than this are cut in the log (a `write`'s content, a long script)."""

_CREDENTIAL_NAMES = ("api_key", "apikey", "token", "secret", "password", "passwd", "credential")
_TAIL_BLOCK = 64 * 1024

Resolution = Literal[
    "rule", "mode", "session", "user:allow_once", "user:allow_session", "user:always_allow",
    "user:deny",
    "user:deny_and_stop", "headless:deny", "headless:allow",
]  # fmt: skip
"""How the decision was settled: automatically by a rule, the mode or a session rule; by the
user's answer; or refused because nobody could be asked (a headless run)."""


class AuditLogError(RuntimeError):
    """The audit log could not be written; the message names the file."""


class AuditEntry(BaseModel):
    """One permission decision, as the audit log keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    time: str
    """UTC time of the decision, ISO 8601."""
    thread: str | None = None
    """The conversation thread the run belongs to."""
    frame: int | None = None
    """The checkpoint frame (cell) of the run."""
    call_id: str = ""
    """The tool call decided."""
    tool: str
    """The tool's name."""
    arguments: dict[str, Any] = {}
    """The call's arguments, secrets masked and long values cut."""
    action: Literal["allow", "ask", "deny"]
    """What the policy said."""
    allowed: bool
    """Whether the call ran in the end (after the user's answer, for an ask)."""
    routine: bool = False
    """An automatic allow, kept out of the transcript; False for anything that needed (or
    would have needed) the user, and for denials."""
    rule: str | None = None
    """The rule that decided, as written."""
    layer: str | None = None
    """The configuration layer that contributed the rule."""
    basis: str = "mode"
    """Which step of the policy's order decided (`deny_rule`, `allow_rule`, `mode`, ...)."""
    mode: str = "ask"
    """The permission mode in force."""
    resolution: Resolution = "mode"
    """How the decision was settled."""
    note: str = ""
    """The policy's reason, or what the user said."""

    @classmethod
    def of(
        cls,
        decision: PermissionDecision,
        *,
        tool: str,
        arguments: Mapping[str, Any],
        allowed: bool,
        resolution: Resolution,
        call_id: str = "",
        thread: str | None = None,
        frame: int | None = None,
        note: str = "",
        secrets: Iterable[str] = (),
    ) -> AuditEntry:
        """The entry for `decision`, stamped now, with the arguments masked."""
        return cls(
            time=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            thread=thread,
            frame=frame,
            call_id=call_id,
            tool=tool,
            arguments=mask_arguments(arguments, tuple(secrets)),
            action=decision.action,
            allowed=allowed,
            routine=decision.routine and allowed,
            rule=decision.rule,
            layer=decision.layer,
            basis=decision.basis,
            mode=decision.mode,
            resolution=resolution,
            note=redact(note or decision.reason, secrets),
        )


def mask_arguments(arguments: Mapping[str, Any], secrets: Sequence[str] = ()) -> dict[str, Any]:
    """A JSON-ready copy of `arguments` that is safe to keep: credential-named values become
    `****`, every string is passed through `redact` and cut at `MAX_ARGUMENT_CHARS`."""
    if not isinstance(arguments, Mapping):
        return {"(arguments)": _masked(arguments, secrets)}
    return {str(key): _masked_value(str(key), value, secrets) for key, value in arguments.items()}


def _masked_value(key: str, value: Any, secrets: Sequence[str]) -> Any:
    if any(name in key.lower() for name in _CREDENTIAL_NAMES) and value not in (None, ""):
        return MASK
    return _masked(value, secrets)


def _masked(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, str):
        text = redact(value, secrets)
        if len(text) > MAX_ARGUMENT_CHARS:
            cut = len(text) - MAX_ARGUMENT_CHARS
            text = text[:MAX_ARGUMENT_CHARS] + f"...[{cut} more characters]"
        return text
    if isinstance(value, Mapping):
        return {str(k): _masked_value(str(k), v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(v, secrets) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _masked(repr(value), secrets)


class AuditLog:
    """Append-only JSON lines, fsynced per entry. Safe to share between threads of one
    process; appends from several processes interleave whole lines (one `write` each)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    @classmethod
    def for_workspace(cls, workspace: Path) -> AuditLog:
        return cls(Path(workspace) / AUDIT_FILE)

    def record(self, entry: AuditEntry) -> None:
        """Append `entry` durably (written and fsynced before returning). Raises
        `AuditLogError` naming the file when that is not possible."""
        line = (entry.model_dump_json() + "\n").encode("utf-8")
        with self._lock:
            try:
                self._append(line)
            except OSError as exc:
                raise AuditLogError(
                    f"cannot write the permission audit log {self.path}: {exc.strerror or exc}"
                ) from exc

    def _append(self, line: bytes) -> None:
        append_line(self.path, line)

    def recent(self, n: int = 20) -> list[AuditEntry]:
        """The last `n` readable entries, oldest first. A torn or corrupt line is skipped;
        a missing log is empty."""
        if n <= 0:
            return []
        try:
            lines = _tail_lines(self.path, n)
        except FileNotFoundError:
            return []
        entries: list[AuditEntry] = []
        for raw in lines:
            try:
                entries.append(AuditEntry.model_validate_json(raw))
            except (ValidationError, ValueError):
                continue
        return entries[-n:]


def _tail_lines(path: Path, n: int) -> list[bytes]:
    """At least the last `n` non-empty lines (more if some may be unreadable), oldest first."""
    with path.open("rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        position, data = end, b""
        while position > 0 and data.count(b"\n") <= n + 1:
            step = min(_TAIL_BLOCK, position)
            position -= step
            fh.seek(position)
            data = fh.read(step) + data
    lines = [line for line in data.split(b"\n") if line.strip()]
    if position > 0:
        lines = lines[1:]  # the first one may be cut by the block boundary
    return lines[-(n + 8) :]


def format_audit(entries: Sequence[AuditEntry]) -> str:
    """One line per entry for `%logician audit`: time, verdict, tool, arguments, why."""
    if not entries:
        return "No permission decisions recorded yet."
    lines = []
    for entry in entries:
        verdict = "allowed" if entry.allowed else "denied"
        if entry.routine:
            verdict = "allowed (routine)"
        arguments = json.dumps(entry.arguments, ensure_ascii=False)
        if len(arguments) > 80:
            arguments = arguments[:79] + "…"
        why: str = entry.resolution
        if entry.rule:
            why += f" `{entry.rule}`" + (f" [{entry.layer}]" if entry.layer else "")
        lines.append(f"{entry.time[:19]}  {verdict:<17}  {entry.tool} {arguments}  ({why})")
    return "\n".join(lines)
