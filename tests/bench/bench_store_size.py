"""Benchmark: how big `.logician/` grows when notebooks run on the Logician kernel, by kind,
against the folder they ran in.

    .venv/bin/python tests/bench/bench_store_size.py [DIR_OR_NOTEBOOK ...] [--timeout S]

Each notebook (every `*.ipynb` under the given directories; default: the tours in
`notebooks/`) runs in a fresh copy of its own directory (its data files and recordings, not
the other notebooks), through every cell (errors do not stop it, a cell past `--timeout` is
interrupted, as nbclient does), with a user config dir of its own. Then `.logician/` is
counted by kind as `%logician storage` counts it (git objects, large files, variables, ledger,
logs, other) and set against the folder's own bytes after the run (`.logician/` excluded).
Goal: `.logician/` <= 1.5x the folder, summed over the notebooks.

Prints one row per notebook and a total to stdout (progress to stderr). The exit status is 0
unless the benchmark itself fails. Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

try:
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    from logician_kernel.frames.storage_report import by_kind, dir_bytes
    from logician_kernel.jupyter.kernelspec import KERNEL_NAME
    from logician_kernel.jupyter.runner import RunKernelManager
except ImportError as exc:  # pragma: no cover - wrong interpreter
    sys.exit(f"bench_store_size: {exc}; run it with the project venv: .venv/bin/python {__file__}")

KINDS = ["git", "large", "variables", "ledger", "logs", "other"]
GOAL = 1.5


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def folder_bytes(root: Path) -> int:
    return dir_bytes(root, exclude=(".logician",))


def notebooks(args: list[str]) -> list[Path]:
    found: list[Path] = []
    for arg in args or [str(REPO / "notebooks")]:
        path = Path(arg).resolve()
        if path.is_file():
            found.append(path)
            continue
        if not path.is_dir():
            sys.exit(f"bench_store_size: {arg}: no such notebook or directory")
        found.extend(
            p
            for p in sorted(path.rglob("*.ipynb"))
            if ".ipynb_checkpoints" not in p.parts and ".logician" not in p.parts
        )
    if not found:
        sys.exit(f"bench_store_size: no notebooks under {', '.join(args)}")
    return found


def stage(notebook: Path, into: Path) -> Path:
    """A copy of the notebook's directory without the other notebooks and any old state."""

    def skip(directory: str, names: list[str]) -> set[str]:
        return {
            n
            for n in names
            if n in (".logician", ".ipynb_checkpoints", ".git")
            or (n.endswith(".ipynb") and Path(directory, n) != notebook)
        }

    shutil.copytree(notebook.parent, into, ignore=skip, symlinks=True)
    return into / notebook.name


def run(notebook: Path, cfg: Path, timeout: int) -> tuple[int, int]:
    """Run every cell; (cells, cells that errored)."""
    nb = nbformat.read(notebook, as_version=4)
    env = dict(os.environ)
    env["JPY_SESSION_NAME"] = str(notebook)
    env["LOGICIAN_CONFIG_DIR"] = str(cfg)
    sockets = tempfile.mkdtemp(prefix="lk-bench-")
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = os.path.join(sockets, "kernel")
    client = NotebookClient(
        nb,
        timeout=timeout,
        interrupt_on_timeout=True,
        allow_errors=True,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=RunKernelManager,
        config=config,
        resources={"metadata": {"path": str(notebook.parent)}},
    )
    try:
        client.execute(env=env, cwd=str(notebook.parent))
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = sum(any(o.get("output_type") == "error" for o in c.get("outputs", [])) for c in code)
    return len(code), errors


def mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="notebooks or directories (default: notebooks/)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    opts = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="lk-store-size-") as tmp:
        for i, source in enumerate(notebooks(opts.paths)):
            log(f"running {source}")
            notebook = stage(source, Path(tmp) / f"nb{i}")
            before = folder_bytes(notebook.parent)
            started = time.monotonic()
            try:
                cells, errors = run(notebook, Path(tmp) / f"cfg{i}", opts.timeout)
                note = f"{errors} cell error(s)" if errors else ""
            except Exception as exc:  # noqa: BLE001 - a notebook that cannot run is a row, not the end
                cells, note = 0, f"did not run: {type(exc).__name__}: {str(exc)[:80]}"
            after = folder_bytes(notebook.parent)
            kinds, _ = by_kind(notebook.parent / ".logician")
            rows.append((source, cells, before, after, kinds, time.monotonic() - started, note))
    header = ["notebook", "cells", "folder MB", *(f"{k} MB" for k in KINDS), ".logician MB"]
    header += ["ratio", "s", "note"]
    print(" | ".join(header))
    tot_folder = tot_state = 0
    totals = dict.fromkeys(KINDS, 0)
    for source, cells, _before, after, kinds, seconds, note in rows:
        state = sum(kinds[k] for k in KINDS)
        tot_folder += after
        tot_state += state
        for k in KINDS:
            totals[k] += kinds[k]
        ratio = f"{state / after:.2f}x" if after else "-"
        line = [source.name, str(cells), mb(after), *(mb(kinds[k]) for k in KINDS), mb(state)]
        print(" | ".join([*line, ratio, f"{seconds:.0f}", note]))
    ratio = tot_state / tot_folder if tot_folder else 0.0
    print(
        " | ".join(
            ["total", "", mb(tot_folder), *(mb(totals[k]) for k in KINDS), mb(tot_state)]
            + [f"{ratio:.2f}x", "", f"goal <= {GOAL}x: {'met' if ratio <= GOAL else 'not met'}"]
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
