"""Bounding tool output: keep the head and the tail, say exactly how much was cut.

`HeadTail` is fed incrementally (a subprocess's output as it arrives) and never holds more
than about 1.5x its bound, so a flood costs bounded memory however long it runs.
"""

from __future__ import annotations

import io

# Room kept for the marker line, so head + marker + tail stays within the bound.
_MARKER_RESERVE = 200


class HeadTail:
    """The first and last bytes of a stream, and counts of everything in between."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self._head_cap = self.limit // 2
        self._tail_cap = self.limit - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0
        self.total_newlines = 0
        self.last_byte = b""

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        self.total_newlines += chunk.count(b"\n")
        self.last_byte = chunk[-1:]
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        if len(chunk) >= self._tail_cap:  # the chunk alone refills the tail
            self._tail = bytearray(chunk[len(chunk) - self._tail_cap :])
            return
        self._tail += chunk
        # Trim only once the tail has doubled, so trimming stays amortised O(1) a byte.
        if len(self._tail) > 2 * self._tail_cap:
            del self._tail[: len(self._tail) - self._tail_cap]

    @property
    def total_lines(self) -> int:
        """Lines seen, a final line without a newline included."""
        partial = 1 if self.last_byte and self.last_byte != b"\n" else 0
        return self.total_newlines + partial

    @property
    def truncated(self) -> bool:
        return self.total_bytes > self.limit

    def render(self) -> str:
        """All of it if it fits the bound; else head, a marker line, and tail."""
        if not self.truncated:
            return bytes(self._head + self._tail).decode("utf-8", "replace")
        budget = max(self.limit - _MARKER_RESERVE, 0)
        head = bytes(self._head[: budget // 2])
        tail_keep = min(len(self._tail), budget - len(head))
        tail = bytes(self._tail[len(self._tail) - tail_keep :]) if tail_keep else b""
        # End and start on line boundaries when that costs little: whole lines read better.
        cut = head.rfind(b"\n")
        if cut >= 0 and cut + 1 >= len(head) * 3 // 4:
            head = head[: cut + 1]
        cut = tail.find(b"\n")
        if 0 <= cut < len(tail) // 4:
            tail = tail[cut + 1 :]
        cut_bytes = self.total_bytes - len(head) - len(tail)
        cut_lines = self.total_newlines - head.count(b"\n") - tail.count(b"\n")
        marker = (
            f"[... output truncated: {cut_bytes:,} bytes ({cut_lines:,} lines) cut from the "
            f"middle; showing the first {len(head):,} and last {len(tail):,} "
            f"of {self.total_bytes:,} bytes ...]"
        )
        head_text = head.decode("utf-8", "replace")
        if head_text and not head_text.endswith("\n"):
            head_text += "\n"
        tail_text = tail.decode("utf-8", "replace")
        return f"{head_text}{marker}\n{tail_text}"


def bound_output(text: str, limit: int) -> str:
    """`text` itself if it fits `limit` UTF-8 bytes; else its head and tail around a marker
    line saying how many bytes and lines were cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    buffer = HeadTail(limit)
    buffer.feed(data)
    return buffer.render()


class BoundedText(io.TextIOBase):
    """A text stream that keeps only the head and tail of what is written to it.

    Stands in for `sys.stdout` while notebook code runs for the `python` tool, so printing
    200 MB costs the bound, not 200 MB (and then again in the cell and the ledger).
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._buffer = HeadTail(limit)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._buffer.feed(text.encode("utf-8", "surrogateescape"))
        return len(text)

    @property
    def total_bytes(self) -> int:
        return self._buffer.total_bytes

    def getvalue(self) -> str:
        """What was written, or its head and tail around a marker saying the total size."""
        return self._buffer.render() if self._buffer.total_bytes else ""
