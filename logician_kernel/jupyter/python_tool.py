"""The `python` tool's calls, run on the kernel's main thread in the notebook's namespace,
with a timeout and a kernel interrupt that really stop them.

Why signals: the code runs where the user's variables live, on the main thread, inside a cell
that ipykernel may be awaiting - and then ipykernel's SIGINT handler only cancels a future on
the (blocked) event loop, so `while True: pass` or `time.sleep(1000)` would never see the
interrupt. While a call runs, SIGINT raises KeyboardInterrupt into the code, and SIGALRM (sent
to the main thread by the call's timer, or when the run gives the call up) raises
`_Stopped`; both are BaseExceptions, so a bare `except Exception` in the code does not swallow
them, and a real signal wakes a blocking sleep. Outside a call both handlers are restored.

Must never: leave a handler of ours installed, or send SIGALRM when no handler of ours is.
"""

from __future__ import annotations

import re
import signal
import threading
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ..agent.run import PythonRequest
from ..agent.ui import ToolResult
from .python_capture import bounded_capture

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class _Stopped(BaseException):
    """Raised into the tool's code when its time is up or the run gave it up."""


@dataclass(frozen=True)
class PythonOutcome:
    result: ToolResult
    """What the model is told."""
    interrupted: bool
    """A kernel interrupt stopped the code: the run must stop too."""


class PythonCalls:
    """Runs `python` tool calls for one kernel (one at a time, on the main thread)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._lock = threading.Lock()
        self._active = False
        self._reason = ""

    def run(self, request: PythonRequest) -> PythonOutcome:
        if threading.current_thread() is threading.main_thread():
            captured, result, error = self._run_guarded(request)
        else:
            # Python runs signal handlers on the main thread only: a call made from a
            # subshell's thread runs without the timeout and the interrupt guard.
            captured, result, error = self._run_cell(request.code)
        return self._outcome(request, captured, result, error)

    def _run_cell(self, code: str) -> tuple[Any, Any, BaseException | None]:
        captured: Any = None
        result: Any = None
        try:
            with bounded_capture() as captured:  # a flood of prints costs the bound, not memory
                result = self.shell.run_cell(code, store_history=False)
            return captured, result, result.error_before_exec or result.error_in_exec
        except (KeyboardInterrupt, _Stopped) as exc:  # landed outside the user's code
            return captured, result, exc

    def _run_guarded(self, request: PythonRequest) -> tuple[Any, Any, BaseException | None]:
        timer = threading.Timer(request.timeout, self.stop, ("timeout",))
        timer.daemon = True
        old_int = signal.signal(signal.SIGINT, _raise_interrupt)
        with self._lock:
            old_alarm = signal.signal(signal.SIGALRM, _raise_stopped)
            self._active, self._reason = True, ""
        request.stop = self.stop
        timer.start()
        captured, result, error = self._run_cell(request.code)
        # A stop sent just before the call ended may land during the clean-up itself: the
        # clean-up is idempotent and no stop is sent once `_active` is cleared.
        for _ in range(3):
            try:
                timer.cancel()
                with self._lock:
                    self._active = False
                    signal.signal(signal.SIGALRM, old_alarm)
                signal.signal(signal.SIGINT, old_int)
                request.stop = None
                break
            except (KeyboardInterrupt, _Stopped) as exc:
                error = error or exc
        return captured, result, error

    def _outcome(
        self, request: PythonRequest, captured: Any, result: Any, error: BaseException | None
    ) -> PythonOutcome:
        code = request.code
        interrupted = False
        if captured is not None:
            captured.show()
        parts = [captured.stdout, captured.stderr] if captured is not None else []
        if captured is not None:
            parts += [o.data.get("text/plain", "") for o in captured.outputs]
        if result is not None and result.result is not None:
            parts.append(repr(result.result))
        first = code.strip().splitlines()[0][:60] if code.strip() else ""
        if isinstance(error, KeyboardInterrupt):
            interrupted = True
            parts.append(
                "INTERRUPTED: the user interrupted the kernel while this code ran; "
                "whatever it did before that stays done."
            )
            display = f"python: {first} (interrupted)"
        elif isinstance(error, _Stopped):
            if self._reason == "timeout":
                parts.append(
                    f"TIMED OUT: the code was stopped after {request.timeout:g} s "
                    "(tools.python_timeout_seconds); whatever it did before that "
                    "stays done."
                )
                display = f"python: {first} (timed out after {request.timeout:g} s)"
            else:
                parts.append("STOPPED: the run gave this call up (its budget ran out).")
                display = f"python: {first} (stopped)"
        elif error is not None:
            parts.append(f"{type(error).__name__}: {error}")
            display = f"python: {first} (error)"
        else:
            display = f"python: {first}"
        text = _ANSI.sub("", "\n".join(p for p in parts if p)).strip()
        return PythonOutcome(
            ToolResult(content=text or "(no output)", is_error=error is not None, display=display),
            interrupted=interrupted,
        )

    def stop(self, reason: str) -> None:
        """Stop the running call (from any thread); a no-op when none runs."""
        with self._lock:
            if not self._active:
                return
            self._reason = reason
            main = threading.main_thread().ident
            assert main is not None
            # A real signal, not `_thread.interrupt_main`: it wakes a blocking sleep.
            signal.pthread_kill(main, signal.SIGALRM)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped
