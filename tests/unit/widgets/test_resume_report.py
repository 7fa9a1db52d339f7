"""The report of `%logician rewind --resume` / `--skip-failed` reads what the rewind record
holds (its paths), never flags in its note."""

from __future__ import annotations

from logician_kernel.jupyter import undo_view
from logician_kernel.workspace import ProjectionItem, RewindScope


def _item(*paths: dict[str, str]) -> ProjectionItem:
    return ProjectionItem.model_validate(
        {
            "seq": 9,
            "parent": 8,
            "time": "2026-12-03T12:00:00+00:00",
            "reason": "rewind",
            "frames": [2],
            "paths": list(paths),
            "scope": RewindScope().model_dump(),
            "note": "",
        }
    )


def test_a_rewind_finished_without_its_failed_paths_names_them() -> None:
    item = _item(
        {"path": "a.txt", "action": "restored", "detail": ""},
        {"path": "big.bin", "action": "failed", "detail": "given up with --skip-failed"},
    )
    text = undo_view.resume_result(item).text
    assert text.startswith("Finished the incomplete rewind without 1 failed path(s)"), text
    assert "big.bin" in text.splitlines()[0]


def test_a_resumed_rewind_says_how_far_it_had_come() -> None:
    item = _item(
        {"path": "a.txt", "action": "restored", "detail": "restored before the interruption"},
        {"path": "b.txt", "action": "restored", "detail": ""},
    )
    text = undo_view.resume_result(item).text
    assert text.startswith("Resumed the interrupted rewind (1 path(s) were already restored)")
