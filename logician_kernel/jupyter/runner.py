"""`logician run NOTEBOOK`: execute a notebook headless on this kernel and summarise its frames.

The notebook runs in its own directory with `JPY_SESSION_NAME` set to its path, so it writes
to the same thread a JupyterLab session of that notebook would. The notebook being run serves
the agent's notebook tools (`run_notebook_tools.py`): the cells an agent inserts are in `-o`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import zmq
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellExecutionError
from traitlets import default
from traitlets.config import Config

from ..workspace import SessionStart, derive_frames, read_entries, state_path, thread_id_for
from .kernelspec import KERNEL_NAME, READ_EVERY_OUTPUT, kernel_json
from .run_notebook_tools import ToolServingClient


class LogicianSpecManager(KernelSpecManager):
    """Knows the `logician` kernel even when its spec is not installed (editable checkouts)."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if kernel_name == KERNEL_NAME:
            return KernelSpec(resource_dir="", **kernel_json(sys.executable))
        try:
            return super().get_kernel_spec(kernel_name)
        except NoSuchKernel:
            raise


class RunKernelManager(AsyncKernelManager):
    """The kernel of one `logician run`, found by `LogicianSpecManager`.

    Made by nbclient itself (not handed to it), so nbclient owns it and shuts it down before
    the run returns: a kernel left running would outlive the command and log "Parent appears
    to have exited" when it noticed."""

    @default("kernel_spec_manager")
    def _logician_specs(self) -> KernelSpecManager:
        return LogicianSpecManager(data_dir=self.data_dir)

    @property
    def ipykernel(self) -> bool:
        """True: nbclient then keeps IPython's history in memory, as it does for `python3`."""
        return True

    def client(self, **kwargs: Any) -> Any:
        """nbclient's kernel client, its sockets' receive queues unbounded: ZMQ's default holds
        1,000 messages, and the kernel's publisher drops what does not fit, so a cell printing
        faster than the run reads its messages lost output from the middle, silently (20,000
        `print(i, flush=True)` kept 6,257 lines over IPC). The run keeps every output anyway."""
        kc = super().client(**kwargs)
        kc.context.setsockopt(zmq.RCVHWM, 0)  # the default of sockets made after this
        return kc


class NotebookError(ValueError):
    """The notebook or an argument of the run is unusable; a one-line message naming it."""


def load_notebook(path: Path) -> nbformat.NotebookNode:
    """The notebook at `path`, validated, or a `NotebookError` saying what is wrong with it."""
    import json

    try:
        raw = json.loads(path.read_bytes())
    except OSError as exc:
        raise NotebookError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError:
        raise NotebookError(f"{path} is not a Jupyter notebook (not JSON)") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        raise NotebookError(f"{path} is not a Jupyter notebook (no list of cells)")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several unrelated types for a bad document
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NotebookError(f"{path} is not a valid Jupyter notebook ({first})") from None
    return nb


def check_output_path(output: Path) -> None:
    """Before any cell runs: the executed notebook can be written where asked."""
    if output.is_dir():
        raise NotebookError(f"-o {output}: is a directory; give a file name ending in .ipynb")
    if not output.parent.is_dir():
        raise NotebookError(f"-o {output}: the directory {output.parent} does not exist")
    if not os.access(output.parent, os.W_OK) or (
        output.exists() and not os.access(output, os.W_OK)
    ):
        raise NotebookError(f"-o {output}: not writable")


@dataclass
class RunSummary:
    cells: int
    failed: str | None
    """`In [n]: ErrorName: value` of the failing cell (or what else stopped the run)."""
    frames: list[str]
    output: Path | None
    traceback: list[str] = field(default_factory=list)
    """The last lines of the failing cell's traceback, without terminal colours."""


FAILED_TAG = "logician-run-failed"
"""Tag of the cell that failed, and of the note inserted above it, in the `-o` notebook."""
_TRACEBACK_LINES = 12
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _failure(
    nb: nbformat.NotebookNode, index: int | None, exc: CellExecutionError
) -> tuple[str, list[str]]:
    """One line naming the cell and the error, and the traceback's last lines."""
    label = "a cell"
    tail: list[str] = []
    if index is not None:
        cell = nb.cells[index]
        label = f"In [{cell.get('execution_count') or index + 1}]"
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            lines = _ANSI.sub("", "\n".join(errors[-1].get("traceback", []))).splitlines()
            tail = [line for line in lines if line.strip()][-_TRACEBACK_LINES:]
    value = f"{exc.ename}: {exc.evalue}" if exc.evalue else exc.ename
    return f"{label}: {value}", tail


