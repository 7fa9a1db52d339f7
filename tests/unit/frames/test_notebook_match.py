"""A notebook's cells matched for the diff view: by nbdime where it is importable (a cell whose
outputs changed stays one unchanged-source cell, an edited cell one changed cell, a moved cell
is named as moved), and None without it (the view then diffs the sources itself)."""

from __future__ import annotations

import json
import sys

import pytest

from logician_kernel.frames.notebook_match import match_cells


def notebook(*cells: tuple[str, str]) -> bytes:
    """An nbformat 4 notebook of code cells (source, stdout), sources as lists of lines."""
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": "code",
                    "metadata": {},
                    "execution_count": None,
                    "source": source.splitlines(keepends=True),
                    "outputs": [{"output_type": "stream", "name": "stdout", "text": [out]}]
                    if out
                    else [],
                }
                for source, out in cells
            ],
        }
    ).encode()


BEFORE = notebook(
    ("import os", ""),
    ("print(1)", "1\n"),
    ("def f():\n    return 1", ""),
    ("y = 2", ""),
    ("z = 3", ""),
)
AFTER = notebook(
    ("import os", ""),
    ("print(1)", "one\n"),
    ("def f():\n    return 2", ""),
    ("y = 2", ""),
    ("w = 4", ""),
    ("z = 3", ""),
)


def rows(before: bytes | None, after: bytes | None) -> list[tuple]:
    matched = match_cells(before, after)
    assert matched is not None
    return [(r["before"], r["after"], r["status"], r["changed"]) for r in matched]


def test_nbdime_keeps_a_cell_whose_outputs_changed_and_pairs_an_edited_one() -> None:
    assert rows(BEFORE, AFTER) == [
        (0, 0, "same", []),
        (1, 1, "same", ["outputs"]),
        (2, 2, "changed", ["source"]),
        (3, 3, "same", []),
        (None, 4, "added", []),
        (4, 5, "same", []),
    ]


def test_a_cell_moved_is_one_moved_cell_not_a_removal_and_an_addition() -> None:
    before = notebook(("a = 1", ""), ("b = 2", ""), ("c = 3", ""), ("d = 4", ""))
    after = notebook(("b = 2", ""), ("c = 3", ""), ("d = 4", ""), ("a = 1", ""))
    matched = rows(before, after)
    assert (0, 3, "moved", []) in matched
    assert [r for r in matched if r[2] in ("added", "removed")] == []
    assert sorted(r[1] for r in matched) == [0, 1, 2, 3]


def test_a_notebook_created_or_deleted_is_all_added_or_all_removed() -> None:
    assert [r[2] for r in rows(None, AFTER)] == ["added"] * 6
    assert [r[2] for r in rows(BEFORE, None)] == ["removed"] * 5


def test_without_nbdime_there_is_no_matching(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nbdime", None)  # `import nbdime` raises ImportError
    assert match_cells(BEFORE, AFTER) is None


def test_a_side_nbdime_cannot_read_falls_back() -> None:
    assert match_cells(b"not json", AFTER) is None


def test_cells_without_outputs_or_metadata_are_matched_too() -> None:
    bare = {"nbformat": 4, "cells": [{"cell_type": "code", "source": ["x = 0\n", "x"]}]}
    edited = {"nbformat": 4, "cells": [{"cell_type": "code", "source": ["x = 1\n", "x"]}]}
    assert rows(json.dumps(bare).encode(), json.dumps(edited).encode()) == [
        (0, 0, "changed", ["source"])
    ]
