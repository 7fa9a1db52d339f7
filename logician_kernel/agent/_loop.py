"""The one event-loop policy of the agent: every coroutine of ours (a run, a compaction, a
branch merge) runs on a fresh event loop in a worker thread, never on the caller's loop.

Why: the kernel's own loop is busy running the cell that started the work (and a stock IPython
may have no loop at all), so awaiting there would block or nest. A worker loop also makes a
kernel interrupt simple: the main thread cancels the task, thread-safely.

Must never: leave a loop open or an async generator unfinished when the work ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class WorkerLoop(Generic[T]):
    """One coroutine on its own loop in a daemon thread; `done(result, error)` is called on
    that thread when it ends (exactly once)."""

    def __init__(
        self,
        coro: Coroutine[Any, Any, T],
        *,
        name: str,
        done: Callable[[T | None, BaseException | None], None] | None = None,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[T] = self._loop.create_task(coro)
        self._done = done
        self.result: T | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)

    def start(self) -> WorkerLoop[T]:
        self._thread.start()
        return self

    def _work(self) -> None:
        try:
            self.result = self._loop.run_until_complete(self._task)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            self.error = exc
        finally:
            # Finish the streams' async generators here, not in a garbage collector later.
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
            if self._done is not None:
                self._done(self.result, self.error)

    def cancel(self) -> None:
        """Cancel the task from any thread; a no-op once the work has ended."""
        try:
            self._loop.call_soon_threadsafe(self._task.cancel)
        except RuntimeError:  # the loop had just closed
            pass

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def run_coroutine(coro: Coroutine[Any, Any, T], *, name: str = "logician-work") -> T:
    """Run `coro` to completion on a worker loop and return its result (or raise its error).

    A KeyboardInterrupt on the calling thread (a kernel interrupt) cancels the coroutine and
    is re-raised once it has finished, so nothing keeps running behind the user's back."""
    worker: WorkerLoop[T] = WorkerLoop(coro, name=name).start()
    try:
        while worker.alive:
            worker.join(0.05)
    except KeyboardInterrupt:
        worker.cancel()
        worker.join()
        raise
    if worker.error is not None:
        raise worker.error
    return worker.result  # type: ignore[return-value]
