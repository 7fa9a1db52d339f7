"""Capturing a `python` tool call's output with a bound, as `bash` bounds its output.

Owns `bounded_capture`: IPython's `capture_output` keeps every byte printed (a cell printing
200 MB held it, then sent all of it to the frontend), so stdout and stderr go to streams that
keep only their head and tail; rich displays are captured as before.

Must never: hold more than about twice the bound of printed text, or hide that output was cut.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

from IPython.utils.capture import capture_output

from ..agent.ui import MAX_OUTPUT_BYTES, BoundedText

CELL_OUTPUT_BYTES = MAX_OUTPUT_BYTES
"""What a `python` call may print into the cell: the same bound as a `bash` call's output."""


@dataclass
class BoundedCapture:
    """The interface of IPython's `CapturedIO` that the `python` tool uses, bounded."""

    out: BoundedText
    err: BoundedText
    displays: Any = None
    outputs: list[Any] = field(default_factory=list)

    @property
    def stdout(self) -> str:
        return self.out.getvalue()

    @property
    def stderr(self) -> str:
        return self.err.getvalue()

    def show(self) -> None:
        """Into the cell: the bounded text, then the rich displays."""
        import sys

        if self.stdout:
            sys.stdout.write(self.stdout)
            sys.stdout.flush()
        if self.stderr:
            sys.stderr.write(self.stderr)
            sys.stderr.flush()
        if self.displays is not None:
            for output in self.displays.outputs:
                output.display()


@contextmanager
def bounded_capture(limit: int = CELL_OUTPUT_BYTES) -> Iterator[BoundedCapture]:
    captured = BoundedCapture(BoundedText(limit), BoundedText(limit))
    with (
        capture_output(stdout=False, stderr=False, display=True) as displays,
        redirect_stdout(captured.out),
        redirect_stderr(captured.err),
    ):
        captured.displays = displays
        try:
            yield captured
        finally:
            captured.outputs = list(displays.outputs)
