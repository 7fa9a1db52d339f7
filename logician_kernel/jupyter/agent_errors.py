"""How an agent cell ends when something goes wrong: one line, never a traceback.

Owns the argparse types of `%%logician` options and the translation of an interrupt or a
session error into what the user sees at the end of the cell.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from IPython.core.error import UsageError

from ..workspace import JournalError, RewindError


def positive(kind: type) -> Callable[[str], Any]:
    """An argparse type: a number above zero, else a message naming the value."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0:
            raise argparse.ArgumentTypeError(f"must be a positive number, not {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


class AgentInterrupted(KeyboardInterrupt):
    """The user interrupted an agent cell: the cell fails (Run All stops) without a traceback;
    the run's own display already said what was cancelled."""

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines instead
        return ["%%logician: interrupted"]


# Frontends and nbclient read `ename` to tell an interrupt from a failure: keep it.
AgentInterrupted.__name__ = AgentInterrupted.__qualname__ = "KeyboardInterrupt"


@contextlib.contextmanager
def agent_errors() -> Iterator[None]:
    """An agent cell ends in one line, never a traceback through the kernel's own code."""
    try:
        yield
    except AgentInterrupted:
        raise
    except KeyboardInterrupt:
        raise AgentInterrupted() from None
    except (RewindError, JournalError) as exc:
        raise UsageError(f"%%logician: {exc}") from None
