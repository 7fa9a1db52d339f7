"""A nested repository in a rewind report: named once, and not called uncaptured when the
rewind restores the files beneath it."""

from __future__ import annotations

from logician_kernel.frames.rewind_plan import nested_once
from logician_kernel.ledger.thread_ledger import RestoredPath

NESTED = "inside a nested git repository"


def _skip(path: str, frame: int, text: str = NESTED) -> RestoredPath:
    return RestoredPath(
        path=path, action="skipped", detail=f"not captured by frame {frame}: {text}"
    )


def test_a_repository_whose_files_are_restored_is_named_once_and_not_as_uncaptured() -> None:
    skipped = [_skip("gitdemo", 3), _skip("gitdemo", 4), _skip("big.bin", 3, "too large")]
    out = nested_once(skipped, ["gitdemo/.git/HEAD", "gitdemo/a.txt", "gitdemo2/x"])
    assert [s.path for s in out] == ["big.bin", "gitdemo"]
    detail = out[1].detail
    assert "2 of its files were captured and are restored" in detail
    assert "frames 3, 4" in detail and "not captured by" not in detail


def test_a_repository_with_nothing_restored_stays_not_captured_once() -> None:
    out = nested_once([_skip("other", 2), _skip("other", 2)], ["gitdemo/a.txt"])
    assert [(s.path, s.detail) for s in out] == [("other", f"not captured by frame 2: {NESTED}")]
