"""Recorded sessions: a provider that replays them, and a wrapper that records them.

A recording is a JSONL file, one `RecordedExchange` per line, in call order. Replay is
strictly sequential: the n-th request must be the n-th recorded one, so a notebook that
drifts from its recording fails loudly instead of getting someone else's answer. Retry
events are transport incidents and are not recorded. Recordings never contain the API key
(requests and events do not carry it).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, ValidationError

from logician_kernel.types.messages import (
    FRONTEND_TOOLS,
    SYSTEM_LOCATION_PREFIX,
    ModelRequest,
    ModelResponse,
    ProviderEvent,
    RetryAttempt,
    without_notebook_context,
)

from ..durable import redact_data
from ..types.field_docs import FIELD_DOCS
from ._base import Provider
from ._errors import ReplayError, ReplayMismatchError


class RecordedExchange(BaseModel):
    """One model call: the request and every event it produced."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)

    version: Literal[1] = 1
    """Format version of this line."""
    index: int
    """Position of the call in the session, from 0."""
    fingerprint: str
    """`request_fingerprint(request)`, checked on replay."""
    request: ModelRequest
    """The request as sent, kept so that a mismatch can say what differs."""
    events: list[ProviderEvent]
    """The events, ending with the `ModelResponse`."""


def request_fingerprint(request: ModelRequest) -> str:
    """A stable hash of everything in a request but where the notebook runs (the system
    prompt's `SYSTEM_LOCATION_PREFIX` line) and the notebook context a prompt starts with
    (paths, cells and variables of the machine it ran on), so a recording replays from any
    folder, and the notebook tools (`FRONTEND_TOOLS`: their specs and what their calls
    answered, which names the cells by ids and `In [n]` a frontend chooses), so it replays with
    or without a notebook frontend, in JupyterLab as under `logician run`."""
    data = request.model_dump(mode="json")
    data["tools"] = [t for t in data.get("tools", []) if t.get("name") not in FRONTEND_TOOLS]
    notebook_calls = {
        part.get("id")
        for message in data["messages"]
        if message.get("kind") == "assistant"
        for part in message.get("content") or ()
        if part.get("kind") == "tool_call" and part.get("name") in FRONTEND_TOOLS
    }
    if data.get("tool_choice") is None:  # unset: as before the field existed, so recordings
        data.pop("tool_choice", None)  # made then still match
    for message in data["messages"]:
        if message.get("kind") == "system":
            message["content"] = _without_location(message["content"])
        elif message.get("kind") == "tool_result" and message["tool_call_id"] in notebook_calls:
            message["content"], message["is_error"] = [], False
        elif message.get("kind") == "user":
            for part in message.get("content") or ():
                if part.get("kind") == "text":
                    part["text"] = without_notebook_context(part["text"])
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _without_location(text: str) -> str:
    head, sep, tail = text.partition("\n\n" + SYSTEM_LOCATION_PREFIX)
    if not sep:
        return text
    _, _, rest = tail.partition("\n")  # the location is one paragraph of one line
    return head + ("\n" + rest if rest else "")


def first_difference(expected: Any, actual: Any, path: str = "request") -> str | None:
    """Where two JSON values first differ, e.g. `request.messages[2].content[0].text`."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(expected.keys() | actual.keys()):
            found = first_difference(expected.get(key), actual.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (a, b) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path} has {len(actual)} items, recorded {len(expected)}"
        return None
    return None if expected == actual else f"{path} differs"


def load_recording(path: Path) -> list[RecordedExchange]:
    """Read a recording; a malformed line raises `ReplayError` naming the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReplayError(f"cannot read recording {path}: {exc}", path=str(path)) from exc
    exchanges = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            exchanges.append(RecordedExchange.model_validate_json(line))
        except ValidationError as exc:
            raise ReplayError(
                f"recording {path} line {number} is not a recorded exchange: {exc}",
                path=str(path),
                index=len(exchanges),
            ) from exc
    return exchanges


class ReplayProvider:
    """Plays a recording back: no network, no key, the same events every time."""

    def __init__(self, path: str | os.PathLike[str], *, model: str = "replay", pace: float = 0.0):
        """`pace` seconds are slept before each event, to make replays look live in demos."""
        self.path = Path(path)
        self.model = model
        self.pace = pace
        self._exchanges: list[RecordedExchange] | None = None
        self._cursor = 0

    def __repr__(self) -> str:
        return f"ReplayProvider(path={str(self.path)!r}, cursor={self._cursor})"

    def reset(self) -> None:
        """Start again from the first exchange."""
        self._cursor = 0

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        if self._exchanges is None:
            self._exchanges = load_recording(self.path)
        index = self._cursor
        if index >= len(self._exchanges):
            raise ReplayMismatchError(
                f"recording {self.path} has {len(self._exchanges)} exchanges; "
                f"exchange {index} was requested but never recorded",
                path=str(self.path),
                index=index,
            )
        recorded = self._exchanges[index]
        if request_fingerprint(request) != recorded.fingerprint:
            where = first_difference(
                recorded.request.model_dump(mode="json"), request.model_dump(mode="json")
            )
            raise ReplayMismatchError(
                f"request does not match exchange {index} of recording {self.path}: "
                f"{where or 'the fingerprint differs'}",
                path=str(self.path),
                index=index,
            )
        self._cursor += 1
        for event in recorded.events:
            if self.pace:
                await anyio.sleep(self.pace)
            yield event


class RecordingProvider:
    """Wraps a real provider and writes each completed exchange to a recording."""

    def __init__(
        self, inner: Provider, path: str | os.PathLike[str], *, secrets: tuple[str, ...] = ()
    ) -> None:
        """The file is truncated when the first exchange completes, then appended to; it is
        created 0600 and every string in it passes the one redactor (`session.redact`), with
        `secrets` (the API key) among the values masked. The fingerprint is of the request
        as sent, so a replay of the same session still matches."""
        self.inner = inner
        self.path = Path(path)
        self.secrets = tuple(s for s in secrets if s)
        self.model = inner.model
        self._index = 0

    def __repr__(self) -> str:
        return f"RecordingProvider({self.inner!r}, path={str(self.path)!r})"

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        events: list[ProviderEvent] = []
        async with aclosing(self.inner.stream(request)) as inner_events:
            async for event in inner_events:
                if not isinstance(event, RetryAttempt):
                    events.append(event)
                if isinstance(event, ModelResponse):
                    self._write(request, events)
                yield event

    def _write(self, request: ModelRequest, events: list[ProviderEvent]) -> None:
        exchange = RecordedExchange(
            index=self._index,
            fingerprint=request_fingerprint(request),
            request=request,
            events=events,
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            data = redact_data(exchange.model_dump(mode="json"), self.secrets)
            line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
            flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if self._index == 0 else os.O_APPEND)
            fd = os.open(self.path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(line)
        except OSError as exc:
            raise ReplayError(
                f"cannot write recording {self.path}: {exc}", path=str(self.path), index=self._index
            ) from exc
        self._index += 1
