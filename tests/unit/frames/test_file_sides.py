"""The sides the Lab's diff view shows: read from disk beneath the workspace, paged, bounded."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from logician_kernel.frames import file_sides as fs
from logician_kernel.types.path_states import PathState


def _blob_side(data: bytes) -> fs.Side:
    return fs.from_state(PathState.blob("100644", "a" * 40), lambda sha: data, None)


def test_a_csv_on_disk_is_read_whole_with_its_hash(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    body = b"name,qty\napple,3\npear,5\n"
    (tmp_path / "data/sales.csv").write_bytes(body)
    side = fs.on_disk(tmp_path, "data/sales.csv")
    assert fs.kind_of("data/sales.csv", (side, fs.absent())) == "csv"
    out = fs.read_side(side, "csv", "data/sales.csv")
    assert out["text"] == body.decode()
    assert out["size"] == len(body) and out["pages"] == 1
    assert out["sha256"] == hashlib.sha256(body).hexdigest()


def test_a_symlinked_parent_is_refused_and_named(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not show\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(outside, ws / "link")
    side = fs.on_disk(ws, "link/secret.txt")
    assert side.state == "refused" and "link" in side.note
    out = fs.read_side(side, "text", "link/secret.txt")
    assert "text" not in out and "do not show" not in json.dumps(out)


def test_a_symlinked_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x\n")
    os.symlink(tmp_path / "real.txt", tmp_path / "alias.txt")
    assert fs.on_disk(tmp_path, "alias.txt").state == "refused"


def test_a_missing_file_is_absent(tmp_path: Path) -> None:
    assert fs.on_disk(tmp_path, "gone.txt").state == "absent"


def test_a_long_text_is_paged_by_lines(tmp_path: Path) -> None:
    lines = [f"line {i}\n" for i in range(1, 4501)]
    (tmp_path / "long.py").write_text("".join(lines))
    side = fs.on_disk(tmp_path, "long.py")
    first = fs.read_side(side, "text", "long.py", page=1)
    third = fs.read_side(side, "text", "long.py", page=3)
    assert first["pages"] == 3 and first["text"].splitlines()[-1] == "line 2000"
    assert third["first_line"] == 4001 and third["text"].splitlines()[0] == "line 4001"
    assert len(third["text"].splitlines()) == 500


def test_a_page_is_bounded_in_bytes_too() -> None:
    line = b"x" * 1000 + b"\n"
    side = _blob_side(line * 600)  # 600 KB in 600 lines
    out = fs.read_side(side, "text", "wide.txt", page=1)
    assert out["pages"] == 3 and len(out["text"]) <= fs.PAGE_BYTES


def test_an_image_is_sent_as_base64_and_a_huge_one_is_not() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 100
    out = fs.read_side(_blob_side(png), "image", "fig.png")
    assert out["mime"] == "image/png" and base64.b64decode(out["data"]) == png
    big = fs.read_side(_blob_side(b"\0" * (fs.MAX_IMAGE_BYTES + 1)), "image", "big.png")
    assert "data" not in big and "not shown" in big["note"]


def test_a_binary_file_is_its_size_and_hash_only() -> None:
    data = bytes(range(256)) * 4
    side = _blob_side(data)
    assert fs.kind_of("model.bin", (side, fs.absent())) == "binary"
    out = fs.read_side(side, "binary", "model.bin")
    assert out["size"] == 1024 and out["sha256"] == hashlib.sha256(data).hexdigest()
    assert "text" not in out and "data" not in out


def test_a_notebook_is_its_cells() -> None:
    nb = {"cells": [{"cell_type": "code", "source": ["x = 1\n", "x"]}], "nbformat": 4}
    out = fs.read_side(_blob_side(json.dumps(nb).encode()), "notebook", "a.ipynb")
    assert out["cells"] == [{"cell_type": "code", "source": "x = 1\nx"}]


def test_an_absent_side_has_no_pages() -> None:
    out = fs.read_side(fs.from_state(PathState.absent(), lambda s: b"", None), "text", "a.py")
    assert out == {"state": "absent", "size": None, "sha256": None, "pages": 0}
