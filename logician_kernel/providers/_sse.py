"""An incremental server-sent-events parser (the WHATWG `text/event-stream` format).

Owns bytes -> events only: no I/O and no knowledge of any provider's payloads. Bytes may be
split anywhere, including inside a UTF-8 character or between the CR and LF of a line end.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event."""

    data: str
    """The `data` lines joined with `\\n`."""
    event: str = "message"
    """The `event` field, `message` when absent."""
    id: str | None = None
    """The last event id seen on the stream, if any."""


class SSEParser:
    """Feed it bytes as they arrive; it returns the events completed by each chunk."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""
        self._skip_lf = False
        self._at_start = True
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse `chunk`; return the events it completed, in order."""
        return self._feed_text(self._decoder.decode(chunk))

    def close(self) -> list[SSEEvent]:
        """End of stream. An unterminated last line is dropped (it may be torn), but complete
        data lines still waiting for their blank line are dispatched: some servers omit the
        final blank line, and the spec's strictness there would only lose their last event."""
        events = self._feed_text(self._decoder.decode(b"", final=True))
        self._partial = ""
        last = self._dispatch()
        return [*events, last] if last else events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if not text:
            return []
        if self._at_start:
            self._at_start = False
            text = text.removeprefix("\ufeff")
        if self._skip_lf:
            self._skip_lf = False
            text = text.removeprefix("\n")
        buffered = self._partial + text
        lines = _LINE_END.split(buffered)
        self._partial = lines.pop()
        # A CR at the very end may be the first half of a CRLF split across chunks.
        self._skip_lf = buffered.endswith("\r")
        events = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        # `retry` and unknown fields are ignored: we never reconnect a model stream.
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return SSEEvent(data="\n".join(data), event=event or "message", id=self._last_id)