def _mark_failure(nb: nbformat.NotebookNode, index: int, summary: str) -> None:
    """As papermill does: the failing cell tagged with a note above it, and the cells after it
    cleared, so the saved notebook never shows stale outputs below a fresh failure."""
    cell = nb.cells[index]
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if FAILED_TAG not in tags:
        tags.append(FAILED_TAG)
    for later in nb.cells[index + 1 :]:
        if later.cell_type == "code":
            later.outputs = []
            later.execution_count = None
    # A code span: the error's text shows as written, never as Markdown or HTML.
    shown = " ".join(summary.replace("`", "'").split())
    note = nbformat.v4.new_markdown_cell(
        f"**`logician run` stopped here**: the cell below failed with `{shown}`. "
        "The cells after it were not run; their outputs were cleared.",
        metadata={"tags": [FAILED_TAG]},
    )
    nb.cells.insert(index, note)


def run_notebook(path: Path, *, output: Path | None = None, timeout: int = 600) -> RunSummary:
    """Execute every cell on a Logician kernel; stop at the first failing cell."""
    path = path.resolve()
    if timeout <= 0:
        raise NotebookError(f"--timeout {timeout}: must be a positive number of seconds")
    if output is not None:
        check_output_path(output)
    nb = load_notebook(path)
    env = dict(os.environ)
    env["JPY_SESSION_NAME"] = str(path)
    env[READ_EVERY_OUTPUT] = "1"  # this run reads every output: the kernel drops none
    # IPC sockets in a private directory: only this user can connect, and no kernel port is
    # open on the network (over TCP ipykernel warns that traffic is unencrypted). A short path
    # under the temp dir stays within the 107 bytes a Unix socket's name may have.
    sockets = tempfile.mkdtemp(prefix="logician-run-")
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = os.path.join(sockets, "kernel")
    client = ToolServingClient(
        nb,
        timeout=timeout,
        # nbclient waits 4 s after a cell's reply for the rest of its output, then drops it (a
        # loaded machine, or a cell with thousands of outputs): the cell's own timeout instead.
        # The kernel's idle status always follows its reply; a kernel that dies is noticed.
        iopub_timeout=timeout,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=RunKernelManager,
        config=config,
        resources={"metadata": {"path": str(path.parent)}, "notebook_path": path.name},
    )
    started: list[int] = []
    client.on_cell_start = lambda cell, cell_index: started.append(cell_index)
    failed = None
    tail: list[str] = []
    try:
        client.execute(env=env, cwd=str(path.parent))
    except CellExecutionError as exc:
        index = started[-1] if started else None
        failed, tail = _failure(nb, index, exc)
        if index is not None:
            _mark_failure(nb, index, failed)
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
        merge_streams(nb)
        if output is not None:
            try:
                nbformat.write(nb, output)
            except OSError as exc:
                failed = f"cannot write {output}: {exc.strerror or exc}"
                output = None
    return RunSummary(
        cells=sum(1 for c in nb.cells if c.cell_type == "code"),
        failed=failed,
        frames=_frame_lines(path.parent, env),
        output=output,
        traceback=tail,
    )


def merge_streams(nb: nbformat.NotebookNode) -> None:
    """Join each run of consecutive stream outputs of one name (stdout, stderr) into one, as
    JupyterLab's output area does before it saves: how a cell's text was cut into messages
    depends on when the kernel flushed (a `print` under load can arrive as its text, then its
    newline), and the saved notebook should not. Outputs are never moved past one another."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        merged: list[nbformat.NotebookNode] = []
        pieces: dict[int, list[str]] = {}  # a merged stream's texts, joined once at the end
        for out in cell.get("outputs", []):
            last = merged[-1] if merged else None
            if (
                out.get("output_type") == "stream"
                and last is not None
                and last.get("output_type") == "stream"
                and last.get("name") == out.get("name")
            ):
                # not `+=` on the output: 20,000 one-line prints would copy the text 20,000 times
                pieces.setdefault(len(merged) - 1, [_text(last)]).append(_text(out))
            else:
                merged.append(out)
        for i, texts in pieces.items():
            merged[i]["text"] = "".join(texts)
        cell.outputs = merged


def _text(output: nbformat.NotebookNode) -> str:
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else str(text)


def _frame_lines(start: Path, env: dict[str, str]) -> list[str]:
    """Frames of the last kernel session in the notebook's thread, one line each."""
    from ..config import load_effective_config

    workspace = load_effective_config(start, env=env).workspace
    thread, _ = thread_id_for(env)
    # this account's folder: in a team workspace, `.logician/users/<uid>/`
    ledger = state_path(workspace) / "threads" / f"{thread}.jsonl"
    if not ledger.exists():
        return []
    entries = read_entries(ledger)
    starts = [i for i, e in enumerate(entries) if isinstance(e, SessionStart)]
    frames = derive_frames(entries[starts[-1] if starts else 0 :])
    lines = []
    for f in frames.values():
        changed = ", ".join(f"{c.action} {c.path}" for c in f.changes) or "no file changes"
        rewound = " (rewound)" if f.status == "rewound" else ""
        lines.append(f"frame {f.frame} In [{f.execution_count}] {f.outcome}{rewound}: {changed}")
    return lines
