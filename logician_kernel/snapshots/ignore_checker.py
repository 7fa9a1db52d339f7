"""Which paths git's ignore rules exclude, asked of one long-lived `git check-ignore`.

Owns the question for paths a snapshot meets for the first time (a cell that writes a new
file each run: figures, exports, an agent's new modules). A process per question cost ~2 ms
of every such frame; one kept open answers in a pipe round trip. Rules are read when the
process starts, so the snapshotter restarts it whenever they may have changed (the same
moments it forgets its per-path answers).

Must never: hang a cell (an answer that does not come within the timeout kills the process
and the question goes to a one-shot `check-ignore`), or read a reply out of step with its
question (every path gets exactly one record: `--non-matching --verbose`).
"""

from __future__ import annotations

import os
import select
import subprocess
import weakref
from collections.abc import Callable
from pathlib import Path

from ._fs import join_z

BATCH_LIMIT = 256
"""Larger batches go to a one-shot process: its replies could fill the pipe before we read."""
TIMEOUT = 10.0


class IgnoreChecker:
    """Asks `git check-ignore -z --stdin --non-matching --verbose`, kept running."""

    def __init__(
        self,
        command: list[str],
        cwd: Path,
        env: dict[str, str],
        one_shot: Callable[[list[str]], set[str]],
    ) -> None:
        self._command = [*command, "check-ignore", "-z", "--stdin", "--non-matching", "--verbose"]
        self._cwd, self._env, self._one_shot = cwd, env, one_shot
        self._proc: subprocess.Popen[bytes] | None = None
        self._end: weakref.finalize[[subprocess.Popen[bytes]], IgnoreChecker] | None = None
        """Ends the process when this checker is closed or collected: one never closed (its
        snapshotter dropped in a reference cycle) would otherwise leave `git check-ignore`
        running and Python warning of its pipes in whatever code the collector interrupts."""
        self._pending = b""

    def ignored(self, paths: list[str]) -> set[str]:
        if len(paths) > BATCH_LIMIT:
            return self._one_shot(paths)
        try:
            return self._ask(paths)
        except (OSError, ValueError, TimeoutError):
            self.close()
            return self._one_shot(paths)

    def _ask(self, paths: list[str]) -> set[str]:
        proc = self._proc or self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(join_z(paths))
        proc.stdin.flush()
        fields = self._read_fields(proc, 4 * len(paths))
        out = set()
        for i in range(0, len(fields), 4):
            source, _line, pattern, path = fields[i : i + 4]
            if source and not pattern.startswith(b"!"):  # a negated pattern re-includes
                out.add(path.decode("utf-8", "surrogateescape"))
        return out

    def _read_fields(self, proc: subprocess.Popen[bytes], count: int) -> list[bytes]:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = self._pending
        while buf.count(b"\0") < count:
            ready, _, _ = select.select([fd], [], [], TIMEOUT)
            if not ready:
                raise TimeoutError("git check-ignore did not answer")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise ValueError("git check-ignore exited")
            buf += chunk
        parts = buf.split(b"\0")
        self._pending = b"\0".join(parts[count:])
        return parts[:count]

    def _start(self) -> subprocess.Popen[bytes]:
        self._pending = b""
        self._proc = subprocess.Popen(
            self._command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self._cwd,
            env=self._env,
            bufsize=0,
        )
        self._end = weakref.finalize(self, _end, self._proc)
        return self._proc

    def restart(self) -> None:
        """The rules may have changed: the next question starts a fresh process."""
        self.close()

    def close(self) -> None:
        end, self._end, self._proc = self._end, None, None
        if end is not None:
            end()  # once: a later collection does nothing


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Close the question pipe (git answers the rest and exits), wait, close the answers."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=2)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
