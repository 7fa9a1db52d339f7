"""Which cell of a notebook's before faces which cell of its after, for the Lab's diff view:
matched by nbdime (`nbdime.diff_notebooks`) where it is importable in the kernel, so that a
cell whose outputs changed, or whose source was edited, stays one cell, and a cell that moved
is named as moved (nbdime reports it removed in one place and added in another; the same
source on both ends makes it a move here).

Without nbdime `match_cells` answers None and the view diffs the cells' sources itself (a
cell-level text diff).

Must never: raise for a notebook nbdime cannot read (the view falls back), or write anything.
"""

from __future__ import annotations

import importlib
import json
from typing import Any, Literal, TypedDict

Status = Literal["same", "changed", "added", "removed", "moved"]


class CellMatch(TypedDict):
    """One row of the notebook diff: a cell of before, of after, or of both."""

    before: int | None
    """Its index in the before notebook (None: added)."""
    after: int | None
    """Its index in the after notebook (None: removed)."""
    status: Status
    """`changed`: its source changed; `same`: not, though `changed` may name its outputs."""
    changed: list[str]
    """What nbdime saw change in the cell: `source`, `outputs`, `execution_count`, ..."""


def _diff_notebooks() -> Any | None:
    try:
        return importlib.import_module("nbdime").diff_notebooks
    except ImportError:
        return None


def _notebook(data: bytes | None) -> dict[str, Any]:
    """A notebook's JSON as nbdime reads it (sources and texts as strings, the keys it reads
    present); an absent side is a notebook without cells."""
    if data is None:
        return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    nb = json.loads(data)
    nb.setdefault("metadata", {})
    for cell in nb["cells"]:
        # the keys nbdime reads, where a hand-written notebook left them out
        cell.setdefault("metadata", {})
        if cell.get("cell_type", "code") == "code":
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
        for output in cell.get("outputs", []):
            if isinstance(output.get("text"), list):
                output["text"] = "".join(output["text"])
    return nb


def match_cells(before: bytes | None, after: bytes | None) -> list[CellMatch] | None:
    """The rows of the notebook diff in order, or None without nbdime (or for a side that is
    not a notebook nbdime can diff)."""
    diff_notebooks = _diff_notebooks()
    if diff_notebooks is None:
        return None
    try:
        a, b = _notebook(before), _notebook(after)
        diff = diff_notebooks(a, b)
    except Exception:  # noqa: BLE001 - any failure of nbdime on odd JSON: the view's own diff
        return None
    cells: list[dict[str, Any]] = next(
        (e["diff"] for e in diff if e["op"] == "patch" and e["key"] == "cells"), []
    )
    rows: list[CellMatch] = []
    i = j = 0

    def same_until(key: int) -> None:
        nonlocal i, j
        while i < key:
            rows.append({"before": i, "after": j, "status": "same", "changed": []})
            i += 1
            j += 1

    for entry in cells:
        same_until(entry["key"])
        if entry["op"] == "addrange":
            for _ in entry["valuelist"]:
                rows.append({"before": None, "after": j, "status": "added", "changed": []})
                j += 1
        elif entry["op"] == "removerange":
            for _ in range(entry["length"]):
                rows.append({"before": i, "after": None, "status": "removed", "changed": []})
                i += 1
        elif entry["op"] == "patch":
            changed = sorted({str(d["key"]) for d in entry["diff"]})
            status: Status = "changed" if "source" in changed else "same"
            rows.append({"before": i, "after": j, "status": status, "changed": changed})
            i += 1
            j += 1
    same_until(len(a["cells"]))
    _moves(rows, a["cells"], b["cells"])
    return rows


def _moves(rows: list[CellMatch], a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    """A removed cell and an added one with the same type and source: one cell, moved. The
    added row becomes the move (where the cell is now, naming where it was); the removed row
    goes."""
    added: dict[tuple[str, str], list[CellMatch]] = {}
    for row in rows:
        if row["status"] == "added" and row["after"] is not None:
            cell = b[row["after"]]
            added.setdefault((str(cell.get("cell_type")), str(cell.get("source"))), []).append(row)
    gone: list[int] = []
    for n, row in enumerate(rows):
        if row["status"] != "removed" or row["before"] is None:
            continue
        cell = a[row["before"]]
        twins = added.get((str(cell.get("cell_type")), str(cell.get("source"))))
        if twins:
            twin = twins.pop(0)
            twin["before"] = row["before"]
            twin["status"] = "moved"
            gone.append(n)
    for n in reversed(gone):
        del rows[n]
