"""A Lab save reported after its frame closed: told as the user's save only for a path the
frame recorded as another program's, and only when the save's time lies inside the frame."""

from __future__ import annotations

from logician_kernel.frames.late_saves import with_late_save
from logician_kernel.ledger.frame_view import FrameView
from logician_kernel.types.path_states import PathChange, PathState

VIEW = FrameView(
    frame=3,
    execution_count=3,
    cell_id=None,
    code="",
    opened_at="2026-12-07T10:00:00+00:00",
    pre_tree=None,
    closed_at="2026-12-07T10:00:05+00:00",
)
BLOB = PathState(kind="blob", mode="100644", sha="a" * 40)


def _change(by: str, path: str = "mine.txt") -> PathChange:
    return PathChange(path=path, before=BLOB, after=BLOB, by=by, basis="written by `x` (pid 9)")


def test_a_save_inside_the_frame_relabels_an_external_change() -> None:
    told = with_late_save(_change("external"), VIEW, {"mine.txt": "2026-12-07T10:00:04.5Z"})
    assert told.basis.startswith("saved in JupyterLab at") and told.by == "external"
    assert told.saved_at == "2026-12-07T10:00:04.5Z"


def test_saves_outside_the_frame_or_of_other_paths_change_nothing() -> None:
    external = _change("external")
    for saves in (
        {"mine.txt": "2026-12-07T10:00:07Z"},  # after the close, beyond the slack
        {"mine.txt": "2026-12-07T09:59:58Z"},  # before the open
        {"other.txt": "2026-12-07T10:00:02Z"},
        {"mine.txt": "not a time"},
        {"mine.txt": "2026-12-07T10:00:02"},  # no zone: not comparable
    ):
        assert with_late_save(external, VIEW, saves) is external, saves


def test_the_kernels_own_change_never_becomes_external() -> None:
    for by in ("cell", "tool"):
        own = _change(by)
        assert with_late_save(own, VIEW, {"mine.txt": "2026-12-07T10:00:02Z"}) is own


def test_an_open_frame_relabels_nothing() -> None:
    still_open = FrameView(
        frame=4, execution_count=4, cell_id=None, code="", opened_at=VIEW.opened_at, pre_tree=None
    )
    external = _change("external")
    assert with_late_save(external, still_open, {"mine.txt": "2026-12-07T10:00:02Z"}) is external
