"""The Lab's diff view asks the kernel over the `logician` comm what a cell changed in a CSV,
a script, a figure and a binary file, and what a rewind would put back."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from kernel_harness import Kernel
from test_kernel_approvals import Sidebar, create_subshell
from test_kernel_comm import valid

PNG_1 = b"\x89PNG\r\n\x1a\n" + bytes(40)
PNG_2 = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
BLOB = bytes(range(256)) * 8
NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "source": ["x = 1\n", "x"]}], "nbformat": 4})

CELL = f"""
from pathlib import Path
Path('data.csv').write_text('a,b\\n1,20\\n3,4\\n')
Path('tool.py').write_text('def f():\\n    return 2\\n')
Path('fig.png').write_bytes({PNG_2!r})
Path('model.bin').write_bytes({BLOB!r})
Path('nb.ipynb').write_text({NOTEBOOK!r})
"""


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str]):
    (workspace / "tool.py").write_text("def f():\n    return 1\n")
    (workspace / "fig.png").write_bytes(PNG_1)
    (workspace / "nb.ipynb").write_text(NOTEBOOK.replace("x = 1", "x = 0"))
    k = Kernel(workspace, kernel_env)
    yield k
    k.shutdown()


def test_the_comm_lists_a_cells_files_and_sends_both_sides(kernel: Kernel, workspace: Path) -> None:
    assert kernel.run(CELL).status == "ok"
    sidebar = Sidebar(kernel, create_subshell(kernel))

    sidebar.send({"type": "frames.files", "frame": 1, "id": "f"})
    files = sidebar.wait_for("frames.files")
    valid([files])
    kinds = {row["path"]: row["kind"] for row in files["rows"]}
    assert kinds == {
        "data.csv": "csv",
        "tool.py": "text",
        "fig.png": "image",
        "model.bin": "binary",
        "nb.ipynb": "notebook",
    }
    sizes = {row["path"]: (row["before_size"], row["after_size"]) for row in files["rows"]}
    assert sizes["model.bin"] == (None, len(BLOB)) and sizes["data.csv"] == (8, 13)

    def diff(path: str, **extra: object) -> dict:
        sidebar.send({"type": "frames.diff", "frame": 1, "path": path, "id": path, **extra})
        # A notebook's first diff imports nbdime (2.5 s on a quiet machine, over 30 s at load 40)
        answer = sidebar.wait_for("frames.diff", timeout=300)
        valid([answer])
        return answer

    csv = diff("data.csv")
    assert csv["before"]["text"] == "a,b\n1,2\n" and csv["after"]["text"] == "a,b\n1,20\n3,4\n"
    script = diff("tool.py")
    assert "return 1" in script["before"]["text"] and "return 2" in script["after"]["text"]
    image = diff("fig.png")
    assert base64.b64decode(image["before"]["data"]) == PNG_1
    assert base64.b64decode(image["after"]["data"]) == PNG_2
    binary = diff("model.bin")
    assert binary["before"]["state"] == "absent"
    assert binary["after"]["sha256"] == hashlib.sha256(BLOB).hexdigest()
    assert "text" not in binary["after"] and "data" not in binary["after"]

    notebook = diff("nb.ipynb")
    assert notebook["after"]["cells"] == [{"cell_type": "code", "source": "x = 1\nx"}]
    # nbdime (the test extra installs it) matched the edited cell with itself
    assert notebook["cell_matches"] == [
        {"before": 0, "after": 0, "status": "changed", "changed": ["source"]}
    ]

    # a rewind preview: now on disk, against what the rewind would put back
    (workspace / "data.csv").write_text("a,b\n9,9\n")
    back = diff("data.csv", preview=True)
    assert back["before"]["text"] == "a,b\n9,9\n" and back["after"]["text"] == "a,b\n1,2\n"

    sidebar.send({"type": "frames.diff", "frame": 1, "path": "untouched.txt", "id": "u"})
    refused = sidebar.wait_for("error")
    assert "did not change 'untouched.txt'" in refused["error"]


def test_a_deleted_file_is_recreated_and_a_rewound_frame_still_shows_its_files(
    kernel: Kernel, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("keep me\n")
    cell = "import os\nos.remove('notes.txt')\nopen('tool.py', 'w').write('def f():\\n    return 3\\n')"
    assert kernel.run(cell).status == "ok"
    sidebar = Sidebar(kernel, create_subshell(kernel))

    sidebar.send({"type": "frames.preview", "frame": 1, "id": "p"})
    preview = sidebar.wait_for("frames.preview")
    valid([preview])
    actions = {f["path"]: f["action"] for f in preview["files"]}
    assert actions == {"notes.txt": "recreate", "tool.py": "restore"}
    assert preview["groups"] == [
        {"directory": "", "below": False, "delete": 0, "restore": 2, "recreate": 1}
    ]
    dry = kernel.run("%logician rewind --last --dry-run").text
    assert "would recreate notes.txt" in dry and "would restore tool.py" in dry, dry

    sidebar.send({"type": "frames.rewind", "frame": 1, "mode": "files", "id": "r"})
    assert sidebar.wait_for("frames.rewind")["ok"]
    assert (workspace / "notes.txt").read_text() == "keep me\n"

    # the rewound frame: what the cell had changed, read from its snapshot as before
    sidebar.send({"type": "frames.files", "frame": 1, "id": "f"})
    files = sidebar.wait_for("frames.files")
    valid([files])
    assert {row["path"]: row["action"] for row in files["rows"]} == {
        "notes.txt": "deleted",
        "tool.py": "modified",
    }
    sidebar.send({"type": "frames.diff", "frame": 1, "path": "tool.py", "id": "d"})
    script = sidebar.wait_for("frames.diff")
    valid([script])
    assert "return 1" in script["before"]["text"] and "return 3" in script["after"]["text"]
    sidebar.send({"type": "frames.diff", "frame": 1, "path": "notes.txt", "id": "n"})
    notes = sidebar.wait_for("frames.diff")
    assert notes["before"]["text"] == "keep me\n" and notes["after"]["state"] == "absent"
