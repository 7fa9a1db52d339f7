"""Re-record the sessions the agent notebooks replay (`notebooks/recordings/<name>.jsonl`).

The notebook is run headless with its setup cell swapped for a real OpenAI-compatible
provider in record mode, pointed at a scripted model server on loopback (the same server the
tests use). Run it after changing anything that reaches the model's requests (the system
prompt, tool specs, the notebook's prompt):

    .venv/bin/python scripts/record_agent_notebook.py [02-agent | 03-approvals-and-budgets |
        05-mcp-and-hooks | 06-agent-edits-cells]

Then run the notebook once more (`logician run notebooks/NAME.ipynb -o ...`) to refresh its
stored outputs, and its nbval test.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from loopback import LoopbackServer, Reply, openai_chunks, sse  # noqa: E402

from logician_kernel.jupyter.runner import run_notebook  # noqa: E402

CODE = """\
import csv

rows = list(csv.DictReader(open("sales.csv")))
units = [int(r["units"]) for r in rows]
rolling = [round(sum(units[max(0, i - 6) : i + 1]) / len(units[max(0, i - 6) : i + 1]), 2)
           for i in range(len(units))]
with open("sales_rolling.csv", "w") as f:
    f.write("day,units,rolling_7d\\n")
    for row, mean in zip(rows, rolling):
        f.write(f"{row['day']},{row['units']},{mean}\\n")
print(f"wrote {len(rows)} rows to sales_rolling.csv; last 7-day mean: {rolling[-1]}")
"""
MONTHLY = """\
monthly = df.groupby(df["date"].dt.strftime("%Y-%m"))["units"].sum()
print(monthly.to_string())"""
ANSWER = [
    "I loaded `sales.csv` (14 days), computed a **7-day rolling mean** of `units` ",
    "(the first six days average over the days available so far), and saved it as ",
    "`sales_rolling.csv` with a new `rolling_7d` column.\n\n",
    "The values are also in the notebook variable `rolling`.",
]


def _tool(call_id: str, name: str, arguments: dict) -> Reply:
    args = json.dumps(arguments)
    fragments = [args[i : i + 40] for i in range(0, len(args), 40)]
    return Reply(
        pieces=[
            sse(*openai_chunks(tool=(call_id, name, fragments), finish="tool_calls"), done=True)
        ]
    )


def _text(*pieces: str) -> Reply:
    return Reply(pieces=[sse(*openai_chunks(text=list(pieces)), done=True)])


REPLIES = {
    "02-agent": lambda: [_tool("call_rolling", "python", {"code": CODE}), _text(*ANSWER)],
    "03-approvals-and-budgets": lambda: [
        _tool("call_wc1", "bash", {"command": "wc -l data.csv"}),
        _text(
            "I was not allowed to run `wc -l data.csv` here (nobody could approve it), ",
            "so I cannot count the lines. Allow `bash(wc *)` and ask again.",
        ),
        _tool("call_wc2", "bash", {"command": "wc -l data.csv"}),
        _text("`data.csv` has **3 lines**: a header and two days of data."),
        _tool("call_read1", "read", {"path": "data.csv"}),
        _tool("call_read2", "read", {"path": "notes.md"}),
        _text("Done."),
        _tool(
            "call_report",
            "write",
            {"path": "report.txt", "content": "2 days of sales, 22 units in all.\n"},
        ),
        _text("The report is in `report.txt`: 2 days, 22 units."),
    ],
    "05-mcp-and-hooks": lambda: [
        _tool("call_search", "notes__search_notes", {"query": "otters"}),
        _text(
            "Two notes mention otters: `otters.md` (sea otters hold hands while they sleep) ",
            "and `rivers.md` (river otters live in burrows near water).",
        ),
        _tool(
            "call_add",
            "notes__add_note",
            {"name": "otters-2.md", "text": "Otters have the densest fur of any animal."},
        ),
        _text(
            "I could not add the note: in read-only mode `notes__add_note` is refused, since ",
            "the server does not declare it read-only. Run the cell without `--mode read-only`.",
        ),
        _tool("call_rm", "bash", {"command": "rm drafts/old.txt"}),
        _text(
            'I did not delete `drafts/old.txt`: a pre_tool hook refused it ("deleting is not ',
            'allowed here; move files to trash/ instead"). Shall I move it to `trash/`?',
        ),
    ],
    "06-agent-edits-cells": lambda: [
        _tool("call_outline", "notebook_read", {}),
        _tool(
            "call_insert",
            "notebook_edit",
            {"mode": "insert", "after_id": "ask", "source": MONTHLY, "run": True},
        ),
        _text(
            "I added a cell below this one that totals `units` by month into `monthly` and ",
            "prints it. It runs as its own cell as soon as this one ends, so its output ",
            "appears there.",
        ),
    ],
    # the browser test's notebook (tests/browser/): recorded allowed, approved there in the UI
    "lab-approval": lambda: [
        _tool(
            "call_approved",
            "bash",
            {
                "command": "printf 'approved from the sidebar\\n' > approved.txt && wc -c approved.txt"
            },
        ),
        _text("Wrote `approved.txt` (26 bytes)."),
    ],
}
SOURCES = {"lab-approval": REPO / "tests" / "browser"}
"""Where a notebook and its recordings/ live, when not in notebooks/."""
HEADLESS_ALLOW = {"lab-approval"}
"""Recorded with `permissions.headless allow`: the session where the user approves."""


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 else "02-agent"
    if name not in REPLIES:
        print(f"record: unknown notebook {name!r}; known: {', '.join(REPLIES)}", file=sys.stderr)
        return 2
    home = SOURCES.get(name, REPO / "notebooks")
    source = home / f"{name}.ipynb"
    target = home / "recordings" / f"{name}.jsonl"
    with (
        tempfile.TemporaryDirectory() as tmp,
        tempfile.TemporaryDirectory() as out,
        LoopbackServer() as server,
    ):
        work = Path(tmp)  # the notebook's workspace: what the agent touches is rewound there
        recording = Path(out) / "recording.jsonl"  # outside it, so no rewind can take it
        nb = nbformat.read(source, as_version=4)
        for cell in nb.cells:
            if "provider-setup" in cell.get("metadata", {}).get("tags", []):
                cell.source = (
                    f"recording = {str(recording)!r}\n"
                    "%logician config set model.provider openai\n"
                    f"%logician config set model.base_url {server.url}/v1\n"
                    "%logician config set model.record_file $recording\n"
                    + "\n".join(
                        line
                        for line in cell.source.splitlines()
                        if "model." not in line and not line.startswith("recording")
                    )
                    + (
                        "\n%logician config set permissions.headless allow"
                        if name in HEADLESS_ALLOW
                        else ""
                    )
                    + "\n"
                )
        copy = work / source.name
        nbformat.write(nb, copy)
        server.script(*REPLIES[name]())
        os.environ["OPENAI_API_KEY"] = "recording-needs-no-real-key"
        summary = run_notebook(copy, output=work / "out.ipynb")
        for cell in nbformat.read(work / "out.ipynb", as_version=4).cells:
            for output in cell.get("outputs", []):
                text = output.get("text") or output.get("data", {}).get("text/plain", "")
                print(f"  | {str(text)[:300]}")
        if summary.failed:
            print(f"record: the notebook failed: {summary.failed}", file=sys.stderr)
            return 1
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(recording, target)
    print(f"recorded {len(target.read_text().splitlines())} exchange(s) into {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
