"""Benchmark: what a plan reads after a rewind, in-process on tmpfs (/dev/shm). N small files are
created, then rewritten (two frames); the rewrite is rewound, and the undo of that rewind is
timed; then the rewrite is rewound again and the rewind of the creation is timed. Prints each
one's process CPU time and how many files it read and hashed (`path_state` calls): the files a
restore wrote are known by the identity it noted (snapshots/stat_memory.py, `wrote`), so both
should read none. Compare builds in turns with `PYTHONPATH=<a git archive export>`.

    .venv/bin/python tests/bench/bench_restore_notes.py [N]

Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from logician_kernel.snapshots import snapshot_objects
from logician_kernel.workspace import Workspace

reads = 0
_real_read = snapshot_objects.path_state


def _counted(*args: Any, **kwargs: Any) -> Any:
    global reads
    reads += 1
    return _real_read(*args, **kwargs)


def main() -> int:
    global reads
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    root = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    ws = root / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "bench", "LOGICIAN_CONFIG_DIR": str(root / "cfg")}
    workspace = Workspace.open(ws, env)
    workspace.bind_namespace({})
    snapshot_objects.path_state = _counted  # type: ignore[assignment]

    def frame(count: int, text: str) -> int:
        with workspace.frame(count, None, "write") as opened:
            (ws / "d").mkdir(exist_ok=True)
            for i in range(n):
                (ws / "d" / f"f{i}.txt").write_text(f"{text} {i}\n")
        assert opened.closed is not None
        return opened.closed.frame

    def timed(what: str, run: Any) -> None:
        global reads
        reads = 0
        began = time.process_time()
        run()
        cpu = (time.process_time() - began) * 1000
        print(f"{what:<48} cpu {cpu:6.0f} ms   files read {reads:>6,}")

    try:
        with workspace.frame(1, None, "pass"):
            pass  # the first snapshot: not measured
        created = frame(2, "one")
        rewritten = frame(3, "two")
        workspace.rewind(rewritten)
        timed("undo right after the rewind", workspace.undo)
        assert (ws / "d" / "f7.txt").read_text() == "two 7\n"
        workspace.rewind(rewritten)
        timed("rewind of the creation after that of the rewrite", lambda: workspace.rewind(created))
        assert not (ws / "d").exists() or not any((ws / "d").iterdir())
    finally:
        workspace.close()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
