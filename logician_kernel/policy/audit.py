"""The permission audit log: `<workspace>/.logician/audit.jsonl`, one checksummed record per decision.

Every decision is appended - routine automatic allows included, with the rule and the
configuration layer that decided - and fsynced before the call it decides may run, so the
log never misses an action that happened. Routine allows are kept out of the transcript and
the cell output; this log is where they live.

Records are appended through the ledger's own writer (`session.journal.Journal` in shared
mode: its record format with a CRC-32 per line, and its torn-tail policy - a torn last record
is cut back to the last whole one before the next append, the cut bytes kept in a side file
`audit.jsonl.cut-…`). A changed byte is seen: `report` names every damaged or unchecked line
and every side file, and never says "no decisions" over a file it could not read.

Must never: hold a secret (string arguments are masked with `session.redact`, credential-named
arguments dropped to `****`, long values bounded; written content is kept as a digest and a
size, never the text), rewrite a line, or let a torn last line (a crash mid-append) corrupt
the next entry or the reading of the others.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..durable import MASK, Journal, decode_record, is_credential_name, redact
from ..durable.state_dir import state_path
from ..types.field_docs import FIELD_DOCS
from .permissions import PermissionDecision

AUDIT_FILE = Path(".logician") / "audit.jsonl"
"""Where the audit log lives, relative to the workspace root."""

MAX_ARGUMENT_CHARS = 2_000
"""String arguments longer than this are cut in the log (a `write`'s content, a long script)."""

CONTENT_ARGUMENTS = frozenset({"content", "old_string", "new_string"})
"""Arguments holding file content: the log keeps their digest and size, not the text."""

Resolution = Literal[
    "rule",
    "mode",
    "session",
    "user:allow_once",
    "user:allow_session",
    "user:always_allow",
    "user:deny",
    "user:deny_and_stop",
    "headless:deny",
    "headless:allow",
    "hook:deny",
    "hook:failed",
]
"""How the decision was settled: automatically by a rule, the mode or a session rule; by the
user's answer; refused because nobody could be asked (a headless run); refused by a
`pre_tool` hook (`hook:deny`), or a hook that failed and decided nothing (`hook:failed`)."""


class AuditLogError(RuntimeError):
    """The audit log could not be written; the message names the file."""


class AuditEntry(BaseModel):
    """One permission decision, as the audit log keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)

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
            arguments=mask_arguments(arguments, tuple(secrets), digest_content=True),
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


def mask_arguments(
    arguments: Mapping[str, Any], secrets: Sequence[str] = (), *, digest_content: bool = False
) -> dict[str, Any]:
    """A JSON-ready copy of `arguments` that is safe to keep: credential-named values become
    `****`, every string is passed through `redact` and cut at `MAX_ARGUMENT_CHARS`; with
    `digest_content`, file content (`CONTENT_ARGUMENTS`) becomes `sha256:… (N bytes)`."""
    if not isinstance(arguments, Mapping):
        return {"(arguments)": _masked(arguments, secrets)}
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if digest_content and key in CONTENT_ARGUMENTS and isinstance(value, str):
            out[str(key)] = content_digest(value)
        else:
            out[str(key)] = _masked_value(str(key), value, secrets)
    return out


def content_digest(text: str) -> str:
    """What the audit log keeps of written content: enough to match a file, nothing to read."""
    data = text.encode("utf-8", "surrogateescape")
    return f"sha256:{hashlib.sha256(data).hexdigest()[:16]} ({len(data):,} bytes)"


def _masked_value(key: str, value: Any, secrets: Sequence[str]) -> Any:
    if is_credential_name(key) and value not in (None, ""):
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
        self._journal = Journal(self.path, shared=True)
        self._lock = threading.Lock()

    @classmethod
    def for_workspace(cls, workspace: Path) -> AuditLog:
        return cls(state_path(Path(workspace)) / AUDIT_FILE.name)

    def record(self, entry: AuditEntry) -> None:
        """Append `entry` durably (written and fsynced before returning). Raises
        `AuditLogError` naming the file when that is not possible."""
        with self._lock:
            try:
                self._journal.append(entry.model_dump(mode="json"), durable=True)
            except OSError as exc:
                cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
                raise AuditLogError(
                    f"cannot write the permission audit log {self.path}: {cause.strerror or cause}"
                ) from exc

    def recent(self, n: int = 20) -> list[AuditEntry]:
        """The last `n` readable entries, oldest first; a missing log is empty."""
        return self.read(n).entries

    def read(self, n: int = 20) -> AuditReading:
        """The last `n` verified entries and every problem of the whole file: a record whose
        checksum fails is damage (a torn last line is reported as such), a line without a
        checksum (written before checksums, or edited) is unverified."""
        reading = AuditReading()
        if n <= 0:
            return reading
        reading.cut_files = sorted(
            str(side) for side in self.path.parent.glob(f"{self.path.name}.cut-*")
        )
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return reading
        except OSError as exc:
            reading.problems.append(f"cannot read {self.path}: {exc.strerror or exc}")
            return reading
        lines = data.split(b"\n")
        torn = bool(lines and lines[-1].strip())
        entries: list[AuditEntry] = []
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                entries.append(AuditEntry.model_validate(decode_record(raw)))
            except ValueError as exc:
                why = "torn (no newline)" if torn and number == len(lines) else str(exc)
                if str(exc) == "no checksum" and _legacy(raw):
                    reading.unverified.append(number)
                    entries.append(AuditEntry.model_validate_json(raw))
                else:
                    reading.damaged.append((number, why))
        reading.total = len(entries)
        reading.entries = entries[-n:]
        return reading

    def problem_count(self) -> int:
        """How many records fail their checksum or carry none (0 for an intact or missing
        log). Cached on the file's size and modification time, so a status pushed several
        times a second reads the file only when it changed."""
        try:
            info = self.path.stat()
        except OSError:
            return 0
        key = (str(self.path), info.st_size, info.st_mtime_ns)
        cached = _PROBLEM_COUNTS.get(key[0])
        if cached is not None and cached[0] == key:
            return cached[1]
        reading = self.read(1)
        count = len(reading.damaged) + len(reading.unverified) + len(reading.problems)
        count += len(reading.cut_files)
        _PROBLEM_COUNTS[key[0]] = (key, count)
        return count

    def report(self, n: int = 20) -> str:
        """`%logician audit`: the last `n` decisions, after any damage found in the file."""
        reading = self.read(n)
        body = format_audit(reading.entries)
        warning = reading.warning(self.path)
        if warning and not reading.entries:
            return f"{warning}\nNo readable permission decisions."
        return f"{warning}\n{body}" if warning else body


_PROBLEM_COUNTS: dict[str, tuple[tuple[str, int, int], int]] = {}
"""Per audit file: (path, size, mtime) when counted, and the count."""


class AuditReading(BaseModel):
    """What reading the audit log found: the entries asked for and the file's problems."""

    model_config = ConfigDict(use_attribute_docstrings=FIELD_DOCS)

    entries: list[AuditEntry] = []
    """The last entries asked for, oldest first (unverified ones included)."""
    total: int = 0
    """How many entries the file holds that could be read."""
    damaged: list[tuple[int, str]] = []
    """(line number, what is wrong) for every record that failed its checksum or parse."""
    unverified: list[int] = []
    """Line numbers of records without a checksum (older logs, or an edit)."""
    problems: list[str] = []
    """Why the file could not be read at all."""
    cut_files: list[str] = []
    """Side files holding torn records cut from the end of the log before an append."""

    @property
    def intact(self) -> bool:
        return not (self.damaged or self.unverified or self.problems or self.cut_files)

    def warning(self, path: Path) -> str:
        """One paragraph naming every problem; empty for an intact log."""
        parts = list(self.problems)
        if self.damaged:
            shown = ", ".join(f"line {n} ({why})" for n, why in self.damaged[:5])
            more = f" and {len(self.damaged) - 5} more" if len(self.damaged) > 5 else ""
            parts.append(
                f"WARNING: the audit log {path} is damaged or was altered: {len(self.damaged)} "
                f"record(s) fail their checksum: {shown}{more}"
            )
        if self.unverified:
            parts.append(
                f"WARNING: {len(self.unverified)} record(s) of {path} carry no checksum "
                f"(lines {', '.join(map(str, self.unverified[:5]))}"
                f"{', …' if len(self.unverified) > 5 else ''}): they cannot be verified"
            )
        if self.cut_files:
            parts.append(
                f"WARNING: {len(self.cut_files)} torn record(s) (a crash mid-append) were cut "
                f"from the end of {path} and kept byte for byte in: {', '.join(self.cut_files)}"
            )
        return "\n".join(parts)


def _legacy(raw: bytes) -> bool:
    try:
        AuditEntry.model_validate_json(raw)
    except (ValidationError, ValueError):
        return False
    return True


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
